//! The kernel registry: which kernels exist and where each sits in every
//! tier's tables (the tables themselves are defined by each tier's crate).

use super::code::Code;
use crate::spec::{camel, CastPlan, KernelPlan, Spec};

/// Emit `table.rs` (after its header).
pub fn emit(spec: &Spec, kernels: &[KernelPlan], casts: &[CastPlan], c: &mut Code) {
    let n = kernels.len();
    let nv1 = spec.variants_for(1).len();
    c.inner_doc("Which kernels exist, and where each sits in every tier's tables.");
    c.line("use crate::catalog::{DType, Kind};");
    c.line("use crate::runtime::meta::Variant;");
    c.line("");
    c.doc("One generated kernel: a kind on a dtype in a loop variant.");
    c.line("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]");
    c.open("pub struct KernelInfo {");
    c.doc("The kind.");
    c.line("pub kind: Kind,");
    c.doc("The dtype of the call (of its inputs, but for select's condition).");
    c.line("pub dtype: DType,");
    c.doc("The loop variant.");
    c.line("pub variant: Variant,");
    c.close("}");
    c.line("");
    c.open("impl KernelInfo {");
    c.open("const fn new(kind: Kind, dtype: DType, variant: Variant) -> KernelInfo {");
    c.line("KernelInfo { kind, dtype, variant }");
    c.close("}");
    c.close("}");
    c.line("");
    c.doc("Kernels per tier.");
    c.line(format!("pub const KERNEL_COUNT: usize = {n};"));
    c.line("");
    c.doc("Every kernel, in table order.");
    c.open(format!("pub static KERNELS: [KernelInfo; {n}] = ["));
    for k in kernels {
        c.line(format!(
            "KernelInfo::new(Kind::{}, DType::{}, Variant::{}),",
            camel(&spec.kinds[k.kind].name),
            spec.dtypes[k.dtype].ident(),
            k.variant.ident()
        ));
    }
    c.close("];");
    // base[kind][dtype]: the index of the kind's first variant for the dtype.
    let mut base = vec![vec![u32::MAX; spec.dtypes.len()]; spec.kinds.len()];
    for (i, k) in kernels.iter().enumerate() {
        if base[k.kind][k.dtype] == u32::MAX {
            base[k.kind][k.dtype] = i as u32;
        }
    }
    c.line("");
    c.doc(
        "The index of each kind's first kernel for each dtype (`u32::MAX`: the \
         spec declares none).",
    );
    c.open(format!(
        "static BASE: [[u32; {}]; {}] = [",
        spec.dtypes.len(),
        spec.kinds.len()
    ));
    for row in &base {
        let cells: Vec<String> = row
            .iter()
            .map(|&b| {
                if b == u32::MAX {
                    "u32::MAX".to_string()
                } else {
                    b.to_string()
                }
            })
            .collect();
        c.line(format!("[{}],", cells.join(", ")));
    }
    c.close("];");
    c.line("");
    c.doc("The loop variants emitted for a kind of `arity` inputs, in table order.");
    c.open("pub fn variants_for(arity: usize) -> &'static [Variant] {");
    c.open("match arity {");
    for a in 1..=3 {
        let vs: Vec<String> = spec
            .variants_for(a)
            .into_iter()
            .map(|v| format!("Variant::{}", v.ident()))
            .collect();
        c.line(format!("{a} => &[{}],", vs.join(", ")));
    }
    c.line("_ => &[],");
    c.close("}");
    c.close("}");
    c.line("");
    c.doc(
        "Cast kernels per tier: every (source, destination) pair, two modes, \
         the one-input loop variants.",
    );
    c.line(format!("pub const CAST_COUNT: usize = {};", casts.len()));
    c.line("");
    c.doc(
        "The index of a cast kernel in every tier's cast table, or None for a \
         variant casts are not emitted for.",
    );
    c.open(
        "pub fn cast_index(src: DType, dst: DType, saturating: bool, variant: Variant) -> Option<usize> {",
    );
    let v1: Vec<String> = spec
        .variants_for(1)
        .into_iter()
        .map(|v| format!("Variant::{}", v.ident()))
        .collect();
    c.line(format!(
        "let slot = [{}].iter().position(|v| *v == variant)?;",
        v1.join(", ")
    ));
    c.line("let pair = src as usize * DType::ALL.len() + dst as usize;");
    c.line(format!(
        "Some((pair * 2 + saturating as usize) * {nv1} + slot)"
    ));
    c.close("}");
    c.line("");
    c.doc("The table index of a kernel, or None where the spec declares no such kernel.");
    c.open("pub fn kernel_index(kind: Kind, dtype: DType, variant: Variant) -> Option<usize> {");
    c.line("let base = BASE[kind as usize][dtype as usize];");
    c.open("if base == u32::MAX {");
    c.line("return None;");
    c.close("}");
    c.line("let slot = variants_for(kind.info().arity).iter().position(|v| *v == variant)?;");
    c.line("Some(base as usize + slot)");
    c.close("}");
}
