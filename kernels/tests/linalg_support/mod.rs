//! Oracles for the linear-algebra tests, written here independently of the
//! engine: the four scalars as pairs of f64, double-double sums of exact
//! products, random unitary matrices by Gram–Schmidt in f64, matrices of
//! known spectra, and placement of a batch of matrices into any layout.

#![allow(dead_code, clippy::needless_range_loop)]

use num_complex::Complex;
use tessera::{available_tiers, ArrayView, ArrayViewMut, DType, Element, Tier};

/// The tiers an identity test runs, saying on stderr that the comparison
/// between tiers is skipped where this CPU runs the scalar tier alone.
pub fn compared_tiers() -> Vec<Tier> {
    let tiers = available_tiers();
    if tiers.len() < 2 {
        eprintln!("tier comparison skipped: only the scalar tier runs on this CPU");
    }
    tiers
}

/// A scalar under test, seen as a complex f64 pair.
pub trait S: Element + Copy + PartialEq + std::fmt::Debug + Send + Sync {
    const CPLX: bool;
    /// Unit roundoff.
    const U: f64;
    /// Least positive subnormal.
    const ETA: f64;
    /// The real dtype of its precision.
    const REAL: DType;
    /// The complex dtype of its precision.
    const CDT: DType;
    fn c(self) -> (f64, f64);
    fn of(re: f64, im: f64) -> Self;
    fn bits(self) -> (u64, u64);
}

impl S for f32 {
    const CPLX: bool = false;
    const U: f64 = 1.0 / 16_777_216.0;
    const ETA: f64 = f32::from_bits(1) as f64;
    const REAL: DType = DType::F32;
    const CDT: DType = DType::C64;
    fn c(self) -> (f64, f64) {
        (self as f64, 0.0)
    }
    fn of(re: f64, _: f64) -> Self {
        re as f32
    }
    fn bits(self) -> (u64, u64) {
        (self.to_bits() as u64, 0)
    }
}
impl S for f64 {
    const CPLX: bool = false;
    const U: f64 = 1.0 / 9_007_199_254_740_992.0;
    const ETA: f64 = f64::from_bits(1);
    const REAL: DType = DType::F64;
    const CDT: DType = DType::C128;
    fn c(self) -> (f64, f64) {
        (self, 0.0)
    }
    fn of(re: f64, _: f64) -> Self {
        re
    }
    fn bits(self) -> (u64, u64) {
        (self.to_bits(), 0)
    }
}
impl S for Complex<f32> {
    const CPLX: bool = true;
    const U: f64 = 1.0 / 16_777_216.0;
    const ETA: f64 = f32::from_bits(1) as f64;
    const REAL: DType = DType::F32;
    const CDT: DType = DType::C64;
    fn c(self) -> (f64, f64) {
        (self.re as f64, self.im as f64)
    }
    fn of(re: f64, im: f64) -> Self {
        Complex::new(re as f32, im as f32)
    }
    fn bits(self) -> (u64, u64) {
        (self.re.to_bits() as u64, self.im.to_bits() as u64)
    }
}
impl S for Complex<f64> {
    const CPLX: bool = true;
    const U: f64 = 1.0 / 9_007_199_254_740_992.0;
    const ETA: f64 = f64::from_bits(1);
    const REAL: DType = DType::F64;
    const CDT: DType = DType::C128;
    fn c(self) -> (f64, f64) {
        (self.re, self.im)
    }
    fn of(re: f64, im: f64) -> Self {
        Complex::new(re, im)
    }
    fn bits(self) -> (u64, u64) {
        (self.re.to_bits(), self.im.to_bits())
    }
}

/// γ(k) of the dtype (k doubled on complex dtypes).
pub fn gamma<T: S>(k: f64) -> f64 {
    let k = if T::CPLX { 2.0 * k } else { k };
    k * T::U / (1.0 - k * T::U)
}

/// ε(k) of the dtype (k doubled on complex dtypes).
pub fn eps_sub<T: S>(k: f64) -> f64 {
    let k = if T::CPLX { 2.0 * k } else { k };
    k * T::ETA
}

/// A splitmix64 stream.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// A double-double value: hi + lo.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

impl Dd {
    /// Add the exact product a·b.
    pub fn add_prod(&mut self, a: f64, b: f64) {
        let p = a * b;
        let e = a.mul_add(b, -p);
        self.add(p);
        self.lo += e;
    }
    pub fn add(&mut self, x: f64) {
        let (s, e) = two_sum(self.hi, x);
        let (h, l) = two_sum(s, e + self.lo);
        self.hi = h;
        self.lo = l;
    }
    pub fn value(self) -> f64 {
        self.hi + self.lo
    }
}

/// A complex double-double accumulator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cdd {
    pub re: Dd,
    pub im: Dd,
}
impl Cdd {
    /// Add the exact product a·b (a, b complex pairs).
    pub fn add_prod(&mut self, a: (f64, f64), b: (f64, f64)) {
        self.re.add_prod(a.0, b.0);
        self.re.add_prod(-a.1, b.1);
        self.im.add_prod(a.0, b.1);
        self.im.add_prod(a.1, b.0);
    }
    pub fn add(&mut self, a: (f64, f64)) {
        self.re.add(a.0);
        self.im.add(a.1);
    }
    pub fn value(self) -> (f64, f64) {
        (self.re.value(), self.im.value())
    }
}

pub fn conj(a: (f64, f64)) -> (f64, f64) {
    (a.0, -a.1)
}
pub fn cabs(a: (f64, f64)) -> f64 {
    a.0.hypot(a.1)
}

/// A dense matrix of complex f64 pairs, row-major.
#[derive(Clone, Debug)]
pub struct M {
    pub rows: usize,
    pub cols: usize,
    pub v: Vec<(f64, f64)>,
}

impl M {
    pub fn zeros(rows: usize, cols: usize) -> M {
        M {
            rows,
            cols,
            v: vec![(0.0, 0.0); rows * cols],
        }
    }
    pub fn at(&self, i: usize, j: usize) -> (f64, f64) {
        self.v[i * self.cols + j]
    }
    pub fn set(&mut self, i: usize, j: usize, x: (f64, f64)) {
        self.v[i * self.cols + j] = x;
    }
    pub fn identity(n: usize) -> M {
        let mut m = M::zeros(n, n);
        for i in 0..n {
            m.set(i, i, (1.0, 0.0));
        }
        m
    }
    /// The conjugate transpose.
    pub fn h(&self) -> M {
        let mut t = M::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                t.set(j, i, conj(self.at(i, j)));
            }
        }
        t
    }
    /// The product, each element a double-double sum of exact products.
    pub fn mul(&self, o: &M) -> M {
        assert_eq!(self.cols, o.rows);
        let mut p = M::zeros(self.rows, o.cols);
        for i in 0..self.rows {
            for j in 0..o.cols {
                let mut acc = Cdd::default();
                for k in 0..self.cols {
                    acc.add_prod(self.at(i, k), o.at(k, j));
                }
                p.set(i, j, acc.value());
            }
        }
        p
    }
    /// `|self|` elementwise.
    pub fn abs(&self) -> M {
        M {
            rows: self.rows,
            cols: self.cols,
            v: self.v.iter().map(|&x| (cabs(x), 0.0)).collect(),
        }
    }
    pub fn sub(&self, o: &M) -> M {
        M {
            rows: self.rows,
            cols: self.cols,
            v: self
                .v
                .iter()
                .zip(&o.v)
                .map(|(a, b)| (a.0 - b.0, a.1 - b.1))
                .collect(),
        }
    }
    /// The Frobenius norm.
    pub fn fro(&self) -> f64 {
        self.v
            .iter()
            .map(|x| x.0 * x.0 + x.1 * x.1)
            .sum::<f64>()
            .sqrt()
    }
    /// The 1-norm (largest column sum of moduli).
    pub fn one(&self) -> f64 {
        (0..self.cols)
            .map(|j| (0..self.rows).map(|i| cabs(self.at(i, j))).sum::<f64>())
            .fold(0.0, f64::max)
    }
    /// Rounded to a dtype.
    pub fn to<T: S>(&self) -> Vec<T> {
        self.v.iter().map(|&(re, im)| T::of(re, im)).collect()
    }
    /// From a dtype's row-major values.
    pub fn of<T: S>(rows: usize, cols: usize, v: &[T]) -> M {
        M {
            rows,
            cols,
            v: v.iter().map(|x| x.c()).collect(),
        }
    }
    pub fn scaled(&self, s: f64) -> M {
        M {
            rows: self.rows,
            cols: self.cols,
            v: self.v.iter().map(|x| (x.0 * s, x.1 * s)).collect(),
        }
    }
}

/// A random matrix, entries uniform in [-1, 1) (imaginary parts too on a
/// complex dtype).
pub fn random(rows: usize, cols: usize, cplx: bool, rng: &mut Rng) -> M {
    let mut m = M::zeros(rows, cols);
    for x in m.v.iter_mut() {
        *x = (rng.unit(), if cplx { rng.unit() } else { 0.0 });
    }
    m
}

/// A random unitary (orthogonal on real) matrix: Gram–Schmidt twice on a
/// random one, in f64.
pub fn unitary(n: usize, cplx: bool, rng: &mut Rng) -> M {
    let a = random(n, n, cplx, rng);
    let mut q = M::zeros(n, n);
    for j in 0..n {
        let mut v: Vec<(f64, f64)> = (0..n).map(|i| a.at(i, j)).collect();
        for _ in 0..2 {
            for p in 0..j {
                // v -= q_p (q_pᴴ v)
                let mut d = (0.0, 0.0);
                for i in 0..n {
                    let x = conj(q.at(i, p));
                    d.0 += x.0 * v[i].0 - x.1 * v[i].1;
                    d.1 += x.0 * v[i].1 + x.1 * v[i].0;
                }
                for i in 0..n {
                    let x = q.at(i, p);
                    v[i].0 -= x.0 * d.0 - x.1 * d.1;
                    v[i].1 -= x.0 * d.1 + x.1 * d.0;
                }
            }
        }
        let nrm = v.iter().map(|x| x.0 * x.0 + x.1 * x.1).sum::<f64>().sqrt();
        for i in 0..n {
            q.set(i, j, (v[i].0 / nrm, v[i].1 / nrm));
        }
    }
    q
}

/// `Q diag(w) Qᴴ` for a random unitary Q.
pub fn with_spectrum(w: &[f64], cplx: bool, rng: &mut Rng) -> M {
    let n = w.len();
    let q = unitary(n, cplx, rng);
    let mut qd = q.clone();
    for i in 0..n {
        for j in 0..n {
            let x = q.at(i, j);
            qd.set(i, j, (x.0 * w[j], x.1 * w[j]));
        }
    }
    let mut a = qd.mul(&q.h());
    // Exactly Hermitian: the diagonal real, the upper the lower's conjugate.
    for i in 0..n {
        let d = a.at(i, i);
        a.set(i, i, (d.0, 0.0));
        for j in 0..i {
            a.set(j, i, conj(a.at(i, j)));
        }
    }
    a
}

/// Eigenvalues spread geometrically from 1 down to 1/cond (n ≥ 1).
pub fn geometric(n: usize, cond: f64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            if n == 1 {
                1.0
            } else {
                cond.powf(-(i as f64) / (n as f64 - 1.0))
            }
        })
        .collect()
}

/// How a test lays a batch of matrices out in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lay {
    /// C order.
    C,
    /// Each matrix transposed in memory (column-major).
    Fortran,
    /// Rows and columns with gaps, the batch with a gap.
    Strided,
    /// Negative strides on both matrix axes.
    Reversed,
}

pub const LAYS: [Lay; 4] = [Lay::C, Lay::Fortran, Lay::Strided, Lay::Reversed];

/// A batch of row-major matrices (`shape` = batch…, rows, cols) placed in a
/// buffer of the layout: (buffer, strides, offset). Unused positions hold
/// `pad`.
pub fn place<T: S>(vals: &[T], shape: &[usize], lay: Lay, pad: T) -> (Vec<T>, Vec<isize>, usize) {
    let r = shape.len();
    let (m, n) = (shape[r - 2], shape[r - 1]);
    let count: usize = shape[..r - 2].iter().product();
    let (rs, cs, gap) = match lay {
        Lay::C => (n as isize, 1isize, 0usize),
        Lay::Fortran => (1, m as isize, 0),
        Lay::Strided => (2 * (n as isize) + 3, 2, 5),
        Lay::Reversed => (-(n as isize), -1, 0),
    };
    let per = m.max(1) * n.max(1) * 4 + 8 + gap;
    let len = count.max(1) * per + 16;
    let mut buf = vec![pad; len];
    let mut strides = vec![0isize; r];
    strides[r - 2] = rs;
    strides[r - 1] = cs;
    let mut acc = per as isize;
    for ax in (0..r - 2).rev() {
        strides[ax] = acc;
        acc *= shape[ax].max(1) as isize;
    }
    let base = match lay {
        Lay::Reversed => ((m.max(1) - 1) * n + n.max(1) - 1) + 4,
        _ => 4,
    };
    for b in 0..count {
        for i in 0..m {
            for j in 0..n {
                let p =
                    base as isize + b as isize * per as isize + i as isize * rs + j as isize * cs;
                buf[p as usize] = vals[(b * m + i) * n + j];
            }
        }
    }
    (buf, strides, base)
}

/// Read a batch back from a placed buffer into row-major values.
pub fn gather<T: S>(buf: &[T], shape: &[usize], strides: &[isize], offset: usize) -> Vec<T> {
    let r = shape.len();
    let total: usize = shape.iter().product();
    let mut out = Vec::with_capacity(total);
    let mut idx = vec![0usize; r];
    for _ in 0..total {
        let p: isize = offset as isize
            + idx
                .iter()
                .zip(strides)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>();
        out.push(buf[p as usize]);
        for ax in (0..r).rev() {
            idx[ax] += 1;
            if idx[ax] < shape[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
    out
}

/// A read view of a placed buffer.
pub fn view<'a, T: S>(
    buf: &'a [T],
    shape: &[usize],
    strides: &[isize],
    offset: usize,
) -> ArrayView<'a> {
    ArrayView::from_slice_strided(buf, shape, strides, offset).unwrap()
}

/// A write view of a placed buffer.
pub fn view_mut<'a, T: S>(
    buf: &'a mut [T],
    shape: &[usize],
    strides: &[isize],
    offset: usize,
) -> ArrayViewMut<'a> {
    ArrayViewMut::from_slice_strided(buf, shape, strides, offset).unwrap()
}

/// Bits of a slice, for identity comparisons.
pub fn bits<T: S>(v: &[T]) -> Vec<(u64, u64)> {
    v.iter().map(|x| x.bits()).collect()
}

/// Whether every part is NaN.
pub fn all_nan<T: S>(v: &[T]) -> bool {
    v.iter().all(|x| {
        let (re, im) = x.c();
        re.is_nan() && (!T::CPLX || im.is_nan())
    })
}
