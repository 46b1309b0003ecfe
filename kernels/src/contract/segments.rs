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

use super::gemm::Panels;
use super::{choose_order, contract_in, ContractSpec};
use crate::array::{ArrayView, ArrayViewMut};
use crate::cast::{cast, CastMode};
use crate::elementwise::{broadcasts_to, check_destination};
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

/// A group's id and the range of its members in the grouped indices.
type Run = (u32, usize, usize);

/// The indices `0..ids.len()` grouped by id: runs of increasing index, the
/// runs in increasing id, with their ids (memory proportional to the ids,
/// not to the number of groups, which a broadcast operand may make huge).
fn group_runs(ids: &[u32]) -> Result<(Vec<usize>, Vec<Run>)> {
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

fn check_ids(ids: &[u32], len: usize, groups: usize, what: &str) -> Result<()> {
    if ids.len() != len {
        return Err(Error::Length {
            operand: format!("contract: the ids of the {what}"),
            len: ids.len(),
            expected: len,
            unit: "ids",
        });
    }
    if let Some((i, &g)) = ids.iter().enumerate().find(|(_, &g)| g as usize >= groups) {
        return Err(Error::Attribute {
            name: "contract: ids".into(),
            reason: format!("id {g} at {i} is not below the {groups} groups"),
        });
    }
    Ok(())
}

/// The refusal of operands of the wrong ranks: the first that is wrong.
fn rank_err(a: &ArrayView<'_>, b: &ArrayView<'_>, expected: &str) -> Error {
    let (name, v) = if a.shape().len() != 2 {
        ("a", a)
    } else {
        ("b", b)
    };
    Error::Rank {
        operand: format!("contract: {name}"),
        shape: v.shape().to_vec(),
        expected: expected.into(),
    }
}

fn shape_err(operand: &str, shape: &[usize], target: &[usize]) -> Error {
    Error::Shape {
        operand: operand.into(),
        shape: shape.to_vec(),
        target: target.to_vec(),
    }
}

/// Row groups: `dst[i, j] = init[i, j] + Σ_k a[i, k]·b[ids[i], k, j]` for `a`
/// `[R, K]`, `b` `[G, K, N]`, `ids` `[R]` (each below G), `init`
/// broadcasting to `[R, N]` and `dst` `[R, N]`, accumulated in `acc` as
/// [`contract`](super::contract) does, in the order chosen from R, N and K.
/// Refusals (before any write): an id not below G, shapes that do not fit,
/// sub-byte dtypes, and what `contract` refuses.
pub fn contract_grouped_rows(
    acc: DType,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    ids: &[u32],
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let exec = *exec;
    let mut views = vec![("a", a), ("b", b)];
    if let Some(i) = init {
        views.push(("init", i));
    }
    check_common(&exec, acc, &views, dst)?;
    let (&[r, k], &[g, kb, n]) = (a.shape(), b.shape()) else {
        return Err(rank_err(
            a,
            b,
            "row groups take a of shape [R, K] and b of shape [G, K, N]",
        ));
    };
    if kb != k {
        return Err(shape_err("b", b.shape(), &[g, k, n]));
    }
    check_ids(ids, r, g, "rows")?;
    if dst.shape() != [r, n] {
        return Err(shape_err("destination", dst.shape(), &[r, n]));
    }
    if let Some(i) = init {
        if !broadcasts_to(i.shape(), &[r, n]) {
            return Err(shape_err("init", i.shape(), &[r, n]));
        }
    }
    if dst.layout().is_empty() {
        return Ok(());
    }
    let order = choose_order(r, n, k);
    let spec = ContractSpec::new(acc).contracting(1, 0);
    // The rows of each group that has any, in increasing group.
    let (members, runs) = group_runs(ids)?;
    let item = dst.dtype().info().item_bytes;
    // The destination's bytes (r · n is its element count, checked).
    let mut out = super::try_filled(r * n * item, 0u8, "the destination")?;
    let a_str = [a.strides()[0], a.strides()[1]];
    let init_str = init.map(|i| aligned(i, &[r, n]));
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
        let gi_bytes = match (init, &init_str) {
            (Some(i), Some(s)) => Some(gather_rows(
                i.dtype(),
                i.data(),
                i.layout().offset,
                [s[0], s[1]],
                n,
                rows,
            )?),
            _ => None,
        };
        let vi = match (init, &gi_bytes) {
            (Some(i), Some(bytes)) => {
                Some(ArrayView::contiguous(i.dtype(), &[rows.len(), n], bytes)?)
            }
            _ => None,
        };
        let mut gd = super::try_filled(rows.len() * n * item, 0u8, "a group's outputs")?;
        let mut vd = ArrayViewMut::contiguous(dst.dtype(), &[rows.len(), n], &mut gd)?;
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
    let dtype = dst.dtype();
    cast(
        CastMode::Default,
        &ArrayView::contiguous(dtype, &[r, n], &out)?,
        dst,
        &exec,
    )
}

/// Depth groups: `dst[g, i, j] = init[g, i, j] + Σ_{k: ids[k] = g} a[i, k]·b[k, j]`
/// for `a` `[R, K]`, `b` `[K, N]`, `ids` `[K]` (each below `groups`), `init`
/// broadcasting to `[groups, R, N]` and `dst` `[groups, R, N]`; each group's
/// products numbered by increasing k, in the order chosen from R, N and the
/// whole K. Refusals as [`contract_grouped_rows`].
#[allow(clippy::too_many_arguments)]
pub fn contract_grouped_depth(
    acc: DType,
    groups: usize,
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    ids: &[u32],
    init: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let exec = *exec;
    let mut views = vec![("a", a), ("b", b)];
    if let Some(i) = init {
        views.push(("init", i));
    }
    check_common(&exec, acc, &views, dst)?;
    let (&[r, k], &[kb, n]) = (a.shape(), b.shape()) else {
        return Err(rank_err(
            a,
            b,
            "depth groups take a of shape [R, K] and b of shape [K, N]",
        ));
    };
    if kb != k {
        return Err(shape_err("b", b.shape(), &[k, n]));
    }
    check_ids(ids, k, groups, "contracted indices")?;
    let target = [groups, r, n];
    if dst.shape() != target {
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
    let spec = ContractSpec::new(acc).contracting(1, 0);
    // The contracted indices of each group (groups · r · n is the
    // destination's element count, checked).
    let (members, runs) = group_runs(ids)?;
    let mut run = runs.iter().peekable();
    let item = dst.dtype().info().item_bytes;
    let mut out = super::try_filled(groups * r * n * item, 0u8, "the destination")?;
    let (sa, sb) = (a.strides(), b.strides());
    let init_str = init.map(|i| aligned(i, &target));
    for gi in 0..groups {
        let ks = match run.peek() {
            Some(&&(id, lo, hi)) if id as usize == gi => {
                run.next();
                &members[lo..hi]
            }
            _ => &[][..],
        };
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
        let vi = match (init, &init_str) {
            (Some(i), Some(s)) => Some(ArrayView::new(
                i.dtype(),
                &[r, n],
                &[s[1], s[2]],
                (i.layout().offset as isize + gi as isize * s[0]) as usize,
                i.data(),
            )?),
            _ => None,
        };
        let part = &mut out[gi * r * n * item..(gi + 1) * r * n * item];
        let mut vd = ArrayViewMut::contiguous(dst.dtype(), &[r, n], part)?;
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
    let dtype = dst.dtype();
    cast(
        CastMode::Default,
        &ArrayView::contiguous(dtype, &target, &out)?,
        dst,
        &exec,
    )
}
