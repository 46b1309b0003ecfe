//! The `tessera` command. Everything it does lives in the `tessera_cli` library;
//! this shell only turns a failure into one `error: …` line and an exit code.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // A file-size limit fails the write (EFBIG) instead of killing the
    // process; SIGINT, SIGTERM and SIGHUP remove the temporary files first.
    tessera_cli::signals::install();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = tessera_cli::main_with(&args, &mut out);
    let _ = out.flush();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            let _ = writeln!(std::io::stderr(), "error: {}", failure.one_line());
            ExitCode::from(failure.exit_code())
        }
    }
}
