//! Work areas of the linear-algebra routines: each task of a run holds one
//! area of 64-byte blocks, carved into typed regions for one matrix at a
//! time, from a [`Scratch`] the caller lends (a plan's `run_with_scratch`)
//! or from one allocation per call.
//!
//! A routine states its regions once, in a function that takes a
//! [`Carve`]: run on [`Carve::counting`] it sizes the area (the plan's
//! `scratch_bytes`), run on a task's area it hands out the slices. An area's
//! contents on entry mean nothing: every routine writes a region before it
//! reads it. Debug builds fill every area they allocate with all-ones bytes
//! (NaN, or the greatest index), and a lent scratch holds what the last run
//! left, so the tests would see a routine that read what it had not
//! written.

use crate::error::{Error, Result};
use crate::scratch::Scratch;
use crate::tier::Exec;
use num_complex::Complex;
use rayon::prelude::*;

/// The unit of a work area: 64 bytes, 64-byte aligned.
pub(crate) use crate::scratch::Block;

/// Plain data for which every bit pattern is a value, so that a region of
/// any bytes may be viewed as a slice of it.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid `Self`,
/// its alignment must divide 64, and it must have no padding.
pub(crate) unsafe trait Plain: Copy + Send + Sync + 'static {}

// SAFETY: IEEE floats and integers take every bit pattern, have alignment
// at most 8 and no padding; `Complex<R>` is `repr(C)` of two R.
unsafe impl Plain for f32 {}
// SAFETY: as above.
unsafe impl Plain for f64 {}
// SAFETY: as above.
unsafe impl Plain for Complex<f32> {}
// SAFETY: as above.
unsafe impl Plain for Complex<f64> {}
// SAFETY: as above.
unsafe impl Plain for usize {}
// SAFETY: as above.
unsafe impl Plain for i64 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: eight u64 in a `repr(C)` struct of size 64 and alignment 64 (which
// divides 64): every bit pattern is valid and there is no padding.
unsafe impl Plain for Block {}
// SAFETY: an array of plain elements is plain: no padding between them, the
// element's alignment, every bit pattern of each element a value.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

/// Hands out consecutive regions of a work area (or, counting, only sums
/// their sizes).
pub(crate) struct Carve<'a> {
    rest: &'a mut [Block],
    blocks: usize,
    counting: bool,
}

impl Carve<'static> {
    /// A carve that hands out empty slices and counts the blocks the
    /// regions asked for would take.
    pub(crate) fn counting() -> Self {
        Carve {
            rest: &mut [],
            blocks: 0,
            counting: true,
        }
    }
}

impl<'a> Carve<'a> {
    /// A carve of `area`, which must hold the blocks the same regions
    /// counted.
    pub(crate) fn new(area: &'a mut [Block]) -> Self {
        Carve {
            rest: area,
            blocks: 0,
            counting: false,
        }
    }

    /// The next region, of `len` elements of T (its contents unspecified);
    /// empty when counting. Sizes that overflow count as `usize::MAX`
    /// blocks, which no scratch holds.
    pub(crate) fn take<T: Plain>(&mut self, len: usize) -> &'a mut [T] {
        let blocks = len
            .checked_mul(std::mem::size_of::<T>())
            .map_or(usize::MAX, |b| b.div_ceil(64));
        self.blocks = self.blocks.saturating_add(blocks);
        if self.counting || len == 0 {
            return &mut [];
        }
        let rest = std::mem::take(&mut self.rest);
        // The area was sized by counting these same regions (the caller's
        // contract); a shortfall is a defect, caught here before any write.
        let (head, tail) = rest.split_at_mut(blocks);
        self.rest = tail;
        // SAFETY: `head` is `blocks` 64-byte blocks, at least
        // `len·size_of::<T>()` initialised bytes, borrowed mutably for 'a and
        // handed out once; T is `Plain`, so every bit pattern there is a T
        // and 64-byte alignment suits it.
        unsafe { std::slice::from_raw_parts_mut(head.as_mut_ptr() as *mut T, len) }
    }

    /// The blocks taken (or counted) so far.
    pub(crate) fn blocks(&self) -> usize {
        self.blocks
    }
}

/// The blocks per task of the regions `layout` takes.
pub(crate) fn blocks_of(layout: impl FnOnce(&mut Carve<'static>)) -> usize {
    let mut c = Carve::counting();
    layout(&mut c);
    c.blocks()
}

/// The largest work area a thread keeps between one-shot calls.
const KEPT_MAX: usize = 256 << 20;

thread_local! {
    /// The work area of this thread's last one-shot call (taken while a
    /// call runs, so a call made inside another allocates its own).
    static KEPT: std::cell::Cell<Option<Scratch>> = const { std::cell::Cell::new(None) };
}

/// A one-shot call's work area, put back for the thread's next call when
/// the call ends (unless larger than [`KEPT_MAX`]).
struct Kept(Option<Scratch>);

impl Drop for Kept {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            if s.size() <= KEPT_MAX {
                KEPT.with(|k| k.set(Some(s)));
            }
        }
    }
}

/// Where a run's work areas come from.
pub(crate) enum Areas<'s> {
    /// The calling thread's kept area, grown (fallibly) where it is
    /// smaller than this call's need.
    Fresh,
    /// The caller's scratch (grown, fallibly, to one task's need).
    Lent(&'s mut Scratch),
}

/// Run `job(b, area, exec)` for every matrix b of `count`, each on a task's
/// work area of `blocks` blocks: on `exec`'s threads, one area per thread,
/// where there are two or more matrices (a lone matrix gets every thread
/// for its inner updates). From `Areas::Lent`, as many tasks as the
/// scratch holds areas for (at least one). Every area is had before any
/// job runs, so a refusal ([`Error::Alloc`]) comes before any write.
pub(crate) fn for_each_matrix(
    count: usize,
    blocks: usize,
    areas: Areas<'_>,
    exec: &Exec,
    job: impl Fn(usize, &mut [Block], &Exec) + Sync,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let threads = exec.thread_count().clamp(1, count);
    let too_big = || Error::Alloc {
        what: "linear algebra work areas (64-byte blocks)".into(),
        elements: usize::MAX,
    };
    let per_bytes = blocks.checked_mul(64).ok_or_else(too_big)?;
    let mut kept = Kept(None);
    let poison = matches!(areas, Areas::Fresh) && cfg!(debug_assertions);
    let scratch: &mut Scratch = match areas {
        Areas::Fresh => {
            let need = per_bytes.checked_mul(threads).ok_or_else(too_big)?;
            let mut s = KEPT.with(|k| k.take()).unwrap_or_default();
            if s.size() < need {
                // Grown from nothing: the allocator's zeroed pages, no
                // writing pass.
                s = Scratch::zeroed(need)?;
            }
            kept.0.insert(s)
        }
        Areas::Lent(s) => {
            s.reserve(per_bytes)?;
            s
        }
    };
    let tasks = if blocks == 0 {
        threads
    } else {
        (scratch.size() / per_bytes).clamp(1, threads)
    };
    let all = scratch.blocks_mut();
    let all = &mut all[..blocks * tasks];
    if poison {
        all.fill(Block([u64::MAX; 8]));
    }
    if tasks == 1 {
        for b in 0..count {
            job(b, all, exec);
        }
        return Ok(());
    }
    let inner = Exec {
        par: crate::Par::Seq,
        ..*exec
    };
    let per = count.div_ceil(tasks);
    let run_task = |t: usize, area: &mut [Block]| {
        for b in t * per..((t + 1) * per).min(count) {
            job(b, area, &inner);
        }
    };
    if blocks == 0 {
        (0..tasks)
            .into_par_iter()
            .for_each(|t| run_task(t, &mut []));
    } else {
        all.par_chunks_mut(blocks)
            .enumerate()
            .for_each(|(t, area)| run_task(t, area));
    }
    Ok(())
}

/// An operand's dtype and shape, or `None` for an optional one left out.
pub(crate) type Operand = Option<(crate::DType, Vec<usize>)>;

/// The checks every linear-algebra plan makes of a run's operands: the
/// dtypes and shapes it was planned for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Planned {
    /// Each operand's name, and its dtype and shape (inputs, then
    /// destinations; `None` for an optional one left out).
    operands: Vec<(&'static str, Operand)>,
    /// Blocks of work area per task.
    pub(crate) blocks: usize,
}

impl Planned {
    pub(crate) fn new(operands: Vec<(&'static str, Operand)>, blocks: usize) -> Self {
        Planned { operands, blocks }
    }

    /// The planned shape of operand `name` (empty for one left out).
    pub(crate) fn shape(&self, name: &str) -> &[usize] {
        self.operands
            .iter()
            .find(|o| o.0 == name)
            .and_then(|o| o.1.as_ref())
            .map_or(&[], |o| &o.1)
    }

    /// Bytes of scratch per task.
    pub(crate) fn scratch_bytes(&self) -> usize {
        self.blocks.saturating_mul(64)
    }

    /// Refuse a run's operands (in the planned order, `None` for one left
    /// out) that are not the planned ones: another dtype
    /// ([`Error::DTypeMismatch`]), another shape ([`Error::Shape`]), or
    /// present where the plan had none or absent where it had one
    /// ([`Error::Attribute`]).
    pub(crate) fn check(&self, got: &[Option<(crate::DType, &[usize])>]) -> Result<()> {
        for ((name, planned), g) in self.operands.iter().zip(got) {
            match (planned, g) {
                (None, None) => {}
                (Some((dtype, shape)), Some((d, s))) => {
                    if d != dtype {
                        return Err(Error::DTypeMismatch {
                            operand: format!("plan: {name}"),
                            expected: *dtype,
                            got: *d,
                        });
                    }
                    if *s != shape.as_slice() {
                        return Err(Error::Shape {
                            operand: format!("plan: {name}"),
                            shape: s.to_vec(),
                            target: shape.clone(),
                        });
                    }
                }
                (p, _) => {
                    return Err(Error::Attribute {
                        name: (*name).into(),
                        reason: if p.is_some() {
                            "the plan has this operand; the run lacks it".into()
                        } else {
                            "the plan was made without this operand; the run has it".into()
                        },
                    })
                }
            }
        }
        Ok(())
    }
}

/// An owned area for the regions `layout` takes, every byte all-ones (as a
/// debug run's areas are): the unit tests' work areas.
#[cfg(test)]
pub(crate) fn test_area(layout: impl FnOnce(&mut Carve<'static>)) -> Vec<Block> {
    vec![Block([u64::MAX; 8]); blocks_of(layout)]
}
