//! Byte mutations of valid seeds: bit flips, random bytes, insertions,
//! deletions, truncation, dictionary words inserted or written over, spans
//! duplicated or repeated (which nests a text deeper or lengthens a chain),
//! and numbers replaced by extreme ones.

use crate::rng::Rng;

/// Numbers a mutation may write in place of a number of the seed.
pub const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "255",
    "256",
    "65536",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1099511627776",
    "4611686018427387904",
    "1e308",
    "1e400",
    "-0",
    "0.5",
    "nan",
    "inf",
];

/// One to four random mutations of `base`, with words from `dictionary`.
pub fn mutate(rng: &mut Rng, base: &[u8], dictionary: &[&[u8]]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below_usize(4) {
        mutate_once(rng, &mut v, dictionary);
    }
    v
}

fn mutate_once(rng: &mut Rng, v: &mut Vec<u8>, dictionary: &[&[u8]]) {
    let len = v.len();
    match rng.below_usize(11) {
        0 if len > 0 => {
            let i = rng.below_usize(len);
            v[i] ^= 1 << rng.below_usize(8);
        }
        1 if len > 0 => {
            let i = rng.below_usize(len);
            v[i] = rng.next_u64() as u8;
        }
        2 => {
            let i = rng.below_usize(len + 1);
            v.insert(i, rng.next_u64() as u8);
        }
        3 if len > 0 => {
            let i = rng.below_usize(len);
            let n = 1 + rng.below_usize(16.min(len - i));
            v.drain(i..i + n);
        }
        4 => {
            let cut = rng.below_usize(len + 1);
            v.truncate(cut);
        }
        5 if !dictionary.is_empty() => {
            let word = *rng.pick(dictionary);
            let i = rng.below_usize(len + 1);
            v.splice(i..i, word.iter().copied());
        }
        6 if !dictionary.is_empty() && len > 0 => {
            let word = *rng.pick(dictionary);
            let i = rng.below_usize(len);
            for (k, &b) in word.iter().enumerate() {
                if i + k < v.len() {
                    v[i + k] = b;
                }
            }
        }
        7 if len > 0 => {
            // Duplicate a span in place.
            let i = rng.below_usize(len);
            let n = 1 + rng.below_usize(32.min(len - i));
            let span: Vec<u8> = v[i..i + n].to_vec();
            let at = rng.below_usize(len + 1);
            v.splice(at..at, span);
        }
        8 if len > 0 => {
            // Repeat a short span many times (deep nesting, long chains).
            let i = rng.below_usize(len);
            let n = 1 + rng.below_usize(4.min(len - i));
            let times = *rng.pick(&[16usize, 300, 2000]);
            let span: Vec<u8> = v[i..i + n].repeat(times);
            v.splice(i..i, span);
        }
        9 => {
            // Replace a run of digits with an extreme number.
            let digits: Vec<usize> = (0..len).filter(|&i| v[i].is_ascii_digit()).collect();
            if digits.is_empty() {
                return;
            }
            let i = *rng.pick(&digits);
            let mut j = i;
            while j < len && v[j].is_ascii_digit() {
                j += 1;
            }
            let mut s = i;
            while s > 0 && v[s - 1].is_ascii_digit() {
                s -= 1;
            }
            let n = rng.pick(NUMBERS).as_bytes();
            v.splice(s..j, n.iter().copied());
        }
        _ if len > 1 => {
            // Swap two bytes.
            let i = rng.below_usize(len);
            let j = rng.below_usize(len);
            v.swap(i, j);
        }
        _ => {}
    }
}
