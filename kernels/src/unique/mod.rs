//! Numbering of keys by first appearance: [`unique()`].
//!
//! # Contract
//!
//! The rows of an `[n; w]` array of 64-bit words are keys: two rows are one
//! key iff their words are equal (a w of 0 makes every row one key). Keys
//! are numbered from 0 in order of their first rows. The results are a
//! function of the keys alone: not of the hash's secret, the threads, the
//! tier or the layouts.
//!
//! # How
//!
//! A row equal to the row before takes its number without a probe. Keys of
//! at most 4 words whose columns' spans (each column's greatest word less
//! its least, plus one) multiply to at most 2^20 values, and to at most
//! twice a block's rows and 1024 more, find their number at their place
//! among those values (a direct table of 4 bytes a value, after one more
//! read of the keys for the spans). Other keys go through a table of
//! linear probing, 1024 slots or 2 to 4 times its keys, hashed by
//! wyhash's multiply-fold (the high and low halves of a 128-bit product,
//! xored) keyed by secrets drawn once per process from the operating
//! system, so that colliding keys cannot be built in advance;
//! [`set_seed_for_tests`] fixes them. A one-thread table of one-word keys
//! starts sized for the keys a sample of the first rows predicts (rather
//! than growing to them), and once it is past the caches each search first
//! asks for the slot of a key some rows ahead. The table's size and the
//! prefetches change the speed only.
//!
//! On one thread the keys are numbered as their first rows are met. On
//! several (unless the first 16384 rows hold more than one key in 16: then
//! the merge below would cost what the threads save, and one thread runs),
//! each thread numbers a block of consecutive rows; the blocks'
//! keys then go, block after block and each block's in order, through one
//! table that numbers them by their first rows, and a last pass maps each
//! row's number in its block to its key's. Every table is reserved up
//! front for the most keys it can meet, so nothing is allocated once the
//! first result is written.

mod direct;
mod hash;

pub use hash::set_seed_for_tests;

use crate::array::{as_bytes, c_contiguous, count_of, ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::movement::{check_dst, direct_c, load_c, store_c};
use crate::tier::Exec;
use crate::DType;
use direct::{spans, Direct, Spans};
use hash::{reserve, secrets, Table1, TableW};
use std::borrow::Cow;

/// Rows from which a call numbers blocks on several threads.
const PARALLEL_ROWS: usize = 1 << 16;

/// The most rows a call takes: 2^40 − 2.
pub const MAX_ROWS: usize = (1 << 40) - 2;

/// Number the rows of `keys` by first appearance.
///
/// `keys` is `[n; w]` of u64 or i64, its elements read as unsigned 64-bit
/// words. Of k keys, numbered from 0 in order of their first rows: `ids`
/// (`[n]`, int64) gets each row's key's number; `first` and `counts`
/// (int64, `[m]` both) get at entry g below min(m, k) key g's first row
/// and its number of rows, and at entries from k on n and 0. Returns k,
/// as every call that counts what it wrote returns its count.
///
/// The results never depend on the hash's secret, the threads, the tier
/// or the layouts (the module documentation says how keys are found).
///
/// # Errors
/// Before any write: `keys` not of u64 or i64 ([`Error::DTypeUnsupported`]);
/// `keys` not of rank 2 ([`Error::Rank`]); n of 2^40 − 1
/// rows or more ([`Error::Length`]); a destination not int64
/// ([`Error::DTypeMismatch`]); `ids` not `[n]`, or `first` and `counts` not
/// of one rank-1 shape ([`Error::Shape`]); a destination that reaches an
/// element twice ([`Error::Layout`]); tables or scratch that cannot be
/// allocated ([`Error::Alloc`]); an unavailable tier.
pub fn unique(
    keys: &ArrayView<'_>,
    ids: &mut ArrayViewMut<'_>,
    first: &mut ArrayViewMut<'_>,
    counts: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<usize> {
    exec.resolve_tier()?;
    if !matches!(keys.dtype(), DType::U64 | DType::I64) {
        return Err(Error::DTypeUnsupported {
            operand: "keys".into(),
            dtype: keys.dtype(),
            reason: "keys are 64-bit words: u64 or i64".into(),
        });
    }
    if keys.shape().len() != 2 {
        return Err(Error::Rank {
            operand: "keys".into(),
            shape: keys.shape().to_vec(),
            expected: "keys are [n; w]".into(),
        });
    }
    let (n, w) = (keys.shape()[0], keys.shape()[1]);
    if n > MAX_ROWS {
        return Err(Error::Length {
            operand: "keys".into(),
            len: n,
            expected: MAX_ROWS,
            unit: "rows (at most)",
        });
    }
    count_of(keys.shape(), "keys")?;
    for (v, name) in [(&*ids, "ids"), (&*first, "first"), (&*counts, "counts")] {
        if v.dtype() != DType::I64 {
            return Err(Error::DTypeMismatch {
                operand: name.into(),
                expected: DType::I64,
                got: v.dtype(),
            });
        }
    }
    if ids.shape() != [n] {
        return Err(Error::Shape {
            operand: "ids".into(),
            shape: ids.shape().to_vec(),
            target: vec![n],
        });
    }
    if first.shape().len() != 1 {
        return Err(Error::Rank {
            operand: "first".into(),
            shape: first.shape().to_vec(),
            expected: "first is [m]".into(),
        });
    }
    if counts.shape() != first.shape() {
        return Err(Error::Shape {
            operand: "counts".into(),
            shape: counts.shape().to_vec(),
            target: first.shape().to_vec(),
        });
    }
    check_dst(ids, "ids")?;
    check_dst(first, "first")?;
    check_dst(counts, "counts")?;
    let m = first.shape()[0];

    // Everything the call needs, before any write.
    let words = load_words(keys)?;
    let threads = if n >= PARALLEL_ROWS && w > 0 {
        exec.thread_count().min(n / (PARALLEL_ROWS / 2)).max(1)
    } else {
        1
    };
    let mut id_tmp = if direct_ids(ids) {
        None
    } else {
        Some(vec_of(n, 0i64, "unique ids")?)
    };
    // first and counts: written in place where they are C-contiguous and
    // aligned, else through C-ordered buffers taken now.
    let mut first_tmp = if direct_ids(first) {
        None
    } else {
        Some(vec_of(m, 0i64, "unique first")?)
    };
    let mut counts_tmp = if direct_ids(counts) {
        None
    } else {
        Some(vec_of(m, 0i64, "unique counts")?)
    };
    let k = {
        let ids_out: &mut [i64] = match &mut id_tmp {
            Some(t) => t,
            None => i64s_mut(direct_c(ids).expect("checked")),
        };
        let (firsts, cnts) = number(&words, n, w, threads, ids_out)?;
        let first_out: &mut [i64] = match &mut first_tmp {
            Some(t) => t,
            None => i64s_mut(direct_c(first).expect("checked")),
        };
        fill_from(first_out, &firsts, n as i64, threads);
        let counts_out: &mut [i64] = match &mut counts_tmp {
            Some(t) => t,
            None => i64s_mut(direct_c(counts).expect("checked")),
        };
        fill_from(counts_out, &cnts, 0, threads);
        firsts.len()
    };
    if let Some(t) = &id_tmp {
        store_c(as_bytes(t), ids);
    }
    if let Some(t) = &first_tmp {
        store_c(as_bytes(t), first);
    }
    if let Some(t) = &counts_tmp {
        store_c(as_bytes(t), counts);
    }
    Ok(k)
}

/// `out[g] = src[g]` below `src.len()`, `rest` after it (a plain copy and
/// a plain fill, on `threads` tasks where there are several).
fn fill_from(out: &mut [i64], src: &[u64], rest: i64, threads: usize) {
    let k = src.len().min(out.len());
    let (head, tail) = out.split_at_mut(k);
    let copy = |(o, s): (&mut [i64], &[u64])| {
        for (o, &v) in o.iter_mut().zip(s) {
            *o = v as i64;
        }
    };
    if threads > 1 {
        use rayon::prelude::*;
        let chunk = head.len().max(tail.len()).div_ceil(threads).max(1 << 16);
        head.par_chunks_mut(chunk)
            .zip(src[..k].par_chunks(chunk))
            .for_each(copy);
        tail.par_chunks_mut(chunk).for_each(|t| t.fill(rest));
    } else {
        copy((head, &src[..k]));
        tail.fill(rest);
    }
}

fn vec_of<T: Clone>(n: usize, x: T, what: &str) -> Result<Vec<T>> {
    crate::movement::filled(n, x, what)
}

/// Whether the ids can be written in place as aligned int64s.
fn direct_ids(ids: &mut ArrayViewMut<'_>) -> bool {
    match direct_c(ids) {
        Some(b) => b.as_ptr().align_offset(8) == 0,
        None => false,
    }
}

/// A byte run of aligned int64s as a slice.
fn i64s_mut(b: &mut [u8]) -> &mut [i64] {
    assert!(b.as_ptr().align_offset(8) == 0 && b.len().is_multiple_of(8));
    // SAFETY: the bytes are 8-aligned (checked) and a whole number of
    // int64s; every bit pattern is a valid i64, and the borrow is carried
    // over.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut i64, b.len() / 8) }
}

/// The keys' words in C order, borrowed where they lie aligned in place.
fn load_words<'a>(keys: &ArrayView<'a>) -> Result<Cow<'a, [u64]>> {
    let bytes = load_c(keys, "keys")?;
    let aligned = bytes.as_ptr().align_offset(8) == 0;
    match bytes {
        Cow::Borrowed(b) if aligned && c_contiguous(keys.shape(), keys.strides()) => {
            // SAFETY: the bytes are 8-aligned (checked) and a whole number
            // of words (n·w elements of 8 bytes); every bit pattern is a
            // valid u64, and the lifetime is the view's.
            Ok(Cow::Borrowed(unsafe {
                std::slice::from_raw_parts(b.as_ptr() as *const u64, b.len() / 8)
            }))
        }
        b => {
            let mut v = vec_of(b.len() / 8, 0u64, "unique keys")?;
            for (x, c) in v.iter_mut().zip(b.chunks_exact(8)) {
                *x = u64::from_ne_bytes(c.try_into().expect("8 bytes"));
            }
            Ok(Cow::Owned(v))
        }
    }
}

/// How one table finds a key's number.
enum Finder {
    /// w = 0: every row is key 0.
    Zero,
    Direct(Direct),
    One(Table1),
    Many(TableW),
}

/// A table with the first rows and counts of its keys, reserved for
/// `max_keys` keys.
struct Numberer {
    finder: Finder,
    firsts: Vec<u64>,
    counts: Vec<u64>,
}

impl Numberer {
    fn new(w: usize, spans: Option<&Spans>, max_keys: usize, s: [u64; 4]) -> Result<Self> {
        let finder = match (w, spans) {
            (0, _) => Finder::Zero,
            (_, Some(sp)) => Finder::Direct(Direct::new(sp.clone())?),
            (1, None) => Finder::One(Table1::new(max_keys, s)?),
            _ => Finder::Many(TableW::new(max_keys, s)?),
        };
        let cap = if w == 0 { max_keys.min(1) } else { max_keys };
        let firsts = crate::alloc::try_vec(cap, "unique keys")?;
        let counts = crate::alloc::try_vec(cap, "unique keys")?;
        Ok(Numberer {
            finder,
            firsts,
            counts,
        })
    }

    /// The number of the key of `row`, recording it (first row `row`) if
    /// new; the count is the caller's.
    #[inline(always)]
    fn find(&mut self, keys: &[u64], w: usize, row: usize) -> u64 {
        let next = self.firsts.len() as u64;
        let (id, new) = match &mut self.finder {
            Finder::Zero => (0, next == 0),
            Finder::Direct(d) => d.find_or_insert(&keys[row * w..row * w + w], next),
            Finder::One(t) => t.find_or_insert(keys[row], next),
            Finder::Many(t) => t.find_or_insert(keys, w, row, &self.firsts, next),
        };
        if new {
            // Within the reserved capacity: no allocation.
            self.firsts.push(row as u64);
            self.counts.push(0);
        }
        id
    }

    /// Number rows `[lo, hi)` into `ids` (local numbers).
    fn rows(&mut self, keys: &[u64], w: usize, lo: usize, ids: &mut [i64]) {
        let hi = lo + ids.len();
        if let Finder::One(t) = &mut self.finder {
            // One word: the hot loop, without the row slices.
            let mut prev_key = 0u64;
            let mut prev_id = u64::MAX;
            for (r, out) in (lo..hi).zip(ids.iter_mut()) {
                let key = keys[r];
                if t.large() {
                    if let Some(&ahead) = keys.get(r + PREFETCH_ROWS) {
                        t.prefetch(ahead);
                    }
                }
                let id = if key == prev_key && prev_id != u64::MAX {
                    prev_id
                } else {
                    let next = self.firsts.len() as u64;
                    let (id, new) = t.find_or_insert(key, next);
                    if new {
                        self.firsts.push(r as u64);
                        self.counts.push(0);
                    }
                    id
                };
                // SAFETY: every number found is below the keys recorded.
                unsafe { *self.counts.get_unchecked_mut(id as usize) += 1 };
                *out = id as i64;
                prev_key = key;
                prev_id = id;
            }
            return;
        }
        let mut prev_id = u64::MAX;
        for (r, out) in (lo..hi).zip(ids.iter_mut()) {
            let same = prev_id != u64::MAX && keys[r * w..r * w + w] == keys[(r - 1) * w..r * w];
            let id = if same { prev_id } else { self.find(keys, w, r) };
            self.counts[id as usize] += 1;
            *out = id as i64;
            prev_id = id;
        }
    }
}

/// How many rows ahead the one-word loop asks for a key's slot.
const PREFETCH_ROWS: usize = 16;

/// Rows of the prefix [`sample_keys`] numbers.
const SAMPLE_ROWS: usize = 1 << 14;

/// The keys among the first [`SAMPLE_ROWS`] rows. Where they are more than
/// one in 16 rows, the blocks' keys are most of the rows, the merge (one
/// table, on one thread, of every block's keys) costs what the blocks
/// saved, and a call runs on one thread. Only the speed depends on it:
/// every way numbers keys by their first rows.
fn sample_keys(keys: &[u64], w: usize, n: usize, s: [u64; 4]) -> Result<usize> {
    let rows = n.min(SAMPLE_ROWS);
    let mut num = Numberer::new(w, None, rows, s)?;
    let mut ids = vec_of(rows, 0i64, "unique sample")?;
    num.rows(keys, w, 0, &mut ids);
    Ok(num.firsts.len())
}

/// The keys a one-thread table of one-word keys starts sized for (a table
/// that would otherwise double its way there, rehashing every key it holds
/// each time). Where the sample's m rows hold d keys, more than one in 16
/// rows, the estimate of keys drawn evenly from k: m − d repeats make
/// k ≈ m²/(2(m − d)) (all n rows where none repeats), kept between d and the
/// d/m rate over all `n` rows; else none (it grows from its least size).
/// Only the speed depends on it.
/// `sampled`: the sample's key count where the caller took it already.
fn start_keys(keys: &[u64], n: usize, s: [u64; 4], sampled: Option<usize>) -> Result<usize> {
    if n < 4 * SAMPLE_ROWS {
        return Ok(0);
    }
    let m = SAMPLE_ROWS as u128;
    let d = match sampled {
        Some(d) => d,
        None => sample_keys(keys, 1, n, s)?,
    } as u128;
    if d * 16 <= m {
        return Ok(0);
    }
    let most = d * n as u128 / m;
    let k = match m - d {
        0 => n as u128,
        r => m * m / (2 * r),
    };
    Ok(k.clamp(d, most) as usize)
}

/// Number all rows into `ids`; the keys' first rows and counts.
fn number(
    keys: &[u64],
    n: usize,
    w: usize,
    threads: usize,
    ids: &mut [i64],
) -> Result<(Vec<u64>, Vec<u64>)> {
    let s = secrets();
    // The first rows' keys, where several threads are asked for: more
    // than one key in 16 rows sends the call to one thread (whose table
    // then starts sized from the same count).
    let sampled = if threads > 1 {
        Some(sample_keys(keys, w, n, s)?)
    } else {
        None
    };
    let threads = match sampled {
        Some(d) if d * 16 > n.min(SAMPLE_ROWS) => 1,
        _ => threads,
    };
    let block = n.div_ceil(threads.max(1)).max(1);
    let sp = spans(keys, w, 2 * block as u128 + 1024);
    if threads <= 1 {
        let mut num = Numberer::new(w, sp.as_ref(), n, s)?;
        if let Finder::One(t) = &mut num.finder {
            t.start_for(start_keys(keys, n, s, sampled)?);
        }
        num.rows(keys, w, 0, ids);
        return Ok((num.firsts, num.counts));
    }
    // Blocks, then a merge in block order.
    let nb = n.div_ceil(block);
    let mut blocks = Vec::with_capacity(nb);
    for b in 0..nb {
        let rows = block.min(n - b * block);
        blocks.push(Numberer::new(w, sp.as_ref(), rows, s)?);
    }
    let mut global = Numberer::new(w, sp.as_ref(), n, s)?;
    // Each block's map from its numbers to the global ones: room for one
    // entry a row taken now (reserved, not touched), filled to the block's
    // key count later within that room.
    let mut maps: Vec<Vec<u64>> = Vec::with_capacity(nb);
    for b in 0..nb {
        let mut m = Vec::new();
        reserve(&mut m, block.min(n - b * block), "unique merge")?;
        maps.push(m);
    }
    {
        use rayon::prelude::*;
        blocks
            .par_iter_mut()
            .zip(ids.par_chunks_mut(block))
            .enumerate()
            .for_each(|(b, (num, chunk))| num.rows(keys, w, b * block, chunk));
    }
    for (num, map) in blocks.iter().zip(maps.iter_mut()) {
        for (&f, &c) in num.firsts.iter().zip(&num.counts) {
            let id = global.find(keys, w, f as usize);
            global.counts[id as usize] += c;
            // Within the reserved room (a block has at most a key a row).
            map.push(id);
        }
    }
    {
        use rayon::prelude::*;
        ids.par_chunks_mut(block)
            .zip(maps.par_iter())
            .for_each(|(chunk, map)| {
                for x in chunk {
                    *x = map[*x as usize] as i64;
                }
            });
    }
    Ok((global.firsts, global.counts))
}
