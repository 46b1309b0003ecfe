//! The direct table of `unique`: keys of at most 4 words whose columns'
//! spans multiply to few values find their number at their place among
//! those values, without a hash.

use crate::error::Result;

/// The most values a direct table holds.
pub(crate) const DIRECT_MAX: u128 = 1 << 20;

/// Each column's least word and the step of its place.
#[derive(Clone, Debug)]
pub(crate) struct Spans {
    mins: [u64; 4],
    muls: [u64; 4],
    values: usize,
}

/// The spans of the columns of `keys` (`[n; w]`), or None where w is 0 or
/// above 4, or the spans multiply to more than [`DIRECT_MAX`] values or to
/// more than `limit`.
pub(crate) fn spans(keys: &[u64], w: usize, limit: u128) -> Option<Spans> {
    if w == 0 || w > 4 || keys.is_empty() {
        return None;
    }
    let mut lo = [u64::MAX; 4];
    let mut hi = [0u64; 4];
    let mut muls = [0u64; 4];
    let mut values: u128 = 1;
    // Spans only grow: a block of rows at a time, stopping as soon as they
    // exceed what a direct table holds (random keys: after the first block).
    for block in keys.chunks(w * 4096) {
        if w == 1 {
            for &x in block {
                lo[0] = lo[0].min(x);
                hi[0] = hi[0].max(x);
            }
        } else {
            for row in block.chunks_exact(w) {
                for c in 0..w {
                    lo[c] = lo[c].min(row[c]);
                    hi[c] = hi[c].max(row[c]);
                }
            }
        }
        values = 1;
        for c in (0..w).rev() {
            muls[c] = values as u64;
            values *= (hi[c] - lo[c]) as u128 + 1;
            if values > DIRECT_MAX || values > limit {
                return None;
            }
        }
    }
    Some(Spans {
        mins: lo,
        muls,
        values: values as usize,
    })
}

/// A direct table: the number + 1 of each value (0: not met yet).
pub(crate) struct Direct {
    spans: Spans,
    table: Vec<u32>,
}

impl Direct {
    pub(crate) fn new(spans: Spans) -> Result<Self> {
        let table = crate::alloc::try_filled(spans.values, 0, "unique direct table")?;
        Ok(Direct { spans, table })
    }

    /// The number of the key of `row` (`w` words), or `next` after
    /// recording it.
    #[inline(always)]
    pub(crate) fn find_or_insert(&mut self, row: &[u64], next: u64) -> (u64, bool) {
        let mut i = 0u64;
        for (c, &x) in row.iter().enumerate() {
            i += (x - self.spans.mins[c]) * self.spans.muls[c];
        }
        let slot = &mut self.table[i as usize];
        if *slot == 0 {
            *slot = next as u32 + 1;
            (next, true)
        } else {
            (*slot as u64 - 1, false)
        }
    }
}
