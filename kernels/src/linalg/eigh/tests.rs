//! eigh against matrices of known spectra `Q diag(w) Qᴴ`.

use super::testutil::*;
use super::*;
use crate::linalg::work::{blocks_of, Carve};
use num_complex::Complex;

fn unit<T: Field>() -> f64 {
    T::Real::UNIT.to_f64()
}

fn eta<T: Field>() -> f64 {
    T::Real::MIN_SUBNORMAL.to_f64()
}

/// The input of a test: `Q diag(w) Qᴴ · 2^sc` in T, its strictly upper
/// triangle and its diagonal's imaginary parts NaN (never to be read).
fn input<T: Field>(n: usize, w: &[f64], sc: i32, rng: &mut Rng) -> Vec<T> {
    let q = unitary(n, T::COMPLEX, rng);
    let mut a = vec![T::nan(); n * n];
    for j in 0..n {
        for i in j..n {
            let mut s = C::new(0.0, 0.0);
            for k in 0..n {
                s += q[i + k * n] * w[k] * q[j + k * n].conj();
            }
            let s = C::new(ldexp(s.re, sc), ldexp(s.im, sc));
            a[i + j * n] = if i == j {
                T::from_parts(T::Real::of(s.re), T::Real::nan())
            } else {
                to_t(s)
            };
        }
    }
    a
}

/// The Hermitian matrix the input names, in f64, times 2^-sc.
fn named<T: Field>(n: usize, a: &[T], sc: i32) -> Vec<C> {
    let mut h = vec![C::new(0.0, 0.0); n * n];
    for j in 0..n {
        for i in j..n {
            let z = of_t(a[i + j * n]);
            let z = C::new(ldexp(z.re, -sc), ldexp(z.im, -sc));
            if i == j {
                h[i + j * n] = C::new(z.re, 0.0);
            } else {
                h[i + j * n] = z;
                h[j + i * n] = z.conj();
            }
        }
    }
    h
}

struct Seen {
    res: f64,
    orth: f64,
    eig: f64,
}

/// Runs eigh on one case and checks the bounds; returns the LAPACK-style
/// ratios (residual, orthogonality, eigenvalue error / (‖a‖₂ n ε)).
fn case<T: Field>(n: usize, kind: usize, sc: i32, seed: u64) -> Seen {
    let mut rng = Rng::new(seed);
    let u = unit::<T>();
    let mut w_exact = spectrum(kind, n, u, true, &mut rng);
    let a0 = input::<T>(n, &w_exact, sc, &mut rng);
    let h_a = named(n, &a0, sc);
    let mut area_work = crate::linalg::work::test_area(|c| {
        EighWork::<T>::new(c, n, true);
    });
    let mut work = EighWork::<T>::new(
        &mut crate::linalg::work::Carve::new(&mut area_work),
        n,
        true,
    );
    let mut a = a0.clone();
    let mut w = vec![T::Real::nan(); n];
    let mut v = vec![T::nan(); n * n];
    let ok = eigh_one(
        n,
        &mut a,
        &mut w,
        Some(&mut v),
        &mut work,
        Isa::Plain,
        &Exec::default(),
    );
    assert!(ok, "n {n} kind {} sc {sc}: no convergence", KINDS[kind]);
    let mut a = a0.clone();
    let mut w2 = vec![T::Real::nan(); n];
    let mut area_work2 = crate::linalg::work::test_area(|c| {
        EighWork::<T>::new(c, n, false);
    });
    let mut work2 = EighWork::<T>::new(
        &mut crate::linalg::work::Carve::new(&mut area_work2),
        n,
        false,
    );
    assert!(eigh_one(
        n,
        &mut a,
        &mut w2,
        None,
        &mut work2,
        Isa::Plain,
        &Exec::default()
    ));
    let wf: Vec<f64> = w.iter().map(|x| ldexp(x.to_f64(), -sc)).collect();
    let wf2: Vec<f64> = w2.iter().map(|x| ldexp(x.to_f64(), -sc)).collect();
    let vf: Vec<C> = v.iter().map(|&x| of_t(x)).collect();
    let cu = if T::COMPLEX { 2 } else { 1 };
    let g = gamma(16 * n * cu, u);
    let h = ldexp((16 * n * cu) as f64 * eta::<T>(), -sc);
    let eps = 2.0 * u;
    // Residual a − v diag w vᴴ.
    let mut r = h_a.clone();
    for j in 0..n {
        for i in 0..n {
            let mut s = C::new(0.0, 0.0);
            for k in 0..n {
                s += vf[i + k * n] * wf[k] * vf[j + k * n].conj();
            }
            r[i + j * n] -= s;
        }
    }
    let anorm = fro(&h_a);
    let res = fro(&r);
    let orth = orth_cols(&vf, n, n);
    assert!(
        res <= g * anorm + h,
        "n {n} {} sc {sc}: residual {res:e} > {:e}",
        KINDS[kind],
        g * anorm + h
    );
    assert!(
        orth <= g,
        "n {n} {} sc {sc}: orthogonality {orth:e} > {g:e}",
        KINDS[kind]
    );
    // Eigenvalues against the known ones.
    w_exact.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let a2 = w_exact.iter().fold(0.0f64, |m, &x| m.max(x.abs()));
    let mut eig = 0.0f64;
    for i in 0..n {
        assert!(i == 0 || wf[i - 1] <= wf[i], "not ascending");
        for (name, got) in [("vectors", wf[i]), ("values", wf2[i])] {
            let err = (got - w_exact[i]).abs();
            assert!(
                err <= g * a2 + h,
                "n {n} {} sc {sc} ({name}): eigenvalue {i} {got:e} vs {:e}",
                KINDS[kind],
                w_exact[i]
            );
            eig = eig.max(err / (a2 * n as f64 * eps));
        }
    }
    let nn = n.max(1) as f64;
    let s = Seen {
        res: if anorm > 0.0 {
            res / (anorm * nn * eps)
        } else {
            0.0
        },
        orth: orth / (nn * eps),
        eig,
    };
    assert!(
        s.res < 60.0 && s.orth < 60.0,
        "LAPACK ratios {} {}",
        s.res,
        s.orth
    );
    s
}

fn sweep<T: Field>(sizes: &[usize], big: i32) -> Seen {
    let mut worst = Seen {
        res: 0.0,
        orth: 0.0,
        eig: 0.0,
    };
    let mut seed = 1;
    for &n in sizes {
        for kind in 0..6 {
            for sc in [0, -big, big] {
                seed += 1;
                let s = case::<T>(n, kind, sc, seed);
                worst.res = worst.res.max(s.res);
                worst.orth = worst.orth.max(s.orth);
                worst.eig = worst.eig.max(s.eig);
            }
        }
    }
    eprintln!(
        "{}: worst ratios residual {:.3} orthogonality {:.3} eigenvalue {:.3}",
        std::any::type_name::<T>(),
        worst.res,
        worst.orth,
        worst.eig
    );
    worst
}

const SIZES: [usize; 7] = [0, 1, 2, 3, 5, 10, 50];

#[test]
fn known_spectra_f32() {
    sweep::<f32>(&SIZES, 120);
}

#[test]
fn known_spectra_f64() {
    sweep::<f64>(&SIZES, 1000);
}

#[test]
fn known_spectra_c64() {
    sweep::<Complex<f32>>(&SIZES, 120);
}

#[test]
fn known_spectra_c128() {
    sweep::<Complex<f64>>(&SIZES, 1000);
}

#[test]
#[ignore = "slow in debug"]
fn known_spectra_large() {
    sweep::<f32>(&[200], 120);
    sweep::<f64>(&[200], 1000);
    sweep::<Complex<f32>>(&[200], 120);
    sweep::<Complex<f64>>(&[200], 1000);
}

/// Orders above the blocking cutoff (panels of the blocked reduction, the
/// trailing update through the matrix products, then the unblocked tail):
/// the same bounds, and the same bits at any thread count and tier.
#[test]
fn blocked_reduction() {
    const { assert!(100 > super::tridiagonal::UNBLOCKED + super::tridiagonal::PANEL) };
    sweep::<f32>(&[100], 120);
    sweep::<f64>(&[100], 1000);
    sweep::<Complex<f32>>(&[100], 120);
    sweep::<Complex<f64>>(&[100], 1000);
    same_bits::<f32>(100);
    same_bits::<f64>(100);
    same_bits::<Complex<f32>>(100);
    same_bits::<Complex<f64>>(100);
}

/// A diagonal matrix, zeros and a 1×1: exact results.
#[test]
fn trivial_matrices() {
    let mut area_work = crate::linalg::work::test_area(|c| {
        EighWork::<f64>::new(c, 3, true);
    });
    let mut work = EighWork::<f64>::new(
        &mut crate::linalg::work::Carve::new(&mut area_work),
        3,
        true,
    );
    let mut a = vec![3.0, f64::NAN, f64::NAN, 0.0, -1.0, f64::NAN, 0.0, 0.0, 2.0];
    a[1] = 0.0;
    a[2] = 0.0;
    a[5] = 0.0;
    let mut w = [0.0; 3];
    let mut v = [0.0; 9];
    assert!(eigh_one(
        3,
        &mut a,
        &mut w,
        Some(&mut v),
        &mut work,
        Isa::Plain,
        &Exec::default()
    ));
    assert_eq!(w, [-1.0, 2.0, 3.0]);
    let mut z = vec![0.0f64; 9];
    assert!(eigh_one(
        3,
        &mut z,
        &mut w,
        Some(&mut v),
        &mut work,
        Isa::Plain,
        &Exec::default()
    ));
    assert_eq!(w, [0.0; 3]);
    assert_eq!(v, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    let mut empty: [f64; 0] = [];
    let mut w0: [f64; 0] = [];
    let mut v0: [f64; 0] = [];
    let mut area_w1 = crate::linalg::work::test_area(|c| {
        EighWork::<f64>::new(c, 0, true);
    });
    let mut w1 = EighWork::<f64>::new(&mut crate::linalg::work::Carve::new(&mut area_w1), 0, true);
    assert!(eigh_one(
        0,
        &mut empty,
        &mut w0,
        Some(&mut v0),
        &mut w1,
        Isa::Plain,
        &Exec::default()
    ));
}

fn nonfinite<T: Field>() {
    let n = 4;
    let mut rng = Rng::new(99);
    let w: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let a0 = input::<T>(n, &w, 0, &mut rng);
    let mut area_work = crate::linalg::work::test_area(|c| {
        EighWork::<T>::new(c, n, true);
    });
    let mut work = EighWork::<T>::new(
        &mut crate::linalg::work::Carve::new(&mut area_work),
        n,
        true,
    );
    for bad in [
        T::Real::nan(),
        T::Real::of(f64::INFINITY),
        T::Real::of(f64::NEG_INFINITY),
    ] {
        for (i, j) in [(0, 0), (3, 1), (3, 3)] {
            let mut a = a0.clone();
            a[i + j * n] = T::from_parts(bad, T::Real::ZERO);
            let mut ww = vec![T::Real::ZERO; n];
            let mut v = vec![T::ZERO; n * n];
            assert!(!eigh_one(
                n,
                &mut a.clone(),
                &mut ww,
                Some(&mut v),
                &mut work,
                Isa::Plain,
                &Exec::default()
            ));
            assert!(!eigh_one(
                n,
                &mut a,
                &mut ww,
                None,
                &mut work,
                Isa::Plain,
                &Exec::default()
            ));
        }
        if T::COMPLEX {
            let mut a = a0.clone();
            a[2] = T::from_parts(T::Real::ZERO, bad);
            let mut ww = vec![T::Real::ZERO; n];
            assert!(!eigh_one(
                n,
                &mut a,
                &mut ww,
                None,
                &mut work,
                Isa::Plain,
                &Exec::default()
            ));
        }
    }
}

#[test]
fn nonfinite_input_refused() {
    nonfinite::<f32>();
    nonfinite::<f64>();
    nonfinite::<Complex<f32>>();
    nonfinite::<Complex<f64>>();
}

fn bits<T: Field>(w: &[T::Real], v: &[T]) -> Vec<u64> {
    w.iter()
        .map(|x| x.to_f64().to_bits())
        .chain(
            v.iter()
                .flat_map(|x| [x.re().to_f64().to_bits(), x.im().to_f64().to_bits()]),
        )
        .collect()
}

fn same_bits<T: Field>(n: usize) {
    let mut rng = Rng::new(7);
    let w = spectrum(1, n, unit::<T>(), true, &mut rng);
    let a0 = input::<T>(n, &w, 0, &mut rng);
    let run = |isa: Isa, exec: Exec, vectors: bool| {
        let mut area_work = crate::linalg::work::test_area(|c| {
            EighWork::<T>::new(c, n, vectors);
        });
        let mut work = EighWork::<T>::new(
            &mut crate::linalg::work::Carve::new(&mut area_work),
            n,
            vectors,
        );
        let mut a = a0.clone();
        let mut ww = vec![T::Real::ZERO; n];
        let mut v = vec![T::ZERO; n * n];
        let vv = if vectors { Some(&mut v[..]) } else { None };
        assert!(eigh_one(n, &mut a, &mut ww, vv, &mut work, isa, &exec));
        bits::<T>(&ww, &v)
    };
    // Rotations applied at once (a work made without vectors) or queued
    // and applied by blocks of rows: the same bits.
    {
        let mut area_work = crate::linalg::work::test_area(|c| {
            EighWork::<T>::new(c, n, false);
        });
        let mut work = EighWork::<T>::new(
            &mut crate::linalg::work::Carve::new(&mut area_work),
            n,
            false,
        );
        let mut a = a0.clone();
        let mut ww = vec![T::Real::ZERO; n];
        let mut v = vec![T::ZERO; n * n];
        assert!(eigh_one(
            n,
            &mut a,
            &mut ww,
            Some(&mut v),
            &mut work,
            Isa::Plain,
            &Exec::default()
        ));
        assert!(bits::<T>(&ww, &v) == run(Isa::Plain, Exec::default(), true));
    }
    for vectors in [true, false] {
        let first = run(Isa::Plain, Exec::default().threads(1), vectors);
        for t in [2, 7] {
            assert!(first == run(Isa::Plain, Exec::default().threads(t), vectors));
        }
        for tier in compared_tiers() {
            assert!(
                first == run(Isa::of(tier), Exec::on(tier).threads(2), vectors),
                "{tier:?}"
            );
        }
    }
}

#[test]
fn bits_independent_of_threads_and_tiers() {
    for n in [1, 7, 40, 90] {
        same_bits::<f32>(n);
        same_bits::<f64>(n);
        same_bits::<Complex<f32>>(n);
        same_bits::<Complex<f64>>(n);
    }
}

fn extremes<T: Field>() {
    let big = T::Real::MAX * T::Real::of(0.25);
    let tiny = T::Real::MIN_SUBNORMAL;
    let one = T::Real::ONE;
    let n = 3;
    let cases: [[T::Real; 6]; 4] = [
        // lower triangle by columns: (0,0) (1,0) (2,0) (1,1) (2,1) (2,2)
        [big, big, -big, big, tiny, -big],
        [tiny, tiny, tiny, tiny, tiny, tiny],
        [big * T::Real::of(0.5), tiny, T::Real::ZERO, tiny, one, one],
        [T::Real::ZERO; 6],
    ];
    let g = gamma(16 * n * if T::COMPLEX { 2 } else { 1 }, unit::<T>());
    for c in cases {
        let mut a = vec![T::nan(); n * n];
        let mut it = c.iter();
        for j in 0..n {
            for i in j..n {
                a[i + j * n] = T::from_real(*it.next().unwrap());
            }
        }
        let mut area_work = crate::linalg::work::test_area(|c| {
            EighWork::<T>::new(c, n, true);
        });
        let mut work = EighWork::<T>::new(
            &mut crate::linalg::work::Carve::new(&mut area_work),
            n,
            true,
        );
        let mut w = vec![T::Real::nan(); n];
        let mut v = vec![T::nan(); n * n];
        let mut a1 = a.clone();
        assert!(eigh_one(
            n,
            &mut a1,
            &mut w,
            Some(&mut v),
            &mut work,
            Isa::Plain,
            &Exec::default()
        ));
        assert!(
            w.iter().all(|x| x.is_finite()) && v.iter().all(|x| x.is_finite()),
            "{c:?}"
        );
        assert!(w.windows(2).all(|p| p[0] <= p[1]));
        let vf: Vec<C> = v.iter().map(|&x| of_t(x)).collect();
        assert!(orth_cols(&vf, n, n) <= g, "{c:?}");
        // The trace is kept (to the bound).
        let tr: f64 = (0..n).map(|i| of_t(a[i + i * n]).re).sum();
        let sw: f64 = w.iter().map(|x| x.to_f64()).sum();
        let scale = w.iter().fold(0.0f64, |m, x| m.max(x.to_f64().abs()));
        assert!(
            (tr - sw).abs() <= 3.0 * g * scale + 1e-300,
            "{c:?}: trace {tr:e} vs {sw:e}"
        );
        let mut a2 = a.clone();
        assert!(eigh_one(
            n,
            &mut a2,
            &mut w,
            None,
            &mut work,
            Isa::Plain,
            &Exec::default()
        ));
        assert!(w.iter().all(|x| x.is_finite()));
    }
}

#[test]
fn extreme_values() {
    extremes::<f32>();
    extremes::<f64>();
    extremes::<Complex<f32>>();
    extremes::<Complex<f64>>();
}

/// Times of order 1024, or `TESSERA_TIMING_N` (run in release:
/// `cargo test --release … -- --ignored timing`).
#[test]
#[ignore = "timing"]
fn timing() {
    fn one<T: Field>(n: usize) {
        let mut rng = Rng::new(1);
        let w = spectrum(0, n, unit::<T>(), true, &mut rng);
        let mut a: Vec<T> = (0..n * n)
            .map(|_| to_t(C::new(rng.next(), rng.next())))
            .collect();
        for j in 0..n {
            a[j + j * n] = T::from_real(T::Real::of(w[j]));
        }
        let isa = Isa::of(crate::best_tier());
        for vectors in [true, false] {
            let mut area_work = crate::linalg::work::test_area(|c| {
                EighWork::<T>::new(c, n, vectors);
            });
            let mut work = EighWork::<T>::new(
                &mut crate::linalg::work::Carve::new(&mut area_work),
                n,
                vectors,
            );
            let mut a1 = a.clone();
            let mut ww = vec![T::Real::ZERO; n];
            let mut v = vec![T::ZERO; n * n];
            let t = std::time::Instant::now();
            let vv = if vectors { Some(&mut v[..]) } else { None };
            assert!(eigh_one(
                n,
                &mut a1,
                &mut ww,
                vv,
                &mut work,
                isa,
                &Exec::default()
            ));
            eprintln!(
                "eigh {} n {n} vectors {vectors}: {:.3} s",
                std::any::type_name::<T>(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    let n = timing_order();
    one::<f32>(n);
    one::<f64>(n);
    one::<Complex<f32>>(n);
    one::<Complex<f64>>(n);
}

fn queued_rotations<T: Field>() {
    let (rows, cols) = (50, 2100); // several row blocks, a partial one
    let mut rng = Rng::new(21);
    let z0: Vec<T> = (0..rows * cols)
        .map(|_| to_t(C::new(rng.next(), rng.next())))
        .collect();
    let rots: Vec<(usize, usize, T::Real, T::Real)> = (0..700)
        .map(|_| {
            let i = ((rng.next() + 1.0) * 0.5 * (cols - 1) as f64) as usize;
            let t = rng.next() * 3.0;
            let i = i.min(cols - 2);
            // Adjacent columns mostly, some farther apart.
            let j = if rng.next() < 0.5 {
                i + 1
            } else {
                (i + 1 + i / 3).min(cols - 1)
            };
            (i, j, T::Real::of(t.cos()), T::Real::of(t.sin()))
        })
        .collect();
    for isa in compared_tiers().into_iter().map(Isa::of) {
        let mut direct = z0.clone();
        for &(i, j, c, s) in &rots {
            ops::rot_cols(isa, &mut direct, rows, i, j, c, s);
        }
        let mut queued = z0.clone();
        let blocks = blocks_of(|c| {
            ops::Rotations::<T::Real>::new(c, 64);
        });
        let mut area = vec![crate::scratch::Block::default(); blocks];
        let mut q = ops::Rotations::<T::Real>::new(&mut Carve::new(&mut area), 64);
        for &(i, j, c, s) in &rots {
            q.push(isa, &mut queued, rows, (i, j), c, s);
        }
        q.flush(isa, &mut queued, rows);
        assert!(bits::<T>(&[], &direct) == bits::<T>(&[], &queued));
    }
}

#[test]
fn queued_rotations_same_bits() {
    queued_rotations::<f32>();
    queued_rotations::<f64>();
    queued_rotations::<Complex<f32>>();
    queued_rotations::<Complex<f64>>();
}
