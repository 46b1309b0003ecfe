//! What the generator emits: a new dtype added by editing `spec/dtypes.toml`
//! alone reaches the catalogue, the codecs, every tier's kernels and the
//! dispatch tables; generation is deterministic, every file carries its
//! `@generated` header and parses, and the committed `generated/` is exactly
//! what the spec produces.

mod common;
use common::*;

use quote::ToTokens;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;
use tessera_codegen::{generate, parse_spec, GeneratedFile, SpecSources};

fn generate_from(src: &SpecSources) -> Vec<GeneratedFile> {
    let spec = parse_spec(src).unwrap_or_else(|e| panic!("spec refused: {e}"));
    generate(&spec)
}

/// The files of the real spec, generated once for the tests that only read them.
fn real_files() -> &'static [GeneratedFile] {
    static FILES: OnceLock<Vec<GeneratedFile>> = OnceLock::new();
    FILES.get_or_init(|| generate_from(&real()))
}

/// The files of the real spec plus e3m3, generated once.
fn e3m3_files() -> &'static [GeneratedFile] {
    static FILES: OnceLock<Vec<GeneratedFile>> = OnceLock::new();
    FILES.get_or_init(|| generate_from(&with_e3m3()))
}

fn file<'a>(files: &'a [GeneratedFile], path: &str) -> &'a str {
    &files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} is not generated"))
        .text
}

fn parse(path: &str, text: &str) -> syn::File {
    syn::parse_file(text).unwrap_or_else(|e| panic!("{path} does not parse: {e}"))
}

/// Token text with every space removed, for comparing emitted expressions.
fn squash<T: ToTokens>(t: &T) -> String {
    t.to_token_stream()
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

// ---- the new dtype --------------------------------------------------------

const E: u32 = 3;
const M: u32 = 3;
const BIAS: i32 = 3;

/// Largest finite value of a signed float with subnormals, no infinities and
/// no NaN code: every code is a number, so the all-ones exponent and mantissa
/// is the largest, (2 - 2^-M) * 2^(2^E - 1 - BIAS).
fn e3m3_max_finite() -> f64 {
    let top_exponent = (1i32 << E) - 1 - BIAS;
    (2.0 - 2f64.powi(-(M as i32))) * 2f64.powi(top_exponent)
}

/// Its largest magnitude code: exponent and mantissa fields all ones.
fn e3m3_max_code() -> u32 {
    (1 << (E + M)) - 1
}

fn e3m3_table() -> String {
    format!(
        r#"
[[dtype]]
name = "e3m3"
aliases = ["float7_e3m3", "E3M3_TEST"]
class = "float"
bits = 7
carrier = "f32"
accumulator = "f32"
doc = "A 7-bit float: E3M3, bias 3, no infinities or NaN."
[dtype.float]
exponent_bits = {E}
mantissa_bits = {M}
bias = {BIAS}
signed = true
subnormals = true
infinities = false
nan = "none"
negative_zero = true
max_finite = {max:?}
overflow = {{ default = "max-finite", saturating = "max-finite" }}
nan_to = "zero"
"#,
        max = e3m3_max_finite()
    )
}

fn with_e3m3() -> SpecSources {
    let mut src = real();
    src.dtypes = format!("{}\n{}", src.dtypes.trim_end(), e3m3_table());
    src
}

/// What the spec files say, read with a plain TOML parser.
struct SpecFacts {
    dtypes: Vec<String>,
    /// (name, arity, accepts, result rule: a kind that makes a pair exists
    /// for f32 and f64 alone, one that makes a complex number for f32, f64
    /// and each complex dtype's component)
    kinds: Vec<(String, usize, Vec<String>, String)>,
    /// alias → the kind whose kernels it runs
    aliases: BTreeMap<String, String>,
    /// loop shapes in file order
    shapes: Vec<String>,
    /// (name, arch, features)
    tiers: Vec<(String, String, Vec<String>)>,
}

fn facts(src: &SpecSources) -> SpecFacts {
    let table = |text: &str| text.parse::<toml::Table>().expect("valid TOML");
    let arr = |t: &toml::Table, k: &str| t[k].as_array().expect("an array").clone();
    let strs = |v: &toml::Value| -> Vec<String> {
        v.as_array()
            .expect("an array")
            .iter()
            .map(|x| x.as_str().expect("a string").to_string())
            .collect()
    };
    let d = table(&src.dtypes);
    let k = table(&src.kinds);
    let l = table(&src.loops);
    let t = table(&src.tiers);
    SpecFacts {
        dtypes: arr(&d, "dtype")
            .iter()
            .map(|x| x["name"].as_str().unwrap().to_string())
            .collect(),
        kinds: arr(&k, "kind")
            .iter()
            .map(|entry| {
                // An alias (`alias = "exp2"`) has its target's kernels: the
                // target's arity, classes and result, under its own name.
                let kinds = arr(&k, "kind");
                let x = match entry.get("alias").and_then(|a| a.as_str()) {
                    Some(target) => kinds
                        .iter()
                        .find(|t| t["name"].as_str() == Some(target))
                        .expect("an alias names a declared kind")
                        .clone(),
                    None => entry.clone(),
                };
                (
                    entry["name"].as_str().unwrap().to_string(),
                    x["arity"].as_integer().unwrap() as usize,
                    strs(&x["accepts"]),
                    x["result"].as_str().unwrap().to_string(),
                )
            })
            .collect(),
        aliases: arr(&k, "kind")
            .iter()
            .filter_map(|x| {
                let target = x.get("alias")?.as_str()?.to_string();
                Some((x["name"].as_str().unwrap().to_string(), target))
            })
            .collect(),
        shapes: arr(&l, "variant")
            .iter()
            .map(|x| x["shape"].as_str().unwrap().to_string())
            .collect(),
        tiers: arr(&t, "tier")
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_string(),
                    x["arch"].as_str().unwrap().to_string(),
                    strs(&x["features"]),
                )
            })
            .collect(),
    }
}

/// The loop variants of a kind of `arity` inputs, from the shapes of
/// loops.toml as its header documents them.
fn variants(facts: &SpecFacts, arity: usize) -> Vec<String> {
    let mut out = Vec::new();
    for s in &facts.shapes {
        match s.as_str() {
            "contiguous" => out.push("contig".to_string()),
            "one-broadcast" if arity >= 2 => out.extend((0..arity).map(|k| format!("bcast{k}"))),
            "one-broadcast" => {}
            "strided" => out.push("strided".to_string()),
            other => panic!("unknown shape {other}"),
        }
    }
    out
}

/// The kernels the spec declares for `dtype` (class float): (kind, variant).
fn float_kernels(facts: &SpecFacts) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (kind, arity, accepts, result) in &facts.kinds {
        // (e3m3 is a narrow float: no pair of it, and no complex dtype.)
        if accepts.iter().any(|c| c == "float") && result != "pair" && result != "complex" {
            for v in variants(facts, *arity) {
                out.push((kind.clone(), v));
            }
        }
    }
    out
}

/// What `tiers.rs` defines, read from the token trees of its macros: the
/// kernels every tier shares, each tier's own, the order of the two tables,
/// and each tier's attributes.
struct Tiers {
    /// name → (callee, more arguments), the kernels and casts of every tier
    /// (from `__tier_body!`).
    shared: BTreeMap<String, (String, Option<String>)>,
    /// tier → its own entries (from its `tier!` arm).
    own: BTreeMap<String, BTreeMap<String, (String, Option<String>)>>,
    /// tier → the attribute its functions get, and the `cfg` of its module.
    attrs: BTreeMap<String, (String, Option<String>)>,
    /// The paths of `KERNELS` and of `CASTS`, in table order.
    kernels: Vec<String>,
    casts: Vec<String>,
}

fn macro_tokens(file: &syn::File, name: &str) -> proc_macro2::TokenStream {
    file.items
        .iter()
        .find_map(|i| match i {
            syn::Item::Macro(m) if m.ident.as_ref().is_some_and(|i| i == name) => {
                Some(m.mac.tokens.clone())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("tiers.rs has no macro_rules! {name}"))
}

fn tokens_text(ts: &[proc_macro2::TokenTree]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<String>()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// The entries `name (callee) [(more)]` of a `__tier_fns!`/`__tier_body!`
/// body, after its attribute (`$attr`, or a bracketed attribute).
fn entries(body: proc_macro2::TokenStream) -> BTreeMap<String, (String, Option<String>)> {
    use proc_macro2::{Delimiter, TokenTree};
    let toks: Vec<TokenTree> = body.into_iter().collect();
    let mut i = match &toks[0] {
        TokenTree::Punct(p) if p.as_char() == '$' => 2,
        TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => 1,
        other => panic!("an entry list starts with its attribute, not {other}"),
    };
    let mut out = BTreeMap::new();
    let paren = |t: Option<&TokenTree>| match t {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
            Some(tokens_text(&g.stream().into_iter().collect::<Vec<_>>()))
        }
        _ => None,
    };
    if toks.get(i).is_some_and(|t| t.to_string() == "$") {
        return out; // `$($own)*`
    }
    while i < toks.len() {
        let name = match &toks[i] {
            TokenTree::Ident(id) => id.to_string(),
            other => panic!("an entry starts with its name, not {other}"),
        };
        let callee = paren(toks.get(i + 1)).unwrap_or_else(|| panic!("{name} has no callee"));
        let more = paren(toks.get(i + 2));
        i += if more.is_some() { 3 } else { 2 };
        assert!(
            out.insert(name.clone(), (callee, more)).is_none(),
            "{name} twice"
        );
    }
    out
}

/// Every `NAME! { ... }` invocation's body in `ts`, at any depth.
fn invocations(ts: proc_macro2::TokenStream, name: &str, out: &mut Vec<proc_macro2::TokenStream>) {
    use proc_macro2::TokenTree;
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    for (i, t) in toks.iter().enumerate() {
        if let TokenTree::Ident(id) = t {
            if id == name {
                if let (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    if p.as_char() == '!' {
                        out.push(g.stream());
                        continue;
                    }
                }
            }
        }
        if let TokenTree::Group(g) = t {
            invocations(g.stream(), name, out);
        }
    }
}

/// The paths of `pub static NAME: [...] = [ paths ];` in `ts`.
fn table_paths(ts: proc_macro2::TokenStream, name: &str) -> Option<Vec<String>> {
    use proc_macro2::{Delimiter, TokenTree};
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    for (i, t) in toks.iter().enumerate() {
        if matches!(t, TokenTree::Ident(id) if id == name) {
            let eq = toks[i..].iter().position(|t| t.to_string() == "=")? + i;
            if let Some(TokenTree::Group(g)) = toks.get(eq + 1) {
                if g.delimiter() == Delimiter::Bracket {
                    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                    return Some(
                        inner
                            .split(|t| t.to_string() == ",")
                            .filter(|p| !p.is_empty())
                            .map(tokens_text)
                            .collect(),
                    );
                }
            }
        }
        if let TokenTree::Group(g) = t {
            if let Some(p) = table_paths(g.stream(), name) {
                return Some(p);
            }
        }
    }
    None
}

fn tiers_of(files: &[GeneratedFile]) -> Tiers {
    use proc_macro2::{Delimiter, TokenTree};
    let f = parse("tiers.rs", file(files, "tiers.rs"));
    let body = macro_tokens(&f, "__tier_body");
    let mut fns = Vec::new();
    invocations(body.clone(), "__tier_fns", &mut fns);
    let mut shared = BTreeMap::new();
    for b in fns {
        shared.extend(entries(b));
    }
    // The arms of tier!: `(name) => { ... }`.
    let arms: Vec<TokenTree> = macro_tokens(&f, "tier").into_iter().collect();
    let mut own = BTreeMap::new();
    let mut attrs = BTreeMap::new();
    for w in arms.windows(4) {
        if let (TokenTree::Group(pat), TokenTree::Group(arm)) = (&w[0], &w[3]) {
            if pat.delimiter() != Delimiter::Parenthesis || arm.delimiter() != Delimiter::Brace {
                continue;
            }
            let tier = pat.stream().to_string();
            let mut bodies = Vec::new();
            invocations(arm.stream(), "__tier_body", &mut bodies);
            assert_eq!(bodies.len(), 1, "tier!({tier}) invokes __tier_body! once");
            let attr = match bodies[0].clone().into_iter().next() {
                Some(TokenTree::Group(g)) => {
                    tokens_text(&g.stream().into_iter().collect::<Vec<_>>())
                }
                other => panic!("tier!({tier}): no attribute but {other:?}"),
            };
            let arm_toks: Vec<TokenTree> = arm.stream().into_iter().collect();
            let cfg = arm_toks.windows(2).find_map(|w| match (&w[0], &w[1]) {
                (TokenTree::Punct(p), TokenTree::Group(g)) if p.as_char() == '#' => {
                    let t = tokens_text(&g.stream().into_iter().collect::<Vec<_>>());
                    t.starts_with("cfg(").then_some(t)
                }
                _ => None,
            });
            attrs.insert(tier.clone(), (attr, cfg));
            own.insert(tier, entries(bodies.remove(0)));
        }
    }
    Tiers {
        shared,
        own,
        attrs,
        kernels: table_paths(body.clone(), "KERNELS").expect("a KERNELS table"),
        casts: table_paths(body, "CASTS").expect("a CASTS table"),
    }
}

/// The elements of `static NAME: [T; N] = [ ... ];`.
fn static_array<'a>(file: &'a syn::File, name: &str) -> (&'a syn::ItemStatic, Vec<&'a syn::Expr>) {
    for item in &file.items {
        if let syn::Item::Static(s) = item {
            if s.ident == name {
                match &*s.expr {
                    syn::Expr::Array(a) => return (s, a.elems.iter().collect()),
                    other => panic!("{name} is not an array: {}", squash(other)),
                }
            }
        }
    }
    panic!("no static {name}")
}

/// A named field of a struct expression, searched through `Some(..)` calls.
fn field<'a>(e: &'a syn::Expr, name: &str) -> Option<&'a syn::Expr> {
    match e {
        syn::Expr::Struct(s) => s
            .fields
            .iter()
            .find(|f| matches!(&f.member, syn::Member::Named(i) if i == name))
            .map(|f| &f.expr)
            .or_else(|| s.fields.iter().find_map(|f| field(&f.expr, name))),
        syn::Expr::Call(c) => c.args.iter().find_map(|a| field(a, name)),
        _ => None,
    }
}

fn lit_f64(e: &syn::Expr) -> f64 {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse().unwrap(),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<i64>().unwrap() as f64,
        other => panic!("not a number literal: {}", squash(other)),
    }
}

fn lit_i64(e: &syn::Expr) -> i64 {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().unwrap(),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => -lit_i64(&u.expr),
        other => panic!("not an integer literal: {}", squash(other)),
    }
}

#[test]
fn e3m3_parameters_are_what_the_test_computed() {
    // The formula above, checked on the real dtypes it also describes.
    assert_eq!(e3m3_max_finite(), 30.0);
    assert_eq!(e3m3_max_code(), 63);
    // Decode the top code by hand: exponent field 7, mantissa field 7.
    let code = e3m3_max_code();
    let (ef, mf) = (code >> M, code & ((1 << M) - 1));
    let v = (1.0 + mf as f64 / (1 << M) as f64) * 2f64.powi(ef as i32 - BIAS);
    assert_eq!(v, e3m3_max_finite());
}

#[test]
fn e3m3_with_a_wrong_max_finite_is_refused() {
    let mut src = with_e3m3();
    src.dtypes = src.dtypes.replace(
        &format!(
            "max_finite = {:?}\noverflow = {{ default = \"max-finite\"",
            e3m3_max_finite()
        ),
        "max_finite = 31.0\noverflow = { default = \"max-finite\"",
    );
    let e = parse_spec(&src).expect_err("31 is not e3m3's largest value");
    assert_eq!(e.table, "[[dtype]] \"e3m3\"");
    assert_eq!(e.key, "max_finite");
}

#[test]
fn e3m3_reaches_the_catalogue() {
    let src = with_e3m3();
    let files = e3m3_files();
    let f = facts(&src);
    let catalog = parse("catalog.rs", file(files, "catalog.rs"));

    // The DType enum: one variant per dtype, in file order, E3m3 last.
    let dtype_enum = catalog
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Enum(e) if e.ident == "DType" => Some(e),
            _ => None,
        })
        .expect("enum DType");
    let variants: Vec<String> = dtype_enum
        .variants
        .iter()
        .map(|v| v.ident.to_string())
        .collect();
    let expected: Vec<String> = f.dtypes.iter().map(|d| camel(d)).collect();
    assert_eq!(variants, expected);
    assert_eq!(variants.last().map(String::as_str), Some("E3m3"));

    // Its metadata row.
    let (info_static, rows) = static_array(&catalog, "DTYPE_INFO");
    assert_eq!(rows.len(), f.dtypes.len());
    assert!(squash(&info_static.ty).contains(&format!(";{}", f.dtypes.len())));
    let row = *rows.last().unwrap();
    let get = |k: &str| field(row, k).unwrap_or_else(|| panic!("no field {k} in {}", squash(row)));
    assert_eq!(squash(get("name")), "\"e3m3\"");
    assert_eq!(squash(get("aliases")), "&[\"float7_e3m3\",\"E3M3_TEST\"]");
    assert_eq!(squash(get("class")), "Class::Float");
    assert_eq!(lit_i64(get("bits")), 7);
    assert_eq!(lit_i64(get("values_per_byte")), 1);
    assert_eq!(lit_i64(get("item_bytes")), 1);
    assert_eq!(squash(get("carrier")), "\"f32\"");
    assert_eq!(lit_i64(get("exponent_bits")), E as i64);
    assert_eq!(lit_i64(get("mantissa_bits")), M as i64);
    assert_eq!(lit_i64(get("bias")), BIAS as i64);
    assert_eq!(squash(get("nan")), "NanStyle::None");
    assert_eq!(squash(get("infinities")), "false");
    assert_eq!(lit_f64(get("max_finite")), e3m3_max_finite());
    assert_eq!(lit_f64(get("min_normal")), 2f64.powi(1 - BIAS));
    assert_eq!(lit_f64(get("min_positive")), 2f64.powi(1 - BIAS - M as i32));
    assert_eq!(lit_f64(get("epsilon")), 2f64.powi(-(M as i32)));
    assert_eq!(squash(get("overflow_default")), "Overflow::MaxFinite");
    assert_eq!(squash(get("overflow_saturating")), "Overflow::MaxFinite");
    assert_eq!(squash(get("nan_to")), "NanTo::Zero");
    assert_eq!(squash(get("negative")), "Negative::Keep");

    // Parsing a name: the name and every alias, case-folded.
    let text: String = file(files, "catalog.rs")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    assert!(
        text.contains("\"e3m3\"|\"float7_e3m3\"|\"e3m3_test\"=>Some(DType::E3m3)"),
        "DType::from_name has no arm for e3m3"
    );
}

#[test]
fn e3m3_gets_a_codec_with_its_parameters() {
    let files = e3m3_files();
    let codecs = parse("codecs.rs", file(files, "codecs.rs"));
    assert!(
        codecs
            .items
            .iter()
            .any(|i| matches!(i, syn::Item::Struct(s) if s.ident == "E3m3Params")),
        "no struct E3m3Params"
    );
    let alias = codecs
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Type(t) if t.ident == "E3m3" => Some(squash(&t.ty)),
            _ => None,
        })
        .expect("type E3m3 = ...");
    assert_eq!(alias, "Mini<E3m3Params>");
    let imp = codecs
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Impl(im) if squash(&im.self_ty) == "E3m3Params" => Some(im),
            _ => None,
        })
        .expect("impl MiniFloat for E3m3Params");
    assert_eq!(
        imp.trait_.as_ref().map(|(_, p, _)| squash(p)).as_deref(),
        Some("MiniFloat")
    );
    let mut consts = BTreeMap::new();
    let mut store = None;
    for it in &imp.items {
        match it {
            syn::ImplItem::Const(c) => {
                consts.insert(c.ident.to_string(), c.expr.clone());
            }
            syn::ImplItem::Type(t) if t.ident == "Store" => store = Some(squash(&t.ty)),
            _ => {}
        }
    }
    assert_eq!(
        store.as_deref(),
        Some("u8"),
        "a 7-bit code is stored in one byte"
    );
    let c = |k: &str| consts.get(k).unwrap_or_else(|| panic!("no const {k}"));
    assert_eq!(lit_i64(c("EXP_BITS")), E as i64);
    assert_eq!(lit_i64(c("MAN_BITS")), M as i64);
    assert_eq!(lit_i64(c("BIAS")), BIAS as i64);
    assert_eq!(squash(c("SIGNED")), "true");
    assert_eq!(squash(c("SUBNORMALS")), "true");
    assert_eq!(squash(c("INFINITIES")), "false");
    assert_eq!(squash(c("NAN")), "NanStyle::None");
    assert_eq!(squash(c("NEG_ZERO")), "true");
    assert_eq!(lit_i64(c("MAX_CODE")), e3m3_max_code() as i64);
    assert_eq!(squash(c("OVERFLOW")), "Overflow::MaxFinite");
    assert_eq!(squash(c("OVERFLOW_SAT")), "Overflow::MaxFinite");
    assert_eq!(squash(c("NAN_TO")), "NanTo::Zero");
    assert_eq!(squash(c("NEGATIVE")), "Negative::Keep");
}

#[test]
fn e3m3_gets_every_float_kernel_on_every_tier() {
    let src = with_e3m3();
    let f = facts(&src);
    let files = e3m3_files();
    let base_files = real_files();
    // An alias's table entries are its target's functions: none of its own.
    let expected: BTreeSet<String> = float_kernels(&f)
        .iter()
        .filter(|(k, _)| !f.aliases.contains_key(k))
        .map(|(k, v)| format!("{k}_e3m3_{v}"))
        .collect();
    assert!(expected.contains("add_e3m3_bcast1"));
    assert!(expected.contains("fma_e3m3_bcast2"));
    assert!(expected.contains("sqrt_e3m3_strided"));
    assert!(!expected.contains("sqrt_e3m3_bcast0"));

    let tiers = tiers_of(files);
    let before = tiers_of(base_files);
    let e3m3: BTreeSet<String> = tiers
        .shared
        .keys()
        .filter(|n| n.contains("_e3m3_") && !n.starts_with("cast_"))
        .cloned()
        .collect();
    assert_eq!(e3m3, expected, "the e3m3 kernels of tiers.rs");
    // Every other kernel is still there, and nothing else was added.
    let others: BTreeSet<&String> = tiers
        .shared
        .keys()
        .filter(|n| !n.contains("_e3m3_") && !n.starts_with("cast_"))
        .collect();
    let others_before: BTreeSet<&String> = before
        .shared
        .keys()
        .filter(|n| !n.starts_with("cast_"))
        .collect();
    assert_eq!(others, others_before);
    for name in &expected {
        let (callee, more) = &tiers.shared[name];
        let variant = name.rsplit('_').next().unwrap().to_ascii_uppercase();
        if variant == "STRIDED" {
            // A strided kernel is the runtime's one tiling function over
            // the same kernel's contiguous variant, with e3m3's one-byte
            // codes in and its result's codec out.
            let more = more.as_deref().unwrap_or("");
            let contig = name.replace("_strided", "_contig");
            assert_eq!(callee, "tiled", "{name}");
            assert!(more.ends_with(&format!("::{contig}")), "{name}: {more}");
            assert!(
                more.contains("store_bytes::<E3m3>()") || more.contains("store_bytes::<Raw<u8>>()"),
                "{name}: {more}"
            );
            continue;
        }
        // Each kernel runs the variant's loop: through the carrier's kernels
        // (casts of e3m3 in and out), or select on the raw codes.
        assert!(
            callee.ends_with(&format!(",{variant}>")),
            "{name} does not run the {variant} loop: {callee}"
        );
        let more = more.as_deref().unwrap_or("");
        assert!(
            (callee.starts_with("run_through::<f32,") && more.contains("cast_e3m3_f32_dflt"))
                || callee.contains("Raw<u8>"),
            "{name} does not use e3m3's codec: {callee} ({more})"
        );
    }
    // Every tier instantiates them under its own features, on its own arch.
    for (tier, arch, features) in &f.tiers {
        let (attr, cfg) = &tiers.attrs[tier];
        if arch == "any" {
            assert_eq!(attr, "cfg(all())", "{tier}");
            assert!(cfg.is_none(), "{tier} is always built");
        } else {
            assert_eq!(
                attr,
                &format!("target_feature(enable=\"{}\")", features.join(",")),
                "{tier}"
            );
            assert_eq!(
                cfg.as_deref(),
                Some(&*format!("cfg(target_arch=\"{arch}\")")),
                "{tier}"
            );
        }
    }
}

/// (kind, dtype, variant) of a `KernelInfo::new(..)` row, as written.
fn kernel_info(e: &syn::Expr) -> (String, String, String) {
    let syn::Expr::Call(call) = e else {
        panic!("not a KernelInfo::new call: {}", squash(e))
    };
    let args: Vec<String> = call
        .args
        .iter()
        .map(|a| squash(a).rsplit("::").next().unwrap().to_string())
        .collect();
    assert_eq!(args.len(), 3, "{}", squash(e));
    (args[0].clone(), args[1].clone(), args[2].clone())
}

#[test]
fn e3m3_gets_table_entries_on_every_tier() {
    let src = with_e3m3();
    let f = facts(&src);
    let files = e3m3_files();
    let base = real_files();
    let table = parse("table.rs", file(files, "table.rs"));
    let base_table = parse("table.rs", file(base, "table.rs"));

    let (_, rows) = static_array(&table, "KERNELS");
    let (_, base_rows) = static_array(&base_table, "KERNELS");
    let new_kernels = float_kernels(&f);
    assert_eq!(rows.len(), base_rows.len() + new_kernels.len());

    let count = table
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Const(c) if c.ident == "KERNEL_COUNT" => Some(lit_i64(&c.expr)),
            _ => None,
        })
        .expect("KERNEL_COUNT");
    assert_eq!(count as usize, rows.len());

    let infos: Vec<(String, String, String)> = rows.iter().map(|r| kernel_info(r)).collect();
    let e3m3: BTreeSet<(String, String)> = infos
        .iter()
        .filter(|(_, d, _)| d == "E3m3")
        .map(|(k, _, v)| (k.clone(), v.to_ascii_lowercase()))
        .collect();
    let expected: BTreeSet<(String, String)> = new_kernels
        .iter()
        .map(|(k, v)| (camel(k), v.clone()))
        .collect();
    assert_eq!(e3m3, expected);

    // Every tier's table holds, at every index, the function of that kernel.
    let kind_names: BTreeMap<String, String> = f
        .kinds
        .iter()
        .map(|(k, _, _, _)| (camel(k), k.clone()))
        .collect();
    let dtype_names: BTreeMap<String, String> =
        f.dtypes.iter().map(|d| (camel(d), d.clone())).collect();
    let tiers = tiers_of(files);
    assert_eq!(tiers.kernels.len(), rows.len());
    for (i, (path, (k, d, v))) in tiers.kernels.iter().zip(&infos).enumerate() {
        let kind = &kind_names[k];
        let kind = f.aliases.get(kind).unwrap_or(kind);
        let want = format!(
            "kind_{kind}::{kind}_{}_{}",
            dtype_names[d],
            v.to_ascii_lowercase()
        );
        assert_eq!(path, &want, "KERNELS[{i}]");
        assert!(tiers
            .shared
            .contains_key(&want[want.find("::").unwrap() + 2..]));
    }
    // And every cast, in `cast_index` order: source, destination, mode, variant.
    let mut want = Vec::new();
    for s in &f.dtypes {
        for d in &f.dtypes {
            for mode in ["dflt", "sat"] {
                for v in variants(&f, 1) {
                    want.push(format!("cast_{s}_{d}_{mode}_{v}"));
                }
            }
        }
    }
    let got: Vec<&str> = tiers
        .casts
        .iter()
        .map(|p| p.rsplit("::").next().unwrap())
        .collect();
    assert_eq!(got, want);
    for (tier, _, _) in &f.tiers {
        for name in &got {
            assert!(
                tiers.shared.contains_key(*name) || tiers.own[tier].contains_key(*name),
                "{tier} defines no {name}"
            );
        }
    }

    // The per-(kind, dtype) index table grows by one dtype column.
    let (base_static, _) = static_array(&table, "BASE");
    assert_eq!(
        squash(&base_static.ty).replace("usize", ""),
        format!("[[u32;{}];{}]", f.dtypes.len(), f.kinds.len())
    );
}

#[test]
fn e3m3_shows_in_the_library_summary() {
    let src = with_e3m3();
    let f = facts(&src);
    let files = e3m3_files();
    let kernels: usize = f
        .kinds
        .iter()
        .map(|(_, arity, accepts, result)| {
            // Count the dtypes of each accepted class straight from the TOML
            // (a kind that makes a pair: f32 and f64 alone).
            let d = src.dtypes.parse::<toml::Table>().unwrap();
            let n = d["dtype"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| accepts.iter().any(|c| c == x["class"].as_str().unwrap()))
                .filter(|x| {
                    // (a complex-making kind: also each complex dtype's component.)
                    let name = x["name"].as_str().unwrap_or("");
                    let component = d["dtype"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|c| c.get("component").and_then(|v| v.as_str()) == Some(name));
                    match result.as_str() {
                        "pair" => matches!(name, "f32" | "f64"),
                        "complex" => matches!(name, "f32" | "f64") || component,
                        _ => true,
                    }
                })
                .count();
            n * variants(&f, *arity).len()
        })
        .sum();
    let lib = file(files, "lib.rs");
    let casts = f.dtypes.len() * f.dtypes.len() * 2 * variants(&f, 1).len();
    let summary = format!(
        "Spec summary: {} dtypes, {} kinds, {} kernels and {casts} casts per tier",
        f.dtypes.len(),
        f.kinds.len(),
        kernels
    );
    assert!(lib.contains(&summary), "lib.rs lacks {summary:?}");
}

// ---- properties of every generation ---------------------------------------

#[test]
fn generation_is_deterministic() {
    // A fresh generation (new parse, new environment) against an earlier one.
    for (src, b) in [(real(), real_files()), (with_e3m3(), e3m3_files())] {
        let a = generate_from(&src);
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.path, y.path);
            assert!(
                x.text == y.text,
                "{} differs between two generations",
                x.path
            );
        }
    }
}

#[test]
fn every_file_has_the_generated_header_naming_its_inputs() {
    let spec_files = [
        "dtypes.toml",
        "kinds.toml",
        "loops.toml",
        "tiers.toml",
        "formats.toml",
    ];
    for f in real_files() {
        let mut lines = f.text.lines();
        let first = lines.next().unwrap_or_default();
        let inputs = first
            .strip_prefix("// @generated by tessera-codegen from ")
            .and_then(|s| s.strip_suffix('.'))
            .unwrap_or_else(|| panic!("{}: first line is {first:?}", f.path));
        let inputs: Vec<&str> = inputs.split(", ").collect();
        assert!(!inputs.is_empty());
        for i in &inputs {
            let ok = *i == "spec/*.toml"
                || i.strip_prefix("spec/")
                    .is_some_and(|n| spec_files.contains(&n));
            assert!(ok, "{}: {i:?} is not a spec input", f.path);
        }
        let second = lines.next().unwrap_or_default();
        assert!(second.contains("Do not edit"), "{}: {second:?}", f.path);
        // What each file is made of.
        let needs: &[&str] = match f.path.as_str() {
            "codecs.rs" => &["spec/dtypes.toml"],
            "catalog.rs" => &[
                "spec/dtypes.toml",
                "spec/kinds.toml",
                "spec/tiers.toml",
                "spec/formats.toml",
            ],
            "table.rs" => &["spec/kinds.toml", "spec/dtypes.toml", "spec/loops.toml"],
            "tiers.rs" => &[
                "spec/kinds.toml",
                "spec/dtypes.toml",
                "spec/loops.toml",
                "spec/tiers.toml",
            ],
            _ => &[],
        };
        for n in needs {
            assert!(
                inputs.contains(n) || inputs.contains(&"spec/*.toml"),
                "{} does not name its input {n}",
                f.path
            );
        }
    }
}

#[test]
fn every_generated_file_parses() {
    for files in [real_files(), e3m3_files()] {
        for f in files {
            parse(&f.path, &f.text);
        }
    }
}

#[test]
fn generated_files_cover_every_tier() {
    let src = real();
    let f = facts(&src);
    let paths: BTreeSet<String> = real_files().iter().map(|g| g.path.clone()).collect();
    // One file of kernels for every tier (tiers.rs, whose `tier!` has an arm
    // per tier: checked by e3m3_gets_every_float_kernel_on_every_tier).
    let expected: BTreeSet<String> = ["lib.rs", "catalog.rs", "codecs.rs", "table.rs", "tiers.rs"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(tiers_of(real_files()).attrs.len(), f.tiers.len());
    let missing: Vec<&String> = expected.difference(&paths).collect();
    assert!(missing.is_empty(), "not generated: {missing:?}");
    for p in &paths {
        assert!(
            p.ends_with(".rs") && !p.contains('/'),
            "{p} is not a Rust file of generated/"
        );
    }
}

/// The "generated code up to date" check: what the spec produces is exactly
/// what is committed in generated/.
#[test]
fn committed_generated_files_are_up_to_date() {
    let dir = root().join("generated");
    let files = real_files();
    for f in files {
        let committed = std::fs::read_to_string(dir.join(&f.path))
            .unwrap_or_else(|e| panic!("generated/{} cannot be read: {e}", f.path));
        if committed != f.text {
            let line = committed
                .lines()
                .zip(f.text.lines())
                .position(|(a, b)| a != b)
                .map(|i| i + 1)
                .unwrap_or_else(|| committed.lines().count().min(f.text.lines().count()) + 1);
            panic!(
                "generated/{} differs from what the spec produces (first at line {line})",
                f.path
            );
        }
    }
    let produced: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for entry in std::fs::read_dir(&dir).expect("generated/ exists") {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".rs") {
            assert!(
                produced.contains(name.as_str()),
                "generated/{name} is not produced by the spec"
            );
        }
    }
}

/// The emitted tier detection must pass `cargo clippy -- -D warnings` like the
/// rest of the workspace: a constant `true &&` operand does not
/// (clippy::nonminimal_bool / clippy::overly_complex_bool_expr).
#[test]
fn tier_detection_has_no_constant_operand() {
    let files = real_files();
    let text: String = file(files, "catalog.rs")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    assert!(text.contains("is_x86_feature_detected!"));
    assert!(
        !text.contains("true&&"),
        "catalog.rs joins the feature checks onto `true`"
    );
}

/// A tier for an architecture that needs no extra CPU feature: either the
/// validator refuses it, or `Tier::available` still gets a bool for it (an
/// empty `&&` join would leave the arm an empty block, which does not compile).
#[test]
fn tier_without_features_still_detects_as_a_bool() {
    let mut src = real();
    src.tiers.push_str(
        "\n[[tier]]\nname = \"x86plain\"\narch = \"x86_64\"\nfeatures = []\ndoc = \"x86-64 alone.\"\n",
    );
    let spec = match parse_spec(&src) {
        Err(e) => {
            assert_eq!(e.file, "spec/tiers.toml");
            assert_eq!(e.table, "[[tier]] \"x86plain\"");
            return;
        }
        Ok(spec) => spec,
    };
    let files = generate(&spec);
    let text: String = file(&files, "catalog.rs")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let arm = text
        .find("Tier::X86plain=>{#[cfg(target_arch=\"x86_64\")]")
        .map(|i| &text[i..])
        .expect("an availability arm for the new tier");
    let body = arm
        .strip_prefix("Tier::X86plain=>{#[cfg(target_arch=\"x86_64\")]")
        .unwrap();
    assert!(
        !body.starts_with("{}"),
        "the arm is an empty block: {}",
        &arm[..80]
    );
}
