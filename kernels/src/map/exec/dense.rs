//! The dense call: a program on the register path whose operands are all
//! one dense block of memory each, laid out alike (the same shape and the
//! same strides, positive, that tile a block without gaps: C order, Fortran
//! order or any other order of the axes). Such a call runs the register
//! program straight over the blocks, with no bound [`Plan`], no tile
//! scratch and no tiles: element j of the block of every operand is one
//! index of the loop, so each output element gets the values of its own
//! index whatever the order, as on the tile path (the program has no
//! coordinate node, which the register path refuses).
//!
//! What this saves is the per-call set-up of the tile path (the plan's
//! tables and scratch, seven of a call's allocations and the walk over
//! them), which was half of a call of 2048 f32 and a few percent of one of
//! 65536 on Zen 3; the values are computed by the same register program,
//! so they are the same bits.

use super::*;
use registers::MAX_NODES;

/// Whether `strides` over `shape` tile one block without gaps at positive
/// strides (axes of extent 1 are ignored): some order of the axes has
/// strides 1, e₁, e₁·e₂, … of the extents in that order.
fn is_dense(shape: &[usize], strides: &[isize]) -> bool {
    let mut axes: InlineVec<(isize, usize), INLINE> = shape
        .iter()
        .zip(strides)
        .filter(|(&e, _)| e > 1)
        .map(|(&e, &s)| (s, e))
        .collect();
    axes.sort_unstable();
    let mut want = 1isize;
    for &(s, e) in axes.iter() {
        if s != want {
            return false;
        }
        want = match want.checked_mul(e as isize) {
            Some(w) => w,
            None => return false,
        };
    }
    true
}

/// Run a checked call of `program` (resolved as `r`, over `r.n > 0`
/// indices) on the register path of `tier` without a plan, where it is
/// dense (see the module's doc) and every output is a node the register
/// program computes, no two outputs the same node. Returns whether it ran;
/// where it did not, nothing was written.
pub(super) fn run_dense(
    tier: crate::Tier,
    exec: &Exec,
    program: &Program,
    r: &Resolved,
    inputs: &[In<'_, '_>],
    outputs: &mut [ArrayViewMut<'_>],
) -> Result<bool> {
    let Some(rp) = r.regs_on(tier, program) else {
        return Ok(false);
    };
    let outs = program.outputs();
    for (k, o) in outs.iter().enumerate() {
        if !rp.is_stored(o.0) || outs[..k].iter().any(|p| p.0 == o.0) {
            return Ok(false);
        }
    }
    let (shape, strides) = (outputs[0].shape(), outputs[0].strides());
    if !is_dense(shape, strides) || outputs.iter().any(|o| o.strides() != strides) {
        return Ok(false);
    }
    for src in inputs {
        match src {
            In::View(v) if v.shape() == shape && v.strides() == strides => {}
            _ => return Ok(false),
        }
    }
    let nodes = program.nodes();
    let count = nodes.len();
    debug_assert!(
        count <= MAX_NODES,
        "a register program has at most MAX_NODES nodes"
    );
    let item = if rp.is_wide() { 8 } else { 4 };
    // The uniform nodes' values: constants, and nodes computed from them
    // (no input is uniform: every one has the loop's shape, of n > 1
    // elements where any node is uniform over more than one index).
    let mut uni = [[0u8; 16]; MAX_NODES];
    if r.is_uni.iter().any(|&u| u) {
        uni[..count].copy_from_slice(&r.consts);
        bind::compute_uniform(program, r, r.fns_on(tier)?, &mut uni[..count]);
    }
    // Each operand's first element (the block's lowest address: the
    // strides are positive).
    use crate::scratch::SendPtr;
    let mut in_base: InlineVec<SendPtr<u8>, INLINE> = InlineVec::new();
    for src in inputs {
        if let In::View(v) = src {
            // SAFETY: the view was validated: its element at `offset` lies
            // inside its bytes.
            let p = unsafe { v.data().as_ptr().add(v.layout().offset * item) };
            in_base.push(SendPtr(p as *mut u8));
        }
    }
    let out_base: InlineVec<SendPtr<u8>, INLINE> = outputs
        .iter_mut()
        .map(|o| {
            let offset = o.layout().offset;
            // SAFETY: as for the inputs.
            SendPtr(unsafe { o.data_mut().as_mut_ptr().add(offset * item) })
        })
        .collect();
    let n = r.n;
    let threads = task_count(exec, n);
    let per = n.div_ceil(TILE).div_ceil(threads) * TILE;
    let share = |t: usize| {
        let (f0, f1) = ((t * per).min(n), ((t + 1) * per).min(n));
        if f0 >= f1 {
            return;
        }
        let mut src = [core::ptr::null::<u8>(); MAX_NODES];
        let mut dst = [core::ptr::null_mut::<u8>(); MAX_NODES];
        for (k, node) in nodes.iter().enumerate() {
            if r.is_uni[k] {
                src[k] = uni[k].as_ptr();
            } else if let Op::Load(i) = node.op {
                // SAFETY: f0 < n: an element of input i's block.
                src[k] = unsafe { in_base[i].get().add(f0 * item) };
            }
        }
        for (k, o) in outs.iter().enumerate() {
            // SAFETY: f0 < n: an element of output k's block.
            dst[o.0] = unsafe { out_base[k].get().add(f0 * item) };
        }
        // SAFETY: every operand is a validated view whose `n` elements lie
        // in one block from its first element (dense, positive strides),
        // so indices f0..f1 of each are `f1 − f0` consecutive elements
        // from the pointers above; a uniform node's value is its cell; the
        // outputs are written at their own indices by this share alone
        // (the shares are disjoint), no input is an output read in place,
        // and the register program was made for this tier, which runs here.
        unsafe { rp.run(&src[..count], &r.is_uni, &dst[..count], f1 - f0) };
    };
    if threads == 1 {
        share(0);
    } else {
        use rayon::prelude::*;
        (0..threads).into_par_iter().for_each(share);
    }
    Ok(true)
}
