//! The `tessera` command-line tool as a library: the `.npy` reader and writer,
//! the call-file model, and one module per command. The binary (`src/main.rs`)
//! only forwards its arguments to [`main_with`].
//!
//! Exit codes: 0 success; 1 a run failure (an operand file that is missing or
//! malformed, a refused call, a selftest mismatch, a probe over its bound, a
//! coverage gap); 2 a usage
//! error (bad command-line arguments, a call file that is missing, is not
//! valid JSON, or names unknown kernels, dtypes or keys).

#![deny(missing_docs)]

pub mod budget;
pub mod call;
pub mod codes;
pub mod commands;
pub mod failure;
pub mod files;
pub mod npy;
pub mod operand;
pub mod results;
pub mod signals;

pub use failure::{Failure, Outcome};

use std::io::Write;

/// The usage text printed by `tessera help`.
pub const USAGE: &str = "\
usage: tessera <command> [options]

commands:
  run CALL.json                    run one kernel call described by a JSON call file
  kernels [--json]                 list every callable kernel
  coverage [--json] [--tested DIR] the generated/tested table of every declared kernel
  selftest                         check this CPU's tiers against the scalar reference (and run the probes)
  probe                            every dispatch family's error against its bound; exit 1 if one misses
  ulp KIND DTYPE [--exhaustive] [--samples N] [--tier T]
                                   a transcendental's largest error in ulps, and its worst input
  code DTYPE [CODE|NUMBER]... [--all]
                                   codes in hex, binary fields and value; the code the cast gives a number
  help                             this text (also COMMAND --help)

environment (run): TESSERA_TIER, TESSERA_MAX_RESULT_BYTES (the result budget in bytes),
  TESSERA_MAX_WORK (the work budget in steps), RAYON_NUM_THREADS (at most 1024)

exit codes: 0 ok, 1 run failure, 2 usage error";

/// Run the command named by `args` (without the program name), writing its
/// report to `out`. Returns the exit code of a command that ran to its end
/// (0, or 1 where the command itself found a failure it already reported).
pub fn main_with(args: &[String], out: &mut dyn Write) -> Outcome<u8> {
    let Some((command, rest)) = args.split_first() else {
        return Err(Failure::usage(
            "no command given (try `tessera help`)".to_string(),
        ));
    };
    // `tessera COMMAND --help` (or -h): the usage text, as `tessera help`.
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        failure::write_out(out, format_args!("{USAGE}\n"))?;
        return Ok(0);
    }
    match command.as_str() {
        "run" => commands::run::main(rest, out),
        "kernels" => commands::kernels::main(rest, out),
        "coverage" => commands::coverage::main(rest, out),
        "selftest" => commands::selftest::main(rest, out),
        "probe" => commands::probe::main(rest, out),
        "ulp" => commands::ulp::main(rest, out),
        "code" => commands::code::main(rest, out),
        "help" | "--help" | "-h" => {
            failure::write_out(out, format_args!("{USAGE}\n"))?;
            Ok(0)
        }
        "--version" | "-V" => {
            failure::write_out(out, format_args!("tessera {}\n", env!("CARGO_PKG_VERSION")))?;
            Ok(0)
        }
        other => Err(Failure::usage(format!(
            "unknown command `{other}` (try `tessera help`)"
        ))),
    }
}
