//! `tessera code`: codes shown in hex, binary fields and value, numbers
//! shown with the code the cast gives them, against values worked out by
//! hand from the formats' definitions (OCP FP8, IEEE binary16).

mod common;

use common::*;

fn lines(args: &[&str]) -> Vec<String> {
    let dir = TempDir::new("code");
    let run = tessera(&dir.0, args);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.stdout.lines().map(str::to_string).collect()
}

#[test]
fn codes_show_their_fields_and_values() {
    // e4m3fn: 0x7e = 0 1111 110 = 1.75 · 2^8 = 448; 0x7f the NaN; 0x01 the
    // smallest subnormal 2^-9.
    let l = lines(&["code", "e4m3fn", "0x7e", "0x7f", "0b0000_0001"]);
    assert_eq!(
        l[0],
        "e4m3fn 0x7e = 0b01111110 (sign 0, exponent 1111, mantissa 110) = 448"
    );
    assert!(l[1].ends_with("= nan"), "{}", l[1]);
    assert!(l[2].ends_with("= 0.001953125"), "{}", l[2]);
    // f16: 0x3c00 = 1, 0xfc00 = -inf; i4 0xf = -1.
    let l = lines(&["code", "f16", "0x3c00", "0xfc00"]);
    assert!(
        l[0].contains("(sign 0, exponent 01111, mantissa 0000000000) = 1"),
        "{}",
        l[0]
    );
    assert!(l[1].ends_with("= -inf"), "{}", l[1]);
    assert_eq!(lines(&["code", "i4", "0xf"])[0], "i4 0xf = 0b1111 = -1");
}

#[test]
fn numbers_show_the_code_the_cast_gives() {
    // 1.3 in e4m3fn: between 1.25 (0x3a) and 1.375 (0x3b), nearer 1.25.
    // Past 448 the next step would be 480 (the NaN code's place), so the
    // midpoint is 464: 460 rounds to 448; 500 overflows, NaN by default and
    // 448 saturating.
    let l = lines(&["code", "e4m3fn", "1.3", "460", "500"]);
    assert!(
        l[0].starts_with("1.3 -> e4m3fn 0x3a = ") && l[0].ends_with("= 1.25"),
        "{}",
        l[0]
    );
    assert!(l[1].starts_with("460 -> e4m3fn 0x7e"), "{}", l[1]);
    assert!(l[2].starts_with("500 -> e4m3fn 0x7f"), "{}", l[2]);
    assert!(
        l[3].starts_with("500 -> (saturating) e4m3fn 0x7e"),
        "{}",
        l[3]
    );
}

#[test]
fn all_lists_every_code_and_bad_arguments_are_refused() {
    let l = lines(&["code", "e2m1fn", "--all"]);
    assert_eq!(l.len(), 16);
    assert!(
        l[7].starts_with("e2m1fn 0x7 = 0b0111 (sign 0, exponent 11, mantissa 1) = 6"),
        "{}",
        l[7]
    );
    let dir = TempDir::new("code-bad");
    tessera(&dir.0, &["code", "f32", "--all"]).assert_refused(2, "at most 8 bits");
    tessera(&dir.0, &["code", "e4m3fn", "0x1ff"]).assert_refused(2, "does not fit");
    tessera(&dir.0, &["code", "e4m3fn", "one"]).assert_refused(2, "neither a code");
    tessera(&dir.0, &["code", "q9"]).assert_refused(2, "unknown dtype");
    tessera(&dir.0, &["code", "c64", "0x0"]).assert_refused(2, "two components");
}
