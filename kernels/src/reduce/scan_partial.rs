//! Scans over ranges of their axis (ARCHITECTURE.md §5.4, "Scans in
//! ranges"): the chunk order is a function of the positions along the axis,
//! so a Sum, Prod, Max or Min scan cut into ranges of rows, each computed
//! apart from the state of the rows before it, gives the single scan's
//! bits.
//!
//! The state of rows `s..e` of `n` ([`ScanState`]) holds, for every slice
//! (the other axes' elements), per chunk of 4096 rows it touches: the
//! chunk's total where it holds the whole chunk, else the reduction's
//! partial state ([`Partial`]) of its part; and, where `e` cuts a chunk,
//! its rows of that chunk as carrier values (at most 4095 per slice), from
//! which the next range's first results continue left to right. States of
//! adjacent ranges merge ([`ScanState::merge`]); [`scan_range`] computes a
//! range's results from the state of all rows before it: the carry into
//! its chunk (the totals folded left to right from the scan's carry), the
//! cut chunk's earlier rows run from it, then the library's scan.

use super::partial::{reduce_finish, reduce_partial, Partial, Reader, TermRange, PARTIAL_VERSION};
use super::scan::{scan, ScanOp, CHUNK};
use super::{carrier, ReduceOp, Terms};
use crate::array::{ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::DType;

const MAGIC: [u8; 4] = *b"TSSS";

fn bad(reason: impl Into<String>) -> Error {
    Error::Partial {
        reason: reason.into(),
    }
}

/// The reduction whose value is a chunk's total.
fn total_op(op: ScanOp) -> Result<ReduceOp> {
    Ok(match op {
        ScanOp::Sum => ReduceOp::Sum,
        ScanOp::Prod => ReduceOp::Prod,
        ScanOp::Max => ReduceOp::Max,
        ScanOp::Min => ReduceOp::Min,
        _ => {
            return Err(Error::Attribute {
                name: "op".into(),
                reason: format!(
                    "a {} scan is not kept in ranges: Sum, Prod, Max and Min scans are (their \
                     chunks continue a carry)",
                    op.name()
                ),
            })
        }
    })
}

/// Rows `a..b` of `x` along axis 0 (a view of the same bytes).
fn rows<'a>(x: &ArrayView<'a>, a: usize, b: usize) -> Result<ArrayView<'a>> {
    let mut shape = x.shape().to_vec();
    shape[0] = b - a;
    let off = x.layout().offset as isize + a as isize * x.strides()[0];
    let off = usize::try_from(off).map_err(|_| Error::Overflow {
        operand: "x".into(),
    })?;
    ArrayView::new(x.dtype(), &shape, x.strides(), off, x.data())
}

/// One chunk a range touches.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    /// The chunk's total per slice (carrier bytes).
    Total(Vec<u8>),
    /// The partial state of the range's rows of the chunk.
    Part(Partial),
}

/// The state of a scan's rows `start..end` of `total` along axis 0, every
/// slice at once: see the module documentation. Made by [`scan_state`],
/// joined by [`ScanState::merge`], taken by [`scan_range`], moved as
/// [`ScanState::to_bytes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanState {
    op: ScanOp,
    dtype: DType,
    rest: Vec<usize>,
    total: usize,
    start: usize,
    end: usize,
    /// The chunks touched, in order.
    pieces: Vec<(usize, Piece)>,
    /// The rows `tail_start..end` of the chunk `end` cuts, as carrier values
    /// in C order (empty where `end` is a chunk boundary or `total`).
    tail: Vec<u8>,
    tail_start: usize,
}

fn row_bytes(dtype: DType, rest: &[usize]) -> usize {
    rest.iter().product::<usize>() * carrier(dtype).info().item_bytes
}

/// The chunk holding row `t` and its bounds.
fn chunk_of(t: usize, total: usize) -> (usize, usize, usize) {
    let c = t / CHUNK;
    (c, c * CHUNK, ((c + 1) * CHUNK).min(total))
}

/// `x`'s rows as carrier values in C order (a cast, which rounds nothing:
/// the carrier holds every value of the dtype).
fn carrier_rows(x: &ArrayView<'_>, exec: &Exec) -> Result<Vec<u8>> {
    let c = carrier(x.dtype());
    let count: usize = x.shape().iter().product();
    let mut out = crate::alloc::try_zeroed::<u8>(count * c.info().item_bytes, "the rows")?;
    let mut d = ArrayViewMut::contiguous(c, x.shape(), &mut out)?;
    crate::cast::cast(crate::cast::CastMode::Default, x, &mut d, exec)?;
    Ok(out)
}

/// The state of a `op` scan's rows `range.start .. range.start + n` along
/// axis 0 of `range.total` rows, `x` holding those `n` rows (its other axes
/// are independent slices).
///
/// # Errors
/// An op other than Sum, Prod, Max, Min ([`Error::Attribute`]); what
/// [`scan`] refuses of `x` (rank 0, a dtype the op does not take);
/// [`Error::Partial`] for rows past the total; [`Error::Alloc`].
pub fn scan_state(
    op: ScanOp,
    x: &ArrayView<'_>,
    range: TermRange,
    exec: &Exec,
) -> Result<ScanState> {
    let rop = total_op(op)?;
    super::scan::scan_query(op, 0, x.shape(), x.dtype(), None, None)?;
    let n = x.shape()[0];
    let end = range.start.checked_add(n).filter(|&e| e <= range.total);
    let end = end.ok_or_else(|| bad(format!("rows {}.. ({n}) of {}", range.start, range.total)))?;
    let (s, total) = (range.start, range.total);
    let c = carrier(x.dtype());
    let rest = x.shape()[1..].to_vec();
    let mut pieces = Vec::new();
    let mut t = s;
    while t < end {
        let (k, c0, c1) = chunk_of(t, total);
        let b = end.min(c1);
        let part = rows(x, t - s, b - s)?;
        if (t, b) == (c0, c1) {
            let mut v =
                crate::alloc::try_zeroed::<u8>(row_bytes(x.dtype(), &rest), "a chunk total")?;
            let mut d = ArrayViewMut::contiguous(c, &rest, &mut v)?;
            super::reduce(rop, &[0], &part, &mut d, exec)?;
            pieces.push((k, Piece::Total(v)));
        } else {
            let r = TermRange {
                start: t - c0,
                total: c1 - c0,
            };
            pieces.push((
                k,
                Piece::Part(reduce_partial(rop, &[0], Terms::of(&part), r, None, exec)?),
            ));
        }
        t = b;
    }
    let (tail, tail_start) = if end < total && !end.is_multiple_of(CHUNK) && n > 0 {
        let from = (end / CHUNK * CHUNK).max(s);
        (carrier_rows(&rows(x, from - s, n)?, exec)?, from)
    } else {
        (Vec::new(), end)
    };
    Ok(ScanState {
        op,
        dtype: x.dtype(),
        rest,
        total,
        start: s,
        end,
        pieces,
        tail,
        tail_start,
    })
}

impl ScanState {
    /// The rows the state covers.
    pub fn range(&self) -> core::ops::Range<usize> {
        self.start..self.end
    }

    /// The state of `self.range()` followed by `next.range()`.
    ///
    /// # Errors
    /// [`Error::Partial`] where the two are not of one scan (op, dtype,
    /// slices, total) or `next` does not start where `self` ends.
    pub fn merge(&self, next: &ScanState, exec: &Exec) -> Result<ScanState> {
        if (self.op, self.dtype, &self.rest, self.total)
            != (next.op, next.dtype, &next.rest, next.total)
        {
            return Err(bad("states of different scans"));
        }
        if self.end != next.start {
            return Err(bad(format!(
                "rows {}..{} are not followed by {}..{}",
                self.start, self.end, next.start, next.end
            )));
        }
        if self.start == self.end {
            return Ok(next.clone());
        }
        if next.start == next.end {
            return Ok(self.clone());
        }
        let mut pieces = self.pieces.clone();
        for (k, p) in &next.pieces {
            match (pieces.last_mut(), p) {
                (Some((lk, Piece::Part(a))), Piece::Part(b)) if lk == k => {
                    let joined = a.merge(b)?;
                    *pieces
                        .last_mut()
                        .map(|(_, p)| p)
                        .ok_or_else(|| bad("no piece"))? = if joined.is_whole() {
                        let c = carrier(self.dtype);
                        let mut v = vec![0u8; row_bytes(self.dtype, &self.rest)];
                        let mut d = ArrayViewMut::contiguous(c, &self.rest, &mut v)?;
                        reduce_finish(&joined, None, &mut d, exec)?;
                        Piece::Total(v)
                    } else {
                        Piece::Part(joined)
                    };
                }
                _ => pieces.push((*k, p.clone())),
            }
        }
        // The tail: next's, continued from ours where next lies inside
        // the chunk ours began.
        let (tail, tail_start) = if next.tail.is_empty() {
            (Vec::new(), next.end)
        } else if next.tail_start == next.start && !self.tail.is_empty() {
            let mut t = self.tail.clone();
            t.extend_from_slice(&next.tail);
            (t, self.tail_start)
        } else {
            (next.tail.clone(), next.tail_start)
        };
        Ok(ScanState {
            start: self.start,
            end: next.end,
            pieces,
            tail,
            tail_start,
            ..self.clone()
        })
    }

    /// The state as bytes (a tag, [`PARTIAL_VERSION`], the scan, the range,
    /// each piece, the tail).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let u = |out: &mut Vec<u8>, v: usize| out.extend_from_slice(&(v as u64).to_le_bytes());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&PARTIAL_VERSION.to_le_bytes());
        out.push(ScanOp::ALL.iter().position(|&o| o == self.op).unwrap_or(0) as u8);
        out.push(self.dtype.name().len() as u8);
        out.extend_from_slice(self.dtype.name().as_bytes());
        u(&mut out, self.rest.len());
        for &r in &self.rest {
            u(&mut out, r);
        }
        for v in [
            self.total,
            self.start,
            self.end,
            self.tail_start,
            self.pieces.len(),
        ] {
            u(&mut out, v);
        }
        for (k, p) in &self.pieces {
            u(&mut out, *k);
            let (kind, b) = match p {
                Piece::Total(b) => (0u8, b.clone()),
                Piece::Part(p) => (1u8, p.to_bytes()),
            };
            out.push(kind);
            u(&mut out, b.len());
            out.extend_from_slice(&b);
        }
        u(&mut out, self.tail.len());
        out.extend_from_slice(&self.tail);
        out
    }

    /// A state from [`ScanState::to_bytes`]'s bytes, checked: the tag and
    /// version, a scan kept in ranges and a dtype it takes, the range, each
    /// piece's chunk and size, the tail's size. Allocates at most the
    /// bytes' length.
    ///
    /// # Errors
    /// [`Error::Partial`] for bytes that fail a check.
    pub fn from_bytes(bytes: &[u8]) -> Result<ScanState> {
        let mut r = Reader { b: bytes, at: 0 };
        r.header(MAGIC, "a scan state")?;
        let op = *ScanOp::ALL
            .get(r.u8()? as usize)
            .ok_or_else(|| bad("an unknown scan"))?;
        total_op(op).map_err(|_| bad("a scan not kept in ranges"))?;
        let dtype = r.dtype()?;
        if !op.accepts(dtype) {
            return Err(bad(format!("a {} scan of {dtype}", op.name())));
        }
        let ndim = r.count()?;
        if ndim > 64 {
            return Err(bad("more than 64 axes"));
        }
        let mut rest = Vec::with_capacity(ndim);
        for _ in 0..ndim {
            rest.push(r.count()?);
        }
        let (total, start, end) = (r.count()?, r.count()?, r.count()?);
        let (tail_start, npieces) = (r.count()?, r.count()?);
        if !(start <= tail_start && tail_start <= end && end <= total) {
            return Err(bad("a range that is not one"));
        }
        let rb = rest
            .iter()
            .try_fold(carrier(dtype).info().item_bytes, |a, &x| a.checked_mul(x))
            .ok_or_else(|| bad("slices beyond the address space"))?;
        let chunks = end.div_ceil(CHUNK) - start / CHUNK;
        if npieces > chunks {
            return Err(bad("more pieces than chunks"));
        }
        let mut pieces = Vec::with_capacity(npieces);
        for _ in 0..npieces {
            let k = r.count()?;
            let kind = r.u8()?;
            let len = r.count()?;
            let b = r.take(len)?;
            let p = match kind {
                0 if len == rb => Piece::Total(b.to_vec()),
                1 => Piece::Part(Partial::from_bytes(b)?),
                _ => return Err(bad("a piece of an unknown kind or size")),
            };
            pieces.push((k, p));
        }
        let tl = r.count()?;
        if Some(tl) != (end - tail_start).checked_mul(rb) {
            return Err(bad("a tail of the wrong size"));
        }
        let tail = r.take(tl)?.to_vec();
        if r.at != bytes.len() {
            return Err(bad("bytes after the state"));
        }
        Ok(ScanState {
            op,
            dtype,
            rest,
            total,
            start,
            end,
            pieces,
            tail,
            tail_start,
        })
    }
}

/// The `op` scan's results for rows `range.start ..` of `range.total`
/// along axis 0, `x` holding those rows, into `dst` (`x`'s shape, any
/// dtype the scan writes): the bits of [`scan`] over all the rows, given
/// `before`, the state of rows `0..range.start` (None where it is 0), and
/// the scan's `carry` (as [`scan`] takes it).
///
/// # Errors
/// What [`scan`] refuses of `x`, `carry` and `dst`; [`Error::Partial`]
/// for a `before` that is not the state of rows `0..range.start` of this
/// scan; [`Error::Alloc`].
pub fn scan_range(
    op: ScanOp,
    x: &ArrayView<'_>,
    range: TermRange,
    before: Option<&ScanState>,
    carry: Option<&ArrayView<'_>>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    total_op(op)?;
    super::scan::scan_query(
        op,
        0,
        x.shape(),
        x.dtype(),
        carry.map(|k| (k.shape(), k.dtype())),
        Some((dst.shape(), dst.dtype())),
    )?;
    crate::checks::check_destination(dst)?;
    let (s, n) = (range.start, x.shape()[0]);
    let e = s
        .checked_add(n)
        .filter(|&e| e <= range.total)
        .ok_or_else(|| bad("rows past the total"))?;
    if s == 0 {
        return scan(op, 0, x, carry, dst, exec);
    }
    if n == 0 {
        // No row: nothing to write.
        return Ok(());
    }
    let before =
        before.ok_or_else(|| bad("rows from a start past 0 need the state of the rows before"))?;
    let rest = x.shape()[1..].to_vec();
    if before.range() != (0..s)
        || before.op != op
        || before.dtype != x.dtype()
        || before.rest != rest
        || before.total != range.total
    {
        return Err(bad(format!(
            "the state of rows {:?} of a {} scan of {} {:?} (of {}), for rows 0..{s} of a {} scan of {} {:?} (of {})",
            before.range(),
            before.op.name(),
            before.dtype,
            before.rest,
            before.total,
            op.name(),
            x.dtype(),
            rest,
            range.total
        )));
    }
    let c = carrier(x.dtype());
    let rb = row_bytes(x.dtype(), &rest);
    // The carry into chunk cs (every chunk before it whole in `before`).
    let cs = s / CHUNK;
    let mut totals = Vec::with_capacity(cs * rb);
    for (k, p) in &before.pieces {
        if *k < cs {
            match p {
                Piece::Total(t) if *k == totals.len() / rb => totals.extend_from_slice(t),
                _ => return Err(bad("a chunk before the range is not whole in its state")),
            }
        }
    }
    if totals.len() != cs * rb {
        return Err(bad("chunks before the range are missing from its state"));
    }
    let mut cur = carry.map(|k| carrier_rows(k, exec)).transpose()?;
    let step = |rows_bytes: &[u8], cur: &Option<Vec<u8>>| -> Result<(Vec<u8>, Vec<u8>)> {
        // Left to right from `cur` over at most one chunk of rows.
        let m = rows_bytes.len() / rb.max(1);
        if m == 0 {
            return Ok((Vec::new(), cur.clone().unwrap_or_default()));
        }
        let mut shape = rest.clone();
        shape.insert(0, m);
        let tv = ArrayView::contiguous(c, &shape, rows_bytes)?;
        let mut out = vec![0u8; rows_bytes.len()];
        {
            let kv = match cur {
                Some(b) => Some(ArrayView::contiguous(c, &rest, b)?),
                None => None,
            };
            let mut ov = ArrayViewMut::contiguous(c, &shape, &mut out)?;
            scan(op, 0, &tv, kv.as_ref(), &mut ov, exec)?;
        }
        let last = out[(m - 1) * rb..].to_vec();
        Ok((out, last))
    };
    if rb > 0 {
        for run in totals.chunks(CHUNK * rb) {
            cur = Some(step(run, &cur)?.1);
        }
    }
    let mut res = crate::alloc::try_zeroed::<u8>(n * rb, "the scan's results")?;
    let a0 = s.div_ceil(CHUNK) * CHUNK;
    let head = a0.min(e) - s;
    let mut after_cut = cur.clone();
    if !s.is_multiple_of(CHUNK) && rb > 0 {
        // The cut chunk's earlier rows, then this range's rows of it.
        if before.tail_start != cs * CHUNK || before.tail.len() != (s - cs * CHUNK) * rb {
            return Err(bad(
                "the state of the rows before lacks the rows of the chunk this range continues",
            ));
        }
        let (_, v) = step(&before.tail, &cur)?;
        if head > 0 {
            let mine = carrier_rows(&rows(x, 0, head)?, exec)?;
            let (out, _) = step(&mine, &Some(v))?;
            res[..head * rb].copy_from_slice(&out);
        }
        if a0 < e {
            // The carry into the next chunk: the cut chunk's total joined
            // to the carry into it.
            let rop = total_op(op)?;
            let mine = rows(x, 0, head)?;
            let chunk = TermRange {
                start: s - cs * CHUNK,
                total: CHUNK.min(range.total - cs * CHUNK),
            };
            let part = reduce_partial(rop, &[0], Terms::of(&mine), chunk, None, exec)?;
            let earlier = before
                .pieces
                .iter()
                .find(|(k, _)| *k == cs)
                .and_then(|(_, p)| match p {
                    Piece::Part(p) => Some(p),
                    _ => None,
                })
                .ok_or_else(|| {
                    bad("the state of the rows before lacks the chunk this range continues")
                })?;
            let joined = earlier.merge(&part)?;
            let mut t = vec![0u8; rb];
            let mut d = ArrayViewMut::contiguous(c, &rest, &mut t)?;
            reduce_finish(&joined, None, &mut d, exec)?;
            after_cut = Some(step(&t, &cur)?.1);
        }
    }
    if a0 < e {
        let mine = rows(x, a0 - s, n)?;
        let mut shape = rest.clone();
        shape.insert(0, e - a0);
        let kv = match &after_cut {
            Some(b) => Some(ArrayView::contiguous(c, &rest, b)?),
            None => None,
        };
        let mut d = ArrayViewMut::contiguous(c, &shape, &mut res[(a0 - s) * rb..])?;
        scan(op, 0, &mine, kv.as_ref(), &mut d, exec)?;
    }
    // Each result rounds once from the carrier, as the single scan's (its
    // NaNs already the positive quiet NaN, as the scans above leave them).
    let v = ArrayView::contiguous(c, x.shape(), &res)?;
    crate::cast::cast(crate::cast::CastMode::Default, &v, dst, exec)
}
