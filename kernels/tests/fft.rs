//! Fourier transforms against an independent slow model: a direct DFT in
//! double-double arithmetic (its roots from a double-double Taylor series
//! written here), for f32 and f64 alike; bounds measured as the ratio of the
//! error to the stated bound (printed); round trips; identity of bits across
//! layouts, batches, threads and tiers; c2r of non-Hermitian operands against
//! the stated linear map; refusals that write nothing.

mod common;

use num_complex::Complex;
use tessera::fft::{self, c2c, c2r, r2c, Direction, FftFloat, FftPlan, Norm, Transform};
use tessera::{ArrayView, ArrayViewMut, DType, Element, Error, Exec, Tier};
use tessera_testkit::rng::Rng;

// ---------- double-double ----------

#[derive(Clone, Copy, Debug, Default)]
struct Dd(f64, f64);

fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd(s, (a - (s - bb)) + (b - bb))
}
impl Dd {
    fn from(v: f64) -> Dd {
        Dd(v, 0.0)
    }
    fn add(self, o: Dd) -> Dd {
        let s = two_sum(self.0, o.0);
        let t = two_sum(self.1, o.1);
        let s = two_sum(s.0, s.1 + t.0);
        two_sum(s.0, s.1 + t.1)
    }
    fn neg(self) -> Dd {
        Dd(-self.0, -self.1)
    }
    fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }
    fn mul(self, o: Dd) -> Dd {
        let p = self.0 * o.0;
        let e = self.0.mul_add(o.0, -p);
        two_sum(p, e + self.0 * o.1 + self.1 * o.0)
    }
    fn scale(self, f: f64) -> Dd {
        self.mul(Dd::from(f))
    }
    fn f(self) -> f64 {
        self.0 + self.1
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Cd(Dd, Dd);
impl Cd {
    fn add(self, o: Cd) -> Cd {
        Cd(self.0.add(o.0), self.1.add(o.1))
    }
    fn mul(self, o: Cd) -> Cd {
        Cd(
            self.0.mul(o.0).sub(self.1.mul(o.1)),
            self.0.mul(o.1).add(self.1.mul(o.0)),
        )
    }
    fn conj(self) -> Cd {
        Cd(self.0, self.1.neg())
    }
}

/// cos and sin of 2π·j/n in double-double: the angle reduced to [−π/4, π/4]
/// by quarter turns (exact in integers), then Taylor series.
fn root_dd(j: usize, n: usize, inverse: bool) -> Cd {
    let j = (j % n) as i128;
    let n = n as i128;
    // 2π·j/n = (π/2)·q + r, q = round(4j/n).
    let q = (4 * j + n / 2).div_euclid(n);
    let num = 4 * j - q * n; // r = (π/2)·num/n, |num/n| ≤ 1/2
    let pi2 = Dd(std::f64::consts::FRAC_PI_2, 6.123233995736766e-17);
    let frac = {
        let h = num as f64 / n as f64;
        let l = (-h).mul_add(n as f64, num as f64) / n as f64;
        Dd(h, l)
    };
    let x = pi2.mul(frac);
    let x2 = x.mul(x);
    let (mut c, mut s) = (Dd::from(1.0), x);
    let (mut tc, mut ts) = (Dd::from(1.0), x);
    for k in 1..18 {
        let k = k as f64;
        tc = tc.mul(x2).scale(-1.0 / ((2.0 * k - 1.0) * (2.0 * k)));
        ts = ts.mul(x2).scale(-1.0 / ((2.0 * k) * (2.0 * k + 1.0)));
        c = c.add(tc);
        s = s.add(ts);
    }
    let (c, s) = match q.rem_euclid(4) {
        0 => (c, s),
        1 => (s.neg(), c),
        2 => (c.neg(), s.neg()),
        _ => (s, c.neg()),
    };
    if inverse {
        Cd(c, s)
    } else {
        Cd(c, s.neg())
    }
}

/// The DFT of one line, directly, in double-double.
fn dft(x: &[Cd], inverse: bool) -> Vec<Cd> {
    let n = x.len();
    let w: Vec<Cd> = (0..n).map(|j| root_dd(j, n, inverse)).collect();
    (0..n)
        .map(|k| {
            let mut acc = Cd::default();
            for (j, &v) in x.iter().enumerate() {
                acc = acc.add(v.mul(w[(j * k) % n]));
            }
            acc
        })
        .collect()
}

/// The DFT along `axis` of a C-order array of `shape`.
fn dft_axis(a: &mut [Cd], shape: &[usize], axis: usize, inverse: bool) {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    for o in 0..outer {
        for i in 0..inner {
            let idx = |j: usize| (o * n + j) * inner + i;
            let line: Vec<Cd> = (0..n).map(|j| a[idx(j)]).collect();
            let y = dft(&line, inverse);
            for (j, v) in y.into_iter().enumerate() {
                a[idx(j)] = v;
            }
        }
    }
}

// ---------- helpers ----------

trait P: FftFloat + Element where
    Complex<Self>: Element,
{
    fn bits(self) -> u64;
    fn rand(rng: &mut Rng) -> Self {
        Self::from_f64(2.0 * rng.unit() - 1.0)
    }
}
impl P for f32 {
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}
impl P for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

fn rand_c<T: P>(rng: &mut Rng, n: usize) -> Vec<Complex<T>>
where
    Complex<T>: Element,
{
    (0..n)
        .map(|_| Complex::new(T::rand(rng), T::rand(rng)))
        .collect()
}

fn to_cd<T: P>(x: &[Complex<T>]) -> Vec<Cd>
where
    Complex<T>: Element,
{
    x.iter()
        .map(|z| Cd(Dd::from(z.re.to_f64()), Dd::from(z.im.to_f64())))
        .collect()
}

/// ‖got − want‖₂ (in double-double, then f64).
fn err_l2<T: P>(got: &[Complex<T>], want: &[Cd]) -> f64
where
    Complex<T>: Element,
{
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let a = Dd::from(g.re.to_f64()).sub(w.0).f();
            let b = Dd::from(g.im.to_f64()).sub(w.1).f();
            a * a + b * b
        })
        .sum::<f64>()
        .sqrt()
}

fn norm_c<T: P>(x: &[Complex<T>]) -> f64
where
    Complex<T>: Element,
{
    x.iter()
        .map(|z| z.re.to_f64().powi(2) + z.im.to_f64().powi(2))
        .sum::<f64>()
        .sqrt()
}

fn seq() -> Exec {
    Exec::default().threads(1)
}

fn run_c2c<T: P>(
    shape: &[usize],
    axes: &[usize],
    dir: Direction,
    x: &[Complex<T>],
    exec: &Exec,
) -> Vec<Complex<T>>
where
    Complex<T>: Element,
{
    let mut y = vec![Complex::new(T::ZERO, T::ZERO); x.len()];
    c2c(
        axes,
        dir,
        Norm::None,
        &ArrayView::from_slice(x, shape).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, shape).unwrap(),
        exec,
    )
    .unwrap();
    y
}

fn bits_c<T: P>(v: &[Complex<T>]) -> Vec<(u64, u64)>
where
    Complex<T>: Element,
{
    v.iter().map(|z| (z.re.bits(), z.im.bits())).collect()
}

/// The worst ratio error/bound seen by a test, printed at its end.
struct Worst(&'static str, f64, String);
impl Worst {
    fn see(&mut self, ratio: f64, what: String) {
        assert!(
            ratio <= 1.0,
            "{}: {what}: error is {ratio} of the bound",
            self.0
        );
        if ratio > self.1 {
            self.1 = ratio;
            self.2 = what;
        }
    }
}
impl Drop for Worst {
    fn drop(&mut self) {
        println!(
            "{}: worst error/bound ratio {:.4} ({})",
            self.0, self.1, self.2
        );
    }
}

fn check_c2c_line<T: P>(n: usize, rng: &mut Rng, worst: &mut Worst)
where
    Complex<T>: Element,
{
    for dir in [Direction::Forward, Direction::Inverse] {
        let x = rand_c::<T>(rng, n);
        let y = run_c2c(&[n], &[0], dir, &x, &seq());
        let want = dft(&to_cd(&x), dir == Direction::Inverse);
        let eps = fft::error_factor(Transform::C2c, &[n], Norm::None, T::TWIDDLE_DD, dir).unwrap();
        let bound = eps * T::UNIT_ROUNDOFF * (n as f64).sqrt() * norm_c(&x);
        let e = err_l2(&y, &want);
        worst.see(
            if bound == 0.0 { e } else { e / bound },
            format!("n={n} {dir:?}"),
        );
    }
}

/// A line's bits do not depend on where its data and its scratch lie: the
/// data shifted by 0–3 points and the scratch by 0–9 from an allocation's
/// start (so off a 64-byte boundary by every amount; a plan starts its
/// buffers on the first boundary its scratch's slack reaches), scratch of
/// exactly `scratch_len()` points or more, against `c2c` of the same values
/// (with its own scratch; within the stated bound of the double-double DFT
/// up to 6000 points), on every tier; lengths of one to six passes.
#[test]
fn a_line_gives_the_same_bits_wherever_its_buffers_lie() {
    fn check<T: P>(rng: &mut Rng, tiers: &[Tier])
    where
        Complex<T>: Element,
    {
        let zero = Complex::new(T::ZERO, T::ZERO);
        for n in [16usize, 64, 1000, 4096, 6000, 49152] {
            let x = rand_c::<T>(rng, n);
            for &tier in tiers {
                let exec = Exec::on(tier).threads(1);
                let y = run_c2c(&[n], &[0], Direction::Forward, &x, &exec);
                if n <= 6000 && tier == Tier::ALL[0] {
                    // The reference placement within the stated bound of
                    // the double-double DFT.
                    let eps = fft::error_factor(
                        Transform::C2c,
                        &[n],
                        Norm::None,
                        T::TWIDDLE_DD,
                        Direction::Forward,
                    )
                    .unwrap();
                    let bound = eps * T::UNIT_ROUNDOFF * (n as f64).sqrt() * norm_c(&x);
                    assert!(err_l2(&y, &dft(&to_cd(&x), false)) <= bound, "n {n}");
                }
                let want = bits_c(&y);
                let plan = FftPlan::<T>::new(n, Direction::Forward).unwrap();
                let sl = plan.scratch_len();
                let mut data_buf = vec![zero; n + 3];
                let mut scratch_buf = vec![zero; sl + 16];
                for d in 0..4 {
                    for s in [0, 1, 3, 5, 9] {
                        for more in [0, 7] {
                            let data = &mut data_buf[d..d + n];
                            data.copy_from_slice(&x);
                            let scratch = &mut scratch_buf[s..s + sl + more];
                            plan.run_with_scratch(data, scratch, &exec).unwrap();
                            assert!(
                                bits_c(data) == want,
                                "n {n} {tier:?}: data at +{d}, scratch at +{s} ({more} more)"
                            );
                        }
                    }
                }
            }
        }
    }
    let tiers = common::tiers();
    let mut rng = Rng::for_label("fft/placement", 1);
    check::<f32>(&mut rng, &tiers);
    check::<f64>(&mut rng, &tiers);
}

fn sampled_lengths(rng: &mut Rng, full: bool) -> Vec<usize> {
    if full {
        return (1..=1024).collect();
    }
    let mut v: Vec<usize> = (1..=48).collect();
    v.extend([
        60, 64, 81, 96, 100, 125, 128, 243, 250, 251, 256, 257, 360, 500, 512, 625, 997, 1000, 1024,
    ]);
    for _ in 0..8 {
        v.push(49 + rng.below_usize(976));
    }
    v
}

#[test]
fn c2c_within_bound_sampled_lengths() {
    let mut rng = Rng::for_label("fft c2c lengths", tessera_testkit::rng::seed());
    let lengths = sampled_lengths(&mut rng, false);
    let mut w32 = Worst("c2c f32 lengths", 0.0, String::new());
    let mut w64 = Worst("c2c f64 lengths", 0.0, String::new());
    for &n in &lengths {
        check_c2c_line::<f32>(n, &mut rng, &mut w32);
        check_c2c_line::<f64>(n, &mut rng, &mut w64);
    }
}

#[test]
#[ignore]
fn c2c_within_bound_every_length_to_1024() {
    let mut rng = Rng::for_label("fft c2c all", tessera_testkit::rng::seed());
    let mut w32 = Worst("c2c f32 1..=1024", 0.0, String::new());
    let mut w64 = Worst("c2c f64 1..=1024", 0.0, String::new());
    for n in sampled_lengths(&mut rng, true) {
        check_c2c_line::<f32>(n, &mut rng, &mut w32);
        check_c2c_line::<f64>(n, &mut rng, &mut w64);
    }
}

fn is_prime(n: usize) -> bool {
    n >= 2
        && (2..)
            .take_while(|d| d * d <= n)
            .all(|d| !n.is_multiple_of(d))
}

/// Long lines: the reference of a sparse operand (k random points) is cheap.
fn check_sparse<T: P>(n: usize, k: usize, rng: &mut Rng, worst: &mut Worst)
where
    Complex<T>: Element,
{
    let dir = if rng.below(2) == 0 {
        Direction::Forward
    } else {
        Direction::Inverse
    };
    let mut x = vec![Complex::new(T::ZERO, T::ZERO); n];
    for _ in 0..k {
        let j = rng.below_usize(n);
        x[j] = Complex::new(T::rand(rng), T::rand(rng));
    }
    let y = run_c2c(&[n], &[0], dir, &x, &seq());
    let nz: Vec<(usize, Cd)> = to_cd(&x)
        .into_iter()
        .enumerate()
        .filter(|(_, v)| v.0 .0 != 0.0 || v.1 .0 != 0.0)
        .collect();
    let inv = dir == Direction::Inverse;
    let want: Vec<Cd> = (0..n)
        .map(|kk| {
            let mut acc = Cd::default();
            for &(j, v) in &nz {
                acc = acc.add(v.mul(root_dd(
                    ((j as u128 * kk as u128) % n as u128) as usize,
                    n,
                    inv,
                )));
            }
            acc
        })
        .collect();
    let eps = fft::error_factor(Transform::C2c, &[n], Norm::None, T::TWIDDLE_DD, dir).unwrap();
    let bound = eps * T::UNIT_ROUNDOFF * (n as f64).sqrt() * norm_c(&x);
    worst.see(err_l2(&y, &want) / bound, format!("n={n} {dir:?} sparse"));
}

#[test]
fn c2c_within_bound_primes_and_bench_sizes() {
    let mut rng = Rng::for_label("fft primes", tessera_testkit::rng::seed());
    let mut w32 = Worst("c2c f32 primes and bench sizes", 0.0, String::new());
    let mut w64 = Worst("c2c f64 primes and bench sizes", 0.0, String::new());
    let primes: Vec<usize> = (2..10_000).filter(|&p| is_prime(p)).collect();
    let mut sizes: Vec<usize> = (0..12).map(|_| *rng.pick(&primes)).collect();
    sizes.extend([
        251,
        257,
        4093,
        9973,
        64,
        1024,
        4096,
        1000,
        5183,
        3 << 14,
        65536,
        1 << 20,
        1 << 21,
    ]);
    for &n in &sizes {
        check_sparse::<f32>(n, 6, &mut rng, &mut w32);
        check_sparse::<f64>(n, 6, &mut rng, &mut w64);
    }
}

#[test]
#[ignore]
fn c2c_within_bound_long_lines_and_every_prime() {
    let mut rng = Rng::for_label("fft long", tessera_testkit::rng::seed());
    let mut w32 = Worst("c2c f32 long and primes", 0.0, String::new());
    let mut w64 = Worst("c2c f64 long and primes", 0.0, String::new());
    for n in [1 << 18, 1 << 20, 3 << 16, 1_000_003] {
        check_sparse::<f32>(n, 4, &mut rng, &mut w32);
        check_sparse::<f64>(n, 4, &mut rng, &mut w64);
    }
    for p in (2..10_000).filter(|&p| is_prime(p)) {
        check_sparse::<f32>(p, 5, &mut rng, &mut w32);
        check_sparse::<f64>(p, 5, &mut rng, &mut w64);
    }
}

fn round_trip<T: P>(n: usize, rng: &mut Rng) -> f64
where
    Complex<T>: Element,
{
    let x = rand_c::<T>(rng, n);
    let mut y = vec![Complex::new(T::ZERO, T::ZERO); n];
    let mut z = y.clone();
    let e = seq();
    c2c(
        &[0],
        Direction::Forward,
        Norm::None,
        &ArrayView::from_slice(&x, &[n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
        &e,
    )
    .unwrap();
    c2c(
        &[0],
        Direction::Inverse,
        Norm::Backward,
        &ArrayView::from_slice(&y, &[n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut z, &[n]).unwrap(),
        &e,
    )
    .unwrap();
    let d: Vec<Complex<f64>> = x
        .iter()
        .zip(&z)
        .map(|(a, b)| Complex::new(a.re.to_f64() - b.re.to_f64(), a.im.to_f64() - b.im.to_f64()))
        .collect();
    let num = d.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
    num / norm_c(&x)
}

#[test]
fn round_trips_up_to_8192() {
    let mut rng = Rng::for_label("fft round trip", tessera_testkit::rng::seed());
    let mut worst = (0.0f64, 0.0f64);
    for n in [
        1, 2, 3, 7, 16, 100, 251, 257, 1000, 1024, 2048, 4093, 4096, 5183, 6000, 8191, 8192,
    ] {
        let e32 = round_trip::<f32>(n, &mut rng);
        let e64 = round_trip::<f64>(n, &mut rng);
        assert!(e32 <= 1e-6, "f32 n={n}: {e32}");
        assert!(e64 <= 2e-15, "f64 n={n}: {e64}");
        worst = (worst.0.max(e32), worst.1.max(e64));
    }
    println!(
        "round trips: worst relative L2 {:.3e} (f32), {:.3e} (f64)",
        worst.0, worst.1
    );
}

// ---------- real transforms ----------

fn check_r2c<T: P>(n: usize, rng: &mut Rng, worst: &mut Worst)
where
    Complex<T>: Element,
{
    let x: Vec<T> = (0..n).map(|_| T::rand(rng)).collect();
    let nb = n / 2 + 1;
    let mut y = vec![Complex::new(T::ZERO, T::ZERO); nb];
    r2c(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&x, &[n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[nb]).unwrap(),
        &seq(),
    )
    .unwrap();
    let xc: Vec<Cd> = x
        .iter()
        .map(|v| Cd(Dd::from(v.to_f64()), Dd::default()))
        .collect();
    let want = dft(&xc, false);
    let eps = fft::error_factor(
        Transform::R2c,
        &[n],
        Norm::None,
        T::TWIDDLE_DD,
        Direction::Forward,
    )
    .unwrap();
    let nx = x.iter().map(|v| v.to_f64().powi(2)).sum::<f64>().sqrt();
    let bound = eps * T::UNIT_ROUNDOFF * (n as f64).sqrt() * nx;
    let e = err_l2(&y, &want[..nb.min(n)]);
    worst.see(
        if bound == 0.0 { e } else { e / bound },
        format!("r2c n={n}"),
    );
}

/// The stated linear map of c2r: the Hermitian extension, imaginary parts of
/// bin 0 and (even n) bin n/2 dropped, inverse DFT, real parts.
fn c2r_model(bins: &[Cd], n: usize) -> Vec<Dd> {
    let mut full = vec![Cd::default(); n];
    for k in 0..n {
        full[k] = if k <= n / 2 {
            bins[k]
        } else {
            bins[n - k].conj()
        };
    }
    full[0].1 = Dd::default();
    if n.is_multiple_of(2) {
        full[n / 2].1 = Dd::default();
    }
    dft(&full, true).into_iter().map(|z| z.0).collect()
}

fn check_c2r<T: P>(n: usize, rng: &mut Rng, worst: &mut Worst)
where
    Complex<T>: Element,
{
    let nb = n / 2 + 1;
    let x = rand_c::<T>(rng, nb); // not Hermitian: bins 0 and n/2 have imaginary parts
    let mut y = vec![T::ZERO; n];
    c2r(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&x, &[nb]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
        &seq(),
    )
    .unwrap();
    let want = c2r_model(&to_cd(&x), n);
    let e = y
        .iter()
        .zip(&want)
        .map(|(g, w)| Dd::from(g.to_f64()).sub(*w).f().powi(2))
        .sum::<f64>()
        .sqrt();
    let eps = fft::error_factor(
        Transform::C2r,
        &[n],
        Norm::None,
        T::TWIDDLE_DD,
        Direction::Inverse,
    )
    .unwrap();
    let bound = eps * T::UNIT_ROUNDOFF * (n as f64).sqrt() * 2f64.sqrt() * norm_c(&x);
    worst.see(
        if bound == 0.0 { e } else { e / bound },
        format!("c2r n={n}"),
    );
}

#[test]
fn real_transforms_within_bound_and_c2r_is_the_stated_map() {
    let mut rng = Rng::for_label("fft real", tessera_testkit::rng::seed());
    let mut w32 = Worst("r2c/c2r f32", 0.0, String::new());
    let mut w64 = Worst("r2c/c2r f64", 0.0, String::new());
    let mut lengths: Vec<usize> = (1..=33).collect();
    lengths.extend([64, 100, 257, 510, 511, 512, 514, 600, 768, 1000, 1024, 1026]);
    for n in lengths {
        check_r2c::<f32>(n, &mut rng, &mut w32);
        check_r2c::<f64>(n, &mut rng, &mut w64);
        check_c2r::<f32>(n, &mut rng, &mut w32);
        check_c2r::<f64>(n, &mut rng, &mut w64);
    }
}

#[test]
fn zero_points_are_the_empty_sum() {
    // r2c of n = 0: one bin of +0.
    let x: [f32; 0] = [];
    let mut y = [Complex::new(7.0f32, 7.0); 1];
    r2c(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&x, &[0]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[1]).unwrap(),
        &seq(),
    )
    .unwrap();
    assert_eq!((y[0].re.to_bits(), y[0].im.to_bits()), (0, 0));
    // A 2-D r2c whose first transformed axis is empty: zeros.
    let x: [f64; 0] = [];
    let mut y = [Complex::new(7.0f64, 7.0); 3];
    r2c(
        &[0, 1],
        Norm::None,
        &ArrayView::from_slice(&x, &[0, 4]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[0, 3]).unwrap(),
        &seq(),
    )
    .unwrap();
    assert_eq!(y[0], Complex::new(7.0, 7.0)); // an empty destination: untouched
    let x: [f64; 0] = [];
    let mut y = [Complex::new(7.0f64, 7.0); 3];
    r2c(
        &[1],
        Norm::None,
        &ArrayView::from_slice(&x, &[3, 0]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[3, 1]).unwrap(),
        &seq(),
    )
    .unwrap();
    assert!(y.iter().all(|z| z.re.to_bits() == 0 && z.im.to_bits() == 0));
    // c2c and c2r of zero points: nothing to write.
    let x: [Complex<f32>; 0] = [];
    let mut y: [Complex<f32>; 0] = [];
    c2c(
        &[0],
        Direction::Forward,
        Norm::Ortho,
        &ArrayView::from_slice(&x, &[0]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[0]).unwrap(),
        &seq(),
    )
    .unwrap();
    let xb = [Complex::new(1.0f32, 1.0)];
    let mut yr: [f32; 0] = [];
    c2r(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&xb, &[1]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut yr, &[0]).unwrap(),
        &seq(),
    )
    .unwrap();
    // One point: the point itself (c2r: its real part).
    let mut y1 = [0.0f32];
    c2r(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&xb, &[1]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y1, &[1]).unwrap(),
        &seq(),
    )
    .unwrap();
    assert_eq!(y1, [1.0]);
}

// ---------- several axes ----------

fn check_nd<T: P>(shape: &[usize], axes: &[usize], rng: &mut Rng, worst: &mut Worst)
where
    Complex<T>: Element,
{
    let count: usize = shape.iter().product();
    let pts: usize = axes.iter().map(|&a| shape[a]).product();
    for dir in [Direction::Forward, Direction::Inverse] {
        let x = rand_c::<T>(rng, count);
        let y = run_c2c(shape, axes, dir, &x, &Exec::default());
        let mut want = to_cd(&x);
        for &a in axes {
            dft_axis(&mut want, shape, a, dir == Direction::Inverse);
        }
        let lens: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
        let eps = fft::error_factor(Transform::C2c, &lens, Norm::None, T::TWIDDLE_DD, dir).unwrap();
        // The bound holds per transform of N points: here summed over the batch.
        let bound = eps * T::UNIT_ROUNDOFF * (pts as f64).sqrt() * norm_c(&x);
        worst.see(
            err_l2(&y, &want) / bound,
            format!("c2c {shape:?} axes {axes:?} {dir:?}"),
        );
    }
    // r2c then c2r along the same axes.
    let xr: Vec<T> = (0..count).map(|_| T::rand(rng)).collect();
    let last = *axes.last().unwrap();
    let mut bshape = shape.to_vec();
    bshape[last] = shape[last] / 2 + 1;
    let bcount: usize = bshape.iter().product();
    let mut y = vec![Complex::new(T::ZERO, T::ZERO); bcount];
    r2c(
        axes,
        Norm::None,
        &ArrayView::from_slice(&xr, shape).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &bshape).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    let mut want: Vec<Cd> = xr
        .iter()
        .map(|v| Cd(Dd::from(v.to_f64()), Dd::default()))
        .collect();
    for &a in axes {
        dft_axis(&mut want, shape, a, false);
    }
    // Keep the bins 0..=n/2 of the last axis.
    let inner: usize = shape[last + 1..].iter().product();
    let n = shape[last];
    let outer: usize = shape[..last].iter().product();
    let mut kept = Vec::with_capacity(bcount);
    for o in 0..outer {
        for k in 0..bshape[last] {
            for i in 0..inner {
                kept.push(want[(o * n + k) * inner + i]);
            }
        }
    }
    let lens: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
    let eps = fft::error_factor(
        Transform::R2c,
        &lens,
        Norm::None,
        T::TWIDDLE_DD,
        Direction::Forward,
    )
    .unwrap();
    let nx = xr.iter().map(|v| v.to_f64().powi(2)).sum::<f64>().sqrt();
    let bound = eps * T::UNIT_ROUNDOFF * (pts as f64).sqrt() * nx;
    worst.see(
        err_l2(&y, &kept) / bound,
        format!("r2c {shape:?} axes {axes:?}"),
    );
    // c2r of a random (non-Hermitian) operand of the bins' shape.
    let xb = rand_c::<T>(rng, bcount);
    let mut yr = vec![T::ZERO; count];
    c2r(
        axes,
        Norm::None,
        &ArrayView::from_slice(&xb, &bshape).unwrap(),
        &mut ArrayViewMut::from_slice(&mut yr, shape).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    let mut m = to_cd(&xb);
    for &a in &axes[..axes.len() - 1] {
        dft_axis(&mut m, &bshape, a, true);
    }
    let mut model = vec![Dd::default(); count];
    let bl = bshape[last];
    for o in 0..outer {
        for i in 0..inner {
            let line: Vec<Cd> = (0..bl).map(|k| m[(o * bl + k) * inner + i]).collect();
            for (j, v) in c2r_model(&line, n).into_iter().enumerate() {
                model[(o * n + j) * inner + i] = v;
            }
        }
    }
    let e = yr
        .iter()
        .zip(&model)
        .map(|(g, w)| Dd::from(g.to_f64()).sub(*w).f().powi(2))
        .sum::<f64>()
        .sqrt();
    let eps = fft::error_factor(
        Transform::C2r,
        &lens,
        Norm::None,
        T::TWIDDLE_DD,
        Direction::Inverse,
    )
    .unwrap();
    let bound = eps * T::UNIT_ROUNDOFF * (pts as f64).sqrt() * 2f64.sqrt() * norm_c(&xb);
    worst.see(e / bound, format!("c2r {shape:?} axes {axes:?}"));
}

#[test]
fn several_axes_within_bound() {
    let mut rng = Rng::for_label("fft nd", tessera_testkit::rng::seed());
    let mut w32 = Worst("2-D/3-D f32", 0.0, String::new());
    let mut w64 = Worst("2-D/3-D f64", 0.0, String::new());
    let cases: &[(&[usize], &[usize])] = &[
        (&[6, 10], &[0, 1]),
        (&[16, 9], &[0, 1]),
        (&[5, 12], &[0]),
        (&[5, 12], &[1]),
        (&[4, 5, 6], &[0, 1, 2]),
        (&[4, 5, 6], &[0, 2]),
        (&[3, 8, 7], &[1, 2]),
        (&[2, 3, 520], &[0, 2]),
    ];
    for (shape, axes) in cases {
        check_nd::<f32>(shape, axes, &mut rng, &mut w32);
        check_nd::<f64>(shape, axes, &mut rng, &mut w64);
    }
}

// ---------- identity of bits ----------

/// Every tier, with 1, 2 and 7 threads.
fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in common::tiers() {
        for n in [1, 2, 7] {
            v.push(Exec::on(t).threads(n));
        }
    }
    v
}

/// A line of n points, the reference bits: alone, scalar tier, one thread.
fn alone<T: P>(n: usize, dir: Direction, x: &[Complex<T>]) -> Vec<(u64, u64)>
where
    Complex<T>: Element,
{
    bits_c(&run_c2c(
        &[n],
        &[0],
        dir,
        x,
        &Exec::on(Tier::ALL[0]).threads(1),
    ))
}

fn identity_for<T: P>(n: usize, rng: &mut Rng)
where
    Complex<T>: Element,
{
    let zero = Complex::new(T::ZERO, T::ZERO);
    for dir in [Direction::Forward, Direction::Inverse] {
        let batch = if n > 5000 { 3 } else { 5 };
        let lines: Vec<Vec<Complex<T>>> = (0..batch).map(|_| rand_c::<T>(rng, n)).collect();
        let want: Vec<Vec<(u64, u64)>> = lines.iter().map(|l| alone(n, dir, l)).collect();
        for exec in execs() {
            // In a batch, along the last axis.
            let flat: Vec<Complex<T>> = lines.concat();
            let y = run_c2c(&[batch, n], &[1], dir, &flat, &exec);
            for b in 0..batch {
                assert_eq!(
                    bits_c(&y[b * n..(b + 1) * n]),
                    want[b],
                    "batch n={n} {exec:?}"
                );
            }
            // Transposed: the lines along axis 0 of a C-order [n, batch] array.
            let mut tr = vec![zero; n * batch];
            for b in 0..batch {
                for j in 0..n {
                    tr[j * batch + b] = lines[b][j];
                }
            }
            let y = run_c2c(&[n, batch], &[0], dir, &tr, &exec);
            for b in 0..batch {
                let col: Vec<Complex<T>> = (0..n).map(|j| y[j * batch + b]).collect();
                assert_eq!(bits_c(&col), want[b], "transposed n={n} {exec:?}");
            }
            // Strided operand, negative-stride destination (reversed), offset.
            let stride = 3usize;
            let mut xs = vec![zero; n * stride + 2];
            for j in 0..n {
                xs[1 + j * stride] = lines[0][j];
            }
            let mut ys = vec![zero; n + 4];
            c2c(
                &[0],
                dir,
                Norm::None,
                &ArrayView::from_slice_strided(&xs, &[n], &[stride as isize], 1).unwrap(),
                &mut ArrayViewMut::from_slice_strided(&mut ys, &[n], &[-1], n + 1).unwrap(),
                &exec,
            )
            .unwrap();
            let got: Vec<Complex<T>> = (0..n).map(|j| ys[n + 1 - j]).collect();
            assert_eq!(bits_c(&got), want[0], "strided/reversed n={n} {exec:?}");
            // Negative-stride operand.
            let rev: Vec<Complex<T>> = lines[1].iter().rev().copied().collect();
            let mut y = vec![zero; n];
            c2c(
                &[0],
                dir,
                Norm::None,
                &ArrayView::from_slice_strided(&rev, &[n], &[-1], n - 1).unwrap(),
                &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(
                bits_c(&y),
                want[1],
                "negative-stride operand n={n} {exec:?}"
            );
        }
    }
}

#[test]
fn same_bits_alone_batched_transposed_strided_threads_tiers() {
    let mut rng = Rng::for_label("fft identity", tessera_testkit::rng::seed());
    // Passes of every radix, a generic prime, Bluestein, and lengths where
    // vector loops have tails: a first pass of m not a whole number of
    // vectors (60, 1000), odd lengths whose interleaved sequences are not
    // (243, 375, 1215, 3125: the overlapped last vector), a four-step line
    // (`plans_are_shared_…`).
    for n in [
        1, 2, 3, 5, 7, 12, 16, 40, 59, 60, 64, 97, 120, 243, 375, 625, 1000, 1024, 1215, 2048,
        3072, 3125, 4093, 5183, 6000,
    ] {
        identity_for::<f32>(n, &mut rng);
        identity_for::<f64>(n, &mut rng);
    }
    identity_for::<f32>(1 << 18, &mut rng);
    identity_for::<f64>(3 << 15, &mut rng);
}

#[test]
fn same_bits_in_2d_along_either_axis_and_for_real_transforms() {
    let mut rng = Rng::for_label("fft identity 2d", tessera_testkit::rng::seed());
    let (r, c) = (24usize, 40usize);
    let x = rand_c::<f64>(&mut rng, r * c);
    let reference = run_c2c(
        &[r, c],
        &[0, 1],
        Direction::Forward,
        &x,
        &Exec::on(Tier::ALL[0]).threads(1),
    );
    // The same 2-D transform as two 1-D calls along either axis (columns first
    // is the stated order: the last named axis runs first).
    let step = run_c2c(&[r, c], &[1], Direction::Forward, &x, &seq());
    let two = run_c2c(&[r, c], &[0], Direction::Forward, &step, &seq());
    assert_eq!(bits_c(&two), bits_c(&reference));
    // Fortran-order (transposed) operand and destination.
    let mut xt = vec![Complex::new(0.0f64, 0.0); r * c];
    for i in 0..r {
        for j in 0..c {
            xt[j * r + i] = x[i * c + j];
        }
    }
    for exec in execs() {
        let mut yt = vec![Complex::new(0.0f64, 0.0); r * c];
        c2c(
            &[0, 1],
            Direction::Forward,
            Norm::None,
            &ArrayView::from_slice_strided(&xt, &[r, c], &[1, r as isize], 0).unwrap(),
            &mut ArrayViewMut::from_slice_strided(&mut yt, &[r, c], &[1, r as isize], 0).unwrap(),
            &exec,
        )
        .unwrap();
        for i in 0..r {
            for j in 0..c {
                let (a, b) = (yt[j * r + i], reference[i * c + j]);
                assert_eq!(
                    (a.re.to_bits(), a.im.to_bits()),
                    (b.re.to_bits(), b.im.to_bits()),
                    "{exec:?}"
                );
            }
        }
    }
    // Real transforms: r2c and c2r of long even lines (the half-length path)
    // in a batch, on every tier and thread count.
    for n in [1024usize, 1000, 777, 1 << 17] {
        let batch = 3;
        let xr: Vec<f32> = (0..n * batch).map(|_| f32::rand(&mut rng)).collect();
        let nb = n / 2 + 1;
        let mut refy = vec![Complex::new(0.0f32, 0.0); nb];
        r2c(
            &[0],
            Norm::Ortho,
            &ArrayView::from_slice(&xr[..n], &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut refy, &[nb]).unwrap(),
            &Exec::on(Tier::ALL[0]).threads(1),
        )
        .unwrap();
        let mut refz = vec![0.0f32; n];
        c2r(
            &[0],
            Norm::Ortho,
            &ArrayView::from_slice(&refy, &[nb]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut refz, &[n]).unwrap(),
            &Exec::on(Tier::ALL[0]).threads(1),
        )
        .unwrap();
        for exec in execs() {
            let mut y = vec![Complex::new(0.0f32, 0.0); nb * batch];
            r2c(
                &[1],
                Norm::Ortho,
                &ArrayView::from_slice(&xr, &[batch, n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut y, &[batch, nb]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(bits_c(&y[..nb]), bits_c(&refy), "r2c n={n} {exec:?}");
            let mut z = vec![0.0f32; n * batch];
            let yy: Vec<Complex<f32>> = y[..nb].iter().cycle().take(nb * batch).copied().collect();
            c2r(
                &[1],
                Norm::Ortho,
                &ArrayView::from_slice(&yy, &[batch, nb]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut z, &[batch, n]).unwrap(),
                &exec,
            )
            .unwrap();
            for b in 0..batch {
                assert!(
                    z[b * n..(b + 1) * n]
                        .iter()
                        .zip(&refz)
                        .all(|(a, c)| a.to_bits() == c.to_bits()),
                    "c2r n={n} {exec:?}"
                );
            }
        }
    }
}

#[test]
fn plans_are_shared_and_report_their_recipe() {
    let planner = fft::FftPlanner::new();
    let a = planner.plan::<f32>(1024, Direction::Forward).unwrap();
    let b = planner.plan::<f32>(1024, Direction::Forward).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert_eq!(a.algorithm(), fft::Algorithm::Passes(vec![8, 8, 4, 4]));
    assert!(matches!(
        planner
            .plan::<f64>(4093, Direction::Forward)
            .unwrap()
            .algorithm(),
        fft::Algorithm::Bluestein(8192)
    ));
    // 2·5183 − 1 = 10365: three times 4096 fits before 16384.
    assert_eq!(
        planner
            .plan::<f32>(5183, Direction::Forward)
            .unwrap()
            .algorithm(),
        fft::Algorithm::Bluestein(12288)
    );
    assert!(matches!(
        planner
            .plan::<f64>(1 << 21, Direction::Forward)
            .unwrap()
            .algorithm(),
        fft::Algorithm::FourStep(1024, 2048)
    ));
    // A four-step line (past 16 MiB): the same bits on every tier and thread count.
    let n = 1 << 21;
    let mut rng = Rng::for_label("fft four-step", tessera_testkit::rng::seed());
    let x = rand_c::<f64>(&mut rng, n);
    let want = alone(n, Direction::Inverse, &x);
    for exec in execs() {
        assert_eq!(
            bits_c(&run_c2c(&[1, n], &[1], Direction::Inverse, &x, &exec)),
            want,
            "{exec:?}"
        );
    }
    // Against the closed form: x_j = e^(−2πi·m·j/n) (each point within an
    // ulp, its angle reduced exactly in integers) has the inverse transform
    // n at bin m and 0 elsewhere; the four steps meet the stated bound
    // (plus the input's rounding, √n·u·‖x‖₂ at most).
    let m = 123_457usize;
    let tone: Vec<Complex<f64>> = (0..n)
        .map(|j| {
            let r = (m * j) % n;
            let a = -2.0 * std::f64::consts::PI * (r as f64) / (n as f64);
            Complex::new(a.cos(), a.sin())
        })
        .collect();
    let got = run_c2c(&[n], &[0], Direction::Inverse, &tone, &seq());
    let err2: f64 = got
        .iter()
        .enumerate()
        .map(|(k, z)| {
            let want = if k == m { n as f64 } else { 0.0 };
            (z.re - want).powi(2) + z.im.powi(2)
        })
        .sum();
    let plan = FftPlan::<f64>::new(n, Direction::Inverse).unwrap();
    let ratio = err2.sqrt() / (f64::EPSILON / 2.0 * n as f64);
    assert!(
        ratio <= plan.error_factor() + 2.0,
        "four-step tone: {ratio} > {}",
        plan.error_factor() + 2.0
    );
    assert!(got[m].re > n as f64 * (1.0 - 1e-9), "{:?}", got[m]);
    // From an operand apart from its result the matrix between the steps
    // lives in the result (scratch of a few column blocks, not three
    // lines): the bits of the steps run in place over a copy, and of a
    // strided result (through the block buffers).
    let p = FftPlan::<f64>::new(n, Direction::Inverse).unwrap();
    let mut inplace = x.clone();
    p.run(&mut inplace, &seq()).unwrap();
    assert_eq!(bits_c(&inplace), want, "in place");
    let mut wide = vec![Complex::new(0.0, 0.0); 2 * n];
    let nd = fft::NdPlan::c2c(&[0], Direction::Inverse, Norm::None, &[n], DType::C128).unwrap();
    let xv = ArrayView::from_slice(&x, &[n]).unwrap();
    let mut wide_view = ArrayViewMut::from_slice_strided(&mut wide, &[n], &[2], 0).unwrap();
    nd.run(&xv, &mut wide_view, &seq()).unwrap();
    let strided: Vec<Complex<f64>> = wide.iter().step_by(2).copied().collect();
    assert_eq!(bits_c(&strided), want, "strided result");
    let mut y = vec![Complex::new(0.0, 0.0); n];
    let yv = ArrayViewMut::from_slice(&mut y, &[n]).unwrap();
    let apart = nd.scratch_bytes_for(&xv, &yv);
    assert!(apart < n * 16 / 8, "{apart} bytes for a line of {n} points");
    assert!(nd.scratch_bytes() >= 3 * n * 16, "{}", nd.scratch_bytes());
    // The plan's own entry points: with and without scratch, several lines.
    let p = FftPlan::<f64>::new(12, Direction::Forward).unwrap();
    let mut rng = Rng::for_label("fft plan", 1);
    let x = rand_c::<f64>(&mut rng, 24);
    let mut d = x.clone();
    let mut s = vec![Complex::new(0.0, 0.0); p.scratch_len()];
    p.run_with_scratch(&mut d, &mut s, &seq()).unwrap();
    let want = run_c2c(&[2, 12], &[1], Direction::Forward, &x, &seq());
    assert_eq!(bits_c(&d), bits_c(&want));
    let mut d2 = x.clone();
    p.run(&mut d2, &seq()).unwrap();
    assert_eq!(bits_c(&d2), bits_c(&want));
    assert!(matches!(
        p.run(&mut d2[..5], &seq()),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        p.run_with_scratch(&mut d2, &mut s[..1], &seq()),
        Err(Error::Length { .. })
    ));
    let std::sync::Arc { .. } = a;
}

#[test]
fn four_step_line_whose_sides_are_no_whole_number_of_tiles() {
    // 1500 · 1500 f32 points (18 MB, past 16 MiB): columns and rows of 1500
    // points, which the steps' gathers and scatters move eight at a time
    // and then four. In place (the matrix in scratch, the line written by
    // the last step), apart, and on every tier and thread count: the bits
    // of the scalar tier alone; against the closed form, the stated bound.
    let n = 1500 * 1500;
    let p = FftPlan::<f32>::new(n, Direction::Forward).unwrap();
    assert_eq!(p.algorithm(), fft::Algorithm::FourStep(1500, 1500));
    let mut rng = Rng::for_label("fft four-step tiles", tessera_testkit::rng::seed());
    let x = rand_c::<f32>(&mut rng, n);
    let want = alone(n, Direction::Forward, &x);
    for exec in execs() {
        assert_eq!(
            bits_c(&run_c2c(&[n], &[0], Direction::Forward, &x, &exec)),
            want,
            "{exec:?}"
        );
        let mut inplace = x.clone();
        p.run(&mut inplace, &exec).unwrap();
        assert_eq!(bits_c(&inplace), want, "in place {exec:?}");
    }
    // Against the DFT's sum in f64 (each angle reduced exactly in integers)
    // at bins in every tail (rows and columns 1496..1500) and elsewhere:
    // each bin within the stated bound of the whole line's error.
    let got = run_c2c(&[n], &[0], Direction::Forward, &x, &seq());
    let norm = x
        .iter()
        .map(|z| (z.re as f64).powi(2) + (z.im as f64).powi(2))
        .sum::<f64>()
        .sqrt();
    let bound = p.error_factor() * (f32::EPSILON as f64 / 2.0) * (n as f64).sqrt() * norm;
    for (k1, k2) in [
        (0, 0),
        (1, 0),
        (777, 518),
        (1496, 1499),
        (1499, 1497),
        (1497, 3),
        (5, 1498),
        (1499, 1499),
        (700, 1496),
    ] {
        let k = k1 + 1500 * k2;
        let (mut re, mut im) = (0.0f64, 0.0f64);
        for (j, z) in x.iter().enumerate() {
            let a = -2.0 * std::f64::consts::PI * (((j * k) % n) as f64) / (n as f64);
            let (s, c) = a.sin_cos();
            re += z.re as f64 * c - z.im as f64 * s;
            im += z.re as f64 * s + z.im as f64 * c;
        }
        let e = ((got[k].re as f64 - re).powi(2) + (got[k].im as f64 - im).powi(2)).sqrt();
        assert!(e <= bound, "bin {k}: error {e} > {bound}");
    }
}

// ---------- refusals ----------

#[test]
fn refusals_write_nothing() {
    let canary = Complex::new(-7.25f32, 3.5);
    let x = vec![Complex::new(1.0f32, 2.0); 24];
    let xr = vec![1.0f32; 24];
    let xd = vec![Complex::new(1.0f64, 2.0); 24];
    let e = seq();
    let run =
        |axes: &[usize], xs: &[usize], ys: &[usize], exec: &Exec| -> (Error, Vec<Complex<f32>>) {
            let mut y = vec![canary; 64];
            let err = c2c(
                axes,
                Direction::Forward,
                Norm::None,
                &ArrayView::from_slice(&x[..xs.iter().product::<usize>()], xs).unwrap(),
                &mut ArrayViewMut::from_slice(&mut y[..ys.iter().product::<usize>()], ys).unwrap(),
                exec,
            )
            .unwrap_err();
            (err, y)
        };
    let cases: Vec<(&[usize], &[usize], &[usize])> = vec![
        (&[], &[4, 6], &[4, 6]),
        (&[1, 0], &[4, 6], &[4, 6]),
        (&[1, 1], &[4, 6], &[4, 6]),
        (&[2], &[4, 6], &[4, 6]),
        (&[0], &[4, 6], &[6, 4]),
        (&[0], &[4, 6], &[24]),
    ];
    for (axes, xs, ys) in cases {
        let (err, y) = run(axes, xs, ys, &e);
        assert!(
            matches!(
                err,
                Error::Attribute { .. } | Error::Axis { .. } | Error::Shape { .. }
            ),
            "{err:?}"
        );
        assert!(y.iter().all(|v| *v == canary), "{axes:?} wrote");
    }
    // Wrong dtypes and mixed precision.
    let mut y = vec![canary; 24];
    let err = c2c(
        &[0],
        Direction::Forward,
        Norm::None,
        &ArrayView::from_slice(&xr, &[24]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[24]).unwrap(),
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, Error::DTypeUnsupported { .. }));
    let err = c2c(
        &[0],
        Direction::Forward,
        Norm::None,
        &ArrayView::from_slice(&xd, &[24]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[24]).unwrap(),
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }));
    let err = r2c(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&x, &[24]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[13]).unwrap(),
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, Error::DTypeUnsupported { .. }));
    let xr64 = vec![1.0f64; 24];
    let err = r2c(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&xr64, &[24]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[13]).unwrap(),
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }));
    // Mismatched bin counts.
    let err = r2c(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&xr, &[24]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[12]).unwrap(),
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, Error::Shape { .. }));
    let mut yr = vec![-7.25f32; 24];
    let err = c2r(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&x, &[12]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut yr, &[24]).unwrap(),
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, Error::Shape { .. }));
    let err = c2r(
        &[0],
        Norm::None,
        &ArrayView::from_slice(&xd, &[13]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut yr, &[24]).unwrap(),
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { .. }));
    // A destination reaching an element twice.
    let err = c2c(
        &[1],
        Direction::Forward,
        Norm::None,
        &ArrayView::from_slice(&x[..8], &[2, 4]).unwrap(),
        &mut ArrayViewMut::from_slice_strided(&mut y, &[2, 4], &[1, 1], 0).unwrap(),
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, Error::Layout { .. }));
    assert!(y.iter().all(|v| *v == canary));
    assert!(yr.iter().all(|v| *v == -7.25));
    // The dtype names are the API's.
    assert_eq!(<Complex<f32> as Element>::DTYPE, DType::C64);
}

/// `fft::error_factor` is the documented formula (`kernels/src/fft/bound.rs`,
/// ARCHITECTURE.md §5.8), computed here from the recipe's rules alone:
/// passes give 8·Σ p^{3/2} + 8 over the prime factors; a prime factor above
/// 61 runs Bluestein through m points, m the least power of two or three
/// times one not below 2n − 1, for 6·e(m) + 26; an even real length from
/// 512 on adds 8 to the complex half-length line's; a normalised transform
/// adds 2; axes add. (The bound tests above take ε from the function; this
/// pins the function.)
#[test]
fn the_error_factor_is_the_documented_formula() {
    fn factors(mut n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut p = 2;
        while p * p <= n {
            while n.is_multiple_of(p) {
                out.push(p);
                n /= p;
            }
            p += 1;
        }
        if n > 1 {
            out.push(n);
        }
        out
    }
    fn passes(n: usize) -> f64 {
        if n <= 1 {
            return 8.0;
        }
        8.0 * factors(n)
            .iter()
            .map(|&p| (p as f64).powf(1.5))
            .sum::<f64>()
            + 8.0
    }
    fn complex_line(n: usize) -> f64 {
        if factors(n).iter().any(|&p| p > 61) {
            let least = 2 * n - 1;
            let m = (0..64)
                .flat_map(|k| [1usize << k, 3usize << k])
                .filter(|&m| m >= least)
                .min()
                .unwrap();
            6.0 * passes(m) + 26.0
        } else {
            passes(n)
        }
    }
    fn real_line(n: usize) -> f64 {
        if n.is_multiple_of(2) && n >= 512 {
            complex_line(n / 2) + 8.0
        } else {
            complex_line(n)
        }
    }
    let lengths = [
        1usize,
        2,
        3,
        7,
        8,
        12,
        61,
        64,
        67,
        97,
        210,
        512,
        1000,
        1024,
        4096,
        5183,
        49152,
        65536,
        1 << 20,
    ];
    for double in [false, true] {
        for &n in &lengths {
            for dir in [Direction::Forward, Direction::Inverse] {
                let got = fft::error_factor(Transform::C2c, &[n], Norm::None, double, dir).unwrap();
                assert_eq!(got, complex_line(n), "c2c {n} {dir:?} double {double}");
                let got =
                    fft::error_factor(Transform::C2c, &[n], Norm::Ortho, double, dir).unwrap();
                assert_eq!(got, complex_line(n) + 2.0, "c2c ortho {n}");
            }
            let got =
                fft::error_factor(Transform::R2c, &[n], Norm::None, double, Direction::Forward)
                    .unwrap();
            assert_eq!(got, real_line(n), "r2c {n} double {double}");
            let got = fft::error_factor(
                Transform::C2r,
                &[n],
                Norm::Backward,
                double,
                Direction::Inverse,
            )
            .unwrap();
            assert_eq!(got, real_line(n) + 2.0, "c2r {n} double {double}");
        }
        // Axes add; for a real transform the last axis is the real one.
        let got = fft::error_factor(
            Transform::R2c,
            &[67, 12, 1024],
            Norm::None,
            double,
            Direction::Forward,
        )
        .unwrap();
        assert_eq!(got, complex_line(67) + complex_line(12) + real_line(1024));
    }
}
