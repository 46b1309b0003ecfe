//! `tessera run` with hostile program texts, as the `program` attribute of
//! `map`, `reduce` and `scan` calls: indices far beyond the call's operands
//! and results, nesting past the documented limit (256), flat chains of
//! 10^5 terms, very long names. Each is refused (exit code 2 or 1, one
//! `error:` line, no panic, no abort, no result file) or runs, and then its
//! result is checked against the same arithmetic written out here.

mod common;

use common::*;

/// The nesting limit of `tessera::map::MAX_NESTING`, as documented.
const LIMIT: usize = 256;

const X: [f32; 3] = [1.0, 2.0, 3.0];

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A JSON string holding `s`.
fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A call file of `kernel` (`map`, `reduce` or `scan`) running `program`
/// over x0 = `x.npy`, its result in `y.npy`.
fn call(kernel: &str, program: &str) -> String {
    let p = json_str(program);
    match kernel {
        "map" => format!(
            r#"{{"kernel": "map", "attrs": {{"program": {p}}},
                "operands": {{"x0": {{"npy": "x.npy"}}}}, "results": {{"y0": {{"npy": "y.npy"}}}}}}"#
        ),
        "reduce" => format!(
            r#"{{"kernel": "reduce", "attrs": {{"op": "sum", "axes": [0], "program": {p}}},
                "operands": {{"x0": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        ),
        _ => format!(
            r#"{{"kernel": "scan", "attrs": {{"op": "sum", "axis": 0, "program": {p}}},
                "operands": {{"x0": {{"npy": "x.npy"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        ),
    }
}

/// Run `program` through `kernel` in a fresh directory: the run and the
/// result's values (if it wrote one).
fn run_program(kernel: &str, program: &str) -> (Run, Option<Vec<f32>>) {
    let dir = TempDir::new("program-text");
    dir.write("x.npy", &npy_f32(&[3], &X));
    dir.write("call.json", call(kernel, program).as_bytes());
    let run = tessera(&dir.0, &["run", "call.json"]);
    let y = dir.path("y.npy");
    let values = y.exists().then(|| f32s(&read_npy(&y).data));
    (run, values)
}

fn short(s: &str) -> &str {
    let mut end = s.len().min(100);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The program must be refused through every kernel: exit code `code`, one
/// short `error:` line that mentions `needle`, no result file.
fn refused(program: &str, code: i32, needle: &str) {
    for kernel in ["map", "reduce", "scan"] {
        let (run, y) = run_program(kernel, program);
        assert!(
            run.code.is_some(),
            "{kernel} `{}`: killed by a signal (an abort); stderr: {}",
            short(program),
            short(&run.stderr)
        );
        run.assert_refused(code, needle);
        assert!(
            run.stderr.len() < 2_000,
            "{kernel} `{}`: an error line of {} bytes",
            short(program),
            run.stderr.len()
        );
        assert!(
            y.is_none(),
            "{kernel} `{}`: a refused call wrote y",
            short(program)
        );
    }
}

/// The program must run through every kernel, with the results of the
/// values `per_element` gives: itself (map), their sum in order (exact
/// here: small integers), their running sums (scan).
fn accepted(program: &str, per_element: impl Fn(f32) -> f32) {
    let v: Vec<f32> = X.iter().map(|&x| per_element(x)).collect();
    let total = v.iter().sum::<f32>();
    let running: Vec<f32> = v
        .iter()
        .scan(0f32, |acc, &t| {
            *acc += t;
            Some(*acc)
        })
        .collect();
    for (kernel, want) in [
        ("map", v.clone()),
        ("reduce", vec![total]),
        ("scan", running),
    ] {
        let (run, y) = run_program(kernel, program);
        assert_eq!(
            run.code,
            Some(0),
            "{kernel} `{}`: {}",
            short(program),
            short(&run.stderr)
        );
        assert_eq!(y, Some(want), "{kernel} `{}`", short(program));
    }
}

#[test]
fn huge_output_and_input_indices_are_refused() {
    // Output indices: the first missing output is named.
    refused("y18446744073709551615 = x0", 2, "y0 is never assigned");
    refused("y99999999999 = x0", 2, "y0 is never assigned");
    refused("y0 = x0; y99999999999 = x0", 2, "y1 is never assigned");
    refused("y0 = x0; y18446744073709551616 = x0", 2, "index");
    refused("y0 = x0; y00 = x0 + 1f32", 2, "leading zeros");
    // Input indices: beyond the operands given.
    refused("y0 = x18446744073709551615", 2, "the program has 1 input");
    refused(
        "y0 = x99999999999999999999999",
        2,
        "the program has 1 input",
    );
    refused("y0 = x01", 2, "leading zeros");
    refused(
        "x99999999999999999999 = 1f32; y0 = x0",
        2,
        "is an input and cannot be assigned",
    );
}

#[test]
fn nesting_past_the_limit_is_refused() {
    for (open, close, token) in [
        ("(", ")", "`(`"),
        ("neg(", ")", "`neg`"),
        ("-", "", "`-`"),
        ("cast<f32>(", ")", "`cast`"),
    ] {
        for depth in [LIMIT + 1, 5_000, 100_000] {
            let p = format!("y0 = {}x0{}", open.repeat(depth), close.repeat(depth));
            refused(&p, 2, "nesting deeper than 256");
            refused(&p, 2, token);
        }
        // At the limit it runs: parentheses, casts and an even number of
        // minuses leave x0 as it is.
        let p = format!("y0 = {}x0{}", open.repeat(LIMIT), close.repeat(LIMIT));
        accepted(&p, |x| x);
    }
}

#[test]
fn flat_chains_of_many_terms_run() {
    // 100,000 terms: a left-deep tree (13,000 once overflowed the stack).
    let n = 100_000;
    let p = format!("y0 = {}", vec!["x0"; n].join(" + "));
    accepted(&p, |x| (1..n).fold(x, |acc, _| acc + x));
    // Through 10,000 intermediates.
    let mut p = String::from("t0 = x0");
    for j in 1..10_000 {
        p.push_str(&format!(";\nt{j} = t{} + x0 - 1f32", j - 1));
    }
    p.push_str("; y0 = t9999");
    accepted(&p, |x| (1..10_000).fold(x, |acc, _| acc + x - 1.0));
}

#[test]
fn other_hostile_texts_are_refused_in_one_short_line() {
    let long = "a".repeat(100_000);
    refused(&format!("y0 = {long}"), 2, "unknown variable");
    refused(&format!("y0 = {long}(x0)"), 2, "unknown kind");
    refused(&format!("y0 = cast<{long}>(x0)"), 2, "unknown dtype");
    refused(&format!("y0 = x0 + 1{long}"), 2, "unknown dtype suffix");
    refused("y0 = cast<f99>(x0)", 2, "unknown dtype `f99`");
    refused("y0 = x0 + 300u8", 2, "range");
    refused("y0 = x0 + 18446744073709551616", 2, "range of u64");
    refused("y0 = x0 + -9223372036854775809i64", 2, "range of i64");
    // A node over several lines is still one error line.
    refused("y0 = frob(x0,\n  x0)\n", 2, "unknown kind");
    // A long expression refused at its top is quoted in part.
    let sum = vec!["x0"; 20_000].join(" + ");
    refused(&format!("y0 = {sum} + true"), 2, "x0 + x0");
    // A coordinate beyond the rank: refused when the call is checked.
    for kernel in ["map", "reduce", "scan"] {
        let (run, y) = run_program(kernel, "y0 = x0 + cast<f32>(coord(18446744073709551615))");
        assert!(matches!(run.code, Some(1 | 2)), "{kernel}: {}", run.stderr);
        let code = run.code.unwrap();
        run.assert_refused(code, "coord(18446744073709551615)");
        assert!(y.is_none(), "{kernel}: a refused call wrote y");
    }
}
