//! Reductions against an independent slow model of the lane order (plain
//! loops over `Option` lanes, a recursive block tree), bit for bit, on every
//! tier the CPU runs, at 1, 2 and 7 threads, through contiguous, strided,
//! reversed, transposed and multi-axis layouts; error bounds against exact
//! oracles; refusals that leave the destination untouched.

use half::f16;
use tessera::reduce::lanes::{combine_blocks, fold_sum_lanes, sum_lanes, LANES};
use tessera::{
    available_tiers, dot, l2_norm, min_max, reduce, reduce_many, squared_distance, ArrayView,
    ArrayViewMut, DType, Error, Exec, ReduceOp, Tier,
};
use tessera_testkit::rng::Rng;

/// A factor near 1 (products stay finite).
fn near_one(rng: &mut Rng) -> f64 {
    1.0 + (rng.unit() - 0.5) / 64.0
}

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in available_tiers() {
        for th in [1, 2, 7] {
            v.push(Exec::on(t).threads(th));
        }
    }
    v
}

// ---------------------------------------------------------------- the model

trait Num:
    Copy + PartialEq + std::fmt::Debug + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    fn bits(self) -> u64;
}
impl Num for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}
impl Num for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// ARCHITECTURE.md §5.3 read literally: lanes that hold no term take no part.
fn model<T: Num>(terms: &[T], prod: bool) -> T {
    let op = |a: T, b: T| if prod { a * b } else { a + b };
    let blocks: Vec<T> = terms
        .chunks(1024)
        .map(|b| {
            let mut lanes: Vec<Option<T>> = vec![None; 16];
            for (j, &v) in b.iter().enumerate() {
                let l = &mut lanes[j % 16];
                *l = Some(match *l {
                    None if prod => v,
                    None => T::ZERO + v,
                    Some(a) => op(a, v),
                });
            }
            for w in [8, 4, 2, 1] {
                for i in 0..w {
                    if let Some(r) = lanes[i + w] {
                        lanes[i] = Some(op(lanes[i].expect("a lower lane holds a term"), r));
                    }
                }
            }
            lanes[0].expect("a block holds a term")
        })
        .collect();
    fn tree<T: Copy>(v: &[T], op: &dyn Fn(T, T) -> T) -> T {
        if v.len() == 1 {
            return v[0];
        }
        let mut p = 1;
        while p * 2 < v.len() {
            p *= 2;
        }
        op(tree(&v[..p], op), tree(&v[p..], op))
    }
    if blocks.is_empty() {
        return if prod { T::ONE } else { T::ZERO };
    }
    tree(&blocks, &op)
}

// ------------------------------------------------------------- the layouts

/// A float type the tests place in buffers.
trait Elem: Num + tessera::Element + Default {
    fn from_f64(v: f64) -> Self;
}
impl Elem for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}
impl Elem for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// One layout of a reduction: the buffer, the view's geometry, the axes, and
/// each output's terms in number order.
struct Case<T> {
    name: &'static str,
    buf: Vec<T>,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
    axes: Vec<usize>,
    outputs: Vec<Vec<T>>,
}

fn cases<T: Elem>(n: usize, rng: &mut Rng, prod: bool, all: bool) -> Vec<Case<T>> {
    let mut val = || T::from_f64(if prod { near_one(rng) } else { rng.spread() });
    let mut out = Vec::new();
    // Contiguous.
    let v: Vec<T> = (0..n).map(|_| val()).collect();
    out.push(Case {
        name: "contiguous",
        buf: v.clone(),
        shape: vec![n],
        strides: vec![1],
        offset: 0,
        axes: vec![0],
        outputs: vec![v.clone()],
    });
    if !all {
        return out;
    }
    // Strided (stride 3, offset 2), the gaps holding junk.
    let mut buf = vec![T::from_f64(1e30); 3 * n + 3];
    for (i, &x) in v.iter().enumerate() {
        buf[2 + 3 * i] = x;
    }
    out.push(Case {
        name: "strided",
        buf,
        shape: vec![n],
        strides: vec![3],
        offset: 2,
        axes: vec![0],
        outputs: vec![v.clone()],
    });
    // Negative stride: term i at 2(n - 1 - i) + 1.
    let mut buf = vec![T::from_f64(-1e30); 2 * n + 2];
    for (i, &x) in v.iter().enumerate() {
        buf[2 * (n - 1 - i) + 1] = x;
    }
    out.push(Case {
        name: "negative stride",
        buf,
        shape: vec![n],
        strides: vec![-2],
        offset: if n == 0 { 0 } else { 2 * (n - 1) + 1 },
        axes: vec![0],
        outputs: vec![v.clone()],
    });
    // Reduced axis not innermost: shape (n, 3), reduce axis 0.
    let cols = 3;
    let m: Vec<T> = (0..n * cols).map(|_| val()).collect();
    out.push(Case {
        name: "outer axis",
        buf: m.clone(),
        shape: vec![n, cols],
        strides: vec![cols as isize, 1],
        offset: 0,
        axes: vec![0],
        outputs: (0..cols)
            .map(|c| (0..n).map(|i| m[i * cols + c]).collect())
            .collect(),
    });
    // Transposed (Fortran order): shape (2, n) stored column-major, reduce axis 1.
    let rows = 2;
    let f: Vec<T> = (0..rows * n).map(|_| val()).collect();
    out.push(Case {
        name: "transposed",
        buf: f.clone(),
        shape: vec![rows, n],
        strides: vec![1, rows as isize],
        offset: 0,
        axes: vec![1],
        outputs: (0..rows)
            .map(|r| (0..n).map(|j| f[r + j * rows]).collect())
            .collect(),
    });
    // Several axes: n = a·b terms of shape (a, 2, b), reduce axes 0 and 2; the
    // terms number in C order of (a, b).
    let b = (1..=7).rev().find(|d| n.is_multiple_of(*d)).unwrap_or(1);
    let a = n / b;
    let g: Vec<T> = (0..a * 2 * b).map(|_| val()).collect();
    out.push(Case {
        name: "several axes",
        buf: g.clone(),
        shape: vec![a, 2, b],
        strides: vec![(2 * b) as isize, b as isize, 1],
        offset: 0,
        axes: vec![0, 2],
        outputs: (0..2)
            .map(|k| {
                let mut t = Vec::new();
                for i in 0..a {
                    for j in 0..b {
                        t.push(g[i * 2 * b + k * b + j]);
                    }
                }
                t
            })
            .collect(),
    });
    out
}

fn check_case<T: Elem>(c: &Case<T>, op: ReduceOp, ex: &[Exec]) {
    let prod = op == ReduceOp::Prod;
    let want: Vec<T> = c.outputs.iter().map(|t| model(t, prod)).collect();
    let x = ArrayView::from_slice_strided(&c.buf, &c.shape, &c.strides, c.offset).unwrap();
    for e in ex {
        let mut got = vec![T::from_f64(f64::NAN); want.len()];
        let dshape = [want.len()];
        let dshape: &[usize] = if c.outputs.len() == 1 { &[] } else { &dshape };
        let mut d = ArrayViewMut::from_slice(&mut got, dshape).unwrap();
        reduce(op, &c.axes, &x, &mut d, e).unwrap();
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.bits(),
                w.bits(),
                "{op:?} {} n={} output {k} on {e:?}: got {g:?}, model {w:?}",
                c.name,
                c.outputs[0].len()
            );
        }
    }
}

fn sizes() -> Vec<usize> {
    let mut s: Vec<usize> = (0..=200).collect();
    s.extend((201..5000).step_by(53));
    s.extend([
        1023,
        1024,
        1025,
        2047,
        2048,
        2049,
        3 * 1024 + 17,
        4096,
        4097,
        4999,
        5000,
    ]);
    s
}

#[test]
fn sum_and_prod_follow_the_lane_order_small() {
    let ex = execs();
    let mut rng = Rng::new(1);
    for n in sizes() {
        let all = n <= 40 || n % 7 == 0 || n > 1000;
        for op in [ReduceOp::Sum, ReduceOp::Prod] {
            for c in cases::<f32>(n, &mut rng, op == ReduceOp::Prod, all) {
                check_case(&c, op, &ex);
            }
            for c in cases::<f64>(n, &mut rng, op == ReduceOp::Prod, all) {
                check_case(&c, op, &ex);
            }
        }
    }
}

#[test]
fn sum_follows_the_lane_order_large() {
    // Past the parallel threshold: whole blocks over threads.
    let ex = execs();
    let mut rng = Rng::new(2);
    for n in [(1 << 20) - 1, (1 << 20) + 1] {
        for c in cases::<f32>(n, &mut rng, false, true) {
            check_case(&c, ReduceOp::Sum, &ex);
        }
    }
    for c in cases::<f64>((1 << 20) + 1, &mut rng, false, true) {
        check_case(&c, ReduceOp::Sum, &ex);
    }
    for c in cases::<f32>(70_001, &mut rng, true, false) {
        check_case(&c, ReduceOp::Prod, &ex);
    }
}

#[test]
fn narrow_floats_sum_in_f32_and_round_once() {
    let mut rng = Rng::new(3);
    let n = 3 * 1024 + 17;
    let h: Vec<f16> = (0..n).map(|_| f16::from_f64(rng.spread())).collect();
    let terms: Vec<f32> = h.iter().map(|v| v.to_f32()).collect();
    let want32 = model(&terms, false);
    let x = ArrayView::from_slice(&h, &[n]).unwrap();
    for e in execs() {
        let mut y = [0f32];
        reduce(
            ReduceOp::Sum,
            &[0],
            &x,
            &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(y[0].to_bits(), want32.to_bits(), "{e:?}");
        // An f16 destination: the f32 result rounded once.
        let mut z = [f16::ZERO];
        reduce(
            ReduceOp::Sum,
            &[0],
            &x,
            &mut ArrayViewMut::from_slice(&mut z, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(z[0].to_bits(), f16::from_f32(want32).to_bits(), "{e:?}");
        // An f64 destination widens exactly.
        let mut w = [0f64];
        reduce(
            ReduceOp::Sum,
            &[0],
            &x,
            &mut ArrayViewMut::from_slice(&mut w, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(w[0], want32 as f64);
    }
}

#[test]
fn integer_sums_wrap_exactly() {
    let mut rng = Rng::new(4);
    let n = 100_003;
    let v: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
    let want: i64 = v.iter().fold(0i64, |a, &b| a.wrapping_add(b as i64));
    let u: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let uwant = u.iter().fold(0u64, |a, &b| a.wrapping_add(b));
    let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
    let bwant = bytes.iter().map(|&b| b as u64).sum::<u64>();
    let bmax = *bytes.iter().max().unwrap();
    for e in execs() {
        let mut y = [0i64];
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        reduce(
            ReduceOp::Sum,
            &[0],
            &x,
            &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(y[0], want);
        // Into i32: the i64 sum wraps into 32 bits.
        let mut y32 = [0i32];
        reduce(
            ReduceOp::Sum,
            &[0],
            &x,
            &mut ArrayViewMut::from_slice(&mut y32, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(y32[0], want as i32);
        let mut yu = [0u64];
        let xu = ArrayView::from_slice(&u, &[n]).unwrap();
        reduce(
            ReduceOp::Sum,
            &[0],
            &xu,
            &mut ArrayViewMut::from_slice(&mut yu, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(yu[0], uwant);
        let xb = ArrayView::from_slice(&bytes, &[n]).unwrap();
        reduce(
            ReduceOp::Sum,
            &[0],
            &xb,
            &mut ArrayViewMut::from_slice(&mut yu, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(yu[0], bwant);
        let mut m = [0u8];
        reduce(
            ReduceOp::Max,
            &[0],
            &xb,
            &mut ArrayViewMut::from_slice(&mut m, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(m[0], bmax);
    }
}

/// IEEE 754-2019 maximum for the model.
fn ieee_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        if a.is_sign_negative() {
            b
        } else {
            a
        }
    } else {
        a.max(b)
    }
}

#[test]
fn max_min_and_arg_follow_ieee_and_first_occurrence() {
    let ex = execs();
    let mut rng = Rng::new(5);
    for n in [1usize, 2, 17, 1024, 1025, 5000, 70_000] {
        for nan in [false, true] {
            let mut v: Vec<f64> = (0..n)
                .map(|_| (rng.next_u64() % 64) as f64 - 32.0)
                .collect();
            v[n / 2] = -0.0;
            if nan {
                v[(n * 2) / 3] = f64::NAN;
                v[n - 1] = f64::NAN;
            }
            let mx = v.iter().fold(f64::NEG_INFINITY, |a, &b| ieee_max(a, b));
            let mn = -v.iter().fold(f64::NEG_INFINITY, |a, &b| ieee_max(a, -b));
            let am = v
                .iter()
                .position(|&x| {
                    x.is_nan() || (x == mx && x.is_sign_negative() == mx.is_sign_negative())
                })
                .unwrap() as i64;
            let an = v
                .iter()
                .position(|&x| {
                    x.is_nan() || (x == mn && x.is_sign_negative() == mn.is_sign_negative())
                })
                .unwrap() as i64;
            let x = ArrayView::from_slice(&v, &[n]).unwrap();
            for e in &ex {
                let (mut a, mut b, mut c, mut d) = ([0f64], [0f64], [0i64], [0i64]);
                {
                    let mut va = ArrayViewMut::from_slice(&mut a, &[]).unwrap();
                    let mut vb = ArrayViewMut::from_slice(&mut b, &[]).unwrap();
                    let mut vc = ArrayViewMut::from_slice(&mut c, &[]).unwrap();
                    let mut vd = ArrayViewMut::from_slice(&mut d, &[]).unwrap();
                    reduce_many(
                        &[0],
                        &x,
                        &mut [
                            (ReduceOp::Max, &mut va),
                            (ReduceOp::Min, &mut vb),
                            (ReduceOp::ArgMax, &mut vc),
                            (ReduceOp::ArgMin, &mut vd),
                        ],
                        e,
                    )
                    .unwrap();
                }
                assert_eq!(a[0].to_bits(), mx.to_bits(), "max n={n} {e:?}");
                if nan {
                    assert!(b[0].is_nan());
                } else {
                    assert_eq!(b[0].to_bits(), mn.to_bits(), "min n={n} {e:?}");
                }
                assert_eq!(c[0], am, "argmax n={n} nan={nan} {e:?}");
                assert_eq!(d[0], an, "argmin n={n} nan={nan} {e:?}");
            }
        }
    }
    // -0 < +0, whichever comes first.
    let v = [-0.0f32, 0.0, -0.0];
    let x = ArrayView::from_slice(&v, &[3]).unwrap();
    let (mut a, mut b) = ([1f32], [1f32]);
    min_max(
        &[0],
        &x,
        &mut ArrayViewMut::from_slice(&mut a, &[]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut b, &[]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert!(a[0] == 0.0 && a[0].is_sign_negative());
    assert!(b[0] == 0.0 && b[0].is_sign_positive());
}

/// Max, Min, ArgMax and ArgMin of f32 one at a time (the single-reduction
/// path, vectorised by order keys), along rows and strided columns, against
/// a fold written here: IEEE 754-2019 extremes (NaN wins, -0 below +0), the
/// first position of an extreme, a NaN the most extreme; every tier and
/// thread count gives the same bits, NaNs included.
#[test]
fn f32_extremes_one_at_a_time_match_the_fold_on_every_tier() {
    fn key(v: f32) -> i64 {
        let b = v.to_bits() as i32;
        (b ^ (((b >> 31) as u32) >> 1) as i32) as i64
    }
    let ex = execs();
    let mut rng = Rng::new(11);
    let specials = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
        -1.0,
        f32::MIN_POSITIVE,
    ];
    for n in [1usize, 2, 15, 16, 17, 31, 1023, 1024, 1025, 4099, 70_000] {
        for nans in [0usize, 1, 3] {
            let mut v: Vec<f32> = (0..n)
                .map(|_| match rng.next_u64() % 8 {
                    0 => specials[(rng.next_u64() % specials.len() as u64) as usize],
                    _ => ((rng.next_u64() % 2001) as f32 - 1000.0) / 8.0,
                })
                .collect();
            for k in 0..nans {
                let at = (rng.next_u64() % n as u64) as usize;
                // NaNs of both signs and other payloads.
                v[at] = f32::from_bits(
                    (0x7fc0_0001 + k as u32) | if k % 2 == 1 { 0x8000_0000 } else { 0 },
                );
            }
            let first_nan = v.iter().position(|x| x.is_nan());
            let (mut mx, mut mn, mut am, mut an) =
                (f32::NEG_INFINITY, f32::INFINITY, 0usize, 0usize);
            for (j, &x) in v.iter().enumerate() {
                if key(x) > key(mx) {
                    mx = x;
                }
                if key(x) < key(mn) {
                    mn = x;
                }
                if key(x) > key(v[am]) {
                    am = j;
                }
                if key(x) < key(v[an]) {
                    an = j;
                }
            }
            if let Some(j) = first_nan {
                (mx, mn, am, an) = (v[j], v[j], j, j);
            }
            // The same values as a column of a [n, 3] array (stride 3).
            let wide: Vec<f32> = v.iter().flat_map(|&x| [x, 7.0, -7.0]).collect();
            let views = [
                ArrayView::from_slice(&v, &[n]).unwrap(),
                ArrayView::from_slice(&wide, &[n, 3]).unwrap(),
            ];
            for x in &views {
                let col = x.shape().len() == 2;
                // The first result of `op` along axis 0 (of the first column).
                fn first<T: tessera::Element + Default>(
                    op: ReduceOp,
                    x: &ArrayView<'_>,
                    col: bool,
                    e: &Exec,
                ) -> T {
                    let mut out = vec![T::default(); if col { 3 } else { 1 }];
                    let shape: &[usize] = if col { &[3] } else { &[] };
                    let mut dst = ArrayViewMut::from_slice(&mut out, shape).unwrap();
                    reduce(op, &[0], x, &mut dst, e).unwrap();
                    out[0]
                }
                let mut nan_bits: Option<u32> = None;
                for e in &ex {
                    for (op, want) in [(ReduceOp::Max, mx), (ReduceOp::Min, mn)] {
                        let got: f32 = first(op, x, col, e);
                        if want.is_nan() {
                            // A NaN's sign and payload are not in the
                            // contract, but every tier and thread count
                            // gives the same one.
                            assert!(got.is_nan(), "{op:?} n={n} nans={nans} {e:?}");
                            let seen = *nan_bits.get_or_insert(got.to_bits());
                            assert_eq!(seen, got.to_bits(), "{op:?} n={n} {e:?}");
                        } else {
                            assert_eq!(
                                got.to_bits(),
                                want.to_bits(),
                                "{op:?} n={n} nans={nans} col={col} {e:?}"
                            );
                        }
                    }
                    for (op, want) in [(ReduceOp::ArgMax, am), (ReduceOp::ArgMin, an)] {
                        let got: i64 = first(op, x, col, e);
                        assert_eq!(got, want as i64, "{op:?} n={n} nans={nans} col={col} {e:?}");
                    }
                }
            }
        }
    }
}

/// γ(r) = r·u / (1 - r·u).
fn gamma(r: usize, u: f64) -> f64 {
    let ru = r as f64 * u;
    ru / (1.0 - ru)
}

fn rounds(n: usize) -> usize {
    let b = n.div_ceil(1024).max(1);
    n.min(1024).div_ceil(16) + 4 + (usize::BITS - (b - 1).leading_zeros()) as usize
}

#[test]
fn accumulation_error_bound_states_the_documented_formula() {
    use tessera::reduce::accumulation_error_bound as bound;
    let (u32_, u64_) = (2f64.powi(-24), 2f64.powi(-53));
    // r by hand: 16 terms one per lane (1) and the fold (4); 1024: 64 + 4;
    // 1025: two blocks, one tree level; 3000: three blocks, two levels.
    for (n, r) in [
        (16usize, 5usize),
        (17, 6),
        (1024, 68),
        (1025, 69),
        (3000, 70),
        (1 << 20, 78),
    ] {
        assert_eq!(rounds(n), r, "the test's own r for n = {n}");
        assert_eq!(
            bound(DType::F32, DType::F32, n).unwrap(),
            gamma(r, u32_),
            "n = {n}"
        );
        assert_eq!(
            bound(DType::F64, DType::F64, n).unwrap(),
            gamma(r, u64_),
            "n = {n}"
        );
        // c64 per component as f32; an f64 result of an f32 sum is exact.
        assert_eq!(bound(DType::C64, DType::C64, n).unwrap(), gamma(r, u32_));
        assert_eq!(bound(DType::F64, DType::F32, n).unwrap(), gamma(r, u32_));
        // Rounding into f16 (u = 2^-11) or e4m3fn (u = 2^-4) after f32.
        let g = gamma(r, u32_);
        assert_eq!(
            bound(DType::F16, DType::F32, n).unwrap(),
            g + 2f64.powi(-11) * (1.0 + g)
        );
        assert_eq!(
            bound(DType::E4m3fn, DType::F32, n).unwrap(),
            g + 2f64.powi(-4) * (1.0 + g)
        );
        // The compensated sums: 2γ(r+1)² of the part, plus the result's rounding.
        let gp = gamma(r + 1, u32_);
        assert_eq!(
            bound(DType::F32, DType::Df32, n).unwrap(),
            2.0 * gp * gp + u32_
        );
        let gp = gamma(r + 1, u64_);
        assert_eq!(
            bound(DType::F64, DType::Dd64, n).unwrap(),
            2.0 * gp * gp + u64_
        );
        assert_eq!(bound(DType::I32, DType::I64, n).unwrap(), 0.0);
    }
    assert_eq!(bound(DType::F32, DType::F32, 1).unwrap(), 0.0);
    assert_eq!(bound(DType::F32, DType::F32, 0).unwrap(), 0.0);
    for acc in [
        DType::F16,
        DType::Bf16,
        DType::Bool,
        DType::E4m3fn,
        DType::I4,
    ] {
        assert!(
            matches!(
                bound(DType::F32, acc, 10),
                Err(Error::DTypeUnsupported { .. })
            ),
            "{acc}"
        );
    }
    assert!(bound(DType::Bool, DType::F32, 10).is_err());
    // Past r·u = 1 (f32's u = 2^-24, r ~ 2^24 levels can never happen in
    // lane order; a coarse result dtype is still finite): never NaN.
    assert!(bound(DType::F32, DType::F32, usize::MAX)
        .unwrap()
        .is_finite());
}

#[test]
fn sum_is_within_its_bound_of_the_exact_sum() {
    let mut rng = Rng::new(6);
    for &n in &[10usize, 1000, 4097, 100_000, (1 << 20) + 1] {
        // f32 terms on the grid 2^-20 below 2^4: their f64 sum is exact.
        let mut v: Vec<f32> = (0..n)
            .map(|_| ((rng.next_u64() >> 40) as i64 - (1 << 23)) as f32 * 2f32.powi(-20))
            .collect();
        // Ill-conditioned: large terms that cancel.
        for i in (0..n).step_by(97) {
            let big = 8.0 - 2f32.powi(-19);
            v[i] = if i % 2 == 0 { big } else { -big };
        }
        let exact: f64 = v.iter().map(|&x| x as f64).sum();
        let abs: f64 = v.iter().map(|&x| (x as f64).abs()).sum();
        let bound = gamma(rounds(n), 2f64.powi(-24)) * abs;
        assert_eq!(
            tessera::reduce::accumulation_error_bound(DType::F32, DType::F32, n).unwrap() * abs,
            bound
        );
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        let mut y = [0f32];
        reduce(
            ReduceOp::Sum,
            &[0],
            &x,
            &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let err = (y[0] as f64 - exact).abs();
        assert!(err <= bound, "f32 n={n}: error {err:e} > bound {bound:e}");
        // f64 terms on the grid 2^-40 below 2^12: an exact i128 oracle.
        let w: Vec<i64> = (0..n)
            .map(|_| (rng.next_u64() >> 12) as i64 - (1 << 51))
            .collect();
        let exact: i128 = w.iter().map(|&k| k as i128).sum();
        let abs: i128 = w.iter().map(|&k| (k as i128).abs()).sum();
        let vf: Vec<f64> = w.iter().map(|&k| k as f64 * 2f64.powi(-40)).collect();
        let x = ArrayView::from_slice(&vf, &[n]).unwrap();
        let mut y = [0f64];
        reduce(
            ReduceOp::Sum,
            &[0],
            &x,
            &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let got = (y[0] * 2f64.powi(40)) as i128; // exact: y is on a coarser grid
        let err = (got - exact).unsigned_abs() as f64;
        let bound = gamma(rounds(n), 2f64.powi(-53)) * abs as f64;
        assert!(err <= bound, "f64 n={n}: error {err:e} > bound {bound:e}");
    }
}

#[test]
fn logsumexp_and_moments_are_within_their_bounds() {
    let mut rng = Rng::new(7);
    for &n in &[1usize, 100, 5000, 300_000] {
        // Ill-conditioned for the variance: a large mean, a small spread.
        let v: Vec<f32> = (0..n)
            .map(|_| 1000.0 + ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.01)
            .collect();
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        let (mut l, mut m, mut s) = ([0f32], [0f32], [0f32]);
        {
            let mut vl = ArrayViewMut::from_slice(&mut l, &[]).unwrap();
            let mut vm = ArrayViewMut::from_slice(&mut m, &[]).unwrap();
            let mut vs = ArrayViewMut::from_slice(&mut s, &[]).unwrap();
            reduce_many(
                &[0],
                &x,
                &mut [
                    (ReduceOp::Logsumexp, &mut vl),
                    (ReduceOp::Mean, &mut vm),
                    (ReduceOp::Variance, &mut vs),
                ],
                &Exec::default(),
            )
            .unwrap();
        }
        let u = 2f64.powi(-24);
        // Oracles in f64 (errors far below the f32 bounds).
        let mx = v.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b as f64));
        let lse = mx + v.iter().map(|&t| (t as f64 - mx).exp()).sum::<f64>().ln();
        let mu = v.iter().map(|&t| t as f64).sum::<f64>() / n as f64;
        let var = v.iter().map(|&t| (t as f64 - mu).powi(2)).sum::<f64>() / n as f64;
        let mag = v.iter().map(|&t| (t as f64).abs()).sum::<f64>() / n as f64;
        let big_l = (n.min(1024).div_ceil(16) + 3) as f64;
        let d = (usize::BITS - (n.div_ceil(1024).max(1) - 1).leading_zeros()) as f64;
        let lse_bound = (big_l + d + 5.0 + 6.0 * (n as f64).ln()) * u + u * lse.abs();
        assert!((l[0] as f64 - lse).abs() <= lse_bound, "lse n={n}");
        let e = (big_l + d) * u * mag + u * mu.abs();
        assert!((m[0] as f64 - mu).abs() <= e, "mean n={n}");
        let vb = (big_l + d + 5.0) * u * var
            + 2.0 * (big_l + d + 1.0) * u * e * var.sqrt()
            + (3.0 * big_l + 3.0 * d + 7.0) * u * e * e;
        assert!(
            (s[0] as f64 - var).abs() <= vb,
            "variance n={n}: {} vs {var}",
            s[0]
        );
    }
}

#[test]
fn logsumexp_and_moments_agree_across_tiers_and_threads() {
    let mut rng = Rng::new(8);
    let n = (1 << 17) + 3;
    let v: Vec<f64> = (0..n).map(|_| rng.spread()).collect();
    let x = ArrayView::from_slice(&v, &[n]).unwrap();
    let mut first: Option<[u64; 3]> = None;
    for e in execs() {
        let (mut l, mut m, mut s) = ([0f64], [0f64], [0f64]);
        {
            let mut vl = ArrayViewMut::from_slice(&mut l, &[]).unwrap();
            let mut vm = ArrayViewMut::from_slice(&mut m, &[]).unwrap();
            let mut vs = ArrayViewMut::from_slice(&mut s, &[]).unwrap();
            reduce_many(
                &[0],
                &x,
                &mut [
                    (ReduceOp::Logsumexp, &mut vl),
                    (ReduceOp::Mean, &mut vm),
                    (ReduceOp::Variance, &mut vs),
                ],
                &e,
            )
            .unwrap();
        }
        let bits = [l[0].to_bits(), m[0].to_bits(), s[0].to_bits()];
        match first {
            None => first = Some(bits),
            Some(f) => assert_eq!(f, bits, "{e:?}"),
        }
    }
    // Specials: a NaN term makes both NaN; all -inf gives -inf.
    let v = [1.0f64, f64::NAN, 2.0];
    let x = ArrayView::from_slice(&v, &[3]).unwrap();
    let mut l = [0f64];
    reduce(
        ReduceOp::Logsumexp,
        &[0],
        &x,
        &mut ArrayViewMut::from_slice(&mut l, &[]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert!(l[0].is_nan());
    let v = [f64::NEG_INFINITY; 3];
    let x = ArrayView::from_slice(&v, &[3]).unwrap();
    reduce(
        ReduceOp::Logsumexp,
        &[0],
        &x,
        &mut ArrayViewMut::from_slice(&mut l, &[]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert_eq!(l[0], f64::NEG_INFINITY);
}

#[test]
fn lane_api_streams_to_the_bits_of_one_call() {
    let mut rng = Rng::new(9);
    let n = 5 * 1024 + 300;
    let v: Vec<f32> = (0..n).map(|_| rng.spread() as f32).collect();
    for t in available_tiers() {
        let e = Exec::on(t);
        let mut whole = [0f32];
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        reduce(
            ReduceOp::Sum,
            &[0],
            &x,
            &mut ArrayViewMut::from_slice(&mut whole, &[]).unwrap(),
            &e,
        )
        .unwrap();
        // Chunks of 2, 1 and the rest blocks, folded by the caller.
        let mut totals = Vec::new();
        for (a, b) in [(0, 2048), (2048, 3072), (3072, n)] {
            let chunk = &v[a..b];
            let mut lanes = vec![[0f32; LANES]; chunk.len().div_ceil(1024)];
            sum_lanes(chunk, &mut lanes, &e).unwrap();
            totals.extend(lanes.iter().map(fold_sum_lanes));
        }
        assert_eq!(
            combine_blocks(&totals).to_bits(),
            whole[0].to_bits(),
            "{t:?}"
        );
        assert_eq!(whole[0].to_bits(), model(&v, false).to_bits());
        let mut short = vec![[0f32; LANES]; 1];
        assert!(sum_lanes(&v[..2048], &mut short, &e).is_err());
    }
}

#[test]
fn pair_forms_sum_their_terms_in_lane_order() {
    let mut rng = Rng::new(10);
    let n = 4099;
    let a: Vec<f32> = (0..n).map(|_| rng.spread() as f32).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.spread() as f32).collect();
    let prods: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    let sq: Vec<f32> = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).collect();
    let (xa, xb) = (
        ArrayView::from_slice(&a, &[n]).unwrap(),
        ArrayView::from_slice(&b, &[n]).unwrap(),
    );
    for e in execs() {
        let mut y = [0f32];
        dot(
            &[0],
            &xa,
            &xb,
            &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(y[0].to_bits(), model(&prods, false).to_bits());
        squared_distance(
            &[0],
            &xa,
            &xb,
            &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(y[0].to_bits(), model(&sq, false).to_bits());
    }
    // L2: s = max |x|, then s·√(lane-order Σ (x/s)²).
    let s = a.iter().fold(0f32, |m, &x| m.max(x.abs()));
    let scaled: Vec<f32> = a.iter().map(|&x| (x / s) * (x / s)).collect();
    let want = s * model(&scaled, false).sqrt();
    for e in execs() {
        let mut y = [0f32];
        l2_norm(
            &[0],
            &xa,
            &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(y[0].to_bits(), want.to_bits(), "{e:?}");
    }
    // L2 without overflow: the squares of 1e30 overflow f32, the norm does not.
    let big = vec![1e30f32; 4];
    let mut y = [0f32];
    l2_norm(
        &[0],
        &ArrayView::from_slice(&big, &[4]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert_eq!(y[0], 2e30);
    let tiny = vec![1e-30f32; 4];
    l2_norm(
        &[0],
        &ArrayView::from_slice(&tiny, &[4]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert!((y[0] / 2e-30 - 1.0).abs() < 1e-6);
}

#[test]
fn refusals_write_nothing() {
    let v = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let x = ArrayView::from_slice(&v, &[2, 3]).unwrap();
    let e = Exec::default();
    let mut y = [7f32; 3];
    let check = |r: tessera::Result<()>, y: &[f32]| {
        assert!(r.is_err());
        assert!(y.iter().all(|&t| t == 7.0), "a refusal wrote");
    };
    let r = reduce(
        ReduceOp::Sum,
        &[2],
        &x,
        &mut ArrayViewMut::from_slice(&mut y, &[3]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Axis { axis: 2, .. })), "{r:?}");
    check(r, &y);
    let r = reduce(
        ReduceOp::Sum,
        &[0, 0],
        &x,
        &mut ArrayViewMut::from_slice(&mut y, &[3]).unwrap(),
        &e,
    );
    check(r, &y);
    let r = reduce(
        ReduceOp::Sum,
        &[1],
        &x,
        &mut ArrayViewMut::from_slice(&mut y, &[3]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })));
    check(r, &y);
    let r = reduce(
        ReduceOp::ArgMax,
        &[0],
        &x,
        &mut ArrayViewMut::from_slice(&mut y, &[3]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })));
    check(r, &y);
    // A destination reaching one element twice.
    let r = reduce(
        ReduceOp::Sum,
        &[0],
        &x,
        &mut ArrayViewMut::from_slice_strided(&mut y, &[3], &[0], 0).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Layout { .. })));
    check(r, &y);
    // Max of no term.
    let empty: [f32; 0] = [];
    let xe = ArrayView::from_slice(&empty, &[0, 3]).unwrap();
    let r = reduce(
        ReduceOp::Max,
        &[0],
        &xe,
        &mut ArrayViewMut::from_slice(&mut y, &[3]).unwrap(),
        &e,
    );
    check(r, &y);
    // ...but its sum is +0.
    reduce(
        ReduceOp::Sum,
        &[0],
        &xe,
        &mut ArrayViewMut::from_slice(&mut y, &[3]).unwrap(),
        &e,
    )
    .unwrap();
    assert!(y.iter().all(|t| t.to_bits() == 0));
    y = [7.0; 3];
    // Several outputs: the second is bad, the first is not written.
    let mut z = [9i64; 3];
    {
        let mut a = ArrayViewMut::from_slice(&mut y, &[3]).unwrap();
        let mut b = ArrayViewMut::from_slice(&mut z[..2], &[2]).unwrap();
        let r = reduce_many(
            &[0],
            &x,
            &mut [(ReduceOp::Sum, &mut a), (ReduceOp::ArgMax, &mut b)],
            &e,
        );
        assert!(r.is_err());
    }
    check(
        Err(Error::Attribute {
            name: String::new(),
            reason: String::new(),
        }),
        &y,
    );
    assert!(z.iter().all(|&t| t == 9));
    // Complex max and float logsumexp of integers are not defined.
    let c = [num_complex::Complex::new(1f32, 0.0); 2];
    let xc = ArrayView::from_slice(&c, &[2]).unwrap();
    assert!(reduce(
        ReduceOp::Max,
        &[0],
        &xc,
        &mut ArrayViewMut::from_slice(&mut y[..1], &[]).unwrap(),
        &e,
    )
    .is_err());
    let i = [1i32, 2];
    let xi = ArrayView::from_slice(&i, &[2]).unwrap();
    assert!(reduce(
        ReduceOp::Logsumexp,
        &[0],
        &xi,
        &mut ArrayViewMut::from_slice(&mut y[..1], &[]).unwrap(),
        &e,
    )
    .is_err());
    // Pair of mismatched shapes.
    let w = [1f32; 5];
    let xw = ArrayView::from_slice(&w, &[5]).unwrap();
    let x6 = ArrayView::from_slice(&v, &[6]).unwrap();
    assert!(dot(
        &[0],
        &x6,
        &xw,
        &mut ArrayViewMut::from_slice(&mut y[..1], &[]).unwrap(),
        &e,
    )
    .is_err());
    let _ = Tier::ALL;
}

/// Every dtype: the terms converted into the carrier as a cast does, then
/// reduced in lane order (floats) or wrapping (integers), through a strided
/// view for unpacked dtypes.
#[test]
fn every_dtype_reduces_in_its_carrier() {
    use tessera::reduce::carrier;
    let mut rng = Rng::new(14);
    for &dt in DType::ALL.iter() {
        let info = dt.info();
        if info.class == tessera::Class::Pair {
            // Pairs sum with `Sum2` alone (tests/compensated.rs).
            continue;
        }
        let vpb = info.values_per_byte as usize;
        let (rows, cols) = (3usize, 16 * 8 * vpb.max(1) + 8 * vpb);
        let n = rows * cols;
        let bytes = n / vpb * info.item_bytes;
        let mut data: Vec<u8> = (0..bytes).map(|_| rng.next_u64() as u8).collect();
        if dt == DType::Bool {
            data.iter_mut().for_each(|b| *b &= 1);
        }
        let x = ArrayView::contiguous(dt, &[rows, cols], &data).unwrap();
        let c = carrier(dt);
        // The terms in the carrier, by a cast.
        let mut terms = vec![0u8; n * c.info().item_bytes];
        tessera::cast(
            tessera::CastMode::Default,
            &x,
            &mut ArrayViewMut::contiguous(c, &[rows, cols], &mut terms).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let mut got = vec![0u8; rows * c.info().item_bytes];
        for e in execs() {
            let r = reduce(
                ReduceOp::Sum,
                &[1],
                &x,
                &mut ArrayViewMut::contiguous(c, &[rows], &mut got).unwrap(),
                &e,
            );
            r.unwrap_or_else(|err| panic!("{dt}: {err}"));
            for row in 0..rows {
                let t = &terms
                    [row * cols * c.info().item_bytes..(row + 1) * cols * c.info().item_bytes];
                let g = &got[row * c.info().item_bytes..(row + 1) * c.info().item_bytes];
                match c {
                    DType::F32 => {
                        let v: Vec<f32> = t
                            .chunks(4)
                            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                            .collect();
                        let w = model(&v, false);
                        let gv = f32::from_le_bytes(g.try_into().unwrap());
                        assert!(
                            gv.to_bits() == w.to_bits() || (gv.is_nan() && w.is_nan()),
                            "{dt} {e:?}"
                        );
                    }
                    DType::F64 => {
                        let v: Vec<f64> = t
                            .chunks(8)
                            .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
                            .collect();
                        let w = model(&v, false);
                        let gv = f64::from_le_bytes(g.try_into().unwrap());
                        assert!(
                            gv.to_bits() == w.to_bits() || (gv.is_nan() && w.is_nan()),
                            "{dt} {e:?}"
                        );
                    }
                    DType::I64 | DType::U64 => {
                        let w = t.chunks(8).fold(0u64, |a, b| {
                            a.wrapping_add(u64::from_le_bytes(b.try_into().unwrap()))
                        });
                        assert_eq!(u64::from_le_bytes(g.try_into().unwrap()), w, "{dt} {e:?}");
                    }
                    DType::C64 | DType::C128 => {
                        // Each part in lane order.
                        let w = if c == DType::C64 { 4 } else { 8 };
                        let parts: Vec<f64> = t
                            .chunks(w)
                            .map(|b| {
                                if w == 4 {
                                    f32::from_le_bytes(b.try_into().unwrap()) as f64
                                } else {
                                    f64::from_le_bytes(b.try_into().unwrap())
                                }
                            })
                            .collect();
                        for p in 0..2 {
                            let g_p = if w == 4 {
                                f32::from_le_bytes(g[p * 4..p * 4 + 4].try_into().unwrap()) as f64
                            } else {
                                f64::from_le_bytes(g[p * 8..p * 8 + 8].try_into().unwrap())
                            };
                            let want = if w == 4 {
                                let v: Vec<f32> =
                                    parts.iter().skip(p).step_by(2).map(|&x| x as f32).collect();
                                model(&v, false) as f64
                            } else {
                                let v: Vec<f64> =
                                    parts.iter().skip(p).step_by(2).copied().collect();
                                model(&v, false)
                            };
                            assert!(
                                g_p.to_bits() == want.to_bits() || (g_p.is_nan() && want.is_nan()),
                                "{dt} part {p} {e:?}"
                            );
                        }
                    }
                    other => panic!("unexpected carrier {other}"),
                }
            }
        }
    }
}

#[test]
fn series_kernels_follow_their_stated_order() {
    use tessera::reduce::{
        diff, ema, rolling_max, rolling_mean, rolling_min, sum_squared_deviations,
    };
    let mut rng = Rng::new(15);
    let n = 2100;
    let v: Vec<f64> = (0..n).map(|_| rng.spread()).collect();
    for e in execs() {
        let c = 0.125;
        let terms: Vec<f64> = v.iter().map(|&x| (x - c) * (x - c)).collect();
        assert_eq!(
            sum_squared_deviations(c, &v, &e).unwrap().to_bits(),
            model(&terms, false).to_bits()
        );
        let w = 1500;
        let mut out = vec![0.0; n - w + 1];
        rolling_mean(w, &v, &mut out, &e).unwrap();
        for (i, o) in out.iter().enumerate() {
            assert_eq!(
                o.to_bits(),
                (model(&v[i..i + w], false) / w as f64).to_bits()
            );
        }
    }
    let mut d = vec![0.0; n - 1];
    diff(&v, &mut d, &Exec::default()).unwrap();
    assert!(d.iter().enumerate().all(|(i, &t)| t == v[i + 1] - v[i]));
    let mut m = vec![0.0; n - 2];
    rolling_max(3, &v, &mut m, &Exec::default()).unwrap();
    assert!(m
        .iter()
        .enumerate()
        .all(|(i, &t)| t == v[i].max(v[i + 1]).max(v[i + 2])));
    rolling_min(3, &v, &mut m, &Exec::default()).unwrap();
    assert!(m
        .iter()
        .enumerate()
        .all(|(i, &t)| t == v[i].min(v[i + 1]).min(v[i + 2])));
    let mut y = vec![0.0; n];
    ema(0.25, &v, &mut y, &Exec::default()).unwrap();
    let mut p = v[0];
    assert_eq!(y[0], p);
    for i in 1..n {
        p = 0.25 * v[i] + 0.75 * p;
        assert_eq!(y[i], p);
    }
    assert!(rolling_max(0, &v, &mut m, &Exec::default()).is_err());
    assert!(rolling_max(n + 1, &v, &mut m, &Exec::default()).is_err());
    assert!(ema(1.5, &v, &mut y, &Exec::default()).is_err());
    assert!(diff(&v, &mut y, &Exec::default()).is_err());
}

/// The rolling extremes against a direct model of their contract (per
/// window: the first NaN's bits where there is one, else the extreme with
/// -0 < +0), over series of signed zeros, ties, NaNs of distinct payloads
/// and infinities, every window length of short series and a few of long
/// ones (the kernel cuts the series into blocks of the window).
#[test]
fn rolling_extremes_are_the_first_nan_or_the_extreme_of_each_window() {
    use tessera::reduce::{rolling_max, rolling_min};
    fn model(w: &[f64], max: bool) -> u64 {
        if let Some(nan) = w.iter().find(|v| v.is_nan()) {
            return nan.to_bits();
        }
        // Total order on non-NaN values with -0 < +0: compare (value, sign).
        let key = |v: f64| {
            (
                v,
                if v == 0.0 && v.is_sign_negative() {
                    0
                } else {
                    1
                },
            )
        };
        let mut best = w[0];
        for &v in &w[1..] {
            let (kv, kb) = (key(v), key(best));
            let better = if max {
                kv.0 > kb.0 || (kv.0 == kb.0 && kv.1 > kb.1)
            } else {
                kv.0 < kb.0 || (kv.0 == kb.0 && kv.1 < kb.1)
            };
            if better {
                best = v;
            }
        }
        best.to_bits()
    }
    let mut rng = Rng::new(41);
    let palette = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0x7ff8_0000_0000_0001),
        f64::from_bits(0xfff8_0000_0000_0002),
        f64::from_bits(0x7ff0_0000_0000_0003),
    ];
    let mut series: Vec<Vec<f64>> = Vec::new();
    for n in [1usize, 2, 3, 7, 16, 33] {
        for nan_rate in [0u64, 3, 12] {
            series.push(
                (0..n)
                    .map(|_| {
                        let i = rng.below(palette.len() as u64) as usize;
                        if i >= 7 && rng.below(16) >= nan_rate {
                            rng.spread()
                        } else {
                            palette[i]
                        }
                    })
                    .collect(),
            );
        }
    }
    let long: Vec<f64> = (0..5000)
        .map(|i| {
            if i % 997 == 0 {
                palette[7 + i % 3]
            } else {
                rng.spread()
            }
        })
        .collect();
    series.push(long);
    for v in &series {
        let n = v.len();
        let windows: Vec<usize> = if n <= 40 {
            (1..=n).collect()
        } else {
            vec![1, 2, 3, 64, 999, 1000, 1024, 2500, n - 1, n]
        };
        for &w in &windows {
            for max in [true, false] {
                let mut out = vec![0.0; n - w + 1];
                if max {
                    rolling_max(w, v, &mut out, &Exec::default()).unwrap();
                } else {
                    rolling_min(w, v, &mut out, &Exec::default()).unwrap();
                }
                for (i, o) in out.iter().enumerate() {
                    assert_eq!(
                        o.to_bits(),
                        model(&v[i..i + w], max),
                        "max {max}, n {n}, window {w}, start {i}"
                    );
                }
            }
        }
    }
}

#[test]
fn several_reductions_of_one_loop_have_each_ones_bits() {
    let mut rng = Rng::new(17);
    let ops = [
        ReduceOp::Sum,
        ReduceOp::Max,
        ReduceOp::Mean,
        ReduceOp::ArgMin,
        ReduceOp::Prod,
        ReduceOp::Variance,
    ];
    for n in [5usize, 1500, 70_001] {
        // Outer axis reduced, f16 terms: converted once per block for all.
        let v: Vec<f16> = (0..2 * n)
            .map(|_| f16::from_f64(rng.spread() / 64.0 + 1.0))
            .collect();
        let x = ArrayView::from_slice(&v, &[n, 2]).unwrap();
        for e in execs() {
            let mut alone = vec![[0f64; 2]; ops.len()];
            for (k, &op) in ops.iter().enumerate() {
                if matches!(op, ReduceOp::ArgMin) {
                    let mut p = [0i64; 2];
                    reduce(
                        op,
                        &[0],
                        &x,
                        &mut ArrayViewMut::from_slice(&mut p, &[2]).unwrap(),
                        &e,
                    )
                    .unwrap();
                    alone[k] = [p[0] as f64, p[1] as f64];
                } else {
                    reduce(
                        op,
                        &[0],
                        &x,
                        &mut ArrayViewMut::from_slice(&mut alone[k], &[2]).unwrap(),
                        &e,
                    )
                    .unwrap();
                }
            }
            let (mut b0, mut b1, mut b2, mut b4, mut b5) =
                ([0f64; 2], [0f64; 2], [0f64; 2], [0f64; 2], [0f64; 2]);
            let mut pos = [0i64; 2];
            {
                let mut v0 = ArrayViewMut::from_slice(&mut b0, &[2]).unwrap();
                let mut v1 = ArrayViewMut::from_slice(&mut b1, &[2]).unwrap();
                let mut v2 = ArrayViewMut::from_slice(&mut b2, &[2]).unwrap();
                let mut v3 = ArrayViewMut::from_slice(&mut pos, &[2]).unwrap();
                let mut v4 = ArrayViewMut::from_slice(&mut b4, &[2]).unwrap();
                let mut v5 = ArrayViewMut::from_slice(&mut b5, &[2]).unwrap();
                reduce_many(
                    &[0],
                    &x,
                    &mut [
                        (ops[0], &mut v0),
                        (ops[1], &mut v1),
                        (ops[2], &mut v2),
                        (ops[3], &mut v3),
                        (ops[4], &mut v4),
                        (ops[5], &mut v5),
                    ],
                    &e,
                )
                .unwrap();
            }
            let mut bufs = [b0, b1, b2, [0.0; 2], b4, b5];
            bufs[3] = [pos[0] as f64, pos[1] as f64];
            for k in 0..ops.len() {
                for j in 0..2 {
                    assert_eq!(
                        bufs[k][j].to_bits(),
                        alone[k][j].to_bits(),
                        "{:?} n={n} {e:?}",
                        ops[k]
                    );
                }
            }
        }
    }
}

/// Every size 0..5000 through every layout, tier and thread count (heavy: run
/// with `cargo test --release -p tessera --test reduce -- --ignored`).
#[test]
#[ignore]
fn sum_follows_the_lane_order_every_size() {
    let ex = execs();
    let mut rng = Rng::new(18);
    for n in 0..5000 {
        for c in cases::<f32>(n, &mut rng, false, true) {
            check_case(&c, ReduceOp::Sum, &ex);
        }
        for c in cases::<f64>(n, &mut rng, false, true) {
            check_case(&c, ReduceOp::Sum, &ex);
        }
    }
}

/// Complex products: each lane from its first term, `(ac - bd) + i(ad + bc)`
/// with every product and sum rounded, lanes holding no term taking no part.
#[test]
fn complex_products_follow_the_lane_order() {
    use num_complex::Complex;
    fn mul(a: Complex<f32>, b: Complex<f32>) -> Complex<f32> {
        Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
    }
    fn model_c(t: &[Complex<f32>]) -> Complex<f32> {
        let blocks: Vec<Complex<f32>> = t
            .chunks(1024)
            .map(|b| {
                let mut l: Vec<Option<Complex<f32>>> = vec![None; 16];
                for (j, &v) in b.iter().enumerate() {
                    l[j % 16] = Some(match l[j % 16] {
                        None => v,
                        Some(a) => mul(a, v),
                    });
                }
                for w in [8, 4, 2, 1] {
                    for i in 0..w {
                        if let Some(r) = l[i + w] {
                            l[i] = Some(mul(l[i].unwrap(), r));
                        }
                    }
                }
                l[0].unwrap()
            })
            .collect();
        fn tree(v: &[Complex<f32>]) -> Complex<f32> {
            if v.len() == 1 {
                return v[0];
            }
            let mut p = 1;
            while p * 2 < v.len() {
                p *= 2;
            }
            mul(tree(&v[..p]), tree(&v[p..]))
        }
        if blocks.is_empty() {
            Complex::new(1.0, 0.0)
        } else {
            tree(&blocks)
        }
    }
    let mut rng = Rng::new(19);
    for n in (0..40).chain([1025, 3000, 70_001]) {
        let v: Vec<Complex<f32>> = (0..n)
            .map(|_| {
                let a = near_one(&mut rng) as f32;
                let b = (near_one(&mut rng) - 1.0) as f32;
                Complex::new(a, b)
            })
            .collect();
        let want = model_c(&v);
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        for e in execs() {
            let mut y = [Complex::new(0f32, 0.0)];
            reduce(
                ReduceOp::Prod,
                &[0],
                &x,
                &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
                &e,
            )
            .unwrap();
            assert_eq!(
                (y[0].re.to_bits(), y[0].im.to_bits()),
                (want.re.to_bits(), want.im.to_bits()),
                "n={n} {e:?}"
            );
        }
    }
}

/// Many outputs over an outer axis: gathered terms go block by block over
/// groups of neighbouring outputs; each output keeps its own lane order.
#[test]
fn many_outputs_over_an_outer_axis() {
    let mut rng = Rng::new(20);
    for (rows, cols) in [(2500usize, 37usize), (1024, 16), (70, 1000)] {
        let m: Vec<f32> = (0..rows * cols).map(|_| rng.spread() as f32).collect();
        let want: Vec<f32> = (0..cols)
            .map(|c| {
                model(
                    &(0..rows).map(|r| m[r * cols + c]).collect::<Vec<_>>(),
                    false,
                )
            })
            .collect();
        let x = ArrayView::from_slice(&m, &[rows, cols]).unwrap();
        for e in execs() {
            let mut y = vec![0f32; cols];
            reduce(
                ReduceOp::Sum,
                &[0],
                &x,
                &mut ArrayViewMut::from_slice(&mut y, &[cols]).unwrap(),
                &e,
            )
            .unwrap();
            for c in 0..cols {
                assert_eq!(
                    y[c].to_bits(),
                    want[c].to_bits(),
                    "{rows}x{cols} column {c} {e:?}"
                );
            }
        }
    }
}

/// A NaN result's sign depends on the order the hardware met its NaN
/// operands, which differs between tiers; into a destination without a NaN
/// code (e2m3fn turns a NaN into the zero of the opposite sign) the sign
/// would show. Every NaN result is the positive NaN first: −0 on every tier.
#[test]
fn nan_results_into_a_nan_free_format_are_the_same_on_every_tier() {
    let mut rng = tessera_testkit::rng::Rng::new(0x7a7);
    for case in 0..200 {
        let n = 1 + rng.below_usize(70);
        let x: Vec<f32> = (0..n)
            .map(|_| match rng.below_usize(4) {
                0 => f32::from_bits(0x7fc0_0000 | (rng.next_u64() as u32 & 0x3f_ffff)),
                1 => f32::from_bits(0xffc0_0000 | (rng.next_u64() as u32 & 0x3f_ffff)),
                _ => (rng.unit() as f32 - 0.5) * 8.0,
            })
            .collect();
        let has_nan = x.iter().any(|v| v.is_nan());
        let xv = tessera::ArrayView::from_slice(&x, &[n]).unwrap();
        for t in tessera::available_tiers() {
            for op in [tessera::ReduceOp::Sum, tessera::ReduceOp::Mean] {
                let mut d = [0xffu8; 1];
                tessera::reduce(
                    op,
                    &[0],
                    &xv,
                    &mut tessera::ArrayViewMut::contiguous(tessera::DType::E2m3fn, &[], &mut d)
                        .unwrap(),
                    &tessera::Exec::on(t),
                )
                .unwrap();
                if has_nan {
                    assert_eq!(d[0], 0x20, "case {case} {op:?} on {t:?}: {x:?}");
                }
            }
        }
    }
}

#[test]
fn dot_conj_is_conj_then_mul_then_sum_on_every_tier() {
    use num_complex::Complex;
    use tessera::{dot_conj, elementwise, Kind};
    let mut rng = Rng::new(31);
    for (shape, axes) in [
        (vec![3usize, 37], vec![1usize]),
        (vec![3, 37], vec![0, 1]),
        (vec![2500], vec![0]),
    ] {
        let n: usize = shape.iter().product();
        let out_shape: Vec<usize> = (0..shape.len())
            .filter(|a| !axes.contains(a))
            .map(|a| shape[a])
            .collect();
        let m: usize = out_shape.iter().product();
        let draw = |rng: &mut Rng| {
            Complex::new(
                ((rng.next_u64() >> 40) as f32 - 8e6) * 1e-6,
                ((rng.next_u64() >> 40) as f32 - 8e6) * 1e-6,
            )
        };
        let x: Vec<Complex<f32>> = (0..n).map(|_| draw(&mut rng)).collect();
        let y: Vec<Complex<f32>> = (0..n).map(|_| draw(&mut rng)).collect();
        let xv = ArrayView::from_slice(&x, &shape).unwrap();
        let yv = ArrayView::from_slice(&y, &shape).unwrap();
        // The composed single calls: conj, mul, then the lane-order sum.
        let mut cx = vec![Complex::new(0f32, 0.0); n];
        elementwise(
            Kind::Conj,
            std::slice::from_ref(&xv),
            &mut ArrayViewMut::from_slice(&mut cx, &shape).unwrap(),
            &Exec::SEQ,
        )
        .unwrap();
        let mut p = vec![Complex::new(0f32, 0.0); n];
        elementwise(
            Kind::Mul,
            &[ArrayView::from_slice(&cx, &shape).unwrap(), yv.clone()],
            &mut ArrayViewMut::from_slice(&mut p, &shape).unwrap(),
            &Exec::SEQ,
        )
        .unwrap();
        let mut want = vec![Complex::new(0f32, 0.0); m];
        reduce(
            ReduceOp::Sum,
            &axes,
            &ArrayView::from_slice(&p, &shape).unwrap(),
            &mut ArrayViewMut::from_slice(&mut want, &out_shape).unwrap(),
            &Exec::SEQ,
        )
        .unwrap();
        for e in execs() {
            let mut got = vec![Complex::new(7f32, 7.0); m];
            dot_conj(
                &axes,
                &xv,
                &yv,
                &mut ArrayViewMut::from_slice(&mut got, &out_shape).unwrap(),
                &e,
            )
            .unwrap();
            let bits = |v: &[Complex<f32>]| -> Vec<(u32, u32)> {
                v.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect()
            };
            assert_eq!(bits(&got), bits(&want), "{shape:?} {axes:?} {e:?}");
        }
        // Against the exact value (f32 products are exact in f64, the f64
        // sums' own error far below the bound): the real part within
        // γ(r + 2)·Σ(|xr yr| + |xi yi|), the imaginary within the cross terms'.
        if axes.len() == shape.len() {
            let (mut re, mut im, mut are, mut aim) = (0f64, 0f64, 0f64, 0f64);
            for (a, b) in x.iter().zip(&y) {
                let (ar, ai, br, bi) = (a.re as f64, a.im as f64, b.re as f64, b.im as f64);
                re += ar * br + ai * bi;
                im += ar * bi - ai * br;
                are += (ar * br).abs() + (ai * bi).abs();
                aim += (ar * bi).abs() + (ai * br).abs();
            }
            let g = gamma(rounds(n) + 2, 2f64.powi(-24));
            assert!((want[0].re as f64 - re).abs() <= g * are, "real part");
            assert!((want[0].im as f64 - im).abs() <= g * aim, "imaginary part");
        }
    }
    // Refusals: a real dtype, shapes that differ.
    let r = [1f32; 4];
    let mut d = [0f32; 1];
    assert!(matches!(
        dot_conj(
            &[0],
            &ArrayView::from_slice(&r, &[4]).unwrap(),
            &ArrayView::from_slice(&r, &[4]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut d, &[]).unwrap(),
            &Exec::SEQ
        ),
        Err(Error::DTypeUnsupported { .. })
    ));
    let c = [Complex::new(1f32, 0.0); 4];
    let mut dc = [Complex::new(0f32, 0.0); 1];
    assert!(matches!(
        dot_conj(
            &[0],
            &ArrayView::from_slice(&c, &[4]).unwrap(),
            &ArrayView::from_slice(&c[..3], &[3]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut dc, &[]).unwrap(),
            &Exec::SEQ
        ),
        Err(Error::Shape { .. })
    ));
}

#[test]
fn in_place_reductions_write_at_index_0_of_the_reduced_axes() {
    let mut rng = Rng::new(41);
    let (rows, cols) = (7usize, 3000usize);
    // A strided f64 view (every other element): Sum along each axis and
    // both, the bits of `reduce` into a separate destination, written at
    // index 0 of the reduced axes; nothing else changes.
    let m: Vec<f64> = (0..rows * cols * 2).map(|_| rng.spread()).collect();
    let strides = [2 * cols as isize, 2];
    for axes in [&[0usize][..], &[1], &[0, 1]] {
        for e in &execs() {
            let src = ArrayView::from_slice_strided(&m, &[rows, cols], &strides, 0).unwrap();
            let kept: Vec<usize> = (0..2)
                .map(|a| {
                    if axes.contains(&a) {
                        1
                    } else {
                        [rows, cols][a]
                    }
                })
                .collect();
            let mut want = vec![0f64; kept.iter().product()];
            reduce(
                ReduceOp::Sum,
                axes,
                &src,
                &mut ArrayViewMut::from_slice(&mut want, &kept).unwrap(),
                e,
            )
            .unwrap();
            let mut x = m.clone();
            let mut xv =
                ArrayViewMut::from_slice_strided(&mut x, &[rows, cols], &strides, 0).unwrap();
            tessera::reduce_in_place(ReduceOp::Sum, axes, &mut xv, e).unwrap();
            for r in 0..rows {
                for c in 0..cols {
                    let at = r * 2 * cols + 2 * c;
                    let held = (r == 0 || !axes.contains(&0)) && (c == 0 || !axes.contains(&1));
                    let expect = if held {
                        let (kr, kc) = (
                            if axes.contains(&0) { 0 } else { r },
                            if axes.contains(&1) { 0 } else { c },
                        );
                        want[kr * kept[1] + kc]
                    } else {
                        m[at]
                    };
                    assert_eq!(x[at].to_bits(), expect.to_bits(), "{axes:?} {r} {c} {e:?}");
                    assert_eq!(x[at + 1].to_bits(), m[at + 1].to_bits(), "outside the view");
                }
            }
        }
    }
    // Max of i32 along axis 0 against a plain loop; ArgMax of i64 along
    // axis 1 against a plain loop (the first position of the maximum).
    let v: Vec<i32> = (0..rows * cols)
        .map(|_| rng.next_u32() as i32 >> 8)
        .collect();
    let mut x = v.clone();
    tessera::reduce_in_place(
        ReduceOp::Max,
        &[0],
        &mut ArrayViewMut::from_slice(&mut x, &[rows, cols]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for c in 0..cols {
        let want = (0..rows).map(|r| v[r * cols + c]).max().unwrap();
        assert_eq!(x[c], want, "max column {c}");
    }
    assert_eq!(x[cols..], v[cols..]);
    let w: Vec<i64> = (0..rows * cols).map(|_| rng.below(50) as i64).collect();
    let mut x = w.clone();
    tessera::reduce_in_place(
        ReduceOp::ArgMax,
        &[1],
        &mut ArrayViewMut::from_slice(&mut x, &[rows, cols]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for r in 0..rows {
        let row = &w[r * cols..(r + 1) * cols];
        let best = *row.iter().max().unwrap();
        let first = row.iter().position(|&t| t == best).unwrap() as i64;
        assert_eq!(x[r * cols], first, "argmax row {r}");
        assert_eq!(x[r * cols + 1..(r + 1) * cols], row[1..]);
    }
    // Refusals, each before any write.
    let e = Exec::default();
    let f: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let check = |r: tessera::Result<()>, x: &[f32], what: &str| {
        assert!(r.is_err(), "{what}");
        assert_eq!(x, &f[..], "{what}: a refused call wrote");
    };
    let mut x = f.clone();
    let r = tessera::reduce_in_place(
        ReduceOp::ArgMax,
        &[1],
        &mut ArrayViewMut::from_slice(&mut x, &[3, 4]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
    check(r, &x, "argmax of f32");
    let mut x = f.clone();
    let r = tessera::reduce_in_place(
        ReduceOp::Sum,
        &[2],
        &mut ArrayViewMut::from_slice(&mut x, &[3, 4]).unwrap(),
        &e,
    );
    check(r, &x, "axis out of range");
    let mut x = f.clone();
    let r = tessera::reduce_in_place(
        ReduceOp::Sum,
        &[0, 0],
        &mut ArrayViewMut::from_slice(&mut x, &[3, 4]).unwrap(),
        &e,
    );
    check(r, &x, "axis named twice");
    let mut x = f.clone();
    let r = tessera::reduce_in_place(
        ReduceOp::Sum,
        &[0],
        &mut ArrayViewMut::from_slice_strided(&mut x, &[3, 4], &[0, 1], 0).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Layout { .. })), "{r:?}");
    check(r, &x, "a broadcast view");
    // A reduced axis of extent 0 with results due: refused; with none due
    // (another extent 0): nothing to write.
    let mut none: Vec<f32> = vec![];
    let r = tessera::reduce_in_place(
        ReduceOp::Sum,
        &[1],
        &mut ArrayViewMut::from_slice(&mut none, &[3, 0]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Axis { axis: 1, .. })), "{r:?}");
    let r = tessera::reduce_in_place(
        ReduceOp::Sum,
        &[1],
        &mut ArrayViewMut::from_slice(&mut none, &[0, 0]).unwrap(),
        &e,
    );
    assert!(r.is_ok(), "{r:?}");
}
