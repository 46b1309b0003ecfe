//! Group `elementwise-f32/{add,mul,fma}`: contiguous f32 kernels, tessera on
//! every available tier beside hand-written Rust loops, ndarray and memcpy, and
//! group `bandwidth`: the machine's memcpy, copy, read and write rates.
//!
//! Every peer is an `#[inline(never)]` function of plain slices, so each one is
//! a symbol of its own in the binary's disassembly.

#![allow(clippy::needless_range_loop)] // the index loops are the point

use crate::harness::{split, Case, CheckFn, Group, RatioSpec};
use ndarray::{ArrayView1, ArrayViewMut1, Zip};
use tessera::{ArrayView, ArrayViewMut, Exec, Kind, Tier};
use tessera_testkit::rng::Rng;

/// The operands every case of these groups reads and writes.
pub struct Bufs {
    /// Input 0.
    pub a: Vec<f32>,
    /// Input 1.
    pub b: Vec<f32>,
    /// Input 2 (fma only).
    pub c: Vec<f32>,
    /// The output every peer writes.
    pub y: Vec<f32>,
    /// The read-bandwidth case's result.
    pub sum: u32,
}

/// A NaN whose payload no case produces: the output before a checked run.
const POISON: u32 = 0x7fc0_dead;

impl Bufs {
    /// `n` elements per operand, inputs filled with reproducible values in
    /// ±[0.5, 4), for which a fused and an unfused multiply-add differ often.
    pub fn new(n: usize) -> Bufs {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut fill = || {
            (0..n)
                .map(|_| {
                    let r = rng.next_u32();
                    let sign = r & 0x8000_0000;
                    let exp = 126 + (r >> 23 & 0xff) % 3;
                    f32::from_bits(sign | exp << 23 | (r & 0x007f_ffff))
                })
                .collect::<Vec<f32>>()
        };
        let (a, b, c) = (fill(), fill(), fill());
        Bufs {
            a,
            b,
            c,
            y: vec![f32::from_bits(POISON); n],
            sum: 0,
        }
    }

    fn poison(&mut self) {
        self.y.fill(f32::from_bits(POISON));
        self.sum = 0;
    }
}

/// Err naming the first differing element unless `got` equals `want` bit for bit.
pub fn same_bits(got: &[f32], want: &[f32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let differ = |(g, w): (&f32, &f32)| g.to_bits() != w.to_bits();
    match got.iter().zip(want).position(differ) {
        None => Ok(()),
        Some(i) => {
            let count = got.iter().zip(want).filter(|&p| differ(p)).count();
            Err(format!(
                "output differs from the plain loop's at element {i}: {:#010x} ({}) instead of {:#010x} ({}); \
                 {count} of {} elements differ",
                got[i].to_bits(),
                got[i],
                want[i].to_bits(),
                want[i],
                got.len()
            ))
        }
    }
}

/// One of the measured operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// y = a + b
    Add,
    /// y = a × b
    Mul,
    /// y = a × b + c, one rounding
    Fma,
}

impl Op {
    /// Every operation, in group order.
    pub const ALL: [Op; 3] = [Op::Add, Op::Mul, Op::Fma];

    /// The operation's name (the group's last component).
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Mul => "mul",
            Op::Fma => "fma",
        }
    }

    /// Its name in the group list.
    pub fn group_name(self) -> String {
        format!("elementwise-f32/{}", self.name())
    }

    fn kind(self) -> Kind {
        match self {
            Op::Add => Kind::Add,
            Op::Mul => Kind::Mul,
            Op::Fma => Kind::Fma,
        }
    }

    fn inputs(self) -> usize {
        match self {
            Op::Add | Op::Mul => 2,
            Op::Fma => 3,
        }
    }
}

// ---- the peers ------------------------------------------------------------
//
// The index loops reslice their inputs to the output's length first, as a
// careful hand-written loop does, so the bounds checks leave the loop.

/// `y[i] = a[i] + b[i]`.
#[inline(never)]
pub fn add_loop(a: &[f32], b: &[f32], y: &mut [f32]) {
    let n = y.len();
    let (a, b) = (&a[..n], &b[..n]);
    for i in 0..n {
        y[i] = a[i] + b[i];
    }
}

/// `y[i] = a[i] * b[i]`.
#[inline(never)]
pub fn mul_loop(a: &[f32], b: &[f32], y: &mut [f32]) {
    let n = y.len();
    let (a, b) = (&a[..n], &b[..n]);
    for i in 0..n {
        y[i] = a[i] * b[i];
    }
}

/// `y[i] = a[i].mul_add(b[i], c[i])`: without the `fma` target feature this is
/// a call to libm's `fmaf` per element.
#[inline(never)]
pub fn fma_loop(a: &[f32], b: &[f32], c: &[f32], y: &mut [f32]) {
    let n = y.len();
    let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
    for i in 0..n {
        y[i] = a[i].mul_add(b[i], c[i]);
    }
}

/// [`add_loop`] as an iterator chain.
#[inline(never)]
pub fn add_zip(a: &[f32], b: &[f32], y: &mut [f32]) {
    for ((y, &a), &b) in y.iter_mut().zip(a).zip(b) {
        *y = a + b;
    }
}

/// [`mul_loop`] as an iterator chain.
#[inline(never)]
pub fn mul_zip(a: &[f32], b: &[f32], y: &mut [f32]) {
    for ((y, &a), &b) in y.iter_mut().zip(a).zip(b) {
        *y = a * b;
    }
}

/// [`fma_loop`] as an iterator chain.
#[inline(never)]
pub fn fma_zip(a: &[f32], b: &[f32], c: &[f32], y: &mut [f32]) {
    for (((y, &a), &b), &c) in y.iter_mut().zip(a).zip(b).zip(c) {
        *y = a.mul_add(b, c);
    }
}

/// The index loops compiled for AVX2 and FMA, the features tessera's avx2 tier
/// is compiled with: the like-for-like peer.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    /// [`super::add_loop`] with AVX2 and FMA.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[inline(never)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn add_loop(a: &[f32], b: &[f32], y: &mut [f32]) {
        let n = y.len();
        let (a, b) = (&a[..n], &b[..n]);
        for i in 0..n {
            y[i] = a[i] + b[i];
        }
    }

    /// [`super::mul_loop`] with AVX2 and FMA.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[inline(never)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn mul_loop(a: &[f32], b: &[f32], y: &mut [f32]) {
        let n = y.len();
        let (a, b) = (&a[..n], &b[..n]);
        for i in 0..n {
            y[i] = a[i] * b[i];
        }
    }

    /// [`super::fma_loop`] with AVX2 and FMA: a vector `vfmadd` loop.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[inline(never)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma_loop(a: &[f32], b: &[f32], c: &[f32], y: &mut [f32]) {
        let n = y.len();
        let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
        for i in 0..n {
            y[i] = a[i].mul_add(b[i], c[i]);
        }
    }

    /// Whether this CPU runs the functions above.
    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
}

/// `Zip::from(&mut y).and(&a).and(&b).for_each(|y, &a, &b| *y = a + b)`.
#[inline(never)]
pub fn add_ndarray(a: &[f32], b: &[f32], y: &mut [f32]) {
    let (a, b) = (ArrayView1::from(a), ArrayView1::from(b));
    let mut y = ArrayViewMut1::from(y);
    Zip::from(&mut y)
        .and(&a)
        .and(&b)
        .for_each(|y, &a, &b| *y = a + b);
}

/// The ndarray peer of [`mul_loop`].
#[inline(never)]
pub fn mul_ndarray(a: &[f32], b: &[f32], y: &mut [f32]) {
    let (a, b) = (ArrayView1::from(a), ArrayView1::from(b));
    let mut y = ArrayViewMut1::from(y);
    Zip::from(&mut y)
        .and(&a)
        .and(&b)
        .for_each(|y, &a, &b| *y = a * b);
}

/// The ndarray peer of [`fma_loop`].
#[inline(never)]
pub fn fma_ndarray(a: &[f32], b: &[f32], c: &[f32], y: &mut [f32]) {
    let (a, b, c) = (
        ArrayView1::from(a),
        ArrayView1::from(b),
        ArrayView1::from(c),
    );
    let mut y = ArrayViewMut1::from(y);
    Zip::from(&mut y)
        .and(&a)
        .and(&b)
        .and(&c)
        .for_each(|y, &a, &b, &c| *y = a.mul_add(b, c));
}

/// `y.copy_from_slice(a)`.
#[inline(never)]
pub fn memcpy(a: &[f32], y: &mut [f32]) {
    y.copy_from_slice(&a[..y.len()]);
}

/// A copy through ordinary vector loads and stores (`memcpy` may use
/// streaming stores on large sizes): each element's bits xor an opaque zero.
#[inline(never)]
pub fn copy_loop(a: &[f32], y: &mut [f32]) {
    let zero = std::hint::black_box(0u32);
    for (y, &a) in y.iter_mut().zip(a) {
        *y = f32::from_bits(a.to_bits() ^ zero);
    }
}

/// The wrapping sum of the elements' bits: reads `a` once.
#[inline(never)]
pub fn read_sum(a: &[f32]) -> u32 {
    a.iter().fold(0u32, |s, x| s.wrapping_add(x.to_bits()))
}

/// `y.fill(x)`.
#[inline(never)]
pub fn write_fill(y: &mut [f32], x: f32) {
    y.fill(x);
}

/// tessera on one thread count and tier, the output a 1-d view of `y`.
fn tessera_call(exec: &Exec, kind: Kind, inputs: &[&[f32]], y: &mut [f32]) -> tessera::Result<()> {
    let n = y.len();
    let view = |s| ArrayView::from_slice(s, &[n]);
    let mut out = ArrayViewMut::from_slice(y, &[n])?;
    match *inputs {
        [a, b] => tessera::elementwise(kind, &[view(a)?, view(b)?], &mut out, exec),
        [a, b, c] => tessera::elementwise(kind, &[view(a)?, view(b)?, view(c)?], &mut out, exec),
        _ => unreachable!("the measured kinds take two or three inputs"),
    }
}

// ---- the groups -----------------------------------------------------------

/// The tessera peer's name on `tier`.
pub fn tessera_name(tier: Tier) -> String {
    format!("tessera {}", tier.name())
}

/// Peer names shared by the groups.
pub const PLAIN: &str = "plain loop";
/// See [`PLAIN`].
pub const ZIP: &str = "iterator zip";
/// See [`PLAIN`].
pub const AVX2_LOOP: &str = "loop avx2+fma";
/// See [`PLAIN`].
pub const NDARRAY: &str = "ndarray Zip";
/// See [`PLAIN`].
pub const MEMCPY: &str = "memcpy";

/// The plain loop's output for `op`, computed on one thread: the reference
/// every peer's output must equal bit for bit.
pub fn reference(op: Op, bufs: &Bufs) -> Vec<f32> {
    let mut want = vec![0.0f32; bufs.y.len()];
    match op {
        Op::Add => add_loop(&bufs.a, &bufs.b, &mut want),
        Op::Mul => mul_loop(&bufs.a, &bufs.b, &mut want),
        Op::Fma => fma_loop(&bufs.a, &bufs.b, &bufs.c, &mut want),
    }
    want
}

/// A peer of a two-input operation.
type Two = fn(&[f32], &[f32], &mut [f32]);
/// A peer of a three-input operation.
type Three = fn(&[f32], &[f32], &[f32], &mut [f32]);

/// A peer's body: a function of two or of three input slices.
#[derive(Clone, Copy)]
enum Body {
    Two(Two),
    Three(Three),
}

/// A copy of `a` into `y` through `copy`, which must reproduce `a` bit for bit.
fn copy_case<'a>(
    name: &str,
    copy: fn(&[f32], &mut [f32]),
    threads: usize,
    n: usize,
) -> Case<'a, Bufs> {
    Case {
        name: name.into(),
        bytes: 8 * n as u64,
        run: Box::new(move |s: &mut Bufs| {
            let a = &s.a;
            split(threads, &mut s.y, |y, i| copy(&a[i..], y));
            Ok(())
        }),
        check: Box::new(|s: &Bufs| same_bits(&s.y, &s.a)),
    }
}

fn check_y<'a>(want: &'a [f32]) -> CheckFn<'a, Bufs> {
    Box::new(move |s: &Bufs| same_bits(&s.y, want))
}

/// Group `elementwise-f32/<op>`: every peer computes `op` over `bufs` into
/// `bufs.y`, split over `threads` threads, and must reproduce `want` (see
/// [`reference`]).
pub fn elementwise_group<'a>(
    op: Op,
    tiers: &[Tier],
    threads: usize,
    size_note: &str,
    want: &'a [f32],
) -> Group<'a, Bufs> {
    let n = want.len() as u64;
    let bytes = 4 * n * (op.inputs() as u64 + 1);
    let mut cases: Vec<Case<'a, Bufs>> = Vec::new();
    let mut case = |name: String, bytes: u64, run: crate::harness::RunFn<'a, Bufs>, check| {
        cases.push(Case {
            name,
            bytes,
            run,
            check,
        })
    };
    for &tier in tiers {
        let exec = Exec::on(tier).threads(threads);
        let kind = op.kind();
        let run = Box::new(move |s: &mut Bufs| {
            let ins: [&[f32]; 3] = [&s.a, &s.b, &s.c];
            tessera_call(&exec, kind, &ins[..op.inputs()], &mut s.y).map_err(|e| e.to_string())
        });
        case(tessera_name(tier), bytes, run, check_y(want));
    }
    let peer = |body: Body| -> crate::harness::RunFn<'a, Bufs> {
        Box::new(move |s: &mut Bufs| {
            let (a, b, c) = (&s.a, &s.b, &s.c);
            split(threads, &mut s.y, |y, i| {
                let r = i..i + y.len();
                match body {
                    Body::Two(f) => f(&a[r.clone()], &b[r], y),
                    Body::Three(f) => f(&a[r.clone()], &b[r.clone()], &c[r], y),
                }
            });
            Ok(())
        })
    };
    let (plain, zip, nd) = match op {
        Op::Add => (
            Body::Two(add_loop),
            Body::Two(add_zip),
            Body::Two(add_ndarray),
        ),
        Op::Mul => (
            Body::Two(mul_loop),
            Body::Two(mul_zip),
            Body::Two(mul_ndarray),
        ),
        Op::Fma => (
            Body::Three(fma_loop),
            Body::Three(fma_zip),
            Body::Three(fma_ndarray),
        ),
    };
    let (plain, zip, nd) = (peer(plain), peer(zip), peer(nd));
    case(PLAIN.into(), bytes, plain, check_y(want));
    case(ZIP.into(), bytes, zip, check_y(want));
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // Each wrapper is registered only when the CPU runs AVX2 and FMA, the
        // features these functions are compiled with.
        let run = peer(match op {
            Op::Add => Body::Two(|a, b, y| {
                // SAFETY: the CPU runs AVX2 and FMA (checked above).
                unsafe { avx2::add_loop(a, b, y) }
            }),
            Op::Mul => Body::Two(|a, b, y| {
                // SAFETY: the CPU runs AVX2 and FMA (checked above).
                unsafe { avx2::mul_loop(a, b, y) }
            }),
            Op::Fma => Body::Three(|a, b, c, y| {
                // SAFETY: the CPU runs AVX2 and FMA (checked above).
                unsafe { avx2::fma_loop(a, b, c, y) }
            }),
        });
        case(AVX2_LOOP.into(), bytes, run, check_y(want));
    }
    case(NDARRAY.into(), bytes, nd, check_y(want));
    cases.push(copy_case(MEMCPY, memcpy, threads, want.len()));

    let has_avx2_loop = cases.iter().any(|c| c.name == AVX2_LOOP);
    let mut ratios = Vec::new();
    let best = tiers.last().copied();
    for &tier in tiers {
        let target = (op == Op::Add && Some(tier) == best && tier != Tier::Scalar).then_some(0.90);
        ratios.push(RatioSpec {
            num: tessera_name(tier),
            den: PLAIN.into(),
            target,
        });
    }
    if let Some(tier) = best {
        let mut dens = vec![NDARRAY, MEMCPY];
        if has_avx2_loop {
            dens.insert(0, AVX2_LOOP);
        }
        for den in dens {
            ratios.push(RatioSpec {
                num: tessera_name(tier),
                den: den.into(),
                target: None,
            });
        }
    }
    let mut note = format!(
        "{size_note} per operand, {threads} thread{}, {} bytes moved per call",
        if threads == 1 { "" } else { "s" },
        human_bytes(bytes)
    );
    if threads > 1 {
        note.push_str("; peers other than tessera spawn scoped threads per call");
    }
    if op == Op::Fma {
        note.push_str("; plain loop and zip call libm fmaf per element");
    }
    Group {
        name: op.group_name(),
        note,
        baseline: PLAIN.into(),
        reference: Some(MEMCPY.into()),
        reset: Box::new(Bufs::poison),
        cases,
        ratios,
    }
}

/// Group `bandwidth`: what one core (or `threads`) moves through memory.
pub fn bandwidth_group<'a>(n: usize, threads: usize, size_note: &str, sum: u32) -> Group<'a, Bufs> {
    let n64 = n as u64;
    let fill_value = 1.5f32;
    let cases = vec![
        copy_case(MEMCPY, memcpy, threads, n),
        copy_case("copy loop", copy_loop, threads, n),
        Case {
            name: "read".into(),
            bytes: 4 * n64,
            run: Box::new(move |s: &mut Bufs| {
                let a = &s.a;
                let chunk = a.len().div_ceil(threads.max(1)).max(1);
                let mut parts = vec![0u32; a.len().div_ceil(chunk)];
                split(threads, &mut parts, |p, k| {
                    for (j, x) in p.iter_mut().enumerate() {
                        let lo = (k + j) * chunk;
                        *x = read_sum(&a[lo..(lo + chunk).min(a.len())]);
                    }
                });
                s.sum = parts.iter().fold(0u32, |t, &x| t.wrapping_add(x));
                Ok(())
            }),
            check: Box::new(move |s: &Bufs| {
                if s.sum == sum {
                    Ok(())
                } else {
                    Err(format!("sum {:#x} instead of {sum:#x}", s.sum))
                }
            }),
        },
        Case {
            name: "write".into(),
            bytes: 4 * n64,
            run: Box::new(move |s: &mut Bufs| {
                split(threads, &mut s.y, |y, _| write_fill(y, fill_value));
                Ok(())
            }),
            check: Box::new(move |s: &Bufs| {
                match s
                    .y
                    .iter()
                    .position(|&x| x.to_bits() != fill_value.to_bits())
                {
                    None => Ok(()),
                    Some(i) => Err(format!("element {i} is {} instead of {fill_value}", s.y[i])),
                }
            }),
        },
    ];
    Group {
        name: "bandwidth".into(),
        note: format!(
            "{size_note} per buffer, {threads} thread{}; memcpy and copy loop count bytes read + written",
            if threads == 1 { "" } else { "s" }
        ),
        baseline: MEMCPY.into(),
        reference: None,
        reset: Box::new(Bufs::poison),
        cases,
        ratios: Vec::new(),
    }
}

/// Bytes as MiB or KiB.
pub fn human_bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", b as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{run_group, Budget, Stat};

    #[test]
    fn every_peer_matches_the_plain_loop() {
        let bufs = &mut Bufs::new(1000 + 7);
        let tiers = tessera::available_tiers();
        for threads in [1, 3] {
            for op in Op::ALL {
                let want = reference(op, bufs);
                let g = elementwise_group(op, &tiers, threads, "test", &want);
                let r = run_group(&g, bufs, &Budget::QUICK, Stat::Best);
                for c in &r.cases {
                    assert_eq!(c.error, None, "{} / {}", r.name, c.name);
                }
                assert!(r.case(PLAIN).is_some() && r.case(MEMCPY).is_some());
            }
            let sum = read_sum(&bufs.a);
            let r = run_group(
                &bandwidth_group(bufs.a.len(), threads, "test", sum),
                bufs,
                &Budget::QUICK,
                Stat::Best,
            );
            assert!(r.all_correct(), "{r:?}");
        }
    }

    #[test]
    fn fused_and_unfused_differ_on_these_inputs() {
        // Otherwise the fma check could not tell a fused peer from an unfused one.
        let b = Bufs::new(1000);
        let fused = reference(Op::Fma, &b);
        let unfused: Vec<f32> = (0..1000).map(|i| b.a[i] * b.b[i] + b.c[i]).collect();
        assert!(same_bits(&unfused, &fused).is_err());
    }

    #[test]
    fn a_wrong_output_is_reported() {
        let want = [1.0f32, 2.0, 3.0];
        assert!(same_bits(&want, &want).is_ok());
        let e = same_bits(&[1.0, -2.0, 3.0], &want).unwrap_err();
        assert!(e.contains("element 1") && e.contains("1 of 3"), "{e}");
        assert!(same_bits(&[0.0, -0.0, 3.0][..1], &[-0.0]).is_err());
    }
}
