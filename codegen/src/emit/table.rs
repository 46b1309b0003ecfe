//! The kernel registry and one dispatch table per tier.

use super::{casts_module, tier_module};
use crate::spec::{camel, CastPlan, KernelPlan, Spec};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

/// One static table of function pointers per tier: `{prefix}{TIER}` holding
/// `names` from the tier's module, indexed as `index_fn` says.
fn tier_tables(
    spec: &Spec,
    prefix: &str,
    module_of: fn(&str) -> String,
    names: &[&str],
    index_fn: &str,
) -> Vec<TokenStream> {
    let n = names.len();
    spec.tiers
        .iter()
        .map(|t| {
            let name = ident(&format!("{prefix}{}", t.name.to_ascii_uppercase()));
            let module = ident(&module_of(&t.name));
            let fns = names.iter().map(|f| ident(f));
            let doc = format!(
                "The kernels of this table for the `{}` tier, indexed by `{index_fn}`.",
                t.name
            );
            let cfg = if t.arch == "any" {
                quote!()
            } else {
                let arch = &t.arch;
                quote!(#[cfg(target_arch = #arch)])
            };
            quote! {
                #[doc = #doc]
                #cfg
                pub static #name: [LoopFn; #n] = [ #(crate::#module::#fns as LoopFn),* ];
            }
        })
        .collect()
}

/// Emit `table.rs`.
pub fn emit(spec: &Spec, kernels: &[KernelPlan], casts: &[CastPlan]) -> TokenStream {
    let n = kernels.len();
    let nc = casts.len();
    let nv1 = spec.variants_for(1).len();
    let cast_names: Vec<&str> = casts.iter().map(|c| c.fn_name.as_str()).collect();
    let cast_tables = tier_tables(spec, "CAST_TABLE_", casts_module, &cast_names, "cast_index");
    let v1 = spec.variants_for(1).into_iter().map(|v| ident(v.ident()));
    let infos = kernels.iter().map(|k| {
        let kind = ident(&camel(&spec.kinds[k.kind].name));
        let dtype = ident(&spec.dtypes[k.dtype].ident());
        let v = ident(k.variant.ident());
        quote!(KernelInfo { kind: Kind::#kind, dtype: DType::#dtype, variant: Variant::#v })
    });
    let kernel_names: Vec<&str> = kernels.iter().map(|k| k.fn_name.as_str()).collect();
    let tables = tier_tables(spec, "TABLE_", tier_module, &kernel_names, "kernel_index");
    // base[kind][dtype]: the index of the kind's first variant for the dtype.
    let mut base = vec![vec![u32::MAX; spec.dtypes.len()]; spec.kinds.len()];
    for (i, k) in kernels.iter().enumerate() {
        if base[k.kind][k.dtype] == u32::MAX {
            base[k.kind][k.dtype] = i as u32;
        }
    }
    let nk = spec.kinds.len();
    let nd = spec.dtypes.len();
    let rows = base.iter().map(|r| quote!([#(#r),*]));
    let by_arity = (1..=3).map(|a| {
        let vs = spec.variants_for(a).into_iter().map(|v| ident(v.ident()));
        quote!(#a => &[#(Variant::#vs),*],)
    });
    quote! {
        //! Which kernels exist, and where each tier's are.
        use crate::catalog::{DType, Kind};
        use crate::runtime::loops::LoopFn;
        use crate::runtime::meta::Variant;

        /// One generated kernel: a kind on a dtype in a loop variant.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct KernelInfo {
            /// The kind.
            pub kind: Kind,
            /// The dtype of the call (of its inputs, but for select's condition).
            pub dtype: DType,
            /// The loop variant.
            pub variant: Variant,
        }

        /// Kernels per tier.
        pub const KERNEL_COUNT: usize = #n;

        /// Every kernel, in table order.
        pub static KERNELS: [KernelInfo; #n] = [ #(#infos),* ];

        #(#tables)*

        static BASE: [[u32; #nd]; #nk] = [ #(#rows),* ];

        /// The loop variants emitted for a kind of `arity` inputs, in table order.
        pub fn variants_for(arity: usize) -> &'static [Variant] {
            match arity {
                #(#by_arity)*
                _ => &[],
            }
        }

        /// Cast kernels per tier: every (source, destination) pair, two modes, the
        /// one-input loop variants.
        pub const CAST_COUNT: usize = #nc;

        #(#cast_tables)*

        /// The index of a cast kernel in every tier's cast table, or None for a
        /// variant casts are not emitted for.
        pub fn cast_index(src: DType, dst: DType, saturating: bool, variant: Variant) -> Option<usize> {
            let slot = [#(Variant::#v1),*].iter().position(|v| *v == variant)?;
            let pair = src as usize * DType::ALL.len() + dst as usize;
            Some((pair * 2 + saturating as usize) * #nv1 + slot)
        }

        /// The table index of a kernel, or None where the spec declares no such kernel.
        pub fn kernel_index(kind: Kind, dtype: DType, variant: Variant) -> Option<usize> {
            let base = BASE[kind as usize][dtype as usize];
            if base == u32::MAX {
                return None;
            }
            let slot = variants_for(kind.info().arity).iter().position(|v| *v == variant)?;
            Some(base as usize + slot)
        }
    }
}
