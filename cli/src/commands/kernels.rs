//! `tessera kernels [--json]`: every kernel `tessera run` calls, with its
//! operands, results, attributes and contract: the elementwise kinds of the
//! catalogue (arity, accepted dtypes, result rule, loop variants), then every
//! other kernel, listed once (`other_kernels`) for both the text and the
//! JSON forms.

use super::formats::{element_dtype, rule_name, scale_dtype, FormatKernel};
use super::library::LibraryKernel;
use super::parse_args;
use crate::failure::{Failure, Outcome};
use crate::outln;
use serde_json::json;
use std::io::Write;
use tessera::{
    cast_index, kernel_index, variants_for, Accuracy, DType, Format, Kind, OperandRule, ResultRule,
    ScaleRule, Variant,
};

/// The dtypes a kind has kernels for.
pub fn dtypes_of(kind: Kind) -> Vec<DType> {
    DType::ALL
        .iter()
        .copied()
        .filter(|&d| {
            variants_for(kind.info().arity)
                .iter()
                .any(|&v| kernel_index(kind, d, v).is_some())
        })
        .collect()
}

/// A kind's result rule in words.
pub fn result_rule(kind: Kind) -> &'static str {
    match kind.info().result {
        ResultRule::Same => "the inputs' dtype",
        ResultRule::Bool => "bool",
        ResultRule::Real => {
            "the component dtype for complex and pair inputs, else the inputs' dtype"
        }
        ResultRule::Pair => "the pair of the inputs' dtype (f32 -> df32, f64 -> dd64)",
        ResultRule::Order => "i8 (-1, 0 or +1)",
        ResultRule::Complex => "the complex dtype of the inputs' dtype (f32 -> c64, f64 -> c128)",
    }
}

fn operand_rule(kind: Kind) -> &'static str {
    match kind.info().operands {
        OperandRule::Same => "every input has the call's dtype",
        OperandRule::CondFirst => "x0 is bool (the condition), the others have the call's dtype",
        OperandRule::ComplexReal => {
            "x0 has the call's complex dtype, x1 its component dtype (c64: f32, c128: f64)"
        }
    }
}

fn accuracy(kind: Kind) -> &'static str {
    match kind.info().accuracy {
        Accuracy::Exact => "exact",
        Accuracy::Ulp1 => "ulp1",
        Accuracy::Ulp35 => "ulp35",
    }
}

fn names<T>(items: &[T], f: impl Fn(&T) -> &'static str) -> Vec<&'static str> {
    items.iter().map(f).collect()
}

/// Every dtype a cast reads from or writes to.
fn cast_dtypes() -> Vec<&'static str> {
    DType::ALL
        .iter()
        .filter(|&&d| {
            DType::ALL
                .iter()
                .any(|&e| cast_index(d, e, false, Variant::Contig).is_some())
        })
        .map(|d| d.name())
        .collect()
}

const CAST_DOC: &str = "cast any dtype to any dtype (the result's): floats round to nearest even, \
keep subnormals and overflow by the destination's rule (mode default, as ml_dtypes) or clamp \
to the largest finite value (mode saturating); float to int truncates and saturates, NaN to 0; \
int to int wraps (default) or clamps (saturating); x broadcasts to y's shape";

fn format_kernel_doc(k: FormatKernel) -> &'static str {
    match k {
        FormatKernel::Encode => {
            "encode x (any dtype) into a block-scaled format along its last axis: \
             codes, one scale per block (and nvfp4's f32 tensor scale)"
        }
        FormatKernel::Decode => {
            "decode codes and scales (and nvfp4's tensor scale) into y of any dtype \
             (default f32), each value rounded once"
        }
        FormatKernel::Transcode => {
            "decode one block-scaled format and encode the values into another"
        }
    }
}

fn format_kernel_attrs(k: FormatKernel) -> serde_json::Value {
    let formats: Vec<&str> = Format::ALL.iter().map(|f| f.info().name).collect();
    let rules = ["floor", "ceil", "nvfp4"];
    match k {
        FormatKernel::Encode => json!({
            "format": formats,
            "rule": rules,
            "tensor_scale": "NVFP4 only: the caller's tensor scale (a positive finite number, rounded to f32) instead of one from the amax",
            "layout": ["separate", "blocks"]
        }),
        FormatKernel::Decode => json!({"format": formats, "layout": ["separate", "blocks"]}),
        FormatKernel::Transcode => json!({"from": formats, "to": formats, "rule": rules}),
    }
}

fn format_kernel_io(k: FormatKernel) -> (&'static [&'static str], &'static [&'static str]) {
    const ENCODED: &[&str] = &["codes", "scales", "tensor_scale (nvfp4)"];
    match k {
        FormatKernel::Encode => (&["x"], ENCODED),
        FormatKernel::Decode => (ENCODED, &["y"]),
        FormatKernel::Transcode => (ENCODED, ENCODED),
    }
}

fn format_json(f: Format) -> serde_json::Value {
    let info = f.info();
    let vpb = element_dtype(f).map_or(1, |d| d.info().values_per_byte.max(1));
    json!({
        "name": info.name,
        "aliases": info.aliases,
        "element": info.element,
        "scale": info.scale,
        "block": info.block,
        "tensor_scale": info.tensor_scale,
        "scale_rule": rule_name(info.scale_rule),
        "codes_per_byte": vpb,
        "doc": info.doc,
    })
}

/// Every kernel that is not an elementwise kind, as `--json` lists it.
fn other_kernels() -> Vec<serde_json::Value> {
    let mut list = vec![json!({
        "name": "cast",
        "family": "cast",
        "arity": 1,
        "operands": ["x"],
        "results": ["y"],
        "attrs": {"mode": ["default", "saturating"]},
        "dtypes": cast_dtypes(),
        "result": "the dtype result y names",
        "doc": CAST_DOC,
        "variants": names(variants_for(1), |v: &Variant| v.name()),
    })];
    list.push(json!({
        "name": super::contract::NAME,
        "family": "contract",
        "operands": ["a", "b", "init"],
        "results": ["y"],
        "attrs": {"contracting": "[[axis of a, axis of b], ...]", "batch": "[[axis of a, axis of b], ...]", "acc": ["f32", "f64", "c64", "c128", "i4", "u4", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]},
        "result": "the dtype result y names (default: acc)",
        "doc": super::contract::DOC,
    }));
    list.push(json!({
        "name": super::contract_variants::SCALED,
        "family": "contract",
        "operands": ["a", "b", "init", "a_scales", "b_scales"],
        "results": ["y"],
        "attrs": {"contracting": "[[axis of a, axis of b], ...]", "batch": "[[axis of a, axis of b], ...]", "acc": ["f32", "f64"], "a_block": "a count (with a_scales)", "b_block": "a count (with b_scales)"},
        "result": "the dtype result y names (default: acc)",
        "doc": super::contract_variants::SCALED_DOC,
    }));
    list.push(json!({
        "name": super::contract_variants::GROUPED,
        "family": "contract",
        "operands": ["a", "b", "ids", "init"],
        "results": ["y"],
        "attrs": {"by": ["rows", "depth"], "groups": "a count (by depth)", "acc": "as for contract"},
        "result": "the dtype result y names (default: acc)",
        "doc": super::contract_variants::GROUPED_DOC,
    }));
    list.push(json!({
        "name": super::map::NAME,
        "family": "map",
        "operands": ["x0", "x1", "..."],
        "results": ["y0", "y1", "..."],
        "attrs": {"program": "text, e.g. y0 = exp(x0 - x1) * 0.5f32; y1 = x0 > x1"},
        "result": "each output node's dtype",
        "doc": super::map::DOC,
    }));
    for k in FormatKernel::ALL {
        let (operands, results) = format_kernel_io(k);
        list.push(json!({
            "name": k.name(),
            "family": "formats",
            "operands": operands,
            "results": results,
            "attrs": format_kernel_attrs(k),
            "formats": Format::ALL.iter().map(|&f| format_json(f)).collect::<Vec<_>>(),
            "doc": format_kernel_doc(k),
        }));
    }
    list.push(json!({
        "name": super::reduce::REDUCE,
        "family": "reduce",
        "operands": ["x", "x1", "x0, x1, … (with program)"],
        "results": ["y", "y0", "y1", "…"],
        "attrs": {
            "op": tessera::ReduceOp::ALL.iter().map(|o| o.name()).collect::<Vec<_>>(),
            "axes": "a list of axes (default: all)",
            "terms": ["value", "square", "abs", "product", "squared_difference", "abs_difference"],
            "program": "a map program whose output is reduced (operands x0, x1, …)",
            "output": "the program output reduced (default 0)",
            "shape": "the program's loop shape (default: the operands' broadcast)",
        },
        "doc": "Reductions in lane order over any axes (ARCHITECTURE.md §5.3); a list of ops gives results y0, y1, …; with a program, its output tile by tile (no temporary)",
    }));
    list.push(json!({
        "name": super::reduce::SCAN,
        "family": "scan",
        "operands": ["x", "carry", "x0, x1, … (with program)"],
        "results": ["y"],
        "attrs": {
            "op": tessera::ScanOp::ALL
                .iter()
                .map(|o| o.name())
                .chain(["fast_sum", "fast_prod"])
                .collect::<Vec<_>>(),
            "axis": "one axis (default 0)",
            "program": "a map program whose output is scanned (operands x0, x1, …)",
            "output": "the program output scanned (default 0)",
            "shape": "the program's loop shape (default: the operands' broadcast)",
        },
        "doc": "Inclusive scans along one axis in 4096-term chunks with carries (ARCHITECTURE.md §5.4); with a program, its output tile by tile; fast_sum and fast_prod: the log-shift scans of f32 or f64 x (blocks of 16 or 8 lanes)",
    }));
    list.push(json!({
        "name": super::series::NAME,
        "family": "series",
        "operands": ["x"],
        "results": ["y"],
        "attrs": {"op": super::series::OPS, "window": "a count", "alpha": "a number in [0, 1]", "centre": "a number (default 0)"},
        "result": "x's dtype (f32 or f64)",
        "doc": super::series::DOC,
    }));
    for k in super::fft::FftKernel::ALL {
        let mut attrs = json!({
            "axes": "strictly increasing axes (default: every axis)",
            "norm": ["none", "backward", "ortho", "forward"],
        });
        if k == super::fft::FftKernel::C2c {
            attrs["direction"] = json!(["forward", "inverse"]);
        }
        list.push(json!({
            "name": k.name(),
            "family": "fft",
            "operands": ["x"],
            "results": ["y"],
            "attrs": attrs,
            "doc": k.doc(),
        }));
    }
    list.push(json!({
        "name": super::assembly::FOLD,
        "family": "assembly",
        "operands": ["x"],
        "results": ["y"],
        "attrs": {"pad": "per axis of y: [before, after] or [before, after, size, stride, dilation]"},
        "result": "x's dtype; y must give its shape",
        "doc": super::assembly::FOLD_DOC,
    }));
    list.push(json!({
        "name": super::assembly::ASSEMBLE,
        "family": "assembly",
        "operands": ["piece0", "piece1", "..."],
        "results": ["y"],
        "attrs": {"starts": "one index list per piece", "fill": "a number (default: zero bits)"},
        "result": "the pieces' dtype; y must give its shape",
        "doc": super::assembly::ASSEMBLE_DOC,
    }));
    list.push(json!({
        "name": super::assembly::TILE,
        "family": "assembly",
        "operands": ["pattern"],
        "results": ["y"],
        "attrs": {},
        "result": "the pattern's dtype; y must give its shape",
        "doc": super::assembly::TILE_DOC,
    }));
    list.push(json!({
        "name": super::assembly::SPARSE_DOT,
        "family": "reduce",
        "operands": ["v", "idx", "x"],
        "results": ["y"],
        "attrs": {},
        "result": "v's dtype, 0-d",
        "doc": super::assembly::SPARSE_DOT_DOC,
    }));
    for (name, doc) in [
        (super::signal::CONVOLVE, super::signal::CONVOLVE_DOC),
        (super::signal::CORRELATE, super::signal::CORRELATE_DOC),
    ] {
        list.push(json!({
            "name": name,
            "family": "signal",
            "operands": ["x", "k"],
            "results": ["y"],
            "attrs": {
                "mode": "full (default: n + m - 1 outputs), same (n) or valid (n - m + 1)",
                "acc": "the accumulator (default: contract's default for x's and k's dtypes)"
            },
            "result": "acc's dtype unless y names one; shape x's with the last axis the mode's length",
            "doc": doc,
        }));
    }
    for k in super::movement::MovementKernel::ALL {
        let (operands, results, attrs) = k.io();
        list.push(json!({
            "name": k.name(),
            "family": "movement",
            "operands": operands,
            "results": results,
            "attrs": attrs,
            "doc": k.doc(),
        }));
    }
    for k in super::order::OrderKernel::ALL {
        let (operands, results, attrs) = k.io();
        list.push(json!({
            "name": k.name(),
            "family": "order",
            "operands": operands,
            "results": results,
            "attrs": attrs,
            "doc": k.doc(),
        }));
    }
    for k in super::linalg::LinalgKernel::ALL {
        let (operands, results, attrs) = k.io();
        list.push(json!({
            "name": k.name(),
            "family": "linalg",
            "operands": operands,
            "results": results,
            "attrs": attrs,
            "doc": k.doc(),
        }));
    }
    list.push(json!({
        "name": super::attention::NAME,
        "family": "attention",
        "operands": ["q", "k", "v", "lengths", "x1…"],
        "results": ["o", "lse"],
        "attrs": ["scale", "acc", "program"],
        "doc": super::attention::DOC,
    }));
    for &k in super::bytes::BytesKernel::ALL {
        let (operands, results, attrs) = k.io();
        list.push(json!({
            "name": k.name(),
            "family": "bytes",
            "operands": operands,
            "results": results,
            "attrs": attrs,
            "doc": k.doc(),
        }));
    }
    for k in LibraryKernel::ALL {
        let (operands, results, attrs) = k.io();
        list.push(json!({
            "name": k.name(),
            "family": "library",
            "operands": operands,
            "results": results,
            "attrs": attrs,
            "doc": k.doc(),
        }));
    }
    list
}

/// A list of strings of a JSON entry, comma-separated.
fn joined(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
        serde_json::Value::Object(o) => o.keys().cloned().collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// Run `tessera kernels` with its arguments.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    let args = parse_args("kernels", args, &["--json"], &[])?;
    args.at_most("kernels", 0)?;
    if args.has("--json") {
        let mut list: Vec<serde_json::Value> = Kind::ALL
            .iter()
            .map(|&k| {
                let info = k.info();
                json!({
                    "name": info.name,
                    "family": "elementwise",
                    "arity": info.arity,
                    "operands": (0..info.arity).map(|i| format!("x{i}")).collect::<Vec<_>>(),
                    "results": ["y"],
                    "accepts": names(info.accepts, |c| c.name()),
                    "operand_rule": operand_rule(k),
                    "dtypes": names(&dtypes_of(k), |d| d.name()),
                    "result": result_rule(k),
                    "accuracy": accuracy(k),
                    "doc": info.doc,
                    "variants": names(variants_for(info.arity), |v: &Variant| v.name()),
                    "specials": info.specials,
                })
            })
            .collect();
        list.extend(other_kernels());
        let text = serde_json::to_string_pretty(&list)
            .map_err(|e| Failure::run(format!("cannot format the list: {e}")))?;
        outln!(out, "{text}")?;
        return Ok(0);
    }
    outln!(
        out,
        "{} elementwise kernels (call with `tessera run`: operands x0, x1, …, result y)",
        Kind::ALL.len()
    )?;
    for &k in &Kind::ALL {
        let info = k.info();
        outln!(out)?;
        outln!(
            out,
            "{}  ({} input{}, {})  {}",
            info.name,
            info.arity,
            if info.arity == 1 { "" } else { "s" },
            accuracy(k),
            info.doc
        )?;
        outln!(
            out,
            "    dtypes:   {}",
            names(&dtypes_of(k), |d| d.name()).join(" ")
        )?;
        outln!(out, "    operands: {}", operand_rule(k))?;
        outln!(out, "    result:   {}", result_rule(k))?;
        outln!(
            out,
            "    variants: {}",
            names(variants_for(info.arity), |v: &Variant| v.name()).join(" ")
        )?;
    }
    let others = other_kernels();
    outln!(out)?;
    outln!(
        out,
        "{} other kernels (call with `tessera run`; `tessera kernels --json` gives every attribute's values)",
        others.len()
    )?;
    for k in &others {
        outln!(out)?;
        outln!(
            out,
            "{}  ({})  {}",
            k["name"].as_str().unwrap_or_default(),
            k["family"].as_str().unwrap_or_default(),
            k["doc"].as_str().unwrap_or_default()
        )?;
        outln!(out, "    operands: {}", joined(&k["operands"]))?;
        outln!(out, "    results:  {}", joined(&k["results"]))?;
        if let Some(a) = k.get("attrs") {
            outln!(out, "    attrs:    {}", joined(a))?;
        }
    }
    outln!(out)?;
    outln!(out, "cast dtypes: {} (every pair)", cast_dtypes().join(" "))?;
    outln!(out)?;
    outln!(
        out,
        "block-scaled formats (codes and scales as u8 .npy files; e2m1 codes two per byte):"
    )?;
    for f in Format::ALL {
        let info = f.info();
        let scale = scale_dtype(f).map_or(info.scale, |d| d.name());
        outln!(
            out,
            "    {:11} {} elements, {scale} scale per {}{}, rule {}{}",
            info.name,
            info.element,
            info.block,
            info.tensor_scale
                .map(|t| format!(", {t} tensor scale"))
                .unwrap_or_default(),
            rule_name(info.scale_rule),
            if info.scale_rule == ScaleRule::Nvfp4 {
                ""
            } else {
                " (or ceil)"
            }
        )?;
    }
    Ok(0)
}
