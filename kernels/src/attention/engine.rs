//! The attention engine: units of rows, their key blocks, the two products
//! of a block on the contraction's microkernels, and the threads.
//!
//! A unit is `hn ≤ 64` consecutive query heads of one key head's group and
//! `rn = ⌊64 / h⌋` consecutive rows of each (`h` the lesser of the group's
//! size and 64), at one lead index: at most 64 rows, which share every key
//! block they read. Units are independent (each writes its own rows of `o`
//! and `lse`), so threads take whole units, in any order: no row's keys are
//! ever split, and the bits do not depend on the thread count.
//!
//! Per block, for the unit's rows: the mask's ranges over the block's box
//! (when output 0 is not the constant true) skip it or spare output 0; the
//! keys are copied into the accumulator as a `dk × 64` panel; the scores
//! are the microkernel's chains over the dimension from +0 (`S = Q·Kᵀ`,
//! each pair one chain of fused multiply-adds in increasing dimension),
//! times the scale; output 1 rewrites them; the softmax step
//! ([`super::softmax`]) gives the weights and rescales the accumulators;
//! the weights round through the values' dtype; and the microkernel
//! continues each accumulator's chains with the block's keys in increasing
//! order (`A ← A + P·V`). A row with a hidden pair whose value is a NaN or an
//! infinity, and a row the block leaves as it was, are kept out of that
//! product and done alone over their visible pairs, in the same order.

use super::pack;
use super::programs::{Analysed, Class};
use super::softmax::{self, AccFloat, Rows, BLOCK};
use crate::array::{ArrayView, ArrayViewMut};
use crate::contract::Micro;
use crate::error::{Error, Result};
use crate::linalg::work::{Block, Carve};
use crate::map::Range;
use crate::scratch::Scratch;
use crate::tier::Exec;
use crate::{Args, Class as DClass, DType, LoopFn, Tier};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows of a unit, and the most rows of packed panels (64 rounded up to
/// the tallest microkernel's multiple, 14 · 5).
const UNIT_ROWS: usize = 64;
const PANEL_ROWS: usize = 70;

/// One operand's addressing: its bytes, offset and strides in elements.
#[derive(Clone, Debug)]
pub(super) struct Addr {
    pub base: *const u8,
    pub offset: isize,
    pub strides: Vec<isize>,
    pub item: usize,
}

impl Addr {
    pub(super) fn of(v: &ArrayView<'_>) -> Addr {
        Addr {
            base: v.data().as_ptr(),
            offset: v.layout().offset as isize,
            strides: v.strides().to_vec(),
            item: v.dtype().info().item_bytes,
        }
    }
    pub(super) fn of_mut(v: &mut ArrayViewMut<'_>) -> Addr {
        let offset = v.layout().offset as isize;
        let strides = v.strides().to_vec();
        let item = v.dtype().info().item_bytes;
        Addr {
            base: v.data_mut().as_mut_ptr(),
            offset,
            strides,
            item,
        }
    }
    /// The byte address of the element at `idx` (in bounds: the view was
    /// validated and `idx` lies in its shape).
    fn at(&self, idx: &[usize]) -> *const u8 {
        let mut e = self.offset;
        for (&i, &s) in idx.iter().zip(&self.strides) {
            e += i as isize * s;
        }
        // SAFETY: a validated view's every index lies inside its bytes
        // (callers pass indices within the shape), so the offset is in
        // bounds of the allocation.
        unsafe { self.base.offset(e * self.item as isize) }
    }
}

/// A validated call, ready to run.
pub(super) struct Call<'a> {
    pub tier: Tier,
    pub acc: DType,
    pub input: DType,
    pub out: DType,
    pub scale: f64,
    pub lead: Vec<usize>,
    pub hq: usize,
    pub hk: usize,
    pub tq: usize,
    pub tk: usize,
    pub dk: usize,
    pub dv: usize,
    pub q: Addr,
    pub k: Addr,
    pub v: Addr,
    pub o: Addr,
    pub lse: Addr,
    /// Each lead index's key count (flat, C order), already checked.
    pub lengths: Vec<usize>,
    /// The loads, and each one's strides in the pair space (0 where it
    /// broadcasts).
    pub loads: Vec<(ArrayView<'a>, Vec<isize>)>,
    pub program: &'a Analysed,
    /// Where output 0 is shared across lead indices and heads: each query
    /// row's class of each key block (0 every pair hidden, 1 every pair
    /// visible, 2 mixed), row `i`, block `b` at `i·⌈tk/64⌉ + b`.
    pub shared: Option<Vec<u8>>,
}

// SAFETY: the raw pointers address the call's operands, borrowed for the
// call: inputs are only read, and each unit writes only its own rows of
// `o` and `lse`, which no other unit writes.
unsafe impl Send for Call<'_> {}
// SAFETY: as above.
unsafe impl Sync for Call<'_> {}

/// The geometry of units.
#[derive(Clone, Copy, Debug)]
struct Units {
    group: usize,
    h: usize,
    rn: usize,
    head_chunks: usize,
    row_chunks: usize,
}

impl Units {
    fn of(c: &Call<'_>) -> Units {
        let group = c.hq / c.hk.max(1);
        let h = group.clamp(1, UNIT_ROWS);
        let rn = UNIT_ROWS / h;
        Units {
            group,
            h,
            rn,
            head_chunks: group.div_ceil(h),
            row_chunks: c.tq.div_ceil(rn),
        }
    }
    fn per_lead(&self, hk: usize) -> usize {
        hk * self.head_chunks * self.row_chunks
    }
}

/// The regions one task holds.
struct Regions<'a, T> {
    qpack: &'a mut [T],
    kt: &'a mut [T],
    krows: &'a mut [T],
    s: &'a mut [T],
    s2: &'a mut [T],
    w: &'a mut [T],
    ppack: &'a mut [T],
    vt: &'a mut [T],
    a: &'a mut [T],
    saved: &'a mut [T],
    m: &'a mut [T],
    l: &'a mut [T],
    row: &'a mut [T],
    wround: &'a mut [T],
    vis: &'a mut [u8],
    bad: &'a mut [u8],
    /// The programs' tiles (lent to `map`).
    tiles: &'a mut [Block],
}

fn regions<'a, T: AccFloat>(
    c: &mut Carve<'a>,
    dk: usize,
    dv: usize,
    tile_blocks: usize,
) -> Regions<'a, T> {
    Regions {
        qpack: c.take(PANEL_ROWS * dk),
        kt: c.take(dk * BLOCK),
        krows: c.take(dk * BLOCK),
        s: c.take(UNIT_ROWS * BLOCK),
        s2: c.take(UNIT_ROWS * BLOCK),
        w: c.take((PANEL_ROWS + 2) * BLOCK),
        ppack: c.take(PANEL_ROWS * BLOCK + 8),
        vt: c.take(BLOCK * dv),
        a: c.take(UNIT_ROWS * dv),
        saved: c.take(UNIT_ROWS * dv),
        m: c.take(UNIT_ROWS),
        l: c.take(UNIT_ROWS),
        row: c.take(dv.max(1)),
        wround: c.take(PANEL_ROWS * BLOCK),
        vis: c.take(UNIT_ROWS * BLOCK),
        bad: c.take(BLOCK),
        tiles: c.take(tile_blocks),
    }
}

/// Blocks of work area one task needs.
pub(super) fn blocks_per_task(acc: DType, dk: usize, dv: usize, tile_blocks: usize) -> usize {
    match acc {
        DType::F64 => crate::linalg::work::blocks_of(|c| {
            regions::<f64>(c, dk, dv, tile_blocks);
        }),
        _ => crate::linalg::work::blocks_of(|c| {
            regions::<f32>(c, dk, dv, tile_blocks);
        }),
    }
}

/// Run the call on `exec`'s threads, each task's area from `scratch`.
pub(super) fn run(call: &Call<'_>, scratch: &mut Scratch, exec: &Exec) -> Result<()> {
    match call.acc {
        DType::F64 => run_typed::<f64>(call, scratch, exec),
        _ => run_typed::<f32>(call, scratch, exec),
    }
}

/// The cast kernel from `from` into `to` (strided variant).
fn cast_fn(
    tier: Tier,
    from: DType,
    to: DType,
    variant: crate::generated::Variant,
) -> Result<LoopFn> {
    let table = crate::tier::cast_table(tier).ok_or(Error::TierUnavailable(tier))?;
    let i =
        crate::generated::cast_index(from, to, false, variant).ok_or(Error::DTypeUnsupported {
            operand: "attention".into(),
            dtype: from,
            reason: format!("no cast into {to}"),
        })?;
    Ok(table[i])
}

/// Cast `n` elements from `src` (stride `ss`) to `dst` (stride `ds`).
///
/// # Safety
/// `f` is a cast kernel of the two element types; `src + i·ss` (elements of
/// the source dtype) is readable and `dst + i·ds` writable for `i < n`.
unsafe fn conv(f: LoopFn, n: usize, src: *const u8, ss: isize, dst: *mut u8, ds: isize) {
    if n == 0 {
        return;
    }
    let args = Args {
        n,
        src: [src, core::ptr::null(), core::ptr::null()],
        src_stride: [ss, 0, 0],
        dst,
        dst_stride: ds,
    };
    // SAFETY: the caller's contract.
    unsafe { f(&args) };
}

struct Kernels<T: 'static> {
    micro: Micro<T>,
    /// input dtype → accumulator (strided).
    load: LoopFn,
    /// accumulator → o's dtype (strided).
    store: LoopFn,
    /// accumulator → values' dtype → accumulator (contiguous), where they
    /// differ.
    round: Option<(LoopFn, LoopFn)>,
}

fn run_typed<T: AccFloat>(call: &Call<'_>, scratch: &mut Scratch, exec: &Exec) -> Result<()> {
    use crate::generated::Variant;
    let tier = call.tier;
    let micro = T::micro(tier).ok_or(Error::TierUnavailable(tier))?;
    let kernels = Kernels {
        micro,
        load: cast_fn(tier, call.input, call.acc, Variant::Strided)?,
        store: cast_fn(tier, call.acc, call.out, Variant::Strided)?,
        round: if call.input != call.acc {
            Some((
                cast_fn(tier, call.acc, call.input, Variant::Contig)?,
                cast_fn(tier, call.input, call.acc, Variant::Contig)?,
            ))
        } else {
            None
        },
    };
    let units = Units::of(call);
    let leads: usize = call.lead.iter().product();
    let total = if call.hk == 0 || call.tq == 0 {
        0
    } else {
        leads * units.per_lead(call.hk)
    };
    if total == 0 {
        return Ok(());
    }
    let blocks = blocks_per_task(call.acc, call.dk, call.dv, call.program.tile_blocks);
    let per_bytes = blocks.checked_mul(64).ok_or(Error::Alloc {
        what: "attention work areas (64-byte blocks)".into(),
        elements: usize::MAX,
    })?;
    let threads = exec.thread_count().clamp(1, total);
    let want = per_bytes.saturating_mul(threads);
    if scratch.size() < per_bytes {
        scratch.reserve(per_bytes)?;
    }
    let tasks = if want <= scratch.size() {
        threads
    } else {
        (scratch.size() / per_bytes).clamp(1, threads)
    };
    let all: &mut [Block] = &mut scratch.blocks_mut()[..blocks * tasks];
    let next = AtomicUsize::new(0);
    let failed: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
    let job = |area: &mut [Block]| {
        let mut carve = Carve::new(area);
        let mut r = regions::<T>(&mut carve, call.dk, call.dv, call.program.tile_blocks);
        loop {
            let u = next.fetch_add(1, Ordering::Relaxed);
            if u >= total {
                break;
            }
            if let Err(e) = unit::<T>(call, &kernels, units, u, &mut r) {
                // Stop every task; the first error is the call's.
                next.store(total, Ordering::Relaxed);
                let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
                f.get_or_insert(e);
            }
        }
    };
    if tasks == 1 {
        job(all);
    } else {
        use rayon::prelude::*;
        all.par_chunks_mut(blocks).for_each(job);
    }
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Run unit `u`.
fn unit<T: AccFloat>(
    c: &Call<'_>,
    kn: &Kernels<T>,
    us: Units,
    u: usize,
    r: &mut Regions<'_, T>,
) -> Result<()> {
    let per_lead = us.per_lead(c.hk);
    let lead_flat = u / per_lead;
    let rest = u % per_lead;
    let kh = rest / (us.head_chunks * us.row_chunks);
    let rest = rest % (us.head_chunks * us.row_chunks);
    let hc = rest / us.row_chunks;
    let rc = rest % us.row_chunks;
    let h0 = kh * us.group + hc * us.h;
    let hn = us.h.min(us.group - hc * us.h);
    let r0 = rc * us.rn;
    let rn = us.rn.min(c.tq - r0);
    let nrows = hn * rn;
    // The lead multi-index.
    let nl = c.lead.len();
    let mut lead = vec![0usize; nl];
    let mut f = lead_flat;
    for a in (0..nl).rev() {
        lead[a] = f % c.lead[a];
        f /= c.lead[a];
    }
    let t = c.lengths[lead_flat];
    let (dk, dv) = (c.dk, c.dv);
    let Micro {
        full, edge, mr, nr, ..
    } = kn.micro;
    let tiles = nrows.div_ceil(mr);

    // Pack Q: tile ti holds rows ti·mr… as dk steps of mr values.
    let mut idx = lead.clone();
    idx.extend([0, 0, 0]);
    for i in 0..nrows {
        idx[nl] = h0 + i / rn;
        idx[nl + 1] = r0 + i % rn;
        idx[nl + 2] = 0;
        if dk == 0 {
            break;
        }
        let src = c.q.at(&idx);
        let dst = &mut r.qpack[(i / mr) * mr * dk + i % mr..];
        // SAFETY: q's row has dk elements of stride strides[nl+2] from src
        // (a validated view, the index in its shape); dst holds (dk−1)·mr + 1
        // elements from this position (qpack is PANEL_ROWS·dk, i < 64).
        unsafe {
            conv(
                kn.load,
                dk,
                src,
                c.q.strides[nl + 2],
                dst.as_mut_ptr() as *mut u8,
                mr as isize,
            )
        };
    }
    for i in nrows..tiles * mr {
        for d in 0..dk {
            r.qpack[(i / mr) * mr * dk + d * mr + i % mr] = T::PLUS_ZERO;
        }
    }
    r.m[..nrows].fill(T::NEG_INF);
    r.l[..nrows].fill(T::PLUS_ZERO);
    r.a[..nrows * dv].fill(T::PLUS_ZERO);
    let scale = T::of_f64(c.scale);
    // The pair space's box of this unit (the key axis set per block).
    let rank = nl + 3;
    let nblocks = t.div_ceil(BLOCK);
    let mut coords: Vec<(i64, i64)> = lead.iter().map(|&x| (x as i64, x as i64)).collect();
    coords.push((h0 as i64, (h0 + hn - 1) as i64));
    coords.push((r0 as i64, (r0 + rn - 1) as i64));
    coords.push((0, 0));
    let mut in_ranges = vec![Range::Any; c.loads.len() + 1];
    let v_in_place = c.input == c.acc && (c.v.strides[nl + 2] == 1 || dv <= 1);
    let k_in_place = c.input == c.acc && (c.k.strides[nl + 2] == 1 || dk <= 1);
    let mut active = [false; UNIT_ROWS];
    let mut protect = [false; UNIT_ROWS];
    let mut careful = [false; UNIT_ROWS];
    for b in 0..nblocks {
        let k0 = b * BLOCK;
        let nk = BLOCK.min(t - k0);
        // The block's class.
        let class = match &c.program.mask {
            None => Class::Shown,
            Some(_) if c.shared.is_some() => {
                let tab = c.shared.as_deref().unwrap_or(&[]);
                let nb = c.tk.div_ceil(BLOCK);
                let (mut hidden, mut shown) = (true, true);
                for row in r0..r0 + rn {
                    let v = tab[row * nb + b];
                    hidden &= v == 0;
                    shown &= v == 1;
                }
                if hidden {
                    Class::Hidden
                } else if shown {
                    Class::Shown
                } else {
                    Class::Mixed
                }
            }
            Some(mask) => {
                coords[rank - 1] = (k0 as i64, (k0 + nk - 1) as i64);
                for &li in &c.program.mask_loads {
                    in_ranges[li] = load_range(&c.loads[li - 1], &coords);
                }
                Class::of(mask.ranges(&in_ranges, &coords)[0])
            }
        };
        if class == Class::Hidden {
            continue;
        }
        let vis: Option<&[u8]> = if class == Class::Mixed {
            let bx = PairBox {
                lead: &lead,
                h0,
                hn,
                r0,
                rn,
                k0,
                nk,
            };
            run_mask(c, &bx, r.vis, r.tiles)?;
            Some(&r.vis[..])
        } else {
            None
        };
        if let Some(v) = vis {
            if (0..nrows).all(|i| v[i * BLOCK..i * BLOCK + nk].iter().all(|&x| x == 0)) {
                continue;
            }
        }
        // Few rows read each block once and briefly: ask for the next
        // block's keys and values while this one is worked on (a hint).
        if nrows <= 16 && b + 1 < nblocks {
            let mut pidx = lead.clone();
            pidx.extend([kh, (b + 1) * BLOCK, 0]);
            let kp = c.k.at(&pidx);
            let vp = c.v.at(&pidx);
            let n = BLOCK.min(t - (b + 1) * BLOCK);
            tessera_generated::runtime::loops::prefetch_lines(kp, n * dk * c.k.item);
            tessera_generated::runtime::loops::prefetch_lines(vp, n * dv * c.v.item);
        }
        // K block → kt (dk × 64): read in place where the keys are of the
        // accumulator's dtype with unit stride along the dimension, else
        // first cast row by row into krows.
        idx[..nl].copy_from_slice(&lead);
        idx[nl] = kh;
        if dk > 0 {
            let (src, rs) =
                block_rows(&c.k, kn.load, &mut idx, nl, k0, nk, dk, k_in_place, r.krows);
            // SAFETY: rows j < nk of dk values from src (in place: a
            // validated view's rows of the block; or krows).
            unsafe { pack::keys(c.tier, src, rs, nk, dk, r.kt) };
        }
        // S = Q·Kᵀ, chains over the dimension from +0.
        for ti in 0..tiles {
            let rows = mr.min(nrows - ti * mr);
            let ap = r.qpack.as_ptr().wrapping_add(ti * mr * dk);
            let mut c0 = 0;
            while c0 < nk {
                let cols = nr.min(nk - c0);
                let cp = r.s[ti * mr * BLOCK + c0..].as_mut_ptr();
                // (With dk = 0 the kernels read neither panel.)
                let bp = r.kt.as_ptr().wrapping_add(c0);
                // SAFETY: a holds dk·mr packed values (qpack tile); b + d·64
                // holds `cols` (≤ nr) readable values for each d < dk within
                // kt; c is rows × cols of row stride 64 inside s (rows ≤ mr
                // from row ti·mr < 64, c0 + cols ≤ 64). The full kernel is
                // used only for a whole tile (rows = mr, cols = nr), which
                // then reads nr ≤ 64 − c0 values of kt's row.
                unsafe {
                    if rows == mr && cols == nr {
                        full(dk, ap, bp, BLOCK as isize, cp, BLOCK, false)
                    } else {
                        edge(dk, ap, bp, BLOCK as isize, cp, BLOCK, false, rows, cols)
                    }
                }
                c0 += cols;
            }
        }
        for i in 0..nrows {
            for x in &mut r.s[i * BLOCK..i * BLOCK + nk] {
                *x = *x * scale;
            }
        }
        let scores: &[T] = if c.program.score_boxed.is_some() {
            let bx = PairBox {
                lead: &lead,
                h0,
                hn,
                r0,
                rn,
                k0,
                nk,
            };
            run_score(c, &bx, r.s, r.s2, r.tiles)?;
            &r.s2[..]
        } else {
            &r.s[..]
        };
        softmax::update(
            c.tier,
            Rows {
                s: scores,
                vis,
                nk,
                m: &mut r.m[..nrows],
                l: &mut r.l[..nrows],
                a: &mut r.a[..nrows * dv],
                dv,
                w: &mut r.w[..],
                active: &mut active[..nrows],
                packed: &mut r.ppack[..],
                mr,
            },
        );
        if !active[..nrows].iter().any(|&x| x) || dv == 0 {
            continue;
        }
        // The packed weights through the values' dtype.
        if let Some((to, back)) = kn.round {
            let n = tiles * mr * BLOCK;
            let tmp = r.wround.as_mut_ptr() as *mut u8;
            // SAFETY: ppack and wround hold PANEL_ROWS·64 elements of T (≥
            // n); the narrow values take fewer bytes than T.
            unsafe {
                conv(to, n, r.ppack.as_ptr() as *const u8, 1, tmp, 1);
                conv(back, n, tmp, 1, r.ppack.as_mut_ptr() as *mut u8, 1);
            }
        }
        // V block: in place, or copied into vt (64 × dv).
        idx[nl] = kh;
        let (vp, vs) = block_rows(&c.v, kn.load, &mut idx, nl, k0, nk, dv, v_in_place, r.vt);
        // Rows with a hidden pair at a value that is not finite.
        if let Some(v) = vis {
            let mut any_bad = false;
            for j in 0..nk {
                let mut bad = false;
                for e in 0..dv {
                    // SAFETY: row j of the block has dv elements at stride 1
                    // from vp + j·vs (in place: unit stride checked; or vt).
                    let x = unsafe { *vp.offset(j as isize * vs + e as isize) };
                    bad |= !x.finite();
                }
                r.bad[j] = bad as u8;
                any_bad |= bad;
            }
            for i in 0..nrows {
                careful[i] =
                    any_bad && active[i] && (0..nk).any(|j| v[i * BLOCK + j] == 0 && r.bad[j] != 0);
            }
        } else {
            careful[..nrows].fill(false);
        }
        for ((p, &a), &cf) in protect.iter_mut().zip(&active).zip(&careful).take(nrows) {
            *p = !a || cf;
        }
        for (i, _) in protect.iter().enumerate().take(nrows).filter(|p| *p.1) {
            r.saved[i * dv..(i + 1) * dv].copy_from_slice(&r.a[i * dv..(i + 1) * dv]);
        }
        // A ← A + P·V, chains over the block's keys in increasing order.
        for ti in 0..tiles {
            let rows = mr.min(nrows - ti * mr);
            if (ti * mr..ti * mr + rows).all(|i| protect[i]) {
                continue;
            }
            let ap = r.ppack[ti * mr * BLOCK..].as_ptr();
            let mut c0 = 0;
            while c0 < dv {
                let cols = nr.min(dv - c0);
                let cp = r.a[ti * mr * dv + c0..].as_mut_ptr();
                // SAFETY: a holds nk·mr packed weights; b + j·vs holds cols
                // readable values of row j (c0 + cols ≤ dv); c is rows × cols
                // of row stride dv inside the accumulators.
                unsafe {
                    let bp = vp.add(c0);
                    if rows == mr && cols == nr {
                        full(nk, ap, bp, vs, cp, dv, true)
                    } else {
                        edge(nk, ap, bp, vs, cp, dv, true, rows, cols)
                    }
                }
                c0 += cols;
            }
        }
        for i in 0..nrows {
            if !protect[i] {
                continue;
            }
            r.a[i * dv..(i + 1) * dv].copy_from_slice(&r.saved[i * dv..(i + 1) * dv]);
            if careful[i] {
                let v = vis.expect("careful rows come from a mixed block");
                let arow = &mut r.a[i * dv..(i + 1) * dv];
                for j in 0..nk {
                    if v[i * BLOCK + j] == 0 {
                        continue;
                    }
                    let wj = r.ppack[(i / mr) * mr * BLOCK + j * mr + i % mr];
                    for (e, x) in arow.iter_mut().enumerate() {
                        // SAFETY: as for the bad-value scan.
                        let vj = unsafe { *vp.offset(j as isize * vs + e as isize) };
                        *x = x.fused(wj, vj);
                    }
                }
            }
        }
    }
    // o = a / l + 0, lse = m + log l.
    let mut oidx = lead.clone();
    oidx.extend([0, 0, 0]);
    let mut lidx = lead.clone();
    lidx.extend([0, 0]);
    for i in 0..nrows {
        let head = h0 + i / rn;
        let rowq = r0 + i % rn;
        let (m, l) = (r.m[i], r.l[i]);
        let lse = if l == T::PLUS_ZERO {
            for x in r.row[..dv].iter_mut() {
                *x = T::PLUS_ZERO;
            }
            T::NEG_INF
        } else {
            for (x, &y) in r.row[..dv].iter_mut().zip(&r.a[i * dv..(i + 1) * dv]) {
                let v = y / l + T::PLUS_ZERO;
                *x = if v.is_nan() { T::NAN } else { v };
            }
            let v = if m == T::POS_INF {
                T::POS_INF
            } else {
                m + l.ln()
            };
            if v.is_nan() {
                T::NAN
            } else {
                v
            }
        };
        oidx[nl] = head;
        oidx[nl + 1] = rowq;
        oidx[nl + 2] = 0;
        lidx[nl] = head;
        lidx[nl + 1] = rowq;
        if dv > 0 {
            let dst = c.o.at(&oidx) as *mut u8;
            // SAFETY: o's row of dv elements (stride strides[nl+2]) belongs
            // to this unit alone; row holds dv accumulator values.
            unsafe {
                conv(
                    kn.store,
                    dv,
                    r.row.as_ptr() as *const u8,
                    1,
                    dst,
                    c.o.strides[nl + 2],
                )
            };
        }
        let dst = c.lse.at(&lidx) as *mut T;
        // SAFETY: lse's element of this row, written by this unit alone,
        // of the accumulator's dtype (checked).
        unsafe { dst.write_unaligned(lse) };
    }
    Ok(())
}

/// Rows `k0 .. k0 + n` of key head `idx[nl]` of a key or value operand
/// (`d` values each) as the accumulator reads them: where they lie when
/// `in_place` (of the accumulator's dtype, unit stride along `d`), else
/// cast row by row into `buf` (`n·d` values). Returns the first row and the
/// distance between rows, in elements.
#[allow(clippy::too_many_arguments)]
fn block_rows<T: AccFloat>(
    a: &Addr,
    load: LoopFn,
    idx: &mut [usize],
    nl: usize,
    k0: usize,
    n: usize,
    d: usize,
    in_place: bool,
    buf: &mut [T],
) -> (*const T, isize) {
    idx[nl + 1] = k0;
    idx[nl + 2] = 0;
    if in_place {
        return (a.at(idx) as *const T, a.strides[nl + 1]);
    }
    for j in 0..n {
        idx[nl + 1] = k0 + j;
        let src = a.at(idx);
        // SAFETY: the operand's row of d elements (stride strides[nl + 2],
        // a validated view, the index in its shape); buf's row j holds d.
        unsafe {
            conv(
                load,
                d,
                src,
                a.strides[nl + 2],
                buf[j * d..].as_mut_ptr() as *mut u8,
                1,
            )
        };
    }
    (buf.as_ptr(), d as isize)
}

/// Whether output 0 may be shared across lead indices and heads: it reads
/// no coordinate of the lead axes or the heads and no load that steps
/// along them, and more than one (lead index, query head) shares the rows.
pub(super) fn shareable(c: &Call<'_>) -> bool {
    let Some(mask) = &c.program.mask else {
        return false;
    };
    let nl = c.lead.len();
    let leads: usize = c.lead.iter().product();
    if leads.saturating_mul(c.hq) < 2 || c.tq == 0 || c.tk == 0 {
        return false;
    }
    let coords_ok = mask.nodes().iter().all(|n| match n.op {
        crate::map::Op::Coord(a) => a > nl,
        _ => true,
    });
    let loads_ok = c.program.mask_loads.iter().all(|&li| {
        let strides = &c.loads[li - 1].1;
        strides[..=nl].iter().all(|&s| s == 0)
    });
    coords_ok && loads_ok
}

/// The shared classes of every query row and key block, at lead index 0
/// and head 0: the ranges of output 0 over each 64-row chunk and block,
/// then output 0 itself on the pairs of a block they leave mixed.
pub(super) fn shared_classes(c: &Call<'_>) -> Result<Vec<u8>> {
    let mask = c.program.mask.as_ref().expect("a shared mask");
    let nb = c.tk.div_ceil(BLOCK);
    let n = c.tq.checked_mul(nb).ok_or(Error::Alloc {
        what: "attention's shared mask classes".into(),
        elements: usize::MAX,
    })?;
    let mut tab: Vec<u8> = Vec::new();
    tab.try_reserve_exact(n).map_err(|_| Error::Alloc {
        what: "attention's shared mask classes".into(),
        elements: n,
    })?;
    tab.resize(n, 0);
    let nl = c.lead.len();
    let lead = vec![0usize; nl];
    let mut lent = Scratch::with_size(c.program.tile_blocks * 64)?;
    let mut vis = vec![0u8; UNIT_ROWS * BLOCK];
    let mut in_ranges = vec![Range::Any; c.loads.len() + 1];
    let mut coords: Vec<(i64, i64)> = vec![(0, 0); nl + 3];
    for r0 in (0..c.tq).step_by(UNIT_ROWS) {
        let rn = UNIT_ROWS.min(c.tq - r0);
        coords[nl + 1] = (r0 as i64, (r0 + rn - 1) as i64);
        for b in 0..nb {
            let k0 = b * BLOCK;
            let nk = BLOCK.min(c.tk - k0);
            coords[nl + 2] = (k0 as i64, (k0 + nk - 1) as i64);
            for &li in &c.program.mask_loads {
                in_ranges[li] = load_range(&c.loads[li - 1], &coords);
            }
            let class = Class::of(mask.ranges(&in_ranges, &coords)[0]);
            for i in 0..rn {
                tab[(r0 + i) * nb + b] = match class {
                    Class::Hidden => 0,
                    Class::Shown => 1,
                    Class::Mixed => 2,
                };
            }
            if class == Class::Mixed {
                let bx = PairBox {
                    lead: &lead,
                    h0: 0,
                    hn: 1,
                    r0,
                    rn,
                    k0,
                    nk,
                };
                run_mask(c, &bx, &mut vis, lent.blocks_mut())?;
                for i in 0..rn {
                    let row = &vis[i * BLOCK..i * BLOCK + nk];
                    tab[(r0 + i) * nb + b] = if row.iter().all(|&x| x == 0) {
                        0
                    } else if row.iter().all(|&x| x != 0) {
                        1
                    } else {
                        2
                    };
                }
            }
        }
    }
    Ok(tab)
}

/// A load's range over the box `coords` of the pair space: its least and
/// greatest element there (by its pair-space strides, stepping only along
/// the axes it steps on), whether it holds a NaN; the whole range of its
/// dtype for a dtype of fewer than 8 bits or one the ranges do not model.
fn load_range(load: &(ArrayView<'_>, Vec<isize>), coords: &[(i64, i64)]) -> Range {
    let (view, strides) = load;
    let dt = view.dtype();
    let info = dt.info();
    if info.bits < 8 || info.values_per_byte != 1 {
        return Range::full(dt);
    }
    // The axes it steps along, with their index ranges.
    let mut base = view.layout().offset as isize;
    let mut axes: Vec<(usize, isize)> = Vec::new();
    for (a, &(lo, hi)) in coords.iter().enumerate() {
        let s = strides[a];
        base += lo as isize * s;
        if s != 0 && hi > lo {
            axes.push(((hi - lo + 1) as usize, s));
        }
    }
    let bytes = view.data();
    let item = info.item_bytes;
    let read = |e: isize| -> &[u8] {
        let p = e as usize * item;
        &bytes[p..p + item]
    };
    let mut acc = Extremes::new(dt);
    let mut pos = vec![0usize; axes.len()];
    loop {
        let mut e = base;
        for (k, &(_, s)) in axes.iter().enumerate() {
            e += pos[k] as isize * s;
        }
        if !acc.add(read(e)) {
            return Range::full(dt);
        }
        // Next position.
        let mut k = axes.len();
        loop {
            if k == 0 {
                return acc.range();
            }
            k -= 1;
            pos[k] += 1;
            if pos[k] < axes[k].0 {
                break;
            }
            pos[k] = 0;
        }
    }
}

/// The least and greatest of a load's elements seen so far.
struct Extremes {
    dt: DType,
    ilo: i128,
    ihi: i128,
    flo: f64,
    fhi: f64,
    nan: bool,
    seen_false: bool,
    seen_true: bool,
}

impl Extremes {
    fn new(dt: DType) -> Extremes {
        Extremes {
            dt,
            ilo: i128::MAX,
            ihi: i128::MIN,
            flo: f64::INFINITY,
            fhi: f64::NEG_INFINITY,
            nan: false,
            seen_false: false,
            seen_true: false,
        }
    }
    /// Take one element's bytes; false for a dtype not modelled.
    fn add(&mut self, b: &[u8]) -> bool {
        let int = |v: i128, s: &mut Extremes| {
            s.ilo = s.ilo.min(v);
            s.ihi = s.ihi.max(v);
        };
        let fl = |v: f64, s: &mut Extremes| {
            if v.is_nan() {
                s.nan = true;
            } else {
                s.flo = s.flo.min(v);
                s.fhi = s.fhi.max(v);
            }
        };
        match self.dt {
            DType::Bool => {
                if b[0] != 0 {
                    self.seen_true = true
                } else {
                    self.seen_false = true
                }
            }
            DType::I8 => int(b[0] as i8 as i128, self),
            DType::U8 => int(b[0] as i128, self),
            DType::I16 => int(i16::from_ne_bytes([b[0], b[1]]) as i128, self),
            DType::U16 => int(u16::from_ne_bytes([b[0], b[1]]) as i128, self),
            DType::I32 => int(
                i32::from_ne_bytes(b.try_into().unwrap_or([0; 4])) as i128,
                self,
            ),
            DType::U32 => int(
                u32::from_ne_bytes(b.try_into().unwrap_or([0; 4])) as i128,
                self,
            ),
            DType::I64 => int(
                i64::from_ne_bytes(b.try_into().unwrap_or([0; 8])) as i128,
                self,
            ),
            DType::U64 => int(
                u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])) as i128,
                self,
            ),
            DType::F32 => fl(
                f32::from_ne_bytes(b.try_into().unwrap_or([0; 4])) as f64,
                self,
            ),
            DType::F64 => fl(f64::from_ne_bytes(b.try_into().unwrap_or([0; 8])), self),
            DType::F16 => fl(
                half::f16::from_bits(u16::from_ne_bytes([b[0], b[1]])).to_f64(),
                self,
            ),
            DType::Bf16 => fl(
                half::bf16::from_bits(u16::from_ne_bytes([b[0], b[1]])).to_f64(),
                self,
            ),
            _ => return false,
        }
        true
    }
    fn range(&self) -> Range {
        match self.dt.info().class {
            DClass::Bool => Range::Bool {
                may_false: self.seen_false,
                may_true: self.seen_true,
            },
            DClass::Int | DClass::Uint => Range::Int {
                lo: self.ilo,
                hi: self.ihi,
            },
            DClass::Float if self.flo <= self.fhi => Range::Float {
                lo: self.flo,
                hi: self.fhi,
                nan: self.nan,
            },
            // Only NaNs.
            DClass::Float => Range::Float {
                lo: 0.0,
                hi: 0.0,
                nan: true,
            },
            DClass::Complex | DClass::Pair => Range::Any,
        }
    }
}

/// A block's box in the pair space: one lead index, `hn` heads from `h0`,
/// `rn` rows from `r0`, `nk` keys from `k0`.
struct PairBox<'l> {
    lead: &'l [usize],
    h0: usize,
    hn: usize,
    r0: usize,
    rn: usize,
    k0: usize,
    nk: usize,
}

impl PairBox<'_> {
    /// The box's first index along every pair axis.
    fn start(&self) -> Vec<usize> {
        let mut v = self.lead.to_vec();
        v.extend([self.h0, self.r0, self.k0]);
        v
    }
    /// The box's shape (1 along the lead axes).
    fn shape(&self) -> Vec<usize> {
        let mut v = vec![1usize; self.lead.len()];
        v.extend([self.hn, self.rn, self.nk]);
        v
    }
    /// The strides of a tile of the box's rows 64 apart (heads `rn·64`).
    fn tile_strides(&self) -> Vec<isize> {
        let mut v = vec![0isize; self.lead.len()];
        v.extend([(self.rn * BLOCK) as isize, BLOCK as isize, 1]);
        v
    }
}

/// The box's views of the loads, then one 0-d i64 view per pair axis holding
/// the box's offset along it (from `offs`, the offsets' bytes).
fn box_inputs<'v>(c: &'v Call<'_>, bx: &PairBox<'_>, offs: &'v [u8]) -> Result<Vec<ArrayView<'v>>> {
    let shape = bx.shape();
    let start = bx.start();
    let mut views = Vec::with_capacity(c.loads.len() + start.len());
    for (view, strides) in &c.loads {
        let mut off = view.layout().offset as isize;
        for (a, &s) in strides.iter().enumerate() {
            off += start[a] as isize * s;
        }
        views.push(ArrayView::new(
            view.dtype(),
            &shape,
            strides,
            off as usize,
            view.data(),
        )?);
    }
    for a in 0..start.len() {
        views.push(ArrayView::new(DType::I64, &[], &[], a, offs)?);
    }
    Ok(views)
}

/// The bytes of the box's offsets, as i64.
fn offsets(bx: &PairBox<'_>) -> Vec<u8> {
    bx.start()
        .iter()
        .flat_map(|&x| (x as i64).to_ne_bytes())
        .collect()
}

/// Run output 0 on the box into `vis` (rows 64 apart), its tiles in `lent`.
fn run_mask(c: &Call<'_>, bx: &PairBox<'_>, vis: &mut [u8], lent: &mut [Block]) -> Result<()> {
    let Some(prog) = c.program.mask_boxed.as_ref() else {
        return Ok(());
    };
    let offs = offsets(bx);
    let dummy = [0u8; 8];
    let mut inputs = vec![ArrayView::new(c.acc, &[], &[], 0, &dummy)?];
    inputs.extend(box_inputs(c, bx, &offs)?);
    let mut out = ArrayViewMut::new(DType::Bool, &bx.shape(), &bx.tile_strides(), 0, vis)?;
    crate::map::map_lent(prog, &inputs, std::slice::from_mut(&mut out), lent, c.tier)
}

/// Run output 1 on the box's scores `s` into `s2` (rows 64 apart), its tiles
/// in `lent`.
fn run_score<T: AccFloat>(
    c: &Call<'_>,
    bx: &PairBox<'_>,
    s: &[T],
    s2: &mut [T],
    lent: &mut [Block],
) -> Result<()> {
    let Some(prog) = c.program.score_boxed.as_ref() else {
        return Ok(());
    };
    let offs = offsets(bx);
    let (shape, strides) = (bx.shape(), bx.tile_strides());
    let mut inputs = vec![ArrayView::new(
        c.acc,
        &shape,
        &strides,
        0,
        crate::array::as_bytes(s),
    )?];
    inputs.extend(box_inputs(c, bx, &offs)?);
    let s2b = crate::array::as_bytes_mut(s2);
    let mut out = ArrayViewMut::new(c.acc, &shape, &strides, 0, s2b)?;
    crate::map::map_lent(prog, &inputs, std::slice::from_mut(&mut out), lent, c.tier)
}
