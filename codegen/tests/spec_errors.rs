//! Malformed specs: each test starts from the real `spec/*.toml`, makes one
//! targeted edit, and checks that the generator refuses it with an error naming
//! the right file, table and key, and saying what is wrong.

use std::path::PathBuf;
use tessera_codegen::{parse_spec, SpecError, SpecSources};

fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec")
}

fn real() -> SpecSources {
    SpecSources::read(&spec_dir()).expect("the real spec files are readable")
}

/// Replace the one occurrence of `from` in `text`.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "the edit anchor {from:?} must occur exactly once"
    );
    text.replacen(from, to, 1)
}

/// The byte range of the table holding the unique line `anchor`: from the
/// anchor to the next `[[` header (nested `[x.y]` tables included).
fn table_range(text: &str, anchor: &str) -> (usize, usize) {
    assert_eq!(
        text.matches(anchor).count(),
        1,
        "the table anchor {anchor:?} must occur exactly once"
    );
    let start = text.find(anchor).unwrap();
    let end = text[start..]
        .find("\n[[")
        .map(|i| start + i + 1)
        .unwrap_or(text.len());
    (start, end)
}

/// The byte range of the line `key = ...` (with its newline) in the table of
/// `anchor`.
fn key_line(text: &str, anchor: &str, key: &str) -> (usize, usize) {
    let (start, end) = table_range(text, anchor);
    let prefix = format!("\n{key} = ");
    let at = text[start..end]
        .find(&prefix)
        .unwrap_or_else(|| panic!("no `{key}` in the table of {anchor:?}"))
        + start
        + 1;
    let eol = text[at..]
        .find('\n')
        .map(|i| at + i + 1)
        .unwrap_or(text.len());
    (at, eol)
}

/// Give `key` the value `value` in the table of `anchor`.
fn set(text: &str, anchor: &str, key: &str, value: &str) -> String {
    let (at, eol) = key_line(text, anchor, key);
    format!("{}{key} = {value}\n{}", &text[..at], &text[eol..])
}

/// Remove the line of `key` in the table of `anchor`.
fn remove_key(text: &str, anchor: &str, key: &str) -> String {
    let (at, eol) = key_line(text, anchor, key);
    format!("{}{}", &text[..at], &text[eol..])
}

/// Insert `line` after the line of `key` in the table of `anchor`.
fn insert_after_key(text: &str, anchor: &str, key: &str, line: &str) -> String {
    let (_, eol) = key_line(text, anchor, key);
    format!("{}{line}\n{}", &text[..eol], &text[eol..])
}

/// The whole table (header included) that holds the unique line `anchor`.
fn table_text(text: &str, anchor: &str) -> String {
    let (at, end) = table_range(text, anchor);
    let start = text[..at]
        .rfind("[[")
        .expect("a table header before the anchor");
    text[start..end].to_string()
}

/// Remove the whole table that holds the unique line `anchor`.
fn remove_table(text: &str, anchor: &str) -> String {
    let table = table_text(text, anchor);
    edit(text, &table, "")
}

/// The 1-based line of the first occurrence of `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    let at = text.find(needle).expect("needle present");
    text[..at].matches('\n').count() + 1
}

fn refused(src: &SpecSources) -> SpecError {
    match parse_spec(src) {
        Ok(_) => panic!("the malformed spec was accepted"),
        Err(e) => e,
    }
}

/// Check every field of a semantic error, and its Display.
fn check(e: &SpecError, file: &str, table: &str, key: &str, message_part: &str) {
    assert_eq!(e.file, file, "file of {e}");
    assert_eq!(e.table, table, "table of {e}");
    assert_eq!(e.key, key, "key of {e}");
    assert!(
        e.message.contains(message_part),
        "message of {e:?} should contain {message_part:?}"
    );
    let shown = e.to_string();
    let expected_prefix = format!("{file}: {table}, key `{key}`: ");
    assert!(
        shown.starts_with(&expected_prefix),
        "Display {shown:?} should start with {expected_prefix:?}"
    );
    assert!(shown.ends_with(&e.message));
}

// Anchors: the `name = ...` line of each table the tests edit.
const BF16: &str = "name = \"bf16\"\n";
const E4M3FN: &str = "name = \"e4m3fn\"\n";
const E4M3: &str = "name = \"e4m3\"\n";
const E5M2: &str = "name = \"e5m2\"\n";
const E2M3FN: &str = "name = \"e2m3fn\"\n";
const E3M2FN: &str = "name = \"e3m2fn\"\n";
const I4: &str = "name = \"i4\"\n";
const U4: &str = "name = \"u4\"\n";
const U8: &str = "name = \"u8\"\n";
const U16: &str = "name = \"u16\"\n";

#[test]
fn the_real_spec_is_accepted() {
    let spec = parse_spec(&real()).expect("the committed spec is valid");
    assert!(spec.dtypes.iter().any(|d| d.name == "e4m3fn"));
    assert_eq!(spec.tiers[0].name, "scalar");
}

#[test]
fn helpers_edit_only_their_table() {
    let src = real();
    let edited = set(&src.dtypes, E4M3FN, "bits", "9");
    assert_eq!(edited.len(), src.dtypes.len());
    let diff: Vec<usize> = (0..edited.len())
        .filter(|&i| edited.as_bytes()[i] != src.dtypes.as_bytes()[i])
        .collect();
    assert_eq!(diff.len(), 1);
    let (start, end) = table_range(&src.dtypes, E4M3FN);
    assert!((start..end).contains(&diff[0]));
}

// ---- parse errors (strict TOML) -------------------------------------------

#[test]
fn unknown_key_is_refused_with_its_line() {
    let mut src = real();
    src.dtypes = insert_after_key(&src.dtypes, E4M3FN, "bits", "colour = \"red\"");
    let line = line_of(&src.dtypes, "colour = ");
    let e = refused(&src);
    assert_eq!(e.file, "spec/dtypes.toml");
    assert!(e.message.contains("unknown field `colour`"), "{e}");
    assert!(e.message.contains(&format!("(line {line})")), "{e}");
    assert!(e.to_string().starts_with("spec/dtypes.toml: "), "{e}");
}

#[test]
fn unknown_key_in_a_nested_float_table_is_refused() {
    let mut src = real();
    src.dtypes = insert_after_key(&src.dtypes, E5M2, "bias", "spin = \"up\"");
    let line = line_of(&src.dtypes, "spin = \"up\"");
    let e = refused(&src);
    assert_eq!(e.file, "spec/dtypes.toml");
    assert!(e.message.contains("unknown field `spin`"), "{e}");
    assert!(e.message.contains(&format!("(line {line})")), "{e}");
}

#[test]
fn unknown_key_in_kinds_is_refused() {
    let mut src = real();
    src.kinds = insert_after_key(&src.kinds, "name = \"sqrt\"\n", "arity", "flavour = 1");
    let line = line_of(&src.kinds, "flavour = 1");
    let e = refused(&src);
    assert_eq!(e.file, "spec/kinds.toml");
    assert!(e.message.contains("unknown field `flavour`"), "{e}");
    assert!(e.message.contains(&format!("(line {line})")), "{e}");
}

/// The design asks every spec error to name the table and the key; a
/// strict-parse error carries them only in its message text.
#[test]
fn unknown_key_error_fills_table_and_key() {
    let mut src = real();
    src.dtypes = insert_after_key(&src.dtypes, E4M3FN, "bits", "colour = \"red\"");
    let e = refused(&src);
    assert_eq!(e.table, "[[dtype]] \"e4m3fn\"");
    assert_eq!(e.key, "colour");
}

#[test]
fn toml_syntax_error_is_refused_with_its_line() {
    let mut src = real();
    src.tiers = set(
        &src.tiers,
        "name = \"avx2\"\n",
        "features",
        "[\"avx2\", \"fma\"",
    );
    let line = line_of(&src.tiers, "features = [\"avx2\", \"fma\"\n");
    let e = refused(&src);
    assert_eq!(e.file, "spec/tiers.toml");
    // The table and key are located from the error's position.
    assert_eq!(e.table, "[[tier]] \"avx2\"");
    // The key of the line the parser stopped on: the unclosed array's or the next.
    assert!(["features", "doc"].contains(&e.key.as_str()), "{e}");
    // The parser reports where it noticed the problem: the unclosed array's
    // line or the one after it.
    let reported: usize = e
        .message
        .rsplit("(line ")
        .next()
        .and_then(|s| s.strip_suffix(')'))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no line in {e}"));
    assert!(
        reported == line || reported == line + 1,
        "line {reported} reported for a syntax error on line {line}: {e}"
    );
}

#[test]
fn wrongly_typed_value_is_refused() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, U16, "bits", "\"16\"");
    let line = line_of(&src.dtypes, "bits = \"16\"");
    let e = refused(&src);
    assert_eq!(e.file, "spec/dtypes.toml");
    assert!(e.message.contains("invalid type"), "{e}");
    assert!(e.message.contains(&format!("(line {line})")), "{e}");
}

// ---- dtypes.toml ----------------------------------------------------------

#[test]
fn duplicate_dtype_name() {
    let mut src = real();
    src.dtypes = edit(&src.dtypes, E5M2, E4M3FN);
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e4m3fn\"",
        "name",
        "`e4m3fn` is already the name or an alias of another dtype",
    );
}

#[test]
fn alias_colliding_with_another_dtype_name() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, E5M2, "aliases", "[\"float8_e5m2\", \"f32\"]");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e5m2\"",
        "aliases",
        "`f32` is already the name or an alias of another dtype",
    );
}

#[test]
fn alias_colliding_with_another_alias_ignoring_case() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, BF16, "aliases", "[\"bfloat16\", \"HALF\"]");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"bf16\"",
        "aliases",
        "`HALF` is already the name or an alias",
    );
}

#[test]
fn float_dtype_without_float_table() {
    let mut src = real();
    // Drop e5m2's [dtype.float] table: everything from its header to the
    // next [[dtype]].
    let table = table_text(&src.dtypes, E5M2);
    let float_at = table
        .find("[dtype.float]\n")
        .expect("e5m2 has a float table");
    src.dtypes = edit(&src.dtypes, &table, &table[..float_at]);
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e5m2\"",
        "float",
        "a float dtype needs a [dtype.float] table",
    );
}

#[test]
fn non_float_dtype_with_float_table() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, E4M3, "class", "\"int\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e4m3\"",
        "float",
        "class int takes no [dtype.float] table",
    );
}

#[test]
fn max_finite_not_matching_the_parameters() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, E4M3FN, "max_finite", "480.0");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e4m3fn\"",
        "max_finite",
        "480 does not match the parameters, whose largest finite value is 448",
    );
}

#[test]
fn max_finite_of_the_ieee_layout_is_not_the_all_ones_layout() {
    // e4m3 (IEEE style, 240) given the value of e4m3fn (448): the all-ones
    // exponent is reserved, so the validator must tell the two apart.
    let mut src = real();
    src.dtypes = set(&src.dtypes, E4M3, "max_finite", "448.0");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e4m3\"",
        "max_finite",
        "whose largest finite value is 240",
    );
}

#[test]
fn overflow_to_infinity_without_infinities() {
    let mut src = real();
    src.dtypes = set(
        &src.dtypes,
        E4M3FN,
        "overflow",
        "{ default = \"infinity\", saturating = \"max-finite\" }",
    );
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e4m3fn\"",
        "overflow",
        "overflow to infinity needs `infinities = true`",
    );
}

#[test]
fn overflow_to_nan_without_a_nan_code() {
    let mut src = real();
    src.dtypes = set(
        &src.dtypes,
        E3M2FN,
        "overflow",
        "{ default = \"max-finite\", saturating = \"nan\" }",
    );
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e3m2fn\"",
        "overflow",
        "overflow to NaN needs a NaN code",
    );
}

#[test]
fn nan_none_without_nan_to() {
    let mut src = real();
    src.dtypes = remove_key(&src.dtypes, E2M3FN, "nan_to");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e2m3fn\"",
        "nan_to",
        "a dtype without NaN must say what a NaN becomes",
    );
}

#[test]
fn nan_to_on_a_dtype_that_has_nan() {
    let mut src = real();
    src.dtypes = insert_after_key(&src.dtypes, E5M2, "max_finite", "nan_to = \"zero\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e5m2\"",
        "nan_to",
        "only a dtype with nan = \"none\" takes nan_to",
    );
}

#[test]
fn unknown_carrier() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, E4M3FN, "carrier", "\"f24\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e4m3fn\"",
        "carrier",
        "unknown dtype `f24`",
    );
}

#[test]
fn carrier_that_cannot_compute_the_dtype() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, I4, "carrier", "\"u8\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"i4\"",
        "carrier",
        "carrier `u8` cannot compute this dtype; use i8",
    );
}

#[test]
fn unknown_accumulator() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, U16, "accumulator", "\"u128\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"u16\"",
        "accumulator",
        "unknown dtype `u128`",
    );
}

#[test]
fn unknown_class() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, U16, "class", "\"natural\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"u16\"",
        "class",
        "unknown class `natural`",
    );
}

#[test]
fn values_per_byte_not_filling_a_byte() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, U4, "values_per_byte", "3");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"u4\"",
        "values_per_byte",
        "3 values of 4 bits do not fill one byte exactly",
    );
}

#[test]
fn values_per_byte_on_a_whole_byte_type() {
    let mut src = real();
    src.dtypes = insert_after_key(&src.dtypes, U8, "bits", "values_per_byte = 2");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"u8\"",
        "values_per_byte",
        "2 values of 8 bits do not fill one byte exactly",
    );
}

#[test]
fn float_fields_not_adding_up_to_the_bits() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, E5M2, "mantissa_bits", "3");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e5m2\"",
        "mantissa_bits",
        "sign 1 + exponent 5 + mantissa 3 bits do not make the 8 bits of the dtype",
    );
}

#[test]
fn invalid_dtype_name() {
    let mut src = real();
    src.dtypes = edit(&src.dtypes, "name = \"e3m4\"\n", "name = \"E3M4\"\n");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"E3M4\"",
        "name",
        "`E3M4` is not a valid name",
    );
}

/// Two names that differ only in an underscore before a digit become the same
/// Rust identifier (`f_16` and `f16` are both `F16`): the generated enums would
/// not compile, so the validator must refuse the pair.
#[test]
fn dtype_names_with_colliding_identifiers() {
    let mut src = real();
    let f16 = table_text(&src.dtypes, "name = \"f16\"\n");
    let copy = edit(&f16, "name = \"f16\"\n", "name = \"f_16\"\n");
    let copy = set(&copy, "name = \"f_16\"\n", "aliases", "[]");
    let copy = remove_key(&copy, "name = \"f_16\"\n", "numpy");
    src.dtypes = format!("{}\n{}", src.dtypes.trim_end(), copy.trim_end());
    src.dtypes.push('\n');
    let e = refused(&src);
    assert_eq!(e.file, "spec/dtypes.toml");
    assert_eq!(e.table, "[[dtype]] \"f_16\"");
    assert_eq!(e.key, "name");
}

// ---- kinds.toml -----------------------------------------------------------

#[test]
fn kind_with_unknown_algorithm() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"add\"\n", "algorithm", "\"plus\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"add\"",
        "algorithm",
        "unknown algorithm `plus`",
    );
}

#[test]
fn kind_accepting_an_unknown_class() {
    let mut src = real();
    src.kinds = set(
        &src.kinds,
        "name = \"neg\"\n",
        "accepts",
        "[\"int\", \"quaternion\"]",
    );
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"neg\"",
        "accepts",
        "unknown class `quaternion`",
    );
}

#[test]
fn kind_with_an_impossible_arity() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"clamp\"\n", "arity", "4");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"clamp\"",
        "arity",
        "arity 4 is outside 1..=3",
    );
}

#[test]
fn special_with_the_wrong_count_of_values() {
    let mut src = real();
    src.kinds = set(
        &src.kinds,
        "name = \"mul\"\n",
        "specials",
        "[[\"2\", \"3\", \"6\"], [\"0\", \"inf\"]]",
    );
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"mul\"",
        "specials",
        "special #1 has 2 values; a kind of arity 2 needs 3",
    );
}

#[test]
fn unparsable_special() {
    let mut src = real();
    src.kinds = set(
        &src.kinds,
        "name = \"sqrt\"\n",
        "specials",
        "[[\"4\", \"two\"]]",
    );
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"sqrt\"",
        "specials",
        "special #0: `two` is not a number",
    );
}

#[test]
fn kind_declared_twice() {
    let mut src = real();
    src.kinds = edit(&src.kinds, "name = \"sub\"\n", "name = \"add\"\n");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"add\"",
        "name",
        "this kind is declared twice",
    );
}

#[test]
fn kind_with_an_unknown_accuracy_class() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"div\"\n", "accuracy", "\"ulp2\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"div\"",
        "accuracy",
        "unknown accuracy class `ulp2`",
    );
}

#[test]
fn kind_with_an_unknown_operand_rule() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"add\"\n", "operands", "\"mixed\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"add\"",
        "operands",
        "unknown operand rule `mixed` (same, cond-first, complex-real)",
    );
}

#[test]
fn kind_with_an_unknown_result_rule() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"lt\"\n", "result", "\"boolean\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"lt\"",
        "result",
        "unknown result rule `boolean` (same, bool, real, pair, order, complex)",
    );
}

/// cond-first makes input 0 the condition: a kind of one input would have no
/// value to choose.
#[test]
fn cond_first_kind_with_a_single_input() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"select\"\n", "arity", "1");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"select\"",
        "operands",
        "operands = \"cond-first\" needs a condition and at least one value (arity 2 or 3), not arity 1",
    );
}

/// What kinds.toml no longer repeats for a second list to check: a kind's
/// arity, classes, operand rule and result rule are its own, and the kernels
/// instantiate its operation with them. An operation that does not implement
/// what the kind declares is refused by the compiler (add of arity 3 calls
/// `run3::<.., Add, ..>`, and `Add` implements `Op2`, not `Op3`), so the
/// validator accepts these well-formed values and the generator follows them.
#[test]
fn arity_classes_operands_and_result_are_the_kinds_own() {
    let mut src = real();
    let add = "name = \"add\"\n";
    src.kinds = set(&src.kinds, add, "arity", "3");
    src.kinds = remove_key(&src.kinds, add, "specials");
    src.kinds = set(
        &src.kinds,
        "name = \"sqrt\"\n",
        "accepts",
        "[\"float\", \"int\"]",
    );
    src.kinds = set(&src.kinds, "name = \"select\"\n", "operands", "\"same\"");
    src.kinds = set(&src.kinds, "name = \"lt\"\n", "result", "\"same\"");
    let spec = parse_spec(&src).unwrap_or_else(|e| panic!("well-formed kinds refused: {e}"));
    let kernels = spec.kernels();
    let call = |name: &str| -> String {
        kernels
            .iter()
            .find(|k| k.fn_name == name)
            .unwrap_or_else(|| panic!("no kernel {name}"))
            .call
            .replace(' ', "")
    };
    // add: three inputs, the operation Add.
    let c = call("add_i32_contig");
    assert!(c.starts_with("run3::<"), "{c}");
    assert!(c.contains(",Add,"), "{c}");
    assert!(!kernels.iter().any(|k| k.fn_name == "add_i32_bcast3"));
    assert!(kernels.iter().any(|k| k.fn_name == "add_i32_bcast2"));
    // sqrt: an int kernel, of the operation Sqrt.
    let c = call("sqrt_i32_contig");
    assert!(c.starts_with("run1::<"), "{c}");
    assert!(c.contains(",Sqrt,"), "{c}");
    // select: every input of the call's dtype (no Bool condition).
    let c = call("select_i32_contig");
    assert!(
        c.contains("<Native<i32>,Native<i32>,Native<i32>,Native<i32>,Select,"),
        "{c}"
    );
    // lt: the result in the call's dtype.
    let c = call("lt_i32_contig");
    assert!(
        c.contains("<Native<i32>,Native<i32>,Native<i32>,Lt,"),
        "{c}"
    );
}

// ---- kinds.toml against the runtime's operations ----------------------------

/// A copy of the `[[kind]]` table of `anchor`, renamed `name`, computing
/// `algorithm`, appended to the kinds.
fn with_new_kind(kinds: &str, anchor: &str, name: &str, algorithm: &str) -> String {
    let copy = table_text(kinds, anchor);
    let copy = edit(&copy, anchor, &format!("name = \"{name}\"\n"));
    let new_anchor = format!("name = \"{name}\"\n");
    let copy = set(&copy, &new_anchor, "algorithm", &format!("\"{algorithm}\""));
    format!("{}\n\n{}\n", kinds.trim_end(), copy.trim_end())
}

#[test]
fn the_runtime_operations_are_read_from_its_source() {
    let src = real();
    assert!(src.ops.contains("pub enum Operation {"));
    let ops = tessera_codegen::parse_operations(&src.ops).expect("the runtime's operations parse");
    // Each is an op struct of the runtime (a hand-written one or one a macro
    // of ops.rs defines: its name then appears as a word of the file).
    for op in &ops {
        let uses = src
            .ops
            .match_indices(op.as_str())
            .filter(|(i, _)| {
                let before = src.ops[..*i].chars().next_back();
                let after = src.ops[i + op.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
            .count();
        assert!(uses >= 3, "{op}: the variant, its doc link and its struct");
    }
    // As many as the kinds with kernels of their own (an alias runs another
    // kind's), every such kind's algorithm among them.
    let kinds: toml::Table = src.kinds.parse().expect("valid TOML");
    let kinds = kinds["kind"].as_array().expect("[[kind]] tables");
    let own: Vec<&str> = kinds
        .iter()
        .filter(|k| k.get("alias").is_none())
        .map(|k| k["algorithm"].as_str().expect("an algorithm"))
        .collect();
    assert_eq!(ops.len(), own.len());
    for a in own {
        assert!(
            ops.iter().any(|o| {
                let mut snake = String::new();
                for (i, c) in o.chars().enumerate() {
                    if c.is_ascii_uppercase() && i > 0 {
                        snake.push('_');
                    }
                    snake.push(c.to_ascii_lowercase());
                }
                snake == a
            }),
            "{a} among the operations"
        );
    }
}

#[test]
fn kind_whose_operation_does_not_exist() {
    let mut src = real();
    src.kinds = with_new_kind(&src.kinds, "name = \"neg\"\n", "frob", "frobnicate");
    let e = refused(&src);
    check(
        &e,
        "spec/kinds.toml",
        "[[kind]] \"frob\"",
        "algorithm",
        "unknown algorithm `frobnicate` of kind `frob`: the runtime has no such operation \
         (`pub enum Operation` in runtime/src/ops.rs); its operations are: add, sub, mul,",
    );
    // The list names the operations as an algorithm names them.
    for op in ["bit_and", "add_sat", "log1p", "fast_pow", "lerp"] {
        assert!(
            e.message.contains(&format!(" {op},")) || e.message.ends_with(&format!(" {op}")),
            "{op} missing from {e}"
        );
    }
}

#[test]
fn kind_whose_operation_left_the_runtime() {
    let mut src = real();
    src.ops = edit(&src.ops, "    Conj,\n", "");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"conj\"",
        "algorithm",
        "unknown algorithm `conj` of kind `conj`",
    );
}

#[test]
fn operation_without_a_kind() {
    let mut src = real();
    src.ops = edit(
        &src.ops,
        "    PairLo,\n}",
        "    PairLo,\n    /// A new operation.\n    FrobNicate,\n}",
    );
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]]",
        "algorithm",
        "operation `FrobNicate` of the runtime (`pub enum Operation` in runtime/src/ops.rs) \
         is the algorithm of no kind: add a [[kind]] with algorithm = \"frob_nicate\" to \
         spec/kinds.toml, or remove the operation",
    );
}

#[test]
fn operation_whose_kind_was_removed() {
    let mut src = real();
    src.kinds = remove_table(&src.kinds, "name = \"conj\"\n");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]]",
        "algorithm",
        "operation `Conj` of the runtime",
    );
}

#[test]
fn new_kind_with_its_new_operation_is_accepted() {
    let mut src = real();
    src.kinds = with_new_kind(&src.kinds, "name = \"neg\"\n", "frob", "frob_nicate");
    src.ops = edit(
        &src.ops,
        "    PairLo,\n}",
        "    PairLo,\n    FrobNicate,\n}",
    );
    let spec = parse_spec(&src).unwrap_or_else(|e| panic!("refused: {e}"));
    let k = spec.kinds.last().expect("kinds");
    assert_eq!(k.name, "frob");
    assert_eq!(k.op, "FrobNicate");
}

#[test]
fn two_kinds_computing_one_operation() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"sub\"\n", "algorithm", "\"add\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"sub\"",
        "algorithm",
        "operation `add` already computes kind `add`",
    );
}

#[test]
fn algorithm_that_is_not_a_name() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"add\"\n", "algorithm", "\"Add\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"add\"",
        "algorithm",
        "`Add` is not a valid name",
    );
}

/// An error in the runtime's list of operations, which has no key.
fn check_ops(e: &SpecError, message_part: &str) {
    assert_eq!(e.file, "runtime/src/ops.rs", "file of {e}");
    assert_eq!(e.table, "pub enum Operation", "table of {e}");
    assert!(
        e.message.contains(message_part),
        "message of {e:?} should contain {message_part:?}"
    );
    assert!(e
        .to_string()
        .starts_with("runtime/src/ops.rs: pub enum Operation"));
}

#[test]
fn operations_block_missing() {
    let mut src = real();
    src.ops = edit(
        &src.ops,
        "pub enum Operation {\n",
        "pub enum Operations {\n",
    );
    let e = refused(&src);
    check_ops(&e, "no `pub enum Operation {` block");
    assert_eq!(e.key, "");
    src.ops = String::new();
    check_ops(&refused(&src), "no `pub enum Operation {` block");
}

#[test]
fn operations_block_not_closed() {
    let mut src = real();
    let open = src.ops.find("pub enum Operation {\n").expect("the block");
    src.ops
        .truncate(open + "pub enum Operation {\n    Add,\n".len());
    check_ops(&refused(&src), "is not closed by a line that reads `}`");
}

#[test]
fn operation_that_is_not_a_plain_variant() {
    let mut src = real();
    src.ops = edit(&src.ops, "    PairLo,\n}", "    PairLo = 7,\n}");
    let line = line_of(&src.ops, "    PairLo = 7,");
    check_ops(
        &refused(&src),
        &format!("line {line}: `PairLo = 7,` is not a plain variant"),
    );
    let mut src = real();
    src.ops = edit(&src.ops, "    PairLo,\n}", "    PairLo(u8),\n}");
    check_ops(&refused(&src), "`PairLo(u8),` is not a plain variant");
}

#[test]
fn operation_listed_twice() {
    let mut src = real();
    src.ops = edit(&src.ops, "    PairLo,\n}", "    PairLo,\n    Add,\n}");
    let e = refused(&src);
    check_ops(&e, "operation `Add` is listed twice");
    assert_eq!(e.key, "Add");
}

// ---- raw_floats -----------------------------------------------------------

#[test]
fn raw_floats_that_is_not_a_bool() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"select\"\n", "raw_floats", "\"yes\"");
    let line = line_of(&src.kinds, "raw_floats = \"yes\"");
    let e = refused(&src);
    assert_eq!(e.file, "spec/kinds.toml");
    assert_eq!(e.table, "[[kind]] \"select\"");
    assert_eq!(e.key, "raw_floats");
    assert!(e.message.contains("invalid type"), "{e}");
    assert!(e.message.contains(&format!("(line {line})")), "{e}");
}

#[test]
fn raw_floats_on_a_kind_without_floats() {
    let mut src = real();
    src.kinds = insert_after_key(
        &src.kinds,
        "name = \"bitwise_and\"\n",
        "algorithm",
        "raw_floats = true",
    );
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"bitwise_and\"",
        "raw_floats",
        "accepts neither",
    );
}

#[test]
fn raw_floats_on_an_inexact_kind() {
    let mut src = real();
    src.kinds = insert_after_key(
        &src.kinds,
        "name = \"exp\"\n",
        "algorithm",
        "raw_floats = true",
    );
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"exp\"",
        "raw_floats",
        "only an exact kind can do (accuracy is \"ulp1\")",
    );
}

/// raw_floats is kinds.toml's: false unless written, and the float kernels of
/// a kind that says true take their operands as raw codes.
#[test]
fn raw_floats_is_read_from_kinds_toml() {
    let float_call = |src: &SpecSources, kind: &str| -> String {
        let spec = parse_spec(src).unwrap_or_else(|e| panic!("refused: {e}"));
        let name = format!("{kind}_e4m3fn_contig");
        let k = spec
            .kernels()
            .into_iter()
            .find(|k| k.fn_name == name)
            .unwrap_or_else(|| panic!("no kernel {name}"));
        format!("{} through={}", k.call.replace(' ', ""), k.through)
    };
    let src = real();
    assert_eq!(src.kinds.matches("\nraw_floats = true\n").count(), 5);
    let spec = parse_spec(&src).expect("the real spec");
    let raw: Vec<&str> = spec
        .kinds
        .iter()
        .filter(|k| k.raw_floats)
        .map(|k| k.name.as_str())
        .collect();
    assert_eq!(raw, ["select", "conj", "real", "imag", "from_parts"]);
    assert!(float_call(&src, "select").contains("Raw<u8>"));
    // The parts kinds move f16c's codes as stored.
    let conj = spec
        .kernels()
        .into_iter()
        .find(|k| k.fn_name == "conj_f16c_contig")
        .expect("conj of f16c");
    assert!(
        conj.call.contains("Raw<Complex<u16>>") && !conj.through,
        "{}",
        conj.call
    );
    assert!(float_call(&src, "add").contains("through=true"));
    // Without the key, select decodes its floats like any kind.
    let mut without = real();
    without.kinds = remove_key(&without.kinds, "name = \"select\"\n", "raw_floats");
    let c = float_call(&without, "select");
    assert!(!c.contains("Raw<"), "{c}");
    assert!(c.contains("E4m3fn"), "{c}");
    // With it, add takes the raw codes instead of going through f32.
    let mut with = real();
    with.kinds = insert_after_key(
        &with.kinds,
        "name = \"add\"\n",
        "algorithm",
        "raw_floats = true",
    );
    let c = float_call(&with, "add");
    assert!(c.contains("Raw<u8>") && c.contains("through=false"), "{c}");
}

// ---- loops.toml -----------------------------------------------------------

#[test]
fn unknown_loop_shape() {
    let mut src = real();
    src.loops = set(&src.loops, "name = \"bcast\"\n", "shape", "\"diagonal\"");
    check(
        &refused(&src),
        "spec/loops.toml",
        "[[variant]] \"bcast\"",
        "shape",
        "unknown shape `diagonal`",
    );
}

#[test]
fn missing_strided_variant() {
    let mut src = real();
    src.loops = remove_table(&src.loops, "name = \"strided\"\n");
    assert!(!src.loops.contains("\"strided\""));
    check(
        &refused(&src),
        "spec/loops.toml",
        "[[variant]]",
        "shape",
        "the strided variant is required",
    );
}

#[test]
fn loop_shape_declared_twice() {
    let mut src = real();
    src.loops = set(&src.loops, "name = \"bcast\"\n", "shape", "\"contiguous\"");
    check(
        &refused(&src),
        "spec/loops.toml",
        "[[variant]] \"bcast\"",
        "shape",
        "this loop variant is declared twice",
    );
}

// ---- tiers.toml -----------------------------------------------------------

#[test]
fn first_tier_not_scalar() {
    let mut src = real();
    let scalar = table_text(&src.tiers, "name = \"scalar\"\n");
    src.tiers = edit(&src.tiers, &scalar, "");
    src.tiers = format!("{}\n\n{}", src.tiers.trim_end(), scalar.trim_end());
    src.tiers.push('\n');
    assert!(src.tiers.find("\"avx2\"").unwrap() < src.tiers.find("\"scalar\"").unwrap());
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]]",
        "name",
        "the first tier must be `scalar`",
    );
}

#[test]
fn unknown_cpu_feature() {
    let mut src = real();
    src.tiers = set(
        &src.tiers,
        "name = \"avx2\"\n",
        "features",
        "[\"avx2\", \"avx1024\"]",
    );
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"avx2\"",
        "features",
        "unknown x86_64 feature `avx1024`",
    );
}

#[test]
fn cpu_feature_of_another_architecture() {
    let mut src = real();
    src.tiers = set(
        &src.tiers,
        "name = \"avx2\"\n",
        "features",
        "[\"avx2\", \"neon\"]",
    );
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"avx2\"",
        "features",
        "unknown x86_64 feature `neon`",
    );
}

#[test]
fn unknown_architecture() {
    let mut src = real();
    src.tiers = set(&src.tiers, "name = \"avx2\"\n", "arch", "\"riscv64\"");
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"avx2\"",
        "arch",
        "unknown architecture `riscv64`",
    );
}

#[test]
fn portable_tier_needing_features() {
    let mut src = real();
    src.tiers = set(&src.tiers, "name = \"scalar\"\n", "features", "[\"avx2\"]");
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"scalar\"",
        "features",
        "a tier for any architecture cannot need CPU features",
    );
}

/// Replace the first occurrence of `from` in `text` (the avx2 tier's, where
/// later tiers repeat its fast casts).
fn edit_first(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the edit anchor {from:?} must occur");
    text.replacen(from, to, 1)
}

#[test]
fn unknown_fast_cast_function() {
    let mut src = real();
    src.tiers = edit_first(
        &src.tiers,
        "function = \"f32_to_int64\" },\n  { src = \"f32\", dst = \"u64\"",
        "function = \"f32_to_int128\" },\n  { src = \"f32\", dst = \"u64\"",
    );
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"avx2\"",
        "fast_casts",
        "unknown fast cast `f32_to_int128` (f16c_widen, f16c_narrow, f16c_widen_real, f16c_narrow_complex, f32_to_int64)",
    );
}

#[test]
fn fast_cast_on_the_wrong_dtypes() {
    let mut src = real();
    src.tiers = edit_first(
        &src.tiers,
        "{ src = \"f32\", dst = \"u64\", function = \"f32_to_int64\" }",
        "{ src = \"f32\", dst = \"i32\", function = \"f32_to_int64\" }",
    );
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"avx2\"",
        "fast_casts",
        "`f32_to_int64` converts f32 to a 64-bit integer, not f32 → i32",
    );
    let mut src = real();
    src.tiers = edit_first(
        &src.tiers,
        "{ src = \"f16\", dst = \"f32\", function = \"f16c_widen\" }",
        "{ src = \"bf16\", dst = \"f32\", function = \"f16c_widen\" }",
    );
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"avx2\"",
        "fast_casts",
        "`f16c_widen` converts between f32 and an IEEE binary16 dtype, not bf16 → f32",
    );
    let mut src = real();
    src.tiers = edit_first(
        &src.tiers,
        "{ src = \"f16c\", dst = \"f32\", function = \"f16c_widen_real\" }",
        "{ src = \"bf16c\", dst = \"f32\", function = \"f16c_widen_real\" }",
    );
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"avx2\"",
        "fast_casts",
        "`f16c_widen_real` converts between f32 and a complex dtype of IEEE binary16 parts, not bf16c → f32",
    );
}

#[test]
fn fast_cast_without_its_cpu_feature() {
    let mut src = real();
    src.tiers = set(
        &src.tiers,
        "name = \"avx2\"\n",
        "features",
        "[\"avx2\", \"fma\", \"bmi2\"]",
    );
    check(
        &refused(&src),
        "spec/tiers.toml",
        "[[tier]] \"avx2\"",
        "fast_casts",
        "`f16c_widen` needs an x86_64 tier with the f16c feature",
    );
}

// ---- formats.toml ---------------------------------------------------------

const MXFP4: &str = "name = \"mxfp4\"\n";
const NVFP4: &str = "name = \"nvfp4\"\n";

#[test]
fn format_with_unknown_element_dtype() {
    let mut src = real();
    src.formats = set(&src.formats, MXFP4, "element", "\"e2m1\"");
    check(
        &refused(&src),
        "spec/formats.toml",
        "[[format]] \"mxfp4\"",
        "element",
        "unknown dtype `e2m1`",
    );
}

#[test]
fn format_scale_that_is_a_signed_float() {
    let mut src = real();
    src.formats = set(&src.formats, MXFP4, "scale", "\"e4m3fn\"");
    check(
        &refused(&src),
        "spec/formats.toml",
        "[[format]] \"mxfp4\"",
        "scale",
        "the scale must be an unsigned float dtype",
    );
}

#[test]
fn format_scale_that_is_not_a_float() {
    let mut src = real();
    src.formats = set(&src.formats, NVFP4, "scale", "\"u8\"");
    check(
        &refused(&src),
        "spec/formats.toml",
        "[[format]] \"nvfp4\"",
        "scale",
        "the scale must be an unsigned float dtype",
    );
}

#[test]
fn format_block_not_holding_whole_bytes() {
    let mut src = real();
    src.formats = set(&src.formats, MXFP4, "block", "33");
    check(
        &refused(&src),
        "spec/formats.toml",
        "[[format]] \"mxfp4\"",
        "block",
        "a block of 33 does not hold whole bytes of e2m1fn",
    );
}

#[test]
fn nvfp4_scale_rule_without_tensor_scale() {
    let mut src = real();
    src.formats = remove_key(&src.formats, NVFP4, "tensor_scale");
    check(
        &refused(&src),
        "spec/formats.toml",
        "[[format]] \"nvfp4\"",
        "tensor_scale",
        "the nvfp4 scale rule needs a tensor scale",
    );
}

#[test]
fn format_declared_twice() {
    let mut src = real();
    src.formats = edit(
        &src.formats,
        "name = \"mxfp8_e5m2\"\n",
        "name = \"mxfp8_e4m3\"\n",
    );
    check(
        &refused(&src),
        "spec/formats.toml",
        "[[format]] \"mxfp8_e4m3\"",
        "name",
        "this format is declared twice",
    );
}

/// A format alias equal to another format's alias makes `Format::from_name`
/// ambiguous (and its generated match arm unreachable).
#[test]
fn format_alias_colliding_with_another_format() {
    let mut src = real();
    src.formats = set(
        &src.formats,
        "name = \"mxfp8_e5m2\"\n",
        "aliases",
        "[\"mxfp8\"]",
    );
    let e = refused(&src);
    assert_eq!(e.file, "spec/formats.toml");
    assert_eq!(e.table, "[[format]] \"mxfp8_e5m2\"");
    assert_eq!(e.key, "aliases");
}

const FAST_TAN: &str = "name = \"fast_tan\"\n";

#[test]
fn alias_of_a_kind_nobody_declares() {
    let mut src = real();
    src.kinds = set(&src.kinds, FAST_TAN, "alias", "\"tangent\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"fast_tan\"",
        "alias",
        "alias of `tangent`, which no earlier [[kind]] declares",
    );
}

#[test]
fn alias_of_an_alias() {
    let mut src = real();
    src.kinds = set(&src.kinds, FAST_TAN, "alias", "\"fast_exp2\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"fast_tan\"",
        "alias",
        "`fast_exp2` is itself an alias",
    );
}

#[test]
fn alias_writing_a_key_of_its_target() {
    let mut src = real();
    src.kinds = insert_after_key(&src.kinds, FAST_TAN, "alias", "arity = 1");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"fast_tan\"",
        "arity",
        "an alias takes `arity` from the kind it aliases (`tan`)",
    );
}

#[test]
fn alias_promising_more_than_its_target() {
    let mut src = real();
    src.kinds = set(&src.kinds, FAST_TAN, "accuracy", "\"exact\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"fast_tan\"",
        "accuracy",
        "cannot promise more than they do",
    );
}

#[test]
fn kind_without_an_alias_needs_its_own_keys() {
    let mut src = real();
    src.kinds = remove_key(&src.kinds, "name = \"sub\"\n", "arity");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"sub\"",
        "arity",
        "missing field `arity`",
    );
}

#[test]
fn complex_real_operands_on_a_kind_not_of_two_complex_inputs() {
    let mut src = real();
    src.kinds = set(
        &src.kinds,
        "name = \"add\"\n",
        "operands",
        "\"complex-real\"",
    );
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"add\"",
        "operands",
        "must have arity 2 and accept the class complex alone",
    );
}

#[test]
fn a_complex_result_of_a_kind_not_of_floats_alone() {
    let mut src = real();
    src.kinds = set(&src.kinds, "name = \"add\"\n", "result", "\"complex\"");
    check(
        &refused(&src),
        "spec/kinds.toml",
        "[[kind]] \"add\"",
        "result",
        "must accept the class float alone",
    );
}

// ---- complex dtypes' components --------------------------------------------

const F16C: &str = "name = \"f16c\"\n";

#[test]
fn a_complex_dtype_names_its_component() {
    let mut src = real();
    src.dtypes = remove_key(&src.dtypes, F16C, "component");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"f16c\"",
        "component",
        "names the float dtype of its parts",
    );
}

#[test]
fn a_component_has_half_the_bits() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, F16C, "component", "\"e4m3fn\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"f16c\"",
        "component",
        "is not a float dtype of 16 bits",
    );
    let mut src = real();
    src.dtypes = set(&src.dtypes, F16C, "component", "\"f17\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"f16c\"",
        "component",
        "unknown dtype `f17`",
    );
}

#[test]
fn a_complex_dtype_carries_in_the_complex_of_its_components_carrier() {
    let mut src = real();
    src.dtypes = set(&src.dtypes, F16C, "carrier", "\"c128\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"f16c\"",
        "carrier",
        "is not the complex dtype of `f32`",
    );
}

#[test]
fn only_complex_dtypes_take_a_component() {
    let mut src = real();
    src.dtypes = insert_after_key(&src.dtypes, E4M3FN, "bits", "component = \"f16\"");
    check(
        &refused(&src),
        "spec/dtypes.toml",
        "[[dtype]] \"e4m3fn\"",
        "component",
        "takes no component",
    );
}
