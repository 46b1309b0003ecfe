//! Assemblies, padded loads and folds: data movement that copies or adds
//! elements by index, never computing a new value from several (but the
//! fold's sums).
//!
//! - [`assemble`]: pieces into regions of a destination, the last piece
//!   whose region holds an index winning, a fill elsewhere; bits copied.
//! - [`PaddedLoad`]: an operand padded along its axes and read through
//!   windows ([`Pad`]), held as one copy whose strided view any engine reads.
//! - [`fold()`]: the adjoint of a padded load, adding back every element the
//!   load read from one place, in C order of the taps.
//! - [`tile`]: a pattern repeated across a destination.

mod element;
mod fold;
mod pad;

pub use fold::fold;

pub use pad::{AxisPad, Pad, PaddedLoad, Window};

use crate::array::{ArrayView, ArrayViewMut, Layout};
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::tier::Exec;
use element::{Cells, Positions, MAX_ITEM};

/// One piece of an [`assemble`]: its elements, and where its region starts
/// in the destination (the region's extents are the piece's shape).
#[derive(Clone, Debug)]
pub struct Piece<'a> {
    /// The index in the destination of the piece's element (0, …, 0).
    pub start: Vec<usize>,
    /// The piece's elements, of the destination's dtype and rank.
    pub x: ArrayView<'a>,
}

/// Store into `dst`, at each index, the element at that index of the last
/// piece whose region holds it (`pieces` in order; a region is
/// `start .. start + shape` along each axis), or `fill`'s element (a view of
/// one element of `dst`'s dtype, rank 0 or every extent 1; `None`: the
/// element of zero bits) where no region does. Bits are copied, NaN
/// payloads included; every dtype, sub-byte ones too; any layouts.
///
/// Refuses (before any write) a piece of another dtype or rank, a region
/// that leaves `dst`, a fill of another dtype ([`Error::DTypeMismatch`]) or
/// of more or fewer than one element ([`Error::Shape`]), a destination that
/// reaches an element twice, an unavailable tier.
pub fn assemble(
    fill: Option<&ArrayView<'_>>,
    pieces: &[Piece<'_>],
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier()?;
    let dtype = dst.dtype();
    let cells = Cells::of(dtype);
    let shape = dst.shape().to_vec();
    let code = element::fill_code(fill, dtype, "fill")?;
    for (k, p) in pieces.iter().enumerate() {
        check_piece(k, &p.start, p.x.shape(), p.x.dtype(), &shape, dtype)?;
    }
    check_destination(dst)?;
    // The fill everywhere, then each piece over it in order: the last piece
    // holding an index is what remains there.
    let layout: Layout = dst.layout().clone();
    let data = dst.data_mut();
    for pos in Positions::of(&layout) {
        cells.write(data, pos, &code);
    }
    let mut e = [0u8; MAX_ITEM];
    for p in pieces {
        let src = p.x.data();
        // The region's view of dst: dst's strides, offset at the start.
        let mut region = layout.clone();
        region.shape = p.x.shape().to_vec();
        let shift: isize = p
            .start
            .iter()
            .zip(&layout.strides)
            .map(|(&s, &st)| s as isize * st)
            .sum();
        if region.shape.contains(&0) {
            continue;
        }
        region.offset = (layout.offset as isize + shift) as usize;
        for (from, to) in Positions::of(p.x.layout()).zip(Positions::of(&region)) {
            cells.read(src, from, &mut e);
            cells.write(data, to, &e);
        }
    }
    Ok(())
}

/// The refusals of piece `k` (its region's start, its shape and dtype)
/// against a destination of `shape` and `dtype`.
fn check_piece(
    k: usize,
    start: &[usize],
    piece_shape: &[usize],
    piece_dtype: crate::DType,
    shape: &[usize],
    dtype: crate::DType,
) -> Result<()> {
    let name = format!("piece {k}");
    if piece_dtype != dtype {
        return Err(Error::DTypeMismatch {
            operand: name,
            expected: dtype,
            got: piece_dtype,
        });
    }
    if piece_shape.len() != shape.len() || start.len() != shape.len() {
        return Err(Error::Rank {
            operand: name,
            shape: piece_shape.to_vec(),
            expected: format!(
                "{} axes and a start of {} (the destination's rank), start has {}",
                shape.len(),
                shape.len(),
                start.len()
            ),
        });
    }
    for (a, ((&s, &n), &d)) in start.iter().zip(piece_shape).zip(shape).enumerate() {
        if s.checked_add(n).is_none_or(|end| end > d) {
            return Err(Error::Shape {
                operand: format!("{name} (its region along axis {a} starts at {s})"),
                shape: piece_shape.to_vec(),
                target: shape.to_vec(),
            });
        }
    }
    Ok(())
}

/// A piece of an [`assemble_query`]: where its region starts, and the
/// piece's shape and dtype (its elements are not needed).
#[derive(Clone, Copy, Debug)]
pub struct PieceShape<'a> {
    /// The index in the destination of the piece's element (0, …, 0).
    pub start: &'a [usize],
    /// The piece's shape: its region's extents.
    pub shape: &'a [usize],
    /// The piece's dtype.
    pub dtype: crate::DType,
}

/// Whether [`assemble`] into a destination of `shape` and `dtype` with
/// `fill` (its shape and dtype) and `pieces` fits, decided from shapes and
/// dtypes alone (no data, no work): `Ok` exactly where `assemble` would run,
/// but for the destination's layout (one that reaches an element twice) and
/// the tier, which need the view and the `Exec`.
///
/// # Errors
/// As [`assemble`]: a piece of another dtype or rank, a region that leaves
/// the destination, a fill of another dtype or of more or fewer than one
/// element.
pub fn assemble_query(
    shape: &[usize],
    dtype: crate::DType,
    fill: Option<(&[usize], crate::DType)>,
    pieces: &[PieceShape<'_>],
) -> Result<()> {
    if let Some((fs, fd)) = fill {
        if fd != dtype {
            return Err(Error::DTypeMismatch {
                operand: "fill".into(),
                expected: dtype,
                got: fd,
            });
        }
        if crate::array::element_count(fs) != Some(1) {
            return Err(Error::Shape {
                operand: "fill".into(),
                shape: fs.to_vec(),
                target: Vec::new(),
            });
        }
    }
    for (k, p) in pieces.iter().enumerate() {
        check_piece(k, p.start, p.shape, p.dtype, shape, dtype)?;
    }
    Ok(())
}

/// The shape of the piece that fills the region `start .. end` (each axis
/// `end − start`): what a piece of [`assemble`] for that region must have.
///
/// # Errors
/// [`Error::Rank`] where `start` and `end` differ in length;
/// [`Error::Shape`] where an end lies before its start.
pub fn assemble_region_shape(start: &[usize], end: &[usize]) -> Result<Vec<usize>> {
    if start.len() != end.len() {
        return Err(Error::Rank {
            operand: "end".into(),
            shape: end.to_vec(),
            expected: format!("{} axes (the start's)", start.len()),
        });
    }
    start
        .iter()
        .zip(end)
        .map(|(&s, &e)| {
            e.checked_sub(s).ok_or_else(|| Error::Shape {
                operand: "end (it lies before the start)".into(),
                shape: end.to_vec(),
                target: start.to_vec(),
            })
        })
        .collect()
}

/// Repeat `pattern` across `dst`: the element of `dst` at index i is the
/// pattern's at i mod its extents (axis by axis, the same rank). Bits are
/// copied, NaN payloads included; every dtype, sub-byte ones too; any
/// layouts.
///
/// Refuses (before any write) a pattern of another dtype or rank, a pattern
/// with an empty axis where `dst` has elements, a destination that reaches
/// an element twice, an unavailable tier.
pub fn tile(pattern: &ArrayView<'_>, dst: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
    exec.resolve_tier()?;
    let dtype = dst.dtype();
    if pattern.dtype() != dtype {
        return Err(Error::DTypeMismatch {
            operand: "pattern".into(),
            expected: dtype,
            got: pattern.dtype(),
        });
    }
    let shape = dst.shape().to_vec();
    if pattern.shape().len() != shape.len() {
        return Err(Error::Rank {
            operand: "pattern".into(),
            shape: pattern.shape().to_vec(),
            expected: format!("{} axes, the destination's", shape.len()),
        });
    }
    let empty_dst = shape.contains(&0);
    if !empty_dst && pattern.shape().contains(&0) {
        return Err(Error::Shape {
            operand: "pattern (an empty axis cannot fill the destination)".into(),
            shape: pattern.shape().to_vec(),
            target: shape,
        });
    }
    check_destination(dst)?;
    if empty_dst {
        return Ok(());
    }
    let cells = Cells::of(dtype);
    let layout: Layout = dst.layout().clone();
    let p = pattern.layout();
    let src = pattern.data();
    let data = dst.data_mut();
    let mut e = [0u8; MAX_ITEM];
    let mut it = Positions::of(&layout);
    loop {
        let from = p.offset as isize
            + it.index()
                .iter()
                .zip(&p.shape)
                .zip(&p.strides)
                .map(|((&i, &n), &s)| (i % n) as isize * s)
                .sum::<isize>();
        let Some(to) = it.next() else { break };
        // A validated pattern reaches every index below its extents.
        cells.read(src, from as usize, &mut e);
        cells.write(data, to, &e);
    }
    Ok(())
}
