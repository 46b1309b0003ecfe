//! The catalogue enums and their metadata tables: `DType`, `Kind`, `Tier`, `Format`.

use super::code::{f64_lit, opt_str, str_lit, str_slice, Code};
use crate::spec::{camel, Class, Spec};

/// Emit `catalog.rs` (after its header).
pub fn emit(spec: &Spec, c: &mut Code) {
    c.inner_doc(
        "The catalogues of `spec/`: every dtype, kind, tier and block-scaled \
         format, as enums with their metadata.",
    );
    c.line("use crate::runtime::meta::*;");
    c.line("use crate::runtime::ops::Operation;");
    emit_dtypes(spec, c);
    emit_kinds(spec, c);
    emit_tiers(spec, c);
    emit_formats(spec, c);
}

fn unit_roundoff(spec: &Spec, acc: &str) -> f64 {
    let d = spec.dtype(acc).expect("validated");
    match d.class {
        Class::Float => 2f64.powi(-(d.float.as_ref().expect("float").mantissa_bits as i32) - 1),
        Class::Complex | Class::Pair => {
            let comp = if d.bits == 64 { 23 } else { 52 };
            2f64.powi(-comp - 1)
        }
        _ => 0.0,
    }
}

/// An enum of `variants` (name, doc) with the usual derives.
fn enum_decl(c: &mut Code, doc: &str, name: &str, variants: &[(String, String)]) {
    c.line("");
    c.doc(doc);
    c.line("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]");
    c.open(format!("pub enum {name} {{"));
    for (v, d) in variants {
        c.doc(d);
        c.line(format!("{v},"));
    }
    c.close("}");
}

/// `info()` of an enum over its metadata table `table`, and `name()` (with
/// `name_doc`) where its metadata has a name to print.
fn accessors(c: &mut Code, info_ty: &str, table: &str, name_doc: Option<&str>) {
    c.doc("Its metadata.");
    c.open(format!("pub fn info(self) -> &'static {info_ty} {{"));
    c.line(format!("&{table}[self as usize]"));
    c.close("}");
    if let Some(doc) = name_doc {
        c.doc(doc);
        c.open("pub fn name(self) -> &'static str {");
        c.line("self.info().name");
        c.close("}");
    }
}

/// `from_name` of enum `ty`: each arm's names (lower-case where `fold`, the
/// argument then case-folded) give its variant.
fn from_name(c: &mut Code, ty: &str, doc: &str, fold: bool, arms: &[(Vec<String>, String)]) {
    c.doc(doc);
    c.open(format!("pub fn from_name(name: &str) -> Option<{ty}> {{"));
    c.open(if fold {
        "match name.to_ascii_lowercase().as_str() {"
    } else {
        "match name {"
    });
    for (names, variant) in arms {
        let pats: Vec<String> = names.iter().map(|n| str_lit(n)).collect();
        c.line(format!("{} => Some({ty}::{variant}),", pats.join(" | ")));
    }
    c.line("_ => None,");
    c.close("}");
    c.close("}");
}

/// `impl Display` printing `self.name()`.
fn display(c: &mut Code, name: &str) {
    c.line("");
    c.open(format!("impl core::fmt::Display for {name} {{"));
    c.open("fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {");
    c.line("f.write_str(self.name())");
    c.close("}");
    c.close("}");
}

/// `pub const ALL: [T; n] = [T::A, ...];`
fn all(c: &mut Code, doc: &str, name: &str, idents: &[String]) {
    c.doc(doc);
    c.open(format!("pub const ALL: [{name}; {}] = [", idents.len()));
    for i in idents {
        c.line(format!("{name}::{i},"));
    }
    c.close("];");
}

fn emit_dtypes(spec: &Spec, c: &mut Code) {
    let n = spec.dtypes.len();
    let idents: Vec<String> = spec.dtypes.iter().map(|d| d.ident()).collect();
    let variants: Vec<(String, String)> = spec
        .dtypes
        .iter()
        .map(|d| (d.ident(), format!("`{}`: {}", d.name, d.doc)))
        .collect();
    enum_decl(
        c,
        "An element type of `spec/dtypes.toml`.",
        "DType",
        &variants,
    );
    c.line("");
    c.doc("The metadata of every dtype, in `DType` order.");
    c.open(format!("pub static DTYPE_INFO: [DTypeInfo; {n}] = ["));
    for d in &spec.dtypes {
        let int_range = match d.class {
            Class::Bool => "Some((0, 1))".to_string(),
            Class::Int => format!(
                "Some(({}, {}))",
                -(1i128 << (d.bits - 1)),
                (1i128 << (d.bits - 1)) - 1
            ),
            Class::Uint => format!("Some((0, {}))", (1i128 << d.bits) - 1),
            _ => "None".to_string(),
        };
        c.open("DTypeInfo {");
        c.line(format!("int_range: {int_range},"));
        c.line(format!("name: {},", str_lit(&d.name)));
        c.line(format!("aliases: {},", str_slice(&d.aliases)));
        c.line(format!("class: Class::{:?},", d.class));
        c.line(format!("bits: {},", d.bits));
        c.line(format!("values_per_byte: {},", d.values_per_byte));
        c.line(format!("item_bytes: {},", d.item_bytes()));
        c.line(format!("carrier: {},", str_lit(&d.carrier)));
        c.line(format!("accumulator: {},", str_lit(&d.accumulator)));
        c.line(format!("component: {},", opt_str(&d.component)));
        c.line(format!(
            "accumulation_unit_roundoff: {},",
            f64_lit(unit_roundoff(spec, &d.accumulator))
        ));
        c.line(format!("numpy: {},", opt_str(&d.numpy)));
        c.line(format!("doc: {},", str_lit(&d.doc)));
        match &d.float {
            None => {
                c.line("float: None,");
            }
            Some(f) => {
                c.open("float: Some(FloatInfo {");
                c.line(format!("exponent_bits: {},", f.exponent_bits));
                c.line(format!("mantissa_bits: {},", f.mantissa_bits));
                c.line(format!("bias: {},", f.bias));
                c.line(format!("signed: {},", f.signed));
                c.line(format!("subnormals: {},", f.subnormals));
                c.line(format!("infinities: {},", f.infinities));
                c.line(format!("nan: NanStyle::{:?},", f.nan));
                c.line(format!("negative_zero: {},", f.negative_zero));
                c.line(format!("max_finite: {},", f64_lit(f.max_finite)));
                c.line(format!("min_normal: {},", f64_lit(f.min_normal)));
                c.line(format!("min_positive: {},", f64_lit(f.min_positive)));
                c.line(format!("epsilon: {},", f64_lit(f.epsilon)));
                c.line(format!("ties_away: {},", f.ties_away));
                c.line(format!(
                    "overflow_default: Overflow::{:?},",
                    f.overflow_default
                ));
                c.line(format!(
                    "overflow_saturating: Overflow::{:?},",
                    f.overflow_saturating
                ));
                c.line(format!("nan_to: NanTo::{:?},", f.nan_to));
                c.line(format!("negative: Negative::{:?},", f.negative));
                c.close("}),");
            }
        }
        c.close("},");
    }
    c.close("];");
    c.line("");
    c.open("impl DType {");
    all(c, "Every dtype, in spec order.", "DType", &idents);
    accessors(c, "DTypeInfo", "DTYPE_INFO", Some("Its printed name."));
    let arms: Vec<(Vec<String>, String)> = spec
        .dtypes
        .iter()
        .map(|d| {
            let names = std::iter::once(d.name.clone())
                .chain(d.aliases.iter().cloned())
                .map(|s| s.to_ascii_lowercase())
                .collect();
            (names, d.ident())
        })
        .collect();
    from_name(
        c,
        "DType",
        "Parse a name or alias (case-insensitive).",
        true,
        &arms,
    );
    // The parts of a complex dtype, and the complex dtype of a float.
    let pairs: Vec<(String, String)> = spec
        .dtypes
        .iter()
        .filter_map(|d| Some((d.ident(), spec.component_of(d)?.ident())))
        .collect();
    c.doc("The float dtype of a complex dtype's real and imaginary parts; None for the other classes.");
    c.open("pub fn component(self) -> Option<DType> {");
    c.open("match self {");
    for (cx, part) in &pairs {
        c.line(format!("DType::{cx} => Some(DType::{part}),"));
    }
    c.line("_ => None,");
    c.close("}");
    c.close("}");
    c.doc("The complex dtype whose parts have this float dtype, if the spec has one.");
    c.open("pub fn complex(self) -> Option<DType> {");
    c.open("match self {");
    for (cx, part) in &pairs {
        c.line(format!("DType::{part} => Some(DType::{cx}),"));
    }
    c.line("_ => None,");
    c.close("}");
    c.close("}");
    c.close("}");
    display(c, "DType");
}

fn emit_kinds(spec: &Spec, c: &mut Code) {
    let n = spec.kinds.len();
    let idents: Vec<String> = spec.kinds.iter().map(|k| camel(&k.name)).collect();
    let variants: Vec<(String, String)> = spec
        .kinds
        .iter()
        .map(|k| (camel(&k.name), format!("`{}`: {}", k.name, k.doc)))
        .collect();
    enum_decl(
        c,
        "An elementwise kind of `spec/kinds.toml`.",
        "Kind",
        &variants,
    );
    c.line("");
    c.doc("The metadata of every kind, in `Kind` order.");
    c.open(format!("pub static KIND_INFO: [KindInfo; {n}] = ["));
    for k in &spec.kinds {
        let accepts: Vec<String> = k.accepts.iter().map(|a| format!("Class::{a:?}")).collect();
        let specials: Vec<String> = k.specials.iter().map(|s| str_slice(s)).collect();
        c.open("KindInfo {");
        c.line(format!("name: {},", str_lit(&k.name)));
        c.line(format!("arity: {},", k.arity));
        c.line(format!("accepts: &[{}],", accepts.join(", ")));
        c.line(format!("operands: OperandRule::{:?},", k.operands));
        c.line(format!("result: ResultRule::{:?},", k.result));
        c.line(format!("accuracy: Accuracy::{:?},", k.accuracy));
        c.line(format!("specials: &[{}],", specials.join(", ")));
        c.line(format!("doc: {},", str_lit(&k.doc)));
        c.close("},");
    }
    c.close("];");
    c.line("");
    c.open("impl Kind {");
    all(c, "Every kind, in spec order.", "Kind", &idents);
    accessors(c, "KindInfo", "KIND_INFO", Some("Its name."));
    let arms: Vec<(Vec<String>, String)> = spec
        .kinds
        .iter()
        .map(|k| (vec![k.name.clone()], camel(&k.name)))
        .collect();
    from_name(c, "Kind", "Parse a name.", false, &arms);
    // Both ways, exhaustive and without a wildcard arm: a kind without an
    // operation of the runtime, or an operation without a kind, does not
    // compile.
    c.doc(
        "The operation of the runtime that computes it (its `algorithm` in \
         `spec/kinds.toml`).",
    );
    c.open("pub const fn operation(self) -> Operation {");
    c.open("match self {");
    for k in &spec.kinds {
        c.line(format!("Kind::{} => Operation::{},", camel(&k.name), k.op));
    }
    c.close("}");
    c.close("}");
    c.doc(
        "The kind that an operation of the runtime computes (each computes one; \
         an alias, which runs another kind's kernels, is never the answer).",
    );
    c.open("pub const fn from_operation(op: Operation) -> Kind {");
    c.open("match op {");
    for k in spec.kinds.iter().filter(|k| k.alias.is_none()) {
        c.line(format!("Operation::{} => Kind::{},", k.op, camel(&k.name)));
    }
    c.close("}");
    c.close("}");
    c.doc(
        "The kind whose kernels compute this one: itself, or for an alias \
         (`alias` in `spec/kinds.toml`) the kind it aliases, whose kernels, \
         bits and specials it shares under its own stated accuracy.",
    );
    c.open("pub const fn implementation(self) -> Kind {");
    c.open("match self {");
    let aliases: Vec<&crate::spec::Kind> =
        spec.kinds.iter().filter(|k| k.alias.is_some()).collect();
    for k in &aliases {
        let target = &spec.kinds[k.alias.unwrap_or_default()];
        c.line(format!(
            "Kind::{} => Kind::{},",
            camel(&k.name),
            camel(&target.name)
        ));
    }
    c.line("_ => self,");
    c.close("}");
    c.close("}");
    c.close("}");
    display(c, "Kind");
}

fn emit_tiers(spec: &Spec, c: &mut Code) {
    let n = spec.tiers.len();
    let idents: Vec<String> = spec.tiers.iter().map(|t| camel(&t.name)).collect();
    let variants: Vec<(String, String)> = spec
        .tiers
        .iter()
        .map(|t| (camel(&t.name), format!("`{}`: {}", t.name, t.doc)))
        .collect();
    enum_decl(
        c,
        "An instruction-set tier of `spec/tiers.toml`.",
        "Tier",
        &variants,
    );
    c.line("");
    c.doc("The metadata of every tier, in `Tier` order.");
    c.open(format!("pub static TIER_INFO: [TierInfo; {n}] = ["));
    for t in &spec.tiers {
        c.open("TierInfo {");
        c.line(format!("name: {},", str_lit(&t.name)));
        c.line(format!("arch: {},", str_lit(&t.arch)));
        c.line(format!("features: {},", str_slice(&t.features)));
        c.line(format!("doc: {},", str_lit(&t.doc)));
        c.close("},");
    }
    c.close("];");
    c.line("");
    c.open("impl Tier {");
    all(
        c,
        "Every tier, in spec order (the first is the scalar reference).",
        "Tier",
        &idents,
    );
    accessors(c, "TierInfo", "TIER_INFO", Some("Its name."));
    let arms: Vec<(Vec<String>, String)> = spec
        .tiers
        .iter()
        .map(|t| (vec![t.name.clone()], camel(&t.name)))
        .collect();
    from_name(c, "Tier", "Parse a name.", false, &arms);
    c.doc("Whether this CPU runs the tier (detected at run time).");
    c.open("pub fn available(self) -> bool {");
    c.open("match self {");
    for t in &spec.tiers {
        let id = camel(&t.name);
        if t.arch == "any" {
            c.line(format!("Tier::{id} => true,"));
            continue;
        }
        let detect = if t.features.is_empty() {
            "true".to_string()
        } else {
            let mac = if t.arch == "x86_64" {
                "std::is_x86_feature_detected!"
            } else {
                "std::arch::is_aarch64_feature_detected!"
            };
            t.features
                .iter()
                .map(|f| format!("{mac}({})", str_lit(f)))
                .collect::<Vec<_>>()
                .join("\n    && ")
        };
        c.open(format!("Tier::{id} => {{"));
        c.line(format!("#[cfg(target_arch = {})]", str_lit(&t.arch)));
        c.open("{");
        for l in detect.lines() {
            c.line(l);
        }
        c.close("}");
        c.line(format!("#[cfg(not(target_arch = {}))]", str_lit(&t.arch)));
        c.open("{");
        c.line("false");
        c.close("}");
        c.close("}");
    }
    c.close("}");
    c.close("}");
    c.close("}");
    display(c, "Tier");
}

fn emit_formats(spec: &Spec, c: &mut Code) {
    let n = spec.formats.len();
    let idents: Vec<String> = spec.formats.iter().map(|f| camel(&f.name)).collect();
    let variants: Vec<(String, String)> = spec
        .formats
        .iter()
        .map(|f| (camel(&f.name), format!("`{}`: {}", f.name, f.doc)))
        .collect();
    enum_decl(
        c,
        "A block-scaled format of `spec/formats.toml`.",
        "Format",
        &variants,
    );
    c.line("");
    c.doc("The metadata of every format, in `Format` order.");
    c.open(format!("pub static FORMAT_INFO: [FormatInfo; {n}] = ["));
    for f in &spec.formats {
        c.open("FormatInfo {");
        c.line(format!("name: {},", str_lit(&f.name)));
        c.line(format!("aliases: {},", str_slice(&f.aliases)));
        c.line(format!("element: {},", str_lit(&f.element)));
        c.line(format!("scale: {},", str_lit(&f.scale)));
        c.line(format!("block: {},", f.block));
        c.line(format!("tensor_scale: {},", opt_str(&f.tensor_scale)));
        c.line(format!("fraction_bits: {},", f.fraction_bits));
        c.line(format!("scale_rule: ScaleRule::{:?},", f.scale_rule));
        c.line(format!("doc: {},", str_lit(&f.doc)));
        c.close("},");
    }
    c.close("];");
    c.line("");
    c.open("impl Format {");
    all(c, "Every format, in spec order.", "Format", &idents);
    accessors(c, "FormatInfo", "FORMAT_INFO", None);
    let arms: Vec<(Vec<String>, String)> = spec
        .formats
        .iter()
        .map(|f| {
            let names = std::iter::once(f.name.clone())
                .chain(f.aliases.iter().cloned())
                .collect();
            (names, camel(&f.name))
        })
        .collect();
    from_name(c, "Format", "Parse a name or alias.", false, &arms);
    c.close("}");
}
