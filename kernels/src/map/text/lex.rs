//! The lexer of program text: tokens, numbers and their dtype suffixes, and
//! the parse errors that quote where the text went wrong.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Lit {
    Int(u64),
    Float(f64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Tok {
    /// A name (its text is the token's span).
    Ident,
    Num(Lit, Option<DType>),
    Punct(&'static str),
    End,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) start: usize,
    pub(super) end: usize,
}

pub(super) const PUNCTS: [&str; 16] = [
    "<=", ">=", "==", "!=", "+", "-", "*", "/", "%", "<", ">", "(", ")", ",", ";", "=",
];

/// A parse error at `text[start..end]` (the token, quoted in part).
pub(super) fn parse_error(
    text: &str,
    start: usize,
    end: usize,
    reason: impl Into<String>,
) -> Error {
    let token = if start >= text.len() {
        "end of input".to_string()
    } else {
        let end = if end > start {
            end.min(text.len())
        } else {
            start + text[start..].chars().next().map_or(1, char::len_utf8)
        };
        clip(&text[start..end])
    };
    Error::Parse {
        offset: start,
        token,
        reason: reason.into(),
    }
}

pub(super) fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The tokens of a text, one at a time (then `End` for ever).
pub(super) struct Lexer<'t> {
    pub(super) text: &'t str,
    pub(super) i: usize,
}

impl Lexer<'_> {
    pub(super) fn next(&mut self) -> Result<Token> {
        let text = self.text;
        let b = text.as_bytes();
        while self.i < b.len() {
            let c = b[self.i];
            if c.is_ascii_whitespace() {
                self.i += 1;
                continue;
            }
            if c == b'#' {
                while self.i < b.len() && b[self.i] != b'\n' {
                    self.i += 1;
                }
                continue;
            }
            let start = self.i;
            if c.is_ascii_alphabetic() || c == b'_' {
                while self.i < b.len() && is_ident_char(b[self.i]) {
                    self.i += 1;
                }
                return Ok(Token {
                    tok: Tok::Ident,
                    start,
                    end: self.i,
                });
            }
            if c.is_ascii_digit() {
                let (tok, end) = lex_number(text, start)?;
                self.i = end;
                return Ok(Token { tok, start, end });
            }
            let p = PUNCTS
                .iter()
                .find(|p| text[start..].starts_with(**p))
                .ok_or_else(|| {
                    let ch = text[start..].chars().next().map_or(1, |c| c.len_utf8());
                    parse_error(text, start, start + ch, "unexpected character")
                })?;
            self.i += p.len();
            return Ok(Token {
                tok: Tok::Punct(p),
                start,
                end: self.i,
            });
        }
        Ok(Token {
            tok: Tok::End,
            start: text.len(),
            end: text.len(),
        })
    }
}

/// A number from `start`: digits, an optional fraction and exponent, and an
/// optional dtype suffix (an optional `_`, then a dtype name). An exponent is
/// taken only where what follows it is empty or a dtype name, so `2e4m3fn`
/// is 2 of dtype e4m3fn.
pub(super) fn lex_number(text: &str, start: usize) -> Result<(Tok, usize)> {
    let b = text.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(start);
    let mut float = false;
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i = digits(i + 1);
        float = true;
    }
    let mantissa_end = i;
    let suffix_at = |from: usize| {
        let mut j = from;
        while j < b.len() && is_ident_char(b[j]) {
            j += 1;
        }
        let s = &text[from..j];
        let name = s.strip_prefix('_').unwrap_or(s);
        if s.is_empty() {
            Some((None, j))
        } else {
            DType::from_name(name).map(|d| (Some(d), j))
        }
    };
    let mut chosen = None;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            let exp_end = digits(j);
            if let Some((d, end)) = suffix_at(exp_end) {
                chosen = Some((exp_end, true, d, end));
            }
        }
    }
    let (num_end, has_exp, dtype, end) = match chosen {
        Some(c) => c,
        None => match suffix_at(mantissa_end) {
            Some((d, end)) => (mantissa_end, false, d, end),
            None => {
                let mut j = mantissa_end;
                while j < b.len() && is_ident_char(b[j]) {
                    j += 1;
                }
                return Err(parse_error(
                    text,
                    start,
                    j,
                    format!("unknown dtype suffix `{}`", clip(&text[mantissa_end..j])),
                ));
            }
        },
    };
    let s = &text[start..num_end];
    let lit = if float || has_exp {
        Lit::Float(
            s.parse::<f64>()
                .map_err(|_| parse_error(text, start, end, "malformed number"))?,
        )
    } else {
        Lit::Int(s.parse::<u64>().map_err(|_| {
            parse_error(text, start, end, "integer literal beyond the range of u64")
        })?)
    };
    Ok((Tok::Num(lit, dtype), end))
}

// ---------------------------------------------------------------- parsing
