//! `convolve` and `correlate`: the windows of the signal as a padded load
//! (`assembly::PaddedLoad`, one copy of the signal with its zero padding),
//! contracted with the kernel (reversed for a convolution) over the tap
//! axis by `contract`.

use crate::array::{ArrayView, ArrayViewMut};
use crate::assembly::{AxisPad, Pad, PaddedLoad, Window};
use crate::cast::{cast, CastMode};
use crate::contract::{contract, ContractSpec};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{Class, DType};

/// Which part of the full convolution a call returns (scipy.signal's modes),
/// for a signal of n elements along its last axis and a kernel of m.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvMode {
    /// Every output the two overlap in: n + m − 1 of them, the signal padded
    /// with m − 1 zeros on both sides.
    Full,
    /// n outputs, the middle of the full ones: output i is full output
    /// i + ⌊(m − 1)/2⌋.
    Same,
    /// The n − m + 1 outputs that need no padding (refused where m > n).
    Valid,
}

impl ConvMode {
    /// The zeros before and after the signal (n ≥ 1, m ≥ 1).
    fn padding(self, m: usize) -> (usize, usize) {
        match self {
            ConvMode::Full => (m - 1, m - 1),
            ConvMode::Same => (m - 1 - (m - 1) / 2, (m - 1) / 2),
            ConvMode::Valid => (0, 0),
        }
    }
}

/// The shape of `convolve`'s and `correlate`'s result for a signal of shape
/// `x` and a kernel of shape `k` (a query: nothing is computed). Refuses a
/// signal of rank 0 or with an empty last axis, a kernel that is not one
/// nonempty axis ([`Error::Rank`]), and in [`ConvMode::Valid`] a kernel
/// longer than the signal ([`Error::Shape`]).
pub fn convolve_shape(x: &[usize], k: &[usize], mode: ConvMode) -> Result<Vec<usize>> {
    let Some((&n, lead)) = x.split_last().filter(|(&n, _)| n > 0) else {
        return Err(Error::Rank {
            operand: "the signal".into(),
            shape: x.to_vec(),
            expected: "at least one axis, the last one nonempty (the axis convolved)".into(),
        });
    };
    let m = match k {
        [m] if *m > 0 => *m,
        _ => {
            return Err(Error::Rank {
                operand: "the kernel".into(),
                shape: k.to_vec(),
                expected: "one nonempty axis".into(),
            })
        }
    };
    let len = match mode {
        ConvMode::Full => n.checked_add(m - 1).ok_or_else(|| Error::Overflow {
            operand: "the full convolution's length".into(),
        })?,
        ConvMode::Same => n,
        ConvMode::Valid if m > n => {
            return Err(Error::Shape {
                operand: "the kernel (valid mode takes one no longer than the signal)".into(),
                shape: k.to_vec(),
                target: vec![n],
            })
        }
        ConvMode::Valid => n - m + 1,
    };
    let mut out = lead.to_vec();
    out.push(len);
    Ok(out)
}

/// Discrete convolution along the last axis of `x` (any rank, any layout;
/// leading axes are a batch) with the one-axis kernel `k`:
/// `y[…, i] = Σ_t xp[…, i + t] · k[m − 1 − t]`, `xp` the signal with the
/// zeros of `mode` around it, into `dst` of [`convolve_shape`]'s shape.
///
/// Each output is the contraction of its window with the reversed kernel
/// over the m taps, in the order and with the bound of [`contract`] with
/// accumulator `acc` (any of its accumulators; the operands are cast into
/// it, `dst` takes any dtype and gets one rounding), so its bits are a
/// function of the window's and the kernel's values alone: the same in
/// every layout, batch position, thread count and tier. Packed sub-byte
/// operands (4-, 2-, 1-bit) are first cast, exactly, into a byte dtype that
/// holds their values (i8, u8, f32). Refusals ([`convolve_shape`]'s, then
/// `contract`'s: accumulators, dtypes, the destination's shape and layout)
/// come before any write.
pub fn convolve(
    x: &ArrayView<'_>,
    k: &ArrayView<'_>,
    mode: ConvMode,
    acc: DType,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    run(x, k, mode, acc, dst, exec, true)
}

/// Discrete correlation along the last axis of `x`: as [`convolve`] without
/// reversing the kernel, `y[…, i] = Σ_t xp[…, i + t] · k[t]` (no conjugate:
/// a complex kernel enters as it is, unlike numpy.correlate), the same
/// modes, order, bound and refusals.
pub fn correlate(
    x: &ArrayView<'_>,
    k: &ArrayView<'_>,
    mode: ConvMode,
    acc: DType,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    run(x, k, mode, acc, dst, exec, false)
}

fn run(
    x: &ArrayView<'_>,
    k: &ArrayView<'_>,
    mode: ConvMode,
    acc: DType,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
    reverse: bool,
) -> Result<()> {
    let shape = convolve_shape(x.shape(), k.shape(), mode)?;
    if dst.shape() != shape.as_slice() {
        return Err(Error::Shape {
            operand: "the destination".into(),
            shape: dst.shape().to_vec(),
            target: shape,
        });
    }
    crate::contract::check_accumulator(acc)?;
    let m = k.shape()[0];
    // Packed operands into a byte dtype, exactly.
    let x_bytes = unpacked(x, exec)?;
    let k_bytes = unpacked(k, exec)?;
    let x = match &x_bytes {
        Some((d, b)) => ArrayView::contiguous(*d, x.shape(), b)?,
        None => x.clone(),
    };
    let k = match &k_bytes {
        Some((d, b)) => ArrayView::contiguous(*d, k.shape(), b)?,
        None => k.clone(),
    };
    let rank = x.shape().len();
    let (before, after) = mode.padding(m);
    let mut pad = Pad::none(rank);
    pad.axes[rank - 1] = AxisPad {
        before,
        after,
        window: Some(Window::new(m)),
    };
    let load = PaddedLoad::new(&pad, &x, None)?;
    let windows = load.view();
    let taps = if reverse {
        // The kernel read from its last element back.
        let l = k.layout();
        let s = l.strides[0];
        let start = l.offset as isize + (m as isize - 1) * s;
        ArrayView::new(k.dtype(), &[m], &[-s], start as usize, k.data())?
    } else {
        k
    };
    let spec = ContractSpec::new(acc).contracting(rank, 0);
    contract(&spec, &windows, &taps, None, dst, exec)
}

/// A packed operand cast, exactly, into a byte dtype that holds its values
/// (signed integers into i8, unsigned and bool-like into u8, floats into
/// f32), C-contiguous; None for an operand that is not packed.
fn unpacked(v: &ArrayView<'_>, exec: &Exec) -> Result<Option<(DType, Vec<u8>)>> {
    let info = v.dtype().info();
    if info.values_per_byte <= 1 {
        return Ok(None);
    }
    let to = match info.class {
        Class::Int => DType::I8,
        Class::Float => DType::F32,
        _ => DType::U8,
    };
    let n = v.layout().len();
    let mut bytes = crate::alloc::try_filled(n * to.info().item_bytes, 0u8, "an unpacked operand")?;
    {
        let mut out = ArrayViewMut::contiguous(to, v.shape(), &mut bytes)?;
        cast(CastMode::Default, v, &mut out, exec)?;
    }
    Ok(Some((to, bytes)))
}
