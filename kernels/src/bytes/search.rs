//! Single-byte and byte-set search and counting.

use super::{path, tiered};
use crate::simd::ByteReg;
use crate::{Exec, Result};

/// The first position of `c` in `b`, or `None` where it is absent.
///
/// # Errors
/// Only the `Exec`'s: a tier this CPU does not run.
pub fn index_byte(b: &[u8], c: u8, exec: &Exec) -> Result<Option<usize>> {
    Ok(find(path(exec)?, b, &Set::one(c), false, false))
}

/// The last position of `c` in `b`, or `None`.
///
/// # Errors
/// As [`index_byte`].
pub fn last_index_byte(b: &[u8], c: u8, exec: &Exec) -> Result<Option<usize>> {
    Ok(find(path(exec)?, b, &Set::one(c), false, true))
}

/// How many bytes of `b` are `c`.
///
/// # Errors
/// As [`index_byte`].
pub fn count_byte(b: &[u8], c: u8, exec: &Exec) -> Result<usize> {
    Ok(count(path(exec)?, b, &Set::one(c)))
}

/// The first position in `b` of any byte of `set`, or `None` (always for an
/// empty set). `set` may hold any bytes, repeated or not.
///
/// # Errors
/// As [`index_byte`].
pub fn index_any(b: &[u8], set: &[u8], exec: &Exec) -> Result<Option<usize>> {
    Ok(find(path(exec)?, b, &Set::of(set), false, false))
}

/// The last position in `b` of any byte of `set`, or `None`.
///
/// # Errors
/// As [`index_byte`].
pub fn last_index_any(b: &[u8], set: &[u8], exec: &Exec) -> Result<Option<usize>> {
    Ok(find(path(exec)?, b, &Set::of(set), false, true))
}

/// How many bytes of `b` are in `set`.
///
/// # Errors
/// As [`index_byte`].
pub fn count_any(b: &[u8], set: &[u8], exec: &Exec) -> Result<usize> {
    Ok(count(path(exec)?, b, &Set::of(set)))
}

/// The first position in `b` of a byte that is not in `set` (the length
/// of the leading run of `set`'s bytes, as a trim wants it), or `None`
/// where every byte is in `set` (always for an empty `b`).
///
/// # Errors
/// As [`index_byte`].
pub fn index_not_any(b: &[u8], set: &[u8], exec: &Exec) -> Result<Option<usize>> {
    Ok(find(path(exec)?, b, &Set::of(set), true, false))
}

/// The last position in `b` of a byte that is not in `set`, or `None`.
///
/// # Errors
/// As [`index_byte`].
pub fn last_index_not_any(b: &[u8], set: &[u8], exec: &Exec) -> Result<Option<usize>> {
    Ok(find(path(exec)?, b, &Set::of(set), true, true))
}

/// Every position of `c` in `b`, ascending, into the front of `dst`;
/// returns how many (the value of [`count_byte`], the query that sizes
/// `dst`).
///
/// # Errors
/// [`Error::Length`](crate::Error::Length) where `dst` is shorter than the
/// count (nothing is written); the `Exec`'s.
pub fn index_all(b: &[u8], c: u8, dst: &mut [usize], exec: &Exec) -> Result<usize> {
    let p = path(exec)?;
    let set = Set::one(c);
    if dst.len() < b.len() {
        let k = count(p, b, &set);
        if dst.len() < k {
            return Err(crate::Error::Length {
                operand: "dst (positions)".into(),
                len: dst.len(),
                expected: k,
                unit: "values",
            });
        }
    }
    Ok(positions(p, b, &set, dst))
}

/// A set of bytes: a bitmap, and its members where there are at most
/// three (compared one by one; the larger sets by nibble tables).
pub(super) struct Set {
    bitmap: [u64; 4],
    /// Up to three members: how many, then each (the first repeated).
    few: Option<(usize, [u8; 3])>,
    /// Bit `h` (`h < 8`) of `lo_a[l]`: byte `h·16 + l` is a member;
    /// bit `h − 8` of `lo_b[l]` for `h ≥ 8`.
    lo_a: [u8; 16],
    lo_b: [u8; 16],
}

impl Set {
    /// The set of `c` alone, built directly (no pass over the 256 bytes).
    fn one(c: u8) -> Set {
        let mut bitmap = [0u64; 4];
        bitmap[c as usize / 64] = 1 << (c % 64);
        let (mut lo_a, mut lo_b) = ([0u8; 16], [0u8; 16]);
        let (h, l) = ((c >> 4) as usize, (c & 15) as usize);
        if h < 8 {
            lo_a[l] = 1 << h;
        } else {
            lo_b[l] = 1 << (h - 8);
        }
        Set {
            bitmap,
            few: Some((1, [c; 3])),
            lo_a,
            lo_b,
        }
    }

    pub(super) fn of(bytes: &[u8]) -> Set {
        let mut bitmap = [0u64; 4];
        for &c in bytes {
            bitmap[c as usize / 64] |= 1 << (c % 64);
        }
        let members: Vec<u8> = (0..=255u8)
            .filter(|&c| bitmap[c as usize / 64] >> (c % 64) & 1 == 1)
            .collect();
        let (mut lo_a, mut lo_b) = ([0u8; 16], [0u8; 16]);
        for &c in &members {
            let (h, l) = ((c >> 4) as usize, (c & 15) as usize);
            if h < 8 {
                lo_a[l] |= 1 << h;
            } else {
                lo_b[l] |= 1 << (h - 8);
            }
        }
        Set {
            bitmap,
            few: (members.len() <= 3).then(|| {
                let at = |k: usize| *members.get(k).or(members.first()).unwrap_or(&0);
                (members.len(), [at(0), at(1), at(2)])
            }),
            lo_a,
            lo_b,
        }
    }

    #[inline(always)]
    pub(super) fn has(&self, c: u8) -> bool {
        self.bitmap[c as usize / 64] >> (c % 64) & 1 == 1
    }
}

/// [`Set`] in registers.
#[derive(Clone, Copy)]
struct RegSet<R: ByteReg> {
    /// Up to three members (how many, then each; the first repeated), or
    /// nibble tables.
    few: Option<(usize, [R; 3])>,
    lo_a: R,
    lo_b: R,
    hi_a: R,
    hi_b: R,
}

impl<R: ByteReg> RegSet<R> {
    /// # Safety
    /// The CPU runs `R`'s instructions.
    #[inline(always)]
    unsafe fn new(s: &Set) -> Self {
        let hi_a: [u8; 16] = core::array::from_fn(|h| if h < 8 { 1 << h } else { 0 });
        let hi_b: [u8; 16] = core::array::from_fn(|h| if h >= 8 { 1 << (h - 8) } else { 0 });
        // SAFETY: the caller runs R's instructions.
        unsafe {
            RegSet {
                // A match, not a closure: a closure would not inherit the
                // caller's target features.
                #[allow(clippy::manual_map)]
                few: match s.few {
                    Some((n, m)) => Some((n, [R::set1(m[0]), R::set1(m[1]), R::set1(m[2])])),
                    None => None,
                },
                lo_a: R::table16(&s.lo_a),
                lo_b: R::table16(&s.lo_b),
                hi_a: R::table16(&hi_a),
                hi_b: R::table16(&hi_b),
            }
        }
    }

    /// The lanes of `x` that are members.
    ///
    /// # Safety
    /// The CPU runs `R`'s instructions.
    #[inline(always)]
    unsafe fn members(&self, x: R) -> u64 {
        // SAFETY: the caller runs R's instructions.
        unsafe {
            match self.few {
                Some((0, _)) => return 0,
                Some((1, [a, _, _])) => return R::eq_bits(x, a),
                Some((2, [a, b, _])) => return R::eq_bits(x, a) | R::eq_bits(x, b),
                Some((_, [a, b, c])) => {
                    return R::eq_bits(x, a) | R::eq_bits(x, b) | R::eq_bits(x, c)
                }
                None => {}
            }
            let (lo, hi) = (R::low_nibbles(x), R::high_nibbles(x));
            let a = R::and(R::lookup16(self.lo_a, lo), R::lookup16(self.hi_a, hi));
            let b = R::and(R::lookup16(self.lo_b, lo), R::lookup16(self.hi_b, hi));
            R::nonzero_bits(R::or(a, b))
        }
    }
}

/// A set's test in registers, one type per form of set, so that a search
/// loop is compiled for its form (no per-register choice of form).
trait MemberLanes<R: ByteReg>: Copy {
    /// A register whose lanes are nonzero exactly where `x`'s lanes are
    /// members.
    ///
    /// # Safety
    /// The CPU runs `R`'s instructions.
    unsafe fn lanes(&self, x: R) -> R;

    /// The lanes of `x` that are members, as bits.
    ///
    /// # Safety
    /// The CPU runs `R`'s instructions.
    #[inline(always)]
    unsafe fn bits(&self, x: R) -> u64 {
        // SAFETY: the caller runs R's instructions.
        unsafe { R::nonzero_bits(self.lanes(x)) }
    }
}

/// A set of one byte.
#[derive(Clone, Copy)]
struct Eq1<R>(R);
/// A set of two bytes.
#[derive(Clone, Copy)]
struct Eq2<R>(R, R);
/// A set of three bytes.
#[derive(Clone, Copy)]
struct Eq3<R>(R, R, R);
/// Any set, by its nibble tables (see [`Set`]).
#[derive(Clone, Copy)]
struct Nibbles<R> {
    lo_a: R,
    lo_b: R,
    hi_a: R,
    hi_b: R,
}

impl<R: ByteReg> MemberLanes<R> for Eq1<R> {
    #[inline(always)]
    unsafe fn lanes(&self, x: R) -> R {
        // SAFETY: the caller runs R's instructions.
        unsafe { R::eq(x, self.0) }
    }
    #[inline(always)]
    unsafe fn bits(&self, x: R) -> u64 {
        // SAFETY: the caller runs R's instructions.
        unsafe { R::eq_bits(x, self.0) }
    }
}

impl<R: ByteReg> MemberLanes<R> for Eq2<R> {
    #[inline(always)]
    unsafe fn lanes(&self, x: R) -> R {
        // SAFETY: the caller runs R's instructions.
        unsafe { R::or(R::eq(x, self.0), R::eq(x, self.1)) }
    }
    #[inline(always)]
    unsafe fn bits(&self, x: R) -> u64 {
        // SAFETY: the caller runs R's instructions.
        unsafe { R::eq_bits(x, self.0) | R::eq_bits(x, self.1) }
    }
}

impl<R: ByteReg> MemberLanes<R> for Eq3<R> {
    #[inline(always)]
    unsafe fn lanes(&self, x: R) -> R {
        // SAFETY: the caller runs R's instructions.
        unsafe { R::or(R::or(R::eq(x, self.0), R::eq(x, self.1)), R::eq(x, self.2)) }
    }
    #[inline(always)]
    unsafe fn bits(&self, x: R) -> u64 {
        // SAFETY: the caller runs R's instructions.
        unsafe { R::eq_bits(x, self.0) | R::eq_bits(x, self.1) | R::eq_bits(x, self.2) }
    }
}

impl<R: ByteReg> MemberLanes<R> for Nibbles<R> {
    #[inline(always)]
    unsafe fn lanes(&self, x: R) -> R {
        // SAFETY: the caller runs R's instructions.
        unsafe {
            let (lo, hi) = (R::low_nibbles(x), R::high_nibbles(x));
            let a = R::and(R::lookup16(self.lo_a, lo), R::lookup16(self.hi_a, hi));
            let b = R::and(R::lookup16(self.lo_b, lo), R::lookup16(self.hi_b, hi));
            R::or(a, b)
        }
    }
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn find_vec<R: ByteReg>(b: &[u8], set: &Set, not: bool, last: bool) -> Option<usize> {
    // SAFETY: the caller runs R's instructions.
    unsafe {
        let rs = RegSet::<R>::new(set);
        match rs.few {
            Some((1, [a, _, _])) => find_with(&Eq1(a), b, set, not, last),
            Some((2, [a, c, _])) => find_with(&Eq2(a, c), b, set, not, last),
            Some((3, [a, c, d])) => find_with(&Eq3(a, c, d), b, set, not, last),
            _ => {
                let t = Nibbles {
                    lo_a: rs.lo_a,
                    lo_b: rs.lo_b,
                    hi_a: rs.hi_a,
                    hi_b: rs.hi_b,
                };
                find_with(&t, b, set, not, last)
            }
        }
    }
}

/// The hits (members, or with `not` the others) among the register at
/// `p + at`, as bits.
///
/// # Safety
/// The CPU runs `R`'s instructions; the `R::LANES` bytes from `p + at` are
/// readable.
#[inline(always)]
unsafe fn hit1<R: ByteReg, M: MemberLanes<R>>(
    ms: &M,
    p: *const u8,
    at: usize,
    not: bool,
    full: u64,
) -> u64 {
    // SAFETY: the caller's contract.
    let m = unsafe { ms.bits(R::load(p.add(at))) };
    if not {
        !m & full
    } else {
        m
    }
}

/// The hits of the four registers from `p + at`, where any of them has
/// one. With 64-byte registers each register's bits come from a mask
/// register and their union is tested; with 32-byte ones the four test
/// registers are combined first (an or for members, a minimum for
/// non-members: nonzero lanes are members) and tested once, their bits
/// taken only on a hit (a bit mask of a 32-byte register costs a
/// move-mask each).
///
/// # Safety
/// The CPU runs `R`'s instructions; the `4·R::LANES` bytes from `p + at`
/// are readable.
#[inline(always)]
unsafe fn four<R: ByteReg, M: MemberLanes<R>>(
    ms: &M,
    p: *const u8,
    at: usize,
    not: bool,
    full: u64,
) -> Option<[u64; 4]> {
    let l = R::LANES;
    // SAFETY: the caller's contract.
    unsafe {
        if l == 64 {
            let m = [
                hit1(ms, p, at, not, full),
                hit1(ms, p, at + l, not, full),
                hit1(ms, p, at + 2 * l, not, full),
                hit1(ms, p, at + 3 * l, not, full),
            ];
            return (m[0] | m[1] | m[2] | m[3] != 0).then_some(m);
        }
        let v = [
            ms.lanes(R::load(p.add(at))),
            ms.lanes(R::load(p.add(at + l))),
            ms.lanes(R::load(p.add(at + 2 * l))),
            ms.lanes(R::load(p.add(at + 3 * l))),
        ];
        let any = if not {
            R::nonzero_bits(R::min(R::min(v[0], v[1]), R::min(v[2], v[3]))) != full
        } else {
            R::any(R::or(R::or(v[0], v[1]), R::or(v[2], v[3])))
        };
        if !any {
            return None;
        }
        let mut m = [0u64; 4];
        for (o, r) in m.iter_mut().zip(v) {
            let b = R::nonzero_bits(r);
            *o = if not { !b & full } else { b };
        }
        Some(m)
    }
}

/// The search of [`find_vec`] for one form of set.
///
/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn find_with<R: ByteReg, M: MemberLanes<R>>(
    ms: &M,
    b: &[u8],
    set: &Set,
    not: bool,
    last: bool,
) -> Option<usize> {
    let l = R::LANES;
    let n = b.len();
    let p = b.as_ptr();
    let full = super::first_lanes(l);
    // SAFETY: the caller runs R's instructions; every load reads the l
    // bytes from an offset at most n − l.
    unsafe {
        if !last {
            let mut i = 0;
            if n >= 4 * l {
                // The first register unaligned, then the loop from the
                // next register-aligned address, whose loads never straddle
                // two lines (the bytes it reads again held no hit).
                let m = hit1(ms, p, 0, not, full);
                if m != 0 {
                    return Some(m.trailing_zeros() as usize);
                }
                i = l - (p as usize) % l;
            }
            while i + 4 * l <= n {
                if let Some(v) = four(ms, p, i, not, full) {
                    for (k, m) in v.into_iter().enumerate() {
                        if m != 0 {
                            return Some(i + k * l + m.trailing_zeros() as usize);
                        }
                    }
                }
                i += 4 * l;
            }
            while i + l <= n {
                let m = hit1(ms, p, i, not, full);
                if m != 0 {
                    return Some(i + m.trailing_zeros() as usize);
                }
                i += l;
            }
            (i..n).find(|&k| set.has(b[k]) != not)
        } else {
            let mut e = n;
            if n >= 4 * l {
                // The last register unaligned, then the loop down from the
                // register-aligned address below it (as above).
                let m = hit1(ms, p, n - l, not, full);
                if m != 0 {
                    return Some(n - l + 63 - m.leading_zeros() as usize);
                }
                e = n - (p as usize + n) % l;
            }
            while e >= 4 * l {
                let s = e - 4 * l;
                // Descending streams are the hardware prefetchers' weak
                // side: ask for the lines 2 KiB below (a hint; no read).
                R::prefetch(p.wrapping_sub(2048).wrapping_add(s));
                if let Some(v) = four(ms, p, s, not, full) {
                    for (k, m) in v.into_iter().enumerate().rev() {
                        if m != 0 {
                            return Some(s + k * l + 63 - m.leading_zeros() as usize);
                        }
                    }
                }
                e = s;
            }
            while e >= l {
                let s = e - l;
                let m = hit1(ms, p, s, not, full);
                if m != 0 {
                    return Some(s + 63 - m.leading_zeros() as usize);
                }
                e = s;
            }
            (0..e).rev().find(|&k| set.has(b[k]) != not)
        }
    }
}

fn find_scalar(b: &[u8], set: &Set, not: bool, last: bool) -> Option<usize> {
    if last {
        b.iter().rposition(|&c| set.has(c) != not)
    } else {
        b.iter().position(|&c| set.has(c) != not)
    }
}

tiered! {
    fn find(b: &[u8], set: &Set, not: bool, last: bool) -> Option<usize> {
        vector: find_vec, scalar: find_scalar
    }
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn count_vec<R: ByteReg>(b: &[u8], set: &Set) -> usize {
    let l = R::LANES;
    let n = b.len();
    let p = b.as_ptr();
    let mut total = 0usize;
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads the l
    // bytes from an offset at most n − l.
    unsafe {
        let rs = RegSet::<R>::new(set);
        if n >= 4 * l {
            // The bytes before the first register-aligned address one by
            // one, so that no load of the loop straddles two lines.
            let head = (l - (p as usize) % l) % l;
            total = b[..head].iter().filter(|&&c| set.has(c)).count();
            i = head;
        }
        while i + 2 * l <= n {
            let m0 = rs.members(R::load(p.add(i)));
            let m1 = rs.members(R::load(p.add(i + l)));
            total += (m0.count_ones() + m1.count_ones()) as usize;
            i += 2 * l;
        }
        while i + l <= n {
            total += rs.members(R::load(p.add(i))).count_ones() as usize;
            i += l;
        }
    }
    total + b[i..].iter().filter(|&&c| set.has(c)).count()
}

fn count_scalar(b: &[u8], set: &Set) -> usize {
    b.iter().filter(|&&c| set.has(c)).count()
}

tiered! {
    fn count(b: &[u8], set: &Set) -> usize {
        vector: count_vec, scalar: count_scalar
    }
}

/// # Safety
/// The CPU runs `R`'s instructions; `dst` holds every position written.
#[inline(always)]
unsafe fn positions_vec<R: ByteReg>(b: &[u8], set: &Set, dst: &mut [usize]) -> usize {
    let l = R::LANES;
    let n = b.len();
    let p = b.as_ptr();
    let mut k = 0;
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads the l
    // bytes from an offset at most n − l.
    unsafe {
        let rs = RegSet::<R>::new(set);
        while i + l <= n {
            let mut m = rs.members(R::load(p.add(i)));
            while m != 0 {
                dst[k] = i + m.trailing_zeros() as usize;
                k += 1;
                m &= m - 1;
            }
            i += l;
        }
    }
    for (j, &c) in b.iter().enumerate().skip(i) {
        if set.has(c) {
            dst[k] = j;
            k += 1;
        }
    }
    k
}

fn positions_scalar(b: &[u8], set: &Set, dst: &mut [usize]) -> usize {
    let mut k = 0;
    for (j, &c) in b.iter().enumerate() {
        if set.has(c) {
            dst[k] = j;
            k += 1;
        }
    }
    k
}

tiered! {
    fn positions(b: &[u8], set: &Set, dst: &mut [usize]) -> usize {
        vector: positions_vec, scalar: positions_scalar
    }
}
