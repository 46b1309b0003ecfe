//! B packed once, multiplied many times: [`PackedB`] holds a `k × n` matrix
//! in the accumulator's dtype twice over, as the chain-order GEMM's
//! micro-panels for the tier it was packed on and as C-ordered values, and
//! [`matmul_packed`] multiplies any `m × k` A by it without packing B again.
//! The packing is data movement and the product consumes the same values in
//! the same k-ascending chains, so the bits are [`super::matmul`]'s of A and
//! the original B with the same accumulator, whatever the order, tier or
//! thread count the call runs with (a product that [`super::contract`] runs
//! in lane order, or a run on another tier, reads the C-ordered values).

use super::acc::Src;
use super::drive_real::to_acc;
use super::gemm::{Chain, Operand, Panels};
use super::select::Chained;
use super::{choose_order, contract, ContractSpec, Order};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::scratch::Block;
use crate::tier::{Engine, Exec};
use crate::{DType, Tier};

/// A `k × n` right-hand operand packed for repeated products (see the
/// module documentation). Accumulators f32 and f64.
#[derive(Clone, Debug)]
pub struct PackedB {
    acc: DType,
    k: usize,
    n: usize,
    /// The tier the panels are laid out for (its microkernel's columns).
    tier: Tier,
    /// Columns of a micro-panel and depth of a block, as packed.
    nr: usize,
    kc: usize,
    /// The micro-panels: `panel_len` elements of `acc` from the start of
    /// these 64-byte blocks.
    panels: Vec<Block>,
    panel_len: usize,
    /// B's values in acc, C order.
    values: Vec<u8>,
}

impl PackedB {
    /// Pack `b` (rank 2, `k × n`, any dtype `contract` casts into `acc`, any
    /// layout) for products accumulated in `acc` (f32 or f64) on `exec`'s
    /// contraction tier. Refuses another rank, another accumulator
    /// ([`Error::DTypeUnsupported`]), a dtype the accumulator does not take,
    /// and memory it cannot allocate ([`PackedB::bytes`] says how much).
    pub fn new(b: &ArrayView<'_>, acc: DType, exec: &Exec) -> Result<PackedB> {
        match acc {
            DType::F32 => Self::new_as::<f32>(b, acc, exec),
            DType::F64 => Self::new_as::<f64>(b, acc, exec),
            _ => Err(Error::DTypeUnsupported {
                operand: "PackedB: the accumulator".into(),
                dtype: acc,
                reason: "B is packed for the f32 and f64 chain-order products; contract and \
                         matmul take every other accumulator"
                    .into(),
            }),
        }
    }

    /// The bytes a packed `k × n` B for `acc` holds on `tier` (a query:
    /// nothing allocated): the micro-panels (columns rounded up to the
    /// microkernel's) and the C-ordered values. Refuses what
    /// [`PackedB::new`] refuses of the accumulator and sizes that overflow.
    pub fn bytes(k: usize, n: usize, acc: DType, tier: Tier) -> Result<usize> {
        let (item, nr) = match acc {
            DType::F32 => (4, <f32 as Chained>::micro(tier).map_or(1, |m| m.nr)),
            DType::F64 => (8, <f64 as Chained>::micro(tier).map_or(1, |m| m.nr)),
            _ => {
                return Err(Error::DTypeUnsupported {
                    operand: "PackedB: the accumulator".into(),
                    dtype: acc,
                    reason: "f32 or f64".into(),
                })
            }
        };
        let overflow = || Error::Overflow {
            operand: "PackedB: its size".into(),
        };
        let panels = n
            .div_ceil(nr)
            .checked_mul(nr)
            .and_then(|c| c.checked_mul(k))
            .ok_or_else(overflow)?;
        let values = k.checked_mul(n).ok_or_else(overflow)?;
        panels
            .checked_add(values)
            .and_then(|e| e.checked_mul(item))
            .ok_or_else(overflow)
    }

    /// `(k, n)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.k, self.n)
    }

    /// The accumulator it was packed for.
    pub fn acc(&self) -> DType {
        self.acc
    }

    /// The bytes it holds (what [`PackedB::bytes`] said).
    pub fn held_bytes(&self) -> usize {
        self.panels.len() * size_of::<Block>() + self.values.len()
    }

    fn new_as<T: Chained>(b: &ArrayView<'_>, acc: DType, exec: &Exec) -> Result<PackedB> {
        let &[k, n] = b.shape() else {
            return Err(Error::Rank {
                operand: "PackedB: b".into(),
                shape: b.shape().to_vec(),
                expected: "two axes (k × n)".into(),
            });
        };
        let tier = exec.resolve_tier_for(Engine::Contract)?;
        // The values in acc, C order (a copy whatever b's dtype).
        let item = size_of::<T>();
        let total = PackedB::bytes(k, n, acc, tier)?;
        let mut values = crate::alloc::try_filled(k * n * item, 0u8, "PackedB: the values")?;
        if k * n > 0 {
            let mut v = ArrayViewMut::contiguous(acc, &[k, n], &mut values)?;
            crate::cast::cast(crate::cast::CastMode::Default, b, &mut v, exec)?;
        }
        let Some(micro) = T::micro(tier) else {
            // No microkernel on this tier: the values alone serve every run.
            return Ok(PackedB {
                acc,
                k,
                n,
                tier,
                nr: 0,
                kc: 0,
                panels: Vec::new(),
                panel_len: 0,
                values,
            });
        };
        let nr = micro.nr;
        // The blocking the product's chain picks for this B (its columns
        // and depth alone decide it).
        let b_ks: Vec<isize> = (0..k).map(|t| (t * n) as isize).collect();
        let b_cols: Vec<isize> = (0..n as isize).collect();
        let probe = Chain::new(
            micro,
            Operand {
                src: Src::new(&values),
                base: 0,
                raw: None,
            },
            &[],
            &b_ks,
            Operand {
                src: Src::new(&values),
                base: 0,
                raw: None,
            },
            &b_ks,
            &b_cols,
            false,
            Panels::Cache,
        );
        let kc = probe.blk.kc;
        let groups = n.div_ceil(nr);
        let panel_len = groups * nr * k;
        let item_total = panel_len * item;
        debug_assert!(item_total + values.len() == total);
        let mut panels =
            crate::alloc::try_zeroed_blocks(item_total.div_ceil(64), "PackedB: the micro-panels")?;
        {
            // SAFETY: the blocks hold at least panel_len elements of T
            // (item_total bytes, rounded up to whole blocks), 64-byte aligned,
            // and every bit pattern is a valid f32 or f64.
            let out: &mut [T] =
                unsafe { std::slice::from_raw_parts_mut(panels.as_mut_ptr() as *mut T, panel_len) };
            let mut pc = 0;
            while pc < k {
                let kcb = kc.min(k - pc);
                let block = &mut out[pc * groups * nr..(pc + kcb) * groups * nr];
                // SAFETY: positions t·n + j for t < k, j < n lie in the
                // C-ordered k × n values of dtype T.
                unsafe {
                    super::pack::pack_b(
                        Src::new(&values),
                        0,
                        &b_ks[pc..pc + kcb],
                        &b_cols,
                        true,
                        nr,
                        block,
                    )
                };
                pc += kcb;
            }
        }
        Ok(PackedB {
            acc,
            k,
            n,
            tier,
            nr,
            kc,
            panels,
            panel_len,
            values,
        })
    }

    fn values_view(&self) -> Result<ArrayView<'_>> {
        ArrayView::contiguous(self.acc, &[self.k, self.n], &self.values)
    }
}

/// `dst = a · b` for `a` of shape `m × k` (any dtype the accumulator takes,
/// any layout) and a [`PackedB`] of `k × n`, into `dst` (`m × n`, any dtype,
/// any layout; one rounding from the accumulator): the bits of
/// [`super::matmul`] of `a` and the original B accumulated in `b.acc()`.
/// Refuses (before any write) another rank, a depth or destination shape
/// that does not match, and what `contract` refuses of the dtypes.
pub fn matmul_packed(
    a: &ArrayView<'_>,
    b: &PackedB,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let &[m, k] = a.shape() else {
        return Err(Error::Rank {
            operand: "matmul_packed: a".into(),
            shape: a.shape().to_vec(),
            expected: "two axes (m × k)".into(),
        });
    };
    if k != b.k {
        return Err(Error::Shape {
            operand: "matmul_packed: a (its depth is not the packed B's)".into(),
            shape: a.shape().to_vec(),
            target: vec![m, b.k],
        });
    }
    if dst.shape() != [m, b.n] {
        return Err(Error::Shape {
            operand: "matmul_packed: the destination".into(),
            shape: dst.shape().to_vec(),
            target: vec![m, b.n],
        });
    }
    let spec = ContractSpec::matmul(2, b.acc);
    let tier = exec.resolve_tier_for(Engine::Contract)?;
    let packed_here = b.nr > 0 && tier == b.tier;
    if !packed_here || choose_order(m, b.n, k) != Order::Chain || m == 0 || b.n == 0 || k == 0 {
        return contract(&spec, a, &b.values_view()?, None, dst, exec);
    }
    match b.acc {
        DType::F32 => run::<f32>(a, b, dst, exec, tier),
        _ => run::<f64>(a, b, dst, exec, tier),
    }
}

fn run<T: Chained>(
    a: &ArrayView<'_>,
    b: &PackedB,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
    tier: Tier,
) -> Result<()> {
    let (m, k, n) = (a.shape()[0], b.k, b.n);
    let Some(micro) = T::micro(tier) else {
        let spec = ContractSpec::matmul(2, b.acc);
        return contract(&spec, a, &b.values_view()?, None, dst, exec);
    };
    crate::checks::check_destination(dst)?;
    // A in the accumulator (its bytes where it already is), as contract does.
    let ea = to_acc::<T>(*exec, a, b.acc)?;
    let a_rows: Vec<isize> = (0..m as isize).map(|i| i * ea.strides[0]).collect();
    let a_ks: Vec<isize> = (0..k as isize).map(|t| t * ea.strides[1]).collect();
    let b_ks: Vec<isize> = (0..k).map(|t| (t * n) as isize).collect();
    let b_cols: Vec<isize> = (0..n as isize).collect();
    // SAFETY: the blocks hold panel_len elements of T from their start
    // (PackedB::new_as packed them for this accumulator), 64-byte aligned.
    let panels: &[T] =
        unsafe { std::slice::from_raw_parts(b.panels.as_ptr() as *const T, b.panel_len) };
    let mut chain = Chain::new(
        micro,
        Operand {
            src: Src::new(&ea.bytes),
            base: ea.offset as isize,
            raw: None,
        },
        &a_rows,
        &a_ks,
        Operand {
            src: Src::new(&b.values),
            base: 0,
            raw: None,
        },
        &b_ks,
        &b_cols,
        false,
        Panels::Cache,
    );
    if chain.blk.nr != b.nr || chain.blk.kc != b.kc {
        // Not the blocking it was packed for: the values serve.
        let spec = ContractSpec::matmul(2, b.acc);
        return contract(&spec, a, &b.values_view()?, None, dst, exec);
    }
    chain.b_packed = Some(panels);
    let threads = exec.thread_count();
    // Straight into a C-contiguous, aligned destination of the accumulator's
    // dtype: no buffer and no final pass.
    let off = dst.layout().offset * size_of::<T>();
    if dst.dtype() == b.acc
        && crate::array::c_contiguous(dst.shape(), dst.strides())
        && (dst.data_mut()[off..].as_ptr() as usize).is_multiple_of(align_of::<T>())
    {
        let bytes = &mut dst.data_mut()[off..off + m * n * size_of::<T>()];
        // SAFETY: the bytes start aligned for T (checked), hold the m·n
        // elements of dst's dtype, which is T's, and every bit pattern is a
        // valid T.
        let (pre, out, _) = unsafe { bytes.align_to_mut::<T>() };
        debug_assert!(pre.is_empty() && out.len() == m * n);
        // SAFETY: as below.
        unsafe { chain.run(out, threads, tier)? };
        return Ok(());
    }
    let mut out = crate::alloc::try_filled(m * n, T::default(), "matmul_packed: the products")?;
    // SAFETY: A's positions a.base + row + k are its validated view's (or
    // its C-ordered copy's); B's tables address its C-ordered k × n values
    // and its panels were packed from them for this tier's microkernel,
    // which runs on this CPU (the tier was resolved as available).
    unsafe { chain.run(&mut out, threads, tier)? };
    crate::cast::cast_results(&out, dst, exec)
}
