//! A small writer of Rust source: lines at an indentation, and the literals
//! the emitters need. The emitted files are laid out here (they are not run
//! through a formatter), so the writer keeps them readable.

use std::fmt::Write;

/// Rust source being written.
#[derive(Default)]
pub struct Code {
    text: String,
    indent: usize,
}

impl Code {
    /// One line at the current indentation (an empty `s` writes a blank line).
    pub fn line(&mut self, s: impl AsRef<str>) -> &mut Self {
        let s = s.as_ref();
        if !s.is_empty() {
            for _ in 0..self.indent {
                self.text.push_str("    ");
            }
            self.text.push_str(s);
        }
        self.text.push('\n');
        self
    }
    /// A line that opens a block (`s` ends with `{`, `[` or `(`); what follows
    /// is indented until [`Code::close`].
    pub fn open(&mut self, s: impl AsRef<str>) -> &mut Self {
        self.line(s);
        self.indent += 1;
        self
    }
    /// End a block with the line `s` (`}`, `];`, …).
    pub fn close(&mut self, s: impl AsRef<str>) -> &mut Self {
        self.indent -= 1;
        self.line(s)
    }
    /// `///` documentation lines, `doc` wrapped at about 80 columns.
    pub fn doc(&mut self, doc: &str) -> &mut Self {
        self.comment("///", doc)
    }
    /// `//!` documentation lines.
    pub fn inner_doc(&mut self, doc: &str) -> &mut Self {
        self.comment("//!", doc)
    }
    fn comment(&mut self, marker: &str, doc: &str) -> &mut Self {
        for para in doc.split('\n') {
            let mut line = String::new();
            for word in para.split_whitespace() {
                if !line.is_empty() && line.len() + word.len() + 1 > 76 {
                    self.line(format!("{marker} {line}"));
                    line.clear();
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            if line.is_empty() {
                self.line(marker);
            } else {
                self.line(format!("{marker} {line}"));
            }
        }
        self
    }
    /// The text written so far.
    pub fn finish(self) -> String {
        self.text
    }
}

/// A Rust string literal of `s`.
pub fn str_lit(s: &str) -> String {
    format!("{s:?}")
}

/// A Rust array expression of string literals, `&["a", "b"]`.
pub fn str_slice(items: &[String]) -> String {
    let mut out = String::from("&[");
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&str_lit(s));
    }
    out.push(']');
    out
}

/// `Some("s")` or `None`.
pub fn opt_str(v: &Option<String>) -> String {
    match v {
        Some(s) => format!("Some({})", str_lit(s)),
        None => "None".to_string(),
    }
}

/// A Rust float literal that reads back as exactly `v` (finite).
pub fn f64_lit(v: f64) -> String {
    let mut s = format!("{v:?}");
    if !s.contains(['.', 'e', 'E']) {
        let _ = write!(s, ".0");
    }
    s
}
