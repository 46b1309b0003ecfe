//! `tessera selftest`: what this CPU runs, a short demonstration, the
//! hand-written engines against written-out models (see `engines_check`), a
//! differential check of every generated kernel on every tier this CPU runs,
//! and the accuracy probes (`tessera probe`).
//!
//! The differential check drives each kernel of the catalogue directly through
//! its tier's table, on a few hundred elements of built-in data (the edge
//! values of the dtype's class, then deterministic pseudo-random codes), in
//! every loop variant: contiguous, each input broadcast (stride 0), and two
//! strided layouts (strides 2, -1, 3 and -1, 0, 2). Every tier's output must
//! have the scalar tier's bytes, except that a NaN result may differ in sign and
//! payload (the numerical contract's one exception). On the scalar tier each
//! variant is also checked against the contiguous kernel on the same values, and
//! every layout's gaps must be left untouched. The runs and the comparisons are
//! those of the tests (`tessera_testkit::differential`); the plan (sizes,
//! layouts, values) and the counts are this command's.
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
use tessera::{
    available_tiers, variants_for, ArrayView, ArrayViewMut, CastMode, Class, DType, Exec, Format,
    Tier, Variant, KERNELS,
};
use tessera_testkit::differential::{cast_kernel, check, run, Case, Layout, Subject};
use tessera_testkit::edges::code_edges;
use tessera_testkit::rng::Rng;

/// Elements per kernel run.
pub const N: usize = 768;
/// Elements at the start of each run that hold combinations of edge values.
const EDGE_REGION: usize = 700;

/// Run `tessera selftest` with its arguments.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    parse_args("selftest", args, &[], &[])?.at_most("selftest", 0)?;
    let tiers = available_tiers();
    let names: Vec<&str> = tiers.iter().map(|t| t.name()).collect();
    outln!(out, "tessera selftest")?;
    outln!(out, "tiers this CPU runs: {}", names.join(" "))?;
    outln!(out, "active tier: {}", tessera::active_tier())?;
    outln!(out, "host: {}", tessera::tier::host_description())?;
    let moved: Vec<String> = tessera::tier::Engine::ALL
        .iter()
        .filter(|&&e| tessera::tier::engine_tier(e) != tessera::active_tier())
        .map(|&e| format!("{} on {}", e.name(), tessera::tier::engine_tier(e)))
        .collect();
    if !moved.is_empty() {
        outln!(
            out,
            "engines off the active tier by default here: {}",
            moved.join(", ")
        )?;
    }
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
    outln!(out)?;
    outln!(
        out,
        "probes: every dispatch family on every tier against a reference of higher precision:"
    )?;
    let probes_failed = match super::probe::run(out) {
        Ok(_) => 0,
        Err(f) => {
            outln!(out, "  {f}")?;
            1
        }
    };
    let demo_failures = demo_failures + probes_failed;
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
    let pa = codes::pack(DType::I4, &va.map(|v| v as u8 & 0xf))?;
    let pb = codes::pack(DType::I4, &vb.map(|v| v as u8 & 0xf))?;
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
    let got = codes::unpack(DType::I4, &py)?;
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
    /// Runs with a different result, or that wrote outside their elements.
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

impl Report {
    /// An empty report of `tiers`.
    fn new(tiers: &[Tier]) -> Report {
        Report {
            tiers: tiers
                .iter()
                .map(|&tier| TierReport {
                    tier,
                    kernels: 0,
                    runs: 0,
                    mismatches: 0,
                    nan_only: 0,
                })
                .collect(),
            first: Vec::new(),
        }
    }

    /// Count a mismatch of tier `t` (an index into `tiers`), and describe the
    /// first few: `label` names the kernel.
    fn note(&mut self, t: usize, label: &dyn Fn(Tier) -> String, what: String) {
        let r = &mut self.tiers[t];
        r.mismatches += 1;
        if self.first.len() < 8 {
            self.first.push(format!("{}: {what}", label(r.tier)));
        }
    }

    /// A mismatch on every tier (a kernel that cannot run at all).
    fn note_all(&mut self, label: &dyn Fn(Tier) -> String, what: &str) {
        for t in 0..self.tiers.len() {
            self.note(t, label, what.to_string());
        }
    }

    /// One more kernel checked on every tier.
    fn count_kernel(&mut self) {
        self.tiers.iter_mut().for_each(|r| r.kernels += 1);
    }

    /// Run `subject` on `N` elements of `vals` (its logical inputs) laid out
    /// by `layout`, and count the runs and what they found.
    fn check(
        &mut self,
        subject: &Subject,
        vals: &[&[u8]],
        layout: Layout,
        label: &dyn Fn(Tier) -> String,
    ) {
        let case = Case {
            n: N,
            inputs: vals,
            layout,
            in_place: false,
        };
        let outcome = check(subject, &case);
        for t in 0..self.tiers.len() {
            self.tiers[t].runs += 1;
            let tier = self.tiers[t].tier;
            let Some(c) = std::iter::once(&outcome.scalar)
                .chain(&outcome.tiers)
                .find(|c| c.tier == tier)
            else {
                continue;
            };
            // The scalar tier is held to the contiguous kernel, the others to it.
            let want = if tier == Tier::Scalar {
                &outcome.reference
            } else {
                &outcome.scalar.output
            };
            match (&c.output, want, c.diff) {
                (Err(e), _, _) => self.note(t, label, e.clone()),
                (Ok(_), Err(e), _) => self.note(t, label, format!("nothing to compare with: {e}")),
                (Ok(got), Ok(want), Some(diff)) => {
                    self.tiers[t].nan_only += diff.nan_only;
                    if let Some(i) = diff.first {
                        let what = mismatch(subject, vals, i, got, want);
                        self.note(t, label, what);
                    }
                }
                (Ok(_), Ok(_), None) => {}
            }
        }
    }
}

/// Element `i` of a run that gave `got` where `want` was expected, described.
fn mismatch(subject: &Subject, vals: &[&[u8]], i: usize, got: &[u8], want: &[u8]) -> String {
    let element = |d: DType, bytes: &[u8]| {
        let item = d.info().item_bytes;
        describe(d, &bytes[i * item..(i + 1) * item])
    };
    let ins: Vec<String> = subject
        .inputs
        .iter()
        .zip(vals)
        .map(|(&d, v)| element(d, v))
        .collect();
    format!(
        "element {i}: inputs {} give {}, expected {}",
        ins.join(", "),
        element(subject.out, got),
        element(subject.out, want)
    )
}

/// A random element of `dtype` (a valid code: within the dtype's width).
fn random_element(dtype: DType, rng: &mut Rng, out: &mut [u8]) {
    let info = dtype.info();
    match info.class {
        Class::Bool => out[0] = (rng.next_u64() & 1) as u8,
        Class::Complex => {
            for chunk in out.chunks_mut(8) {
                codes::write_code(rng.next_u64(), chunk);
            }
        }
        _ => {
            let bits = codes::code_bits(dtype).clamp(1, 64);
            codes::write_code(rng.next_u64() & (u64::MAX >> (64 - bits)), out)
        }
    }
}

/// `N` values of input `k` (of `dtype`): combinations of the dtype's edge
/// values (`tessera_testkit::edges::code_edges`), then random codes.
fn values(dtype: DType, k: usize, rng: &mut Rng) -> Vec<u8> {
    let item = dtype.info().item_bytes;
    let e = code_edges(dtype);
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

/// The layouts a variant is checked in: input strides and the output stride.
fn layouts(variant: Variant) -> Vec<Layout> {
    let strides: &[([isize; 3], isize)] = match variant {
        Variant::Contig => &[([1, 1, 1], 1)],
        Variant::Bcast0 => &[([0, 1, 1], 1)],
        Variant::Bcast1 => &[([1, 0, 1], 1)],
        Variant::Bcast2 => &[([1, 1, 0], 1)],
        Variant::Strided => &[([2, -1, 3], -1), ([-1, 0, 2], 2)],
    };
    strides
        .iter()
        .map(|&(src, dst)| Layout {
            src,
            dst,
            misalign: 0,
        })
        .collect()
}

/// Positions (into the generated values) used as broadcast scalars.
const SCALAR_PICKS: [usize; 3] = [0, 7, EDGE_REGION + 5];

/// The differential check of every kernel on `tiers` (the scalar tier among
/// them is checked against the contiguous kernel, the others against it).
pub fn differential(tiers: &[Tier]) -> Report {
    let mut report = Report::new(tiers);
    for (index, ki) in KERNELS.iter().enumerate() {
        let label = |tier: Tier| format!("{tier} {} {} {}", ki.kind, ki.dtype, ki.variant.name());
        let Some(subject) = Subject::kernel(ki.kind, ki.dtype, ki.variant, tiers) else {
            report.note_all(&label, "the scalar tier has no such kernel");
            continue;
        };
        report.count_kernel();
        let mut rng = Rng::new(0x7E55_E7A0 ^ (index as u64).wrapping_mul(0x1000_0000_01B3));
        let generated: Vec<Vec<u8>> = subject
            .inputs
            .iter()
            .enumerate()
            .map(|(k, &d)| values(d, k, &mut rng))
            .collect();
        let items = subject.in_widths();
        for layout in layouts(ki.variant) {
            let picks: &[usize] = if layout.src[..items.len()].contains(&0) {
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
                        let item = items[k];
                        if layout.src[k] == 0 {
                            v[pick * item..(pick + 1) * item].repeat(N)
                        } else {
                            v.clone()
                        }
                    })
                    .collect();
                let refs: Vec<&[u8]> = vals.iter().map(Vec::as_slice).collect();
                report.check(&subject, &refs, layout, &label);
            }
        }
    }
    report
}

/// An element's value and code, for messages: `1.5 (0x3e00)`.
fn describe(dtype: DType, bytes: &[u8]) -> String {
    let hex: String = bytes.iter().rev().map(|b| format!("{b:02x}")).collect();
    format!("{} (0x{hex})", codes::display(dtype, bytes))
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
    let f = cast_kernel(Tier::Scalar, from, to, false, Variant::Contig)?;
    let (fi, ti) = (from.info().item_bytes, to.info().item_bytes);
    let n = values.len() / fi.max(1);
    run(f, &[fi], ti, &[values], n, &Layout::CONTIG).ok()
}

/// `N` source values of a cast from `src` to `dst`: the source's edges, the
/// destination's edges and rounding boundaries carried into the source (by the
/// scalar tier's casts), then random codes.
fn cast_values(src: DType, dst: DType, rng: &mut Rng) -> Vec<u8> {
    let item = src.info().item_bytes;
    let mut picked: Vec<Vec<u8>> = code_edges(src);
    let dst_edges: Vec<u8> = code_edges(dst).concat();
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

/// The differential check of every cast kernel on `tiers` (as
/// [`differential`]).
pub fn cast_differential(tiers: &[Tier]) -> Report {
    let mut report = Report::new(tiers);
    for (p, &src) in DType::ALL.iter().enumerate() {
        for (q, &dst) in DType::ALL.iter().enumerate() {
            let seed = ((p * DType::ALL.len() + q) as u64).wrapping_mul(0x1000_0000_01B3);
            let mut rng = Rng::new(0xCA57_0000 ^ seed);
            let vals = cast_values(src, dst, &mut rng);
            let inputs = [vals.as_slice()];
            for saturating in [false, true] {
                let mode = if saturating {
                    CastMode::Saturating
                } else {
                    CastMode::Default
                };
                for &variant in variants_for(1) {
                    let label = |tier: Tier| {
                        format!(
                            "{tier} cast {src} -> {dst} {} {}",
                            mode_name(mode),
                            variant.name()
                        )
                    };
                    let Some(subject) = Subject::cast(src, dst, saturating, variant, tiers) else {
                        report.note_all(&label, "no kernel in the scalar cast table");
                        continue;
                    };
                    report.count_kernel();
                    for layout in layouts(variant) {
                        report.check(&subject, &inputs, layout, &label);
                    }
                }
            }
        }
    }
    report
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
        let mut rng = Rng::new(1);
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

    /// A tier whose kernel computes abs where neg is due, and a tier without
    /// the kernel: both counted as mismatches, the first one described.
    #[test]
    fn a_wrong_tier_is_counted_and_described() {
        let kind = |k| Subject::kernel(k, DType::F32, Variant::Contig, &[]).unwrap();
        let abs = kind(tessera::Kind::Abs).scalar;
        let subject = Subject {
            tiers: vec![(Tier::Avx2, Some(abs)), (Tier::Avx512, None)],
            ..kind(tessera::Kind::Neg)
        };
        let mut report = Report::new(&[Tier::Scalar, Tier::Avx2, Tier::Avx512]);
        let x = values(DType::F32, 0, &mut Rng::new(1));
        let label = |t: Tier| format!("{t} neg f32");
        report.check(&subject, &[&x], layouts(Variant::Contig)[0], &label);
        let counts: Vec<_> = report
            .tiers
            .iter()
            .map(|t| (t.kernels, t.runs, t.mismatches))
            .collect();
        assert_eq!(counts, [(0, 1, 0), (0, 1, 1), (0, 1, 1)]);
        // Element 0 is +0: neg gives -0, abs +0.
        assert!(
            report.first[0].starts_with("avx2 neg f32: element 0: inputs 0 (0x00000000)"),
            "{:?}",
            report.first
        );
        assert!(report.first[1].contains("no kernel"), "{:?}", report.first);
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
