//! Which driver and kernel a contraction runs: the microkernel each tier
//! uses for each accumulator ([`Chained`]), the packing buffers a call
//! needs ([`panel_need`]), and [`contract_in`], which validates the
//! destination and init and hands the call to its driver.

use super::acc::Acc;
use super::association::{choose as choose_order, Order};
use super::drive_complex::run_complex;
use super::drive_integer::{int_via_f64, run_int_via_f64, run_integer};
use super::drive_real::run;
use super::gemm::{Blocking, PanelNeed, Panels};
use super::geometry::check_accumulator;
use super::micro::Micro;
use super::pair::run_pair;
use super::{cache_blocking, geometry, int_acc, integer, micro, pack, small, ContractSpec};
use crate::array::{c_strides, extent_product, ArrayView, ArrayViewMut};
use crate::checks::check_destination;
use crate::elementwise::broadcasts_to;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{DType, Tier};

/// The packing buffers one task of the call's packed GEMM needs (None where
/// it runs none), by the same choices [`contract_in`] makes.
pub(super) fn panel_need(
    tier: Tier,
    spec: &ContractSpec,
    a: (&[usize], DType),
    b: (&[usize], DType),
) -> Result<Option<PanelNeed>> {
    check_accumulator(spec.acc)?;
    let g = geometry(a.0, &c_strides(a.0), b.0, &c_strides(b.0), spec)?;
    // Exact where none is 0 (the operands' counts are checked).
    let (r, c, k) = (
        extent_product(g.rows.iter().copied()),
        extent_product(g.cols.iter().copied()),
        extent_product(g.depth.iter().copied()),
    );
    if r == 0 || c == 0 || k == 0 || extent_product(g.batch.iter().copied()) == 0 {
        return Ok(None);
    }
    fn need<T: Chained>(
        tier: Tier,
        (r, c, k): (usize, usize, usize),
        raw: [Option<DType>; 2],
    ) -> Option<PanelNeed> {
        let Micro { mr, nr, .. } = T::micro(tier)?;
        let blk: Blocking = cache_blocking::for_tile(mr, nr, size_of::<T>());
        let bytes = |d: Option<DType>| d.map_or(0, |d| d.info().item_bytes);
        Some(PanelNeed::of(
            blk,
            r,
            c,
            k,
            size_of::<T>(),
            bytes(raw[0]),
            bytes(raw[1]),
        ))
    }
    // As `run`: in chain order an operand of another whole-byte dtype is
    // packed as raw codes.
    let raw = |d: DType, acc: DType| (d != acc && d.info().values_per_byte == 1).then_some(d);
    let chain = choose_order(r, c, k) == Order::Chain;
    Ok(match spec.acc {
        DType::F32 if chain => need::<f32>(
            tier,
            (r, c, k),
            [raw(a.1, DType::F32), raw(b.1, DType::F32)],
        ),
        DType::F64 if chain => need::<f64>(
            tier,
            (r, c, k),
            [raw(a.1, DType::F64), raw(b.1, DType::F64)],
        ),
        // The packed integer products keep their panels themselves.
        DType::I32 if integer::plan(tier, a.1, b.1, spec.acc).is_some() => None,
        DType::I32 | DType::I64 if int_via_f64(a.0, a.1, b.0, b.1, spec) => need::<f64>(
            tier,
            (r, c, k),
            [raw(a.1, DType::F64), raw(b.1, DType::F64)],
        ),
        _ => None,
    })
}

/// [`contract`] in a given order (segments choose it for the whole call).
#[allow(clippy::too_many_arguments)]
pub(crate) fn contract_in(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    exec: Exec,
    forced: Option<Order>,
    panels: Panels,
) -> Result<()> {
    let tier = exec.resolve_tier()?;
    check_accumulator(spec.acc)?;
    // Small plain products skip the general set-up (the same bits).
    if forced.is_none()
        && spec.batch.is_empty()
        && spec.contracting.len() == 1
        && matches!(spec.acc, DType::F32 | DType::F64)
        && dst.dtype() == spec.acc
    {
        if let Some(done) = small::try_run(tier, a, b, init, dst, spec.contracting[0]) {
            return done;
        }
    }
    let g = geometry(a.shape(), a.strides(), b.shape(), b.strides(), spec)?;
    if dst.shape() != g.out_shape.as_slice() {
        return Err(Error::Shape {
            operand: "destination".into(),
            shape: dst.shape().to_vec(),
            target: g.out_shape.clone(),
        });
    }
    check_destination(dst)?;
    if let Some(i) = init {
        if !broadcasts_to(i.shape(), dst.shape()) {
            return Err(Error::Shape {
                operand: "init".into(),
                shape: i.shape().to_vec(),
                target: dst.shape().to_vec(),
            });
        }
    }
    if dst.layout().is_empty() {
        return Ok(());
    }
    if let Some(plan) = integer::plan(tier, a.dtype(), b.dtype(), spec.acc) {
        return run_integer(plan, exec, a, b, init, dst, spec);
    }
    match spec.acc {
        DType::F32 => run::<f32>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::F64 => run::<f64>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::I32 | DType::I64
            if int_via_f64(a.shape(), a.dtype(), b.shape(), b.dtype(), spec) =>
        {
            run_int_via_f64(tier, exec, a, b, init, dst, spec, panels)
        }
        DType::I32 => run::<i32>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::I64 => run::<i64>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::C64 => run_complex::<f32>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::C128 => run_complex::<f64>(tier, exec, a, b, init, dst, spec, forced, panels),
        DType::Df32 => run_pair::<f32>(tier, exec, a, b, init, dst, spec, forced),
        DType::Dd64 => run_pair::<f64>(tier, exec, a, b, init, dst, spec, forced),
        acc if int_acc::takes(acc) => int_acc::run(exec, a, b, init, dst, spec),
        // `check_accumulator` above refused every other accumulator.
        other => unreachable!("accumulator {other} passed check_accumulator"),
    }
}

/// Which chain-order microkernel a tier uses for `T`, with its shape.
pub(crate) trait Chained: Acc + crate::Element + Default {
    /// The tier's microkernel (None: this dtype takes the lane path).
    fn micro(tier: Tier) -> Option<Micro<Self>>;
    /// A kernel of fewer columns for narrow products (the same bits).
    fn narrow(_tier: Tier) -> Option<Micro<Self>> {
        None
    }
}

impl Chained for f32 {
    fn narrow(tier: Tier) -> Option<Micro<Self>> {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return Some(Micro {
                full: micro::avx512_f32_14x16,
                edge: micro::avx512_f32_14x16_edge,
                mr: 14,
                nr: 16,
                pack: Some(pack::pack_rows_f32_avx512),
            });
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return Self::micro(tier);
        }
        let _ = tier;
        None
    }
    fn micro(tier: Tier) -> Option<Micro<Self>> {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return Some(Micro {
                full: micro::avx512_f32_14x32,
                edge: micro::avx512_f32_14x32_edge,
                mr: 14,
                nr: 32,
                pack: Some(pack::pack_rows_f32_avx512),
            });
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return Some(Micro {
                full: micro::avx2_f32_6x16,
                edge: micro::avx2_f32_6x16_edge,
                mr: 6,
                nr: 16,
                pack: Some(pack::pack6_f32_avx2),
            });
        }
        let _ = tier;
        Some(Micro {
            full: micro::scalar::<f32, 6, 16>,
            edge: micro::scalar_edge::<f32, 6, 16>,
            mr: 6,
            nr: 16,
            pack: None,
        })
    }
}

impl Chained for f64 {
    fn narrow(tier: Tier) -> Option<Micro<Self>> {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return Some(Micro {
                full: micro::avx512_f64_14x8,
                edge: micro::avx512_f64_14x8_edge,
                mr: 14,
                nr: 8,
                pack: Some(pack::pack_rows_f64_avx512),
            });
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return Self::micro(tier);
        }
        let _ = tier;
        None
    }
    fn micro(tier: Tier) -> Option<Micro<Self>> {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return Some(Micro {
                full: micro::avx512_f64_14x16,
                edge: micro::avx512_f64_14x16_edge,
                mr: 14,
                nr: 16,
                pack: Some(pack::pack_rows_f64_avx512),
            });
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return Some(Micro {
                full: micro::avx2_f64_6x8,
                edge: micro::avx2_f64_6x8_edge,
                mr: 6,
                nr: 8,
                pack: Some(pack::pack6_f64_avx2),
            });
        }
        let _ = tier;
        Some(Micro {
            full: micro::scalar::<f64, 6, 8>,
            edge: micro::scalar_edge::<f64, 6, 8>,
            mr: 6,
            nr: 8,
            pack: None,
        })
    }
}

// Integer sums are exact in any order: they take the lane path.
impl Chained for i32 {
    fn micro(_: Tier) -> Option<Micro<Self>> {
        None
    }
}

impl Chained for i64 {
    fn micro(_: Tier) -> Option<Micro<Self>> {
        None
    }
}
