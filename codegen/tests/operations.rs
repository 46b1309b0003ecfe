//! The catalogue ties every kind to the runtime's operation that computes it,
//! both ways, with exhaustive matches (no wildcard arm): a kind without an
//! operation, or an operation without a kind, does not compile. The expected
//! arms are read here from `spec/kinds.toml` with a plain TOML parser and from
//! `runtime/src/ops.rs` with `syn`, not from the generator.

mod common;
use common::*;

use tessera_codegen::{generate, parse_spec, SpecSources};

/// (kind variant, operation variant, whether it is an alias) of every
/// `[[kind]]`, in file order; an alias (`alias = "exp2"`) has its target's
/// operation.
fn kinds_and_operations(src: &SpecSources) -> Vec<(String, String, bool)> {
    let t: toml::Table = src.kinds.parse().expect("valid TOML");
    let all = t["kind"].as_array().expect("[[kind]] tables");
    all.iter()
        .map(|k| {
            let (of, alias) = match k.get("alias").and_then(|a| a.as_str()) {
                Some(target) => (
                    all.iter()
                        .find(|t| t["name"].as_str() == Some(target))
                        .expect("an alias names a declared kind"),
                    true,
                ),
                None => (k, false),
            };
            (
                camel(k["name"].as_str().expect("a name")),
                camel(of["algorithm"].as_str().expect("an algorithm")),
                alias,
            )
        })
        .collect()
}

/// The variants of `pub enum Operation` in the runtime's source.
fn runtime_operations(src: &SpecSources) -> Vec<String> {
    let file = syn::parse_file(&src.ops).expect("runtime/src/ops.rs parses");
    let e = file
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Enum(e) if e.ident == "Operation" => Some(e),
            _ => None,
        })
        .expect("runtime/src/ops.rs declares enum Operation");
    assert!(matches!(e.vis, syn::Visibility::Public(_)));
    e.variants
        .iter()
        .map(|v| {
            assert!(
                matches!(v.fields, syn::Fields::Unit),
                "{} is a unit variant",
                v.ident
            );
            v.ident.to_string()
        })
        .collect()
}

/// The arms `Left::A => Right::B` of the `match` that is the whole body of
/// `impl Kind`'s function `name`, which must be a `const fn` taking `param`
/// and returning `ret`.
fn arms(catalog: &syn::File, name: &str, param: &str, ret: &str) -> Vec<(String, String)> {
    let f = catalog
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Impl(im) if im.trait_.is_none() => {
                let ty = &im.self_ty;
                (quote::quote!(#ty).to_string() == "Kind").then_some(im)
            }
            _ => None,
        })
        .flat_map(|im| im.items.iter())
        .find_map(|i| match i {
            syn::ImplItem::Fn(f) if f.sig.ident == name => Some(f),
            _ => None,
        })
        .unwrap_or_else(|| panic!("impl Kind has no fn {name}"));
    assert!(f.sig.constness.is_some(), "{name} is a const fn");
    assert!(
        matches!(f.vis, syn::Visibility::Public(_)),
        "{name} is public"
    );
    let sig = &f.sig;
    let sig = quote::quote!(#sig).to_string().replace(' ', "");
    assert!(sig.contains(&format!("({param})->{ret}")), "{name}: {sig}");
    assert_eq!(f.block.stmts.len(), 1, "{name} is one match");
    let m = match &f.block.stmts[0] {
        syn::Stmt::Expr(syn::Expr::Match(m), None) => m,
        _ => panic!("{name} is not a match"),
    };
    m.arms
        .iter()
        .map(|a| {
            assert!(a.guard.is_none(), "{name}: an arm with a guard");
            let pat = match &a.pat {
                syn::Pat::Path(p) => quote::quote!(#p).to_string().replace(' ', ""),
                other => panic!(
                    "{name}: the arm `{}` is not one path (a wildcard?)",
                    quote::quote!(#other)
                ),
            };
            let body = match &*a.body {
                syn::Expr::Path(p) => quote::quote!(#p).to_string().replace(' ', ""),
                other => panic!("{name}: the arm gives `{}`", quote::quote!(#other)),
            };
            (pat, body)
        })
        .collect()
}

fn catalog_of(src: &SpecSources) -> syn::File {
    let spec = parse_spec(src).unwrap_or_else(|e| panic!("spec refused: {e}"));
    let files = generate(&spec);
    let text = &files
        .iter()
        .find(|f| f.path == "catalog.rs")
        .expect("catalog.rs is generated")
        .text;
    assert!(text.contains("use crate::runtime::ops::Operation;"));
    syn::parse_file(text).expect("catalog.rs parses")
}

fn check_catalog(src: &SpecSources) {
    let catalog = catalog_of(src);
    let pairs = kinds_and_operations(src);
    let to_op: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, o, _)| (format!("Kind::{k}"), format!("Operation::{o}")))
        .collect();
    assert_eq!(
        arms(&catalog, "operation", "self", "Operation"),
        to_op,
        "Kind::operation"
    );
    // An alias is never the kind of an operation.
    let to_kind: Vec<(String, String)> = pairs
        .iter()
        .filter(|(_, _, alias)| !alias)
        .map(|(k, o, _)| (format!("Operation::{o}"), format!("Kind::{k}")))
        .collect();
    let back = arms(&catalog, "from_operation", "op:Operation", "Kind");
    assert_eq!(back, to_kind, "Kind::from_operation");
    // Exhaustive over the runtime's operations, each once.
    let mut covered: Vec<String> = back
        .iter()
        .map(|(o, _)| o.trim_start_matches("Operation::").to_string())
        .collect();
    let mut ops = runtime_operations(src);
    covered.sort();
    ops.sort();
    assert_eq!(covered, ops, "from_operation covers every operation once");
}

#[test]
fn every_kind_maps_to_its_operation_and_back() {
    check_catalog(&real());
}

#[test]
fn a_new_kind_and_its_new_operation_reach_both_matches() {
    let mut src = real();
    src.kinds.push_str(
        "\n[[kind]]\nname = \"frob\"\narity = 1\naccepts = [\"float\"]\noperands = \"same\"\n\
         result = \"same\"\naccuracy = \"exact\"\nalgorithm = \"frob_nicate\"\n\
         doc = \"A kind for the test.\"\n",
    );
    let close = "    PairLo,\n}";
    assert_eq!(src.ops.matches(close).count(), 1);
    src.ops = src.ops.replacen(
        close,
        "    PairLo,\n    /// For the test.\n    FrobNicate,\n}",
        1,
    );
    assert!(runtime_operations(&src).contains(&"FrobNicate".to_string()));
    check_catalog(&src);
    let catalog = catalog_of(&src);
    let arms = arms(&catalog, "operation", "self", "Operation");
    assert_eq!(
        arms.last(),
        Some(&(
            "Kind::Frob".to_string(),
            "Operation::FrobNicate".to_string()
        ))
    );
}
