//! The extremes of a block of floats, vectorised: Max and Min (IEEE
//! 754-2019: a NaN wins, −0 below +0) and the first position of an extreme
//! (ArgMax and ArgMin: a NaN the most extreme of all, the first of equals).
//!
//! Each float maps to an integer key whose order is the floats' own (−0
//! below +0; the key is a bijection, so equal keys are equal bits); the
//! extreme of the keys is an integer maximum or minimum, which the compiler
//! vectorises under each tier's features, and a NaN is looked for alongside.
//! An extreme has no order to keep, so the results are those of the
//! element-by-element fold bit for bit, a NaN result being the block's
//! first NaN (as the fold leaves it), whatever the tier.

macro_rules! extremes {
    ($m:ident, $t:ty, $u:ty, $i:ty) => {
        pub(crate) mod $m {
            use crate::Tier;

            const SHIFT: u32 = <$u>::BITS - 1;
            /// Keys compared per step of the search for the first extreme.
            const FIND: usize = 16;

            /// The order key of `v`: negative floats with their magnitude
            /// bits flipped, read as a signed integer.
            #[inline(always)]
            fn key(v: $t) -> $i {
                let i = v.to_bits() as $i;
                i ^ (((i >> SHIFT) as $u) >> 1) as $i
            }

            /// The float of a key (`key` is its own inverse on the bits).
            #[inline(always)]
            fn value(k: $i) -> $t {
                <$t>::from_bits((k ^ (((k >> SHIFT) as $u) >> 1) as $i) as $u)
            }

            #[inline(always)]
            fn nan_bits(v: $t) -> bool {
                (v.to_bits() & (<$u>::MAX >> 1)) > <$t>::INFINITY.to_bits()
            }

            /// The greater (`MAX`) or lesser of two keys. (A function, not a
            /// closure: a closure would not inherit the caller's target
            /// features and would not vectorise.)
            #[inline(always)]
            fn pick<const MAX: bool>(a: $i, b: $i) -> $i {
                if MAX {
                    a.max(b)
                } else {
                    a.min(b)
                }
            }

            /// The greatest (`MAX`) or least key of `x`, and whether `x`
            /// holds a NaN: two plain reductions (an integer extreme and an
            /// or), which the compiler vectorises and interleaves.
            #[inline(always)]
            fn keys<const MAX: bool>(x: &[$t]) -> ($i, bool) {
                let mut best = if MAX { <$i>::MIN } else { <$i>::MAX };
                let mut any = 0 as $u;
                for &v in x {
                    any |= nan_bits(v) as $u;
                    best = pick::<MAX>(best, key(v));
                }
                (best, any != 0)
            }

            /// The first position in `x` of the key `k` (present).
            #[inline(always)]
            fn find(x: &[$t], k: $i) -> usize {
                let mut at = 0;
                for c in x.chunks(FIND) {
                    let mut hit = 0 as $u;
                    for &v in c {
                        hit |= (key(v) == k) as $u;
                    }
                    if hit != 0 {
                        return at + c.iter().position(|&v| key(v) == k).unwrap_or(0);
                    }
                    at += c.len();
                }
                0
            }

            #[cfg(target_arch = "x86_64")]
            mod on {
                /// # Safety
                /// The CPU runs AVX2.
                #[target_feature(enable = "avx2")]
                pub(super) unsafe fn keys_avx2<const MAX: bool>(x: &[$t]) -> ($i, bool) {
                    super::keys::<MAX>(x)
                }
                /// # Safety
                /// The CPU runs AVX-512 F and VL and AVX2.
                #[target_feature(enable = "avx512f,avx512vl,avx2")]
                pub(super) unsafe fn keys_avx512<const MAX: bool>(x: &[$t]) -> ($i, bool) {
                    super::keys::<MAX>(x)
                }
                /// # Safety
                /// The CPU runs AVX2.
                #[target_feature(enable = "avx2")]
                pub(super) unsafe fn find_avx2(x: &[$t], k: $i) -> usize {
                    super::find(x, k)
                }
                /// # Safety
                /// The CPU runs AVX-512 F and VL and AVX2.
                #[target_feature(enable = "avx512f,avx512vl,avx2")]
                pub(super) unsafe fn find_avx512(x: &[$t], k: $i) -> usize {
                    super::find(x, k)
                }
            }

            fn keys_on<const MAX: bool>(tier: Tier, x: &[$t]) -> ($i, bool) {
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: the tier executes AVX-512 F and VL and AVX2
                    // (`runs_avx512`) and this CPU runs the tier (`available`).
                    return unsafe { on::keys_avx512::<MAX>(x) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: the tier executes AVX2 (`runs_avx2`) and this
                    // CPU runs the tier (`available`).
                    return unsafe { on::keys_avx2::<MAX>(x) };
                }
                let _ = tier;
                keys::<MAX>(x)
            }

            fn find_on(tier: Tier, x: &[$t], k: $i) -> usize {
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx512(tier) && tier.available() {
                    // SAFETY: as in `keys_on`.
                    return unsafe { on::find_avx512(x, k) };
                }
                #[cfg(target_arch = "x86_64")]
                if crate::tier::runs_avx2(tier) && tier.available() {
                    // SAFETY: as in `keys_on`.
                    return unsafe { on::find_avx2(x, k) };
                }
                let _ = tier;
                find(x, k)
            }

            /// The IEEE 754-2019 maximum (`max`) or minimum of `x`, from
            /// −∞ (or +∞) where `x` is empty; a NaN result is `x`'s first NaN.
            pub(crate) fn ext(tier: Tier, x: &[$t], max: bool) -> $t {
                if x.is_empty() {
                    return if max {
                        <$t>::NEG_INFINITY
                    } else {
                        <$t>::INFINITY
                    };
                }
                let (k, nan) = if max {
                    keys_on::<true>(tier, x)
                } else {
                    keys_on::<false>(tier, x)
                };
                if nan {
                    return x.iter().copied().find(|v| v.is_nan()).unwrap_or(<$t>::NAN);
                }
                value(k)
            }

            /// The first extreme of the non-empty `x` and its position: the
            /// first NaN where there is one.
            pub(crate) fn arg(tier: Tier, x: &[$t], max: bool) -> ($t, usize) {
                let (k, nan) = if max {
                    keys_on::<true>(tier, x)
                } else {
                    keys_on::<false>(tier, x)
                };
                let j = if nan {
                    x.iter().position(|v| v.is_nan()).unwrap_or(0)
                } else {
                    find_on(tier, x, k)
                };
                (x[j], j)
            }
        }
    };
}

extremes!(f32s, f32, u32, i32);
extremes!(f64s, f64, u64, i64);
