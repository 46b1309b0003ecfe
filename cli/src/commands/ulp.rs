//! `tessera ulp KIND DTYPE [--exhaustive] [--samples N] [--tier T]`: the
//! largest error of a transcendental kind, in ulps of the result, against a
//! reference more precise than the result, with the worst input.
//!
//! - f32: the reference is the f64 maths library (std, and the `libm` crate
//!   for the inverse hyperbolics and the error functions), each within a few
//!   f64 ulps, some 2^-29 of an f32 ulp. `--exhaustive` runs every one of the
//!   2^32 inputs of a one-input kind; otherwise every 997th bit pattern. Two-input
//!   kinds take `--samples` random pairs (default 10^6) plus a grid of edge
//!   values.
//! - f64: the reference is `astro-float` at 256 bits. Inputs: `--samples`
//!   random bit patterns (default 10^6) spread over every binade, plus the
//!   hard cases of tests/data/math/f64.txt.
//!
//! A NaN reference needs a NaN; an infinite one the same infinity; a zero the
//! same zero. The command exits 1 when the largest error exceeds the kind's
//! bound (1 ulp, or 3.5 for `fast_*`).

use super::parse_args;
use crate::failure::{Failure, Outcome};
use crate::outln;
use astro_float::{BigFloat, Consts, RoundingMode};
use rayon::prelude::*;
use std::io::Write;
use tessera::{Accuracy, ArrayView, ArrayViewMut, DType, Exec, Kind};
use tessera_testkit::math_ref;
use tessera_testkit::rng::Rng;

/// Working precision of the f64 reference, in bits.
const PREC: usize = 256;
const RM: RoundingMode = RoundingMode::ToEven;

/// The worst error seen, and where.
#[derive(Clone, Copy, Debug, Default)]
struct Worst {
    ulps: f64,
    input: [u64; 2],
    got: u64,
    bad_specials: u64,
    count: u64,
}

impl Worst {
    fn merge(self, o: Worst) -> Worst {
        let mut w = if o.ulps > self.ulps { o } else { self };
        w.bad_specials = self.bad_specials + o.bad_specials;
        w.count = self.count + o.count;
        w
    }
}

/// The f64 reference of a kind on f32 inputs (see the module doc): the
/// tests' own table (`tessera_testkit::math_ref`: the platform's f64 libm and
/// the `libm` crate), so that the command and the tests measure against one
/// reference.
fn ref_f64(base: &str, x: f64, y: f64) -> f64 {
    math_ref::reference(base, &[x, y]).map_or(f64::NAN, |(r, _)| r)
}

/// Distance of `got` from `r` in ulps of an f32 result (exact specials needed).
fn err_f32(got: f32, r: f64) -> Option<f64> {
    if r.is_nan() {
        return got.is_nan().then_some(0.0);
    }
    let rf = r as f32;
    if rf.is_infinite() && r.abs() > f32::MAX as f64 * (1.0 + 2f64.powi(-25)) {
        // Beyond the largest finite value by more than half an ulp: an
        // infinity is exact; the largest finite value is measured as usual.
        if got == rf {
            return Some(0.0);
        }
    }
    if r == 0.0 || r.is_infinite() {
        return (got.to_bits() == (r as f32).to_bits()).then_some(0.0);
    }
    if !got.is_finite() {
        return None;
    }
    let e = ((r.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let ulp = 2f64.powi(e.max(-126) - 23);
    Some((got as f64 - r).abs() / ulp)
}

/// x exactly at PREC bits. (astro-float 0.9 reads a subnormal f64 as half
/// its value, so subnormals enter scaled by 2^64 and are scaled back.)
fn big(x: f64) -> BigFloat {
    if x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        let s = BigFloat::from_f64(x * 18446744073709551616.0, PREC);
        return s.mul(
            &BigFloat::from_f64(1.0 / 18446744073709551616.0, PREC),
            PREC,
            RM,
        );
    }
    BigFloat::from_f64(x, PREC)
}

/// erf and erfc at PREC bits: the Taylor series of erf for |x| < 6, and the
/// continued fraction of erfc beyond (both converge there at this precision).
fn erf_big(x: f64, complement: bool, cc: &mut Consts) -> BigFloat {
    let p = PREC + 128;
    if x.abs() >= 27.5 {
        // erfc(27.5) < 2^-1090, below half the least f64 subnormal: every
        // digit the measure can see is that of erf = ±1 and erfc = 0 or 2.
        // The reference stands 2^-1200 from them (closer than the exact
        // value is), which no f64 result can resolve.
        let tiny = BigFloat::from_f64(2f64.powi(-600), p).mul(
            &BigFloat::from_f64(2f64.powi(-600), p),
            p,
            RM,
        );
        let one = BigFloat::from_f64(1.0, p);
        let two = BigFloat::from_f64(2.0, p);
        return match (complement, x < 0.0) {
            (true, false) => tiny,
            (true, true) => two.sub(&tiny, p, RM),
            (false, false) => one.sub(&tiny, p, RM),
            (false, true) => tiny.sub(&one, p, RM),
        };
    }
    let mut bx = big(x);
    bx.set_precision(p, RM).ok();
    let one = BigFloat::from_f64(1.0, p);
    let sqrt_pi = cc.pi(p, RM).sqrt(p, RM);
    if x.abs() < 6.0 {
        // erf x = 2/sqrt(pi) · Σ (-1)^n x^(2n+1) / (n! (2n+1))
        let x2 = bx.mul(&bx, p, RM);
        let mut term = bx.clone(); // (-1)^n x^(2n+1) / n!
        let mut sum = bx.clone();
        for n in 1..2000u32 {
            term = term
                .mul(&x2, p, RM)
                .div(&BigFloat::from_f64(-(n as f64), p), p, RM);
            let t = term.div(&BigFloat::from_f64((2 * n + 1) as f64, p), p, RM);
            sum = sum.add(&t, p, RM);
            if t.is_zero() || t.exponent().unwrap_or(0) < sum.exponent().unwrap_or(0) - p as i32 - 8
            {
                break;
            }
        }
        let erf = sum
            .mul(&BigFloat::from_f64(2.0, p), p, RM)
            .div(&sqrt_pi, p, RM);
        return if complement {
            one.sub(&erf, p, RM)
        } else {
            erf
        };
    }
    // erfc x = exp(-x²)/sqrt(pi) · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
    let ax = bx.abs();
    let mut f = ax.clone();
    for k in (1..400u32).rev() {
        let c = BigFloat::from_f64(k as f64 / 2.0, p);
        f = ax.add(&c.div(&f, p, RM), p, RM);
    }
    let x2 = ax.mul(&ax, p, RM);
    let erfc = x2.neg().exp(p, RM, cc).div(&sqrt_pi, p, RM).div(&f, p, RM);
    let two = BigFloat::from_f64(2.0, p);
    match (complement, x < 0.0) {
        (true, false) => erfc,
        (true, true) => two.sub(&erfc, p, RM),
        (false, false) => one.sub(&erfc, p, RM),
        (false, true) => erfc.sub(&one, p, RM),
    }
}

/// sin, cos or tan at PREC bits. From |x| = 2^8 on, x is reduced by this
/// module, not by astro-float (whose division by 2π at the argument's
/// width costs most of the time): t = x / 2π to TRIG_BITS bits, whose
/// fraction keeps at least 458 bits for any f64 x (t < 2^1022), so t is
/// within 2^-457 of exact and r = 2π frac(t) within 2^-454, against a
/// distance of at least 2^-62 between an f64 and a multiple of π/2.
fn trig_big(base: &str, x: f64, cc: &mut Consts) -> BigFloat {
    let p = PREC;
    let r = if x.is_finite() && x.abs() >= 256.0 {
        let (inv_two_pi, two_pi) = two_pi_pair(cc);
        let t = big(x).mul(&inv_two_pi, TRIG_BITS, RM);
        t.fract().mul(&two_pi, p + 64, RM)
    } else {
        big(x)
    };
    match base {
        "sin" => r.sin(p, RM, cc),
        "cos" => r.cos(p, RM, cc),
        _ => r.tan(p, RM, cc),
    }
}

/// Width of the argument reduction of [`trig_big`]: 1024 bits of integer
/// part, PREC + 200 of fraction.
const TRIG_BITS: usize = 1024 + PREC + 200;

thread_local! {
    static TWO_PI: std::cell::RefCell<Option<(BigFloat, BigFloat)>> = const { std::cell::RefCell::new(None) };
}

/// 1/(2π) to TRIG_BITS bits and 2π to PREC + 64, computed once per thread.
fn two_pi_pair(cc: &mut Consts) -> (BigFloat, BigFloat) {
    TWO_PI.with(|c| {
        c.borrow_mut()
            .get_or_insert_with(|| {
                let q = TRIG_BITS + 64;
                let inv = big(0.5).div(&cc.pi(q, RM), TRIG_BITS, RM);
                let p = PREC + 64;
                (inv, cc.pi(p, RM).mul(&big(2.0), p, RM))
            })
            .clone()
    })
}

/// x^y at PREC bits. The specials of C99 Annex F (a zero, infinite, NaN or
/// unit operand) are exact in f64 and are taken from it; a negative x needs
/// an integer y (else NaN) and takes the sign of y's parity. Otherwise
/// |x|^y = e^(y ln|x|), ln and the product carried 64 bits beyond p, which
/// leaves the exponential's argument (|y ln|x|| < 800 when it is evaluated)
/// within 2^-300 of exact. Beyond 2^±1100 the f64 result is an overflow or
/// a zero, whatever the digits: the reference is then that infinity or zero.
fn pow_big(x: f64, y: f64, cc: &mut Consts) -> BigFloat {
    let p = PREC;
    if !x.is_finite() || !y.is_finite() || x == 0.0 || y == 0.0 || x == 1.0 {
        return big(x.powf(y));
    }
    let odd = y.abs() < 9007199254740992.0 && (y % 2.0).abs() == 1.0;
    if x < 0.0 && y.trunc() != y {
        return BigFloat::nan(None);
    }
    let neg = x < 0.0 && odd;
    let scale = y * x.abs().log2();
    let m = if scale > 1100.0 {
        big(f64::INFINITY)
    } else if scale < -1100.0 {
        big(0.0)
    } else {
        let q = p + 64;
        big(x)
            .abs()
            .ln(q, RM, cc)
            .mul(&big(y), q, RM)
            .exp(p, RM, cc)
    };
    if neg {
        m.neg()
    } else {
        m
    }
}

/// The exact value of a kind at f64 inputs, to PREC bits.
fn ref_big(base: &str, x: f64, y: f64, cc: &mut Consts) -> BigFloat {
    let (bx, p) = (big(x), PREC);
    let one = big(1.0);
    match base {
        "exp" => bx.exp(p, RM, cc),
        // astro-float's 2^x is not exact at infinities, and the result
        // beyond |x| = 1100 is an f64 overflow or underflow either way.
        "exp2" if !x.is_finite() || x.abs() > 1100.0 => big(x.exp2()),
        // 2^x = e^(x ln 2), ln 2 and the product carried 64 bits beyond p
        // (astro-float's general pow costs some 30 times as much).
        "exp2" => bx.mul(&cc.ln_2(p + 64, RM), p + 64, RM).exp(p, RM, cc),
        "expm1" if x.abs() < 1e-30 => bx.add(&bx.mul(&bx, p, RM).div(&big(2.0), p, RM), p, RM),
        "expm1" => bx.exp(p + 128, RM, cc).sub(&one, p, RM),
        "log" => bx.ln(p, RM, cc),
        "log2" => bx.log2(p, RM, cc),
        "log10" => bx.log10(p, RM, cc),
        "log1p" if x.abs() < 1e-30 => bx.sub(&bx.mul(&bx, p, RM).div(&big(2.0), p, RM), p, RM),
        // 1 + x exact: the bits from 1 down to x's last one, plus p.
        "log1p" => {
            let span = if x.abs() >= 1.0 {
                0
            } else {
                (-x.abs().log2()) as usize + 2
            };
            let q = p + 64 + span;
            BigFloat::from_f64(x, q).add(&one, q, RM).ln(p, RM, cc)
        }
        "sin" | "cos" | "tan" => trig_big(base, x, cc),
        "asin" => bx.asin(p, RM, cc),
        "acos" => bx.acos(p, RM, cc),
        "atan" => bx.atan(p, RM, cc),
        "atan2" => {
            let pi = cc.pi(p, RM);
            if y == 0.0 || x == 0.0 || !x.is_finite() || !y.is_finite() {
                return big(x.atan2(y));
            }
            let a = bx.div(&big(y), p, RM).atan(p, RM, cc);
            if y > 0.0 {
                a
            } else if x >= 0.0 {
                a.add(&pi, p, RM)
            } else {
                a.sub(&pi, p, RM)
            }
        }
        "sinh" => bx.sinh(p, RM, cc),
        "cosh" => bx.cosh(p, RM, cc),
        "tanh" => bx.tanh(p, RM, cc),
        // Far from 1 the series' first terms are exact to far below 2^-p:
        // asinh x = sign(x)(ln 2|x| + 1/(4x²) - ...), acosh x = ln 2x - ...,
        // and x - x³/6 (asinh), x + x³/3 (atanh) near zero.
        "asinh" | "acosh"
            if x.is_finite() && (x > 2f64.powi(300) || base == "asinh" && x < -2f64.powi(300)) =>
        {
            let l = bx.abs().ln(p + 64, RM, cc).add(&cc.ln_2(p + 64, RM), p, RM);
            if x < 0.0 && base == "asinh" {
                l.neg()
            } else {
                l
            }
        }
        "asinh" | "atanh" if x != 0.0 && x.abs() < 2f64.powi(-300) => {
            let c = big(if base == "asinh" { -6.0 } else { 3.0 });
            bx.add(&bx.mul(&bx, p, RM).mul(&bx, p, RM).div(&c, p, RM), p, RM)
        }
        "asinh" => bx.asinh(p, RM, cc),
        "acosh" => bx.acosh(p, RM, cc),
        "atanh" => bx.atanh(p, RM, cc),
        "erf" => erf_big(x, false, cc),
        "erfc" => erf_big(x, true, cc),
        "pow" => pow_big(x, y, cc),
        "hypot" => bx
            .mul(&bx, p, RM)
            .add(&big(y).mul(&big(y), p, RM), p, RM)
            .sqrt(p, RM),
        "cbrt" => bx.cbrt(p, RM),
        "sigmoid" => one.div(&one.add(&bx.neg().exp(p, RM, cc), p, RM), p, RM),
        // IEEE 754's rSqrt(±0) = ±inf, rSqrt(+inf) = +0: the f64 value is exact.
        "rsqrt" if x == 0.0 || !x.is_finite() => big(1.0 / x.sqrt()),
        "rsqrt" => one.div(&bx.sqrt(p, RM), p, RM),
        _ => BigFloat::nan(None),
    }
}

/// A BigFloat's exponent e (|v| in [2^(e-1), 2^e)) and its value over 2^e.
fn split(v: &BigFloat) -> Option<(i64, f64)> {
    let (m, _, s, e, _) = v.as_raw_parts()?;
    let top = *m.last()? as f64 / 2f64.powi(64);
    let neg = matches!(s, astro_float::Sign::Neg);
    Some((e as i64, if neg { -top } else { top }))
}

/// Distance of `got` from the exact value in ulps of an f64 result.
fn err_f64(got: f64, exact: &BigFloat, fallback: f64) -> Option<f64> {
    if exact.is_nan() {
        // Outside the domain (or a special the library does not evaluate):
        // the plain f64 value says which special is meant.
        if fallback.is_nan() {
            return got.is_nan().then_some(0.0);
        }
        return (got.to_bits() == fallback.to_bits() || got == fallback).then_some(0.0);
    }
    if exact.is_zero() {
        return (got == 0.0).then_some(0.0);
    }
    if exact.is_inf() {
        return (got.is_infinite() && (got > 0.0) == exact.is_positive()).then_some(0.0);
    }
    let (e, _) = split(exact)?;
    if e > 1024 {
        return (got.is_infinite() && (got > 0.0) == exact.is_positive()).then_some(0.0);
    }
    if !got.is_finite() {
        return None;
    }
    let ulp_e = (e - 1).max(-1022) - 52;
    let d = big(got).sub(exact, PREC, RM);
    if d.is_zero() {
        return Some(0.0);
    }
    let (de, dm) = split(&d)?;
    Some((dm * 2f64.powi((de - ulp_e) as i32)).abs())
}

/// `kind` on `xs` (and `ys` for a binary kind) in one elementwise call.
fn apply<T: tessera::Element + Default>(
    exec: &Exec,
    kind: Kind,
    xs: &[T],
    ys: Option<&[T]>,
) -> Outcome<Vec<T>> {
    let n = xs.len();
    let fail = |e: tessera::Error| Failure::run(e.to_string());
    let mut out = vec![T::default(); n];
    let mut views = vec![ArrayView::from_slice(xs, &[n]).map_err(fail)?];
    if let Some(ys) = ys {
        views.push(ArrayView::from_slice(ys, &[n]).map_err(fail)?);
    }
    let mut ov = ArrayViewMut::from_slice(&mut out, &[n]).map_err(fail)?;
    tessera::elementwise(kind, &views, &mut ov, exec).map_err(fail)?;
    drop(ov);
    Ok(out)
}

fn run_f32(exec: &Exec, kind: Kind, base: &str, xs: &[f32], ys: Option<&[f32]>) -> Outcome<Worst> {
    let n = xs.len();
    let out = apply(exec, kind, xs, ys)?;
    let mut w = Worst::default();
    for i in 0..n {
        let y = ys.map_or(0.0, |v| v[i]);
        let r = ref_f64(base, xs[i] as f64, y as f64);
        w.count += 1;
        match err_f32(out[i], r) {
            Some(u) if u > w.ulps => {
                w.ulps = u;
                w.input = [xs[i].to_bits() as u64, y.to_bits() as u64];
                w.got = out[i].to_bits() as u64;
            }
            Some(_) => {}
            None => {
                w.bad_specials += 1;
                w.ulps = f64::INFINITY;
                w.input = [xs[i].to_bits() as u64, y.to_bits() as u64];
                w.got = out[i].to_bits() as u64;
            }
        }
    }
    Ok(w)
}

fn run_f64(exec: &Exec, kind: Kind, base: &str, xs: &[f64], ys: Option<&[f64]>) -> Outcome<Worst> {
    let n = xs.len();
    let out = apply(exec, kind, xs, ys)?;
    let chunks: Vec<usize> = (0..n).step_by(4096).collect();
    let w = chunks
        .par_iter()
        .map(|&c0| {
            let mut cc = Consts::new().expect("astro-float constants");
            let mut w = Worst::default();
            for i in c0..(c0 + 4096).min(n) {
                let y = ys.map_or(0.0, |v| v[i]);
                let exact = ref_big(base, xs[i], y, &mut cc);
                let fallback = ref_f64(base, xs[i], y);
                w.count += 1;
                let e = err_f64(out[i], &exact, fallback);
                let u = e.unwrap_or(f64::INFINITY);
                if e.is_none() {
                    w.bad_specials += 1;
                }
                if u > w.ulps || (e.is_none() && w.ulps.is_finite()) {
                    w.ulps = u;
                    w.input = [xs[i].to_bits(), y.to_bits()];
                    w.got = out[i].to_bits();
                }
            }
            w
        })
        .reduce(Worst::default, Worst::merge);
    Ok(w)
}

const EDGES: [f64; 14] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    1e-30,
    -1e-30,
    1e30,
    -1e30,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

/// Run the command.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    let p = parse_args("ulp", args, &["--exhaustive"], &["--samples", "--tier"])?;
    p.at_most("ulp", 2)?;
    let (Some(kname), Some(dname)) = (p.positional.first(), p.positional.get(1)) else {
        return Err(Failure::usage(
            "ulp: usage: tessera ulp KIND DTYPE [--exhaustive] [--samples N] [--tier T]".into(),
        ));
    };
    let kind = Kind::from_name(kname)
        .ok_or_else(|| Failure::usage(format!("ulp: unknown kind `{kname}`")))?;
    let bound = match kind.info().accuracy {
        Accuracy::Ulp1 => 1.0,
        Accuracy::Ulp35 => 3.5,
        Accuracy::Exact => {
            return Err(Failure::usage(format!(
                "ulp: `{kname}` is exact (rounded once), not a transcendental"
            )))
        }
    };
    let dtype = DType::from_name(dname)
        .ok_or_else(|| Failure::usage(format!("ulp: unknown dtype `{dname}`")))?;
    if dtype != DType::F32 && dtype != DType::F64 {
        return Err(Failure::usage(format!(
            "ulp: measures f32 and f64 (narrow floats compute in f32 and round once; \
             the tests check every one of their codes), not `{dname}`"
        )));
    }
    let samples: usize = match p.value("--samples") {
        Some(s) => s
            .parse()
            .map_err(|_| Failure::usage(format!("ulp: --samples `{s}` is not a count")))?,
        None => 1_000_000,
    };
    let tier = match p.value("--tier") {
        Some(t) => tessera::tier::parse_tier(t).map_err(|e| Failure::usage(format!("ulp: {e}")))?,
        None => tessera::active_tier(),
    };
    let exec = Exec::on(tier).threads(1);
    let arity = kind.info().arity;
    let base = kname.strip_prefix("fast_").unwrap_or(kname);
    let exhaustive = p.has("--exhaustive");
    if exhaustive && (arity != 1 || dtype != DType::F32) {
        return Err(Failure::usage(
            "ulp: --exhaustive is for one-input kinds on f32 (2^32 inputs)".into(),
        ));
    }
    let t0 = std::time::Instant::now();
    let mut rng = Rng::new(0x7e55_e7a0_u64 ^ kind as u64);
    let worst = if dtype == DType::F32 {
        if arity == 1 {
            let step: u64 = if exhaustive { 1 } else { 997 };
            let chunk = 1u64 << 20;
            let starts: Vec<u64> = (0..(1u64 << 32)).step_by((chunk * step) as usize).collect();
            starts
                .par_iter()
                .map(|&s| {
                    let xs: Vec<f32> = (0..chunk)
                        .map(|i| s + i * step)
                        .take_while(|&b| b < 1 << 32)
                        .map(|b| f32::from_bits(b as u32))
                        .collect();
                    run_f32(&exec, kind, base, &xs, None)
                })
                .try_reduce(Worst::default, |a, b| Ok(a.merge(b)))?
        } else {
            let mut xs = Vec::with_capacity(samples + EDGES.len().pow(2));
            let mut ys = Vec::with_capacity(xs.capacity());
            for &a in &EDGES {
                for &b in &EDGES {
                    xs.push(a as f32);
                    ys.push(b as f32);
                }
            }
            for _ in 0..samples {
                let r = rng.next_u64();
                xs.push(f32::from_bits(r as u32));
                ys.push(f32::from_bits((r >> 32) as u32));
            }
            let n = xs.len();
            let chunks: Vec<usize> = (0..n).step_by(1 << 16).collect();
            chunks
                .par_iter()
                .map(|&c| {
                    let e = (c + (1 << 16)).min(n);
                    run_f32(&exec, kind, base, &xs[c..e], Some(&ys[c..e]))
                })
                .try_reduce(Worst::default, |a, b| Ok(a.merge(b)))?
        }
    } else {
        let mut xs: Vec<f64> = Vec::new();
        let mut ys: Vec<f64> = Vec::new();
        let hard = include_str!("../../../tests/data/math/f64.txt");
        for l in hard.lines() {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w[0] != base {
                continue;
            }
            let h = |s: &str| f64::from_bits(u64::from_str_radix(s, 16).unwrap_or(0));
            xs.push(h(w[1]));
            ys.push(if arity == 2 { h(w[2]) } else { 0.0 });
        }
        for &a in &EDGES {
            for &b in &EDGES {
                xs.push(a);
                ys.push(b);
            }
        }
        for _ in 0..samples {
            xs.push(f64::from_bits(rng.next_u64()));
            ys.push(f64::from_bits(rng.next_u64()));
        }
        run_f64(&exec, kind, base, &xs, (arity == 2).then_some(&ys[..]))?
    };
    let secs = t0.elapsed().as_secs_f64();
    let show = |b: u64| {
        if dtype == DType::F32 {
            format!("{:#010x} ({:e})", b, f32::from_bits(b as u32))
        } else {
            format!("{:#018x} ({:e})", b, f64::from_bits(b))
        }
    };
    let input = if arity == 1 {
        show(worst.input[0])
    } else {
        format!("{}, {}", show(worst.input[0]), show(worst.input[1]))
    };
    let ok = worst.ulps <= bound;
    outln!(
        out,
        "{kname} {dname} ({} tier): max {:.4} ulp over {} inputs{} (bound {bound}); worst input {input} gives {}; {:.1} s: {}",
        tier.name(),
        worst.ulps,
        worst.count,
        if exhaustive { ", every f32" } else { "" },
        show(worst.got),
        secs,
        if ok { "ok" } else { "ABOVE THE BOUND" }
    )?;
    if worst.bad_specials > 0 {
        outln!(
            out,
            "{} inputs with a wrong special value (NaN, infinity or zero)",
            worst.bad_specials
        )?;
    }
    Ok(if ok { 0 } else { 1 })
}
