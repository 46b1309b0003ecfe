//! Byte-string comparison: equality, order and the common prefix.

use super::{path, tiered};
use crate::simd::ByteReg;
use crate::{Exec, Result};
use core::cmp::Ordering;

/// Whether `a` and `b` hold the same bytes (and so the same length).
///
/// # Errors
/// Only the `Exec`'s: a tier this CPU does not run.
pub fn equal(a: &[u8], b: &[u8], exec: &Exec) -> Result<bool> {
    let p = path(exec)?;
    Ok(a.len() == b.len() && prefix(p, a, b) == a.len())
}

/// The lexicographic order of `a` and `b` as unsigned bytes (a proper
/// prefix orders first): `Ordering` as `<[u8]>::cmp` gives it.
///
/// # Errors
/// As [`equal`].
pub fn compare(a: &[u8], b: &[u8], exec: &Exec) -> Result<Ordering> {
    let k = prefix(path(exec)?, a, b);
    Ok(match (a.get(k), b.get(k)) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => a.len().cmp(&b.len()),
    })
}

/// How many leading bytes `a` and `b` share (at most the shorter length).
///
/// # Errors
/// As [`equal`].
pub fn common_prefix(a: &[u8], b: &[u8], exec: &Exec) -> Result<usize> {
    Ok(prefix(path(exec)?, a, b))
}

/// # Safety
/// The CPU runs `R`'s instructions.
#[inline(always)]
unsafe fn prefix_vec<R: ByteReg>(a: &[u8], b: &[u8]) -> usize {
    let l = R::LANES;
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let full = super::first_lanes(l);
    let mut i = 0;
    // SAFETY: the caller runs R's instructions; every load reads l bytes
    // of both operands from an offset at most n − l.
    unsafe {
        while i + 4 * l <= n {
            let d = R::or(
                R::or(
                    R::xor(R::load(pa.add(i)), R::load(pb.add(i))),
                    R::xor(R::load(pa.add(i + l)), R::load(pb.add(i + l))),
                ),
                R::or(
                    R::xor(R::load(pa.add(i + 2 * l)), R::load(pb.add(i + 2 * l))),
                    R::xor(R::load(pa.add(i + 3 * l)), R::load(pb.add(i + 3 * l))),
                ),
            );
            if R::any(d) {
                break;
            }
            i += 4 * l;
        }
        while i + l <= n {
            let m = !R::eq_bits(R::load(pa.add(i)), R::load(pb.add(i))) & full;
            if m != 0 {
                return i + m.trailing_zeros() as usize;
            }
            i += l;
        }
    }
    i + prefix_scalar(&a[i..n], &b[i..n])
}

fn prefix_scalar(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

tiered! {
    fn prefix(a: &[u8], b: &[u8]) -> usize {
        vector: prefix_vec, scalar: prefix_scalar
    }
}
