//! The parameterised float codecs, one per float dtype carried in f32.

use crate::spec::Spec;
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// Emit `codecs.rs`.
pub fn emit(spec: &Spec) -> TokenStream {
    let items = spec.dtypes.iter().filter(|d| d.is_mini()).map(|d| {
        let f = d.float.as_ref().expect("a float dtype has parameters");
        let alias = Ident::new(&d.ident(), Span::call_site());
        let params = Ident::new(&format!("{}Params", d.ident()), Span::call_site());
        let store = Ident::new(&d.store_type(), Span::call_site());
        let (e, m, bias, signed, sub, inf, negz, max_code) = (
            f.exponent_bits,
            f.mantissa_bits,
            f.bias,
            f.signed,
            f.subnormals,
            f.infinities,
            f.negative_zero,
            f.max_code as u32,
        );
        let ties = f.ties_away;
        let nan = Ident::new(f.nan, Span::call_site());
        let od = Ident::new(f.overflow_default, Span::call_site());
        let os = Ident::new(f.overflow_saturating, Span::call_site());
        let nt = Ident::new(f.nan_to, Span::call_site());
        let ng = Ident::new(f.negative, Span::call_site());
        let doc_p = format!("The parameters of `{}`.", d.name);
        let doc_c = format!(
            "The codec of `{}`: f32 carrier, round to nearest even.",
            d.name
        );
        quote! {
            #[doc = #doc_p]
            pub struct #params;
            impl MiniFloat for #params {
                type Store = #store;
                const EXP_BITS: u32 = #e;
                const MAN_BITS: u32 = #m;
                const BIAS: i32 = #bias;
                const SIGNED: bool = #signed;
                const SUBNORMALS: bool = #sub;
                const INFINITIES: bool = #inf;
                const NAN: NanStyle = NanStyle::#nan;
                const NEG_ZERO: bool = #negz;
                const TIES_AWAY: bool = #ties;
                const MAX_CODE: u32 = #max_code;
                const OVERFLOW: Overflow = Overflow::#od;
                const OVERFLOW_SAT: Overflow = Overflow::#os;
                const NAN_TO: NanTo = NanTo::#nt;
                const NEGATIVE: Negative = Negative::#ng;
            }
            #[doc = #doc_c]
            pub type #alias = Mini<#params>;
        }
    });
    let arms = spec.dtypes.iter().filter(|d| d.is_mini()).map(|d| {
        let id = Ident::new(&d.ident(), Span::call_site());
        let params = Ident::new(&format!("{}Params", d.ident()), Span::call_site());
        quote!(crate::DType::#id => Some(v.visit::<#params>(dtype)),)
    });
    quote! {
        //! One codec per float dtype that computes in f32, from its parameters.
        use crate::runtime::meta::{NanStyle, NanTo, Negative, Overflow};
        use crate::runtime::minifloat::{Mini, MiniFloat, ParamsVisitor};
        #(#items)*

        /// Run `v` with the parameters of `dtype`, or None where `dtype` is not a
        /// parameterised float carried in f32.
        pub fn visit_params<V: ParamsVisitor>(dtype: crate::DType, v: V) -> Option<V::Out> {
            match dtype {
                #(#arms)*
                _ => None,
            }
        }
    }
}
