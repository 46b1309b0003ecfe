//! `tessera kernels [--json]`: every callable kernel with its arity, accepted
//! dtypes, result rule, contract and loop variants, from the catalogue.

use super::parse_args;
use crate::failure::{Failure, Outcome};
use crate::outln;
use serde_json::json;
use std::io::Write;
use tessera::{
    kernel_index, variants_for, Accuracy, DType, Kind, OperandRule, ResultRule, Variant,
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
        ResultRule::Real => "the component dtype for complex inputs, else the inputs' dtype",
    }
}

fn operand_rule(kind: Kind) -> &'static str {
    match kind.info().operands {
        OperandRule::Same => "every input has the call's dtype",
        OperandRule::CondFirst => "x0 is bool (the condition), the others have the call's dtype",
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

/// Run `tessera kernels` with its arguments.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    let args = parse_args("kernels", args, &["--json"], &[])?;
    args.at_most("kernels", 0)?;
    if args.has("--json") {
        let list: Vec<serde_json::Value> = Kind::ALL
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
    Ok(0)
}
