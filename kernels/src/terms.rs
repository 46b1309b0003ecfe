//! Combinations of terms and their exponentials (seed 003's double-float
//! terms): T terms of N points each, given in binary64 and held as
//! double-float pairs (each f64 split into hi = f32(v), lo = f32(v − hi),
//! within 2^-48 relative), combined with binary64 weights (each also split
//! into a pair) in pair arithmetic and rounded once into f32 / complex64.
//!
//! **Combination** ([`TermsPlan::combine`]): x = Σ_t w_t·T_t per point,
//! real and imaginary parts apart, t in increasing order from (+0, +0), each
//! product by the pair mul and each sum by the pair add (`Pair::mul`,
//! `Pair::add`), then each part rounded once. Error: at most
//! u·|x| + (2 + 8T)·2^-48·Σ_t |w_t|·|T_t| per part (u = 2^-24: the final
//! rounding; the splits of the terms and weights, 2^-48 each, and the pair
//! operations, within 4u² + 3u² each, make up the rest).
//!
//! **Exponential** ([`TermsPlan::exponential`]): y = exp(s·x), s = ±1, from
//! the pair x: the phase reduced by whole turns k = rint(Im x.hi / 2π) of a
//! double-float 2π (Im x − k·(2π_hi + 2π_lo) in pair arithmetic: a phase up
//! to 10^7 rad keeps its reduction within about 2^-48 of the phase), the
//! angle s·(phase.hi + phase.lo) rounded to f32, its cosine and sine by the
//! `cos` and `sin` kinds' functions (within 1 ulp), one Newton step that
//! returns (c, s) to the unit circle (δ = −½((c² + s²) − 1) from TwoProd
//! squares in pair arithmetic, c + c·δ by a fused multiply-add, so a long
//! product of phasors does not drift in modulus), and the modulus
//! exp(s·Re x.hi)·(1 + s·Re x.lo) by the `exp` kind's function. Error
//! relative to |y|: at most 8u + 2^-45·|Im x| + 2^-45·|Re x| where the result
//! is a normal number (u = 2^-24).
//!
//! **φ functions** ([`TermsPlan::phi`]): e^x and k!·φ_{k+1}(x) for
//! k < count ≤ [`MAX_PHI_ORDER`], in complex double-float arithmetic: the
//! series with scaling and doubling for |x| ≤ [`PHI_JOIN`], the recurrence
//! up from e^x beyond it, each rounded once (within 2^-22 relative).
//!
//! Every point is one fixed sequence of IEEE operations: the same bits on
//! every tier and thread count. The plan holds the uploaded terms (16·T·N
//! bytes) and needs no scratch (`scratch_bytes` is 0).

use crate::array::{ArrayView, ArrayViewMut};
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{CastMode, DType, Pair};
use num_complex::Complex;
use rayon::prelude::*;
use tessera_generated::runtime::math::{exp, trig};

/// 2π as a double-float pair, hi = f32(2π).
const TWO_PI: Pair<f32> = Pair {
    hi: 6.283_185_5,
    lo: -1.748_455_5e-7,
};
/// 1/(2π) rounded to f32.
const INV_TWO_PI: f32 = 0.159_154_94;

/// Terms uploaded once as double-float pairs, combined with many weight
/// sets.
#[derive(Clone, Debug)]
pub struct TermsPlan {
    terms: usize,
    points: usize,
    complex: bool,
    re: Vec<Pair<f32>>,
    im: Vec<Pair<f32>>,
}

/// An f64 as a double-float pair: hi = f32(v), lo = f32(v − hi).
fn split(v: f64) -> Pair<f32> {
    let hi = v as f32;
    if !hi.is_finite() {
        return Pair::new(hi, 0.0);
    }
    Pair::new(hi, (v - hi as f64) as f32)
}

impl TermsPlan {
    /// Upload `terms`, shape [T, N] (T ≥ 1 terms of N points), f64 or c128
    /// in any layout, as double-float pairs. Refuses another dtype or rank,
    /// no term, and a non-finite value.
    pub fn upload(terms: &ArrayView<'_>) -> Result<TermsPlan> {
        let complex = match terms.dtype() {
            DType::F64 => false,
            DType::C128 => true,
            d => {
                return Err(Error::DTypeUnsupported {
                    operand: "terms".into(),
                    dtype: d,
                    reason: "terms are f64 or c128 values".into(),
                })
            }
        };
        let shape = terms.shape();
        if shape.len() != 2 || shape[0] == 0 {
            return Err(Error::Attribute {
                name: "terms".into(),
                reason: format!("the terms are [T, N] with T ≥ 1, not {shape:?}"),
            });
        }
        let (t, n) = (shape[0], shape[1]);
        let count = t * n;
        let mut re = crate::alloc::try_vec(count, "the terms' real parts")?;
        let mut im = crate::alloc::try_vec(
            if complex { count } else { 0 },
            "the terms' imaginary parts",
        )?;
        if complex {
            let mut v: Vec<Complex<f64>> =
                crate::alloc::try_filled(count, Complex::default(), "terms")?;
            crate::cast::cast(
                CastMode::Default,
                terms,
                &mut ArrayViewMut::from_slice(&mut v, shape)?,
                &Exec::SEQ,
            )?;
            if v.iter().any(|c| !(c.re.is_finite() && c.im.is_finite())) {
                return Err(Error::Attribute {
                    name: "terms".into(),
                    reason: "a term is not finite".into(),
                });
            }
            re.extend(v.iter().map(|c| split(c.re)));
            im.extend(v.iter().map(|c| split(c.im)));
        } else {
            let mut v: Vec<f64> = crate::alloc::try_filled(count, 0.0, "terms")?;
            crate::cast::cast(
                CastMode::Default,
                terms,
                &mut ArrayViewMut::from_slice(&mut v, shape)?,
                &Exec::SEQ,
            )?;
            if v.iter().any(|x| !x.is_finite()) {
                return Err(Error::Attribute {
                    name: "terms".into(),
                    reason: "a term is not finite".into(),
                });
            }
            re.extend(v.iter().map(|&x| split(x)));
        }
        Ok(TermsPlan {
            terms: t,
            points: n,
            complex,
            re,
            im,
        })
    }

    /// Terms and points.
    pub fn shape(&self) -> (usize, usize) {
        (self.terms, self.points)
    }

    /// Scratch a call needs beyond the plan: none.
    pub fn scratch_bytes(&self) -> usize {
        0
    }

    fn check(&self, weights: &[f64], out: &ArrayViewMut<'_>, want: DType) -> Result<()> {
        if weights.len() != self.terms {
            return Err(Error::Length {
                operand: "weights".into(),
                len: weights.len(),
                expected: self.terms,
                unit: "values",
            });
        }
        if weights.iter().any(|w| !w.is_finite()) {
            return Err(Error::Attribute {
                name: "weights".into(),
                reason: "a weight is not finite".into(),
            });
        }
        if out.dtype() != want {
            return Err(Error::DTypeMismatch {
                operand: "out".into(),
                expected: want,
                got: out.dtype(),
            });
        }
        if out.shape() != [self.points] {
            return Err(Error::Shape {
                operand: "out".into(),
                shape: out.shape().to_vec(),
                target: vec![self.points],
            });
        }
        check_destination(out)
    }

    /// x = Σ_t w_t·T_t at point i, as pairs (real, imaginary).
    #[inline]
    fn point(&self, w: &[Pair<f32>], i: usize) -> (Pair<f32>, Pair<f32>) {
        let n = self.points;
        let (mut re, mut im) = (Pair::from_hi(0f32), Pair::from_hi(0f32));
        for (t, wt) in w.iter().enumerate() {
            re = re.add(wt.mul(self.re[t * n + i]));
            if self.complex {
                im = im.add(wt.mul(self.im[t * n + i]));
            }
        }
        (re, im)
    }

    /// Σ_t w_t·T_t rounded once into `out` ([N], f32 for real terms,
    /// complex64 for complex ones). Refusals before any write: a weight count
    /// other than T, a non-finite weight, `out` of another dtype or shape or
    /// reaching an element twice.
    pub fn combine(&self, weights: &[f64], out: &mut ArrayViewMut<'_>, exec: &Exec) -> Result<()> {
        exec.resolve_tier()?;
        let want = if self.complex { DType::C64 } else { DType::F32 };
        self.check(weights, out, want)?;
        let w: Vec<Pair<f32>> = weights.iter().map(|&v| split(v)).collect();
        if self.complex {
            let mut buf: Vec<Complex<f32>> =
                crate::alloc::try_filled(self.points, Complex::default(), "combination")?;
            self.fill(&mut buf, exec, |i| {
                let (re, im) = self.point(&w, i);
                Complex::new(re.round(), im.round())
            });
            crate::cast::cast_results(&buf, out, exec)
        } else {
            let mut buf: Vec<f32> = crate::alloc::try_filled(self.points, 0.0, "combination")?;
            self.fill(&mut buf, exec, |i| self.point(&w, i).0.round());
            crate::cast::cast_results(&buf, out, exec)
        }
    }

    /// exp(sign·Σ_t w_t·T_t) into `out` ([N], complex64), `sign` +1 or −1
    /// (the module docs' sequence and bound). Refusals as [`TermsPlan::combine`]'s,
    /// and a sign other than ±1.
    pub fn exponential(
        &self,
        weights: &[f64],
        sign: f64,
        out: &mut ArrayViewMut<'_>,
        exec: &Exec,
    ) -> Result<()> {
        exec.resolve_tier()?;
        if sign != 1.0 && sign != -1.0 {
            return Err(Error::Attribute {
                name: "sign".into(),
                reason: format!("the sign is +1 or -1, not {sign}"),
            });
        }
        self.check(weights, out, DType::C64)?;
        let w: Vec<Pair<f32>> = weights.iter().map(|&v| split(v)).collect();
        let s = sign as f32;
        let mut buf: Vec<Complex<f32>> =
            crate::alloc::try_filled(self.points, Complex::default(), "exponential")?;
        self.fill(&mut buf, exec, |i| {
            let (re, im) = self.point(&w, i);
            phasor_exp(re, im, s)
        });
        crate::cast::cast_results(&buf, out, exec)
    }

    fn fill<T: Send>(&self, buf: &mut [T], exec: &Exec, f: impl Fn(usize) -> T + Sync) {
        let threads = exec.thread_count();
        let n = buf.len();
        if threads > 1 && n * self.terms >= 1 << 14 {
            let chunk = n.div_ceil(threads);
            buf.par_chunks_mut(chunk).enumerate().for_each(|(c, part)| {
                for (j, v) in part.iter_mut().enumerate() {
                    *v = f(c * chunk + j);
                }
            });
        } else {
            for (i, v) in buf.iter_mut().enumerate() {
                *v = f(i);
            }
        }
    }
}

/// exp(s·(re + i·im)) from the pairs (the module docs' sequence).
#[inline]
fn phasor_exp(re: Pair<f32>, im: Pair<f32>, s: f32) -> Complex<f32> {
    let turns = (im.hi * INV_TWO_PI).round_ties_even();
    let phase = im.add(TWO_PI.mul_fp(-turns));
    let angle = s * (phase.hi + phase.lo);
    let magnitude = exp::exp_f32(s * re.hi) * (1.0 + s * re.lo);
    let (c, sn) = (trig::cos_f32(angle), trig::sin_f32(angle));
    let norm = tessera_generated::runtime::pair::two_prod(c, c)
        .add(tessera_generated::runtime::pair::two_prod(sn, sn));
    let delta = -0.5 * ((norm.hi - 1.0) + norm.lo);
    Complex::new(
        magnitude * c.mul_add(delta, c),
        magnitude * sn.mul_add(delta, sn),
    )
}

/// The highest order of [`TermsPlan::phi`]: k!·φ_{k+1} for k < 8 (8! is
/// exact in f32).
pub const MAX_PHI_ORDER: usize = 8;

/// Where [`TermsPlan::phi`] changes method: |x| above it, the recurrence up
/// from exp(x); at or below, the series with scaling and doubling.
pub const PHI_JOIN: f32 = 2.0;

/// A complex number of double-float parts.
#[derive(Clone, Copy, Debug)]
struct Cp {
    re: Pair<f32>,
    im: Pair<f32>,
}

impl Cp {
    fn real(v: Pair<f32>) -> Cp {
        Cp {
            re: v,
            im: Pair::from_hi(0.0),
        }
    }
    fn add(self, b: Cp) -> Cp {
        Cp {
            re: self.re.add(b.re),
            im: self.im.add(b.im),
        }
    }
    fn mul(self, b: Cp) -> Cp {
        Cp {
            re: self.re.mul(b.re).sub(self.im.mul(b.im)),
            im: self.re.mul(b.im).add(self.im.mul(b.re)),
        }
    }
    fn scale(self, s: Pair<f32>) -> Cp {
        Cp {
            re: self.re.mul(s),
            im: self.im.mul(s),
        }
    }
    /// × 2^e (exact unless a part leaves the normal range).
    fn ldexp(self, e: i32) -> Cp {
        let f = 2f32.powi(e);
        let m = |p: Pair<f32>| Pair::new(p.hi * f, p.lo * f);
        Cp {
            re: m(self.re),
            im: m(self.im),
        }
    }
    fn div(self, b: Cp) -> Cp {
        let d = b.re.mul(b.re).add(b.im.mul(b.im));
        let nr = self.re.mul(b.re).add(self.im.mul(b.im));
        let ni = self.im.mul(b.re).sub(self.re.mul(b.im));
        Cp {
            re: nr.div(d),
            im: ni.div(d),
        }
    }
    fn round(self) -> Complex<f32> {
        Complex::new(self.re.round(), self.im.round())
    }
}

/// 1/k! as a double-float pair.
fn inv_fact(k: usize) -> Pair<f32> {
    let mut f = 1f64;
    for j in 2..=k {
        f *= j as f64;
    }
    split(1.0 / f)
}

/// e^y for |y| ≤ 1/2 by its Taylor series, Horner's form, 18 terms.
fn exp_small(y: Cp) -> Cp {
    let one = Pair::from_hi(1f32);
    let mut e = Cp::real(one);
    for m in (1..=18).rev() {
        e = e
            .mul(y)
            .scale(Pair::from_hi(1.0).div(Pair::from_hi(m as f32)));
        e.re = e.re.add(one);
    }
    e
}

/// The halvings that bring |x| (from its leading parts) to at most 1/2.
fn halvings(x: Cp) -> i32 {
    let size = x.re.hi.hypot(x.im.hi);
    if size > 0.5 {
        (size / 0.5).log2().ceil() as i32
    } else {
        0
    }
}

/// e^x: the phase reduced by whole turns of the double-float 2π, scaled to
/// at most 1/2, the series, squared back.
fn exp_pair(x: Cp) -> Cp {
    let turns = (x.im.hi * INV_TWO_PI).round_ties_even();
    let r = Cp {
        re: x.re,
        im: x.im.add(TWO_PI.mul_fp(-turns)),
    };
    let s = halvings(r);
    let mut e = exp_small(r.ldexp(-s));
    for _ in 0..s {
        e = e.mul(e);
    }
    e
}

/// φ_0(x) = e^x and φ_k(x) for k = 1 ..= p (p ≤ MAX_PHI_ORDER).
fn phis(x: Cp, p: usize) -> [Cp; MAX_PHI_ORDER + 1] {
    let zero = Cp::real(Pair::from_hi(0.0));
    let mut phi = [zero; MAX_PHI_ORDER + 1];
    if x.re.hi.hypot(x.im.hi) > PHI_JOIN {
        // Far from 0: the recurrence φ_k = (φ_{k−1} − 1/(k−1)!)/x, stable here.
        phi[0] = exp_pair(x);
        for k in 1..=p {
            let mut shifted = phi[k - 1];
            shifted.re = shifted.re.sub(inv_fact(k - 1));
            phi[k] = shifted.div(x);
        }
        return phi;
    }
    // Near 0: scale to |y| ≤ 1/2, φ_p by its series, the others downward,
    // then double back: φ_0(2y) = φ_0(y)², φ_k(2y) = 2^-k·(φ_0(y)·φ_k(y) +
    // Σ_{j=1..k} φ_j(y)/(k − j)!).
    let s = halvings(x);
    let y = x.ldexp(-s);
    let mut term = Cp::real(inv_fact(p));
    let mut total = term;
    for m in 1..18 {
        term = term
            .mul(y)
            .scale(Pair::from_hi(1.0).div(Pair::from_hi((m + p) as f32)));
        total = total.add(term);
    }
    phi[p] = total;
    for k in (1..p).rev() {
        let mut v = y.mul(phi[k + 1]);
        v.re = v.re.add(inv_fact(k));
        phi[k] = v;
    }
    phi[0] = exp_small(y);
    for _ in 0..s {
        let old = phi;
        phi[0] = old[0].mul(old[0]);
        for k in 1..=p {
            let mut sum = old[0].mul(old[k]);
            for (j, o) in old.iter().enumerate().take(k + 1).skip(1) {
                sum = sum.add(o.scale(inv_fact(k - j)));
            }
            phi[k] = sum.ldexp(-(k as i32));
        }
    }
    phi
}

impl TermsPlan {
    /// At each point, x = Σ_t w_t·T_t (as [`TermsPlan::combine`] forms it)
    /// and, into `flow` ([N], complex64), e^x; into `moments` ([count, N],
    /// complex64), k!·φ_{k+1}(x) for k = 0 … count − 1, where φ_0 = exp and
    /// φ_{k+1}(x) = (φ_k(x) − 1/k!)/x (φ_{k+1}(0) = 1/(k+1)!). Each in
    /// complex double-float arithmetic, rounded once: for |x| ≤ [`PHI_JOIN`]
    /// the series of φ_count over x/2^s (|x/2^s| ≤ 1/2, 18 terms), the
    /// others by the downward recurrence, e^(x/2^s) by its series, then s
    /// doublings; above it e^x (phase reduced by the double-float 2π, the
    /// series of a scaled argument, squared back) and the recurrence upward.
    /// The real terms' plan takes x real. Within 2^-22 relative of each exact
    /// value for |x| ≤ 40 (tested against 300-bit series).
    ///
    /// Refusals before any write: `count` above [`MAX_PHI_ORDER`], the
    /// weights as [`TermsPlan::combine`]'s, destinations of another dtype
    /// (complex64) or shape, or that reach an element twice.
    pub fn phi(
        &self,
        weights: &[f64],
        count: usize,
        flow: &mut ArrayViewMut<'_>,
        moments: &mut ArrayViewMut<'_>,
        exec: &Exec,
    ) -> Result<()> {
        exec.resolve_tier()?;
        if count > MAX_PHI_ORDER {
            return Err(Error::Attribute {
                name: "count".into(),
                reason: format!("at most {MAX_PHI_ORDER} orders, not {count}"),
            });
        }
        self.check(weights, flow, DType::C64)?;
        if moments.dtype() != DType::C64 {
            return Err(Error::DTypeMismatch {
                operand: "moments".into(),
                expected: DType::C64,
                got: moments.dtype(),
            });
        }
        if moments.shape() != [count, self.points] {
            return Err(Error::Shape {
                operand: "moments".into(),
                shape: moments.shape().to_vec(),
                target: vec![count, self.points],
            });
        }
        check_destination(moments)?;
        let w: Vec<Pair<f32>> = weights.iter().map(|&v| split(v)).collect();
        let n = self.points;
        let per = count + 1;
        let mut buf: Vec<Complex<f32>> =
            crate::alloc::try_filled(n * per, Complex::default(), "phi functions")?;
        let fill_point = |i: usize, out: &mut [Complex<f32>]| {
            let (re, im) = self.point(&w, i);
            let phi = phis(Cp { re, im }, count.max(1));
            out[0] = phi[0].round();
            let mut f = 1f32;
            for k in 0..count {
                if k >= 2 {
                    f *= k as f32;
                }
                out[1 + k] = phi[k + 1].scale(Pair::from_hi(f)).round();
            }
        };
        let threads = exec.thread_count();
        if threads > 1 && n >= 256 {
            let chunk = n.div_ceil(threads);
            buf.par_chunks_mut(chunk * per)
                .enumerate()
                .for_each(|(c, part)| {
                    for (j, out) in part.chunks_mut(per).enumerate() {
                        fill_point(c * chunk + j, out);
                    }
                });
        } else {
            for (i, out) in buf.chunks_mut(per).enumerate() {
                fill_point(i, out);
            }
        }
        let flow_vals: Vec<Complex<f32>> = buf.iter().step_by(per).copied().collect();
        let mut mom: Vec<Complex<f32>> =
            crate::alloc::try_filled(count * n, Complex::default(), "phi functions")?;
        for i in 0..n {
            for k in 0..count {
                mom[k * n + i] = buf[i * per + 1 + k];
            }
        }
        crate::cast::cast_results(&flow_vals, flow, exec)?;
        crate::cast::cast_results(&mom, moments, exec)
    }
}
