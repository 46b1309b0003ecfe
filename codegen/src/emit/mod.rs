//! Emitters: the typed spec to the text of `generated/`.

mod catalog;
mod codecs;
mod table;

use crate::spec::{Spec, Variant};
use minijinja::{context, Environment};

/// One emitted file, its path relative to `generated/`.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedFile {
    /// File name under `generated/`.
    pub path: String,
    /// Its full text.
    pub text: String,
}

const HEADER: &str = include_str!("../../templates/header.j2");
const LIB: &str = include_str!("../../templates/lib.rs.j2");
const TIER: &str = include_str!("../../templates/tier.rs.j2");
const CASTS: &str = include_str!("../../templates/casts.rs.j2");

fn header(env: &Environment, inputs: &str) -> String {
    env.get_template("header")
        .and_then(|t| t.render(context! { inputs => inputs }))
        .expect("the header template renders")
        .trim_end()
        .to_string()
}

/// Format Rust source (the emitted text always parses: it is built from
/// validated names).
fn pretty(header: &str, tokens: &str) -> String {
    let file = syn::parse_file(tokens).unwrap_or_else(|e| {
        panic!("tessera-codegen emitted Rust that does not parse ({e}); this is a generator bug")
    });
    format!("{header}\n\n{}", prettyplease::unparse(&file))
}

/// The module name of a tier's kernels.
pub(crate) fn tier_module(name: &str) -> String {
    format!("tier_{name}")
}

/// The module name of a tier's cast kernels.
pub(crate) fn casts_module(name: &str) -> String {
    format!("casts_{name}")
}

/// Emit every file of `generated/`.
pub fn generate(spec: &Spec) -> Vec<GeneratedFile> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.add_template("header", HEADER).expect("header template");
    env.add_template("lib", LIB).expect("lib template");
    env.add_template("tier", TIER).expect("tier template");
    env.add_template("casts", CASTS).expect("casts template");

    let kernels = spec.kernels();
    let casts = spec.casts();
    let mut files = Vec::new();

    let tier_modules: Vec<_> = spec
        .tiers
        .iter()
        .map(|t| {
            context! {
                arch => t.arch.clone(),
                module => tier_module(&t.name),
                casts => casts_module(&t.name),
            }
        })
        .collect();
    let lib = env
        .get_template("lib")
        .and_then(|t| {
            t.render(context! {
                header => header(&env, "spec/*.toml"),
                dtype_count => spec.dtypes.len(),
                kind_count => spec.kinds.len(),
                kernel_count => kernels.len(),
                tiers => spec.tiers.iter().map(|t| t.name.clone()).collect::<Vec<_>>().join(", "),
                tier_modules => tier_modules,
            })
        })
        .expect("lib template renders");
    files.push(GeneratedFile {
        path: "lib.rs".into(),
        text: lib.trim_end().to_string() + "\n",
    });

    files.push(GeneratedFile {
        path: "catalog.rs".into(),
        text: pretty(
            &header(
                &env,
                "spec/dtypes.toml, spec/kinds.toml, spec/tiers.toml, spec/formats.toml",
            ),
            &catalog::emit(spec).to_string(),
        ),
    });
    files.push(GeneratedFile {
        path: "codecs.rs".into(),
        text: pretty(
            &header(&env, "spec/dtypes.toml"),
            &codecs::emit(spec).to_string(),
        ),
    });
    files.push(GeneratedFile {
        path: "table.rs".into(),
        text: pretty(
            &header(
                &env,
                "spec/kinds.toml, spec/dtypes.toml, spec/loops.toml, spec/tiers.toml",
            ),
            &table::emit(spec, &kernels, &casts).to_string(),
        ),
    });

    for tier in &spec.tiers {
        let ks: Vec<_> = kernels
            .iter()
            .map(|k| {
                context! {
                    name => k.fn_name.clone(),
                    call => k.call.clone(),
                    kind => spec.kinds[k.kind].name.clone(),
                    dtype => spec.dtypes[k.dtype].name.clone(),
                    variant => k.variant.name(),
                }
            })
            .collect();
        let text = env
            .get_template("tier")
            .and_then(|t| {
                t.render(context! {
                    header => header(&env, "spec/kinds.toml, spec/dtypes.toml, spec/loops.toml, spec/tiers.toml"),
                    tier => context! { name => tier.name.clone(), doc => tier.doc.clone() },
                    features => tier.features.join(","),
                    kernels => ks,
                })
            })
            .expect("tier template renders");
        let cs: Vec<_> = casts
            .iter()
            .map(|c| {
                let (src, dst) = (&spec.dtypes[c.src].name, &spec.dtypes[c.dst].name);
                let fast = tier
                    .fast_casts
                    .iter()
                    .find(|f| f.src == *src && f.dst == *dst && c.variant == Variant::Contig);
                let call = match fast {
                    Some(f) => format!(
                        "crate::runtime::fast_x86::{}::<{}, {}>",
                        f.function, f.params, c.saturating
                    ),
                    None => c.call.clone(),
                };
                context! {
                    name => c.fn_name.clone(),
                    call => call,
                    src => spec.dtypes[c.src].name.clone(),
                    dst => spec.dtypes[c.dst].name.clone(),
                    mode => if c.saturating { "saturating" } else { "default" },
                    variant => c.variant.name(),
                }
            })
            .collect();
        let ctext = env
            .get_template("casts")
            .and_then(|t| {
                t.render(context! {
                    header => header(&env, "spec/dtypes.toml, spec/loops.toml, spec/tiers.toml"),
                    tier => context! { name => tier.name.clone() },
                    features => tier.features.join(","),
                    casts => cs,
                })
            })
            .expect("casts template renders");
        files.push(GeneratedFile {
            path: format!("{}.rs", casts_module(&tier.name)),
            text: ctext.trim_end().to_string() + "\n",
        });
        // The loop shells are laid out by the template itself (prettyplease would
        // drop their SAFETY comments); the module is excluded from rustfmt.
        let text = text.trim_end().to_string() + "\n";
        files.push(GeneratedFile {
            path: format!("{}.rs", tier_module(&tier.name)),
            text,
        });
    }
    files
}
