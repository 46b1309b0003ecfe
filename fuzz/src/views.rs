//! Random views over owned buffers: shapes with 0 and 1 extents, zero,
//! negative, padded and huge strides, offsets, packed sub-byte dtypes; the
//! gathering of a view's elements in C order; and the checks of a call's
//! destinations (canary bytes kept on refusal, no byte outside the view
//! touched on success, elements equal to a model's).

use tessera::{ArrayView, ArrayViewMut, DType};
use tessera_testkit::rng::Rng;
use tessera_testkit::values::{push_random, same_result};

/// A view's geometry over a buffer it owns.
#[derive(Clone, Debug)]
pub struct Buf {
    /// The element type.
    pub dtype: DType,
    /// The extents.
    pub shape: Vec<usize>,
    /// The strides, in elements.
    pub strides: Vec<isize>,
    /// The position of element (0, …, 0), in elements.
    pub offset: usize,
    /// The storage.
    pub bytes: Vec<u8>,
}

/// Values per byte of a dtype (1 for byte-sized and wider ones).
pub fn per_byte(d: DType) -> usize {
    d.info().values_per_byte.max(1) as usize
}

/// Whether a dtype is packed several values to a byte.
pub fn packed(d: DType) -> bool {
    per_byte(d) > 1
}

/// A random shape of rank `0..=max_rank`, extents mostly in `1..=max_ext`,
/// sometimes 0; the last extent of a packed dtype is 1 or a multiple of its
/// values per byte.
pub fn random_shape(rng: &mut Rng, d: DType, max_rank: usize, max_ext: usize) -> Vec<usize> {
    let rank = rng.below_usize(max_rank + 1);
    let mut shape: Vec<usize> = (0..rank)
        .map(|_| {
            if rng.chance(1, 16) {
                0
            } else {
                1 + rng.below_usize(max_ext)
            }
        })
        .collect();
    fix_packed_shape(rng, d, &mut shape);
    shape
}

/// Make the last extent of a packed dtype's shape whole bytes (or 1).
pub fn fix_packed_shape(rng: &mut Rng, d: DType, shape: &mut [usize]) {
    let vpb = per_byte(d);
    if vpb > 1 {
        if let Some(last) = shape.last_mut() {
            if *last > 1 && *last % vpb != 0 {
                *last = if rng.chance(1, 4) {
                    1
                } else {
                    vpb * (1 + *last / vpb)
                };
            }
        }
    }
}

/// The element count of a shape (saturating; 0 where an extent is 0).
pub fn count(shape: &[usize]) -> usize {
    if shape.contains(&0) {
        0
    } else {
        shape.iter().fold(1usize, |n, &e| n.saturating_mul(e))
    }
}

impl Buf {
    /// A C-order buffer of `shape` holding `elems` (as [`get`] gives
    /// them). A packed dtype whose last extent is 1 (or rank 0) holds one
    /// value per byte, its other axes strided by whole bytes; any other
    /// packs its last axis.
    pub fn contiguous(dtype: DType, shape: &[usize], elems: &[Vec<u8>]) -> Buf {
        let vpb = per_byte(dtype);
        if vpb > 1 && shape.last().is_none_or(|&e| e == 1) {
            let bits = 8 / vpb;
            let mut strides: Vec<isize> = tessera::array::c_strides(shape)
                .iter()
                .map(|&s| s * vpb as isize)
                .collect();
            if let Some(last) = strides.last_mut() {
                *last = 1;
            }
            return Buf {
                dtype,
                shape: shape.to_vec(),
                strides,
                offset: 0,
                bytes: elems.iter().map(|e| e[0] << (8 - bits)).collect(),
            };
        }
        Buf {
            dtype,
            shape: shape.to_vec(),
            strides: tessera::array::c_strides(shape),
            offset: 0,
            bytes: pack(dtype, elems),
        }
    }

    /// A C-order buffer of `shape` of zero bytes (as [`Buf::contiguous`]).
    pub fn zeroed(dtype: DType, shape: &[usize]) -> Buf {
        let zero = vec![
            0u8;
            if packed(dtype) {
                1
            } else {
                dtype.info().item_bytes
            }
        ];
        Buf::contiguous(dtype, shape, &vec![zero; count(shape)])
    }

    /// A random layout of `shape` over a buffer of random valid elements:
    /// padded, negative and zero strides (zero ones only when `zero_ok`),
    /// huge strides on axes of extent 1, an offset, slack at the end; with
    /// `wild`, one stride, the offset or the buffer's length is sometimes
    /// wrong (out of bounds, misaligned for a packed dtype, overflowing), so
    /// that making the view is refused.
    pub fn random(rng: &mut Rng, dtype: DType, shape: &[usize], zero_ok: bool, wild: bool) -> Buf {
        let vpb = per_byte(dtype) as isize;
        let rank = shape.len();
        let mut strides = vec![0isize; rank];
        let mut acc: isize = 1;
        for k in (0..rank).rev() {
            let n = shape[k] as isize;
            let last_packed = vpb > 1 && k == rank - 1;
            let s = if last_packed {
                1
            } else {
                match rng.below(8) {
                    0 if zero_ok => 0,
                    1 => -acc,
                    2 => acc + vpb * (1 + rng.below(3) as isize),
                    3 if n == 1 => *rng.pick(&[1isize << 20, -(1isize << 20), 7 * vpb]),
                    _ => acc,
                }
            };
            strides[k] = s;
            if n > 1 {
                acc = acc.max(s.abs().saturating_mul(n));
            }
            if vpb > 1 && acc % vpb != 0 {
                acc += vpb - acc % vpb;
            }
        }
        let mut lo: i128 = 0;
        let mut hi: i128 = 0;
        for (&n, &s) in shape.iter().zip(&strides) {
            let span = (n.max(1) as i128 - 1) * s as i128;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        let mut offset = (-lo) as usize + vpb as usize * rng.below_usize(3);
        let slack = rng.below_usize(3) * vpb as usize;
        let elems = offset + (hi as usize) + 1 + slack;
        let mut bytes = fill(rng, dtype, elems);
        if wild {
            match rng.below(6) {
                0 if rank > 0 => {
                    let k = rng.below_usize(rank);
                    strides[k] = *rng.pick(&[
                        isize::MAX,
                        isize::MIN,
                        1 << 62,
                        -(1 << 40),
                        strides[k] + 1,
                        strides[k] - 1,
                    ]);
                }
                1 => {
                    offset =
                        offset.saturating_add(*rng.pick(&[1usize, 3, usize::MAX / 2, usize::MAX]))
                }
                2 => {
                    let n = rng.below_usize(bytes.len() + 1);
                    bytes.truncate(n);
                }
                3 if rank > 0 => {
                    strides.pop();
                }
                _ => {}
            }
        }
        Buf {
            dtype,
            shape: shape.to_vec(),
            strides,
            offset,
            bytes,
        }
    }

    /// The view, or the library's refusal of the layout.
    pub fn view(&self) -> tessera::Result<ArrayView<'_>> {
        ArrayView::new(
            self.dtype,
            &self.shape,
            &self.strides,
            self.offset,
            &self.bytes,
        )
    }

    /// The writable view, or the library's refusal of the layout.
    pub fn view_mut(&mut self) -> tessera::Result<ArrayViewMut<'_>> {
        ArrayViewMut::new(
            self.dtype,
            &self.shape,
            &self.strides,
            self.offset,
            &mut self.bytes,
        )
    }

    /// The element positions of the view in C order of its indices.
    pub fn positions(&self) -> Vec<usize> {
        let n = count(&self.shape);
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return out;
        }
        let rank = self.shape.len();
        let mut idx = vec![0usize; rank];
        for _ in 0..n {
            let p: i128 = self.offset as i128
                + idx
                    .iter()
                    .zip(&self.strides)
                    .map(|(&i, &s)| i as i128 * s as i128)
                    .sum::<i128>();
            out.push(p as usize);
            for k in (0..rank).rev() {
                idx[k] += 1;
                if idx[k] < self.shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        out
    }

    /// The element at position `p`: its storage bytes, or for a packed
    /// dtype its code in one byte.
    pub fn element(&self, p: usize) -> Vec<u8> {
        get(self.dtype, &self.bytes, p)
    }

    /// The elements of the view in C order.
    pub fn elements(&self) -> Vec<Vec<u8>> {
        self.positions()
            .into_iter()
            .map(|p| self.element(p))
            .collect()
    }

    /// A C-order copy of the view's elements (the view must be valid).
    pub fn to_contiguous(&self) -> Buf {
        Buf::contiguous(self.dtype, &self.shape, &self.elements())
    }
}

/// `n` random valid elements of `d` (packed dtypes: `n` codes, in whole bytes).
pub fn fill(rng: &mut Rng, d: DType, n: usize) -> Vec<u8> {
    if packed(d) {
        let bytes = n.div_ceil(per_byte(d));
        return (0..bytes).map(|_| rng.next_u64() as u8).collect();
    }
    let mut out = Vec::with_capacity(n * d.info().item_bytes);
    for _ in 0..n {
        push_random(d, rng, &mut out);
    }
    out
}

/// The element of `d` at position `p` of `bytes`.
pub fn get(d: DType, bytes: &[u8], p: usize) -> Vec<u8> {
    let vpb = per_byte(d);
    if vpb > 1 {
        let bits = 8 / vpb;
        let shift = 8 - bits * (p % vpb + 1);
        vec![(bytes[p / vpb] >> shift) & ((1u16 << bits) - 1) as u8]
    } else {
        let w = d.info().item_bytes;
        bytes[p * w..(p + 1) * w].to_vec()
    }
}

/// The bit mask of the element at position `p` within its storage bytes:
/// (first byte, mask per byte).
fn mask(d: DType, p: usize) -> (usize, Vec<u8>) {
    let vpb = per_byte(d);
    if vpb > 1 {
        let bits = 8 / vpb;
        let shift = 8 - bits * (p % vpb + 1);
        (p / vpb, vec![((((1u16 << bits) - 1) as u8) << shift)])
    } else {
        let w = d.info().item_bytes;
        (p * w, vec![0xff; w])
    }
}

/// Elements (as [`get`] gives them) packed into C-order storage.
pub fn pack(d: DType, elems: &[Vec<u8>]) -> Vec<u8> {
    let vpb = per_byte(d);
    if vpb > 1 {
        let bits = 8 / vpb;
        let mut out = vec![0u8; elems.len().div_ceil(vpb)];
        for (p, e) in elems.iter().enumerate() {
            let shift = 8 - bits * (p % vpb + 1);
            out[p / vpb] |= e[0] << shift;
        }
        out
    } else {
        elems.concat()
    }
}

/// Check a destination after a call that succeeded: it reaches no element
/// twice, every bit outside its elements is as in `before`, and its
/// elements equal `want` (C order; NaN equals NaN).
pub fn check_written(
    name: &str,
    before: &[u8],
    after: &Buf,
    want: &[Vec<u8>],
) -> Result<(), String> {
    let pos = after.positions();
    if pos.len() != want.len() {
        return Err(format!(
            "{name}: {} elements, the model has {}",
            pos.len(),
            want.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(p) = pos.iter().find(|&&p| !seen.insert(p)) {
        return Err(format!(
            "{name}: the call accepted a destination that reaches position {p} twice"
        ));
    }
    let mut touched = vec![0u8; before.len()];
    for (i, &p) in pos.iter().enumerate() {
        let (at, m) = mask(after.dtype, p);
        for (k, b) in m.iter().enumerate() {
            touched[at + k] |= b;
        }
        let got = after.element(p);
        let equal =
            got == want[i] || (!packed(after.dtype) && same_result(after.dtype, &got, &want[i]));
        if !equal {
            return Err(format!(
                "{name}: element {i} (position {p}) is {got:02x?}, the model says {:02x?}",
                want[i]
            ));
        }
    }
    for (k, ((&b, &a), &t)) in before.iter().zip(&after.bytes).zip(&touched).enumerate() {
        if (b ^ a) & !t != 0 {
            return Err(format!(
                "{name}: byte {k} outside the destination's elements changed from {b:#04x} to {a:#04x}"
            ));
        }
    }
    Ok(())
}

/// Check that a refused call left a destination's bytes as they were.
pub fn check_untouched(name: &str, before: &[u8], after: &[u8]) -> Result<(), String> {
    match before.iter().zip(after).position(|(a, b)| a != b) {
        None if before.len() == after.len() => Ok(()),
        None => Err(format!("{name}: the buffer changed length")),
        Some(k) => Err(format!(
            "{name}: a refused call changed byte {k} from {:#04x} to {:#04x}",
            before[k], after[k]
        )),
    }
}

/// A shape that broadcasts to `target`: a suffix of it with some extents
/// made 1.
pub fn broadcast_shape(rng: &mut Rng, target: &[usize]) -> Vec<usize> {
    let drop =
        rng.below_usize(target.len() + 1)
            .min(if rng.chance(1, 2) { 0 } else { target.len() });
    target[drop..]
        .iter()
        .map(|&e| if rng.chance(1, 5) { 1 } else { e })
        .collect()
}

/// A short description of a buffer's geometry.
pub fn describe(b: &Buf) -> String {
    format!(
        "{}{:?} strides {:?} offset {} bytes {}",
        b.dtype,
        b.shape,
        b.strides,
        b.offset,
        b.bytes.len()
    )
}
