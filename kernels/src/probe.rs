//! Run-time accuracy probes: each dispatch family a process can take,
//! measured on a discriminating problem against a reference of higher
//! precision, its error compared with a stated bound; a family that misses
//! its bound is refused ([`Error::Probe`]). A build whose compiler
//! reassociated or contracted what the contract says it must not, a tier
//! whose instructions compute differently, or a kernel computing in a
//! narrower format (a TF32-like product, a transform with inexact twiddles)
//! shows here as a measured error above its bound.
//!
//! The families, on every tier this CPU runs:
//!
//! - **Products** (`matmul`): f32 and f64 operands through each order and
//!   path the contraction chooses by shape — the small path (8 × 9 × 13),
//!   the packed chain-order GEMM (160 × 176 × 200) and the lane order (2 × 2 ×
//!   4096) — and complex64/complex128 (48 × 40 × 56) of seeded data in
//!   [−1, 1); measured normwise, ‖C − C_ref‖_F / ‖C_ref‖_F, against a
//!   reference with every product exact and sums in double-double; bound
//!   2^-17 for 32-bit parts (128u: a binary32 product of such data is near
//!   √(k/2)·u ≤ 2^-19, one computed in TF32 near its 2^-11, so the bound
//!   separates them by a factor of four on each side) and 128u = 2^-46 for
//!   64-bit parts. The pair accumulators `df32` and `dd64` in chain order
//!   (40 × 36 × 200) and lane order (2 × 2 × 4096), their pair outputs
//!   measured the same way: bounds 2^-38 and 2^-90 (a compensated product
//!   near √k·u², a plain one near √k·u: orders of magnitude apart). The
//!   integer products (`i8` into `i32` on the packed kernels, `i16` into
//!   `i64` on the exact f64 chain) must be exact: the count of outputs
//!   that differ from an exact model, bound 0.
//! - **Transforms** (`fft::c2c`, `fft::r2c`): radix lengths (1024), a prime
//!   length (1009, Bluestein) and long ones (65 536; 2^22, which Bailey's
//!   four steps run; each by a round trip) of a seeded signal, f32 and f64,
//!   forward, measured normwise ‖X − X_ref‖₂ / ‖X_ref‖₂ against
//!   a direct DFT in f64 (f32 transforms) or double-double (f64 transforms,
//!   lengths up to 1024); bound 512·u·⌈log₂ n⌉ with u = 2^-23 or 2^-52
//!   (binary32's and binary64's machine epsilon).
//! - **Pair arithmetic**: add, sub, mul, div, sqrt and exp on df32 pairs
//!   against the same operations in double-double, in units of u² (u =
//!   2^-24), bounds those of ARCHITECTURE §5.2a (3, 3, 4, 15, 25/8, 32).
//! - **Transcendentals**: each kind of the 1-ulp and 3.5-ulp classes with a
//!   reference in Rust's f64 functions (all but `erf` and `erfc`), on 2 048
//!   seeded points over the kind's domain, through the kind's contiguous
//!   kernel of the tier, f32 and f64; measured as the largest distance in
//!   ulps of the result's format; bound the kind's (1 or 3.5) for f32, and
//!   two more for f64, whose reference is itself only within an ulp or two
//!   (acosh and atanh by forms free of std's cancellation near 1).
//!
//! [`probe`] runs them all and returns the table ([`ProbeReport`]);
//! [`ProbeReport::check`] refuses the first family over its bound. The
//! measuring functions ([`gemm_error_f32`], [`fft_error_f32`]) take the
//! product or transform under test as a closure, so a caller (and the
//! tests) can hold any implementation to the same bound.

use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::fft::{Direction, Norm};
use crate::tier::Exec;
use crate::{available_tiers, typed, DType, Kind, Pair, Tier};
use num_complex::Complex;

/// A product under test: row-major a (m × k) and b (k × n) of `T` to c
/// (m × n) of `C`.
pub type Product<'a, T, C = T> = dyn Fn(&[T], &[T]) -> Result<Vec<C>> + 'a;

/// A transform under test: a signal to its forward, unscaled spectrum.
pub type Transform<'a, T> = dyn Fn(&[Complex<T>]) -> Result<Vec<Complex<T>>> + 'a;

/// One family's measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRow {
    /// The family (`gemm f32 packed`, `fft c2c f64 n=1009`, `exp f32`, …).
    pub family: String,
    /// The tier it ran on.
    pub tier: Tier,
    /// The stated bound.
    pub bound: f64,
    /// The measured error, in the bound's unit.
    pub measured: f64,
}

impl ProbeRow {
    /// bound ÷ measured (infinite for an exact result): above 1 passes.
    pub fn margin(&self) -> f64 {
        if self.measured == 0.0 {
            f64::INFINITY
        } else {
            self.bound / self.measured
        }
    }
    /// Whether the family stays within its bound (a NaN measurement fails).
    pub fn passed(&self) -> bool {
        self.measured <= self.bound
    }
}

/// Every family's measurement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeReport {
    /// In the order they ran.
    pub rows: Vec<ProbeRow>,
}

impl ProbeReport {
    /// The rows over their bound.
    pub fn failures(&self) -> Vec<&ProbeRow> {
        self.rows.iter().filter(|r| !r.passed()).collect()
    }
    /// Refuse ([`Error::Probe`]) the first family over its bound.
    pub fn check(&self) -> Result<()> {
        match self.failures().first() {
            None => Ok(()),
            Some(r) => Err(Error::Probe {
                family: format!("{} on {}", r.family, r.tier.name()),
                measured: format!("{:.3e}", r.measured),
                bound: format!("{:.3e}", r.bound),
            }),
        }
    }
    /// The table: family, tier, bound, measured, margin.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<34} {:<8} {:>11} {:>11} {:>9}\n",
            "family", "tier", "bound", "measured", "margin"
        );
        for r in &self.rows {
            s.push_str(&format!(
                "{:<34} {:<8} {:>11.3e} {:>11.3e} {:>9} {}\n",
                r.family,
                r.tier.name(),
                r.bound,
                r.measured,
                if r.margin().is_infinite() {
                    "exact".to_string()
                } else {
                    format!("{:.1}", r.margin())
                },
                if r.passed() { "" } else { "REFUSED" }
            ));
        }
        s
    }
}

/// The normwise bound of a product of 32-bit parts: 2^-17.
pub const GEMM_BOUND_32: f64 = 7.62939453125e-6;
/// The normwise bound of a product of 64-bit parts: 2^-46.
pub const GEMM_BOUND_64: f64 = 1.4210854715202004e-14;

/// The normwise bound of a product accumulated in df32 pairs: 2^-38 (a
/// compensated product of such data is near √k·u² ≤ 2^-41, a plain binary32
/// one near 2^-20).
pub const GEMM_BOUND_PAIR_32: f64 = 3.637978807091713e-12;
/// The normwise bound of a product accumulated in dd64 pairs: 2^-90 (a
/// compensated product near 2^-100, a plain binary64 one near 2^-49; the
/// double-double reference is good to about 2^-94 here).
pub const GEMM_BOUND_PAIR_64: f64 = 8.077935669463161e-28;

/// The transform bound 512·eps·⌈log₂ n⌉ for machine epsilon `eps`.
pub fn fft_bound(eps: f64, n: usize) -> f64 {
    512.0 * eps * (n.max(2) as f64).log2().ceil()
}

/// A seeded value in [−1, 1) (splitmix64 of the index).
fn val(seed: u64, i: usize) -> f64 {
    let mut z = seed.wrapping_add((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The normwise error of a product `c = a·b` of seeded values in [−1, 1)
/// (rounded to f32 where `single`; row-major m × k and k × n) computed by
/// `product`, which returns each output's value as a double-double (hi, lo),
/// against exact products summed in double-double.
fn product_error(
    (m, k, n): (usize, usize, usize),
    seeds: (u64, u64),
    single: bool,
    product: &Product<'_, f64, Pair<f64>>,
) -> Result<f64> {
    let v = |seed: u64, i: usize| {
        let x = val(seed, i);
        if single {
            x as f32 as f64
        } else {
            x
        }
    };
    let a: Vec<f64> = (0..m * k).map(|i| v(seeds.0, i)).collect();
    let b: Vec<f64> = (0..k * n).map(|i| v(seeds.1, i)).collect();
    let c = product(&a, &b)?;
    let (mut num, mut den) = (0f64, 0f64);
    for i in 0..m {
        for j in 0..n {
            let mut s = Pair::from_hi(0f64);
            for l in 0..k {
                s = s.add(crate::pair::two_prod(a[i * k + l], b[l * n + j]));
            }
            let d = c[i * n + j].sub(s).round();
            num += d * d;
            den += s.round() * s.round();
        }
    }
    Ok((num / den).sqrt())
}

/// The normwise error of an f32 product `c = a·b` (row-major m × k, k × n)
/// computed by `product`, against exact products summed in double-double.
pub fn gemm_error_f32(m: usize, k: usize, n: usize, product: &Product<'_, f32>) -> Result<f64> {
    product_error((m, k, n), (1, 2), true, &|a, b| {
        let (a, b): (Vec<f32>, Vec<f32>) = (
            a.iter().map(|&x| x as f32).collect(),
            b.iter().map(|&x| x as f32).collect(),
        );
        Ok(product(&a, &b)?
            .into_iter()
            .map(|x| Pair::from_hi(x as f64))
            .collect())
    })
}

/// [`gemm_error_f32`] for f64 products.
pub fn gemm_error_f64(m: usize, k: usize, n: usize, product: &Product<'_, f64>) -> Result<f64> {
    product_error((m, k, n), (3, 4), false, &|a, b| {
        Ok(product(a, b)?.into_iter().map(Pair::from_hi).collect())
    })
}

/// The normwise error of an f32 complex transform of length `n` computed by
/// `transform` (forward, unscaled), against a direct DFT in f64.
pub fn fft_error_f32(n: usize, transform: &Transform<'_, f32>) -> Result<f64> {
    fft_error_in(n, false, transform)
}

/// [`fft_error_f32`] of a real signal (imaginary parts +0): for the real
/// transforms, given the whole spectrum.
pub fn fft_error_real_f32(n: usize, transform: &Transform<'_, f32>) -> Result<f64> {
    fft_error_in(n, true, transform)
}

fn fft_error_in(n: usize, real: bool, transform: &Transform<'_, f32>) -> Result<f64> {
    let x: Vec<Complex<f32>> = (0..n)
        .map(|i| {
            let im = if real { 0.0 } else { val(5, 2 * i + 1) as f32 };
            Complex::new(val(5, 2 * i) as f32, im)
        })
        .collect();
    let got = transform(&x)?;
    let (mut num, mut den) = (0f64, 0f64);
    for (kk, g) in got.iter().enumerate() {
        let mut s = Complex::new(0f64, 0f64);
        for (j, v) in x.iter().enumerate() {
            // The twiddle's angle reduced exactly: (j·k mod n)/n.
            let r = ((j as u128 * kk as u128) % n as u128) as f64 / n as f64;
            let t = -2.0 * core::f64::consts::PI * r;
            s += Complex::new(v.re as f64, v.im as f64) * Complex::new(t.cos(), t.sin());
        }
        let d = Complex::new(g.re as f64, g.im as f64) - s;
        num += d.norm_sqr();
        den += s.norm_sqr();
    }
    Ok((num / den).sqrt())
}

/// [`fft_error_f32`] for f64 transforms, the direct DFT's products and sums
/// in double-double and its twiddles from f64 cos/sin corrected by one
/// double-double Newton step on the unit circle.
pub fn fft_error_f64(n: usize, transform: &Transform<'_, f64>) -> Result<f64> {
    let x: Vec<Complex<f64>> = (0..n)
        .map(|i| Complex::new(val(6, 2 * i), val(6, 2 * i + 1)))
        .collect();
    let got = transform(&x)?;
    // Twiddles w_r = exp(−2πi r/n), r < n, as double-double pairs: f64
    // cos/sin (within an ulp), then the pair (c, s) scaled by
    // 1/√(c² + s²) in pair arithmetic (the angle's error stays at the f64
    // functions' level, ~2^-53, far below the bound's 2^-43).
    let tw: Vec<(Pair<f64>, Pair<f64>)> = (0..n)
        .map(|r| {
            let t = -2.0 * core::f64::consts::PI * (r as f64 / n as f64);
            let (c, s) = (Pair::from_hi(t.cos()), Pair::from_hi(t.sin()));
            let norm = c.mul(c).add(s.mul(s)).sqrt();
            (c.div(norm), s.div(norm))
        })
        .collect();
    let (mut num, mut den) = (0f64, 0f64);
    for (kk, g) in got.iter().enumerate() {
        let (mut re, mut im) = (Pair::from_hi(0f64), Pair::from_hi(0f64));
        for (j, v) in x.iter().enumerate() {
            let (c, s) = tw[(j * kk) % n];
            let (a, b) = (Pair::from_hi(v.re), Pair::from_hi(v.im));
            re = re.add(a.mul(c).sub(b.mul(s)));
            im = im.add(a.mul(s).add(b.mul(c)));
        }
        let dr = Pair::from_hi(g.re).sub(re).round();
        let di = Pair::from_hi(g.im).sub(im).round();
        num += dr * dr + di * di;
        let (r, i) = (re.round(), im.round());
        den += r * r + i * i;
    }
    Ok((num / den).sqrt())
}

/// `matmul` of `T` operands on `exec`.
fn matmul<T: crate::Element + Default>(
    exec: &Exec,
    m: usize,
    k: usize,
    n: usize,
) -> impl Fn(&[T], &[T]) -> Result<Vec<T>> + '_ {
    move |a, b| {
        let mut c = vec![T::default(); m * n];
        crate::matmul(
            &ArrayView::from_slice(a, &[m, k])?,
            &ArrayView::from_slice(b, &[k, n])?,
            &mut ArrayViewMut::from_slice(&mut c, &[m, n])?,
            exec,
        )?;
        Ok(c)
    }
}

/// The error of the product accumulated in the pair `acc` (`df32` of f32
/// operands, `dd64` of f64), its outputs the pairs themselves.
fn pair_gemm_error(acc: DType, (m, k, n): (usize, usize, usize), exec: &Exec) -> Result<f64> {
    let single = acc == DType::Df32;
    let spec = crate::ContractSpec::new(acc).contracting(1, 0);
    product_error((m, k, n), (5, 6), single, &|a, b| {
        if single {
            let (a, b): (Vec<f32>, Vec<f32>) = (
                a.iter().map(|&x| x as f32).collect(),
                b.iter().map(|&x| x as f32).collect(),
            );
            let mut c = vec![Pair::<f32>::default(); m * n];
            crate::contract(
                &spec,
                &ArrayView::from_slice(&a, &[m, k])?,
                &ArrayView::from_slice(&b, &[k, n])?,
                None,
                &mut ArrayViewMut::from_slice(&mut c, &[m, n])?,
                exec,
            )?;
            Ok(c.into_iter()
                .map(|p| Pair::new(p.hi as f64, 0.0).add(Pair::from_hi(p.lo as f64)))
                .collect())
        } else {
            let mut c = vec![Pair::<f64>::default(); m * n];
            crate::contract(
                &spec,
                &ArrayView::from_slice(a, &[m, k])?,
                &ArrayView::from_slice(b, &[k, n])?,
                None,
                &mut ArrayViewMut::from_slice(&mut c, &[m, n])?,
                exec,
            )?;
            Ok(c)
        }
    })
}

/// Whether the integer products (`i8` into `i32`: the packed kernels;
/// `i16` into `i64`: the exact f64 chain) give the exact sums: the number
/// of outputs that differ from an exact i64 model (0 passes).
fn integer_gemm_misses((m, k, n): (usize, usize, usize), exec: &Exec) -> Result<f64> {
    let a8: Vec<i8> = (0..m * k).map(|i| (val(9, i) * 128.0) as i8).collect();
    let b8: Vec<i8> = (0..k * n).map(|i| (val(10, i) * 128.0) as i8).collect();
    let mut c32 = vec![0i32; m * n];
    crate::matmul(
        &ArrayView::from_slice(&a8, &[m, k])?,
        &ArrayView::from_slice(&b8, &[k, n])?,
        &mut ArrayViewMut::from_slice(&mut c32, &[m, n])?,
        exec,
    )?;
    let a16: Vec<i16> = a8.iter().map(|&x| x as i16 * 251).collect();
    let b16: Vec<i16> = b8.iter().map(|&x| x as i16 * 257).collect();
    let mut c64 = vec![0i64; m * n];
    crate::contract(
        &crate::ContractSpec::new(DType::I64).contracting(1, 0),
        &ArrayView::from_slice(&a16, &[m, k])?,
        &ArrayView::from_slice(&b16, &[k, n])?,
        None,
        &mut ArrayViewMut::from_slice(&mut c64, &[m, n])?,
        exec,
    )?;
    let mut misses = 0;
    for i in 0..m {
        for j in 0..n {
            let (mut s8, mut s16) = (0i64, 0i64);
            for l in 0..k {
                s8 += a8[i * k + l] as i64 * b8[l * n + j] as i64;
                s16 += a16[i * k + l] as i64 * b16[l * n + j] as i64;
            }
            misses += (s8 != c32[i * n + j] as i64) as usize + (s16 != c64[i * n + j]) as usize;
        }
    }
    Ok(misses as f64)
}

/// A complex product's error: the real and imaginary parts of a complex
/// matmul against the reference of its four real products.
fn complex_gemm_error<T>(m: usize, k: usize, n: usize, exec: &Exec) -> Result<f64>
where
    T: Copy + Default + crate::Element + Into<f64> + FromF64,
    Complex<T>: crate::Element + Default,
{
    let a: Vec<Complex<T>> = (0..m * k)
        .map(|i| Complex::new(T::from_f64(val(7, 2 * i)), T::from_f64(val(7, 2 * i + 1))))
        .collect();
    let b: Vec<Complex<T>> = (0..k * n)
        .map(|i| Complex::new(T::from_f64(val(8, 2 * i)), T::from_f64(val(8, 2 * i + 1))))
        .collect();
    let mut c = vec![Complex::<T>::default(); m * n];
    crate::matmul(
        &ArrayView::from_slice(&a, &[m, k])?,
        &ArrayView::from_slice(&b, &[k, n])?,
        &mut ArrayViewMut::from_slice(&mut c, &[m, n])?,
        exec,
    )?;
    let (mut num, mut den) = (0f64, 0f64);
    for i in 0..m {
        for j in 0..n {
            let (mut re, mut im) = (Pair::from_hi(0f64), Pair::from_hi(0f64));
            for l in 0..k {
                let (x, y) = (a[i * k + l], b[l * n + j]);
                let (xr, xi, yr, yi): (f64, f64, f64, f64) =
                    (x.re.into(), x.im.into(), y.re.into(), y.im.into());
                re = re
                    .add(crate::pair::two_prod(xr, yr))
                    .sub(crate::pair::two_prod(xi, yi));
                im = im
                    .add(crate::pair::two_prod(xr, yi))
                    .add(crate::pair::two_prod(xi, yr));
            }
            let got = c[i * n + j];
            let dr = Pair::from_hi(got.re.into()).sub(re).round();
            let di = Pair::from_hi(got.im.into()).sub(im).round();
            num += dr * dr + di * di;
            den += re.round() * re.round() + im.round() * im.round();
        }
    }
    Ok((num / den).sqrt())
}

/// f32 and f64 from an f64 (rounded), and their formats' facts.
trait FromF64: Copy + Default + crate::Element + Into<f64> {
    fn from_f64(v: f64) -> Self;
    /// Stored significand bits.
    const MANT: i32;
    /// The least normal exponent.
    const MIN_EXP: i32;
    /// The greatest finite value.
    const MAX: f64;
    fn is_nan(self) -> bool;
}
impl FromF64 for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    const MANT: i32 = 23;
    const MIN_EXP: i32 = -126;
    const MAX: f64 = f32::MAX as f64;
    fn is_nan(self) -> bool {
        self.is_nan()
    }
}
impl FromF64 for f64 {
    fn from_f64(v: f64) -> f64 {
        v
    }
    const MANT: i32 = 52;
    const MIN_EXP: i32 = -1022;
    const MAX: f64 = f64::MAX;
    fn is_nan(self) -> bool {
        self.is_nan()
    }
}

/// The transcendental f32 kinds with an f64 reference, each with the domain
/// its probe points cover and its reference.
#[allow(clippy::type_complexity)]
fn math_kinds() -> Vec<(Kind, (f64, f64), fn(f64, f64) -> f64)> {
    vec![
        (Kind::Exp, (-87.0, 88.0), |x, _| x.exp()),
        (Kind::Exp2, (-125.0, 127.0), |x, _| x.exp2()),
        (Kind::Expm1, (-20.0, 20.0), |x, _| x.exp_m1()),
        (Kind::Log, (1e-30, 1e30), |x, _| x.ln()),
        (Kind::Log2, (1e-30, 1e30), |x, _| x.log2()),
        (Kind::Log10, (1e-30, 1e30), |x, _| x.log10()),
        (Kind::Log1p, (-0.99, 1e10), |x, _| x.ln_1p()),
        (Kind::Sin, (-1e4, 1e4), |x, _| x.sin()),
        (Kind::Cos, (-1e4, 1e4), |x, _| x.cos()),
        (Kind::Tan, (-1e4, 1e4), |x, _| x.tan()),
        (Kind::Asin, (-1.0, 1.0), |x, _| x.asin()),
        (Kind::Acos, (-1.0, 1.0), |x, _| x.acos()),
        (Kind::Atan, (-1e4, 1e4), |x, _| x.atan()),
        (Kind::Atan2, (-1e3, 1e3), |x, y| x.atan2(y)),
        (Kind::Sinh, (-88.0, 88.0), |x, _| x.sinh()),
        (Kind::Cosh, (-88.0, 88.0), |x, _| x.cosh()),
        (Kind::Tanh, (-20.0, 20.0), |x, _| x.tanh()),
        (Kind::Asinh, (-1e10, 1e10), |x, _| x.asinh()),
        // Forms without the cancellation of std's acosh and atanh near 1
        // (which miss by up to 8 and 169 f64 ulps there).
        (Kind::Acosh, (1.0, 1e10), |x, _| {
            let t = x - 1.0;
            (t + (t * (x + 1.0)).sqrt()).ln_1p()
        }),
        (Kind::Atanh, (-0.999, 0.999), |x, _| {
            0.5 * (x.ln_1p() - (-x).ln_1p())
        }),
        (Kind::Pow, (0.01, 100.0), |x, y| x.powf(y * 10.0 / 100.0)),
        (Kind::Hypot, (-1e10, 1e10), |x, y| x.hypot(y)),
        (Kind::Cbrt, (-1e30, 1e30), |x, _| x.cbrt()),
        (Kind::Sigmoid, (-80.0, 80.0), |x, _| {
            1.0 / (1.0 + (-x).exp())
        }),
        (Kind::Rsqrt, (1e-30, 1e30), |x, _| 1.0 / x.sqrt()),
        (Kind::FastExp, (-87.0, 88.0), |x, _| x.exp()),
        (Kind::FastLog, (1e-30, 1e30), |x, _| x.ln()),
        (Kind::FastSin, (-1e4, 1e4), |x, _| x.sin()),
        (Kind::FastCos, (-1e4, 1e4), |x, _| x.cos()),
        (Kind::FastTanh, (-20.0, 20.0), |x, _| x.tanh()),
        (Kind::FastSigmoid, (-80.0, 80.0), |x, _| {
            1.0 / (1.0 + (-x).exp())
        }),
        (Kind::FastPow, (0.01, 100.0), |x, y| {
            x.powf(y * 10.0 / 100.0)
        }),
    ]
}

/// Distance of a result from an f64 reference in ulps of the result's
/// format (of the reference's binade; subnormal spacing below the normal
/// range).
fn ulps<T: FromF64>(got: T, want: f64) -> f64 {
    let g: f64 = got.into();
    if want.is_nan() {
        return if got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if want.is_infinite() || want.abs() > T::MAX {
        return if g == want || g.is_infinite() && (g > 0.0) == (want > 0.0) {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let e = if want == 0.0 {
        T::MIN_EXP
    } else {
        (want.abs().log2().floor() as i32).max(T::MIN_EXP)
    };
    let ulp = 2f64.powi(e - T::MANT);
    (g - want).abs() / ulp
}

/// The largest error, in ulps of `T`, of `kind`'s kernel on `tier` over
/// 2 048 points of `domain` (logarithmically spread where the domain spans
/// decades).
fn math_error<T: FromF64>(
    kind: Kind,
    domain: (f64, f64),
    reference: fn(f64, f64) -> f64,
    tier: Tier,
) -> Result<f64> {
    let n = 2048;
    let (lo, hi) = domain;
    let point = |i: usize, seed: u64| -> T {
        let u = (val(seed, i) + 1.0) / 2.0;
        let v = if lo > 0.0 && hi / lo > 1e3 {
            (lo.ln() + u * (hi.ln() - lo.ln())).exp()
        } else {
            lo + u * (hi - lo)
        };
        T::from_f64(v)
    };
    let pow = matches!(kind, Kind::Pow | Kind::FastPow);
    let x: Vec<T> = (0..n).map(|i| point(i, 9)).collect();
    // pow's exponent: y mapped to [−10, 10] as the reference maps it.
    let y: Vec<T> = (0..n)
        .map(|i| point(i, 10))
        .map(|v| {
            if pow {
                T::from_f64(v.into() * 10.0 / 100.0)
            } else {
                v
            }
        })
        .collect();
    let mut out = vec![T::default(); n];
    let exec = Exec::on(tier);
    let binary = kind.info().arity == 2;
    if binary {
        typed::elementwise(kind, &[&x, &y], &mut out, &exec)?;
    } else {
        typed::elementwise(kind, &[&x], &mut out, &exec)?;
    }
    Ok(x.iter()
        .zip(&y)
        .zip(&out)
        .map(|((&a, &b), &g)| {
            let (a, b): (f64, f64) = (a.into(), b.into());
            let want = match (pow, binary) {
                (true, _) => a.powf(b),
                (false, true) => reference(a, b),
                (false, false) => reference(a, 0.0),
            };
            ulps(g, want)
        })
        .fold(0.0, f64::max))
}

/// Run every family on every tier this CPU runs (each at `exec`'s thread
/// count; the tier of `exec` is not used) and return the table. Errors
/// only where a call itself fails (an allocation).
pub fn probe(exec: &Exec) -> Result<ProbeReport> {
    let mut rows = Vec::new();
    let threads = exec.thread_count();
    for tier in available_tiers() {
        let e = Exec::on(tier).threads(threads);
        let mut row = |family: String, bound: f64, measured: f64| {
            rows.push(ProbeRow {
                family,
                tier,
                bound,
                measured,
            })
        };
        for (path, (m, k, n)) in [
            ("small", (8, 13, 9)),
            ("packed", (160, 200, 176)),
            ("lane", (2, 4096, 2)),
        ] {
            row(
                format!("gemm f32 {path}"),
                GEMM_BOUND_32,
                gemm_error_f32(m, k, n, &matmul::<f32>(&e, m, k, n))?,
            );
            row(
                format!("gemm f64 {path}"),
                GEMM_BOUND_64,
                gemm_error_f64(m, k, n, &matmul::<f64>(&e, m, k, n))?,
            );
        }
        for (path, shape) in [("chain", (40, 200, 36)), ("lane", (2, 4096, 2))] {
            row(
                format!("gemm df32 {path}"),
                GEMM_BOUND_PAIR_32,
                pair_gemm_error(DType::Df32, shape, &e)?,
            );
            row(
                format!("gemm dd64 {path}"),
                GEMM_BOUND_PAIR_64,
                pair_gemm_error(DType::Dd64, shape, &e)?,
            );
        }
        row(
            "gemm i8→i32, i16→i64 (outputs off)".into(),
            0.0,
            integer_gemm_misses((40, 300, 36), &e)?,
        );
        row(
            "gemm c64".into(),
            GEMM_BOUND_32,
            complex_gemm_error::<f32>(48, 56, 40, &e)?,
        );
        row(
            "gemm c128".into(),
            GEMM_BOUND_64,
            complex_gemm_error::<f64>(48, 56, 40, &e)?,
        );
        for n in [1024usize, 1009, 65536, 1 << 22] {
            let f = |x: &[Complex<f32>]| -> Result<Vec<Complex<f32>>> {
                let mut y = vec![Complex::<f32>::default(); x.len()];
                crate::fft::c2c(
                    &[0],
                    Direction::Forward,
                    Norm::None,
                    &ArrayView::from_slice(x, &[x.len()])?,
                    &mut ArrayViewMut::from_slice(&mut y, &[x.len()])?,
                    &e,
                )?;
                Ok(y)
            };
            if n <= 4096 {
                row(
                    format!("fft c2c f32 n={n}"),
                    fft_bound(2f64.powi(-23), n),
                    fft_error_f32(n, &f)?,
                );
            } else {
                // A long transform against its inverse: the round trip
                // (two transforms) within twice the bound.
                // 2^22 c64 values (32 MiB) exceed FOUR_STEP_BYTES: Bailey's
                // four steps.
                let path = if n * 8 > crate::fft::FOUR_STEP_BYTES {
                    "4-step trip"
                } else {
                    "round trip"
                };
                row(
                    format!("fft c2c f32 {path} n={n}"),
                    2.0 * fft_bound(2f64.powi(-23), n),
                    round_trip_f32(n, &e)?,
                );
            }
            if n <= 1024 {
                let g = |x: &[Complex<f64>]| -> Result<Vec<Complex<f64>>> {
                    let mut y = vec![Complex::<f64>::default(); x.len()];
                    crate::fft::c2c(
                        &[0],
                        Direction::Forward,
                        Norm::None,
                        &ArrayView::from_slice(x, &[x.len()])?,
                        &mut ArrayViewMut::from_slice(&mut y, &[x.len()])?,
                        &e,
                    )?;
                    Ok(y)
                };
                row(
                    format!("fft c2c f64 n={n}"),
                    fft_bound(2f64.powi(-52), n),
                    fft_error_f64(n, &g)?,
                );
            }
        }
        // The real transform: r2c of a real signal as the c2c of it with a
        // zero imaginary part (the first n/2 + 1 outputs).
        let n = 1024;
        let r = |x: &[Complex<f32>]| -> Result<Vec<Complex<f32>>> {
            let re: Vec<f32> = x.iter().map(|v| v.re).collect();
            let mut y = vec![Complex::<f32>::default(); n / 2 + 1];
            crate::fft::r2c(
                &[0],
                Norm::None,
                &ArrayView::from_slice(&re, &[n])?,
                &mut ArrayViewMut::from_slice(&mut y, &[n / 2 + 1])?,
                &e,
            )?;
            // The rest by Hermitian symmetry, so the whole spectrum compares.
            let mut full = y.clone();
            for k in n / 2 + 1..n {
                full.push(y[n - k].conj());
            }
            Ok(full)
        };
        row(
            format!("fft r2c f32 n={n}"),
            fft_bound(2f64.powi(-23), n),
            fft_error_real_f32(n, &r)?,
        );
        for (kind, bound) in [
            (Kind::Add, 3.0),
            (Kind::Sub, 3.0),
            (Kind::Mul, 4.0),
            (Kind::Div, 15.0),
            (Kind::Sqrt, 25.0 / 8.0),
            (Kind::Exp, 32.0),
        ] {
            row(
                format!("{} df32 (u²)", kind.name()),
                bound,
                pair_error(kind, tier)?,
            );
        }
        for (kind, domain, reference) in math_kinds() {
            let bound = match kind.info().accuracy {
                crate::Accuracy::Ulp35 => 3.5,
                _ => 1.0,
            };
            row(
                format!("{} f32", kind.name()),
                bound,
                math_error::<f32>(kind, domain, reference, tier)?,
            );
            // f64 against Rust's f64 functions (and the forms above),
            // themselves within about two ulps: the kind's bound plus two.
            row(
                format!("{} f64 (vs libm)", kind.name()),
                bound + 2.0,
                math_error::<f64>(kind, domain, reference, tier)?,
            );
        }
    }
    Ok(ProbeReport { rows })
}

/// The largest relative error, in units of u² (u = 2^-24), of `kind` on
/// df32 pairs on `tier` over 2 048 seeded normalised operands, against the
/// same operation in double-double (dd64) on the same values (whose own
/// error, near 2^-104, is negligible beside 2^-48).
fn pair_error(kind: Kind, tier: Tier) -> Result<f64> {
    let n = 2048;
    let operand = |seed: u64, i: usize| -> Pair<f32> {
        let m = 1.0 + (val(seed, 2 * i) + 1.0) / 2.0;
        let e = if kind == Kind::Exp {
            0
        } else {
            (val(seed + 1, i) * 20.0) as i32
        };
        let v = m
            * 2f64.powi(e)
            * if kind == Kind::Sqrt || val(seed + 2, i) > 0.0 {
                1.0
            } else {
                -1.0
            };
        // exp: |x| < 40, so the result and its trailing part stay normal
        // (the bound's range).
        let v = if kind == Kind::Exp { v * 20.0 } else { v };
        // A value of ~48 bits split into a normalised pair.
        let hi = v as f32;
        Pair::new(
            hi,
            (v - hi as f64 + val(seed + 3, i) * 2f64.powi(-30) * v.abs()) as f32,
        )
    };
    let x: Vec<Pair<f32>> = (0..n).map(|i| operand(12, i)).collect();
    let y: Vec<Pair<f32>> = (0..n).map(|i| operand(16, i)).collect();
    let x: Vec<Pair<f32>> = x
        .iter()
        .map(|p| crate::pair::fast_two_sum(p.hi, p.lo))
        .collect();
    let y: Vec<Pair<f32>> = y
        .iter()
        .map(|p| crate::pair::fast_two_sum(p.hi, p.lo))
        .collect();
    let mut out = vec![Pair::<f32>::default(); n];
    let exec = Exec::on(tier);
    if kind.info().arity == 2 {
        typed::elementwise(kind, &[&x, &y], &mut out, &exec)?;
    } else {
        typed::elementwise(kind, &[&x], &mut out, &exec)?;
    }
    let wide = |p: Pair<f32>| crate::pair::two_sum(p.hi as f64, p.lo as f64);
    let mut worst = 0f64;
    for i in 0..n {
        let (a, b) = (wide(x[i]), wide(y[i]));
        let r = match kind {
            Kind::Add => a.add(b),
            Kind::Sub => a.sub(b),
            Kind::Mul => a.mul(b),
            Kind::Div => a.div(b),
            Kind::Sqrt => a.sqrt(),
            _ => a.exp(),
        };
        if r.hi == 0.0 || !r.hi.is_finite() {
            continue;
        }
        let d = wide(out[i]).sub(r).round();
        worst = worst.max((d / r.hi).abs() / 2f64.powi(-48));
    }
    Ok(worst)
}

/// The normwise error of an f32 forward-then-inverse transform of length
/// `n` (Norm::Backward: the identity) against the operand.
fn round_trip_f32(n: usize, e: &Exec) -> Result<f64> {
    let x: Vec<Complex<f32>> = (0..n)
        .map(|i| Complex::new(val(11, 2 * i) as f32, val(11, 2 * i + 1) as f32))
        .collect();
    let mut y = vec![Complex::<f32>::default(); n];
    let mut z = vec![Complex::<f32>::default(); n];
    crate::fft::c2c(
        &[0],
        Direction::Forward,
        Norm::Backward,
        &ArrayView::from_slice(&x, &[n])?,
        &mut ArrayViewMut::from_slice(&mut y, &[n])?,
        e,
    )?;
    crate::fft::c2c(
        &[0],
        Direction::Inverse,
        Norm::Backward,
        &ArrayView::from_slice(&y, &[n])?,
        &mut ArrayViewMut::from_slice(&mut z, &[n])?,
        e,
    )?;
    let (mut num, mut den) = (0f64, 0f64);
    for (a, b) in x.iter().zip(&z) {
        let d = Complex::new(a.re as f64 - b.re as f64, a.im as f64 - b.im as f64);
        num += d.norm_sqr();
        den += (a.re as f64).powi(2) + (a.im as f64).powi(2);
    }
    Ok((num / den).sqrt())
}
