//! Grouped (ragged) contractions: rows of `a` grouped by an id array, each
//! group contracting with its own `b` (the mixture-of-experts case), or the
//! contracted extent split into groups.
//!
//! The order (chain or lane) is chosen once for the whole call from its rows,
//! columns and depth ([`choose_order`]): for row groups
//! the rows are all of a's rows, the columns those of one group's `b` and the
//! depth K; for depth groups the depth is the whole contracted extent. Each
//! group is then computed as an unsegmented call of its own indices alone, in
//! that order, so an output's bits do not depend on which groups the other
//! indices fall in. The ids are read whole, and everything is checked, before
//! any write.
//!
//! # Ids and batch axes
//!
//! Ids come as `u32` or `i64` ([`Ids`]); an `i64` id below 0 is refused as
//! one not below the number of groups. Both forms take leading batch axes:
//! `a`, `b`, `init` and `dst` may carry the same leading axes (`B…`) before
//! the shapes of the unbatched call, a batch extent of 1 on `a` or `b`
//! broadcasting. Each batch element is grouped independently: the ids hold
//! either one list for the unbatched call (`R` row ids, or `K` depth ids),
//! which every batch element shares, or one list per batch element, batch
//! elements in C order of their indices (`B·R` or `B·K` ids). The order is
//! still chosen once, from one batch element's rows, columns and depth, and
//! each group of each batch element computes as an unsegmented call of its
//! indices alone.

use super::gemm::Panels;
use super::{choose_order, contract_in, ContractSpec};
use crate::array::{ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::checks::check_destination;
use crate::elementwise::broadcasts_to;
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;

/// Strides of `v` as a view of `target`'s shape (numpy broadcasting: 0 along
/// axes it broadcasts).
fn aligned(v: &ArrayView<'_>, target: &[usize]) -> Vec<isize> {
    let lead = target.len() - v.shape().len();
    let mut s = vec![0isize; target.len()];
    for (i, (&n, &st)) in v.shape().iter().zip(v.strides()).enumerate() {
        s[lead + i] = if n == 1 { 0 } else { st };
    }
    s
}

/// Copy rows `rows` of a rank-2 view (given as shape, strides, offset over
/// bytes) into a C-order buffer `[rows.len(), cols]` of the same dtype,
/// reserved fallibly (the rows may be a broadcast view's).
fn gather_rows(
    dtype: DType,
    data: &[u8],
    offset: usize,
    strides: [isize; 2],
    cols: usize,
    rows: &[usize],
) -> Result<Vec<u8>> {
    let item = dtype.info().item_bytes;
    let len = rows.len().saturating_mul(cols).saturating_mul(item);
    let mut out = super::try_vec(len, "gathered rows")?;
    for &r in rows {
        for c in 0..cols {
            let p = (offset as isize + r as isize * strides[0] + c as isize * strides[1]) as usize;
            out.extend_from_slice(&data[p * item..(p + 1) * item]);
        }
    }
    Ok(out)
}

/// The group ids of a grouped contraction, read whole before any write.
#[derive(Clone, Copy, Debug)]
pub enum Ids<'a> {
    /// Unsigned 32-bit ids.
    U32(&'a [u32]),
    /// Signed 64-bit ids (a negative one is refused).
    I64(&'a [i64]),
}

impl Ids<'_> {
    fn len(&self) -> usize {
        match self {
            Ids::U32(v) => v.len(),
            Ids::I64(v) => v.len(),
        }
    }
    /// Id `i` (a negative `i64` as `None`).
    fn get(&self, i: usize) -> Option<u64> {
        match self {
            Ids::U32(v) => Some(v[i] as u64),
            Ids::I64(v) => u64::try_from(v[i]).ok(),
        }
    }
}

macro_rules! ids_from {
    ($t:ty, $v:ident) => {
        impl<'a> From<&'a [$t]> for Ids<'a> {
            fn from(s: &'a [$t]) -> Self {
                Ids::$v(s)
            }
        }
        impl<'a> From<&'a Vec<$t>> for Ids<'a> {
            fn from(s: &'a Vec<$t>) -> Self {
                Ids::$v(s)
            }
        }
        impl<'a, const N: usize> From<&'a [$t; N]> for Ids<'a> {
            fn from(s: &'a [$t; N]) -> Self {
                Ids::$v(s)
            }
        }
    };
}
ids_from!(u32, U32);
ids_from!(i64, I64);

/// A group's id and the range of its members in the grouped indices.
type Run = (u64, usize, usize);

/// The indices `0..ids.len()` grouped by id: runs of increasing index, the
/// runs in increasing id, with their ids (memory proportional to the ids,
/// not to the number of groups, which a broadcast operand may make huge).
fn group_runs(ids: &[u64]) -> Result<(Vec<usize>, Vec<Run>)> {
    let mut order = super::try_collect(ids.len(), 0..ids.len(), "group members")?;
    order.sort_by_key(|&i| ids[i]);
    let mut runs = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let id = ids[order[start]];
        let mut end = start + 1;
        while end < order.len() && ids[order[end]] == id {
            end += 1;
        }
        runs.push((id, start, end));
        start = end;
    }
    Ok((order, runs))
}

fn check_common(
    exec: &Exec,
    acc: DType,
    views: &[(&str, &ArrayView<'_>)],
    dst: &ArrayViewMut<'_>,
) -> Result<()> {
    exec.resolve_tier()?;
    super::check_accumulator(acc)?;
    let sub_byte = |operand: String, dtype: DType| Error::DTypeUnsupported {
        operand,
        dtype,
        reason: "grouped contractions take no sub-byte dtype".into(),
    };
    for (name, v) in views {
        if v.dtype().info().values_per_byte > 1 {
            return Err(sub_byte(
                format!("contract: grouped operand {name}"),
                v.dtype(),
            ));
        }
    }
    if dst.dtype().info().values_per_byte > 1 {
        return Err(sub_byte(
            "contract: grouped destination".into(),
            dst.dtype(),
        ));
    }
    check_destination(dst)
}

/// Checks the ids, `per` of them for each of `batches` batch elements or
/// `per` shared by all, each below `groups`, and reads them whole.
fn read_ids(
    ids: Ids<'_>,
    per: usize,
    batches: usize,
    groups: usize,
    what: &str,
) -> Result<Vec<u64>> {
    let all = per.checked_mul(batches);
    if ids.len() != per && Some(ids.len()) != all {
        return Err(Error::Length {
            operand: format!("contract: the ids of the {what}"),
            len: ids.len(),
            expected: per,
            unit: "ids (or that many per batch element)",
        });
    }
    let mut out = super::try_vec(ids.len(), "the ids")?;
    for i in 0..ids.len() {
        match ids.get(i) {
            Some(g) if g < groups as u64 => out.push(g),
            _ => {
                let shown = match ids {
                    Ids::U32(v) => v[i] as i128,
                    Ids::I64(v) => v[i] as i128,
                };
                return Err(Error::Attribute {
                    name: "contract: ids".into(),
                    reason: format!("id {shown} at {i} is not in 0..{groups} (the groups)"),
                });
            }
        }
    }
    Ok(out)
}

/// The refusal of operands of the wrong ranks: the first that is wrong.
fn rank_err(a: &ArrayView<'_>, b: &ArrayView<'_>, a_ok: bool, expected: &str) -> Error {
    let (name, v) = if !a_ok { ("a", a) } else { ("b", b) };
    Error::Rank {
        operand: format!("contract: {name}"),
        shape: v.shape().to_vec(),
        expected: expected.into(),
    }
}

use crate::checks::shape_err;

/// The batch extents of `a`'s and `b`'s leading `n` axes (equal, or one of
/// them 1), or the refusal of b's shape (`b_target` with its batch extents
/// replaced by a's).
fn batch_extents(a: &[usize], b: &[usize], n: usize, b_rest: &[usize]) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        if x != y && x != 1 && y != 1 {
            let mut target = a[..n].to_vec();
            target.extend_from_slice(b_rest);
            return Err(shape_err("b", b, &target));
        }
        out.push(if x == 1 { y } else { x });
    }
    Ok(out)
}

/// Offsets (elements, from the view's own offset) of every batch element of
/// a view whose leading axes have `strides` (0 where it broadcasts), C order
/// of `extents`.
fn batch_offsets(offset: usize, strides: &[isize], extents: &[usize]) -> Result<Vec<usize>> {
    let lead: Vec<isize> = strides.to_vec();
    let table = super::pack::offsets(extents, &lead)?;
    Ok(table
        .into_iter()
        .map(|x| (offset as isize + x) as usize)
        .collect())
}

/// The leading `n` strides of `v`, 0 along axes of extent 1.
fn lead_strides(v: &ArrayView<'_>, n: usize) -> Vec<isize> {
    v.shape()[..n]
        .iter()
        .zip(v.strides())
        .map(|(&e, &s)| if e == 1 { 0 } else { s })
        .collect()
}

/// Row groups: `dst[i, j] = init[i, j] + Σ_k a[i, k]·b[ids[i], k, j]` for `a`
/// `[R, K]`, `b` `[G, K, N]`, `ids` `[R]` (each below G), `init`
/// broadcasting to `[R, N]` and `dst` `[R, N]`, accumulated in `acc` as
/// [`contract`](super::contract) does, in the order chosen from R, N and K.
/// With leading batch axes (see the [module](self)): `a` `[B…, R, K]`, `b`
/// `[B…, G, K, N]`, `dst` `[B…, R, N]`, ids `R` or `B·R` of them.
/// Refusals (before any write): an id not in `0..G`, a number of ids other
/// than R and B·R, shapes that do not fit, sub-byte dtypes, and what
/// `contract` refuses.
pub fn contract_grouped_rows<'i, I: Into<Ids<'i>>>(
    acc: DType,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    ids: I,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    grouped(acc, By::Rows, a, b, ids.into(), init, dst, *exec)
}

/// One batch element of row groups: `a` `[R, K]`, `b` `[G, K, N]`, its
/// checked ids, init as `[R, N]`; the outputs, of `dtype`, into `out`
/// (C order).
#[allow(clippy::too_many_arguments)]
fn rows_one(
    acc: DType,
    order: super::Order,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    ids: &[u64],
    init: Option<&ArrayView<'_>>,
    dtype: DType,
    out: &mut [u8],
    exec: Exec,
) -> Result<()> {
    let (&[_, k], &[_, _, n]) = (a.shape(), b.shape()) else {
        return Ok(());
    };
    let spec = ContractSpec::new(acc).contracting(1, 0);
    // The rows of each group that has any, in increasing group.
    let (members, runs) = group_runs(ids)?;
    let item = dtype.info().item_bytes;
    let a_str = [a.strides()[0], a.strides()[1]];
    for &(gi, lo, hi) in &runs {
        let rows = &members[lo..hi];
        let ga = gather_rows(a.dtype(), a.data(), a.layout().offset, a_str, k, rows)?;
        let va = ArrayView::contiguous(a.dtype(), &[rows.len(), k], &ga)?;
        let bs = b.strides();
        let vb = ArrayView::new(
            b.dtype(),
            &[k, n],
            &[bs[1], bs[2]],
            (b.layout().offset as isize + gi as isize * bs[0]) as usize,
            b.data(),
        )?;
        let gi_bytes = match init {
            Some(i) => Some(gather_rows(
                i.dtype(),
                i.data(),
                i.layout().offset,
                [i.strides()[0], i.strides()[1]],
                n,
                rows,
            )?),
            None => None,
        };
        let vi = match (init, &gi_bytes) {
            (Some(i), Some(bytes)) => {
                Some(ArrayView::contiguous(i.dtype(), &[rows.len(), n], bytes)?)
            }
            _ => None,
        };
        let mut gd = super::try_filled(rows.len() * n * item, 0u8, "a group's outputs")?;
        let mut vd = ArrayViewMut::contiguous(dtype, &[rows.len(), n], &mut gd)?;
        contract_in(
            &va,
            &vb,
            vi.as_ref(),
            &mut vd,
            &spec,
            exec,
            Some(order),
            Panels::Cache,
        )?;
        for (q, &row) in rows.iter().enumerate() {
            out[row * n * item..(row + 1) * n * item]
                .copy_from_slice(&gd[q * n * item..(q + 1) * n * item]);
        }
    }
    Ok(())
}

/// Depth groups: `dst[g, i, j] = init[g, i, j] + Σ_{k: ids[k] = g} a[i, k]·b[k, j]`
/// for `a` `[R, K]`, `b` `[K, N]`, `ids` `[K]` (each below `groups`), `init`
/// broadcasting to `[groups, R, N]` and `dst` `[groups, R, N]`; each group's
/// products numbered by increasing k, in the order chosen from R, N and the
/// whole K. With leading batch axes (see the [module](self)): `a`
/// `[B…, R, K]`, `b` `[B…, K, N]`, `dst` `[B…, groups, R, N]`, ids `K` or
/// `B·K` of them. Refusals as [`contract_grouped_rows`].
#[allow(clippy::too_many_arguments)]
pub fn contract_grouped_depth<'i, I: Into<Ids<'i>>>(
    acc: DType,
    groups: usize,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    ids: I,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    grouped(acc, By::Depth(groups), a, b, ids.into(), init, dst, *exec)
}

/// How a grouped contraction groups: rows by their own b, or the depth
/// into this many groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum By {
    Rows,
    Depth(usize),
}

/// The one driver of both groupings: checks every operand (before any
/// write), then computes each batch element on its own into a C-order
/// buffer of the destination's dtype, which is cast into the destination.
#[allow(clippy::too_many_arguments)]
fn grouped(
    acc: DType,
    by: By,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    ids: Ids<'_>,
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: Exec,
) -> Result<()> {
    let mut views = vec![("a", a), ("b", b)];
    if let Some(i) = init {
        views.push(("init", i));
    }
    check_common(&exec, acc, &views, dst)?;
    let (form, b_extra) = match by {
        By::Rows => (
            "row groups take a of shape [B.., R, K] and b of shape [B.., G, K, N]",
            1,
        ),
        By::Depth(_) => (
            "depth groups take a of shape [B.., R, K] and b of shape [B.., K, N]",
            0,
        ),
    };
    let rank = a.shape().len();
    if rank < 2 || b.shape().len() != rank + b_extra {
        return Err(rank_err(a, b, rank >= 2, form));
    }
    let nbat = rank - 2;
    let (r, k) = (a.shape()[nbat], a.shape()[nbat + 1]);
    // b's own axes: [G, K, N] by rows, [K, N] by depth.
    let b_own = &b.shape()[nbat..];
    let (kb, n) = (b_own[b_own.len() - 2], b_own[b_own.len() - 1]);
    let bat = batch_extents(a.shape(), b.shape(), nbat, b_own)?;
    if kb != k {
        let mut target = bat.clone();
        target.extend(b_own);
        target[nbat + b_extra] = k;
        return Err(shape_err("b", b.shape(), &target));
    }
    let nb = crate::array::count_of(&bat, "contract: the batch extents")?;
    // Ids per row (below G) or per contracted index (below the groups); the
    // destination's own axes.
    let (ids, own_out) = match by {
        By::Rows => (read_ids(ids, r, nb, b_own[0], "rows")?, vec![r, n]),
        By::Depth(groups) => (
            read_ids(ids, k, nb, groups, "contracted indices")?,
            vec![groups, r, n],
        ),
    };
    let per_ids = if by == By::Rows { r } else { k };
    let mut target = bat.clone();
    target.extend(&own_out);
    if dst.shape() != target.as_slice() {
        return Err(shape_err("destination", dst.shape(), &target));
    }
    if let Some(i) = init {
        if !broadcasts_to(i.shape(), &target) {
            return Err(shape_err("init", i.shape(), &target));
        }
    }
    if dst.layout().is_empty() {
        // No output (so a number of groups of any size holds none).
        return Ok(());
    }
    let order = choose_order(r, n, k);
    let dtype = dst.dtype();
    // One batch element's outputs in bytes (the destination's count is
    // checked).
    let per = own_out.iter().product::<usize>() * dtype.info().item_bytes;
    let mut out = super::try_filled(nb * per, 0u8, "the destination")?;
    let a_off = batch_offsets(a.layout().offset, &lead_strides(a, nbat), &bat)?;
    let b_off = batch_offsets(b.layout().offset, &lead_strides(b, nbat), &bat)?;
    let init_str = init.map(|i| aligned(i, &target));
    let init_off = match (init, &init_str) {
        (Some(i), Some(s)) => batch_offsets(i.layout().offset, &s[..nbat], &bat)?,
        _ => Vec::new(),
    };
    let (sa, sb) = (a.strides(), b.strides());
    for bi in 0..nb {
        let va = ArrayView::new(a.dtype(), &[r, k], &sa[nbat..], a_off[bi], a.data())?;
        let vb = ArrayView::new(b.dtype(), b_own, &sb[nbat..], b_off[bi], b.data())?;
        let vi = match (init, &init_str) {
            (Some(i), Some(s)) => Some(ArrayView::new(
                i.dtype(),
                &own_out,
                &s[nbat..],
                init_off[bi],
                i.data(),
            )?),
            _ => None,
        };
        // Ids shared by every batch element, or this element's own.
        let own = if ids.len() == per_ids {
            &ids[..]
        } else {
            &ids[bi * per_ids..(bi + 1) * per_ids]
        };
        let part = &mut out[bi * per..(bi + 1) * per];
        match by {
            By::Rows => rows_one(acc, order, &va, &vb, own, vi.as_ref(), dtype, part, exec)?,
            By::Depth(groups) => depth_one(
                acc,
                groups,
                order,
                &va,
                &vb,
                own,
                vi.as_ref(),
                dtype,
                part,
                exec,
            )?,
        }
    }
    cast(
        CastMode::Default,
        &ArrayView::contiguous(dtype, &target, &out)?,
        dst,
        &exec,
    )
}

/// One batch element of depth groups: `a` `[R, K]`, `b` `[K, N]`, its
/// checked ids, init as `[groups, R, N]`; the outputs, of `dtype`, into
/// `out` (C order of `[groups, R, N]`).
#[allow(clippy::too_many_arguments)]
fn depth_one(
    acc: DType,
    groups: usize,
    order: super::Order,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    ids: &[u64],
    init: Option<&ArrayView<'_>>,
    dtype: DType,
    out: &mut [u8],
    exec: Exec,
) -> Result<()> {
    let (&[r, _], &[_, n]) = (a.shape(), b.shape()) else {
        return Ok(());
    };
    let spec = ContractSpec::new(acc).contracting(1, 0);
    // The contracted indices of each group that has any.
    let (members, runs) = group_runs(ids)?;
    let item = dtype.info().item_bytes;
    let (sa, sb) = (a.strides(), b.strides());
    if runs.len() < groups {
        // The groups without an index: each output is init's (or +0) in
        // the accumulator, rounded into the destination as a contraction of
        // no depth in the same order gives it. One such contraction over
        // every group's rows at once (init brought into C order to view the
        // groups' rows as one matrix) costs O(groups·R·N), not a call per
        // group; the groups with indices are overwritten below.
        let rows = groups * r;
        let no_a = ArrayView::new(a.dtype(), &[rows, 0], &[0, 1], 0, &[])?;
        let no_b = ArrayView::new(b.dtype(), &[0, n], &[1, 0], 0, &[])?;
        let init_rows = match init {
            Some(i) => {
                let d = i.dtype();
                let bytes = rows * n * d.info().item_bytes;
                let mut copy = super::try_filled(bytes, 0u8, "init in C order")?;
                cast(
                    CastMode::Default,
                    i,
                    &mut ArrayViewMut::contiguous(d, &[groups, r, n], &mut copy)?,
                    &exec,
                )?;
                Some((d, copy))
            }
            None => None,
        };
        let vi = match &init_rows {
            Some((d, copy)) => Some(ArrayView::contiguous(*d, &[rows, n], copy)?),
            None => None,
        };
        let mut vd = ArrayViewMut::contiguous(dtype, &[rows, n], out)?;
        contract_in(
            &no_a,
            &no_b,
            vi.as_ref(),
            &mut vd,
            &spec,
            exec,
            Some(order),
            Panels::Cache,
        )?;
    }
    for &(id, lo, hi) in &runs {
        let gi = id as usize;
        let ks = &members[lo..hi];
        // a's columns ks, gathered as rows of its transpose, then viewed back.
        let ga = gather_rows(
            a.dtype(),
            a.data(),
            a.layout().offset,
            [sa[1], sa[0]],
            r,
            ks,
        )?;
        let va = ArrayView::new(a.dtype(), &[r, ks.len()], &[1, r as isize], 0, &ga)?;
        let gb = gather_rows(
            b.dtype(),
            b.data(),
            b.layout().offset,
            [sb[0], sb[1]],
            n,
            ks,
        )?;
        let vb = ArrayView::contiguous(b.dtype(), &[ks.len(), n], &gb)?;
        let vi = match init {
            Some(i) => {
                let s = i.strides();
                Some(ArrayView::new(
                    i.dtype(),
                    &[r, n],
                    &[s[1], s[2]],
                    (i.layout().offset as isize + gi as isize * s[0]) as usize,
                    i.data(),
                )?)
            }
            None => None,
        };
        let part = &mut out[gi * r * n * item..(gi + 1) * r * n * item];
        let mut vd = ArrayViewMut::contiguous(dtype, &[r, n], part)?;
        contract_in(
            &va,
            &vb,
            vi.as_ref(),
            &mut vd,
            &spec,
            exec,
            Some(order),
            Panels::Cache,
        )?;
    }
    Ok(())
}
