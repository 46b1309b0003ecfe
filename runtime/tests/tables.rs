//! The constant tables of `src/math/tables/`, recomputed from first principles
//! and compared, entry by entry, with the data files the runtime compiles.
//!
//! - The Payne–Hanek tables of `trig.rs` hold bits of 2/π. Here π comes from
//!   Machin's formula π = 16·atan(1/5) − 4·atan(1/239), each arctangent summed
//!   as a series of integer quotients whose error is counted, so 2/π·2^N is
//!   known to lie between two integers. Every entry is derived from both; the
//!   derivation is monotone in 2/π, so where the two agree the entry is that of
//!   the exact 2/π (where they did not, the test would stop and say so).
//! - The erfc table of `erf.rs` holds, per piece, the polynomial interpolating
//!   F(x) = erfc(x)·e^(x²) at the Chebyshev nodes, in monomial form. Here F is
//!   summed from its series in fixed point (with enough guard bits to absorb
//!   the cancellation), the interpolant is formed in integer arithmetic, and
//!   each coefficient is rounded to f64 only where its error bound does not
//!   straddle a rounding boundary.
//! - `data_files_are_what_the_generator_writes` checks that each committed
//!   data file is, byte for byte, what the ignored `regenerate_table_files`
//!   writes:
//!   `cargo test -p tessera-runtime --test tables -- --ignored regenerate_table_files`.

use num_bigint::{BigInt, BigUint};
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::path::PathBuf;
use std::sync::OnceLock;

// The tables as the runtime compiles them: the same files, included the same way.
static PIO2_TAB_F32: [u64; 210] = include!("../src/math/tables/pio2_f32.rs");
static PIO2_TAB_F64: [u64; 3888] = include!("../src/math/tables/pio2_f64.rs");
static ERFC_F64: [[f64; 13]; 48] = include!("../src/math/tables/erfc_f64.rs");

const REGENERATE: &str =
    "cargo test -p tessera-runtime --test tables -- --ignored regenerate_table_files";

// ---------------------------------------------------------------------------
// Exact conversions between integers and f64.

/// How a magnitude is cut to 53 significant bits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// Toward zero.
    Truncate,
    /// To nearest, ties to even.
    Nearest,
}

/// `a` cut to 53 significant bits: `(q, shift)` with the result `q << shift`
/// (`q` may reach 2^53 when rounding carries).
fn cut53(a: &BigUint, cut: Cut) -> (u64, u64) {
    let len = a.bits();
    if len <= 53 {
        return (a.to_u64().unwrap(), 0);
    }
    let shift = len - 53;
    let mut q = (a >> shift).to_u64().unwrap();
    if cut == Cut::Nearest {
        let rest = a - (BigUint::from(q) << shift);
        let half = BigUint::one() << (shift - 1);
        if rest > half || (rest == half && q & 1 == 1) {
            q += 1;
        }
    }
    (q, shift)
}

/// The f64 equal to q·2^e, which must be a normal f64 exactly.
fn exact_f64(q: u64, e: i64) -> f64 {
    assert!(q != 0 && q < 1 << 54);
    let (mut q, mut e) = (q, e);
    while q >= 1 << 53 {
        assert!(q & 1 == 0, "{q}·2^{e} is not an f64");
        q >>= 1;
        e += 1;
    }
    while q < 1 << 52 {
        q <<= 1;
        e -= 1;
    }
    let biased = e + 52 + 1023;
    assert!(
        (1..=2046).contains(&biased),
        "2^{e} is outside f64's normal range"
    );
    f64::from_bits(((biased as u64) << 52) | (q & ((1 << 52) - 1)))
}

/// c·2^-s rounded to the nearest f64 (normal results only).
fn nearest_f64(c: &BigInt, s: u64) -> f64 {
    if c.is_zero() {
        return 0.0;
    }
    let (q, shift) = cut53(c.magnitude(), Cut::Nearest);
    let v = exact_f64(q, shift as i64 - s as i64);
    if c.is_negative() {
        -v
    } else {
        v
    }
}

/// The f64 `v` as an integer at scale 2^-s (exact: `v` must be a multiple of 2^-s).
fn f64_fixed(v: f64, s: u64) -> BigInt {
    if v == 0.0 {
        return BigInt::zero();
    }
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    assert!(biased != 0, "subnormal");
    let m = BigInt::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let e = biased - 1075 + s as i64;
    assert!(e >= 0, "{v} is not a multiple of 2^-{s}");
    let m = m << e as u64;
    if v < 0.0 {
        -m
    } else {
        m
    }
}

// ---------------------------------------------------------------------------
// π and 2/π.

/// Σ_k (−1)^k ⌊2^m / (n^(2k+1)·(2k+1))⌋, which is atan(1/n)·2^m within
/// (terms + 1), and the number of terms. ⌊⌊a/b⌋/c⌋ = ⌊a/(bc)⌋, so each term is
/// the floor of its exact value (an error in [0, 1)); the terms left out
/// alternate and fall, so together they are smaller than the first of them,
/// which is below 1.
fn atan_inv(n: u32, m: u64) -> (BigInt, u64) {
    let n2 = BigUint::from(n * n);
    let mut p = (BigUint::one() << m) / n;
    let mut sum = BigInt::zero();
    let mut k = 0u64;
    while !p.is_zero() {
        let term = BigInt::from(&p / (2 * k + 1));
        if k & 1 == 0 {
            sum += term;
        } else {
            sum -= term;
        }
        p /= &n2;
        k += 1;
    }
    (sum, k)
}

/// Two integers that bound π·2^m: (lo, hi), hi − lo below 2^16 for m < 10^4.
fn pi_bounds(m: u64) -> (BigUint, BigUint) {
    let (a5, k5) = atan_inv(5, m);
    let (a239, k239) = atan_inv(239, m);
    let pi = (a5 * 16u32 - a239 * 4u32).to_biguint().unwrap();
    let err = 16 * (k5 + 1) + 4 * (k239 + 1);
    (&pi - err, pi + err)
}

/// Two integers that bound 2/π·2^n: (⌊2^(n+m+1)/hi⌋, ⌈2^(n+m+1)/lo⌉) with π·2^m
/// in [lo, hi] and m = n + 64, so they are a few units apart.
fn two_over_pi_bounds(n: u64) -> (BigUint, BigUint) {
    let m = n + 64;
    let (lo, hi) = pi_bounds(m);
    let num = BigUint::one() << (n + m + 1);
    let b_lo = &num / &hi;
    let b_hi = (&num - 1u32) / &lo + 1u32;
    (b_lo, b_hi)
}

/// π·2^m to within a few units (the middle of its bounds).
fn pi_fixed(m: u64) -> BigInt {
    let (lo, hi) = pi_bounds(m + 20);
    BigInt::from((lo + hi) >> 21u32)
}

// ---------------------------------------------------------------------------
// The Payne–Hanek tables.

/// Bits of 2/π the tables are derived from: 2/π·2^N is bounded by integers.
/// The f64 table's deepest entry reaches about 2^-1190.
const PIO2_BITS: u64 = 1400;

/// Entry `i` of a Payne–Hanek table derived from 2/π ≈ b·2^-N: A = (2/π) mod
/// 2^(1−i), times 2^scale, as `parts` f64 bit patterns: every part but the
/// last is the rest of A cut to 53 significant bits toward zero, the last the
/// rest rounded to nearest. Also returns ⌊b / 2^(N+1−i)⌋, the part of b the
/// modulus drops.
fn pio2_entry(b: &BigUint, i: u64, parts: usize, scale: i64) -> (Vec<u64>, BigUint) {
    let k = PIO2_BITS + 1 - i;
    let mut a = b & ((BigUint::one() << k) - 1u32);
    let mut out = Vec::with_capacity(parts);
    for p in 0..parts {
        let last = p + 1 == parts;
        let (q, shift) = cut53(&a, if last { Cut::Nearest } else { Cut::Truncate });
        out.push(exact_f64(q, shift as i64 - PIO2_BITS as i64 + scale).to_bits());
        if !last {
            a -= BigUint::from(q) << shift;
        }
    }
    (out, b >> k)
}

/// A whole Payne–Hanek table: `entries` entries of `parts` words, entry `i`
/// scaled by 2^scale(i). Each entry is derived from both bounds of 2/π and
/// must come out the same from both (the derivation is monotone in 2/π: the
/// modulus is a subtraction wherever the dropped part agrees, each cut is
/// monotone, and each rest is then a subtraction of the same value).
fn pio2_table(entries: u64, parts: usize, scale: impl Fn(u64) -> i64) -> Vec<u64> {
    let (lo, hi) = two_over_pi_bounds(PIO2_BITS);
    let mut out = Vec::with_capacity(entries as usize * parts);
    for i in 0..entries {
        let (e_lo, d_lo) = pio2_entry(&lo, i, parts, scale(i));
        let (e_hi, d_hi) = pio2_entry(&hi, i, parts, scale(i));
        assert!(
            e_lo == e_hi && d_lo == d_hi,
            "entry {i}: 2/π to {PIO2_BITS} bits does not decide it; raise PIO2_BITS"
        );
        out.extend(e_lo);
    }
    out
}

/// The f32 table, derived: entry i for biased exponents 151 + i (entry 0 for
/// all below), 2 words per entry.
fn pio2_f32() -> &'static [u64] {
    static T: OnceLock<Vec<u64>> = OnceLock::new();
    T.get_or_init(|| pio2_table(105, 2, |_| 0))
}

/// The f64 table, derived: entry i for biased exponents 1076 + i (entry 0 for
/// all below), 4 words per entry, entries past biased exponent 1500 times 2^600.
fn pio2_f64() -> &'static [u64] {
    static T: OnceLock<Vec<u64>> = OnceLock::new();
    T.get_or_init(|| pio2_table(972, 4, |i| if i + 1076 > 1500 { 600 } else { 0 }))
}

// ---------------------------------------------------------------------------
// The erfc table.

/// Bits (below the point) the erfc coefficients are computed to, before the
/// error allowance [`ERFC_SLACK`].
const ERFC_BITS: u64 = 256;
/// log2 of the error allowed on each coefficient, in units of 2^-ERFC_BITS:
/// F to about one unit, the 12-term Chebyshev sums about 2^7 units, the
/// monomial conversion (Σ_j |coefficients of T_j| < 2^15 for j ≤ 11) 2^22 units,
/// so 2^24 is a bound with room to spare.
const ERFC_SLACK: u64 = 24;
/// Pieces: each binade from 1/2 to 32 in eight.
const ERFC_PIECES: usize = 48;
/// Chebyshev nodes per piece (the degree is one less).
const ERFC_NODES: usize = 12;

/// The piece `i`'s binade exponent k and eighth j: x in [2^k(1 + j/8), 2^k(1 + (j+1)/8)].
fn piece(i: usize) -> (i64, i64) {
    (i as i64 / 8 - 1, i as i64 % 8)
}

/// The scale 2^-q piece `i` computes F at: ERFC_BITS + 1.45·x² + 64 bits for
/// x up to the piece's end (see [`erfcx_fixed`]).
fn working_scale(i: usize) -> u64 {
    let (k, j) = piece(i);
    let end = 2f64.powi(k as i32) * (1.0 + (j + 1) as f64 / 8.0);
    ERFC_BITS + (1.45 * end * end).ceil() as u64 + 64
}

/// cos(mπ/24) for m in 0..48 at scale 2^-s, each within a few units: the
/// Taylor series at θ = mπ/24 folded into [0, π].
fn cos_pi_24ths(s: u64) -> Vec<BigInt> {
    let w = s + 16; // guard bits
    let pi = pi_fixed(w);
    (0..48u64)
        .map(|m| {
            let m = if m > 24 { 48 - m } else { m };
            let theta = &pi * m / 24u32;
            let theta2 = (&theta * &theta) >> w;
            let mut term = BigInt::one() << w;
            let mut sum = term.clone();
            let mut k = 0u64;
            while !term.is_zero() {
                term = -((term * &theta2) >> w) / ((2 * k + 1) * (2 * k + 2));
                sum += &term;
                k += 1;
            }
            sum >> 16u32
        })
        .collect()
}

/// 2/√π at scale 2^-s, within a few units.
fn two_over_sqrt_pi(s: u64) -> BigInt {
    let w = s + 16;
    let root = (pi_fixed(w).to_biguint().unwrap() << w).sqrt(); // √π·2^w
    BigInt::from((BigUint::one() << (2 * w + 1)) / root) >> 16u32
}

/// F(x) = erfc(x)·e^(x²) at scale 2^-ERFC_BITS for x = xs·2^-q, with q at
/// least ERFC_BITS + 1.45·x² + 64 and `tsp` = 2/√π at scale 2^-q.
///
/// erf(x) = (2/√π)·e^(−x²)·S(x) with S(x) = Σ_n 2^n·x^(2n+1)/(1·3·…·(2n+1)), a
/// series of positive terms, so F(x) = e^(x²) − (2/√π)·S(x). Both sums reach
/// about e^(x²) and cancel down to F < 1: the working scale q carries
/// 1.45·x² ≥ log2(e^(x²)) bits more than the result needs, and 64 more for the
/// truncations (a few units of 2^-q per term, a few thousand terms, each grown
/// at most e^(x²)-fold by the recurrences).
fn erfcx_fixed(xs: &BigInt, q: u64, tsp: &BigInt) -> BigInt {
    let y = (xs * xs) >> q; // x²
    let y_max = (&y >> q).to_u64().unwrap() + 1;
    let mut u = BigInt::one() << q; // x^(2n)/n!
    let mut t = xs.clone(); // 2^n x^(2n+1)/(2n+1)!!
    let mut e = u.clone();
    let mut s = t.clone();
    let mut n = 0u64;
    // Past n = 2x² each term is below half the one before, so once both are
    // zero the terms left out add to less than a unit or two.
    while !(u.is_zero() && t.is_zero()) || n <= 2 * y_max {
        n += 1;
        u = ((u * &y) >> q) / n;
        t = ((t * &y) >> (q - 1)) / (2 * n + 1);
        e += &u;
        s += &t;
    }
    let f = e - ((tsp * s) >> q);
    f >> (q - ERFC_BITS)
}

/// The coefficients of T_0..T_11 in powers of v: `t[j][p]`.
fn chebyshev_monomials() -> Vec<Vec<i64>> {
    let mut t = vec![vec![0i64; ERFC_NODES]; ERFC_NODES];
    t[0][0] = 1;
    t[1][1] = 1;
    for j in 2..ERFC_NODES {
        for p in 0..ERFC_NODES {
            let up = if p > 0 { 2 * t[j - 1][p - 1] } else { 0 };
            t[j][p] = up - t[j - 2][p];
        }
    }
    t
}

/// Rounds c·2^-ERFC_BITS, known within 2^ERFC_SLACK units, to the nearest f64,
/// insisting that the whole interval rounds alike.
fn certified_nearest(c: &BigInt, what: &str) -> f64 {
    let slack = BigInt::one() << ERFC_SLACK;
    let lo = nearest_f64(&(c - &slack), ERFC_BITS);
    let hi = nearest_f64(&(c + &slack), ERFC_BITS);
    assert_eq!(
        lo.to_bits(),
        hi.to_bits(),
        "{what}: too close to a rounding boundary for ERFC_BITS; raise it"
    );
    lo
}

/// The erfc table, derived. Row i < 47: c0..c11, the monomial coefficients
/// (in v ∈ [−1, 1], x = mid + v·w/2) of the degree-11 polynomial through F at
/// the 12 Chebyshev nodes of the first kind v_t = cos((2t+1)π/24), each
/// rounded to nearest; then c0 − round(c0), rounded to nearest. Row 47 repeats
/// row 46.
fn erfc_f64() -> &'static [[f64; 13]] {
    static T: OnceLock<Vec<[f64; 13]>> = OnceLock::new();
    T.get_or_init(|| {
        let n = ERFC_NODES as u64;
        let q_max = (0..ERFC_PIECES - 1).map(working_scale).max().unwrap();
        let cos = cos_pi_24ths(q_max);
        let tsp_max = two_over_sqrt_pi(q_max);
        let tm = chebyshev_monomials();
        let mut rows = Vec::with_capacity(ERFC_PIECES);
        for i in 0..ERFC_PIECES - 1 {
            let (k, j) = piece(i);
            let q = working_scale(i);
            let tsp = &tsp_max >> (q_max - q);
            // x = mid + v·2^(k−4), mid = 2^k·(16 + 2j + 1)/16.
            let mid = BigInt::from(17 + 2 * j) << (q as i64 + k - 4) as u64;
            let f: Vec<BigInt> = (0..n)
                .map(|t| {
                    let v = &cos[(2 * t + 1) as usize] >> (q_max - q);
                    let x = &mid + (v >> (4 - k) as u64);
                    erfcx_fixed(&x, q, &tsp)
                })
                .collect();
            // 12·a_j = (2 − [j = 0])·Σ_t F(v_t)·T_j(v_t), T_j(v_t) = cos(j(2t+1)π/24).
            let a12: Vec<BigInt> = (0..n)
                .map(|jj| {
                    let mut sum = BigInt::zero();
                    for (t, ft) in f.iter().enumerate() {
                        let m = (jj * (2 * t as u64 + 1)) % 48;
                        sum += (ft * &cos[m as usize]) >> q_max;
                    }
                    if jj == 0 {
                        sum
                    } else {
                        sum * 2u32
                    }
                })
                .collect();
            let mut row = [0f64; 13];
            for p in 0..ERFC_NODES {
                let c12: BigInt = a12.iter().zip(&tm).map(|(a, tj)| a * tj[p]).sum();
                let c = c12 / 12u32;
                row[p] = certified_nearest(&c, &format!("row {i} c{p}"));
                if p == 0 {
                    let rest = &c - f64_fixed(row[0], ERFC_BITS);
                    row[12] = certified_nearest(&rest, &format!("row {i} low part of c0"));
                }
            }
            rows.push(row);
        }
        rows.push(rows[ERFC_PIECES - 2]);
        rows
    })
}

// ---------------------------------------------------------------------------
// The data files.

const HEADER_PIO2_F32: &str = "\
The Payne–Hanek table of the f32 sin, cos and tan (PIO2_TAB_F32 in
../trig.rs): bits of 2/π for reducing an argument of any size.

Entry i (words 2i and 2i+1, f64 bit patterns, i in 0..105) holds
A_i = (2/π) mod 2^(1−i) as a0 + a1: a0 is A_i cut to 53 significant bits
toward zero, a1 = A_i − a0 rounded to the nearest f64, so a0 + a1 is A_i to
about 2^-107 relative. Entries 0 and 1 are alike (2/π < 1).

How the code reads it: an f32 x with biased exponent be is M·2^e with M
an integer and e = be − 150; bits of 2/π of weight 2^(2−e) and above
contribute multiples of 4 to x·2/π, which sin and cos do not see, so
x·A_i (i = be − 151, clamped to [0, 104]) is x·2/π modulo 4. Entry 104
serves be = 255 (infinity and NaN, whose results do not come from it).
Only arguments beyond 2^16 (sine, cosine) or from 2^25 (tangent) take
their results from it (below 2^25 the sine's and cosine's middle form
reads words 0 and 1 as constants); arguments up to 2^16 (sine, cosine)
or below 2^25 (tangent) reduce without it.

How it was made: runtime/tests/tables.rs derives it from π by Machin's
formula in integer arithmetic (2/π bounded to 1400 bits, each entry proved
by both bounds) and checks every entry against this file. The file is
written by
";

const HEADER_PIO2_F64: &str = "\
The Payne–Hanek table of the f64 sin, cos and tan (PIO2_TAB_F64 in
../trig.rs): bits of 2/π for reducing an argument of any size.

Entry i (words 4i to 4i+3, f64 bit patterns, i in 0..972) holds
A_i = (2/π) mod 2^(1−i), times 2^600 for i > 424, as a0 + a1 + a2 + a3:
a0, a1 and a2 are what is left of A_i cut in turn to 53 significant bits
toward zero, a3 the rest rounded to the nearest f64, so the sum is A_i to
about 2^-212 relative. Entries 0 and 1 are alike (2/π < 1).

How the code reads it: an f64 x with biased exponent be is M·2^e with M
an integer and e = be − 1075; bits of 2/π of weight 2^(2−e) and above
contribute multiples of 4 to x·2/π, so x·A_i (i = be − 1076, clamped to
[0, 971]) is x·2/π modulo 4. For be > 1500 (i > 424) the entry is stored
times 2^600 and x is multiplied by 2^-600 first: unscaled, the low parts
of the deepest entries (near 2^-1190) would be below the f64 range. Entry 971 serves
be = 2047 (infinity and NaN, whose results do not come from it). With SMALL,
words 0 to 3 are read as constants (every |x| below 2^53).

How it was made: runtime/tests/tables.rs derives it from π by Machin's
formula in integer arithmetic (2/π bounded to 1400 bits, each entry proved
by both bounds) and checks every entry against this file. The file is
written by
";

const HEADER_ERFC_F64: &str = "\
The piecewise polynomials of the f64 erf and erfc (ERFC_F64 in ../erf.rs):
F(x) = erfc(x)·e^(x²) on [1/2, 32).

Row i (i in 0..48) is the piece x in [2^k(1 + j/8), 2^k(1 + (j+1)/8)) with
k = i/8 − 1 and j = i mod 8, midpoint mid and width w = 2^(k−3). Its 13
values are c0..c11, then the low part of c0: P(v) = c0 + c1·v + … + c11·v^11
with v = (x − mid)·2/w in [−1, 1] is the polynomial that equals F at the 12
Chebyshev nodes of the first kind v = cos((2t+1)π/24), t = 0..11; each
coefficient is the exact one rounded to the nearest f64, and the 13th value
is c0 minus its rounding, rounded to the nearest f64. Row 47 repeats row 46:
neither is read (erfc clamps x to 27.5, row 45; erf to 6).

How the code reads it: i = (bits of x >> 49) − 8176, the biased exponent and
the top three fraction bits, clamped to [0, 47]; v from the same bits; P by
Horner from c11 down, c0 and its low part added last as a double-word.

How it was made: interpolation at fixed nodes is a function of F alone, so
the table is recomputed exactly. runtime/tests/tables.rs sums F from its
series, e^(x²) − (2/√π)·Σ 2^n·x^(2n+1)/(1·3·…·(2n+1)), in fixed point with
guard bits for the cancellation, forms the interpolant in integer
arithmetic, rounds each coefficient only where its error bound cannot
straddle a rounding boundary, and checks every entry against this file.
(The values were first made by the same interpolation in 160-bit
arithmetic; the test reproduces every one of them.) The file is written by
";

/// The data file's header as `//` lines, ending with the command.
fn header(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.is_empty() {
            out.push_str("//\n");
        } else {
            out.push_str("// ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(&format!("// `{REGENERATE}`.\n"));
    out.push_str("// Do not edit it by hand.\n");
    out
}

fn render_words(head: &str, words: &[u64]) -> String {
    let mut out = header(head);
    out.push_str("[\n");
    for w in words {
        out.push_str(&format!("    {w:#018x},\n"));
    }
    out.push_str("]\n");
    out
}

fn render_rows(head: &str, rows: &[[f64; 13]]) -> String {
    let mut out = header(head);
    out.push_str("[\n");
    for row in rows {
        out.push_str("    [\n");
        for v in row {
            out.push_str(&format!("        {v:?},\n"));
        }
        out.push_str("    ],\n");
    }
    out.push_str("]\n");
    out
}

/// Each data file: its path under src/math/tables/ and its derived content.
fn data_files() -> Vec<(&'static str, String)> {
    vec![
        ("pio2_f32.rs", render_words(HEADER_PIO2_F32, pio2_f32())),
        ("pio2_f64.rs", render_words(HEADER_PIO2_F64, pio2_f64())),
        ("erfc_f64.rs", render_rows(HEADER_ERFC_F64, erfc_f64())),
    ]
}

fn tables_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/math/tables")
}

// ---------------------------------------------------------------------------
// The tests.

/// The machinery against values it does not compute: π and 2/π rounded to
/// f64 are the standard library's constants, cos(π/3) = 1/2, cos(π/4)² = 1/2,
/// and F(1/2)·e^(−1/4) = erfc(1/2) = 0.4795001221869534623…, whose nearest
/// f64 is 0x3fdeb02147ce245c (mpmath at 60 digits).
#[test]
fn the_arithmetic_reproduces_known_constants() {
    let (lo, hi) = pi_bounds(200);
    assert_eq!(nearest_f64(&BigInt::from(lo), 200), std::f64::consts::PI);
    assert_eq!(nearest_f64(&BigInt::from(hi), 200), std::f64::consts::PI);
    let (lo, hi) = two_over_pi_bounds(200);
    assert!(&hi - &lo <= BigUint::from(4u32));
    assert_eq!(
        nearest_f64(&BigInt::from(lo), 200),
        std::f64::consts::FRAC_2_PI
    );
    let s = 300;
    let cos = cos_pi_24ths(s);
    let half = BigInt::one() << (s - 1);
    assert!((&cos[8] - &half).abs() < BigInt::from(16));
    assert!((((&cos[6] * &cos[6]) >> s) - &half).abs() < BigInt::from(16));
    assert_eq!(nearest_f64(&cos[0], s), 1.0);
    assert_eq!(nearest_f64(&cos[24], s), -1.0);
    assert_eq!(
        nearest_f64(&two_over_sqrt_pi(s), s),
        std::f64::consts::FRAC_2_SQRT_PI
    );
    let q = 400;
    let f = erfcx_fixed(&(BigInt::one() << (q - 1)), q, &two_over_sqrt_pi(q));
    // erfc(1/2) = F(1/2)·e^(−1/4); e^(−1/4) by its series at scale 2^-ERFC_BITS.
    let mut term = BigInt::one() << ERFC_BITS;
    let mut e = term.clone();
    for n in 1..80u32 {
        term = -term / (4 * n);
        e += &term;
    }
    let erfc_half = (f * e) >> ERFC_BITS;
    assert_eq!(
        nearest_f64(&erfc_half, ERFC_BITS).to_bits(),
        0x3fdeb02147ce245c
    );
}

fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    assert_eq!(a.len(), b.len(), "table lengths differ");
    a.iter().zip(b).position(|(x, y)| x != y)
}

#[test]
fn pio2_f32_table_is_two_over_pi() {
    let want = pio2_f32();
    if let Some(k) = first_difference(&PIO2_TAB_F32, want) {
        panic!(
            "PIO2_TAB_F32 word {k} (entry {}, part {}) is {:#018x}; 2/π gives {:#018x}",
            k / 2,
            k % 2,
            PIO2_TAB_F32[k],
            want[k]
        );
    }
}

#[test]
fn pio2_f64_table_is_two_over_pi() {
    let want = pio2_f64();
    if let Some(k) = first_difference(&PIO2_TAB_F64, want) {
        panic!(
            "PIO2_TAB_F64 word {k} (entry {}, part {}) is {:#018x}; 2/π gives {:#018x}",
            k / 4,
            k % 4,
            PIO2_TAB_F64[k],
            want[k]
        );
    }
}

#[test]
fn erfc_f64_table_is_the_chebyshev_interpolant() {
    let want = erfc_f64();
    for (i, (got, want)) in ERFC_F64.iter().zip(want).enumerate() {
        let got: Vec<u64> = got.iter().map(|v| v.to_bits()).collect();
        let want: Vec<u64> = want.iter().map(|v| v.to_bits()).collect();
        if let Some(p) = first_difference(&got, &want) {
            panic!(
                "ERFC_F64 row {i} value {p} is {:?}; the interpolant gives {:?}",
                f64::from_bits(got[p]),
                f64::from_bits(want[p])
            );
        }
    }
}

#[test]
fn data_files_are_what_the_generator_writes() {
    for (name, want) in data_files() {
        let path = tables_dir().join(name);
        let got =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            got == want,
            "{} differs from what the generator writes; run `{REGENERATE}` and review the diff",
            path.display()
        );
    }
}

/// Writes the data files (ignored: run it by name to regenerate them).
#[test]
#[ignore]
fn regenerate_table_files() {
    std::fs::create_dir_all(tables_dir()).unwrap();
    for (name, text) in data_files() {
        std::fs::write(tables_dir().join(name), text).unwrap();
    }
}
