//! Why a command stopped: a usage error (exit 2) or a run failure (exit 1),
//! each reported as one line.

use std::fmt;
use std::io::Write;

/// A command's failure, reported by the binary as `error: MESSAGE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    usage: bool,
    message: String,
}

/// The most characters of a quoted value a message repeats.
pub const MAX_QUOTED: usize = 80;

/// The most characters of a message.
pub const MAX_LINE: usize = 1000;

/// The result of a command.
pub type Outcome<T> = Result<T, Failure>;

impl Failure {
    /// The invocation is wrong: bad arguments or a bad call file (exit 2).
    pub fn usage(message: String) -> Self {
        Failure {
            usage: true,
            message,
        }
    }

    /// The invocation is well formed but running it failed (exit 1).
    pub fn run(message: String) -> Self {
        Failure {
            usage: false,
            message,
        }
    }

    /// Whether this is a usage error.
    pub fn is_usage(&self) -> bool {
        self.usage
    }

    /// The exit code: 2 for usage errors, 1 for run failures.
    pub fn exit_code(&self) -> u8 {
        if self.usage {
            2
        } else {
            1
        }
    }

    /// The message, with any line breaks folded into spaces, every quoted
    /// value cut to [`MAX_QUOTED`] characters and the whole to [`MAX_LINE`]
    /// (its start and end kept): a call file's megabyte strings are not
    /// repeated back.
    pub fn one_line(&self) -> String {
        let line = self
            .message
            .split(['\n', '\r'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        crate::commands::cut_middle(&crate::commands::cut_quoted(&line, MAX_QUOTED), MAX_LINE)
    }

    /// The same failure with `context: ` in front of its message.
    pub fn context(self, context: &str) -> Self {
        Failure {
            message: format!("{context}: {}", self.message),
            ..self
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.one_line())
    }
}

impl From<tessera::Error> for Failure {
    fn from(e: tessera::Error) -> Self {
        Failure::run(e.to_string())
    }
}

/// Write formatted text to a command's output, turning an I/O error (a closed
/// pipe, a full disk) into a run failure instead of a panic.
pub fn write_out(out: &mut dyn Write, args: fmt::Arguments<'_>) -> Outcome<()> {
    out.write_fmt(args)
        .map_err(|e| Failure::run(format!("cannot write the output: {e}")))
}

/// `writeln!` into a command's output, returning a [`Failure`] on I/O errors.
#[macro_export]
macro_rules! outln {
    ($out:expr) => {
        $crate::failure::write_out($out, format_args!("\n"))
    };
    ($out:expr, $($arg:tt)*) => {
        $crate::failure::write_out($out, format_args!("{}\n", format_args!($($arg)*)))
    };
}
