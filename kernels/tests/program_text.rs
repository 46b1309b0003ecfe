//! The map program text against hostile input: indices far beyond the call's
//! inputs and outputs, nesting past the documented limit, flat chains of
//! 10^5 terms, literals beyond their dtype, unknown dtypes, very long names,
//! and programs built node by node and printed back. Every text is either
//! refused with the expected typed error (the offset and token of a parse
//! error, the node of a program error) or accepted, and then its results are
//! checked against the same arithmetic written out here in plain Rust.
//!
//! Cases whose failure mode on the code before these tests was an abort (a
//! stack overflow, an allocation the machine cannot give) run in a child
//! process (`isolated`), so that a regression fails the test instead of
//! killing the whole test binary.

use std::process::Command;

use tessera::map::{map, Node, NodeId, Op, Program, ProgramBuilder};
use tessera::{ArrayView, ArrayViewMut, CastMode, DType, Error, Exec, Kind};
use tessera_testkit::rng::Rng;

/// The nesting limit the module documentation states.
const LIMIT: usize = 256;

#[test]
fn the_documented_limit_is_the_one_exported() {
    assert_eq!(tessera::map::MAX_NESTING, LIMIT);
}

const F: DType = DType::F32;

/// Values without NaNs (so bit equality is value equality), with a negative
/// zero, a subnormal and large and small magnitudes.
const XS: [f32; 7] = [0.1, -2.5, -0.0, 1.0e-40, 3.0, 65504.0, -1.0e20];
const WS: [f32; 7] = [1.5, 0.3, -7.0, 2.0, -0.0, 1.0e-3, 4.0];

/// Run the ignored test `name` of this binary in a child process and require
/// that it passed: a stack overflow or a failed allocation aborts the process
/// it happens in.
fn isolated(name: &str) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe)
        .args([
            name,
            "--exact",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} in a child process: {:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

/// The program's single f32 output over inputs of f32 vectors of one length.
fn run(p: &Program, xs: &[&[f32]]) -> Vec<f32> {
    let n = xs[0].len();
    let views: Vec<ArrayView<'_>> = xs
        .iter()
        .map(|x| ArrayView::from_slice(x, &[x.len()]).unwrap())
        .collect();
    let mut y = vec![f32::NAN; n];
    map(
        p,
        &views,
        &mut [ArrayViewMut::from_slice(&mut y, &[n]).unwrap()],
        &Exec::default(),
    )
    .unwrap_or_else(|e| panic!("running {}: {e}", short(&p.to_string())));
    y
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A prefix of a long text, for messages.
fn short(s: &str) -> &str {
    let mut end = s.len().min(120);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The text must be refused with a parse error at `offset` whose token is
/// `token` and whose reason mentions `why`.
fn parse_err(text: &str, ins: &[DType], offset: usize, token: &str, why: &str) {
    match Program::parse(text, ins) {
        Err(Error::Parse {
            offset: o,
            token: t,
            reason,
        }) => {
            assert_eq!(
                (o, t.as_str()),
                (offset, token),
                "{}: {reason}",
                short(text)
            );
            assert!(
                reason.contains(why),
                "{}: `{reason}` should say `{why}`",
                short(text)
            );
        }
        other => panic!(
            "{}: expected a parse error, got {}",
            short(text),
            short(&format!("{other:?}"))
        ),
    }
}

/// The text must be refused with a program error naming `node`, whose reason
/// mentions `why`.
fn program_err(text: &str, ins: &[DType], node: &str, why: &str) {
    match Program::parse(text, ins) {
        Err(Error::Program { node: n, reason }) => {
            assert_eq!(n, node, "{}: {reason}", short(text));
            assert!(
                reason.contains(why),
                "{}: `{reason}` should say `{why}`",
                short(text)
            );
        }
        other => panic!(
            "{}: expected a program error, got {}",
            short(text),
            short(&format!("{other:?}"))
        ),
    }
}

// ------------------------------------------------------------ indices

#[test]
fn output_indices_beyond_the_outputs_are_refused() {
    // The first missing output is named, as for any gap.
    program_err("y18446744073709551615 = x0", &[F], "y0", "never assigned");
    program_err(
        "y0 = x0; y18446744073709551615 = x0",
        &[F],
        "y1",
        "never assigned",
    );
    program_err("y0 = x0; y4294967296 = x0", &[F], "y1", "never assigned");
    // An index beyond usize cannot be an output's.
    parse_err(
        "y0 = x0; y18446744073709551616 = x0",
        &[F],
        9,
        "y18446744073709551616",
        "index",
    );
    parse_err(
        "y0 = x0; y999999999999999999999999999999999999 = x0",
        &[F],
        9,
        "y999999999999999999999999999999999999",
        "index",
    );
    // `y00` would be output 0 a second time (it used to replace y0 silently).
    parse_err("y0 = x0; y00 = x0 + 1f32", &[F], 9, "y00", "leading zero");
    parse_err("y01 = x0", &[F], 0, "y01", "leading zero");
    // Outputs are still y0 … y(n-1) in any order of statements.
    let p = Program::parse("y2 = x0 * 3f32; y0 = x0; y1 = -x0", &[F]).unwrap();
    assert_eq!(p.outputs().len(), 3);
    assert_eq!(p.to_string(), "y0 = x0; y1 = -x0; y2 = x0 * 3f32");
}

#[test]
fn huge_output_indices_allocate_nothing() {
    isolated("huge_output_indices_allocate_nothing_body");
}

/// `y99999999999` once sized a vector of 10^11 outputs (an abort).
#[test]
#[ignore = "run in a child process by huge_output_indices_allocate_nothing"]
fn huge_output_indices_allocate_nothing_body() {
    program_err("y99999999999 = x0", &[F], "y0", "never assigned");
    program_err(
        "y0 = x0; y99999999999 = x0 + x0",
        &[F],
        "y1",
        "never assigned",
    );
    let mut b = ProgramBuilder::new();
    let x = b.load(1 << 40, F).unwrap();
    b.output(x).unwrap();
    match b.build() {
        Err(Error::Program { node, reason }) => {
            assert_eq!(node, "x0", "{reason}");
            assert!(reason.contains("never loaded"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn input_indices_beyond_the_inputs_are_refused() {
    let f2 = [F, F];
    program_err(
        "y0 = x18446744073709551615",
        &f2,
        "x18446744073709551615",
        "2 inputs",
    );
    program_err(
        "y0 = x0 + x99999999999999999999999",
        &f2,
        "x99999999999999999999999",
        "2 inputs",
    );
    program_err("y0 = x2", &f2, "x2", "2 inputs");
    // `x01` is not input 1.
    program_err("y0 = x01", &f2, "x01", "leading zero");
    // No `x` name can be assigned, however large its index.
    parse_err(
        "x99999999999999999999 = 1f32; y0 = x99999999999999999999",
        &[F],
        0,
        "x99999999999999999999",
        "input",
    );
    parse_err("x00 = 1f32; y0 = x00", &[F], 0, "x00", "input");
    // The builder: an input beyond the declared ones, and far beyond.
    let mut b = ProgramBuilder::with_inputs(&[F]);
    assert!(matches!(b.load(1, F), Err(Error::Program { .. })));
    assert!(matches!(b.load(usize::MAX, F), Err(Error::Program { .. })));
    let mut b = ProgramBuilder::new();
    let x = b.load(usize::MAX, F).unwrap();
    b.output(x).unwrap();
    assert!(matches!(b.build(), Err(Error::Program { node, .. }) if node == "x0"));
    // Inputs declared out of order and complete build.
    let mut b = ProgramBuilder::new();
    let x2 = b.load(2, F).unwrap();
    let x0 = b.load(0, F).unwrap();
    let x1 = b.load(1, F).unwrap();
    let s = b.apply(Kind::Add, &[x0, x1]).unwrap();
    let s = b.apply(Kind::Mul, &[s, x2]).unwrap();
    b.output(s).unwrap();
    let p = b.build().unwrap();
    assert_eq!(p.inputs(), &[F, F, F]);
    let y = run(&p, &[&XS, &WS, &XS]);
    let want: Vec<f32> = (0..XS.len()).map(|i| (XS[i] + WS[i]) * XS[i]).collect();
    assert_eq!(bits(&y), bits(&want));
}

#[test]
fn coordinates_of_any_axis_parse_and_are_checked_when_run() {
    let text = "y0 = cast<f32>(coord(18446744073709551615))";
    let p = Program::parse(text, &[]).unwrap();
    assert_eq!(p.to_string(), text);
    let mut y = [0f32; 4];
    let e = map(
        &p,
        &[],
        &mut [ArrayViewMut::from_slice(&mut y, &[4]).unwrap()],
        &Exec::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Program { node, .. } if node == "coord(18446744073709551615)"),
        "{e}"
    );
    assert_eq!(y, [0.0; 4], "a refused call wrote its output");
    parse_err(
        "y0 = cast<f32>(coord(18446744073709551616))",
        &[],
        21,
        "18446744073709551616",
        "range",
    );
    parse_err(
        "y0 = cast<f32>(coord(1i64))",
        &[],
        21,
        "1i64",
        "untyped integer",
    );
    parse_err(
        "y0 = cast<f32>(coord(x0))",
        &[F],
        21,
        "x0",
        "untyped integer",
    );
    parse_err("y0 = cast<f32>(coord(-1))", &[], 21, "-", "untyped integer");
    // In range: the index itself.
    let p = Program::parse("y0 = cast<f32>(coord(0)) + x0", &[F]).unwrap();
    let y = run(&p, &[&XS]);
    let want: Vec<f32> = (0..XS.len()).map(|i| i as f32 + XS[i]).collect();
    assert_eq!(bits(&y), bits(&want));
}

// ------------------------------------------------------------ literals and dtypes

#[test]
fn literals_beyond_their_dtype_are_refused() {
    let u8s = [DType::U8];
    program_err("y0 = x0 + 256", &u8s, "256", "range");
    program_err("y0 = x0 + 256u8", &u8s, "256u8", "range");
    program_err("y0 = x0 + -1", &u8s, "-1", "range");
    program_err("y0 = 128i8", &[], "128i8", "range");
    program_err("y0 = -129i8", &[], "-129i8", "range");
    program_err("y0 = 1.5i32", &[], "1.5i32", "float constant");
    program_err("y0 = nan_i32", &[], "nan_i32", "float constant");
    program_err("y0 = inf_u64", &[], "inf_u64", "float constant");
    program_err("y0 = x0 + true", &[F], "x0 + true", "");
    parse_err(
        "y0 = 18446744073709551616u64",
        &[],
        5,
        "18446744073709551616u64",
        "range of u64",
    );
    parse_err(
        "y0 = -9223372036854775809i64",
        &[],
        5,
        "-9223372036854775809i64",
        "range of i64",
    );
    parse_err(
        &format!("y0 = x0 + {}", "9".repeat(10_000)),
        &[F],
        10,
        &format!("{}…", "9".repeat(400)),
        "range of u64",
    );
    // At the edges of their ranges, literals are exact.
    let p = Program::parse(
        "y0 = 18446744073709551615u64; y1 = -9223372036854775808i64; y2 = 255u8; y3 = -128i8",
        &[],
    )
    .unwrap();
    assert_eq!(
        p.to_string(),
        "y0 = 18446744073709551615u64; y1 = -9223372036854775808i64; y2 = 255u8; y3 = -128i8"
    );
    // Floats round once into their dtype: beyond it is an infinity.
    let p = Program::parse("y0 = x0 * 0.0f32 + 1e999f32", &[F]).unwrap();
    assert_eq!(p.to_string(), "y0 = x0 * 0.0f32 + inf_f32");
    assert_eq!(bits(&run(&p, &[&XS])), bits(&[f32::INFINITY; 7]));
    let p = Program::parse("y0 = x0 * 0.0f32 - 1e39f32", &[F]).unwrap();
    assert_eq!(bits(&run(&p, &[&XS])), bits(&[f32::NEG_INFINITY; 7]));
    // A long decimal is rounded once (here to 0.1f32, as Rust rounds it).
    let long = format!("0.1{}f32", "0".repeat(20_000));
    let p = Program::parse(&format!("y0 = x0 + {long}"), &[F]).unwrap();
    let y = run(&p, &[&XS]);
    let want: Vec<f32> = XS.iter().map(|x| x + 0.1f32).collect();
    assert_eq!(bits(&y), bits(&want));
}

#[test]
fn casts_to_unknown_dtypes_are_refused() {
    parse_err("y0 = cast<f99>(x0)", &[F], 10, "f99", "unknown dtype");
    parse_err("y0 = cast_sat<int>(x0)", &[F], 14, "int", "unknown dtype");
    parse_err("y0 = cast<>(x0)", &[F], 10, ">", "dtype name");
    parse_err("y0 = cast<3>(x0)", &[F], 10, "3", "dtype name");
    parse_err("y0 = cast<f32(x0)", &[F], 13, "(", "expected `>`");
    parse_err("y0 = cast<f32>x0", &[F], 14, "x0", "expected `(`");
    parse_err("y0 = cast", &[F], 9, "end of input", "expected `<`");
    parse_err("y0 = cast(x0)", &[F], 9, "(", "expected `<`");
    parse_err(
        "y0 = cast<f32>(x0, x0)",
        &[F],
        5,
        "cast<f32>(x0, x0)",
        "one argument",
    );
    parse_err("y0 = cast<f32>()", &[F], 5, "cast<f32>()", "one argument");
    parse_err("y0 = 2q7", &[F], 5, "2q7", "unknown dtype suffix");
    program_err("y0 = inf_f99", &[F], "inf_f99", "unknown variable");
    program_err("y0 = cast<f32>(2)", &[F], "2", "untyped literal");
    // A very long unknown dtype is quoted in part.
    let name = "q".repeat(100_000);
    match Program::parse(&format!("y0 = cast<{name}>(x0)"), &[F]) {
        Err(Error::Parse {
            offset,
            token,
            reason,
        }) => {
            assert_eq!(offset, 10);
            assert!(
                token.len() <= 404 && token.starts_with("qqq"),
                "{}",
                token.len()
            );
            assert!(reason.len() <= 500, "{}", reason.len());
        }
        other => panic!("{}", short(&format!("{other:?}"))),
    }
}

#[test]
fn long_names_are_accepted_and_quoted_in_part() {
    let name = "n".repeat(1_000_000);
    // A long intermediate name is a name like any other.
    let p = Program::parse(&format!("{name} = x0 * 2f32; y0 = {name} + x0"), &[F]).unwrap();
    let y = run(&p, &[&XS]);
    let want: Vec<f32> = XS.iter().map(|x| x * 2.0 + x).collect();
    assert_eq!(bits(&y), bits(&want));
    // Refused, it is quoted in part: messages stay short.
    for (text, parse) in [
        (format!("y0 = {name}"), false),
        (format!("y0 = {name}(x0)"), false),
        (format!("y0 = x0 + 1{name}"), true),
        (format!("{name} = x0; {name} = x0; y0 = x0"), true),
        (format!("y0 = x0 + {name}"), false),
        (format!("y0 = x0 {name}"), true),
    ] {
        let e = Program::parse(&text, &[F]).unwrap_err();
        match (&e, parse) {
            (Error::Parse { .. }, true) | (Error::Program { .. }, false) => {}
            _ => panic!("{}: {}", short(&text), short(&e.to_string())),
        }
        let m = e.to_string();
        assert!(
            m.len() <= 1200,
            "{}: a message of {} bytes",
            short(&text),
            m.len()
        );
    }
    // A type error at the top of a long expression quotes it in part.
    let sum = vec!["x0"; 20_000].join(" + ");
    let e = Program::parse(&format!("y0 = {sum} + x1"), &[F, DType::I32]).unwrap_err();
    assert!(
        matches!(&e, Error::Program { node, .. } if node.len() <= 404 && node.starts_with("x0 + x0")),
        "{}",
        short(&e.to_string())
    );
    // Quoting never cuts a character in two (a comment inside a node).
    let wide = "é".repeat(1_000);
    let e = Program::parse(&format!("y0 = frob(x0, # {wide}\n x0)"), &[F]).unwrap_err();
    assert!(
        matches!(&e, Error::Program { node, .. } if node.starts_with("frob(x0, # é") && node.len() <= 404),
        "{}",
        short(&e.to_string())
    );
}

// ------------------------------------------------------------ nesting

/// Openers of one nesting level each, with their closers.
const OPENERS: [(&str, &str); 5] = [
    ("(", ")"),
    ("neg(", ")"),
    ("-", ""),
    ("cast<f32>(", ")"),
    ("add(x0, ", ")"),
];

/// `y0 = ` and `depth` openers (cycling through `kinds`) around `x1`, with
/// the offset of each opener.
fn nested(depth: usize, kinds: &[usize]) -> (String, Vec<usize>) {
    let mut s = String::from("y0 = ");
    let mut at = Vec::with_capacity(depth);
    for d in 0..depth {
        at.push(s.len());
        s.push_str(OPENERS[kinds[d % kinds.len()]].0);
    }
    s.push_str("x1");
    for d in (0..depth).rev() {
        s.push_str(OPENERS[kinds[d % kinds.len()]].1);
    }
    (s, at)
}

/// What `nested(depth, kinds)` computes, written out: from the inside out.
fn nested_value(depth: usize, kinds: &[usize], x0: f32, x1: f32) -> f32 {
    let mut v = x1;
    for d in (0..depth).rev() {
        v = match kinds[d % kinds.len()] {
            0 | 3 => v,
            1 | 2 => -v,
            _ => x0 + v,
        };
    }
    v
}

fn opener_token(kind: usize) -> &'static str {
    match kind {
        0 => "(",
        1 => "neg",
        2 => "-",
        3 => "cast",
        _ => "add",
    }
}

#[test]
fn nesting_at_the_limit_is_accepted_and_one_past_it_refused() {
    let cases: [&[usize]; 7] = [&[0], &[1], &[2], &[3], &[4], &[0, 1, 2, 3, 4], &[2, 0, 4]];
    for kinds in cases {
        let (text, _) = nested(LIMIT, kinds);
        let p = Program::parse(&text, &[F, F]).unwrap_or_else(|e| panic!("{kinds:?}: {e}"));
        let y = run(&p, &[&XS, &WS]);
        let want: Vec<f32> = (0..XS.len())
            .map(|i| nested_value(LIMIT, kinds, XS[i], WS[i]))
            .collect();
        assert_eq!(bits(&y), bits(&want), "{kinds:?}");
        // Printed back, it parses into the same program.
        assert_eq!(
            Program::parse(&p.to_string(), &[F, F]).unwrap(),
            p,
            "{kinds:?}"
        );
        let (text, at) = nested(LIMIT + 1, kinds);
        let k = kinds[LIMIT % kinds.len()];
        parse_err(&text, &[F, F], at[LIMIT], opener_token(k), "nest");
    }
    // Nesting counts what is open, not what was: sequences of groups at the
    // limit are fine.
    let (one, _) = nested(LIMIT, &[0]);
    let many = format!("{} + {}", one, &one["y0 = ".len()..]);
    let p = Program::parse(&many, &[F, F]).unwrap();
    let y = run(&p, &[&XS, &WS]);
    assert_eq!(bits(&y), bits(&WS.map(|w| w + w)));
    // A literal's minus and coord's parentheses open nothing.
    let text = format!(
        "y0 = {}-2i64 * coord(0){}",
        "(".repeat(LIMIT),
        ")".repeat(LIMIT)
    );
    let p = Program::parse(&text, &[]).unwrap();
    assert_eq!(p.to_string(), "y0 = -2i64 * coord(0)");
}

#[test]
fn deep_nesting_is_refused_without_overflowing() {
    isolated("deep_nesting_is_refused_without_overflowing_body");
}

/// A few thousand levels once overflowed the parser's stack (an abort).
#[test]
#[ignore = "run in a child process by deep_nesting_is_refused_without_overflowing"]
fn deep_nesting_is_refused_without_overflowing_body() {
    for kinds in [&[0usize][..], &[1], &[2], &[3], &[4], &[0, 1, 2, 3, 4]] {
        for depth in [5_000, 100_000] {
            let (text, at) = nested(depth, kinds);
            let k = kinds[LIMIT % kinds.len()];
            parse_err(&text, &[F, F], at[LIMIT], opener_token(k), "nest");
        }
    }
    // Unclosed: the same refusal, before the end is seen.
    let text = format!("y0 = {}", "(".repeat(1_000_000));
    parse_err(&text, &[F], 5 + LIMIT, "(", "nest");
}

// ------------------------------------------------------------ long programs

#[test]
fn flat_chains_of_many_terms() {
    isolated("flat_chains_of_many_terms_body");
}

/// A left-deep sum of 13,000 terms once overflowed the stack when it was
/// lowered and dropped (an abort).
#[test]
#[ignore = "run in a child process by flat_chains_of_many_terms"]
fn flat_chains_of_many_terms_body() {
    const N: usize = 100_000;
    // x0 + x0 + … + x0, left to right.
    let text = format!("y0 = {}", vec!["x0"; N].join(" + "));
    let p = Program::parse(&text, &[F]).unwrap();
    assert_eq!(p.nodes().len(), N);
    assert_eq!(p.to_string(), text);
    let y = run(&p, &[&XS]);
    let want: Vec<f32> = XS
        .iter()
        .map(|&x| (1..N).fold(x, |acc, _| acc + x))
        .collect();
    assert_eq!(bits(&y), bits(&want));
    // Mixed operators of two precedences: x0 + x0 * x1 - x1 + x0 * x1 - x1 …
    let mut text = String::from("y0 = x0");
    for j in 0..N {
        text.push_str(if j % 2 == 0 { " + x0 * x1" } else { " - x1" });
    }
    let p = Program::parse(&text, &[F, F]).unwrap();
    assert_eq!(Program::parse(&p.to_string(), &[F, F]).unwrap(), p);
    let y = run(&p, &[&XS, &WS]);
    let want: Vec<f32> = (0..XS.len())
        .map(|i| {
            let (x, w) = (XS[i], WS[i]);
            (0..N).fold(x, |acc, j| if j % 2 == 0 { acc + x * w } else { acc - w })
        })
        .collect();
    assert_eq!(bits(&y), bits(&want));
    // A chain through intermediates, one statement each.
    let mut text = String::from("t0 = x0");
    for j in 1..N {
        text.push_str(&format!("; t{j} = t{} * 1.5f32 - x0", j - 1));
    }
    text.push_str(&format!("; y0 = t{}", N - 1));
    let p = Program::parse(&text, &[F]).unwrap();
    let y = run(&p, &[&XS]);
    let want: Vec<f32> = XS
        .iter()
        .map(|&x| (1..N).fold(x, |acc, _| acc * 1.5 - x))
        .collect();
    assert_eq!(bits(&y), bits(&want));
    // Refused at its last term, the whole tree is dropped.
    let text = format!("y0 = {} + x5", vec!["x0"; N].join(" + "));
    program_err(&text, &[F], "x5", "unknown variable");
    let text = format!("y0 = {} +", vec!["x0"; N].join(" + "));
    parse_err(
        &text,
        &[F],
        text.len(),
        "end of input",
        "expected an expression",
    );
}

#[test]
#[ignore = "heavy: a million terms"]
fn flat_sum_of_a_million_terms() {
    const N: usize = 1_000_000;
    let text = format!("y0 = {}", vec!["x0"; N].join(" + "));
    let p = Program::parse(&text, &[F]).unwrap();
    assert_eq!(p.nodes().len(), N);
    assert_eq!(p.to_string(), text);
    let y = run(&p, &[&XS]);
    let want: Vec<f32> = XS
        .iter()
        .map(|&x| (1..N).fold(x, |acc, _| acc + x))
        .collect();
    assert_eq!(bits(&y), bits(&want));
}

#[test]
fn deep_programs_from_the_builder_print_and_parse_back() {
    isolated("deep_programs_from_the_builder_print_and_parse_back_body");
}

/// Printing (and describing) a deep program once recursed once per level.
#[test]
#[ignore = "run in a child process by deep_programs_from_the_builder_print_and_parse_back"]
fn deep_programs_from_the_builder_print_and_parse_back_body() {
    const N: usize = 100_000;
    // neg(neg(…(x0))): printed with names every few hundred levels.
    let mut b = ProgramBuilder::with_inputs(&[F, F]);
    let mut v = b.load(0, F).unwrap();
    for _ in 0..N + 1 {
        v = b.apply(Kind::Neg, &[v]).unwrap();
    }
    b.output(v).unwrap();
    let p = b.build().unwrap();
    let text = p.to_string();
    let back = Program::parse(&text, &[F, F]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, p);
    assert_eq!(bits(&run(&p, &[&XS, &WS])), bits(&XS.map(|x| -x)));
    // Described for messages: cut past 400 bytes (after the item under way).
    assert!(p.describe(p.outputs()[0]).len() <= 450);
    // x0 + (x1 + (x0 + …)): a right-deep chain, parenthesised when printed.
    let mut b = ProgramBuilder::with_inputs(&[F, F]);
    let x0 = b.load(0, F).unwrap();
    let x1 = b.load(1, F).unwrap();
    let mut v = x1;
    for j in 0..N {
        v = b
            .apply(Kind::Add, &[if j % 2 == 0 { x0 } else { x1 }, v])
            .unwrap();
    }
    b.output(v).unwrap();
    let p = b.build().unwrap();
    let back = Program::parse(&p.to_string(), &[F, F]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, p);
    let want: Vec<f32> = (0..XS.len())
        .map(|i| {
            (0..N).fold(WS[i], |acc, j| {
                (if j % 2 == 0 { XS[i] } else { WS[i] }) + acc
            })
        })
        .collect();
    assert_eq!(bits(&run(&p, &[&XS, &WS])), bits(&want));
    // A left-deep chain of raw nodes: printed flat; described in part.
    let mut nodes = vec![Node {
        op: Op::Load(0),
        dtype: F,
    }];
    for j in 1..N {
        nodes.push(Node {
            op: Op::Kind(Kind::Sub, vec![NodeId::new(j - 1), NodeId::new(0)]),
            dtype: F,
        });
    }
    let p = Program::new(&[F], nodes, vec![NodeId::new(N - 1)]).unwrap();
    assert_eq!(p.to_string(), format!("y0 = {}", vec!["x0"; N].join(" - ")));
    let d = p.describe(p.outputs()[0]);
    assert!(
        d.len() <= 450 && d.starts_with("x0 - x0 - ") && d.ends_with('…'),
        "{}",
        short(&d)
    );
    // A call refused for its output's dtype describes the output in part.
    let mut y = vec![0f64; XS.len()];
    let e = map(
        &p,
        &[ArrayView::from_slice(&XS, &[XS.len()]).unwrap()],
        &mut [ArrayViewMut::from_slice(&mut y, &[XS.len()]).unwrap()],
        &Exec::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::DTypeMismatch { operand, .. } if operand.len() <= 500),
        "{}",
        short(&e.to_string())
    );
    // Casts nested through the builder.
    let mut b = ProgramBuilder::with_inputs(&[F]);
    let mut v = b.load(0, F).unwrap();
    for j in 0..N {
        let (d, m) = if j % 2 == 0 {
            (DType::F64, CastMode::Default)
        } else {
            (F, CastMode::Saturating)
        };
        v = b.cast(v, d, m).unwrap();
    }
    b.output(v).unwrap();
    let p = b.build().unwrap();
    assert_eq!(Program::parse(&p.to_string(), &[F]).unwrap(), p);
}

// ------------------------------------------------------------ anything else

/// Random texts from the grammar's pieces (and some that are not): each is
/// refused with a parse or program error, or accepted; nothing panics.
#[test]
fn random_texts_are_refused_or_accepted_never_panic() {
    const PIECES: [&str; 40] = [
        "y0", "y1", "y00", "x0", "x1", "x9", "t", "=", "=", ";", "(", ")", "(", ")", "-", "-", "+",
        "*", "/", "%", "<", ">", "<=", "==", "!=", ",", "cast", "cast_sat", "<f32>", "coord",
        "(0)", "neg", "fma", "select", "2", "0.5f32", "-3i32", "inf", "nan_f16", "true",
    ];
    let mut rng = Rng::for_label("program_text random", 7);
    for _ in 0..5_000 {
        let n = 1 + rng.below_usize(24);
        let mut text = String::from(if rng.below(4) == 0 { "" } else { "y0 = " });
        for _ in 0..n {
            text.push_str(PIECES[rng.below_usize(PIECES.len())]);
            if rng.below(2) == 0 {
                text.push(' ');
            }
        }
        match Program::parse(&text, &[F, DType::I32]) {
            Ok(p) => {
                let again = Program::parse(&p.to_string(), &[F, DType::I32]);
                assert_eq!(again, Ok(p.clone()), "{text} printed as {p}");
            }
            Err(Error::Parse { offset, .. }) => assert!(offset <= text.len(), "{text}"),
            Err(Error::Program { .. }) => {}
            Err(e) => panic!("{text}: {e:?}"),
        }
    }
}

/// A node id of another program (or one made by `NodeId::new`) names no
/// node of a smaller program: `Program::node` answers None rather than
/// indexing out of bounds, and `describe` names the missing node.
#[test]
fn node_of_a_foreign_id_is_none() {
    let big = Program::parse("y0 = sqrt(x0 * x0 + 1f32) - x0", &[DType::F32]).unwrap();
    let small = Program::parse("y0 = x0", &[DType::F32]).unwrap();
    let last = NodeId::new(big.nodes().len() - 1);
    assert!(big.node(last).is_some());
    assert_eq!(big.node(last), big.nodes().last());
    assert!(small.nodes().len() < big.nodes().len());
    assert_eq!(small.node(last), None);
    assert_eq!(small.node(NodeId::new(usize::MAX)), None);
    assert_eq!(
        small.node(small.outputs()[0]).map(|n| n.dtype),
        Some(DType::F32)
    );
    assert!(small.describe(last).contains('?'));
}
