//! Fallible allocation, the one home of it: every buffer a call allocates
//! whose size its operands decide (ARCHITECTURE.md §4, "Resources") is
//! reserved here, and a reservation the allocator refuses is
//! [`Error::Alloc`] naming what it was for and how many elements, never an
//! abort. `what` is formatted only when the reservation fails.

use crate::error::{Error, Result};
use crate::scratch::Block;
use std::fmt::Display;

fn refused(what: impl Display, elements: usize) -> Error {
    Error::Alloc {
        what: what.to_string(),
        elements,
    }
}

/// An empty vector with room for `n` elements.
pub(crate) fn try_vec<T>(n: usize, what: impl Display) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| refused(what, n))?;
    Ok(v)
}

/// `n` copies of `x`.
pub(crate) fn try_filled<T: Clone>(n: usize, x: T, what: impl Display) -> Result<Vec<T>> {
    let mut v = try_vec(n, what)?;
    v.resize(n, x);
    Ok(v)
}

/// `n` default values (zeros for numbers).
pub(crate) fn try_zeroed<T: Clone + Default>(n: usize, what: impl Display) -> Result<Vec<T>> {
    try_filled(n, T::default(), what)
}

/// `n` zeroed 64-byte blocks on 64-byte boundaries, from the allocator's
/// zeroed memory (fresh pages need no writing pass).
pub(crate) fn try_zeroed_blocks(n: usize, what: impl Display) -> Result<Vec<Block>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<Block>(n).map_err(|_| refused(&what, n))?;
    // SAFETY: the layout's size is not zero (n > 0 blocks of 64 bytes).
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut Block;
    if p.is_null() {
        return Err(refused(what, n));
    }
    // SAFETY: `p` comes from the global allocator with the layout of `n`
    // blocks (so aligned for `Block`), all initialised to zero bytes, a
    // valid `Block`; length and capacity are both n.
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// The items of `it`, `n` of them at most reserved up front.
pub(crate) fn try_collect<T>(
    n: usize,
    it: impl Iterator<Item = T>,
    what: impl Display,
) -> Result<Vec<T>> {
    let mut v = try_vec(n, what)?;
    v.extend(it.take(n));
    Ok(v)
}

/// Room for `more` elements beyond `v`'s length.
pub(crate) fn try_reserve<T>(v: &mut Vec<T>, more: usize, what: impl Display) -> Result<()> {
    v.try_reserve_exact(more)
        .map_err(|_| refused(what, v.len().saturating_add(more)))
}
