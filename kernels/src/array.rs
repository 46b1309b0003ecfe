//! Type-erased array views: a dtype, a shape, element strides (zero and negative
//! allowed) and an element offset over a byte buffer, validated on construction.
//!
//! Sub-byte dtypes (`values_per_byte > 1`) are packed along the last axis, element
//! 0 in the most significant bits: that axis must have unit stride and a length
//! that fills whole bytes (or hold a single value, in the most significant bits
//! of its byte), and every other stride and the offset must be whole bytes too.
//! An empty view (an extent of 0) addresses nothing, so none of these rules,
//! nor the size of the others extents' product, applies to it.

use crate::error::{Error, Result};
use crate::DType;
use num_complex::Complex;

/// The geometry of a view: dtype, shape, strides and offset, all in elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Element type.
    pub dtype: DType,
    /// Extent of each axis.
    pub shape: Vec<usize>,
    /// Step between neighbours along each axis, in elements.
    pub strides: Vec<isize>,
    /// Position of element (0, …, 0), in elements from the start of the bytes.
    pub offset: usize,
}

/// The number of elements of `shape`: 0 where an extent is 0, whatever the
/// others, else the product of the extents, or None where that exceeds
/// `isize::MAX` (no array of it can be addressed). The size rule of every
/// view, loop shape and query: checked before any work.
pub fn element_count(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e))
        .filter(|&n| n <= isize::MAX as usize)
}

/// [`element_count`], or [`Error::Overflow`] naming `operand`.
pub(crate) fn count_of(shape: &[usize], operand: &str) -> Result<usize> {
    element_count(shape).ok_or_else(|| Error::Overflow {
        operand: operand.to_string(),
    })
}

/// The product of extents for the engines' internal use after validation: 0
/// where one is 0, else the product, saturating (a saturated value only
/// arises where the whole loop is empty, and is then never used).
pub(crate) fn extent_product(extents: impl IntoIterator<Item = usize>) -> usize {
    let mut p = 1usize;
    let mut zero = false;
    for e in extents {
        zero |= e == 0;
        p = p.saturating_mul(e);
    }
    if zero {
        0
    } else {
        p
    }
}

/// C-order (row-major) strides of a shape, in elements.
pub fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = 1;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(shape[i].max(1) as isize);
    }
    strides
}

/// Whether element strides walk `shape` in C order from the offset with no
/// gaps (axes of extent 1 may have any stride).
pub(crate) fn c_contiguous(shape: &[usize], strides: &[isize]) -> bool {
    let mut expected: isize = 1;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n > 1 {
            if s != expected {
                return false;
            }
            expected = expected.saturating_mul(n as isize);
        }
    }
    true
}

impl Layout {
    /// Number of elements (1 for rank 0; 0 where an extent is 0). Exact for
    /// a validated layout; saturates at `usize::MAX` for a shape whose
    /// product overflows (which no validated layout has).
    pub fn len(&self) -> usize {
        extent_product(self.shape.iter().copied())
    }

    /// Whether the view has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Check the layout against `bytes` bytes of storage. `operand` names it in errors.
    pub fn validate(&self, bytes: usize, operand: &str) -> Result<()> {
        let layout_err = |reason: String| Error::Layout {
            operand: operand.to_string(),
            reason,
        };
        let overflow = || Error::Overflow {
            operand: operand.to_string(),
        };
        if self.shape.len() != self.strides.len() {
            return Err(layout_err(format!(
                "{} axes but {} strides",
                self.shape.len(),
                self.strides.len()
            )));
        }
        // An extent of 0 makes the view empty whatever the others are.
        let count = element_count(&self.shape).ok_or_else(overflow)?;
        if count == 0 {
            // No element is addressed: no byte, stride or packing rule applies.
            return Ok(());
        }
        let info = self.dtype.info();
        let vpb = info.values_per_byte as usize;
        if vpb > 1 {
            // A packed last axis holds whole bytes, or is a single value (extent 1,
            // or rank 0) sitting in the most significant bits of its byte.
            let rank = self.shape.len();
            let (last, last_stride) = if rank == 0 {
                (1, 1)
            } else {
                (self.shape[rank - 1], self.strides[rank - 1])
            };
            if last != 1 && !last.is_multiple_of(vpb) {
                return Err(layout_err(format!(
                    "the packed last axis of {} has {last} values, not a whole number of bytes ({vpb} per byte)",
                    self.dtype
                )));
            }
            if last > 1 && last_stride != 1 {
                return Err(layout_err(format!(
                    "the packed last axis of {} must have stride 1, not {last_stride}",
                    self.dtype
                )));
            }
            for (i, &s) in self.strides[..rank.saturating_sub(1)].iter().enumerate() {
                if self.shape[i] > 1 && s.rem_euclid(vpb as isize) != 0 {
                    return Err(layout_err(format!(
                        "stride {s} of axis {i} is not a whole number of bytes of {}",
                        self.dtype
                    )));
                }
            }
            if !self.offset.is_multiple_of(vpb) {
                return Err(layout_err(format!(
                    "offset {} is not a whole number of bytes of {}",
                    self.offset, self.dtype
                )));
            }
        }
        let (lo, hi) = self.extent().ok_or_else(overflow)?;
        if lo < 0 {
            return Err(layout_err(format!(
                "negative strides reach element {lo}, before the start of the bytes"
            )));
        }
        let needed: u128 = if vpb > 1 {
            (hi as u128) / vpb as u128 + 1
        } else {
            (hi as u128 + 1) * info.item_bytes as u128
        };
        if needed > bytes as u128 {
            return Err(Error::OutOfBounds {
                operand: operand.to_string(),
                needed,
                len: bytes,
            });
        }
        Ok(())
    }

    /// The lowest and highest element positions reached (None on overflow).
    fn extent(&self) -> Option<(i128, i128)> {
        let mut lo = self.offset as i128;
        let mut hi = self.offset as i128;
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            let span = (n as i128 - 1).checked_mul(s as i128)?;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Some((lo, hi))
    }
}

/// A read-only view.
#[derive(Clone, Debug)]
pub struct ArrayView<'a> {
    layout: Layout,
    data: &'a [u8],
}

/// A writable view.
#[derive(Debug)]
pub struct ArrayViewMut<'a> {
    layout: Layout,
    data: &'a mut [u8],
}

impl<'a> ArrayView<'a> {
    /// A view of `data` by a layout already validated against it.
    pub(crate) fn from_validated(layout: Layout, data: &'a [u8]) -> Self {
        ArrayView { layout, data }
    }

    /// A view with explicit strides (elements) and offset (elements).
    pub fn new(
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        data: &'a [u8],
    ) -> Result<Self> {
        let layout = Layout {
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
        };
        layout.validate(data.len(), "view")?;
        Ok(ArrayView { layout, data })
    }

    /// A C-order contiguous view.
    pub fn contiguous(dtype: DType, shape: &[usize], data: &'a [u8]) -> Result<Self> {
        Self::new(dtype, shape, &c_strides(shape), 0, data)
    }

    /// A C-order view of a typed slice.
    pub fn from_slice<T: Element>(s: &'a [T], shape: &[usize]) -> Result<Self> {
        Self::contiguous(T::DTYPE, shape, as_bytes(s))
    }

    /// A strided view of a typed slice.
    pub fn from_slice_strided<T: Element>(
        s: &'a [T],
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self> {
        Self::new(T::DTYPE, shape, strides, offset, as_bytes(s))
    }

    /// The geometry.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.layout.dtype
    }
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }
    /// The strides in elements.
    pub fn strides(&self) -> &[isize] {
        &self.layout.strides
    }
    /// The bytes the view addresses.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
}

impl<'a> ArrayViewMut<'a> {
    /// A writable view with explicit strides and offset (elements).
    pub fn new(
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        data: &'a mut [u8],
    ) -> Result<Self> {
        let layout = Layout {
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
        };
        layout.validate(data.len(), "destination")?;
        Ok(ArrayViewMut { layout, data })
    }

    /// A C-order contiguous writable view.
    pub fn contiguous(dtype: DType, shape: &[usize], data: &'a mut [u8]) -> Result<Self> {
        Self::new(dtype, shape, &c_strides(shape), 0, data)
    }

    /// A C-order writable view of a typed slice.
    pub fn from_slice<T: Element>(s: &'a mut [T], shape: &[usize]) -> Result<Self> {
        Self::contiguous(T::DTYPE, shape, as_bytes_mut(s))
    }

    /// A strided writable view of a typed slice.
    pub fn from_slice_strided<T: Element>(
        s: &'a mut [T],
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self> {
        Self::new(T::DTYPE, shape, strides, offset, as_bytes_mut(s))
    }

    /// The geometry.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.layout.dtype
    }
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }
    /// The strides in elements.
    pub fn strides(&self) -> &[isize] {
        &self.layout.strides
    }
    /// A read-only view of the same elements.
    pub fn view(&self) -> ArrayView<'_> {
        ArrayView {
            layout: self.layout.clone(),
            data: self.data,
        }
    }
    /// The bytes the view addresses, writable (the layout says which of
    /// them are its elements).
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.data
    }
}

/// A Rust type that is the storage of a dtype, with no padding and every bit
/// pattern the kernels write valid for it.
///
/// # Safety
/// `Self` must be plain data of `size_of::<Self>() == DTYPE.info().item_bytes`
/// bytes without padding, and every value a kernel writes for `DTYPE` (for bool:
/// only 0 and 1) must be a valid `Self`.
pub unsafe trait Element: Copy + 'static {
    /// The dtype this type stores.
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        // SAFETY: a primitive (or repr(C) pair of primitives) without padding
        // whose size is the dtype's item size; bool outputs are always 0 or 1.
        unsafe impl Element for $t {
            const DTYPE: DType = DType::$d;
        }
    )*};
}

element!(
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    half::f16 => F16, half::bf16 => Bf16, f32 => F32, f64 => F64,
    Complex<f32> => C64, Complex<f64> => C128,
    Complex<half::f16> => F16c, Complex<half::bf16> => Bf16c,
    crate::Pair<f32> => Df32, crate::Pair<f64> => Dd64,
);

/// The bytes of a typed slice.
pub fn as_bytes<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: `Element` types are plain data without padding, so every byte is
    // initialised; the length covers exactly the slice's memory.
    unsafe { core::slice::from_raw_parts(s.as_ptr() as *const u8, core::mem::size_of_val(s)) }
}

/// The bytes of a typed mutable slice. Writes through it must keep every element
/// a valid `T` (the kernels do: see [`Element`]).
pub(crate) fn as_bytes_mut<T: Element>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; the kernels only write values valid for T.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, core::mem::size_of_val(s)) }
}
