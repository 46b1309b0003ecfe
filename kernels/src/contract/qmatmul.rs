//! The quantised matrix product (int8 operands, int32 accumulation) and the
//! requantisation of its int32 results to int8.

use super::{contract, ContractSpec};
use crate::array::{ArrayView, ArrayViewMut};
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;

/// `dst[i, j] = Σ_k a[i, k]·b[k, j]` for `a` of shape `[M, K]` and `b` of shape
/// `[K, N]`, each `i8` or `u8`, into an `i32` destination `[M, N]`, exactly
/// modulo 2^32 (plain 32-bit multiplies and adds; no pairing or saturating
/// instruction). Refusals as [`contract`], and a dtype other than `i8`/`u8`
/// for `a` or `b` or other than `i32` for `dst`.
pub fn qmatmul_i8(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    for (name, v) in [("a", a), ("b", b)] {
        if !matches!(v.dtype(), DType::I8 | DType::U8) {
            return Err(Error::DTypeMismatch {
                operand: name.into(),
                expected: DType::I8,
                got: v.dtype(),
            });
        }
    }
    if dst.dtype() != DType::I32 {
        return Err(Error::DTypeMismatch {
            operand: "destination".into(),
            expected: DType::I32,
            got: dst.dtype(),
        });
    }
    if a.shape().len() != 2 || b.shape().len() != 2 {
        let (name, v) = if a.shape().len() != 2 {
            ("a", a)
        } else {
            ("b", b)
        };
        return Err(Error::Rank {
            operand: format!("qmatmul_i8: {name}"),
            shape: v.shape().to_vec(),
            expected: "a and b must be matrices".into(),
        });
    }
    contract(
        &ContractSpec::new(DType::I32).contracting(1, 0),
        a,
        b,
        None,
        dst,
        exec,
    )
}

/// One requantised value: `acc·scale` exactly, rounded half to even to an
/// integer, plus `zero_point`, clamped to `[−128, 127]`.
pub fn requantize_one(acc: i32, scale: f32, zero_point: i32) -> i8 {
    // scale = m·2^e exactly, m an integer of at most 24 bits.
    let bits = scale.to_bits();
    let neg = bits >> 31 != 0;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = (bits & 0x7f_ffff) as i64;
    let (m, e) = if exp == 0 {
        (frac, -149)
    } else {
        (frac | 0x80_0000, exp - 150)
    };
    let m = if neg { -m } else { m };
    let p = acc as i64 * m; // exact: |p| < 2^55
    let q: i128 = if e >= 0 {
        // |p·2^e| is huge or zero: clamp below decides.
        if p == 0 {
            0
        } else {
            (p as i128) << e.min(64)
        }
    } else {
        let s = (-e) as u32;
        if s >= 63 {
            // |p| < 2^55 ≤ 2^(s−1): below one half, rounds to 0.
            0
        } else {
            let floor = p >> s;
            let rem = p - (floor << s);
            let half = 1i64 << (s - 1);
            let up = rem > half || (rem == half && floor & 1 == 1);
            (floor + up as i64) as i128
        }
    };
    (q + zero_point as i128).clamp(-128, 127) as i8
}

/// Requantise int32 accumulators to int8: each element
/// `clamp(round_half_even(x·scale) + zero_point, −128, 127)`, the product
/// taken exactly (no intermediate rounding). `src` (`i32`) broadcasts to
/// `dst` (`i8`). Refusals before any write: wrong dtypes, a shape that does
/// not broadcast, a destination that reaches an element twice, a scale that
/// is not finite.
pub fn requantize_i8(
    scale: f32,
    zero_point: i32,
    src: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier()?;
    if src.dtype() != DType::I32 {
        return Err(Error::DTypeMismatch {
            operand: "source".into(),
            expected: DType::I32,
            got: src.dtype(),
        });
    }
    if dst.dtype() != DType::I8 {
        return Err(Error::DTypeMismatch {
            operand: "destination".into(),
            expected: DType::I8,
            got: dst.dtype(),
        });
    }
    if !scale.is_finite() {
        return Err(Error::Attribute {
            name: "requantize_i8: scale".into(),
            reason: format!("{scale} is not finite"),
        });
    }
    if !crate::elementwise::broadcasts_to(src.shape(), dst.shape()) {
        return Err(Error::Shape {
            operand: "source".into(),
            shape: src.shape().to_vec(),
            target: dst.shape().to_vec(),
        });
    }
    check_destination(dst)?;
    let shape = dst.shape().to_vec();
    let rank = shape.len();
    // Source strides aligned to the destination's axes (0 where broadcast).
    let mut ss = vec![0isize; rank];
    let lead = rank - src.shape().len();
    for (i, (&n, &s)) in src.shape().iter().zip(src.strides()).enumerate() {
        ss[lead + i] = if n == 1 { 0 } else { s };
    }
    let (s_off, d_off) = (src.layout().offset as isize, dst.layout().offset as isize);
    let d_str = dst.strides().to_vec();
    let data = src.data();
    let count = dst.layout().len();
    let out = dst.data_mut();
    let mut idx = vec![0usize; rank];
    for _ in 0..count {
        let (mut ps, mut pd) = (s_off, d_off);
        for ax in 0..rank {
            ps += idx[ax] as isize * ss[ax];
            pd += idx[ax] as isize * d_str[ax];
        }
        let p = ps as usize * 4;
        let x = i32::from_ne_bytes([data[p], data[p + 1], data[p + 2], data[p + 3]]);
        out[pd as usize] = requantize_one(x, scale, zero_point) as u8;
        for ax in (0..rank).rev() {
            idx[ax] += 1;
            if idx[ax] < shape[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
    Ok(())
}
