//! The oracle of the pair kinds: the error-free transformations checked
//! exactly with the dyadic numbers of `exact`, and the pair arithmetic of
//! df32/dd64 checked against a 400-bit reference (astro-float) within the
//! relative bound spec/kinds.toml states, never with the runtime under test.

use super::exact::{self, Dy, Fmt};
use super::expect::Expect;
use astro_float::{BigFloat, Consts, RoundingMode};
use tessera_generated::{DType, Kind};

const PREC: usize = 400;
const RM: RoundingMode = RoundingMode::ToEven;

/// The format of an f32 or f64 component.
pub fn fmt_of(d: DType) -> Fmt {
    match d {
        DType::F32 | DType::Df32 => exact::F32,
        _ => exact::F64,
    }
}

fn round(x: &Dy, f: Fmt) -> f64 {
    x.round(f)
}

fn is_exactly(x: &Dy, v: f64) -> bool {
    let d = x.add(&Dy::from_f64(v).negate());
    d.mag.is_zero()
}

/// The kinds that make a pair from two f32 (f64): `d` is the operands' dtype.
pub fn make_pair(kind: Kind, d: DType, v: &[f64]) -> Expect {
    let f = fmt_of(d);
    let (a, b) = (v[0], v[1]);
    match kind {
        Kind::PairFrom => Expect::Pair(a, b),
        Kind::TwoSum | Kind::FastTwoSum | Kind::TwoProd => {
            let plain = match kind {
                Kind::TwoProd => {
                    if a.is_finite() && b.is_finite() {
                        exact::mul_round(a, b, f)
                    } else {
                        round_plain(a * b, f)
                    }
                }
                _ => {
                    if a.is_finite() && b.is_finite() {
                        exact::add_round(a, b, f)
                    } else {
                        round_plain(a + b, f)
                    }
                }
            };
            if !plain.is_finite() {
                return Expect::Pair(plain, 0.0);
            }
            if kind == Kind::FastTwoSum && !(a == 0.0 || a.abs() >= b.abs()) {
                // The contract claims nothing for |a| < |b|.
                return Expect::Unchecked;
            }
            let exact = if kind == Kind::TwoProd {
                Dy::from_f64(a).mul(&Dy::from_f64(b))
            } else {
                Dy::from_f64(a).add(&Dy::from_f64(b))
            };
            let err = exact.add(&Dy::from_f64(plain).negate());
            let e = round(&err, f);
            if !is_exactly(&err, e) {
                // TwoProd's error below the subnormals: no claim.
                return Expect::Unchecked;
            }
            // An exact zero error is +0 (the algorithms' sums of zeros of
            // opposite signs; a product's fma(a, b, -p) = +0).
            Expect::Pair(plain, if e == 0.0 { 0.0 } else { e })
        }
        _ => unreachable!("{kind} makes no pair"),
    }
}

/// An f64 rounded into the format (f32 or f64): for non-finite values.
fn round_plain(x: f64, f: Fmt) -> f64 {
    if f.p == 24 {
        x as f32 as f64
    } else {
        x
    }
}

/// Whether the pair is normalised: hi is its value rounded to the format.
pub fn normalised(hi: f64, lo: f64, f: Fmt) -> bool {
    hi.is_finite() && lo.is_finite() && exact::add_round(hi, lo, f).to_bits() == hi.to_bits()
}

/// The operation a pair kind computes, for the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PairOp {
    /// x + y
    Add,
    /// x − y
    Sub,
    /// x × y
    Mul,
    /// x ÷ y
    Div,
    /// √x
    Sqrt,
    /// e^x
    Exp,
}

impl PairOp {
    /// The bound, in units of u² (u = 2^-p), that spec/kinds.toml states.
    pub fn bound_u2(self, u: f64) -> f64 {
        match self {
            PairOp::Add | PairOp::Sub => 3.0 + 13.0 * u,
            PairOp::Mul => 4.0,
            PairOp::Div => 15.0 + 56.0 * u,
            PairOp::Sqrt => 25.0 / 8.0,
            PairOp::Exp => 32.0,
        }
    }
}

/// The kinds on pairs (`d` is df32 or dd64).
pub fn pair_kind(kind: Kind, d: DType, v: &[(f64, f64)]) -> Expect {
    let f = fmt_of(d);
    match kind {
        Kind::PairHi => return Expect::Float(v[0].0),
        Kind::PairLo => return Expect::Float(v[0].1),
        Kind::Neg => return Expect::Pair(-v[0].0, -v[0].1),
        _ => {}
    }
    let op = match kind {
        Kind::Add => PairOp::Add,
        Kind::Sub => PairOp::Sub,
        Kind::Mul => PairOp::Mul,
        Kind::Div => PairOp::Div,
        Kind::Sqrt => PairOp::Sqrt,
        Kind::Exp => PairOp::Exp,
        _ => panic!("no pair oracle for kind {kind}: spec/kinds.toml gives it no pair dtype"),
    };
    let his: Vec<f64> = v.iter().map(|p| p.0).collect();
    if his.iter().any(|h| !h.is_finite()) {
        // A non-finite leading part: the plain operation on the leading
        // parts, with a zero trailing part.
        let (a, b) = (his[0], his.get(1).copied().unwrap_or(0.0));
        let plain = match op {
            PairOp::Add => a + b,
            PairOp::Sub => a - b,
            PairOp::Mul => a * b,
            PairOp::Div => a / b,
            PairOp::Sqrt => a.sqrt(),
            PairOp::Exp if a.is_nan() => f64::NAN,
            PairOp::Exp => {
                if a > 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                }
            }
        };
        return Expect::Pair(round_plain(plain, f), 0.0);
    }
    // The bound is stated for normalised operands of magnitude between
    // 2^(emin + p) and a quarter of the largest finite value (no
    // intermediate overflows).
    let tiny = exact::pow2(f.emin + f.p as i64);
    let max = if f.p == 24 { f32::MAX as f64 } else { f64::MAX };
    let ok_operand = |&(h, l): &(f64, f64)| {
        normalised(h, l, f) && (h == 0.0 && l == 0.0 || h.abs() >= tiny && h.abs() <= max / 4.0)
    };
    if !v.iter().all(ok_operand) {
        return Expect::Unchecked;
    }
    Expect::PairNear {
        op,
        ins: v.to_vec(),
        p: f.p,
    }
}

/// x exactly: astro-float's `from_f64` misreads subnormals, so those are
/// scaled into the normal range first and back exactly.
fn big(x: f64) -> BigFloat {
    const TWO64: f64 = 18446744073709551616.0;
    if x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        BigFloat::from_f64(x * TWO64, PREC).mul(&BigFloat::from_f64(1.0 / TWO64, PREC), PREC, RM)
    } else {
        BigFloat::from_f64(x, PREC)
    }
}

thread_local! {
    static CONSTS: std::cell::RefCell<Consts> =
        std::cell::RefCell::new(Consts::new().expect("astro-float constants"));
}

/// The reference value of `op` at the pairs `ins`, at 400 bits.
pub fn reference(op: PairOp, ins: &[(f64, f64)]) -> BigFloat {
    let x = big(ins[0].0).add(&big(ins[0].1), PREC, RM);
    let y = ins
        .get(1)
        .map(|p| big(p.0).add(&big(p.1), PREC, RM))
        .unwrap_or_else(|| big(0.0));
    match op {
        PairOp::Add => x.add(&y, PREC, RM),
        PairOp::Sub => x.sub(&y, PREC, RM),
        PairOp::Mul => x.mul(&y, PREC, RM),
        PairOp::Div => x.div(&y, PREC, RM),
        PairOp::Sqrt => x.sqrt(PREC, RM),
        PairOp::Exp => CONSTS.with(|c| x.exp(PREC, RM, &mut c.borrow_mut())),
    }
}

/// Check a pair result (gh, gl) of `op` at `ins` in a format of precision
/// `p`: normalised, and within the stated relative bound of the reference
/// where the reference lies in the range the bound covers (|r| between
/// 2^(emin + 2p) and a quarter of the largest finite value); outside it only
/// "finite or not" is checked against the reference.
pub fn check_near(op: PairOp, ins: &[(f64, f64)], p: u32, gh: f64, gl: f64) -> Result<(), String> {
    let f = if p == 24 { exact::F32 } else { exact::F64 };
    let r = reference(op, ins);
    if r.is_nan() {
        return if gh.is_nan() {
            Ok(())
        } else {
            Err("the reference is NaN".into())
        };
    }
    let max = if p == 24 { f32::MAX as f64 } else { f64::MAX };
    let mag = r.abs();
    let lower = big(exact::pow2(f.emin + 2 * p as i64));
    let upper = big(max / 4.0);
    if mag > upper || (mag < lower && !r.is_zero()) {
        return Ok(());
    }
    if r.is_zero() {
        return if gh == 0.0 && gl == 0.0 {
            Ok(())
        } else {
            Err("the exact result is 0".into())
        };
    }
    if !gh.is_finite() || !gl.is_finite() {
        return Err("not finite".into());
    }
    if !normalised(gh, gl, f) {
        return Err("the result is not normalised".into());
    }
    let u = exact::pow2(-(p as i64));
    let bound = op.bound_u2(u) * u * u;
    let got = big(gh).add(&big(gl), PREC, RM);
    let err = got.sub(&r, PREC, RM).abs();
    let allowed = mag.mul(&big(bound), PREC, RM);
    if err <= allowed {
        Ok(())
    } else {
        let rel = err.div(&mag, PREC, RM);
        Err(format!(
            "relative error {} u² > {} u²",
            rel.div(&big(u * u), 64, RM),
            op.bound_u2(u)
        ))
    }
}
