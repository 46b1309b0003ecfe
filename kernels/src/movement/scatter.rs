//! `scatter`: updates combined into a copy of `into` at int64 positions.

use super::{
    check_axis, check_dst, check_i64, check_same, check_shape_but, direct_c, filled, load_c,
    packed, pos_at, run_parts, store_c, threads_for, work_bytes, zeroed, Shared,
};
use crate::array::{count_of, extent_product, ArrayView, ArrayViewMut, Element};
use crate::cast::{cast, CastMode};
use crate::error::{Error, Result};
use crate::tier::Exec;
use crate::{Class, DType};
use num_complex::Complex;

/// How a scatter combines the updates that land on one element x of `into`,
/// u1, …, un in C order of their indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Combine {
    /// The last update, un (a move: bits copied). Every dtype.
    Set,
    /// `(… ((x + u1) + u2) + …) + un`, left to right with no +0 before x (a
    /// −0 target and −0 updates sum to −0). Integers wrap; a float of 32 or
    /// 64 bits rounds each addition; a narrower float (f16, bf16, the 8-,
    /// 6- and 4-bit floats) sums in f32 from x and rounds once into its
    /// dtype at the end; a complex number adds each part so (f16c and bf16c
    /// in c64, each part rounded once at the end). The dtypes of
    /// `Kind::Add`: integers, floats and complex numbers.
    Add,
    /// The IEEE 754-2019 maximum of x, u1, …, un (a NaN where one of them
    /// is, −0 below +0), as `Kind::Max` computes it, in f32 for a narrow
    /// float. The dtypes of `Kind::Max`: integers and floats.
    Max,
    /// The IEEE 754-2019 minimum, likewise.
    Min,
}

impl Combine {
    /// Its name in call files: `set`, `add`, `max`, `min`.
    pub fn name(self) -> &'static str {
        match self {
            Combine::Set => "set",
            Combine::Add => "add",
            Combine::Max => "max",
            Combine::Min => "min",
        }
    }

    /// The combine named `name`.
    pub fn from_name(name: &str) -> Option<Combine> {
        [Combine::Set, Combine::Add, Combine::Max, Combine::Min]
            .into_iter()
            .find(|c| c.name() == name)
    }
}

/// Whether [`scatter`] with `combine` along `axis` fits, decided from the
/// shapes and dtypes of `into`, `positions`, `updates` and `dst` alone (no
/// data, no work): `Ok` exactly where `scatter` would run, but for the
/// destination's layout (one that reaches an element twice) and the tier,
/// which need the view and the `Exec`. Errors as [`scatter`]'s.
pub fn scatter_query(
    combine: Combine,
    axis: usize,
    into: (&[usize], DType),
    positions: (&[usize], DType),
    updates: (&[usize], DType),
    dst: (&[usize], DType),
) -> Result<()> {
    check_i64(positions.1, "positions")?;
    check_same(into.1, dst.1, "into")?;
    check_same(updates.1, dst.1, "updates")?;
    let class = dst.1.info().class;
    let taken = match combine {
        Combine::Set => true,
        Combine::Add => matches!(
            class,
            Class::Int | Class::Uint | Class::Float | Class::Complex
        ),
        Combine::Max | Combine::Min => matches!(class, Class::Int | Class::Uint | Class::Float),
    };
    if !taken {
        return Err(Error::DTypeUnsupported {
            operand: "updates".into(),
            dtype: dst.1,
            reason: format!(
                "scatter's {} takes {}",
                combine.name(),
                if combine == Combine::Add {
                    "integers, floats and complex numbers"
                } else {
                    "integers and floats"
                }
            ),
        });
    }
    check_axis(axis, dst.0.len(), "dst")?;
    check_shape_but(into.0, dst.0, None, "into")?;
    check_shape_but(updates.0, dst.0, Some(axis), "updates")?;
    check_shape_but(positions.0, updates.0, None, "positions")?;
    count_of(dst.0, "dst")?;
    count_of(updates.0, "updates")?;
    Ok(())
}

/// Store into `dst` a copy of `into` with `updates` combined in by
/// `combine` at the positions along `axis` that `positions` holds.
///
/// Update j (an index of `updates`) targets `into`'s element at j with its
/// index along `axis` replaced by `positions`' element at j; a position
/// outside `[0, d)`, d `into`'s extent along `axis`, drops the update. The
/// updates that land on one element are taken in C order of their indices
/// ([`Combine`] states each combination; [`Combine::Set`] keeps the last).
/// An element no update reaches is `into`'s, its bits unchanged
/// (signalling NaNs included).
///
/// Shapes: `dst` has `into`'s shape; `positions` has `updates`' shape,
/// which is `into`'s but along `axis`, where its extent is any.
///
/// Determinism: the threads own disjoint blocks of 64 targets, each scans
/// every update in C order and applies those whose target it owns, so each
/// target's updates combine in C order: the bits are the same for every
/// thread count, tier, layout and run. Threads run only where the targets
/// are spread past the caches (a destination past 8 MiB whose first 4096
/// updates reach many cache lines): elsewhere reading the updates is the
/// cost, which every thread would repeat.
///
/// # Errors
/// Before any write: `positions` not int64, `into` or `updates` of another
/// dtype than `dst` ([`Error::DTypeMismatch`]); a combine the dtype does
/// not take, such as `Add` of bool or `Max` of a complex number
/// ([`Error::DTypeUnsupported`]); `axis` not below `dst`'s rank
/// ([`Error::Axis`]); shapes that do not fit as above ([`Error::Shape`]);
/// a `dst` that reaches an element twice ([`Error::Layout`]); scratch that
/// cannot be allocated ([`Error::Alloc`]); an unavailable tier.
#[allow(clippy::too_many_arguments)]
pub fn scatter(
    combine: Combine,
    axis: usize,
    into: &ArrayView<'_>,
    positions: &ArrayView<'_>,
    updates: &ArrayView<'_>,
    dst: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    exec.resolve_tier()?;
    let dt = dst.dtype();
    scatter_query(
        combine,
        axis,
        (into.shape(), into.dtype()),
        (positions.shape(), positions.dtype()),
        (updates.shape(), updates.dtype()),
        (dst.shape(), dt),
    )?;
    check_dst(dst, "dst")?;
    let n = count_of(dst.shape(), "dst")?;
    let m = count_of(updates.shape(), "updates")?;
    if n == 0 {
        return Ok(());
    }
    let shape = dst.shape().to_vec();
    let g = Geom {
        d: shape[axis],
        mu: updates.shape()[axis],
        inner: extent_product(shape[axis + 1..].iter().copied()),
        m,
    };
    let wb = work_bytes(dt);
    let ib = load_c(into, "into")?;
    let pb = load_c(positions, "positions")?;
    let mut ub = load_c(updates, "updates")?;
    let threads = if m == 0 {
        1
    } else {
        threads_for(exec, m.max(n)).min(n.div_ceil(BLOCK)).max(1)
    };
    let threads = if threads > 1 && !targets_spread(&g, &pb, n, wb.max(4)) {
        1
    } else {
        threads
    };
    // Scratch for the narrow floats (and the complex numbers of narrow
    // floats): their combinations in the carrier, taken before any write.
    let codes = if combine == Combine::Set || m == 0 {
        None
    } else if dt.info().class == Class::Float && !matches!(dt, DType::F32 | DType::F64) {
        let f = match combine {
            Combine::Add => add_f32 as fn(f32, f32) -> f32,
            Combine::Max => max_f32,
            _ => min_f32,
        };
        Some(in_carrier(dt, &g, &pb, (&ib, &ub), threads, exec, f)?)
    } else if combine == Combine::Add && dt.info().carrier == "c64" && dt != DType::C64 {
        // f16c, bf16c: summed in c64 (their values exactly), each sum
        // rounded into the dtype once.
        let add = |a: Complex<f32>, b: Complex<f32>| Complex::new(a.re + b.re, a.im + b.im);
        Some(in_carrier(dt, &g, &pb, (&ib, &ub), threads, exec, add)?)
    } else {
        None
    };
    if dt == DType::I4 && combine != Combine::Set {
        // Codes to values: sign-extend the 4 bits (store_c keeps the low 4).
        ub.to_mut()
            .iter_mut()
            .for_each(|c| *c = (((*c << 4) as i8) >> 4) as u8);
    }
    let compute = |out: &mut [u8]| {
        out.copy_from_slice(&ib);
        if m == 0 {
            return;
        }
        if let Some((codes, marks)) = &codes {
            for (t, _) in marks.iter().enumerate().filter(|(_, &k)| k != 0) {
                out[t * wb..(t + 1) * wb].copy_from_slice(&codes[t * wb..(t + 1) * wb]);
            }
            return;
        }
        match combine {
            Combine::Set => match wb {
                1 => bits::<1>(&g, &pb, &ub, out, threads),
                2 => bits::<2>(&g, &pb, &ub, out, threads),
                4 => bits::<4>(&g, &pb, &ub, out, threads),
                8 => bits::<8>(&g, &pb, &ub, out, threads),
                _ => bits::<16>(&g, &pb, &ub, out, threads),
            },
            _ => {
                if dt == DType::I4 {
                    out.iter_mut()
                        .for_each(|c| *c = (((*c << 4) as i8) >> 4) as u8);
                }
                typed(combine, dt, &g, &pb, &ub, out, threads);
            }
        }
    };
    match direct_c(dst) {
        Some(out) => compute(out),
        None => {
            let mut tmp = zeroed(n * wb, "scatter result")?;
            compute(&mut tmp);
            store_c(&tmp, dst);
        }
    }
    Ok(())
}

/// Destinations of at most this many bytes take their updates on one thread.
const SPREAD_BYTES: usize = 8 << 20;
/// Updates [`targets_spread`] samples.
const SPREAD_SAMPLE: usize = 4096;

/// Whether the updates' targets are spread over memory enough for several
/// threads to pay: each thread reads every update (see [`owned`]), so
/// where the targets stay in cache (a destination of at most
/// [`SPREAD_BYTES`], or a sample of the first updates landing on few cache
/// lines: hot targets) the read stream is the cost and one thread runs it
/// fastest. Only the speed depends on it: every thread count gives the
/// same bits.
fn targets_spread(g: &Geom, pos: &[u8], n: usize, item: usize) -> bool {
    if n.saturating_mul(item) <= SPREAD_BYTES {
        return false;
    }
    let s = g.m.min(SPREAD_SAMPLE);
    let mut lines = [0u64; SPREAD_SAMPLE];
    let d = g.d as u64;
    for (j, l) in lines[..s].iter_mut().enumerate() {
        let q = pos_at(pos, j);
        *l = if (q as u64) < d {
            (g.target(j, q as usize) * item / 64) as u64
        } else {
            u64::MAX
        };
    }
    let l = &mut lines[..s];
    l.sort_unstable();
    let distinct = 1 + l.windows(2).filter(|w| w[0] != w[1]).count();
    distinct * 4 >= s
}

/// Targets a thread owns come in blocks of this many elements (64 bytes
/// or more of any dtype), so that no two threads write one cache line.
const BLOCK: usize = 64;

/// The C-ordered geometry: the destination is `[outer; d; inner]`, the
/// updates and positions `[outer; mu; inner]`, m elements in all.
struct Geom {
    d: usize,
    mu: usize,
    inner: usize,
    m: usize,
}

impl Geom {
    /// The target of update j, where its position p is in range.
    #[inline(always)]
    fn target(&self, j: usize, p: usize) -> usize {
        if self.inner == 1 && self.mu == self.m {
            return p;
        }
        let i = j % self.inner;
        let o = j / (self.mu * self.inner);
        (o * self.d + p) * self.inner + i
    }
}

fn add_f32(a: f32, b: f32) -> f32 {
    a + b
}

/// `Kind::Max`'s IEEE 754-2019 maximum, as the runtime computes it.
#[inline(always)]
fn max_f32(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else if b > a {
        b
    } else if a == b {
        f32::from_bits(a.to_bits() & b.to_bits())
    } else {
        a + b
    }
}

/// `Kind::Min`'s IEEE 754-2019 minimum, as the runtime computes it.
#[inline(always)]
fn min_f32(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else if b < a {
        b
    } else if a == b {
        f32::from_bits(a.to_bits() | b.to_bits())
    } else {
        a + b
    }
}

#[inline(always)]
fn max_f64(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else if b > a {
        b
    } else if a == b {
        f64::from_bits(a.to_bits() & b.to_bits())
    } else {
        a + b
    }
}

#[inline(always)]
fn min_f64(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else if b < a {
        b
    } else if a == b {
        f64::from_bits(a.to_bits() | b.to_bits())
    } else {
        a + b
    }
}

/// Set: the last update's bits.
fn bits<const B: usize>(g: &Geom, pos: &[u8], upd: &[u8], out: &mut [u8], threads: usize) {
    drive::<[u8; B], _>(
        g,
        pos,
        Shared(upd.as_ptr() as *mut [u8; B]),
        Shared(out.as_mut_ptr() as *mut [u8; B]),
        None,
        threads,
        |_, u| u,
    );
}

macro_rules! int_case {
    ($t:ty, $combine:expr, $g:expr, $pos:expr, $upd:expr, $out:expr, $threads:expr) => {{
        let u = Shared($upd.as_ptr() as *mut $t);
        let o = Shared($out.as_mut_ptr() as *mut $t);
        match $combine {
            Combine::Add => drive($g, $pos, u, o, None, $threads, |a: $t, b: $t| {
                a.wrapping_add(b)
            }),
            Combine::Max => drive($g, $pos, u, o, None, $threads, |a: $t, b: $t| a.max(b)),
            _ => drive($g, $pos, u, o, None, $threads, |a: $t, b: $t| a.min(b)),
        }
    }};
}

/// Add, Max or Min of a dtype computed in its own type (packed integers as
/// one value a byte, i4 sign-extended).
fn typed(
    combine: Combine,
    dt: DType,
    g: &Geom,
    pos: &[u8],
    upd: &[u8],
    out: &mut [u8],
    threads: usize,
) {
    match dt {
        DType::I8 | DType::I4 => int_case!(i8, combine, g, pos, upd, out, threads),
        DType::U8 | DType::U4 | DType::U1 => int_case!(u8, combine, g, pos, upd, out, threads),
        DType::I16 => int_case!(i16, combine, g, pos, upd, out, threads),
        DType::U16 => int_case!(u16, combine, g, pos, upd, out, threads),
        DType::I32 => int_case!(i32, combine, g, pos, upd, out, threads),
        DType::U32 => int_case!(u32, combine, g, pos, upd, out, threads),
        DType::I64 => int_case!(i64, combine, g, pos, upd, out, threads),
        DType::U64 => int_case!(u64, combine, g, pos, upd, out, threads),
        DType::F32 => {
            let u = Shared(upd.as_ptr() as *mut f32);
            let o = Shared(out.as_mut_ptr() as *mut f32);
            match combine {
                Combine::Add => drive(g, pos, u, o, None, threads, add_f32),
                Combine::Max => drive(g, pos, u, o, None, threads, max_f32),
                _ => drive(g, pos, u, o, None, threads, min_f32),
            }
        }
        DType::F64 => {
            let u = Shared(upd.as_ptr() as *mut f64);
            let o = Shared(out.as_mut_ptr() as *mut f64);
            match combine {
                Combine::Add => drive(g, pos, u, o, None, threads, |a: f64, b: f64| a + b),
                Combine::Max => drive(g, pos, u, o, None, threads, max_f64),
                _ => drive(g, pos, u, o, None, threads, min_f64),
            }
        }
        DType::C64 => drive(
            g,
            pos,
            Shared(upd.as_ptr() as *mut Complex<f32>),
            Shared(out.as_mut_ptr() as *mut Complex<f32>),
            None,
            threads,
            |a: Complex<f32>, b: Complex<f32>| Complex::new(a.re + b.re, a.im + b.im),
        ),
        DType::C128 => drive(
            g,
            pos,
            Shared(upd.as_ptr() as *mut Complex<f64>),
            Shared(out.as_mut_ptr() as *mut Complex<f64>),
            None,
            threads,
            |a: Complex<f64>, b: Complex<f64>| Complex::new(a.re + b.re, a.im + b.im),
        ),
        // Refused before any write (the other floats take the f32 path,
        // f16c and bf16c the c64 one).
        _ => {}
    }
}

/// Apply every update to its target, on `threads` tasks that own the
/// targets' blocks of [`BLOCK`] round robin; each task scans all updates
/// in C order. `upd` holds m values and `tgt` the destination's, both
/// C-ordered; `marks`, where given, gets a 1 at each target reached.
fn drive<T: Copy, F: Fn(T, T) -> T + Sync>(
    g: &Geom,
    pos: &[u8],
    upd: Shared<T>,
    tgt: Shared<T>,
    marks: Option<Shared<u8>>,
    threads: usize,
    f: F,
) {
    run_parts(threads, |r| {
        // SAFETY: `upd` holds g.m values and `tgt` (and `marks`) one per
        // target; on several tasks, task r writes only the targets whose
        // block is r modulo `threads`, so the tasks write disjoint
        // elements; the buffers outlive `run_parts`.
        unsafe {
            let mk = marks.map_or(std::ptr::null_mut(), |m| m.get());
            let (u, t) = (upd.get(), tgt.get());
            match (marks.is_some(), threads > 1) {
                (true, false) => core::<T, F, true>(g, pos, u, t, mk, &f),
                (false, false) => core::<T, F, false>(g, pos, u, t, mk, &f),
                (true, true) => owned::<T, F, true>(g, pos, u, t, mk, r, threads, &f),
                (false, true) => owned::<T, F, false>(g, pos, u, t, mk, r, threads, &f),
            }
        }
    });
}

/// [`drive`] on one task: every update in C order, applied where its
/// position is in range.
///
/// # Safety
/// `upd` holds `g.m` values, `tgt` and (for `MARK`) `marks` one per target
/// of `[outer; d; inner]`.
#[inline(never)]
unsafe fn core<T: Copy, F: Fn(T, T) -> T, const MARK: bool>(
    g: &Geom,
    pos: &[u8],
    upd: *const T,
    tgt: *mut T,
    marks: *mut u8,
    f: &F,
) {
    let d = g.d as u64;
    for j in 0..g.m {
        let q = pos_at(pos, j);
        if (q as u64) < d {
            let t = g.target(j, q as usize);
            // SAFETY: j < m and t indexes the destination (q < d).
            unsafe {
                let tp = tgt.add(t);
                tp.write_unaligned(f(tp.read_unaligned(), upd.add(j).read_unaligned()));
                if MARK {
                    *marks.add(t) = 1;
                }
            }
        }
    }
}

/// Updates a task takes in at once: their targets and indices are kept
/// in a buffer on its stack.
const BATCH: usize = 512;

/// Task r's part of [`drive`] on several tasks: it scans every update in
/// C order, keeps those whose target it owns (blocks of [`BLOCK`] targets
/// round robin) by a branch-free compaction into a small buffer, and
/// applies them in that order, so each target's updates combine in C
/// order whatever the thread count.
///
/// # Safety
/// `upd` holds `g.m` values, `tgt` and (for `MARK`) `marks` one per target
/// of `[outer; d; inner]` (as for [`core`]); and no other task writes task
/// r's targets.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
unsafe fn owned<T: Copy, F: Fn(T, T) -> T, const MARK: bool>(
    g: &Geom,
    pos: &[u8],
    upd: *const T,
    tgt: *mut T,
    marks: *mut u8,
    r: usize,
    threads: usize,
    f: &F,
) {
    let d = g.d as u64;
    let mut ts = [0usize; BATCH];
    let mut js = [0usize; BATCH];
    let simple = g.inner == 1 && g.mu == g.m;
    let mut lo = 0;
    while lo < g.m {
        let hi = (lo + BATCH).min(g.m);
        let mut k = 0usize;
        for j in lo..hi {
            let q = pos_at(pos, j);
            let ok = (q as u64) < d;
            let t = if simple {
                q as usize
            } else if ok {
                g.target(j, q as usize)
            } else {
                0
            };
            // Written at every step, kept only where owned: no branch.
            // SAFETY: k ≤ j − lo < BATCH.
            unsafe {
                *ts.get_unchecked_mut(k) = t;
                *js.get_unchecked_mut(k) = j;
            }
            k += (ok & (owner(t, threads) == r)) as usize;
        }
        for i in 0..k {
            // SAFETY: i < k ≤ BATCH.
            let (t, j) = unsafe { (*ts.get_unchecked(i), *js.get_unchecked(i)) };
            // SAFETY: j < m; t indexes the destination (its position is in
            // range) and is owned by task r alone.
            unsafe {
                let tp = tgt.add(t);
                tp.write_unaligned(f(tp.read_unaligned(), upd.add(j).read_unaligned()));
                if MARK {
                    *marks.add(t) = 1;
                }
            }
        }
        lo = hi;
    }
}

/// The owner of target t among `threads` tasks: blocks of [`BLOCK`]
/// targets round robin.
#[inline(always)]
fn owner(t: usize, threads: usize) -> usize {
    let b = t / BLOCK;
    if threads.is_power_of_two() {
        b & (threads - 1)
    } else {
        b % threads
    }
}

/// A packed buffer of `codes` (one a byte), padded with code 0 to whole
/// bytes.
fn pack(dt: DType, codes: &[u8]) -> Result<(Vec<u8>, usize)> {
    let info = dt.info();
    let vpb = info.values_per_byte as usize;
    let npad = codes.len().div_ceil(vpb) * vpb;
    let mut out = zeroed(npad / vpb, "scatter codes")?;
    for (e, &c) in codes.iter().enumerate() {
        super::set_code(&mut out, e, vpb, info.bits, c);
    }
    Ok((out, npad))
}

/// The combinations of `into`'s and the updates' working buffers (`work`)
/// by `f` in the carrier `T` (f32 for a narrow float, c64 for f16c and
/// bf16c), each result rounded once into `dt`: the codes of every target,
/// and a mark on each target an update reached.
fn in_carrier<T: Element + Default + Send + Sync, F: Fn(T, T) -> T + Sync>(
    dt: DType,
    g: &Geom,
    pos: &[u8],
    work: (&[u8], &[u8]),
    threads: usize,
    exec: &Exec,
    f: F,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let wb = work_bytes(dt);
    let (n, m) = (work.0.len() / wb, work.1.len() / wb);
    let mut acc = filled(n, T::default(), "scatter sums")?;
    let mut upd = filled(m, T::default(), "scatter updates")?;
    let mut marks = zeroed(n, "scatter marks")?;
    decode_into(dt, work.0, &mut acc, exec)?;
    decode_into(dt, work.1, &mut upd, exec)?;
    drive(
        g,
        pos,
        Shared(upd.as_mut_ptr()),
        Shared(acc.as_mut_ptr()),
        Some(Shared(marks.as_mut_ptr())),
        threads,
        f,
    );
    Ok((encode_from(dt, &acc, exec)?, marks))
}

/// The carrier values of a C-ordered working buffer of `dt`.
fn decode_into<T: Element + Default>(
    dt: DType,
    work: &[u8],
    out: &mut [T],
    exec: &Exec,
) -> Result<()> {
    let n = out.len();
    if packed(dt) {
        let (buf, npad) = pack(dt, work)?;
        let mut wide = filled(npad, T::default(), "scatter values")?;
        cast(
            CastMode::Default,
            &ArrayView::contiguous(dt, &[npad], &buf)?,
            &mut ArrayViewMut::from_slice(&mut wide, &[npad])?,
            exec,
        )?;
        out.copy_from_slice(&wide[..n]);
        return Ok(());
    }
    cast(
        CastMode::Default,
        &ArrayView::contiguous(dt, &[n], work)?,
        &mut ArrayViewMut::from_slice(out, &[n])?,
        exec,
    )
}

/// Carrier values rounded into `dt`, as a C-ordered working buffer.
fn encode_from<T: Element + Default>(dt: DType, vals: &[T], exec: &Exec) -> Result<Vec<u8>> {
    let n = vals.len();
    if packed(dt) {
        let info = dt.info();
        let vpb = info.values_per_byte as usize;
        let npad = n.div_ceil(vpb) * vpb;
        let mut wide = filled(npad, T::default(), "scatter values")?;
        wide[..n].copy_from_slice(vals);
        let mut buf = zeroed(npad / vpb, "scatter codes")?;
        cast(
            CastMode::Default,
            &ArrayView::from_slice(&wide, &[npad])?,
            &mut ArrayViewMut::contiguous(dt, &[npad], &mut buf)?,
            exec,
        )?;
        let mut codes = zeroed(n, "scatter codes")?;
        for (e, c) in codes.iter_mut().enumerate() {
            *c = super::code_at(&buf, e, vpb, info.bits);
        }
        return Ok(codes);
    }
    let mut out = zeroed(n * dt.info().item_bytes, "scatter codes")?;
    cast(
        CastMode::Default,
        &ArrayView::from_slice(vals, &[n])?,
        &mut ArrayViewMut::contiguous(dt, &[n], &mut out)?,
        exec,
    )?;
    Ok(out)
}
