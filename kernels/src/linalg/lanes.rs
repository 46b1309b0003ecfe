//! Batches of small matrices computed eight at a time, one matrix per lane
//! (the element (i, j) of the eight matrices side by side in one short
//! array), so each step of the unblocked algorithm runs as one vector
//! operation across the eight. Each lane performs exactly the operations
//! of the one-matrix unblocked algorithm, in its order: the bits are those
//! of a matrix computed alone (tested), whichever lanes its neighbours
//! take or leave empty.

/// Matrices per group.
pub(crate) const LANES: usize = 8;

/// The largest order computed across lanes.
pub(crate) const MAX_ORDER: usize = 16;

/// Whether a batch of `count` matrices of order `n` runs across lanes.
pub(crate) fn use_lanes(n: usize, count: usize) -> bool {
    n <= MAX_ORDER && count > 1
}

/// Marks a loop whose body works on whole lane groups, so that the loop
/// vectoriser leaves it to the body's own vector operations (eight lanes
/// side by side) instead of vectorising across iterations with gathers.
/// An empty assembly block: no instruction, no memory, no flags.
#[inline(always)]
pub(crate) fn lane_loop() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the block is empty: it reads and writes nothing, touches no
    // stack or flags (as its options state).
    unsafe {
        core::arch::asm!("", options(nomem, nostack, preserves_flags));
    }
}
