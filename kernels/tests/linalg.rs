//! cholesky, lu, solve_triangular and qr against oracles written here:
//! residuals in double-double against the documented bounds, LAPACK-style
//! ratios, the documented chains (an unblocked model of the stated order),
//! and the identity of bits across layouts, batches, threads and tiers.

#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

mod linalg_support;

use linalg_support::*;
use num_complex::Complex;
use tessera::linalg::{cholesky, lu, qr, solve_triangular, Triangle};
use tessera::{ArrayView, ArrayViewMut, DType, Error, Exec};

const SIZES: [usize; 8] = [0, 1, 2, 3, 5, 10, 50, 200];

/// The conditions every factorisation is tried on.
fn conditions<T: S>() -> [f64; 3] {
    [2.0, (0.1 / T::U).sqrt(), 0.1 / T::U]
}

fn chol<T: S>(a: &[T], n: usize, tri: Triangle, exec: &Exec) -> Vec<T> {
    let mut out = vec![T::of(7.0, 7.0); n * n];
    cholesky(
        tri,
        &ArrayView::from_slice(a, &[n, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[n, n]).unwrap(),
        exec,
    )
    .unwrap();
    out
}

/// Hermitian positive definite test matrices of order n: of each condition,
/// graded (D A D with D spanning 2^±10), and scaled near underflow and
/// overflow.
fn spd_cases<T: S>(n: usize, rng: &mut Rng) -> Vec<(String, M)> {
    let mut v = Vec::new();
    for c in conditions::<T>() {
        v.push((
            format!("cond {c:e}"),
            with_spectrum(&geometric(n, c), T::CPLX, rng),
        ));
    }
    let base = with_spectrum(&geometric(n, 10.0), T::CPLX, rng);
    let mut graded = base.clone();
    for i in 0..n {
        for j in 0..n {
            let d = 2f64.powf(20.0 * (i + j) as f64 / (2.0 * n.max(1) as f64) - 10.0);
            let x = base.at(i, j);
            graded.set(i, j, (x.0 * d, x.1 * d));
        }
    }
    v.push(("graded".into(), graded));
    let (tiny, huge) = if T::U > 1e-10 {
        (2f64.powi(-100), 2f64.powi(100))
    } else {
        (2f64.powi(-900), 2f64.powi(900))
    };
    v.push(("near underflow".into(), base.scaled(tiny)));
    v.push(("near overflow".into(), base.scaled(huge)));
    v
}

fn check_cholesky<T: S>() {
    let mut rng = Rng(11);
    for n in SIZES {
        for (what, am) in spd_cases::<T>(n, &mut rng) {
            let a: Vec<T> = am.to();
            let a_m = M::of(n, n, &a);
            let l = chol(&a, n, Triangle::Lower, &Exec::default());
            let lm = M::of(n, n, &l);
            // Triangle, diagonal real positive.
            for i in 0..n {
                assert!(
                    lm.at(i, i).0 > 0.0 && lm.at(i, i).1 == 0.0,
                    "{what} n {n}: diagonal {i}"
                );
                for j in i + 1..n {
                    assert_eq!(
                        l[i * n + j].bits(),
                        T::of(0.0, 0.0).bits(),
                        "{what} n {n}: upper not +0"
                    );
                }
            }
            // |L Lᴴ − a| ≤ γ(n+1) |L||Lᴴ| + ε(n+1)(1 + L_jj), elementwise.
            let llh = lm.mul(&lm.h());
            let bound = lm.abs().mul(&lm.abs().h());
            let (g, e) = (gamma::<T>(n as f64 + 1.0), eps_sub::<T>(n as f64 + 1.0));
            let mut worst = 0f64;
            for i in 0..n {
                for j in 0..=i {
                    let d = cabs((
                        llh.at(i, j).0 - a_m.at(i, j).0,
                        llh.at(i, j).1 - a_m.at(i, j).1,
                    ));
                    let b = g * bound.at(i, j).0 + e * (1.0 + lm.at(j, j).0);
                    assert!(d <= b, "{what} n {n} ({i}, {j}): |Δ| {d:e} > bound {b:e}");
                    worst = worst.max(d);
                }
            }
            // The LAPACK-style ratio.
            if n > 0 && a_m.one() > 0.0 {
                let ratio = llh.sub(&a_m).one() / (n as f64 * a_m.one() * T::U);
                assert!(ratio < 30.0, "{what} n {n}: ratio {ratio}");
            }
            // Upper: the conjugate transpose, bit for bit, +0 below.
            let u = chol(&a, n, Triangle::Upper, &Exec::default());
            for i in 0..n {
                for j in 0..n {
                    let c = l[j * n + i].c();
                    let want = if i <= j {
                        T::of(c.0, -c.1)
                    } else {
                        T::of(0.0, 0.0)
                    };
                    assert_eq!(u[i * n + j].bits(), want.bits(), "{what} upper ({i}, {j})");
                }
            }
            let _ = worst;
        }
    }
}

#[test]
fn cholesky_meets_its_bound_on_every_dtype() {
    check_cholesky::<f32>();
    check_cholesky::<f64>();
    check_cholesky::<Complex<f32>>();
    check_cholesky::<Complex<f64>>();
}

/// The documented chain, unblocked: l_ij = (a_ij − Σ_{k<j} l_ik conj(l_jk)) / l_jj
/// with each step the documented fms.
fn fms<T: S>(acc: (f64, f64), a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    if T::CPLX {
        if T::U > 1e-10 {
            let f = |x: f64| x as f32;
            let re = f(a.1).mul_add(f(b.1), (-f(a.0)).mul_add(f(b.0), f(acc.0)));
            let im = (-f(a.1)).mul_add(f(b.0), (-f(a.0)).mul_add(f(b.1), f(acc.1)));
            (re as f64, im as f64)
        } else {
            let re = a.1.mul_add(b.1, (-a.0).mul_add(b.0, acc.0));
            let im = (-a.1).mul_add(b.0, (-a.0).mul_add(b.1, acc.1));
            (re, im)
        }
    } else if T::U > 1e-10 {
        (
            (-(a.0 as f32)).mul_add(b.0 as f32, acc.0 as f32) as f64,
            0.0,
        )
    } else {
        ((-a.0).mul_add(b.0, acc.0), 0.0)
    }
}

fn round<T: S>(x: f64) -> f64 {
    T::of(x, 0.0).c().0
}

#[test]
fn cholesky_follows_its_stated_chain() {
    fn model<T: S>(a: &M) -> Vec<T> {
        let n = a.rows;
        let mut l = vec![(0.0, 0.0); n * n];
        for j in 0..n {
            let mut d = (a.at(j, j).0, 0.0);
            for k in 0..j {
                d = fms::<T>(d, l[j * n + k], conj(l[j * n + k]));
            }
            let s = round::<T>(d.0.sqrt());
            l[j * n + j] = (s, 0.0);
            for i in j + 1..n {
                let mut x = a.at(i, j);
                for k in 0..j {
                    x = fms::<T>(x, l[i * n + k], conj(l[j * n + k]));
                }
                l[i * n + i.min(j)] = (round::<T>(x.0 / s), round::<T>(x.1 / s));
                l[i * n + j] = (round::<T>(x.0 / s), round::<T>(x.1 / s));
            }
        }
        l.iter().map(|&(re, im)| T::of(re, im)).collect()
    }
    fn check<T: S>() {
        let mut rng = Rng(5);
        for n in [1, 7, 64, 65, 130] {
            let a: Vec<T> = with_spectrum(&geometric(n, 100.0), T::CPLX, &mut rng).to();
            let want = model::<T>(&M::of(n, n, &a));
            let got = chol(&a, n, Triangle::Lower, &Exec::default());
            assert_eq!(bits(&got), bits(&want), "n {n}");
        }
        // Batches of small matrices (computed eight at a time, one per
        // vector lane): each matrix the model's bits, a group left partly
        // empty, a failing matrix NaN alone, on every tier and thread count.
        for n in [1, 2, 5, 8, 13, 16] {
            let count = 11;
            let mut a: Vec<T> = Vec::new();
            let mut want = Vec::new();
            for b in 0..count {
                let mut m: Vec<T> = with_spectrum(&geometric(n, 100.0), T::CPLX, &mut rng).to();
                // Matrix 3 fails (a negative last pivot): no model.
                if b == 3 {
                    m[n * n - 1] = T::of(-1.0, 0.0);
                    want.push(None);
                } else {
                    want.push(Some(model::<T>(&M::of(n, n, &m))));
                }
                a.extend(m);
            }
            for tier in compared_tiers() {
                for threads in [1, 2] {
                    let exec = Exec::on(tier).threads(threads);
                    let run = |tri: Triangle| {
                        let mut out = vec![T::of(7.0, 0.0); count * n * n];
                        cholesky(
                            tri,
                            &ArrayView::from_slice(&a, &[count, n, n]).unwrap(),
                            &mut ArrayViewMut::from_slice(&mut out, &[count, n, n]).unwrap(),
                            &exec,
                        )
                        .unwrap();
                        out
                    };
                    let out = run(Triangle::Lower);
                    for (b, w) in want.iter().enumerate() {
                        let got = &out[b * n * n..(b + 1) * n * n];
                        match w {
                            None => assert!(all_nan(got), "n {n} {tier:?}: the failing matrix"),
                            Some(w) => assert_eq!(
                                bits(got),
                                bits(w),
                                "n {n} matrix {b} {tier:?} {threads}"
                            ),
                        }
                    }
                    let up = run(Triangle::Upper);
                    for b in (0..count).filter(|&b| want[b].is_some()) {
                        for i in 0..n {
                            for j in i..n {
                                let (re, im) = out[b * n * n + j * n + i].c();
                                assert_eq!(
                                    bits(&[up[b * n * n + i * n + j]]),
                                    bits(&[T::of(re, -im)]),
                                    "upper = lower's conjugate transpose, n {n} matrix {b}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    check::<f32>();
    check::<f64>();
    check::<Complex<f32>>();
    check::<Complex<f64>>();
}

#[test]
fn cholesky_fails_alone_in_a_batch() {
    let n = 4;
    let mut rng = Rng(3);
    let good: Vec<f64> = with_spectrum(&geometric(n, 10.0), false, &mut rng).to();
    let mut bad = good.clone();
    bad[0] = -1.0;
    let mut nan = good.clone();
    nan[5] = f64::NAN;
    let mut a = good.clone();
    a.extend(&bad);
    a.extend(&nan);
    a.extend(&good);
    let mut out = vec![0.0; 4 * n * n];
    cholesky(
        Triangle::Lower,
        &ArrayView::from_slice(&a, &[4, n, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[4, n, n]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    let alone = chol(&good, n, Triangle::Lower, &Exec::default());
    assert_eq!(bits(&out[..16]), bits(&alone));
    assert!(all_nan(&out[16..32]));
    assert!(all_nan(&out[32..48]));
    assert_eq!(bits(&out[48..]), bits(&alone));
}

// ---------------------------------------------------------------- lu

fn run_lu<T: S>(a: &[T], m: usize, n: usize, exec: &Exec) -> (Vec<T>, Vec<i64>, Vec<i64>) {
    let k = m.min(n);
    let mut f = vec![T::of(7.0, 7.0); m * n];
    let mut piv = vec![-1i64; k];
    let mut perm = vec![-1i64; m];
    lu(
        &ArrayView::from_slice(a, &[m, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut f, &[m, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut piv, &[k]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut perm, &[m]).unwrap(),
        exec,
    )
    .unwrap();
    (f, piv, perm)
}

/// The unblocked model of lu's stated order and pivot rule.
fn lu_model<T: S>(a: &M) -> (Vec<T>, Vec<i64>, Vec<i64>) {
    let (m, n) = (a.rows, a.cols);
    let mut w = a.v.clone();
    let mut piv = vec![];
    let mut perm: Vec<i64> = (0..m as i64).collect();
    for j in 0..m.min(n) {
        let mag = |x: (f64, f64)| round::<T>(x.0.abs() + x.1.abs());
        let mut p = j;
        for r in j + 1..m {
            let (v, cur) = (mag(w[r * n + j]), mag(w[p * n + j]));
            if !cur.is_nan() && v > cur {
                p = r;
            }
        }
        piv.push(p as i64);
        for q in 0..n {
            w.swap(j * n + q, p * n + q);
        }
        perm.swap(j, p);
        let d = w[j * n + j];
        if d != (0.0, 0.0) {
            for r in j + 1..m {
                let x = T::of(w[r * n + j].0, w[r * n + j].1);
                let y = T::of(d.0, d.1);
                // The library's division, observed through a 1×1 solve is
                // not independent; the division is re-derived: Smith's
                // method on complex, IEEE on real.
                w[r * n + j] = div::<T>(x.c(), y.c());
            }
        }
        for r in j + 1..m {
            for q in j + 1..n {
                w[r * n + q] = fms::<T>(w[r * n + q], w[r * n + j], w[j * n + q]);
            }
        }
    }
    (w.iter().map(|&(re, im)| T::of(re, im)).collect(), piv, perm)
}

/// Division as the module documents it: IEEE on real, Smith's method with
/// fused steps on complex, rounded in the dtype.
fn div<T: S>(x: (f64, f64), d: (f64, f64)) -> (f64, f64) {
    if !T::CPLX {
        return (round::<T>(x.0 / d.0), 0.0);
    }
    macro_rules! smith {
        ($t:ty) => {{
            let (xr, xi, dr, di) = (x.0 as $t, x.1 as $t, d.0 as $t, d.1 as $t);
            if dr.abs() >= di.abs() {
                let r = di / dr;
                let den = di.mul_add(r, dr);
                (
                    (xi.mul_add(r, xr) / den) as f64,
                    ((-xr).mul_add(r, xi) / den) as f64,
                )
            } else {
                let r = dr / di;
                let den = dr.mul_add(r, di);
                (
                    (xr.mul_add(r, xi) / den) as f64,
                    (xi.mul_add(r, -xr) / den) as f64,
                )
            }
        }};
    }
    if T::U > 1e-10 {
        smith!(f32)
    } else {
        smith!(f64)
    }
}

fn check_lu<T: S>() {
    let mut rng = Rng(21);
    for &(m, n) in &[
        (0, 0),
        (1, 1),
        (2, 2),
        (3, 3),
        (5, 5),
        (10, 10),
        (50, 50),
        (200, 200),
        (7, 3),
        (3, 7),
        (70, 130),
        (130, 70),
    ] {
        let mut cases: Vec<(String, M)> = vec![("random".into(), random(m, n, T::CPLX, &mut rng))];
        if m == n && n > 0 {
            for c in conditions::<T>() {
                // Non-symmetric of a given condition: U diag V.
                let u = unitary(n, T::CPLX, &mut rng);
                let v = unitary(n, T::CPLX, &mut rng);
                let s = geometric(n, c);
                let mut us = u.clone();
                for i in 0..n {
                    for j in 0..n {
                        let x = u.at(i, j);
                        us.set(i, j, (x.0 * s[j], x.1 * s[j]));
                    }
                }
                cases.push((format!("cond {c:e}"), us.mul(&v)));
            }
            // Rank-deficient: two equal columns.
            let mut r = random(m, n, T::CPLX, &mut rng);
            for i in 0..m {
                let x = r.at(i, 0);
                r.set(i, n - 1, x);
            }
            cases.push(("rank-deficient".into(), r));
            let big = if T::U > 1e-10 {
                2f64.powi(100)
            } else {
                2f64.powi(900)
            };
            cases.push((
                "near overflow".into(),
                random(m, n, T::CPLX, &mut rng).scaled(big),
            ));
            cases.push((
                "near underflow".into(),
                random(m, n, T::CPLX, &mut rng).scaled(1.0 / big),
            ));
        }
        for (what, am) in cases {
            let a: Vec<T> = am.to();
            let a_m = M::of(m, n, &a);
            let (f, piv, perm) = run_lu(&a, m, n, &Exec::default());
            let (wf, wp, wperm) = lu_model::<T>(&a_m);
            assert_eq!(piv, wp, "{what} {m}×{n}: pivots");
            assert_eq!(perm, wperm, "{what} {m}×{n}: permutation");
            assert_eq!(
                bits(&f),
                bits(&wf),
                "{what} {m}×{n}: bits of the stated order"
            );
            // L U = P a + Δ, |Δ_ij| ≤ γ(2k)(|L||U|)_ij + ε(2k)(1 + |U_pp|).
            let k = m.min(n);
            let fm = M::of(m, n, &f);
            let mut l = M::zeros(m, k);
            let mut u = M::zeros(k, n);
            for i in 0..m {
                for j in 0..n {
                    if i > j && j < k {
                        l.set(i, j, fm.at(i, j));
                    } else if i <= j && i < k {
                        u.set(i, j, fm.at(i, j));
                    }
                }
                if i < k {
                    l.set(i, i, (1.0, 0.0));
                }
            }
            let lu_ = l.mul(&u);
            let bound = l.abs().mul(&u.abs());
            let (g, e) = (gamma::<T>(2.0 * k as f64), eps_sub::<T>(2.0 * k as f64));
            for i in 0..m {
                for j in 0..n {
                    let pa = a_m.at(perm[i] as usize, j);
                    let d = cabs((lu_.at(i, j).0 - pa.0, lu_.at(i, j).1 - pa.1));
                    let p = i.min(j).min(k.saturating_sub(1));
                    let b = g * bound.at(i, j).0 + e * (1.0 + cabs(u.at(p, p)));
                    assert!(d <= b, "{what} {m}×{n} ({i}, {j}): {d:e} > {b:e}");
                }
            }
        }
    }
}

#[test]
fn lu_meets_its_bound_and_stated_order_on_every_dtype() {
    check_lu::<f32>();
    check_lu::<f64>();
    check_lu::<Complex<f32>>();
    check_lu::<Complex<f64>>();
}

#[test]
fn lu_pivot_rule_on_ties_zeros_and_nan() {
    // Ties: the first of equal magnitudes stays; a later NaN is never
    // greater; after a NaN nothing is greater.
    let a = [1.0, 0.0, -1.0, 0.0, f64::NAN, 0.0, 5.0, 0.0, 0.0]; // column 0: 1, -1, 5 → 5
    let (_, piv, _) = run_lu(&a, 3, 3, &Exec::default());
    assert_eq!(piv[0], 2);
    let a = [f64::NAN, 1.0, 9.0, 1.0];
    let (_, piv, _) = run_lu(&a, 2, 2, &Exec::default());
    assert_eq!(piv[0], 0, "nothing is greater than a NaN");
    let a = [1.0, 1.0, f64::NAN, 1.0];
    let (_, piv, _) = run_lu(&a, 2, 2, &Exec::default());
    assert_eq!(piv[0], 0, "a NaN is never greater");
    // A zero column: the pivot stays, nothing divided, no NaN.
    let a = [0.0f64, 1.0, 0.0, 2.0];
    let (f, piv, _) = run_lu(&a, 2, 2, &Exec::default());
    assert_eq!(piv[0], 0);
    assert!(f.iter().all(|x| x.is_finite()), "{f:?}");
    // Complex: |re| + |im| (1+1i has magnitude 2 > 1.9).
    let a = [
        Complex::new(1.9f64, 0.0),
        Complex::new(0.0, 0.0),
        Complex::new(1.0, 1.0),
        Complex::new(0.0, 1.0),
    ];
    let (_, piv, _) = run_lu(&a, 2, 2, &Exec::default());
    assert_eq!(piv[0], 1);
}

/// Equal bits, or NaN in both (a NaN's sign and payload are not promised:
/// ARCHITECTURE.md §5.1), part by part.
fn same_or_nan<T: S>(got: &[T], want: &[T]) -> bool {
    let part = |g: f64, w: f64, gb: u64, wb: u64| (g.is_nan() && w.is_nan()) || gb == wb;
    got.len() == want.len()
        && got.iter().zip(want).all(|(&g, &w)| {
            let (gc, wc, gb, wb) = (g.c(), w.c(), g.bits(), w.bits());
            part(gc.0, wc.0, gb.0, wb.0) && part(gc.1, wc.1, gb.1, wb.1)
        })
}

/// Batches of 11 small matrices (run eight at a time, one per lane, where
/// the order is at most 16) with ties, zero columns and NaN among them:
/// every matrix's factors, pivots and permutation are the unblocked
/// model's, bit for bit, on every tier and thread count.
fn check_lu_batches<T: S>() {
    let mut rng = Rng(77);
    let count = 11;
    for n in [1, 2, 5, 8, 13, 16, 17] {
        let mut mats = Vec::new();
        for b in 0..count {
            let mut x = random(n, n, T::CPLX, &mut rng);
            match b {
                // Ties: column 0 of equal magnitudes.
                2 => (0..n).for_each(|i| x.set(i, 0, (if i % 2 == 0 { 0.5 } else { -0.5 }, 0.0))),
                // A zero column.
                5 => (0..n).for_each(|i| x.set(i, n / 2, (0.0, 0.0))),
                // A NaN.
                7 => x.set(n - 1, n / 3, (f64::NAN, 0.0)),
                _ => {}
            }
            mats.push(x);
        }
        let a: Vec<T> = mats.iter().flat_map(|x| x.to::<T>()).collect();
        let want: Vec<_> = mats.iter().map(|x| lu_model::<T>(x)).collect();
        for tier in compared_tiers() {
            for threads in [1, 2] {
                let exec = Exec::on(tier).threads(threads);
                let mut f = vec![T::of(7.0, 7.0); count * n * n];
                let (mut p, mut q) = (vec![-1i64; count * n], vec![-1i64; count * n]);
                lu(
                    &ArrayView::from_slice(&a, &[count, n, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut f, &[count, n, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut p, &[count, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut q, &[count, n]).unwrap(),
                    &exec,
                )
                .unwrap();
                for (b, (wf, wp, wq)) in want.iter().enumerate() {
                    let what = format!("n {n} matrix {b} {tier:?} {threads}T");
                    assert!(same_or_nan(&f[b * n * n..(b + 1) * n * n], wf), "lu {what}");
                    assert_eq!(&p[b * n..(b + 1) * n], &wp[..], "pivots {what}");
                    assert_eq!(&q[b * n..(b + 1) * n], &wq[..], "permutation {what}");
                }
            }
        }
    }
}

#[test]
fn lu_batches_follow_the_stated_order() {
    check_lu_batches::<f32>();
    check_lu_batches::<f64>();
    check_lu_batches::<Complex<f32>>();
    check_lu_batches::<Complex<f64>>();
}

// ---------------------------------------------------------------- solve_triangular

fn run_solve<T: S>(
    tri: Triangle,
    adj: bool,
    unit: bool,
    a: &[T],
    b: &[T],
    n: usize,
    r: usize,
    exec: &Exec,
) -> Vec<T> {
    let mut x = vec![T::of(7.0, 7.0); n * r];
    solve_triangular(
        tri,
        adj,
        unit,
        &ArrayView::from_slice(a, &[n, n]).unwrap(),
        &ArrayView::from_slice(b, &[n, r]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut x, &[n, r]).unwrap(),
        exec,
    )
    .unwrap();
    x
}

fn check_solve<T: S>() {
    let mut rng = Rng(31);
    for n in SIZES {
        for r in [1, 3] {
            for tri in [Triangle::Lower, Triangle::Upper] {
                for adj in [false, true] {
                    for unit in [false, true] {
                        // A well-conditioned triangle: unit-ish diagonal.
                        let mut am = random(n, n, T::CPLX, &mut rng).scaled(0.5);
                        for i in 0..n {
                            let d = am.at(i, i);
                            am.set(i, i, (d.0.signum() * (1.0 + d.0.abs()), d.1));
                        }
                        let a: Vec<T> = am.to();
                        let b: Vec<T> = random(n, r, T::CPLX, &mut rng).to();
                        let x = run_solve(tri, adj, unit, &a, &b, n, r, &Exec::default());
                        // op a, the triangle read.
                        let op = op_as_read(&M::of(n, n, &a), tri, adj, unit);
                        // (op a + Δ) x = b + δ: the residual within
                        // γ(2n)|op a||x| + ε(2n)(1 + |op a_ii|).
                        let xm = M::of(n, r, &x);
                        let res = op.mul(&xm).sub(&M::of(n, r, &b));
                        let bound = op.abs().mul(&xm.abs());
                        let (g, e) = (gamma::<T>(2.0 * n as f64), eps_sub::<T>(2.0 * n as f64));
                        for i in 0..n {
                            for q in 0..r {
                                let d = cabs(res.at(i, q));
                                let bb = g * bound.at(i, q).0 + e * (1.0 + cabs(op.at(i, i)));
                                assert!(d <= bb, "{tri:?} adj {adj} unit {unit} n {n} ({i}, {q}): {d:e} > {bb:e}");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn solve_triangular_meets_its_bound_in_every_case() {
    check_solve::<f32>();
    check_solve::<f64>();
    check_solve::<Complex<f32>>();
    check_solve::<Complex<f64>>();
}

/// The documented chain of the solve, unblocked: op a's rows in the order
/// of solving, each `x_i = (b_i − Σ_k op_ik·x_k) / op_ii` with the sum's
/// fused steps over the k already solved, in the order they were solved.
/// op(a) as solve_triangular reads it: the named triangle of a (its
/// conjugate transpose under `adj`), ones on the diagonal where `unit`,
/// zeros elsewhere.
fn op_as_read(a: &M, tri: Triangle, adj: bool, unit: bool) -> M {
    let n = a.rows;
    let mut op = M::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let (p, q) = if adj { (j, i) } else { (i, j) };
            let inside = if tri == Triangle::Lower {
                p >= q
            } else {
                p <= q
            };
            let v = if !inside {
                (0.0, 0.0)
            } else if p == q && unit {
                (1.0, 0.0)
            } else if adj {
                conj(a.at(p, q))
            } else {
                a.at(p, q)
            };
            op.set(i, j, v);
        }
    }
    op
}

fn solve_model<T: S>(op: &M, b: &M, lower: bool, unit: bool) -> M {
    let (n, r) = (b.rows, b.cols);
    let mut x = M::zeros(n, r);
    let order: Vec<usize> = if lower {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    for q in 0..r {
        for (p, &i) in order.iter().enumerate() {
            let mut acc = b.at(i, q);
            for &k in &order[..p] {
                acc = fms::<T>(acc, op.at(i, k), x.at(k, q));
            }
            x.set(
                i,
                q,
                if unit {
                    acc
                } else {
                    div::<T>(acc, op.at(i, i))
                },
            );
        }
    }
    x
}

fn check_solve_chain<T: S>() {
    let mut rng = Rng(57);
    let count = 11;
    for n in [1, 2, 5, 8, 13, 16, 20] {
        for r in [1, 3, 16] {
            for (tri, adj, unit) in [
                (Triangle::Lower, false, false),
                (Triangle::Upper, false, false),
                (Triangle::Lower, true, false),
                (Triangle::Upper, true, true),
                (Triangle::Lower, false, true),
            ] {
                let mut a = Vec::new();
                let mut b = Vec::new();
                let mut ops = Vec::new();
                for m in 0..count {
                    let mut am = random(n, n, T::CPLX, &mut rng).scaled(0.5);
                    for i in 0..n {
                        let d = am.at(i, i);
                        // Matrix 4 has a zero on its diagonal.
                        let d = if m == 4 && i == n / 2 {
                            (0.0, 0.0)
                        } else {
                            (d.0.signum() * (1.0 + d.0.abs()), d.1)
                        };
                        am.set(i, i, d);
                    }
                    let av: Vec<T> = am.to();
                    let op = op_as_read(&M::of(n, n, &av), tri, adj, unit);
                    a.extend(av);
                    let bv: Vec<T> = random(n, r, T::CPLX, &mut rng).to();
                    b.extend(bv.iter().copied());
                    ops.push((op, M::of(n, r, &bv)));
                }
                let lower = (tri == Triangle::Lower) != adj;
                let want: Vec<Vec<T>> = ops
                    .iter()
                    .enumerate()
                    .map(|(m, (op, bm))| {
                        if m == 4 && !unit {
                            return vec![T::of(f64::NAN, f64::NAN); n * r];
                        }
                        let x = solve_model::<T>(op, bm, lower, unit);
                        x.v.iter().map(|&(re, im)| T::of(re, im)).collect()
                    })
                    .collect();
                for tier in compared_tiers() {
                    for threads in [1, 2] {
                        let exec = Exec::on(tier).threads(threads);
                        let mut x = vec![T::of(7.0, 7.0); count * n * r];
                        solve_triangular(
                            tri,
                            adj,
                            unit,
                            &ArrayView::from_slice(&a, &[count, n, n]).unwrap(),
                            &ArrayView::from_slice(&b, &[count, n, r]).unwrap(),
                            &mut ArrayViewMut::from_slice(&mut x, &[count, n, r]).unwrap(),
                            &exec,
                        )
                        .unwrap();
                        for (m, w) in want.iter().enumerate() {
                            let got = &x[m * n * r..(m + 1) * n * r];
                            let ok = if m == 4 && !unit {
                                all_nan(got)
                            } else {
                                bits(got) == bits(w)
                            };
                            assert!(
                                ok,
                                "{tri:?} adj {adj} unit {unit} n {n} r {r} matrix {m} {tier:?} {threads}T"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Batches of 11 (run eight matrices at a time where the order is small)
/// and orders past the lanes' limit: every matrix's x is the documented
/// chain's, bit for bit, on every tier and thread count.
#[test]
fn solve_triangular_follows_its_stated_chain() {
    check_solve_chain::<f32>();
    check_solve_chain::<f64>();
    check_solve_chain::<Complex<f32>>();
    check_solve_chain::<Complex<f64>>();
}

#[test]
fn solve_triangular_zero_diagonal_is_nan_for_that_matrix_alone() {
    let n = 3;
    let a = [
        2.0f64, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 4.0, /* second */ 2.0, 0.0, 0.0, 1.0, 3.0,
        0.0, 1.0, 1.0, 4.0,
    ];
    let b = [1.0f64, 2.0, 3.0];
    let mut x = vec![0.0f64; 6];
    solve_triangular(
        Triangle::Lower,
        false,
        false,
        &ArrayView::from_slice(&a, &[2, n, n]).unwrap(),
        &ArrayView::from_slice(&b, &[n, 1]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut x, &[2, n, 1]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert!(all_nan(&x[..3]));
    assert!(x[3..].iter().all(|v| v.is_finite()));
    // A unit diagonal does not read the zero.
    let x1 = run_solve(
        Triangle::Lower,
        false,
        true,
        &a[..9],
        &b,
        n,
        1,
        &Exec::default(),
    );
    assert!(x1.iter().all(|v| v.is_finite()));
}

// ---------------------------------------------------------------- qr

fn run_qr<T: S>(a: &[T], m: usize, n: usize, complete: bool) -> (Vec<T>, Vec<T>) {
    let qc = if complete { m } else { m.min(n) };
    let mut q = vec![T::of(7.0, 7.0); m * qc];
    let mut r = vec![T::of(7.0, 7.0); qc * n];
    qr(
        &ArrayView::from_slice(a, &[m, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut q, &[m, qc]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut r, &[qc, n]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    (q, r)
}

fn check_qr<T: S>() {
    let mut rng = Rng(41);
    for &(m, n) in &[
        (0, 0),
        (1, 1),
        (2, 2),
        (3, 3),
        (5, 5),
        (10, 10),
        (50, 50),
        (200, 200),
        (7, 3),
        (3, 7),
        (90, 40),
        (40, 90),
    ] {
        let mut cases = vec![("random".to_string(), random(m, n, T::CPLX, &mut rng))];
        if n > 1 {
            let mut r = random(m, n, T::CPLX, &mut rng);
            for i in 0..m {
                let x = r.at(i, 0);
                r.set(i, 1, x);
            }
            cases.push(("rank-deficient".into(), r));
            let big = if T::U > 1e-10 {
                2f64.powi(100)
            } else {
                2f64.powi(900)
            };
            cases.push((
                "near overflow".into(),
                random(m, n, T::CPLX, &mut rng).scaled(big),
            ));
            cases.push((
                "near underflow".into(),
                random(m, n, T::CPLX, &mut rng).scaled(1.0 / big),
            ));
            let mut g = random(m, n, T::CPLX, &mut rng);
            for i in 0..m {
                for j in 0..n {
                    let x = g.at(i, j);
                    let d = 2f64.powi(j as i32 % 40 - 20);
                    g.set(i, j, (x.0 * d, x.1 * d));
                }
            }
            cases.push(("graded".into(), g));
        }
        for (what, am) in cases {
            let a: Vec<T> = am.to();
            let a_m = M::of(m, n, &a);
            let k = m.min(n);
            for complete in [false, true] {
                let (q, r) = run_qr(&a, m, n, complete);
                let qc = if complete { m } else { k };
                let qm = M::of(m, qc, &q);
                let rm = M::of(qc, n, &r);
                for i in 0..qc {
                    for j in 0..n {
                        if i > j || i >= k {
                            assert_eq!(
                                r[i * n + j].bits(),
                                T::of(0.0, 0.0).bits(),
                                "{what}: r below its diagonal"
                            );
                        }
                        if i == j {
                            assert_eq!(rm.at(i, i).1, 0.0, "{what}: r's diagonal real");
                        }
                    }
                }
                let g = gamma::<T>((k * (2 * m + 10)) as f64);
                let h = eps_sub::<T>((k * (2 * m + 10)) as f64);
                let qr_ = qm.mul(&rm);
                for j in 0..n {
                    let col = |x: &M| (0..m).map(|i| x.at(i, j)).collect::<Vec<_>>();
                    let d: f64 = col(&qr_)
                        .iter()
                        .zip(col(&a_m))
                        .map(|(x, y)| (x.0 - y.0).powi(2) + (x.1 - y.1).powi(2))
                        .sum::<f64>()
                        .sqrt();
                    let aj: f64 = col(&a_m)
                        .iter()
                        .map(|y| y.0 * y.0 + y.1 * y.1)
                        .sum::<f64>()
                        .sqrt();
                    let b = g * aj + (m as f64).sqrt() * h;
                    assert!(
                        d <= b,
                        "{what} {m}×{n} complete {complete} column {j}: {d:e} > {b:e}"
                    );
                }
                let qhq = qm.h().mul(&qm).sub(&M::identity(qc));
                for (p, x) in qhq.v.iter().enumerate() {
                    assert!(
                        cabs(*x) <= g,
                        "{what} {m}×{n}: qᴴq − I at {p}: {:e} > {g:e}",
                        cabs(*x)
                    );
                }
                if k > 0 {
                    let ratio = qhq.fro() / (m as f64 * T::U);
                    assert!(ratio < 30.0, "{what} {m}×{n}: orthogonality ratio {ratio}");
                }
            }
        }
    }
}

#[test]
fn qr_meets_its_bound_reduced_and_complete() {
    check_qr::<f32>();
    check_qr::<f64>();
    check_qr::<Complex<f32>>();
    check_qr::<Complex<f64>>();
}

// ---------------------------------------------------------------- identity of bits

/// Every routine on a batch in each layout, at 1, 2 and 7 threads and on
/// every tier: the bits of each matrix computed alone, contiguous, on one
/// thread.
fn check_identity<T: S>() {
    let tiers = compared_tiers();
    let (batch, n, r) = (3usize, 70usize, 2usize);
    let mut rng = Rng(77);
    let mut a: Vec<T> = Vec::new();
    for _ in 0..batch {
        a.extend(with_spectrum(&geometric(n, 50.0), T::CPLX, &mut rng).to::<T>());
    }
    let b: Vec<T> = random(batch * n, r, T::CPLX, &mut rng).to();
    let one = Exec::default().threads(1);
    let alone: Vec<_> = (0..batch)
        .map(|i| {
            let ai = &a[i * n * n..(i + 1) * n * n];
            let bi = &b[i * n * r..(i + 1) * n * r];
            (
                chol(ai, n, Triangle::Lower, &one),
                run_lu(ai, n, n, &one),
                run_solve(Triangle::Upper, true, false, ai, bi, n, r, &one),
                run_qr(ai, n, n, false),
            )
        })
        .collect();
    let shape = [batch, n, n];
    let bshape = [batch, n, r];
    for lay in LAYS {
        for tier in &tiers {
            for threads in [1, 2, 7] {
                let exec = Exec::on(*tier).threads(threads);
                let (abuf, ast, aoff) = place(&a, &shape, lay, T::of(f64::NAN, 0.0));
                let (bbuf, bst, boff) = place(&b, &bshape, lay, T::of(f64::NAN, 0.0));
                let av = view(&abuf, &shape, &ast, aoff);
                let bv = view(&bbuf, &bshape, &bst, boff);
                let what = format!("{lay:?} {tier:?} {threads} threads");
                // cholesky
                let (mut obuf, ost, ooff) = place(&a, &shape, lay, T::of(3.0, 0.0));
                cholesky(
                    Triangle::Lower,
                    &av,
                    &mut view_mut(&mut obuf, &shape, &ost, ooff),
                    &exec,
                )
                .unwrap();
                let got = gather(&obuf, &shape, &ost, ooff);
                // lu
                let (mut lbuf, lst, loff) = place(&a, &shape, lay, T::of(3.0, 0.0));
                let mut piv = vec![0i64; batch * n];
                let mut perm = vec![0i64; batch * n];
                lu(
                    &av,
                    &mut view_mut(&mut lbuf, &shape, &lst, loff),
                    &mut ArrayViewMut::from_slice(&mut piv, &[batch, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut perm, &[batch, n]).unwrap(),
                    &exec,
                )
                .unwrap();
                let lgot = gather(&lbuf, &shape, &lst, loff);
                // solve_triangular
                let (mut xbuf, xst, xoff) = place(&b, &bshape, lay, T::of(3.0, 0.0));
                solve_triangular(
                    Triangle::Upper,
                    true,
                    false,
                    &av,
                    &bv,
                    &mut view_mut(&mut xbuf, &bshape, &xst, xoff),
                    &exec,
                )
                .unwrap();
                let xgot = gather(&xbuf, &bshape, &xst, xoff);
                // qr
                let (mut qbuf, qst, qoff) = place(&a, &shape, lay, T::of(3.0, 0.0));
                let (mut rbuf, rst, roff) = place(&a, &shape, lay, T::of(3.0, 0.0));
                qr(
                    &av,
                    &mut view_mut(&mut qbuf, &shape, &qst, qoff),
                    &mut view_mut(&mut rbuf, &shape, &rst, roff),
                    &exec,
                )
                .unwrap();
                let qgot = gather(&qbuf, &shape, &qst, qoff);
                let rgot = gather(&rbuf, &shape, &rst, roff);
                for (i, (c, (f, p, pm), x, (q, rr))) in alone.iter().enumerate() {
                    let s = i * n * n..(i + 1) * n * n;
                    assert_eq!(bits(&got[s.clone()]), bits(c), "cholesky {what} matrix {i}");
                    assert_eq!(bits(&lgot[s.clone()]), bits(f), "lu {what} matrix {i}");
                    assert_eq!(&piv[i * n..(i + 1) * n], &p[..], "lu pivots {what}");
                    assert_eq!(&perm[i * n..(i + 1) * n], &pm[..], "lu permutation {what}");
                    assert_eq!(
                        bits(&xgot[i * n * r..(i + 1) * n * r]),
                        bits(x),
                        "solve {what} matrix {i}"
                    );
                    assert_eq!(bits(&qgot[s.clone()]), bits(q), "qr q {what} matrix {i}");
                    assert_eq!(bits(&rgot[s]), bits(rr), "qr r {what} matrix {i}");
                }
            }
        }
    }
}

#[test]
fn bits_never_depend_on_layout_batch_threads_or_tier() {
    check_identity::<f32>();
    check_identity::<f64>();
    check_identity::<Complex<f32>>();
    check_identity::<Complex<f64>>();
}

#[test]
fn a_lone_large_matrix_has_the_same_bits_at_any_thread_count() {
    // One matrix: the threads go inside its block updates.
    let n = 300;
    let mut rng = Rng(9);
    let a: Vec<f64> = with_spectrum(&geometric(n, 1e3), false, &mut rng).to();
    let b: Vec<f64> = random(n, 5, false, &mut rng).to();
    let base = (
        chol(&a, n, Triangle::Lower, &Exec::SEQ),
        run_lu(&a, n, n, &Exec::SEQ),
        run_solve(Triangle::Lower, false, false, &a, &b, n, 5, &Exec::SEQ),
    );
    for t in [2, 7] {
        let e = Exec::default().threads(t);
        assert_eq!(
            bits(&chol(&a, n, Triangle::Lower, &e)),
            bits(&base.0),
            "cholesky {t}"
        );
        let l = run_lu(&a, n, n, &e);
        assert_eq!(bits(&l.0), bits(&base.1 .0), "lu {t}");
        assert_eq!(l.1, base.1 .1);
        assert_eq!(
            bits(&run_solve(Triangle::Lower, false, false, &a, &b, n, 5, &e)),
            bits(&base.2),
            "solve {t}"
        );
    }
}

// ---------------------------------------------------------------- refusals

#[test]
fn refusals_come_before_any_write() {
    let a = [1.0f64; 6];
    let mut out = [5.0f64; 6];
    let e = Exec::default();
    // Non-square.
    let r = cholesky(
        Triangle::Lower,
        &ArrayView::from_slice(&a, &[2, 3]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[2, 3]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    // Wrong dtype of the destination.
    let mut o32 = [5.0f32; 4];
    let r = cholesky(
        Triangle::Lower,
        &ArrayView::from_slice(&a[..4], &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut o32, &[2, 2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
    // An integer matrix.
    let ai = [1i32; 4];
    let mut oi = [5i32; 4];
    let r = cholesky(
        Triangle::Lower,
        &ArrayView::from_slice(&ai, &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut oi, &[2, 2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeUnsupported { .. })), "{r:?}");
    // Rank 1.
    let r = cholesky(
        Triangle::Lower,
        &ArrayView::from_slice(&a[..4], &[4]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out[..4], &[4]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Rank { .. })), "{r:?}");
    // A batch that does not broadcast (solve: a [2,1,1], b [3,1,1]).
    let mut x = [5.0f64; 3];
    let r = solve_triangular(
        Triangle::Lower,
        false,
        false,
        &ArrayView::from_slice(&a[..2], &[2, 1, 1]).unwrap(),
        &ArrayView::from_slice(&a[..3], &[3, 1, 1]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut x, &[3, 1, 1]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    assert_eq!(x, [5.0; 3]);
    // Bad pivot arrays: i32, or the wrong length.
    let mut f = [5.0f64; 4];
    let mut p32 = [9i32; 2];
    let mut perm = [9i64; 2];
    let r = lu(
        &ArrayView::from_slice(&a[..4], &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut f, &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut p32, &[2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut perm, &[2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
    let mut p3 = [9i64; 3];
    let r = lu(
        &ArrayView::from_slice(&a[..4], &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut f, &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut p3, &[3]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut perm, &[2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    assert_eq!(f, [5.0; 4]);
    assert_eq!(perm, [9; 2]);
    // qr destinations neither reduced nor complete.
    let mut q = [5.0f64; 6];
    let mut rr = [5.0f64; 6];
    let r = qr(
        &ArrayView::from_slice(&a, &[3, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut q, &[3, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut rr, &[3, 2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    assert_eq!(q, [5.0; 6]);
    // A destination that reaches an element twice.
    let mut o = [5.0f64; 4];
    let r = cholesky(
        Triangle::Lower,
        &ArrayView::from_slice(&a[..4], &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice_strided(&mut o, &[2, 2], &[1, 1], 0).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Layout { .. })), "{r:?}");
    assert_eq!(o, [5.0; 4]);
    let _ = DType::F64;
}
