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
