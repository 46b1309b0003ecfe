//! The MX encoder of f32 values, tile by tile in L1.
//!
//! A tile is at most [`TILE`] values (or one block, where a block is
//! longer), a whole number of blocks. One pass over
//! its source takes each block's largest magnitude from the bits (`|x|`'s bit
//! pattern orders like its value, NaN and infinity above every finite value),
//! the block's scale 2^e from it ([`MxRule::scale`]), and the values times the
//! exact reciprocal 2^-e into a scratch tile; the tier's own cast kernels then
//! round the scales into the scale dtype and the scaled values into the element
//! dtype (both saturating), called directly on the scratch. The arithmetic is
//! the same on every tier (a product by a power of two, and for MXINT8 a product
//! by 2^fraction_bits and a rounding to the nearest integer, halves to even), so
//! the codes are the tier's casts of the same f32 values: identical on every
//! tier and at every thread count.

use crate::elementwise::packed::{fused, Fused};
use crate::elementwise::sub_byte::pack;
use crate::{cast_index, Args, DType, LoopFn, Tier, Variant};

/// Most values per tile: 4 KiB of f32 scratch beside the source, in L1.
pub(super) const TILE: usize = 1024;

/// What the encoder needs of a format and a scale rule.
#[derive(Clone, Copy, Debug)]
pub(super) struct MxRule {
    /// Values per block.
    pub block: usize,
    /// Exponent of the largest finite element magnitude.
    pub emax: i32,
    /// The fraction bits of the largest finite element magnitude, a normal
    /// f32 (its significand less the leading one, 23 bits).
    pub max_fraction: u32,
    /// The `ceil` rule (no element clamps) rather than `floor`.
    pub ceil: bool,
    /// 2^fraction_bits for an integer element (MXINT8), else `None`.
    pub int_unit: Option<f32>,
}

impl MxRule {
    /// The scale 2^e of a block whose largest magnitude has the bits
    /// `amax_bits` (of `|x|`), and its reciprocal 2^-e: a NaN scale and the
    /// reciprocal 1 for a block holding a NaN or an infinity; e = -127 for an
    /// all-zero block; else `floor(log2 amax) - emax` (`floor`), one more where
    /// amax exceeds `max_element · 2^e` (`ceil`), clamped to [-127, 127].
    ///
    /// All from the bits: floor(log2 amax) is the exponent field less the bias
    /// (for an f32 subnormal, the position of its leading one); with amax and
    /// `max_element · 2^e` in the same binade, amax exceeds it exactly when its
    /// significand's fraction bits do (`max_element` is a normal f32).
    #[inline(always)]
    pub fn scale(&self, amax_bits: u32) -> (f32, f32) {
        let a = amax_bits;
        if a >= 0x7f80_0000 {
            return (f32::NAN, 1.0);
        }
        let e = if a == 0 {
            -127
        } else {
            let (floor_log2, fraction) = if a >= 0x0080_0000 {
                ((a >> 23) as i32 - 127, a & 0x007f_ffff)
            } else {
                let lz = a.leading_zeros();
                (-118 - lz as i32, (a << (lz - 8)) & 0x007f_ffff)
            };
            let e0 = floor_log2 - self.emax;
            let above = self.ceil && fraction > self.max_fraction;
            (e0 + above as i32).clamp(-127, 127)
        };
        (pow2_f32(e), pow2_f32(-e))
    }
}

/// 2^e as an f32 for e in [-127, 127] (2^-127 is subnormal).
#[inline(always)]
fn pow2_f32(e: i32) -> f32 {
    debug_assert!((-127..=127).contains(&e));
    if e >= -126 {
        f32::from_bits(((e + 127) as u32) << 23)
    } else {
        f32::from_bits(0x0040_0000)
    }
}

/// A cast kernel from contiguous f32 into a dtype, as `cast` would pick it.
#[derive(Clone, Copy, Debug)]
enum Kernel {
    /// The tier's fused kernel for a packed dtype (whole bytes).
    Packed(&'static Fused),
    /// The tier's contiguous loop; a packed dtype gets one code per byte,
    /// packed afterwards (`bits` per code, element 0 in the high bits).
    Loop {
        f: LoopFn,
        bits: u32,
        per_byte: usize,
    },
}

impl Kernel {
    fn new(tier: Tier, to: DType) -> Kernel {
        let info = to.info();
        let per_byte = info.values_per_byte as usize;
        if per_byte > 1 && crate::tier::runs_avx2(tier) {
            if let Some(f) = fused(to, true).filter(|f| f.encodes()) {
                return Kernel::Packed(f);
            }
        }
        let table = crate::tier::cast_table(tier)
            .expect("the caller resolved the tier, whose cast table exists");
        let i = cast_index(DType::F32, to, true, Variant::Contig)
            .expect("every pair of dtypes has a contiguous cast");
        Kernel::Loop {
            f: table[i],
            bits: info.bits,
            per_byte,
        }
    }

    /// Cast `n` f32 values at `src` into `dst` (n / per_byte bytes; n a whole
    /// number of bytes' worth), using `codes` (n bytes) as scratch for a
    /// packed dtype without a fused kernel.
    ///
    /// # Safety
    /// `src` must hold `n` readable f32 values, `dst` the destination's
    /// `n / per_byte` writable bytes for them (`n` items where unpacked), and
    /// neither may overlap the other or `codes`; `codes` holds `n` bytes for a
    /// packed dtype; the kernel's tier is one this CPU runs.
    unsafe fn run(&self, src: *const f32, n: usize, dst: *mut u8, codes: &mut [u8]) {
        match *self {
            // SAFETY: `src` holds n values and `dst` n / per_byte bytes
            // (this function's contract), which is what the fused kernel
            // reads and writes; it was chosen only where the tier runs AVX2
            // (`Kernel::new`), a tier this CPU runs, and `encodes()` holds.
            Kernel::Packed(f) => unsafe { f.encode(src, dst, n) },
            Kernel::Loop { f, bits, per_byte } => {
                let out = if per_byte > 1 {
                    codes.as_mut_ptr()
                } else {
                    dst
                };
                let args = Args {
                    n,
                    src: [src as *const u8, core::ptr::null(), core::ptr::null()],
                    src_stride: [1; 3],
                    dst: out,
                    dst_stride: 1,
                };
                // SAFETY: the kernel is the tier's contiguous f32 → dtype cast;
                // `src` holds n f32 values and `out` n items (one code per byte
                // in `codes` for a packed dtype, whose length the caller gives).
                unsafe { f(&args) };
                if per_byte > 1 {
                    // SAFETY: the caller gives n / per_byte bytes at `dst`.
                    let packed = unsafe { core::slice::from_raw_parts_mut(dst, n / per_byte) };
                    pack(&codes[..n], bits, per_byte, packed);
                }
            }
        }
    }
}

/// The encoder of one format and rule on one tier.
#[derive(Clone, Copy, Debug)]
pub(super) struct MxEncoder {
    rule: MxRule,
    elements: Kernel,
    scales: Kernel,
    avx2: bool,
    /// The sources come from memory: ask for them ahead.
    far: bool,
}

/// Scratch for one thread: a tile of scaled values, its scales, and one code
/// per byte for packed dtypes without a fused kernel.
pub(super) struct Scratch {
    scaled: Vec<f32>,
    scales: Vec<f32>,
    codes: Vec<u8>,
}

impl Scratch {
    /// Scratch for `enc`'s tiles (more than [`TILE`] values where one block
    /// is longer).
    pub fn new(enc: &MxEncoder) -> Scratch {
        let tile = enc.tile();
        Scratch {
            scaled: vec![0.0; tile],
            scales: vec![0.0; tile / enc.rule.block],
            codes: vec![0; tile],
        }
    }
}

impl MxEncoder {
    /// The encoder of `rule` into `element` codes and `scale` scales on
    /// `tier`; `far`: its sources are long runs in memory (not in cache).
    pub fn new(tier: Tier, rule: MxRule, element: DType, scale: DType, far: bool) -> MxEncoder {
        MxEncoder {
            rule,
            elements: Kernel::new(tier, element),
            scales: Kernel::new(tier, scale),
            avx2: crate::tier::runs_avx2(tier),
            far,
        }
    }

    /// Values of the largest tile [`MxEncoder::encode`] takes.
    pub fn tile(&self) -> usize {
        (TILE / self.rule.block).max(1) * self.rule.block
    }

    /// Encode `n` values at `src` (a whole number of blocks, at most
    /// [`MxEncoder::tile`]; unaligned allowed) into `n / per_byte` code bytes
    /// at `codes` and `n / block` scale bytes at `scales`.
    ///
    /// # Safety
    /// `src` must hold `n` readable f32 values; `codes` (`n / per_byte`
    /// bytes) and `scales` (`n / block` bytes) must be valid for those writes
    /// and overlap nothing else; the encoder's tier is one this CPU runs.
    pub unsafe fn encode(
        &self,
        src: *const f32,
        n: usize,
        codes: *mut u8,
        scales: *mut u8,
        s: &mut Scratch,
    ) {
        let block = self.rule.block;
        let nb = n / block;
        debug_assert!(n.is_multiple_of(block) && n <= self.tile());
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `src` holds nb·block = n values (this function's
            // contract); the tier runs AVX2 and this CPU runs the tier; the
            // scratch holds a tile ≥ n values and its scales.
            unsafe {
                avx2::scale_blocks(&self.rule, self.far, src, nb, &mut s.scaled, &mut s.scales)
            };
        } else {
            // SAFETY: `src` holds nb·block = n values (this function's
            // contract); the scratch holds a tile ≥ n values and its scales.
            unsafe { scale_blocks(&self.rule, src, nb, &mut s.scaled, &mut s.scales) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        // SAFETY: `src` holds nb·block = n values (this function's
        // contract); the scratch holds a tile ≥ n values and its scales.
        unsafe {
            scale_blocks(&self.rule, src, nb, &mut s.scaled, &mut s.scales)
        };
        // SAFETY: the scratch holds n scaled values and nb scales; the caller
        // gives n / per_byte code bytes and nb scale bytes.
        unsafe {
            self.scales.run(s.scales.as_ptr(), nb, scales, &mut s.codes);
            self.elements.run(s.scaled.as_ptr(), n, codes, &mut s.codes);
        }
    }
}

/// The portable pass: each block's scale into `scales`, its values over the
/// scale into `scaled`.
///
/// # Safety
/// `src` must hold `nb · r.block` readable f32 values (any alignment). (The
/// scratch slices are indexed with checks.)
unsafe fn scale_blocks(
    r: &MxRule,
    src: *const f32,
    nb: usize,
    scaled: &mut [f32],
    scales: &mut [f32],
) {
    let b = r.block;
    for k in 0..nb {
        // SAFETY: values k·b .. (k + 1)·b are inside the source.
        let vals = |j: usize| unsafe { src.add(k * b + j).read_unaligned() };
        let amax = (0..b).fold(0u32, |m, j| m.max(vals(j).to_bits() & 0x7fff_ffff));
        let (scale, inv) = r.scale(amax);
        scales[k] = scale;
        let out = &mut scaled[k * b..(k + 1) * b];
        match r.int_unit {
            None => {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = vals(j) * inv;
                }
            }
            Some(unit) => {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = (vals(j) * inv * unit).round_ties_even();
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::MxRule;
    use core::arch::x86_64::*;
    use tessera_generated::runtime::loops::prefetch_ahead;

    /// [`super::scale_blocks`] with AVX2: the same operations on 8 lanes, so
    /// the same bits. Blocks of 16, 32 or 64 take a kernel unrolled for them,
    /// other sizes the portable pass. `far`: ask for the source ahead.
    ///
    /// # Safety
    /// `src` must hold `nb · r.block` readable f32 values (any alignment);
    /// the CPU runs AVX2. (The scratch slices are checked.)
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn scale_blocks(
        r: &MxRule,
        far: bool,
        src: *const f32,
        nb: usize,
        scaled: &mut [f32],
        scales: &mut [f32],
    ) {
        // SAFETY: `src` holds nb·block values and AVX2 runs (this
        // function's contract); each arm's B is `r.block`, as `blocks` asks.
        unsafe {
            match (r.block, r.int_unit.is_some()) {
                (16, false) => blocks::<16, false>(r, far, src, nb, scaled, scales),
                (16, true) => blocks::<16, true>(r, far, src, nb, scaled, scales),
                (32, false) => blocks::<32, false>(r, far, src, nb, scaled, scales),
                (32, true) => blocks::<32, true>(r, far, src, nb, scaled, scales),
                (64, false) => blocks::<64, false>(r, far, src, nb, scaled, scales),
                (64, true) => blocks::<64, true>(r, far, src, nb, scaled, scales),
                _ => super::scale_blocks(r, src, nb, scaled, scales),
            }
        }
    }

    /// Blocks of `B` values; `INT`: an integer element (`r.int_unit` is set);
    /// `far`: the source comes from memory, asked for ahead.
    ///
    /// # Safety
    /// `src` must hold `nb · B` readable f32 values (any alignment); the CPU
    /// runs AVX2. (`r.block == B` and the scratch are checked.)
    #[target_feature(enable = "avx2")]
    unsafe fn blocks<const B: usize, const INT: bool>(
        r: &MxRule,
        far: bool,
        src: *const f32,
        nb: usize,
        scaled: &mut [f32],
        scales: &mut [f32],
    ) {
        assert!(scaled.len() >= nb * B && scales.len() >= nb && r.block == B);
        let abs = _mm256_set1_epi32(0x7fff_ffff);
        let unit = _mm256_set1_ps(r.int_unit.unwrap_or(1.0));
        let out = scaled.as_mut_ptr();
        for (k, scale) in scales[..nb].iter_mut().enumerate() {
            // SAFETY: values k·B .. (k + 1)·B are inside the source and the
            // scratch (checked above); loads and stores are unaligned.
            unsafe {
                let p = src.add(k * B);
                if far {
                    prefetch_ahead(p as *const u8, 4 * B);
                }
                let mut m = _mm256_setzero_si256();
                for j in (0..B).step_by(8) {
                    let v = _mm256_loadu_si256(p.add(j) as *const __m256i);
                    m = _mm256_max_epu32(m, _mm256_and_si256(v, abs));
                }
                let h = _mm_max_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
                let h = _mm_max_epu32(h, _mm_shuffle_epi32::<0b01_00_11_10>(h));
                let h = _mm_max_epu32(h, _mm_shuffle_epi32::<0b10_11_00_01>(h));
                let (s, inv) = r.scale(_mm_cvtsi128_si32(h) as u32);
                *scale = s;
                let inv = _mm256_set1_ps(inv);
                let q = out.add(k * B);
                for j in (0..B).step_by(8) {
                    let mut y = _mm256_mul_ps(_mm256_loadu_ps(p.add(j)), inv);
                    if INT {
                        y = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                            _mm256_mul_ps(y, unit),
                        );
                    }
                    _mm256_storeu_ps(q.add(j), y);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MxEncoder, MxRule, Scratch};
    use crate::DType;

    /// Blocks the AVX2 pass has no unrolled kernel for (48) and longer than a
    /// tile (2048): every value 1.0 in e4m3fn (largest 448 = 1.75 · 2^8) takes
    /// the scale 2^-8 (UE8M0 code 127 - 8) and the element 256 (exponent
    /// field 8 + 7, mantissa 0: code 0x78), on every tier.
    #[test]
    fn odd_and_long_blocks() {
        for block in [48usize, 2048] {
            let rule = MxRule {
                block,
                emax: 8,
                max_fraction: 448f32.to_bits() & 0x007f_ffff,
                ceil: false,
                int_unit: None,
            };
            for tier in crate::available_tiers() {
                let enc = MxEncoder::new(tier, rule, DType::E4m3fn, DType::E8m0fnu, false);
                let n = enc.tile();
                assert!(n >= block && n.is_multiple_of(block));
                let x = vec![1.0f32; n];
                let mut codes = vec![0u8; n];
                let mut scales = vec![0u8; n / block];
                let mut s = Scratch::new(&enc);
                // SAFETY: x holds n values, codes n bytes, scales n / block.
                unsafe {
                    enc.encode(
                        x.as_ptr(),
                        n,
                        codes.as_mut_ptr(),
                        scales.as_mut_ptr(),
                        &mut s,
                    )
                };
                assert!(
                    scales.iter().all(|&c| c == 119),
                    "{tier} {block}: {scales:?}"
                );
                assert!(codes.iter().all(|&c| c == 0x78), "{tier} {block}");
            }
        }
    }
}
