//! splitmix64 (Steele, Lea and Flood, 2014): a tiny deterministic generator,
//! so every run of a test sees the same inputs unless `TESSERA_TEST_SEED` says
//! otherwise.
//!
//! The state advances by the golden-ratio increment [`GOLDEN`] and each output
//! is [`mix`] of the new state. A generator made by [`Rng::new`] with seed `s`
//! gives the same stream as any textbook splitmix64 seeded with `s`.

/// The increment of splitmix64's state: 2^64 / φ, odd.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The seed `seed()` gives when `TESSERA_TEST_SEED` is not set.
pub const DEFAULT_SEED: u64 = 0x7e55_e4a0_5eed_0001;

/// The seed of this run: `TESSERA_TEST_SEED` (decimal or 0x-hex) or
/// [`DEFAULT_SEED`].
///
/// # Panics
///
/// When `TESSERA_TEST_SEED` is set but is not a number.
pub fn seed() -> u64 {
    match std::env::var("TESSERA_TEST_SEED") {
        Ok(s) => {
            parse_seed(&s).unwrap_or_else(|| panic!("TESSERA_TEST_SEED={s:?} is not a number"))
        }
        Err(_) => DEFAULT_SEED,
    }
}

/// A seed written in decimal or as 0x-hex (surrounding white space allowed).
pub fn parse_seed(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// splitmix64's output function: a bijection of u64 that spreads every input
/// bit over every output bit.
pub fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 64-bit FNV-1a hash of a label (for [`Rng::for_label`]).
fn fnv1a(label: &str) -> u64 {
    label.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A splitmix64 generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator whose stream depends on a label (a kernel's name) and a
    /// seed, so one kernel's inputs do not change when another is added.
    pub fn for_label(label: &str, seed: u64) -> Rng {
        Rng(fnv1a(label) ^ seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// The next 32 random bits (the high half of [`Rng::next_u64`]).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `0..n` (0 when n is 0), by the high half of a 128-bit
    /// product (no modulo bias worth the name).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// [`Rng::below`] for sizes and indices.
    pub fn below_usize(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range_i64(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        if span > u64::MAX as u128 {
            return self.next_u64() as i64;
        }
        (lo as i128 + self.below(span as u64) as i128) as i64
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below_usize(xs.len())]
    }

    /// Uniform in [0, 1), a multiple of 2^-53.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A value of random sign and a magnitude spread over 2^-12 .. 2^13
    /// (a full 53-bit significand), so that a different association of a sum
    /// almost surely changes its bits.
    pub fn spread(&mut self) -> f64 {
        let r = self.next_u64();
        let m = 1.0 + (r >> 11) as f64 / (1u64 << 53) as f64;
        let e = ((r >> 3) % 25) as i32 - 12;
        let s = if r & 1 == 1 { -1.0 } else { 1.0 };
        s * m * 2f64.powi(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference values of splitmix64 seeded with 1234567 (from the
    /// generator's published C code, `splitmix64.c` by Vigna).
    #[test]
    fn the_stream_is_splitmix64() {
        let mut r = Rng::new(1234567);
        let want = [
            6457827717110365317u64,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821,
        ];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    #[test]
    fn labels_and_seeds_give_other_streams() {
        let a = Rng::for_label("add f32", 1).next_u64();
        assert_ne!(a, Rng::for_label("add f64", 1).next_u64());
        assert_ne!(a, Rng::for_label("add f32", 2).next_u64());
        assert_eq!(a, Rng::for_label("add f32", 1).next_u64());
    }

    #[test]
    fn seeds_parse_in_decimal_and_hex() {
        assert_eq!(parse_seed(" 42 "), Some(42));
        assert_eq!(parse_seed("0x2a"), Some(42));
        assert_eq!(parse_seed("forty-two"), None);
    }

    #[test]
    fn bounded_draws_stay_in_their_ranges() {
        let mut r = Rng::new(9);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let v = r.below(7) as usize;
            seen[v] = true;
            assert!((-3..=3).contains(&r.range_i64(-3, 3)));
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            let s = r.spread().abs();
            assert!((2f64.powi(-12)..2f64.powi(13)).contains(&s), "{s}");
        }
        assert!(seen.iter().all(|&s| s), "every value of 0..7 drawn");
        assert_eq!(r.below(0), 0);
        assert!(!r.chance(0, 5) && r.chance(5, 5));
        assert_eq!(*r.pick(&[3]), 3);
    }
}
