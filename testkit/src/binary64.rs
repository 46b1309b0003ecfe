//! Exact facts of f64 values: powers of two, and a finite value's integer
//! significand and exponent. Nothing here rounds.

/// 2^k as an f64, for k in [-1074, 1023].
///
/// # Panics
///
/// For k outside that range (no f64 is 2^k).
pub fn pow2(k: i64) -> f64 {
    assert!((-1074..=1023).contains(&k), "2^{k} is not an f64");
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// The unbiased exponent of a finite non-zero f64 (of its leading bit).
///
/// # Panics
///
/// For a zero or a value that is not finite.
pub fn exponent(x: f64) -> i64 {
    let (m, e) = decompose(x);
    assert!(m != 0);
    e + 63 - m.leading_zeros() as i64
}

/// A finite f64 as (integer significand, exponent): |x| = m · 2^e.
///
/// # Panics
///
/// For a value that is not finite.
pub fn decompose(x: f64) -> (u64, i64) {
    assert!(x.is_finite(), "decompose({x})");
    let b = x.to_bits();
    let ef = ((b >> 52) & 0x7ff) as i64;
    let f = b & ((1u64 << 52) - 1);
    if ef == 0 {
        (f, -1074)
    } else {
        (f | (1u64 << 52), ef - 1075)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_significands_and_exponents() {
        assert_eq!(pow2(0), 1.0);
        assert_eq!(pow2(-1074), f64::from_bits(1));
        assert_eq!(pow2(1023), 2f64.powi(1023));
        assert_eq!(pow2(-1), 0.5);
        assert_eq!(decompose(1.5), (3 << 51, -52));
        assert_eq!(decompose(-f64::from_bits(3)), (3, -1074));
        assert_eq!(exponent(1.0), 0);
        assert_eq!(exponent(-0.75), -1);
        assert_eq!(exponent(f64::from_bits(1)), -1074);
        assert_eq!(exponent(f64::MAX), 1023);
    }
}
