//! The oracle of every elementwise kind: what the scalar tier must produce for
//! one element, from the kind's contract in spec/kinds.toml, computed with the
//! arithmetic of `exact` (f64, i128, exact dyadic numbers) and the encoder of
//! `mini`, never with the runtime under test.
//!
//! Float kinds follow kinds.toml's definition of `exact`: the value of the
//! operation in the carrier, rounded once into the result dtype. The carrier
//! value is the exact result rounded once into f32 or f64: for f32 carriers
//! the f64 result of add, sub, mul, div (`exact::div_round`) and sqrt
//! (`exact::sqrt_round`) rounded again to f32 (f64 carries more than 2·24 + 2
//! bits, so the double rounding is innocuous); for f64 the exact result
//! rounded by `exact`; fma is the exact a·b + c rounded once by `exact`; rem is
//! exact. A narrow float then goes through the independent encoder of `mini`.
//! (That this equals one rounding of the exact value into the narrow dtype,
//! the design's correctly-rounded claim, is checked apart, in
//! tests/scalar_oracle.rs.)

use super::exact::{self, Dd, Fmt};
use tessera_generated::{Class, DType, Kind};
use tessera_testkit::mini::{mini, MiniOracle};
use tessera_testkit::values::{code_of, decode, int_bytes, int_range, wrap_int, Val};

/// What one output element must be.
#[derive(Clone, Debug)]
pub enum Expect {
    /// A bool: the byte 0 or 1.
    Bool(bool),
    /// An integer, wrapped into the output's width (and nothing above it).
    Int(i128),
    /// An f32 or f64 output: exactly this value (zero's sign included); a NaN
    /// means any NaN.
    Float(f64),
    /// A parameterised float output: this code; a NaN code means any NaN code.
    Code(u32),
    /// A parameterised float output: any of these codes.
    Codes(Vec<u32>),
    /// A complex output, each component as `Float`.
    Complex(f64, f64),
    /// Input k's bytes, bit for bit.
    Input(usize),
    /// A real output within `ulps` ulps (of the output format) of (hi + lo)·2^k;
    /// infinity only at or beyond the format's largest finite value.
    Near {
        /// Reference, high part (scaled).
        hi: f64,
        /// Reference, low part (scaled).
        lo: f64,
        /// Scale exponent.
        k: i64,
        /// Allowed distance in ulps.
        ulps: f64,
    },
    /// A complex output within `tol` (Euclidean norm) of re + i·im.
    ComplexNear {
        /// Reference real part.
        re: Dd,
        /// Reference imaginary part.
        im: Dd,
        /// Allowed distance.
        tol: f64,
    },
    /// A complex output with at least one NaN component.
    ComplexSomeNan,
    /// A pair output (hi, lo), each part as `Float`.
    Pair(f64, f64),
    /// A pair output within the stated bound of the reference of `op` at
    /// `ins` (see `pair::check_near`).
    PairNear {
        /// The operation.
        op: super::pair::PairOp,
        /// The operand pairs.
        ins: Vec<(f64, f64)>,
        /// The component's precision.
        p: u32,
    },
    /// Nothing is claimed (the contract says nothing for these inputs).
    Unchecked,
}

#[derive(Clone, Copy)]
enum Fk {
    Mini(&'static MiniOracle),
    F32,
    F64,
}

fn fk(d: DType) -> Fk {
    match d {
        DType::F32 => Fk::F32,
        DType::F64 => Fk::F64,
        _ => Fk::Mini(mini(d).expect("a parameterised float")),
    }
}

/// x (the exact result, or an f64 innocuously close to it for an f32
/// carrier) rounded into the carrier, then into the dtype.
fn out(f: Fk, x: f64) -> Expect {
    match f {
        // The sign of a NaN result is not part of the contract (design §5.1),
        // but a dtype without NaN codes may turn it into the sign of a zero.
        Fk::Mini(m) if x.is_nan() && m.nan == tessera_generated::NanStyle::None => {
            Expect::Codes(vec![m.encode(f64::NAN, false), m.encode(-f64::NAN, false)])
        }
        Fk::Mini(m) => Expect::Code(m.encode(x as f32 as f64, false)),
        Fk::F32 => Expect::Float(x as f32 as f64),
        Fk::F64 => Expect::Float(x),
    }
}

/// A result of an f32 carrier within `ulps` f32 ulps of `x` (an f64 far more
/// accurate than that), then rounded into the dtype. Zeros, infinities and NaN
/// are exact (a NaN: any NaN).
fn near_carrier(f: Fk, x: f64, ulps: f64) -> Expect {
    // 2^128: beyond f32's largest finite value by a whole ulp, so every f32
    // within the bound of x is an infinity.
    if x.is_nan() || x.is_infinite() || x == 0.0 || x.abs() >= 3.402823669209385e38 {
        return out(f, x);
    }
    let e = ((x.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    let spacing = exact::pow2(e.max(-126) - 23);
    match f {
        Fk::Mini(m) => {
            let lo = m.encode(x - ulps * spacing, false);
            let hi = m.encode(x + ulps * spacing, false);
            Expect::Codes(if lo == hi { vec![lo] } else { vec![lo, hi] })
        }
        _ => Expect::Near {
            hi: x,
            lo: 0.0,
            k: 0,
            ulps,
        },
    }
}

/// IEEE 754-2019 minimum: NaN propagates, -0 < +0.
pub fn minimum(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        a
    } else {
        b
    }
}

/// IEEE 754-2019 maximum.
pub fn maximum(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b {
        a
    } else if b > a {
        b
    } else if a.is_sign_positive() {
        a
    } else {
        b
    }
}

fn signed_zero_like(x: f64) -> f64 {
    if x.is_sign_negative() {
        -0.0
    } else {
        0.0
    }
}

/// The integer part toward zero; zero keeps x's sign.
pub fn trunc(x: f64) -> f64 {
    if !x.is_finite() || x.abs() >= 4503599627370496.0 {
        return x;
    }
    let t = (x as i64) as f64;
    if t == 0.0 {
        signed_zero_like(x)
    } else {
        t
    }
}

/// Largest integer not above x.
pub fn floor(x: f64) -> f64 {
    let t = trunc(x);
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// Smallest integer not below x (ceil(-0.5) = -0).
pub fn ceil(x: f64) -> f64 {
    let t = trunc(x);
    if t < x {
        t + 1.0
    } else {
        t
    }
}

/// Nearest integer, halves away from zero.
pub fn round_half_away(x: f64) -> f64 {
    let t = trunc(x);
    if !x.is_finite() || (x - t).abs() < 0.5 {
        return t;
    }
    if x > 0.0 {
        t + 1.0
    } else {
        t - 1.0
    }
}

/// Nearest integer, halves to even.
pub fn round_half_even(x: f64) -> f64 {
    let t = trunc(x);
    let f = (x - t).abs();
    if !x.is_finite() || f < 0.5 || (f == 0.5 && t % 2.0 == 0.0) {
        return t;
    }
    if x > 0.0 {
        t + 1.0
    } else {
        t - 1.0
    }
}

/// -1, 0 or 1 by sign; zeros and NaN pass.
pub fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

fn copysign(a: f64, b: f64) -> f64 {
    if b.is_sign_negative() {
        -a.abs()
    } else {
        a.abs()
    }
}

fn float_kind(kind: Kind, f: Fk, v: &[f64]) -> Expect {
    let wide = matches!(f, Fk::F64);
    let carrier = if wide { exact::F64 } else { exact::F32 };
    let r = |x: f64| out(f, x);
    let t = |x: f64| x != 0.0; // NaN counts as true
                               // The fused kinds: each operation rounded once into the carrier, left to
                               // right.
    let add = |x: f64, y: f64| {
        if wide {
            exact::add_round(x, y, exact::F64)
        } else {
            (x + y) as f32 as f64
        }
    };
    let mul = |x: f64, y: f64| {
        if wide {
            exact::mul_round(x, y, exact::F64)
        } else {
            (x * y) as f32 as f64
        }
    };
    match kind {
        Kind::Add => r(if wide {
            exact::add_round(v[0], v[1], exact::F64)
        } else {
            v[0] + v[1]
        }),
        Kind::Sub => r(if wide {
            exact::sub_round(v[0], v[1], exact::F64)
        } else {
            v[0] - v[1]
        }),
        Kind::Mul => r(if wide {
            exact::mul_round(v[0], v[1], exact::F64)
        } else {
            v[0] * v[1]
        }),
        Kind::Div => r(exact::div_round(v[0], v[1], exact::F64)),
        Kind::Rem => r(exact::fmod(v[0], v[1])),
        Kind::Neg => r(-v[0]),
        Kind::Abs => r(v[0].abs()),
        Kind::Min => r(minimum(v[0], v[1])),
        Kind::Max => r(maximum(v[0], v[1])),
        Kind::Fma => r(exact::fma_round(v[0], v[1], v[2], carrier)),
        Kind::Sqrt => r(exact::sqrt_round(v[0], exact::F64)),
        Kind::Floor => r(floor(v[0])),
        Kind::Ceil => r(ceil(v[0])),
        Kind::Trunc => r(trunc(v[0])),
        Kind::Round => r(round_half_away(v[0])),
        Kind::Rint => r(round_half_even(v[0])),
        Kind::Copysign => r(copysign(v[0], v[1])),
        Kind::Sign => r(sign(v[0])),
        Kind::Clamp => r(minimum(maximum(v[0], v[1]), v[2])),
        Kind::Eq => Expect::Bool(v[0] == v[1]),
        Kind::Ne => Expect::Bool(v[0] != v[1]),
        Kind::Lt => Expect::Bool(v[0] < v[1]),
        Kind::Le => Expect::Bool(v[0] <= v[1]),
        Kind::Gt => Expect::Bool(v[0] > v[1]),
        Kind::Ge => Expect::Bool(v[0] >= v[1]),
        Kind::LogicalAnd => Expect::Bool(t(v[0]) && t(v[1])),
        Kind::LogicalOr => Expect::Bool(t(v[0]) || t(v[1])),
        Kind::LogicalXor => Expect::Bool(t(v[0]) != t(v[1])),
        Kind::LogicalNot => Expect::Bool(!t(v[0])),
        Kind::Add3 => r(add(add(v[0], v[1]), v[2])),
        Kind::Mul3 => r(mul(mul(v[0], v[1]), v[2])),
        Kind::Axpy => r(add(v[0], mul(v[1], v[2]))),
        // The parts, bits unchanged (a NaN stays a NaN).
        Kind::FromParts => Expect::Complex(v[0], v[1]),
        Kind::Lerp if v[2] == 1.0 => r(v[1]),
        Kind::Lerp => r(add(v[0], mul(add(v[1], -v[0]), v[2]))),
        // The transcendentals: within the kind's ulps in the carrier; an f64
        // carrier is checked against mpmath's values in tests/math.rs.
        Kind::Exp
        | Kind::Exp2
        | Kind::Expm1
        | Kind::Log
        | Kind::Log2
        | Kind::Log10
        | Kind::Log1p
        | Kind::Sin
        | Kind::Cos
        | Kind::Tan
        | Kind::Asin
        | Kind::Acos
        | Kind::Atan
        | Kind::Atan2
        | Kind::Sinh
        | Kind::Cosh
        | Kind::Tanh
        | Kind::Asinh
        | Kind::Acosh
        | Kind::Atanh
        | Kind::Erf
        | Kind::Erfc
        | Kind::Pow
        | Kind::Hypot
        | Kind::Cbrt
        | Kind::Sigmoid
        | Kind::Rsqrt
        | Kind::FastExp
        | Kind::FastLog
        | Kind::FastSin
        | Kind::FastCos
        | Kind::FastTanh
        | Kind::FastSigmoid
        | Kind::FastExp2
        | Kind::FastExpm1
        | Kind::FastLog2
        | Kind::FastLog10
        | Kind::FastLog1p
        | Kind::FastCbrt
        | Kind::FastTan
        | Kind::FastAsin
        | Kind::FastAcos
        | Kind::FastAtan
        | Kind::FastSinh
        | Kind::FastCosh
        | Kind::FastAsinh
        | Kind::FastAcosh
        | Kind::FastAtanh
        | Kind::FastErf
        | Kind::FastAtan2
        | Kind::FastHypot
        | Kind::FastPow => match tessera_testkit::math_ref::reference_of(kind, v) {
            Some((_, _)) if wide => Expect::Unchecked,
            Some((x, ulps)) => near_carrier(f, x, ulps),
            None => panic!("no reference for the transcendental {kind} (testkit/src/math_ref.rs)"),
        },
        Kind::Select => decided_by_expect(kind),
        Kind::TotalOrder => {
            unreachable!("total_order is decided from the operands' bytes (total_order_expect)")
        }
        // Kinds of spec/kinds.toml that accept no float dtype.
        Kind::BitwiseAnd
        | Kind::BitwiseOr
        | Kind::BitwiseXor
        | Kind::BitwiseNot
        | Kind::Shl
        | Kind::Shr
        | Kind::Rotl
        | Kind::Rotr
        | Kind::AddSat
        | Kind::SubSat
        | Kind::MulSat
        | Kind::OnesCount
        | Kind::LeadingZeros
        | Kind::TrailingZeros
        | Kind::ReverseBits
        | Kind::ByteSwap
        | Kind::Conj
        | Kind::PairHi
        | Kind::Real
        | Kind::Imag
        | Kind::Scale
        | Kind::PairLo => no_oracle(kind, "float"),
        Kind::TwoSum | Kind::FastTwoSum | Kind::TwoProd | Kind::PairFrom => {
            unreachable!("{kind} is decided by `expect`")
        }
    }
}

/// The arm of a kind that takes no dtype of the class: reached only if
/// kinds.toml starts to accept one, which then needs an oracle here.
fn no_oracle(kind: Kind, class: &str) -> Expect {
    panic!("no {class} oracle for kind {kind}: spec/kinds.toml gives it no {class} dtype")
}

/// select passes its operands through whatever their class, and scale's
/// operands have two classes: `expect` decides them before the oracles of
/// each class.
fn decided_by_expect(kind: Kind) -> Expect {
    unreachable!("{kind} is decided by `expect`, for every class")
}

fn int_kind(kind: Kind, d: DType, v: &[i128]) -> Expect {
    let (bits, min, max) = int_range(d);
    let mask = (1u128 << bits) - 1;
    let u = |x: i128| (x as u128) & mask;
    let from_bits = |b: u128| wrap_int(d, (b & mask) as i128);
    let w = bits as u128;
    let int = Expect::Int;
    match kind {
        Kind::Add => int(v[0] + v[1]),
        Kind::Sub => int(v[0] - v[1]),
        Kind::Mul => int(v[0].wrapping_mul(v[1])),
        Kind::Div => int(if v[1] == 0 { 0 } else { v[0] / v[1] }),
        Kind::Rem => int(if v[1] == 0 { 0 } else { v[0] % v[1] }),
        Kind::Neg => int(-v[0]),
        Kind::Abs => int(v[0].abs()),
        Kind::Min => int(v[0].min(v[1])),
        Kind::Max => int(v[0].max(v[1])),
        Kind::Sign => int(v[0].signum()),
        Kind::Clamp => int(v[0].max(v[1]).min(v[2])),
        Kind::Eq => Expect::Bool(v[0] == v[1]),
        Kind::Ne => Expect::Bool(v[0] != v[1]),
        Kind::Lt => Expect::Bool(v[0] < v[1]),
        Kind::Le => Expect::Bool(v[0] <= v[1]),
        Kind::Gt => Expect::Bool(v[0] > v[1]),
        Kind::Ge => Expect::Bool(v[0] >= v[1]),
        Kind::LogicalAnd => Expect::Bool(v[0] != 0 && v[1] != 0),
        Kind::LogicalOr => Expect::Bool(v[0] != 0 || v[1] != 0),
        Kind::LogicalXor => Expect::Bool((v[0] != 0) != (v[1] != 0)),
        Kind::LogicalNot => Expect::Bool(v[0] == 0),
        Kind::BitwiseAnd => int(from_bits(u(v[0]) & u(v[1]))),
        Kind::BitwiseOr => int(from_bits(u(v[0]) | u(v[1]))),
        Kind::BitwiseXor => int(from_bits(u(v[0]) ^ u(v[1]))),
        Kind::BitwiseNot => int(from_bits(!u(v[0]))),
        Kind::Shl => {
            let s = u(v[1]);
            int(if s >= w { 0 } else { from_bits(u(v[0]) << s) })
        }
        Kind::Shr => {
            let s = u(v[1]);
            int(if s >= w {
                if v[0] < 0 {
                    -1
                } else {
                    0
                }
            } else {
                v[0] >> s
            })
        }
        Kind::Rotl | Kind::Rotr => {
            let s = u(v[1]) % w;
            let s = if kind == Kind::Rotr { (w - s) % w } else { s };
            let x = u(v[0]);
            int(from_bits(if s == 0 {
                x
            } else {
                (x << s) | (x >> (w - s))
            }))
        }
        Kind::AddSat => int((v[0] + v[1]).clamp(min, max)),
        Kind::SubSat => int((v[0] - v[1]).clamp(min, max)),
        // u64 × u64 may pass i128: an overflowing product is beyond every
        // dtype's range, on the side of its sign.
        Kind::MulSat => int(v[0]
            .checked_mul(v[1])
            .unwrap_or(if (v[0] < 0) != (v[1] < 0) {
                i128::MIN
            } else {
                i128::MAX
            })
            .clamp(min, max)),
        // The bit kinds, counted one bit at a time over the dtype's width.
        Kind::OnesCount => int((0..bits).filter(|&i| u(v[0]) >> i & 1 == 1).count() as i128),
        Kind::LeadingZeros => int((0..bits)
            .rev()
            .take_while(|&i| u(v[0]) >> i & 1 == 0)
            .count() as i128),
        Kind::TrailingZeros => {
            int((0..bits).take_while(|&i| u(v[0]) >> i & 1 == 0).count() as i128)
        }
        Kind::ReverseBits => {
            int(from_bits((0..bits).fold(0u128, |r, i| {
                r | (u(v[0]) >> i & 1) << (bits - 1 - i)
            })))
        }
        Kind::ByteSwap => int(if bits <= 8 {
            v[0]
        } else {
            let n = bits / 8;
            from_bits((0..n).fold(0u128, |r, i| {
                r | (u(v[0]) >> (8 * i) & 0xff) << (8 * (n - 1 - i))
            }))
        }),
        Kind::Add3 => Expect::Int(v[0] + v[1] + v[2]),
        Kind::Mul3 => int(wrap_int(d, v[0].wrapping_mul(v[1])).wrapping_mul(v[2])),
        Kind::Axpy => int(v[0] + wrap_int(d, v[1].wrapping_mul(v[2]))),
        Kind::Select => decided_by_expect(kind),
        // Kinds of spec/kinds.toml that accept no integer dtype.
        Kind::TotalOrder => no_oracle(kind, "integer"),
        Kind::Fma
        | Kind::Sqrt
        | Kind::Floor
        | Kind::Ceil
        | Kind::Trunc
        | Kind::Round
        | Kind::Rint
        | Kind::Copysign
        | Kind::Conj
        | Kind::Exp
        | Kind::Exp2
        | Kind::Expm1
        | Kind::Log
        | Kind::Log2
        | Kind::Log10
        | Kind::Log1p
        | Kind::Sin
        | Kind::Cos
        | Kind::Tan
        | Kind::Asin
        | Kind::Acos
        | Kind::Atan
        | Kind::Atan2
        | Kind::Sinh
        | Kind::Cosh
        | Kind::Tanh
        | Kind::Asinh
        | Kind::Acosh
        | Kind::Atanh
        | Kind::Erf
        | Kind::Erfc
        | Kind::Pow
        | Kind::Hypot
        | Kind::Cbrt
        | Kind::Sigmoid
        | Kind::Rsqrt
        | Kind::FastExp
        | Kind::FastLog
        | Kind::FastSin
        | Kind::FastCos
        | Kind::FastTanh
        | Kind::FastSigmoid
        | Kind::FastExp2
        | Kind::FastExpm1
        | Kind::FastLog2
        | Kind::FastLog10
        | Kind::FastLog1p
        | Kind::FastCbrt
        | Kind::FastTan
        | Kind::FastAsin
        | Kind::FastAcos
        | Kind::FastAtan
        | Kind::FastSinh
        | Kind::FastCosh
        | Kind::FastAsinh
        | Kind::FastAcosh
        | Kind::FastAtanh
        | Kind::FastErf
        | Kind::FastAtan2
        | Kind::FastHypot
        | Kind::FastPow
        | Kind::Lerp
        | Kind::TwoSum
        | Kind::FastTwoSum
        | Kind::TwoProd
        | Kind::PairFrom
        | Kind::PairHi
        | Kind::Real
        | Kind::Imag
        | Kind::FromParts
        | Kind::Scale
        | Kind::PairLo => no_oracle(kind, "integer"),
    }
}

fn bool_kind(kind: Kind, v: &[bool]) -> Expect {
    let b = Expect::Bool;
    match kind {
        Kind::Eq => b(v[0] == v[1]),
        Kind::Ne => b(v[0] != v[1]),
        Kind::Lt => b(!v[0] && v[1]),
        Kind::Le => b(!v[0] || v[1]),
        Kind::Gt => b(v[0] && !v[1]),
        Kind::Ge => b(v[0] || !v[1]),
        Kind::LogicalAnd | Kind::BitwiseAnd => b(v[0] && v[1]),
        Kind::LogicalOr | Kind::BitwiseOr => b(v[0] || v[1]),
        Kind::LogicalXor | Kind::BitwiseXor => b(v[0] != v[1]),
        Kind::LogicalNot | Kind::BitwiseNot => b(!v[0]),
        Kind::Select => decided_by_expect(kind),
        // Kinds of spec/kinds.toml that accept no bool dtype.
        Kind::Add
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
        | Kind::Shl
        | Kind::Shr
        | Kind::Rotl
        | Kind::Rotr
        | Kind::AddSat
        | Kind::SubSat
        | Kind::TotalOrder
        | Kind::MulSat
        | Kind::OnesCount
        | Kind::LeadingZeros
        | Kind::TrailingZeros
        | Kind::ReverseBits
        | Kind::ByteSwap
        | Kind::Conj
        | Kind::Exp
        | Kind::Exp2
        | Kind::Expm1
        | Kind::Log
        | Kind::Log2
        | Kind::Log10
        | Kind::Log1p
        | Kind::Sin
        | Kind::Cos
        | Kind::Tan
        | Kind::Asin
        | Kind::Acos
        | Kind::Atan
        | Kind::Atan2
        | Kind::Sinh
        | Kind::Cosh
        | Kind::Tanh
        | Kind::Asinh
        | Kind::Acosh
        | Kind::Atanh
        | Kind::Erf
        | Kind::Erfc
        | Kind::Pow
        | Kind::Hypot
        | Kind::Cbrt
        | Kind::Sigmoid
        | Kind::Rsqrt
        | Kind::FastExp
        | Kind::FastLog
        | Kind::FastSin
        | Kind::FastCos
        | Kind::FastTanh
        | Kind::FastSigmoid
        | Kind::FastExp2
        | Kind::FastExpm1
        | Kind::FastLog2
        | Kind::FastLog10
        | Kind::FastLog1p
        | Kind::FastCbrt
        | Kind::FastTan
        | Kind::FastAsin
        | Kind::FastAcos
        | Kind::FastAtan
        | Kind::FastSinh
        | Kind::FastCosh
        | Kind::FastAsinh
        | Kind::FastAcosh
        | Kind::FastAtanh
        | Kind::FastErf
        | Kind::FastAtan2
        | Kind::FastHypot
        | Kind::FastPow
        | Kind::Add3
        | Kind::Mul3
        | Kind::Axpy
        | Kind::Lerp
        | Kind::TwoSum
        | Kind::FastTwoSum
        | Kind::TwoProd
        | Kind::PairFrom
        | Kind::PairHi
        | Kind::Real
        | Kind::Imag
        | Kind::FromParts
        | Kind::Scale
        | Kind::PairLo => no_oracle(kind, "bool"),
    }
}

/// Scale x by 2^k exactly (two steps, so k may exceed one f64 exponent range).
fn scale(x: f64, k: i64) -> f64 {
    let k1 = k / 2;
    x * exact::pow2(k1) * exact::pow2(k - k1)
}

/// |re + i·im| to about 100 bits, as `Near` within `ulps`. An infinite
/// component gives +inf even beside a NaN (as IEEE 754 hypot).
pub fn hypot_expect(re: f64, im: f64, ulps: f64) -> Expect {
    if re.is_infinite() || im.is_infinite() {
        return Expect::Float(f64::INFINITY);
    }
    if re.is_nan() || im.is_nan() {
        return Expect::Float(f64::NAN);
    }
    let (x, y) = (re.abs(), im.abs());
    let m = x.max(y);
    if m == 0.0 {
        return Expect::Float(0.0);
    }
    let k = exact::exponent(m);
    let (xs, ys) = (scale(x, -k), scale(y, -k));
    let s = exact::dd_add(exact::two_prod(xs, xs), exact::two_prod(ys, ys));
    let h = exact::dd_sqrt(s);
    Expect::Near {
        hi: h.0,
        lo: h.1,
        k,
        ulps,
    }
}

/// e^(x + iy) (the exp kind on c64 and c128): C99 Annex G's values where x
/// or y is not finite or y is zero, else within 4 ulps of the component
/// format of |e^(x + iy)| in Euclidean distance, the reference from f64's
/// exp, cos and sin (within about 2^-52 relative: enough for c64, a looser
/// check for c128) where e^x is moderate. Each component to 1 ulp against
/// 200-bit references: kernels/tests/complex_parts.rs.
fn cexp_expect(wide: bool, x: f64, y: f64) -> Expect {
    let nan = f64::NAN;
    // Beyond this |x|, e^x over- or underflows the component format.
    let limit = if wide { 700.0 } else { 80.0 };
    if y == 0.0 && !x.is_nan() && (x.is_infinite() || x.abs() < limit) {
        // e^x + i·y: the exponential of a real; the zero keeps its sign.
        let e = x.exp();
        return if x.is_infinite() {
            Expect::Complex(e, y)
        } else {
            let u = exact::pow2(if wide { -52 } else { -23 });
            Expect::ComplexNear {
                re: (e, 0.0),
                im: (y, 0.0),
                tol: 4.0 * u * e,
            }
        };
    }
    if x.is_nan() {
        return Expect::Complex(nan, if y == 0.0 { y } else { nan });
    }
    if !y.is_finite() {
        return match x {
            f64::INFINITY => Expect::Complex(f64::INFINITY, nan),
            f64::NEG_INFINITY => Expect::Complex(0.0, 0.0),
            _ => Expect::Complex(nan, nan),
        };
    }
    if x == f64::INFINITY {
        return Expect::Complex(f64::INFINITY * y.cos(), f64::INFINITY * y.sin());
    }
    if x == f64::NEG_INFINITY {
        return Expect::Complex(0.0 * y.cos(), 0.0 * y.sin());
    }
    if x.abs() >= limit {
        // Over- or underflowing components: compared between tiers only.
        return Expect::Unchecked;
    }
    let e = x.exp();
    let u = exact::pow2(if wide { -52 } else { -23 });
    Expect::ComplexNear {
        re: (e * y.cos(), 0.0),
        im: (e * y.sin(), 0.0),
        tol: 4.0 * u * e,
    }
}

fn is_moderate(x: f64) -> bool {
    x == 0.0 || (x.is_finite() && x.abs() >= 2f64.powi(-30) && x.abs() <= 2f64.powi(30))
}

fn complex_kind(kind: Kind, d: DType, a: &[(f64, f64)]) -> Expect {
    let wide = d == DType::C128;
    let fmt: Fmt = if wide { exact::F64 } else { exact::F32 };
    // One rounding of an exact operation into the component format.
    let add = |x: f64, y: f64| {
        if wide {
            exact::add_round(x, y, fmt)
        } else {
            (x + y) as f32 as f64
        }
    };
    let mul = |x: f64, y: f64| {
        if wide {
            exact::mul_round(x, y, fmt)
        } else {
            (x * y) as f32 as f64
        }
    };
    // The product of the stated formula (mul), for the fused kinds.
    let cmul = |(ar, ai): (f64, f64), (br, bi): (f64, f64)| {
        (
            add(mul(ar, br), -mul(ai, bi)),
            add(mul(ar, bi), mul(ai, br)),
        )
    };
    match kind {
        Kind::Add => Expect::Complex(add(a[0].0, a[1].0), add(a[0].1, a[1].1)),
        Kind::Sub => Expect::Complex(add(a[0].0, -a[1].0), add(a[0].1, -a[1].1)),
        Kind::Mul => {
            // The stated formula: (ac - bd) + i(ad + bc), each product and sum rounded.
            let ((ar, ai), (br, bi)) = (a[0], a[1]);
            Expect::Complex(
                add(mul(ar, br), -mul(ai, bi)),
                add(mul(ar, bi), mul(ai, br)),
            )
        }
        Kind::Div => {
            let ((ar, ai), (br, bi)) = (a[0], a[1]);
            let all = [ar, ai, br, bi];
            if all.iter().all(|&x| is_moderate(x)) && (br != 0.0 || bi != 0.0) {
                // Smith's algorithm: each component's error is at most about
                // 4.3u·|q| (no cancellation in its denominator, |r| <= 1), so
                // 8u·|q| bounds the error's norm, away from over- and underflow.
                let tp = exact::two_prod;
                let num_re = exact::dd_add(tp(ar, br), tp(ai, bi));
                let num_im = exact::dd_add(tp(ai, br), exact::dd_neg(tp(ar, bi)));
                let den = exact::dd_add(tp(br, br), tp(bi, bi));
                let re = exact::dd_div(num_re, den);
                let im = exact::dd_div(num_im, den);
                let u = exact::pow2(-(fmt.p as i64));
                let tol = 8.0 * u * re.0.hypot(im.0);
                Expect::ComplexNear { re, im, tol }
            } else if all.iter().any(|x| x.is_nan()) && !all.iter().any(|x| x.is_infinite()) {
                Expect::ComplexSomeNan
            } else {
                // Infinities, zero divisors and over/underflowing quotients: the
                // contract states no values here (the differential test still
                // compares tiers bit for bit).
                Expect::Unchecked
            }
        }
        Kind::Abs => hypot_expect(a[0].0, a[0].1, 1.0),
        Kind::Exp => cexp_expect(wide, a[0].0, a[0].1),
        Kind::Neg => Expect::Complex(-a[0].0, -a[0].1),
        Kind::Conj => Expect::Complex(a[0].0, -a[0].1),
        Kind::Real => Expect::Float(a[0].0),
        Kind::Imag => Expect::Float(a[0].1),
        Kind::Add3 => Expect::Complex(
            add(add(a[0].0, a[1].0), a[2].0),
            add(add(a[0].1, a[1].1), a[2].1),
        ),
        Kind::Mul3 => {
            let (r, i) = cmul(cmul(a[0], a[1]), a[2]);
            Expect::Complex(r, i)
        }
        Kind::Axpy => {
            let (r, i) = cmul(a[1], a[2]);
            Expect::Complex(add(a[0].0, r), add(a[0].1, i))
        }
        Kind::Eq => Expect::Bool(a[0].0 == a[1].0 && a[0].1 == a[1].1),
        Kind::Ne => Expect::Bool(!(a[0].0 == a[1].0 && a[0].1 == a[1].1)),
        Kind::Select | Kind::Scale => decided_by_expect(kind),
        // Kinds of spec/kinds.toml that accept no complex dtype.
        Kind::Rem
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
        | Kind::Lt
        | Kind::Le
        | Kind::Gt
        | Kind::Ge
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
        | Kind::MulSat
        | Kind::OnesCount
        | Kind::LeadingZeros
        | Kind::TrailingZeros
        | Kind::ReverseBits
        | Kind::ByteSwap
        | Kind::Exp2
        | Kind::Expm1
        | Kind::Log
        | Kind::Log2
        | Kind::Log10
        | Kind::Log1p
        | Kind::Sin
        | Kind::Cos
        | Kind::Tan
        | Kind::Asin
        | Kind::Acos
        | Kind::Atan
        | Kind::Atan2
        | Kind::Sinh
        | Kind::Cosh
        | Kind::Tanh
        | Kind::Asinh
        | Kind::Acosh
        | Kind::Atanh
        | Kind::Erf
        | Kind::Erfc
        | Kind::Pow
        | Kind::Hypot
        | Kind::Cbrt
        | Kind::Sigmoid
        | Kind::Rsqrt
        | Kind::FastExp
        | Kind::FastLog
        | Kind::FastSin
        | Kind::FastCos
        | Kind::FastTanh
        | Kind::FastSigmoid
        | Kind::FastExp2
        | Kind::FastExpm1
        | Kind::FastLog2
        | Kind::FastLog10
        | Kind::FastLog1p
        | Kind::FastCbrt
        | Kind::FastTan
        | Kind::FastAsin
        | Kind::FastAcos
        | Kind::FastAtan
        | Kind::FastSinh
        | Kind::FastCosh
        | Kind::FastAsinh
        | Kind::FastAcosh
        | Kind::FastAtanh
        | Kind::FastErf
        | Kind::FastAtan2
        | Kind::FastHypot
        | Kind::FastPow
        | Kind::Lerp
        | Kind::TwoSum
        | Kind::FastTwoSum
        | Kind::TwoProd
        | Kind::PairFrom
        | Kind::PairHi
        | Kind::FromParts
        | Kind::PairLo => no_oracle(kind, "complex"),
    }
}

/// The oracle: what `kind` on dtype `d` must give for the inputs `ins`.
/// IEEE 754 totalOrder of two floats of dtype `d` from their bytes: f32
/// and f64 by the standard library's `total_cmp` (NaN payloads ordered);
/// a narrower float by the values its codes decode to, every NaN of one
/// sign one NaN (the kind's stated rule), zero's sign and ±∞ in place.
pub fn total_order_expect(d: DType, a: &[u8], b: &[u8]) -> Expect {
    use std::cmp::Ordering;
    let o = match d {
        DType::F32 => f32::from_le_bytes(a.try_into().unwrap())
            .total_cmp(&f32::from_le_bytes(b.try_into().unwrap())),
        DType::F64 => f64::from_le_bytes(a.try_into().unwrap())
            .total_cmp(&f64::from_le_bytes(b.try_into().unwrap())),
        _ => {
            let (x, y) = (decode(d, a).f(), decode(d, b).f());
            let side = |v: f64| if v.is_sign_negative() { -1 } else { 1 };
            match (x.is_nan(), y.is_nan()) {
                (true, true) => side(x).cmp(&side(y)),
                (true, false) => side(x).cmp(&0),
                (false, true) => 0.cmp(&side(y)),
                (false, false) => x.total_cmp(&y),
            }
        }
    };
    Expect::Int(match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    })
}

pub fn expect(kind: Kind, d: DType, ins: &[Val]) -> Expect {
    let class = d.info().class;
    if kind == Kind::Select {
        let c = ins[0].b();
        return match class {
            // bool results are 0 or 1 (the dtype's rule), whatever byte was chosen.
            Class::Bool => Expect::Bool(if c { ins[1].b() } else { ins[2].b() }),
            _ => Expect::Input(if c { 1 } else { 2 }),
        };
    }
    if class == Class::Complex && d.info().item_bytes == 4 {
        // f16c, bf16c: every value is exactly a c64; the kind computes in
        // c64 and rounds each part of the result into the component once.
        let part = d.component().expect("a complex dtype");
        return narrow(expect(kind, DType::C64, ins), part);
    }
    if class == Class::Float
        && matches!(
            kind,
            Kind::TwoSum | Kind::FastTwoSum | Kind::TwoProd | Kind::PairFrom
        )
    {
        return super::pair::make_pair(kind, d, &ins.iter().map(|v| v.f()).collect::<Vec<_>>());
    }
    if kind == Kind::Scale {
        // (re·s) + i(im·s), each product rounded once into the component.
        let ((re, im), s) = (ins[0].c(), ins[1].f());
        let round = |x: f64| {
            if d == DType::C128 {
                exact::mul_round(x, s, exact::F64)
            } else {
                (x * s) as f32 as f64
            }
        };
        return Expect::Complex(round(re), round(im));
    }
    match class {
        Class::Pair => {
            super::pair::pair_kind(kind, d, &ins.iter().map(|v| v.p()).collect::<Vec<_>>())
        }
        Class::Bool => bool_kind(kind, &ins.iter().map(|v| v.b()).collect::<Vec<_>>()),
        Class::Int | Class::Uint => {
            int_kind(kind, d, &ins.iter().map(|v| v.i()).collect::<Vec<_>>())
        }
        Class::Float => float_kind(kind, fk(d), &ins.iter().map(|v| v.f()).collect::<Vec<_>>()),
        Class::Complex => complex_kind(kind, d, &ins.iter().map(|v| v.c()).collect::<Vec<_>>()),
    }
}

fn show(d: DType, b: &[u8]) -> String {
    let hex: String = b.iter().rev().map(|x| format!("{x:02x}")).collect();
    format!("0x{hex} ({:?})", decode(d, b))
}

fn same_float(got: f64, want: f64) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else {
        got.to_bits() == want.to_bits()
    }
}

fn read_real(d: DType, b: &[u8]) -> f64 {
    match d {
        DType::F32 => f32::from_le_bytes(b.try_into().unwrap()) as f64,
        DType::F64 => f64::from_le_bytes(b.try_into().unwrap()),
        _ if mini(d).is_some() => decode(d, b).f(),
        _ => panic!("{} is not a float", d.name()),
    }
}

/// The dtype of each half (`h` bytes) of a complex or pair element of `d`.
fn half_dtype(d: DType, h: usize) -> DType {
    match d.component() {
        Some(c) => c,
        None if h == 4 => DType::F32,
        None => DType::F64,
    }
}

/// A c64 kind's expectation carried into f16c or bf16c (or into their
/// component, for the real-valued kinds): each part of the c64 result rounded
/// once into the component `part`. Exact values round exactly; a tolerance
/// grows by half an ulp of the component per part, and a value near the
/// component's overflow is left to the differential test; a value within
/// ulps of a reference becomes one of the two component values around it.
fn narrow(e: Expect, part: DType) -> Expect {
    let m = mini(part).expect("a narrow float component");
    let r = |x: f64| m.decode(m.encode(x, false));
    match e {
        Expect::Complex(re, im) => Expect::Complex(r(re), r(im)),
        Expect::Float(x) => Expect::Float(r(x)),
        Expect::ComplexNear { re, im, tol } => {
            let (vr, vi) = (re.0 + re.1, im.0 + im.1);
            if vr.abs().max(vi.abs()) + tol >= m.max {
                return Expect::Unchecked;
            }
            let half_ulp = |v: f64| {
                // Half the spacing of the component's values at |v| (its
                // subnormal spacing below the normal range).
                let emin = 1 - m.bias as i64;
                let e = if v == 0.0 {
                    emin
                } else {
                    exact::exponent(v).max(emin)
                };
                scale(1.0, e - m.m as i64 - 1)
            };
            Expect::ComplexNear {
                re,
                im,
                tol: tol + half_ulp(vr).hypot(half_ulp(vi)) * 1.0001,
            }
        }
        Expect::Near { hi, lo, k, .. } => {
            // |reference| = (hi + lo)·2^k >= 0 (a modulus): the component
            // values on either side of it.
            let v = scale(hi, k) + scale(lo, k);
            let i = m.below(v);
            let t = &m.finite;
            if i == t.len() {
                Expect::Codes(vec![m.max_code, m.encode(f64::INFINITY, false)])
            } else if t[i].0 == v || i == 0 {
                Expect::Codes(vec![t[i].1])
            } else {
                Expect::Codes(vec![t[i - 1].1, t[i].1])
            }
        }
        other => other,
    }
}

fn check_near(d: DType, got: f64, hi: f64, lo: f64, k: i64, ulps: f64) -> Result<(), String> {
    let fmt = if d == DType::F32 {
        exact::F32
    } else {
        exact::F64
    };
    let max = if d == DType::F32 {
        f32::MAX as f64
    } else {
        f64::MAX
    };
    let e = exact::exponent(hi) + k;
    // |reference| >= 2^(e_hi + k) > max  <=>  the reference is beyond the largest finite value.
    let beyond = e > fmt.emax || (e == fmt.emax && scale(hi, k).abs() >= max);
    if got.is_infinite() && (got > 0.0) == (hi > 0.0) {
        return if beyond {
            Ok(())
        } else {
            Err("infinite, below the largest finite value".into())
        };
    }
    if !got.is_finite() {
        return Err("not finite".into());
    }
    let ulp_exp = e.max(fmt.emin) - (fmt.p as i64 - 1) - k;
    let diff = (scale(got, -k) - hi) - lo;
    let allowed = ulps * scale(1.0, ulp_exp);
    if diff.abs() <= allowed {
        Ok(())
    } else {
        Err(format!(
            "{:.3} ulps from the reference",
            diff.abs() / scale(1.0, ulp_exp)
        ))
    }
}

/// Check one output element `got` of dtype `d` against `want` (`ins`: the
/// element's input bytes).
pub fn check(d: DType, got: &[u8], want: &Expect, ins: &[&[u8]]) -> Result<(), String> {
    let fail = |why: String| Err(format!("got {}, want {want:?}: {why}", show(d, got)));
    match want {
        Expect::Unchecked => Ok(()),
        Expect::Bool(b) => {
            if got.len() == 1 && got[0] == *b as u8 {
                Ok(())
            } else {
                fail("bool results are the byte 0 or 1".into())
            }
        }
        Expect::Int(v) => {
            if got == int_bytes(d, *v).as_slice() {
                Ok(())
            } else {
                fail(format!("want the code of {}", wrap_int(d, *v)))
            }
        }
        Expect::Float(x) => {
            if same_float(read_real(d, got), *x) {
                Ok(())
            } else {
                fail("value".into())
            }
        }
        Expect::Code(c) => {
            let m = mini(d).expect("a parameterised float output");
            let g = code_of(d, got);
            let ok = if m.is_nan_code(*c) {
                g < (1 << m.code_bits) && m.is_nan_code(g)
            } else {
                g == *c
            };
            if ok {
                Ok(())
            } else {
                fail(format!("want code {c:#x} ({})", m.decode(*c)))
            }
        }
        Expect::Codes(cs) => {
            if cs.contains(&code_of(d, got)) {
                Ok(())
            } else {
                fail("not one of the codes".into())
            }
        }
        Expect::Complex(re, im) | Expect::Pair(re, im) => {
            let h = got.len() / 2;
            let c = half_dtype(d, h);
            if same_float(read_real(c, &got[..h]), *re) && same_float(read_real(c, &got[h..]), *im)
            {
                Ok(())
            } else {
                fail("components".into())
            }
        }
        Expect::Input(k) => {
            if got == ins[*k] {
                Ok(())
            } else {
                fail(format!("want input {k}'s bytes {}", show(d, ins[*k])))
            }
        }
        Expect::Near { hi, lo, k, ulps } => {
            match check_near(d, read_real(d, got), *hi, *lo, *k, *ulps) {
                Ok(()) => Ok(()),
                Err(e) => fail(e),
            }
        }
        Expect::ComplexNear { re, im, tol } => {
            let h = got.len() / 2;
            let c = half_dtype(d, h);
            let (gr, gi) = (read_real(c, &got[..h]), read_real(c, &got[h..]));
            let dr = (gr - re.0) - re.1;
            let di = (gi - im.0) - im.1;
            let dist = dr.hypot(di);
            if dist <= *tol {
                Ok(())
            } else {
                fail(format!("distance {dist:e} > {tol:e}"))
            }
        }
        Expect::PairNear { op, ins, p } => {
            let h = got.len() / 2;
            let c = if h == 4 { DType::F32 } else { DType::F64 };
            let (gh, gl) = (read_real(c, &got[..h]), read_real(c, &got[h..]));
            match super::pair::check_near(*op, ins, *p, gh, gl) {
                Ok(()) => Ok(()),
                Err(e) => fail(e),
            }
        }
        Expect::ComplexSomeNan => {
            let h = got.len() / 2;
            let c = half_dtype(d, h);
            if read_real(c, &got[..h]).is_nan() || read_real(c, &got[h..]).is_nan() {
                Ok(())
            } else {
                fail("a NaN input gives a NaN component".into())
            }
        }
    }
}
