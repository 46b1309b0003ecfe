//! Total-order keys: every element maps to an unsigned integer whose natural
//! order is the order the ordering kernels state,
//! −∞ < … < −0 < +0 < … < +∞ < NaN, with every NaN (and every complex number
//! with a NaN part) on one key, the largest.
//!
//! Floats of 16 bits and more use the sign trick (a positive value gets its
//! sign bit set, a negative one all its bits flipped), integers flip their sign
//! bit, complex numbers join the keys of their parts (real part high), and the
//! dtypes of one byte or less (bool, i8, u8, the 8/6/4-bit floats, the packed
//! integers) go through a table of 256 ranks built from each code's value.

use crate::array::ArrayViewMut;

/// Run `$body` with `$m` bound to the key map of `$dtype` (a `Result`):
/// the module's order, or with `$total` IEEE 754 totalOrder for the floats
/// ([`FloatOrder::Total`](crate::order::FloatOrder::Total)).
macro_rules! with_key_map {
    ($dtype:expr, |$m:ident| $body:expr) => {
        with_key_map!($dtype, false, |$m| $body)
    };
    ($dtype:expr, $total:expr, |$m:ident| $body:expr) => {{
        use $crate::order::key::{FloatKey, IntKey, PartsKey};
        use $crate::DType;
        let total: bool = $total;
        match $dtype {
            DType::U16 => {
                let $m = &IntKey::<u16> { bias: 0 };
                $body
            }
            DType::I16 => {
                let $m = &IntKey::<u16> { bias: 1 << 15 };
                $body
            }
            DType::U32 => {
                let $m = &IntKey::<u32> { bias: 0 };
                $body
            }
            DType::I32 => {
                let $m = &IntKey::<u32> { bias: 1 << 31 };
                $body
            }
            DType::U64 => {
                let $m = &IntKey::<u64> { bias: 0 };
                $body
            }
            DType::I64 => {
                let $m = &IntKey::<u64> { bias: 1 << 63 };
                $body
            }
            // totalOrder: no magnitude is a NaN's, so the sign trick
            // alone orders every code (NaNs by sign, then payload).
            DType::F16 => {
                let $m = &FloatKey::<u16> {
                    inf: if total { u16::MAX } else { 0x7c00 },
                };
                $body
            }
            // totalOrder: no magnitude is a NaN's, so the sign trick
            // alone orders every code (NaNs by sign, then payload).
            DType::Bf16 => {
                let $m = &FloatKey::<u16> {
                    inf: if total { u16::MAX } else { 0x7f80 },
                };
                $body
            }
            // totalOrder: no magnitude is a NaN's, so the sign trick
            // alone orders every code (NaNs by sign, then payload).
            DType::F32 => {
                let $m = &FloatKey::<u32> {
                    inf: if total { u32::MAX } else { 0x7f80_0000 },
                };
                $body
            }
            DType::F64 => {
                let $m = &FloatKey::<u64> {
                    inf: if total {
                        u64::MAX
                    } else {
                        0x7ff0_0000_0000_0000
                    },
                };
                $body
            }
            // A pair sorts as (hi, lo) lexicographically, as a complex
            // number does: value order for normalised pairs.
            DType::C64 | DType::Df32 => {
                let $m = &PartsKey::<u32> {
                    total,
                    inf: 0x7f80_0000,
                };
                $body
            }
            DType::C128 | DType::Dd64 => {
                let $m = &PartsKey::<u64> {
                    total,
                    inf: 0x7ff0_0000_0000_0000,
                };
                $body
            }
            DType::F16c => {
                let $m = &PartsKey::<u16> { total, inf: 0x7c00 };
                $body
            }
            DType::Bf16c => {
                let $m = &PartsKey::<u16> { total, inf: 0x7f80 };
                $body
            }
            d => {
                let $m = &$crate::order::key::byte_key(d, total)?;
                $body
            }
        }
    }};
}
use crate::error::{Error, Result};
use crate::{cast, ArrayView, CastMode, DType, Exec};

/// An unsigned key the radix passes take apart a digit at a time.
pub(crate) trait RadixKey: Copy + Ord + Send + Sync + Default + 'static {
    /// Bits of the key.
    const BITS: u32;
    /// Digits of the key for the top-k bound (11 bits each, the top one
    /// narrower).
    const PASSES: usize;
    /// The key shifted right by `lo`, its low 64 bits (a digit is these
    /// masked: the hot loops take the mask once).
    fn low64(self, lo: u32) -> u64;
    /// Digit `pass` (0 the least significant).
    fn digit(self, pass: usize) -> usize;
    /// All bits flipped: the descending key.
    fn flip(self) -> Self;
    /// `self - b`, wrapping.
    fn minus(self, b: Self) -> Self;
    /// `self | b`.
    fn or(self, b: Self) -> Self;
    /// `self & b`.
    fn and(self, b: Self) -> Self;
    /// `v << lo` (bits shifted past the top are lost).
    fn from_u64_at(v: u64, lo: u32) -> Self;
    /// The number of bits up to the highest set one (0 for 0).
    fn width(self) -> u32;
    /// The key with bits below `lo` cleared (`lo` ≤ BITS).
    fn above(self, lo: u32) -> Self;
}

macro_rules! radix_key {
    ($($t:ty => $d:expr),*) => {$(
        impl RadixKey for $t {
            const BITS: u32 = <$t>::BITS;
            const PASSES: usize = (<$t>::BITS as usize).div_ceil($d);
            #[inline(always)]
            fn low64(self, lo: u32) -> u64 {
                (self >> lo) as u64
            }
            #[inline(always)]
            fn digit(self, pass: usize) -> usize {
                ((self >> ($d * pass as u32)) as u128 & ((1u128 << $d) - 1)) as usize
            }
            #[inline(always)]
            fn flip(self) -> Self {
                !self
            }
            #[inline(always)]
            fn minus(self, b: Self) -> Self {
                self.wrapping_sub(b)
            }
            #[inline(always)]
            fn or(self, b: Self) -> Self {
                self | b
            }
            #[inline(always)]
            fn and(self, b: Self) -> Self {
                self & b
            }
            #[inline(always)]
            fn from_u64_at(v: u64, lo: u32) -> Self {
                ((v as u128) << lo) as $t
            }
            #[inline(always)]
            fn width(self) -> u32 {
                <$t>::BITS - self.leading_zeros()
            }
            #[inline(always)]
            fn above(self, lo: u32) -> Self {
                if lo >= <$t>::BITS { 0 } else { (self >> lo) << lo }
            }
        }
    )*};
}
radix_key!(u8 => 8, u16 => 8, u32 => 11, u64 => 11, u128 => 8);

/// How the elements of one dtype become keys, and (where it can) how a key
/// becomes the element's bits again.
///
/// Each `unsafe` method states its contract in its own `# Safety` section;
/// every impl relies on that contract alone.
pub(crate) trait KeyMap: Sync + Copy {
    /// The key type.
    type K: RadixKey;
    /// Whether every key that [`KeyMap::collapses`] leaves alone maps back
    /// to its element's bits ([`KeyMap::write_key`]).
    const INVERTIBLE: bool;
    /// The key of the element at position `pos` (elements) of `data`.
    ///
    /// # Safety
    /// `pos` must be an element of a validated view over `data`.
    unsafe fn key_at(&self, data: *const u8, pos: isize) -> Self::K;
    /// Whether `k` is the key of several bit patterns (a NaN's).
    fn collapses(&self, k: Self::K) -> bool;
    /// Write the element whose key is `k` (one that does not collapse) at `pos`.
    ///
    /// # Safety
    /// `pos` must be an element of a validated view over `data`, written by
    /// this caller alone.
    unsafe fn write_key(&self, k: Self::K, data: *mut u8, pos: isize);
    /// Whether every element's key, stored in memory, is its bits (so a key
    /// written over its element needs no writing back).
    fn bits_are_key(&self) -> bool {
        false
    }
    /// Copy the element at `spos` of `src` to `dpos` of `dst`, bits unchanged.
    ///
    /// # Safety
    /// Both positions must be elements of validated views over their bytes,
    /// the destination written by this caller alone.
    unsafe fn copy(&self, src: *const u8, spos: isize, dst: *mut u8, dpos: isize);
}

macro_rules! plain_copy {
    ($n:expr) => {
        #[inline(always)]
        unsafe fn copy(&self, src: *const u8, spos: isize, dst: *mut u8, dpos: isize) {
            // SAFETY: the caller's promise: both are elements of their views.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    src.offset(spos * $n as isize),
                    dst.offset(dpos * $n as isize),
                    $n,
                )
            }
        }
    };
}

/// Integers of 16, 32 and 64 bits: the key is the bits, the sign bit flipped
/// for signed ones.
#[derive(Clone, Copy)]
pub(crate) struct IntKey<K> {
    /// The sign bit for signed dtypes, 0 for unsigned.
    pub(crate) bias: K,
}

/// IEEE floats of 16, 32 and 64 bits (f16, bf16, f32, f64).
#[derive(Clone, Copy)]
pub(crate) struct FloatKey<K> {
    /// The bits of +∞ (a magnitude above it is a NaN).
    pub(crate) inf: K,
}

macro_rules! width_maps {
    ($($k:ty => $n:expr),*) => {$(
        impl KeyMap for IntKey<$k> {
            type K = $k;
            const INVERTIBLE: bool = true;
            #[inline(always)]
            unsafe fn key_at(&self, data: *const u8, pos: isize) -> $k {
                // SAFETY: the caller's promise: `pos` is an element of the view.
                let b = unsafe { (data.offset(pos * $n) as *const $k).read_unaligned() };
                <$k>::from_le(b) ^ self.bias
            }
            #[inline(always)]
            fn collapses(&self, _k: $k) -> bool {
                false
            }
            fn bits_are_key(&self) -> bool {
                self.bias == 0 && cfg!(target_endian = "little")
            }
            #[inline(always)]
            unsafe fn write_key(&self, k: $k, data: *mut u8, pos: isize) {
                // SAFETY: the caller's promise: `pos` is an element it alone writes.
                unsafe { (data.offset(pos * $n) as *mut $k).write_unaligned((k ^ self.bias).to_le()) }
            }
            plain_copy!($n);
        }

        impl KeyMap for FloatKey<$k> {
            type K = $k;
            const INVERTIBLE: bool = true;
            #[inline(always)]
            unsafe fn key_at(&self, data: *const u8, pos: isize) -> $k {
                // SAFETY: the caller's promise: `pos` is an element of the view.
                let b = <$k>::from_le(unsafe { (data.offset(pos * $n) as *const $k).read_unaligned() });
                float_key(b, self.inf)
            }
            #[inline(always)]
            fn collapses(&self, k: $k) -> bool {
                // Under totalOrder (`inf` all ones) every key is one code's.
                k == <$k>::MAX && self.inf != <$k>::MAX
            }
            #[inline(always)]
            unsafe fn write_key(&self, k: $k, data: *mut u8, pos: isize) {
                // A key with its top bit set is a positive's (flip the
                // sign back), one without a negative's (flip every bit):
                // branch-free, so the caller's loop can run vectorised.
                let sign = !(<$k>::MAX >> 1);
                let b = k ^ (sign | (k >> (<$k>::BITS - 1)).wrapping_sub(1));
                // SAFETY: the caller's promise: `pos` is an element it alone writes.
                unsafe { (data.offset(pos * $n) as *mut $k).write_unaligned(b.to_le()) }
            }
            plain_copy!($n);
        }
    )*};
}
width_maps!(u16 => 2, u32 => 4, u64 => 8);

/// The key of the float bits `b` (+∞ is `inf`): a NaN is the largest key.
/// Branch-free: a positive gets its sign bit set, a negative every bit
/// flipped (a mask from the sign), a NaN all bits set.
#[inline(always)]
fn float_key<K: FloatBits>(b: K, inf: K) -> K {
    b.key(inf)
}

/// The sign trick on unsigned float bits.
trait FloatBits: Copy {
    fn key(self, inf: Self) -> Self;
}

macro_rules! float_bits {
    ($($t:ty),*) => {$(
        impl FloatBits for $t {
            #[inline(always)]
            fn key(self, inf: $t) -> $t {
                let sign: $t = 1 << (<$t>::BITS - 1);
                let neg = (0 as $t).wrapping_sub(self >> (<$t>::BITS - 1));
                let nan = (0 as $t).wrapping_sub(((self & !sign) > inf) as $t);
                (self ^ (neg | sign)) | nan
            }
        }
    )*};
}
float_bits!(u16, u32, u64);

/// A complex number (or a pair, hi then lo) of two float parts of `P`'s
/// bits: the real part's key in the high half of a key twice as wide, the
/// imaginary part's in the low half; a NaN in either part gives the largest
/// key. With `total`, each part in totalOrder and no collapse (lexicographic
/// totalOrder of the two). `inf` holds the bits of a part's +∞: c64 and df32
/// take `u32` parts, c128 and dd64 `u64`, f16c and bf16c `u16` (0x7c00 for
/// f16, 0x7f80 for bf16).
#[derive(Clone, Copy)]
pub(crate) struct PartsKey<P> {
    pub(crate) total: bool,
    pub(crate) inf: P,
}

macro_rules! parts_keys {
    ($($p:ty => $k:ty),*) => {$(
        impl KeyMap for PartsKey<$p> {
            type K = $k;
            const INVERTIBLE: bool = false;
            #[inline(always)]
            unsafe fn key_at(&self, data: *const u8, pos: isize) -> $k {
                const PART: usize = core::mem::size_of::<$p>();
                // SAFETY: the caller's promise: `pos` is an element (two
                // parts) of the view.
                let (re, im) = unsafe {
                    let p = data.offset(pos * 2 * PART as isize);
                    (
                        <$p>::from_le((p as *const $p).read_unaligned()),
                        <$p>::from_le((p.add(PART) as *const $p).read_unaligned()),
                    )
                };
                let inf = if self.total { <$p>::MAX } else { self.inf };
                let (kr, ki) = (float_key(re, inf), float_key(im, inf));
                if !self.total && (kr == <$p>::MAX || ki == <$p>::MAX) {
                    <$k>::MAX
                } else {
                    ((kr as $k) << <$p>::BITS) | ki as $k
                }
            }
            fn collapses(&self, k: $k) -> bool {
                !self.total && k == <$k>::MAX
            }
            unsafe fn write_key(&self, _k: $k, _data: *mut u8, _pos: isize) {
                unreachable!("complex keys are never written back")
            }
            plain_copy!(2 * core::mem::size_of::<$p>());
        }
    )*};
}
parts_keys!(u16 => u32, u32 => u64, u64 => u128);

/// The dtypes of one byte or less: each code's rank among the codes' values
/// in the total order (equal values, such as every NaN code or the bytes a
/// bool reads as true, share a rank).
#[derive(Clone, Copy)]
pub(crate) struct ByteKey {
    /// Rank of each code.
    pub(crate) rank: [u8; 256],
    /// Values per byte: 1, 2 (4-bit codes) or 8 (1-bit codes).
    pub(crate) vpb: usize,
}

impl ByteKey {
    /// The code at element position `pos`.
    ///
    /// # Safety
    /// `pos` must be an element of a validated view over `data` (so the byte
    /// that holds its code is inside `data`).
    #[inline(always)]
    unsafe fn code(&self, data: *const u8, pos: isize) -> u8 {
        match self.vpb {
            // SAFETY: `pos` is an element of the view (this function's
            // contract), one byte each, so its byte is inside `data`.
            1 => unsafe { *data.offset(pos) },
            2 => {
                // SAFETY: `pos` is an element of the view (this function's
                // contract), two a byte, so byte pos / 2 is inside `data`.
                let b = unsafe { *data.offset(pos.div_euclid(2)) };
                (b >> (4 * (1 - pos.rem_euclid(2)))) & 0xf
            }
            _ => {
                // SAFETY: `pos` is an element of the view (this function's
                // contract), eight a byte, so byte pos / 8 is inside `data`.
                let b = unsafe { *data.offset(pos.div_euclid(8)) };
                (b >> (7 - pos.rem_euclid(8))) & 1
            }
        }
    }
}

impl KeyMap for ByteKey {
    type K = u8;
    const INVERTIBLE: bool = false;
    #[inline(always)]
    unsafe fn key_at(&self, data: *const u8, pos: isize) -> u8 {
        // SAFETY: `pos` is an element of the view (key_at's contract), as
        // `code` asks.
        self.rank[unsafe { self.code(data, pos) } as usize]
    }
    fn collapses(&self, _k: u8) -> bool {
        true
    }
    unsafe fn write_key(&self, _k: u8, _data: *mut u8, _pos: isize) {
        unreachable!("byte keys are never written back")
    }
    #[inline(always)]
    unsafe fn copy(&self, src: *const u8, spos: isize, dst: *mut u8, dpos: isize) {
        // SAFETY: the caller's promise: both are elements of their views, the
        // destination's byte written by this caller alone.
        unsafe {
            let c = self.code(src, spos);
            match self.vpb {
                1 => *dst.offset(dpos) = c,
                2 => {
                    let p = dst.offset(dpos.div_euclid(2));
                    let sh = 4 * (1 - dpos.rem_euclid(2)) as u32;
                    *p = (*p & !(0xf << sh)) | (c << sh);
                }
                _ => {
                    let p = dst.offset(dpos.div_euclid(8));
                    let sh = (7 - dpos.rem_euclid(8)) as u32;
                    *p = (*p & !(1 << sh)) | (c << sh);
                }
            }
        }
    }
}

/// The total-order key of an f64 (NaN the largest).
pub(crate) fn f64_key(v: f64) -> u64 {
    float_key(v.to_bits(), 0x7ff0_0000_0000_0000)
}

/// The rank table of a dtype of one byte or less, from each code's value
/// (decoded exactly to f64 by [`cast`]); with `total`, a NaN code whose
/// value has its sign bit set ranks below every other code (every NaN of
/// one sign one rank, as the `total_order` kind has it).
pub(crate) fn byte_key(dtype: DType, total: bool) -> Result<ByteKey> {
    let info = dtype.info();
    let vpb = info.values_per_byte as usize;
    let codes: usize = match vpb {
        1 => 256,
        2 => 16,
        _ => 2,
    };
    // Every code once, packed as the dtype packs them (element 0 in the most
    // significant bits of its byte).
    let mut bytes = vec![0u8; 256];
    for c in 0..codes {
        match vpb {
            1 => bytes[c] = c as u8,
            2 => bytes[c / 2] |= (c as u8) << (4 * (1 - c % 2)),
            _ => bytes[c / 8] |= (c as u8) << (7 - c % 8),
        }
    }
    // A u1 array of two codes would not fill its byte: decode eight.
    let elems = codes.max(vpb);
    let mut vals = vec![0f64; elems];
    let src = ArrayView::contiguous(dtype, &[elems], &bytes[..elems / vpb])?;
    let mut dst = ArrayViewMut::from_slice(&mut vals, &[elems])?;
    cast(CastMode::Default, &src, &mut dst, &Exec::SEQ)?;
    let keys: Vec<u64> = vals[..codes]
        .iter()
        .map(|&v| {
            if total && v.is_nan() && v.is_sign_negative() {
                0
            } else {
                f64_key(v)
            }
        })
        .collect();
    let mut distinct = keys.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let mut rank = [0u8; 256];
    for (c, k) in keys.iter().enumerate() {
        let r = distinct.binary_search(k).map_err(|_| Error::Attribute {
            name: "sort".into(),
            reason: "rank table".into(),
        })?;
        rank[c] = r as u8;
    }
    Ok(ByteKey { rank, vpb })
}
