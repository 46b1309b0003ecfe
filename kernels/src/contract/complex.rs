//! The complex microkernels of each tier ([`super::micro::PlaneKernel`]s,
//! run by [`super::planes::chain`]): each output keeps its real and
//! imaginary chains (ARCHITECTURE.md §5.5: per k, real `+ ar·br` then
//! `− ai·bi`, imaginary `+ ar·bi` then `+ ai·br`), so the bits are those of
//! the two real products over 2K terms the lane path and the scalar tier
//! compute, at any blocking, tier or split of rows over threads.

use super::acc::Acc;
use super::micro::{self, PlaneKernel};
use crate::Tier;
use num_complex::Complex;

/// A real part type with a complex kernel on a tier.
pub(super) trait Part:
    Acc + crate::Element + core::ops::Neg<Output = Self> + Default
where
    Complex<Self>: crate::Element,
{
    /// The kernel of `tier` and its `(MR, NR)`.
    fn kernel(tier: Tier) -> (PlaneKernel<Self>, usize, usize);
}

impl Part for f32 {
    fn kernel(tier: Tier) -> (PlaneKernel<Self>, usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return (micro::avx512_c64_6x32, 6, 32);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return (micro::avx2_c64_4x8, 4, 8);
        }
        let _ = tier;
        (micro::cscalar::<f32, 4, 8>, 4, 8)
    }
}

impl Part for f64 {
    fn kernel(tier: Tier) -> (PlaneKernel<Self>, usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx512(tier) {
            return (micro::avx512_c128_6x16, 6, 16);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::tier::runs_avx2(tier) {
            return (micro::avx2_c128_4x4, 4, 4);
        }
        let _ = tier;
        (micro::cscalar::<f64, 4, 4>, 4, 4)
    }
}
