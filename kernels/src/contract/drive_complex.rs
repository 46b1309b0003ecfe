//! The driver of complex contractions: chain order on the complex
//! microkernels (`complex.rs`), lane order as two real contractions over 2K
//! terms.

use super::acc::Src;
use super::association::{choose as choose_order, Order};
use super::drive_real::{batch_outputs, inits_in_acc, to_acc};
use super::gemm::Panels;
use super::geometry::Tables;
use super::select::Chained;
use super::{complex, geometry, planes, ContractSpec};
use crate::alloc::{try_collect, try_vec};
use crate::array::{as_bytes, ArrayView, ArrayViewMut};
use crate::error::Result;
use crate::tier::Exec;
use crate::Tier;

/// A complex contraction as two real ones over 2K terms: the real part sums
/// `ar·br, −ai·bi` for each k in turn, the imaginary part `ar·bi, ai·br`, in
/// the order that the complex rows, columns and depth choose (chain: 2K fused
/// multiply-adds from init's part; lane: the 2K terms in lanes, then init's
/// part).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_complex<T: Chained + complex::Part>(
    tier: Tier,
    exec: Exec,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    spec: &ContractSpec,
    forced: Option<Order>,
    panels: Panels,
) -> Result<()>
where
    num_complex::Complex<T>: crate::Element + Default,
{
    type C<T> = num_complex::Complex<T>;
    let threads = exec.thread_count();
    let ea = to_acc::<C<T>>(exec, a, spec.acc)?;
    let eb = to_acc::<C<T>>(exec, b, spec.acc)?;
    let g = geometry(a.shape(), &ea.strides, b.shape(), &eb.strides, spec)?;
    let t = Tables::of(&g, ea.offset, eb.offset, false)?;
    let (r, c, k) = (t.a_rows.len(), t.b_cols.len(), t.a_ks.len());
    let nb = t.a_batch.len();
    let order = forced.unwrap_or_else(|| choose_order(r, c, k));
    let (sa, sb) = (Src::new(&ea.bytes), Src::new(&eb.bytes));
    let len = dst.layout().len();
    let init_c = inits_in_acc::<C<T>>(exec, init, dst)?;
    let mut re = try_collect(len, init_c.iter().map(|x| x.re), "the destination in acc")?;
    let mut im = try_collect(len, init_c.iter().map(|x| x.im), "the destination in acc")?;
    drop(init_c);
    if order == Order::Chain {
        // The complex microkernels continue both chains of each output.
        // SAFETY: the tables come from the validated (or copied) operands.
        unsafe { planes::chain::<C<T>>(T::kernel(tier), threads, sa, sb, &t, &mut re, &mut im)? };
        return finish_complex(exec, re, im, dst);
    }
    // Real operands, batch-major: a' [nb, R, 2K] and b' [nb, 2K, C] per part.
    let (mut a_re, mut a_im) = (
        try_vec(nb.saturating_mul(r).saturating_mul(2 * k), "complex parts")?,
        try_vec(nb.saturating_mul(r).saturating_mul(2 * k), "complex parts")?,
    );
    let (mut b_re, mut b_im) = (
        try_vec(nb.saturating_mul(2 * k).saturating_mul(c), "complex parts")?,
        try_vec(nb.saturating_mul(2 * k).saturating_mul(c), "complex parts")?,
    );
    for bi in 0..nb {
        for &ro in &t.a_rows {
            for &ko in &t.a_ks {
                // SAFETY: `a_batch + row + k` from a's tables is a position
                // of the validated (or copied) operand, of Complex<T>.
                let x: C<T> = unsafe { sa.get_any(t.a_batch[bi] + ro + ko) };
                a_re.extend([x.re, -x.im]);
                a_im.extend([x.re, x.im]);
            }
        }
        for &ko in &t.b_ks {
            let row: Vec<C<T>> = t
                .b_cols
                .iter()
                // SAFETY: `b_batch + k + col` from b's tables is a position
                // of the validated (or copied) operand, of Complex<T>.
                .map(|&co| unsafe { sb.get_any(t.b_batch[bi] + ko + co) })
                .collect();
            b_re.extend(row.iter().map(|x| x.re));
            b_re.extend(row.iter().map(|x| x.im));
            b_im.extend(row.iter().map(|x| x.im));
            b_im.extend(row.iter().map(|x| x.re));
        }
    }
    // Index tables of the real buffers (their positions fit: the buffers
    // were allocated).
    let table = |n: usize, step: usize| {
        try_collect(
            n,
            (0..n).map(move |i| (i * step) as isize),
            "an index table",
        )
    };
    let rt = Tables {
        a_batch: table(nb, r * 2 * k)?,
        a_rows: table(r, 2 * k)?,
        a_ks: table(2 * k, 1)?,
        b_batch: table(nb, 2 * k * c)?,
        b_ks: table(2 * k, c)?,
        b_cols: table(c, 1)?,
        streamed: false,
    };
    // SAFETY: the tables address exactly the real buffers built above.
    unsafe {
        batch_outputs(
            tier,
            threads,
            order,
            (Src::new(as_bytes(&a_re)), None),
            (Src::new(as_bytes(&b_re)), None),
            &rt,
            &mut re,
            true,
            panels,
        )?;
        batch_outputs(
            tier,
            threads,
            order,
            (Src::new(as_bytes(&a_im)), None),
            (Src::new(as_bytes(&b_im)), None),
            &rt,
            &mut im,
            true,
            panels,
        )?;
    }
    finish_complex(exec, re, im, dst)
}

/// The planes of a complex product joined and cast into `dst`.
pub(super) fn finish_complex<T: Copy>(
    exec: Exec,
    re: Vec<T>,
    im: Vec<T>,
    dst: &mut ArrayViewMut<'_>,
) -> Result<()>
where
    num_complex::Complex<T>: crate::Element,
{
    let out = try_collect(
        re.len(),
        re.into_iter()
            .zip(im)
            .map(|(re, im)| num_complex::Complex { re, im }),
        "the destination in acc",
    )?;
    crate::cast::cast_results(&out, dst, &exec)
}
