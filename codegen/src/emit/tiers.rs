//! `tiers.rs`: the macros that write every tier's kernels once. `tier!(name)`,
//! invoked by the crate `tiers/<name>/`, defines there one function per kernel
//! and per cast (in one module per kind and per cast source, so the compiler
//! spreads them over its code-generation units) and the tier's two dispatch
//! tables; `dispatch!()` defines the functions that pick a tier's tables.

use super::code::{str_lit, Code};
use crate::spec::{
    camel, CastPlan, FastCast, KernelPlan, OperandRule, ResultRule, Spec, Tier, Variant,
};
use std::collections::HashMap;

/// The crate that holds a tier's kernels (`tiers/<name>/`).
fn tier_crate(name: &str) -> String {
    format!("tessera_tier_{name}")
}

/// The hand-written kernel `tier` uses for cast `c`, if any.
fn fast_cast<'a>(spec: &Spec, tier: &'a Tier, c: &CastPlan) -> Option<&'a FastCast> {
    let (src, dst) = (&spec.dtypes[c.src].name, &spec.dtypes[c.dst].name);
    tier.fast_casts
        .iter()
        .find(|f| f.src == *src && f.dst == *dst && c.variant == Variant::Contig)
}

/// One entry of `__tier_fns!`: `name (callee) [(more arguments)]`.
fn entry(name: &str, call: &str, extra: Option<&str>) -> String {
    match extra {
        Some(e) => format!("{name} ({call}) ({e})"),
        None => format!("{name} ({call})"),
    }
}

/// The names of the kernels and casts, and their paths from the tier crate's
/// `kernels` module.
struct Paths {
    kernels: Vec<String>,
    casts: Vec<String>,
    by_name: HashMap<String, String>,
}

impl Paths {
    /// `super::path` of a kernel or cast, from a module beside it.
    fn of(&self, name: &str) -> String {
        let p = self
            .by_name
            .get(name)
            .unwrap_or_else(|| panic!("no kernel `{name}` to call; this is a generator bug"));
        format!("super::{p}")
    }
}

/// Emit `tiers.rs` (after its header).
pub fn emit(spec: &Spec, kernels: &[KernelPlan], casts: &[CastPlan], c: &mut Code) {
    // The casts some tier replaces by a hand-written kernel: every tier
    // lists its own version of these (module `own`); the rest are shared.
    let replaced = |cp: &CastPlan| spec.tiers.iter().any(|t| fast_cast(spec, t, cp).is_some());
    // An alias's entries sit in the module of the kind whose kernels they are.
    let kernel_module = |k: &KernelPlan| {
        let kind = spec.kinds[k.kind].alias.unwrap_or(k.kind);
        format!("kind_{}", spec.kinds[kind].name)
    };
    let cast_module = |cp: &CastPlan| {
        if replaced(cp) {
            "own".to_string()
        } else {
            format!("cast_from_{}", spec.dtypes[cp.src].name)
        }
    };
    let kernel_paths: Vec<String> = kernels
        .iter()
        .map(|k| format!("{}::{}", kernel_module(k), k.fn_name))
        .collect();
    let cast_paths: Vec<String> = casts
        .iter()
        .map(|cp| format!("{}::{}", cast_module(cp), cp.fn_name))
        .collect();
    let by_name = kernels
        .iter()
        .map(|k| k.fn_name.clone())
        .zip(kernel_paths.iter().cloned())
        .chain(
            casts
                .iter()
                .map(|cp| cp.fn_name.clone())
                .zip(cast_paths.iter().cloned()),
        )
        .collect();
    let paths = Paths {
        kernels: kernel_paths,
        casts: cast_paths,
        by_name,
    };

    let tier_names: Vec<String> = spec.tiers.iter().map(|t| format!("`{}`", t.name)).collect();
    c.inner_doc(
        "Every tier's kernels, written once. Each tier is a crate of its own \
         (`tiers/<name>/`, so that the tiers compile in parallel) whose source \
         is `tessera_generated::tier!(<name>);`: the macro below defines there \
         one function per kernel of the registry ([`crate::table`]) and per \
         cast, each an instance of a loop shell of the runtime compiled with the \
         tier's target features, and the tier's two dispatch tables, `KERNELS` \
         (indexed by [`crate::kernel_index`]) and `CASTS` (indexed by \
         [`crate::cast_index`]). [`dispatch!`] defines, in the crate that \
         depends on every tier crate, the functions that choose a tier's tables.",
    );

    // tier!
    c.line("");
    c.doc(&format!(
        "Instantiate every kernel of one tier in the invoking crate (see the \
         module documentation). Tiers: {}.",
        tier_names.join(", ")
    ));
    c.line("#[macro_export]");
    c.open("macro_rules! tier {");
    for t in &spec.tiers {
        let attr = if t.features.is_empty() {
            // No target features: an attribute that changes nothing.
            "cfg(all())".to_string()
        } else {
            format!(
                "target_feature(enable = {})",
                str_lit(&t.features.join(","))
            )
        };
        let cfg = (t.arch != "any").then(|| format!("#[cfg(target_arch = {})]", str_lit(&t.arch)));
        c.open(format!("({}) => {{", t.name));
        if let Some(cfg) = &cfg {
            c.line(cfg);
        }
        c.line("#[allow(unused_unsafe, unused_imports, clippy::all)]");
        c.open("mod kernels {");
        c.open("$crate::__tier_body! {");
        c.line(format!("[{attr}]"));
        for cp in casts.iter().filter(|cp| replaced(cp)) {
            let call = match fast_cast(spec, t, cp) {
                Some(f) => format!(
                    "$crate::runtime::fast_x86::{}::<{}, {}>",
                    f.function, f.params, cp.saturating
                ),
                None => cp.call.clone(),
            };
            c.line(entry(&cp.fn_name, &call, None));
        }
        c.close("}");
        c.close("}");
        if let Some(cfg) = &cfg {
            c.line(cfg);
        }
        c.line("pub use kernels::{CASTS, KERNELS};");
        c.close("};");
    }
    c.close("}");

    // __tier_body!
    c.line("");
    c.doc(
        "The body of [`tier!`]: the imports the calls name, the tier's own \
         kernels (`$own`: the casts some tier replaces by a hand-written \
         kernel), every kernel shared by all tiers (one module per kind, and \
         per source dtype of a cast), and the two tables.",
    );
    c.line("#[doc(hidden)]");
    c.line("#[macro_export]");
    c.open("macro_rules! __tier_body {");
    c.open("($attr:tt $($own:tt)*) => {");
    c.line("use $crate::codecs::*;");
    c.line("use $crate::runtime::cast::{Cast, CastOut};");
    c.line("use $crate::runtime::codec::{Bool, MiniComplex, Native, NarrowInt, NarrowUint, Raw};");
    c.line("use $crate::runtime::loops::*;");
    c.line("use $crate::runtime::ops::*;");
    c.line("use $crate::__num_complex::Complex;");
    c.line("use $crate::runtime::pair::Pair;");
    c.line("");
    c.open("pub mod own {");
    c.line("use super::*;");
    c.line("$crate::__tier_fns! { $attr $($own)* }");
    c.close("}");
    // One module per kind, and per source dtype of the shared casts.
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut group = |module: String, line: String| match groups.last_mut() {
        Some((m, lines)) if *m == module => lines.push(line),
        _ => groups.push((module, vec![line])),
    };
    for k in kernels.iter().filter(|k| !k.shared) {
        let (call, extra) = if k.variant == Variant::Strided {
            tiled_call(&k.codecs, &paths.of(&contig_name(&k.fn_name)))
        } else if k.through {
            through_call(spec, k, &paths)
        } else {
            (k.call.clone(), k.extra.clone())
        };
        group(kernel_module(k), entry(&k.fn_name, &call, extra.as_deref()));
    }
    for cp in casts.iter().filter(|cp| !replaced(cp)) {
        let (call, extra) = if cp.variant == Variant::Strided {
            let codecs = [spec.dtypes[cp.src].codec(), spec.dtypes[cp.dst].codec()];
            tiled_call(&codecs, &paths.of(&contig_name(&cp.fn_name)))
        } else if let Some(via) = cp.through {
            cast_through_call(spec, cp, via, &paths)
        } else {
            (cp.call.clone(), None)
        };
        group(cast_module(cp), entry(&cp.fn_name, &call, extra.as_deref()));
    }
    for (module, lines) in &groups {
        c.line("");
        c.open(format!("pub mod {module} {{"));
        c.line("use super::*;");
        c.open("$crate::__tier_fns! {");
        c.line("$attr");
        for l in lines {
            c.line(l);
        }
        c.close("}");
        c.close("}");
    }
    c.line("");
    c.doc("The tier's kernels, indexed by `kernel_index`.");
    c.open(format!(
        "pub static KERNELS: [LoopFn; {}] = [",
        paths.kernels.len()
    ));
    for p in &paths.kernels {
        c.line(format!("{p},"));
    }
    c.close("];");
    c.line("");
    c.doc("The tier's casts, indexed by `cast_index`.");
    c.open(format!(
        "pub static CASTS: [LoopFn; {}] = [",
        paths.casts.len()
    ));
    for p in &paths.casts {
        c.line(format!("{p},"));
    }
    c.close("];");
    c.close("};");
    c.close("}");

    // __tier_fns!
    c.line("");
    c.doc(
        "One function per entry `name (callee) [(more arguments)]`, each \
         `unsafe fn name(x: &Args)` calling `callee(x[, more arguments])` \
         under `$attr`.",
    );
    c.line("#[doc(hidden)]");
    c.line("#[macro_export]");
    c.open("macro_rules! __tier_fns {");
    c.open("($attr:tt $($name:ident ($($f:tt)*) $(($($extra:tt)*))?)*) => {$(");
    c.line("#$attr");
    c.open("pub unsafe fn $name(x: &$crate::Args) {");
    c.line("// SAFETY: the caller upholds the contract of `LoopFn` (the");
    c.line("// registry pairs every kernel with the operands' dtypes).");
    c.line("unsafe { $($f)*(x $(, $($extra)*)?) }");
    c.close("}");
    c.close(")*};");
    c.close("}");

    // dispatch!
    c.line("");
    c.doc(
        "Define, in a crate that depends on every tier crate \
         (`tessera_tier_<name>`), `kernel_table(tier)` and `cast_table(tier)`: a \
         tier's tables where this CPU runs it, else None.",
    );
    c.line("#[macro_export]");
    c.open("macro_rules! dispatch {");
    c.open("() => {");
    for (f, table, what) in [
        (
            "kernel_table",
            "KERNELS",
            "kernels of `tier`, indexed by `kernel_index`",
        ),
        (
            "cast_table",
            "CASTS",
            "casts of `tier`, indexed by `cast_index`",
        ),
    ] {
        c.doc(&format!("The {what}, where this CPU runs it."));
        c.open(format!(
            "pub fn {f}(tier: $crate::Tier) -> Option<&'static [$crate::LoopFn]> {{"
        ));
        c.open("if !tier.available() {");
        c.line("return None;");
        c.close("}");
        c.line("#[allow(unreachable_patterns)]");
        c.open("match tier {");
        for t in &spec.tiers {
            if t.arch != "any" {
                c.line(format!("#[cfg(target_arch = {})]", str_lit(&t.arch)));
            }
            c.line(format!(
                "$crate::Tier::{} => Some(&::{}::{table}),",
                camel(&t.name),
                tier_crate(&t.name)
            ));
        }
        c.line("_ => None,");
        c.close("}");
        c.close("}");
        c.line("");
    }
    c.close("};");
    c.close("}");
}

/// The name of the contiguous variant of a strided kernel or cast: the same
/// name with the variant's suffix exchanged.
fn contig_name(strided: &str) -> String {
    let stem = strided
        .strip_suffix(Variant::Strided.name())
        .unwrap_or_else(|| panic!("`{strided}` is not a strided kernel; this is a generator bug"));
    format!("{stem}{}", Variant::Contig.name())
}

/// The call of a kernel's or cast's strided variant: the runtime's `tiled`
/// over its contiguous variant (`contig`, its path), with the storage sizes
/// of its inputs and result (`codecs`: the inputs' codecs, then the
/// result's).
fn tiled_call(codecs: &[String], contig: &str) -> (String, Option<String>) {
    let size = |c: &String| format!("store_bytes::<{c}>()");
    let (out, ins) = codecs.split_last().expect("a kernel has a result");
    let ins: Vec<String> = ins.iter().map(size).collect();
    (
        "tiled".to_string(),
        Some(format!("&[{}], {}, {contig}", ins.join(", "), size(out))),
    )
}

/// The call of a kernel that computes through its carrier's kernels
/// (`runtime::loops::run_through`): every input cast into the carrier, the
/// carrier's kernel of the kind in the matching variant, the results cast
/// into the destination (bool results copied as bool).
fn through_call(spec: &Spec, k: &KernelPlan, paths: &Paths) -> (String, Option<String>) {
    let kind = &spec.kinds[k.kind];
    let d = &spec.dtypes[k.dtype];
    let carrier = d.carrier.as_str();
    let carrier_type = spec.dtype(carrier).expect("validated").store_type();
    // Contiguous or broadcast: the strided variant is `tiled` over the
    // contiguous one.
    let op_variant = k.variant.name();
    let cast = |src: &str, dst: &str| paths.of(&format!("cast_{src}_{dst}_dflt_contig"));
    // A complex dtype's real results and real operands are its parts.
    let part = spec.component_of(d);
    let (result, out_size, store) = if kind.result == ResultRule::Bool {
        ("bool".to_string(), 1, cast("bool", "bool"))
    } else if kind.result == ResultRule::Order {
        ("i8".to_string(), 1, cast("i8", "i8"))
    } else if let (ResultRule::Real, Some(p)) = (kind.result, part) {
        (p.carrier.clone(), p.item_bytes(), cast(&p.carrier, &p.name))
    } else {
        (carrier_type.clone(), d.item_bytes(), cast(carrier, &d.name))
    };
    // Every load is a contiguous cast (a broadcast input's of one element).
    let input = |i: usize| match part {
        Some(p) if i == 1 && kind.operands == OperandRule::ComplexReal => p,
        _ => d,
    };
    let loads: Vec<String> = (0..kind.arity)
        .map(|i| cast(&input(i).name, &input(i).carrier))
        .collect();
    let sizes: Vec<String> = (0..kind.arity)
        .map(|i| input(i).item_bytes().to_string())
        .collect();
    (
        format!(
            "run_through::<{carrier_type}, {result}, {}, {}>",
            kind.arity,
            k.variant.code()
        ),
        Some(format!(
            "[{}], {out_size}, [{}], {}, {}",
            sizes.join(", "),
            loads.join(", "),
            paths.of(&format!("{}_{carrier}_{op_variant}", kind.name)),
            store
        )),
    )
}

/// The call of a cast through the carrier `via` (f32 or c64;
/// `runtime::loops::run_cast_through`): the source cast into the carrier
/// (default mode: exact), then the carrier cast into the destination in the
/// cast's mode.
fn cast_through_call(
    spec: &Spec,
    cp: &CastPlan,
    via: &str,
    paths: &Paths,
) -> (String, Option<String>) {
    let (s, d) = (&spec.dtypes[cp.src], &spec.dtypes[cp.dst]);
    let via_type = spec.dtype(via).expect("a carrier dtype").store_type();
    // Contiguous: the strided variant is `tiled` over this one.
    let io = Variant::Contig.name();
    let mode = if cp.saturating { "sat" } else { "dflt" };
    (
        format!("run_cast_through::<{via_type}>"),
        Some(format!(
            "{}, {}, {}, {}",
            s.item_bytes(),
            d.item_bytes(),
            paths.of(&format!("cast_{}_{via}_dflt_{io}", s.name)),
            paths.of(&format!("cast_{via}_{}_{mode}_{io}", d.name)),
        )),
    )
}
