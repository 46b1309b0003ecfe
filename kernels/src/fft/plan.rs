//! The planner: a recipe chosen from the length (and precision, direction)
//! alone, the plan it builds (tables of twiddles, sub-plans), and a cache of
//! plans shared between threads.
//!
//! The recipe of a line of `n` points:
//!
//! 1. `n ≤ 1`: the identity (a transform of one point is that point; of none,
//!    nothing).
//! 2. A prime factor of `n` above [`BLUESTEIN_PRIME`]: Bluestein's convolution
//!    of `m` points, `m` the least power of two, or three times one, at least
//!    `2n − 1`, unless the transform of the conjugate chirp exceeds
//!    `2·√(2n − 1)` in magnitude (`bluestein.rs`), when the line runs passes
//!    as below.
//! 3. A line of more than [`FOUR_STEP_BYTES`] bytes whose length splits into
//!    `n₁·n₂` with `16 ≤ n₁ ≤ n₂` (`n₁` the greatest divisor at most `√n`):
//!    Bailey's four steps (`four_step.rs`).
//! 4. Otherwise Stockham passes (`radix.rs`): the power of two as radix 8s
//!    with one or two 4s for the rest (a lone 2 for n = 2), then 3, 5 and
//!    the other primes ascending.

use super::bluestein::Bluestein;
use super::four_step::FourStep;
use super::radix::{build_passes, extra_scratch, Pass};
use super::simd::Simd;
use super::twiddle::RootTable;
use super::{bound, Direction, FftFloat};
use crate::error::{Error, Result};
use crate::tier::Exec;
use num_complex::Complex;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Prime factors above this run by Bluestein's convolution.
pub const BLUESTEIN_PRIME: usize = 61;
/// Lines of more bytes than this (past a core's L2 and most of its L3 share)
/// run by Bailey's four steps. On Zen 3 (avx2, one thread, both recipes
/// alternated in one process) a 16 MiB line ran faster by passes (2^20 f64
/// 0.92–0.98 of rustfft against 0.80–0.82; 2^21 f32 0.73–0.75 against
/// 0.62–0.63) and a 32 MiB one by four steps (2^21 f64 0.83–0.90 against
/// 0.61–0.63).
pub const FOUR_STEP_BYTES: usize = 1 << 24;

pub(crate) use crate::alloc::try_vec;

/// A zero-filled vector of `n` points, or [`Error::Alloc`].
pub(crate) fn try_zeros<T: FftFloat>(n: usize, what: &str) -> Result<Vec<Complex<T>>> {
    crate::alloc::try_filled(
        n,
        Complex::new(T::ZERO, T::ZERO),
        format_args!("fft {what}"),
    )
}

pub(crate) enum Algo<T> {
    Identity,
    Passes(Vec<Pass<T>>),
    Bluestein(Box<Bluestein<T>>),
    FourStep(Box<FourStep<T>>),
}

/// How a plan computes its lines: what [`FftPlan::algorithm`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// A line of 0 or 1 point, copied.
    Identity,
    /// Stockham passes of these radices, in order.
    Passes(Vec<usize>),
    /// Bluestein's convolution through transforms of this length (a power
    /// of two or three times one).
    Bluestein(usize),
    /// Bailey's four steps: `n₁` columns' transforms of `n₂`… and rows of `n₂`.
    FourStep(usize, usize),
}

/// A complex transform of one length, precision and direction, unnormalised:
/// `y_k = Σ_j x_j·exp(∓2πi·jk/n)` (`−` forward). Built once by an
/// [`FftPlanner`] (or [`FftPlan::new`]), shareable between threads (`Arc`),
/// run on any number of lines. Its recipe, and so every bit of its results,
/// is a function of the length, precision and direction alone.
pub struct FftPlan<T> {
    n: usize,
    direction: Direction,
    pub(crate) algo: Algo<T>,
    scratch: usize,
    factor: f64,
}

impl<T: FftFloat> std::fmt::Debug for FftPlan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FftPlan")
            .field("n", &self.n)
            .field("direction", &self.direction)
            .field("algorithm", &self.algorithm())
            .finish()
    }
}

/// Points a passes plan's scratch holds beyond its need: room to start its
/// buffer on a 64-byte boundary (see [`FftPlan::run_line`]).
fn align_slack<T>() -> usize {
    64 / core::mem::size_of::<Complex<T>>()
}

impl<T: FftFloat> FftPlan<T> {
    /// Build the plan of `n` points (no cache). Refused with [`Error::Alloc`]
    /// where its tables cannot be allocated.
    pub fn new(n: usize, direction: Direction) -> Result<Self> {
        let inverse = direction == Direction::Inverse;
        if n <= 1 {
            return Ok(FftPlan {
                n,
                direction,
                algo: Algo::Identity,
                scratch: 0,
                factor: bound::radix_factor(n),
            });
        }
        let primes = super::radix::prime_factors(n);
        if primes.iter().any(|&p| p > BLUESTEIN_PRIME) {
            if let Some(b) = Bluestein::new(n, inverse)? {
                let scratch = b.scratch_len();
                let factor = b.error_factor();
                return Ok(FftPlan {
                    n,
                    direction,
                    algo: Algo::Bluestein(Box::new(b)),
                    scratch,
                    factor,
                });
            }
        } else if n.saturating_mul(core::mem::size_of::<Complex<T>>()) > FOUR_STEP_BYTES {
            let mut n1 = (n as f64).sqrt() as usize;
            while n1 > 1 && !n.is_multiple_of(n1) {
                n1 -= 1;
            }
            if n1 >= 16 {
                let f = FourStep::new(n1, n / n1, inverse)?;
                let scratch = f.scratch_len(1);
                let factor = f.error_factor();
                return Ok(FftPlan {
                    n,
                    direction,
                    algo: Algo::FourStep(Box::new(f)),
                    scratch,
                    factor,
                });
            }
        }
        let table = RootTable::new(n, T::TWIDDLE_DD)?;
        let passes = build_passes::<T>(n, inverse, &table)?;
        // Two buffers where there are three passes or more and a line fits
        // the second-level cache (see `radix::run_passes_with`), one beyond.
        let lines = if passes.len() >= 3 && n * core::mem::size_of::<Complex<T>>() <= 1 << 20 {
            2
        } else {
            1
        };
        let scratch = lines * n + extra_scratch(&passes) + align_slack::<T>();
        Ok(FftPlan {
            n,
            direction,
            algo: Algo::Passes(passes),
            scratch,
            factor: bound::radix_factor(n),
        })
    }

    /// The number of points of a line.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the line has no point.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The direction.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// What the plan computes by.
    pub fn algorithm(&self) -> Algorithm {
        match &self.algo {
            Algo::Identity => Algorithm::Identity,
            Algo::Passes(p) => Algorithm::Passes(p.iter().map(|p| p.p).collect()),
            Algo::Bluestein(b) => Algorithm::Bluestein(b.m()),
            Algo::FourStep(f) => Algorithm::FourStep(f.n1(), f.n2()),
        }
    }

    /// The points of scratch [`FftPlan::run_with_scratch`] needs (for a
    /// plan of radix passes, a cache line more than its buffer, so that the
    /// buffer can start on a 64-byte boundary wherever the scratch lies).
    pub fn scratch_len(&self) -> usize {
        self.scratch
    }

    /// The bytes of scratch [`FftPlan::run_with_scratch`] needs
    /// ([`FftPlan::scratch_len`] points of `Complex<T>`).
    pub fn scratch_bytes(&self) -> usize {
        self.scratch * core::mem::size_of::<Complex<T>>()
    }

    /// ε of the bound `‖ŷ − y‖₂ ≤ ε·u·√n·‖x‖₂` for one line (u the unit
    /// roundoff of `T`): the recipe's e(n) (see the module documentation).
    pub fn error_factor(&self) -> f64 {
        self.factor
    }

    /// Transform each line of `data` (`data.len()` a multiple of the length)
    /// in place, allocating its scratch. Refused ([`Error::Length`]) where
    /// `data` is not whole lines; [`Error::Alloc`] where scratch is short.
    pub fn run(&self, data: &mut [Complex<T>], exec: &Exec) -> Result<()> {
        let bytes = self
            .scratch
            .saturating_mul(core::mem::size_of::<Complex<T>>());
        let mut blocks = crate::alloc::try_zeroed_blocks(bytes.div_ceil(64), "fft scratch")?;
        // SAFETY: the blocks hold `bytes` zeroed bytes at a 64-byte boundary,
        // which the alignment of Complex<T> (T is f32 or f64) divides; a
        // zero bit pattern is a valid Complex<T>, and the slice (scratch
        // points of size_of::<Complex<T>>() bytes) lies inside the blocks,
        // which it borrows mutably and alone until it is dropped.
        let scratch = unsafe {
            core::slice::from_raw_parts_mut(blocks.as_mut_ptr() as *mut Complex<T>, self.scratch)
        };
        // The passes that write into scratch then never straddle lines.
        self.run_with_scratch(data, scratch, exec)
    }

    /// [`FftPlan::run`] with the caller's scratch of at least
    /// [`FftPlan::scratch_len`] points ([`Error::Length`] otherwise). Lines
    /// run one after another on the calling thread, on `exec`'s tier.
    pub fn run_with_scratch(
        &self,
        data: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        exec: &Exec,
    ) -> Result<()> {
        let simd = Simd::of(exec.resolve_tier_for(crate::tier::Engine::Fft)?);
        if self.n == 0 {
            return Ok(());
        }
        if data.len() == self.n && scratch.len() >= self.scratch {
            // One line (the common call): no division to count the lines.
            self.run_line(data, scratch, simd, 1);
            return Ok(());
        }
        if !data.len().is_multiple_of(self.n) {
            return Err(Error::Length {
                operand: "data".into(),
                len: data.len(),
                expected: data.len() / self.n * self.n,
                unit: "points",
            });
        }
        if scratch.len() < self.scratch {
            return Err(Error::Length {
                operand: "scratch".into(),
                len: scratch.len(),
                expected: self.scratch,
                unit: "points",
            });
        }
        for line in data.chunks_exact_mut(self.n) {
            self.run_line(line, scratch, simd, 1);
        }
        Ok(())
    }

    /// Scratch for [`FftPlan::run`] with `threads` tasks inside one line.
    pub(crate) fn scratch_for(&self, threads: usize) -> usize {
        match &self.algo {
            Algo::FourStep(f) if threads > 1 => f.scratch_len(threads),
            _ => self.scratch,
        }
    }

    /// Scratch for [`FftPlan::run_line_apart`] with `threads` tasks inside
    /// one line: a four-step line's without its matrix, else
    /// [`FftPlan::scratch_for`]'s.
    pub(crate) fn scratch_apart_for(&self, threads: usize) -> usize {
        match &self.algo {
            Algo::FourStep(f) => f.apart_scratch_len(threads),
            _ => self.scratch_for(threads),
        }
    }

    /// One line from `x` into `y` (apart, `n` points each), with the bits of
    /// [`FftPlan::run_line`] on a copy of `x`: a four-step line keeps its
    /// matrix in `y`, the others are copied and run in place. `scratch`
    /// holds `scratch_apart_for(threads)` points (or `scratch_for`'s).
    pub(crate) fn run_line_apart(
        &self,
        x: &[Complex<T>],
        y: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        match &self.algo {
            Algo::FourStep(f) => f.run_apart(x, y, scratch, simd, threads),
            _ => {
                crate::copy::copy_slice(y, x);
                self.run_line(y, scratch, simd, threads);
            }
        }
    }

    /// One line, in place. `scratch` holds `scratch_for(threads)` points.
    pub(crate) fn run_line(
        &self,
        line: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
        simd: Simd,
        threads: usize,
    ) {
        let inverse = self.direction == Direction::Inverse;
        match &self.algo {
            Algo::Identity => {}
            Algo::Passes(p) => {
                // The ping-pong buffer from the scratch's first 64-byte
                // boundary where the slack allows (a vector of a buffer off
                // that boundary straddles cache lines: a 4096-point f32 line
                // ran 20–35% slower so on Zen 4); the same operations on the
                // same values either way.
                let need = self.scratch - align_slack::<T>();
                let off = scratch.as_ptr().align_offset(64);
                let scratch = if off != usize::MAX && off + need <= scratch.len() {
                    &mut scratch[off..]
                } else {
                    scratch
                };
                super::simd::run_passes(simd, p, inverse, line, scratch)
            }
            Algo::Bluestein(b) => b.run(line, scratch, simd),
            Algo::FourStep(f) => f.run(line, scratch, simd, threads),
        }
    }
}

/// Which precision a cached plan is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Precision {
    F32,
    F64,
}

type Key = (usize, Precision, Direction);

/// A cache of plans keyed by (length, precision, direction), shareable
/// between threads: each plan is built once and handed out as an `Arc`.
#[derive(Default)]
pub struct FftPlanner {
    plans: Mutex<HashMap<Key, Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for FftPlanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FftPlanner").finish_non_exhaustive()
    }
}

impl FftPlanner {
    /// An empty planner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The plan of `n` points of `T` in `direction`, from the cache or built
    /// (outside the cache's lock) and cached. [`Error::Alloc`] where its
    /// tables cannot be allocated.
    pub fn plan<T: FftFloat>(&self, n: usize, direction: Direction) -> Result<Arc<FftPlan<T>>> {
        let prec = if T::TWIDDLE_DD {
            Precision::F64
        } else {
            Precision::F32
        };
        let key = (n, prec, direction);
        if let Some(p) = self.lock().get(&key) {
            if let Ok(p) = p.clone().downcast::<FftPlan<T>>() {
                return Ok(p);
            }
        }
        let plan = Arc::new(FftPlan::<T>::new(n, direction)?);
        let mut map = self.lock();
        let entry = map.entry(key).or_insert_with(|| plan.clone());
        Ok(entry.clone().downcast::<FftPlan<T>>().unwrap_or(plan))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<dyn Any + Send + Sync>>> {
        self.plans.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The planner the array calls share.
pub(crate) fn global() -> &'static FftPlanner {
    static PLANNER: std::sync::OnceLock<FftPlanner> = std::sync::OnceLock::new();
    PLANNER.get_or_init(FftPlanner::new)
}
