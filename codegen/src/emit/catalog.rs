//! The catalogue enums and their metadata tables: `DType`, `Kind`, `Tier`, `Format`.

use crate::spec::{camel, Class, Spec};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

fn f64_lit(v: f64) -> TokenStream {
    let l = Literal::f64_unsuffixed(v);
    quote!(#l)
}

fn opt_str(v: &Option<String>) -> TokenStream {
    match v {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    }
}

/// Emit `catalog.rs`.
pub fn emit(spec: &Spec) -> TokenStream {
    let dtypes = emit_dtypes(spec);
    let kinds = emit_kinds(spec);
    let tiers = emit_tiers(spec);
    let formats = emit_formats(spec);
    quote! {
        //! The catalogues of `spec/`: every dtype, kind, tier and block-scaled format,
        //! as enums with their metadata.
        use crate::runtime::meta::*;
        #dtypes
        #kinds
        #tiers
        #formats
    }
}

fn unit_roundoff(spec: &Spec, acc: &str) -> f64 {
    let d = spec.dtype(acc).expect("validated");
    match d.class {
        Class::Float => 2f64.powi(-(d.float.as_ref().expect("float").mantissa_bits as i32) - 1),
        Class::Complex => {
            let comp = if d.bits == 64 { 23 } else { 52 };
            2f64.powi(-comp - 1)
        }
        _ => 0.0,
    }
}

fn emit_dtypes(spec: &Spec) -> TokenStream {
    let n = spec.dtypes.len();
    let idents: Vec<Ident> = spec.dtypes.iter().map(|d| ident(&d.ident())).collect();
    let docs: Vec<String> = spec
        .dtypes
        .iter()
        .map(|d| format!("`{}`: {}", d.name, d.doc))
        .collect();
    let infos = spec.dtypes.iter().map(|d| {
        let name = &d.name;
        let aliases = &d.aliases;
        let class = ident(d.class.variant());
        let bits = d.bits;
        let vpb = d.values_per_byte;
        let item = d.item_bytes();
        let carrier = &d.carrier;
        let acc = &d.accumulator;
        let u = f64_lit(unit_roundoff(spec, &d.accumulator));
        let numpy = opt_str(&d.numpy);
        let doc = &d.doc;
        let float = match &d.float {
            None => quote!(None),
            Some(f) => {
                let (e, m, bias, signed, sub, inf, negz) = (
                    f.exponent_bits,
                    f.mantissa_bits,
                    f.bias,
                    f.signed,
                    f.subnormals,
                    f.infinities,
                    f.negative_zero,
                );
                let nan = ident(f.nan);
                let (maxf, minn, minp, eps) = (
                    f64_lit(f.max_finite),
                    f64_lit(f.min_normal),
                    f64_lit(f.min_positive),
                    f64_lit(f.epsilon),
                );
                let ties = f.ties_away;
                let od = ident(f.overflow_default);
                let os = ident(f.overflow_saturating);
                let nt = ident(f.nan_to);
                let ng = ident(f.negative);
                quote! {
                    Some(FloatInfo {
                        exponent_bits: #e, mantissa_bits: #m, bias: #bias, signed: #signed,
                        subnormals: #sub, infinities: #inf, nan: NanStyle::#nan,
                        negative_zero: #negz, max_finite: #maxf, min_normal: #minn,
                        min_positive: #minp, epsilon: #eps, ties_away: #ties,
                        overflow_default: Overflow::#od, overflow_saturating: Overflow::#os,
                        nan_to: NanTo::#nt, negative: Negative::#ng,
                    })
                }
            }
        };
        let int_range = match d.class {
            Class::Bool => quote!(Some((0, 1))),
            Class::Int => {
                let lo = -(1i128 << (d.bits - 1));
                let hi = (1i128 << (d.bits - 1)) - 1;
                let (lo, hi) = (Literal::i128_unsuffixed(lo), Literal::i128_unsuffixed(hi));
                quote!(Some((#lo, #hi)))
            }
            Class::Uint => {
                let hi = Literal::i128_unsuffixed((1i128 << d.bits) - 1);
                quote!(Some((0, #hi)))
            }
            _ => quote!(None),
        };
        quote! {
            DTypeInfo {
                int_range: #int_range,
                name: #name, aliases: &[#(#aliases),*], class: Class::#class, bits: #bits,
                values_per_byte: #vpb, item_bytes: #item, carrier: #carrier, accumulator: #acc,
                accumulation_unit_roundoff: #u, numpy: #numpy, doc: #doc, float: #float,
            }
        }
    });
    let parse_arms = spec.dtypes.iter().map(|d| {
        let id = ident(&d.ident());
        let names: Vec<String> = std::iter::once(d.name.clone())
            .chain(d.aliases.iter().cloned())
            .map(|s| s.to_ascii_lowercase())
            .collect();
        quote!( #(#names)|* => Some(DType::#id), )
    });
    quote! {
        /// An element type of `spec/dtypes.toml`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DType {
            #( #[doc = #docs] #idents, )*
        }

        /// The metadata of every dtype, in `DType` order.
        pub static DTYPE_INFO: [DTypeInfo; #n] = [ #(#infos),* ];

        impl DType {
            /// Every dtype, in spec order.
            pub const ALL: [DType; #n] = [ #(DType::#idents),* ];
            /// Its metadata.
            pub fn info(self) -> &'static DTypeInfo { &DTYPE_INFO[self as usize] }
            /// Its printed name.
            pub fn name(self) -> &'static str { self.info().name }
            /// Parse a name or alias (case-insensitive).
            pub fn from_name(name: &str) -> Option<DType> {
                match name.to_ascii_lowercase().as_str() {
                    #(#parse_arms)*
                    _ => None,
                }
            }
        }

        impl core::fmt::Display for DType {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }
    }
}

fn emit_kinds(spec: &Spec) -> TokenStream {
    let n = spec.kinds.len();
    let idents: Vec<Ident> = spec.kinds.iter().map(|k| ident(&camel(&k.name))).collect();
    let docs: Vec<String> = spec
        .kinds
        .iter()
        .map(|k| format!("`{}`: {}", k.name, k.doc))
        .collect();
    let names: Vec<&String> = spec.kinds.iter().map(|k| &k.name).collect();
    let infos = spec.kinds.iter().map(|k| {
        let name = &k.name;
        let arity = k.arity;
        let accepts = k.accepts.iter().map(|c| ident(c.variant()));
        let operands = ident(k.operands);
        let result = ident(k.result);
        let accuracy = ident(k.accuracy);
        let doc = &k.doc;
        let specials = k.specials.iter().map(|s| quote!(&[#(#s),*]));
        quote! {
            KindInfo {
                name: #name, arity: #arity, accepts: &[#(Class::#accepts),*],
                operands: OperandRule::#operands, result: ResultRule::#result,
                accuracy: Accuracy::#accuracy, specials: &[#(#specials),*], doc: #doc,
            }
        }
    });
    quote! {
        /// An elementwise kind of `spec/kinds.toml`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind {
            #( #[doc = #docs] #idents, )*
        }

        /// The metadata of every kind, in `Kind` order.
        pub static KIND_INFO: [KindInfo; #n] = [ #(#infos),* ];

        impl Kind {
            /// Every kind, in spec order.
            pub const ALL: [Kind; #n] = [ #(Kind::#idents),* ];
            /// Its metadata.
            pub fn info(self) -> &'static KindInfo { &KIND_INFO[self as usize] }
            /// Its name.
            pub fn name(self) -> &'static str { self.info().name }
            /// Parse a name.
            pub fn from_name(name: &str) -> Option<Kind> {
                match name {
                    #( #names => Some(Kind::#idents), )*
                    _ => None,
                }
            }
        }

        impl core::fmt::Display for Kind {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }
    }
}

fn emit_tiers(spec: &Spec) -> TokenStream {
    let n = spec.tiers.len();
    let idents: Vec<Ident> = spec.tiers.iter().map(|t| ident(&camel(&t.name))).collect();
    let docs: Vec<String> = spec
        .tiers
        .iter()
        .map(|t| format!("`{}`: {}", t.name, t.doc))
        .collect();
    let names: Vec<&String> = spec.tiers.iter().map(|t| &t.name).collect();
    let infos = spec.tiers.iter().map(|t| {
        let (name, arch, doc) = (&t.name, &t.arch, &t.doc);
        let feats = &t.features;
        quote!(TierInfo { name: #name, arch: #arch, features: &[#(#feats),*], doc: #doc })
    });
    let avail = spec.tiers.iter().map(|t| {
        let id = ident(&camel(&t.name));
        if t.arch == "any" {
            return quote!(Tier::#id => true,);
        }
        let arch = &t.arch;
        let feats = &t.features;
        let detect = if feats.is_empty() {
            quote!(true)
        } else if arch == "x86_64" {
            quote!( #( std::is_x86_feature_detected!(#feats) )&&* )
        } else {
            quote!( #( std::arch::is_aarch64_feature_detected!(#feats) )&&* )
        };
        quote! {
            Tier::#id => {
                #[cfg(target_arch = #arch)]
                { #detect }
                #[cfg(not(target_arch = #arch))]
                { false }
            }
        }
    });
    let table_arms =
        |prefix: &str| -> Vec<TokenStream> {
            spec.tiers.iter().map(|t| {
        let id = ident(&camel(&t.name));
        let table = ident(&format!("{prefix}{}", t.name.to_ascii_uppercase()));
        if t.arch == "any" {
            quote!(Tier::#id => Some(&crate::table::#table),)
        } else {
            let arch = &t.arch;
            quote! {
                Tier::#id => {
                    #[cfg(target_arch = #arch)]
                    { if self.available() { Some(&crate::table::#table) } else { None } }
                    #[cfg(not(target_arch = #arch))]
                    { None }
                }
            }
        }
        }).collect()
        };
    let tables = table_arms("TABLE_");
    let cast_tables = table_arms("CAST_TABLE_");
    quote! {
        /// An instruction-set tier of `spec/tiers.toml`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Tier {
            #( #[doc = #docs] #idents, )*
        }

        /// The metadata of every tier, in `Tier` order.
        pub static TIER_INFO: [TierInfo; #n] = [ #(#infos),* ];

        impl Tier {
            /// Every tier, in spec order (the first is the scalar reference).
            pub const ALL: [Tier; #n] = [ #(Tier::#idents),* ];
            /// Its metadata.
            pub fn info(self) -> &'static TierInfo { &TIER_INFO[self as usize] }
            /// Its name.
            pub fn name(self) -> &'static str { self.info().name }
            /// Parse a name.
            pub fn from_name(name: &str) -> Option<Tier> {
                match name {
                    #( #names => Some(Tier::#idents), )*
                    _ => None,
                }
            }
            /// Whether this CPU runs the tier (detected at run time).
            pub fn available(self) -> bool {
                match self { #(#avail)* }
            }
            /// The tier's kernel table, indexed by `kernel_index`, where the CPU runs it.
            pub fn table(self) -> Option<&'static [crate::LoopFn]> {
                match self { #(#tables)* }
            }
            /// The tier's cast kernels, indexed by `cast_index`, where the CPU runs it.
            pub fn cast_table(self) -> Option<&'static [crate::LoopFn]> {
                match self { #(#cast_tables)* }
            }
        }

        impl core::fmt::Display for Tier {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }
    }
}

fn emit_formats(spec: &Spec) -> TokenStream {
    let n = spec.formats.len();
    let idents: Vec<Ident> = spec
        .formats
        .iter()
        .map(|f| ident(&camel(&f.name)))
        .collect();
    let docs: Vec<String> = spec
        .formats
        .iter()
        .map(|f| format!("`{}`: {}", f.name, f.doc))
        .collect();
    let infos = spec.formats.iter().map(|f| {
        let (name, aliases, element, scale, block, doc) =
            (&f.name, &f.aliases, &f.element, &f.scale, f.block, &f.doc);
        let ts = opt_str(&f.tensor_scale);
        let fb = f.fraction_bits;
        let rule = ident(f.scale_rule);
        quote! {
            FormatInfo {
                name: #name, aliases: &[#(#aliases),*], element: #element, scale: #scale,
                block: #block, tensor_scale: #ts, fraction_bits: #fb,
                scale_rule: ScaleRule::#rule, doc: #doc,
            }
        }
    });
    let parse_arms = spec.formats.iter().map(|f| {
        let id = ident(&camel(&f.name));
        let names: Vec<&String> = std::iter::once(&f.name).chain(f.aliases.iter()).collect();
        quote!( #(#names)|* => Some(Format::#id), )
    });
    quote! {
        /// A block-scaled format of `spec/formats.toml`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Format {
            #( #[doc = #docs] #idents, )*
        }

        /// The metadata of every format, in `Format` order.
        pub static FORMAT_INFO: [FormatInfo; #n] = [ #(#infos),* ];

        impl Format {
            /// Every format, in spec order.
            pub const ALL: [Format; #n] = [ #(Format::#idents),* ];
            /// Its metadata.
            pub fn info(self) -> &'static FormatInfo { &FORMAT_INFO[self as usize] }
            /// Parse a name or alias.
            pub fn from_name(name: &str) -> Option<Format> {
                match name {
                    #(#parse_arms)*
                    _ => None,
                }
            }
        }
    }
}
