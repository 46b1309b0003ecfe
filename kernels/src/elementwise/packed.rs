//! Fused casts between f32 and the packed dtypes (1 and 4 bits per value)
//! on contiguous runs: one pass reads the f32 values and writes whole packed
//! bytes, or the reverse, 32 values at a time in AVX2 registers. The general
//! path (`sub_byte::run_packed`) writes one code per byte into a tile and packs
//! it in a second pass; these kernels do both in registers.
//!
//! They carry no conversion rule of their own. At first use each is derived
//! from the scalar tier's kernel for the same cast and mode (the reference
//! semantics), as a table:
//! - decoding: the f32 value of every code (2 or 16 entries), looked up;
//! - encoding into an integer (u1, u4, i4): the scalar kernel's rule
//!   (truncate toward zero, saturate to the range, NaN → 0) with the range
//!   from the dtype's metadata;
//! - encoding into a sign-magnitude float (e2m1fn, or any ≤ 4-bit float the
//!   spec adds): the smallest f32 that the scalar kernel sends to each code
//!   above zero (found by bisection over the f32 bit patterns, which order
//!   positive values), so a code is the number of thresholds at or below
//!   |x|, with x's sign bit and the scalar kernel's codes for ±NaN. Where
//!   the codes' values are exactly those of a minifloat (m mantissa bits,
//!   least normal 2^emin, as e2m1fn's) and the scalar kernel rounds to
//!   nearest even and saturates, the encoder rounds the f32 bits instead
//!   (fewer operations than seven comparisons), taken only when it agrees
//!   with the scalar kernel on the same probes.
//!
//! A derived table is checked against the scalar kernel on probes (every
//! threshold and its predecessor, every code's value, zeros, subnormals,
//! infinities, NaN payloads) and dropped, leaving the general path, when
//! any probe differs or the dtype's codes are not of the shape the model
//! needs. The tests compare every fused cast with the scalar tier bit for
//! bit (and, ignored, on all 2^32 f32 inputs).

use crate::tier::cast_table;
use crate::{cast_index, Args, Class, DType, Tier, Variant};
use std::sync::OnceLock;

/// Values a kernel iteration handles: 4 vectors of 8 lanes.
pub(crate) const GROUP: usize = 32;

/// How an f32 becomes a code (see the module doc).
#[derive(Clone, Copy, Debug)]
enum Encode {
    /// An integer destination: clamp to `[lo, hi]`, truncate, NaN → 0.
    Int { lo: f32, hi: f32 },
    /// A sign-magnitude float destination: code = #{k: |x| ≥ t[k]} (unused
    /// thresholds are NaN, which no value reaches), or'd with the sign code
    /// for a negative x; `nan[s]` for a NaN of sign s.
    Float { t: [f32; 7], nan: [u8; 2] },
    /// A sign-magnitude float whose codes are those of a minifloat with `m`
    /// mantissa bits and least normal value 2^`emin`, rounded to nearest
    /// even and saturated at code `cmax` (as the scalar kernel does it,
    /// checked on the probes): below 2^emin the code is
    /// rint(|x|·2^(m−emin)), above it the f32 bits of |x| rounded to m
    /// mantissa bits and rebased; `nan[s]` for a NaN of sign s. Fewer
    /// operations per value than the thresholds.
    Mini {
        m: u32,
        emin: i32,
        cmax: i32,
        nan: [u8; 2],
    },
}

/// The fused kernels of one packed dtype in one cast mode.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fused {
    /// Bits per value: 1 or 4.
    bits: u32,
    /// f32 → code, when the model reproduces the scalar kernel.
    enc: Option<Encode>,
    /// The f32 value of each code (the first `1 << bits` entries), when the
    /// scalar kernel decodes into f32.
    dec: Option<[f32; 16]>,
}

/// The fused kernels for casts between f32 and `d` in a mode, if any.
pub(crate) fn fused(d: DType, saturating: bool) -> Option<&'static Fused> {
    static CACHE: OnceLock<Vec<Option<Fused>>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        DType::ALL
            .iter()
            .flat_map(|&d| [false, true].map(|s| derive(d, s)))
            .collect()
    });
    let i = DType::ALL.iter().position(|&x| x == d)?;
    all[2 * i + saturating as usize].as_ref()
}

/// Run the scalar tier's contiguous cast kernel `from → to` on `src` (one
/// item per element; a packed side holds one code per byte).
fn scalar_cast(from: DType, to: DType, saturating: bool, src: &[u8], n: usize) -> Option<Vec<u8>> {
    let table = cast_table(Tier::Scalar)?;
    let f = table[cast_index(from, to, saturating, Variant::Contig)?];
    let item = if to.info().values_per_byte > 1 {
        1
    } else {
        to.info().item_bytes
    };
    let mut out = vec![0u8; n * item];
    let args = Args {
        n,
        src: [src.as_ptr(), core::ptr::null(), core::ptr::null()],
        src_stride: [1; 3],
        dst: out.as_mut_ptr(),
        dst_stride: 1,
    };
    // SAFETY: `src` holds n source items (the callers build it so), `out` n
    // destination items, and the kernel is the scalar cast for these dtypes.
    unsafe { f(&args) };
    Some(out)
}

fn derive(d: DType, saturating: bool) -> Option<Fused> {
    let info = d.info();
    let bits = info.bits;
    if info.values_per_byte <= 1 || !(bits == 1 || bits == 4) {
        return None;
    }
    let mask = ((1u32 << bits) - 1) as u8;
    let codes: Vec<u8> = (0..=mask).collect();
    let dec = scalar_cast(d, DType::F32, saturating, &codes, codes.len()).map(|b| {
        let mut lut = [0f32; 16];
        for (i, v) in b.chunks_exact(4).enumerate() {
            lut[i] = f32::from_le_bytes([v[0], v[1], v[2], v[3]]);
        }
        lut
    });
    let encode = |xs: &[f32]| -> Option<Vec<u8>> {
        let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let codes = scalar_cast(DType::F32, d, saturating, &bytes, xs.len())?;
        Some(codes.into_iter().map(|c| c & mask).collect())
    };
    let enc = match info.class {
        Class::Int | Class::Uint => info.int_range.map(|(lo, hi)| Encode::Int {
            lo: lo as f32,
            hi: hi as f32,
        }),
        Class::Float => dec.and_then(|lut| float_model(&lut, bits, &encode)),
        _ => None,
    };
    let fused = Fused { bits, enc, dec };
    // Keep an encoder only where it reproduces the scalar kernel on the
    // probes (those of the threshold model: its thresholds and neighbours).
    let probes = probes(&fused);
    let want = encode(&probes);
    let agrees = |f: &Fused| {
        want.as_ref()
            .is_some_and(|want| probes.iter().zip(want).all(|(&x, &w)| f.encode_one(x) == w))
    };
    let enc = fused.enc.filter(|_| agrees(&fused));
    // The minifloat form of a threshold model, where it agrees too.
    let mini = match (enc, dec) {
        (Some(Encode::Float { nan, .. }), Some(lut)) => mini_model(&lut, bits, nan),
        _ => None,
    };
    let enc = mini
        .filter(|&m| {
            agrees(&Fused {
                enc: Some(m),
                ..fused
            })
        })
        .or(enc);
    Some(Fused { enc, ..fused })
}

/// The minifloat parameters of a sign-magnitude float's codes, if its
/// magnitudes are exactly those of `m` mantissa bits over a least normal
/// value 2^emin (subnormal codes c·2^(emin−m) below it) for some m.
fn mini_model(lut: &[f32; 16], bits: u32, nan: [u8; 2]) -> Option<Encode> {
    // The kernel packs 4-bit codes (a 1-bit float has no mantissa to round).
    if bits != 4 {
        return None;
    }
    let pos = 1usize << (bits - 1);
    let mags = &lut[..pos];
    (0..bits - 1).find_map(|m| {
        let first_normal = 1usize << m;
        let v = mags[first_normal];
        if v.to_bits() & 0x007f_ffff != 0 || !v.is_normal() {
            return None;
        }
        let emin = ((v.to_bits() >> 23) as i32) - 127;
        let expect = |c: usize| -> f64 {
            let scale = |e: i32| 2f64.powi(e);
            if c < first_normal {
                c as f64 * scale(emin - m as i32)
            } else {
                let (e, f) = (c >> m, c & (first_normal - 1));
                (1.0 + f as f64 / first_normal as f64) * scale(emin + e as i32 - 1)
            }
        };
        (0..pos)
            .all(|c| mags[c] as f64 == expect(c))
            .then_some(Encode::Mini {
                m,
                emin,
                cmax: pos as i32 - 1,
                nan,
            })
    })
}

/// The threshold model of a sign-magnitude float's encoder (module doc).
fn float_model(
    lut: &[f32; 16],
    bits: u32,
    encode: &dyn Fn(&[f32]) -> Option<Vec<u8>>,
) -> Option<Encode> {
    let pos = 1usize << (bits - 1);
    let mags = &lut[..pos];
    // +0 first, finite magnitudes rising with the code, negatives mirrored.
    let shaped = mags[0].to_bits() == 0
        && mags.windows(2).all(|w| w[0] < w[1])
        && mags.iter().all(|m| m.is_finite())
        && (0..pos).all(|c| lut[c + pos].to_bits() == mags[c].to_bits() | 0x8000_0000);
    if !shaped {
        return None;
    }
    let mut t = [f32::NAN; 7];
    for k in 0..pos - 1 {
        // Bisect the positive bit patterns in (mags[k], mags[k + 1]].
        let (mut lo, mut hi) = (mags[k].to_bits(), mags[k + 1].to_bits());
        let at = |b: u32| encode(&[f32::from_bits(b)]).map(|c| c[0] as usize);
        if at(lo)? != k || at(hi)? != k + 1 {
            return None;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if at(mid)? > k {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        t[k] = f32::from_bits(hi);
    }
    let nan = encode(&[f32::NAN, -f32::NAN])?;
    Some(Encode::Float {
        t,
        nan: [nan[0], nan[1]],
    })
}

/// Inputs on which a derived encoder must agree with the scalar kernel.
fn probes(f: &Fused) -> Vec<f32> {
    let mut v = vec![
        0.0,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        1e-30,
        0.25,
        0.5,
        0.75,
        1.0,
        1.5,
        2.0,
        2.5,
        7.5,
        8.0,
        15.5,
        16.0,
        1e9,
        f32::MAX,
        f32::INFINITY,
    ];
    if let Some(Encode::Float { t, .. }) = f.enc {
        for x in t.into_iter().filter(|x| !x.is_nan()) {
            v.extend([
                x,
                f32::from_bits(x.to_bits() - 1),
                f32::from_bits(x.to_bits() + 1),
            ]);
        }
    }
    if let Some(lut) = f.dec {
        v.extend(lut.iter().filter(|x| x.is_finite()).map(|x| x.abs()));
    }
    let mut all: Vec<f32> = v.iter().flat_map(|&x| [x, -x]).collect();
    all.extend(
        [
            0x7fc0_0000,
            0x7f80_0001,
            0xffc0_0000,
            0xff80_0001,
            0x7fff_ffff,
        ]
        .map(f32::from_bits),
    );
    all
}

impl Fused {
    /// Whether f32 → this dtype runs fused.
    pub(crate) fn encodes(&self) -> bool {
        self.enc.is_some()
    }

    /// Whether this dtype → f32 runs fused.
    pub(crate) fn decodes(&self) -> bool {
        self.dec.is_some()
    }

    /// Values per byte.
    pub(crate) fn per_byte(&self) -> usize {
        8 / self.bits as usize
    }

    /// The model's code for one value (the tail and the probes).
    fn encode_one(&self, x: f32) -> u8 {
        let mask = ((1u32 << self.bits) - 1) as i32;
        match self.enc {
            Some(Encode::Int { lo, hi }) => {
                if x.is_nan() {
                    0
                } else {
                    ((x.clamp(lo, hi) as i32) & mask) as u8
                }
            }
            Some(Encode::Float { t, nan }) => {
                let neg = x.is_sign_negative() as usize;
                if x.is_nan() {
                    return nan[neg];
                }
                let a = x.abs();
                let idx = t.iter().filter(|&&t| a >= t).count() as u8;
                idx | ((neg as u8) << (self.bits - 1))
            }
            Some(Encode::Mini { m, emin, cmax, nan }) => {
                let neg = x.is_sign_negative() as usize;
                if x.is_nan() {
                    return nan[neg];
                }
                let a = x.abs();
                let c = if a < 2f32.powi(emin) {
                    (a * 2f32.powi(m as i32 - emin)).round_ties_even() as i32
                } else {
                    let (u, sh) = (a.to_bits() as i32, 23 - m);
                    let r = u + ((1 << (sh - 1)) - 1) + ((u >> sh) & 1);
                    (r >> sh) - ((127 + emin - 1) << m)
                };
                (c.min(cmax) as u8) | ((neg as u8) << (self.bits - 1))
            }
            None => 0,
        }
    }

    /// Encode `n` values from `src` into packed bytes at `dst`, value 0 in
    /// the most significant bits of `dst[0]`. A final partial byte keeps
    /// its other bits.
    ///
    /// # Safety
    /// `src` holds `n` f32 values; `dst` holds `ceil(n / per_byte)` bytes
    /// that nothing else reads or writes during the call; the CPU has AVX2
    /// and `encodes()` holds.
    pub(crate) unsafe fn encode(&self, src: *const f32, dst: *mut u8, n: usize) {
        let groups = n / GROUP;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX2 runs (this function's contract); the kernel reads
        // groups·32 ≤ n values of `src` and writes groups·32/per_byte ≤
        // ceil(n / per_byte) bytes of `dst`, both inside what the contract
        // gives.
        unsafe {
            avx2::encode(self, src, dst, groups)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let groups = 0;
        let vpb = self.per_byte();
        for i in groups * GROUP..n {
            // SAFETY: i < n; byte i / vpb is inside dst.
            unsafe {
                let code = self.encode_one(src.add(i).read_unaligned());
                let shift = ((vpb - 1 - i % vpb) as u32) * self.bits;
                let m = (((1u32 << self.bits) - 1) as u8) << shift;
                let b = dst.add(i / vpb);
                b.write((b.read() & !m) | ((code << shift) & m));
            }
        }
    }

    /// Decode `n` packed values at `src` (value 0 in the most significant
    /// bits of `src[0]`) into f32 at `dst`.
    ///
    /// # Safety
    /// `src` holds `ceil(n / per_byte)` bytes, `dst` room for `n` f32 values
    /// that nothing else accesses during the call; the CPU has AVX2 and
    /// `decodes()` holds.
    pub(crate) unsafe fn decode(&self, src: *const u8, dst: *mut f32, n: usize) {
        let lut = self.dec.unwrap_or([0.0; 16]);
        let groups = n / GROUP;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX2 runs (this function's contract); the kernel reads
        // groups·32/per_byte ≤ ceil(n / per_byte) bytes of `src` and writes
        // groups·32 ≤ n values of `dst`, both inside what the contract gives.
        unsafe {
            avx2::decode(self.bits, &lut, src, dst, groups)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let groups = 0;
        let vpb = self.per_byte();
        for i in groups * GROUP..n {
            // SAFETY: i < n; byte i / vpb is inside src.
            unsafe {
                let shift = ((vpb - 1 - i % vpb) as u32) * self.bits;
                let code = (src.add(i / vpb).read() >> shift) & (((1u32 << self.bits) - 1) as u8);
                dst.add(i).write_unaligned(lut[code as usize]);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Encode, Fused, GROUP};
    use core::arch::x86_64::*;
    // Long runs (whose source comes from memory) ask for it ahead.
    use tessera_generated::runtime::loops::{prefetch_ahead, FAR_BYTES};

    /// 32 codes (four vectors of i32, each below 2^BITS) → packed bytes at
    /// group `g` of `dst`.
    ///
    /// # Safety
    /// The CPU runs AVX2 (the caller is compiled with it); group `g`'s
    /// `32·BITS/8` bytes from `dst + g·32·BITS/8` are writable.
    #[inline(always)]
    unsafe fn store<const BITS: u32>(c: [__m256i; 4], dst: *mut u8, g: usize) {
        // SAFETY: AVX2 runs; the one store writes group g's 4 (BITS = 1) or
        // 16 (BITS = 4) bytes, writable (this function's contract).
        unsafe {
            let w = _mm256_packus_epi16(
                _mm256_packs_epi32(c[0], c[1]),
                _mm256_packs_epi32(c[2], c[3]),
            );
            // One code per byte, in order.
            let w = _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            if BITS == 1 {
                // Reverse each 8-byte run (value 0 → bit 7), then take the low bits.
                let rev = _mm256_setr_epi8(
                    7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
                    15, 14, 13, 12, 11, 10, 9, 8,
                );
                let m = _mm256_movemask_epi8(_mm256_slli_epi16::<7>(_mm256_shuffle_epi8(w, rev)));
                dst.add(g * 4).cast::<i32>().write_unaligned(m);
            } else {
                // Each byte pair (a, b) → 16·a + b, then the 16 results as bytes.
                let j = _mm256_maddubs_epi16(w, _mm256_set1_epi16(0x0110));
                let j = _mm256_permute4x64_epi64::<0b1000>(_mm256_packus_epi16(j, j));
                _mm_storeu_si128(dst.add(g * 16).cast(), _mm256_castsi256_si128(j));
            }
        }
    }

    /// Integer codes: clamp, truncate, NaN → 0, low BITS.
    ///
    /// # Safety
    /// The CPU runs AVX2; `src` holds `groups·32` readable f32 values and
    /// `dst` `groups·32·BITS/8` writable bytes that nothing else accesses
    /// during the call.
    #[target_feature(enable = "avx2")]
    unsafe fn encode_int<const BITS: u32>(
        lo: f32,
        hi: f32,
        src: *const f32,
        dst: *mut u8,
        groups: usize,
    ) {
        let (lo, hi) = (_mm256_set1_ps(lo), _mm256_set1_ps(hi));
        let mask = _mm256_set1_epi32((1 << BITS) - 1);
        let one = |x: __m256| {
            let isnan = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
            // max_ps returns its second operand for a NaN first one.
            let v = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
            _mm256_and_si256(_mm256_andnot_si256(isnan, _mm256_cvttps_epi32(v)), mask)
        };
        // SAFETY: AVX2 runs and `src`, `dst` hold the groups (this
        // function's contract, which is each_group's).
        unsafe { each_group::<BITS>(src, dst, groups, |x| x.map(one)) };
    }

    /// The group loop of every encoder: the four vectors of each group of 32
    /// values through `codes`, then the packed bytes; long runs ask for their
    /// source ahead.
    ///
    /// # Safety
    /// The CPU runs AVX2; `src` holds `groups·32` readable f32 values and
    /// `dst` `groups·32·BITS/8` writable bytes that nothing else accesses
    /// during the call. (Called from an AVX2 function, into which it is
    /// inlined.)
    #[inline(always)]
    unsafe fn each_group<const BITS: u32>(
        src: *const f32,
        dst: *mut u8,
        groups: usize,
        codes: impl Fn([__m256; 4]) -> [__m256i; 4],
    ) {
        let far = groups * GROUP * 4 >= FAR_BYTES;
        for g in 0..groups {
            // SAFETY: values 32g .. 32g + 32 are inside src, group g inside
            // dst; the caller runs with AVX2.
            unsafe {
                let p = src.add(g * GROUP);
                if far {
                    prefetch_ahead(p as *const u8, GROUP * 4);
                }
                let x = [
                    _mm256_loadu_ps(p),
                    _mm256_loadu_ps(p.add(8)),
                    _mm256_loadu_ps(p.add(16)),
                    _mm256_loadu_ps(p.add(24)),
                ];
                store::<BITS>(codes(x), dst, g);
            }
        }
    }

    /// The group loop of the float encoders: `code` on every vector of a
    /// group, `nan_fix` on each only when the group holds a NaN (rare: one
    /// test per group).
    ///
    /// # Safety
    /// The CPU runs AVX2; `src` holds `groups·32` readable f32 values and
    /// `dst` `groups·32·BITS/8` writable bytes that nothing else accesses
    /// during the call.
    #[inline(always)]
    unsafe fn float_groups<const BITS: u32>(
        src: *const f32,
        dst: *mut u8,
        groups: usize,
        code: impl Fn(__m256) -> __m256i,
        nan_fix: impl Fn(__m256, __m256i) -> __m256i,
    ) {
        let codes = |x: [__m256; 4]| {
            let mut c = x.map(&code);
            let any = _mm256_or_ps(
                _mm256_cmp_ps::<_CMP_UNORD_Q>(x[0], x[1]),
                _mm256_cmp_ps::<_CMP_UNORD_Q>(x[2], x[3]),
            );
            if _mm256_movemask_ps(any) != 0 {
                for (ci, &xi) in c.iter_mut().zip(&x) {
                    *ci = nan_fix(xi, *ci);
                }
            }
            c
        };
        // SAFETY: AVX2 runs and `src`, `dst` hold the groups (this
        // function's contract, which is each_group's).
        unsafe { each_group::<BITS>(src, dst, groups, codes) };
    }

    /// Sign-magnitude float codes by thresholds.
    ///
    /// # Safety
    /// The CPU runs AVX2; `src` holds `groups·32` readable f32 values and
    /// `dst` `groups·32·BITS/8` writable bytes that nothing else accesses
    /// during the call.
    #[target_feature(enable = "avx2")]
    unsafe fn encode_float<const BITS: u32>(
        t: [f32; 7],
        nan: [u8; 2],
        src: *const f32,
        dst: *mut u8,
        groups: usize,
    ) {
        // code = #{k: |x| ≥ t[k]} (unused thresholds are NaN, which no |x|
        // reaches): each comparison is 0 or −1.
        let t = t.map(|x| _mm256_set1_ps(x));
        let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let signc = _mm256_set1_epi32(1 << (BITS - 1));
        // A NaN's comparisons all fail, leaving its sign code; the NaN
        // codes differ from those by `fix[sign]`.
        let fix = [nan[0] as i32, nan[1] as i32 ^ (1 << (BITS - 1))];
        let (fix0, fix1) = (_mm256_set1_epi32(fix[0]), _mm256_set1_epi32(fix[1]));
        let one = |x: __m256| {
            let a = _mm256_and_ps(x, abs);
            let mut idx = _mm256_setzero_si256();
            for &tk in &t {
                idx =
                    _mm256_sub_epi32(idx, _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(a, tk)));
            }
            let neg = _mm256_srai_epi32::<31>(_mm256_castps_si256(x));
            _mm256_or_si256(idx, _mm256_and_si256(neg, signc))
        };
        let nan_fix = |x: __m256, code: __m256i| {
            let neg = _mm256_srai_epi32::<31>(_mm256_castps_si256(x));
            let isnan = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
            let fix = _mm256_blendv_epi8(fix0, fix1, neg);
            _mm256_xor_si256(code, _mm256_and_si256(isnan, fix))
        };
        // SAFETY: AVX2 runs and `src`, `dst` hold the groups (this
        // function's contract, which is float_groups').
        unsafe { float_groups::<BITS>(src, dst, groups, one, nan_fix) };
    }

    /// 4-bit minifloat codes by rounding the bits (`Encode::Mini`).
    ///
    /// # Safety
    /// The CPU runs AVX2; `src` holds `groups·32` readable f32 values and
    /// `dst` `groups·32·BITS/8` writable bytes that nothing else accesses
    /// during the call.
    #[target_feature(enable = "avx2")]
    unsafe fn encode_mini(
        m: u32,
        emin: i32,
        cmax: i32,
        nan: [u8; 2],
        src: *const f32,
        dst: *mut u8,
        groups: usize,
    ) {
        let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let least_normal = _mm256_set1_ps(2f32.powi(emin));
        let sub_scale = _mm256_set1_ps(2f32.powi(m as i32 - emin));
        let sh = 23 - m;
        let shift = _mm_cvtsi32_si128(sh as i32);
        let half = _mm256_set1_epi32((1 << (sh - 1)) - 1);
        let one = _mm256_set1_epi32(1);
        let rebase = _mm256_set1_epi32((127 + emin - 1) << m);
        let top = _mm256_set1_epi32(cmax);
        let signc = _mm256_set1_epi32(1 << 3);
        let (nan0, nan1) = (
            _mm256_set1_epi32(nan[0] as i32),
            _mm256_set1_epi32(nan[1] as i32),
        );
        let code = |x: __m256| {
            let a = _mm256_and_ps(x, abs);
            // Below the least normal: rint(|x|·2^(m−emin)) (MXCSR's round to
            // nearest even; the product is exact).
            let small = _mm256_cvtps_epi32(_mm256_mul_ps(a, sub_scale));
            // From it on: the bits rounded to m mantissa bits, ties to even.
            let u = _mm256_castps_si256(a);
            let odd = _mm256_and_si256(_mm256_srl_epi32(u, shift), one);
            let r = _mm256_add_epi32(_mm256_add_epi32(u, half), odd);
            let normal = _mm256_sub_epi32(_mm256_srl_epi32(r, shift), rebase);
            let below = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(a, least_normal));
            let c = _mm256_min_epi32(_mm256_blendv_epi8(normal, small, below), top);
            let neg = _mm256_srai_epi32::<31>(_mm256_castps_si256(x));
            _mm256_or_si256(c, _mm256_and_si256(neg, signc))
        };
        let nan_fix = |x: __m256, c: __m256i| {
            let neg = _mm256_srai_epi32::<31>(_mm256_castps_si256(x));
            let isnan = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
            _mm256_blendv_epi8(c, _mm256_blendv_epi8(nan0, nan1, neg), isnan)
        };
        // SAFETY: AVX2 runs and `src`, `dst` hold the groups of 4-bit codes
        // (this function's contract, which is float_groups').
        unsafe { float_groups::<4>(src, dst, groups, code, nan_fix) };
    }

    /// `groups` groups of 32 values → packed bytes.
    ///
    /// # Safety
    /// The CPU runs AVX2; `src` holds `groups·32` readable f32 values and
    /// `dst` `groups·32·f.bits/8` writable bytes that nothing else accesses
    /// during the call.
    pub(super) unsafe fn encode(f: &Fused, src: *const f32, dst: *mut u8, groups: usize) {
        // SAFETY: AVX2 runs and `src`, `dst` hold the groups at `f.bits`
        // bits a code (this function's contract, the encoders' own).
        unsafe {
            match (f.enc, f.bits) {
                (Some(Encode::Int { lo, hi }), 1) => encode_int::<1>(lo, hi, src, dst, groups),
                (Some(Encode::Int { lo, hi }), 4) => encode_int::<4>(lo, hi, src, dst, groups),
                (Some(Encode::Float { t, nan }), 1) => encode_float::<1>(t, nan, src, dst, groups),
                (Some(Encode::Float { t, nan }), 4) => encode_float::<4>(t, nan, src, dst, groups),
                (Some(Encode::Mini { m, emin, cmax, nan }), 4) => {
                    encode_mini(m, emin, cmax, nan, src, dst, groups)
                }
                _ => {}
            }
        }
    }

    /// `groups` groups of 32 packed values → f32 through `lut`.
    ///
    /// # Safety
    /// The CPU runs AVX2; `src` holds `groups·32·bits/8` readable bytes and
    /// `dst` room for `groups·32` f32 values that nothing else accesses
    /// during the call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn decode(
        bits: u32,
        lut: &[f32; 16],
        src: *const u8,
        dst: *mut f32,
        groups: usize,
    ) {
        // SAFETY: lut holds 16 f32.
        let (lo, hi) = unsafe {
            (
                _mm256_loadu_ps(lut.as_ptr()),
                _mm256_loadu_ps(lut.as_ptr().add(8)),
            )
        };
        if bits == 1 {
            let shifts = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
            let (zero, one) = (_mm256_set1_ps(lut[0]), _mm256_set1_ps(lut[1]));
            for g in 0..groups {
                for q in 0..4 {
                    // SAFETY: byte 4g + q and values 32g + 8q .. + 8 are in bounds.
                    unsafe {
                        let b = src.add(g * 4 + q).read() as i32;
                        let v = _mm256_srlv_epi32(_mm256_set1_epi32(b), shifts);
                        let m = _mm256_castsi256_ps(_mm256_slli_epi32::<31>(v));
                        _mm256_storeu_ps(
                            dst.add(g * GROUP + 8 * q),
                            _mm256_blendv_ps(zero, one, m),
                        );
                    }
                }
            }
        } else {
            let shifts = _mm256_setr_epi32(4, 0, 12, 8, 20, 16, 28, 24);
            let low = _mm256_set1_epi32(15);
            for g in 0..groups {
                for q in 0..4 {
                    // SAFETY: bytes 16g + 4q .. + 4 and values 32g + 8q .. + 8
                    // are in bounds.
                    unsafe {
                        let w = src.add(g * 16 + 4 * q).cast::<i32>().read_unaligned();
                        let v =
                            _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(w), shifts), low);
                        let a = _mm256_permutevar8x32_ps(lo, v);
                        let b = _mm256_permutevar8x32_ps(hi, v);
                        let m = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(v));
                        _mm256_storeu_ps(dst.add(g * GROUP + 8 * q), _mm256_blendv_ps(a, b, m));
                    }
                }
            }
        }
    }
}

/// Cast `src` into `dst` through a fused kernel when the call has the shape
/// one needs: f32 ↔ a packed dtype with a derived kernel in this mode, both
/// views C-contiguous over the same elements, the packed one starting at a
/// byte boundary. Returns false, having written nothing, otherwise. Runs on
/// up to `threads` threads over chunks of whole groups (whole bytes).
///
/// # Safety
/// The views must have been validated as `cast` does, and the CPU must
/// have AVX2.
pub(crate) unsafe fn try_cast(
    src: &crate::ArrayView<'_>,
    dst: &mut crate::ArrayViewMut<'_>,
    saturating: bool,
    threads: usize,
) -> bool {
    use crate::array::c_contiguous;
    let (packed, encode) = match (src.dtype(), dst.dtype()) {
        (DType::F32, d) => (d, true),
        (d, DType::F32) => (d, false),
        _ => return false,
    };
    let Some(f) = fused(packed, saturating) else {
        return false;
    };
    let n = dst.layout().len();
    if !(if encode { f.encodes() } else { f.decodes() })
        || src.layout().len() != n
        || !c_contiguous(src.shape(), src.strides())
        || !c_contiguous(dst.shape(), dst.strides())
    {
        return false;
    }
    let vpb = f.per_byte();
    let (po, fo) = if encode {
        (dst.layout().offset, src.layout().offset)
    } else {
        (src.layout().offset, dst.layout().offset)
    };
    if !po.is_multiple_of(vpb) {
        return false;
    }
    let (sp, dp) = (
        src.data().as_ptr() as usize,
        dst.data_mut().as_mut_ptr() as usize,
    );
    // Chunk starts in values: multiples of GROUP, so whole bytes of either side.
    let chunk = n
        .div_ceil(threads.max(1))
        .next_multiple_of(GROUP)
        .max(GROUP);
    let run = |i0: usize| {
        let len = chunk.min(n - i0);
        // SAFETY: values i0 .. i0 + len are inside both validated views (the
        // f32 one at 4 bytes per value from its offset, the packed one at
        // `vpb` per byte from a byte boundary); chunks are disjoint whole
        // bytes of the destination, which no input overlaps.
        unsafe {
            if encode {
                let s = (sp as *const f32).add(fo + i0);
                f.encode(s, (dp as *mut u8).add((po + i0) / vpb), len);
            } else {
                let s = (sp as *const u8).add((po + i0) / vpb);
                f.decode(s, (dp as *mut f32).add(fo + i0), len);
            }
        }
    };
    if chunk >= n {
        run(0);
    } else {
        use rayon::prelude::*;
        (0..n.div_ceil(chunk))
            .into_par_iter()
            .for_each(|c| run(c * chunk));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::fused;
    use crate::DType;

    /// Every packed dtype of the catalogue gets both fused kernels in both
    /// modes (a model that stopped matching the scalar kernel on its probes
    /// would silently fall back to the general path; this says so instead).
    #[test]
    fn every_packed_dtype_derives_both_kernels() {
        let packed: Vec<DType> = DType::ALL
            .iter()
            .copied()
            .filter(|d| d.info().values_per_byte > 1)
            .collect();
        assert!(packed.len() >= 4, "{packed:?}");
        for d in packed {
            for sat in [false, true] {
                let f = fused(d, sat).unwrap_or_else(|| panic!("{d:?} sat={sat}: no kernels"));
                assert!(f.encodes() && f.decodes(), "{d:?} sat={sat}: {f:?}");
            }
        }
    }

    #[test]
    fn e2m1fn_encodes_by_rounding_its_bits() {
        // e2m1fn's magnitudes are those of 1 mantissa bit over a least
        // normal value of 1 (0, 0.5, 1, 1.5, 2, 3, 4, 6), and both modes
        // saturate, so its encoder takes the minifloat form.
        for sat in [false, true] {
            let f = fused(DType::E2m1fn, sat).expect("kernels");
            assert!(
                matches!(
                    f.enc,
                    Some(super::Encode::Mini {
                        m: 1,
                        emin: 0,
                        cmax: 7,
                        ..
                    })
                ),
                "sat={sat}: {f:?}"
            );
        }
    }
}
