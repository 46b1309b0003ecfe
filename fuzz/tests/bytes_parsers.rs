//! Fuzz target: the byte parsers of `tessera::bytes` — UTF-8 validation,
//! hex decoding, base64 decoding (four variants) and decimal integer fields
//! (`parse_ints`, `parse_uints`) and LEB128 varints (u32, u64). Inputs are valid texts
//! of random lengths (UTF-8 of 1–4-byte characters, hex digits of either
//! case, base64 with and without padding, each alphabet), random bytes, and
//! one to four mutations of either (bytes flipped, inserted, deleted,
//! duplicated, dictionary words spliced). Every tier this CPU runs must
//! give the model's answer: `std::str::from_utf8`'s valid prefix; the
//! model's bytes or the offset of the first error (written here from the
//! documented rules); a refusal leaves the destination as it was.

use tessera::bytes::{self, Base64};
use tessera::{Error, Exec};
use tessera_fuzz::mutate::mutate;
use tessera_fuzz::{run, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

const WORDS: &[&[u8]] = &[
    b",",
    b"-",
    b"+",
    b"99999999999999999999",
    b",,",
    b"=",
    b"==",
    b"\xf0\x9f\xa6\x80",
    b"\xed\xa0\x80",
    b"\xc0\x80",
    b"\xf4\x90",
    b"\xe0\x80",
    b"+/",
    b"-_",
    b"ff",
    b"0x",
    b" ",
    b"\r\n",
];

#[derive(Clone, Copy, Debug)]
enum Parser {
    Utf8,
    Hex,
    B64(Base64),
    /// Comma-separated decimal fields, signed or not.
    Ints(bool),
    /// LEB128 varints, u64 (true) or u32.
    Varint(bool),
}

struct Case {
    parser: Parser,
    input: Vec<u8>,
}

fn alphabet(url: bool) -> &'static [u8] {
    if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    }
}

fn valid_text(rng: &mut Rng, parser: Parser) -> Vec<u8> {
    let cap = if rng.chance(1, 8) { 600 } else { 100 };
    let n = rng.below_usize(cap);
    match parser {
        Parser::Utf8 => {
            let mut s = String::new();
            for _ in 0..n {
                let c = match rng.below(4) {
                    0 => char::from(rng.below(0x80) as u8),
                    1 => char::from_u32(0x80 + rng.below(0x780) as u32).unwrap(),
                    2 => char::from_u32(0x800 + rng.below(0xf800) as u32).unwrap_or('\u{ffff}'),
                    _ => char::from_u32(0x10000 + rng.below(0x100000) as u32).unwrap(),
                };
                s.push(c);
            }
            s.into_bytes()
        }
        Parser::Varint(wide) => {
            let mut out = Vec::new();
            for _ in 0..n / 3 {
                let v = rng.next_u64() >> rng.below(64);
                let mut v = if wide { v } else { v as u32 as u64 };
                while v >= 0x80 {
                    out.push(v as u8 | 0x80);
                    v >>= 7;
                }
                out.push(v as u8);
            }
            out
        }
        Parser::Hex => (0..2 * n)
            .map(|_| *rng.pick(b"0123456789abcdefABCDEF"))
            .collect(),
        Parser::Ints(signed) => {
            let k = 1 + n / 8;
            let vals: Vec<String> = (0..k)
                .map(|_| match (signed, rng.below(3)) {
                    (true, 0) => (rng.next_u64() as i64).to_string(),
                    (false, 0) => rng.next_u64().to_string(),
                    (_, 1) => rng
                        .pick(&[
                            "0",
                            "-0",
                            "+7",
                            "007",
                            "9223372036854775807",
                            "-9223372036854775808",
                            "18446744073709551615",
                        ])
                        .to_string(),
                    _ => rng.below(1000).to_string(),
                })
                .collect();
            vals.join(",").into_bytes()
        }
        Parser::B64(c) => {
            let a = alphabet(c.url);
            let mut s: Vec<u8> = (0..4 * n).map(|_| a[rng.below_usize(64)]).collect();
            // A partial final group with its unused bits zero.
            match rng.below(3) {
                1 => {
                    s.push(a[rng.below_usize(64)]);
                    s.push(a[rng.below_usize(4) * 16]);
                    if c.pad {
                        s.extend_from_slice(b"==");
                    }
                }
                2 => {
                    s.push(a[rng.below_usize(64)]);
                    s.push(a[rng.below_usize(64)]);
                    s.push(a[rng.below_usize(16) * 4]);
                    if c.pad {
                        s.push(b'=');
                    }
                }
                _ => {}
            }
            s
        }
    }
}

/// Decimal fields by the documented rules, in i128: the first field in
/// error gives the offset of its first non-digit (after an optional sign
/// where signed), of the digit that leaves the range, or of its end.
fn model_ints(s: &[u8], signed: bool) -> Result<Vec<i128>, usize> {
    let (lo, hi) = if signed {
        (i64::MIN as i128, i64::MAX as i128)
    } else {
        (0, u64::MAX as i128)
    };
    let mut out = Vec::new();
    let mut start = 0;
    for f in s.split(|&c| c == b',') {
        let sign = signed && matches!(f.first(), Some(b'-' | b'+'));
        let neg = sign && f[0] == b'-';
        let digits = &f[sign as usize..];
        if digits.is_empty() {
            return Err(start + f.len());
        }
        let mut v: i128 = 0;
        for (j, &c) in digits.iter().enumerate() {
            let at = start + sign as usize + j;
            if !c.is_ascii_digit() {
                return Err(at);
            }
            v = v * 10 + (c - b'0') as i128;
            let x = if neg { -v } else { v };
            if x < lo || x > hi {
                return Err(at);
            }
        }
        out.push(if neg { -v } else { v });
        start += f.len() + 1;
    }
    Ok(out)
}

/// Varints by the documented rules, one byte at a time: a value's bytes
/// accumulate 7 bits each; bits at or past the type's width, or a
/// continuation bit on the `max`-th byte, are refused at that byte; input
/// ending inside a value at its length.
fn model_varint(s: &[u8], wide: bool) -> Result<Vec<u64>, usize> {
    let (max, width) = if wide { (10, 64) } else { (5, 32) };
    let mut out = Vec::new();
    let (mut v, mut k) = (0u128, 0usize);
    for (i, &b) in s.iter().enumerate() {
        v |= ((b & 0x7f) as u128) << (7 * k);
        k += 1;
        if v >> width != 0 || (k == max && b >= 0x80) {
            return Err(i);
        }
        if b < 0x80 {
            out.push(v as u64);
            v = 0;
            k = 0;
        }
    }
    if k > 0 {
        return Err(s.len());
    }
    Ok(out)
}

/// Hex by the documented rules: odd length first (offset len − 1), then
/// the first non-digit.
fn model_hex(s: &[u8]) -> Result<Vec<u8>, usize> {
    if s.len() % 2 == 1 {
        return Err(s.len() - 1);
    }
    let d = |c: u8| (c as char).to_digit(16);
    if let Some(i) = s.iter().position(|&c| d(c).is_none()) {
        return Err(i);
    }
    Ok(s.chunks(2)
        .map(|p| (d(p[0]).unwrap() * 16 + d(p[1]).unwrap()) as u8)
        .collect())
}

/// Base64 by the documented rules: length and padding, the first
/// non-symbol, the last symbol's unused bits; decoded group by group.
fn model_b64(s: &[u8], c: Base64) -> Result<Vec<u8>, usize> {
    let n = s.len();
    let body = if c.pad {
        if !n.is_multiple_of(4) {
            return Err(n);
        }
        let p = s.iter().rev().take(3).take_while(|&&x| x == b'=').count();
        if p == 3 {
            return Err(n - 3);
        }
        n - p
    } else if n % 4 == 1 {
        return Err(n - 1);
    } else {
        n
    };
    let a = alphabet(c.url);
    let mut vals = Vec::with_capacity(body);
    for (i, x) in s[..body].iter().enumerate() {
        vals.push(a.iter().position(|y| y == x).ok_or(i)? as u64);
    }
    let mut out = Vec::new();
    for g in vals.chunks(4) {
        let w = g.iter().fold(0u64, |w, v| w << 6 | v) << (6 * (4 - g.len()));
        let keep = g.len() * 6 / 8;
        if g.len() < 4 && w >> (24 - 6 * g.len()) & ((1 << (6 * g.len() - 8 * keep)) - 1) != 0 {
            return Err(body - 1);
        }
        for k in 0..keep {
            out.push((w >> (16 - 8 * k)) as u8);
        }
    }
    Ok(out)
}

fn check(case: &Case) -> Result<Verdict, String> {
    let s = &case.input;
    let mut models = 0;
    let mut refused = false;
    for tier in tessera_fuzz::tiers() {
        let e = Exec::on(tier);
        let at = || format!("{:?} on {tier:?}, input {s:02x?}", case.parser);
        match case.parser {
            Parser::Utf8 => {
                let want = std::str::from_utf8(s).map_or_else(|e| e.valid_up_to(), |_| s.len());
                let got = bytes::utf8_valid_up_to(s, &e).map_err(|e| format!("{e} ({})", at()))?;
                if got != want {
                    return Err(format!("valid up to {got}, std says {want} ({})", at()));
                }
                refused |= want < s.len();
            }
            Parser::Ints(signed) => {
                let seps: Vec<usize> = (0..s.len()).filter(|&i| s[i] == b',').collect();
                let want = model_ints(s, signed);
                let (got, vals) = if signed {
                    let mut d = vec![3i64; seps.len() + 1];
                    let g = bytes::parse_ints(s, &seps, &mut d, &e);
                    (g, d.iter().map(|&x| x as i128).collect::<Vec<_>>())
                } else {
                    let mut d = vec![3u64; seps.len() + 1];
                    let g = bytes::parse_uints(s, &seps, &mut d, &e);
                    (g, d.iter().map(|&x| x as i128).collect::<Vec<_>>())
                };
                match (got, want) {
                    (Ok(k), Ok(w)) if k == w.len() && vals == w => {}
                    (Err(Error::Encoding { offset, .. }), Err(w))
                        if offset == w && vals.iter().all(|&x| x == 3) =>
                    {
                        refused = true
                    }
                    (got, want) => {
                        return Err(format!("got {got:?} ({vals:?}), model {want:?} ({})", at()))
                    }
                }
            }
            Parser::Varint(wide) => {
                let want = model_varint(s, wide);
                let mut d = vec![3u64; s.len()];
                let got = if wide {
                    bytes::varint_decode(s, &mut d, &e)
                } else {
                    let mut n = vec![3u32; s.len()];
                    let g = bytes::varint_decode(s, &mut n, &e);
                    d = n.iter().map(|&x| x as u64).collect();
                    g
                };
                match (got, want) {
                    (Ok(k), Ok(w)) if d[..k] == w[..] && d[k..].iter().all(|&x| x == 3) => {}
                    (Err(Error::Encoding { offset, .. }), Err(w))
                        if offset == w && d.iter().all(|&x| x == 3) =>
                    {
                        refused = true
                    }
                    (got, want) => return Err(format!("got {got:?}, model {want:?} ({})", at())),
                }
            }
            Parser::Hex | Parser::B64(_) => {
                let (want, got, dst) = {
                    let mut dst = vec![0xa5u8; s.len() + 1];
                    let (want, got) = match case.parser {
                        Parser::Hex => (model_hex(s), bytes::hex_decode(s, &mut dst, &e)),
                        Parser::B64(c) => {
                            (model_b64(s, c), bytes::base64_decode(s, &mut dst, c, &e))
                        }
                        Parser::Utf8 | Parser::Ints(_) | Parser::Varint(_) => unreachable!(),
                    };
                    (want, got, dst)
                };
                match (got, want) {
                    (Ok(k), Ok(w)) if dst[..k] == w[..] && dst[k..].iter().all(|&x| x == 0xa5) => {}
                    (Err(Error::Encoding { offset, .. }), Err(w))
                        if offset == w && dst.iter().all(|&x| x == 0xa5) =>
                    {
                        refused = true
                    }
                    (got, want) => {
                        return Err(format!(
                            "got {got:?} (dst {:02x?}), model {want:?} ({})",
                            &dst[..8.min(dst.len())],
                            at()
                        ))
                    }
                }
            }
        }
        models += 1;
    }
    Ok(if refused {
        Verdict::Refused
    } else {
        Verdict::Succeeded { models }
    })
}

fn target(plan: Plan, verbose: bool) -> Stats {
    run(
        "bytes_parsers",
        plan,
        verbose,
        |rng: &mut Rng, _| {
            let parser = match rng.below(9) {
                0 | 1 => Parser::Utf8,
                2 => Parser::Hex,
                6 | 7 => Parser::Ints(rng.chance(1, 2)),
                8 => Parser::Varint(rng.chance(1, 2)),
                k => Parser::B64(Base64 {
                    url: k == 3,
                    pad: rng.chance(1, 2),
                }),
            };
            let base = if rng.chance(1, 10) {
                (0..rng.below_usize(200))
                    .map(|_| rng.next_u64() as u8)
                    .collect()
            } else {
                valid_text(rng, parser)
            };
            let input = if rng.chance(1, 3) {
                base
            } else {
                mutate(rng, &base, WORDS)
            };
            Case { parser, input }
        },
        |c: &Case| format!("{:?} {:02x?}", c.parser, c.input),
        check,
    )
}

#[test]
fn bytes_parsers_default_run() {
    let s = target(Plan::default_run(), true);
    assert!(
        s.refusals > 0 && s.successes > 0 && s.model_checks > 0,
        "{s:?}"
    );
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn bytes_parsers_long_run() {
    target(Plan::long_run(), true);
}
