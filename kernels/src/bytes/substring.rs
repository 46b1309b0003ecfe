//! Substring search: the first and last occurrence of a needle and the
//! count of non-overlapping occurrences.
//!
//! Candidates are the positions where the needle's first and last bytes
//! both match (one compare of each against a register of the haystack);
//! each is verified by comparing the rest. Where verification has cost
//! more than a fixed multiple of the haystack scanned (a needle of
//! repeated bytes over a haystack of them), the search finishes with
//! Knuth–Morris–Pratt from where it stands, so no input costs more than
//! linear time. The position found is the same on every path.

use super::{path, tiered};
use crate::simd::ByteReg;
use crate::{Exec, Result};

/// The first position where `needle` occurs in `hay`, or `None`; an empty
/// needle occurs at 0.
///
/// # Errors
/// Only the `Exec`'s: a tier this CPU does not run.
pub fn index(hay: &[u8], needle: &[u8], exec: &Exec) -> Result<Option<usize>> {
    Ok(find_from(path(exec)?, hay, needle, 0))
}

/// The last position where `needle` occurs in `hay`, or `None`; an empty
/// needle occurs at `hay.len()`.
///
/// # Errors
/// As [`index`].
pub fn last_index(hay: &[u8], needle: &[u8], exec: &Exec) -> Result<Option<usize>> {
    let p = path(exec)?;
    if needle.len() > hay.len() {
        return Ok(None);
    }
    if needle.is_empty() {
        return Ok(Some(hay.len()));
    }
    Ok(match rcandidates(p, hay, needle) {
        Scan::Found(k) => Some(k),
        Scan::Absent => None,
        Scan::Costly(k) => kmp_last(&hay[..k + needle.len() - 1], needle),
    })
}

/// How many non-overlapping occurrences of `needle` `hay` holds, found
/// from the front (each search resumes after the last match); an empty
/// needle counts `hay.len() + 1` (one at every position).
///
/// # Errors
/// As [`index`].
pub fn count_seq(hay: &[u8], needle: &[u8], exec: &Exec) -> Result<usize> {
    let p = path(exec)?;
    if needle.is_empty() {
        return Ok(hay.len() + 1);
    }
    let mut k = 0;
    let mut at = 0;
    while let Some(i) = find_from(p, hay, needle, at) {
        k += 1;
        at = i + needle.len();
    }
    Ok(k)
}

/// The first occurrence at or after `from`.
fn find_from(p: super::Path, hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let m = needle.len();
    if m == 0 {
        return Some(from.min(hay.len()));
    }
    if from > hay.len() || hay.len() - from < m {
        return None;
    }
    match candidates(p, &hay[from..], needle) {
        Scan::Found(k) => Some(from + k),
        Scan::Absent => None,
        Scan::Costly(k) => kmp(&hay[from + k..], needle).map(|j| from + k + j),
    }
}

/// What a candidate scan ended with.
#[derive(Clone, Copy)]
enum Scan {
    Found(usize),
    Absent,
    /// Verification cost too much: no occurrence starts before this
    /// position; finish from it in linear time.
    Costly(usize),
}

/// The verification budget: bytes compared may reach this many per
/// haystack byte scanned, plus a constant, before the scan hands over.
const BUDGET_PER_BYTE: usize = 8;
const BUDGET_BASE: usize = 4096;

/// Whether `needle[1..m-1]` lies at `hay[i + 1..]` (the ends already match).
#[inline(always)]
fn verify(hay: &[u8], needle: &[u8], i: usize) -> bool {
    let m = needle.len();
    m <= 2 || hay[i + 1..i + m - 1] == needle[1..m - 1]
}

/// # Safety
/// The CPU runs `R`'s instructions; `hay.len() ≥ needle.len() ≥ 1`.
#[inline(always)]
unsafe fn candidates_vec<R: ByteReg>(hay: &[u8], needle: &[u8]) -> Scan {
    let l = R::LANES;
    let m = needle.len();
    let last = hay.len() - m; // the last start
    let p = hay.as_ptr();
    let mut spent = 0usize;
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; the loads read l bytes from
    // i and from i + m − 1, and i + l − 1 ≤ last, so both end at most at
    // hay.len().
    unsafe {
        let (f, e) = (R::set1(needle[0]), R::set1(needle[m - 1]));
        while i + l <= last + 1 {
            let mut hits =
                R::eq_bits(R::load(p.add(i)), f) & R::eq_bits(R::load(p.add(i + m - 1)), e);
            while hits != 0 {
                let k = i + hits.trailing_zeros() as usize;
                if verify(hay, needle, k) {
                    return Scan::Found(k);
                }
                spent += m;
                if spent > BUDGET_BASE + BUDGET_PER_BYTE * k {
                    return Scan::Costly(k + 1);
                }
                hits &= hits - 1;
            }
            i += l;
        }
    }
    tail(hay, needle, i, spent)
}

/// The plain scan from `i` with `spent` of the budget used.
fn tail(hay: &[u8], needle: &[u8], mut i: usize, mut spent: usize) -> Scan {
    let m = needle.len();
    let last = hay.len() - m;
    while i <= last {
        if hay[i] == needle[0] && hay[i + m - 1] == needle[m - 1] {
            if verify(hay, needle, i) {
                return Scan::Found(i);
            }
            spent += m;
            if spent > BUDGET_BASE + BUDGET_PER_BYTE * i {
                return Scan::Costly(i + 1);
            }
        }
        i += 1;
    }
    Scan::Absent
}

fn candidates_scalar(hay: &[u8], needle: &[u8]) -> Scan {
    tail(hay, needle, 0, 0)
}

tiered! {
    fn candidates(hay: &[u8], needle: &[u8]) -> Scan {
        vector: candidates_vec, scalar: candidates_scalar
    }
}

/// The last occurrence, scanning starts from the end. [`Scan::Costly`]`(k)`
/// here means that no occurrence starts at `k` or after.
///
/// # Safety
/// The CPU runs `R`'s instructions; `hay.len() ≥ needle.len() ≥ 1`.
#[inline(always)]
unsafe fn rcandidates_vec<R: ByteReg>(hay: &[u8], needle: &[u8]) -> Scan {
    let l = R::LANES;
    let m = needle.len();
    let end = hay.len() - m + 1; // starts below `end` are left to scan
    let p = hay.as_ptr();
    let mut spent = 0usize;
    let mut j = end;
    // SAFETY: the caller runs R's instructions; a block of starts
    // j − l … j − 1 loads l bytes from j − l and from j − l + m − 1, which
    // end at most at end − 1 + m − 1 < hay.len().
    unsafe {
        let (f, e) = (R::set1(needle[0]), R::set1(needle[m - 1]));
        while j >= l {
            let b = j - l;
            let mut hits =
                R::eq_bits(R::load(p.add(b)), f) & R::eq_bits(R::load(p.add(b + m - 1)), e);
            while hits != 0 {
                let top = 63 - hits.leading_zeros() as usize;
                let k = b + top;
                if verify(hay, needle, k) {
                    return Scan::Found(k);
                }
                spent += m;
                if spent > BUDGET_BASE + BUDGET_PER_BYTE * (end - k) {
                    return Scan::Costly(k);
                }
                hits &= !(1u64 << top);
            }
            j = b;
        }
    }
    rtail(hay, needle, j, spent)
}

/// The plain backward scan of the starts below `j`.
fn rtail(hay: &[u8], needle: &[u8], mut j: usize, mut spent: usize) -> Scan {
    let m = needle.len();
    let end = hay.len() - m + 1;
    while j > 0 {
        let i = j - 1;
        if hay[i] == needle[0] && hay[i + m - 1] == needle[m - 1] {
            if verify(hay, needle, i) {
                return Scan::Found(i);
            }
            spent += m;
            if spent > BUDGET_BASE + BUDGET_PER_BYTE * (end - i) {
                return Scan::Costly(i);
            }
        }
        j = i;
    }
    Scan::Absent
}

fn rcandidates_scalar(hay: &[u8], needle: &[u8]) -> Scan {
    rtail(hay, needle, hay.len() - needle.len() + 1, 0)
}

tiered! {
    fn rcandidates(hay: &[u8], needle: &[u8]) -> Scan {
        vector: rcandidates_vec, scalar: rcandidates_scalar
    }
}

/// Knuth–Morris–Pratt: the first occurrence, in O(hay + needle) steps and
/// a needle's worth of memory.
fn kmp(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let m = needle.len();
    // fail[j]: the longest proper border of needle[..=j].
    let mut fail = vec![0usize; m];
    let mut k = 0;
    for j in 1..m {
        while k > 0 && needle[j] != needle[k] {
            k = fail[k - 1];
        }
        if needle[j] == needle[k] {
            k += 1;
        }
        fail[j] = k;
    }
    let mut q = 0;
    for (i, &c) in hay.iter().enumerate() {
        while q > 0 && c != needle[q] {
            q = fail[q - 1];
        }
        if c == needle[q] {
            q += 1;
        }
        if q == m {
            return Some(i + 1 - m);
        }
    }
    None
}

/// Knuth–Morris–Pratt run from the back: the last occurrence, in
/// O(hay + needle) steps and a needle's worth of memory.
fn kmp_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let m = needle.len();
    let r = |j: usize| needle[m - 1 - j]; // the reversed needle
    let mut fail = vec![0usize; m];
    let mut k = 0;
    for j in 1..m {
        while k > 0 && r(j) != r(k) {
            k = fail[k - 1];
        }
        if r(j) == r(k) {
            k += 1;
        }
        fail[j] = k;
    }
    let mut q = 0;
    for (i, &c) in hay.iter().enumerate().rev() {
        while q > 0 && c != r(q) {
            q = fail[q - 1];
        }
        if c == r(q) {
            q += 1;
        }
        if q == m {
            return Some(i);
        }
    }
    None
}
