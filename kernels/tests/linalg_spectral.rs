//! eigh, svd and eig through the public calls: seed 000's bounds on
//! matrices of known spectra (oracles built here in f64 and double-double),
//! the identity of bits across layouts, batches, threads and tiers, a
//! failing matrix NaN alone in its batch, and the refusals.

#![allow(clippy::needless_range_loop)]

mod linalg_support;

use linalg_support::*;
use num_complex::Complex;
use tessera::linalg::{eig, eigh, svd};
use tessera::{ArrayView, ArrayViewMut, Element, Error, Exec};

/// The real and complex scalars of a dtype's precision.
trait P: S {
    type R: S + Default;
    type C: S + Default;
}
impl P for f32 {
    type R = f32;
    type C = Complex<f32>;
}
impl P for f64 {
    type R = f64;
    type C = Complex<f64>;
}
impl P for Complex<f32> {
    type R = f32;
    type C = Complex<f32>;
}
impl P for Complex<f64> {
    type R = f64;
    type C = Complex<f64>;
}

fn run_eigh<T: P>(a: &[T], n: usize, vectors: bool, exec: &Exec) -> (Vec<T::R>, Vec<T>) {
    let mut w = vec![T::R::of(7.0, 0.0); n];
    let mut v = vec![T::of(7.0, 7.0); n * n];
    let mut vv = ArrayViewMut::from_slice(&mut v, &[n, n]).unwrap();
    eigh(
        &ArrayView::from_slice(a, &[n, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut w, &[n]).unwrap(),
        if vectors { Some(&mut vv) } else { None },
        exec,
    )
    .unwrap();
    (w, v)
}

fn run_svd<T: P>(
    a: &[T],
    m: usize,
    n: usize,
    complete: bool,
    exec: &Exec,
) -> (Vec<T::R>, Vec<T>, Vec<T>) {
    let k = m.min(n);
    let (uc, vr) = if complete { (m, n) } else { (k, k) };
    let mut s = vec![T::R::of(7.0, 0.0); k];
    let mut u = vec![T::of(7.0, 7.0); m * uc];
    let mut vh = vec![T::of(7.0, 7.0); vr * n];
    svd(
        &ArrayView::from_slice(a, &[m, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut s, &[k]).unwrap(),
        Some((
            &mut ArrayViewMut::from_slice(&mut u, &[m, uc]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut vh, &[vr, n]).unwrap(),
        )),
        exec,
    )
    .unwrap();
    (s, u, vh)
}

fn run_eig<T: P>(a: &[T], n: usize, exec: &Exec) -> (Vec<T::C>, Vec<T::C>) {
    let mut w = vec![T::C::of(7.0, 7.0); n];
    let mut v = vec![T::C::of(7.0, 7.0); n * n];
    eig(
        &ArrayView::from_slice(a, &[n, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut w, &[n]).unwrap(),
        Some(&mut ArrayViewMut::from_slice(&mut v, &[n, n]).unwrap()),
        exec,
    )
    .unwrap();
    (w, v)
}

fn check_eigh<T: P>() {
    let mut rng = Rng(101);
    for n in [0usize, 1, 2, 3, 5, 10, 40] {
        for cond in [2.0, (0.1 / T::U).sqrt(), 0.1 / T::U] {
            // A spectrum of both signs, a repeated pair.
            let mut w0: Vec<f64> = geometric(n, cond)
                .iter()
                .enumerate()
                .map(|(i, x)| if i % 2 == 0 { *x } else { -*x })
                .collect();
            if n > 3 {
                w0[1] = w0[0];
            }
            let am = with_spectrum(&w0, T::CPLX, &mut rng);
            let a: Vec<T> = am.to();
            let a_m = M::of(n, n, &a);
            let (w, v) = run_eigh(&a, n, true, &Exec::default());
            let (g, h) = (gamma::<T>(16.0 * n as f64), eps_sub::<T>(16.0 * n as f64));
            for i in 1..n {
                assert!(w[i - 1].c().0 <= w[i].c().0, "n {n}: w ascending");
            }
            let vm = M::of(n, n, &v);
            let mut vw = vm.clone();
            for i in 0..n {
                for j in 0..n {
                    let x = vm.at(i, j);
                    let s = w[j].c().0;
                    vw.set(i, j, (x.0 * s, x.1 * s));
                }
            }
            let res = a_m.sub(&vw.mul(&vm.h())).fro();
            assert!(
                res <= g * a_m.fro() + h,
                "n {n} cond {cond:e}: residual {res:e}"
            );
            let orth = vm.h().mul(&vm).sub(&M::identity(n)).fro();
            assert!(orth <= g, "n {n}: orthogonality {orth:e}");
            // Each eigenvalue within g‖a‖₂ + h of the exact one (of the
            // rounded a: within u‖a‖ of w0, so that slack is added).
            let mut want = w0.clone();
            want.sort_by(f64::total_cmp);
            let norm2 = w0.iter().fold(0f64, |m, x| m.max(x.abs()));
            for (i, x) in w.iter().enumerate() {
                let d = (x.c().0 - want[i]).abs();
                assert!(
                    d <= (g + 2.0 * n as f64 * T::U) * norm2 + h,
                    "n {n}: eigenvalue {i} off by {d:e}"
                );
            }
            // Values alone: the same bound.
            let (w2, _) = run_eigh(&a, n, false, &Exec::default());
            for (i, x) in w2.iter().enumerate() {
                assert!((x.c().0 - want[i]).abs() <= (g + 2.0 * n as f64 * T::U) * norm2 + h);
            }
        }
    }
}

#[test]
fn eigh_meets_its_bound_through_the_public_call() {
    check_eigh::<f32>();
    check_eigh::<f64>();
    check_eigh::<Complex<f32>>();
    check_eigh::<Complex<f64>>();
}

fn check_svd<T: P>() {
    let mut rng = Rng(202);
    for &(m, n) in &[
        (0, 0),
        (0, 3),
        (3, 0),
        (1, 1),
        (2, 3),
        (5, 5),
        (12, 7),
        (7, 12),
        (30, 30),
    ] {
        let am = random(m, n, T::CPLX, &mut rng);
        let a: Vec<T> = am.to();
        let a_m = M::of(m, n, &a);
        let k = m.min(n);
        let big = m.max(n) as f64;
        let (g, h) = (
            gamma::<T>(16.0 * big + 100.0),
            eps_sub::<T>(16.0 * big + 100.0),
        );
        for complete in [false, true] {
            let (s, u, vh) = run_svd(&a, m, n, complete, &Exec::default());
            let (uc, vr) = if complete { (m, n) } else { (k, k) };
            for i in 1..k {
                assert!(
                    s[i - 1].c().0 >= s[i].c().0 && s[i].c().0 >= 0.0,
                    "{m}×{n}: s descending, not negative"
                );
            }
            let um = M::of(m, uc, &u);
            let vm = M::of(vr, n, &vh);
            // a − u[:, :k] diag s vh[:k, :].
            let mut us = M::zeros(m, k);
            for i in 0..m {
                for j in 0..k {
                    let x = um.at(i, j);
                    let sj = s[j].c().0;
                    us.set(i, j, (x.0 * sj, x.1 * sj));
                }
            }
            let mut vk = M::zeros(k, n);
            for i in 0..k {
                for j in 0..n {
                    vk.set(i, j, vm.at(i, j));
                }
            }
            let res = a_m.sub(&us.mul(&vk)).fro();
            assert!(
                res <= g * a_m.fro() + h,
                "{m}×{n} complete {complete}: residual {res:e}"
            );
            assert!(
                um.h().mul(&um).sub(&M::identity(uc)).fro() <= g,
                "{m}×{n}: uᴴu"
            );
            assert!(
                vm.mul(&vm.h()).sub(&M::identity(vr)).fro() <= g,
                "{m}×{n}: vh vhᴴ"
            );
        }
    }
}

#[test]
fn svd_meets_its_bound_reduced_and_complete() {
    check_svd::<f32>();
    check_svd::<f64>();
    check_svd::<Complex<f32>>();
    check_svd::<Complex<f64>>();
}

fn check_eig<T: P>() {
    let mut rng = Rng(303);
    for n in [0usize, 1, 2, 5, 12, 30] {
        let a: Vec<T> = random(n, n, T::CPLX, &mut rng).to();
        let a_m = M::of(n, n, &a);
        let (w, v) = run_eig(&a, n, &Exec::default());
        let g = gamma::<T>(16.0 * n as f64);
        let vm = M::of(n, n, &v);
        for j in 0..n {
            let col: Vec<(f64, f64)> = (0..n).map(|i| vm.at(i, j)).collect();
            let norm = col
                .iter()
                .map(|x| x.0 * x.0 + x.1 * x.1)
                .sum::<f64>()
                .sqrt();
            assert!((norm - 1.0).abs() <= g, "n {n} column {j}: norm {norm}");
            // The residual ratio ‖a v − w v‖ / (‖a‖ n ε) below 60.
            let wj = w[j].c();
            let mut r = 0f64;
            for i in 0..n {
                let mut acc = Cdd::default();
                for (l, x) in col.iter().enumerate() {
                    acc.add_prod(a_m.at(i, l), *x);
                }
                acc.add_prod((-wj.0, -wj.1), col[i]);
                let d = acc.value();
                r += d.0 * d.0 + d.1 * d.1;
            }
            let ratio = r.sqrt() / (a_m.fro() * n as f64 * T::U);
            assert!(ratio < 60.0, "n {n} column {j}: residual ratio {ratio}");
        }
        if !T::CPLX {
            // Real input: pairs adjacent, positive imaginary part first,
            // conjugate columns; real values with +0 imaginary parts.
            let mut j = 0;
            while j < n {
                let x = w[j].c();
                if x.1 == 0.0 {
                    assert_eq!(x.1.to_bits(), 0, "n {n}: +0 imaginary part");
                    j += 1;
                } else {
                    assert!(x.1 > 0.0, "n {n}: positive imaginary part first");
                    assert_eq!(w[j + 1].c(), (x.0, -x.1), "n {n}: the conjugate next");
                    for i in 0..n {
                        let (p, q) = (vm.at(i, j), vm.at(i, j + 1));
                        assert_eq!(p, (q.0, -q.1), "n {n}: conjugate columns");
                    }
                    j += 2;
                }
            }
        }
    }
}

#[test]
fn eig_meets_its_bound_and_pairing_rule() {
    check_eig::<f32>();
    check_eig::<f64>();
    check_eig::<Complex<f32>>();
    check_eig::<Complex<f64>>();
}

/// A batch in each layout, at 1, 2 and 7 threads, on every tier: each
/// matrix's bits as when computed alone.
fn check_identity<T: P>() {
    let tiers = compared_tiers();
    let (batch, n) = (3usize, 24usize);
    let mut rng = Rng(404);
    let mut a: Vec<T> = Vec::new();
    for _ in 0..batch {
        a.extend(with_spectrum(&geometric(n, 30.0), T::CPLX, &mut rng).to::<T>());
    }
    let one = Exec::default().threads(1);
    let alone: Vec<_> = (0..batch)
        .map(|i| {
            let ai = &a[i * n * n..(i + 1) * n * n];
            (
                run_eigh(ai, n, true, &one),
                run_svd(ai, n, n, false, &one),
                run_eig(ai, n, &one),
            )
        })
        .collect();
    let shape = [batch, n, n];
    for lay in LAYS {
        for tier in &tiers {
            for threads in [1, 2, 7] {
                let exec = Exec::on(*tier).threads(threads);
                let what = format!("{lay:?} {tier:?} {threads} threads");
                let (abuf, ast, aoff) = place(&a, &shape, lay, T::of(f64::NAN, 0.0));
                let av = view(&abuf, &shape, &ast, aoff);
                let mut w = vec![T::R::default(); batch * n];
                let (mut vbuf, vst, voff) = place(&a, &shape, lay, T::of(3.0, 0.0));
                eigh(
                    &av,
                    &mut ArrayViewMut::from_slice(&mut w, &[batch, n]).unwrap(),
                    Some(&mut view_mut(&mut vbuf, &shape, &vst, voff)),
                    &exec,
                )
                .unwrap();
                let v = gather(&vbuf, &shape, &vst, voff);
                let mut s = vec![T::R::default(); batch * n];
                let (mut ubuf, ust, uoff) = place(&a, &shape, lay, T::of(3.0, 0.0));
                let (mut hbuf, hst, hoff) = place(&a, &shape, lay, T::of(3.0, 0.0));
                svd(
                    &av,
                    &mut ArrayViewMut::from_slice(&mut s, &[batch, n]).unwrap(),
                    Some((
                        &mut view_mut(&mut ubuf, &shape, &ust, uoff),
                        &mut view_mut(&mut hbuf, &shape, &hst, hoff),
                    )),
                    &exec,
                )
                .unwrap();
                let u = gather(&ubuf, &shape, &ust, uoff);
                let vh = gather(&hbuf, &shape, &hst, hoff);
                let mut ew = vec![T::C::default(); batch * n];
                let mut ev = vec![T::C::default(); batch * n * n];
                eig(
                    &av,
                    &mut ArrayViewMut::from_slice(&mut ew, &[batch, n]).unwrap(),
                    Some(&mut ArrayViewMut::from_slice(&mut ev, &shape).unwrap()),
                    &exec,
                )
                .unwrap();
                for (i, ((w1, v1), (s1, u1, h1), (ew1, ev1))) in alone.iter().enumerate() {
                    let m = i * n * n..(i + 1) * n * n;
                    let r = i * n..(i + 1) * n;
                    assert_eq!(bits(&w[r.clone()]), bits(w1), "eigh w {what} {i}");
                    assert_eq!(bits(&v[m.clone()]), bits(v1), "eigh v {what} {i}");
                    assert_eq!(bits(&s[r.clone()]), bits(s1), "svd s {what} {i}");
                    assert_eq!(bits(&u[m.clone()]), bits(u1), "svd u {what} {i}");
                    assert_eq!(bits(&vh[m.clone()]), bits(h1), "svd vh {what} {i}");
                    assert_eq!(bits(&ew[r]), bits(ew1), "eig w {what} {i}");
                    assert_eq!(bits(&ev[m]), bits(ev1), "eig v {what} {i}");
                }
            }
        }
    }
}

#[test]
fn spectral_bits_never_depend_on_layout_batch_threads_or_tier() {
    check_identity::<f32>();
    check_identity::<f64>();
    check_identity::<Complex<f32>>();
    check_identity::<Complex<f64>>();
}

#[test]
fn a_failing_matrix_is_nan_alone() {
    let n = 4;
    let mut rng = Rng(505);
    let good: Vec<f64> = with_spectrum(&geometric(n, 10.0), false, &mut rng).to();
    let mut bad = good.clone();
    bad[4] = f64::INFINITY; // in the lower triangle: read
    let mut a = good.clone();
    a.extend(&bad);
    a.extend(&good);
    let (w1, v1) = run_eigh(&good, n, true, &Exec::default());
    let mut w = vec![0.0; 3 * n];
    let mut v = vec![0.0; 3 * n * n];
    eigh(
        &ArrayView::from_slice(&a, &[3, n, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut w, &[3, n]).unwrap(),
        Some(&mut ArrayViewMut::from_slice(&mut v, &[3, n, n]).unwrap()),
        &Exec::default(),
    )
    .unwrap();
    assert_eq!(bits(&w[..n]), bits(&w1));
    assert_eq!(bits(&v[..n * n]), bits(&v1));
    assert!(all_nan(&w[n..2 * n]) && all_nan(&v[n * n..2 * n * n]));
    assert_eq!(bits(&w[2 * n..]), bits(&w1));
    // eigh does not read the strictly upper triangle: a NaN there is
    // nothing.
    let mut upper = good.clone();
    upper[1] = f64::NAN;
    let (w2, v2) = run_eigh(&upper, n, true, &Exec::default());
    assert_eq!(bits(&w2), bits(&w1));
    assert_eq!(bits(&v2), bits(&v1));
    // svd and eig: NaN anywhere.
    let mut s = vec![0.0f64; 3 * n];
    svd(
        &ArrayView::from_slice(&a, &[3, n, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut s, &[3, n]).unwrap(),
        None,
        &Exec::default(),
    )
    .unwrap();
    assert!(all_nan(&s[n..2 * n]) && s[..n].iter().all(|x| x.is_finite()));
    let mut ew = vec![Complex::new(0.0f64, 0.0); 3 * n];
    eig(
        &ArrayView::from_slice(&a, &[3, n, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut ew, &[3, n]).unwrap(),
        None,
        &Exec::default(),
    )
    .unwrap();
    assert!(all_nan(&ew[n..2 * n]) && ew[..n].iter().all(|x| x.re.is_finite()));
}

#[test]
fn spectral_refusals_come_before_any_write() {
    let a = [1.0f64; 6];
    let e = Exec::default();
    // eigh: non-square; w of a's dtype rather than the real one (complex a).
    let mut w = [5.0f64; 3];
    let r = eigh(
        &ArrayView::from_slice(&a, &[2, 3]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut w[..2], &[2]).unwrap(),
        None,
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    let ac = [Complex::new(1.0f64, 0.0); 4];
    let mut wc = [Complex::new(5.0f64, 0.0); 2];
    let r = eigh(
        &ArrayView::from_slice(&ac, &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut wc, &[2]).unwrap(),
        None,
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
    assert_eq!(wc, [Complex::new(5.0, 0.0); 2]);
    // svd: u and vh neither both reduced nor both complete.
    let mut s = [5.0f64; 2];
    let mut u = [5.0f64; 6];
    let mut vh = [5.0f64; 4];
    let r = svd(
        &ArrayView::from_slice(&a, &[3, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut s, &[2]).unwrap(),
        Some((
            &mut ArrayViewMut::from_slice(&mut u[..6], &[3, 2]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut vh[..2], &[1, 2]).unwrap(),
        )),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    assert_eq!(s, [5.0; 2]);
    // eig: w real where it must be complex.
    let mut wr = [5.0f64; 2];
    let r = eig(
        &ArrayView::from_slice(&a[..4], &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut wr, &[2]).unwrap(),
        None,
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
    assert_eq!(wr, [5.0; 2]);
    // A half-precision matrix.
    let ah = [half::f16::ONE; 4];
    let mut wh = [half::f16::ONE; 2];
    let r = eigh(
        &ArrayView::from_slice(&ah, &[2, 2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut wh, &[2]).unwrap(),
        None,
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeUnsupported { .. })), "{r:?}");
    let _ = <f64 as Element>::DTYPE;
}
