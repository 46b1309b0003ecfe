//! Test helpers shared by the kernel tests: dtype facts, random codes (drawn
//! from `tessera_testkit`'s generator), and placement of logical arrays into
//! byte buffers of any layout (written here from the documented layout rules,
//! independently of the engine).

#![allow(dead_code)]

pub mod gendot;

/// The tiers this CPU runs; each tier of the library it does not run is
/// reported as skipped (on stderr, shown with `--nocapture`).
pub fn tiers() -> Vec<tessera::Tier> {
    let have = tessera::available_tiers();
    for t in tessera::Tier::ALL {
        if !have.contains(&t) {
            eprintln!("skipped on this CPU: tier {t:?}");
        }
    }
    have
}

use tessera::{DType, NanStyle};
use tessera_testkit::rng::Rng;

/// What the tests need to know of a dtype to place its elements.
#[derive(Clone, Copy, Debug)]
pub struct Dt {
    pub dtype: DType,
    /// Bytes of one unpacked element (one code per byte for packed dtypes).
    pub item: usize,
    /// Values per byte (1 unless packed).
    pub vpb: usize,
    /// Value bits.
    pub bits: u32,
}

impl Dt {
    pub fn of(dtype: DType) -> Dt {
        let info = dtype.info();
        let vpb = info.values_per_byte as usize;
        Dt {
            dtype,
            item: if vpb > 1 { 1 } else { info.item_bytes },
            vpb,
            bits: info.bits,
        }
    }
    pub fn packed(&self) -> bool {
        self.vpb > 1
    }
    /// Bytes of a buffer of `elems` element positions.
    pub fn buffer_bytes(&self, elems: usize) -> usize {
        if self.packed() {
            elems.div_ceil(self.vpb)
        } else {
            elems * self.item
        }
    }
}

/// Whether a float code (of `bits` bits, as an integer) is NaN or infinite, by
/// the dtype's parameters.
fn float_code_special(dtype: DType, bits: u32, code: u64) -> (bool, bool) {
    let f = dtype.info().float.expect("a float dtype");
    let (e, m) = (f.exponent_bits, f.mantissa_bits);
    let mag_mask = (1u64 << (e + m)) - 1;
    let mag = code & mag_mask;
    let exp = mag >> m;
    let man = mag & ((1u64 << m) - 1);
    let all_exp = (1u64 << e) - 1;
    match f.nan {
        NanStyle::Ieee => (exp == all_exp && man != 0, exp == all_exp && man == 0),
        NanStyle::AllOnes => (mag == mag_mask, false),
        NanStyle::SignOnly => (code == 1u64 << (bits - 1), false),
        NanStyle::None => (false, false),
    }
}

/// Whether the stored element `bytes` (little-endian) of a float or complex
/// dtype is (or holds) a NaN.
pub fn is_nan(dtype: DType, bytes: &[u8]) -> bool {
    let info = dtype.info();
    match info.class {
        tessera::Class::Float => {
            let code = le(bytes);
            float_code_special(dtype, info.bits, code).0
        }
        tessera::Class::Complex | tessera::Class::Pair => {
            let half = bytes.len() / 2;
            let comp = match dtype.component() {
                Some(c) => c,
                None if info.bits == 64 => DType::F32,
                None => DType::F64,
            };
            is_nan(comp, &bytes[..half]) || is_nan(comp, &bytes[half..])
        }
        _ => false,
    }
}

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .enumerate()
        .fold(0u64, |acc, (i, &b)| acc | (b as u64) << (8 * i))
}

/// Random element codes of `dt`, `item` bytes each. Float codes are finite
/// unless `specials` (NaN and infinity make results whose NaN payloads the
/// contract leaves open).
pub fn random_codes(dt: Dt, count: usize, rng: &mut Rng, specials: bool) -> Vec<u8> {
    let info = dt.dtype.info();
    let mut out = vec![0u8; count * dt.item];
    for el in out.chunks_mut(dt.item) {
        match info.class {
            tessera::Class::Bool => {
                el[0] = [0u8, 1, 2, 0x80, 0xFF][rng.below(5) as usize];
            }
            tessera::Class::Int | tessera::Class::Uint => {
                for b in el.iter_mut() {
                    *b = rng.next_u64() as u8;
                }
                if dt.bits < 8 {
                    el[0] &= ((1u16 << dt.bits) - 1) as u8;
                }
            }
            tessera::Class::Float => {
                put_float(dt.dtype, info.bits, el, rng, specials);
            }
            tessera::Class::Complex | tessera::Class::Pair => {
                let comp = if info.bits == 64 {
                    DType::F32
                } else {
                    DType::F64
                };
                let half = el.len() / 2;
                let (re, im) = el.split_at_mut(half);
                put_float(comp, info.bits / 2, re, rng, specials);
                put_float(comp, info.bits / 2, im, rng, specials);
            }
        }
    }
    out
}

fn put_float(dtype: DType, bits: u32, el: &mut [u8], rng: &mut Rng, specials: bool) {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let f = dtype.info().float.expect("a float dtype");
    let mut code = rng.next_u64() & mask;
    // Mostly moderate magnitudes: redraw the exponent near the bias half of the
    // time, so sums and products stay in range and round non-trivially.
    if rng.below(2) == 0 && f.exponent_bits >= 3 {
        let m = f.mantissa_bits;
        let span = 1u64 << (f.exponent_bits - 2);
        let exp = (f.bias as u64).saturating_sub(span / 2) + rng.below(span);
        let exp_mask = ((1u64 << f.exponent_bits) - 1) << m;
        code = (code & !exp_mask) | ((exp << m) & exp_mask);
    }
    if !specials {
        loop {
            let (nan, inf) = float_code_special(dtype, bits, code);
            if !nan && !inf {
                break;
            }
            code = rng.next_u64() & mask;
        }
    }
    for (i, b) in el.iter_mut().enumerate() {
        *b = (code >> (8 * i)) as u8;
    }
}

/// Where a logical array's elements live: shape, strides and offset in
/// elements, and the buffer length in element positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Geo {
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
    pub elems: usize,
}

/// The layouts the identity tests place operands in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lay {
    /// C order.
    Contig,
    /// Every other element of a buffer twice as long (packed dtypes: every
    /// other row, the packed axis stays contiguous).
    EveryOther,
    /// Every axis reversed (packed dtypes: every axis but the packed one).
    Reversed,
    /// C order after a few elements of padding.
    Offset,
    /// Axes in reverse memory order (Fortran order; packed dtypes keep the
    /// packed axis innermost and reverse the others).
    Transposed,
    /// Padding after every axis, so no two axes can be merged.
    Padded,
}

pub const ALL_LAYS: [Lay; 6] = [
    Lay::Contig,
    Lay::EveryOther,
    Lay::Reversed,
    Lay::Offset,
    Lay::Transposed,
    Lay::Padded,
];

/// Place an array of `shape` in layout `lay`, for a dtype of `vpb` values per
/// byte.
pub fn place(lay: Lay, shape: &[usize], vpb: usize) -> Geo {
    let r = shape.len();
    let packed = vpb > 1;
    let mut order: Vec<usize> = (0..r).collect();
    let mut gap = 1usize;
    let mut pads = vec![0usize; r];
    let mut neg = vec![false; r];
    let (mut lead, mut tail) = (0usize, 0usize);
    match lay {
        Lay::Contig => {}
        Lay::EveryOther => {
            if packed {
                if r >= 1 {
                    pads[r - 1] = shape[r - 1];
                }
            } else {
                gap = 2;
            }
        }
        Lay::Reversed => {
            for (a, n) in neg.iter_mut().enumerate() {
                *n = !(packed && a == r - 1);
            }
        }
        Lay::Offset => {
            lead = 5 * vpb;
            tail = 3 * vpb;
        }
        Lay::Transposed => {
            if packed {
                if r >= 2 {
                    order[..r - 1].reverse();
                }
            } else {
                order.reverse();
            }
        }
        Lay::Padded => {
            for (l, p) in pads.iter_mut().enumerate() {
                *p = vpb * (l + 1);
            }
            lead = vpb;
        }
    }
    let mut strides = vec![0isize; r];
    let mut acc = gap;
    for level in (0..r).rev() {
        let ax = order[level];
        strides[ax] = acc as isize;
        acc = acc * shape[ax].max(1) + pads[level];
        if packed && level == r - 1 {
            // Rows of a packed dtype start on whole bytes.
            acc = acc.div_ceil(vpb) * vpb;
        }
    }
    let mut offset = lead;
    for ax in 0..r {
        if neg[ax] && shape[ax] > 0 {
            offset += (shape[ax] - 1) * strides[ax] as usize;
            strides[ax] = -strides[ax];
        }
    }
    let elems = (lead + acc + tail).div_ceil(vpb) * vpb;
    Geo {
        shape: shape.to_vec(),
        strides,
        offset,
        elems,
    }
}

/// Element positions of a layout, in C order of its indices.
pub fn positions(g: &Geo) -> Vec<usize> {
    let n: usize = g.shape.iter().product();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let r = g.shape.len();
    let mut idx = vec![0usize; r];
    for _ in 0..n {
        let p = g.offset as isize
            + idx
                .iter()
                .zip(&g.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>();
        assert!(p >= 0, "a test layout reaches before its buffer");
        out.push(p as usize);
        for a in (0..r).rev() {
            idx[a] += 1;
            if idx[a] < g.shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
    out
}

/// Write one element code at element position `p` (packed: element 0 of a
/// byte in its most significant bits).
pub fn put(dt: Dt, buf: &mut [u8], p: usize, code: &[u8]) {
    if dt.packed() {
        let shift = (dt.vpb - 1 - p % dt.vpb) as u32 * dt.bits;
        let mask = (((1u16 << dt.bits) - 1) as u8) << shift;
        let b = &mut buf[p / dt.vpb];
        *b = (*b & !mask) | ((code[0] << shift) & mask);
    } else {
        buf[p * dt.item..(p + 1) * dt.item].copy_from_slice(code);
    }
}

/// Read the element code at element position `p`.
pub fn get(dt: Dt, buf: &[u8], p: usize, out: &mut [u8]) {
    if dt.packed() {
        let shift = (dt.vpb - 1 - p % dt.vpb) as u32 * dt.bits;
        out[0] = (buf[p / dt.vpb] >> shift) & ((1u16 << dt.bits) - 1) as u8;
    } else {
        out.copy_from_slice(&buf[p * dt.item..(p + 1) * dt.item]);
    }
}

/// A buffer holding `codes` (C order) at the positions of `g`, every other
/// byte filled with `junk`.
pub fn store(dt: Dt, g: &Geo, codes: &[u8], junk: &mut Rng) -> Vec<u8> {
    let mut buf: Vec<u8> = (0..dt.buffer_bytes(g.elems))
        .map(|_| junk.next_u64() as u8)
        .collect();
    for (i, p) in positions(g).into_iter().enumerate() {
        put(dt, &mut buf, p, &codes[i * dt.item..(i + 1) * dt.item]);
    }
    buf
}

/// The codes (C order) at the positions of `g`.
pub fn load(dt: Dt, g: &Geo, buf: &[u8]) -> Vec<u8> {
    let ps = positions(g);
    let mut out = vec![0u8; ps.len() * dt.item];
    for (i, p) in ps.into_iter().enumerate() {
        get(dt, buf, p, &mut out[i * dt.item..(i + 1) * dt.item]);
    }
    out
}

/// Which bytes of a buffer of layout `g` hold an element.
pub fn covered(dt: Dt, g: &Geo) -> Vec<bool> {
    let mut c = vec![false; dt.buffer_bytes(g.elems)];
    for p in positions(g) {
        if dt.packed() {
            c[p / dt.vpb] = true;
        } else {
            for b in &mut c[p * dt.item..(p + 1) * dt.item] {
                *b = true;
            }
        }
    }
    c
}

/// `n` f32 values on a grid of 1/4096 in about ±2048, from `rng`.
#[allow(dead_code)]
pub fn grid_f32s(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| (rng.below(1 << 24) as f32 - (1 << 23) as f32) / 4096.0)
        .collect()
}

/// The bytes of a typed slice, for comparing results bit for bit.
#[allow(dead_code)]
pub fn bits_of<T: tessera::Element>(x: &[T]) -> Vec<u8> {
    tessera::array::as_bytes(x).to_vec()
}
