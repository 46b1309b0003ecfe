//! `tessera selftest`: what this CPU runs, a short demonstration, the
//! hand-written engines against written-out models (see `engines_check`), and
//! a differential check of every generated kernel on every tier this CPU runs.
//!
//! The differential check drives each kernel of the catalogue directly through
//! its tier's table, on a few hundred elements of built-in data (the edge
//! values of the dtype's class, then deterministic pseudo-random codes), in
//! every loop variant: contiguous, each input broadcast (stride 0), and two
//! strided layouts (strides 2, -1, 3 and -1, 0, 2). Every tier's output must
//! have the scalar tier's bytes, except that a NaN result may differ in sign and
//! payload (the numerical contract's one exception). On the scalar tier each
//! variant is also checked against the contiguous kernel on the same values, and
//! every layout's gaps must be left untouched.
//!
//! The cast kernels get the same check: every (source, destination) pair, both
//! modes, contiguous and strided, on values that hold the source's edge values,
//! the destination's edge values carried into the source, and the
//! destination's rounding boundaries (halfway between neighbouring codes, and
//! just beyond its largest finite value) carried into the source.

use super::cast::mode_name;
use super::parse_args;
use crate::codes::{self, FloatValue};
use crate::failure::{Failure, Outcome};
use crate::outln;
use std::io::Write;
use tessera::tier::{cast_table, kernel_table};
use tessera::{
    available_tiers, cast_index, kernel_index, result_dtype, variants_for, Args, ArrayView,
    ArrayViewMut, CastMode, Class, DType, Exec, Format, KernelInfo, LoopFn, OperandRule, Tier,
    Variant, KERNELS,
};

/// Elements per kernel run.
pub const N: usize = 768;
/// Elements at the start of each run that hold combinations of edge values.
const EDGE_REGION: usize = 700;
/// Bytes that fill the gaps of strided buffers.
const FILL_IN: u8 = 0xA5;
/// Bytes that fill an output buffer before a run.
const FILL_OUT: u8 = 0x5A;

/// Run `tessera selftest` with its arguments.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    parse_args("selftest", args, &[], &[])?.at_most("selftest", 0)?;
    let tiers = available_tiers();
    let names: Vec<&str> = tiers.iter().map(|t| t.name()).collect();
    outln!(out, "tessera selftest")?;
    outln!(out, "tiers this CPU runs: {}", names.join(" "))?;
    outln!(out, "active tier: {}", tessera::active_tier())?;
    if let Some(note) = tessera::tier::tier_env_note() {
        outln!(out, "note: {note}")?;
    }
    outln!(out)?;
    let mut demo_failures = demo(out)?;
    outln!(out)?;
    outln!(
        out,
        "engines (reduction, contraction) on every tier at 1 and 2 threads against written-out models:"
    )?;
    demo_failures += super::engines_check::run(out)?;
    outln!(out)?;
    let report = differential(&tiers);
    outln!(
        out,
        "differential check: {} kernels per tier, {N} elements per run, variants contig, \
         bcastK, strided (2, -1, 3 and -1, 0, 2)",
        KERNELS.len()
    )?;
    print_tiers(out, &report, ":", 8)?;
    for m in report.first.iter() {
        outln!(out, "  mismatch: {m}")?;
    }
    let casts = cast_differential(&tiers);
    let kernels = casts.tiers.first().map_or(0, |t| t.kernels);
    outln!(
        out,
        "cast check: {kernels} cast kernels per tier ({} dtype pairs × 2 modes × contig, strided), \
         {N} elements per run: edge values of both dtypes and the destination's rounding boundaries",
        DType::ALL.len() * DType::ALL.len()
    )?;
    print_tiers(out, &casts, " casts:", 14)?;
    for m in casts.first.iter() {
        outln!(out, "  mismatch: {m}")?;
    }
    let mismatches: usize = report
        .tiers
        .iter()
        .chain(&casts.tiers)
        .map(|t| t.mismatches)
        .sum();
    if mismatches == 0 && demo_failures == 0 {
        outln!(out, "selftest passed")?;
        return Ok(0);
    }
    Err(Failure::run(format!(
        "selftest failed: {mismatches} kernel mismatch(es), {demo_failures} demo failure(s)"
    )))
}

/// One summary line per tier of a differential report: `{tier}{suffix}`
/// padded to `width`, then kernels, runs and mismatches.
fn print_tiers(out: &mut dyn Write, report: &Report, suffix: &str, width: usize) -> Outcome<()> {
    for t in &report.tiers {
        let against = if t.tier == Tier::ALL[0] {
            "against the contiguous kernel"
        } else {
            "against the scalar tier"
        };
        let nan = if t.nan_only > 0 {
            format!(
                " ({} NaN results differ only in sign or payload)",
                t.nan_only
            )
        } else {
            String::new()
        };
        outln!(
            out,
            "  {:width$} {} kernels, {} runs, {} mismatches {against}{nan}",
            format!("{}{suffix}", t.tier),
            t.kernels,
            t.runs,
            t.mismatches,
        )?;
    }
    Ok(())
}

fn show(dtype: DType, bytes: &[u8]) -> Vec<String> {
    let item = dtype.info().item_bytes.max(1);
    bytes
        .chunks_exact(item)
        .map(|e| codes::display(dtype, e))
        .collect()
}

fn verdict(ok: bool, failures: &mut usize) -> &'static str {
    if ok {
        "ok"
    } else {
        *failures += 1;
        "WRONG"
    }
}

/// A code of `dtype` (one byte) whose value is exactly `x`.
fn byte_code(dtype: DType, x: f64) -> Option<u8> {
    (0..=255u8).find(|&c| codes::float_value(dtype, c as u64) == Some(FloatValue::Number(x)))
}

/// The demonstration on the active tier; returns the number of wrong results.
fn demo(out: &mut dyn Write) -> Outcome<usize> {
    let mut failures = 0;
    outln!(out, "demo on the active tier:")?;

    // f32 add, checked against Rust's own addition.
    let a = [1.0f32, 2.5, -3.0, 0.1];
    let b = [0.5f32, 0.25, 3.0, 0.2];
    let mut y = [0.0f32; 4];
    tessera::elementwise(
        tessera::Kind::Add,
        &[
            ArrayView::from_slice(&a, &[4])?,
            ArrayView::from_slice(&b, &[4])?,
        ],
        &mut ArrayViewMut::from_slice(&mut y, &[4])?,
        &Exec::default(),
    )?;
    let ok = a
        .iter()
        .zip(&b)
        .zip(&y)
        .all(|((a, b), y)| (a + b).to_bits() == y.to_bits());
    outln!(
        out,
        "  add f32:        {a:?} + {b:?} = {y:?}  {}",
        verdict(ok, &mut failures)
    )?;

    // e4m3fn multiply: products exact in e4m3fn, one beyond its range (NaN).
    let pairs = [
        (1.5, 2.0),
        (0.75, 2.0),
        (-0.5, -4.0),
        (448.0, 2.0),
        (0.015625, 0.5),
    ];
    let mut xa = Vec::new();
    let mut xb = Vec::new();
    for (p, q) in pairs {
        match (byte_code(DType::E4m3fn, p), byte_code(DType::E4m3fn, q)) {
            (Some(cp), Some(cq)) => {
                xa.push(cp);
                xb.push(cq);
            }
            _ => failures += 1,
        }
    }
    let mut ym = vec![0u8; xa.len()];
    let n = xa.len();
    tessera::elementwise(
        tessera::Kind::Mul,
        &[
            ArrayView::contiguous(DType::E4m3fn, &[n], &xa)?,
            ArrayView::contiguous(DType::E4m3fn, &[n], &xb)?,
        ],
        &mut ArrayViewMut::contiguous(DType::E4m3fn, &[n], &mut ym)?,
        &Exec::default(),
    )?;
    let ok = n == pairs.len()
        && pairs.iter().zip(&ym).all(|(&(p, q), &c)| {
            let want = p * q;
            match codes::float_value(DType::E4m3fn, c as u64) {
                Some(FloatValue::Number(v)) => v == want && want.abs() <= 448.0,
                Some(FloatValue::Nan) => want.abs() > 448.0,
                None => false,
            }
        });
    outln!(
        out,
        "  mul e4m3fn:     [{}] * [{}] = [{}] (codes {ym:02x?})  {}",
        show(DType::E4m3fn, &xa).join(", "),
        show(DType::E4m3fn, &xb).join(", "),
        show(DType::E4m3fn, &ym).join(", "),
        verdict(ok, &mut failures)
    )?;

    // i4 add on packed bytes: two values per byte, wrapping.
    let va: [i8; 6] = [7, -8, 3, -1, 5, 0];
    let vb: [i8; 6] = [1, -1, 5, 2, -6, -8];
    let pa = codes::pack(DType::I4, &va.map(|v| v as u8 & 0xf));
    let pb = codes::pack(DType::I4, &vb.map(|v| v as u8 & 0xf));
    let mut py = vec![0u8; 3];
    tessera::elementwise(
        tessera::Kind::Add,
        &[
            ArrayView::contiguous(DType::I4, &[6], &pa)?,
            ArrayView::contiguous(DType::I4, &[6], &pb)?,
        ],
        &mut ArrayViewMut::contiguous(DType::I4, &[6], &mut py)?,
        &Exec::default(),
    )?;
    let got = codes::unpack(DType::I4, &py);
    let ok = va.iter().zip(&vb).zip(&got).all(|((a, b), &c)| {
        let sum = (a + b) as u8 & 0xf;
        sum == c
    });
    outln!(
        out,
        "  add i4 packed:  {va:?} + {vb:?} = [{}] (bytes {pa:02x?} + {pb:02x?} = {py:02x?})  {}",
        show(DType::I4, &got).join(", "),
        verdict(ok, &mut failures)
    )?;

    failures += demo_cast(out)?;
    failures += demo_mxfp8(out)?;
    Ok(failures)
}

/// The e4m3fn code nearest to `x` (ties to the even code), or None where the
/// default cast gives NaN (x is NaN, or rounds beyond 448): a search over the
/// 256 codes, with code 0x7f standing for the next step (480) beyond 448.
fn nearest_e4m3fn(x: f64) -> Option<u8> {
    if !x.is_finite() {
        return None;
    }
    let value = |c: u8| match codes::float_value(DType::E4m3fn, c as u64) {
        Some(FloatValue::Number(v)) => v,
        _ => 480.0,
    };
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    let a = x.abs();
    let mut best = 0u8;
    for c in 1..=0x7fu8 {
        let (db, dc) = ((value(best) - a).abs(), (value(c) - a).abs());
        if dc < db || (dc == db && c % 2 == 0) {
            best = c;
        }
    }
    (best != 0x7f).then_some(sign | best)
}

/// f32 → e4m3fn in both modes, checked against a search over the codes.
fn demo_cast(out: &mut dyn Write) -> Outcome<usize> {
    let mut failures = 0;
    let x = [
        1.0f32,
        0.3,
        -2.75,
        0.0013,
        448.0,
        465.0,
        -1000.0,
        f32::INFINITY,
    ];
    for mode in [CastMode::Default, CastMode::Saturating] {
        let mut y = [0u8; 8];
        tessera::cast(
            mode,
            &ArrayView::from_slice(&x, &[8])?,
            &mut ArrayViewMut::contiguous(DType::E4m3fn, &[8], &mut y)?,
            &Exec::default(),
        )?;
        let ok = x.iter().zip(&y).all(|(&v, &c)| {
            let v = v as f64;
            let want = match (nearest_e4m3fn(v), mode) {
                (Some(c), _) => Some(c),
                // Beyond the range: NaN by default, ±448 when saturating.
                (None, CastMode::Saturating) => Some(if v < 0.0 { 0xfe } else { 0x7e }),
                (None, _) => None,
            };
            match want {
                Some(w) => c == w,
                None => c & 0x7f == 0x7f,
            }
        });
        outln!(
            out,
            "  cast f32 -> e4m3fn ({}): {x:?} -> [{}] (codes {y:02x?})  {}",
            mode_name(mode),
            show(DType::E4m3fn, &y).join(", "),
            verdict(ok, &mut failures)
        )?;
    }
    Ok(failures)
}

/// One MXFP8 (e4m3) block encoded and decoded, the scale checked against the
/// OCP rule worked out here: shared exponent floor(log2 amax) − 8.
fn demo_mxfp8(out: &mut dyn Write) -> Outcome<usize> {
    let mut failures = 0;
    let x: Vec<f32> = (0..32).map(|i| (i as f32 - 15.5) * 0.37).collect();
    let amax = x.iter().fold(0f32, |m, &v| m.max(v.abs()));
    let exponent = (amax as f64).log2().floor() as i32 - 8;
    let exec = Exec::default();
    let mut codes = [0u8; 32];
    let mut scales = [0u8; 1];
    tessera::formats::encode(
        Format::Mxfp8E4m3,
        None,
        &ArrayView::from_slice(&x, &[32])?,
        &mut codes,
        &mut scales,
        &exec,
    )?;
    let mut y = [0f32; 32];
    tessera::formats::decode(
        Format::Mxfp8E4m3,
        &codes,
        &scales,
        None,
        &mut ArrayViewMut::from_slice(&mut y, &[32])?,
        &exec,
    )?;
    let scale = 2f64.powi(exponent);
    let codes_ok = x
        .iter()
        .zip(&codes)
        .all(|(&v, &c)| nearest_e4m3fn(v as f64 / scale) == Some(c));
    let decoded_ok = codes.iter().zip(&y).all(|(&c, &d)| {
        matches!(codes::float_value(DType::E4m3fn, c as u64),
            Some(FloatValue::Number(v)) if (v * scale) as f32 == d)
    });
    let max_err = x
        .iter()
        .zip(&y)
        .fold(0f64, |m, (&a, &b)| m.max((a as f64 - b as f64).abs()));
    let ok = scales[0] as i32 == 127 + exponent && codes_ok && decoded_ok;
    outln!(
        out,
        "  mxfp8_e4m3:     32 values in ±{amax} -> scale 2^{exponent} (code {}), \
         decoded back within {max_err:.4}  {}",
        scales[0],
        verdict(ok, &mut failures)
    )?;
    Ok(failures)
}

/// What the differential check found on one tier.
#[derive(Clone, Debug)]
pub struct TierReport {
    /// The tier.
    pub tier: Tier,
    /// Kernels run.
    pub kernels: usize,
    /// Kernel runs (layouts × kernels).
    pub runs: usize,
    /// Elements (or gap bytes) that differ.
    pub mismatches: usize,
    /// NaN results that differ only in sign or payload.
    pub nan_only: usize,
}

/// What the differential check found.
#[derive(Clone, Debug)]
pub struct Report {
    /// One report per tier run.
    pub tiers: Vec<TierReport>,
    /// The first few mismatches, described.
    pub first: Vec<String>,
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Edge codes of an integer of `bits` bits.
fn int_edges(bits: u32, signed: bool) -> Vec<u64> {
    let m = mask(bits);
    let top = 1u64 << (bits - 1);
    let mut v = vec![
        0,
        1,
        2,
        3,
        (bits - 1) as u64,
        bits as u64,
        m,
        m - 1,
        top,
        top - 1,
    ];
    if signed {
        v.extend([top + 1, m - 2]);
    } else {
        v.push(top + 1);
    }
    v.into_iter().map(|c| c & m).collect()
}

/// Edge codes of a float dtype: zeros, the smallest subnormals, the smallest
/// normal, one, the largest finite values, infinities and NaNs, of both signs.
fn float_edges(dtype: DType) -> Vec<u64> {
    let Some(f) = dtype.info().float else {
        return vec![0];
    };
    let (eb, mb) = (f.exponent_bits as u64, f.mantissa_bits as u64);
    let vb = eb + mb;
    let all = mask(vb as u32);
    let emax = mask(eb as u32);
    let finite = |c: u64| matches!(codes::float_value(dtype, c), Some(FloatValue::Number(x)) if x.is_finite());
    let max_finite = [all, all - 1, (emax << mb).saturating_sub(1)]
        .into_iter()
        .find(|&c| finite(c))
        .unwrap_or(0);
    let one = (f.bias as u64).min(emax) << mb;
    let mut mags = vec![
        0,
        1,
        2,
        mask(mb as u32),
        1 << mb,
        one,
        one + 1,
        one.saturating_sub(1 << mb),
        max_finite,
        max_finite.saturating_sub(1),
        emax << mb,
        (emax << mb) | 1,
        all,
    ];
    mags.iter_mut().for_each(|c| *c &= all);
    let mut codes = mags.clone();
    if f.signed {
        codes.extend(mags.iter().map(|c| c | (1 << vb)));
    }
    let mut seen = std::collections::BTreeSet::new();
    codes.retain(|c| seen.insert(*c));
    codes
}

/// The bytes of every edge element of `dtype`.
fn edges(dtype: DType) -> Vec<Vec<u8>> {
    let info = dtype.info();
    let item = info.item_bytes;
    let to_bytes = |code: u64| {
        let mut b = vec![0u8; item];
        codes::write_code(code, &mut b);
        b
    };
    match info.class {
        Class::Bool => vec![vec![0], vec![1]],
        Class::Int => int_edges(info.bits, true)
            .into_iter()
            .map(to_bytes)
            .collect(),
        Class::Uint => int_edges(info.bits, false)
            .into_iter()
            .map(to_bytes)
            .collect(),
        Class::Float => float_edges(dtype).into_iter().map(to_bytes).collect(),
        Class::Complex => {
            let (comp, half) = if item == 8 {
                (DType::F32, 4)
            } else {
                (DType::F64, 8)
            };
            let e = float_edges(comp);
            let mut out = Vec::new();
            for (i, &re) in e.iter().enumerate() {
                for im in [e[(i * 7 + 1) % e.len()], 0, re] {
                    let mut b = vec![0u8; item];
                    codes::write_code(re, &mut b[..half]);
                    codes::write_code(im, &mut b[half..]);
                    out.push(b);
                }
            }
            out
        }
    }
}

/// A random element of `dtype` (a valid code: within the dtype's width).
fn random_element(dtype: DType, rng: &mut Rng, out: &mut [u8]) {
    let info = dtype.info();
    match info.class {
        Class::Bool => out[0] = (rng.next() & 1) as u8,
        Class::Complex => {
            for chunk in out.chunks_mut(8) {
                codes::write_code(rng.next(), chunk);
            }
        }
        _ => codes::write_code(rng.next() & mask(codes::code_bits(dtype)), out),
    }
}

/// `N` values of input `k` (of `dtype`): edge combinations, then random codes.
fn values(dtype: DType, k: usize, rng: &mut Rng) -> Vec<u8> {
    let item = dtype.info().item_bytes;
    let e = edges(dtype);
    let ne = e.len();
    let mut out = vec![0u8; N * item];
    for (i, slot) in out.chunks_exact_mut(item).enumerate() {
        if i < EDGE_REGION.min(ne * ne) {
            let idx = match k {
                0 => i % ne,
                1 => (i / ne) % ne,
                _ => (i + i / ne + 1) % ne,
            };
            slot.copy_from_slice(&e[idx]);
        } else {
            random_element(dtype, rng, slot);
        }
    }
    out
}

/// One operand laid out in a buffer: element `i` at element position
/// `start + i * stride`.
struct Laid {
    buf: Vec<u8>,
    item: usize,
    start: usize,
    stride: isize,
}

impl Laid {
    /// Lay out `n` elements of `item` bytes (`values`) at `stride`; gaps hold `fill`.
    /// With stride 0 the buffer holds element 0 alone.
    fn new(values: &[u8], item: usize, n: usize, stride: isize, fill: u8) -> Laid {
        let step = stride.unsigned_abs();
        let len = if step == 0 { 1 } else { (n - 1) * step + 1 };
        let mut buf = vec![fill; len * item];
        let start = if stride < 0 { (n - 1) * step } else { 0 };
        let laid = Laid {
            buf: Vec::new(),
            item,
            start,
            stride,
        };
        for i in 0..if step == 0 { 1 } else { n } {
            let p = laid.pos(i);
            buf[p * item..(p + 1) * item].copy_from_slice(&values[i * item..(i + 1) * item]);
        }
        Laid { buf, ..laid }
    }

    /// The element position of element `i`.
    fn pos(&self, i: usize) -> usize {
        (self.start as isize + i as isize * self.stride) as usize
    }

    /// Element `i`'s bytes.
    fn get(&self, i: usize) -> &[u8] {
        let p = self.pos(i);
        &self.buf[p * self.item..(p + 1) * self.item]
    }

    /// Whether every byte outside the first `n` elements still holds `fill`.
    fn gaps_intact(&self, n: usize, fill: u8) -> bool {
        let mut inside = vec![false; self.buf.len() / self.item.max(1)];
        for i in 0..n {
            inside[self.pos(i)] = true;
        }
        inside.iter().enumerate().all(|(p, &used)| {
            used || self.buf[p * self.item..(p + 1) * self.item]
                .iter()
                .all(|&b| b == fill)
        })
    }
}

/// Run kernel `f` over `n` elements of the laid-out inputs into `out`.
fn call(f: LoopFn, n: usize, inputs: &[Laid], out: &mut Laid) {
    let mut args = Args {
        n,
        src: [core::ptr::null(); 3],
        src_stride: [0; 3],
        dst: out.buf.as_mut_ptr().wrapping_add(out.start * out.item),
        dst_stride: out.stride,
    };
    for (k, a) in inputs.iter().enumerate().take(3) {
        args.src[k] = a.buf.as_ptr().wrapping_add(a.start * a.item);
        args.src_stride[k] = a.stride;
    }
    // SAFETY: every buffer was laid out by `Laid::new` for `n` elements of its
    // operand's storage size at its stride from element 0 (a stride-0 buffer
    // holds its one element), and the pointers keep the provenance of the whole
    // buffer; the caller pairs each kernel with layouts of its variant (unit
    // strides for `contig`, stride 0 for the broadcast input of `bcastK`) and
    // with inputs and an output of the kernel's dtypes; the output buffer is
    // distinct from every input buffer.
    unsafe { f(&args) };
}

/// The layouts a variant is checked in: input strides and the output stride.
fn layouts(variant: Variant) -> Vec<([isize; 3], isize)> {
    match variant {
        Variant::Contig => vec![([1, 1, 1], 1)],
        Variant::Bcast0 => vec![([0, 1, 1], 1)],
        Variant::Bcast1 => vec![([1, 0, 1], 1)],
        Variant::Bcast2 => vec![([1, 1, 0], 1)],
        Variant::Strided => vec![([2, -1, 3], -1), ([-1, 0, 2], 2)],
    }
}

/// Positions (into the generated values) used as broadcast scalars.
const SCALAR_PICKS: [usize; 3] = [0, 7, EDGE_REGION + 5];

/// The differential check of every kernel on `tiers` (which must start with
/// the scalar tier for the cross-variant check to run).
pub fn differential(tiers: &[Tier]) -> Report {
    let mut reports: Vec<TierReport> = tiers
        .iter()
        .map(|&tier| TierReport {
            tier,
            kernels: 0,
            runs: 0,
            mismatches: 0,
            nan_only: 0,
        })
        .collect();
    let mut first = Vec::new();
    let tables: Vec<Option<&'static [LoopFn]>> = tiers.iter().map(|&t| kernel_table(t)).collect();
    let scalar = Tier::ALL[0];
    let Some(scalar_table) = kernel_table(scalar) else {
        return Report {
            tiers: reports,
            first: vec!["the scalar tier has no table".to_string()],
        };
    };
    for (index, ki) in KERNELS.iter().enumerate() {
        let mut note = |r: &mut TierReport, what: String| {
            r.mismatches += 1;
            if first.len() < 8 {
                first.push(format!(
                    "{} {} {} {}: {what}",
                    r.tier,
                    ki.kind,
                    ki.dtype,
                    ki.variant.name()
                ));
            }
        };
        let Some(setup) = Setup::new(ki) else {
            for r in reports.iter_mut() {
                note(r, "the catalogue gives no result dtype".to_string());
            }
            continue;
        };
        for r in reports.iter_mut() {
            r.kernels += 1;
        }
        let contig = kernel_index(ki.kind, ki.dtype, Variant::Contig).unwrap_or(index);
        let mut rng = Rng(0x7E55_E7A0 ^ (index as u64).wrapping_mul(0x1000_0000_01B3));
        let generated: Vec<Vec<u8>> = setup
            .inputs
            .iter()
            .enumerate()
            .map(|(k, &d)| values(d, k, &mut rng))
            .collect();
        for (strides, out_stride) in layouts(ki.variant) {
            let picks: &[usize] = if strides[..setup.inputs.len()].contains(&0) {
                &SCALAR_PICKS
            } else {
                &SCALAR_PICKS[..1]
            };
            for &pick in picks {
                // The logical values of this run: a stride-0 input holds one value.
                let vals: Vec<Vec<u8>> = generated
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        let item = setup.items[k];
                        if strides[k] == 0 {
                            v[pick * item..(pick + 1) * item].repeat(N)
                        } else {
                            v.clone()
                        }
                    })
                    .collect();
                let inputs: Vec<Laid> = vals
                    .iter()
                    .enumerate()
                    .map(|(k, v)| Laid::new(v, setup.items[k], N, strides[k], FILL_IN))
                    .collect();
                let blank = vec![FILL_OUT; N * setup.out_item];
                let mut base = Laid::new(&blank, setup.out_item, N, out_stride, FILL_OUT);
                call(scalar_table[index], N, &inputs, &mut base);
                // The scalar reference: the contiguous kernel on the same values.
                let flat: Vec<Laid> = vals
                    .iter()
                    .enumerate()
                    .map(|(k, v)| Laid::new(v, setup.items[k], N, 1, FILL_IN))
                    .collect();
                let mut reference = Laid::new(&blank, setup.out_item, N, 1, FILL_OUT);
                call(scalar_table[contig], N, &flat, &mut reference);
                for (t, r) in reports.iter_mut().enumerate() {
                    r.runs += 1;
                    if r.tier == scalar {
                        if !base.gaps_intact(N, FILL_OUT) {
                            note(r, "wrote outside its elements".to_string());
                        }
                        compare(&setup, &vals, &base, &reference, r, &mut note);
                        continue;
                    }
                    let Some(table) = tables[t] else {
                        note(r, "the tier has no table".to_string());
                        continue;
                    };
                    let mut got = Laid::new(&blank, setup.out_item, N, out_stride, FILL_OUT);
                    call(table[index], N, &inputs, &mut got);
                    if !got.gaps_intact(N, FILL_OUT) {
                        note(r, "wrote outside its elements".to_string());
                    }
                    compare(&setup, &vals, &got, &base, r, &mut note);
                }
            }
        }
    }
    Report {
        tiers: reports,
        first,
    }
}

/// Compare two runs element by element.
fn compare(
    setup: &Setup,
    vals: &[Vec<u8>],
    got: &Laid,
    want: &Laid,
    r: &mut TierReport,
    note: &mut dyn FnMut(&mut TierReport, String),
) {
    for i in 0..N {
        let (g, w) = (got.get(i), want.get(i));
        if g == w {
            continue;
        }
        if codes::same_result(setup.out, g, w) {
            r.nan_only += 1;
            continue;
        }
        let ins: Vec<String> = vals
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let item = setup.items[k];
                describe(setup.inputs[k], &v[i * item..(i + 1) * item])
            })
            .collect();
        note(
            r,
            format!(
                "element {i}: inputs {} give {}, expected {}",
                ins.join(", "),
                describe(setup.out, g),
                describe(setup.out, w)
            ),
        );
        // One mismatch per run is enough to report.
        return;
    }
}

/// An element's value and code, for messages: `1.5 (0x3e00)`.
fn describe(dtype: DType, bytes: &[u8]) -> String {
    let hex: String = bytes.iter().rev().map(|b| format!("{b:02x}")).collect();
    format!("{} (0x{hex})", codes::display(dtype, bytes))
}

/// The dtypes and storage sizes of one kernel's operands.
struct Setup {
    inputs: Vec<DType>,
    items: Vec<usize>,
    out: DType,
    out_item: usize,
}

impl Setup {
    fn new(ki: &KernelInfo) -> Option<Setup> {
        let info = ki.kind.info();
        let inputs: Vec<DType> = (0..info.arity)
            .map(|k| {
                if k == 0 && info.operands == OperandRule::CondFirst {
                    DType::Bool
                } else {
                    ki.dtype
                }
            })
            .collect();
        let out = result_dtype(ki.kind, ki.dtype).ok()?;
        Some(Setup {
            items: inputs.iter().map(|d| d.info().item_bytes).collect(),
            inputs,
            out,
            out_item: out.info().item_bytes,
        })
    }
}

/// `f64` values around the destination's edges, where rounding decides: each
/// edge value, halfway to its neighbours, a little past halfway, and one step
/// beyond (past the largest finite value, that is overflow).
fn boundary_values(dst: DType, edge_values: &[f64]) -> Vec<f64> {
    let info = dst.info();
    let float = info
        .float
        .filter(|_| matches!(info.class, Class::Float | Class::Complex));
    let mut out = Vec::new();
    for &x in edge_values.iter().filter(|x| x.is_finite()) {
        let step = match float {
            Some(f) => {
                let tiny = 2f64.powi(1 - f.bias - f.mantissa_bits as i32);
                if x == 0.0 {
                    tiny
                } else {
                    2f64.powi(x.abs().log2().floor() as i32 - f.mantissa_bits as i32)
                        .max(tiny)
                }
            }
            None => 1.0,
        };
        out.extend([
            x,
            x + step / 2.0,
            x - step / 2.0,
            x + step * 0.625,
            x + step,
            -(x + step / 2.0),
        ]);
    }
    out
}

/// Run the contiguous scalar cast from `from` to `to` (default mode) over
/// `values` (`from` elements, one code per byte for sub-byte dtypes).
fn scalar_cast(from: DType, to: DType, values: &[u8]) -> Option<Vec<u8>> {
    let table = cast_table(Tier::ALL[0])?;
    let f = *table.get(cast_index(from, to, false, Variant::Contig)?)?;
    let (fi, ti) = (from.info().item_bytes, to.info().item_bytes);
    let n = values.len() / fi.max(1);
    if n == 0 {
        return Some(Vec::new());
    }
    let input = Laid::new(values, fi, n, 1, 0);
    let mut output = Laid::new(&vec![0u8; n * ti], ti, n, 1, 0);
    call(f, n, &[input], &mut output);
    Some(output.buf)
}

/// `N` source values of a cast from `src` to `dst`: the source's edges, the
/// destination's edges and rounding boundaries carried into the source (by the
/// scalar tier's casts), then random codes.
fn cast_values(src: DType, dst: DType, rng: &mut Rng) -> Vec<u8> {
    let item = src.info().item_bytes;
    let mut picked: Vec<Vec<u8>> = edges(src);
    let dst_edges: Vec<u8> = edges(dst).concat();
    if let Some(carried) = scalar_cast(dst, src, &dst_edges) {
        picked.extend(carried.chunks_exact(item).map(<[u8]>::to_vec));
    }
    if let Some(as_f64) = scalar_cast(dst, DType::F64, &dst_edges) {
        let xs: Vec<f64> = as_f64
            .chunks_exact(8)
            .map(|c| f64::from_bits(codes::read_code(c)))
            .collect();
        let bytes: Vec<u8> = boundary_values(dst, &xs)
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        if let Some(carried) = scalar_cast(DType::F64, src, &bytes) {
            picked.extend(carried.chunks_exact(item).map(<[u8]>::to_vec));
        }
    }
    let mut out = vec![0u8; N * item];
    for (i, slot) in out.chunks_exact_mut(item).enumerate() {
        match picked.get(i) {
            Some(v) if i < EDGE_REGION => slot.copy_from_slice(v),
            _ => random_element(src, rng, slot),
        }
    }
    out
}

/// The differential check of every cast kernel on `tiers` (which must start
/// with the scalar tier for the cross-variant check to run).
pub fn cast_differential(tiers: &[Tier]) -> Report {
    let mut reports: Vec<TierReport> = tiers
        .iter()
        .map(|&tier| TierReport {
            tier,
            kernels: 0,
            runs: 0,
            mismatches: 0,
            nan_only: 0,
        })
        .collect();
    let mut first = Vec::new();
    let tables: Vec<Option<&'static [LoopFn]>> = tiers.iter().map(|&t| cast_table(t)).collect();
    let scalar = Tier::ALL[0];
    let Some(scalar_table) = cast_table(scalar) else {
        return Report {
            tiers: reports,
            first: vec!["the scalar tier has no cast table".to_string()],
        };
    };
    for (p, &src) in DType::ALL.iter().enumerate() {
        for (q, &dst) in DType::ALL.iter().enumerate() {
            let seed = ((p * DType::ALL.len() + q) as u64).wrapping_mul(0x1000_0000_01B3);
            let mut rng = Rng(0xCA57_0000 ^ seed);
            let vals = cast_values(src, dst, &mut rng);
            let setup = Setup {
                inputs: vec![src],
                items: vec![src.info().item_bytes],
                out: dst,
                out_item: dst.info().item_bytes,
            };
            for saturating in [false, true] {
                let mode = if saturating {
                    CastMode::Saturating
                } else {
                    CastMode::Default
                };
                for &variant in variants_for(1) {
                    let mut note = |r: &mut TierReport, what: String| {
                        r.mismatches += 1;
                        if first.len() < 8 {
                            first.push(format!(
                                "{} cast {src} -> {dst} {} {}: {what}",
                                r.tier,
                                mode_name(mode),
                                variant.name()
                            ));
                        }
                    };
                    let found = |t: &[LoopFn], v: Variant| {
                        cast_index(src, dst, saturating, v).and_then(|i| t.get(i).copied())
                    };
                    let (Some(f), Some(contig)) = (
                        found(scalar_table, variant),
                        found(scalar_table, Variant::Contig),
                    ) else {
                        for r in reports.iter_mut() {
                            note(r, "no kernel in the scalar cast table".to_string());
                        }
                        continue;
                    };
                    for r in reports.iter_mut() {
                        r.kernels += 1;
                    }
                    let blank = vec![FILL_OUT; N * setup.out_item];
                    for (strides, out_stride) in layouts(variant) {
                        let input = [Laid::new(&vals, setup.items[0], N, strides[0], FILL_IN)];
                        let mut base = Laid::new(&blank, setup.out_item, N, out_stride, FILL_OUT);
                        call(f, N, &input, &mut base);
                        let flat = [Laid::new(&vals, setup.items[0], N, 1, FILL_IN)];
                        let mut reference = Laid::new(&blank, setup.out_item, N, 1, FILL_OUT);
                        call(contig, N, &flat, &mut reference);
                        let all_vals = std::slice::from_ref(&vals);
                        for (t, r) in reports.iter_mut().enumerate() {
                            r.runs += 1;
                            if r.tier == scalar {
                                if !base.gaps_intact(N, FILL_OUT) {
                                    note(r, "wrote outside its elements".to_string());
                                }
                                compare(&setup, all_vals, &base, &reference, r, &mut note);
                                continue;
                            }
                            let Some(g) = tables[t].and_then(|tb| found(tb, variant)) else {
                                note(r, "no kernel in the tier's cast table".to_string());
                                continue;
                            };
                            let mut got =
                                Laid::new(&blank, setup.out_item, N, out_stride, FILL_OUT);
                            call(g, N, &input, &mut got);
                            if !got.gaps_intact(N, FILL_OUT) {
                                note(r, "wrote outside its elements".to_string());
                            }
                            compare(&setup, all_vals, &got, &base, r, &mut note);
                        }
                    }
                }
            }
        }
    }
    Report {
        tiers: reports,
        first,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(bytes: &[u8]) -> Vec<f32> {
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_bits(codes::read_code(c) as u32))
            .collect()
    }

    #[test]
    fn cast_values_hold_the_destinations_boundaries() {
        let mut rng = Rng(1);
        let v = f32s(&cast_values(DType::F32, DType::E4m3fn, &mut rng));
        // 464 is halfway between 448 and the first step beyond it; 480 is that step;
        // 1.0625 is halfway between 1 and 1.125; 2^-10 is half the smallest subnormal.
        for want in [464.0f32, -464.0, 480.0, 448.0, 1.0625, 2f32.powi(-10)] {
            assert!(v.contains(&want), "{want} missing");
        }
        let v = f32s(&cast_values(DType::F32, DType::I8, &mut rng));
        for want in [127.5f32, 128.0, -128.5, 0.5] {
            assert!(v.contains(&want), "{want} missing");
        }
    }

    #[test]
    fn nearest_e4m3fn_search() {
        assert_eq!(nearest_e4m3fn(1.0), Some(0x38));
        assert_eq!(nearest_e4m3fn(1.0625), Some(0x38)); // tie to even
        assert_eq!(nearest_e4m3fn(1.1875), Some(0x3a)); // tie to even, upward
        assert_eq!(nearest_e4m3fn(-448.0), Some(0xfe));
        assert_eq!(nearest_e4m3fn(463.0), Some(0x7e));
        assert_eq!(nearest_e4m3fn(464.0), Some(0x7e)); // the tie goes to the even 448
        assert_eq!(nearest_e4m3fn(464.5), None);
        assert_eq!(nearest_e4m3fn(f64::INFINITY), None);
    }
}
