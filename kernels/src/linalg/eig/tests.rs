//! Tests of the per-matrix eig kernel against constructions with known
//! spectra, built and checked in f64 complex arithmetic of their own.

use super::*;
use num_complex::Complex;

type C64 = Complex<f64>;

/// A small deterministic generator (xorshift64*), values in [−1, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (x as f64) / (1u64 << 52) as f64 - 1.0
    }
    fn c(&mut self, complex: bool) -> C64 {
        let re = self.next();
        C64::new(re, if complex { self.next() } else { 0.0 })
    }
}

fn matmul(n: usize, a: &[C64], b: &[C64]) -> Vec<C64> {
    let mut c = vec![C64::new(0.0, 0.0); n * n];
    for j in 0..n {
        for k in 0..n {
            let bk = b[k + j * n];
            for i in 0..n {
                c[i + j * n] += a[i + k * n] * bk;
            }
        }
    }
    c
}

/// The inverse by Gauss–Jordan with partial pivoting.
fn inverse(n: usize, a: &[C64]) -> Vec<C64> {
    let mut m = a.to_vec();
    let mut inv = vec![C64::new(0.0, 0.0); n * n];
    for i in 0..n {
        inv[i + i * n] = C64::new(1.0, 0.0);
    }
    for c in 0..n {
        let p = (c..n)
            .max_by(|&x, &y| m[x + c * n].norm().total_cmp(&m[y + c * n].norm()))
            .unwrap();
        for j in 0..n {
            m.swap(c + j * n, p + j * n);
            inv.swap(c + j * n, p + j * n);
        }
        let d = m[c + c * n];
        for j in 0..n {
            m[c + j * n] /= d;
            inv[c + j * n] /= d;
        }
        for r in 0..n {
            if r != c {
                let f = m[r + c * n];
                for j in 0..n {
                    let (mc, ic) = (m[c + j * n], inv[c + j * n]);
                    m[r + j * n] -= f * mc;
                    inv[r + j * n] -= f * ic;
                }
            }
        }
    }
    inv
}

/// A unitary (orthogonal where real) matrix: Gram–Schmidt, twice, on
/// random columns.
fn unitary(n: usize, complex: bool, rng: &mut Rng) -> Vec<C64> {
    let mut q: Vec<C64> = (0..n * n).map(|_| rng.c(complex)).collect();
    for j in 0..n {
        for _ in 0..2 {
            for k in 0..j {
                let mut d = C64::new(0.0, 0.0);
                for i in 0..n {
                    d += q[i + k * n].conj() * q[i + j * n];
                }
                for i in 0..n {
                    let qk = q[i + k * n];
                    q[i + j * n] -= d * qk;
                }
            }
        }
        let nr: f64 = (0..n).map(|i| q[i + j * n].norm_sqr()).sum::<f64>().sqrt();
        for i in 0..n {
            q[i + j * n] /= nr;
        }
    }
    q
}

fn adjoint(n: usize, a: &[C64]) -> Vec<C64> {
    let mut b = vec![C64::new(0.0, 0.0); n * n];
    for i in 0..n {
        for j in 0..n {
            b[j + i * n] = a[i + j * n].conj();
        }
    }
    b
}

/// A block-diagonal (real: 2×2 rotation-scaling blocks for pairs) matrix
/// with its known eigenvalues.
fn blocks(n: usize, complex: bool, rng: &mut Rng) -> (Vec<C64>, Vec<C64>) {
    let mut b = vec![C64::new(0.0, 0.0); n * n];
    let mut lam = Vec::new();
    let mut i = 0;
    while i < n {
        if complex {
            let l = rng.c(true) * 2.0;
            b[i + i * n] = l;
            lam.push(l);
            i += 1;
        } else if i + 1 < n && i % 3 == 1 {
            let (re, im) = (rng.next() * 2.0, 0.3 + rng.next().abs());
            b[i + i * n] = C64::new(re, 0.0);
            b[i + 1 + (i + 1) * n] = C64::new(re, 0.0);
            b[i + (i + 1) * n] = C64::new(im, 0.0);
            b[i + 1 + i * n] = C64::new(-im, 0.0);
            lam.push(C64::new(re, im));
            lam.push(C64::new(re, -im));
            i += 2;
        } else {
            let l = rng.next() * 2.0;
            b[i + i * n] = C64::new(l, 0.0);
            lam.push(C64::new(l, 0.0));
            i += 1;
        }
    }
    (b, lam)
}

/// `X B X⁻¹` with a well-conditioned X (I + 0.3 R/√n).
fn similar(n: usize, complex: bool, rng: &mut Rng) -> (Vec<C64>, Vec<C64>) {
    let (b, lam) = blocks(n, complex, rng);
    let s = 0.3 / (n as f64).sqrt();
    let mut x: Vec<C64> = (0..n * n).map(|_| rng.c(complex) * s).collect();
    for i in 0..n {
        x[i + i * n] += 1.0;
    }
    let xi = inverse(n, &x);
    (matmul(n, &matmul(n, &x, &b), &xi), lam)
}

/// `Q T Qᴴ`, T the blocks plus a random strict upper triangle (of
/// elements below 4/n: a random triangle of O(1) elements makes the
/// eigenvalues' condition grow exponentially with n).
fn schur_built(n: usize, complex: bool, rng: &mut Rng) -> (Vec<C64>, Vec<C64>) {
    let (mut t, lam) = blocks(n, complex, rng);
    let s = (4.0 / n as f64).min(1.0);
    for j in 0..n {
        for i in 0..j {
            if t[i + j * n] == C64::new(0.0, 0.0) {
                t[i + j * n] = rng.c(complex) * s;
            }
        }
    }
    let q = unitary(n, complex, rng);
    (matmul(n, &matmul(n, &q, &t), &adjoint(n, &q)), lam)
}

fn to_t<T: Field>(a: &[C64]) -> Vec<T> {
    a.iter()
        .map(|c| T::from_parts(<T::Real as Real>::of(c.re), <T::Real as Real>::of(c.im)))
        .collect()
}

fn to_c<F: Field>(a: &[F]) -> Vec<C64> {
    a.iter()
        .map(|c| C64::new(c.re().to_f64(), c.im().to_f64()))
        .collect()
}

struct Out<T: Field> {
    ok: bool,
    w: Vec<Cx<T>>,
    v: Vec<Cx<T>>,
}

fn run_on<T: Field>(n: usize, a: &[T], vectors: bool, isa: Isa, exec: &Exec) -> Out<T> {
    let mut area_work = crate::linalg::work::test_area(|c| {
        EigWork::<T>::new(c, n, vectors);
    });
    let mut work = EigWork::<T>::new(
        &mut crate::linalg::work::Carve::new(&mut area_work),
        n,
        vectors,
    );
    let mut aa = a.to_vec();
    let mut w = vec![Cx::<T>::nan(); n];
    let mut v = vec![Cx::<T>::nan(); n * n];
    let ok = eig_one(
        n,
        &mut aa,
        &mut w,
        if vectors { Some(&mut v[..]) } else { None },
        &mut work,
        isa,
        exec,
    );
    Out { ok, w, v }
}

fn run<T: Field>(n: usize, a: &[T], vectors: bool) -> Out<T> {
    run_on(n, a, vectors, Isa::of(crate::best_tier()), &Exec::default())
}

fn unit<T: Field>() -> f64 {
    <T::Real as Real>::UNIT.to_f64()
}

/// γ(16n) of the contract (k doubled on complex).
fn g<T: Field>(n: usize) -> f64 {
    let k = (16 * n * if T::COMPLEX { 2 } else { 1 }) as f64;
    let u = unit::<T>();
    k * u / (1.0 - k * u)
}

fn fro(a: &[C64]) -> f64 {
    a.iter().map(|x| x.norm_sqr()).sum::<f64>().sqrt()
}

/// Nearest matching of computed to known eigenvalues: the largest error.
fn match_err(w: &[C64], lam: &[C64]) -> f64 {
    let mut used = vec![false; w.len()];
    let mut worst: f64 = 0.0;
    for l in lam {
        let (mut bi, mut bd) = (usize::MAX, f64::INFINITY);
        for (i, x) in w.iter().enumerate() {
            let d = (x - l).norm();
            if !used[i] && d < bd {
                bd = d;
                bi = i;
            }
        }
        used[bi] = true;
        worst = worst.max(bd);
    }
    worst
}

/// The residual ratio ‖A V − V W‖_F / (‖A‖_F n u + √n h) (returned, below
/// 60; h the contract's absolute term for results rounded below the least
/// normal number, 0 where none is) and unit column norms, on values in f64.
fn check_res<T: Field>(n: usize, a: &[C64], w: &[C64], v: &[C64], h: f64, what: &str) -> f64 {
    let u = unit::<T>() * if T::COMPLEX { 2.0 } else { 1.0 };
    let av = matmul(n, a, v);
    let mut r = 0.0;
    for j in 0..n {
        for i in 0..n {
            r += (av[i + j * n] - v[i + j * n] * w[j]).norm_sqr();
        }
    }
    let ratio = r.sqrt() / (fro(a).max(f64::MIN_POSITIVE) * n as f64 * u + (n as f64).sqrt() * h);
    assert!(ratio < 60.0, "{what}: residual ratio {ratio}");
    for j in 0..n {
        let nr = fro(&v[j * n..(j + 1) * n]);
        assert!(
            (nr - 1.0).abs() <= g::<T>(n),
            "{what}: column {j} norm {nr}"
        );
    }
    ratio
}

/// Every check that needs no known spectrum: [`check_res`], pairs and +0
/// parts on real input, largest element real.
fn check_out<T: Field>(n: usize, a: &[C64], out: &Out<T>, what: &str) -> f64 {
    assert!(out.ok, "{what}: not converged");
    let w = to_c(&out.w);
    let v = to_c(&out.v);
    let ratio = check_res::<T>(n, a, &w, &v, 0.0, what);
    for j in 0..n {
        let col = &v[j * n..(j + 1) * n];
        let big = col.iter().map(|x| x.norm()).fold(0.0, f64::max);
        let real_big = col
            .iter()
            .any(|x| x.im == 0.0 && x.norm() >= big * (1.0 - 1e-3) && (!T::COMPLEX || x.re > 0.0));
        assert!(real_big, "{what}: column {j} has no real largest element");
    }
    if !T::COMPLEX {
        let mut j = 0;
        while j < n {
            let wj = out.w[j];
            if wj.im() == <T::Real as Field>::ZERO {
                assert_eq!(wj.im().to_f64().to_bits(), 0, "{what}: −0 imaginary part");
                for i in 0..n {
                    let x = out.v[i + j * n].im().to_f64();
                    assert_eq!(x.to_bits(), 0, "{what}: vector {j} imaginary part");
                }
                j += 1;
            } else {
                assert!(
                    wj.im() > <T::Real as Field>::ZERO,
                    "{what}: pair order at {j}"
                );
                assert!(j + 1 < n, "{what}: unpaired");
                assert_eq!(out.w[j + 1], wj.conj(), "{what}: pair {j}");
                for i in 0..n {
                    assert_eq!(out.v[i + (j + 1) * n], out.v[i + j * n].conj());
                }
                j += 2;
            }
        }
    }
    ratio
}

fn known<T: Field>(sizes: &[usize], seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let mut worst: f64 = 0.0;
    for &n in sizes {
        for build in 0..2 {
            let (a, lam) = if build == 0 {
                similar(n, T::COMPLEX, &mut rng)
            } else {
                schur_built(n, T::COMPLEX, &mut rng)
            };
            let at: Vec<T> = to_t(&a);
            let ac = to_c(&at); // the matrix as rounded
            let what = format!("{} n={n} build={build}", std::any::type_name::<T>());
            let out = run(n, &at, true);
            worst = worst.max(check_out(n, &ac, &out, &what));
            let tol = 200.0 * g::<T>(n) * fro(&ac).max(1.0) + 1e-300;
            let e = match_err(&to_c(&out.w), &lam);
            assert!(e <= tol, "{what}: eigenvalue error {e} > {tol}");
            let vals = run(n, &at, false);
            assert!(vals.ok);
            let e = match_err(&to_c(&vals.w), &lam);
            assert!(e <= tol, "{what}: values-only eigenvalue error {e} > {tol}");
        }
    }
    worst
}

const SIZES: &[usize] = &[1, 2, 3, 5, 10, 50];

#[test]
fn known_spectra_f32() {
    let r = known::<f32>(SIZES, 1);
    eprintln!("f32 worst residual ratio {r}");
}

#[test]
fn known_spectra_f64() {
    let r = known::<f64>(SIZES, 2);
    eprintln!("f64 worst residual ratio {r}");
}

#[test]
fn known_spectra_c64() {
    let r = known::<Complex<f32>>(SIZES, 3);
    eprintln!("c64 worst residual ratio {r}");
}

#[test]
fn known_spectra_c128() {
    let r = known::<Complex<f64>>(SIZES, 4);
    eprintln!("c128 worst residual ratio {r}");
}

/// Orders whose Schur iteration runs on columns spread a cache line apart
/// (n columns of 512 bytes): the stated residual bounds hold there too.
#[test]
fn known_spectra_spread_columns() {
    known::<f64>(&[64], 9);
    known::<Complex<f64>>(&[32], 10);
    known::<f32>(&[128], 11);
    known::<Complex<f32>>(&[64], 12);
}

/// The n×n column-major `x` on columns `ld` apart, `gap` between them.
fn spread<E: Copy>(x: &[E], n: usize, ld: usize, gap: E) -> Vec<E> {
    let mut y = vec![gap; n * ld];
    for c in 0..n {
        y[c * ld..c * ld + n].copy_from_slice(&x[c * n..c * n + n]);
    }
    y
}

/// The Schur iteration on columns `ld` apart gives the bits it gives on
/// columns n apart, real and complex, and leaves the gaps alone.
#[test]
fn schur_bits_do_not_depend_on_the_column_distance() {
    let isa = Isa::of(crate::best_tier());
    for n in [5usize, 17, 40] {
        let mut rng = Rng(n as u64);
        let h0: Vec<f64> = (0..n * n)
            .map(|k| if k % n > k / n + 1 { 0.0 } else { rng.next() })
            .collect();
        let hc0: Vec<Complex<f64>> = h0
            .iter()
            .enumerate()
            .map(|(k, &x)| Complex::new(x, if k % n > k / n + 1 { 0.0 } else { rng.next() }))
            .collect();
        let eye = |ld: usize| {
            let mut z = vec![0.0; n * ld];
            for i in 0..n {
                z[i + i * ld] = 1.0;
            }
            z
        };
        let ld = n + 3;
        // Real.
        let (mut h1, mut z1) = (h0.clone(), eye(n));
        let mut w1 = vec![Complex::new(0.0, 0.0); n];
        assert!(schur::real_schur(
            n,
            n,
            0,
            n - 1,
            &mut h1,
            Some(&mut z1),
            &mut w1,
            isa
        ));
        let (mut h2, mut z2) = (
            spread(&h0, n, ld, f64::NAN),
            spread(&eye(n), n, ld, f64::NAN),
        );
        let mut w2 = vec![Complex::new(0.0, 0.0); n];
        assert!(schur::real_schur(
            n,
            ld,
            0,
            n - 1,
            &mut h2,
            Some(&mut z2),
            &mut w2,
            isa
        ));
        for c in 0..n {
            for r in 0..ld {
                let (a, b) = (h2[r + c * ld], z2[r + c * ld]);
                if r < n {
                    assert_eq!(
                        a.to_bits(),
                        h1[r + c * n].to_bits(),
                        "h ({r}, {c}) at n = {n}"
                    );
                    assert_eq!(
                        b.to_bits(),
                        z1[r + c * n].to_bits(),
                        "z ({r}, {c}) at n = {n}"
                    );
                } else {
                    assert!(a.is_nan() && b.is_nan(), "a gap written at n = {n}");
                }
            }
        }
        let bits = |w: &[Complex<f64>]| -> Vec<(u64, u64)> {
            w.iter().map(|x| (x.re.to_bits(), x.im.to_bits())).collect()
        };
        assert_eq!(bits(&w1), bits(&w2));
        // Complex.
        let ceye = |ld: usize| -> Vec<Complex<f64>> {
            eye(ld).iter().map(|&x| Complex::new(x, 0.0)).collect()
        };
        let (mut h1, mut z1) = (hc0.clone(), ceye(n));
        assert!(schur::complex_schur(
            n,
            n,
            0,
            n - 1,
            &mut h1,
            Some(&mut z1),
            &mut w1,
            isa
        ));
        let gap = Complex::new(f64::NAN, f64::NAN);
        let (mut h2, mut z2) = (spread(&hc0, n, ld, gap), spread(&ceye(n), n, ld, gap));
        assert!(schur::complex_schur(
            n,
            ld,
            0,
            n - 1,
            &mut h2,
            Some(&mut z2),
            &mut w2,
            isa
        ));
        for c in 0..n {
            for r in 0..n {
                assert_eq!(bits(&[h2[r + c * ld]]), bits(&[h1[r + c * n]]));
                assert_eq!(bits(&[z2[r + c * ld]]), bits(&[z1[r + c * n]]));
            }
            for r in n..ld {
                assert!(h2[r + c * ld].re.is_nan() && z2[r + c * ld].re.is_nan());
            }
        }
        assert_eq!(bits(&w1), bits(&w2));
    }
}

#[test]
fn known_spectra_200() {
    known::<f64>(&[200], 5);
    known::<Complex<f64>>(&[200], 6);
    known::<f32>(&[200], 7);
    known::<Complex<f32>>(&[200], 8);
}

#[test]
fn order_zero() {
    let mut area_work = crate::linalg::work::test_area(|c| {
        EigWork::<f64>::new(c, 0, true);
    });
    let mut work = EigWork::<f64>::new(
        &mut crate::linalg::work::Carve::new(&mut area_work),
        0,
        true,
    );
    let mut w: Vec<Complex<f64>> = vec![];
    let mut v: Vec<Complex<f64>> = vec![];
    assert!(eig_one(
        0,
        &mut [],
        &mut w,
        Some(&mut v),
        &mut work,
        Isa::Plain,
        &Exec::default()
    ));
}

fn nonfinite<T: Field>() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for n in [1, 3] {
            let mut a: Vec<T> = (0..n * n)
                .map(|i| T::from_real(<T::Real as Real>::of(i as f64)))
                .collect();
            a[n * n - 1] = T::from_real(<T::Real as Real>::of(bad));
            assert!(!run(n, &a, true).ok);
            assert!(!run(n, &a, false).ok);
            if T::COMPLEX {
                a[n * n - 1] = T::from_parts(<T::Real as Field>::ZERO, <T::Real as Real>::of(bad));
                assert!(!run(n, &a, true).ok);
            }
        }
    }
}

#[test]
fn nonfinite_is_false() {
    nonfinite::<f32>();
    nonfinite::<f64>();
    nonfinite::<Complex<f32>>();
    nonfinite::<Complex<f64>>();
}

/// Roots 1, 2, −3 and 0.5 ± 2i of a real polynomial: its companion matrix.
fn companion<T: Field>() {
    let roots = [
        C64::new(1.0, 0.0),
        C64::new(2.0, 0.0),
        C64::new(-3.0, 0.0),
        C64::new(0.5, 2.0),
        C64::new(0.5, -2.0),
    ];
    // Monic coefficients, c[k] of x^k.
    let mut c = vec![C64::new(1.0, 0.0)];
    for r in roots {
        let mut d = vec![C64::new(0.0, 0.0); c.len() + 1];
        for (k, &ck) in c.iter().enumerate() {
            d[k + 1] += ck;
            d[k] -= ck * r;
        }
        c = d;
    }
    let n = roots.len();
    let mut a = vec![C64::new(0.0, 0.0); n * n];
    for j in 0..n {
        a[j * n] = -c[n - 1 - j];
    }
    for i in 1..n {
        a[i + (i - 1) * n] = C64::new(1.0, 0.0);
    }
    let at: Vec<T> = to_t(&a);
    let out = run(n, &at, true);
    let what = format!("companion {}", std::any::type_name::<T>());
    check_out(n, &to_c(&at), &out, &what);
    let e = match_err(&to_c(&out.w), &roots);
    assert!(e < 1e4 * unit::<T>(), "{what}: {e}");
}

#[test]
fn companion_matrices() {
    companion::<f32>();
    companion::<f64>();
    companion::<Complex<f32>>();
    companion::<Complex<f64>>();
}

/// A Jordan block of order 2 (eigenvalue 2) among distinct ones, in
/// Q T Qᴴ: eigenvalues within √u, vectors with small residuals.
fn defective<T: Field>() {
    let n = 5;
    let mut rng = Rng(99);
    let mut t = vec![C64::new(0.0, 0.0); n * n];
    let lam = [2.0, 2.0, -1.0, 0.5, 3.0];
    for i in 0..n {
        t[i + i * n] = C64::new(lam[i], 0.0);
        for j in i + 1..n {
            t[i + j * n] = rng.c(T::COMPLEX) * 0.5;
        }
    }
    t[n] = C64::new(1.0, 0.0);
    let q = unitary(n, T::COMPLEX, &mut rng);
    let a = matmul(n, &matmul(n, &q, &t), &adjoint(n, &q));
    let at: Vec<T> = to_t(&a);
    let out = run(n, &at, true);
    let what = format!("defective {}", std::any::type_name::<T>());
    check_out(n, &to_c(&at), &out, &what);
    let lc: Vec<C64> = lam.iter().map(|&x| C64::new(x, 0.0)).collect();
    let e = match_err(&to_c(&out.w), &lc);
    assert!(e < 100.0 * unit::<T>().sqrt(), "{what}: {e}");
}

#[test]
fn defective_benign() {
    defective::<f32>();
    defective::<f64>();
    defective::<Complex<f32>>();
    defective::<Complex<f64>>();
}

/// `D0 M D0⁻¹` with D0 of powers of two spread over 2^±24 and M = Q Λ Qᴴ
/// normal: balancing recovers M's conditioning, so eigenvalues are within
/// a few u·‖M‖ and the residuals are small in the D0⁻¹ norm.
fn badly_scaled<T: Field>() {
    let n = 10;
    let mut rng = Rng(7);
    let (b, lam) = blocks(n, T::COMPLEX, &mut rng);
    let q = unitary(n, T::COMPLEX, &mut rng);
    let m = matmul(n, &matmul(n, &q, &b), &adjoint(n, &q));
    let d: Vec<f64> = (0..n)
        .map(|i| 2f64.powi((i as i32 * 37 % 11 - 5) * 5))
        .collect();
    let mut a = m.clone();
    for j in 0..n {
        for i in 0..n {
            a[i + j * n] = m[i + j * n] * (d[i] / d[j]);
        }
    }
    let at: Vec<T> = to_t(&a);
    let out = run(n, &at, true);
    assert!(out.ok);
    let e = match_err(&to_c(&out.w), &lam);
    let tol = 50.0 * g::<T>(n) * fro(&m);
    assert!(
        e <= tol,
        "badly scaled {}: {e} > {tol}",
        std::any::type_name::<T>()
    );
    // Without balancing the error would be of order u·‖a‖, far larger.
    assert!(fro(&a) > 1e5 * fro(&m));
    let (w, v) = (to_c(&out.w), to_c(&out.v));
    let ac = to_c(&at);
    for j in 0..n {
        let mut r = 0.0;
        let mut dv = 0.0;
        for i in 0..n {
            let mut s = C64::new(0.0, 0.0);
            for k in 0..n {
                s += ac[i + k * n] * v[k + j * n];
            }
            r += ((s - w[j] * v[i + j * n]) / d[i]).norm_sqr();
            dv += (v[i + j * n] / d[i]).norm_sqr();
        }
        let bound = 60.0 * g::<T>(n) * fro(&m) * dv.sqrt();
        assert!(
            r.sqrt() <= bound,
            "badly scaled residual {j}: {} > {bound}",
            r.sqrt()
        );
    }
}

#[test]
fn badly_scaled_balancing() {
    badly_scaled::<f32>();
    badly_scaled::<f64>();
    badly_scaled::<Complex<f32>>();
    badly_scaled::<Complex<f64>>();
}

#[test]
fn balancing_scales() {
    // |a_ij| = |a_ji|: D = I (and no permutation on a full matrix).
    let n = 6;
    let mut rng = Rng(11);
    let mut a = vec![0.0f64; n * n];
    for j in 0..n {
        for i in 0..=j {
            let x = rng.next() * 10f64.powi((i + j) as i32 % 5);
            a[i + j * n] = x;
            a[j + i * n] = if (i + j) % 2 == 0 { x } else { -x };
        }
    }
    let (mut s, mut p) = (vec![0.0; n], vec![0; n]);
    let mut b = a.clone();
    let (lo, hi) = balance::balance(n, &mut b, &mut s, &mut p);
    assert_eq!((lo, hi), (0, n - 1));
    assert!(s.iter().all(|&x| x == 1.0));
    assert_eq!(a, b);
    // D0 M D0⁻¹ with M symmetric: the scales undo D0 up to a common factor.
    let d: Vec<f64> = (0..n).map(|i| 2f64.powi(8 * i as i32 - 20)).collect();
    let mut m = vec![0.0f64; n * n];
    for j in 0..n {
        for i in 0..=j {
            let x = 1.0 + rng.next().abs();
            m[i + j * n] = x;
            m[j + i * n] = x;
        }
    }
    let mut b: Vec<f64> = (0..n * n).map(|k| m[k] * d[k % n] / d[k / n]).collect();
    let (lo, hi) = balance::balance(n, &mut b, &mut s, &mut p);
    assert_eq!((lo, hi), (0, n - 1));
    let ratio: Vec<f64> = (0..n).map(|i| s[i] / d[i]).collect();
    for r in &ratio {
        assert!(
            r / ratio[0] > 0.2 && r / ratio[0] < 5.0,
            "scales {s:?} vs {d:?}"
        );
    }
    // Isolated eigenvalues: a triangular matrix is permuted, not scaled.
    let mut t = vec![0.0f64; 9];
    t[0] = 1.0;
    t[3] = 5.0;
    t[4] = 2.0;
    t[6] = 7.0;
    t[7] = 1e6;
    t[8] = 3.0;
    let (lo, hi) = balance::balance(3, &mut t.clone(), &mut s, &mut p);
    assert_eq!(lo, hi);
    let out = run(3, &t, true);
    let mut wr: Vec<f64> = out.w.iter().map(|x| x.re).collect();
    wr.sort_by(f64::total_cmp);
    assert_eq!(wr, vec![1.0, 2.0, 3.0]);
    check_out(3, &to_c(&t), &out, "triangular");
}

/// Eigenvalues scale exactly with a by a power of two, near underflow and
/// near overflow; vectors stay those of the unscaled matrix.
fn extreme<T: Field>(exps: &[i32]) {
    let n = 10;
    let mut rng = Rng(21);
    let (a, _) = similar(n, T::COMPLEX, &mut rng);
    let at: Vec<T> = to_t(&a);
    let base = run(n, &at, true);
    assert!(base.ok);
    for &e in exps {
        // 2^e in two steps (powi of a negative power goes through 1/2^−e).
        let f = 2f64.powi(e / 2) * 2f64.powi(e - e / 2);
        assert!(f > 0.0 && f.is_finite());
        let fr = <T::Real as Real>::of(f);
        let scaled: Vec<T> = at.iter().map(|x| x.scale(fr)).collect();
        let out = run(n, &scaled, true);
        assert!(out.ok, "2^{e}");
        let wb = to_c(&base.w);
        // Part by part (num_complex's division by a real goes through 1/f).
        let ws: Vec<C64> = to_c(&out.w)
            .iter()
            .map(|x| C64::new(x.re / f, x.im / f))
            .collect();
        // The matrix solved, back in unscaled terms (exact: f is a power
        // of two): a itself unless subnormal elements lost bits.
        let solved: Vec<C64> = to_c(&scaled)
            .iter()
            .map(|x| C64::new(x.re / f, x.im / f))
            .collect();
        if solved == to_c(&at) {
            let e2 = match_err(&ws, &wb);
            assert!(e2 <= 100.0 * g::<T>(n) * fro(&solved), "2^{e}: {e2}");
        }
        // h = ε(16n) (k doubled on complex), in unscaled terms.
        let eta = <T::Real as Real>::MIN_SUBNORMAL.to_f64();
        let h = (16 * n * if T::COMPLEX { 2 } else { 1 }) as f64 * eta / f;
        check_res::<T>(n, &solved, &ws, &to_c(&out.v), h, "scaled vectors");
    }
}

#[test]
fn extreme_scales() {
    extreme::<f32>(&[-140, -100, 100, 120]);
    extreme::<Complex<f32>>(&[-140, -100, 100, 120]);
    extreme::<f64>(&[-1060, -1000, 1000, 1015]);
    extreme::<Complex<f64>>(&[-1060, -1000, 1000, 1015]);
}

#[test]
fn zeros_and_tiny() {
    for n in [1, 2, 5] {
        let z = vec![0.0f64; n * n];
        let out = run(n, &z, true);
        assert!(out.ok);
        assert!(out.w.iter().all(|x| x.re == 0.0 && x.im == 0.0));
        let z = vec![f64::MIN_POSITIVE / 1024.0; n * n];
        let out = run(n, &z, true);
        assert!(out.ok);
        assert!(out.w.iter().all(|x| x.re.is_finite() && x.im.is_finite()));
        let z = vec![f64::MAX / 8.0; n * n];
        let out = run(n, &z, true);
        assert!(out.ok);
        assert!(out.w.iter().all(|x| x.re.is_finite() && x.im.is_finite()));
    }
}

fn same_bits<T: Field>(n: usize, seed: u64) {
    let mut rng = Rng(seed);
    let (a, _) = schur_built(n, T::COMPLEX, &mut rng);
    let at: Vec<T> = to_t(&a);
    for vectors in [true, false] {
        let first = run_on(n, &at, vectors, Isa::Plain, &Exec::default().threads(1));
        assert!(first.ok);
        let bits = |o: &Out<T>| {
            let mut b: Vec<u64> = to_c(&o.w)
                .iter()
                .flat_map(|x| [x.re.to_bits(), x.im.to_bits()])
                .collect();
            if vectors {
                b.extend(
                    to_c(&o.v)
                        .iter()
                        .flat_map(|x| [x.re.to_bits(), x.im.to_bits()]),
                );
            }
            b
        };
        let want = bits(&first);
        for tier in crate::linalg::eigh::testutil::compared_tiers() {
            for t in [1, 2, 7] {
                let o = run_on(n, &at, vectors, Isa::of(tier), &Exec::on(tier).threads(t));
                assert!(bits(&o) == want, "{tier:?} threads {t}");
            }
        }
    }
}

#[test]
fn bits_independent_of_threads_and_tiers() {
    same_bits::<f32>(30, 31);
    same_bits::<f64>(30, 32);
    same_bits::<Complex<f32>>(30, 33);
    same_bits::<Complex<f64>>(30, 34);
}

/// Sparse matrices (most elements zero, triangular ones among them): the
/// balancing's permutations and their undoing on the vectors.
fn sparse<T: Field>(seed: u64) {
    let mut rng = Rng(seed);
    for n in [2, 3, 4, 6, 10] {
        for trial in 0..30 {
            let keep = [0.15, 0.3, 0.5][trial % 3];
            let mut a = vec![C64::new(0.0, 0.0); n * n];
            for (k, x) in a.iter_mut().enumerate() {
                let lower = k % n > k / n;
                if (trial % 5 == 0 && lower) || (trial % 5 == 1 && !lower && k % n != k / n) {
                    continue;
                }
                if rng.next().abs() < keep || k % (n + 1) == 0 {
                    *x = rng.c(T::COMPLEX);
                }
            }
            let at: Vec<T> = to_t(&a);
            let out = run(n, &at, true);
            let what = format!("sparse {} n={n} trial {trial}", std::any::type_name::<T>());
            check_out(n, &to_c(&at), &out, &what);
        }
    }
}

#[test]
fn sparse_permuted() {
    sparse::<f32>(41);
    sparse::<f64>(42);
    sparse::<Complex<f32>>(43);
    sparse::<Complex<f64>>(44);
}

/// This thread's CPU time in seconds (schedstat), wall time where absent:
/// timings on a shared machine.
fn cpu_now() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ns| ns * 1e-9)
        .unwrap_or_else(|| {
            use std::time::{SystemTime, UNIX_EPOCH};
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0)
        })
}

/// Timing at order 1024 (run with `--release --ignored --nocapture`).
#[test]
#[ignore = "timing"]
fn perf_1024() {
    let n = 1024;
    let mut rng = Rng(5);
    let a: Vec<f64> = (0..n * n).map(|_| rng.next()).collect();
    let ac: Vec<Complex<f64>> = (0..n * n)
        .map(|_| Complex::new(rng.next(), rng.next()))
        .collect();
    let isa = Isa::of(crate::best_tier());
    for vectors in [false, true] {
        let t = cpu_now();
        let o = run_on(n, &a, vectors, isa, &Exec::default());
        eprintln!(
            "f64 n={n} vectors={vectors}: {:.3}s ok={}",
            cpu_now() - t,
            o.ok
        );
        let t = cpu_now();
        let o = run_on(n, &ac, vectors, isa, &Exec::default());
        eprintln!(
            "c128 n={n} vectors={vectors}: {:.3}s ok={}",
            cpu_now() - t,
            o.ok
        );
    }
}

/// The phases' times at order 1024, f64 with vectors (run with
/// `--release --ignored --nocapture`).
#[test]
#[ignore = "timing"]
fn perf_phases_1024() {
    let n = 1024;
    let mut rng = Rng(5);
    let mut h: Vec<f64> = (0..n * n).map(|_| rng.next()).collect();
    let isa = Isa::of(crate::best_tier());
    let (mut s, mut p) = (vec![0.0; n], vec![0; n]);
    let (mut tau, mut y, mut vt) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut z = vec![0.0; n * n];
    let mut w = vec![Complex::new(0.0, 0.0); n];
    let t = cpu_now();
    let (lo, hi) = balance::balance(n, &mut h, &mut s, &mut p);
    eprintln!("balance {:.3}s", cpu_now() - t);
    let t = cpu_now();
    hessenberg::reduce(n, lo, hi, &mut h, &mut tau, &mut y, &mut vt, isa);
    eprintln!("hessenberg {:.3}s", cpu_now() - t);
    let t = cpu_now();
    hessenberg::form_q(n, lo, hi, &h, &tau, &mut z, &mut vt, isa);
    hessenberg::clear_below(n, &mut h);
    eprintln!("form q {:.3}s", cpu_now() - t);
    // On columns as far apart as the pipeline puts them.
    let ld = super::schur_stride::<f64>(n);
    h.resize(n * ld, 0.0);
    z.resize(n * ld, 0.0);
    super::restride(&mut h, n, n, ld);
    super::restride(&mut z, n, n, ld);
    let t = cpu_now();
    let ok = schur::real_schur(n, ld, lo, hi, &mut h, Some(&mut z), &mut w, isa);
    eprintln!("schur (columns {ld} apart) {:.3}s {ok}", cpu_now() - t);
}

/// Small matrices of special values (zeros, ±1, subnormals, the largest
/// finite numbers, repeated entries): no panic, convergence, finite
/// results, unit columns.
fn special<T: Field>(seed: u64) {
    let mut rng = Rng(seed);
    let r = |x: f64| <T::Real as Real>::of(x);
    let vals = [
        0.0,
        1.0,
        -1.0,
        <T::Real as Real>::MIN_SUBNORMAL.to_f64(),
        -<T::Real as Real>::MIN_NORMAL.to_f64() * 3.0,
        <T::Real as Real>::MAX.to_f64() / 64.0,
        -<T::Real as Real>::MAX.to_f64() / 64.0,
        1e-20,
        0.5,
    ];
    let (mut tried, mut failed) = (0, 0);
    for n in 1..=7 {
        for _ in 0..40 {
            let pick = |rng: &mut Rng| vals[((rng.next() + 1.0) * 4.5) as usize % vals.len()];
            let a: Vec<T> = (0..n * n)
                .map(|_| {
                    let re = pick(&mut rng);
                    let im = if T::COMPLEX { pick(&mut rng) } else { 0.0 };
                    T::from_parts(r(re), r(im))
                })
                .collect();
            for vectors in [true, false] {
                let out = run(n, &a, vectors);
                tried += 1;
                if !out.ok {
                    // lahqr's formulas can stall where the magnitudes
                    // span the whole range (a bulge's vector underflows):
                    // false, as LAPACK's info > 0, never a panic.
                    failed += 1;
                    continue;
                }
                let w = to_c(&out.w);
                assert!(
                    w.iter().all(|x| x.re.is_finite() && x.im.is_finite()),
                    "{w:?}"
                );
                if vectors {
                    let v = to_c(&out.v);
                    for j in 0..n {
                        let nr = fro(&v[j * n..(j + 1) * n]);
                        assert!(
                            (nr - 1.0).abs() <= g::<T>(n),
                            "special {} n={n}: column {j} norm {nr}: a {:?} w {w:?} v {:?}",
                            std::any::type_name::<T>(),
                            to_c(&a),
                            &v[j * n..(j + 1) * n]
                        );
                    }
                }
            }
        }
    }
    eprintln!(
        "special {}: {failed} of {tried} not converged",
        std::any::type_name::<T>()
    );
    assert!(failed * 20 <= tried, "{failed} of {tried} not converged");
}

#[test]
fn special_values() {
    special::<f32>(51);
    special::<f64>(52);
    special::<Complex<f32>>(53);
    special::<Complex<f64>>(54);
}
