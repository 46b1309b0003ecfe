//! Inputs of the scalar oracle tests that sit near other inputs: an element a
//! few ulps (or codes) from a given one, and an fma addend that cancels a
//! product. The rest of the element helpers are in `tessera_testkit::values`.

use tessera_generated::DType;
use tessera_testkit::mini::mini;
use tessera_testkit::rng::Rng;
use tessera_testkit::values::{code_bytes, code_of, decode};

/// `a` with its sign flipped (if `flip`) and then moved `k` ulps (codes) along
/// its bit pattern; other classes get `a` itself.
pub fn nudge(d: DType, a: &[u8], k: i64, flip: bool, out: &mut Vec<u8>) {
    match d {
        DType::F32 => {
            let b = u32::from_le_bytes(a.try_into().unwrap());
            let b = (b ^ if flip { 0x8000_0000 } else { 0 }).wrapping_add(k as u32);
            out.extend(b.to_le_bytes());
        }
        DType::F64 => {
            let b = u64::from_le_bytes(a.try_into().unwrap());
            let b = (b ^ if flip { 1 << 63 } else { 0 }).wrapping_add(k as u64);
            out.extend(b.to_le_bytes());
        }
        DType::C64 | DType::C128 | DType::F16c | DType::Bf16c => {
            let h = a.len() / 2;
            let c = d.component().expect("a complex dtype");
            nudge(c, &a[..h], k, flip, out);
            nudge(c, &a[h..], k, flip, out);
        }
        _ => match mini(d) {
            Some(m) => {
                let c = code_of(d, a);
                let sign = if m.signed && flip {
                    1u32 << (m.e + m.m)
                } else {
                    0
                };
                let c = ((c ^ sign) as i64 + k).rem_euclid(1 << m.code_bits) as u32;
                out.extend(code_bytes(d, c));
            }
            None => out.extend_from_slice(a),
        },
    }
}

/// An element near `a` or near `-a` (a few ulps or codes away, or exactly),
/// for cancellations and ties in two-input float kinds.
pub fn near(d: DType, a: &[u8], rng: &mut Rng, out: &mut Vec<u8>) {
    let k = if rng.chance(1, 3) {
        0
    } else {
        rng.range_i64(-3, 3)
    };
    nudge(d, a, k, rng.chance(1, 2), out);
}

/// For fma: an addend near -(a·b) rounded into d, so that the sum cancels
/// exactly or leaves only the product's low bits.
pub fn fma_addend(d: DType, a: &[u8], b: &[u8], rng: &mut Rng, out: &mut Vec<u8>) {
    let p = decode(d, a).f() * decode(d, b).f();
    let rounded = match d {
        DType::F32 => (p as f32).to_le_bytes().to_vec(),
        DType::F64 => p.to_le_bytes().to_vec(),
        _ => code_bytes(d, mini(d).expect("a float dtype").encode(p, true)),
    };
    let k = if rng.chance(1, 3) {
        0
    } else {
        rng.range_i64(-2, 2)
    };
    nudge(d, &rounded, k, true, out);
}
