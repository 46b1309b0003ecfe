//! Element access by position for any dtype: whole elements of byte-sized
//! dtypes as their bytes, sub-byte dtypes as codes packed element 0 in the
//! most significant bits of its byte.

use crate::array::{ArrayView, Layout};
use crate::error::{Error, Result};
use crate::DType;

/// The bytes of an element of the widest dtype (c128).
pub(crate) const MAX_ITEM: usize = 16;

/// How one dtype's elements sit in bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cells {
    /// Bytes per element (1 for sub-byte dtypes).
    pub item: usize,
    /// Elements per byte (1 for byte-sized dtypes).
    pub per_byte: usize,
    /// Bits per element of a sub-byte dtype.
    pub bits: u32,
}

impl Cells {
    /// The cells of `dtype`.
    pub fn of(dtype: DType) -> Cells {
        let info = dtype.info();
        Cells {
            item: info.item_bytes.max(1),
            per_byte: (info.values_per_byte as usize).max(1),
            bits: info.bits,
        }
    }

    /// Whether elements are packed several to a byte.
    pub fn packed(&self) -> bool {
        self.per_byte > 1
    }

    /// The element at position `pos` (in elements) of `data`, into `out`
    /// (its first `item` bytes; a sub-byte code in the low bits of byte 0).
    #[inline]
    pub fn read(&self, data: &[u8], pos: usize, out: &mut [u8; MAX_ITEM]) {
        if self.packed() {
            let shift = (self.per_byte - 1 - pos % self.per_byte) as u32 * self.bits;
            let mask = ((1u16 << self.bits) - 1) as u8;
            out[0] = (data[pos / self.per_byte] >> shift) & mask;
        } else {
            let at = pos * self.item;
            out[..self.item].copy_from_slice(&data[at..at + self.item]);
        }
    }

    /// Store `code` (as [`Cells::read`] gives it) at position `pos`.
    #[inline]
    pub fn write(&self, data: &mut [u8], pos: usize, code: &[u8; MAX_ITEM]) {
        if self.packed() {
            let shift = (self.per_byte - 1 - pos % self.per_byte) as u32 * self.bits;
            let mask = (((1u16 << self.bits) - 1) as u8) << shift;
            let b = &mut data[pos / self.per_byte];
            *b = (*b & !mask) | ((code[0] << shift) & mask);
        } else {
            let at = pos * self.item;
            data[at..at + self.item].copy_from_slice(&code[..self.item]);
        }
    }
}

/// The code (as [`Cells::read`] gives it) of `fill`, a view of one element
/// of `dtype` (rank 0, or every extent 1), or of the element of zero bits
/// where there is none. Refuses a fill of another dtype
/// ([`Error::DTypeMismatch`]) or of another number of elements
/// ([`Error::Shape`]).
pub(crate) fn fill_code(
    fill: Option<&ArrayView<'_>>,
    dtype: DType,
    operand: &str,
) -> Result<[u8; MAX_ITEM]> {
    let mut code = [0u8; MAX_ITEM];
    let Some(f) = fill else {
        return Ok(code);
    };
    if f.dtype() != dtype {
        return Err(Error::DTypeMismatch {
            operand: operand.into(),
            expected: dtype,
            got: f.dtype(),
        });
    }
    if f.layout().len() != 1 {
        return Err(Error::Shape {
            operand: operand.into(),
            shape: f.shape().to_vec(),
            target: Vec::new(),
        });
    }
    // One element, every extent 1: it lies at the offset (validated).
    Cells::of(dtype).read(f.data(), f.layout().offset, &mut code);
    Ok(code)
}

/// The element positions of a layout in C order of its index.
pub(crate) struct Positions<'l> {
    layout: &'l Layout,
    index: Vec<usize>,
    pos: isize,
    done: bool,
}

impl<'l> Positions<'l> {
    /// The positions of `layout` (validated, so every one is in bounds).
    pub fn of(layout: &'l Layout) -> Positions<'l> {
        Positions {
            layout,
            index: vec![0; layout.shape.len()],
            pos: layout.offset as isize,
            done: layout.shape.contains(&0),
        }
    }

    /// The index of the position [`Iterator::next`] gives next.
    pub fn index(&self) -> &[usize] {
        &self.index
    }
}

impl Iterator for Positions<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.done {
            return None;
        }
        // A validated layout reaches no negative position.
        let here = self.pos as usize;
        let l = self.layout;
        let mut axis = l.shape.len();
        loop {
            if axis == 0 {
                self.done = true;
                break;
            }
            axis -= 1;
            self.index[axis] += 1;
            self.pos += l.strides[axis];
            if self.index[axis] < l.shape[axis] {
                break;
            }
            self.pos -= l.strides[axis] * l.shape[axis] as isize;
            self.index[axis] = 0;
        }
        Some(here)
    }
}
