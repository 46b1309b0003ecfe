//! Integer accumulators of every width other than 32 and 64 bits (`i4`,
//! `u4`, `i8`, `u8`, `i16`, `u16`, `u32`, `u64`).
//!
//! A w-bit accumulator holds every integer modulo 2^w, so its sum is the
//! exact sum of the operands' casts reduced modulo 2^w, whatever the order.
//! It runs as a contraction into the wide integer accumulator of the next
//! width that 2^w divides (`i32` for w ≤ 32, else `i64`), whose sum is exact
//! modulo 2^32 (2^64), and the result is then reduced modulo 2^w:
//!
//! * an integer (or bool) operand enters the wide accumulator as its value
//!   modulo 2^32 (2^64), congruent modulo 2^w to its cast into the w-bit
//!   accumulator, so it is passed on unchanged (and keeps the packed
//!   integer kernels of `i8`/`u8`/`i16` operands);
//! * any other operand (a float, truncated toward zero and saturated to the
//!   w-bit range; a complex number by its real part) is first cast into the
//!   accumulator's dtype, whose values then enter the wide one exactly;
//! * the wide result is reduced into the accumulator's dtype (a cast
//!   between integers wraps), then cast into the destination.
//!
//! Sub-byte accumulators keep their values one per byte (in `i8` or `u8`,
//! which hold them exactly), so that operands of any shape can be held.

use super::gemm::Panels;
use super::{contract_in, try_filled, ContractSpec};
use crate::array::{c_strides, ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{Class, DType};

/// Whether `acc` is an integer accumulator this module computes.
pub(super) fn takes(acc: DType) -> bool {
    matches!(
        acc,
        DType::I4
            | DType::U4
            | DType::I8
            | DType::U8
            | DType::I16
            | DType::U16
            | DType::U32
            | DType::U64
    )
}

/// The wide accumulator whose sums are exact modulo a multiple of 2^w.
fn wide(acc: DType) -> DType {
    if acc.info().bits <= 32 {
        DType::I32
    } else {
        DType::I64
    }
}

/// The dtype that holds the accumulator's values in memory: itself, or the
/// byte-wide integer of its signedness for a packed one.
fn holder(acc: DType) -> DType {
    match acc {
        DType::I4 => DType::I8,
        DType::U4 => DType::U8,
        other => other,
    }
}

/// Whether an operand of this dtype passes into the wide accumulator
/// unchanged (an integer or bool: congruent modulo 2^w to its cast).
fn integral(d: DType) -> bool {
    matches!(d.info().class, Class::Int | Class::Uint | Class::Bool)
}

/// The casts of `v`'s elements into `acc`, as a C-order buffer of
/// [`holder`]`(acc)` of `v`'s shape.
fn into_acc(exec: &Exec, v: &ArrayView<'_>, acc: DType) -> Result<Vec<u8>> {
    let shape = v.shape();
    let len = v.layout().len();
    let hold = holder(acc);
    if hold == acc {
        let bytes = len
            .checked_mul(acc.info().item_bytes)
            .ok_or(Error::Overflow {
                operand: "contract: an operand in acc".into(),
            })?;
        let mut out = try_filled(bytes, 0u8, "an operand in acc")?;
        cast(
            CastMode::Default,
            v,
            &mut ArrayViewMut::contiguous(acc, shape, &mut out)?,
            exec,
        )?;
        return Ok(out);
    }
    // A packed accumulator: the source, read exactly as f64 (every real
    // float, and a complex number's real part, which is all the cast
    // reads), is cast into the accumulator one value per byte (a trailing
    // axis of extent 1, the other strides whole bytes), then widened
    // exactly into the holder.
    let bytes = len.checked_mul(8).ok_or(Error::Overflow {
        operand: "contract: an operand in acc".into(),
    })?;
    let mut f = try_filled(bytes, 0u8, "an operand in f64")?;
    cast(
        CastMode::Default,
        v,
        &mut ArrayViewMut::contiguous(DType::F64, shape, &mut f)?,
        exec,
    )?;
    let mut one: Vec<usize> = shape.to_vec();
    one.push(1);
    let mut unit = c_strides(shape);
    unit.push(1);
    let f_view = ArrayView::new(DType::F64, &one, &unit, 0, &f)?;
    let doubled = c_strides(&one)
        .iter()
        .map(|&s| s * acc.info().values_per_byte as isize)
        .collect::<Vec<_>>();
    let mut packed = try_filled(len, 0u8, "an operand in acc")?;
    let mut out = try_filled(len, 0u8, "an operand in acc")?;
    cast(
        CastMode::Default,
        &f_view,
        &mut ArrayViewMut::new(acc, &one, &doubled, 0, &mut packed)?,
        exec,
    )?;
    cast(
        CastMode::Default,
        &ArrayView::new(acc, &one, &doubled, 0, &packed)?,
        &mut ArrayViewMut::new(hold, &one, &unit, 0, &mut out)?,
        exec,
    )?;
    Ok(out)
}

/// A wide sum reduced modulo 2^w into the accumulator's holder: `bits` is
/// w, `signed` the accumulator's signedness.
fn wrap(v: i64, bits: u32, signed: bool) -> i64 {
    let shift = 64 - bits;
    if signed {
        (v << shift) >> shift
    } else {
        ((v as u64) << shift >> shift) as i64
    }
}

/// The exact sums modulo 2^32 (`T` = i32) or 2^64 (i64) of a contraction
/// whose spec names that wide accumulator, in C order of `shape`.
fn wide_sums<T: crate::Element + Copy>(
    zero: T,
    (a, b, init): (&ArrayView<'_>, &ArrayView<'_>, Option<&ArrayView<'_>>),
    shape: &[usize],
    spec: &ContractSpec,
    exec: Exec,
) -> Result<Vec<T>> {
    let len = crate::array::count_of(shape, "contract: the destination")?;
    let mut s = try_filled(len, zero, "the destination in acc")?;
    contract_in(
        a,
        b,
        init,
        &mut ArrayViewMut::from_slice(&mut s, shape)?,
        spec,
        exec,
        None,
        Panels::Cache,
    )?;
    Ok(s)
}

/// [`contract`](super::contract) into the integer accumulator `spec.acc`
/// (one that [`takes`] answers for); the geometry, destination and init
/// were checked by the caller.
pub(super) fn run(
    exec: Exec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
) -> Result<()> {
    let acc = spec.acc;
    let w = wide(acc);
    let hold = holder(acc);
    let keep = |v: &ArrayView<'_>| -> Result<Option<Vec<u8>>> {
        if integral(v.dtype()) {
            Ok(None)
        } else {
            into_acc(&exec, v, acc).map(Some)
        }
    };
    let (ba, bb) = (keep(a)?, keep(b)?);
    let bi = match init {
        Some(i) => keep(i)?,
        None => None,
    };
    let va = match &ba {
        Some(bytes) => ArrayView::contiguous(hold, a.shape(), bytes)?,
        None => a.clone(),
    };
    let vb = match &bb {
        Some(bytes) => ArrayView::contiguous(hold, b.shape(), bytes)?,
        None => b.clone(),
    };
    let vi = match (init, &bi) {
        (Some(i), Some(bytes)) => Some(ArrayView::contiguous(hold, i.shape(), bytes)?),
        (Some(i), None) => Some(i.clone()),
        _ => None,
    };
    let inner = ContractSpec {
        acc: w,
        ..spec.clone()
    };
    let len = dst.layout().len();
    let (bits, signed) = (acc.info().bits, acc.info().class == Class::Int);
    let ops = (&va, &vb, vi.as_ref());
    let sums: Vec<i64> = if w == DType::I32 {
        let s = wide_sums(0i32, ops, dst.shape(), &inner, exec)?;
        super::try_collect(len, s.iter().map(|&x| x as i64), "the destination in acc")?
    } else {
        wide_sums(0i64, ops, dst.shape(), &inner, exec)?
    };
    // The sums modulo 2^w in the holder's dtype, then cast into dst.
    macro_rules! finish {
        ($t:ty) => {{
            let out = super::try_collect(
                len,
                sums.iter().map(|&x| wrap(x, bits, signed) as $t),
                "the destination in acc",
            )?;
            cast(
                CastMode::Default,
                &ArrayView::from_slice(&out, dst.shape())?,
                dst,
                &exec,
            )
        }};
    }
    match hold {
        DType::I8 => finish!(i8),
        DType::U8 => finish!(u8),
        DType::I16 => finish!(i16),
        DType::U16 => finish!(u16),
        DType::U32 => finish!(u32),
        DType::U64 => finish!(u64),
        // `takes` admits no other accumulator.
        other => Err(Error::DTypeUnsupported {
            operand: "contract: the accumulator".into(),
            dtype: other,
            reason: "not an integer accumulator of this path".into(),
        }),
    }
}
