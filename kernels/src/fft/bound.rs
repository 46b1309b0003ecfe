//! The error factor ε of the bound `‖ŷ − y‖₂ ≤ ε·u·√N·‖x‖₂`.
//!
//! ε is the sum over the transformed axes of e(n), n the points along the
//! axis, by the recipe its lines run:
//!
//! * passes (or n ≤ 1): `e(n) = 8·Σ p^{3/2} + 8` over n's prime factors p
//!   with multiplicity (a pass of radix p adds at most `8·p^{3/2}`: its
//!   butterfly's sums of p terms and its twiddle product, each relative to
//!   the line's norm, which a unitary pass keeps);
//! * Bailey's four steps of `n₁·n₂`: `e(n₁) + e(n₂) + 8` (the twiddle product
//!   between the steps);
//! * Bluestein of m points: `6·e(m) + 26` (two transforms of m and the
//!   chirp's, whose magnitude the planner caps at `2·√(2n − 1)`, and three
//!   pointwise products);
//! * the last axis of a real transform of even `n ≥ 512`, computed through
//!   complex lines of n/2 points: `e(n/2) + 8` (the split of the half-length
//!   result into bins);
//! * a normalised transform adds 2 (the scale, rounded, and its product).
//!
//! u is the unit roundoff of the parts (2⁻²⁴ for complex64 and f32, 2⁻⁵³
//! for complex128 and f64); for c2r, ‖x‖₂ is √2 times its operand's norm,
//! the parts that never contribute included.

use super::radix::prime_factors;

/// e(n) of a line computed by passes (n ≤ 1: 8).
pub fn radix_factor(n: usize) -> f64 {
    if n <= 1 {
        return 8.0;
    }
    8.0 * prime_factors(n)
        .iter()
        .map(|&p| (p as f64).powf(1.5))
        .sum::<f64>()
        + 8.0
}

/// e(n) of Bluestein's convolution through m points.
pub fn bluestein_factor(m: usize) -> f64 {
    6.0 * radix_factor(m) + 26.0
}
