//! The UE8M0 scale byte in its seed variant, beside the OCP / ml_dtypes
//! `e8m0fnu` dtype: code 0 is zero (not 2^-127), 0xFF the block-NaN
//! sentinel, any other code v the power of two 2^(v − 127); an f32
//! magnitude rounds to the nearest power of two in log2 space (the split at
//! the geometric midpoint √2·2^e, which no f32 equals, so there are no
//! ties), zero and subnormals give 0x00, a NaN 0xFF, and magnitudes from
//! √2·2^127 up (infinity included) saturate to 0xFE. The sign of the input
//! is ignored (a scale is a magnitude).
//!
//! `e8m0fnu` differs: it has no zero (code 0 is 2^-127), rounds halfway in
//! value (2^e·1.5 goes up), and casts a zero to NaN.

use crate::array::{ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;

/// The mantissa bits of the smallest f32 significand at or above √2
/// (1.41421366, 0x3FB504F4): a significand rounds up from here on.
const SQRT2_MANTISSA: u32 = 0x3504F4;

/// The UE8M0 code of an f32 magnitude (see the module documentation).
#[inline(always)]
pub fn ue8m0_of(x: f32) -> u8 {
    let b = x.to_bits() & 0x7fff_ffff;
    let e = b >> 23;
    let up = ((b & 0x7f_ffff) >= SQRT2_MANTISSA) as u32;
    let code = (e + up).min(254);
    // Zero and subnormals (exponent field 0) give 0; NaN 0xFF; infinity
    // (exponent 255, no mantissa) saturates with the rest.
    if b > 0x7f80_0000 {
        0xFF
    } else if e == 0 {
        0
    } else {
        code as u8
    }
}

/// The value of a UE8M0 code in this variant: 0 for 0x00, NaN for 0xFF,
/// 2^(v − 127) otherwise (every one a normal f32).
#[inline(always)]
pub fn ue8m0_value(v: u8) -> f32 {
    match v {
        0 => 0.0,
        0xFF => f32::NAN,
        v => f32::from_bits((v as u32) << 23),
    }
}

/// The UE8M0 codes (this module's variant) of `src`'s magnitudes into the u8
/// array `dst` of the same shape. `src` is f32, any layout; `dst` any layout.
/// Refuses other dtypes and shapes before any write.
pub fn ue8m0_encode(src: &ArrayView<'_>, dst: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
    check(src, DType::F32, dst, DType::U8)?;
    let n = src.layout().len();
    let mut x = crate::alloc::try_filled(n, 0f32, "ue8m0: the values in C order")?;
    {
        let mut xv = ArrayViewMut::from_slice(&mut x, src.shape())?;
        cast(CastMode::Default, src, &mut xv, exec)?;
    }
    let mut codes = crate::alloc::try_filled(n, 0u8, "ue8m0: the codes")?;
    for (c, &v) in codes.iter_mut().zip(&x) {
        *c = ue8m0_of(v);
    }
    let cv = ArrayView::from_slice(&codes, dst.shape())?;
    cast(CastMode::Default, &cv, dst, exec)
}

/// The values of UE8M0 codes (this module's variant) of the u8 array `src`
/// into the f32 array `dst` of the same shape, any layouts. Refuses other
/// dtypes and shapes before any write.
pub fn ue8m0_decode(src: &ArrayView<'_>, dst: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
    check(src, DType::U8, dst, DType::F32)?;
    let n = src.layout().len();
    let mut codes = crate::alloc::try_filled(n, 0u8, "ue8m0: the codes in C order")?;
    {
        let mut cv = ArrayViewMut::from_slice(&mut codes, src.shape())?;
        cast(CastMode::Default, src, &mut cv, exec)?;
    }
    let mut x = crate::alloc::try_filled(n, 0f32, "ue8m0: the values")?;
    for (v, &c) in x.iter_mut().zip(&codes) {
        *v = ue8m0_value(c);
    }
    let xv = ArrayView::from_slice(&x, dst.shape())?;
    cast(CastMode::Default, &xv, dst, exec)
}

fn check(src: &ArrayView<'_>, from: DType, dst: &ArrayViewMut<'_>, to: DType) -> Result<()> {
    for (operand, got, want) in [("src", src.dtype(), from), ("dst", dst.dtype(), to)] {
        if got != want {
            return Err(Error::DTypeMismatch {
                operand: format!("ue8m0: {operand}"),
                expected: want,
                got,
            });
        }
    }
    if src.shape() != dst.shape() {
        return Err(Error::Shape {
            operand: "ue8m0: dst".into(),
            shape: dst.shape().to_vec(),
            target: src.shape().to_vec(),
        });
    }
    crate::checks::check_destination(dst)
}
