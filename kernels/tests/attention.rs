//! Attention against two oracles written here, not through the engine: a
//! slow scalar model of the stated order (bit for bit, on every tier, thread
//! count, layout and head grouping) and an f64 reference of softmax(q·kᵀ)·v
//! (within the bound the module states); and the refusals.

#![allow(
    clippy::needless_range_loop,
    clippy::too_many_arguments,
    clippy::type_complexity
)]
use half::{bf16, f16};
use tessera::attention::{
    attention, attention_refusal, programs, AttentionPlan, AttentionShapes, Kv,
};
use tessera::generated::runtime::math;
use tessera::map::Program;
use tessera::{available_tiers, ArrayView, ArrayViewMut, DType, Error, Exec};

// ------------------------------------------------------------------ data

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut z = self.0;
        z = (z ^ (z >> 33)).wrapping_mul(0xff51afd7ed558ccd);
        z ^ (z >> 33)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// `v` rounded to nearest (ties to even) with `p` fraction bits and least
/// normal exponent `emin` (subnormals kept), by exact scaling in f64.
fn round_to(v: f64, p: i32, emin: i32) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let e = (v.abs().log2().floor() as i32).max(emin);
    // log2 may be off by one near powers of two: fix e so 2^e ≤ |v| < 2^(e+1).
    let e = if e > emin && 2f64.powi(e) > v.abs() {
        e - 1
    } else {
        e
    };
    let e = if 2f64.powi(e + 1) <= v.abs() {
        e + 1
    } else {
        e
    };
    let ulp = 2f64.powi(e - p);
    (v / ulp).round_ties_even() * ulp
}

/// A value rounded into `dt` (so that it is exact there), correctly.
fn exact(dt: DType, v: f64) -> f64 {
    match dt {
        DType::F16 => round_to(v, 10, -14),
        DType::Bf16 => round_to(v, 7, -126),
        DType::F32 => v as f32 as f64,
        _ => v,
    }
}

fn put(dt: DType, v: f64, out: &mut [u8]) {
    match dt {
        DType::F16 => {
            out[..2].copy_from_slice(&f16::from_f64(exact(dt, v)).to_bits().to_ne_bytes())
        }
        DType::Bf16 => {
            out[..2].copy_from_slice(&bf16::from_f64(exact(dt, v)).to_bits().to_ne_bytes())
        }
        DType::F32 => out[..4].copy_from_slice(&(v as f32).to_ne_bytes()),
        DType::F64 => out[..8].copy_from_slice(&v.to_ne_bytes()),
        DType::I64 => out[..8].copy_from_slice(&(v as i64).to_ne_bytes()),
        DType::Bool => out[0] = (v != 0.0) as u8,
        _ => unreachable!(),
    }
}

fn get(dt: DType, b: &[u8]) -> f64 {
    match dt {
        DType::F16 => f16::from_bits(u16::from_ne_bytes([b[0], b[1]])).to_f64(),
        DType::Bf16 => bf16::from_bits(u16::from_ne_bytes([b[0], b[1]])).to_f64(),
        DType::F32 => f32::from_ne_bytes(b[..4].try_into().unwrap()) as f64,
        DType::F64 => f64::from_ne_bytes(b[..8].try_into().unwrap()),
        _ => unreachable!(),
    }
}

fn bits(dt: DType, b: &[u8]) -> u64 {
    match dt.info().item_bytes {
        2 => u16::from_ne_bytes([b[0], b[1]]) as u64,
        4 => u32::from_ne_bytes(b[..4].try_into().unwrap()) as u64,
        _ => u64::from_ne_bytes(b[..8].try_into().unwrap()),
    }
}

/// A logical array placed in bytes: axes stored in the order `perm`
/// (perm[0] outermost), the last stored axis padded by `pad` elements, and
/// an offset of 3 elements.
struct Placed {
    dt: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
    bytes: Vec<u8>,
}

fn place(dt: DType, shape: &[usize], values: &[f64], perm: &[usize], pad: usize) -> Placed {
    let r = shape.len();
    let mut strides = vec![0isize; r];
    let mut s = 1isize;
    for (k, &a) in perm.iter().enumerate().rev() {
        strides[a] = s;
        let ext = shape[a] + if k == r - 1 { pad } else { 0 };
        s *= ext.max(1) as isize;
    }
    let offset = 3;
    let item = dt.info().item_bytes;
    let total = (offset + s as usize) * item;
    let mut bytes = vec![0xA5u8; total];
    let n: usize = shape.iter().product();
    let mut idx = vec![0usize; r];
    for &v in values.iter().take(n) {
        let mut e = offset as isize;
        for a in 0..r {
            e += idx[a] as isize * strides[a];
        }
        put(dt, v, &mut bytes[e as usize * item..]);
        for a in (0..r).rev() {
            idx[a] += 1;
            if idx[a] < shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
    Placed {
        dt,
        shape: shape.to_vec(),
        strides,
        offset,
        bytes,
    }
}

impl Placed {
    fn view(&self) -> ArrayView<'_> {
        ArrayView::new(
            self.dt,
            &self.shape,
            &self.strides,
            self.offset,
            &self.bytes,
        )
        .unwrap()
    }
    fn view_mut(&mut self) -> ArrayViewMut<'_> {
        ArrayViewMut::new(
            self.dt,
            &self.shape,
            &self.strides,
            self.offset,
            &mut self.bytes,
        )
        .unwrap()
    }
    /// Element bits in logical C order.
    fn read_bits(&self) -> Vec<u64> {
        self.walk(|b| bits(self.dt, b))
    }
    fn read(&self) -> Vec<f64> {
        self.walk(|b| get(self.dt, b))
    }
    fn walk<X>(&self, f: impl Fn(&[u8]) -> X) -> Vec<X> {
        let r = self.shape.len();
        let n: usize = self.shape.iter().product();
        let item = self.dt.info().item_bytes;
        let mut idx = vec![0usize; r];
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let mut e = self.offset as isize;
            for a in 0..r {
                e += idx[a] as isize * self.strides[a];
            }
            out.push(f(&self.bytes[e as usize * item..]));
            for a in (0..r).rev() {
                idx[a] += 1;
                if idx[a] < self.shape[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
        out
    }
}

// ----------------------------------------------------------------- cases

/// The mask-and-score programs the tests use, each with its meaning
/// written here as plain Rust (the model's and the reference's).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Prog {
    Full,
    Causal(i64),
    Window(i64, i64),
    Alibi(i64),
    Softcap(f64),
    /// Visible where the query's and the key's document ids (loads 1, 2)
    /// agree and the key is not after the query.
    Document,
    /// Causal written with a remainder the ranges do not model: output 0
    /// runs on every block.
    OpaqueCausal,
}

impl Prog {
    fn program(self, acc: DType, rank: usize) -> Program {
        let a = acc.to_string();
        let (r, k, h) = (rank - 2, rank - 1, rank - 3);
        match self {
            Prog::Full => programs::full(acc).unwrap(),
            Prog::Causal(o) => programs::causal(acc, rank, o).unwrap(),
            Prog::Window(o, w) => programs::sliding_window(acc, rank, o, w).unwrap(),
            Prog::Alibi(o) => programs::alibi(acc, rank, o, true).unwrap(),
            Prog::Softcap(c) => programs::softcap(acc, rank, c, 0, false).unwrap(),
            Prog::Document => Program::parse(
                &format!("y0 = logical_and(x1 == x2, coord({k}) <= coord({r})); y1 = x0 + cast<{a}>(coord({h})) * 0.25"),
                &[acc, DType::I64, DType::I64],
            )
            .unwrap(),
            Prog::OpaqueCausal => Program::parse(
                &format!("y0 = (coord({k}) - coord({r})) % 1000000000 <= 0; y1 = x0"),
                &[acc],
            )
            .unwrap(),
        }
    }
}

#[derive(Clone, Debug)]
struct Case {
    lead: Vec<usize>,
    hq: usize,
    hk: usize,
    tq: usize,
    tk: usize,
    dk: usize,
    dv: usize,
    input: DType,
    acc: DType,
    out: DType,
    scale: f64,
    prog: Prog,
    lengths: Option<Vec<usize>>,
    /// Magnitude of q and k's elements.
    mag: f64,
}

struct Data {
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    slopes: Vec<f64>,
    qdoc: Vec<f64>,
    kdoc: Vec<f64>,
}

fn data(c: &Case, seed: u64) -> Data {
    let mut g = Rng(seed);
    let leads: usize = c.lead.iter().product();
    let nq = leads * c.hq * c.tq * c.dk;
    let nk = leads * c.hk * c.tk * c.dk;
    let nv = leads * c.hk * c.tk * c.dv;
    let q = (0..nq).map(|_| exact(c.input, g.unit() * c.mag)).collect();
    let k = (0..nk).map(|_| exact(c.input, g.unit() * c.mag)).collect();
    let v = (0..nv).map(|_| exact(c.input, g.unit())).collect();
    let slopes = (0..c.hq)
        .map(|h| exact(c.acc, 0.5f64.powi(h as i32 + 1)))
        .collect();
    let qdoc = (0..leads * c.tq)
        .map(|i| ((i % c.tq.max(1)) / 37) as f64)
        .collect();
    let kdoc = (0..leads * c.tk)
        .map(|i| ((i % c.tk.max(1)) / 37) as f64)
        .collect();
    Data {
        q,
        k,
        v,
        slopes,
        qdoc,
        kdoc,
    }
}

// ------------------------------------------------- the model of the order

trait F:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn of(v: f64) -> Self;
    fn f(self) -> f64;
    fn fma(a: Self, b: Self, c: Self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn tanh(self) -> Self;
}
macro_rules! float {
    ($t:ty, $exp:path, $ln:path, $tanh:path) => {
        impl F for $t {
            fn of(v: f64) -> $t {
                v as $t
            }
            fn f(self) -> f64 {
                self as f64
            }
            fn fma(a: $t, b: $t, c: $t) -> $t {
                a.mul_add(b, c)
            }
            fn exp(self) -> $t {
                $exp(self)
            }
            fn ln(self) -> $t {
                $ln(self)
            }
            fn tanh(self) -> $t {
                $tanh(self)
            }
        }
    };
}
float!(
    f32,
    math::exp::exp_f32,
    math::log::log_f32,
    math::exp::tanh_f32
);
float!(
    f64,
    math::exp::exp_f64,
    math::log::log_f64,
    math::exp::tanh_f64
);

fn visible(c: &Case, d: &Data, lead: usize, h: usize, i: usize, j: usize) -> bool {
    let (i, j) = (i as i64, j as i64);
    match c.prog {
        Prog::Full | Prog::Softcap(_) => true,
        Prog::Causal(o) | Prog::Alibi(o) => j <= i + o,
        Prog::Window(o, w) => j <= i + o && j > i + o - w,
        Prog::Document => {
            let _ = h;
            d.qdoc[lead * c.tq + i as usize] == d.kdoc[lead * c.tk + j as usize] && j <= i
        }
        Prog::OpaqueCausal => j <= i,
    }
}

fn rescore<T: F>(c: &Case, d: &Data, h: usize, i: usize, j: usize, x: T) -> T {
    match c.prog {
        Prog::Alibi(o) => {
            let dist = (i as i64 + o - j as i64).abs();
            x - T::of(d.slopes[h]) * T::of(dist as f64)
        }
        Prog::Softcap(cap) => {
            let cp = T::of(cap);
            cp * (x / cp).tanh()
        }
        Prog::Document => x + T::of(h as f64) * T::of(0.25),
        _ => x,
    }
}

/// Round a weight through the values' dtype.
fn through<T: F>(input: DType, w: T) -> T {
    T::of(exact(input, w.f()))
}

/// The stated order, one row at a time: (o as f64 values rounded into o's
/// dtype, lse).
fn model<T: F>(c: &Case, d: &Data) -> (Vec<f64>, Vec<f64>) {
    let leads: usize = c.lead.iter().product();
    let g = c.hq / c.hk;
    let mut o = Vec::new();
    let mut lse = Vec::new();
    let scale = T::of(c.scale);
    for b in 0..leads {
        let t = c.lengths.as_ref().map_or(c.tk, |l| l[b]);
        for h in 0..c.hq {
            let kh = h / g;
            for i in 0..c.tq {
                let qrow = &d.q[((b * c.hq + h) * c.tq + i) * c.dk..][..c.dk];
                let mut m = T::of(f64::NEG_INFINITY);
                let mut l = T::of(0.0);
                let mut a = vec![T::of(0.0); c.dv];
                for k0 in (0..t).step_by(64) {
                    let keys: Vec<usize> = (k0..t.min(k0 + 64)).collect();
                    let vis: Vec<bool> = keys.iter().map(|&j| visible(c, d, b, h, i, j)).collect();
                    if !vis.iter().any(|&x| x) {
                        continue;
                    }
                    let s: Vec<T> = keys
                        .iter()
                        .map(|&j| {
                            let krow = &d.k[((b * c.hk + kh) * c.tk + j) * c.dk..][..c.dk];
                            let mut acc = T::of(0.0);
                            for e in 0..c.dk {
                                acc = T::fma(T::of(qrow[e]), T::of(krow[e]), acc);
                            }
                            rescore(c, d, h, i, j, acc * scale)
                        })
                        .collect();
                    let mut mx = m;
                    let mut nan = m.f().is_nan();
                    for (x, &vv) in s.iter().zip(&vis) {
                        if vv {
                            nan |= x.f().is_nan();
                            if *x > mx {
                                mx = *x;
                            }
                        }
                    }
                    if nan {
                        mx = T::of(f64::NAN);
                    }
                    if mx.f() == f64::NEG_INFINITY {
                        continue;
                    }
                    let w: Vec<T> = s
                        .iter()
                        .zip(&vis)
                        .map(|(&x, &vv)| if vv { (x - mx).exp() } else { T::of(0.0) })
                        .collect();
                    let mut lanes = [T::of(0.0); 8];
                    for (j, &x) in w.iter().enumerate() {
                        lanes[j % 8] = lanes[j % 8] + x;
                    }
                    let t4: Vec<T> = (0..4).map(|k| lanes[k] + lanes[k + 4]).collect();
                    let t2: Vec<T> = (0..2).map(|k| t4[k] + t4[k + 2]).collect();
                    let sum = t2[0] + t2[1];
                    let alpha = (m - mx).exp();
                    l = alpha * l + sum;
                    for x in a.iter_mut() {
                        *x = alpha * *x;
                    }
                    for (n, &j) in keys.iter().enumerate() {
                        if !vis[n] {
                            continue;
                        }
                        let wj = through(c.input, w[n]);

                        let vrow = &d.v[((b * c.hk + kh) * c.tk + j) * c.dv..][..c.dv];
                        for e in 0..c.dv {
                            a[e] = T::fma(wj, T::of(vrow[e]), a[e]);
                        }
                    }
                    m = mx;
                }
                if l.f() == 0.0 {
                    o.extend(std::iter::repeat_n(0.0, c.dv));
                    lse.push(f64::NEG_INFINITY);
                } else {
                    for x in &a {
                        let v = (*x / l + T::of(0.0)).f();
                        o.push(exact(c.out, v));
                    }
                    lse.push(if m.f() == f64::INFINITY {
                        f64::INFINITY
                    } else {
                        (m + l.ln()).f()
                    });
                }
            }
        }
    }
    (o, lse)
}

// ------------------------------------------------------------ running

/// Layout choices: (perm of q's axes, pad) per operand.
#[derive(Clone, Copy, Debug)]
enum Layout {
    C,
    /// Heads and rows swapped in memory ([lead…, t, h, d]), padded rows.
    Transposed,
    /// The depth axis outermost (nothing unit-stride along it).
    DepthMajor,
}

fn perm(rank: usize, l: Layout) -> (Vec<usize>, usize) {
    let nl = rank - 3;
    let mut p: Vec<usize> = (0..rank).collect();
    match l {
        Layout::C => (p, 0),
        Layout::Transposed => {
            p.swap(nl, nl + 1);
            (p, 5)
        }
        Layout::DepthMajor => {
            let d = p.remove(rank - 1);
            p.insert(0, d);
            (p, 1)
        }
    }
}

struct Out {
    o: Vec<u64>,
    lse: Vec<u64>,
    o_vals: Vec<f64>,
    lse_vals: Vec<f64>,
}

fn run(c: &Case, d: &Data, layout: Layout, exec: &Exec) -> Out {
    let rank = c.lead.len() + 3;
    let (p, pad) = perm(rank, layout);
    let sh = |h: usize, t: usize, e: usize| -> Vec<usize> {
        c.lead.iter().copied().chain([h, t, e]).collect()
    };
    let q = place(c.input, &sh(c.hq, c.tq, c.dk), &d.q, &p, pad);
    let k = place(c.input, &sh(c.hk, c.tk, c.dk), &d.k, &p, pad);
    let v = place(c.input, &sh(c.hk, c.tk, c.dv), &d.v, &p, pad);
    let mut o = place(c.out, &sh(c.hq, c.tq, c.dv), &[], &p, pad);
    let lsh: Vec<usize> = c.lead.iter().copied().chain([c.hq, c.tq]).collect();
    let lp: Vec<usize> = (0..rank - 1).collect();
    let mut lse = place(c.acc, &lsh, &[], &lp, 2);
    let leads: usize = c.lead.iter().product();
    let lens = c.lengths.as_ref().map(|l| {
        place(
            DType::I64,
            &c.lead,
            &l.iter().map(|&x| x as f64).collect::<Vec<_>>(),
            &(0..c.lead.len()).collect::<Vec<_>>(),
            0,
        )
    });
    let nl = c.lead.len();
    let mut loads: Vec<Placed> = Vec::new();
    match c.prog {
        Prog::Alibi(_) => loads.push(place(c.acc, &[c.hq, 1, 1], &d.slopes, &[0, 1, 2], 0)),
        Prog::Document => {
            let mut qs: Vec<usize> = c.lead.clone();
            qs.extend([1, c.tq, 1]);
            let mut ks: Vec<usize> = c.lead.clone();
            ks.extend([1, 1, c.tk]);
            let idp: Vec<usize> = (0..nl + 3).collect();
            loads.push(place(DType::I64, &qs, &d.qdoc, &idp, 0));
            loads.push(place(DType::I64, &ks, &d.kdoc, &idp, 0));
        }
        _ => {}
    }
    let _ = leads;
    let prog = c.prog.program(c.acc, rank);
    let lv: Vec<ArrayView<'_>> = loads.iter().map(|l| l.view()).collect();
    let lenv = lens.as_ref().map(|l| l.view());
    let kv = Kv {
        k: k.view(),
        v: v.view(),
    };
    {
        let mut ov = o.view_mut();
        let mut lv2 = lse.view_mut();
        attention(
            &prog,
            c.scale,
            &q.view(),
            &kv,
            &lv,
            lenv.as_ref(),
            &mut ov,
            &mut lv2,
            exec,
        )
        .unwrap();
    }
    Out {
        o: o.read_bits(),
        lse: lse.read_bits(),
        o_vals: o.read(),
        lse_vals: lse.read(),
    }
}

fn canon(dt: DType, v: f64) -> u64 {
    let v = if v.is_nan() { f64::NAN } else { v };
    let mut b = [0u8; 8];
    put(dt, v, &mut b);
    bits(dt, &b)
}

/// Say which tiers this CPU cannot run (their comparisons are skipped).
fn report_skipped_tiers() {
    for t in tessera::Tier::ALL {
        if !available_tiers().contains(&t) {
            eprintln!("skipped on this CPU: tier {t:?} (the model is compared on the others)");
        }
    }
}

fn check_model(c: &Case, seed: u64) {
    let d = data(c, seed);
    let (mo, ml) = if c.acc == DType::F32 {
        model::<f32>(c, &d)
    } else {
        model::<f64>(c, &d)
    };
    let want_o: Vec<u64> = mo.iter().map(|&v| canon(c.out, v)).collect();
    let want_l: Vec<u64> = ml.iter().map(|&v| canon(c.acc, v)).collect();
    for tier in available_tiers() {
        for threads in [1, 3] {
            for layout in [Layout::C, Layout::Transposed, Layout::DepthMajor] {
                let got = run(c, &d, layout, &Exec::on(tier).threads(threads));
                let bad = got.o.iter().zip(&want_o).position(|(a, b)| a != b);
                assert!(
                    bad.is_none(),
                    "{c:?} tier {tier:?} threads {threads} {layout:?}: o[{}] = {} want {}",
                    bad.unwrap(),
                    got.o_vals[bad.unwrap()],
                    mo[bad.unwrap()]
                );
                let bad = got.lse.iter().zip(&want_l).position(|(a, b)| a != b);
                assert!(
                    bad.is_none(),
                    "{c:?} tier {tier:?} threads {threads} {layout:?}: lse[{}] = {} want {}",
                    bad.unwrap(),
                    got.lse_vals[bad.unwrap()],
                    ml[bad.unwrap()]
                );
            }
        }
    }
}

fn case(prog: Prog, input: DType, acc: DType) -> Case {
    Case {
        lead: vec![2],
        hq: 4,
        hk: 2,
        tq: 70,
        tk: 150,
        dk: 20,
        dv: 17,
        input,
        acc,
        out: acc,
        scale: 0.3,
        prog,
        lengths: Some(vec![150, 97]),
        mag: 1.0,
    }
}

#[test]
fn follows_the_stated_order_bit_for_bit() {
    report_skipped_tiers();
    let progs = [
        Prog::Full,
        Prog::Causal(80),
        Prog::Window(80, 50),
        Prog::Alibi(80),
        Prog::Softcap(2.5),
        Prog::Document,
        Prog::OpaqueCausal,
    ];
    for (n, &p) in progs.iter().enumerate() {
        for (input, acc) in [
            (DType::F32, DType::F32),
            (DType::Bf16, DType::F32),
            (DType::F16, DType::F32),
            (DType::F64, DType::F64),
            (DType::F32, DType::F64),
        ] {
            let mut c = case(p, input, acc);
            if n % 2 == 1 {
                c.out = input;
            }
            check_model(&c, 17 + n as u64);
        }
    }
}

#[test]
fn head_groupings_shapes_and_lengths() {
    report_skipped_tiers();
    // Multi-query (one key head), groups of more than 64 heads, one row,
    // long keys, no lead axis, empty lengths.
    let mut shapes = vec![];
    let mut c = case(Prog::Causal(0), DType::F32, DType::F32);
    c.lead = vec![];
    c.lengths = None;
    c.hq = 3;
    c.hk = 1;
    c.tq = 1;
    c.tk = 300;
    c.prog = Prog::Full;
    shapes.push(c.clone());
    c.hq = 66;
    c.hk = 1;
    c.tq = 3;
    c.tk = 65;
    c.dk = 3;
    c.dv = 2;
    c.prog = Prog::Causal(1);
    shapes.push(c.clone());
    let mut c = case(Prog::Causal(0), DType::F32, DType::F64);
    c.lead = vec![3, 1];
    c.lengths = Some(vec![0, 64, 1]);
    c.hq = 2;
    c.hk = 2;
    c.tq = 65;
    c.tk = 130;
    shapes.push(c.clone());
    c.dk = 0;
    shapes.push(c.clone());
    for (n, c) in shapes.iter().enumerate() {
        check_model(c, 100 + n as u64);
    }
}

/// Heads grouped two ways (h query heads over one key head, or each query
/// head with its own copy of the key head) give the same rows, and a row's
/// bits do not depend on the batch position it is computed at.
#[test]
fn same_bits_for_any_grouping_and_batch_position() {
    let mut c = case(Prog::Causal(30), DType::F32, DType::F32);
    c.lengths = None;
    c.lead = vec![1];
    c.hq = 4;
    c.hk = 1;
    let d = data(&c, 5);
    let grouped = run(&c, &d, Layout::C, &Exec::default());
    // The same key head copied for each query head.
    let mut c2 = c.clone();
    c2.hk = 4;
    let mut d2 = data(&c2, 5);
    d2.q = d.q.clone();
    let per = c.tk * c.dk;
    d2.k = (0..4).flat_map(|_| d.k[..per].to_vec()).collect();
    let perv = c.tk * c.dv;
    d2.v = (0..4).flat_map(|_| d.v[..perv].to_vec()).collect();
    let separate = run(&c2, &d2, Layout::Transposed, &Exec::default().threads(2));
    assert_eq!(grouped.o, separate.o);
    assert_eq!(grouped.lse, separate.lse);
    // The batch of one at position 1 of a batch of 3.
    let mut c3 = c.clone();
    c3.lead = vec![3];
    let mut d3 = data(&c3, 9);
    let nq = c.hq * c.tq * c.dk;
    d3.q[nq..2 * nq].copy_from_slice(&d.q);
    d3.k[per..2 * per].copy_from_slice(&d.k);
    d3.v[perv..2 * perv].copy_from_slice(&d.v);
    let batched = run(&c3, &d3, Layout::DepthMajor, &Exec::default().threads(3));
    let no = c.hq * c.tq * c.dv;
    assert_eq!(&batched.o[no..2 * no], &grouped.o[..]);
    let nl = c.hq * c.tq;
    assert_eq!(&batched.lse[nl..2 * nl], &grouped.lse[..]);
}

#[test]
fn block_skipping_changes_no_bit() {
    // Causal through the ranges (diagonal blocks mixed, the rest decided)
    // and through a program the ranges cannot decide (every block runs
    // output 0).
    let mut a = case(Prog::Causal(0), DType::F32, DType::F32);
    a.tq = 200;
    a.tk = 200;
    a.lengths = None;
    let d = data(&a, 3);
    let ranged = run(&a, &d, Layout::C, &Exec::default());
    let mut b = a.clone();
    b.prog = Prog::OpaqueCausal;
    let opaque = run(&b, &d, Layout::C, &Exec::default());
    assert_eq!(ranged.o, opaque.o);
    assert_eq!(ranged.lse, opaque.lse);
}

// ------------------------------------------------------- f64 reference

/// softmax(scale·q·kᵀ, masked)·v and the log-sum-exp in f64 from the
/// inputs' values, for one row.
fn reference(c: &Case, d: &Data) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<usize>) {
    let leads: usize = c.lead.iter().product();
    let g = c.hq / c.hk;
    let (mut o, mut lse, mut absum, mut counts) = (vec![], vec![], vec![], vec![]);
    for b in 0..leads {
        let t = c.lengths.as_ref().map_or(c.tk, |l| l[b]);
        for h in 0..c.hq {
            let kh = h / g;
            for i in 0..c.tq {
                let qrow = &d.q[((b * c.hq + h) * c.tq + i) * c.dk..][..c.dk];
                let mut s = vec![];
                for j in 0..t {
                    if !visible(c, d, b, h, i, j) {
                        continue;
                    }
                    let krow = &d.k[((b * c.hk + kh) * c.tk + j) * c.dk..][..c.dk];
                    let dot: f64 = qrow.iter().zip(krow).map(|(x, y)| x * y).sum();
                    s.push((j, rescore::<f64>(c, d, h, i, j, dot * c.scale)));
                }
                counts.push(t);
                if s.is_empty() {
                    o.extend(std::iter::repeat_n(0.0, c.dv));
                    absum.extend(std::iter::repeat_n(0.0, c.dv));
                    lse.push(f64::NEG_INFINITY);
                    continue;
                }
                let m = s.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = s.iter().map(|x| (x.1 - m).exp()).sum();
                lse.push(m + z.ln());
                for e in 0..c.dv {
                    let mut acc = 0.0;
                    let mut ab = 0.0;
                    for &(j, x) in &s {
                        let p = (x - m).exp() / z;
                        let vv = d.v[((b * c.hk + kh) * c.tk + j) * c.dv + e];
                        acc += p * vv;
                        ab += p * vv.abs();
                    }
                    o.push(acc);
                    absum.push(ab);
                }
            }
        }
    }
    (o, lse, absum, counts)
}

fn unit_roundoff(dt: DType) -> f64 {
    match dt {
        DType::F16 => 2f64.powi(-11),
        DType::Bf16 => 2f64.powi(-8),
        DType::F32 => 2f64.powi(-24),
        _ => 2f64.powi(-53),
    }
}

/// The module's bound, with the scores' own error (dk fused roundings of
/// products of magnitude ≤ Σ|q||k|) added to `b`'s term, and the chain of
/// `t` fused roundings of the accumulation and the output's rounding.
fn check_bound(c: &Case, seed: u64) {
    let d = data(c, seed);
    let got = run(c, &d, Layout::Transposed, &Exec::default());
    let (ro, rl, absum, counts) = reference(c, &d);
    let u = unit_roundoff(c.acc);
    let up = u / (1.0 - u);
    let lambda = if c.acc == DType::F32 { 3.0 } else { 5.0 };
    let uo = unit_roundoff(c.out);
    let uin = unit_roundoff(c.input);
    let rows = rl.len();
    // The scores' own rounding: |dot − fl(dot)| ≤ dk·u'·Σ|q||k|·scale, and
    // the scale's and product's roundings.
    let score_err = (c.dk as f64 + 2.0) * up * c.mag * c.mag * c.dk as f64 * c.scale;
    for r in 0..rows {
        let t = counts[r].max(1) as f64;
        let n = t / 64.0;
        let n = n.ceil();
        if rl[r] == f64::NEG_INFINITY {
            assert_eq!(got.lse_vals[r], f64::NEG_INFINITY, "{c:?} row {r}");
            for e in 0..c.dv {
                assert_eq!(got.o_vals[r * c.dv + e].to_bits(), 0, "{c:?} row {r}");
            }
            continue;
        }
        let el = (lambda * u).exp();
        let eps = el * (13.0 * n + 9.0 + t.ln()) * up + (el - 1.0) * t.ln() + up * rl[r].abs();
        let lse_bound =
            el * (7.0 * n + 9.0 + t.ln()) * up + (el - 1.0) * t.ln() + up * rl[r].abs() + score_err;
        let err = (got.lse_vals[r] - rl[r]).abs();
        assert!(
            err <= lse_bound,
            "{c:?} row {r}: lse {} want {} err {err:e} bound {lse_bound:e}",
            got.lse_vals[r],
            rl[r]
        );
        // Each weight's relative error, then the chain and the rounding.
        let b = c.mag * c.mag * c.dk as f64 * c.scale + 2.0;
        let dw = (1.0 + u) * eps + (2.0 * b + t.ln()) * u + 5.0 * up + 2.0 * score_err;
        let rel = dw.exp() - 1.0 + (t + 2.0) * up + if c.input != c.acc { uin } else { 0.0 };
        for e in 0..c.dv {
            let i = r * c.dv + e;
            let bound = rel * absum[i] * 1.01 + uo * ro[i].abs() + 1e-300;
            let err = (got.o_vals[i] - ro[i]).abs();
            assert!(
                err <= bound,
                "{c:?} row {r} col {e}: o {} want {} err {err:e} bound {bound:e}",
                got.o_vals[i],
                ro[i]
            );
        }
    }
}

#[test]
fn within_the_stated_bound_of_an_f64_reference() {
    for (n, p) in [
        Prog::Full,
        Prog::Causal(60),
        Prog::Window(60, 40),
        Prog::Alibi(60),
        Prog::Softcap(8.0),
        Prog::Document,
    ]
    .into_iter()
    .enumerate()
    {
        for (input, acc, mag, scale) in [
            (DType::F32, DType::F32, 1.0, 0.3),
            // Scores of magnitude ~100 (up to 360).
            (DType::F32, DType::F32, 3.0, 2.0),
            (DType::Bf16, DType::F32, 1.0, 0.3),
            (DType::F64, DType::F64, 3.0, 2.0),
        ] {
            let mut c = case(p, input, acc);
            c.mag = mag;
            c.scale = scale;
            c.tk = 260;
            c.lengths = Some(vec![260, 133]);
            check_bound(&c, 40 + n as u64);
        }
    }
}

// -------------------------------------------------- hidden non-finite

#[test]
fn hidden_nan_and_infinity_never_reach_o() {
    let mut c = case(Prog::Causal(0), DType::F32, DType::F32);
    c.tq = 100;
    c.tk = 100;
    c.lengths = Some(vec![100, 90]);
    let mut d = data(&c, 77);
    // Poison keys and values every row hides: key j for rows < j (in every
    // head), and those beyond the second lead index's length.
    let d_clean = data(&c, 77);
    for b in 0..2 {
        for kh in 0..c.hk {
            let keys: &[usize] = if b == 0 { &[70, 99] } else { &[95, 99] };
            for &j in keys {
                let kbase = ((b * c.hk + kh) * c.tk + j) * c.dk;
                let vbase = ((b * c.hk + kh) * c.tk + j) * c.dv;
                d.k[kbase] = f64::NAN;
                d.v[vbase] = f64::INFINITY;
                d.v[vbase + 1] = f64::NAN;
            }
        }
    }
    let got = run(&c, &d, Layout::C, &Exec::default());
    let (mo, _) = model::<f32>(&c, &d_clean);
    // Rows that see a poisoned key are NaN in the model of the poisoned
    // data; the rest equal the clean model bit for bit.
    let (mp, _) = model::<f32>(&c, &d);
    let mut checked = 0;
    for (i, (&g, (&clean, &pois))) in got.o_vals.iter().zip(mo.iter().zip(&mp)).enumerate() {
        if pois.is_nan() {
            assert!(g.is_nan(), "element {i}");
        } else {
            assert_eq!(
                g.to_bits(),
                clean.to_bits(),
                "element {i}: a hidden value reached o"
            );
            checked += 1;
        }
    }
    assert!(checked > 1000);
}

#[test]
fn a_row_with_no_visible_key_is_zero_and_minus_infinity() {
    let mut c = case(Prog::Causal(-10), DType::F32, DType::F32);
    c.lengths = Some(vec![0, 40]);
    let d = data(&c, 8);
    let got = run(&c, &d, Layout::C, &Exec::default());
    let rows_per_lead = c.hq * c.tq;
    for r in 0..2 * rows_per_lead {
        let i = r % c.tq;
        let lead = r / rows_per_lead;
        let hidden = lead == 0 || i < 10;
        if hidden {
            assert_eq!(got.lse_vals[r], f64::NEG_INFINITY);
            for e in 0..c.dv {
                assert_eq!(got.o[r * c.dv + e], 0, "o is +0");
            }
        } else {
            assert!(got.lse_vals[r].is_finite());
        }
    }
}

// ------------------------------------------------------------ refusals

#[test]
fn refusals_come_before_any_write() {
    let acc = DType::F32;
    let q = place(DType::F32, &[2, 4, 5, 8], &[0.5; 320], &[0, 1, 2, 3], 0);
    let k = place(DType::F32, &[2, 2, 6, 8], &[0.5; 192], &[0, 1, 2, 3], 0);
    let v = place(DType::F32, &[2, 2, 6, 3], &[0.5; 72], &[0, 1, 2, 3], 0);
    let mut o = place(DType::F32, &[2, 4, 5, 3], &[7.0; 120], &[0, 1, 2, 3], 0);
    let mut lse = place(DType::F32, &[2, 4, 5], &[7.0; 40], &[0, 1, 2], 0);
    let full = programs::full(acc).unwrap();
    let kv = Kv {
        k: k.view(),
        v: v.view(),
    };
    let try_call = |prog: &Program,
                    q: &ArrayView<'_>,
                    kv: &Kv<'_>,
                    loads: &[ArrayView<'_>],
                    lens: Option<&ArrayView<'_>>,
                    o: &mut Placed,
                    lse: &mut Placed|
     -> Error {
        let before = (o.bytes.clone(), lse.bytes.clone());
        let (mut ov, mut lv) = (o.view_mut(), lse.view_mut());
        let refusal = attention_refusal(prog, 1.0, q, kv, loads, lens, &ov, &lv);
        let e = attention(
            prog,
            1.0,
            q,
            kv,
            loads,
            lens,
            &mut ov,
            &mut lv,
            &Exec::default(),
        )
        .unwrap_err();
        assert!(refusal.is_some(), "the query agrees: {e}");
        assert_eq!(
            (o.bytes.clone(), lse.bytes.clone()),
            before,
            "nothing written: {e}"
        );
        e
    };
    // Head counts that do not divide.
    let k3 = place(DType::F32, &[2, 3, 6, 8], &[0.5; 288], &[0, 1, 2, 3], 0);
    let v3 = place(DType::F32, &[2, 3, 6, 3], &[0.5; 108], &[0, 1, 2, 3], 0);
    let e = try_call(
        &full,
        &q.view(),
        &Kv {
            k: k3.view(),
            v: v3.view(),
        },
        &[],
        None,
        &mut o,
        &mut lse,
    );
    assert!(matches!(e, Error::Shape { .. }), "{e}");
    // Dtypes: k of another dtype; f64 inputs in an f32 accumulator; o of
    // a third dtype.
    let kb = place(DType::F64, &[2, 2, 6, 8], &[0.5; 192], &[0, 1, 2, 3], 0);
    let e = try_call(
        &full,
        &q.view(),
        &Kv {
            k: kb.view(),
            v: v.view(),
        },
        &[],
        None,
        &mut o,
        &mut lse,
    );
    assert!(matches!(e, Error::DTypeMismatch { .. }), "{e}");
    let mut o16 = place(DType::F16, &[2, 4, 5, 3], &[7.0; 120], &[0, 1, 2, 3], 0);
    let e = try_call(&full, &q.view(), &kv, &[], None, &mut o16, &mut lse);
    assert!(matches!(e, Error::DTypeUnsupported { .. }), "{e}");
    // Program arity, output dtypes, output 0 reading the score, coords.
    let two = Program::parse("y0 = true; y1 = x0 + x1", &[acc, acc]).unwrap();
    let e = try_call(&two, &q.view(), &kv, &[], None, &mut o, &mut lse);
    assert!(matches!(e, Error::Attribute { .. }), "{e}");
    let wrong = Program::parse("y0 = x0 > 0f32; y1 = x0", &[acc]).unwrap();
    let e = try_call(&wrong, &q.view(), &kv, &[], None, &mut o, &mut lse);
    assert!(matches!(e, Error::Attribute { .. }), "{e}");
    let f64out = Program::parse("y0 = true; y1 = cast<f64>(x0)", &[acc]).unwrap();
    let e = try_call(&f64out, &q.view(), &kv, &[], None, &mut o, &mut lse);
    assert!(matches!(e, Error::DTypeMismatch { .. }), "{e}");
    let far = Program::parse("y0 = coord(4) >= 0; y1 = x0", &[acc]).unwrap();
    let e = try_call(&far, &q.view(), &kv, &[], None, &mut o, &mut lse);
    assert!(matches!(e, Error::Axis { .. }), "{e}");
    // Lengths out of range, of another shape.
    let lens = place(DType::I64, &[2], &[3.0, 7.0], &[0], 0);
    let e = try_call(
        &full,
        &q.view(),
        &kv,
        &[],
        Some(&lens.view()),
        &mut o,
        &mut lse,
    );
    assert!(matches!(e, Error::Attribute { .. }), "{e}");
    let lens = place(DType::I64, &[2], &[3.0, -1.0], &[0], 0);
    let e = try_call(
        &full,
        &q.view(),
        &kv,
        &[],
        Some(&lens.view()),
        &mut o,
        &mut lse,
    );
    assert!(matches!(e, Error::Attribute { .. }), "{e}");
    let lens = place(DType::I64, &[3], &[3.0, 1.0, 1.0], &[0], 0);
    let e = try_call(
        &full,
        &q.view(),
        &kv,
        &[],
        Some(&lens.view()),
        &mut o,
        &mut lse,
    );
    assert!(matches!(e, Error::Shape { .. }), "{e}");
    // A load that does not broadcast to the pair space.
    let withload = Program::parse("y0 = x1 > 0f32; y1 = x0", &[acc, acc]).unwrap();
    let bad = place(DType::F32, &[7], &[1.0; 7], &[0], 0);
    let e = try_call(
        &withload,
        &q.view(),
        &kv,
        &[bad.view()],
        None,
        &mut o,
        &mut lse,
    );
    assert!(matches!(e, Error::Shape { .. }), "{e}");
    // A destination that reaches an element twice.
    let mut twice = place(DType::F32, &[2, 4, 5, 3], &[7.0; 120], &[0, 1, 2, 3], 0);
    twice.strides[2] = 0;
    let e = try_call(&full, &q.view(), &kv, &[], None, &mut twice, &mut lse);
    assert!(matches!(e, Error::Layout { .. }), "{e}");
}

#[test]
fn plans_share_scratch_and_match_the_call() {
    let mut c = case(Prog::Window(10, 30), DType::Bf16, DType::F32);
    c.lengths = None;
    let d = data(&c, 4);
    let want = run(&c, &d, Layout::C, &Exec::default());
    let rank = c.lead.len() + 3;
    let (p, pad) = perm(rank, Layout::C);
    let sh = |h: usize, t: usize, e: usize| -> Vec<usize> {
        c.lead.iter().copied().chain([h, t, e]).collect()
    };
    let q = place(c.input, &sh(c.hq, c.tq, c.dk), &d.q, &p, pad);
    let k = place(c.input, &sh(c.hk, c.tk, c.dk), &d.k, &p, pad);
    let v = place(c.input, &sh(c.hk, c.tk, c.dv), &d.v, &p, pad);
    let mut o = place(c.out, &sh(c.hq, c.tq, c.dv), &[], &p, pad);
    let lsh: Vec<usize> = c.lead.iter().copied().chain([c.hq, c.tq]).collect();
    let mut lse = place(c.acc, &lsh, &[], &(0..rank - 1).collect::<Vec<_>>(), 2);
    let kv = Kv {
        k: k.view(),
        v: v.view(),
    };
    let prog = c.prog.program(c.acc, rank);
    let shapes = AttentionShapes::of(&q.view(), &kv, &[], None, &o.view_mut(), &lse.view_mut());
    let plan = AttentionPlan::new(&prog, c.scale, &shapes).unwrap();
    let mut scratch = tessera::Scratch::with_size(2 * plan.scratch_bytes()).unwrap();
    for threads in [1, 2, 5] {
        let (mut ov, mut lv) = (o.view_mut(), lse.view_mut());
        plan.run_with_scratch(
            &q.view(),
            &kv,
            &[],
            None,
            &mut ov,
            &mut lv,
            &mut scratch,
            &Exec::default().threads(threads),
        )
        .unwrap();
        drop((ov, lv));
        assert_eq!(o.read_bits(), want.o);
        assert_eq!(lse.read_bits(), want.lse);
        assert_eq!(
            scratch.size(),
            2 * plan.scratch_bytes(),
            "the scratch never grows"
        );
    }
}
