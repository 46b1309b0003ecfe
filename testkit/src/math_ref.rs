//! References for the transcendental kinds on f32 carriers: the f64 functions
//! of the platform's maths library (`std`, and the `libm` crate for erf and
//! erfc and the inverse hyperbolics), each within a few f64 ulps — some 2^-29
//! of an f32 ulp — so an f32 result's distance from them is its distance from
//! the exact value to that precision. They are not the code under test (the
//! runtime's functions are in codegen/runtime/math and call no library).
//!
//! The tests of the transcendental kinds (tests/math.rs, and the oracle of
//! tests/oracle/expect.rs) and the `tessera ulp` command measure against this
//! one table.

use tessera::Kind;

/// acosh, NaN below 1.
fn acosh(x: f64) -> f64 {
    if x < 1.0 {
        f64::NAN
    } else {
        libm::acosh(x)
    }
}

/// atanh, NaN beyond ±1.
fn atanh(x: f64) -> f64 {
    if x.abs() > 1.0 {
        f64::NAN
    } else {
        libm::atanh(x)
    }
}

/// 1 / (1 + e^-x), without the overflow of e^-x far below zero.
fn sigmoid(x: f64) -> f64 {
    if x < -700.0 {
        x.exp()
    } else {
        1.0 / (1.0 + (-x).exp())
    }
}

/// 1 / sqrt(x), ±inf at ±0.
fn rsqrt(x: f64) -> f64 {
    if x == 0.0 {
        1.0 / x
    } else {
        1.0 / x.sqrt()
    }
}

/// [`reference_of`] the kind called `name`; None for a name that is no kind.
pub fn reference(name: &str, v: &[f64]) -> Option<(f64, f64)> {
    Kind::from_name(name).and_then(|kind| reference_of(kind, v))
}

/// The f64 reference of `kind` at `v`, with the kind's bound in ulps (1 for
/// the default kinds, 3.5 for `fast_*`), or None for a kind that is not a
/// transcendental. Exhaustive over the kinds: a new kind does not compile
/// until it is placed here.
pub fn reference_of(kind: Kind, v: &[f64]) -> Option<(f64, f64)> {
    let x = v[0];
    let one = |y: f64| Some((y, 1.0));
    let fast = |y: f64| Some((y, 3.5));
    match kind {
        Kind::Exp => one(x.exp()),
        Kind::Exp2 => one(x.exp2()),
        Kind::Expm1 => one(x.exp_m1()),
        Kind::Log => one(x.ln()),
        Kind::Log2 => one(x.log2()),
        Kind::Log10 => one(x.log10()),
        Kind::Log1p => one(x.ln_1p()),
        Kind::Sin => one(x.sin()),
        Kind::Cos => one(x.cos()),
        Kind::Tan => one(x.tan()),
        Kind::Asin => one(x.asin()),
        Kind::Acos => one(x.acos()),
        Kind::Atan => one(x.atan()),
        Kind::Atan2 => one(x.atan2(v[1])),
        Kind::Sinh => one(x.sinh()),
        Kind::Cosh => one(x.cosh()),
        Kind::Tanh => one(x.tanh()),
        Kind::Asinh => one(libm::asinh(x)),
        Kind::Acosh => one(acosh(x)),
        Kind::Atanh => one(atanh(x)),
        Kind::Erf => one(libm::erf(x)),
        Kind::Erfc => one(libm::erfc(x)),
        Kind::Pow => one(x.powf(v[1])),
        Kind::Hypot => one(x.hypot(v[1])),
        Kind::Cbrt => one(x.cbrt()),
        Kind::Sigmoid => one(sigmoid(x)),
        Kind::Rsqrt => one(rsqrt(x)),
        Kind::FastExp => fast(x.exp()),
        Kind::FastLog => fast(x.ln()),
        Kind::FastSin => fast(x.sin()),
        Kind::FastCos => fast(x.cos()),
        Kind::FastTanh => fast(x.tanh()),
        Kind::FastSigmoid => fast(sigmoid(x)),
        Kind::FastPow => fast(x.powf(v[1])),
        Kind::FastExp2 => fast(x.exp2()),
        Kind::FastExpm1 => fast(x.exp_m1()),
        Kind::FastLog2 => fast(x.log2()),
        Kind::FastLog10 => fast(x.log10()),
        Kind::FastLog1p => fast(x.ln_1p()),
        Kind::FastCbrt => fast(x.cbrt()),
        Kind::FastTan => fast(x.tan()),
        Kind::FastAsin => fast(x.asin()),
        Kind::FastAcos => fast(x.acos()),
        Kind::FastAtan => fast(x.atan()),
        Kind::FastSinh => fast(x.sinh()),
        Kind::FastCosh => fast(x.cosh()),
        Kind::FastAsinh => fast(libm::asinh(x)),
        Kind::FastAcosh => fast(acosh(x)),
        Kind::FastAtanh => fast(atanh(x)),
        Kind::FastErf => fast(libm::erf(x)),
        Kind::FastAtan2 => fast(x.atan2(v[1])),
        Kind::FastHypot => fast(x.hypot(v[1])),
        // Exact kinds (accuracy = "exact"): their oracles are in expect.rs.
        Kind::TwoSum
        | Kind::FastTwoSum
        | Kind::TwoProd
        | Kind::PairFrom
        | Kind::PairHi
        | Kind::PairLo
        | Kind::Add
        | Kind::Sub
        | Kind::Mul
        | Kind::Div
        | Kind::Rem
        | Kind::Neg
        | Kind::Abs
        | Kind::Min
        | Kind::Max
        | Kind::Fma
        | Kind::Sqrt
        | Kind::Floor
        | Kind::Ceil
        | Kind::Trunc
        | Kind::Round
        | Kind::Rint
        | Kind::Copysign
        | Kind::Sign
        | Kind::Clamp
        | Kind::Eq
        | Kind::Ne
        | Kind::Lt
        | Kind::Le
        | Kind::Gt
        | Kind::Ge
        | Kind::Select
        | Kind::FromParts
        | Kind::Scale
        | Kind::LogicalAnd
        | Kind::LogicalOr
        | Kind::LogicalXor
        | Kind::LogicalNot
        | Kind::BitwiseAnd
        | Kind::BitwiseOr
        | Kind::BitwiseXor
        | Kind::BitwiseNot
        | Kind::Shl
        | Kind::Shr
        | Kind::Rotl
        | Kind::Rotr
        | Kind::AddSat
        | Kind::SubSat
        | Kind::TotalOrder
        | Kind::Real
        | Kind::Imag
        | Kind::MulSat
        | Kind::OnesCount
        | Kind::LeadingZeros
        | Kind::TrailingZeros
        | Kind::ReverseBits
        | Kind::ByteSwap
        | Kind::Conj
        | Kind::Add3
        | Kind::Mul3
        | Kind::Axpy
        | Kind::Lerp => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_bounds() {
        assert_eq!(reference("exp", &[1.0]), Some((std::f64::consts::E, 1.0)));
        assert_eq!(reference("fast_exp", &[0.0]), Some((1.0, 3.5)));
        assert_eq!(
            reference("atan2", &[1.0, 1.0]).map(|r| r.0),
            Some(1f64.atan2(1.0))
        );
        assert!(reference("acosh", &[0.5]).unwrap().0.is_nan());
        assert!(reference("atanh", &[1.5]).unwrap().0.is_nan());
        assert_eq!(reference("rsqrt", &[-0.0]).unwrap().0, f64::NEG_INFINITY);
        assert_eq!(reference("sigmoid", &[-800.0]).unwrap().0, (-800f64).exp());
        assert_eq!(reference("add", &[1.0, 2.0]), None);
        assert_eq!(reference("no_such_kind", &[1.0]), None);
        assert_eq!(reference_of(Kind::Erfc, &[0.0]), Some((1.0, 1.0)));
    }
}
