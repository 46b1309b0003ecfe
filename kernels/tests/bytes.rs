//! The byte and text kernels (`tessera::bytes`) against naive models written
//! here (plain loops, `std::str::from_utf8`, `format!`), on every tier this
//! CPU runs, over random inputs drawn from small and full alphabets (so
//! that matches are common and rare), lengths around every register and
//! block size, and sub-slices at every alignment; UTF-8 exhaustively over every
//! 1-, 2- and 3-byte input and hex over every digit pair, placed across register
//! boundaries. Refusals leave the destination as it was.

mod common;

use std::cmp::Ordering;
use tessera::bytes;
use tessera::{Error, Exec};
use tessera_testkit::rng::Rng;

/// A random byte string: from an alphabet of `k` bytes (`k = 0`: any).
fn draw(rng: &mut Rng, n: usize, k: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            if k == 0 {
                rng.next_u64() as u8
            } else {
                b'a' + rng.below(k) as u8
            }
        })
        .collect()
}

/// Lengths around 32, 64, 128 and 256 (registers, unrolled steps) and some
/// others.
fn length(rng: &mut Rng) -> usize {
    let base = *rng.pick(&[
        0usize, 1, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300, 1000,
    ]);
    base + rng.below_usize(3)
}

/// An input at a random offset of a larger buffer (its alignment varies).
fn offset_copy(rng: &mut Rng, v: &[u8]) -> (Vec<u8>, usize) {
    let off = rng.below_usize(64);
    let mut buf = vec![0xa5u8; off];
    buf.extend_from_slice(v);
    (buf, off)
}

fn execs() -> Vec<(tessera::Tier, Exec)> {
    common::tiers()
        .into_iter()
        .map(|t| (t, Exec::on(t)))
        .collect()
}

#[test]
fn searches_and_counts_match_plain_loops() {
    let mut rng = Rng::new(1);
    for case in 0..3000 {
        let alpha = *rng.pick(&[0u64, 2, 4, 26]);
        let n = length(&mut rng);
        let v = draw(&mut rng, n, alpha);
        let (buf, off) = offset_copy(&mut rng, &v);
        let b = &buf[off..];
        let c = if alpha == 0 {
            rng.next_u64() as u8
        } else {
            b'a' + rng.below(alpha + 1) as u8
        };
        let set_len = rng.below_usize(if case % 5 == 0 { 40 } else { 5 });
        let set: Vec<u8> = (0..set_len)
            .map(|_| {
                if alpha == 0 || rng.chance(1, 4) {
                    rng.next_u64() as u8
                } else {
                    b'a' + rng.below(alpha) as u8
                }
            })
            .collect();
        let inset = |x: &u8| set.contains(x);
        let want_all: Vec<usize> = (0..n).filter(|&i| b[i] == c).collect();
        for (t, e) in execs() {
            let at = || format!("case {case}, tier {t:?}, n {n}, c {c}, set {set:?}");
            assert_eq!(
                bytes::index_byte(b, c, &e).unwrap(),
                b.iter().position(|&x| x == c),
                "{}",
                at()
            );
            assert_eq!(
                bytes::last_index_byte(b, c, &e).unwrap(),
                b.iter().rposition(|&x| x == c),
                "{}",
                at()
            );
            assert_eq!(
                bytes::count_byte(b, c, &e).unwrap(),
                want_all.len(),
                "{}",
                at()
            );
            assert_eq!(
                bytes::index_any(b, &set, &e).unwrap(),
                b.iter().position(inset),
                "{}",
                at()
            );
            assert_eq!(
                bytes::last_index_any(b, &set, &e).unwrap(),
                b.iter().rposition(inset),
                "{}",
                at()
            );
            assert_eq!(
                bytes::count_any(b, &set, &e).unwrap(),
                b.iter().filter(|x| inset(x)).count(),
                "{}",
                at()
            );
            assert_eq!(
                bytes::index_not_any(b, &set, &e).unwrap(),
                b.iter().position(|x| !inset(x)),
                "{}",
                at()
            );
            assert_eq!(
                bytes::last_index_not_any(b, &set, &e).unwrap(),
                b.iter().rposition(|x| !inset(x)),
                "{}",
                at()
            );
            // index_all into a destination of exactly the count, of the
            // whole length, and one short (refused, untouched).
            for room in [want_all.len(), n + 2] {
                let mut dst = vec![usize::MAX; room];
                let k = bytes::index_all(b, c, &mut dst, &e).unwrap();
                assert_eq!(&dst[..k], &want_all[..], "{}", at());
                assert!(dst[k..].iter().all(|&x| x == usize::MAX), "{}", at());
            }
            if !want_all.is_empty() {
                let mut dst = vec![7usize; want_all.len() - 1];
                let r = bytes::index_all(b, c, &mut dst, &e);
                assert!(matches!(r, Err(Error::Length { .. })), "{}: {r:?}", at());
                assert!(dst.iter().all(|&x| x == 7), "{}", at());
            }
        }
    }
}

#[test]
fn one_hit_is_found_at_every_place_and_alignment() {
    // The vector loops start at a register-aligned address after an
    // unaligned first (or, backwards, last) register: one hit at each place
    // near both ends and through the middle, the haystack at every offset
    // of a line, and every vector tier held to the plain loops.
    for n in [255usize, 256, 300, 700] {
        let mut places: Vec<usize> = (0..n.min(140)).collect();
        places.extend((140..n.saturating_sub(140)).step_by(13));
        places.extend(n.saturating_sub(140).max(140)..n);
        for off in 0..64 {
            let mut buf = vec![b'x'; off + n];
            for &at in &places {
                buf[off + at] = b'y';
                let b = &buf[off..];
                for (t, e) in execs() {
                    let say = || format!("n {n}, offset {off}, hit at {at}, {t:?}");
                    assert_eq!(
                        bytes::index_byte(b, b'y', &e).unwrap(),
                        Some(at),
                        "{}",
                        say()
                    );
                    let last = bytes::last_index_byte(b, b'y', &e).unwrap();
                    assert_eq!(last, Some(at), "{}", say());
                    assert_eq!(bytes::count_byte(b, b'y', &e).unwrap(), 1, "{}", say());
                    let not = bytes::index_not_any(b, b"x", &e).unwrap();
                    assert_eq!(not, Some(at), "{}", say());
                }
                buf[off + at] = b'x';
            }
        }
    }
}

#[test]
fn every_byte_set_is_classified_exactly() {
    // Every byte value against sets built from each high nibble and from
    // random members: the nibble tables cover all 256 bytes.
    let all: Vec<u8> = (0..=255u8).collect();
    let mut rng = Rng::new(2);
    for round in 0..200 {
        let k = if round < 16 {
            16
        } else {
            1 + rng.below_usize(200)
        };
        let set: Vec<u8> = if round < 16 {
            (0..16).map(|l| (round as u8) << 4 | l).collect()
        } else {
            (0..k).map(|_| rng.next_u64() as u8).collect()
        };
        let mut hay = all.clone();
        hay.extend_from_slice(&all);
        for (t, e) in execs() {
            let want = hay.iter().filter(|x| set.contains(x)).count();
            assert_eq!(
                bytes::count_any(&hay, &set, &e).unwrap(),
                want,
                "tier {t:?} set {set:?}"
            );
        }
    }
}

#[test]
fn comparisons_match_slices() {
    let mut rng = Rng::new(3);
    for case in 0..3000 {
        let n = length(&mut rng);
        let a = draw(&mut rng, n, 0);
        let mut b = a.clone();
        match rng.below(4) {
            0 => {}
            1 if n > 0 => {
                let i = rng.below_usize(n);
                b[i] = b[i].wrapping_add(1 + rng.below(255) as u8);
            }
            2 => b.truncate(rng.below_usize(n + 1)),
            _ => b.push(rng.next_u64() as u8),
        }
        let (ba, oa) = offset_copy(&mut rng, &a);
        let (bb, ob) = offset_copy(&mut rng, &b);
        let (a, b) = (&ba[oa..], &bb[ob..]);
        let want_prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        for (t, e) in execs() {
            let at = format!("case {case}, tier {t:?}");
            assert_eq!(bytes::equal(a, b, &e).unwrap(), a == b, "{at}");
            assert_eq!(bytes::compare(a, b, &e).unwrap(), a.cmp(b), "{at}");
            assert_eq!(bytes::common_prefix(a, b, &e).unwrap(), want_prefix, "{at}");
        }
    }
    let e = Exec::default();
    assert_eq!(bytes::compare(b"ab", b"abc", &e).unwrap(), Ordering::Less);
    assert_eq!(
        bytes::compare(&[0x80], &[0x7f], &e).unwrap(),
        Ordering::Greater
    );
}

#[test]
fn bit_counts_match_count_ones() {
    let mut rng = Rng::new(4);
    for case in 0..600 {
        let n = if case % 10 == 0 {
            1900 + rng.below_usize(4200)
        } else {
            length(&mut rng)
        };
        let a = draw(&mut rng, n, 0);
        let nb = n + rng.below_usize(3);
        let b = draw(&mut rng, nb, 0);
        let pop: u64 = a.iter().map(|x| x.count_ones() as u64).sum();
        let ham: u64 = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x ^ y).count_ones() as u64)
            .sum();
        let wa: Vec<u64> = (0..n / 8).map(|_| rng.next_u64()).collect();
        let wb: Vec<u64> = (0..n / 8 + 1).map(|_| rng.next_u64()).collect();
        let hw: u64 = wa
            .iter()
            .zip(&wb)
            .map(|(x, y)| (x ^ y).count_ones() as u64)
            .sum();
        for (t, e) in execs() {
            assert_eq!(
                bytes::popcount(&a, &e).unwrap(),
                pop,
                "case {case} tier {t:?}"
            );
            assert_eq!(
                bytes::hamming(&a, &b, &e).unwrap(),
                ham,
                "case {case} tier {t:?}"
            );
            assert_eq!(
                bytes::hamming_words(&wa, &wb, &e).unwrap(),
                hw,
                "case {case} tier {t:?}"
            );
        }
    }
    // All ones: the byte counters' largest sums.
    let ones = vec![0xffu8; 1 << 16];
    for (t, e) in execs() {
        assert_eq!(bytes::popcount(&ones, &e).unwrap(), 8 << 16, "tier {t:?}");
    }
}

#[test]
fn ascii_kernels_match_std() {
    let mut rng = Rng::new(5);
    for case in 0..3000 {
        let n = length(&mut rng);
        // Mostly ASCII letters and punctuation, sometimes a high byte.
        let mut v: Vec<u8> = (0..n).map(|_| 0x20 + rng.below(0x60) as u8).collect();
        if n > 0 && rng.chance(1, 2) {
            let i = rng.below_usize(n);
            v[i] = 0x80 | rng.next_u64() as u8;
        }
        let (buf, off) = offset_copy(&mut rng, &v);
        let b = &buf[off..];
        let u: Vec<u16> = b
            .iter()
            .map(|&x| {
                if x >= 0x80 && rng.chance(1, 2) {
                    0x100 * (1 + rng.below(255) as u16)
                } else {
                    x as u16
                }
            })
            .collect();
        let other: Vec<u8> = b
            .iter()
            .map(|&x| {
                if rng.chance(1, 2) {
                    x.to_ascii_uppercase()
                } else {
                    x
                }
            })
            .collect();
        let mut other2 = other.clone();
        if n > 0 && rng.chance(1, 3) {
            let i = rng.below_usize(n);
            other2[i] ^= 1 << rng.below(8);
        }
        let (old, new) = (0x20 + rng.below(0x60) as u8, rng.next_u64() as u8);
        for (t, e) in execs() {
            let at = format!("case {case}, tier {t:?}");
            let first = b.iter().position(|&x| x >= 0x80).unwrap_or(n);
            assert_eq!(bytes::index_non_ascii(b, &e).unwrap(), first, "{at}");
            assert_eq!(bytes::is_ascii(b, &e).unwrap(), b.is_ascii(), "{at}");
            let first16 = u.iter().position(|&x| x >= 0x80).unwrap_or(n);
            assert_eq!(bytes::index_non_ascii16(&u, &e).unwrap(), first16, "{at}");
            let mut d = vec![0u8; n];
            bytes::to_upper_ascii(b, &mut d, &e).unwrap();
            assert_eq!(d, b.to_ascii_uppercase(), "{at}");
            bytes::to_lower_ascii(b, &mut d, &e).unwrap();
            assert_eq!(d, b.to_ascii_lowercase(), "{at}");
            assert_eq!(
                bytes::equal_fold_ascii(b, &other2, &e).unwrap(),
                b.eq_ignore_ascii_case(&other2),
                "{at}"
            );
            assert!(bytes::equal_fold_ascii(b, &other, &e).unwrap(), "{at}");
            bytes::replace_byte(b, &mut d, old, new, &e).unwrap();
            let want: Vec<u8> = b.iter().map(|&x| if x == old { new } else { x }).collect();
            assert_eq!(d, want, "{at}");
            let mut short = vec![9u8; n + 1];
            assert!(matches!(
                bytes::to_upper_ascii(b, &mut short, &e),
                Err(Error::Length { .. })
            ));
            assert!(matches!(
                bytes::replace_byte(b, &mut short, old, new, &e),
                Err(Error::Length { .. })
            ));
            assert!(short.iter().all(|&x| x == 9), "{at}");
        }
    }
    // Every byte value through the case maps.
    let all: Vec<u8> = (0..=255u8).cycle().take(1024).collect();
    for (t, e) in execs() {
        let mut d = vec![0u8; all.len()];
        bytes::to_upper_ascii(&all, &mut d, &e).unwrap();
        assert_eq!(d, all.to_ascii_uppercase(), "tier {t:?}");
        bytes::to_lower_ascii(&all, &mut d, &e).unwrap();
        assert_eq!(d, all.to_ascii_lowercase(), "tier {t:?}");
        let mut rot = all.clone();
        rot.rotate_left(32);
        let want = all.eq_ignore_ascii_case(&rot);
        assert_eq!(
            bytes::equal_fold_ascii(&all, &rot, &e).unwrap(),
            want,
            "tier {t:?}"
        );
    }
}

/// `std`'s answer: the valid prefix's length.
fn std_valid_up_to(b: &[u8]) -> usize {
    match std::str::from_utf8(b) {
        Ok(_) => b.len(),
        Err(e) => e.valid_up_to(),
    }
}

#[test]
fn utf8_every_one_and_two_byte_input_across_register_edges() {
    // Each input at offsets that put it before, across and after the
    // 32- and 64-byte register boundaries of a 200-byte ASCII buffer.
    let offsets = [
        0usize, 29, 30, 31, 32, 61, 62, 63, 64, 95, 127, 190, 197, 198,
    ];
    let tiers = execs();
    for v in 0..=0xffffu32 {
        let pair = [(v >> 8) as u8, v as u8];
        for len in [1usize, 2] {
            if len == 1 && pair[1] != 0 {
                continue;
            }
            for &o in &offsets {
                let mut buf = vec![b'x'; 200];
                buf[o..o + len].copy_from_slice(&pair[..len]);
                let want = std_valid_up_to(&buf);
                for (t, e) in &tiers {
                    let got = bytes::utf8_valid_up_to(&buf, e).unwrap();
                    assert_eq!(got, want, "{:02x?} at {o}, tier {t:?}", &pair[..len]);
                }
            }
        }
    }
}

#[test]
fn utf8_random_text_and_corruptions() {
    let mut rng = Rng::new(6);
    let tiers = execs();
    for case in 0..4000 {
        // Characters of every encoded length.
        let mut s = String::new();
        let chars = length(&mut rng) / 2 + 1;
        for _ in 0..chars {
            let c = match rng.below(5) {
                0 | 1 => char::from(0x20 + rng.below(0x5f) as u8),
                2 => char::from_u32(0x80 + rng.below(0x780) as u32).unwrap(),
                3 => char::from_u32(0x800 + rng.below(0xd000) as u32).unwrap_or('\u{fffd}'),
                _ => char::from_u32(0x10000 + rng.below(0x100000) as u32).unwrap(),
            };
            s.push(c);
        }
        let mut b = s.into_bytes();
        let n = b.len();
        match rng.below(5) {
            0 => {}
            1 => b[rng.below_usize(n)] = rng.next_u64() as u8,
            2 => b.truncate(rng.below_usize(n + 1)),
            3 => {
                let i = rng.below_usize(n);
                b[i] = *rng.pick(&[0xc0u8, 0xc1, 0xf5, 0xff, 0xed, 0xe0, 0xf0, 0xf4, 0x80, 0xbf]);
            }
            _ => b.insert(rng.below_usize(n + 1), 0x80 | rng.below(0x40) as u8),
        }
        let (buf, off) = offset_copy(&mut rng, &b);
        let b = &buf[off..];
        let want = std_valid_up_to(b);
        for (t, e) in &tiers {
            assert_eq!(
                bytes::utf8_valid_up_to(b, e).unwrap(),
                want,
                "case {case}, tier {t:?}: {b:02x?}"
            );
            assert_eq!(bytes::valid_utf8(b, e).unwrap(), want == b.len());
        }
    }
}

#[test]
fn utf8_every_three_byte_input() {
    // 2^24 inputs at two register edges, every tier: a few seconds.
    let tiers = execs();
    for v in 0..1u32 << 24 {
        let tri = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        if tri[0] < 0x80 && tri[1] < 0x80 {
            continue; // covered by the two-byte sweep
        }
        for o in [30usize, 62] {
            let mut buf = vec![b'x'; 128];
            buf[o..o + 3].copy_from_slice(&tri);
            let want = std_valid_up_to(&buf);
            for (t, e) in &tiers {
                assert_eq!(
                    bytes::utf8_valid_up_to(&buf, e).unwrap(),
                    want,
                    "{tri:02x?} at {o}, tier {t:?}"
                );
            }
        }
    }
}

/// Buffers past the caches (9 MiB of digits): the same bytes as a
/// byte-at-a-time model, at destinations that start at several offsets
/// within a cache line.
#[test]
fn hex_of_large_buffers_matches_the_model() {
    let mut rng = Rng::new(77);
    let n = (9 << 20) / 2 + 37;
    let src: Vec<u8> = (0..n).map(|_| rng.next_u32() as u8).collect();
    let digits = b"0123456789abcdef";
    let want: Vec<u8> = src
        .iter()
        .flat_map(|&b| [digits[(b >> 4) as usize], digits[(b & 15) as usize]])
        .collect();
    for (t, e) in execs() {
        for off in [0usize, 1, 2, 5] {
            let mut out = vec![0u8; 2 * n + off];
            let w = bytes::hex_encode(&src, &mut out[off..], &e).unwrap();
            assert_eq!(w, 2 * n);
            assert!(out[off..] == want[..], "encode, tier {t:?} offset {off}");
            assert!(out[..off].iter().all(|&b| b == 0), "wrote before dst");
            let mut back = vec![0u8; n + off];
            let r = bytes::hex_decode(&want, &mut back[off..], &e).unwrap();
            assert_eq!(r, n);
            assert!(back[off..] == src[..], "decode, tier {t:?} offset {off}");
        }
    }
}

#[test]
fn hex_round_trips_and_every_digit_pair() {
    let tiers = execs();
    // Every pair of bytes as two digits, among valid digits at every edge.
    let hex_value = |c: u8| (c as char).to_digit(16);
    for v in 0..=0xffffu32 {
        let pair = [(v >> 8) as u8, v as u8];
        for o in [0usize, 30, 62, 126] {
            let mut src = vec![b'7'; 160];
            src[o..o + 2].copy_from_slice(&pair);
            let want: Result<Vec<u8>, usize> = match (hex_value(pair[0]), hex_value(pair[1])) {
                (Some(h), Some(l)) => Ok({
                    let mut w = vec![0x77u8; 80];
                    w[o / 2] = (h * 16 + l) as u8;
                    w
                }),
                (None, _) => Err(o),
                (_, None) => Err(o + 1),
            };
            for (t, e) in &tiers {
                let mut dst = vec![0xeeu8; 80];
                match (bytes::hex_decode(&src, &mut dst, e), &want) {
                    (Ok(80), Ok(w)) => assert_eq!(&dst, w, "{pair:02x?} at {o}, tier {t:?}"),
                    (Err(Error::Encoding { offset, .. }), Err(at)) => {
                        assert_eq!(offset, *at, "{pair:02x?} at {o}, tier {t:?}");
                        assert!(dst.iter().all(|&x| x == 0xee), "written before a refusal");
                    }
                    (got, _) => panic!("{pair:02x?} at {o}, tier {t:?}: {got:?}, want {want:?}"),
                }
            }
        }
    }
    let mut rng = Rng::new(7);
    for case in 0..2000 {
        let n = length(&mut rng);
        let v = draw(&mut rng, n, 0);
        let want: String = v.iter().map(|x| format!("{x:02x}")).collect();
        for (t, e) in &tiers {
            let mut enc = vec![0u8; 2 * n + 3];
            assert_eq!(bytes::hex_encode(&v, &mut enc, e).unwrap(), 2 * n);
            assert_eq!(&enc[..2 * n], want.as_bytes(), "case {case}, tier {t:?}");
            assert!(enc[2 * n..].iter().all(|&x| x == 0));
            // Decoding the uppercase form gives the bytes back.
            let upper = want.to_ascii_uppercase();
            let mut dec = vec![0u8; n];
            assert_eq!(bytes::hex_decode(upper.as_bytes(), &mut dec, e).unwrap(), n);
            assert_eq!(dec, v, "case {case}, tier {t:?}");
            if n > 0 {
                let mut short = vec![1u8; 2 * n - 1];
                assert!(matches!(
                    bytes::hex_encode(&v, &mut short, e),
                    Err(Error::Length { .. })
                ));
                assert!(short.iter().all(|&x| x == 1));
                let mut small = vec![1u8; n - 1];
                assert!(matches!(
                    bytes::hex_decode(want.as_bytes(), &mut small, e),
                    Err(Error::Length { .. })
                ));
                assert!(small.iter().all(|&x| x == 1));
                let odd = &want.as_bytes()[..2 * n - 1];
                match bytes::hex_decode(odd, &mut dec, e) {
                    Err(Error::Encoding { offset, .. }) => assert_eq!(offset, 2 * n - 2),
                    r => panic!("odd length accepted: {r:?}"),
                }
            }
        }
    }
    assert_eq!(bytes::hex_decoded_len(10).unwrap(), 5);
    assert!(bytes::hex_decoded_len(11).is_err());
}

/// Non-overlapping occurrences from the front, by windows.
fn naive_count(h: &[u8], n: &[u8]) -> usize {
    if n.is_empty() {
        return h.len() + 1;
    }
    let (mut k, mut i) = (0, 0);
    while i + n.len() <= h.len() {
        if &h[i..i + n.len()] == n {
            k += 1;
            i += n.len();
        } else {
            i += 1;
        }
    }
    k
}

#[test]
fn substring_search_matches_windows() {
    let mut rng = Rng::new(8);
    let tiers = execs();
    for case in 0..3000 {
        let alpha = *rng.pick(&[1u64, 2, 3, 26]);
        let n = length(&mut rng);
        let hay = draw(&mut rng, n, alpha);
        let m = rng.below_usize(if case % 7 == 0 { 70 } else { 6 });
        let needle = if n >= m && rng.chance(1, 2) {
            let s = rng.below_usize(n - m + 1);
            hay[s..s + m].to_vec()
        } else {
            draw(&mut rng, m, alpha)
        };
        let first = if m == 0 {
            Some(0)
        } else {
            hay.windows(m).position(|w| w == needle)
        };
        let last = if m == 0 {
            Some(n)
        } else {
            hay.windows(m).rposition(|w| w == needle)
        };
        let count = naive_count(&hay, &needle);
        for (t, e) in &tiers {
            let at = format!("case {case}, tier {t:?}, n {n}, needle {needle:?}");
            assert_eq!(bytes::index(&hay, &needle, e).unwrap(), first, "{at}");
            assert_eq!(bytes::last_index(&hay, &needle, e).unwrap(), last, "{at}");
            assert_eq!(bytes::count_seq(&hay, &needle, e).unwrap(), count, "{at}");
        }
    }
}

#[test]
fn substring_search_on_repetitive_input_is_linear_and_exact() {
    // A needle of repeated bytes ending in another over a haystack of the
    // repeated byte: every position a candidate (the linear fallback).
    let tiers = execs();
    // The needle's odd byte at its end, its start or its middle (every
    // position a candidate for both directions' first-and-last filter, so
    // the budget hands over to the linear search).
    for (n, m, odd) in [
        (20_000usize, 300usize, 299usize),
        (5000, 17, 16),
        (4096, 4096, 4095),
        (20_000, 300, 0),
        (20_000, 300, 150),
        (5000, 17, 8),
        (3000, 3, 1),
    ] {
        let mut hay = vec![b'a'; n];
        let mut needle = vec![b'a'; m];
        needle[odd] = b'b';
        for at in [None, Some(n - m), Some((n - m) / 2), Some(0)] {
            if let Some(a) = at {
                hay[a + odd] = b'b';
            }
            let first = hay.windows(m).position(|w| w == needle);
            for (t, e) in &tiers {
                assert_eq!(
                    bytes::index(&hay, &needle, e).unwrap(),
                    first,
                    "n {n} m {m} tier {t:?}"
                );
                assert_eq!(
                    bytes::last_index(&hay, &needle, e).unwrap(),
                    hay.windows(m).rposition(|w| w == needle)
                );
            }
            if let Some(a) = at {
                hay[a + odd] = b'a';
            }
        }
    }
}

/// RFC 4648's alphabets, written out here.
const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A bit-accumulator encoder: 6 bits at a time from the front, the last
/// symbol's low bits zero, `=` to a multiple of four where padded.
fn model_b64(v: &[u8], url: bool, pad: bool) -> Vec<u8> {
    let alpha = if url { URL } else { STD };
    let (mut acc, mut bits, mut out) = (0u32, 0u32, Vec::new());
    for &b in v {
        acc = acc << 8 | b as u32;
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(alpha[(acc >> bits & 63) as usize]);
        }
    }
    if bits > 0 {
        out.push(alpha[(acc << (6 - bits) & 63) as usize]);
    }
    while pad && out.len() % 4 != 0 {
        out.push(b'=');
    }
    out
}

fn cfg(url: bool, pad: bool) -> bytes::Base64 {
    bytes::Base64 { url, pad }
}

#[test]
fn base64_rfc4648_vectors() {
    // RFC 4648 §10.
    let vectors: [(&str, &str); 7] = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];
    for (t, e) in execs() {
        for (plain, text) in vectors {
            let mut enc = vec![0u8; 8];
            let k = bytes::base64_encode(plain.as_bytes(), &mut enc, bytes::Base64::STANDARD, &e)
                .unwrap();
            assert_eq!(&enc[..k], text.as_bytes(), "tier {t:?}");
            let mut dec = vec![0u8; 6];
            let k = bytes::base64_decode(text.as_bytes(), &mut dec, bytes::Base64::STANDARD, &e)
                .unwrap();
            assert_eq!(&dec[..k], plain.as_bytes(), "tier {t:?}");
            let bare = text.trim_end_matches('=');
            let k = bytes::base64_decode(
                bare.as_bytes(),
                &mut dec,
                bytes::Base64::STANDARD_NO_PAD,
                &e,
            )
            .unwrap();
            assert_eq!(&dec[..k], plain.as_bytes(), "tier {t:?}");
        }
    }
}

#[test]
fn base64_round_trips_match_the_bit_model() {
    let mut rng = Rng::new(9);
    let tiers = execs();
    for case in 0..3000 {
        let n = length(&mut rng) * if case % 10 == 0 { 7 } else { 1 };
        let v = draw(&mut rng, n, 0);
        let (url, pad) = (rng.chance(1, 2), rng.chance(1, 2));
        let c = cfg(url, pad);
        let want = model_b64(&v, url, pad);
        assert_eq!(bytes::base64_encoded_len(n, c).unwrap(), want.len());
        assert_eq!(bytes::base64_decoded_len(&want, c).unwrap(), n);
        let (buf, off) = offset_copy(&mut rng, &want);
        let text = &buf[off..];
        for (t, e) in &tiers {
            let at = format!("case {case}, tier {t:?}, n {n}, url {url}, pad {pad}");
            let mut enc = vec![0xeeu8; want.len() + 5];
            assert_eq!(
                bytes::base64_encode(&v, &mut enc, c, e).unwrap(),
                want.len(),
                "{at}"
            );
            assert_eq!(&enc[..want.len()], &want[..], "{at}");
            assert!(enc[want.len()..].iter().all(|&x| x == 0xee), "{at}");
            let mut dec = vec![0xeeu8; n + 3];
            assert_eq!(
                bytes::base64_decode(text, &mut dec, c, e).unwrap(),
                n,
                "{at}"
            );
            assert_eq!(&dec[..n], &v[..], "{at}");
            assert!(dec[n..].iter().all(|&x| x == 0xee), "{at}");
            if !want.is_empty() {
                let mut short = vec![3u8; want.len() - 1];
                assert!(matches!(
                    bytes::base64_encode(&v, &mut short, c, e),
                    Err(Error::Length { .. })
                ));
                assert!(short.iter().all(|&x| x == 3));
            }
            if n > 0 {
                let mut small = vec![3u8; n - 1];
                assert!(matches!(
                    bytes::base64_decode(text, &mut small, c, e),
                    Err(Error::Length { .. })
                ));
                assert!(small.iter().all(|&x| x == 3));
            }
        }
    }
}

/// The model's verdict on a text: Ok(bytes) or the offset of the first
/// error, by the documented rules (length and padding first, then the
/// first non-symbol, then the last symbol's unused bits).
fn model_decode(s: &[u8], url: bool, pad: bool) -> Result<Vec<u8>, usize> {
    let alpha = if url { URL } else { STD };
    let n = s.len();
    let body = if pad {
        if !n.is_multiple_of(4) {
            return Err(n);
        }
        let p = s.iter().rev().take(3).take_while(|&&c| c == b'=').count();
        if p == 3 {
            return Err(n - 3);
        }
        n - p
    } else {
        if n % 4 == 1 {
            return Err(n - 1);
        }
        n
    };
    let mut vals = Vec::new();
    for (i, c) in s[..body].iter().enumerate() {
        match alpha.iter().position(|a| a == c) {
            Some(v) => vals.push(v as u32),
            None => return Err(i),
        }
    }
    let (mut acc, mut bits, mut out) = (0u32, 0u32, Vec::new());
    for v in vals {
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if acc & ((1 << bits) - 1) != 0 {
        return Err(body - 1);
    }
    Ok(out)
}

#[test]
fn base64_every_byte_in_every_place_of_a_group_and_errors() {
    let tiers = execs();
    // Each byte value at each of positions 0..4 of a group placed at
    // register edges, inside a valid text, for all four variants.
    for (url, pad) in [(false, true), (true, false), (false, false), (true, true)] {
        let c = cfg(url, pad);
        for b in 0..=255u8 {
            for o in [0usize, 28, 29, 30, 31, 60, 63, 124, 125, 126, 127] {
                let mut s = vec![b'Q'; 128];
                s[o] = b;
                let want = model_decode(&s, url, pad);
                for (t, e) in &tiers {
                    let mut dst = vec![0xeeu8; 96];
                    match (bytes::base64_decode(&s, &mut dst, c, e), &want) {
                        (Ok(k), Ok(w)) => {
                            assert_eq!(&dst[..k], &w[..], "byte {b:#x} at {o}, tier {t:?}")
                        }
                        (Err(Error::Encoding { offset, .. }), Err(at)) => {
                            assert_eq!(
                                offset, *at,
                                "byte {b:#x} at {o}, tier {t:?}, url {url} pad {pad}"
                            );
                            assert!(dst.iter().all(|&x| x == 0xee));
                        }
                        (got, _) => {
                            panic!("byte {b:#x} at {o}, tier {t:?}: {got:?}, want {want:?}")
                        }
                    }
                }
            }
        }
    }
    // Random texts with mutations: padding in the wrong place, truncation,
    // non-zero trailing bits, foreign bytes.
    let mut rng = Rng::new(10);
    for case in 0..4000 {
        let n = length(&mut rng);
        let (url, pad) = (rng.chance(1, 2), rng.chance(1, 2));
        let mut s = model_b64(&draw(&mut rng, n, 0), url, pad);
        if !s.is_empty() {
            match rng.below(5) {
                0 => {
                    let i = rng.below_usize(s.len());
                    s[i] = *rng.pick(&[b'=', b'+', b'-', b'/', b'_', b' ', b'\n', 0x80]);
                }
                1 => s.truncate(rng.below_usize(s.len())),
                2 => {
                    let last = s.iter().rposition(|&c| c != b'=').unwrap();
                    s[last] = STD[rng.below_usize(64)];
                }
                3 => s.push(b'='),
                _ => {}
            }
        }
        let want = model_decode(&s, url, pad);
        for (t, e) in &tiers {
            let mut dst = vec![0xeeu8; s.len()];
            let got = bytes::base64_decode(&s, &mut dst, cfg(url, pad), e);
            match (got, &want) {
                (Ok(k), Ok(w)) => assert_eq!(&dst[..k], &w[..], "case {case}, tier {t:?}"),
                (Err(Error::Encoding { offset, .. }), Err(at)) => {
                    assert_eq!(
                        offset,
                        *at,
                        "case {case}, tier {t:?}: {:?}",
                        String::from_utf8_lossy(&s)
                    );
                    assert!(dst.iter().all(|&x| x == 0xee));
                }
                (got, _) => panic!("case {case}, tier {t:?}: {got:?}, want {want:?}"),
            }
        }
    }
}

/// The documented parse rules, in i128: optional sign (signed), one or
/// more digits, within the range; `Err(offset in the field)`.
fn model_parse(f: &[u8], signed: bool) -> Result<i128, usize> {
    let (neg, start) = match f.first() {
        Some(b'-') if signed => (true, 1),
        Some(b'+') if signed => (false, 1),
        _ => (false, 0),
    };
    if f.len() == start {
        return Err(start);
    }
    let (lo, hi) = if signed {
        (i64::MIN as i128, i64::MAX as i128)
    } else {
        (0, u64::MAX as i128)
    };
    let mut v: i128 = 0;
    for (j, &c) in f.iter().enumerate().skip(start) {
        if !c.is_ascii_digit() {
            return Err(j);
        }
        v = v * 10 + (c - b'0') as i128;
        let s = if neg { -v } else { v };
        if s < lo || s > hi {
            return Err(j);
        }
    }
    Ok(if neg { -v } else { v })
}

/// Every field length from 1 to 22 digits (the word-at-a-time reader
/// takes up to 16, in one or two words), with and without a sign, with
/// digit bytes on both sides of the field (a word read across the field's
/// edge must not count them), and each near-digit byte at each position.
#[test]
fn parse_ints_every_length_and_bad_byte_position() {
    let mut rng = Rng::new(5);
    let near = [b'/', b':', b'?', b'@', b' ', 0xB0, 0xB9, 0x3F, 0x00, b'a'];
    for len in 1..=22usize {
        for sign in [&b""[..], b"-", b"+"] {
            for (before, after) in [
                (&b""[..], &b""[..]),
                (b"987654321;", b";12345678"),
                (b"7;", b""),
            ] {
                for bad in 0..=len {
                    // bad == len: a valid field.
                    let mut field = sign.to_vec();
                    for j in 0..len {
                        field.push(if j == bad {
                            *rng.pick(&near)
                        } else if rng.chance(1, 4) {
                            b'0'
                        } else {
                            b'0' + rng.below(10) as u8
                        });
                    }
                    let src = [before, &field[..], after].concat();
                    let seps: Vec<usize> = (0..src.len()).filter(|&i| src[i] == b';').collect();
                    let start = before.len();
                    for signed in [true, false] {
                        let want = model_parse(&field, signed);
                        let at = format!("{:?} signed {signed}", String::from_utf8_lossy(&src));
                        // The fields before and after are valid in both forms.
                        let k = seps.len() + 1;
                        let field_index = usize::from(!before.is_empty());
                        for (t, e) in execs() {
                            let got = if signed {
                                let mut d = vec![0i64; k];
                                bytes::parse_ints(&src, &seps, &mut d, &e)
                                    .map(|_| d[field_index] as i128)
                            } else {
                                let mut d = vec![0u64; k];
                                bytes::parse_uints(&src, &seps, &mut d, &e)
                                    .map(|_| d[field_index] as i128)
                            };
                            match (got, want) {
                                (Ok(v), Ok(w)) => assert_eq!(v, w, "{at} tier {t:?}"),
                                (Err(Error::Encoding { offset, .. }), Err(o)) => {
                                    assert_eq!(offset, start + o, "{at} tier {t:?}")
                                }
                                (g, w) => panic!("{at} tier {t:?}: {g:?}, want {w:?}"),
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn parse_and_format_ints_match_the_rules() {
    let mut rng = Rng::new(11);
    let e = Exec::default();
    for case in 0..3000 {
        let k = 1 + rng.below_usize(20);
        let signed = rng.chance(1, 2);
        let mut fields: Vec<Vec<u8>> = (0..k)
            .map(|_| {
                let v: i128 = match rng.below(6) {
                    0 => *rng.pick(&[
                        0i128,
                        i64::MIN as i128,
                        i64::MAX as i128,
                        u64::MAX as i128,
                        -1,
                    ]),
                    1 => rng.next_u64() as i128,
                    2 => rng.next_u64() as i64 as i128,
                    _ => rng.range_i64(-1000, 1000) as i128,
                };
                let mut s = v.to_string().into_bytes();
                if rng.chance(1, 10) {
                    s.insert(usize::from(s[0] == b'-'), b'0');
                }
                if rng.chance(1, 20) && s[0] != b'-' {
                    s.insert(0, b'+');
                }
                s
            })
            .collect();
        if rng.chance(1, 4) {
            let f = rng.below_usize(k);
            match rng.below(4) {
                0 => fields[f].clear(),
                1 => fields[f] = b"-".to_vec(),
                2 => fields[f].push(b'9'),
                _ => {
                    let i = rng.below_usize(fields[f].len() + 1);
                    fields[f].insert(i, *rng.pick(&[b' ', b'x', b'.', b'+', 0xff]));
                }
            }
        }
        let src = fields.join(&b';');
        let seps: Vec<usize> = (0..src.len()).filter(|&i| src[i] == b';').collect();
        // The model, field by field: the first error, or every value.
        let mut want: Result<Vec<i128>, usize> = Ok(Vec::new());
        let mut start = 0;
        for f in &fields {
            match (model_parse(f, signed), &mut want) {
                (Ok(v), Ok(w)) => w.push(v),
                (Err(j), Ok(_)) => want = Err(start + j),
                _ => {}
            }
            start += f.len() + 1;
        }
        for (t, e) in execs() {
            let at = format!(
                "case {case}, tier {t:?}, {:?}",
                String::from_utf8_lossy(&src)
            );
            if signed {
                let mut dst = vec![7i64; k + 1];
                match (bytes::parse_ints(&src, &seps, &mut dst, &e), &want) {
                    (Ok(n), Ok(w)) => {
                        assert_eq!(n, k, "{at}");
                        assert_eq!(
                            dst[..k].iter().map(|&x| x as i128).collect::<Vec<_>>(),
                            *w,
                            "{at}"
                        );
                    }
                    (Err(Error::Encoding { offset, .. }), Err(o)) => {
                        assert_eq!(offset, *o, "{at}");
                        assert!(dst.iter().all(|&x| x == 7), "{at}");
                    }
                    (got, _) => panic!("{at}: {got:?}, want {want:?}"),
                }
            } else {
                let mut dst = vec![7u64; k];
                match (bytes::parse_uints(&src, &seps, &mut dst, &e), &want) {
                    (Ok(n), Ok(w)) => {
                        assert_eq!(n, k, "{at}");
                        assert_eq!(
                            dst.iter().map(|&x| x as i128).collect::<Vec<_>>(),
                            *w,
                            "{at}"
                        );
                    }
                    (Err(Error::Encoding { offset, .. }), Err(o)) => {
                        assert_eq!(offset, *o, "{at}");
                        assert!(dst.iter().all(|&x| x == 7), "{at}");
                    }
                    (got, _) => panic!("{at}: {got:?}, want {want:?}"),
                }
            }
        }
        // Formatting: as `to_string` joined by the separator.
        let vals: Vec<i64> = (0..k)
            .map(|_| rng.next_u64() as i64 >> rng.below(64))
            .collect();
        let text = vals
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(bytes::format_ints_len(&vals), text.len());
        let mut out = vec![0u8; text.len() + 2];
        assert_eq!(
            bytes::format_ints(&vals, b',', &mut out, &e).unwrap(),
            text.len()
        );
        assert_eq!(&out[..text.len()], text.as_bytes());
        let mut short = vec![5u8; text.len() - 1];
        assert!(matches!(
            bytes::format_ints(&vals, b',', &mut short, &e),
            Err(Error::Length { .. })
        ));
        assert!(short.iter().all(|&x| x == 5));
    }
    // Separators that do not ascend or lie past the end are refused.
    let mut dst = [0i64; 3];
    assert!(matches!(
        bytes::parse_ints(b"1,2,3", &[3, 1], &mut dst, &e),
        Err(Error::Attribute { .. })
    ));
    assert!(matches!(
        bytes::parse_ints(b"1,2", &[5], &mut dst, &e),
        Err(Error::Attribute { .. })
    ));
    assert!(matches!(
        bytes::parse_ints(b"1,2,3", &[1, 3], &mut dst[..1], &e),
        Err(Error::Length { .. })
    ));
    assert_eq!(dst, [0; 3]);
}

#[test]
fn run_starts_match_neighbours() {
    let mut rng = Rng::new(12);
    for case in 0..500 {
        let n = length(&mut rng);
        let a8 = draw(&mut rng, n, 3);
        let a32: Vec<i32> = a8.iter().map(|&x| x as i32 - 98).collect();
        let a64: Vec<i64> = a8.iter().map(|&x| (x as i64) << 40).collect();
        let want: Vec<bool> = (0..n).map(|i| i == 0 || a8[i] != a8[i - 1]).collect();
        for (t, e) in execs() {
            let mut d = vec![false; n];
            bytes::run_starts(&a8, &mut d, &e).unwrap();
            assert_eq!(d, want, "case {case} tier {t:?}");
            bytes::run_starts(&a32, &mut d, &e).unwrap();
            assert_eq!(d, want, "case {case} tier {t:?}");
            bytes::run_starts(&a64, &mut d, &e).unwrap();
            assert_eq!(d, want, "case {case} tier {t:?}");
            let mut short = vec![false; n + 1];
            assert!(matches!(
                bytes::run_starts(&a8, &mut short, &e),
                Err(Error::Length { .. })
            ));
        }
    }
}

#[test]
fn bt601_planes_every_colour() {
    // All 2^24 colours, against the stated Q8 formulas and within one step
    // of BT.601's real weights (0.299, 0.587, 0.114; Cb, Cr by 0.5/(1 − w)).
    let n = 1usize << 24;
    let r: Vec<u8> = (0..n).map(|i| (i >> 16) as u8).collect();
    let g: Vec<u8> = (0..n).map(|i| (i >> 8) as u8).collect();
    let b: Vec<u8> = (0..n).map(|i| i as u8).collect();
    for (t, e) in execs() {
        let (mut y, mut u, mut v) = (vec![0u8; n], vec![0u8; n], vec![0u8; n]);
        bytes::grayscale(&r, &g, &b, &mut y, &e).unwrap();
        bytes::rgb_to_uv(&r, &g, &b, &mut u, &mut v, &e).unwrap();
        for i in 0..n {
            let (rr, gg, bb) = (r[i] as i64, g[i] as i64, b[i] as i64);
            let wy = (77 * rr + 150 * gg + 29 * bb + 128).div_euclid(256);
            let wu = (128 + (-43 * rr - 85 * gg + 128 * bb + 128).div_euclid(256)).min(255);
            let wv = (128 + (128 * rr - 107 * gg - 21 * bb + 128).div_euclid(256)).min(255);
            assert_eq!(
                (y[i] as i64, u[i] as i64, v[i] as i64),
                (wy, wu, wv),
                "rgb {rr} {gg} {bb}, tier {t:?}"
            );
            let (fr, fg, fb) = (rr as f64, gg as f64, bb as f64);
            let ry = 0.299 * fr + 0.587 * fg + 0.114 * fb;
            let ru = 128.0 + 0.5 * (fb - ry) / (1.0 - 0.114);
            let rv = 128.0 + 0.5 * (fr - ry) / (1.0 - 0.299);
            assert!(
                (y[i] as f64 - ry).abs() <= 1.0,
                "luma {rr} {gg} {bb}: {} vs {ry}",
                y[i]
            );
            assert!(
                (u[i] as f64 - ru.min(255.0)).abs() <= 1.5,
                "U {rr} {gg} {bb}: {} vs {ru}",
                u[i]
            );
            assert!(
                (v[i] as f64 - rv.min(255.0)).abs() <= 1.5,
                "V {rr} {gg} {bb}: {} vs {rv}",
                v[i]
            );
        }
        let mut short = vec![0u8; n - 1];
        assert!(matches!(
            bytes::grayscale(&r, &g, &b, &mut short, &e),
            Err(Error::Length { .. })
        ));
    }
}

/// Bit packing one bit at a time: bit j of value i to stream bit i·bits + j.
fn model_pack(v: &[u32], bits: u32) -> Vec<u32> {
    let total = v.len() * bits as usize;
    let mut w = vec![0u32; total.div_ceil(32)];
    for (i, &x) in v.iter().enumerate() {
        for j in 0..bits as usize {
            let s = i * bits as usize + j;
            w[s / 32] |= (x >> j & 1) << (s % 32);
        }
    }
    w
}

#[test]
fn bit_packing_matches_the_bit_model_at_every_width() {
    let mut rng = Rng::new(21);
    let tiers = execs();
    for bits in 0..=32u32 {
        for n in [0usize, 1, 5, 31, 32, 33, 63, 64, 65, 100, 1000, 1027, 4099] {
            let mask = if bits == 32 {
                u32::MAX
            } else {
                (1u32 << bits) - 1
            };
            let v: Vec<u32> = (0..n)
                .map(|i| match i % 4 {
                    0 => mask,
                    1 => 0,
                    _ => rng.next_u32() & mask,
                })
                .collect();
            let want = model_pack(&v, bits);
            assert_eq!(bytes::bit_packed_words(n, bits).unwrap(), want.len());
            for (t, e) in &tiers {
                let at = format!("bits {bits} n {n} tier {t:?}");
                let mut dst = vec![0xdead_beefu32; want.len() + 2];
                let w = bytes::bit_pack_u32(&v, bits, &mut dst, e).unwrap();
                assert_eq!(&dst[..w], &want[..], "pack {at}");
                assert_eq!(
                    &dst[w..],
                    &[0xdead_beef; 2],
                    "pack wrote past its words, {at}"
                );
                let mut back = vec![7u32; n];
                bytes::bit_unpack_u32(&want, bits, &mut back, e).unwrap();
                assert_eq!(back, v, "unpack {at}");
            }
        }
    }
}

#[test]
fn bit_packing_refusals_write_nothing() {
    let e = Exec::default();
    let mut dst = vec![9u32; 8];
    assert!(matches!(
        bytes::bit_pack_u32(&[1, 2], 33, &mut dst, &e),
        Err(Error::Attribute { .. })
    ));
    match bytes::bit_pack_u32(&[1, 2, 300, 4], 8, &mut dst, &e) {
        Err(Error::Encoding { offset, .. }) => assert_eq!(offset, 2),
        r => panic!("a 9-bit value in 8 bits gave {r:?}"),
    }
    assert!(matches!(
        bytes::bit_pack_u32(&[1; 100], 3, &mut dst, &e),
        Err(Error::Length { expected: 10, .. })
    ));
    assert_eq!(dst, vec![9u32; 8]);
    let mut out = vec![5u32; 11];
    assert!(matches!(
        bytes::bit_unpack_u32(&[0; 3], 9, &mut out, &e),
        Err(Error::Length { expected: 4, .. })
    ));
    assert_eq!(out, vec![5u32; 11]);
    assert!(matches!(
        bytes::bit_packed_words(usize::MAX, 2),
        Err(Error::Overflow { .. })
    ));
}

/// LEB128 one byte at a time.
fn model_varint(v: u64, out: &mut Vec<u8>) {
    let mut v = v;
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[test]
fn zigzag_and_varints_match_their_definitions() {
    let mut rng = Rng::new(22);
    let tiers = execs();
    // Zigzag: 0, -1, 1, -2 … to 0, 1, 2, 3 …, every i8 and i16, edges and
    // random i32/i64.
    let all8: Vec<i8> = (i8::MIN..=i8::MAX).collect();
    let all16: Vec<i16> = (i16::MIN..=i16::MAX).collect();
    let z = |x: i128| if x >= 0 { 2 * x } else { -2 * x - 1 };
    let mut w32: Vec<i32> = vec![0, -1, 1, i32::MIN, i32::MAX];
    w32.extend((0..500).map(|_| rng.next_u32() as i32));
    let mut w64: Vec<i64> = vec![0, -1, 1, i64::MIN, i64::MAX];
    w64.extend((0..500).map(|_| rng.next_u64() as i64));
    for (t, e) in &tiers {
        let mut u8s = vec![0u8; all8.len()];
        bytes::zigzag_encode(&all8, &mut u8s, e).unwrap();
        for (&x, &u) in all8.iter().zip(&u8s) {
            assert_eq!(u as i128, z(x as i128), "i8 {x} on {t:?}");
        }
        let mut back = vec![0i8; all8.len()];
        bytes::zigzag_decode(&u8s, &mut back, e).unwrap();
        assert_eq!(back, all8);
        let mut u16s = vec![0u16; all16.len()];
        bytes::zigzag_encode(&all16, &mut u16s, e).unwrap();
        assert!(all16
            .iter()
            .zip(&u16s)
            .all(|(&x, &u)| u as i128 == z(x as i128)));
        let mut back = vec![0i16; all16.len()];
        bytes::zigzag_decode(&u16s, &mut back, e).unwrap();
        assert_eq!(back, all16);
        let mut u32s = vec![0u32; w32.len()];
        bytes::zigzag_encode(&w32, &mut u32s, e).unwrap();
        assert!(w32
            .iter()
            .zip(&u32s)
            .all(|(&x, &u)| u as i128 == z(x as i128)));
        let mut back = vec![0i32; w32.len()];
        bytes::zigzag_decode(&u32s, &mut back, e).unwrap();
        assert_eq!(back, w32);
        let mut u64s = vec![0u64; w64.len()];
        bytes::zigzag_encode(&w64, &mut u64s, e).unwrap();
        assert!(w64
            .iter()
            .zip(&u64s)
            .all(|(&x, &u)| u as i128 == z(x as i128)));
        let mut back = vec![0i64; w64.len()];
        bytes::zigzag_decode(&u64s, &mut back, e).unwrap();
        assert_eq!(back, w64);
        assert!(matches!(
            bytes::zigzag_encode(&w64, &mut u64s[1..], e),
            Err(Error::Length { .. })
        ));
    }
    // Varints: values at every width boundary 2^(7k) − 1, 2^(7k), and random.
    let mut v64: Vec<u64> = vec![0, u64::MAX];
    for k in 1..10 {
        v64.extend([(1u64 << (7 * k)) - 1, 1u64 << (7 * k)]);
    }
    v64.extend((0..300).map(|_| rng.next_u64() >> rng.below(64)));
    let v32: Vec<u32> = v64.iter().map(|&v| v as u32).collect();
    for (t, e) in &tiers {
        for (vals, wide) in [
            (v64.clone(), true),
            (v32.iter().map(|&v| v as u64).collect(), false),
        ] {
            let mut want = Vec::new();
            let mut lens = Vec::new();
            for &v in &vals {
                let before = want.len();
                model_varint(v, &mut want);
                lens.push((want.len() - before) as u8);
            }
            let mut got_lens = vec![0u8; vals.len()];
            let mut dst = vec![0xeeu8; want.len() + 3];
            let (size, w, n) = if wide {
                bytes::varint_lens(&vals, &mut got_lens, e).unwrap();
                let w = bytes::varint_encode(&vals, &mut dst, e).unwrap();
                let mut back = vec![0u64; vals.len()];
                let n = bytes::varint_decode(&want, &mut back, e).unwrap();
                assert_eq!(back, vals, "u64 decode on {t:?}");
                (bytes::varint_size(&vals, e).unwrap(), w, n)
            } else {
                let narrow: Vec<u32> = vals.iter().map(|&v| v as u32).collect();
                bytes::varint_lens(&narrow, &mut got_lens, e).unwrap();
                let w = bytes::varint_encode(&narrow, &mut dst, e).unwrap();
                let mut back = vec![0u32; vals.len()];
                let n = bytes::varint_decode(&want, &mut back, e).unwrap();
                assert_eq!(back, narrow, "u32 decode on {t:?}");
                (bytes::varint_size(&narrow, e).unwrap(), w, n)
            };
            assert_eq!(got_lens, lens, "widths on {t:?}");
            assert_eq!((size, w, n), (want.len(), want.len(), vals.len()));
            assert_eq!(&dst[..w], &want[..], "encode on {t:?}");
            assert_eq!(&dst[w..], &[0xee; 3]);
            assert_eq!(bytes::varint_count(&want, e).unwrap(), vals.len());
        }
    }
}

#[test]
fn varint_decoding_refuses_malformed_input_where_it_starts() {
    let e = Exec::default();
    let dec32 = |s: &[u8]| {
        let mut d = vec![77u32; 8];
        let r = bytes::varint_decode(s, &mut d, &e);
        if r.is_err() {
            assert_eq!(d, vec![77u32; 8], "a refusal wrote");
        }
        r.map(|n| d[..n].to_vec())
    };
    let dec64 = |s: &[u8]| {
        let mut d = vec![77u64; 8];
        let r = bytes::varint_decode(s, &mut d, &e);
        if r.is_err() {
            assert_eq!(d, vec![77u64; 8], "a refusal wrote");
        }
        r.map(|n| d[..n].to_vec())
    };
    let offset = |r: Result<Vec<u32>, Error>| match r {
        Err(Error::Encoding { offset, .. }) => offset,
        r => panic!("expected a refusal, got {r:?}"),
    };
    // Redundant zero groups are read as the value.
    assert_eq!(dec32(&[0x80, 0x00, 0x05]).unwrap(), vec![0, 5]);
    assert_eq!(
        dec32(&[0xff, 0xff, 0xff, 0xff, 0x0f]).unwrap(),
        vec![u32::MAX]
    );
    // Past 32 bits in the fifth byte, past five bytes, cut short.
    assert_eq!(offset(dec32(&[1, 0xff, 0xff, 0xff, 0xff, 0x10])), 5);
    assert_eq!(offset(dec32(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00])), 4);
    assert_eq!(offset(dec32(&[3, 0x80])), 2);
    assert_eq!(
        dec64(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).unwrap(),
        vec![u64::MAX]
    );
    assert!(matches!(
        dec64(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]),
        Err(Error::Encoding { offset: 9, .. })
    ));
    // A destination too short for the values.
    let mut d = vec![1u32; 1];
    assert!(matches!(
        bytes::varint_decode(&[1, 2], &mut d, &e),
        Err(Error::Length { expected: 2, .. })
    ));
    assert_eq!(d, vec![1]);
    let mut out = vec![0u8; 2];
    assert!(matches!(
        bytes::varint_encode(&[300u32, 1], &mut out, &e),
        Err(Error::Length { expected: 3, .. })
    ));
    assert_eq!(out, vec![0, 0]);
}

#[test]
fn bitwise_maps_widen_and_narrow_match_plain_loops() {
    let mut rng = Rng::new(23);
    let tiers = execs();
    for _ in 0..300 {
        let n = length(&mut rng);
        let a = draw(&mut rng, n, 0);
        let b = draw(&mut rng, n, 0);
        let (ab, off) = offset_copy(&mut rng, &a);
        let a = &ab[off..];
        for (t, e) in &tiers {
            let at = format!("n {n} tier {t:?}");
            type Call = fn(&[u8], &[u8], &mut [u8], &Exec) -> Result<(), Error>;
            type Model = fn(u8, u8) -> u8;
            let ops: [(Call, Model); 4] = [
                (bytes::and, |x, y| x & y),
                (bytes::or, |x, y| x | y),
                (bytes::xor, |x, y| x ^ y),
                (bytes::and_not, |x, y| x & !y),
            ];
            for (k, (f, m)) in ops.iter().enumerate() {
                let mut d = vec![0x5au8; n];
                f(a, &b, &mut d, e).unwrap();
                let want: Vec<u8> = a.iter().zip(&b).map(|(&x, &y)| m(x, y)).collect();
                assert_eq!(d, want, "op {k} {at}");
            }
            let mut d = vec![0u8; n];
            bytes::not(a, &mut d, e).unwrap();
            assert!(d.iter().zip(a).all(|(&x, &y)| x == !y), "not {at}");
            bytes::fill(&mut d, 0x3c, e).unwrap();
            assert!(d.iter().all(|&x| x == 0x3c), "fill {at}");
            let mut w16 = vec![0xffffu16; n];
            bytes::widen_u8_u16(a, &mut w16, e).unwrap();
            assert!(
                w16.iter().zip(a).all(|(&w, &x)| w == x as u16),
                "widen16 {at}"
            );
            let mut w32 = vec![u32::MAX; n];
            bytes::widen_u8_u32(a, &mut w32, e).unwrap();
            assert!(
                w32.iter().zip(a).all(|(&w, &x)| w == x as u32),
                "widen32 {at}"
            );
            // Narrowing keeps the low byte, high bits set or not.
            let h16: Vec<u16> = w16.iter().map(|&w| w | 0x1200).collect();
            let mut back = vec![0u8; n];
            bytes::narrow_u16_u8(&h16, &mut back, e).unwrap();
            assert_eq!(back, a, "narrow16 {at}");
            let h32: Vec<u32> = w32.iter().map(|&w| w | 0xab00_0000).collect();
            bytes::narrow_u32_u8(&h32, &mut back, e).unwrap();
            assert_eq!(back, a, "narrow32 {at}");
        }
    }
    // Lengths that differ are refused before any write.
    let e = Exec::default();
    let mut d = vec![9u8; 3];
    assert!(matches!(
        bytes::and(b"ab", b"abc", &mut d, &e),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        bytes::xor(b"abc", b"abc", &mut d[..2], &e),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        bytes::not(b"ab", &mut d, &e),
        Err(Error::Length { .. })
    ));
    let mut w = vec![7u16; 2];
    assert!(matches!(
        bytes::widen_u8_u16(b"abc", &mut w, &e),
        Err(Error::Length { .. })
    ));
    assert_eq!((d, w), (vec![9u8; 3], vec![7u16; 2]));
}
