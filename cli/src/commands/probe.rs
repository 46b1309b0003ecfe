//! `tessera probe`: every dispatch family on every tier this CPU runs,
//! measured against a reference of higher precision and its stated bound
//! (`tessera::probe`): the table (family, tier, bound, measured, margin),
//! and exit 1 where a family misses its bound.

use super::parse_args;
use crate::failure::{Failure, Outcome};
use crate::outln;
use std::io::Write;
use tessera::Exec;

/// Run `tessera probe` with its arguments.
pub fn main(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    parse_args("probe", args, &[], &[])?.at_most("probe", 0)?;
    run(out)
}

/// The probes' table, and a failure naming the first family over its bound
/// (`selftest` runs this too).
pub fn run(out: &mut dyn Write) -> Outcome<u8> {
    let report =
        tessera::probe::probe(&Exec::default()).map_err(|e| Failure::run(format!("probe: {e}")))?;
    outln!(out, "{}", report.table().trim_end())?;
    let failures = report.failures().len();
    match report.check() {
        Ok(()) => {
            outln!(
                out,
                "probes passed: {} families × tiers within their bounds",
                report.rows.len()
            )?;
            Ok(0)
        }
        Err(e) => Err(Failure::run(format!(
            "{e} ({failures} famil{} refused)",
            if failures == 1 { "y" } else { "ies" }
        ))),
    }
}
