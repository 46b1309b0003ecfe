//! Padded loads: an operand padded along its axes, then read through
//! windows, as one copy the load holds and a strided view of it.

use super::element::{Cells, Positions, MAX_ITEM};
use crate::array::{c_strides, element_count, ArrayView, Layout};
use crate::error::{Error, Result};

/// A window along one axis: `size` taps `dilation` apart, successive windows
/// `stride` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Taps per window (at least 1).
    pub size: usize,
    /// Elements between the starts of successive windows (at least 1).
    pub stride: usize,
    /// Elements between successive taps of a window (at least 1).
    pub dilation: usize,
}

impl Window {
    /// `size` adjacent taps, windows one element apart.
    pub fn new(size: usize) -> Window {
        Window {
            size,
            stride: 1,
            dilation: 1,
        }
    }
}

/// The pad of one axis: `before` and `after` elements of fill, then an
/// optional window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxisPad {
    /// Fill elements before the axis's first element.
    pub before: usize,
    /// Fill elements after its last.
    pub after: usize,
    /// The window read along the padded axis, if any.
    pub window: Option<Window>,
}

/// A padded load's geometry: one [`AxisPad`] per axis of the operand.
///
/// Along an axis of extent n padded by `before` and `after`, the padded axis
/// has p = before + n + after elements, element j being the operand's
/// j − before where that is in [0, n) and the fill elsewhere. Without a
/// window the load keeps the padded axis (extent p). With a window of
/// `size` w, `stride` s and `dilation` d the axis holds the windows,
/// ⌊(p − d(w − 1) − 1) / s⌋ + 1 of them (refused where p < d(w − 1) + 1),
/// and the load gains a tap axis of extent w at its end (after every axis
/// of the operand, in the order of the windowed axes): the element at window
/// i and tap t is the padded axis's element i·s + t·d.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pad {
    /// One entry per axis of the operand.
    pub axes: Vec<AxisPad>,
}

impl Pad {
    /// No padding and no window along `rank` axes.
    pub fn none(rank: usize) -> Pad {
        Pad {
            axes: vec![AxisPad::default(); rank],
        }
    }

    /// The shape a load of an operand of `shape` by this pad has: each axis
    /// padded (or windowed), then a tap axis per windowed axis. Refuses a pad
    /// of another rank, a window of a zero size, stride or dilation, a window
    /// longer than its padded axis, and extents that overflow.
    pub fn load_shape(&self, shape: &[usize]) -> Result<Vec<usize>> {
        if self.axes.len() != shape.len() {
            return Err(Error::Rank {
                operand: "the padded operand".into(),
                shape: shape.to_vec(),
                expected: format!("{} axes, one per axis of the pad", self.axes.len()),
            });
        }
        let overflow = || Error::Overflow {
            operand: "the padded load".into(),
        };
        let mut out = Vec::with_capacity(shape.len() * 2);
        let mut taps = Vec::new();
        for (axis, (&n, ap)) in shape.iter().zip(&self.axes).enumerate() {
            let p = n
                .checked_add(ap.before)
                .and_then(|v| v.checked_add(ap.after))
                .ok_or_else(overflow)?;
            match ap.window {
                None => out.push(p),
                Some(w) => {
                    if w.size == 0 || w.stride == 0 || w.dilation == 0 {
                        return Err(Error::Attribute {
                            name: format!("pad of axis {axis}"),
                            reason: format!(
                                "a window needs a size, stride and dilation of at least 1 (got {}, {}, {})",
                                w.size, w.stride, w.dilation
                            ),
                        });
                    }
                    let span = (w.size - 1)
                        .checked_mul(w.dilation)
                        .and_then(|v| v.checked_add(1))
                        .ok_or_else(overflow)?;
                    if p < span {
                        return Err(Error::Attribute {
                            name: format!("pad of axis {axis}"),
                            reason: format!(
                                "a window spanning {span} elements does not fit the padded extent {p}"
                            ),
                        });
                    }
                    out.push((p - span) / w.stride + 1);
                    taps.push(w.size);
                }
            }
        }
        out.extend(taps);
        element_count(&out).ok_or_else(overflow)?;
        Ok(out)
    }
}

/// A padded load: the operand padded into one copy the load holds, and the
/// windows a view of that copy ([`PaddedLoad::view`]) that [`crate::map()`],
/// [`crate::reduce()`] and [`crate::scan()`] read as any operand. An axis the
/// operand broadcasts (stride 0) and the pad leaves alone is held at one
/// element in the copy (the view steps 0 along it), so a broadcast operand
/// costs no more than its distinct elements.
#[derive(Clone, Debug)]
pub struct PaddedLoad {
    copy: Vec<u8>,
    layout: Layout,
}

impl PaddedLoad {
    /// Pad `x` by `pad`, the fill being `fill`'s element (a view of one
    /// element of `x`'s dtype, rank 0 or every extent 1) or the element of
    /// zero bits. Refuses (before the copy is made) what [`Pad::load_shape`]
    /// refuses, a sub-byte dtype (a window view of packed elements has no
    /// byte address), a fill of another dtype ([`Error::DTypeMismatch`]) or
    /// number of elements ([`Error::Shape`]), and a copy that cannot be
    /// allocated.
    pub fn new(pad: &Pad, x: &ArrayView<'_>, fill: Option<&ArrayView<'_>>) -> Result<PaddedLoad> {
        let dtype = x.dtype();
        let cells = Cells::of(dtype);
        if cells.packed() {
            return Err(Error::DTypeUnsupported {
                operand: "the padded operand".into(),
                dtype,
                reason: "a padded load's windows are a strided view, which packed sub-byte elements do not have; cast it to a byte-sized dtype first".into(),
            });
        }
        let load_shape = pad.load_shape(x.shape())?;
        let code = super::element::fill_code(fill, dtype, "fill")?;
        let (held, copy_shape, count, bytes) = copy_geometry(pad, x, cells.item)?;
        let mut copy = crate::alloc::try_vec(bytes, "the padded load's copy (bytes)")?;
        if code[..cells.item].iter().all(|&b| b == 0) {
            copy.resize(bytes, 0);
        } else {
            for _ in 0..count {
                copy.extend_from_slice(&code[..cells.item]);
            }
        }
        let cs = c_strides(&copy_shape);
        // The operand into the copy's interior (a held axis reads index 0).
        let mut src = x.layout().clone();
        for (n, &h) in src.shape.iter_mut().zip(&held) {
            if h {
                *n = 1;
            }
        }
        let base: usize = pad
            .axes
            .iter()
            .enumerate()
            .map(|(a, ap)| {
                if held[a] {
                    0
                } else {
                    ap.before * cs[a] as usize
                }
            })
            .sum();
        let data = x.data();
        let mut e = [0u8; MAX_ITEM];
        let mut it = Positions::of(&src);
        loop {
            let at = base
                + it.index()
                    .iter()
                    .zip(&cs)
                    .map(|(&i, &s)| i * s as usize)
                    .sum::<usize>();
            let Some(pos) = it.next() else { break };
            cells.read(data, pos, &mut e);
            cells.write(&mut copy, at, &e);
        }
        // The view: padded axes step as the copy; a windowed axis steps
        // stride·s per window and dilation·s per tap; a held axis steps 0.
        let mut strides = Vec::with_capacity(load_shape.len());
        let mut tap_strides = Vec::new();
        for (axis, ap) in pad.axes.iter().enumerate() {
            let s = if held[axis] { 0 } else { cs[axis] };
            match ap.window {
                None => strides.push(s),
                Some(w) => {
                    strides.push(s * w.stride as isize);
                    tap_strides.push(s * w.dilation as isize);
                }
            }
        }
        strides.extend(tap_strides);
        let layout = Layout {
            dtype,
            shape: load_shape,
            strides,
            offset: 0,
        };
        layout.validate(copy.len(), "the padded load")?;
        Ok(PaddedLoad { copy, layout })
    }

    /// The bytes of the copy a load of `x` by `pad` allocates (a query,
    /// nothing allocated): what a caller with a memory budget charges
    /// before calling [`PaddedLoad::new`]. Refuses what `new` refuses for
    /// the geometry (a pad of another rank, a bad window, sizes that
    /// overflow) and sub-byte dtypes.
    pub fn copy_size(pad: &Pad, x: &ArrayView<'_>) -> Result<usize> {
        let cells = Cells::of(x.dtype());
        if cells.packed() {
            return Err(Error::DTypeUnsupported {
                operand: "the padded operand".into(),
                dtype: x.dtype(),
                reason: "a padded load's windows are a strided view, which packed sub-byte elements do not have; cast it to a byte-sized dtype first".into(),
            });
        }
        pad.load_shape(x.shape())?;
        Ok(copy_geometry(pad, x, cells.item)?.3)
    }

    /// The load as an operand: the loop's shape ([`Pad::load_shape`]), a view
    /// of the copy.
    pub fn view(&self) -> ArrayView<'_> {
        ArrayView::from_validated(self.layout.clone(), &self.copy)
    }

    /// The copy and the view's layout over it, for a caller that keeps them
    /// (the layout is valid over the bytes).
    pub fn into_parts(self) -> (Layout, Vec<u8>) {
        (self.layout, self.copy)
    }

    /// The bytes of the copy the load holds.
    pub fn copy_bytes(&self) -> usize {
        self.copy.len()
    }
}

/// The copy a padded load holds: which axes are held at one element (the
/// operand broadcasts along them and the pad leaves them alone), the copy's
/// shape (each other axis padded), its element count and its bytes.
fn copy_geometry(
    pad: &Pad,
    x: &ArrayView<'_>,
    item: usize,
) -> Result<(Vec<bool>, Vec<usize>, usize, usize)> {
    let overflow = || Error::Overflow {
        operand: "the padded load".into(),
    };
    let rank = x.shape().len();
    let mut held = Vec::with_capacity(rank);
    let mut copy_shape = Vec::with_capacity(rank);
    for (axis, ap) in pad.axes.iter().enumerate() {
        let n = x.shape()[axis];
        let hold = n > 1
            && x.strides()[axis] == 0
            && ap.before == 0
            && ap.after == 0
            && ap.window.is_none();
        held.push(hold);
        copy_shape.push(if hold {
            1
        } else {
            n.checked_add(ap.before)
                .and_then(|v| v.checked_add(ap.after))
                .ok_or_else(overflow)?
        });
    }
    let count = element_count(&copy_shape).ok_or_else(overflow)?;
    let bytes = count.checked_mul(item).ok_or_else(overflow)?;
    Ok((held, copy_shape, count, bytes))
}
