//! The parameterised float codecs, one per float dtype carried in f32.

use super::code::Code;
use crate::spec::Spec;

/// Emit `codecs.rs` (after its header).
pub fn emit(spec: &Spec, c: &mut Code) {
    c.inner_doc("One codec per float dtype that computes in f32, from its parameters.");
    c.line("use crate::runtime::meta::{NanStyle, NanTo, Negative, Overflow};");
    c.line("use crate::runtime::minifloat::{Mini, MiniFloat, ParamsVisitor};");
    for d in spec.dtypes.iter().filter(|d| d.is_mini()) {
        let f = d.float.as_ref().expect("a float dtype has parameters");
        let params = format!("{}Params", d.ident());
        c.line("");
        c.doc(&format!("The parameters of `{}`.", d.name));
        c.line(format!("pub struct {params};"));
        c.open(format!("impl MiniFloat for {params} {{"));
        c.line(format!("type Store = {};", d.store_type()));
        c.line(format!("const EXP_BITS: u32 = {};", f.exponent_bits));
        c.line(format!("const MAN_BITS: u32 = {};", f.mantissa_bits));
        c.line(format!("const BIAS: i32 = {};", f.bias));
        c.line(format!("const SIGNED: bool = {};", f.signed));
        c.line(format!("const SUBNORMALS: bool = {};", f.subnormals));
        c.line(format!("const INFINITIES: bool = {};", f.infinities));
        c.line(format!("const NAN: NanStyle = NanStyle::{:?};", f.nan));
        c.line(format!("const NEG_ZERO: bool = {};", f.negative_zero));
        c.line(format!("const TIES_AWAY: bool = {};", f.ties_away));
        c.line(format!("const MAX_CODE: u32 = {};", f.max_code as u32));
        c.line(format!(
            "const OVERFLOW: Overflow = Overflow::{:?};",
            f.overflow_default
        ));
        c.line(format!(
            "const OVERFLOW_SAT: Overflow = Overflow::{:?};",
            f.overflow_saturating
        ));
        c.line(format!("const NAN_TO: NanTo = NanTo::{:?};", f.nan_to));
        c.line(format!(
            "const NEGATIVE: Negative = Negative::{:?};",
            f.negative
        ));
        c.close("}");
        c.doc(&format!(
            "The codec of `{}`: f32 carrier, round to nearest even.",
            d.name
        ));
        c.line(format!("pub type {} = Mini<{params}>;", d.ident()));
    }
    c.line("");
    c.doc(
        "Run `v` with the parameters of `dtype`, or None where `dtype` is not a \
         parameterised float carried in f32.",
    );
    c.open(
        "pub fn visit_params<V: ParamsVisitor<crate::DType>>(dtype: crate::DType, v: V) -> Option<V::Out> {",
    );
    c.open("match dtype {");
    for d in spec.dtypes.iter().filter(|d| d.is_mini()) {
        c.line(format!(
            "crate::DType::{} => Some(v.visit::<{}Params>(dtype)),",
            d.ident(),
            d.ident()
        ));
    }
    c.line("_ => None,");
    c.close("}");
    c.close("}");
}
