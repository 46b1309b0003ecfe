//! The commands of the `tessera` tool (`run`, `kernels`, `coverage`,
//! `selftest`, `ulp`), and one module per family of kernels `tessera run`
//! routes a call file to (elementwise, cast, contract, reduce and scan, map,
//! series, FFT, formats, assembly, movement, order, the library's others),
//! with the argument and call-file helpers they share.

pub mod assembly;
pub mod attention;
pub mod bytes;
pub mod cast;
pub mod code;
pub mod contract;
pub mod contract_variants;
pub mod coverage;
pub mod elementwise;
pub mod engines_check;
pub mod fft;
pub mod formats;
pub mod kernels;
pub mod library;
pub mod linalg;
pub mod map;
pub mod movement;
pub mod order;
pub mod probe;
pub mod reduce;
pub mod run;
pub mod selftest;
pub mod series;
pub mod signal;
pub mod ulp;

use crate::call::UniqueMap;
use crate::failure::{Failure, Outcome};

/// A command's arguments, split by [`parse_args`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedArgs<'a> {
    /// Flags seen (`--json`).
    pub flags: Vec<&'a str>,
    /// Options with their values (`--tested DIR`), in order.
    pub options: Vec<(&'static str, &'a str)>,
    /// Positional arguments.
    pub positional: Vec<&'a str>,
}

impl ParsedArgs<'_> {
    /// Whether `flag` was given.
    pub fn has(&self, flag: &str) -> bool {
        self.flags.contains(&flag)
    }

    /// The last value given for `option`.
    pub fn value(&self, option: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(o, _)| *o == option)
            .map(|(_, v)| *v)
    }

    /// Refuse positional arguments beyond the first `n`.
    pub fn at_most(&self, command: &str, n: usize) -> Outcome<()> {
        match self.positional.get(n) {
            Some(p) => Err(Failure::usage(format!(
                "{command}: unexpected argument `{p}`"
            ))),
            None => Ok(()),
        }
    }
}

/// Split a command's arguments into the flags it knows (`--json`), options
/// with a value (`--tested DIR` or `--tested=DIR`) and positional arguments;
/// anything else that starts with `-` is a usage error.
pub fn parse_args<'a>(
    command: &str,
    args: &'a [String],
    flags: &[&'static str],
    options: &[&'static str],
) -> Outcome<ParsedArgs<'a>> {
    let mut parsed = ParsedArgs::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = a.as_str();
        if flags.contains(&a) {
            parsed.flags.push(a);
        } else if let Some(opt) = options.iter().find(|o| {
            a == **o
                || a.strip_prefix(**o)
                    .is_some_and(|rest| rest.starts_with('='))
        }) {
            let value = match a.strip_prefix(opt).and_then(|r| r.strip_prefix('=')) {
                Some(v) => v,
                None => it
                    .next()
                    .map(String::as_str)
                    .ok_or_else(|| Failure::usage(format!("{command}: {opt} needs a value")))?,
            };
            parsed.options.push((*opt, value));
        } else if a.starts_with('-') && a != "-" {
            return Err(Failure::usage(format!(
                "{command}: unknown option `{a}` (try `tessera help`)"
            )));
        } else {
            parsed.positional.push(a);
        }
    }
    Ok(parsed)
}

/// The names a list of call-file keys holds, quoted for a message.
fn quoted(names: &[&str]) -> String {
    if names.is_empty() {
        return "none".to_string();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Check that a call's operands or results (`what`) are exactly `names`:
/// a usage error names the first unknown or missing one.
pub fn expect_names<V>(
    kernel: &str,
    what: &str,
    given: &UniqueMap<V>,
    names: &[&str],
) -> Outcome<()> {
    let plural = if names.len() == 1 { "" } else { "s" };
    for g in given.0.keys() {
        if !names.contains(&g.as_str()) {
            return Err(Failure::usage(format!(
                "kernel `{kernel}` takes {what}{plural} {}; the call file names `{}`",
                quoted(names),
                truncate(g, 40)
            )));
        }
    }
    if let Some(missing) = names.iter().find(|n| !given.0.contains_key(**n)) {
        return Err(Failure::usage(format!(
            "kernel `{kernel}` needs {what} {missing} ({what}{plural}: {})",
            quoted(names)
        )));
    }
    Ok(())
}

/// Check a call against a kernel's operands, results and attributes (as
/// its `io()` lists them): usage errors name the first that is unknown or
/// missing.
pub fn expect_io(
    kernel: &str,
    call: &crate::call::Call,
    (operands, results, attrs): (&[&str], &[&str], &[&str]),
) -> Outcome<()> {
    expect_attrs(kernel, &call.attrs, attrs)?;
    expect_names(kernel, "operand", &call.operands, operands)?;
    expect_names(kernel, "result", &call.results, results)
}

/// A contiguous writable view of result `name`'s buffer.
pub fn result_view<'b>(
    name: &str,
    dtype: tessera::DType,
    shape: &[usize],
    buf: &'b mut [u8],
) -> Outcome<tessera::ArrayViewMut<'b>> {
    tessera::ArrayViewMut::contiguous(dtype, shape, buf)
        .map_err(|e| Failure::run(format!("result {name}: {e}")))
}

/// Check that a call's attributes are among `known`.
pub fn expect_attrs(
    kernel: &str,
    attrs: &UniqueMap<serde_json::Value>,
    known: &[&str],
) -> Outcome<()> {
    match attrs.0.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) => Err(Failure::usage(format!(
            "kernel `{kernel}` takes attributes {}; the call file gives `{}`",
            quoted(known),
            truncate(k, 40)
        ))),
    }
}

/// A string attribute, if present (a usage error if it is not a string).
pub fn string_attr<'a>(
    kernel: &str,
    attrs: &'a UniqueMap<serde_json::Value>,
    key: &str,
) -> Outcome<Option<&'a str>> {
    match attrs.0.get(key) {
        None => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(Failure::usage(format!(
            "kernel `{kernel}`: attribute {key} must be a string, not {}",
            truncate(&v.to_string(), 40)
        ))),
    }
}

/// A number attribute, if present (a usage error if it is not a number).
pub fn number_attr(
    kernel: &str,
    attrs: &UniqueMap<serde_json::Value>,
    key: &str,
) -> Outcome<Option<f64>> {
    match attrs.0.get(key) {
        None => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| {
            Failure::usage(format!(
                "kernel `{kernel}`: attribute {key} must be a number, not {}",
                truncate(&v.to_string(), 40)
            ))
        }),
    }
}

/// An attribute that is a non-negative integer (`what` names it in the
/// error: "an axis number", "a count"), if given.
pub fn count_attr(
    kernel: &str,
    attrs: &UniqueMap<serde_json::Value>,
    key: &str,
    what: &str,
) -> Outcome<Option<usize>> {
    match attrs.0.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|u| usize::try_from(u).ok())
            .map(Some)
            .ok_or_else(|| {
                Failure::usage(format!(
                    "kernel `{kernel}`: attribute {key} must be {what}, not {}",
                    truncate(&v.to_string(), 40)
                ))
            }),
    }
}

/// The count of names `prefix0, prefix1, …` among `names`, which must be
/// exactly those, without gaps (`what` names them in the error: "operands").
/// Linear in the number of names: each is read as its index once.
pub fn numbered(kernel: &str, names: &[&String], prefix: &str, what: &str) -> Outcome<usize> {
    let n = names.len();
    let mut seen = vec![false; n];
    for name in names {
        let index = name.strip_prefix(prefix).and_then(|digits| {
            // The canonical decimal only: `x01` is not `x1`.
            let canonical = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'));
            if canonical {
                digits.parse::<usize>().ok()
            } else {
                None
            }
        });
        if let Some(i) = index.filter(|&i| i < n) {
            seen[i] = true;
        }
    }
    // A name outside 0..n leaves an index of 0..n unseen (there are n names).
    match seen.iter().position(|s| !s) {
        Some(i) => Err(Failure::usage(format!(
            "kernel `{kernel}` takes {what} {prefix}0, {prefix}1, … without gaps; {prefix}{i} is missing"
        ))),
        None => Ok(n),
    }
}

/// A loaded operand as a view, refusing sub-byte dtypes (whose loaded data
/// is one code per byte), for kernels that do not take them.
pub fn whole_byte_view<'a>(
    kernel: &str,
    x: &'a crate::operand::Loaded,
) -> Outcome<tessera::ArrayView<'a>> {
    if x.is_codes() {
        return Err(Failure::run(format!(
            "operand {}: kernel `{kernel}` does not take sub-byte dtypes ({})",
            x.name, x.dtype
        )));
    }
    tessera::ArrayView::new(x.dtype, &x.shape, &x.strides, 0, &x.data)
        .map_err(|e| Failure::run(format!("operand {}: {e}", x.name)))
}

/// At most `n` characters of `s`, with `…` where it was cut.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

/// At most `n` characters of `s`: where it is longer, its start and its end
/// with `…` between (for paths, whose file name at the end tells most).
pub fn cut_middle(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let head = n / 2;
    let tail = n - head;
    let mut t: String = s.chars().take(head).collect();
    t.push('…');
    t.extend(s.chars().skip(count - tail));
    t
}

/// `message` with every quoted part (between backticks or double quotes)
/// longer than `n` characters cut to `n` (see [`truncate`]): the values a
/// call file gives, as the JSON parser and the library quote them.
pub fn cut_quoted(message: &str, n: usize) -> String {
    let mut out = String::with_capacity(message.len().min(4096));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let q = rest[open..].chars().next().unwrap_or('`');
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find(q) {
            Some(close) => {
                out.push_str(&truncate(&after[..close], n));
                out.push(q);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&truncate(after, n));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_names_are_checked_in_one_pass() {
        let names: Vec<String> = (0..100_000).map(|i| format!("x{i}")).collect();
        let refs: Vec<&String> = names.iter().collect();
        assert_eq!(numbered("map", &refs, "x", "operands"), Ok(100_000));
        // One name replaced by one that is not canonical: its index is
        // missing, whatever else is there.
        for odd in ["x079999", "y79999", "x", "x100000", "x+1"] {
            let mut names = names.clone();
            names[79_999] = odd.to_string();
            let refs: Vec<&String> = names.iter().collect();
            let e = numbered("map", &refs, "x", "operands").unwrap_err();
            assert!(e.to_string().contains("x79999 is missing"), "{odd}: {e}");
        }
        assert_eq!(numbered("map", &[], "x", "operands"), Ok(0));
    }

    #[test]
    fn cuts() {
        assert_eq!(truncate("abcdef", 3), "abc…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(cut_middle("abcdefgh", 4), "ab…gh");
        assert_eq!(cut_middle("abcd", 4), "abcd");
        let long = "x".repeat(100);
        assert_eq!(
            cut_quoted(&format!("unknown `{long}` and \"{long}\", `ok`"), 5),
            "unknown `xxxxx…` and \"xxxxx…\", `ok`"
        );
        assert_eq!(cut_quoted(&format!("open `{long}"), 2), "open `xx…");
        assert_eq!(cut_quoted("no quotes", 2), "no quotes");
    }
}
