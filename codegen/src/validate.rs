//! Semantic validation: raw TOML structs to the typed [`Spec`], refusing
//! duplicates, unknown references and impossible combinations.

use crate::error::SpecError;
use crate::model::*;
use crate::spec::*;
use std::collections::HashSet;

const DTYPES: &str = "spec/dtypes.toml";
const KINDS: &str = "spec/kinds.toml";
const LOOPS: &str = "spec/loops.toml";
const TIERS: &str = "spec/tiers.toml";
const FORMATS: &str = "spec/formats.toml";

const OPS: &str = crate::OPS_PATH;

/// The table of an error in the runtime's list of operations.
const OPS_TABLE: &str = "pub enum Operation";

/// The runtime's operations: the variants of the `pub enum Operation { ... }`
/// block of `runtime/src/ops.rs` (its text), in order.
///
/// The parse is simple and strict: the block opens with a line that reads
/// `pub enum Operation {` and closes at the next line that reads `}`;
/// between them, after `//` comments (doc comments included) are dropped,
/// every line is empty or one variant, `Name,` (an identifier in CamelCase).
pub fn parse_operations(text: &str) -> Result<Vec<String>, SpecError> {
    let err = |key: &str, msg: String| SpecError::new(OPS, OPS_TABLE, key, msg);
    let lines: Vec<&str> = text.lines().collect();
    let opens: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim() == "pub enum Operation {")
        .collect();
    let open = match opens.as_slice() {
        [i] => *i,
        [] => {
            return Err(err(
                "",
                "no `pub enum Operation {` block: the runtime declares its operations \
                 there, one variant `Name,` a line per operation struct"
                    .into(),
            ))
        }
        [_, second, ..] => {
            return Err(err(
                "",
                format!(
                    "`pub enum Operation {{` is declared twice (again on line {})",
                    second + 1
                ),
            ))
        }
    };
    let mut ops: Vec<String> = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(open + 1) {
        let code = line.split("//").next().unwrap_or("").trim();
        if code == "}" {
            if ops.is_empty() {
                return Err(err("", "the enum lists no operation".into()));
            }
            return Ok(ops);
        }
        if code.is_empty() {
            continue;
        }
        let name = code.strip_suffix(',').unwrap_or("");
        let ident = name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && name.chars().all(|c| c.is_ascii_alphanumeric());
        if !ident {
            return Err(err(
                "",
                format!(
                    "line {}: `{code}` is not a plain variant: write one `Name,` a line \
                     (CamelCase letters and digits), its doc comment above it",
                    i + 1
                ),
            ));
        }
        if ops.iter().any(|o| o == name) {
            return Err(err(
                name,
                format!("line {}: operation `{name}` is listed twice", i + 1),
            ));
        }
        ops.push(name.to_string());
    }
    Err(err(
        "",
        format!(
            "the block opened on line {} is not closed by a line that reads `}}`",
            open + 1
        ),
    ))
}

/// `CamelName` → `camel_name`: the name a kind's `algorithm` gives an operation.
fn snake(ident: &str) -> String {
    let mut out = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Names that differ but become the same Rust identifier (`f_16` and `f16`).
fn unique_idents<'a>(
    file: &str,
    table: &str,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), SpecError> {
    let mut seen: Vec<(String, &str)> = Vec::new();
    for n in names {
        let id = camel(n);
        if let Some((_, other)) = seen.iter().find(|(i, _)| *i == id) {
            return Err(SpecError::new(
                file,
                format!("[[{table}]] \"{n}\""),
                "name",
                format!("`{n}` and `{other}` both become the Rust name `{id}`; rename one"),
            ));
        }
        seen.push((id, n));
    }
    Ok(())
}

fn check_name(file: &str, table: &str, key: &str, name: &str) -> Result<(), SpecError> {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(SpecError::new(
            file,
            table,
            key,
            format!("`{name}` is not a valid name (lower-case letters, digits and `_`, starting with a letter)"),
        ))
    }
}

/// Validate the parsed files into a [`Spec`], the kinds against `operations`
/// (the runtime's, from [`parse_operations`]).
pub fn validate(
    dtypes: DTypesFile,
    kinds: KindsFile,
    loops: LoopsFile,
    tiers: TiersFile,
    formats: FormatsFile,
    operations: &[String],
) -> Result<Spec, SpecError> {
    let dtypes = validate_dtypes(dtypes)?;
    let kinds = validate_kinds(kinds, operations)?;
    let loops = validate_loops(loops)?;
    let tiers = validate_tiers(tiers, &dtypes)?;
    let formats = validate_formats(formats, &dtypes)?;
    unique_idents(DTYPES, "dtype", dtypes.iter().map(|d| d.name.as_str()))?;
    unique_idents(KINDS, "kind", kinds.iter().map(|k| k.name.as_str()))?;
    unique_idents(TIERS, "tier", tiers.iter().map(|t| t.name.as_str()))?;
    unique_idents(FORMATS, "format", formats.iter().map(|f| f.name.as_str()))?;
    let spec = Spec {
        dtypes,
        kinds,
        loops,
        tiers,
        formats,
    };
    let mut names = HashSet::new();
    for k in spec.kernels().into_iter().filter(|k| !k.shared) {
        if !names.insert(k.fn_name.clone()) {
            let kind = &spec.kinds[k.kind];
            return Err(SpecError::new(
                KINDS,
                format!("[[kind]] \"{}\"", kind.name),
                "name",
                format!(
                    "kernel name `{}` is produced twice; rename the kind or the dtype",
                    k.fn_name
                ),
            ));
        }
    }
    Ok(spec)
}

fn validate_dtypes(file: DTypesFile) -> Result<Vec<DType>, SpecError> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    if file.dtype.is_empty() {
        return Err(SpecError::new(DTYPES, "", "dtype", "no [[dtype]] tables"));
    }
    for raw in &file.dtype {
        let table = format!("[[dtype]] \"{}\"", raw.name);
        let t = table.as_str();
        check_name(DTYPES, t, "name", &raw.name)?;
        for n in std::iter::once(&raw.name).chain(raw.aliases.iter()) {
            if !seen.insert(n.to_ascii_lowercase()) {
                return Err(SpecError::new(
                    DTYPES,
                    t,
                    if *n == raw.name { "name" } else { "aliases" },
                    format!("`{n}` is already the name or an alias of another dtype"),
                ));
            }
        }
        let class = Class::from_name(&raw.class).ok_or_else(|| {
            SpecError::new(
                DTYPES,
                t,
                "class",
                format!(
                    "unknown class `{}` (bool, int, uint, float, complex, pair)",
                    raw.class
                ),
            )
        })?;
        let bits_ok = match class {
            Class::Bool => raw.bits == 8,
            Class::Int | Class::Uint => [1, 2, 4, 8, 16, 32, 64].contains(&raw.bits),
            Class::Float => (3..=16).contains(&raw.bits) || raw.bits == 32 || raw.bits == 64,
            Class::Complex => [32, 64, 128].contains(&raw.bits),
            Class::Pair => raw.bits == 64 || raw.bits == 128,
        };
        if !bits_ok {
            return Err(SpecError::new(
                DTYPES,
                t,
                "bits",
                format!("{} bits is not possible for class {}", raw.bits, raw.class),
            ));
        }
        let vpb = raw.values_per_byte.unwrap_or(1);
        if vpb != 1 && (raw.bits >= 8 || vpb * raw.bits != 8) {
            return Err(SpecError::new(
                DTYPES,
                t,
                "values_per_byte",
                format!(
                    "{vpb} values of {} bits do not fill one byte exactly",
                    raw.bits
                ),
            ));
        }
        if (class == Class::Int || class == Class::Uint)
            && raw.bits < 8
            && vpb == 1
            && raw.bits != 1
        {
            // allowed: one sub-byte integer per byte is unusual but valid
        }
        let float = match (class, &raw.float) {
            (Class::Float, Some(f)) => Some(validate_float(t, raw, f)?),
            (Class::Float, None) => {
                return Err(SpecError::new(
                    DTYPES,
                    t,
                    "float",
                    "a float dtype needs a [dtype.float] table with its parameters",
                ));
            }
            (_, Some(_)) => {
                return Err(SpecError::new(
                    DTYPES,
                    t,
                    "float",
                    format!("class {} takes no [dtype.float] table", raw.class),
                ));
            }
            (_, None) => None,
        };
        out.push(DType {
            name: raw.name.clone(),
            aliases: raw.aliases.clone(),
            class,
            bits: raw.bits,
            carrier: raw.carrier.clone(),
            accumulator: raw.accumulator.clone(),
            numpy: raw.numpy.clone(),
            values_per_byte: vpb,
            component: raw.component.clone(),
            doc: raw.doc.clone(),
            float,
        });
    }
    // References between dtypes.
    for d in &out {
        let t = format!("[[dtype]] \"{}\"", d.name);
        let carrier = out.iter().find(|c| c.name == d.carrier).ok_or_else(|| {
            SpecError::new(
                DTYPES,
                t.clone(),
                "carrier",
                format!("unknown dtype `{}`", d.carrier),
            )
        })?;
        if d.class == Class::Complex {
            check_component(&out, d, carrier, &t)?;
        } else if d.component.is_some() {
            return Err(SpecError::new(
                DTYPES,
                t,
                "component",
                format!("class {:?} takes no component (complex only)", d.class),
            ));
        }
        let expected_ok = match d.class {
            Class::Float if d.is_mini() => carrier.name == "f32",
            Class::Complex => true,
            Class::Int if d.bits < 8 => carrier.name == "i8",
            Class::Uint if d.bits < 8 => carrier.name == "u8",
            _ => carrier.name == d.name,
        };
        if !expected_ok {
            let want = match d.class {
                Class::Float => "f32 (or the dtype itself for f32/f64)",
                Class::Int if d.bits < 8 => "i8",
                Class::Uint if d.bits < 8 => "u8",
                _ => "the dtype itself",
            };
            return Err(SpecError::new(
                DTYPES,
                t,
                "carrier",
                format!(
                    "carrier `{}` cannot compute this dtype; use {want}",
                    d.carrier
                ),
            ));
        }
        if d.class == Class::Float && !d.is_mini() && d.bits != 32 && d.bits != 64 {
            return Err(SpecError::new(
                DTYPES,
                t,
                "carrier",
                "only f32 and f64 compute as themselves; narrower floats carry in f32",
            ));
        }
        if !out.iter().any(|c| c.name == d.accumulator) {
            return Err(SpecError::new(
                DTYPES,
                t,
                "accumulator",
                format!("unknown dtype `{}`", d.accumulator),
            ));
        }
    }
    Ok(out)
}

/// A complex dtype's `component`: a float dtype of half its bits, and its
/// carrier the complex dtype whose component is the component's carrier.
fn check_component(all: &[DType], d: &DType, carrier: &DType, t: &str) -> Result<(), SpecError> {
    let err = |msg: String| Err(SpecError::new(DTYPES, t, "component", msg));
    let Some(name) = d.component.as_deref() else {
        return err("a complex dtype names the float dtype of its parts".into());
    };
    let Some(comp) = all.iter().find(|c| c.name == name) else {
        return err(format!("unknown dtype `{name}`"));
    };
    if comp.class != Class::Float || comp.bits * 2 != d.bits {
        return err(format!(
            "`{name}` is not a float dtype of {} bits (half of {})",
            d.bits / 2,
            d.bits
        ));
    }
    if carrier.class != Class::Complex || carrier.component.as_deref() != Some(&comp.carrier) {
        return Err(SpecError::new(
            DTYPES,
            t,
            "carrier",
            format!(
                "carrier `{}` is not the complex dtype of `{}` (the carrier of `{name}`)",
                carrier.name, comp.carrier
            ),
        ));
    }
    Ok(())
}

fn overflow_rule(t: &str, key: &str, s: &str, f: &RawFloat) -> Result<Overflow, SpecError> {
    let v = match s {
        "infinity" => Overflow::Infinity,
        "nan" => Overflow::Nan,
        "max-finite" => Overflow::MaxFinite,
        _ => {
            return Err(SpecError::new(
                DTYPES,
                t,
                key,
                format!("unknown overflow rule `{s}` (infinity, nan, max-finite)"),
            ));
        }
    };
    if v == Overflow::Infinity && !f.infinities {
        return Err(SpecError::new(
            DTYPES,
            t,
            key,
            "overflow to infinity needs `infinities = true`",
        ));
    }
    if v == Overflow::Nan && f.nan == "none" {
        return Err(SpecError::new(
            DTYPES,
            t,
            key,
            "overflow to NaN needs a NaN code (`nan` is \"none\")",
        ));
    }
    Ok(v)
}

fn validate_float(t: &str, raw: &RawDType, f: &RawFloat) -> Result<FloatParams, SpecError> {
    let e = f.exponent_bits;
    let m = f.mantissa_bits;
    let sign = f.signed as u32;
    let native = raw.carrier == raw.name;
    if e == 0 || e > 11 {
        return Err(SpecError::new(
            DTYPES,
            t,
            "exponent_bits",
            format!("{e} exponent bits is outside 1..=11"),
        ));
    }
    if e + m + sign != raw.bits && !(raw.bits == 8 && !f.signed && e + m == 7) {
        return Err(SpecError::new(
            DTYPES,
            t,
            "mantissa_bits",
            format!("sign {sign} + exponent {e} + mantissa {m} bits do not make the {} bits of the dtype", raw.bits),
        ));
    }
    if !native {
        if m > 22 {
            return Err(SpecError::new(
                DTYPES,
                t,
                "mantissa_bits",
                format!("{m} mantissa bits do not fit the f32 carrier exactly (at most 22)"),
            ));
        }
        let emin = 1 - f.bias;
        if (1i32 << e) - 2 - f.bias > 127 {
            return Err(SpecError::new(
                DTYPES,
                t,
                "bias",
                format!(
                    "values up to 2^{} do not fit the f32 carrier",
                    (1i32 << e) - 2 - f.bias
                ),
            ));
        }
        if f.subnormals && emin - (m as i32) < -149 {
            return Err(SpecError::new(
                DTYPES,
                t,
                "bias",
                format!(
                    "subnormals down to 2^{} do not fit the f32 carrier",
                    emin - m as i32
                ),
            ));
        }
        if f.subnormals && emin < -126 {
            return Err(SpecError::new(
                DTYPES,
                t,
                "bias",
                "normals below 2^-126 do not fit the f32 carrier's normal range",
            ));
        }
        if !f.subnormals && f.bias > 127 {
            return Err(SpecError::new(
                DTYPES,
                t,
                "bias",
                "without subnormals the bias can be at most 127",
            ));
        }
        if !f.subnormals && m > 0 {
            return Err(SpecError::new(
                DTYPES,
                t,
                "subnormals",
                "a dtype without subnormals must have no mantissa bits (a power-of-two type like e8m0fnu)",
            ));
        }
    }
    let nan = match f.nan.as_str() {
        "ieee" => NanStyle::Ieee,
        "all-ones" => NanStyle::AllOnes,
        "sign-only" => NanStyle::SignOnly,
        "none" => NanStyle::None,
        s => {
            return Err(SpecError::new(
                DTYPES,
                t,
                "nan",
                format!("unknown NaN style `{s}` (ieee, all-ones, sign-only, none)"),
            ))
        }
    };
    if nan == NanStyle::Ieee && m == 0 {
        return Err(SpecError::new(
            DTYPES,
            t,
            "nan",
            "IEEE NaNs need at least one mantissa bit",
        ));
    }
    if nan == NanStyle::Ieee && !f.infinities {
        return Err(SpecError::new(
            DTYPES,
            t,
            "infinities",
            "the ieee NaN style reserves the all-ones exponent, which also holds the infinities",
        ));
    }
    if f.infinities && nan != NanStyle::Ieee {
        return Err(SpecError::new(
            DTYPES,
            t,
            "infinities",
            "infinities are supported with the ieee NaN style only",
        ));
    }
    if nan == NanStyle::SignOnly && (f.negative_zero || !f.signed) {
        return Err(SpecError::new(
            DTYPES,
            t,
            "negative_zero",
            "the sign-only NaN takes the -0 code: set negative_zero = false on a signed dtype",
        ));
    }
    if !f.signed && f.negative_zero {
        return Err(SpecError::new(
            DTYPES,
            t,
            "negative_zero",
            "an unsigned dtype has no -0",
        ));
    }
    let ties_away = match f.rounding.as_deref() {
        None | Some("nearest-even") => false,
        Some("nearest-away") => true,
        Some(s) => {
            return Err(SpecError::new(
                DTYPES,
                t,
                "rounding",
                format!("unknown rounding `{s}` (nearest-even, nearest-away)"),
            ))
        }
    };
    if native && ties_away {
        return Err(SpecError::new(
            DTYPES,
            t,
            "rounding",
            "f32 and f64 compute as themselves and round to nearest even",
        ));
    }
    if !f.subnormals && nan == NanStyle::None {
        return Err(SpecError::new(
            DTYPES,
            t,
            "nan",
            "a dtype without subnormals has no zero, so it needs a NaN code for zero inputs",
        ));
    }
    let overflow_default = overflow_rule(t, "overflow", &f.overflow.default, f)?;
    let overflow_saturating = overflow_rule(t, "overflow", &f.overflow.saturating, f)?;
    let nan_to = match (nan, f.nan_to.as_deref()) {
        (NanStyle::None, Some("zero")) => NanTo::Zero,
        (NanStyle::None, Some("max-finite")) => NanTo::MaxFinite,
        (NanStyle::None, Some("zero-opposite-sign")) if f.signed && f.negative_zero => NanTo::ZeroOppositeSign,
        (NanStyle::None, Some("zero-opposite-sign")) => return Err(SpecError::new(DTYPES, t, "nan_to", "zero-opposite-sign needs a signed dtype with -0")),
        (NanStyle::None, Some(s)) => return Err(SpecError::new(DTYPES, t, "nan_to", format!("unknown rule `{s}` (zero, max-finite, zero-opposite-sign)"))),
        (NanStyle::None, None) => return Err(SpecError::new(DTYPES, t, "nan_to", "a dtype without NaN must say what a NaN becomes (zero, max-finite or zero-opposite-sign)")),
        (_, Some(_)) => return Err(SpecError::new(DTYPES, t, "nan_to", "only a dtype with nan = \"none\" takes nan_to")),
        (_, None) => NanTo::Nan,
    };
    let negative = match (f.signed, f.negative.as_deref()) {
        (false, Some("nan")) if nan != NanStyle::None => Negative::Nan,
        (false, Some("nan")) => {
            return Err(SpecError::new(
                DTYPES,
                t,
                "negative",
                "negative = \"nan\" needs a NaN code",
            ))
        }
        (false, Some("abs")) => Negative::Abs,
        (false, Some(s)) => {
            return Err(SpecError::new(
                DTYPES,
                t,
                "negative",
                format!("unknown rule `{s}` (nan, abs)"),
            ))
        }
        (false, None) => {
            return Err(SpecError::new(
                DTYPES,
                t,
                "negative",
                "an unsigned float must say what a negative input becomes (nan or abs)",
            ))
        }
        (true, Some(_)) => {
            return Err(SpecError::new(
                DTYPES,
                t,
                "negative",
                "only an unsigned float takes `negative`",
            ))
        }
        (true, None) => Negative::Keep,
    };
    // Largest finite magnitude code and its value.
    let all_exp = (1u64 << e) - 1;
    let all_man = (1u64 << m) - 1;
    let max_code = match nan {
        NanStyle::Ieee => ((all_exp - 1) << m) | all_man,
        NanStyle::AllOnes => ((all_exp << m) | all_man) - 1,
        _ => (all_exp << m) | all_man,
    };
    let value_of = |code: u64| -> f64 {
        let ef = code >> m;
        let mf = code & all_man;
        if ef == 0 && f.subnormals {
            mf as f64 * 2f64.powi(1 - f.bias - m as i32)
        } else {
            (1.0 + mf as f64 / 2f64.powi(m as i32)) * 2f64.powi(ef as i32 - f.bias)
        }
    };
    let max_finite = value_of(max_code);
    if (max_finite - f.max_finite).abs() > max_finite * 1e-15 {
        return Err(SpecError::new(
            DTYPES,
            t,
            "max_finite",
            format!(
                "{} does not match the parameters, whose largest finite value is {max_finite}",
                f.max_finite
            ),
        ));
    }
    if !native && max_finite > f32::MAX as f64 {
        return Err(SpecError::new(
            DTYPES,
            t,
            "bias",
            format!("the largest value {max_finite} does not fit the f32 carrier"),
        ));
    }
    let min_normal = if f.subnormals {
        2f64.powi(1 - f.bias)
    } else {
        2f64.powi(-f.bias)
    };
    let min_positive = if f.subnormals && m > 0 {
        2f64.powi(1 - f.bias - m as i32)
    } else {
        min_normal
    };
    Ok(FloatParams {
        info: FloatInfo {
            exponent_bits: e,
            mantissa_bits: m,
            bias: f.bias,
            signed: f.signed,
            subnormals: f.subnormals,
            infinities: f.infinities,
            nan,
            negative_zero: f.negative_zero,
            max_finite,
            min_normal,
            min_positive,
            epsilon: 2f64.powi(-(m as i32)),
            ties_away,
            overflow_default,
            overflow_saturating,
            nan_to,
            negative,
        },
        max_code,
    })
}

/// Parse a special value: a decimal, `inf`, `-inf`, `nan`, `-0`.
pub fn parse_special(s: &str) -> Option<f64> {
    match s {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => s.parse::<f64>().ok(),
    }
}

fn validate_kinds(file: KindsFile, operations: &[String]) -> Result<Vec<Kind>, SpecError> {
    let mut seen = HashSet::new();
    let mut out: Vec<Kind> = Vec::new();
    for raw in &file.kind {
        let table = format!("[[kind]] \"{}\"", raw.name);
        let t = table.as_str();
        check_name(KINDS, t, "name", &raw.name)?;
        if !seen.insert(raw.name.clone()) {
            return Err(SpecError::new(
                KINDS,
                t,
                "name",
                "this kind is declared twice",
            ));
        }
        let accuracy = match raw.accuracy.as_str() {
            "exact" => Accuracy::Exact,
            "ulp1" => Accuracy::Ulp1,
            "ulp35" => Accuracy::Ulp35,
            s => {
                return Err(SpecError::new(
                    KINDS,
                    t,
                    "accuracy",
                    format!("unknown accuracy class `{s}` (exact, ulp1, ulp35)"),
                ))
            }
        };
        if let Some(target) = &raw.alias {
            out.push(alias_kind(raw, t, target, accuracy, &out)?);
            continue;
        }
        let need = |key: &str, present: bool| {
            if present {
                Ok(())
            } else {
                Err(SpecError::new(
                    KINDS,
                    t,
                    key,
                    format!("missing field `{key}` (only an alias of another kind leaves it out)"),
                ))
            }
        };
        need("arity", raw.arity.is_some())?;
        need("accepts", raw.accepts.is_some())?;
        need("operands", raw.operands.is_some())?;
        need("result", raw.result.is_some())?;
        need("algorithm", raw.algorithm.is_some())?;
        let arity = raw.arity.unwrap_or_default();
        let accepts_raw = raw.accepts.clone().unwrap_or_default();
        let operands_raw = raw.operands.clone().unwrap_or_default();
        let result_raw = raw.result.clone().unwrap_or_default();
        let algorithm = raw.algorithm.clone().unwrap_or_default();
        let raw_floats = raw.raw_floats.unwrap_or(false);
        let specials = raw.specials.clone().unwrap_or_default();
        if !(1..=3).contains(&arity) {
            return Err(SpecError::new(
                KINDS,
                t,
                "arity",
                format!("arity {} is outside 1..=3", arity),
            ));
        }
        let mut accepts = Vec::new();
        if accepts_raw.is_empty() {
            return Err(SpecError::new(
                KINDS,
                t,
                "accepts",
                "a kind must accept at least one class",
            ));
        }
        for c in &accepts_raw {
            let class = Class::from_name(c).ok_or_else(|| {
                SpecError::new(
                    KINDS,
                    t,
                    "accepts",
                    format!("unknown class `{c}` (bool, int, uint, float, complex, pair)"),
                )
            })?;
            if accepts.contains(&class) {
                return Err(SpecError::new(
                    KINDS,
                    t,
                    "accepts",
                    format!("class {c} is listed twice"),
                ));
            }
            accepts.push(class);
        }
        let operands = match operands_raw.as_str() {
            "same" => OperandRule::Same,
            "cond-first" => OperandRule::CondFirst,
            "complex-real" => OperandRule::ComplexReal,
            s => {
                return Err(SpecError::new(
                    KINDS,
                    t,
                    "operands",
                    format!("unknown operand rule `{s}` (same, cond-first, complex-real)"),
                ))
            }
        };
        if operands == OperandRule::ComplexReal && (arity != 2 || accepts != [Class::Complex]) {
            return Err(SpecError::new(
                KINDS,
                t,
                "operands",
                "operands = \"complex-real\" takes a complex number and a real of its \
                 component dtype: the kind must have arity 2 and accept the class complex alone",
            ));
        }
        if operands == OperandRule::CondFirst && arity < 2 {
            return Err(SpecError::new(
                KINDS,
                t,
                "operands",
                format!(
                    "operands = \"cond-first\" needs a condition and at least one value \
                     (arity 2 or 3), not arity {}",
                    arity
                ),
            ));
        }
        let result = match result_raw.as_str() {
            "same" => ResultRule::Same,
            "bool" => ResultRule::Bool,
            "real" => ResultRule::Real,
            "pair" => ResultRule::Pair,
            "order" => ResultRule::Order,
            "complex" => ResultRule::Complex,
            s => {
                return Err(SpecError::new(
                    KINDS,
                    t,
                    "result",
                    format!("unknown result rule `{s}` (same, bool, real, pair, order, complex)"),
                ))
            }
        };
        if result == ResultRule::Complex && accepts != [Class::Float] {
            return Err(SpecError::new(
                KINDS,
                t,
                "result",
                "result = \"complex\" makes a complex number of the call's float dtype: the \
                 kind must accept the class float alone",
            ));
        }
        if result == ResultRule::Pair && accepts != [Class::Float] {
            return Err(SpecError::new(
                KINDS,
                t,
                "result",
                "result = \"pair\" makes a pair of the call's float dtype: the kind must \
                 accept the class float alone",
            ));
        }
        if raw_floats && !accepts.contains(&Class::Float) && !accepts.contains(&Class::Complex) {
            return Err(SpecError::new(
                KINDS,
                t,
                "raw_floats",
                "raw_floats = true changes how float and complex dtypes pass, and this kind \
                 accepts neither",
            ));
        }
        if raw_floats && accuracy != Accuracy::Exact {
            return Err(SpecError::new(
                KINDS,
                t,
                "raw_floats",
                format!(
                    "raw_floats = true passes float codes through undecoded, which only an \
                     exact kind can do (accuracy is \"{}\")",
                    raw.accuracy
                ),
            ));
        }
        for (i, sp) in specials.iter().enumerate() {
            if sp.len() != arity + 1 {
                return Err(SpecError::new(
                    KINDS,
                    t,
                    "specials",
                    format!("special #{i} has {} values; a kind of arity {} needs {} (inputs, then the result)", sp.len(), arity, arity + 1),
                ));
            }
            for v in sp {
                if parse_special(v).is_none() {
                    return Err(SpecError::new(
                        KINDS,
                        t,
                        "specials",
                        format!("special #{i}: `{v}` is not a number, inf, -inf, nan or -0"),
                    ));
                }
            }
        }
        // The algorithm: an operation of the runtime, and no other kind's.
        check_name(KINDS, t, "algorithm", &algorithm)?;
        let op = operations
            .iter()
            .find(|o| snake(o) == algorithm)
            .ok_or_else(|| {
                let names: Vec<String> = operations.iter().map(|o| snake(o)).collect();
                SpecError::new(
                    KINDS,
                    t,
                    "algorithm",
                    format!(
                        "unknown algorithm `{}` of kind `{}`: the runtime has no such operation \
                         (`pub enum Operation` in {OPS}); its operations are: {}",
                        algorithm,
                        raw.name,
                        names.join(", ")
                    ),
                )
            })?;
        if let Some(other) = out.iter().find(|k| k.alias.is_none() && k.op == *op) {
            return Err(SpecError::new(
                KINDS,
                t,
                "algorithm",
                format!(
                    "operation `{}` already computes kind `{}`: each operation of the \
                     runtime computes one kind (the catalogue maps each to the other)",
                    algorithm, other.name
                ),
            ));
        }
        out.push(Kind {
            name: raw.name.clone(),
            arity,
            accepts,
            operands,
            result,
            accuracy,
            op: op.clone(),
            raw_floats,
            specials,
            doc: raw.doc.clone(),
            alias: None,
        });
    }
    // Every operation of the runtime computes a kind.
    if let Some(op) = operations.iter().find(|o| !out.iter().any(|k| k.op == **o)) {
        return Err(SpecError::new(
            KINDS,
            "[[kind]]",
            "algorithm",
            format!(
                "operation `{op}` of the runtime (`pub enum Operation` in {OPS}) is the \
                 algorithm of no kind: add a [[kind]] with algorithm = \"{}\" to \
                 spec/kinds.toml, or remove the operation",
                snake(op)
            ),
        ));
    }
    Ok(out)
}

/// A kind that runs the kernels of an earlier kind `target` (`alias` in
/// spec/kinds.toml): everything of the target but its name, its stated
/// accuracy (no tighter than the target's) and its contract.
fn alias_kind(
    raw: &crate::model::RawKind,
    t: &str,
    target: &str,
    accuracy: Accuracy,
    earlier: &[Kind],
) -> Result<Kind, SpecError> {
    let own = [
        ("arity", raw.arity.is_some()),
        ("accepts", raw.accepts.is_some()),
        ("operands", raw.operands.is_some()),
        ("result", raw.result.is_some()),
        ("algorithm", raw.algorithm.is_some()),
        ("raw_floats", raw.raw_floats.is_some()),
        ("specials", raw.specials.is_some()),
    ];
    if let Some((key, _)) = own.iter().find(|(_, present)| *present) {
        return Err(SpecError::new(
            KINDS,
            t,
            key,
            format!("an alias takes `{key}` from the kind it aliases (`{target}`): leave it out"),
        ));
    }
    let (index, of) = earlier
        .iter()
        .enumerate()
        .find(|(_, k)| k.name == target)
        .ok_or_else(|| {
            SpecError::new(
                KINDS,
                t,
                "alias",
                format!("alias of `{target}`, which no earlier [[kind]] declares"),
            )
        })?;
    if of.alias.is_some() {
        return Err(SpecError::new(
            KINDS,
            t,
            "alias",
            format!("`{target}` is itself an alias: name the kind whose kernels it runs"),
        ));
    }
    let rank = |a: Accuracy| match a {
        Accuracy::Exact => 0,
        Accuracy::Ulp1 => 1,
        Accuracy::Ulp35 => 2,
    };
    if rank(accuracy) < rank(of.accuracy) {
        return Err(SpecError::new(
            KINDS,
            t,
            "accuracy",
            format!(
                "an alias runs `{target}`'s kernels and cannot promise more than they do \
                 (accuracy \"{}\" is tighter than theirs)",
                raw.accuracy
            ),
        ));
    }
    Ok(Kind {
        name: raw.name.clone(),
        accuracy,
        doc: raw.doc.clone(),
        alias: Some(index),
        ..of.clone()
    })
}

fn validate_loops(file: LoopsFile) -> Result<Vec<LoopVariant>, SpecError> {
    let mut out: Vec<LoopVariant> = Vec::new();
    for raw in &file.variant {
        let t = format!("[[variant]] \"{}\"", raw.name);
        check_name(LOOPS, &t, "name", &raw.name)?;
        let shape = match raw.shape.as_str() {
            "contiguous" => Shape::Contiguous,
            "one-broadcast" => Shape::OneBroadcast,
            "strided" => Shape::Strided,
            s => {
                return Err(SpecError::new(
                    LOOPS,
                    t,
                    "shape",
                    format!("unknown shape `{s}` (contiguous, one-broadcast, strided)"),
                ))
            }
        };
        if out.iter().any(|v| v.shape == shape || v.name == raw.name) {
            return Err(SpecError::new(
                LOOPS,
                t,
                "shape",
                "this loop variant is declared twice",
            ));
        }
        out.push(LoopVariant {
            name: raw.name.clone(),
            shape,
            doc: raw.doc.clone(),
        });
    }
    if !out.iter().any(|v| v.shape == Shape::Strided) {
        return Err(SpecError::new(
            LOOPS,
            "[[variant]]",
            "shape",
            "the strided variant is required: the engine falls back to it for any layout",
        ));
    }
    Ok(out)
}

const KNOWN_FEATURES: &[(&str, &[&str])] = &[
    (
        "x86_64",
        &[
            "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2", "fma", "f16c", "bmi1",
            "bmi2", "lzcnt", "popcnt", "avx512f", "avx512bw", "avx512vl", "avx512dq",
        ],
    ),
    ("aarch64", &["neon", "fp16", "sve", "sve2"]),
];

fn validate_tiers(file: TiersFile, dtypes: &[DType]) -> Result<Vec<Tier>, SpecError> {
    let mut out: Vec<Tier> = Vec::new();
    for raw in &file.tier {
        let t = format!("[[tier]] \"{}\"", raw.name);
        check_name(TIERS, &t, "name", &raw.name)?;
        if out.iter().any(|x| x.name == raw.name) {
            return Err(SpecError::new(
                TIERS,
                t,
                "name",
                "this tier is declared twice",
            ));
        }
        if raw.arch == "any" {
            if !raw.features.is_empty() {
                return Err(SpecError::new(
                    TIERS,
                    t,
                    "features",
                    "a tier for any architecture cannot need CPU features",
                ));
            }
        } else {
            let known = KNOWN_FEATURES
                .iter()
                .find(|(a, _)| *a == raw.arch)
                .ok_or_else(|| {
                    SpecError::new(
                        TIERS,
                        t.clone(),
                        "arch",
                        format!("unknown architecture `{}` (any, x86_64, aarch64)", raw.arch),
                    )
                })?;
            for f in &raw.features {
                if !known.1.contains(&f.as_str()) {
                    return Err(SpecError::new(
                        TIERS,
                        t,
                        "features",
                        format!("unknown {} feature `{f}`", raw.arch),
                    ));
                }
            }
        }
        let mut fast_casts = Vec::new();
        for fc in &raw.fast_casts {
            let f16_params = |name: &str| {
                dtypes.iter().find(|d| d.name == name).and_then(|d| {
                    let f = d.float.as_ref()?;
                    (f.exponent_bits == 5
                        && f.mantissa_bits == 10
                        && f.bias == 15
                        && f.nan == NanStyle::Ieee)
                        .then(|| format!("{}Params", d.ident()))
                })
            };
            // A 64-bit integer destination: its carrier names the Rust type.
            let int64_params = |name: &str| {
                dtypes.iter().find(|d| d.name == name).and_then(|d| {
                    (matches!(d.class, Class::Int | Class::Uint) && d.bits == 64)
                        .then(|| d.carrier.clone())
                })
            };
            // A complex dtype of binary16 parts: its part's parameters.
            let complex_f16_params = |name: &str| {
                dtypes
                    .iter()
                    .find(|d| d.name == name && d.class == Class::Complex)
                    .and_then(|d| f16_params(d.component.as_deref()?))
            };
            let (ok, params) = match fc.function.as_str() {
                "f16c_widen" => (fc.dst == "f32", f16_params(&fc.src)),
                "f16c_narrow" => (fc.src == "f32", f16_params(&fc.dst)),
                "f16c_widen_real" => (fc.dst == "f32", complex_f16_params(&fc.src)),
                "f16c_narrow_complex" => (fc.src == "f32", complex_f16_params(&fc.dst)),
                "f32_to_int64" => (fc.src == "f32", int64_params(&fc.dst)),
                other => {
                    return Err(SpecError::new(
                        TIERS,
                        t,
                        "fast_casts",
                        format!(
                            "unknown fast cast `{other}` (f16c_widen, f16c_narrow, \
                             f16c_widen_real, f16c_narrow_complex, f32_to_int64)"
                        ),
                    ))
                }
            };
            let params = match (ok, params) {
                (true, Some(p)) => p,
                _ => {
                    return Err(SpecError::new(
                        TIERS,
                        t,
                        "fast_casts",
                        format!(
                            "`{}` converts {}, not {} → {}",
                            fc.function,
                            match fc.function.as_str() {
                                "f32_to_int64" => "f32 to a 64-bit integer",
                                "f16c_widen_real" | "f16c_narrow_complex" => {
                                    "between f32 and a complex dtype of IEEE binary16 parts"
                                }
                                _ => "between f32 and an IEEE binary16 dtype",
                            },
                            fc.src,
                            fc.dst
                        ),
                    ))
                }
            };
            let feature = if fc.function == "f32_to_int64" {
                "avx2"
            } else {
                "f16c"
            };
            if raw.arch != "x86_64" || !raw.features.iter().any(|f| f == feature) {
                return Err(SpecError::new(
                    TIERS,
                    t,
                    "fast_casts",
                    format!(
                        "`{}` needs an x86_64 tier with the {feature} feature",
                        fc.function
                    ),
                ));
            }
            fast_casts.push(FastCast {
                src: fc.src.clone(),
                dst: fc.dst.clone(),
                function: fc.function.clone(),
                params,
            });
        }
        out.push(Tier {
            fast_casts,
            name: raw.name.clone(),
            arch: raw.arch.clone(),
            features: raw.features.clone(),
            doc: raw.doc.clone(),
        });
    }
    if out.first().map(|t| t.name.as_str()) != Some("scalar") || out[0].arch != "any" {
        return Err(SpecError::new(
            TIERS,
            "[[tier]]",
            "name",
            "the first tier must be `scalar`, for any architecture: it is the reference",
        ));
    }
    Ok(out)
}

fn validate_formats(file: FormatsFile, dtypes: &[DType]) -> Result<Vec<Format>, SpecError> {
    let mut out: Vec<Format> = Vec::new();
    for raw in &file.format {
        let table = format!("[[format]] \"{}\"", raw.name);
        let t = table.as_str();
        check_name(FORMATS, t, "name", &raw.name)?;
        if out
            .iter()
            .any(|f| f.name == raw.name || f.aliases.contains(&raw.name))
        {
            return Err(SpecError::new(
                FORMATS,
                t,
                "name",
                "this format is declared twice",
            ));
        }
        for a in &raw.aliases {
            if *a == raw.name || out.iter().any(|f| f.name == *a || f.aliases.contains(a)) {
                return Err(SpecError::new(
                    FORMATS,
                    t,
                    "aliases",
                    format!("`{a}` is already the name or an alias of another format"),
                ));
            }
        }
        let find = |key: &str, name: &str| -> Result<&DType, SpecError> {
            dtypes
                .iter()
                .find(|d| d.name == name)
                .ok_or_else(|| SpecError::new(FORMATS, t, key, format!("unknown dtype `{name}`")))
        };
        let element = find("element", &raw.element)?;
        if !matches!(element.class, Class::Float | Class::Int) {
            return Err(SpecError::new(
                FORMATS,
                t,
                "element",
                "the element must be a float or a signed integer dtype",
            ));
        }
        let scale = find("scale", &raw.scale)?;
        if scale.class != Class::Float || scale.float.as_ref().is_some_and(|f| f.signed) {
            return Err(SpecError::new(
                FORMATS,
                t,
                "scale",
                "the scale must be an unsigned float dtype",
            ));
        }
        if let Some(ts) = &raw.tensor_scale {
            find("tensor_scale", ts)?;
        }
        if raw.block == 0 || raw.block % element.values_per_byte as usize != 0 {
            return Err(SpecError::new(
                FORMATS,
                t,
                "block",
                format!(
                    "a block of {} does not hold whole bytes of {}",
                    raw.block, element.name
                ),
            ));
        }
        let fraction_bits = match (element.class, raw.fraction_bits) {
            (Class::Int, Some(f)) if f < element.bits => f,
            (Class::Int, Some(f)) => {
                return Err(SpecError::new(
                    FORMATS,
                    t,
                    "fraction_bits",
                    format!(
                        "{f} fraction bits do not fit a {}-bit element",
                        element.bits
                    ),
                ))
            }
            (Class::Int, None) => {
                return Err(SpecError::new(
                    FORMATS,
                    t,
                    "fraction_bits",
                    "an integer element needs fraction_bits (its fixed-point scaling)",
                ))
            }
            (_, Some(_)) => {
                return Err(SpecError::new(
                    FORMATS,
                    t,
                    "fraction_bits",
                    "only an integer element takes fraction_bits",
                ))
            }
            (_, None) => 0,
        };
        let scale_rule = match raw.scale_rule.as_str() {
            "floor" => ScaleRule::Floor,
            "ceil" | "rceil" => ScaleRule::Ceil,
            "nvfp4" => ScaleRule::Nvfp4,
            s => {
                return Err(SpecError::new(
                    FORMATS,
                    t,
                    "scale_rule",
                    format!("unknown scale rule `{s}` (floor, ceil, rceil, nvfp4)"),
                ))
            }
        };
        if scale_rule == ScaleRule::Nvfp4 && raw.tensor_scale.is_none() {
            return Err(SpecError::new(
                FORMATS,
                t,
                "tensor_scale",
                "the nvfp4 scale rule needs a tensor scale",
            ));
        }
        out.push(Format {
            name: raw.name.clone(),
            aliases: raw.aliases.clone(),
            element: raw.element.clone(),
            scale: raw.scale.clone(),
            block: raw.block,
            tensor_scale: raw.tensor_scale.clone(),
            fraction_bits,
            scale_rule,
            doc: raw.doc.clone(),
        });
    }
    Ok(out)
}
