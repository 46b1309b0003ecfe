//! Scratch that does not grow with what a call's operands name
//! (ARCHITECTURE.md §4, "Resources"): a reduction keeps O(log B) partial
//! sums for B blocks, a lane-order contraction of many long rows reads them
//! block by block, and a broadcast ndarray input is copied only as far as it
//! is stored. A counting allocator (this test binary's own) records the
//! most memory held at once, above what was held before, while a call
//! runs; the tests take a lock so that only one measures at a time.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use tessera::map::Program;
use tessera::reduce::Terms;
use tessera::{contract, reduce, reduce_terms, ArrayView, ArrayViewMut, Exec, ReduceOp};

struct Counting;

static MEASURING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn grew(size: usize) {
    let now = LIVE.fetch_add(size, Ordering::SeqCst) + size;
    if MEASURING.load(Ordering::SeqCst) {
        PEAK.fetch_max(now, Ordering::SeqCst);
    }
}

fn shrank(size: usize) {
    LIVE.fetch_sub(size, Ordering::SeqCst);
}

// SAFETY: every method forwards to the system allocator with the caller's
// arguments unchanged; the bookkeeping touches only atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded from this method's contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded from this method's contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded from this method's contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            grew(new_size);
            shrank(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: forwarded from this method's contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes held at once (on all threads) while `f` runs, above what
/// was held when it started, after one unmeasured run of `warm` (which
/// starts rayon's pool and the like).
fn peak_scratch(warm: impl Fn(), f: impl FnOnce()) -> usize {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    warm();
    let base = LIVE.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    MEASURING.store(true, Ordering::SeqCst);
    f();
    MEASURING.store(false, Ordering::SeqCst);
    PEAK.load(Ordering::SeqCst).saturating_sub(base)
}

/// A bound far below what a vector of one value per block (or per term) of
/// the calls below would take, and above every fixed scratch the engines
/// keep (a tile of a program, a block of terms in each buffer).
const BOUND: usize = 256 << 10;

fn ones_sum(n: usize, exec: &Exec) -> f32 {
    let p = Program::parse("y0 = 1f32", &[]).expect("a program");
    let mut out = [0f32];
    reduce_terms(
        &[0],
        Terms::program(&p, 0, &[], &[n]),
        &mut [(
            ReduceOp::Sum,
            &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
        )],
        exec,
    )
    .expect("a sum of ones");
    out[0]
}

#[test]
fn a_long_reduction_keeps_log_b_partial_sums() {
    // 2^27 terms in 2^17 blocks: a total per block would be 512 KiB.
    let n = 1usize << 27;
    for exec in [Exec::SEQ, Exec::default().threads(3)] {
        let mut got = 0.0;
        let peak = peak_scratch(
            || {
                ones_sum(1 << 20, &exec);
            },
            || got = ones_sum(n, &exec),
        );
        // Every partial sum is a power of two times a count of ones: exact.
        assert_eq!(got, n as f32, "{exec:?}");
        assert!(peak < BOUND, "{exec:?}: {peak} bytes of scratch");
    }
}

#[test]
fn a_broadcast_view_is_reduced_without_scratch_for_what_it_names() {
    let n = 1usize << 27;
    let one = [1.0f32];
    let v = ArrayView::from_slice_strided(&one, &[n], &[0], 0).unwrap();
    let sum = |exec: &Exec, v: &ArrayView<'_>| {
        let mut out = [0f32];
        reduce(
            ReduceOp::Sum,
            &[0],
            v,
            &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
            exec,
        )
        .unwrap();
        out[0]
    };
    for exec in [Exec::SEQ, Exec::default().threads(3)] {
        let mut got = 0.0;
        let small = ArrayView::from_slice_strided(&one, &[1 << 20], &[0], 0).unwrap();
        let peak = peak_scratch(
            || {
                sum(&exec, &small);
            },
            || got = sum(&exec, &v),
        );
        assert_eq!(got, n as f32, "{exec:?}");
        assert!(peak < BOUND, "{exec:?}: {peak} bytes of scratch");
    }
}

#[test]
fn a_lane_order_product_of_many_broadcast_rows_reads_them_block_by_block() {
    // a [1024, 2^14]: every row the same stored one (stride 0 along the
    // rows), its depth every other element (stride 2, so not read in
    // place), times x [2^14]: lane order (one column). A gathered copy of
    // each row would hold 2^24 values.
    let (rows, k) = (1024usize, 1usize << 14);
    let stored: Vec<f32> = (0..2 * k).map(|i| ((i / 2) % 7) as f32).collect();
    let x: Vec<f32> = (0..k).map(|i| (i % 5) as f32 - 2.0).collect();
    // Integers of a few bits: the sum is exact in any order.
    let want: f32 = (0..k).map(|i| stored[2 * i] * x[i]).sum();
    let gemv = |exec: &Exec, k: usize| {
        let a = ArrayView::from_slice_strided(&stored, &[rows, k], &[0, 2], 0).unwrap();
        let x = ArrayView::from_slice(&x[..k], &[k]).unwrap();
        let mut y = vec![0f32; rows];
        contract::gemv(
            &a,
            &x,
            &mut ArrayViewMut::from_slice(&mut y, &[rows]).unwrap(),
            exec,
        )
        .unwrap();
        y
    };
    for exec in [Exec::SEQ, Exec::default().threads(3)] {
        let mut y = Vec::new();
        let peak = peak_scratch(
            || {
                gemv(&exec, 64);
            },
            || y = gemv(&exec, k),
        );
        assert!(y.iter().all(|&v| v == want), "{exec:?}");
        // The destination (4 KiB), the index tables of the rows and of the
        // depth (2^10 and 2^14 entries each side) and a few blocks per
        // thread: no copy of a row.
        assert!(peak < 4 * BOUND, "{exec:?}: {peak} bytes of scratch");
    }
}

#[cfg(feature = "ndarray")]
#[test]
fn a_broadcast_stepped_ndarray_input_is_copied_as_stored() {
    use ndarray::{s, Array1};
    // Every other element of [1, 2, 3, 4] (a view with gaps, so copied),
    // broadcast to 2^20 rows: the copy holds the two stored elements.
    let base = Array1::from(vec![1.0f32, 2.0, 3.0, 4.0]);
    let stepped = base.slice(s![..;2]);
    let rows = 1usize << 20;
    let big = stepped.broadcast((rows, 2)).unwrap();
    let mut y = Array1::<f32>::zeros(2);
    let peak = peak_scratch(
        || {},
        || tessera::nd::reduce(ReduceOp::Sum, &[0], big.view(), y.view_mut(), &Exec::SEQ).unwrap(),
    );
    assert_eq!(y.to_vec(), vec![rows as f32, 3.0 * rows as f32]);
    assert!(peak < BOUND, "{peak} bytes of scratch");
}
