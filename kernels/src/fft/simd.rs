//! The vector tiers of the passes.
//!
//! The passes (`radix.rs`) are written once, as loops of IEEE additions,
//! subtractions and multiplications with no fused multiply-add, and marked
//! `inline(always)`. Here they are instantiated inside functions compiled
//! with AVX2 (and FMA) or AVX-512 enabled, where the compiler vectorises the
//! loops over the interleaved sequences of a pass. A vector lane computes
//! exactly the operation the scalar loop computes on that point, and Rust
//! never contracts a multiply and an add into a fused one, so every tier
//! gives the scalar tier's bits (ARCHITECTURE.md §3): the vector code is the
//! same operations in the same order, a point per lane.

use super::radix::{run_passes as passes_generic, Pass};
use super::FftFloat;
use crate::tier::{runs_avx2, runs_avx512};
use crate::Tier;
use num_complex::Complex;

/// The instruction set the passes of a call run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Simd {
    Scalar,
    Avx2,
    Avx512,
}

impl Simd {
    /// What `tier` executes.
    pub(crate) fn of(tier: Tier) -> Simd {
        if runs_avx512(tier) {
            Simd::Avx512
        } else if runs_avx2(tier) {
            Simd::Avx2
        } else {
            Simd::Scalar
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn passes_avx2<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    passes_generic(passes, inverse, data, scratch)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn passes_avx512<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    passes_generic(passes, inverse, data, scratch)
}

/// The passes over one line on `simd`'s instructions (same bits on each).
pub(crate) fn run_passes<T: FftFloat>(
    simd: Simd,
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Simd::Avx512` comes from a tier this CPU runs (checked by
        // `Exec::resolve_tier`) that executes AVX-512 F, AVX2 and FMA.
        Simd::Avx512 => unsafe { passes_avx512(passes, inverse, data, scratch) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Simd::Avx2` comes from an available tier that executes AVX2 and FMA.
        Simd::Avx2 => unsafe { passes_avx2(passes, inverse, data, scratch) },
        _ => passes_generic(passes, inverse, data, scratch),
    }
}
