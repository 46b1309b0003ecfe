//! Batches of small matrices computed eight at a time, one matrix per lane
//! (the element (i, j) of the eight matrices side by side in one short
//! array), so each step of the unblocked algorithm runs as one vector
//! operation across the eight. Each lane performs exactly the operations
//! of the one-matrix unblocked algorithm, in its order: the bits are those
//! of a matrix computed alone (tested), whichever lanes its neighbours
//! take or leave empty.

use super::field::Field;

/// Matrices per group.
pub(crate) const LANES: usize = 8;

/// The largest order computed across lanes.
pub(crate) const MAX_ORDER: usize = 16;

/// Whether a batch of `count` matrices of order `n` runs across lanes.
pub(crate) fn use_lanes(n: usize, count: usize) -> bool {
    n <= MAX_ORDER && count > 1
}

/// Lane `l` of `x` set from the column-major `w` (`x.len()` elements).
#[inline]
pub(crate) fn put<T: Field>(x: &mut [[T; LANES]], l: usize, w: &[T]) {
    for (v, &e) in x.iter_mut().zip(w) {
        v[l] = e;
    }
}

/// Lane `l` of `x` copied out into `w`.
#[inline]
pub(crate) fn take<T: Field>(x: &[[T; LANES]], l: usize, w: &mut [T]) {
    for (e, v) in w.iter_mut().zip(x) {
        *e = v[l];
    }
}
