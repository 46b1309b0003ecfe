//! Structured `.npy` files: version 1, 2 or 3 (and wrong ones), every
//! descr the reader knows in every byte order (and ones it does not),
//! `fortran_order` true, false or wrong, shapes of rank 0 to 4 with zero,
//! small, huge and overflowing extents, keys in any order, padding or none,
//! data exact, truncated or too long. Each file comes with what a correct
//! reader must make of it: the array, a refusal, or either (for variations
//! the format leaves to the reader).

use tessera_cli::npy::{NpyType, MAX_BYTES};
use tessera_testkit::rng::Rng;

/// What a reader must make of a generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// This array: dtype, Fortran order, shape, data in this machine's order.
    Array(NpyType, bool, Vec<usize>, Vec<u8>),
    /// A refusal.
    Refusal(&'static str),
    /// Either; if accepted, the array must be self-consistent.
    Either,
}

/// A generated file and its expectation.
#[derive(Clone, Debug)]
pub struct NpyCase {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// What the reader must make of it.
    pub expect: Expect,
}

fn shape_text(shape: &[String], trailing: bool) -> String {
    match shape.len() {
        0 => "()".into(),
        1 if !trailing => format!("({})", shape[0]),
        1 => format!("({},)", shape[0]),
        _ => format!("({}{})", shape.join(", "), if trailing { "," } else { "" }),
    }
}

/// A random structured `.npy` file.
pub fn structured(rng: &mut Rng) -> NpyCase {
    let mut defect: Option<&'static str> = None;
    let mut either = false;
    let t = *rng.pick(&NpyType::ALL);
    let size = t.size();
    let order = if size == 1 {
        *rng.pick(&['|', '|', '<', '>', '='])
    } else {
        *rng.pick(&['<', '<', '>', '=', '|'])
    };
    if size > 1 && order == '|' {
        defect = Some("a multi-byte type with | order");
    }
    let mut descr = format!("{order}{}", t.code());
    if rng.chance(1, 12) {
        descr = rng
            .pick(&[
                "<f3", "<U8", "O", "|V4", "<M8[s]", "", "<", "f4", "<i16", "<f4 ",
            ])
            .to_string();
        defect = Some("an unknown descr");
    }
    let fortran = rng.chance(1, 3);
    let mut fortran_text = if fortran { "True" } else { "False" }.to_string();
    if rng.chance(1, 20) {
        fortran_text = rng.pick(&["1", "'False'", "None", "true"]).to_string();
        defect = Some("a fortran_order that is no bool");
    }
    let rank = rng.below_usize(5);
    let mut shape: Vec<u128> = (0..rank)
        .map(|_| match rng.below(12) {
            0 => 0,
            1 => 1,
            2 => *rng.pick(&[
                1u128 << 40,
                (1u128 << 40) + 1,
                1 << 62,
                u64::MAX as u128,
                u64::MAX as u128 + 1,
                10u128.pow(30),
            ]),
            _ => 1 + rng.below(5) as u128,
        })
        .collect();
    if rng.chance(1, 10) && rank > 0 {
        // Huge extents with a zero: empty, but an extent over 2^40 is refused.
        shape[0] = 0;
    }
    let shape_strs: Vec<String> = shape.iter().map(|e| e.to_string()).collect();
    let count: u128 = if shape.contains(&0) {
        0
    } else {
        shape.iter().fold(1u128, |n, &e| n.saturating_mul(e))
    };
    let bytes_needed = count.saturating_mul(size as u128);
    if shape.iter().any(|&e| e > MAX_BYTES as u128) {
        defect = defect.or(Some("an extent over 2^40"));
    } else if bytes_needed > MAX_BYTES as u128 {
        defect = defect.or(Some("more than 2^40 bytes"));
    }
    let trailing = rank != 1 || rng.chance(7, 8);
    if rank == 1 && !trailing {
        // `(3)` is no tuple in Python; a reader may take it or refuse it.
        either = true;
    }
    let mut entries = vec![
        format!("'descr': '{descr}'"),
        format!("'fortran_order': {fortran_text}"),
        format!("'shape': {}", shape_text(&shape_strs, trailing)),
    ];
    if rng.chance(1, 8) {
        // Keys in another order: the format allows it.
        let i = rng.below_usize(3);
        let j = rng.below_usize(3);
        entries.swap(i, j);
    }
    if rng.chance(1, 30) {
        entries.pop();
        defect = Some("a missing key");
    }
    if rng.chance(1, 30) {
        entries.push("'extra': 1".into());
        defect = Some("an unknown key");
    }
    let mut header = format!("{{{}, }}", entries.join(", "));
    let version = match rng.below(20) {
        0 => {
            defect = Some("an unknown version");
            *rng.pick(&[0u8, 4, 255])
        }
        1..=3 => 2,
        4..=5 => 3,
        _ => 1,
    };
    let prefix = if version == 1 { 10 } else { 12 };
    if rng.chance(7, 8) {
        while (prefix + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
    } else {
        // No padding, or no newline: numpy writes them; a reader may insist.
        either = true;
        if rng.chance(1, 2) {
            header.push('\n');
        }
    }
    let mut out = b"\x93NUMPY".to_vec();
    if rng.chance(1, 40) {
        out[1] = b'X';
        defect = Some("a wrong magic string");
    }
    out.push(version);
    out.push(0);
    let hlen = header.len();
    if version == 1 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    // Data: exact where it is small, else a few bytes (the header lies).
    let exact = bytes_needed <= 4096;
    let mut data: Vec<u8> = if exact {
        (0..bytes_needed as usize)
            .map(|_| rng.next_u64() as u8)
            .collect()
    } else {
        defect = defect.or(Some("data shorter than the shape"));
        (0..rng.below_usize(64))
            .map(|_| rng.next_u64() as u8)
            .collect()
    };
    let payload = data.clone();
    match rng.below(16) {
        0 => {
            let n = rng.below_usize(data.len() + 1);
            if n < data.len() {
                defect = defect.or(Some("truncated data"));
            }
            data.truncate(n);
        }
        1 => {
            data.extend((0..1 + rng.below_usize(9)).map(|_| rng.next_u64() as u8));
            defect = defect.or(Some("data longer than the shape"));
        }
        _ => {}
    }
    out.extend_from_slice(&data);
    let expect = if let Some(d) = defect {
        Expect::Refusal(d)
    } else if either {
        Expect::Either
    } else {
        let mut native = payload;
        let swap = order == '>' && size > 1;
        if swap {
            let unit = match t {
                NpyType::C64 => 4,
                NpyType::C128 => 8,
                _ => size,
            };
            for u in native.chunks_exact_mut(unit) {
                u.reverse();
            }
        }
        let shape: Vec<usize> = shape.iter().map(|&e| e as usize).collect();
        Expect::Array(t, fortran, shape, native)
    };
    NpyCase { bytes: out, expect }
}

/// Words a mutation of `.npy` bytes may insert.
pub const WORDS: &[&[u8]] = &[
    b"(",
    b")",
    b",",
    b"'",
    b"{",
    b"}",
    b":",
    b"True",
    b"False",
    b"'descr'",
    b"'shape'",
    b"'fortran_order'",
    b"<f8",
    b">f4",
    b"|b1",
    b"<c16",
    b"|u1",
    b"<u2",
    b"=i8",
    b"99999999999999999999",
    b"4611686018427387904",
    b"1099511627776",
    b"0",
    b"\xff\xff\xff\xff",
    b"\x00\x00",
    b"\x03\x00",
    b"\x02\x00",
    b"[",
    b"]",
    b"\\",
    b"\n",
    b"\xc3\xa9",
    b"\xe2\x80",
];
