//! Streaming the results of a flat call past the caches.
//!
//! A large contiguous call writes its results through a small scratch that
//! stays in L1: the kernel fills the scratch a chunk at a time, and the chunk
//! goes to the destination by non-temporal stores, which do not read the
//! destination's lines first. Where the write stream limits a call (a cast
//! that widens its source, say), that removes a third of the memory traffic;
//! where it does not, it costs a copy out of L1. The kernel is the same and
//! the bytes are copied as they are: the results are bit for bit those of the
//! kernel writing the destination itself.
//!
//! Whether a host streams is decided once from the CPU: hosts whose plain
//! stores lose to a non-temporal memcpy (Intel's, measured) stream; the AMD
//! hosts measured keep their write-allocate stores as fast as memcpy's and do
//! not. Calls whose result is narrower than an input never stream (see
//! `widens_or_keeps`), nor do the transcendental kinds, bound by their
//! arithmetic (see `run_flat`). Copies of byte runs (`gather_ranges`)
//! stream on every host ([`run_copier`]): with no kernel between load and
//! store, the lines a plain store reads first cost them on AMD's too.
//! `TESSERA_STREAM_STORES=1` (or `0`) forces the host's choice, for
//! measurement; the rules for narrowing calls and transcendentals still hold.

use std::sync::OnceLock;

/// Destination bytes from which a flat call streams (on a streaming host):
/// well past L2, where a destination's lines would be evicted before reuse.
pub(crate) const STREAM_MIN_BYTES: usize = 8 << 20;

/// Bytes of the scratch a chunk goes through.
const CHUNK_BYTES: usize = 16 << 10;

/// `TESSERA_STREAM_STORES` as read once: `Some(true)` for `1`,
/// `Some(false)` for `0`, `None` otherwise.
fn forced() -> Option<bool> {
    static FORCED: OnceLock<Option<bool>> = OnceLock::new();
    *FORCED.get_or_init(|| match std::env::var("TESSERA_STREAM_STORES").as_deref() {
        Ok("1") => Some(true),
        Ok("0") => Some(false),
        _ => None,
    })
}

/// Whether this host streams large results of elementwise calls (see the
/// module's docs).
pub(crate) fn enabled() -> bool {
    copier().is_some() && forced().unwrap_or_else(intel)
}

/// Whether this host streams large copies of byte runs ([`run_copier`]):
/// on every host with a non-temporal copy unless `TESSERA_STREAM_STORES=0`.
/// A run copy moves its bytes without a kernel between load and store, so
/// the lines plain stores read first are a third of its traffic on either
/// vendor (`tessera-bench gather`, `gather_ranges` of 64 MiB on an EPYC
/// family 19h model 11h, a noisy host, six runs each: 0.68–0.85 of memcpy
/// with plain stores, 0.76–0.97 streamed; at two threads 1.03–1.34 against
/// 1.24–1.57).
fn copies_stream() -> bool {
    copier().is_some() && forced().unwrap_or(true)
}

/// Whether the CPU's vendor string is Intel's.
fn intel() -> bool {
    crate::tier::cpu_vendor_is_intel()
}

/// A copy of `len` bytes (a multiple of 64) from `src` to a 64-byte aligned
/// `dst` by non-temporal stores.
type Copier = unsafe fn(*const u8, *mut u8, usize);

/// The widest non-temporal copy this CPU runs.
fn copier() -> Option<Copier> {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::tier::cpu_runs(crate::tier::CpuFeature::Avx512f) {
            return Some(copy_avx512);
        }
        if crate::tier::cpu_runs(crate::tier::CpuFeature::Avx) {
            return Some(copy_avx);
        }
    }
    None
}

/// [`Copier`] by 512-bit non-temporal stores.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes, `dst` 64-byte aligned,
/// `len` a multiple of 64; the CPU runs AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn copy_avx512(src: *const u8, dst: *mut u8, len: usize) {
    use core::arch::x86_64::*;
    let mut i = 0;
    while i < len {
        // SAFETY: i + 64 ≤ len; dst + i is 64-byte aligned.
        unsafe {
            let v = _mm512_loadu_si512(src.add(i) as *const _);
            _mm512_stream_si512(dst.add(i) as *mut _, v);
        }
        i += 64;
    }
}

/// [`Copier`] by 256-bit non-temporal stores.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes, `dst` 32-byte aligned,
/// `len` a multiple of 32; the CPU runs AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn copy_avx(src: *const u8, dst: *mut u8, len: usize) {
    use core::arch::x86_64::*;
    let mut i = 0;
    while i < len {
        // SAFETY: i + 32 ≤ len; dst + i is 32-byte aligned.
        unsafe {
            let v = _mm256_loadu_si256(src.add(i) as *const __m256i);
            _mm256_stream_si256(dst.add(i) as *mut __m256i, v);
        }
        i += 32;
    }
}

/// A copy of whole runs of bytes into a destination of `total` bytes: by
/// non-temporal stores (64-byte aligned body, plain head and tail) where
/// [`copies_stream`] and `total` reaches [`STREAM_MIN_BYTES`], else `None`
/// (plain copies). The bytes written are the source's either way. A caller
/// that streams ends with [`fence`] before its results are read.
pub(crate) fn run_copier(total: usize) -> Option<RunCopy> {
    if total >= STREAM_MIN_BYTES && copies_stream() {
        copier().map(|c| RunCopy { copy: c })
    } else {
        None
    }
}

/// A streaming copy of byte runs ([`run_copier`]).
#[derive(Clone, Copy)]
pub(crate) struct RunCopy {
    copy: Copier,
}

impl RunCopy {
    /// Copy `len` bytes from `src` to `dst`: the bytes before `dst`'s next
    /// 64-byte boundary and after its last one by a plain copy, the lines
    /// between by non-temporal stores.
    ///
    /// # Safety
    /// `src` readable and `dst` writable for `len` bytes, not overlapping.
    pub(crate) unsafe fn copy(&self, src: *const u8, dst: *mut u8, len: usize) {
        let addr = dst as usize;
        let head = (addr.next_multiple_of(64) - addr).min(len);
        let body = (len - head) & !63;
        // SAFETY: the three parts split [0, len) of both buffers (this
        // function's contract); the body starts 64-byte aligned and is a
        // multiple of 64 bytes, as the copier asks, and `copier` gave a copy
        // this CPU runs.
        unsafe {
            core::ptr::copy_nonoverlapping(src, dst, head);
            (self.copy)(src.add(head), dst.add(head), body);
            let done = head + body;
            core::ptr::copy_nonoverlapping(src.add(done), dst.add(done), len - done);
        }
    }
}

/// Orders the non-temporal stores before anything that follows.
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SFENCE has no operands (SSE, on every x86-64 CPU).
    unsafe {
        core::arch::x86_64::_mm_sfence()
    };
}

/// Run `f` over `args` (a flat call: `args.n` elements, each input at
/// stride 1 or 0, the destination contiguous with `out_item` bytes per
/// element, inputs of `items` bytes), streaming its results where this host
/// streams, the caller lets it (`may_stream`: false for the transcendental
/// kinds), the destination is large and no input is wider than the result
/// ([`widens_or_keeps`]); else one plain call.
///
/// The transcendentals write plainly because their kernels are bound by
/// their arithmetic, so the stores' extra reads cost them nothing, while the
/// scratch's copy out runs between chunks with the source's stream idle.
/// `tessera-bench math:…` on the Intel Xeon of ARCHITECTURE.md §3, 16M f32,
/// the two choices forced in turn, three runs each, Gelem/s on avx2 / avx512
/// plain against streamed: exp 1.09–1.12 / 1.41–1.67 against 0.64–0.69 /
/// 1.33–1.48, log2 0.70–0.74 / 1.08–1.25 against 0.55–0.59 / 0.79–0.93, atan
/// 0.65–0.76 / 0.91–1.00 against 0.52–0.56 / 0.65–0.78, sinh 0.58–0.63 /
/// 0.86–0.88 against 0.45–0.46 / 0.56–0.59, tan 0.59–0.61 / 0.93–0.96
/// against 0.57–0.60 / 0.89–0.97.
///
/// # Safety
/// `f` is a kernel of these operands' dtypes that this CPU runs; every
/// input holds `args.n` elements of `items[k]` bytes from its pointer at
/// stride 1 (or one, at stride 0); the destination holds `args.n` writable
/// elements of `out_item` bytes, contiguous, read by no one else.
pub(crate) unsafe fn run_flat(
    f: crate::LoopFn,
    args: &crate::Args,
    items: &[usize],
    out_item: usize,
    may_stream: bool,
) {
    // The size first: most calls are small and never ask for the CPU.
    let large = may_stream
        && args.n.saturating_mul(out_item) >= STREAM_MIN_BYTES
        && out_item <= 16
        && widens_or_keeps(items, out_item);
    match if large { copier() } else { None } {
        Some(c) if enabled() => {
            // SAFETY: the operands and `f` are as run_through asks (this
            // function's contract), and `copier` gave a copy this CPU runs.
            unsafe { run_through(f, args, items, out_item, c) }
        }
        // SAFETY: the operands hold what `f` reads and writes, and the CPU
        // runs it (this function's contract).
        _ => unsafe { f(args) },
    }
}

/// Whether no input element is wider than a result element: the calls that
/// stream. A narrowing call (a cast from f32 to a byte or two, say) writes a
/// quarter or half of the bytes it reads, so its plain stores cost little,
/// and its kernel asks for the source ahead only over runs long enough to
/// come from memory ([`FAR_BYTES`](tessera_generated::runtime::loops::FAR_BYTES)),
/// which the scratch's chunks are not. `tessera-bench cast-sweep` on the
/// Intel Xeon of ARCHITECTURE.md §3 (family 6 model a7h), 64 MiB of f32,
/// the two choices forced in turn, two runs each, ratios over the same
/// window's memcpy (avx2 and avx512 tiers): f32 → i8 and u8 1.11–1.33
/// plain against 0.76–1.02 streamed, f32 → e4m3fn, e5m2, e3m2fn 0.91–1.26
/// against 0.47–0.78, f32 → f16 0.99–1.08 against 0.63–0.82, f32 → bf16
/// 0.79–1.06 against 0.61–0.96; a widening or same-width call still gains
/// (i8 → f32 1.03–1.25 streamed against 0.68–0.87, f32 → c64 1.18–1.21
/// against 0.78–0.83, f32 + f32 24.9–25.5 GB/s against 19.0–20.2).
fn widens_or_keeps(items: &[usize], out_item: usize) -> bool {
    items.iter().all(|&item| item <= out_item)
}

/// [`run_flat`]'s streaming path, whatever the size: the results go
/// through the scratch and `copy`.
///
/// # Safety
/// As for [`run_flat`]: `f` is a kernel of these operands' dtypes that this
/// CPU runs; every input holds `args.n` elements of `items[k]` bytes (or
/// one, at stride 0); the destination holds `args.n` writable elements of
/// `out_item` bytes, contiguous, read by no one else; and `copy` runs on this
/// CPU.
unsafe fn run_through(
    f: crate::LoopFn,
    args: &crate::Args,
    items: &[usize],
    out_item: usize,
    copy: Copier,
) {
    let addr = args.dst as usize;
    if !addr.is_multiple_of(out_item) {
        // SAFETY: the operands hold what `f` reads and writes, and the CPU
        // runs it (this function's contract).
        return unsafe { f(args) };
    }
    #[repr(C, align(64))]
    struct Scratch([u8; CHUNK_BYTES]);
    let mut scratch = Scratch([0; CHUNK_BYTES]);
    let per_chunk = CHUNK_BYTES / out_item;
    // A head up to the first 64-byte boundary, written directly.
    let head = (addr.next_multiple_of(64) - addr) / out_item;
    let mut done = 0usize;
    let step = |a: &mut crate::Args, count: usize, at: usize| {
        a.n = count;
        for (k, item) in items.iter().enumerate() {
            // SAFETY: `at` < n lies inside every non-broadcast input.
            a.src[k] = unsafe { args.src[k].add(at * item * args.src_stride[k] as usize) };
        }
    };
    let mut a = *args;
    if head > 0 {
        step(&mut a, head.min(args.n), 0);
        a.dst = args.dst;
        // SAFETY: the first `head` elements of every operand.
        unsafe { f(&a) };
        done = head.min(args.n);
    }
    while args.n - done >= per_chunk {
        step(&mut a, per_chunk, done);
        a.dst = scratch.0.as_mut_ptr();
        // SAFETY: a chunk of every input; the scratch holds per_chunk
        // results of out_item bytes.
        unsafe { f(&a) };
        // SAFETY: the chunk's place in the destination, 64-byte aligned
        // (after the head, whole chunks of CHUNK_BYTES), CHUNK_BYTES long.
        unsafe {
            copy(
                scratch.0.as_ptr(),
                args.dst.add(done * out_item),
                per_chunk * out_item,
            )
        };
        done += per_chunk;
    }
    if done < args.n {
        step(&mut a, args.n - done, done);
        // SAFETY: done < n: the destination's element `done`, inside it.
        a.dst = unsafe { args.dst.add(done * out_item) };
        // SAFETY: the last n − done elements of every operand (`step` moved
        // the inputs to `done`) and of the destination.
        unsafe { f(&a) };
    }
    fence();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that widens bytes into f32 (x + 0.5), a stand-in for a cast.
    ///
    /// # Safety
    /// `a.src[0]` holds `a.n` bytes at its stride (or one, at stride 0) and
    /// `a.dst` room for `a.n` f32.
    unsafe fn widen(a: &crate::Args) {
        for i in 0..a.n {
            // SAFETY: i < n elements of each operand.
            unsafe {
                let x = *a.src[0].offset(i as isize * a.src_stride[0]);
                (a.dst as *mut f32).add(i).write_unaligned(x as f32 + 0.5);
            }
        }
    }

    #[test]
    fn only_calls_that_keep_or_widen_their_elements_stream() {
        // f32 → i8 and f32 → f16 narrow; f32 + f32, i8 → f32 and a fill
        // (no input) do not.
        assert!(!widens_or_keeps(&[4], 1));
        assert!(!widens_or_keeps(&[4], 2));
        assert!(!widens_or_keeps(&[1, 8], 4));
        assert!(widens_or_keeps(&[4, 4], 4));
        assert!(widens_or_keeps(&[1], 4));
        assert!(widens_or_keeps(&[], 4));
    }

    #[test]
    fn streamed_results_are_the_plain_ones_at_every_offset_and_length() {
        let Some(copy) = copier() else {
            eprintln!("skipped on this CPU: no non-temporal copy (AVX)");
            return;
        };
        let src: Vec<u8> = (0..70_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for (skip, n) in [
            (0, 70_000),
            (1, 69_001),
            (3, 4096),
            (5, 12),
            (15, 65_536 - 15),
        ] {
            for bcast in [false, true] {
                let mut plain = vec![0f32; n + 16];
                let mut streamed = vec![f32::NAN; n + 16];
                let args = |dst: &mut Vec<f32>| crate::Args {
                    n,
                    src: [src[skip..].as_ptr(), core::ptr::null(), core::ptr::null()],
                    src_stride: [if bcast { 0 } else { 1 }, 1, 1],
                    // Destinations starting at every alignment.
                    dst: dst[skip % 16..].as_mut_ptr() as *mut u8,
                    dst_stride: 1,
                };
                // SAFETY: n source bytes (or one) and n + 16 − skip % 16 ≥ n
                // destination floats.
                unsafe {
                    widen(&args(&mut plain));
                    run_through(widen, &args(&mut streamed), &[1], 4, copy);
                }
                let o = skip % 16;
                assert_eq!(
                    plain[o..o + n]
                        .iter()
                        .map(|x| x.to_bits())
                        .collect::<Vec<_>>(),
                    streamed[o..o + n]
                        .iter()
                        .map(|x| x.to_bits())
                        .collect::<Vec<_>>(),
                    "skip {skip}, n {n}, broadcast {bcast}"
                );
                assert!(streamed[..o]
                    .iter()
                    .chain(&streamed[o + n..])
                    .all(|x| x.is_nan()));
            }
        }
    }
}
