//! svd against matrices of known singular values `U diag(s) Vᴴ`.

use super::*;
use crate::linalg::eigh::testutil::*;
use num_complex::Complex;

fn unit<T: Field>() -> f64 {
    T::Real::UNIT.to_f64()
}

/// `U diag(s) Vᴴ · 2^sc` (m×n) in T, U and V random unitaries.
fn input<T: Field>(m: usize, n: usize, s: &[f64], sc: i32, rng: &mut Rng) -> Vec<T> {
    let uq = unitary(m, T::COMPLEX, rng);
    let vq = unitary(n, T::COMPLEX, rng);
    let mut a = vec![T::ZERO; m * n];
    for j in 0..n {
        for i in 0..m {
            let mut z = C::new(0.0, 0.0);
            for (l, &sl) in s.iter().enumerate() {
                z += uq[i + l * m] * sl * vq[j + l * n].conj();
            }
            a[i + j * m] = to_t(C::new(ldexp(z.re, sc), ldexp(z.im, sc)));
        }
    }
    a
}

struct Out<T: Field> {
    s: Vec<T::Real>,
    u: Vec<T>,
    vh: Vec<T>,
}

fn run<T: Field>(
    m: usize,
    n: usize,
    a0: &[T],
    complete: Option<bool>,
    isa: Isa,
    exec: &Exec,
) -> Option<Out<T>> {
    let k = m.min(n);
    let (uc, vr) = match complete {
        Some(true) => (m, n),
        _ => (k, k),
    };
    let mut area_work = crate::linalg::work::test_area(|c| {
        SvdWork::<T>::new(c, m, n, complete.is_some());
    });
    let mut work = SvdWork::<T>::new(
        &mut crate::linalg::work::Carve::new(&mut area_work),
        m,
        n,
        complete.is_some(),
    );
    let mut a = a0.to_vec();
    let mut s = vec![T::Real::nan(); k];
    let mut u = vec![T::nan(); m * uc];
    let mut vh = vec![T::nan(); vr * n];
    let ok = if complete.is_some() {
        svd_one(
            m,
            n,
            &mut a,
            &mut s,
            Some((&mut u, uc)),
            Some((&mut vh, vr)),
            &mut work,
            isa,
            exec,
        )
    } else {
        svd_one(m, n, &mut a, &mut s, None, None, &mut work, isa, exec)
    };
    ok.then_some(Out { s, u, vh })
}

/// Ratios seen: residual, orthogonality (worse of u, vh), singular value
/// error, LAPACK-style (ε = 2u).
#[allow(clippy::needless_range_loop)]
fn case<T: Field>(m: usize, n: usize, kind: usize, sc: i32, seed: u64) -> [f64; 3] {
    let mut rng = Rng::new(seed);
    let u = unit::<T>();
    let k = m.min(n);
    let mut s_exact = spectrum(kind, k, u, false, &mut rng);
    for x in &mut s_exact {
        *x = x.abs();
    }
    let a0 = input::<T>(m, n, &s_exact, sc, &mut rng);
    let af: Vec<C> = a0
        .iter()
        .map(|&x| {
            let z = of_t(x);
            C::new(ldexp(z.re, -sc), ldexp(z.im, -sc))
        })
        .collect();
    let cu = if T::COMPLEX { 2 } else { 1 };
    let g = gamma((16 * m.max(n) + 100) * cu, u);
    let eps = 2.0 * u;
    let what = format!("{m}×{n} {} sc {sc}", KINDS[kind]);
    let reduced = run::<T>(m, n, &a0, Some(false), Isa::Plain, &Exec::default()).expect(&what);
    let complete = run::<T>(m, n, &a0, Some(true), Isa::Plain, &Exec::default()).expect(&what);
    let values = run::<T>(m, n, &a0, None, Isa::Plain, &Exec::default()).expect(&what);
    // Reduced and complete agree bit for bit on s and the first k vectors.
    for i in 0..k {
        assert_eq!(
            reduced.s[i].to_f64().to_bits(),
            complete.s[i].to_f64().to_bits()
        );
        for r in 0..m {
            assert!(reduced.u[r + i * m] == complete.u[r + i * m], "{what}: u");
        }
        for j in 0..n {
            assert!(
                reduced.vh[i + j * k] == complete.vh[i + j * n],
                "{what}: vh"
            );
        }
    }
    let anorm = fro(&af);
    let a2 = s_exact.iter().fold(0.0f64, |x, &y| x.max(y));
    let mut worst = [0.0f64; 3];
    if k == 0 {
        return worst; // nothing is written
    }
    for (out, uc, vr) in [(&reduced, k, k), (&complete, m, n)] {
        let uf: Vec<C> = out.u.iter().map(|&x| of_t(x)).collect();
        let vf: Vec<C> = out.vh.iter().map(|&x| of_t(x)).collect();
        let sf: Vec<f64> = out.s.iter().map(|x| ldexp(x.to_f64(), -sc)).collect();
        let mut r = af.clone();
        for j in 0..n {
            for i in 0..m {
                let mut z = C::new(0.0, 0.0);
                for l in 0..k {
                    z += uf[i + l * m] * sf[l] * vf[l + j * vr];
                }
                r[i + j * m] -= z;
            }
        }
        let res = fro(&r);
        let ou = orth_cols(&uf, m, uc);
        let ov = orth_rows(&vf, vr, n);
        assert!(
            res <= g * anorm,
            "{what}: residual {res:e} > {:e}",
            g * anorm
        );
        assert!(
            ou <= g && ov <= g,
            "{what}: orthogonality {ou:e} {ov:e} > {g:e}"
        );
        let mx = m.max(n) as f64;
        worst[0] = worst[0].max(if anorm > 0.0 {
            res / (anorm * mx * eps)
        } else {
            0.0
        });
        worst[1] = worst[1].max(ou.max(ov) / (mx * eps));
    }
    s_exact.sort_by(|x, y| y.partial_cmp(x).unwrap());
    for (name, out) in [("vectors", &complete), ("values", &values)] {
        for i in 0..k {
            let got = out.s[i];
            assert!(
                got >= T::Real::ZERO && (i == 0 || out.s[i - 1] >= got),
                "{what}: order"
            );
            if got == T::Real::ZERO {
                assert_eq!(got.to_f64().to_bits(), 0, "{what}: a zero is +0");
            }
            let err = (ldexp(got.to_f64(), -sc) - s_exact[i]).abs();
            assert!(
                err <= g * a2,
                "{what} ({name}): value {i} {got:?} vs {:e}",
                s_exact[i]
            );
            worst[2] = worst[2].max(err / (a2 * m.max(n) as f64 * eps));
        }
    }
    assert!(
        worst[0] < 50.0 && worst[1] < 50.0,
        "{what}: LAPACK ratios {worst:?}"
    );
    worst
}

fn sweep<T: Field>(shapes: &[(usize, usize)], big: i32) {
    let mut worst = [0.0f64; 3];
    let mut seed = 100;
    for &(m, n) in shapes {
        for kind in 0..6 {
            for sc in [0, -big, big] {
                seed += 1;
                let w = case::<T>(m, n, kind, sc, seed);
                for i in 0..3 {
                    worst[i] = worst[i].max(w[i]);
                }
            }
        }
    }
    eprintln!(
        "{}: worst ratios residual {:.3} orthogonality {:.3} value {:.3}",
        std::any::type_name::<T>(),
        worst[0],
        worst[1],
        worst[2]
    );
}

const SHAPES: [(usize, usize); 14] = [
    (0, 0),
    (0, 3),
    (3, 0),
    (1, 1),
    (2, 2),
    (3, 3),
    (5, 5),
    (10, 10),
    (1, 4),
    (4, 1),
    (3, 7),
    (9, 4),
    (20, 50),
    (50, 30),
];

#[test]
fn known_values_f32() {
    sweep::<f32>(&SHAPES, 120);
}

#[test]
fn known_values_f64() {
    sweep::<f64>(&SHAPES, 1000);
}

#[test]
fn known_values_c64() {
    sweep::<Complex<f32>>(&SHAPES, 120);
}

#[test]
fn known_values_c128() {
    sweep::<Complex<f64>>(&SHAPES, 1000);
}

#[test]
#[ignore = "slow in debug"]
fn known_values_large() {
    let shapes = [(50, 50), (200, 200), (200, 120), (120, 200)];
    sweep::<f32>(&shapes, 120);
    sweep::<f64>(&shapes, 1000);
    sweep::<Complex<f32>>(&shapes, 120);
    sweep::<Complex<f64>>(&shapes, 1000);
}

/// Shapes above the blocking cutoff (one or two panels of the blocked
/// reduction, the trailing update through the matrix products, then the
/// unblocked tail), tall and wide: the same bounds, and the same bits at
/// any thread count and tier.
#[test]
fn blocked_reduction() {
    const { assert!(90 > super::bidiagonal::UNBLOCKED) };
    const { assert!(100 > super::bidiagonal::UNBLOCKED + super::bidiagonal::PANEL) };
    let shapes = [(120, 90), (90, 120), (130, 100)];
    sweep::<f32>(&shapes, 120);
    sweep::<f64>(&shapes, 1000);
    sweep::<Complex<f32>>(&shapes, 120);
    sweep::<Complex<f64>>(&shapes, 1000);
    for (m, n) in [(120, 90), (100, 130)] {
        same_bits::<f32>(m, n);
        same_bits::<f64>(m, n);
        same_bits::<Complex<f32>>(m, n);
        same_bits::<Complex<f64>>(m, n);
    }
}

/// Rank-deficient: rank r < k, the rest exact zeros (+0) up to rounding.
#[test]
fn rank_deficient() {
    for (m, n, r) in [(6, 6, 2), (8, 5, 3), (4, 9, 1), (7, 7, 0)] {
        let mut rng = Rng::new(5);
        let k = m.min(n);
        let s: Vec<f64> = (0..k)
            .map(|i| if i < r { 1.0 + i as f64 } else { 0.0 })
            .collect();
        let a0 = input::<f64>(m, n, &s, 0, &mut rng);
        let out = run::<f64>(m, n, &a0, Some(true), Isa::Plain, &Exec::default()).unwrap();
        let g = gamma(16 * m.max(n) + 100, unit::<f64>());
        let a2 = if r > 0 { r as f64 } else { 1.0 };
        for (i, &x) in out.s.iter().enumerate() {
            let exact = if i < r { (r - i) as f64 } else { 0.0 };
            assert!(
                (x - exact).abs() <= g * a2,
                "{m}×{n} rank {r}: {x} vs {exact}"
            );
        }
        let uf: Vec<C> = out.u.iter().map(|&x| of_t(x)).collect();
        let vf: Vec<C> = out.vh.iter().map(|&x| of_t(x)).collect();
        assert!(orth_cols(&uf, m, m) <= g && orth_rows(&vf, n, n) <= g);
    }
}

fn nonfinite<T: Field>() {
    let (m, n) = (3, 5);
    let mut rng = Rng::new(3);
    let a0 = input::<T>(m, n, &[1.0, 0.5, 0.25], 0, &mut rng);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for at in [0, 7, 14] {
            for im in [false, true] {
                if im && !T::COMPLEX {
                    continue;
                }
                let mut a = a0.clone();
                let b = T::Real::of(bad);
                a[at] = if im {
                    T::from_parts(T::Real::ZERO, b)
                } else {
                    T::from_real(b)
                };
                for vec in [None, Some(false), Some(true)] {
                    assert!(run::<T>(m, n, &a, vec, Isa::Plain, &Exec::default()).is_none());
                    let at2: Vec<T> = (0..n * m).map(|i| a[(i % n) * m + i / n]).collect();
                    assert!(run::<T>(n, m, &at2, vec, Isa::Plain, &Exec::default()).is_none());
                }
            }
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

fn bits<T: Field>(o: &Out<T>) -> Vec<u64> {
    o.s.iter()
        .map(|x| x.to_f64().to_bits())
        .chain(
            o.u.iter()
                .chain(o.vh.iter())
                .flat_map(|x| [x.re().to_f64().to_bits(), x.im().to_f64().to_bits()]),
        )
        .collect()
}

fn same_bits<T: Field>(m: usize, n: usize) {
    let mut rng = Rng::new(11);
    let k = m.min(n);
    let s = spectrum(1, k, unit::<T>(), false, &mut rng);
    let a0 = input::<T>(m, n, &s, 0, &mut rng);
    for vec in [None, Some(false), Some(true)] {
        let first =
            bits(&run::<T>(m, n, &a0, vec, Isa::Plain, &Exec::default().threads(1)).unwrap());
        for t in [2, 7] {
            let o = run::<T>(m, n, &a0, vec, Isa::Plain, &Exec::default().threads(t)).unwrap();
            assert!(first == bits(&o));
        }
        for tier in compared_tiers() {
            let o = run::<T>(m, n, &a0, vec, Isa::of(tier), &Exec::on(tier).threads(2)).unwrap();
            assert!(first == bits(&o), "{tier:?}");
        }
    }
}

#[test]
fn bits_independent_of_threads_and_tiers() {
    for (m, n) in [(1, 1), (7, 7), (30, 12), (12, 30)] {
        same_bits::<f32>(m, n);
        same_bits::<f64>(m, n);
        same_bits::<Complex<f32>>(m, n);
        same_bits::<Complex<f64>>(m, n);
    }
}

fn extremes<T: Field>() {
    let big = T::Real::MAX * T::Real::of(0.25);
    let tiny = T::Real::MIN_SUBNORMAL;
    let (m, n) = (3, 2);
    let cases: [[T::Real; 6]; 4] = [
        [big, big, -big, big, tiny, -big],
        [tiny; 6],
        [big, tiny, T::Real::ZERO, tiny, T::Real::ONE, T::Real::ONE],
        [T::Real::ZERO; 6],
    ];
    let g = gamma((16 * 3 + 100) * if T::COMPLEX { 2 } else { 1 }, unit::<T>());
    for c in cases {
        let a: Vec<T> = c.iter().map(|&x| T::from_real(x)).collect();
        let at: Vec<T> = (0..6).map(|i| a[(i % 2) * 3 + i / 2]).collect();
        for (mm, nn, a) in [(m, n, &a), (n, m, &at)] {
            for vec in [None, Some(false), Some(true)] {
                let o = run::<T>(mm, nn, a, vec, Isa::Plain, &Exec::default()).expect("converges");
                assert!(
                    o.s.iter().all(|x| x.is_finite() && *x >= T::Real::ZERO),
                    "{c:?}"
                );
                assert!(o.s.windows(2).all(|p| p[0] >= p[1]));
                if let Some(full) = vec {
                    let (uc, vr) = if full { (mm, nn) } else { (2, 2) };
                    let uf: Vec<C> = o.u.iter().map(|&x| of_t(x)).collect();
                    let vf: Vec<C> = o.vh.iter().map(|&x| of_t(x)).collect();
                    assert!(
                        orth_cols(&uf, mm, uc) <= g && orth_rows(&vf, vr, nn) <= g,
                        "{c:?}"
                    );
                }
            }
        }
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
    fn one<T: Field>(m: usize, n: usize) {
        let mut rng = Rng::new(1);
        let a: Vec<T> = (0..m * n)
            .map(|_| to_t(C::new(rng.next(), rng.next())))
            .collect();
        let isa = Isa::of(crate::best_tier());
        for vec in [Some(false), None] {
            let t = std::time::Instant::now();
            assert!(run::<T>(m, n, &a, vec, isa, &Exec::default()).is_some());
            eprintln!(
                "svd {} {m}×{n} vectors {}: {:.3} s",
                std::any::type_name::<T>(),
                vec.is_some(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    let n = timing_order();
    one::<f32>(n, n);
    one::<f64>(n, n);
    one::<Complex<f32>>(n, n);
    one::<Complex<f64>>(n, n);
}
