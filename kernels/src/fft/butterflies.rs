//! The butterflies: small DFTs with hard-coded operations (radix 2, 3, 4, 5, 8)
//! and a generic odd-prime DFT that pairs `j` with `p − j`.
//!
//! No butterfly fuses a multiply into an add: every tier computes each with
//! the same rounded products and sums in the same order.

use super::twiddle::root;
use super::FftFloat;
use crate::error::Result;
use num_complex::Complex;

/// `a·b`: `(a.re·b.re − a.im·b.im, a.re·b.im + a.im·b.re)`.
#[inline(always)]
pub(crate) fn cmul<T: FftFloat>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// The conjugate.
#[inline(always)]
pub(crate) fn conj<T: FftFloat>(a: Complex<T>) -> Complex<T> {
    Complex::new(a.re, -a.im)
}

#[inline(always)]
fn add<T: FftFloat>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    Complex::new(a.re + b.re, a.im + b.im)
}

#[inline(always)]
fn sub<T: FftFloat>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    Complex::new(a.re - b.re, a.im - b.im)
}

/// `∓i·z`: `−i·z` forward, `+i·z` inverse (exact).
#[inline(always)]
fn rot<T: FftFloat>(z: Complex<T>, inverse: bool) -> Complex<T> {
    if inverse {
        Complex::new(-z.im, z.re)
    } else {
        Complex::new(z.im, -z.re)
    }
}

/// `c·z` for a real `c`.
#[inline(always)]
fn scale<T: FftFloat>(c: T, z: Complex<T>) -> Complex<T> {
    Complex::new(c * z.re, c * z.im)
}

#[inline(always)]
pub(crate) fn bf2<T: FftFloat>(a0: Complex<T>, a1: Complex<T>) -> (Complex<T>, Complex<T>) {
    (add(a0, a1), sub(a0, a1))
}

#[inline(always)]
pub(crate) fn bf4<T: FftFloat>(
    a0: Complex<T>,
    a1: Complex<T>,
    a2: Complex<T>,
    a3: Complex<T>,
    inverse: bool,
) -> (Complex<T>, Complex<T>, Complex<T>, Complex<T>) {
    let t0 = add(a0, a2);
    let t1 = sub(a0, a2);
    let t2 = add(a1, a3);
    let t3 = rot(sub(a1, a3), inverse);
    (add(t0, t2), add(t1, t3), sub(t0, t2), sub(t1, t3))
}

/// The radix-3 constant `sin(2π/3)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Consts3<T> {
    pub(crate) s: T,
}

impl<T: FftFloat> Consts3<T> {
    pub(crate) fn new(_inverse: bool) -> Self {
        Consts3 {
            s: T::from_f64(super::twiddle::cos_sin(1, 3, T::TWIDDLE_DD).1),
        }
    }
}

#[inline(always)]
pub(crate) fn bf3<T: FftFloat>(
    a0: Complex<T>,
    a1: Complex<T>,
    a2: Complex<T>,
    c: &Consts3<T>,
    inverse: bool,
) -> (Complex<T>, Complex<T>, Complex<T>) {
    let t1 = add(a1, a2);
    let t2 = sub(a1, a2);
    let b0 = add(a0, t1);
    let m = sub(a0, scale(T::HALF, t1));
    let n = rot(scale(c.s, t2), inverse);
    (b0, add(m, n), sub(m, n))
}

/// The radix-5 constants `cos(2π/5)`, `cos(4π/5)`, `sin(2π/5)`, `sin(4π/5)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Consts5<T> {
    pub(crate) c1: T,
    pub(crate) c2: T,
    pub(crate) s1: T,
    pub(crate) s2: T,
}

impl<T: FftFloat> Consts5<T> {
    pub(crate) fn new(_inverse: bool) -> Self {
        let (c1, s1) = super::twiddle::cos_sin(1, 5, T::TWIDDLE_DD);
        let (c2, s2) = super::twiddle::cos_sin(2, 5, T::TWIDDLE_DD);
        Consts5 {
            c1: T::from_f64(c1),
            c2: T::from_f64(c2),
            s1: T::from_f64(s1),
            s2: T::from_f64(s2),
        }
    }
}

#[inline(always)]
pub(crate) fn bf5<T: FftFloat>(
    a: [Complex<T>; 5],
    c: &Consts5<T>,
    inverse: bool,
) -> [Complex<T>; 5] {
    let t1 = add(a[1], a[4]);
    let t2 = add(a[2], a[3]);
    let t3 = sub(a[1], a[4]);
    let t4 = sub(a[2], a[3]);
    let b0 = add(add(a[0], t1), t2);
    let m1 = add(add(a[0], scale(c.c1, t1)), scale(c.c2, t2));
    let m2 = add(add(a[0], scale(c.c2, t1)), scale(c.c1, t2));
    let n1 = rot(add(scale(c.s1, t3), scale(c.s2, t4)), inverse);
    let n2 = rot(sub(scale(c.s2, t3), scale(c.s1, t4)), inverse);
    [b0, add(m1, n1), add(m2, n2), sub(m2, n2), sub(m1, n1)]
}

/// The radix-8 constant `1/√2` (rounded once from the double-double root).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Consts8<T> {
    pub(crate) c: T,
}

impl<T: FftFloat> Consts8<T> {
    pub(crate) fn new(_inverse: bool) -> Self {
        Consts8 {
            c: T::from_f64(super::twiddle::cos_sin(1, 8, T::TWIDDLE_DD).0),
        }
    }
}

/// `w₈·z` with `w₈ = exp(∓iπ/4)`: `(z ∓ i·z)·(1/√2)`, i.e.
/// `((re + im)·c, (im − re)·c)` forward and `((re − im)·c, (im + re)·c)`
/// inverse.
#[inline(always)]
pub(crate) fn mul45<T: FftFloat>(z: Complex<T>, c: T, inverse: bool) -> Complex<T> {
    scale(c, add(z, rot(z, inverse)))
}

/// The radix-8 butterfly: the radix-4 butterflies of the even and of the
/// odd points, the odd ones' results `k` times `w₈^k` (`w₈^2 = ∓i` exact,
/// `w₈^3 = ∓i·w₈`), then `b_k = E_k + w₈^k·O_k`, `b_{k+4} = E_k − w₈^k·O_k`.
#[inline(always)]
pub(crate) fn bf8<T: FftFloat>(
    a: [Complex<T>; 8],
    c: &Consts8<T>,
    inverse: bool,
) -> [Complex<T>; 8] {
    let (e0, e1, e2, e3) = bf4(a[0], a[2], a[4], a[6], inverse);
    let (o0, o1, o2, o3) = bf4(a[1], a[3], a[5], a[7], inverse);
    let o1 = mul45(o1, c.c, inverse);
    let o2 = rot(o2, inverse);
    let o3 = rot(mul45(o3, c.c, inverse), inverse);
    [
        add(e0, o0),
        add(e1, o1),
        add(e2, o2),
        add(e3, o3),
        sub(e0, o0),
        sub(e1, o1),
        sub(e2, o2),
        sub(e3, o3),
    ]
}

/// The tables of a generic odd prime `p`: `cos(2π·i/p)`, `sin(2π·i/p)` for `i < p`.
#[derive(Clone, Debug)]
pub(crate) struct PrimeConsts<T> {
    p: usize,
    cos: Vec<T>,
    sin: Vec<T>,
}

impl<T: FftFloat> PrimeConsts<T> {
    pub(crate) fn new(p: usize, _inverse: bool) -> Result<Self> {
        let mut cos = super::plan::try_vec(p, "prime butterfly table")?;
        let mut sin = super::plan::try_vec(p, "prime butterfly table")?;
        for i in 0..p {
            let w = root::<T>(i as u128, p as u128, true);
            cos.push(w.re);
            sin.push(w.im);
        }
        Ok(PrimeConsts { p, cos, sin })
    }
}

/// The DFT of `p` points read by `get(j)`, written by `put(k, value)`;
/// `uv` holds `p − 1` points of work. For `k ≤ (p−1)/2`:
/// `re = a₀ + Σ_j cos(2πjk/p)·(a_j + a_{p−j})`, `im = Σ_j sin(2πjk/p)·(a_j − a_{p−j})`
/// (increasing `j`), then `b_k = re ∓ i·im`, `b_{p−k} = re ± i·im`.
#[inline(always)]
pub(crate) fn bf_prime<T: FftFloat>(
    get: impl Fn(usize) -> Complex<T>,
    mut put: impl FnMut(usize, Complex<T>),
    c: &PrimeConsts<T>,
    inverse: bool,
    uv: &mut [Complex<T>],
) {
    let p = c.p;
    let h = (p - 1) / 2;
    let a0 = get(0);
    let mut b0 = a0;
    for j in 1..=h {
        let (aj, ak) = (get(j), get(p - j));
        let u = add(aj, ak);
        uv[j - 1] = u;
        uv[h + j - 1] = sub(aj, ak);
        b0 = add(b0, u);
    }
    put(0, b0);
    for k in 1..=h {
        let mut re = a0;
        let mut im = Complex::new(T::ZERO, T::ZERO);
        let mut idx = 0usize;
        for j in 1..=h {
            idx += k;
            if idx >= p {
                idx -= p;
            }
            re = add(re, scale(c.cos[idx], uv[j - 1]));
            im = add(im, scale(c.sin[idx], uv[h + j - 1]));
        }
        let n = rot(im, inverse);
        put(k, add(re, n));
        put(p - k, sub(re, n));
    }
}
