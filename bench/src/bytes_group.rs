//! The `bytes` group: tessera's byte and text kernels beside their in-process
//! peers, one thread, in GB/s of input, samples alternating (the movement
//! group's `race`: best of 3 rounds of at least 0.2 s each; `--quick`: one
//! short round). Two sizes: 256 KiB (in L2) and 16 MiB (from memory). Each
//! result is checked against the peer's before timing.
//!
//! * `index_byte` (the byte absent: a full scan) and `last_index_byte`
//!   beside `memchr::memchr` / `memrchr`; `count_byte` (one byte in 64)
//!   beside `memchr::memchr_iter(..).count()`;
//! * `index` of an absent 8-byte needle in text beside `memchr::memmem::find`;
//! * `valid_utf8` of mixed text (1–4-byte characters) and of ASCII beside
//!   `simdutf8::basic::from_utf8`; `utf8_valid_up_to` beside
//!   `simdutf8::compat::from_utf8` (which locates the error too);
//! * `hex_encode` and `hex_decode` beside `hex_simd` and `const_hex`;
//! * `base64_encode` and `base64_decode` (standard, padded) beside
//!   `base64_simd` and the `base64` crate;
//! * `parse_ints` and `format_ints` of comma-separated i64 beside loops of
//!   `str::parse` and `write!`;
//! * `popcount` beside a loop of `u64::count_ones` over the words.
//! * `bit_pack_u32` / `bit_unpack_u32` at 7 bits beside the `bitpacking`
//!   crate's `BitPacker4x` (its own interleaved layout of 128-value blocks,
//!   SIMD) and a 64-bit accumulator loop; GB/s of the u32 values.
//! * `varint_encode` / `varint_decode` of u64 beside the byte-at-a-time
//!   loops protocol buffers' encoders use; GB/s of the u64 values.

use crate::chart::Chart;
use crate::movement_group::race;
use tessera::{bytes, Exec};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "bytes";

/// Mixed UTF-8 text of `n` bytes (ASCII words, Latin, CJK and emoji).
fn text(n: usize, ascii: bool, rng: &mut Rng) -> Vec<u8> {
    let pieces: &[&str] = if ascii {
        &[
            "the ", "quick ", "brown ", "fox ", "jumps\n", "over ", "a ", "lazy ", "dog. ",
        ]
    } else {
        &[
            "the ",
            "quick ",
            "brün ",
            "fuchs ",
            "日本語 ",
            "テキスト ",
            "🦀 ",
            "naïve ",
            "λόγος ",
        ]
    };
    let mut v = Vec::with_capacity(n);
    loop {
        let p = rng.pick(pieces).as_bytes();
        if v.len() + p.len() > n {
            break;
        }
        v.extend_from_slice(p);
    }
    v.resize(n, b' ');
    v
}

/// One row: tessera's and each peer's GB/s.
struct Row {
    case: String,
    cols: Vec<(&'static str, f64)>,
    ok: bool,
}

fn row(
    case: String,
    bytes: usize,
    names: &[&'static str],
    fs: &mut [&mut dyn FnMut()],
    ok: bool,
    quick: bool,
) -> Row {
    let t = race(fs, quick);
    Row {
        case,
        cols: names
            .iter()
            .zip(t)
            .map(|(n, s)| (*n, bytes as f64 / s / 1e9))
            .collect(),
        ok,
    }
}

/// Run the group; returns the text, whether every check held, and a chart.
pub fn run(quick: bool) -> (String, bool, Chart) {
    let e = Exec::default();
    let mut rng = Rng::for_label("bench bytes", 1);
    let sizes: &[usize] = if quick {
        &[1 << 16]
    } else {
        &[1 << 18, 1 << 24]
    };
    let mut rows = Vec::new();
    for &n in sizes {
        let kib = n >> 10;
        // Random bytes without 0x00, one 0x01 in 64 (count), never 0x00
        // (the absent byte).
        let hay: Vec<u8> = (0..n)
            .map(|_| {
                if rng.below(64) == 0 {
                    1
                } else {
                    2 + rng.below(254) as u8
                }
            })
            .collect();
        let ok = bytes::index_byte(&hay, 0, &e).unwrap() == memchr::memchr(0, &hay);
        rows.push(row(
            format!("index_byte absent, {kib} KiB"),
            n,
            &["tessera", "memchr"],
            &mut [
                &mut || {
                    std::hint::black_box(
                        bytes::index_byte(std::hint::black_box(&hay), 0, &e).unwrap(),
                    );
                },
                &mut || {
                    std::hint::black_box(memchr::memchr(0, std::hint::black_box(&hay)));
                },
            ],
            ok,
            quick,
        ));
        let ok = bytes::last_index_byte(&hay, 0, &e).unwrap() == memchr::memrchr(0, &hay);
        rows.push(row(
            format!("last_index_byte absent, {kib} KiB"),
            n,
            &["tessera", "memchr"],
            &mut [
                &mut || {
                    std::hint::black_box(
                        bytes::last_index_byte(std::hint::black_box(&hay), 0, &e).unwrap(),
                    );
                },
                &mut || {
                    std::hint::black_box(memchr::memrchr(0, std::hint::black_box(&hay)));
                },
            ],
            ok,
            quick,
        ));
        let ok = bytes::count_byte(&hay, 1, &e).unwrap() == memchr::memchr_iter(1, &hay).count();
        rows.push(row(
            format!("count_byte 1/64, {kib} KiB"),
            n,
            &["tessera", "memchr iter"],
            &mut [
                &mut || {
                    std::hint::black_box(
                        bytes::count_byte(std::hint::black_box(&hay), 1, &e).unwrap(),
                    );
                },
                &mut || {
                    std::hint::black_box(
                        memchr::memchr_iter(1, std::hint::black_box(&hay)).count(),
                    );
                },
            ],
            ok,
            quick,
        ));
        let txt = text(n, true, &mut rng);
        let needle = b"quick fx";
        let ok = bytes::index(&txt, needle, &e).unwrap() == memchr::memmem::find(&txt, needle);
        rows.push(row(
            format!("index (substring) absent, {kib} KiB"),
            n,
            &["tessera", "memmem"],
            &mut [
                &mut || {
                    std::hint::black_box(
                        bytes::index(std::hint::black_box(&txt), needle, &e).unwrap(),
                    );
                },
                &mut || {
                    std::hint::black_box(memchr::memmem::find(std::hint::black_box(&txt), needle));
                },
            ],
            ok,
            quick,
        ));
        for ascii in [false, true] {
            let t = text(n, ascii, &mut rng);
            let ok = bytes::valid_utf8(&t, &e).unwrap() && simdutf8::basic::from_utf8(&t).is_ok();
            rows.push(row(
                format!(
                    "valid_utf8 {}, {kib} KiB",
                    if ascii { "ASCII" } else { "mixed" }
                ),
                n,
                &["tessera", "simdutf8 basic"],
                &mut [
                    &mut || {
                        std::hint::black_box(
                            bytes::valid_utf8(std::hint::black_box(&t), &e).unwrap(),
                        );
                    },
                    &mut || {
                        std::hint::black_box(
                            simdutf8::basic::from_utf8(std::hint::black_box(&t)).is_ok(),
                        );
                    },
                ],
                ok,
                quick,
            ));
        }
        let mut t = text(n, false, &mut rng);
        let bad = n - n / 8;
        t[bad] = 0xff;
        let want = match simdutf8::compat::from_utf8(&t) {
            Ok(_) => n,
            Err(err) => err.valid_up_to(),
        };
        let ok = bytes::utf8_valid_up_to(&t, &e).unwrap() == want;
        rows.push(row(
            format!("utf8_valid_up_to (error at 7/8), {kib} KiB"),
            n,
            &["tessera", "simdutf8 compat"],
            &mut [
                &mut || {
                    std::hint::black_box(
                        bytes::utf8_valid_up_to(std::hint::black_box(&t), &e).unwrap(),
                    );
                },
                &mut || {
                    std::hint::black_box(
                        simdutf8::compat::from_utf8(std::hint::black_box(&t)).is_ok(),
                    );
                },
            ],
            ok,
            quick,
        ));
        let src: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        let mut d1 = vec![0u8; 2 * n];
        let mut d2 = vec![0u8; 2 * n];
        let mut d3 = vec![0u8; 2 * n];
        bytes::hex_encode(&src, &mut d1, &e).unwrap();
        let ok = hex_simd::encode(
            &src,
            hex_simd::Out::from_slice(&mut d2),
            hex_simd::AsciiCase::Lower,
        ) == &d1[..]
            && const_hex::encode_to_slice(&src, &mut d3).is_ok()
            && d3 == d1;
        rows.push(row(
            format!("hex_encode, {kib} KiB in"),
            n,
            &["tessera", "hex-simd", "const-hex"],
            &mut [
                &mut || {
                    bytes::hex_encode(std::hint::black_box(&src), &mut d1, &e).unwrap();
                },
                &mut || {
                    let _ = hex_simd::encode(
                        std::hint::black_box(&src),
                        hex_simd::Out::from_slice(&mut d2),
                        hex_simd::AsciiCase::Lower,
                    );
                },
                &mut || {
                    const_hex::encode_to_slice(std::hint::black_box(&src), &mut d3).unwrap();
                },
            ],
            ok,
            quick,
        ));
        let digits = d3.clone();
        let mut o1 = vec![0u8; n];
        let mut o2 = vec![0u8; n];
        let mut o3 = vec![0u8; n];
        bytes::hex_decode(&digits, &mut o1, &e).unwrap();
        let ok = o1 == src
            && hex_simd::decode(&digits, hex_simd::Out::from_slice(&mut o2)).is_ok()
            && o2 == src
            && const_hex::decode_to_slice(&digits, &mut o3).is_ok()
            && o3 == src;
        rows.push(row(
            format!("hex_decode, {kib} KiB out"),
            2 * n,
            &["tessera", "hex-simd", "const-hex"],
            &mut [
                &mut || {
                    bytes::hex_decode(std::hint::black_box(&digits), &mut o1, &e).unwrap();
                },
                &mut || {
                    hex_simd::decode(
                        std::hint::black_box(&digits),
                        hex_simd::Out::from_slice(&mut o2),
                    )
                    .unwrap();
                },
                &mut || {
                    const_hex::decode_to_slice(std::hint::black_box(&digits), &mut o3).unwrap();
                },
            ],
            ok,
            quick,
        ));
        let mut b1 = vec![0u8; n / 3 * 4 + 4];
        let mut b2 = vec![0u8; n / 3 * 4 + 4];
        let mut b3 = vec![0u8; n / 3 * 4 + 4];
        let std64 = bytes::Base64::STANDARD;
        let k = bytes::base64_encode(&src, &mut b1, std64, &e).unwrap();
        let ok = {
            use base64::Engine as _;
            base64_simd::STANDARD.encode(&src, base64_simd::Out::from_slice(&mut b2)) == &b1[..k]
                && base64::engine::general_purpose::STANDARD.encode_slice(&src, &mut b3) == Ok(k)
                && b3[..k] == b1[..k]
        };
        rows.push(row(
            format!("base64 encode, {kib} KiB in"),
            n,
            &["tessera", "base64-simd", "base64"],
            &mut [
                &mut || {
                    bytes::base64_encode(std::hint::black_box(&src), &mut b1, std64, &e).unwrap();
                },
                &mut || {
                    let _ = base64_simd::STANDARD.encode(
                        std::hint::black_box(&src),
                        base64_simd::Out::from_slice(&mut b2),
                    );
                },
                &mut || {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD
                        .encode_slice(std::hint::black_box(&src), &mut b3)
                        .unwrap();
                },
            ],
            ok,
            quick,
        ));
        let text = b1[..k].to_vec();
        let mut p1 = vec![0u8; n];
        let mut p2 = vec![0u8; n];
        let mut p3 = vec![0u8; n + 3];
        let ok = {
            use base64::Engine as _;
            bytes::base64_decode(&text, &mut p1, std64, &e).unwrap() == n
                && p1 == src
                && base64_simd::STANDARD
                    .decode(&text, base64_simd::Out::from_slice(&mut p2))
                    .is_ok()
                && p2 == src
                && base64::engine::general_purpose::STANDARD.decode_slice(&text, &mut p3) == Ok(n)
                && p3[..n] == src[..]
        };
        rows.push(row(
            format!("base64 decode, {kib} KiB out"),
            k,
            &["tessera", "base64-simd", "base64"],
            &mut [
                &mut || {
                    bytes::base64_decode(std::hint::black_box(&text), &mut p1, std64, &e).unwrap();
                },
                &mut || {
                    base64_simd::STANDARD
                        .decode(
                            std::hint::black_box(&text),
                            base64_simd::Out::from_slice(&mut p2),
                        )
                        .unwrap();
                },
                &mut || {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD
                        .decode_slice(std::hint::black_box(&text), &mut p3)
                        .unwrap();
                },
            ],
            ok,
            quick,
        ));
        // Decimal fields: one value per ~10 bytes.
        let vals: Vec<i64> = (0..n / 10)
            .map(|_| rng.next_u64() as i64 >> rng.below(64))
            .collect();
        let mut csv = vec![0u8; bytes::format_ints_len(&vals)];
        bytes::format_ints(&vals, b',', &mut csv, &e).unwrap();
        let seps = {
            let mut d = vec![0usize; vals.len()];
            let k = bytes::index_all(&csv, b',', &mut d, &e).unwrap();
            d.truncate(k);
            d
        };
        let mut parsed = vec![0i64; vals.len()];
        let mut peer_vals = Vec::with_capacity(vals.len());
        let ok = bytes::parse_ints(&csv, &seps, &mut parsed, &e).is_ok() && parsed == vals;
        rows.push(row(
            format!("parse_ints, {} KiB of text", csv.len() >> 10),
            csv.len(),
            &["tessera", "std parse loop"],
            &mut [
                &mut || {
                    bytes::parse_ints(std::hint::black_box(&csv), &seps, &mut parsed, &e).unwrap();
                },
                &mut || {
                    peer_vals.clear();
                    for f in std::hint::black_box(&csv).split(|&c| c == b',') {
                        let t = std::str::from_utf8(f).unwrap();
                        peer_vals.push(t.parse::<i64>().unwrap());
                    }
                },
            ],
            ok,
            quick,
        ));
        let mut out1 = vec![0u8; csv.len()];
        let mut out2: Vec<u8> = Vec::with_capacity(csv.len());
        let ok =
            bytes::format_ints(&vals, b',', &mut out1, &e).unwrap() == csv.len() && out1 == csv;
        rows.push(row(
            format!("format_ints, {} KiB of text", csv.len() >> 10),
            csv.len(),
            &["tessera", "std write! loop"],
            &mut [
                &mut || {
                    bytes::format_ints(std::hint::black_box(&vals), b',', &mut out1, &e).unwrap();
                },
                &mut || {
                    use std::io::Write as _;
                    out2.clear();
                    for (i, v) in std::hint::black_box(&vals).iter().enumerate() {
                        if i > 0 {
                            out2.push(b',');
                        }
                        write!(out2, "{v}").unwrap();
                    }
                },
            ],
            ok,
            quick,
        ));
        let words: Vec<u64> = src
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let want: u64 = words.iter().map(|w| w.count_ones() as u64).sum();
        let ok = bytes::popcount(&src, &e).unwrap() == want;
        rows.push(row(
            format!("popcount, {kib} KiB"),
            n,
            &["tessera", "count_ones loop"],
            &mut [
                &mut || {
                    std::hint::black_box(bytes::popcount(std::hint::black_box(&src), &e).unwrap());
                },
                &mut || {
                    std::hint::black_box(
                        std::hint::black_box(&words)
                            .iter()
                            .map(|w| w.count_ones() as u64)
                            .sum::<u64>(),
                    );
                },
            ],
            ok,
            quick,
        ));
    }
    for &n in sizes {
        let count = n / 4;
        let vals: Vec<u32> = (0..count).map(|_| rng.below(128) as u32).collect();
        let words = bytes::bit_packed_words(count, 7).unwrap();
        let mut packed = vec![0u32; words];
        let mut peer = vec![0u8; count];
        let mut acc_out = vec![0u32; words];
        let packer = {
            use bitpacking::BitPacker as _;
            bitpacking::BitPacker4x::new()
        };
        let ok = bytes::bit_pack_u32(&vals, 7, &mut packed, &e).is_ok();
        rows.push(row(
            format!("bit_pack_u32 7 bits, {} KiB of u32", n >> 10),
            n,
            &["tessera", "bitpacking 4x", "accumulator loop"],
            &mut [
                &mut || {
                    bytes::bit_pack_u32(std::hint::black_box(&vals), 7, &mut packed, &e).unwrap();
                },
                &mut || {
                    use bitpacking::BitPacker as _;
                    let mut at = 0;
                    for b in std::hint::black_box(&vals).chunks_exact(128) {
                        at += packer.compress(b, &mut peer[at..], 7);
                    }
                    std::hint::black_box(at);
                },
                &mut || {
                    let (mut acc, mut fill, mut k) = (0u64, 0u32, 0usize);
                    for &x in std::hint::black_box(&vals) {
                        acc |= (x as u64) << fill;
                        fill += 7;
                        if fill >= 32 {
                            acc_out[k] = acc as u32;
                            k += 1;
                            acc >>= 32;
                            fill -= 32;
                        }
                    }
                    std::hint::black_box(&acc_out);
                },
            ],
            ok,
            quick,
        ));
        let mut back = vec![0u32; count];
        let mut peer_back = vec![0u32; count];
        let mut loop_back = vec![0u32; count];
        bytes::bit_unpack_u32(&packed, 7, &mut back, &e).unwrap();
        let ok = back == vals;
        rows.push(row(
            format!("bit_unpack_u32 7 bits, {} KiB of u32", n >> 10),
            n,
            &["tessera", "bitpacking 4x", "shift loop"],
            &mut [
                &mut || {
                    bytes::bit_unpack_u32(std::hint::black_box(&packed), 7, &mut back, &e).unwrap();
                },
                &mut || {
                    use bitpacking::BitPacker as _;
                    let mut at = 0;
                    for b in peer_back.chunks_exact_mut(128) {
                        at += packer.decompress(&peer[at..], b, 7);
                    }
                    std::hint::black_box(at);
                },
                &mut || {
                    let p = std::hint::black_box(&packed);
                    for (i, x) in loop_back.iter_mut().enumerate() {
                        let s = i * 7;
                        let (k, sh) = (s / 32, s % 32);
                        let lo = p[k] as u64;
                        let hi = if sh + 7 > 32 {
                            (p[k + 1] as u64) << 32
                        } else {
                            0
                        };
                        *x = ((lo | hi) >> sh) as u32 & 0x7f;
                    }
                },
            ],
            ok,
            quick,
        ));
        // Varints: u64 values of random bit lengths (1 to 10 bytes each).
        let count = n / 8;
        let vals: Vec<u64> = (0..count)
            .map(|_| rng.next_u64() >> rng.below(64))
            .collect();
        let size = bytes::varint_size(&vals, &e).unwrap();
        let mut enc = vec![0u8; size];
        let mut peer_enc: Vec<u8> = Vec::with_capacity(size);
        let ok = bytes::varint_encode(&vals, &mut enc, &e).unwrap() == size;
        rows.push(row(
            format!("varint_encode u64, {} KiB of u64", n >> 10),
            n,
            &["tessera", "byte loop"],
            &mut [
                &mut || {
                    bytes::varint_encode(std::hint::black_box(&vals), &mut enc, &e).unwrap();
                },
                &mut || {
                    peer_enc.clear();
                    for &v in std::hint::black_box(&vals) {
                        let mut v = v;
                        while v >= 0x80 {
                            peer_enc.push(v as u8 | 0x80);
                            v >>= 7;
                        }
                        peer_enc.push(v as u8);
                    }
                },
            ],
            ok,
            quick,
        ));
        let mut dec = vec![0u64; count];
        let mut peer_dec: Vec<u64> = Vec::with_capacity(count);
        let ok = bytes::varint_decode(&enc, &mut dec, &e).unwrap() == count && dec == vals;
        rows.push(row(
            format!("varint_decode u64, {} KiB of u64", n >> 10),
            n,
            &["tessera", "byte loop"],
            &mut [
                &mut || {
                    bytes::varint_decode(std::hint::black_box(&enc), &mut dec, &e).unwrap();
                },
                &mut || {
                    peer_dec.clear();
                    let (mut v, mut sh) = (0u64, 0u32);
                    for &b in std::hint::black_box(&enc) {
                        v |= ((b & 0x7f) as u64) << sh;
                        if b < 0x80 {
                            peer_dec.push(v);
                            v = 0;
                            sh = 0;
                        } else {
                            sh += 7;
                        }
                    }
                },
            ],
            ok,
            quick,
        ));
    }
    let mut chart = Chart::new(
        NAME,
        format!(
            "byte and text kernels, GB/s of input; tier {}",
            tessera::active_tier()
        ),
        "GB/s",
    )
    .ratio_note("tessera ÷ the fastest peer (above 1: tessera faster)");
    let mut out = format!(
        "bytes: GB/s of input, 1 thread; tier {}\n{:<44} {:>9} {:>22} {:>22} {:>8}\n",
        tessera::active_tier(),
        "case",
        "tessera",
        "peer 1",
        "peer 2",
        "t/best"
    );
    let mut all_ok = true;
    for r in &rows {
        let peer = |i: usize| {
            r.cols
                .get(i)
                .map_or("-".to_string(), |(n, v)| format!("{n} {v:.2}"))
        };
        let best = r.cols[1..].iter().map(|c| c.1).fold(0.0, f64::max);
        out.push_str(&format!(
            "{:<44} {:>9.2} {:>22} {:>22} {:>8.2}{}\n",
            r.case,
            r.cols[0].1,
            peer(1),
            peer(2),
            r.cols[0].1 / best,
            if r.ok { "" } else { "  MISMATCH" }
        ));
        all_ok &= r.ok;
        let cells: Vec<(&str, Option<f64>)> = r.cols.iter().map(|(p, v)| (*p, Some(*v))).collect();
        chart.add_row(r.case.clone(), &cells, Some(r.cols[0].1 / best));
    }
    (out, all_ok, chart)
}
