//! The linear-algebra plans: a plan's `run` and `run_with_scratch` give the
//! one-shot call's bits at 1, 2 and 7 threads, from one scratch shared by
//! every routine and dtype (so each run finds the last one's leftovers), a
//! scratch of `scratch_bytes()` per thread never grows, and a plan refuses
//! operands it was not made for before any write.

#![allow(clippy::type_complexity)]

mod linalg_support;

use linalg_support::*;
use num_complex::Complex;
use tessera::linalg::{
    cholesky, eig, eigh, lu, qr, solve_triangular, svd, CholeskyPlan, EigPlan, EighPlan, LuPlan,
    QrPlan, SolveTriangularPlan, SvdPlan, SvdVectors, Triangle,
};
use tessera::{ArrayView, ArrayViewMut, DType, Error, Exec, Scratch};

/// How a routine is called.
enum Mode<'s> {
    OneShot,
    Plan,
    Lent(&'s mut Scratch),
}

/// A batch of `count` matrices of m×n, row-major, from `make`, with a NaN
/// in matrix 1 (where there is one).
fn batch<T: S>(count: usize, m: usize, n: usize, make: impl Fn(&mut Rng) -> M) -> Vec<T> {
    let mut rng = Rng(m as u64 * 1000 + n as u64);
    let mut v = Vec::new();
    for b in 0..count {
        let x = make(&mut rng);
        for i in 0..m {
            for j in 0..n {
                let (re, im) = x.at(i, j);
                v.push(if b == 1 && i == m / 2 && j == n / 3 {
                    T::of(f64::NAN, 0.0)
                } else {
                    T::of(re, im)
                });
            }
        }
    }
    v
}

/// Destinations of `len` elements, filled with a sentinel.
fn dst<T: S>(len: usize) -> Vec<T> {
    vec![T::of(7.0, 7.0); len]
}

fn vw<'a, T: S>(v: &'a [T], shape: &[usize]) -> ArrayView<'a> {
    ArrayView::from_slice(v, shape).unwrap()
}

fn vm<'a, T: S>(v: &'a mut [T], shape: &[usize]) -> ArrayViewMut<'a> {
    ArrayViewMut::from_slice(v, shape).unwrap()
}

/// `call`'s results by plan, and by plan with `scratch`, at 1, 2 and 7
/// threads, against the one-shot call's at one thread, bit for bit.
fn same_bits(
    what: &str,
    scratch: &mut Scratch,
    mut call: impl FnMut(&mut Mode<'_>, &Exec) -> Vec<Vec<(u64, u64)>>,
) {
    let want = call(&mut Mode::OneShot, &Exec::default().threads(1));
    for threads in [1, 2, 7] {
        let exec = Exec::default().threads(threads);
        assert!(
            call(&mut Mode::OneShot, &exec) == want,
            "{what}: one-shot, {threads} threads"
        );
        assert!(
            call(&mut Mode::Plan, &exec) == want,
            "{what}: plan, {threads} threads"
        );
        assert!(
            call(&mut Mode::Lent(scratch), &exec) == want,
            "{what}: plan with scratch, {threads} threads"
        );
    }
}

/// A scratch of `t` times `bytes` is not grown by a run at `t` threads.
fn fits(bytes: usize, run: impl FnOnce(&mut Scratch, &Exec)) {
    let mut s = Scratch::with_size(bytes * 2).unwrap();
    let before = s.size();
    run(&mut s, &Exec::default().threads(2));
    assert_eq!(
        s.size(),
        before,
        "a scratch of scratch_bytes() per thread grew"
    );
}

fn factorisations<T: S>(scratch: &mut Scratch) {
    let d = T::DTYPE;
    for n in [0, 1, 4, 16, 33, 130] {
        for count in [1, 3] {
            let sh = [count, n, n];
            let spd = batch::<T>(count, n, n, |r| {
                with_spectrum(&geometric(n, 10.0), T::CPLX, r)
            });
            let what = format!("{d:?} n = {n}, {count} matrices");
            for tri in [Triangle::Lower, Triangle::Upper] {
                let plan = CholeskyPlan::new(tri, (&sh, d)).unwrap();
                assert_eq!(plan.output_shape(), &sh);
                same_bits(&format!("cholesky {what}"), scratch, |mode, exec| {
                    let mut out = dst::<T>(spd.len());
                    let (a, mut o) = (vw(&spd, &sh), vm(&mut out, &sh));
                    match mode {
                        Mode::OneShot => cholesky(tri, &a, &mut o, exec),
                        Mode::Plan => plan.run(&a, &mut o, exec),
                        Mode::Lent(s) => plan.run_with_scratch(&a, &mut o, s, exec),
                    }
                    .unwrap();
                    vec![bits(&out)]
                });
                fits(plan.scratch_bytes(), |s, exec| {
                    let mut out = dst::<T>(spd.len());
                    plan.run_with_scratch(&vw(&spd, &sh), &mut vm(&mut out, &sh), s, exec)
                        .unwrap()
                });
            }
            let plan = LuPlan::new((&sh, d)).unwrap();
            assert_eq!(plan.output_shapes(), [&sh[..], &[count, n], &[count, n]]);
            same_bits(&format!("lu {what}"), scratch, |mode, exec| {
                let mut out = dst::<T>(spd.len());
                let (mut p, mut q) = (vec![-1i64; count * n], vec![-1i64; count * n]);
                let a = vw(&spd, &sh);
                let mut o = vm(&mut out, &sh);
                let mut pv = ArrayViewMut::from_slice(&mut p, &[count, n]).unwrap();
                let mut qv = ArrayViewMut::from_slice(&mut q, &[count, n]).unwrap();
                match mode {
                    Mode::OneShot => lu(&a, &mut o, &mut pv, &mut qv, exec),
                    Mode::Plan => plan.run(&a, &mut o, &mut pv, &mut qv, exec),
                    Mode::Lent(s) => plan.run_with_scratch(&a, &mut o, &mut pv, &mut qv, s, exec),
                }
                .unwrap();
                let idx = |v: &[i64]| v.iter().map(|&x| (x as u64, 0)).collect::<Vec<_>>();
                vec![bits(&out), idx(&p), idx(&q)]
            });
            for (tri, adjoint, unit) in [
                (Triangle::Lower, false, false),
                (Triangle::Upper, true, true),
            ] {
                let r = 3;
                let rhs = batch::<T>(count, n, r, |g| random(n, r, T::CPLX, g));
                let bsh = [count, n, r];
                let plan = SolveTriangularPlan::new(tri, adjoint, unit, &sh, &bsh, d).unwrap();
                assert_eq!(plan.output_shape(), &bsh);
                same_bits(
                    &format!("solve_triangular {what}"),
                    scratch,
                    |mode, exec| {
                        let mut out = dst::<T>(rhs.len());
                        let (a, b, mut x) = (vw(&spd, &sh), vw(&rhs, &bsh), vm(&mut out, &bsh));
                        match mode {
                            Mode::OneShot => {
                                solve_triangular(tri, adjoint, unit, &a, &b, &mut x, exec)
                            }
                            Mode::Plan => plan.run(&a, &b, &mut x, exec),
                            Mode::Lent(s) => plan.run_with_scratch(&a, &b, &mut x, s, exec),
                        }
                        .unwrap();
                        vec![bits(&out)]
                    },
                );
            }
        }
        // qr of tall and wide matrices, reduced and complete.
        for (m, c) in [(n, n + 3), (n + 3, n)] {
            let count = 3;
            let k = m.min(c);
            let sh = [count, m, c];
            let a = batch::<T>(count, m, c, |g| random(m, c, T::CPLX, g));
            for complete in [false, true] {
                let qc = if complete { m } else { k };
                let plan = QrPlan::new((&sh, d), complete).unwrap();
                assert_eq!(plan.output_shapes(), [&[count, m, qc][..], &[count, qc, c]]);
                same_bits(&format!("qr {d:?} {m}×{c}"), scratch, |mode, exec| {
                    let mut q = dst::<T>(count * m * qc);
                    let mut r = dst::<T>(count * qc * c);
                    let av = vw(&a, &sh);
                    let mut qv = vm(&mut q, &[count, m, qc]);
                    let mut rv = vm(&mut r, &[count, qc, c]);
                    match mode {
                        Mode::OneShot => qr(&av, &mut qv, &mut rv, exec),
                        Mode::Plan => plan.run(&av, &mut qv, &mut rv, exec),
                        Mode::Lent(s) => plan.run_with_scratch(&av, &mut qv, &mut rv, s, exec),
                    }
                    .unwrap();
                    vec![bits(&q), bits(&r)]
                });
            }
        }
    }
}

fn spectral<T: S>(scratch: &mut Scratch) {
    let d = T::DTYPE;
    for n in [0, 1, 4, 16, 40] {
        let count = 3;
        let sh = [count, n, n];
        let a = batch::<T>(count, n, n, |r| {
            with_spectrum(&geometric(n, 10.0), T::CPLX, r)
        });
        for vectors in [false, true] {
            let plan = EighPlan::new((&sh, d), vectors).unwrap();
            let vsh: &[usize] = if vectors { &sh } else { &[] };
            assert_eq!(plan.output_shapes(), [&[count, n][..], vsh]);
            same_bits(&format!("eigh {d:?} n = {n}"), scratch, |mode, exec| {
                let mut w = vec![0.0f64; count * n];
                let mut v = dst::<T>(if vectors { count * n * n } else { 0 });
                let av = vw(&a, &sh);
                let mut wv = real_view::<T>(&mut w, &[count, n]);
                let mut vv = vectors.then(|| vm(&mut v, &sh));
                let vo = vv.as_mut();
                match mode {
                    Mode::OneShot => eigh(&av, &mut wv, vo, exec),
                    Mode::Plan => plan.run(&av, &mut wv, vo, exec),
                    Mode::Lent(s) => plan.run_with_scratch(&av, &mut wv, vo, s, exec),
                }
                .unwrap();
                vec![w.iter().map(|x| (x.to_bits(), 0)).collect(), bits(&v)]
            });
            let plan = EigPlan::new((&sh, d), vectors).unwrap();
            same_bits(&format!("eig {d:?} n = {n}"), scratch, |mode, exec| {
                let mut w = vec![Complex::new(0.0f64, 0.0); count * n];
                let mut v =
                    vec![Complex::new(0.0f64, 0.0); if vectors { count * n * n } else { 0 }];
                let av = vw(&a, &sh);
                let mut wv = complex_view::<T>(&mut w, &[count, n]);
                let mut vv = vectors.then(|| complex_view::<T>(&mut v, &sh));
                let vo = vv.as_mut();
                match mode {
                    Mode::OneShot => eig(&av, &mut wv, vo, exec),
                    Mode::Plan => plan.run(&av, &mut wv, vo, exec),
                    Mode::Lent(s) => plan.run_with_scratch(&av, &mut wv, vo, s, exec),
                }
                .unwrap();
                let b = |v: &[Complex<f64>]| {
                    v.iter().map(|x| (x.re.to_bits(), x.im.to_bits())).collect()
                };
                vec![b(&w), b(&v)]
            });
        }
        for (m, c) in [(n, n + 2), (n + 2, n)] {
            let k = m.min(c);
            let sh = [count, m, c];
            let a = batch::<T>(count, m, c, |g| random(m, c, T::CPLX, g));
            for vectors in [SvdVectors::None, SvdVectors::Reduced, SvdVectors::Complete] {
                let (uc, vr) = if vectors == SvdVectors::Complete {
                    (m, c)
                } else {
                    (k, k)
                };
                let want = vectors != SvdVectors::None;
                let plan = SvdPlan::new((&sh, d), vectors).unwrap();
                same_bits(
                    &format!("svd {d:?} {m}×{c} {vectors:?}"),
                    scratch,
                    |mode, exec| {
                        let mut s = vec![0.0f64; count * k];
                        let mut u = dst::<T>(if want { count * m * uc } else { 0 });
                        let mut vh = dst::<T>(if want { count * vr * c } else { 0 });
                        let av = vw(&a, &sh);
                        let mut sv = real_view::<T>(&mut s, &[count, k]);
                        let mut uv = want.then(|| vm(&mut u, &[count, m, uc]));
                        let mut vhv = want.then(|| vm(&mut vh, &[count, vr, c]));
                        let vo = uv.as_mut().zip(vhv.as_mut());
                        match mode {
                            Mode::OneShot => svd(&av, &mut sv, vo, exec),
                            Mode::Plan => plan.run(&av, &mut sv, vo, exec),
                            Mode::Lent(sc) => plan.run_with_scratch(&av, &mut sv, vo, sc, exec),
                        }
                        .unwrap();
                        vec![
                            s.iter().map(|x| (x.to_bits(), 0)).collect(),
                            bits(&u),
                            bits(&vh),
                        ]
                    },
                );
            }
        }
    }
}

/// A view of the real dtype of T's precision over f64 storage (f32 values
/// in the first half where T is of single precision).
fn real_view<'a, T: S>(v: &'a mut [f64], shape: &[usize]) -> ArrayViewMut<'a> {
    if T::REAL == DType::F32 {
        let len = shape.iter().product::<usize>();
        // SAFETY: f64 storage holds twice as many f32 values; len f32 fit.
        let f: &mut [f32] =
            unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut f32, len) };
        ArrayViewMut::from_slice(f, shape).unwrap()
    } else {
        ArrayViewMut::from_slice(v, shape).unwrap()
    }
}

/// A view of the complex dtype of T's precision over complex128 storage.
fn complex_view<'a, T: S>(v: &'a mut [Complex<f64>], shape: &[usize]) -> ArrayViewMut<'a> {
    if T::CDT == DType::C64 {
        let len = shape.iter().product::<usize>();
        // SAFETY: complex128 storage holds twice as many complex64 values.
        let f: &mut [Complex<f32>] =
            unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut Complex<f32>, len) };
        ArrayViewMut::from_slice(f, shape).unwrap()
    } else {
        ArrayViewMut::from_slice(v, shape).unwrap()
    }
}

#[test]
fn plans_give_the_one_shot_bits_from_any_scratch() {
    let mut scratch = Scratch::new();
    factorisations::<f64>(&mut scratch);
    factorisations::<Complex<f32>>(&mut scratch);
    factorisations::<f32>(&mut scratch);
    factorisations::<Complex<f64>>(&mut scratch);
    spectral::<f32>(&mut scratch);
    spectral::<Complex<f64>>(&mut scratch);
    spectral::<f64>(&mut scratch);
    spectral::<Complex<f32>>(&mut scratch);
}

#[test]
fn plans_refuse_what_they_were_not_made_for() {
    // At planning: a non-square matrix, a dtype the routines do not take.
    assert!(matches!(
        CholeskyPlan::new(Triangle::Lower, (&[2, 3, 4], DType::F64)),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        LuPlan::new((&[4, 4], DType::I32)),
        Err(Error::DTypeUnsupported { .. })
    ));
    assert!(matches!(
        EighPlan::new((&[4], DType::F64), true),
        Err(Error::Rank { .. })
    ));
    assert!(matches!(
        SolveTriangularPlan::new(Triangle::Lower, false, false, &[4, 4], &[5, 2], DType::F64),
        Err(Error::Shape { .. })
    ));
    let a = vec![1.0f64; 16];
    let exec = Exec::default();
    // At a run: another shape, another dtype, vectors the plan lacks or
    // has: refused, the destination untouched.
    let plan = CholeskyPlan::new(Triangle::Lower, (&[4, 4], DType::F64)).unwrap();
    let mut out = vec![7.0f64; 16];
    let r = plan.run(&vw(&a, &[2, 2, 4]), &mut vm(&mut out, &[4, 4]), &exec);
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    let r = plan.run(&vw(&a, &[4, 4]), &mut vm(&mut out, &[2, 8]), &exec);
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    let mut out32 = vec![7.0f32; 16];
    let r = plan.run_with_scratch(
        &vw(&a, &[4, 4]),
        &mut vm(&mut out32, &[4, 4]),
        &mut Scratch::new(),
        &exec,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
    assert!(out.iter().all(|&x| x == 7.0) && out32.iter().all(|&x| x == 7.0));
    let spd: Vec<f64> = (0..16)
        .map(|p| if p % 5 == 0 { 4.0 } else { 1.0 })
        .collect();
    let mut w = vec![7.0f64; 4];
    let mut v = vec![7.0f64; 16];
    let with = EighPlan::new((&[4, 4], DType::F64), true).unwrap();
    let r = with.run(&vw(&spd, &[4, 4]), &mut vm(&mut w, &[4]), None, &exec);
    assert!(matches!(r, Err(Error::Attribute { .. })), "{r:?}");
    let without = EighPlan::new((&[4, 4], DType::F64), false).unwrap();
    let r = without.run(
        &vw(&spd, &[4, 4]),
        &mut vm(&mut w, &[4]),
        Some(&mut vm(&mut v, &[4, 4])),
        &exec,
    );
    assert!(matches!(r, Err(Error::Attribute { .. })), "{r:?}");
    assert!(w.iter().chain(&v).all(|&x| x == 7.0));
    // qr planned reduced, run with complete q and r.
    let plan = QrPlan::new((&[4, 2], DType::F64), false).unwrap();
    let (mut q, mut r) = (vec![7.0f64; 16], vec![7.0f64; 8]);
    let res = plan.run(
        &vw(&a[..8], &[4, 2]),
        &mut vm(&mut q, &[4, 4]),
        &mut vm(&mut r, &[4, 2]),
        &exec,
    );
    assert!(matches!(res, Err(Error::Shape { .. })), "{res:?}");
    // svd planned with reduced vectors, run with complete ones.
    let plan = SvdPlan::new((&[4, 2], DType::F64), SvdVectors::Reduced).unwrap();
    let (mut s, mut u, mut vh) = (vec![7.0f64; 2], vec![7.0f64; 16], vec![7.0f64; 4]);
    let res = plan.run(
        &vw(&a[..8], &[4, 2]),
        &mut vm(&mut s, &[2]),
        Some((&mut vm(&mut u, &[4, 4]), &mut vm(&mut vh, &[2, 2]))),
        &exec,
    );
    assert!(matches!(res, Err(Error::Shape { .. })), "{res:?}");
    assert!(q.iter().chain(&r).chain(&s).chain(&u).all(|&x| x == 7.0));
}
