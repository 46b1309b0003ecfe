//! Ordering kernels: [`sort`] and [`argsort`] along an axis (top-k where the
//! destination is shorter), [`median`] and [`quantile`], the batch search
//! [`lower_bound`], sorted-set [`intersect`] and [`difference`], and the
//! stable [`compress`] and [`partition`].
//!
//! # The order
//!
//! Every kernel here orders elements by one total order:
//!
//! ```text
//! −∞ < … < −0 < +0 < … < +∞ < NaN
//! ```
//!
//! Every NaN, whatever its sign and payload, is equal to every other NaN and
//! above +∞. Complex numbers order by their real part, then by their imaginary
//! part (both in the order above); one with a NaN in either part is equal to
//! every other such number and above every complex number without one.
//! Integers order by value; a bool's false is below its true (every nonzero
//! byte is true, and equal to every other); the narrow floats (fp8, fp6, fp4,
//! e8m0, ue4m3) and the packed integers order by the value their code
//! decodes to.
//!
//! The kernels compute on keys: each element maps to an unsigned integer
//! whose natural order is this order (module `key`), and the sorts are radix
//! sorts of those keys, stable, so results never depend on the thread count
//! or the tier.

#[macro_use]
mod key;
mod compress;
#[cfg(target_arch = "x86_64")]
mod quicksort;
mod radix;
mod search;
mod select;
mod sets;

pub use compress::{compress, partition};
pub use search::lower_bound;
pub use select::{median, quantile};
pub use sets::{difference, intersect};

use crate::array::{extent_product, ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::{DType, Exec};
use key::{KeyMap, RadixKey};
use radix::{radix_sort, small_sort, Shared, RADIX_MIN};
use rayon::prelude::*;

/// Sort each slice of `x` along `axis`, stably, into `values` (bits
/// unchanged) and, where given, the slice positions of those elements (i64)
/// into `positions`.
///
/// The order is the module's total order, −∞ < … < −0 < +0 < … < +∞ < NaN
/// (every NaN equal; complex by real part, then imaginary part; see the
/// module documentation). Elements that are equal in it keep their order in
/// `x`; `descending` reverses the order and still keeps equal elements in
/// increasing position (so NaNs come first, in increasing position).
///
/// `values` has `x`'s shape but along `axis`, where it may be shorter: with
/// k ≤ n elements there, each slice receives the first k elements of its
/// sorted order (top-k; the rest is never sorted). `positions`, where given,
/// has `values`' shape. Every dtype is taken; every layout of `x`, `values`
/// and `positions` (strides zero, negative, transposed).
///
/// The result is a function of `x`'s values alone: thread count and tier
/// change no bit.
///
/// # Refusals (before any write)
/// [`Error::Rank`] for a rank-0 `x`; [`Error::Axis`] for an axis out of range,
/// a `values` longer than `x` along it, or a slice of 2^32 or more elements;
/// [`Error::DTypeMismatch`] for `values` of another dtype or `positions` not
/// i64; [`Error::Shape`] for shapes that differ off the axis (or between
/// `values` and `positions`); [`Error::Layout`] for a destination that reaches
/// an element twice or whose bytes overlap `x`'s; [`Error::Alloc`] where the
/// scratch (per task, for each element of a slice, or of the elements a
/// top-k keeps: two keys of 2 to 16 bytes, plus two 4-byte indices where
/// positions are asked for or the dtype's keys do not map back to values)
/// cannot be had; [`Error::TierUnavailable`].
pub fn sort(
    axis: usize,
    descending: bool,
    x: &ArrayView<'_>,
    values: &mut ArrayViewMut<'_>,
    positions: Option<&mut ArrayViewMut<'_>>,
    exec: &Exec,
) -> Result<()> {
    order(
        axis,
        descending,
        FloatOrder::NanLast,
        x,
        Some(values),
        positions,
        exec,
    )
}

/// How [`sort_with`] and [`argsort_with`] order floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FloatOrder {
    /// The module's order: −∞ < … < −0 < +0 < … < +∞ < NaN, every NaN equal
    /// (what [`sort`] does).
    #[default]
    NanLast,
    /// IEEE 754 totalOrder, the order of the `total_order` kind:
    /// −NaN < −∞ < … < −0 < +0 < … < +∞ < +NaN. f16, bf16, f32 and f64
    /// order NaNs by sign, then payload (equal only for equal bits); the
    /// narrow floats (one byte or less) by the value their code decodes to,
    /// every NaN of one sign equal; complex numbers by real part, then
    /// imaginary part, each in totalOrder. Integers and bool as in [`sort`].
    Total,
}

/// [`sort`] in the float order `float_order`: the same layouts, top-k,
/// stability, descending rule and refusals.
#[allow(clippy::too_many_arguments)]
pub fn sort_with(
    axis: usize,
    descending: bool,
    float_order: FloatOrder,
    x: &ArrayView<'_>,
    values: &mut ArrayViewMut<'_>,
    positions: Option<&mut ArrayViewMut<'_>>,
    exec: &Exec,
) -> Result<()> {
    order(
        axis,
        descending,
        float_order,
        x,
        Some(values),
        positions,
        exec,
    )
}

/// [`argsort`] in the float order `float_order`.
pub fn argsort_with(
    axis: usize,
    descending: bool,
    float_order: FloatOrder,
    x: &ArrayView<'_>,
    positions: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    order(
        axis,
        descending,
        float_order,
        x,
        None,
        Some(positions),
        exec,
    )
}

/// The positions (i64, along `axis`) of each slice's elements in [`sort`]'s
/// order: `positions` has `x`'s shape but along `axis`, where k ≤ n keeps the
/// first k. The same order, stability, descending rule and refusals as
/// [`sort`].
pub fn argsort(
    axis: usize,
    descending: bool,
    x: &ArrayView<'_>,
    positions: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    order(
        axis,
        descending,
        FloatOrder::NanLast,
        x,
        None,
        Some(positions),
        exec,
    )
}

pub(crate) use crate::checks::check_destination_of as check_destination;

/// The element positions of every slice's first element along `axis`, in C
/// order of the other axes.
pub(crate) fn slice_bases(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    axis: usize,
) -> Result<Vec<isize>> {
    let outer = extent_product(
        shape
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != axis)
            .map(|(_, &e)| e),
    );
    let mut v = crate::alloc::try_vec(outer, "slice offsets")?;
    if outer == 0 {
        return Ok(v);
    }
    let axes: Vec<usize> = (0..shape.len()).filter(|&i| i != axis).collect();
    let mut ix = vec![0usize; axes.len()];
    let mut pos = offset as isize;
    for _ in 0..outer {
        v.push(pos);
        for j in (0..axes.len()).rev() {
            let a = axes[j];
            ix[j] += 1;
            pos += strides[a];
            if ix[j] < shape[a] {
                break;
            }
            pos -= strides[a] * shape[a] as isize;
            ix[j] = 0;
        }
    }
    Ok(v)
}

/// Check `axis` of `x` (rank ≥ 1).
pub(crate) fn check_axis(x: &ArrayView<'_>, axis: usize, call: &str) -> Result<()> {
    if x.shape().is_empty() {
        return Err(Error::Rank {
            operand: "x".into(),
            shape: vec![],
            expected: format!("{call} takes an array of rank 1 or more"),
        });
    }
    crate::checks::check_axis(axis, x.shape().len(), "x")
}

/// `dst`'s shape is `x`'s but along `axis`, where it is at most `x`'s.
fn check_like(x: &ArrayView<'_>, axis: usize, dst: &ArrayViewMut<'_>, name: &str) -> Result<()> {
    let (xs, ds) = (x.shape(), dst.shape());
    let off_axis = |s: &[usize]| -> Vec<usize> {
        s.iter()
            .enumerate()
            .filter(|&(i, _)| i != axis)
            .map(|(_, &e)| e)
            .collect()
    };
    if xs.len() != ds.len() || off_axis(xs) != off_axis(ds) {
        return Err(Error::Shape {
            operand: name.into(),
            shape: ds.to_vec(),
            target: xs.to_vec(),
        });
    }
    if ds[axis] > xs[axis] {
        return Err(Error::Axis {
            operand: name.into(),
            axis,
            reason: format!("has {} elements, more than x's {}", ds[axis], xs[axis]),
        });
    }
    Ok(())
}

/// A destination: its bytes, its slices' first elements, its axis stride.
type Dest = (Shared<u8>, Vec<isize>, isize);

/// One sort call, checked.
struct Job {
    x: *const u8,
    xb: Vec<isize>,
    xs: isize,
    v: Option<Dest>,
    p: Option<Dest>,
    n: usize,
    k: usize,
    desc: bool,
    tasks: usize,
    /// Slices share bytes (packed dtypes): one task.
    packed: bool,
    /// Bytes of an element (1 for packed dtypes).
    item: usize,
    /// The tier runs AVX-512: values alone of 32- and 64-bit keys take the
    /// vector quicksort.
    vector: bool,
}
// SAFETY: the raw pointers are read (x) or written at elements of distinct
// slices (destinations), each slice by one task.
unsafe impl Sync for Job {}

fn order(
    axis: usize,
    desc: bool,
    float_order: FloatOrder,
    x: &ArrayView<'_>,
    values: Option<&mut ArrayViewMut<'_>>,
    positions: Option<&mut ArrayViewMut<'_>>,
    exec: &Exec,
) -> Result<()> {
    let tier = exec.resolve_tier_for(crate::tier::Engine::Sort)?;
    check_axis(x, axis, "sort")?;
    if let Some(v) = values.as_deref() {
        if v.dtype() != x.dtype() {
            return Err(Error::DTypeMismatch {
                operand: "values".into(),
                expected: x.dtype(),
                got: v.dtype(),
            });
        }
        check_like(x, axis, v, "values")?;
    }
    if let Some(p) = positions.as_deref() {
        if p.dtype() != DType::I64 {
            return Err(Error::DTypeMismatch {
                operand: "positions".into(),
                expected: DType::I64,
                got: p.dtype(),
            });
        }
        check_like(x, axis, p, "positions")?;
        if let Some(v) = values.as_deref() {
            if v.shape() != p.shape() {
                return Err(Error::Shape {
                    operand: "positions".into(),
                    shape: p.shape().to_vec(),
                    target: v.shape().to_vec(),
                });
            }
        }
    }
    if let Some(v) = values.as_deref() {
        check_destination(v, "values", &[x])?;
    }
    if let Some(p) = positions.as_deref() {
        check_destination(p, "positions", &[x])?;
    }
    let n = x.shape()[axis];
    if n > u32::MAX as usize {
        return Err(Error::Axis {
            operand: "x".into(),
            axis,
            reason: format!("has {n} elements; a sort takes fewer than 2^32"),
        });
    }
    let k = values
        .as_deref()
        .map(|v| v.shape()[axis])
        .or(positions.as_deref().map(|p| p.shape()[axis]))
        .unwrap_or(0);
    let l = x.layout();
    let xb = slice_bases(&l.shape, &l.strides, l.offset, axis)?;
    if xb.is_empty() || k == 0 {
        return Ok(());
    }
    let dest = |d: Option<&mut ArrayViewMut<'_>>| -> Result<Option<Dest>> {
        d.map(|d| {
            let dl = d.layout().clone();
            let b = slice_bases(&dl.shape, &dl.strides, dl.offset, axis)?;
            Ok((Shared(d.data_mut().as_mut_ptr()), b, dl.strides[axis]))
        })
        .transpose()
    };
    let v = dest(values)?;
    let p = dest(positions)?;
    let job = Job {
        x: x.data().as_ptr(),
        xs: l.strides[axis],
        xb,
        v,
        p,
        n,
        k,
        desc,
        tasks: exec.thread_count(),
        packed: x.dtype().info().values_per_byte > 1,
        item: x.dtype().info().item_bytes,
        vector: cfg!(target_arch = "x86_64") && crate::tier::runs_avx512(tier),
    };
    with_key_map!(x.dtype(), float_order == FloatOrder::Total, |m| run(
        m, &job
    ))
}

/// Scratch of one task.
struct Buf<K> {
    keys: Vec<K>,
    idx: Vec<u32>,
    tk: Vec<K>,
    ti: Vec<u32>,
}

/// `n` zeros, from zeroed memory (no stores: fresh pages are zero already),
/// or [`Error::Alloc`].
fn alloc<T: RadixKey>(n: usize, what: &str) -> Result<Vec<T>> {
    let err = || Error::Alloc {
        what: what.into(),
        elements: n,
    };
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| err())?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a nonzero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        return Err(err());
    }
    // SAFETY: p was allocated by the global allocator with the layout of n
    // T (Vec's own), and all-zero bytes are n valid T (RadixKey is this
    // module's, implemented for unsigned integers alone).
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

impl<K: RadixKey> Buf<K> {
    fn new(n: usize, with_idx: bool, keys_in_place: bool) -> Result<Self> {
        let m = if with_idx { n } else { 0 };
        Ok(Buf {
            keys: alloc(if keys_in_place { 0 } else { n }, "sort keys")?,
            idx: alloc(m, "sort indices")?,
            tk: alloc(n, "sort keys")?,
            ti: alloc(m, "sort indices")?,
        })
    }
}

fn run<M: KeyMap>(m: &M, job: &Job) -> Result<()> {
    let slices = job.xb.len();
    let tasks = if job.packed {
        1
    } else {
        job.tasks.min(slices).max(1)
    };
    // Top-k: for each slice, the largest top digit the first k elements
    // reach; only the elements up to it are kept and sorted, so the scratch
    // holds the most any slice keeps.
    let top_k = job.k < job.n && job.n >= RADIX_MIN;
    let mut lasts: Vec<(u16, usize)> = Vec::new();
    let mut len = job.n;
    if top_k {
        crate::alloc::try_reserve(&mut lasts, slices, "top-k bounds")?;
        for s in 0..slices {
            lasts.push(top_digit(m, job, s));
        }
        len = lasts.iter().map(|l| l.1).max().unwrap_or(0);
    }
    // Values alone of a long slice, on unit-stride destinations aligned
    // for the key and as wide: the keys are sorted in the destination and
    // turned into values where they lie.
    let in_place = in_place(m, job);
    // Every task's scratch before any write.
    let mut bufs: Vec<Buf<M::K>> = (0..tasks)
        .map(|_| Buf::new(len, job.p.is_some() || !M::INVERTIBLE, in_place))
        .collect::<Result<_>>()?;
    let lasts = &lasts;
    // One slice: its passes may use every task.
    let inner = if slices == 1 { job.tasks } else { 1 };
    if tasks == 1 {
        let buf = &mut bufs[0];
        for s in 0..slices {
            lane(m, job, s, buf, inner, lasts.get(s).map(|l| l.0));
        }
    } else {
        bufs.par_iter_mut().enumerate().for_each(|(t, buf)| {
            for s in slices * t / tasks..slices * (t + 1) / tasks {
                lane(m, job, s, buf, 1, lasts.get(s).map(|l| l.0));
            }
        });
    }
    Ok(())
}

/// Whether `lane` sorts the keys inside the values destination.
fn in_place<M: KeyMap>(m: &M, job: &Job) -> bool {
    let w = core::mem::size_of::<M::K>();
    match &job.v {
        // The vector quicksort sorts in the keys buffer and writes the
        // values out in one pass (faster, measured, than mapping them back
        // where they lie), except where the keys are the values themselves
        // (unsigned integers, ascending): sorted in the destination, they
        // need no writing back.
        Some(_) if job.vector && vector_key::<M::K>() && (job.desc || !m.bits_are_key()) => false,
        Some((vp, vb, vs)) => {
            job.p.is_none()
                && M::INVERTIBLE
                && job.k == job.n
                && !job.packed
                && *vs == 1
                && w == job.item
                && radix::takes_from::<M::K>(job.n)
                && vb.iter().all(|&b| {
                    (vp.0 as usize).wrapping_add((b as usize).wrapping_mul(w))
                        % core::mem::align_of::<M::K>()
                        == 0
                })
        }
        None => false,
    }
}

/// The key of element `i` of slice `s` (complemented when descending).
#[inline(always)]
fn key_of<M: KeyMap>(m: &M, job: &Job, s: usize, i: usize) -> M::K {
    // SAFETY: i < n, so xb + i·xs is an element of the validated view x.
    let k = unsafe { m.key_at(job.x, job.xb[s] + i as isize * job.xs) };
    if job.desc {
        k.flip()
    } else {
        k
    }
}

/// For top-k: the top digit of slice `s`'s k-th smallest key, and how many
/// of its elements have a top digit at most that.
fn top_digit<M: KeyMap>(m: &M, job: &Job, s: usize) -> (u16, usize) {
    let top = M::K::PASSES - 1;
    let mut h = [0usize; 1 << 11];
    for i in 0..job.n {
        h[key_of(m, job, s, i).digit(top)] += 1;
    }
    let mut acc = 0;
    for (d, &c) in h.iter().enumerate() {
        acc += c;
        if acc >= job.k {
            return (d as u16, acc);
        }
    }
    (u16::MAX, job.n)
}

/// Sort slice `s` and write its first k elements (`last`: the top digit
/// bound of a top-k slice).
fn lane<M: KeyMap>(
    m: &M,
    job: &Job,
    s: usize,
    buf: &mut Buf<M::K>,
    tasks: usize,
    last: Option<u16>,
) {
    let (n, k, desc) = (job.n, job.k, job.desc);
    let (xb, xs) = (job.xb[s], job.xs);
    // Everything the key reads is copied in (the map too), so the hot loops
    // keep it in registers rather than reload it after every store.
    let (map, x) = (*m, Shared(job.x as *mut u8));
    let key = move |i: usize| -> M::K {
        // SAFETY: i < n, so xb + i·xs is an element of the validated view x
        // (read only).
        let k = unsafe { map.key_at(x.ptr(), xb + i as isize * xs) };
        if desc {
            k.flip()
        } else {
            k
        }
    };
    // A long slice's buckets go to the destinations as soon as each is in
    // place (while it is in cache).
    let finish = |lo: usize, hi: usize, kp: *mut M::K, ip: *const u32| {
        // SAFETY: keys (and indices, where they travel) lo..hi are final;
        // the destinations' elements lo..hi are this task's; where the keys
        // lie in the values destination itself (in place: unit stride, as
        // wide as the key, no indices), `emit` reads each key before it
        // writes the value over it.
        unsafe { emit(m, job, s, lo, hi, kp, ip) }
    };
    // Indices travel with the keys where positions are asked for, or where
    // a key does not map back to its element's bits.
    let need_idx = job.p.is_some() || !M::INVERTIBLE;
    if let Some(last) = last {
        // Top-k: the elements whose top digit is at most the k-th smallest
        // key's, in input order, hold the first k of the sorted order.
        let top = M::K::PASSES - 1;
        let last = last as usize;
        let mut c = 0;
        for i in 0..n {
            let kk = key(i);
            if kk.digit(top) <= last {
                buf.keys[c] = kk;
                if need_idx {
                    buf.idx[c] = i as u32;
                }
                c += 1;
            }
        }
        sort_keys(buf, c, need_idx, tasks);
    } else if job.vector && !need_idx && vector_key::<M::K>() {
        // Values alone of 32- or 64-bit keys on an AVX-512 tier: the keys
        // (in the destination itself where the sort is in place) sorted by
        // the vector quicksort, then written out as values.
        let in_place = buf.keys.len() < n;
        let kp: *mut M::K = if in_place {
            let (vp, vb, _) = job.v.as_ref().expect("values in place");
            // SAFETY: as for the radix sort in place below.
            unsafe { vp.0.offset(vb[s] * job.item as isize) as *mut M::K }
        } else {
            buf.keys.as_mut_ptr()
        };
        // SAFETY: kp addresses n keys this task alone uses (its buffer, or
        // its destination slice checked by `in_place`).
        let keys = unsafe { core::slice::from_raw_parts_mut(kp, n) };
        for (i, x) in keys.iter_mut().enumerate() {
            *x = key(i);
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `job.vector`: the tier runs AVX-512 F, AVX2 and POPCNT.
        unsafe {
            quicksort::sort_keys_avx512(keys, &mut buf.tk[..n], tasks)
        };
        if in_place && !job.desc && m.bits_are_key() {
            // Unsigned integers sorted in their own destination: the keys
            // are the values already.
            return;
        }
        // SAFETY: keys 0..k are final; in place, key j is value element j
        // (read before it is written); the destinations' slice s is this
        // task's.
        unsafe { emit(m, job, s, 0, k, kp, core::ptr::null()) };
        return;
    } else if buf.keys.len() < n {
        // In place: the keys sorted inside this slice of the destination,
        // each bucket turned into its values as soon as it is in place
        // (while it is in cache).
        let (vp, vb, _) = job.v.as_ref().expect("values in place");
        // SAFETY: `in_place` checked a unit-stride destination slice of n
        // elements as wide as the key and aligned for it; this task alone
        // writes it, and nothing else refers to those bytes meanwhile.
        let keys = unsafe {
            core::slice::from_raw_parts_mut(vp.0.offset(vb[s] * job.item as isize) as *mut M::K, n)
        };
        radix::radix_sort_from(
            key,
            keys,
            None,
            &mut buf.tk[..n],
            &mut buf.ti[..0],
            tasks,
            finish,
        );
        return;
    } else if radix::takes_from::<M::K>(n) {
        // A long slice: its keys go straight into the top radix pass, and
        // each bucket goes to the destinations once it is in place.
        let idx = need_idx.then(|| &mut buf.idx[..n]);
        let ti = if need_idx {
            &mut buf.ti[..n]
        } else {
            &mut buf.ti[..0]
        };
        radix::radix_sort_from(
            key,
            &mut buf.keys[..n],
            idx,
            &mut buf.tk[..n],
            ti,
            tasks,
            finish,
        );
        return;
    } else {
        for i in 0..n {
            buf.keys[i] = key(i);
        }
        if need_idx {
            for (i, x) in buf.idx[..n].iter_mut().enumerate() {
                *x = i as u32;
            }
        }
        sort_keys(buf, n, need_idx, tasks);
    }
    // SAFETY: keys (and indices) 0..k of the buffer are final; the
    // destinations' slice s is this task's.
    unsafe { emit(m, job, s, 0, k, buf.keys.as_mut_ptr(), buf.idx.as_ptr()) };
}

/// Write elements `lo..hi` of slice `s`'s sorted order to the destinations:
/// values from the sorted keys at `kp` (or, for keys that do not map back,
/// from x through the indices at `ip`), positions from `ip`.
///
/// Keys that collapse (NaNs) are equal, so they stand for the collapsing
/// elements in input order: the first in `lo..hi` is the slice's first such
/// element (every collapsing key lies in one call's range).
///
/// # Safety
/// `kp` (and `ip`, where indices travel) hold at least `hi` sorted keys of
/// slice s; elements `lo..hi` of the destinations' slice s are this
/// caller's alone; where `kp` lies inside the values destination, key j is
/// at value element j (read here before that element is written).
unsafe fn emit<M: KeyMap>(
    m: &M,
    job: &Job,
    s: usize,
    lo: usize,
    hi: usize,
    kp: *const M::K,
    ip: *const u32,
) {
    let (xb, xs) = (job.xb[s], job.xs);
    if let Some((vp, vb, vs)) = &job.v {
        let base = vb[s];
        if M::INVERTIBLE {
            // SAFETY: the caller's promise: keys lo..hi are final.
            let key = |j: usize| unsafe {
                let k = kp.add(j).read();
                if job.desc {
                    k.flip()
                } else {
                    k
                }
            };
            // Keys that collapse are equal and extreme: in a sorted run
            // they are its top (ascending; their complement, the bottom,
            // descending). Found by bisection; the rest written in a
            // plain loop.
            let (mut a, mut b) = (lo, hi);
            while a < b {
                let mid = a + (b - a) / 2;
                if m.collapses(key(mid)) != job.desc {
                    b = mid;
                } else {
                    a = mid + 1;
                }
            }
            let (plain, nans) = if job.desc {
                (a..hi, lo..a)
            } else {
                (lo..a, a..hi)
            };
            if *vs == 1 && !job.desc {
                // The common case apart, so that it runs vectorised.
                for j in plain {
                    // SAFETY: as below, with unit stride and keys as stored.
                    unsafe { m.write_key(kp.add(j).read(), vp.0, base + j as isize) };
                }
            } else {
                for j in plain {
                    // SAFETY: base + j·vs is element j of this slice of the
                    // validated destination, the caller's alone; the key
                    // does not collapse, so it maps back to its element's
                    // bits.
                    unsafe { m.write_key(key(j), vp.0, base + j as isize * vs) };
                }
            }
            let mut next = 0usize;
            for j in nans {
                // SAFETY: the sorted keys hold as many collapsing keys as
                // the slice, so one is found before n, an element of x's
                // slice; the destination element is the caller's.
                unsafe {
                    while !m.collapses(m.key_at(job.x, xb + next as isize * xs)) {
                        next += 1;
                    }
                    m.copy(job.x, xb + next as isize * xs, vp.0, base + j as isize * vs);
                }
                next += 1;
            }
        } else {
            for j in lo..hi {
                // SAFETY: idx[j] < n is an element of x's slice; the
                // destination element j of this slice is the caller's.
                unsafe {
                    m.copy(
                        job.x,
                        xb + *ip.add(j) as isize * xs,
                        vp.0,
                        base + j as isize * vs,
                    )
                };
            }
        }
    }
    if let Some((pp, pb, ps)) = &job.p {
        let base = pb[s];
        for j in lo..hi {
            let d = base + j as isize * ps;
            // SAFETY: d is element j of this slice of the validated i64
            // destination, the caller's; index j is final.
            unsafe {
                (pp.0.offset(d * 8) as *mut i64).write_unaligned((*ip.add(j) as i64).to_le())
            };
        }
    }
}

/// Whether the vector quicksort sorts keys of type `K` (u32 and u64).
fn vector_key<K: RadixKey>() -> bool {
    use core::any::TypeId;
    TypeId::of::<K>() == TypeId::of::<u32>() || TypeId::of::<K>() == TypeId::of::<u64>()
}

/// Sort the first `len` keys of `buf` (with their indices).
fn sort_keys<K: RadixKey>(buf: &mut Buf<K>, len: usize, with_idx: bool, tasks: usize) {
    let keys = &mut buf.keys[..len];
    let idx = if with_idx {
        Some(&mut buf.idx[..len])
    } else {
        None
    };
    if len < RADIX_MIN {
        small_sort(keys, idx);
    } else {
        let ti = if with_idx {
            &mut buf.ti[..len]
        } else {
            &mut buf.ti[..0]
        };
        radix_sort(keys, idx, &mut buf.tk[..len], ti, tasks);
    }
}
