//! Scratch memory a caller owns and lends to a plan's `run_with_scratch`
//! (ARCHITECTURE.md §4, the plan convention): one type for every engine.

use crate::error::Result;

/// Scratch memory owned by the caller and lent to a plan's
/// `run_with_scratch` (the contraction's, the transforms' and the
/// linear-algebra plans): size
/// it with the plan's `scratch_bytes()` (times the threads a run may use,
/// where the plan says a run uses as many threads as its scratch holds
/// regions for) and a run allocates nothing for it; a smaller one grows
/// (fallibly: [`crate::Error::Alloc`]) to one thread's need. Its contents
/// between runs mean nothing: a run never reads what it did not write.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// 64-byte blocks on 64-byte boundaries, so every region is aligned for
    /// any element and a region's wide loads do not straddle lines.
    buf: Vec<Block>,
}

/// 64 bytes on a 64-byte boundary: the unit of every scratch, so that
/// vector loads and stores of a region that starts at a block never
/// straddle two cache lines (one that does costs two).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub(crate) struct Block(pub(crate) [u64; 8]);

impl Scratch {
    /// An empty scratch (it grows to what the first run needs).
    pub fn new() -> Self {
        Scratch::default()
    }

    /// A scratch of at least `bytes` bytes; refuses ([`crate::Error::Alloc`])
    /// what cannot be allocated.
    pub fn with_size(bytes: usize) -> Result<Self> {
        let mut s = Scratch::new();
        s.reserve(bytes)?;
        Ok(s)
    }

    /// A scratch of at least `bytes` zero bytes taken from the allocator's
    /// zeroed memory (no writing pass over fresh pages); refuses
    /// ([`crate::Error::Alloc`]) what cannot be allocated.
    pub(crate) fn zeroed(bytes: usize) -> Result<Self> {
        Ok(Scratch {
            buf: crate::alloc::try_zeroed_blocks(bytes.div_ceil(64), "scratch (64-byte blocks)")?,
        })
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.buf.len() * 64
    }

    /// Grow to at least `bytes` bytes (new blocks zeroed).
    pub(crate) fn reserve(&mut self, bytes: usize) -> Result<()> {
        let blocks = bytes.div_ceil(64);
        if blocks > self.buf.len() {
            let more = blocks - self.buf.len();
            crate::alloc::try_reserve(&mut self.buf, more, "scratch (64-byte blocks)")?;
            self.buf.resize(blocks, Block::default());
        }
        Ok(())
    }

    /// Its 64-byte blocks, initialised.
    pub(crate) fn blocks_mut(&mut self) -> &mut [Block] {
        &mut self.buf
    }

    /// The first byte, 64-byte aligned; [`Scratch::size`] bytes follow,
    /// initialised.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr() as *mut u8
    }
}

/// A raw pointer that tasks of one run share, each reaching only the
/// elements (or the scratch region) that are its own: what every engine's
/// parallel loops hand to their tasks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SendPtr<T>(pub(crate) *mut T);
// SAFETY: a `SendPtr` is only dereferenced by tasks that reach disjoint
// elements (each engine's run states how it splits them), so moving it to
// another thread creates no data race.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: shared references to it only copy the pointer out; the tasks that
// dereference it reach disjoint elements (see `Send`).
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> Default for SendPtr<T> {
    /// The null pointer.
    fn default() -> Self {
        SendPtr(core::ptr::null_mut())
    }
}

impl<T> SendPtr<T> {
    /// The pointer (a method, so closures capture the whole wrapper).
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}
