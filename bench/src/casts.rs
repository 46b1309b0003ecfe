//! Groups `casts/<case>`: one cast (or the MXFP8 encode) over a contiguous
//! source of `--size-mib` MiB, tessera on every available tier beside the
//! `half` crate's slice conversions (f16, bf16), a plain scalar loop and a
//! memcpy of the source (the bandwidth reference).
//!
//! Cases: f16→f32, f32→f16, bf16→f32, f32→bf16, f32→e4m3fn, e4m3fn→f32 (the
//! default cast mode: ml_dtypes' rules) and the MXFP8 (E4M3) encode of f32
//! (codes plus one UE8M0 scale per 32, the OCP `floor` rule).
//!
//! The scalar peers are written here: `half::f16::from_f32` (and friends) per
//! element for f16 and bf16; for e4m3fn and MXFP8 straightforward bit-level
//! functions ([`e4m3fn_from_f32`], [`e4m3fn_to_f32`], [`mxfp8_encode`]) that are
//! checked to give tessera's bytes exactly. Where the CPU runs AVX2, three more
//! peers sketch what a dedicated avx2 path of tessera could reach: `f16c
//! intrinsics` (f16 ↔ f32 with `vcvtps2ph` / `vcvtph2ps`), `avx2 branch-free`
//! (f32 → e4m3fn through [`e4m3fn_from_f32_branch_free`]) and `avx2 fused loop`
//! (the MXFP8 encode block by block in f32 with that conversion); they give the
//! same bytes. Every peer's output is checked once
//! against the reference (the `half` slice conversion where it exists, else the
//! scalar loop): bit for bit, except that for f16 and bf16 two NaNs match
//! whatever their payloads.

#![allow(clippy::needless_range_loop)] // the index loops are the point

use crate::elementwise::{human_bytes, tessera_name, MEMCPY};
use crate::harness::{split, Case, CheckFn, Group, RatioSpec, RunFn};
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use tessera::array::as_bytes;
use tessera::{ArrayView, ArrayViewMut, CastMode, DType, Exec, Format, Tier};
use tessera_testkit::rng::Rng;

/// The `half` crate's slice conversion peer.
pub const HALF: &str = "half slice";
/// A loop over elements calling a scalar conversion.
pub const SCALAR: &str = "scalar loop";
/// e4m3fn → f32 through a 256-entry table.
pub const TABLE: &str = "table lookup";
/// f16 ↔ f32 through the F16C instructions, 8 lanes at a time: what a
/// hand-written avx2 path of tessera could do.
pub const F16C: &str = "f16c intrinsics";
/// [`e4m3fn_from_f32_branch_free`] in a loop compiled for AVX2: a formulation
/// the compiler turns into about 15 vector instructions per 8 values.
pub const BRANCH_FREE: &str = "avx2 branch-free";
/// The MXFP8 encode of [`mxfp8_encode`] with [`e4m3fn_from_f32_branch_free`],
/// compiled for AVX2, block by block in f32.
pub const FUSED: &str = "avx2 fused loop";

/// One measured conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastCase {
    /// f16 → f32.
    F16ToF32,
    /// f32 → f16.
    F32ToF16,
    /// bf16 → f32.
    Bf16ToF32,
    /// f32 → bf16.
    F32ToBf16,
    /// f32 → e4m3fn (default mode: beyond 464 and infinities become NaN).
    F32ToE4m3fn,
    /// e4m3fn → f32.
    E4m3fnToF32,
    /// f32 → MXFP8 (E4M3 codes, a UE8M0 scale per 32).
    F32ToMxfp8,
}

impl CastCase {
    /// Every case, in group order.
    pub const ALL: [CastCase; 7] = [
        CastCase::F16ToF32,
        CastCase::F32ToF16,
        CastCase::Bf16ToF32,
        CastCase::F32ToBf16,
        CastCase::F32ToE4m3fn,
        CastCase::E4m3fnToF32,
        CastCase::F32ToMxfp8,
    ];

    /// The group's name.
    pub fn group_name(self) -> String {
        let (s, d) = self.dtypes();
        let d = if self == CastCase::F32ToMxfp8 {
            "mxfp8".to_string()
        } else {
            d.name().to_string()
        };
        format!("casts/{}-{d}", s.name())
    }

    /// Source and destination dtypes (MXFP8: its element dtype).
    pub fn dtypes(self) -> (DType, DType) {
        match self {
            CastCase::F16ToF32 => (DType::F16, DType::F32),
            CastCase::F32ToF16 => (DType::F32, DType::F16),
            CastCase::Bf16ToF32 => (DType::Bf16, DType::F32),
            CastCase::F32ToBf16 => (DType::F32, DType::Bf16),
            CastCase::F32ToE4m3fn => (DType::F32, DType::E4m3fn),
            CastCase::E4m3fnToF32 => (DType::E4m3fn, DType::F32),
            CastCase::F32ToMxfp8 => (DType::F32, DType::E4m3fn),
        }
    }

    /// Whether the `half` crate has a slice conversion for the case.
    pub fn has_half(self) -> bool {
        matches!(
            self,
            CastCase::F16ToF32 | CastCase::F32ToF16 | CastCase::Bf16ToF32 | CastCase::F32ToBf16
        )
    }
}

// ---- the scalar peers -------------------------------------------------------

/// f32 → e4m3fn (1 sign, 4 exponent, 3 mantissa bits, bias 7, no infinities,
/// NaN at S.1111.111, largest 448): round to nearest even; beyond the largest
/// finite value after rounding (above 464) and infinities become NaN, or ±448
/// when `saturate`; NaN stays NaN with its sign.
#[inline(always)]
pub fn e4m3fn_from_f32(x: f32, saturate: bool) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 24) & 0x80) as u8;
    let a = bits & 0x7fff_ffff;
    if a > 0x7f80_0000 {
        return sign | 0x7f;
    }
    // 464 = 1.8125 · 2^8 is the tie between 448 and 480 (one step beyond): even 448.
    if a > 0x43e8_0000 {
        return sign | if saturate { 0x7e } else { 0x7f };
    }
    if a < 0x3c80_0000 {
        // Below 2^-6, e4m3fn's subnormals: multiples of 2^-9 (exact scaling).
        return sign | (f32::from_bits(a) * 512.0).round_ties_even() as u8;
    }
    let e = (a >> 23) as i32 - 127;
    let m = a & 0x007f_ffff;
    let mut code = (((e + 7) as u32) << 3) | (m >> 20);
    let rem = m & 0x000f_ffff;
    if rem > 0x8_0000 || (rem == 0x8_0000 && code & 1 == 1) {
        code += 1;
    }
    sign | code as u8
}

/// [`e4m3fn_from_f32`] without branches, so that a loop of it vectorizes:
/// the normal range rounds the f32 bits by an integer add (ties to even by the
/// kept bit) and a shift, e4m3fn's subnormal range rounds in the FPU by adding
/// 2^14 (whose f32 spacing is 2^-9, e4m3fn's subnormal step), and selects pick
/// overflow and NaN.
#[inline(always)]
pub fn e4m3fn_from_f32_branch_free(x: f32, saturate: bool) -> u8 {
    let bits = x.to_bits();
    let sign = (bits >> 24) & 0x80;
    let a = bits & 0x7fff_ffff;
    let normal = ((a + 0x7_ffff + ((a >> 20) & 1)) >> 20).wrapping_sub(120 << 3);
    let magic = 16384f32;
    let sub = (f32::from_bits(a) + magic)
        .to_bits()
        .wrapping_sub(magic.to_bits());
    let mut code = if a < 0x3c80_0000 { sub } else { normal };
    let over = if saturate { 0x7e } else { 0x7f };
    code = if a > 0x43e8_0000 { over } else { code };
    code = if a > 0x7f80_0000 { 0x7f } else { code };
    (sign | code) as u8
}

/// e4m3fn → f32, exactly; NaN codes give the quiet NaN with the code's sign.
#[inline(always)]
pub fn e4m3fn_to_f32(c: u8) -> f32 {
    let sign = ((c & 0x80) as u32) << 24;
    let mag = (c & 0x7f) as u32;
    if mag == 0x7f {
        return f32::from_bits(sign | 0x7fc0_0000);
    }
    let (e, m) = (mag >> 3, mag & 7);
    let v = if e == 0 {
        m as f32 * (1.0 / 512.0)
    } else {
        f32::from_bits(((e + 120) << 23) | (m << 20))
    };
    f32::from_bits(v.to_bits() | sign)
}

/// MXFP8 (E4M3) encode of `x` (a whole number of blocks of 32): per block, the
/// shared exponent e = floor(log2 amax) − 8 clamped to [−127, 127], the scale
/// code e + 127, and the elements v · 2^−e rounded to e4m3fn, saturating. A
/// block holding a NaN or an infinity gets the NaN scale (0xff) and its values
/// unscaled; an all-zero block the smallest scale (code 0).
pub fn mxfp8_encode(x: &[f32], codes: &mut [u8], scales: &mut [u8]) {
    mxfp8_encode_with(x, codes, scales, |v| e4m3fn_from_f32(v, true));
}

/// [`mxfp8_encode`] with `to_e4m3fn` (saturating) as the element conversion.
#[inline(always)]
fn mxfp8_encode_with(
    x: &[f32],
    codes: &mut [u8],
    scales: &mut [u8],
    to_e4m3fn: impl Fn(f32) -> u8,
) {
    for ((block, out), scale) in x
        .chunks_exact(32)
        .zip(codes.chunks_exact_mut(32))
        .zip(scales.iter_mut())
    {
        // NaN and the infinities have the largest magnitude bits of all.
        let amax_bits = block
            .iter()
            .fold(0u32, |m, v| m.max(v.to_bits() & 0x7fff_ffff));
        let (code, inv) = if amax_bits >= 0x7f80_0000 {
            (0xff, 1.0)
        } else if amax_bits == 0 {
            (0, 1.0)
        } else {
            let floor_log2 = if amax_bits >= 0x0080_0000 {
                (amax_bits >> 23) as i32 - 127
            } else {
                -149 + (31 - amax_bits.leading_zeros() as i32)
            };
            let e = (floor_log2 - 8).clamp(-127, 127);
            // 2^-e is a normal f32 for e in [-127, 119], and v · 2^-e is exact.
            ((e + 127) as u8, f32::from_bits(((127 - e) as u32) << 23))
        };
        *scale = code;
        for (o, &v) in out.iter_mut().zip(block) {
            *o = to_e4m3fn(v * inv);
        }
    }
}

/// The peers compiled for AVX2 (and F16C): sketches of what tessera's avx2
/// tier could run for these casts, measured beside it.
#[cfg(target_arch = "x86_64")]
pub mod avx2 {
    use super::{e4m3fn_from_f32_branch_free, mxfp8_encode_with};
    use core::arch::x86_64::*;
    use half::f16;

    /// Whether this CPU runs the functions below.
    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("f16c")
    }

    /// f32 → f16 with `vcvtps2ph` (round to nearest even; overflow to
    /// infinity; NaN stays NaN), 8 values per instruction.
    ///
    /// # Safety
    /// The CPU must support AVX2 and F16C.
    #[inline(never)]
    #[target_feature(enable = "avx2,f16c")]
    pub unsafe fn f32_to_f16(x: &[f32], y: &mut [f16]) {
        let n = y.len();
        let x = &x[..n];
        let whole = n / 8 * 8;
        for i in (0..whole).step_by(8) {
            // SAFETY: i + 8 <= n for both slices; unaligned loads and stores.
            unsafe {
                let v = _mm256_loadu_ps(x.as_ptr().add(i));
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
                _mm_storeu_si128(y.as_mut_ptr().add(i) as *mut __m128i, h);
            }
        }
        for i in whole..n {
            y[i] = f16::from_f32(x[i]);
        }
    }

    /// f16 → f32 with `vcvtph2ps` (exact), 8 values per instruction.
    ///
    /// # Safety
    /// The CPU must support AVX2 and F16C.
    #[inline(never)]
    #[target_feature(enable = "avx2,f16c")]
    pub unsafe fn f16_to_f32(x: &[f16], y: &mut [f32]) {
        let n = y.len();
        let x = &x[..n];
        let whole = n / 8 * 8;
        for i in (0..whole).step_by(8) {
            // SAFETY: i + 8 <= n for both slices; unaligned loads and stores.
            unsafe {
                let h = _mm_loadu_si128(x.as_ptr().add(i) as *const __m128i);
                _mm256_storeu_ps(y.as_mut_ptr().add(i), _mm256_cvtph_ps(h));
            }
        }
        for i in whole..n {
            y[i] = x[i].to_f32();
        }
    }

    /// f32 → e4m3fn (default mode) through [`e4m3fn_from_f32_branch_free`].
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[inline(never)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn f32_to_e4m3fn(x: &[f32], y: &mut [u8]) {
        let x = &x[..y.len()];
        for (o, &v) in y.iter_mut().zip(x) {
            *o = e4m3fn_from_f32_branch_free(v, false);
        }
    }

    /// MXFP8 encode through [`e4m3fn_from_f32_branch_free`], block by block.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[inline(never)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn mxfp8_encode(x: &[f32], codes: &mut [u8], scales: &mut [u8]) {
        mxfp8_encode_with(x, codes, scales, |v| e4m3fn_from_f32_branch_free(v, true));
    }
}

#[inline(never)]
fn f16_to_f32_loop(x: &[f16], y: &mut [f32]) {
    let x = &x[..y.len()];
    for i in 0..y.len() {
        y[i] = x[i].to_f32();
    }
}

#[inline(never)]
fn f32_to_f16_loop(x: &[f32], y: &mut [f16]) {
    let x = &x[..y.len()];
    for i in 0..y.len() {
        y[i] = f16::from_f32(x[i]);
    }
}

#[inline(never)]
fn bf16_to_f32_loop(x: &[bf16], y: &mut [f32]) {
    let x = &x[..y.len()];
    for i in 0..y.len() {
        y[i] = x[i].to_f32();
    }
}

#[inline(never)]
fn f32_to_bf16_loop(x: &[f32], y: &mut [bf16]) {
    let x = &x[..y.len()];
    for i in 0..y.len() {
        y[i] = bf16::from_f32(x[i]);
    }
}

#[inline(never)]
fn f32_to_e4m3fn_loop(x: &[f32], y: &mut [u8]) {
    let x = &x[..y.len()];
    for i in 0..y.len() {
        y[i] = e4m3fn_from_f32(x[i], false);
    }
}

#[inline(never)]
fn e4m3fn_to_f32_loop(x: &[u8], y: &mut [f32]) {
    let x = &x[..y.len()];
    for i in 0..y.len() {
        y[i] = e4m3fn_to_f32(x[i]);
    }
}

#[inline(never)]
fn e4m3fn_to_f32_table(table: &[f32; 256], x: &[u8], y: &mut [f32]) {
    let x = &x[..y.len()];
    for i in 0..y.len() {
        y[i] = table[x[i] as usize];
    }
}

#[inline(never)]
fn memcpy_bytes(x: &[u8], y: &mut [u8]) {
    y.copy_from_slice(&x[..y.len()]);
}

// ---- the state ----------------------------------------------------------------

/// Elements of one dtype, typed so that every peer gets an aligned slice.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// f32 values.
    F32(Vec<f32>),
    /// f16 values.
    F16(Vec<f16>),
    /// bf16 values.
    Bf16(Vec<bf16>),
    /// One-byte codes (e4m3fn).
    U8(Vec<u8>),
}

impl Data {
    fn zeroed(dtype: DType, n: usize) -> Data {
        match dtype {
            DType::F32 => Data::F32(vec![0.0; n]),
            DType::F16 => Data::F16(vec![f16::ZERO; n]),
            DType::Bf16 => Data::Bf16(vec![bf16::ZERO; n]),
            _ => Data::U8(vec![0; n]),
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Data::F32(v) => as_bytes(v),
            Data::F16(v) => as_bytes(v),
            Data::Bf16(v) => as_bytes(v),
            Data::U8(v) => v,
        }
    }

    fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::F16(v) => v.len(),
            Data::Bf16(v) => v.len(),
            Data::U8(v) => v.len(),
        }
    }

    fn poison(&mut self) {
        match self {
            Data::F32(v) => v.fill(f32::from_bits(0x7fc0_dead)),
            Data::F16(v) => v.fill(f16::from_bits(0x7dad)),
            Data::Bf16(v) => v.fill(bf16::from_bits(0x7fad)),
            Data::U8(v) => v.fill(0x5a),
        }
    }
}

/// What every case of one group reads and writes.
pub struct CastBufs {
    /// The source.
    pub src: Data,
    /// The destination (MXFP8: the codes).
    pub dst: Data,
    /// MXFP8's scales.
    pub scales: Vec<u8>,
    /// The memcpy peer's destination, the source's size.
    pub copy: Vec<u8>,
}

impl CastBufs {
    fn poison(&mut self) {
        self.dst.poison();
        self.scales.fill(0x5a);
        self.copy.fill(0x5a);
    }
}

/// Reproducible f32 data: magnitudes in [2^-8, 2^8) with random mantissas and
/// signs (inside e4m3fn's and f16's normal ranges), and every 997th element an
/// edge value: NaN, ±infinity, ±0, values past e4m3fn's and f16's largest,
/// their rounding ties, f16 and f32 subnormals.
pub fn f32_data(n: usize) -> Vec<f32> {
    const EDGES: [f32; 16] = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        464.0,
        465.0,
        -500.0,
        65520.0,
        1e5,
        6e-8,
        1e-40,
        f32::MAX,
        0.001_953_125,
        1.0625,
        -1.1875,
    ];
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    (0..n)
        .map(|i| {
            let r = rng.next_u32();
            if i % 997 == 500 {
                return EDGES[(i / 997) % EDGES.len()];
            }
            let exp = 119 + (r >> 23 & 0xff) % 16;
            f32::from_bits((r & 0x8000_0000) | exp << 23 | (r & 0x007f_ffff))
        })
        .collect()
}

impl CastBufs {
    /// Buffers for `case` over `bytes` bytes of source data.
    pub fn new(case: CastCase, bytes: usize) -> CastBufs {
        let (s, d) = case.dtypes();
        let n = (bytes / s.info().item_bytes).max(32) / 32 * 32;
        let f = f32_data(n);
        let src = match s {
            DType::F32 => Data::F32(f),
            DType::F16 => Data::F16(f.iter().map(|&v| f16::from_f32(v)).collect()),
            DType::Bf16 => Data::Bf16(f.iter().map(|&v| bf16::from_f32(v)).collect()),
            _ => Data::U8(f.iter().map(|&v| e4m3fn_from_f32(v, true)).collect()),
        };
        let copy = vec![0u8; src.bytes().len()];
        CastBufs {
            src,
            dst: Data::zeroed(d, n),
            scales: vec![0; n / 32],
            copy,
        }
    }
}

// ---- the reference and the checks -------------------------------------------

/// What a correct run leaves: the destination (and MXFP8's scales).
pub struct Reference {
    dst: Data,
    scales: Vec<u8>,
}

/// The reference output of `case` on `bufs`: the `half` slice conversion for
/// f16 and bf16, the scalar functions of this module otherwise.
pub fn reference(case: CastCase, bufs: &CastBufs) -> Reference {
    let (_, d) = case.dtypes();
    let mut dst = Data::zeroed(d, bufs.src.len());
    let mut scales = vec![0u8; bufs.scales.len()];
    match (&bufs.src, &mut dst) {
        (Data::F16(x), Data::F32(y)) => x.convert_to_f32_slice(y),
        (Data::F32(x), Data::F16(y)) => y.convert_from_f32_slice(x),
        (Data::Bf16(x), Data::F32(y)) => x.convert_to_f32_slice(y),
        (Data::F32(x), Data::Bf16(y)) => y.convert_from_f32_slice(x),
        (Data::F32(x), Data::U8(y)) if case == CastCase::F32ToMxfp8 => {
            mxfp8_encode(x, y, &mut scales)
        }
        (Data::F32(x), Data::U8(y)) => f32_to_e4m3fn_loop(x, y),
        (Data::U8(x), Data::F32(y)) => e4m3fn_to_f32_loop(x, y),
        _ => unreachable!("every case pairs these dtypes"),
    }
    Reference { dst, scales }
}

/// Err naming the first element of `got` that differs from `want` (elements of
/// `item` bytes); with `nan_free`, two NaNs of `dtype` match.
pub fn compare(dtype: DType, got: &[u8], want: &[u8], nan_free: bool) -> Result<(), String> {
    let item = dtype.info().item_bytes;
    if got.len() != want.len() {
        return Err(format!("{} bytes, expected {}", got.len(), want.len()));
    }
    let is_nan = |b: &[u8]| match dtype {
        DType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_nan(),
        DType::F16 => f16::from_le_bytes([b[0], b[1]]).is_nan(),
        DType::Bf16 => bf16::from_le_bytes([b[0], b[1]]).is_nan(),
        _ => false,
    };
    let differ = |(g, w): &(&[u8], &[u8])| g != w && !(nan_free && is_nan(g) && is_nan(w));
    let pairs = got.chunks_exact(item).zip(want.chunks_exact(item));
    let mut bad = pairs.filter(differ);
    match bad.next() {
        None => Ok(()),
        Some((g, w)) => {
            let i = (g.as_ptr() as usize - got.as_ptr() as usize) / item;
            let hex = |b: &[u8]| {
                b.iter()
                    .rev()
                    .map(|x| format!("{x:02x}"))
                    .collect::<String>()
            };
            Err(format!(
                "{dtype} element {i} is 0x{} instead of 0x{}; {} of {} elements differ",
                hex(g),
                hex(w),
                1 + bad.count(),
                got.len() / item
            ))
        }
    }
}

fn check_dst<'a>(case: CastCase, want: &'a Reference) -> CheckFn<'a, CastBufs> {
    let (_, d) = case.dtypes();
    Box::new(move |s: &CastBufs| {
        compare(d, s.dst.bytes(), want.dst.bytes(), case.has_half())?;
        if case == CastCase::F32ToMxfp8 {
            compare(DType::U8, &s.scales, &want.scales, false)
                .map_err(|e| format!("scales: {e}"))?;
        }
        Ok(())
    })
}

// ---- the group ----------------------------------------------------------------

/// Runs `f` over `threads` chunks of `y` with the matching chunks of `x`.
fn split2<X: Sync, Y: Send>(threads: usize, x: &[X], y: &mut [Y], f: fn(&[X], &mut [Y])) {
    split(threads, y, |y, i| f(&x[i..i + y.len()], y));
}

/// A run of a peer given as a function of typed slices.
fn slice_peer<'a>(
    case: CastCase,
    threads: usize,
    which: &'static str,
) -> Option<RunFn<'a, CastBufs>> {
    let run: RunFn<'a, CastBufs> = match (case, which) {
        (CastCase::F16ToF32, HALF) => Box::new(move |s: &mut CastBufs| {
            if let (Data::F16(x), Data::F32(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, |x, y| x.convert_to_f32_slice(y));
            }
            Ok(())
        }),
        (CastCase::F32ToF16, HALF) => Box::new(move |s: &mut CastBufs| {
            if let (Data::F32(x), Data::F16(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, |x, y| y.convert_from_f32_slice(x));
            }
            Ok(())
        }),
        (CastCase::Bf16ToF32, HALF) => Box::new(move |s: &mut CastBufs| {
            if let (Data::Bf16(x), Data::F32(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, |x, y| x.convert_to_f32_slice(y));
            }
            Ok(())
        }),
        (CastCase::F32ToBf16, HALF) => Box::new(move |s: &mut CastBufs| {
            if let (Data::F32(x), Data::Bf16(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, |x, y| y.convert_from_f32_slice(x));
            }
            Ok(())
        }),
        (CastCase::F16ToF32, SCALAR) => Box::new(move |s: &mut CastBufs| {
            if let (Data::F16(x), Data::F32(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, f16_to_f32_loop);
            }
            Ok(())
        }),
        (CastCase::F32ToF16, SCALAR) => Box::new(move |s: &mut CastBufs| {
            if let (Data::F32(x), Data::F16(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, f32_to_f16_loop);
            }
            Ok(())
        }),
        (CastCase::Bf16ToF32, SCALAR) => Box::new(move |s: &mut CastBufs| {
            if let (Data::Bf16(x), Data::F32(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, bf16_to_f32_loop);
            }
            Ok(())
        }),
        (CastCase::F32ToBf16, SCALAR) => Box::new(move |s: &mut CastBufs| {
            if let (Data::F32(x), Data::Bf16(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, f32_to_bf16_loop);
            }
            Ok(())
        }),
        (CastCase::F32ToE4m3fn, SCALAR) => Box::new(move |s: &mut CastBufs| {
            if let (Data::F32(x), Data::U8(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, f32_to_e4m3fn_loop);
            }
            Ok(())
        }),
        (CastCase::E4m3fnToF32, SCALAR) => Box::new(move |s: &mut CastBufs| {
            if let (Data::U8(x), Data::F32(y)) = (&s.src, &mut s.dst) {
                split2(threads, x, y, e4m3fn_to_f32_loop);
            }
            Ok(())
        }),
        (CastCase::E4m3fnToF32, TABLE) => {
            let table: [f32; 256] = std::array::from_fn(|c| e4m3fn_to_f32(c as u8));
            Box::new(move |s: &mut CastBufs| {
                if let (Data::U8(x), Data::F32(y)) = (&s.src, &mut s.dst) {
                    split(threads, y, |y, i| {
                        e4m3fn_to_f32_table(&table, &x[i..i + y.len()], y)
                    });
                }
                Ok(())
            })
        }
        (CastCase::F32ToMxfp8, SCALAR) => mxfp8_peer(threads, mxfp8_encode),
        #[cfg(target_arch = "x86_64")]
        (CastCase::F16ToF32, F16C) if avx2::available() => Box::new(move |s: &mut CastBufs| {
            if let (Data::F16(x), Data::F32(y)) = (&s.src, &mut s.dst) {
                // SAFETY: registered only where the CPU runs AVX2 and F16C.
                split2(threads, x, y, |x, y| unsafe { avx2::f16_to_f32(x, y) });
            }
            Ok(())
        }),
        #[cfg(target_arch = "x86_64")]
        (CastCase::F32ToF16, F16C) if avx2::available() => Box::new(move |s: &mut CastBufs| {
            if let (Data::F32(x), Data::F16(y)) = (&s.src, &mut s.dst) {
                // SAFETY: registered only where the CPU runs AVX2 and F16C.
                split2(threads, x, y, |x, y| unsafe { avx2::f32_to_f16(x, y) });
            }
            Ok(())
        }),
        #[cfg(target_arch = "x86_64")]
        (CastCase::F32ToE4m3fn, BRANCH_FREE) if avx2::available() => {
            Box::new(move |s: &mut CastBufs| {
                if let (Data::F32(x), Data::U8(y)) = (&s.src, &mut s.dst) {
                    // SAFETY: registered only where the CPU runs AVX2 and FMA.
                    split2(threads, x, y, |x, y| unsafe { avx2::f32_to_e4m3fn(x, y) });
                }
                Ok(())
            })
        }
        #[cfg(target_arch = "x86_64")]
        (CastCase::F32ToMxfp8, FUSED) if avx2::available() => {
            // SAFETY: registered only where the CPU runs AVX2 and FMA.
            mxfp8_peer(threads, |x, c, s| unsafe { avx2::mxfp8_encode(x, c, s) })
        }
        _ => return None,
    };
    Some(run)
}

/// An MXFP8 encode peer: `encode` over whole blocks, split over threads.
fn mxfp8_peer<'a>(threads: usize, encode: fn(&[f32], &mut [u8], &mut [u8])) -> RunFn<'a, CastBufs> {
    Box::new(move |s: &mut CastBufs| {
        if let (Data::F32(x), Data::U8(y)) = (&s.src, &mut s.dst) {
            // Whole blocks per thread: chunks of a multiple of 32 elements.
            let blocks = s.scales.len();
            let per = blocks.div_ceil(threads.max(1)).max(1) * 32;
            std::thread::scope(|sc| {
                for ((x, y), sl) in x
                    .chunks(per)
                    .zip(y.chunks_mut(per))
                    .zip(s.scales.chunks_mut(per / 32))
                {
                    if threads <= 1 {
                        encode(x, y, sl);
                    } else {
                        sc.spawn(move || encode(x, y, sl));
                    }
                }
            });
        }
        Ok(())
    })
}

/// tessera's run of `case` on `exec`.
fn tessera_run<'a>(case: CastCase, exec: Exec) -> RunFn<'a, CastBufs> {
    let (s, d) = case.dtypes();
    Box::new(move |b: &mut CastBufs| {
        let n = b.src.len();
        let src = ArrayView::contiguous(s, &[n], b.src.bytes()).map_err(|e| e.to_string())?;
        let dst_bytes: &mut [u8] = match &mut b.dst {
            Data::F32(v) => bytes_mut(v),
            Data::F16(v) => bytes_mut(v),
            Data::Bf16(v) => bytes_mut(v),
            Data::U8(v) => v,
        };
        if case == CastCase::F32ToMxfp8 {
            tessera::formats::encode(
                Format::Mxfp8E4m3,
                None,
                &src,
                dst_bytes,
                &mut b.scales,
                &exec,
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
        } else {
            let mut dst =
                ArrayViewMut::contiguous(d, &[n], dst_bytes).map_err(|e| e.to_string())?;
            tessera::cast(CastMode::Default, &src, &mut dst, &exec).map_err(|e| e.to_string())
        }
    })
}

/// The bytes of a slice of plain numbers, writable.
fn bytes_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: f32, f16 and bf16 are plain data without padding, every byte
    // pattern is a valid value of each, and the length covers the slice.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) }
}

/// Group `casts/<case>` on `bufs` (see [`CastBufs::new`]), checked against `want`.
pub fn cast_group<'a>(
    case: CastCase,
    bufs: &CastBufs,
    tiers: &[Tier],
    threads: usize,
    want: &'a Reference,
) -> Group<'a, CastBufs> {
    let read = bufs.src.bytes().len() as u64;
    let written = bufs.dst.bytes().len() as u64 + bufs.scales.len() as u64;
    let bytes = read + written;
    let mut cases: Vec<Case<'a, CastBufs>> = Vec::new();
    for &tier in tiers {
        cases.push(Case {
            name: tessera_name(tier),
            bytes,
            run: tessera_run(case, Exec::on(tier).threads(threads)),
            check: check_dst(case, want),
        });
    }
    for peer in [HALF, SCALAR, TABLE, F16C, BRANCH_FREE, FUSED] {
        if let Some(run) = slice_peer(case, threads, peer) {
            cases.push(Case {
                name: peer.into(),
                bytes,
                run,
                check: check_dst(case, want),
            });
        }
    }
    cases.push(Case {
        name: MEMCPY.into(),
        bytes: 2 * read,
        run: Box::new(move |s: &mut CastBufs| {
            let x = s.src.bytes();
            split(threads, &mut s.copy, |y, i| {
                memcpy_bytes(&x[i..i + y.len()], y)
            });
            Ok(())
        }),
        check: Box::new(|s: &CastBufs| {
            if s.copy == s.src.bytes() {
                Ok(())
            } else {
                Err("the copy differs from the source".into())
            }
        }),
    });

    let best = tiers.last().copied();
    let mut ratios = Vec::new();
    if let Some(tier) = best {
        let simd = tier != Tier::Scalar;
        if case.has_half() {
            let f16 = matches!(case, CastCase::F16ToF32 | CastCase::F32ToF16);
            ratios.push(RatioSpec {
                num: tessera_name(tier),
                den: HALF.into(),
                target: (f16 && simd).then_some(1.0),
            });
        }
        ratios.push(RatioSpec {
            num: tessera_name(tier),
            den: SCALAR.into(),
            target: None,
        });
        ratios.push(RatioSpec {
            num: tessera_name(tier),
            den: MEMCPY.into(),
            target: (case != CastCase::F32ToMxfp8 && simd).then_some(0.70),
        });
    }
    let (s, d) = case.dtypes();
    let what = if case == CastCase::F32ToMxfp8 {
        "MXFP8 (e4m3, UE8M0 per 32) encode".to_string()
    } else {
        format!("{s} -> {d}, default mode")
    };
    let mut note = format!(
        "{what}; {} of source, {} elements, {threads} thread{}, {} moved per call (memcpy: {})",
        human_bytes(read),
        bufs.src.len(),
        if threads == 1 { "" } else { "s" },
        human_bytes(bytes),
        human_bytes(2 * read)
    );
    if case.has_half() {
        note.push_str("; NaN payloads may differ from half's");
    }
    Group {
        name: case.group_name(),
        note,
        baseline: SCALAR.into(),
        reference: Some(MEMCPY.into()),
        reset: Box::new(CastBufs::poison),
        cases,
        ratios,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{run_group, Budget, Stat};

    /// Every f32 whose bits are a multiple of `step`, and the edges.
    fn sweep(step: u32) -> Vec<f32> {
        let mut v: Vec<f32> = (0..=u32::MAX / step)
            .map(|k| f32::from_bits(k * step))
            .collect();
        v.extend(f32_data(4000));
        v.truncate(v.len() / 32 * 32);
        v
    }

    fn tessera_cast(to: DType, x: &[f32], saturate: bool) -> Vec<u8> {
        let n = x.len();
        let mut y = vec![0u8; n * to.info().item_bytes];
        let mode = if saturate {
            CastMode::Saturating
        } else {
            CastMode::Default
        };
        tessera::cast(
            mode,
            &ArrayView::from_slice(x, &[n]).unwrap(),
            &mut ArrayViewMut::contiguous(to, &[n], &mut y).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        y
    }

    #[test]
    fn e4m3fn_scalar_functions_give_tesseras_bytes() {
        let x = sweep(4099);
        for saturate in [false, true] {
            let want = tessera_cast(DType::E4m3fn, &x, saturate);
            for (i, (&v, &w)) in x.iter().zip(&want).enumerate() {
                assert_eq!(
                    e4m3fn_from_f32(v, saturate),
                    w,
                    "[{i}] {v:e} sat {saturate}"
                );
            }
        }
        for (i, &v) in x.iter().enumerate() {
            for saturate in [false, true] {
                assert_eq!(
                    e4m3fn_from_f32_branch_free(v, saturate),
                    e4m3fn_from_f32(v, saturate),
                    "[{i}] {v:e}"
                );
            }
        }
        // Every code back to f32.
        let codes: Vec<u8> = (0..=255).collect();
        let mut y = vec![0f32; 256];
        tessera::cast(
            CastMode::Default,
            &ArrayView::contiguous(DType::E4m3fn, &[256], &codes).unwrap(),
            &mut ArrayViewMut::from_slice(&mut y, &[256]).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        for c in 0..=255u8 {
            assert_eq!(
                e4m3fn_to_f32(c).to_bits(),
                y[c as usize].to_bits(),
                "{c:#x}"
            );
        }
    }

    #[test]
    fn mxfp8_scalar_encode_gives_tesseras_bytes() {
        let mut x = sweep(1 << 20);
        // Blocks of tiny, huge, zero and special values.
        x.extend((0..32).map(|i| i as f32 * 1e-42));
        x.extend((0..32).map(|i| f32::MAX / (i + 1) as f32));
        x.extend([0.0f32; 32]);
        x.extend((0..32).map(|i| if i == 3 { f32::NEG_INFINITY } else { i as f32 }));
        let n = x.len();
        let (mut c, mut s) = (vec![0u8; n], vec![0u8; n / 32]);
        let (mut tc, mut ts) = (vec![0u8; n], vec![0u8; n / 32]);
        mxfp8_encode(&x, &mut c, &mut s);
        tessera::formats::encode(
            Format::Mxfp8E4m3,
            None,
            &ArrayView::from_slice(&x, &[n]).unwrap(),
            &mut tc,
            &mut ts,
            &Exec::default(),
        )
        .unwrap();
        assert_eq!(compare(DType::U8, &s, &ts, false), Ok(()));
        assert_eq!(compare(DType::U8, &c, &tc, false), Ok(()));
    }

    #[test]
    fn tessera_matches_half_on_every_f16_and_bf16_value() {
        // Every 16-bit code to f32, and a sweep of f32 to f16 and bf16.
        let codes: Vec<u16> = (0..=u16::MAX).collect();
        for to_f32 in [DType::F16, DType::Bf16] {
            let mut y = vec![0f32; codes.len()];
            tessera::cast(
                CastMode::Default,
                &ArrayView::contiguous(to_f32, &[codes.len()], as_bytes(&codes)).unwrap(),
                &mut ArrayViewMut::from_slice(&mut y, &[codes.len()]).unwrap(),
                &Exec::default(),
            )
            .unwrap();
            let mut want = vec![0f32; codes.len()];
            if to_f32 == DType::F16 {
                let h: Vec<f16> = codes.iter().map(|&c| f16::from_bits(c)).collect();
                h.convert_to_f32_slice(&mut want);
            } else {
                let h: Vec<bf16> = codes.iter().map(|&c| bf16::from_bits(c)).collect();
                h.convert_to_f32_slice(&mut want);
            }
            assert_eq!(
                compare(DType::F32, as_bytes(&y), as_bytes(&want), true),
                Ok(())
            );
        }
        let x = sweep(4099);
        let got = tessera_cast(DType::F16, &x, false);
        let mut want = vec![f16::ZERO; x.len()];
        want.convert_from_f32_slice(&x);
        assert_eq!(compare(DType::F16, &got, as_bytes(&want), true), Ok(()));
        let got = tessera_cast(DType::Bf16, &x, false);
        let mut want = vec![bf16::ZERO; x.len()];
        want.convert_from_f32_slice(&x);
        assert_eq!(compare(DType::Bf16, &got, as_bytes(&want), true), Ok(()));
    }

    #[test]
    fn every_peer_of_every_case_is_checked_and_correct() {
        let tiers = tessera::available_tiers();
        for threads in [1, 3] {
            for case in CastCase::ALL {
                let mut bufs = CastBufs::new(case, 64 * 1024 + 96);
                let want = reference(case, &bufs);
                let g = cast_group(case, &bufs, &tiers, threads, &want);
                let r = run_group(&g, &mut bufs, &Budget::QUICK, Stat::Best);
                for c in &r.cases {
                    assert_eq!(c.error, None, "{} / {} ({threads} threads)", r.name, c.name);
                }
                assert!(r.case(SCALAR).is_some() && r.case(MEMCPY).is_some());
                assert_eq!(r.case(HALF).is_some(), case.has_half());
            }
        }
    }

    #[test]
    fn a_wrong_output_is_reported() {
        let a = [1u8, 2, 3, 4];
        assert!(compare(DType::U8, &a, &a, false).is_ok());
        let e = compare(DType::U8, &[1, 2, 9, 4], &a, false).unwrap_err();
        assert!(e.contains("element 2") && e.contains("1 of 4"), "{e}");
        // Two different NaNs match only when NaN payloads are free.
        let n1 = 0x7e00u16.to_le_bytes();
        let n2 = 0xfe01u16.to_le_bytes();
        assert!(compare(DType::F16, &n1, &n2, true).is_ok());
        assert!(compare(DType::F16, &n1, &n2, false).is_err());
    }
}
