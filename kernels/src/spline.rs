//! Cubic splines uniform in ln x, with their constant terms as pairs: the
//! evaluation of a rate table (seed 003's), `y = exp(s(x))` or `y = s(x)`.
//!
//! **The table.** `n` intervals of width `h` in ln x from ln E₀: interval k
//! covers ln x ∈ [ln E₀ + k·h, ln E₀ + (k + 1)·h), its left edge
//! E_k = E₀·e^(k·h). On interval k the spline is
//! `s = ((c₀·t + c₁)·t + c₂)·t + (c₃ + c₃′)` in the local coordinate
//! t = ln(x / E_k), the constant term given as a pair (c₃ and its tail c₃′,
//! so a table whose constant terms carry more than the dtype's precision
//! keeps it).
//!
//! **The evaluation of one x** (f32 or f64, the table rounded into it by
//! [`LogSplinePlan::new`]): NaN gives NaN; x below `x_min` gives `below`,
//! above `x_max` gives `above`; otherwise k = ⌊(ln x − ln E₀)/h⌋ clamped to
//! 0 … n − 1 (a choice of interval only: both neighbours agree at a knot to
//! the table's own continuity); x/E_k as a pair, x·r_k with the reciprocal
//! r_k = 1/E_k held as a pair (TwoProd of x and its leading part, plus x
//! times its tail); t = log1p((p − 1) + e) by the `log1p` kind's function;
//! the cubic part `rem = ((c₀·t + c₁)·t + c₂)·t` by Horner's rule in the
//! dtype; `head = c₃ + rem` with its TwoSum error plus c₃′ as `tail`; the
//! result `exp(head)·(1 + tail)` (exp mode, by the `exp` kind's function) or
//! `head + tail`. One fixed sequence of IEEE operations per element: the
//! same bits on every tier and thread count.
//!
//! **Bound.** Against the spline's exact value at x: relative error at most
//! (4 + 2·|s′(t)|·|t| + 3·|rem|)·u in exp mode, where s′ is the cubic's
//! derivative in t and u the dtype's unit roundoff (the local coordinate's
//! error moves the cubic by s′·δt, Horner's roundings are within 3u·|rem|,
//! exp within 1 ulp, the final product one rounding); in linear mode an
//! absolute error at most (2·|s| + 2·|s′(t)·t| + 3·|rem|)·u. Tested against
//! a 200-bit evaluation of the same table (`kernels/tests/spline.rs`: the
//! worst case measured is 0.56 of the bound).

use crate::array::{ArrayView, ArrayViewMut};
use crate::checks::check_destination;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{CastMode, DType, Pair};
use rayon::prelude::*;
use tessera_generated::runtime::math::{exp, log};
use tessera_generated::runtime::pair::PairFloat;

/// What the evaluation returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplineOutput {
    /// exp(s(x)): a rate table (s is the logarithm of the rate).
    Exp,
    /// s(x) itself.
    Linear,
}

/// A table as a caller gives it (f64 values; see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct LogSpline {
    /// ln E₀, the first interval's left edge.
    pub log_e0: f64,
    /// h, the intervals' width in ln x (positive).
    pub width: f64,
    /// Per interval k: [c₀, c₁, c₂, c₃] (c₀ the cubic coefficient).
    pub coefficients: Vec<[f64; 4]>,
    /// Per interval: the constant term's tail c₃′ (empty: all 0).
    pub constant_tails: Vec<f64>,
    /// Below it the result is `below`.
    pub x_min: f64,
    /// Above it the result is `above`.
    pub x_max: f64,
    /// The result below `x_min`.
    pub below: f64,
    /// The result above `x_max`.
    pub above: f64,
    /// exp(s) or s.
    pub output: SplineOutput,
}

/// The table rounded into one dtype, built once, evaluated many times.
#[derive(Clone, Debug)]
pub struct LogSplinePlan {
    dtype: DType,
    table: Tables,
}

/// The table in the plan's dtype.
#[derive(Clone, Debug)]
enum Tables {
    F32(Table<f32>),
    F64(Table<f64>),
}

#[derive(Clone, Debug)]
struct Table<T> {
    log_e0: T,
    inv_width: T,
    c: Vec<[T; 3]>,
    c3: Vec<Pair<T>>,
    recip: Vec<Pair<T>>,
    x_min: T,
    x_max: T,
    below: T,
    above: T,
    exp: bool,
}

/// The most intervals a table may have.
pub const MAX_INTERVALS: usize = 1 << 24;

fn bad(reason: String) -> Error {
    Error::Attribute {
        name: "spline".into(),
        reason,
    }
}

impl LogSplinePlan {
    /// Round `table` into `dtype` (f32 or f64) and form each interval's
    /// reciprocal edge 1/E_k as a pair (from E_k = exp(ln E₀ + k·h) in
    /// double-double arithmetic).
    ///
    /// Refuses a dtype other than f32 and f64, no interval or more than
    /// [`MAX_INTERVALS`], constant tails of another count, a width that is
    /// not positive and finite, a non-finite ln E₀ or coefficient, x_min > x_max
    /// or a NaN bound, and edges whose reciprocals are not finite normal
    /// numbers of the dtype.
    pub fn new(dtype: DType, table: &LogSpline) -> Result<LogSplinePlan> {
        let n = table.coefficients.len();
        if n == 0 || n > MAX_INTERVALS {
            return Err(bad(format!(
                "{n} intervals: 1 to {MAX_INTERVALS} are possible"
            )));
        }
        if !table.constant_tails.is_empty() && table.constant_tails.len() != n {
            return Err(bad(format!(
                "{} constant tails for {n} intervals",
                table.constant_tails.len()
            )));
        }
        if !(table.width > 0.0 && table.width.is_finite() && table.log_e0.is_finite()) {
            return Err(bad(
                "the width must be positive and finite, ln E0 finite".into()
            ));
        }
        let finite = table
            .coefficients
            .iter()
            .flatten()
            .chain(&table.constant_tails);
        if finite.into_iter().any(|v| !v.is_finite()) {
            return Err(bad("a coefficient is not finite".into()));
        }
        if table.x_min.is_nan() || table.x_max.is_nan() || table.x_min > table.x_max {
            return Err(bad(
                "x_min must not exceed x_max (and neither be NaN)".into()
            ));
        }
        // Reciprocal edges 1/E_k = exp(−(ln E₀ + k·h)) in double-double.
        let mut recip = Vec::with_capacity(n);
        for k in 0..n {
            let arg = Pair::from_hi(table.log_e0).add(Pair::from_hi(table.width).mul_fp(k as f64));
            let r = arg.neg().exp();
            if !(r.hi.is_normal() && r.hi > 0.0) {
                return Err(bad(format!(
                    "interval {k}: 1/E_k is not a positive normal number"
                )));
            }
            recip.push(r);
        }
        let tail = |k: usize| table.constant_tails.get(k).copied().unwrap_or(0.0);
        let exp_mode = table.output == SplineOutput::Exp;
        match dtype {
            DType::F32 => {
                let split = |v: f64| {
                    let hi = v as f32;
                    Pair::new(hi, (v - hi as f64) as f32)
                };
                let t = Table::<f32> {
                    log_e0: table.log_e0 as f32,
                    inv_width: (1.0 / table.width) as f32,
                    c: table
                        .coefficients
                        .iter()
                        .map(|c| [c[0] as f32, c[1] as f32, c[2] as f32])
                        .collect(),
                    c3: (0..n)
                        .map(|k| split(table.coefficients[k][3] + tail(k)))
                        .collect(),
                    recip: recip
                        .iter()
                        .map(|r| {
                            let p = split(r.hi + r.lo);
                            if p.hi.is_normal() {
                                Ok(p)
                            } else {
                                Err(bad("a reciprocal edge is outside f32's normal range".into()))
                            }
                        })
                        .collect::<Result<_>>()?,
                    x_min: table.x_min as f32,
                    x_max: table.x_max as f32,
                    below: table.below as f32,
                    above: table.above as f32,
                    exp: exp_mode,
                };
                Ok(LogSplinePlan {
                    dtype,
                    table: Tables::F32(t),
                })
            }
            DType::F64 => {
                let t = Table::<f64> {
                    log_e0: table.log_e0,
                    inv_width: 1.0 / table.width,
                    c: table
                        .coefficients
                        .iter()
                        .map(|c| [c[0], c[1], c[2]])
                        .collect(),
                    c3: (0..n)
                        .map(|k| {
                            tessera_generated::runtime::pair::two_sum(
                                table.coefficients[k][3],
                                tail(k),
                            )
                        })
                        .collect(),
                    recip,
                    x_min: table.x_min,
                    x_max: table.x_max,
                    below: table.below,
                    above: table.above,
                    exp: exp_mode,
                };
                Ok(LogSplinePlan {
                    dtype,
                    table: Tables::F64(t),
                })
            }
            d => Err(Error::DTypeUnsupported {
                operand: "the spline".into(),
                dtype: d,
                reason: "a spline evaluates in f32 or f64".into(),
            }),
        }
    }

    /// The dtype the plan evaluates in (its inputs' and outputs').
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Evaluate at every element of `x` into `out` (both of the plan's
    /// dtype, one shape, any layouts; `out` must reach no element twice).
    /// Refusals before any write.
    pub fn evaluate(
        &self,
        x: &ArrayView<'_>,
        out: &mut ArrayViewMut<'_>,
        exec: &Exec,
    ) -> Result<()> {
        exec.resolve_tier()?;
        for (name, d) in [("x", x.dtype()), ("out", out.dtype())] {
            if d != self.dtype {
                return Err(Error::DTypeMismatch {
                    operand: name.into(),
                    expected: self.dtype,
                    got: d,
                });
            }
        }
        if x.shape() != out.shape() {
            return Err(Error::Shape {
                operand: "out".into(),
                shape: out.shape().to_vec(),
                target: x.shape().to_vec(),
            });
        }
        check_destination(out)?;
        let n = out.layout().len();
        if n == 0 {
            return Ok(());
        }
        let threads = exec.thread_count();
        match &self.table {
            Tables::F32(t) => run(t, x, out, n, threads, exec),
            Tables::F64(t) => run(t, x, out, n, threads, exec),
        }
    }
}

/// The dtype-specific functions of the evaluation.
trait SplineFloat: PairFloat + crate::Element + Default + Send + Sync {
    fn ln(self) -> Self;
    fn ln1p(self) -> Self;
    fn ex(self) -> Self;
    fn floor_index(self, n: usize) -> usize;
    fn nan(self) -> bool;
}

macro_rules! spline_float {
    ($t:ty, $log:path, $log1p:path, $exp:path) => {
        impl SplineFloat for $t {
            fn ln(self) -> $t {
                $log(self)
            }
            fn ln1p(self) -> $t {
                $log1p(self)
            }
            fn ex(self) -> $t {
                $exp(self)
            }
            fn floor_index(self, n: usize) -> usize {
                let f = self.floor();
                if f.is_nan() || f < 0.0 {
                    0
                } else if f >= (n - 1) as $t {
                    n - 1
                } else {
                    f as usize
                }
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
        }
    };
}
spline_float!(f32, log::log_f32, log::log1p_f32, exp::exp_f32);
spline_float!(f64, log::log_f64, log::log1p_f64, exp::exp_f64);

impl<T: SplineFloat> Table<T> {
    /// One element (the module docs' sequence).
    #[inline]
    fn eval(&self, x: T) -> T {
        if x.nan() {
            return x;
        }
        if x < self.x_min {
            return self.below;
        }
        if x > self.x_max {
            return self.above;
        }
        let n = self.c.len();
        let k = ((x.ln() - self.log_e0) * self.inv_width).floor_index(n);
        let r = self.recip[k];
        let p = x * r.hi;
        let err = x.fma(r.hi, -p) + x * r.lo;
        let t = ((p - T::ONE) + err).ln1p();
        let [c0, c1, c2] = self.c[k];
        let rem = ((c0 * t + c1) * t + c2) * t;
        let c3 = self.c3[k];
        let head = c3.hi + rem;
        let shifted = head - c3.hi;
        let tail = (c3.hi - (head - shifted)) + (rem - shifted) + c3.lo;
        if self.exp {
            head.ex() * (T::ONE + tail)
        } else {
            head + tail
        }
    }
}

fn run<T: SplineFloat>(
    t: &Table<T>,
    x: &ArrayView<'_>,
    out: &mut ArrayViewMut<'_>,
    n: usize,
    threads: usize,
    exec: &Exec,
) -> Result<()> {
    // The inputs in C order (a cast of the view into a buffer), evaluated in
    // place, then written into `out`'s layout.
    let mut buf: Vec<T> = crate::alloc::try_filled(n, T::default(), "spline values")?;
    let shape = x.shape().to_vec();
    crate::cast::cast(
        CastMode::Default,
        x,
        &mut ArrayViewMut::from_slice(&mut buf, &shape)?,
        &Exec::SEQ,
    )?;
    if threads > 1 && n >= 1 << 14 {
        buf.par_chunks_mut(n.div_ceil(threads)).for_each(|c| {
            for v in c.iter_mut() {
                *v = t.eval(*v);
            }
        });
    } else {
        for v in buf.iter_mut() {
            *v = t.eval(*v);
        }
    }
    crate::cast::cast_results(&buf, out, exec)
}
