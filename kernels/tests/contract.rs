//! Contraction against an independent slow model.
//!
//! The model is plain loops over logical (C-order) arrays: chain order is one
//! `mul_add` per product in increasing k from init or +0; lane order is 16
//! lanes per block of 1024 products, the fold 8/4/2/1, a recursive block tree,
//! then init. The order is chosen by the rule of ARCHITECTURE.md §5.5, restated here.
//! Every available tier, with 1, 2 and 7 threads, must give the model's bits
//! at the order thresholds, on random shapes and on transposed, strided,
//! reversed and broadcast-batch operands. Bound tests compare with an f64 (for
//! f32) or double-double (for f64) oracle; integer results must be exact.

use half::{bf16, f16};
use tessera::contract::{gemv, inner_product, ContractSpec};
use tessera::{available_tiers, contract, ArrayView, ArrayViewMut, DType, Error, Exec};
use tessera_testkit::rng::Rng;

/// A value of at most 12 significant bits, below 3 in magnitude, sign and
/// scale varied.
fn few_bits(rng: &mut Rng) -> f64 {
    let m = (rng.next_u64() >> 52) as f64 / 4096.0;
    let s = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
    let e = [1.0, 0.5, 2.0, 1.0 / 1024.0, 3.0][rng.below_usize(5)];
    s * m * e
}

/// An f32 in (-1, 1) with 24 significant bits.
fn full_f32(rng: &mut Rng) -> f32 {
    let m = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
    if rng.next_u64() & 1 == 0 {
        m
    } else {
        -m
    }
}

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in available_tiers() {
        for n in [1, 2, 7] {
            v.push(Exec::on(t).threads(n));
        }
    }
    v
}

/// A real accumulator for the model.
trait Real: Copy + PartialEq + std::fmt::Debug + tessera::Element + 'static {
    const Z: Self;
    fn fma(a: Self, b: Self, c: Self) -> Self;
    fn add(a: Self, b: Self) -> Self;
    fn from64(x: f64) -> Self;
    fn to64(self) -> f64;
    fn bits(self) -> u64;
    const U: f64;
    const DT: DType;
}
impl Real for f32 {
    const Z: Self = 0.0;
    fn fma(a: Self, b: Self, c: Self) -> Self {
        a.mul_add(b, c)
    }
    fn add(a: Self, b: Self) -> Self {
        a + b
    }
    fn from64(x: f64) -> Self {
        x as f32
    }
    fn to64(self) -> f64 {
        self as f64
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    const U: f64 = 1.0 / (1u64 << 24) as f64;
    const DT: DType = DType::F32;
}
impl Real for f64 {
    const Z: Self = 0.0;
    fn fma(a: Self, b: Self, c: Self) -> Self {
        a.mul_add(b, c)
    }
    fn add(a: Self, b: Self) -> Self {
        a + b
    }
    fn from64(x: f64) -> Self {
        x
    }
    fn to64(self) -> f64 {
        self
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    const U: f64 = 1.0 / (1u64 << 53) as f64;
    const DT: DType = DType::F64;
}

fn uses_chain(r: usize, c: usize, k: usize) -> bool {
    r > 4 && c > 4 && r * c >= 64 && k < 128 * r * c
}

fn model_tree<T: Real>(v: &[T]) -> T {
    if v.len() == 1 {
        return v[0];
    }
    let mut p = 1;
    while p * 2 < v.len() {
        p *= 2;
    }
    T::add(model_tree(&v[..p]), model_tree(&v[p..]))
}

fn model_lane<T: Real>(x: &[T], y: &[T]) -> T {
    let mut blocks = Vec::new();
    let mut start = 0;
    while start < x.len() {
        let end = (start + 1024).min(x.len());
        let mut lanes = [T::Z; 16];
        for j in start..end {
            let l = (j - start) % 16;
            lanes[l] = T::fma(x[j], y[j], lanes[l]);
        }
        for i in 0..8 {
            lanes[i] = T::add(lanes[i], lanes[i + 8]);
        }
        for i in 0..4 {
            lanes[i] = T::add(lanes[i], lanes[i + 4]);
        }
        for i in 0..2 {
            lanes[i] = T::add(lanes[i], lanes[i + 2]);
        }
        blocks.push(T::add(lanes[0], lanes[1]));
        start = end;
    }
    model_tree(&blocks)
}

/// Logical problem: a and b as C-order arrays of their shapes, the spec, and
/// the model's output (C order of the destination shape).
struct Problem<T> {
    sa: Vec<usize>,
    sb: Vec<usize>,
    a: Vec<T>,
    b: Vec<T>,
    init: Option<Vec<T>>,
    spec: ContractSpec,
}

fn c_index(shape: &[usize], idx: &[usize]) -> usize {
    let mut p = 0;
    for (n, i) in shape.iter().zip(idx) {
        p = p * n + i;
    }
    p
}

fn unravel(shape: &[usize], mut p: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for i in (0..shape.len()).rev() {
        idx[i] = p % shape[i];
        p /= shape[i];
    }
    idx
}

impl<T: Real> Problem<T> {
    fn free(&self) -> (Vec<usize>, Vec<usize>) {
        let fa = (0..self.sa.len())
            .filter(|i| {
                !self
                    .spec
                    .batch
                    .iter()
                    .chain(&self.spec.contracting)
                    .any(|p| p.0 == *i)
            })
            .collect();
        let fb = (0..self.sb.len())
            .filter(|i| {
                !self
                    .spec
                    .batch
                    .iter()
                    .chain(&self.spec.contracting)
                    .any(|p| p.1 == *i)
            })
            .collect();
        (fa, fb)
    }
    fn out_shape(&self) -> Vec<usize> {
        let (fa, fb) = self.free();
        let mut s: Vec<usize> = self
            .spec
            .batch
            .iter()
            .map(|&(x, y)| self.sa[x].max(self.sb[y]))
            .collect();
        s.extend(fa.iter().map(|&i| self.sa[i]));
        s.extend(fb.iter().map(|&i| self.sb[i]));
        s
    }
    fn model(&self) -> Vec<T> {
        let (fa, fb) = self.free();
        let out = self.out_shape();
        let nbat = self.spec.batch.len();
        let r: usize = fa.iter().map(|&i| self.sa[i]).product();
        let c: usize = fb.iter().map(|&i| self.sb[i]).product();
        let ks: Vec<usize> = self
            .spec
            .contracting
            .iter()
            .map(|&(x, _)| self.sa[x])
            .collect();
        let k: usize = ks.iter().product();
        let chain = uses_chain(r, c, k);
        let n: usize = out.iter().product();
        let mut res = Vec::with_capacity(n);
        for o in 0..n {
            let oi = unravel(&out, o);
            let mut ia = vec![0; self.sa.len()];
            let mut ib = vec![0; self.sb.len()];
            for (q, &(x, y)) in self.spec.batch.iter().enumerate() {
                ia[x] = if self.sa[x] == 1 { 0 } else { oi[q] };
                ib[y] = if self.sb[y] == 1 { 0 } else { oi[q] };
            }
            for (q, &x) in fa.iter().enumerate() {
                ia[x] = oi[nbat + q];
            }
            for (q, &y) in fb.iter().enumerate() {
                ib[y] = oi[nbat + fa.len() + q];
            }
            let mut xs = Vec::with_capacity(k);
            let mut ys = Vec::with_capacity(k);
            for kk in 0..k {
                let ki = unravel(&ks, kk);
                for (q, &(x, y)) in self.spec.contracting.iter().enumerate() {
                    ia[x] = ki[q];
                    ib[y] = ki[q];
                }
                xs.push(self.a[c_index(&self.sa, &ia)]);
                ys.push(self.b[c_index(&self.sb, &ib)]);
            }
            let init = self.init.as_ref().map(|v| v[o]);
            let v = if k == 0 {
                init.unwrap_or(T::Z)
            } else if chain {
                let mut s = init.unwrap_or(T::Z);
                for (x, y) in xs.iter().zip(&ys) {
                    s = T::fma(*x, *y, s);
                }
                s
            } else {
                let t = model_lane(&xs, &ys);
                match init {
                    Some(i) => T::add(t, i),
                    None => t,
                }
            };
            res.push(v);
        }
        res
    }
}

/// A layout of a logical array: storage axis order, per-axis step and sign.
#[derive(Clone, Debug)]
struct Lay {
    perm: Vec<usize>,
    step: Vec<isize>,
    neg: Vec<bool>,
}

impl Lay {
    fn c(rank: usize) -> Lay {
        Lay {
            perm: (0..rank).collect(),
            step: vec![1; rank],
            neg: vec![false; rank],
        }
    }
    fn random(rank: usize, rng: &mut Rng) -> Lay {
        let mut perm: Vec<usize> = (0..rank).collect();
        for i in (1..rank).rev() {
            perm.swap(i, rng.below_usize(i + 1));
        }
        Lay {
            perm,
            step: (0..rank).map(|_| 1 + rng.below_usize(2) as isize).collect(),
            neg: (0..rank).map(|_| rng.below_usize(3) == 0).collect(),
        }
    }
    /// Store `v` (C order of `shape`) in this layout: (buffer, strides, offset).
    fn store<T: Copy>(&self, shape: &[usize], v: &[T], fill: T) -> (Vec<T>, Vec<isize>, usize) {
        let rank = shape.len();
        let mut strides = vec![0isize; rank];
        let mut span: isize = 1;
        for &ax in self.perm.iter().rev() {
            strides[ax] = span * self.step[ax];
            span *= (shape[ax].max(1) as isize) * self.step[ax];
        }
        let mut offset: isize = 0;
        for ax in 0..rank {
            if self.neg[ax] {
                offset += (shape[ax] as isize - 1).max(0) * strides[ax];
                strides[ax] = -strides[ax];
            }
        }
        let mut buf = vec![fill; span.max(1) as usize];
        for (p, &x) in v.iter().enumerate() {
            let idx = unravel(shape, p);
            let pos: isize = offset
                + idx
                    .iter()
                    .zip(&strides)
                    .map(|(&i, &s)| i as isize * s)
                    .sum::<isize>();
            buf[pos as usize] = x;
        }
        (buf, strides, offset as usize)
    }
}

fn random_vals<T: Real>(n: usize, rng: &mut Rng) -> Vec<T> {
    (0..n).map(|_| T::from64(few_bits(rng))).collect()
}

/// Run a problem through every exec and layout given and compare with the model.
fn check<T: Real>(p: &Problem<T>, lays: &[(Lay, Lay)], what: &str) {
    let want = p.model();
    let out = p.out_shape();
    let n: usize = out.iter().product();
    for (la, lb) in lays {
        let (ba, sa, oa) = la.store(&p.sa, &p.a, T::from64(f64::NAN));
        let (bb, sb, ob) = lb.store(&p.sb, &p.b, T::from64(f64::NAN));
        let va = ArrayView::from_slice_strided(&ba, &p.sa, &sa, oa).unwrap();
        let vb = ArrayView::from_slice_strided(&bb, &p.sb, &sb, ob).unwrap();
        let vi = p
            .init
            .as_ref()
            .map(|v| ArrayView::from_slice(v, &out).unwrap());
        for ex in execs() {
            let mut got = vec![T::from64(f64::NAN); n];
            contract(
                &p.spec,
                &va,
                &vb,
                vi.as_ref(),
                &mut ArrayViewMut::from_slice(&mut got, &out).unwrap(),
                &ex,
            )
            .unwrap();
            for o in 0..n {
                assert_eq!(
                    got[o].bits(),
                    want[o].bits(),
                    "{what}: output {o} of {out:?}, {ex:?}, layouts {la:?} / {lb:?}: got {:?} want {:?}",
                    got[o],
                    want[o]
                );
            }
        }
        // A destination in another layout, and one of f64 (the result in acc
        // widened exactly): the same values.
        let mut rng = Rng::new(n as u64 + 1);
        let ld = Lay::random(out.len(), &mut rng);
        let (mut bd, sd, od) = ld.store(&out, &vec![T::Z; n], T::Z);
        let mut wide = vec![f64::NAN; n];
        for ex in [Exec::default(), Exec::default().threads(2)] {
            contract(
                &p.spec,
                &va,
                &vb,
                vi.as_ref(),
                &mut ArrayViewMut::from_slice_strided(&mut bd, &out, &sd, od).unwrap(),
                &ex,
            )
            .unwrap();
            contract(
                &p.spec,
                &va,
                &vb,
                vi.as_ref(),
                &mut ArrayViewMut::from_slice(&mut wide, &out).unwrap(),
                &ex,
            )
            .unwrap();
            for o in 0..n {
                let idx = unravel(&out, o);
                let pos: isize = od as isize
                    + idx
                        .iter()
                        .zip(&sd)
                        .map(|(&i, &s)| i as isize * s)
                        .sum::<isize>();
                assert_eq!(
                    bd[pos as usize].bits(),
                    want[o].bits(),
                    "{what}: strided destination {ld:?}, output {o}"
                );
                assert_eq!(
                    wide[o].to_bits(),
                    want[o].to64().to_bits(),
                    "{what}: f64 destination, output {o}"
                );
            }
        }
    }
}

fn matrix<T: Real>(r: usize, c: usize, k: usize, init: bool, rng: &mut Rng) -> Problem<T> {
    Problem {
        sa: vec![r, k],
        sb: vec![k, c],
        a: random_vals(r * k, rng),
        b: random_vals(k * c, rng),
        init: init.then(|| random_vals(r * c, rng)),
        spec: ContractSpec::new(T::DT).contracting(1, 0),
    }
}

fn thresholds<T: Real>() {
    let mut rng = Rng::new(0x9e3779b97f4a7c15);
    // (rows, cols, depth) on both sides of every threshold.
    let mut shapes = vec![
        (4, 40, 9),
        (5, 40, 9),
        (40, 4, 9),
        (40, 5, 9),
        (7, 9, 20),
        (8, 8, 20),
        (9, 7, 20),
        (13, 5, 17),
        (5, 13, 17),
        (6, 16, 3),
        (12, 32, 1),
        (0, 8, 3),
        (8, 8, 0),
    ];
    for (r, c) in [(5, 13), (8, 8)] {
        let kk = 128 * r * c;
        shapes.extend([(r, c, kk - 1), (r, c, kk), (r, c, kk + 1)]);
    }
    for (r, c, k) in shapes {
        for init in [false, true] {
            let p = matrix::<T>(r, c, k, init, &mut rng);
            check(
                &p,
                &[(Lay::c(2), Lay::c(2))],
                &format!("{r}x{c}x{k} init {init}"),
            );
        }
    }
}

#[test]
fn thresholds_f32() {
    thresholds::<f32>();
}

#[test]
fn thresholds_f64() {
    thresholds::<f64>();
}

fn random_layouts<T: Real>(seed: u64, cases: usize) {
    let mut rng = Rng::new(seed);
    for case in 0..cases {
        let (r, c, k) = (
            1 + rng.below_usize(40),
            1 + rng.below_usize(40),
            rng.below_usize(60),
        );
        let p = matrix::<T>(r, c, k, rng.below_usize(2) == 0, &mut rng);
        let lays: Vec<(Lay, Lay)> = (0..3)
            .map(|_| (Lay::random(2, &mut rng), Lay::random(2, &mut rng)))
            .collect();
        check(&p, &lays, &format!("case {case}: {r}x{c}x{k}"));
    }
}

#[test]
fn random_shapes_and_layouts_f32() {
    random_layouts::<f32>(11, 12);
}

#[test]
fn random_shapes_and_layouts_f64() {
    random_layouts::<f64>(12, 12);
}

/// Several batch, free and contracted axes, batch broadcasting on both sides,
/// contracted pairs in an order other than the axes'.
#[test]
fn batched_multi_axis_broadcast() {
    let mut rng = Rng::new(77);
    // a: [batch0=3, k1=4, row=7, batch1=1, k0=5]; b: [k0=5, batch1=2, col=9, batch0=1, k1=4]
    let sa = vec![3, 4, 7, 1, 5];
    let sb = vec![5, 2, 9, 1, 4];
    let spec = ContractSpec::new(DType::F32)
        .batch(0, 3)
        .batch(3, 1)
        .contracting(4, 0)
        .contracting(1, 4);
    for init in [false, true] {
        let mut p = Problem::<f32> {
            a: random_vals(sa.iter().product(), &mut rng),
            b: random_vals(sb.iter().product(), &mut rng),
            sa: sa.clone(),
            sb: sb.clone(),
            init: None,
            spec: spec.clone(),
        };
        assert_eq!(p.out_shape(), vec![3, 2, 7, 9]);
        if init {
            p.init = Some(random_vals(3 * 2 * 7 * 9, &mut rng));
        }
        let lays = vec![
            (Lay::c(5), Lay::c(5)),
            (Lay::random(5, &mut rng), Lay::random(5, &mut rng)),
            (Lay::random(5, &mut rng), Lay::random(5, &mut rng)),
        ];
        check(&p, &lays, "batched");
    }
}

/// Large enough to cross the cache blocks and the thread threshold.
#[test]
fn blocked_large() {
    let mut rng = Rng::new(5);
    // The last two: few columns and a depth past the skinny products'
    // deeper k-blocks (up to 4096 steps), crossed twice.
    for (r, c, k) in [
        (150, 70, 1100),
        (37, 300, 700),
        (40, 24, 9000),
        (30, 64, 8300),
    ] {
        check(
            &matrix::<f32>(r, c, k, true, &mut rng),
            &[
                (Lay::c(2), Lay::c(2)),
                (Lay::random(2, &mut rng), Lay::random(2, &mut rng)),
            ],
            "large f32",
        );
        check(
            &matrix::<f64>(r, c, k, false, &mut rng),
            &[(Lay::c(2), Lay::c(2))],
            "large f64",
        );
    }
}

#[test]
#[ignore]
fn random_sweep_heavy() {
    random_layouts::<f32>(99, 200);
    random_layouts::<f64>(98, 200);
    let mut rng = Rng::new(3);
    for _ in 0..10 {
        let (r, c, k) = (
            1 + rng.below_usize(600),
            1 + rng.below_usize(600),
            rng.below_usize(3000),
        );
        check(
            &matrix::<f32>(r, c, k, true, &mut rng),
            &[(Lay::c(2), Lay::c(2))],
            "heavy",
        );
    }
}

// ---------------------------------------------------------------- bounds

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Σ a·b + init in double-double (products exact by fma).
fn dd_dot(x: &[f64], y: &[f64], init: f64) -> f64 {
    let (mut hi, mut lo) = (init, 0.0);
    for (a, b) in x.iter().zip(y) {
        let p = a * b;
        let e = a.mul_add(*b, -p);
        let (s, t) = two_sum(hi, p);
        hi = s;
        lo += t + e;
    }
    hi + lo
}

fn gamma(n: usize, u: f64) -> f64 {
    n as f64 * u / (1.0 - n as f64 * u)
}

fn bound_case<T: Real>(r: usize, c: usize, k: usize, rng: &mut Rng, scale_spread: bool) {
    let gen = |rng: &mut Rng, n: usize| -> Vec<T> {
        (0..n)
            .map(|_| {
                let v = full_f32(rng) as f64;
                let e = if scale_spread {
                    (rng.below_usize(40) as i32 - 20) as f64
                } else {
                    0.0
                };
                T::from64(v * e.exp2())
            })
            .collect()
    };
    let a = gen(rng, r * k);
    let b = gen(rng, k * c);
    let init = gen(rng, r * c);
    let mut got = vec![T::Z; r * c];
    contract(
        &ContractSpec::new(T::DT).contracting(1, 0),
        &ArrayView::from_slice(&a, &[r, k]).unwrap(),
        &ArrayView::from_slice(&b, &[k, c]).unwrap(),
        Some(&ArrayView::from_slice(&init, &[r, c]).unwrap()),
        &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for i in 0..r {
        for j in 0..c {
            let x: Vec<f64> = (0..k).map(|q| a[i * k + q].to64()).collect();
            let y: Vec<f64> = (0..k).map(|q| b[q * c + j].to64()).collect();
            let exact = dd_dot(&x, &y, init[i * c + j].to64());
            let mag: f64 = x.iter().zip(&y).map(|(p, q)| (p * q).abs()).sum::<f64>()
                + init[i * c + j].to64().abs();
            let err = (got[i * c + j].to64() - exact).abs();
            let bound = gamma(k + 1, T::U) * mag * (1.0 + 1e-12);
            assert!(
                err <= bound,
                "{r}x{c}x{k} ({i},{j}): error {err:e} above {bound:e}"
            );
        }
    }
}

#[test]
fn error_bound_chain_and_lane() {
    let mut rng = Rng::new(2024);
    for spread in [false, true] {
        // chain, lane (few rows), lane (long depth)
        bound_case::<f32>(20, 24, 300, &mut rng, spread);
        bound_case::<f32>(3, 30, 5000, &mut rng, spread);
        bound_case::<f32>(5, 13, 9000, &mut rng, spread);
        bound_case::<f64>(20, 24, 300, &mut rng, spread);
        bound_case::<f64>(3, 30, 5000, &mut rng, spread);
    }
}

// ---------------------------------------------------------------- dtypes

/// Decode an fp8 code with `e` exponent bits and `m` mantissa bits (bias
/// 2^(e−1) − 1, subnormals), independent of the library. None for NaN/inf.
fn fp8(code: u8, e: u32, m: u32, fn_style: bool) -> Option<f64> {
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = ((code >> m) as u32) & ((1 << e) - 1);
    let man = (code as u32) & ((1 << m) - 1);
    let bias = (1i32 << (e - 1)) - 1;
    let emax = (1u32 << e) - 1;
    if fn_style {
        if exp == emax && man == (1 << m) - 1 {
            return None;
        }
    } else if exp == emax {
        return None;
    }
    let v = if exp == 0 {
        man as f64 * (1 - bias - m as i32) as f64
    } else {
        (1.0 + man as f64 / (1u32 << m) as f64) * ((exp as i32 - bias) as f64).exp2()
    };
    let v = if exp == 0 {
        man as f64 * ((1 - bias - m as i32) as f64).exp2()
    } else {
        v
    };
    Some(sign * v)
}

/// Codes of one narrow dtype with their exact values.
fn narrow(dt: DType, n: usize, rng: &mut Rng) -> (Vec<u8>, Vec<f64>) {
    let mut bytes = Vec::new();
    let mut vals = Vec::new();
    while vals.len() < n {
        match dt {
            DType::F16 => {
                let v = f16::from_bits(rng.next_u64() as u16);
                if v.is_finite() {
                    let v = f16::from_f64(v.to_f64() / 64.0);
                    bytes.extend(v.to_bits().to_le_bytes());
                    vals.push(v.to_f64());
                }
            }
            DType::Bf16 => {
                let v = bf16::from_bits(rng.next_u64() as u16);
                if v.is_finite() && v.to_f64().abs() < 1e10 && v.to_f64().abs() > 1e-10 {
                    bytes.extend(v.to_bits().to_le_bytes());
                    vals.push(v.to_f64());
                }
            }
            DType::E4m3fn | DType::E5m2 => {
                let code = rng.next_u64() as u8;
                let d = if dt == DType::E4m3fn {
                    fp8(code, 4, 3, true)
                } else {
                    fp8(code, 5, 2, false)
                };
                if let Some(v) = d {
                    bytes.push(code);
                    vals.push(v);
                }
            }
            _ => unreachable!(),
        }
    }
    (bytes, vals)
}

#[test]
fn narrow_inputs_match_decode_then_contract() {
    let mut rng = Rng::new(31337);
    let dts = [DType::F16, DType::Bf16, DType::E4m3fn, DType::E5m2];
    for &da in &dts {
        for &db in &dts {
            for (r, c, k) in [(9, 17, 40), (2, 3, 100)] {
                let (ba, va) = narrow(da, r * k, &mut rng);
                let (bb, vb) = narrow(db, k * c, &mut rng);
                let a = ArrayView::contiguous(da, &[r, k], &ba).unwrap();
                let b = ArrayView::contiguous(db, &[k, c], &bb).unwrap();
                let mut got = vec![0f32; r * c];
                for ex in execs() {
                    contract(
                        &ContractSpec::new(DType::F32).contracting(1, 0),
                        &a,
                        &b,
                        None,
                        &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
                        &ex,
                    )
                    .unwrap();
                    for i in 0..r {
                        for j in 0..c {
                            let x: Vec<f64> = (0..k).map(|q| va[i * k + q]).collect();
                            let y: Vec<f64> = (0..k).map(|q| vb[q * c + j]).collect();
                            let exact = dd_dot(&x, &y, 0.0);
                            let mag: f64 = x.iter().zip(&y).map(|(p, q)| (p * q).abs()).sum();
                            let err = (got[i * c + j] as f64 - exact).abs();
                            assert!(
                                err <= gamma(k + 1, f32::U) * mag,
                                "{da}x{db} {r}x{c}x{k}: {err:e} vs {mag:e}"
                            );
                        }
                    }
                }
                // The same call into an f16 destination is the f32 result rounded once.
                let mut h = vec![f16::ZERO; r * c];
                contract(
                    &ContractSpec::new(DType::F32).contracting(1, 0),
                    &a,
                    &b,
                    None,
                    &mut ArrayViewMut::from_slice(&mut h, &[r, c]).unwrap(),
                    &Exec::default(),
                )
                .unwrap();
                for (x, y) in h.iter().zip(&got) {
                    assert_eq!(x.to_bits(), f16::from_f32(*y).to_bits());
                }
            }
        }
    }
}

#[test]
fn integers_exact() {
    let mut rng = Rng::new(8);
    for (r, c, k) in [(7, 9, 33), (1, 5, 3000), (20, 20, 200)] {
        let a: Vec<i8> = (0..r * k).map(|_| rng.next_u64() as i8).collect();
        let b: Vec<u8> = (0..k * c).map(|_| rng.next_u64() as u8).collect();
        let wa: Vec<i32> = (0..r * k).map(|_| rng.next_u64() as i32).collect();
        let wb: Vec<i32> = (0..k * c).map(|_| rng.next_u64() as i32).collect();
        for ex in execs() {
            let mut got = vec![0i32; r * c];
            contract(
                &ContractSpec::new(DType::I32).contracting(1, 0),
                &ArrayView::from_slice(&a, &[r, k]).unwrap(),
                &ArrayView::from_slice(&b, &[k, c]).unwrap(),
                None,
                &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
                &ex,
            )
            .unwrap();
            let mut wrap = vec![0i32; r * c];
            contract(
                &ContractSpec::new(DType::I32).contracting(1, 0),
                &ArrayView::from_slice(&wa, &[r, k]).unwrap(),
                &ArrayView::from_slice(&wb, &[k, c]).unwrap(),
                None,
                &mut ArrayViewMut::from_slice(&mut wrap, &[r, c]).unwrap(),
                &ex,
            )
            .unwrap();
            let mut wide = vec![0i64; r * c];
            contract(
                &ContractSpec::new(DType::I64).contracting(1, 0),
                &ArrayView::from_slice(&wa, &[r, k]).unwrap(),
                &ArrayView::from_slice(&wb, &[k, c]).unwrap(),
                None,
                &mut ArrayViewMut::from_slice(&mut wide, &[r, c]).unwrap(),
                &ex,
            )
            .unwrap();
            for i in 0..r {
                for j in 0..c {
                    let exact: i128 = (0..k)
                        .map(|q| a[i * k + q] as i128 * b[q * c + j] as i128)
                        .sum();
                    assert_eq!(got[i * c + j] as i128, exact);
                    let w: i128 = (0..k)
                        .map(|q| wa[i * k + q] as i128 * wb[q * c + j] as i128)
                        .sum();
                    assert_eq!(wrap[i * c + j], w as i32, "wraps modulo 2^32");
                    assert_eq!(wide[i * c + j], w as i64, "wraps modulo 2^64");
                }
            }
        }
    }
}

#[test]
fn gemv_rows_are_dots() {
    let mut rng = Rng::new(4);
    for (m, k) in [(7, 3000), (33, 17), (5, 70000)] {
        let a: Vec<f32> = (0..m * k).map(|_| full_f32(&mut rng)).collect();
        let x: Vec<f32> = (0..k).map(|_| full_f32(&mut rng)).collect();
        for ex in execs() {
            let mut y = vec![0f32; m];
            gemv(
                &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                &ArrayView::from_slice(&x, &[k]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut y, &[m]).unwrap(),
                &ex,
            )
            .unwrap();
            for i in 0..m {
                let mut d = [0f32];
                inner_product(
                    &ArrayView::from_slice(&a[i * k..(i + 1) * k], &[k]).unwrap(),
                    &ArrayView::from_slice(&x, &[k]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut d, &[]).unwrap(),
                    &ex,
                )
                .unwrap();
                assert_eq!(y[i].to_bits(), d[0].to_bits(), "row {i} of {m}x{k}");
                let want = model_lane(&a[i * k..(i + 1) * k], &x);
                assert_eq!(d[0].to_bits(), want.to_bits(), "dot vs lane model");
            }
        }
    }
}

// ---------------------------------------------------------------- refusals

#[test]
fn refusals_write_nothing() {
    let a = vec![1f32; 6 * 4];
    let b = vec![1f32; 4 * 5];
    let va = ArrayView::from_slice(&a, &[6, 4]).unwrap();
    let vb = ArrayView::from_slice(&b, &[4, 5]).unwrap();
    let good = ContractSpec::new(DType::F32).contracting(1, 0);
    let cases: Vec<(ContractSpec, Vec<usize>, &str)> = vec![
        (
            ContractSpec::new(DType::F32).contracting(2, 0),
            vec![6, 5],
            "axis of a out of range",
        ),
        (
            ContractSpec::new(DType::F32).contracting(1, 3),
            vec![6, 5],
            "axis of b out of range",
        ),
        (
            ContractSpec::new(DType::F32)
                .contracting(1, 0)
                .contracting(1, 1),
            vec![6],
            "named twice",
        ),
        (
            ContractSpec::new(DType::F32).contracting(0, 0),
            vec![4, 5],
            "extents differ",
        ),
        (
            ContractSpec::new(DType::F32).batch(0, 1),
            vec![6, 4, 4],
            "batch extents differ",
        ),
        (
            ContractSpec::new(DType::Bf16).contracting(1, 0),
            vec![6, 5],
            "bf16 accumulator",
        ),
        (
            ContractSpec::new(DType::F16).contracting(1, 0),
            vec![6, 5],
            "narrow accumulator",
        ),
        (good.clone(), vec![5, 6], "destination shape"),
    ];
    for (spec, shape, what) in cases {
        let n: usize = shape.iter().product();
        let mut d = vec![7f32; n];
        let r = contract(
            &spec,
            &va,
            &vb,
            None,
            &mut ArrayViewMut::from_slice(&mut d, &shape).unwrap(),
            &Exec::default(),
        );
        assert!(
            matches!(
                r,
                Err(Error::Axis { .. })
                    | Err(Error::DTypeUnsupported { .. })
                    | Err(Error::Shape { .. })
            ),
            "{what}: {r:?}"
        );
        assert!(d.iter().all(|&x| x == 7.0), "{what}: wrote");
    }
    // init that does not broadcast
    let init = vec![0f32; 4];
    let mut d = vec![7f32; 30];
    let r = contract(
        &good,
        &va,
        &vb,
        Some(&ArrayView::from_slice(&init, &[4]).unwrap()),
        &mut ArrayViewMut::from_slice(&mut d, &[6, 5]).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    assert!(d.iter().all(|&x| x == 7.0));
    // a destination that reaches an element twice
    let mut d = vec![7f32; 5];
    let r = contract(
        &good,
        &va,
        &vb,
        None,
        &mut ArrayViewMut::from_slice_strided(&mut d, &[6, 5], &[0, 1], 0).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::Layout { .. })), "{r:?}");
    assert!(d.iter().all(|&x| x == 7.0));
}

// ---------------------------------------------------------------- complex

type C32 = num_complex::Complex<f32>;
type C64 = num_complex::Complex<f64>;

/// The complex model: the real part's terms are ar·br, −ai·bi and the
/// imaginary part's ar·bi, ai·br, for k = 0, 1, …, in chain or lane order.
fn model_complex<T: Real>(xs: &[(T, T)], ys: &[(T, T)], init: (T, T), chain: bool) -> (T, T) {
    let neg = |x: T| T::from64(-x.to64());
    let mut re_a = Vec::new();
    let mut re_b = Vec::new();
    let mut im_a = Vec::new();
    let mut im_b = Vec::new();
    for (&(ar, ai), &(br, bi)) in xs.iter().zip(ys) {
        re_a.extend([ar, neg(ai)]);
        re_b.extend([br, bi]);
        im_a.extend([ar, ai]);
        im_b.extend([bi, br]);
    }
    if xs.is_empty() {
        return init;
    }
    let part = |a: &[T], b: &[T], start: T| {
        if chain {
            a.iter().zip(b).fold(start, |s, (x, y)| T::fma(*x, *y, s))
        } else {
            T::add(model_lane(a, b), start)
        }
    };
    (part(&re_a, &re_b, init.0), part(&im_a, &im_b, init.1))
}

fn complex_case(r: usize, c: usize, k: usize, rng: &mut Rng, lay: bool) {
    let a: Vec<C32> = (0..r * k)
        .map(|_| C32::new(few_bits(rng) as f32, few_bits(rng) as f32))
        .collect();
    let b: Vec<C32> = (0..k * c)
        .map(|_| C32::new(few_bits(rng) as f32, few_bits(rng) as f32))
        .collect();
    let init: Vec<C32> = (0..r * c)
        .map(|_| C32::new(few_bits(rng) as f32, few_bits(rng) as f32))
        .collect();
    let chain = uses_chain(r, c, k);
    let (la, lb) = if lay {
        (Lay::random(2, rng), Lay::random(2, rng))
    } else {
        (Lay::c(2), Lay::c(2))
    };
    let (ba, sa, oa) = la.store(&[r, k], &a, C32::new(f32::NAN, 0.0));
    let (bb, sb, ob) = lb.store(&[k, c], &b, C32::new(f32::NAN, 0.0));
    for ex in execs() {
        let mut got = vec![C32::new(0.0, 0.0); r * c];
        contract(
            &ContractSpec::new(DType::C64).contracting(1, 0),
            &ArrayView::from_slice_strided(&ba, &[r, k], &sa, oa).unwrap(),
            &ArrayView::from_slice_strided(&bb, &[k, c], &sb, ob).unwrap(),
            Some(&ArrayView::from_slice(&init, &[r, c]).unwrap()),
            &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
            &ex,
        )
        .unwrap();
        for i in 0..r {
            for j in 0..c {
                let xs: Vec<(f32, f32)> =
                    (0..k).map(|q| (a[i * k + q].re, a[i * k + q].im)).collect();
                let ys: Vec<(f32, f32)> =
                    (0..k).map(|q| (b[q * c + j].re, b[q * c + j].im)).collect();
                let ini = init[i * c + j];
                let want = model_complex(&xs, &ys, (ini.re, ini.im), chain);
                let g = got[i * c + j];
                assert_eq!(
                    (g.re.to_bits(), g.im.to_bits()),
                    (want.0.to_bits(), want.1.to_bits()),
                    "{r}x{c}x{k} ({i},{j}) {ex:?}"
                );
                // The bound γ(2K+2)·(|init| + Σ|a||b|) on the modulus.
                let exact: C64 =
                    ys.iter()
                        .zip(&xs)
                        .fold(C64::new(ini.re as f64, ini.im as f64), |s, (y, x)| {
                            s + C64::new(x.0 as f64, x.1 as f64) * C64::new(y.0 as f64, y.1 as f64)
                        });
                let mag: f64 = (C64::new(ini.re as f64, ini.im as f64)).norm()
                    + xs.iter()
                        .zip(&ys)
                        .map(|(x, y)| {
                            C64::new(x.0 as f64, x.1 as f64).norm()
                                * C64::new(y.0 as f64, y.1 as f64).norm()
                        })
                        .sum::<f64>();
                let err = (C64::new(g.re as f64, g.im as f64) - exact).norm();
                assert!(
                    err <= gamma(2 * k + 2, f32::U) * mag * 1.000001,
                    "bound {r}x{c}x{k}: {err:e}"
                );
            }
        }
    }
}

#[test]
fn complex_chain_and_lane_match_model() {
    let mut rng = Rng::new(555);
    for (r, c, k) in [
        (8, 8, 30),
        (7, 9, 30),
        (4, 20, 50),
        (5, 13, 8319),
        (5, 13, 8321),
        (1, 1, 3000),
        (9, 6, 0),
    ] {
        complex_case(r, c, k, &mut rng, false);
    }
    for _ in 0..4 {
        let (r, c, k) = (
            1 + rng.below_usize(20),
            1 + rng.below_usize(20),
            rng.below_usize(40),
        );
        complex_case(r, c, k, &mut rng, true);
    }
}

/// Real operands into a complex accumulator enter with +0i, and a complex
/// result into a real destination keeps the real part.
#[test]
fn complex_casts_in_and_out() {
    let mut rng = Rng::new(9);
    let (r, c, k) = (6, 11, 13);
    let a: Vec<f32> = random_vals(r * k, &mut rng);
    let b: Vec<f32> = random_vals(k * c, &mut rng);
    let mut want = vec![0f32; r * c];
    contract(
        &ContractSpec::new(DType::F32).contracting(1, 0),
        &ArrayView::from_slice(&a, &[r, k]).unwrap(),
        &ArrayView::from_slice(&b, &[k, c]).unwrap(),
        None,
        &mut ArrayViewMut::from_slice(&mut want, &[r, c]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    let mut got = vec![0f32; r * c];
    contract(
        &ContractSpec::new(DType::C64).contracting(1, 0),
        &ArrayView::from_slice(&a, &[r, k]).unwrap(),
        &ArrayView::from_slice(&b, &[k, c]).unwrap(),
        None,
        &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    // Imaginary parts are +0, so −ai·bi = −0 terms and +0 products leave
    // every partial sum of the real part as in the real chain except that a
    // chain of 2K steps adds −0 terms: x + (−0) = x, so the bits agree.
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.to_bits(), w.to_bits());
    }
}

// ---------------------------------------------------------------- quantised

#[test]
fn qmatmul_i8_is_exact() {
    use tessera::contract::qmatmul::qmatmul_i8;
    let mut rng = Rng::new(1234);
    let (m, k, n) = (13, 300, 19);
    let a: Vec<i8> = (0..m * k).map(|_| rng.next_u64() as i8).collect();
    let b: Vec<i8> = (0..k * n).map(|_| rng.next_u64() as i8).collect();
    // Extreme values too: −128·−128 products everywhere in one row.
    let mut a = a;
    a[..k].fill(-128);
    let mut bb = b.clone();
    for q in 0..k {
        bb[q * n] = -128;
    }
    for ex in execs() {
        let mut got = vec![0i32; m * n];
        qmatmul_i8(
            &ArrayView::from_slice(&a, &[m, k]).unwrap(),
            &ArrayView::from_slice(&bb, &[k, n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut got, &[m, n]).unwrap(),
            &ex,
        )
        .unwrap();
        for i in 0..m {
            for j in 0..n {
                let want: i64 = (0..k)
                    .map(|q| a[i * k + q] as i64 * bb[q * n + j] as i64)
                    .sum();
                assert_eq!(got[i * n + j] as i64, want);
            }
        }
    }
    let mut d = vec![0f32; m * n];
    let r = qmatmul_i8(
        &ArrayView::from_slice(&a, &[m, k]).unwrap(),
        &ArrayView::from_slice(&bb, &[k, n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut d, &[m, n]).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })));
}

#[test]
fn requantize_rounds_half_to_even_and_saturates() {
    use tessera::contract::qmatmul::requantize_i8;
    let mut rng = Rng::new(42);
    // Scales of 8 significant bits and accumulators below 2^24: the product is
    // exact in f64, so f64's round_ties_even is the oracle.
    let mut xs: Vec<i32> = (0..4000).map(|_| (rng.next_u64() as i32) >> 8).collect();
    xs.extend([0, 1, -1, 3, -3, 5, -5, 7, 255, -255, 1 << 23, -(1 << 23)]);
    for &(num, shift) in &[
        (1u32, 1i32),
        (3, 2),
        (255, 10),
        (129, 7),
        (1, 0),
        (200, 20),
        (5, -3),
    ] {
        for sign in [1.0f32, -1.0] {
            let scale = sign * num as f32 * (-(shift as f32)).exp2();
            for zp in [0, 3, -7, 100] {
                let mut got = vec![0i8; xs.len()];
                requantize_i8(
                    scale,
                    zp,
                    &ArrayView::from_slice(&xs, &[xs.len()]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut got, &[xs.len()]).unwrap(),
                    &Exec::default(),
                )
                .unwrap();
                for (x, g) in xs.iter().zip(&got) {
                    let want = ((*x as f64 * scale as f64).round_ties_even() + zp as f64)
                        .clamp(-128.0, 127.0) as i8;
                    assert_eq!(*g, want, "x {x} scale {scale} zp {zp}");
                }
            }
        }
    }
    // Ties: 0.5 → 0, 1.5 → 2, 2.5 → 2, −0.5 → 0, −1.5 → −2.
    let ties = [1i32, 3, 5, -1, -3];
    let mut got = [0i8; 5];
    requantize_i8(
        0.5,
        0,
        &ArrayView::from_slice(&ties, &[5]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut got, &[5]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert_eq!(got, [0, 2, 2, 0, -2]);
    // Refusals write nothing.
    let mut out = [9i8; 5];
    for scale in [f32::NAN, f32::INFINITY] {
        assert!(requantize_i8(
            scale,
            0,
            &ArrayView::from_slice(&ties, &[5]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut out, &[5]).unwrap(),
            &Exec::default(),
        )
        .is_err());
    }
    let mut short = [9i8; 4];
    assert!(requantize_i8(
        1.0,
        0,
        &ArrayView::from_slice(&ties, &[5]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut short, &[4]).unwrap(),
        &Exec::default(),
    )
    .is_err());
    assert_eq!(out, [9; 5]);
    assert_eq!(short, [9; 4]);
}

// ---------------------------------------------------------------- block-scaled

#[test]
fn block_scaled_operands_match_decode_then_contract() {
    use tessera::contract::scaled::{contract_scaled, Operand, Scaled};
    use tessera::{formats, Format};
    let mut rng = Rng::new(777);
    let (m, k, n) = (7, 96, 9);
    let encode = |fmt: Format, shape: &[usize], vals: &[f32]| {
        let sizes = formats::encoded_sizes(fmt, shape).unwrap();
        let (mut codes, mut scales) = (vec![0u8; sizes.code_bytes], vec![0u8; sizes.blocks]);
        let t = formats::encode(
            fmt,
            None,
            &ArrayView::from_slice(vals, shape).unwrap(),
            &mut codes,
            &mut scales,
            &Exec::default(),
        )
        .unwrap();
        (codes, scales, t)
    };
    let decode64 = |fmt: Format, shape: &[usize], codes: &[u8], scales: &[u8], t: Option<f32>| {
        let mut out = vec![0f64; shape.iter().product()];
        formats::decode(
            fmt,
            codes,
            scales,
            t,
            &mut ArrayViewMut::from_slice(&mut out, shape).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        out
    };
    for fmt in Format::ALL {
        let av: Vec<f32> = (0..m * k).map(|_| full_f32(&mut rng) * 8.0).collect();
        // b is stored as [n, k]: its blocks run along k, its last axis.
        let bv: Vec<f32> = (0..n * k).map(|_| full_f32(&mut rng)).collect();
        let (ac, as_, at) = encode(fmt, &[m, k], &av);
        let (bc, bs, bt) = encode(fmt, &[n, k], &bv);
        let a64 = decode64(fmt, &[m, k], &ac, &as_, at);
        let b64 = decode64(fmt, &[n, k], &bc, &bs, bt);
        let sa = Scaled {
            format: fmt,
            shape: &[m, k],
            codes: &ac,
            scales: &as_,
            tensor_scale: at,
        };
        let sb = Scaled {
            format: fmt,
            shape: &[n, k],
            codes: &bc,
            scales: &bs,
            tensor_scale: bt,
        };
        let plain_b: Vec<f32> = bv.clone();
        for (ops, scaled_count) in [
            ((Operand::Scaled(sa), Operand::Scaled(sb)), 2),
            (
                (
                    Operand::Scaled(sa),
                    Operand::Plain(ArrayView::from_slice(&plain_b, &[n, k]).unwrap()),
                ),
                1,
            ),
        ] {
            for acc in [DType::F32, DType::F64] {
                let mut got = vec![0f64; m * n];
                contract_scaled(
                    &ContractSpec::new(acc).contracting(1, 1),
                    &ops.0,
                    &ops.1,
                    None,
                    &mut ArrayViewMut::from_slice(&mut got, &[m, n]).unwrap(),
                    &Exec::default(),
                )
                .unwrap();
                let u = if acc == DType::F32 { f32::U } else { f64::U };
                for i in 0..m {
                    for j in 0..n {
                        let x = &a64[i * k..(i + 1) * k];
                        let y: Vec<f64> = if scaled_count == 2 {
                            b64[j * k..(j + 1) * k].to_vec()
                        } else {
                            plain_b[j * k..(j + 1) * k]
                                .iter()
                                .map(|&v| v as f64)
                                .collect()
                        };
                        let exact = dd_dot(x, &y, 0.0);
                        let mag: f64 = x.iter().zip(&y).map(|(p, q)| (p * q).abs()).sum();
                        let err = (got[i * n + j] - exact).abs();
                        assert!(
                            err <= gamma(k + 1 + scaled_count, u) * mag,
                            "{fmt:?} acc {acc}: ({i},{j}) error {err:e}, magnitude {mag:e}"
                        );
                    }
                }
            }
        }
        // Blocks along an axis that is not contracted, and an integer acc: refused.
        let mut d = vec![5f32; m * n];
        for spec in [
            ContractSpec::new(DType::F32).contracting(0, 0),
            ContractSpec::new(DType::I32).contracting(1, 1),
        ] {
            let r = contract_scaled(
                &spec,
                &Operand::Scaled(sa),
                &Operand::Scaled(sb),
                None,
                &mut ArrayViewMut::from_slice(&mut d, &[m, n]).unwrap(),
                &Exec::default(),
            );
            assert!(r.is_err());
        }
        assert!(d.iter().all(|&x| x == 5.0));
    }
}

// ---------------------------------------------------------------- segments

/// One output in the order `chain` names, from init (or +0), as the model has it.
fn model_one(xs: &[f32], ys: &[f32], init: Option<f32>, chain: bool) -> f32 {
    if xs.is_empty() {
        return init.unwrap_or(0.0);
    }
    if chain {
        xs.iter()
            .zip(ys)
            .fold(init.unwrap_or(0.0), |s, (x, y)| x.mul_add(*y, s))
    } else {
        let t = model_lane(xs, ys);
        init.map_or(t, |i| t + i)
    }
}

#[test]
fn grouped_rows_and_depth_match_model() {
    use tessera::contract::grouped::{contract_grouped_depth, contract_grouped_rows};
    let mut rng = Rng::new(2718);
    // (R, K, N, G): chain and lane for the whole call.
    for (r, k, n, g) in [
        (23, 17, 9, 4),
        (12, 3000, 3, 3),
        (9, 40, 8, 1),
        (30, 10, 7, 5),
    ] {
        let a: Vec<f32> = random_vals(r * k, &mut rng);
        let b: Vec<f32> = random_vals(g * k * n, &mut rng);
        let ids: Vec<u32> = (0..r).map(|_| rng.below_usize(g) as u32).collect();
        let init: Vec<f32> = random_vals(n, &mut rng); // one row, broadcast
        let chain = uses_chain(r, n, k);
        for ex in execs() {
            let mut got = vec![0f32; r * n];
            contract_grouped_rows(
                DType::F32,
                &ArrayView::from_slice(&a, &[r, k]).unwrap(),
                &ArrayView::from_slice(&b, &[g, k, n]).unwrap(),
                &ids,
                Some(&ArrayView::from_slice(&init, &[n]).unwrap()),
                &mut ArrayViewMut::from_slice(&mut got, &[r, n]).unwrap(),
                &ex,
            )
            .unwrap();
            for i in 0..r {
                let gi = ids[i] as usize;
                for j in 0..n {
                    let xs = &a[i * k..(i + 1) * k];
                    let ys: Vec<f32> = (0..k).map(|q| b[gi * k * n + q * n + j]).collect();
                    let want = model_one(xs, &ys, Some(init[j]), chain);
                    assert_eq!(
                        got[i * n + j].to_bits(),
                        want.to_bits(),
                        "rows {r}x{k}x{n} g{g} ({i},{j}) {ex:?}"
                    );
                }
            }
        }
        // Depth groups over the same a and the first b.
        let kid: Vec<u32> = (0..k)
            .map(|_| rng.below_usize(g + 1).min(g - 1) as u32)
            .collect();
        let b0 = &b[..k * n];
        for ex in execs() {
            let mut got = vec![0f32; g * r * n];
            contract_grouped_depth(
                DType::F32,
                g,
                &ArrayView::from_slice(&a, &[r, k]).unwrap(),
                &ArrayView::from_slice(b0, &[k, n]).unwrap(),
                &kid,
                None,
                &mut ArrayViewMut::from_slice(&mut got, &[g, r, n]).unwrap(),
                &ex,
            )
            .unwrap();
            for gi in 0..g {
                let ks: Vec<usize> = (0..k).filter(|&q| kid[q] as usize == gi).collect();
                for i in 0..r {
                    for j in 0..n {
                        let xs: Vec<f32> = ks.iter().map(|&q| a[i * k + q]).collect();
                        let ys: Vec<f32> = ks.iter().map(|&q| b0[q * n + j]).collect();
                        let want = model_one(&xs, &ys, None, chain);
                        assert_eq!(
                            got[(gi * r + i) * n + j].to_bits(),
                            want.to_bits(),
                            "depth g{gi} ({i},{j})"
                        );
                    }
                }
            }
        }
        // An id out of range: refused, nothing written.
        let mut bad = ids.clone();
        bad[0] = g as u32;
        let mut d = vec![3f32; r * n];
        let res = contract_grouped_rows(
            DType::F32,
            &ArrayView::from_slice(&a, &[r, k]).unwrap(),
            &ArrayView::from_slice(&b, &[g, k, n]).unwrap(),
            &bad,
            None,
            &mut ArrayViewMut::from_slice(&mut d, &[r, n]).unwrap(),
            &Exec::default(),
        );
        assert!(matches!(res, Err(Error::Attribute { .. })), "{res:?}");
        assert!(d.iter().all(|&x| x == 3.0));
    }
}

/// Operands of other dtypes (packed as raw codes and converted panel by
/// panel in chain order) give the bits of the same values in f32, at any
/// layout, on every tier and thread count; e2m1fn (sub-byte) too.
#[test]
fn converted_operands_give_the_bits_of_their_values() {
    let mut rng = Rng::new(606);
    for (r, c, k) in [(30, 20, 50), (7, 40, 700), (3, 9, 40), (200, 40, 300)] {
        let av: Vec<f16> = (0..r * k)
            .map(|_| f16::from_f64(few_bits(&mut rng)))
            .collect();
        let bv: Vec<i8> = (0..k * c).map(|_| rng.next_u64() as i8).collect();
        let p = Problem::<f32> {
            sa: vec![r, k],
            sb: vec![k, c],
            a: av.iter().map(|x| x.to_f32()).collect(),
            b: bv.iter().map(|&x| x as f32).collect(),
            init: None,
            spec: ContractSpec::new(DType::F32).contracting(1, 0),
        };
        let want = p.model();
        for _ in 0..2 {
            let (la, lb) = (Lay::random(2, &mut rng), Lay::random(2, &mut rng));
            let (ba, sa, oa) = la.store(&[r, k], &av, f16::NAN);
            let (bb, sb, ob) = lb.store(&[k, c], &bv, 0i8);
            for ex in execs() {
                let mut got = vec![0f32; r * c];
                contract(
                    &p.spec,
                    &ArrayView::from_slice_strided(&ba, &[r, k], &sa, oa).unwrap(),
                    &ArrayView::from_slice_strided(&bb, &[k, c], &sb, ob).unwrap(),
                    None,
                    &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
                    &ex,
                )
                .unwrap();
                for o in 0..r * c {
                    assert_eq!(
                        got[o].to_bits(),
                        want[o].to_bits(),
                        "{r}x{c}x{k} output {o} {ex:?}"
                    );
                }
            }
        }
    }
    // e2m1fn codes packed two per byte along k (a's last axis): 0x2 is 1.0, 0xA is -1.0.
    let (r, c, k) = (8, 8, 64);
    let codes: Vec<u8> = (0..r * k / 2)
        .map(|i| if i % 3 == 0 { 0x2A } else { 0x22 })
        .collect();
    let vals: Vec<f32> = (0..r * k)
        .map(|i| {
            let byte = codes[i / 2];
            let nib = if i % 2 == 0 { byte >> 4 } else { byte & 0xF };
            if nib == 0x2 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let b: Vec<f32> = random_vals(k * c, &mut rng);
    let p = Problem::<f32> {
        sa: vec![r, k],
        sb: vec![k, c],
        a: vals,
        b: b.clone(),
        init: None,
        spec: ContractSpec::new(DType::F32).contracting(1, 0),
    };
    let want = p.model();
    let mut got = vec![0f32; r * c];
    contract(
        &p.spec,
        &ArrayView::contiguous(DType::E2m1fn, &[r, k], &codes).unwrap(),
        &ArrayView::from_slice(&b, &[k, c]).unwrap(),
        None,
        &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for o in 0..r * c {
        assert_eq!(got[o].to_bits(), want[o].to_bits());
    }
}

/// Narrow integers (the exact f64 GEMM path) with an init, into i32 (where
/// the sums wrap) and i64, on every tier and thread count.
#[test]
fn narrow_integer_products_wrap_exactly_with_init() {
    let mut rng = Rng::new(4242);
    let (r, c, k) = (9, 11, 50);
    let a: Vec<u16> = (0..r * k).map(|_| rng.next_u64() as u16).collect();
    let b: Vec<i16> = (0..k * c).map(|_| rng.next_u64() as i16).collect();
    let init: Vec<i64> = (0..r * c).map(|_| rng.next_u64() as i64).collect();
    for ex in execs() {
        for acc in [DType::I32, DType::I64] {
            let mut got = vec![0i64; r * c];
            contract(
                &ContractSpec::new(acc).contracting(1, 0),
                &ArrayView::contiguous(DType::U16, &[r, k], tessera::array::as_bytes(&a)).unwrap(),
                &ArrayView::from_slice(&b, &[k, c]).unwrap(),
                Some(&ArrayView::from_slice(&init, &[r, c]).unwrap()),
                &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
                &ex,
            )
            .unwrap();
            for i in 0..r {
                for j in 0..c {
                    let s: i128 = (0..k)
                        .map(|q| a[i * k + q] as i128 * b[q * c + j] as i128)
                        .sum::<i128>();
                    let want = if acc == DType::I32 {
                        // init enters i32 as a cast does (wrapping), the sum wraps, and
                        // the i32 result widens exactly into the i64 destination.
                        (s as i32).wrapping_add(init[i * c + j] as i32) as i64
                    } else {
                        (s as i64).wrapping_add(init[i * c + j])
                    };
                    assert_eq!(got[i * c + j], want, "{acc} ({i},{j}) {ex:?}");
                }
            }
        }
    }
}

#[test]
fn default_accumulators() {
    use tessera::contract::default_acc;
    assert_eq!(default_acc(DType::I8, DType::U8), DType::I32);
    assert_eq!(default_acc(DType::I8, DType::I64), DType::I64);
    assert_eq!(default_acc(DType::F16, DType::Bf16), DType::F32);
    assert_eq!(default_acc(DType::F32, DType::I32), DType::F64);
    assert_eq!(default_acc(DType::F64, DType::F32), DType::F64);
    assert_eq!(default_acc(DType::C64, DType::F32), DType::C64);
    assert_eq!(default_acc(DType::C64, DType::F64), DType::C128);
    assert_eq!(default_acc(DType::E4m3fn, DType::C128), DType::C128);
}

/// Broadcast operands can name far more elements than memory holds: the call
/// refuses with a typed error instead of aborting, and writes nothing.
#[test]
fn huge_broadcast_depth_is_refused() {
    let one = [1f32];
    let k = 1usize << 42;
    let a = ArrayView::from_slice_strided(&one, &[8, k], &[0, 0], 0).unwrap();
    let b = ArrayView::from_slice_strided(&one, &[k, 8], &[0, 0], 0).unwrap();
    let mut d = vec![3f32; 64];
    let r = contract(
        &ContractSpec::new(DType::F32).contracting(1, 0),
        &a,
        &b,
        None,
        &mut ArrayViewMut::from_slice(&mut d, &[8, 8]).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::Alloc { .. })), "{r:?}");
    assert!(d.iter().all(|&x| x == 3.0));
}

/// The complex microkernels across their blocks (depth past 256, columns
/// past 256, rows split over threads), c64 and c128, without and with an
/// init, a transposed b: each output's bits are the chain model's.
fn complex_blocks<T: Real>(acc: DType, rng: &mut Rng)
where
    num_complex::Complex<T>: tessera::Element,
{
    type Cx<T> = num_complex::Complex<T>;
    for &(r, c, k, with_init) in &[(50, 270, 300, false), (13, 40, 515, true), (7, 10, 9, true)] {
        assert!(uses_chain(r, c, k));
        let draw = |rng: &mut Rng| Cx::new(T::from64(few_bits(rng)), T::from64(few_bits(rng)));
        let a: Vec<Cx<T>> = (0..r * k).map(|_| draw(rng)).collect();
        let b: Vec<Cx<T>> = (0..k * c).map(|_| draw(rng)).collect();
        let init: Vec<Cx<T>> = (0..r * c).map(|_| draw(rng)).collect();
        let bt: Vec<Cx<T>> = (0..k * c).map(|i| b[(i % k) * c + i / k]).collect();
        let mut want = Vec::with_capacity(r * c);
        for i in 0..r {
            for j in 0..c {
                let xs: Vec<(T, T)> = (0..k).map(|q| (a[i * k + q].re, a[i * k + q].im)).collect();
                let ys: Vec<(T, T)> = (0..k).map(|q| (b[q * c + j].re, b[q * c + j].im)).collect();
                let ini = if with_init {
                    (init[i * c + j].re, init[i * c + j].im)
                } else {
                    (T::Z, T::Z)
                };
                want.push(model_complex(&xs, &ys, ini, true));
            }
        }
        for ex in execs() {
            for transposed in [false, true] {
                let bv = if transposed {
                    ArrayView::from_slice_strided(&bt, &[k, c], &[1, k as isize], 0).unwrap()
                } else {
                    ArrayView::from_slice(&b, &[k, c]).unwrap()
                };
                let iv = ArrayView::from_slice(&init, &[r, c]).unwrap();
                let mut got = vec![Cx::new(T::Z, T::Z); r * c];
                contract(
                    &ContractSpec::new(acc).contracting(1, 0),
                    &ArrayView::from_slice(&a, &[r, k]).unwrap(),
                    &bv,
                    with_init.then_some(&iv),
                    &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
                    &ex,
                )
                .unwrap();
                for (o, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        (g.re.bits(), g.im.bits()),
                        (w.0.bits(), w.1.bits()),
                        "{acc} {r}x{c}x{k} output {o} bᵀ {transposed} {ex:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn complex_microkernels_across_blocks_c64_and_c128() {
    let mut rng = Rng::new(556);
    complex_blocks::<f32>(DType::C64, &mut rng);
    complex_blocks::<f64>(DType::C128, &mut rng);
}
