//! gather, gather_ranges and scatter against slow models written here, over
//! every dtype (packed sub-byte and narrow floats included), random
//! layouts (padded, permuted, negative strides), adversarial values (NaNs
//! of both signs and several payloads, signalling NaNs, ±0, subnormals,
//! infinities) and positions (negative, past the end, the int64 extremes);
//! the bits across thread counts and tiers; refusals that write nothing.

#![allow(clippy::needless_range_loop)]

use tessera::{
    available_tiers, gather, gather_ranges, scatter, ArrayView, ArrayViewMut, Class, Combine,
    DType, Error, Exec,
};
use tessera_testkit::mini::mini;
use tessera_testkit::rng::Rng;

// ---------- logical arrays and their layouts ----------

fn packed(d: DType) -> bool {
    d.info().values_per_byte > 1
}

/// Bytes one logical element takes in the model: its item size, or one
/// byte (the code) for a packed dtype.
fn eb(d: DType) -> usize {
    if packed(d) {
        1
    } else {
        d.info().item_bytes
    }
}

/// A C-ordered logical array: `eb` bytes an element.
#[derive(Clone, Debug)]
struct Arr {
    dtype: DType,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl Arr {
    fn len(&self) -> usize {
        self.shape.iter().product()
    }
    fn el(&self, i: usize) -> &[u8] {
        let b = eb(self.dtype);
        &self.data[i * b..(i + 1) * b]
    }
}

/// A stored array: bytes, strides and offset in elements.
struct Stored {
    buf: Vec<u8>,
    strides: Vec<isize>,
    offset: usize,
}

fn c_index(shape: &[usize], mut i: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for k in (0..shape.len()).rev() {
        idx[k] = i % shape[k];
        i /= shape[k];
    }
    idx
}

fn c_flat(shape: &[usize], idx: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |a, (&i, &n)| a * n + i)
}

/// Store `a` in a random layout (contiguous for packed dtypes, or when
/// `plain`): padded extents, permuted memory order, reversed axes.
fn store(rng: &mut Rng, a: &Arr, plain: bool) -> Stored {
    let d = a.dtype;
    let rank = a.shape.len();
    if packed(d) || plain || rng.chance(1, 4) {
        let n = a.len();
        let mut buf;
        if packed(d) {
            let vpb = d.info().values_per_byte as usize;
            let bits = d.info().bits;
            buf = vec![0u8; n.div_ceil(vpb)];
            for e in 0..n {
                let shift = (vpb - 1 - e % vpb) as u32 * bits;
                buf[e / vpb] |= a.data[e] << shift;
            }
        } else {
            buf = a.data.clone();
        }
        let mut strides = vec![1isize; rank];
        for k in (0..rank.saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * a.shape[k + 1] as isize;
        }
        return Stored {
            buf,
            strides,
            offset: 0,
        };
    }
    let ib = d.info().item_bytes;
    let padded: Vec<usize> = a.shape.iter().map(|&n| n + rng.below_usize(2)).collect();
    let mut order: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        order.swap(i, rng.below_usize(i + 1));
    }
    let mut strides = vec![0isize; rank];
    let mut acc = 1isize;
    for &k in order.iter().rev() {
        strides[k] = acc;
        acc *= padded[k].max(1) as isize;
    }
    let total = acc as usize + 1;
    let mut offset = 1usize;
    for k in 0..rank {
        if rng.chance(1, 3) && a.shape[k] > 1 {
            offset += (a.shape[k] - 1) * strides[k] as usize;
            strides[k] = -strides[k];
        }
    }
    let mut buf = vec![0u8; (total + offset) * ib];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i * 37 % 251) as u8;
    }
    for i in 0..a.len() {
        let idx = c_index(&a.shape, i);
        let e = offset as isize
            + idx
                .iter()
                .zip(&strides)
                .map(|(&x, &s)| x as isize * s)
                .sum::<isize>();
        let e = e as usize;
        buf[e * ib..(e + 1) * ib].copy_from_slice(a.el(i));
    }
    Stored {
        buf,
        strides,
        offset,
    }
}

/// The logical array a stored destination holds.
fn load(d: DType, shape: &[usize], s: &Stored) -> Arr {
    let n: usize = shape.iter().product();
    let b = eb(d);
    let mut data = vec![0u8; n * b];
    for i in 0..n {
        let idx = c_index(shape, i);
        let e = (s.offset as isize
            + idx
                .iter()
                .zip(&s.strides)
                .map(|(&x, &st)| x as isize * st)
                .sum::<isize>()) as usize;
        if packed(d) {
            let vpb = d.info().values_per_byte as usize;
            let bits = d.info().bits;
            let shift = (vpb - 1 - e % vpb) as u32 * bits;
            data[i] = (s.buf[e / vpb] >> shift) & ((1u16 << bits) - 1) as u8;
        } else {
            data[i * b..(i + 1) * b].copy_from_slice(&s.buf[e * b..(e + 1) * b]);
        }
    }
    Arr {
        dtype: d,
        shape: shape.to_vec(),
        data,
    }
}

fn view<'a>(d: DType, shape: &[usize], s: &'a Stored) -> ArrayView<'a> {
    ArrayView::new(d, shape, &s.strides, s.offset, &s.buf).expect("view")
}

fn view_mut<'a>(d: DType, shape: &[usize], s: &'a mut Stored) -> ArrayViewMut<'a> {
    ArrayViewMut::new(d, shape, &s.strides, s.offset, &mut s.buf).expect("view")
}

// ---------- values ----------

const F32_SPECIAL: [u32; 12] = [
    0x7fc0_0000,
    0xffc0_0000,
    0x7fc0_1234,
    0xffa0_0001,
    0x7f80_0001, // NaNs (last signalling)
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x8000_0003, // ±0, subnormals
    0x7f80_0000,
    0xff80_0000,
    0x3f80_0000, // ±inf, 1
];
const F64_SPECIAL: [u64; 10] = [
    0x7ff8_0000_0000_0000,
    0xfff8_0000_0000_0000,
    0x7ff8_0000_0000_4321,
    0x7ff0_0000_0000_0001,
    0,
    0x8000_0000_0000_0000,
    1,
    0x8000_0000_0000_0002,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
];

/// One element's bytes (or code): random, or a special value a third of
/// the time; small exact floats often, so that sums are interesting.
fn value(rng: &mut Rng, d: DType) -> Vec<u8> {
    if packed(d) {
        return vec![rng.below(1 << d.info().bits) as u8];
    }
    match d {
        DType::F32 => {
            let b = if rng.chance(1, 3) {
                *rng.pick(&F32_SPECIAL)
            } else {
                ((rng.below(64) as f32 - 32.0) * 0.25).to_bits()
            };
            b.to_le_bytes().to_vec()
        }
        DType::F64 => {
            let b = if rng.chance(1, 3) {
                *rng.pick(&F64_SPECIAL)
            } else {
                ((rng.below(64) as f64 - 32.0) * 0.125).to_bits()
            };
            b.to_le_bytes().to_vec()
        }
        DType::C64 => [value(rng, DType::F32), value(rng, DType::F32)].concat(),
        DType::C128 => [value(rng, DType::F64), value(rng, DType::F64)].concat(),
        _ => (0..d.info().item_bytes)
            .map(|_| rng.next_u32() as u8)
            .collect(),
    }
}

fn random_arr(rng: &mut Rng, d: DType, shape: &[usize]) -> Arr {
    let n: usize = shape.iter().product();
    let data = (0..n).flat_map(|_| value(rng, d)).collect();
    Arr {
        dtype: d,
        shape: shape.to_vec(),
        data,
    }
}

fn positions_arr(rng: &mut Rng, shape: &[usize], d: usize) -> Arr {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .flat_map(|_| {
            let p: i64 = match rng.below(10) {
                0 => -1 - rng.below(3) as i64,
                1 => d as i64 + rng.below(3) as i64,
                2 => *rng.pick(&[i64::MIN, i64::MAX, i64::MIN + 1]),
                _ => rng.below(d.max(1) as u64) as i64,
            };
            p.to_le_bytes()
        })
        .collect();
    Arr {
        dtype: DType::I64,
        shape: shape.to_vec(),
        data,
    }
}

fn i64_at(a: &Arr, i: usize) -> i64 {
    i64::from_le_bytes(a.el(i).try_into().unwrap())
}

fn random_shape(rng: &mut Rng, d: DType, max: usize) -> Vec<usize> {
    let rank = 1 + rng.below_usize(3);
    let mut s: Vec<usize> = (0..rank).map(|_| rng.below_usize(max + 1)).collect();
    if packed(d) {
        // A packed last axis holds whole bytes.
        let vpb = d.info().values_per_byte as usize;
        let last = s.len() - 1;
        s[last] = s[last].div_ceil(vpb) * vpb;
    }
    s
}

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in available_tiers() {
        for n in [1, 2, 7] {
            v.push(Exec::on(t).threads(n));
        }
    }
    v
}

// ---------- gather ----------

fn gather_model(axis: usize, x: &Arr, pos: &Arr) -> Arr {
    let b = eb(x.dtype);
    let d = x.shape[axis];
    let mut data = Vec::new();
    for j in 0..pos.len() {
        let p = i64_at(pos, j);
        if p >= 0 && (p as usize) < d {
            let mut idx = c_index(&pos.shape, j);
            idx[axis] = p as usize;
            data.extend_from_slice(x.el(c_flat(&x.shape, &idx)));
        } else {
            data.extend(std::iter::repeat_n(0u8, b));
        }
    }
    Arr {
        dtype: x.dtype,
        shape: pos.shape.clone(),
        data,
    }
}

#[test]
fn gather_matches_the_model_for_every_dtype_and_layout() {
    let mut rng = Rng::for_label("gather", tessera_testkit::rng::seed());
    let ex = execs();
    for &dt in DType::ALL.iter() {
        for _ in 0..12 {
            let shape = random_shape(&mut rng, dt, 5);
            let axis = rng.below_usize(shape.len());
            if packed(dt) && axis == shape.len() - 1 {
                continue;
            }
            let mut xs = shape.clone();
            xs[axis] = rng.below_usize(5);
            let x = random_arr(&mut rng, dt, &xs);
            let pos = positions_arr(&mut rng, &shape, xs[axis]);
            let want = gather_model(axis, &x, &pos);
            let sx = store(&mut rng, &x, false);
            let sp = store(&mut rng, &pos, false);
            let zero = Arr {
                dtype: dt,
                shape: shape.clone(),
                data: vec![0xA5 & ((1u16 << dt.info().bits.min(8)) - 1) as u8; pos.len() * eb(dt)],
            };
            let mut sd = store(&mut rng, &zero, false);
            let e = *rng.pick(&ex);
            gather(
                axis,
                &view(dt, &xs, &sx),
                &view(DType::I64, &shape, &sp),
                &mut view_mut(dt, &shape, &mut sd),
                &e,
            )
            .unwrap();
            let got = load(dt, &shape, &sd);
            assert_eq!(got.data, want.data, "{dt} {shape:?} axis {axis} {e:?}");
        }
    }
}

#[test]
fn gather_on_threads_and_tiers_is_the_model() {
    let mut rng = Rng::for_label("gather big", tessera_testkit::rng::seed());
    for (dt, shape, axis) in [
        (DType::F32, vec![70_000], 0),
        (DType::U8, vec![300, 257], 1),
        (DType::C128, vec![40, 3, 400], 1),
        (DType::U4, vec![500, 130], 0),
    ] {
        let mut xs: Vec<usize> = shape.clone();
        xs[axis] = 1000;
        let x = random_arr(&mut rng, dt, &xs);
        let pos = positions_arr(&mut rng, &shape, 1000);
        let want = gather_model(axis, &x, &pos);
        let sx = store(&mut rng, &x, true);
        let sp = store(&mut rng, &pos, true);
        for e in execs() {
            let mut sd = store(&mut rng, &want, true);
            sd.buf.iter_mut().for_each(|b| *b = 0x5A);
            gather(
                axis,
                &view(dt, &xs, &sx),
                &view(DType::I64, &shape, &sp),
                &mut view_mut(dt, &shape, &mut sd),
                &e,
            )
            .unwrap();
            assert_eq!(load(dt, &shape, &sd).data, want.data, "{dt} {e:?}");
        }
    }
}

// ---------- gather_ranges ----------

fn ranges_model(x: &Arr, starts: &Arr, ends: &Arr, size: usize) -> Arr {
    let rs = starts.shape.len();
    let a = rs - 1;
    let k = starts.shape[a];
    let n = x.shape[a];
    let lead: usize = starts.shape[..a].iter().product();
    let cells: usize = x.shape[rs..].iter().product();
    let b = eb(x.dtype);
    let mut data = Vec::new();
    for l in 0..lead {
        for p in 0..size {
            // The first run whose end exceeds p.
            let mut src = None;
            for j in 0..k {
                let end = i64_at(ends, l * k + j);
                if end > p as i64 {
                    let e = if j == 0 {
                        0
                    } else {
                        i64_at(ends, l * k + j - 1)
                    };
                    let q = i64_at(starts, l * k + j)
                        .wrapping_add(p as i64)
                        .wrapping_sub(e);
                    if q >= 0 && (q as u64) < n as u64 {
                        src = Some(q as usize);
                    }
                    break;
                }
            }
            for c in 0..cells {
                match src {
                    Some(q) => data.extend_from_slice(x.el((l * n + q) * cells + c)),
                    None => data.extend(std::iter::repeat_n(0u8, b)),
                }
            }
        }
    }
    let mut shape = x.shape.clone();
    shape[a] = size;
    Arr {
        dtype: x.dtype,
        shape,
        data,
    }
}

fn i64_arr(shape: &[usize], v: &[i64]) -> Arr {
    Arr {
        dtype: DType::I64,
        shape: shape.to_vec(),
        data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// Runs: usually running sums of lengths, sometimes anything at all.
fn runs(rng: &mut Rng, lead: usize, k: usize, n: usize) -> (Vec<i64>, Vec<i64>) {
    let mut s = Vec::new();
    let mut e = Vec::new();
    for _ in 0..lead {
        let mut acc = 0i64;
        for _ in 0..k {
            let wild = rng.chance(1, 6);
            let start = if wild {
                *rng.pick(&[i64::MIN, i64::MAX, -3, n as i64 + 2, i64::MAX - 1])
            } else {
                rng.below(n as u64 + 2) as i64 - 1
            };
            acc = if rng.chance(1, 8) {
                *rng.pick(&[i64::MIN, i64::MAX, acc.wrapping_sub(2), -1])
            } else {
                acc.wrapping_add(rng.below(4) as i64)
            };
            s.push(start);
            e.push(acc);
        }
    }
    (s, e)
}

#[test]
fn gather_ranges_matches_the_model() {
    let mut rng = Rng::for_label("ranges", tessera_testkit::rng::seed());
    let ex = execs();
    for &dt in DType::ALL.iter() {
        for _ in 0..10 {
            let lead_rank = rng.below_usize(2);
            let lead: Vec<usize> = (0..lead_rank).map(|_| 1 + rng.below_usize(3)).collect();
            let k = rng.below_usize(5);
            let n = rng.below_usize(6);
            let size = rng.below_usize(9);
            let mut cells: Vec<usize> = (0..rng.below_usize(2))
                .map(|_| 1 + rng.below_usize(3))
                .collect();
            if packed(dt) {
                let vpb = dt.info().values_per_byte as usize;
                if cells.is_empty() {
                    cells.push(vpb);
                } else {
                    let l = cells.len() - 1;
                    cells[l] = cells[l].div_ceil(vpb) * vpb;
                }
            }
            let lead_n: usize = lead.iter().product();
            let (s, e) = runs(&mut rng, lead_n, k, n);
            let mut ss = lead.clone();
            ss.push(k);
            let mut xs = lead.clone();
            xs.push(n);
            xs.extend(&cells);
            let mut ds = lead.clone();
            ds.push(size);
            ds.extend(&cells);
            let x = random_arr(&mut rng, dt, &xs);
            let starts = i64_arr(&ss, &s);
            let ends = i64_arr(&ss, &e);
            let want = ranges_model(&x, &starts, &ends, size);
            let sx = store(&mut rng, &x, false);
            let sst = store(&mut rng, &starts, false);
            let sen = store(&mut rng, &ends, false);
            let mut sd = store(&mut rng, &want, false);
            sd.buf.iter_mut().for_each(|b| *b = 0x33);
            let exe = *rng.pick(&ex);
            gather_ranges(
                &view(dt, &xs, &sx),
                &view(DType::I64, &ss, &sst),
                &view(DType::I64, &ss, &sen),
                &mut view_mut(dt, &ds, &mut sd),
                &exe,
            )
            .unwrap();
            assert_eq!(
                load(dt, &ds, &sd).data,
                want.data,
                "{dt} {xs:?} {s:?} {e:?}"
            );
        }
    }
}

#[test]
fn gather_ranges_on_threads_is_the_model() {
    let mut rng = Rng::for_label("ranges big", tessera_testkit::rng::seed());
    for (dt, cells) in [(DType::U8, 3usize), (DType::F64, 5), (DType::C64, 1)] {
        let n = 5000;
        let k = 300;
        let size = 40_000;
        let (s, e) = runs(&mut rng, 1, k, n);
        // Longer runs so that the destination fills.
        let e: Vec<i64> = e.iter().map(|&v| v.wrapping_mul(60)).collect();
        let x = random_arr(&mut rng, dt, &[n, cells]);
        let starts = i64_arr(&[k], &s);
        let ends = i64_arr(&[k], &e);
        let want = ranges_model(&x, &starts, &ends, size);
        let sx = store(&mut rng, &x, true);
        let (sst, sen) = (store(&mut rng, &starts, true), store(&mut rng, &ends, true));
        for exe in execs() {
            let mut sd = store(&mut rng, &want, true);
            sd.buf.iter_mut().for_each(|b| *b = 0x77);
            gather_ranges(
                &view(dt, &[n, cells], &sx),
                &view(DType::I64, &[k], &sst),
                &view(DType::I64, &[k], &sen),
                &mut view_mut(dt, &[size, cells], &mut sd),
                &exe,
            )
            .unwrap();
            assert_eq!(
                load(dt, &[size, cells], &sd).data,
                want.data,
                "{dt} {exe:?}"
            );
        }
    }
}

/// Results of 8 MiB and more, which a host that streams writes by
/// non-temporal stores (the run copies' heads and tails plainly, their
/// aligned lines streamed): the bytes of a plain copy of every run, at
/// destinations on and off a 64-byte line, rows of 7 and 64 bytes, runs
/// that reach past `x` (zeros), on every thread count and tier.
#[test]
fn large_gather_ranges_are_plain_copies_of_the_runs() {
    let mut rng = Rng::for_label("ranges large", tessera_testkit::rng::seed());
    for (cells, size) in [(7usize, 1_300_000usize), (64, 140_000)] {
        let n = 50_000;
        let k = 400;
        // Run j covers rows ends[j-1]..ends[j] of the result from x's row
        // starts[j] on; one run in eight starts where it reaches past x.
        let mut starts = Vec::with_capacity(k);
        let mut ends = Vec::with_capacity(k);
        let mut acc = 0i64;
        for j in 0..k {
            let len = if j + 1 == k {
                size as i64 - acc
            } else {
                rng.below((2 * size / k) as u64) as i64
            }
            .min(size as i64 - acc);
            let start = if rng.chance(1, 8) {
                n as i64 - rng.below(len as u64 + 1) as i64
            } else {
                rng.below((n as i64 - len.min(n as i64) + 1) as u64) as i64
            };
            starts.push(start);
            acc += len;
            ends.push(acc);
        }
        let x: Vec<u8> = (0..n * cells).map(|_| rng.below(256) as u8).collect();
        // The model: each run's rows copied one by one, zero past x.
        let mut want = vec![0u8; size * cells];
        let mut prev = 0i64;
        for j in 0..k {
            for p in prev..ends[j] {
                let q = starts[j] + (p - prev);
                if (0..n as i64).contains(&q) {
                    let (d, s) = (p as usize * cells, q as usize * cells);
                    want[d..d + cells].copy_from_slice(&x[s..s + cells]);
                }
            }
            prev = ends[j];
        }
        let xv = ArrayView::from_slice(&x, &[n, cells]).unwrap();
        let sv = ArrayView::from_slice(&starts, &[k]).unwrap();
        let ev = ArrayView::from_slice(&ends, &[k]).unwrap();
        for exe in execs() {
            for off in [0usize, 5, 33] {
                let mut buf = vec![0x5au8; size * cells + 128];
                let base = buf.as_ptr() as usize;
                let at = (base.next_multiple_of(64) - base) + off;
                let dst = &mut buf[at..at + size * cells];
                gather_ranges(
                    &xv,
                    &sv,
                    &ev,
                    &mut ArrayViewMut::from_slice(dst, &[size, cells]).unwrap(),
                    &exe,
                )
                .unwrap();
                assert!(
                    dst == &want[..],
                    "rows of {cells} bytes, line offset {off}, {exe:?}"
                );
            }
        }
    }
}

// ---------- scatter ----------

/// The model's combination of a target's element x with its updates, in
/// order; None where the combine does not take the dtype. Float results
/// that are NaN are compared as NaN (their payload is not specified).
fn combine_model(c: Combine, d: DType, x: &[u8], us: &[&[u8]]) -> Vec<u8> {
    if us.is_empty() {
        return x.to_vec();
    }
    if c == Combine::Set {
        return us[us.len() - 1].to_vec();
    }
    let info = d.info();
    match info.class {
        Class::Int | Class::Uint => {
            let bits = info.bits;
            let signed = info.class == Class::Int;
            let val = |b: &[u8]| -> i128 {
                let mut raw = 0u128;
                for (i, &byte) in b.iter().enumerate() {
                    raw |= (byte as u128) << (8 * i);
                }
                raw &= (1u128 << bits) - 1;
                if signed && raw >> (bits - 1) & 1 == 1 {
                    raw as i128 - (1i128 << bits)
                } else {
                    raw as i128
                }
            };
            let mut acc = val(x);
            for u in us {
                let v = val(u);
                acc = match c {
                    Combine::Add => acc + v,
                    Combine::Max => acc.max(v),
                    _ => acc.min(v),
                };
            }
            let raw = (acc as u128) & ((1u128 << bits) - 1);
            (0..x.len()).map(|i| (raw >> (8 * i)) as u8).collect()
        }
        Class::Complex if d == DType::C64 => {
            let part =
                |b: &[u8], k: usize| f32::from_le_bytes(b[4 * k..4 * k + 4].try_into().unwrap());
            let (mut re, mut im) = (part(x, 0), part(x, 1));
            for u in us {
                re += part(u, 0);
                im += part(u, 1);
            }
            [re.to_le_bytes(), im.to_le_bytes()].concat()
        }
        Class::Complex if d == DType::F16c || d == DType::Bf16c => {
            // Summed in f32 from the parts' values, each rounded once at the end.
            let h = d == DType::F16c;
            let part = |b: &[u8], k: usize| {
                let c = u16::from_le_bytes([b[2 * k], b[2 * k + 1]]);
                if h {
                    half::f16::from_bits(c).to_f32()
                } else {
                    half::bf16::from_bits(c).to_f32()
                }
            };
            let enc = |x: f32| {
                if h {
                    half::f16::from_f32(x).to_bits()
                } else {
                    half::bf16::from_f32(x).to_bits()
                }
            };
            let (mut re, mut im) = (part(x, 0), part(x, 1));
            for u in us {
                re += part(u, 0);
                im += part(u, 1);
            }
            [enc(re).to_le_bytes(), enc(im).to_le_bytes()].concat()
        }
        Class::Complex => {
            let part =
                |b: &[u8], k: usize| f64::from_le_bytes(b[8 * k..8 * k + 8].try_into().unwrap());
            let (mut re, mut im) = (part(x, 0), part(x, 1));
            for u in us {
                re += part(u, 0);
                im += part(u, 1);
            }
            [re.to_le_bytes(), im.to_le_bytes()].concat()
        }
        _ => float_model(c, d, x, us),
    }
}

/// IEEE 754-2019 maximum / minimum on f64 values: NaN if either is,
/// −0 below +0.
fn ieee(c: Combine, a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        let neg = if c == Combine::Max {
            a.is_sign_negative() && b.is_sign_negative()
        } else {
            a.is_sign_negative() || b.is_sign_negative()
        };
        return if neg { -a.abs() } else { a.abs() };
    }
    if (c == Combine::Max) == (a > b) {
        a
    } else {
        b
    }
}

fn float_model(c: Combine, d: DType, x: &[u8], us: &[&[u8]]) -> Vec<u8> {
    match d {
        DType::F32 => {
            let v = |b: &[u8]| f32::from_le_bytes(b.try_into().unwrap());
            let mut acc = v(x);
            for u in us {
                acc = match c {
                    Combine::Add => acc + v(u),
                    _ => ieee(c, acc as f64, v(u) as f64) as f32,
                };
            }
            acc.to_le_bytes().to_vec()
        }
        DType::F64 => {
            let v = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap());
            let mut acc = v(x);
            for u in us {
                acc = match c {
                    Combine::Add => acc + v(u),
                    _ => ieee(c, acc, v(u)),
                };
            }
            acc.to_le_bytes().to_vec()
        }
        _ => {
            // Narrow floats: f32 sums rounded once; extremes of the values.
            let o = mini(d).expect("a narrow float");
            let code = |b: &[u8]| -> u32 {
                b.iter()
                    .enumerate()
                    .fold(0u32, |a, (i, &y)| a | (y as u32) << (8 * i))
            };
            let out = match c {
                Combine::Add => {
                    let mut acc = o.decode(code(x)) as f32;
                    for u in us {
                        acc += o.decode(code(u)) as f32;
                    }
                    o.encode(acc as f64, false)
                }
                _ => {
                    let mut acc = o.decode(code(x));
                    for u in us {
                        acc = ieee(c, acc, o.decode(code(u)));
                    }
                    o.encode(acc, false)
                }
            };
            (0..x.len()).map(|i| (out >> (8 * i)) as u8).collect()
        }
    }
}

fn is_nan(d: DType, b: &[u8]) -> bool {
    match d {
        DType::F32 => f32::from_le_bytes(b.try_into().unwrap()).is_nan(),
        DType::F64 => f64::from_le_bytes(b.try_into().unwrap()).is_nan(),
        DType::C64 => is_nan(DType::F32, &b[..4]) || is_nan(DType::F32, &b[4..]),
        DType::C128 => is_nan(DType::F64, &b[..8]) || is_nan(DType::F64, &b[8..]),
        DType::F16c | DType::Bf16c => {
            let c = d.component().unwrap();
            is_nan(c, &b[..2]) || is_nan(c, &b[2..])
        }
        _ => match mini(d) {
            Some(o) => o.is_nan_code(
                b.iter()
                    .enumerate()
                    .fold(0u32, |a, (i, &y)| a | (y as u32) << (8 * i)),
            ),
            None => false,
        },
    }
}

fn scatter_model(c: Combine, axis: usize, into: &Arr, pos: &Arr, upd: &Arr) -> (Arr, Vec<bool>) {
    let d = into.shape[axis];
    let mut lists: Vec<Vec<&[u8]>> = vec![Vec::new(); into.len()];
    for j in 0..upd.len() {
        let p = i64_at(pos, j);
        if p >= 0 && (p as usize) < d {
            let mut idx = c_index(&upd.shape, j);
            idx[axis] = p as usize;
            lists[c_flat(&into.shape, &idx)].push(upd.el(j));
        }
    }
    let data = (0..into.len())
        .flat_map(|t| combine_model(c, into.dtype, into.el(t), &lists[t]))
        .collect();
    let touched = lists.iter().map(|l| !l.is_empty()).collect();
    (
        Arr {
            dtype: into.dtype,
            shape: into.shape.clone(),
            data,
        },
        touched,
    )
}

fn taken(c: Combine, d: DType) -> bool {
    let class = d.info().class;
    match c {
        Combine::Set => true,
        // Pairs are moved, not combined (scatter refuses them).
        Combine::Add => !matches!(class, Class::Bool | Class::Pair),
        _ => !matches!(class, Class::Bool | Class::Complex | Class::Pair),
    }
}

/// Elements equal, but where the combination computed a NaN (its payload
/// is not specified there): then both NaN. Untouched elements exactly.
fn same_elements(c: Combine, got: &Arr, want: &Arr, touched: &[bool]) -> bool {
    (0..want.len()).all(|t| {
        let (g, w) = (got.el(t), want.el(t));
        g == w
            || (c != Combine::Set && touched[t] && is_nan(want.dtype, w) && is_nan(want.dtype, g))
    })
}

#[test]
fn scatter_matches_the_model_for_every_dtype_and_combine() {
    let mut rng = Rng::for_label("scatter", tessera_testkit::rng::seed());
    let ex = execs();
    for &dt in DType::ALL.iter() {
        for c in [Combine::Set, Combine::Add, Combine::Max, Combine::Min] {
            if !taken(c, dt) {
                continue;
            }
            for _ in 0..8 {
                let shape = random_shape(&mut rng, dt, 4);
                let axis = rng.below_usize(shape.len());
                if packed(dt) && axis == shape.len() - 1 {
                    continue;
                }
                let mut us = shape.clone();
                us[axis] = rng.below_usize(9);
                let into = random_arr(&mut rng, dt, &shape);
                let upd = random_arr(&mut rng, dt, &us);
                // Heavy collisions: few distinct targets.
                let pos = positions_arr(&mut rng, &us, shape[axis]);
                let (want, touched) = scatter_model(c, axis, &into, &pos, &upd);
                let si = store(&mut rng, &into, false);
                let sp = store(&mut rng, &pos, false);
                let su = store(&mut rng, &upd, false);
                let mut sd = store(&mut rng, &into, false);
                sd.buf.iter_mut().for_each(|b| *b = 0xC3);
                let e = *rng.pick(&ex);
                scatter(
                    c,
                    axis,
                    &view(dt, &shape, &si),
                    &view(DType::I64, &us, &sp),
                    &view(dt, &us, &su),
                    &mut view_mut(dt, &shape, &mut sd),
                    &e,
                )
                .unwrap();
                let got = load(dt, &shape, &sd);
                assert!(
                    same_elements(c, &got, &want, &touched),
                    "{dt} {c:?} {shape:?} axis {axis} {e:?}\ngot  {:?}\nwant {:?}",
                    got.data,
                    want.data
                );
            }
        }
    }
}

#[test]
fn scatter_add_keeps_negative_zero_and_untouched_signalling_nans() {
    let into = [-0.0f32, f32::from_bits(0x7f80_0001), 1.0];
    let upd = [-0.0f32, -0.0, 2.5];
    let pos = [0i64, 0, 5];
    let mut out = [0f32; 3];
    scatter(
        Combine::Add,
        0,
        &ArrayView::from_slice(&into, &[3]).unwrap(),
        &ArrayView::from_slice(&pos, &[3]).unwrap(),
        &ArrayView::from_slice(&upd, &[3]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[3]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert_eq!(out[0].to_bits(), 0x8000_0000);
    assert_eq!(out[1].to_bits(), 0x7f80_0001);
    assert_eq!(out[2], 1.0);
}

#[test]
fn scatter_bits_are_the_same_on_every_thread_count_and_tier() {
    let mut rng = Rng::for_label("scatter bits", tessera_testkit::rng::seed());
    for dt in [
        DType::F32,
        DType::F64,
        DType::Bf16,
        DType::E4m3fn,
        DType::C64,
    ] {
        // Destinations past 8 MiB (counting 4 bytes a target for the
        // narrow floats, whose sums are f32) with targets spread over them
        // are the ones that run on several threads (f64 and complex64:
        // 9.6 MB; the others 8.8 MB of f32 sums).
        let wide = if matches!(dt, DType::F64 | DType::C64) {
            vec![(1_200_000usize, 100_000usize, 1_200_000u64)]
        } else {
            vec![(2_200_000usize, 100_000usize, 2_200_000u64)]
        };
        for (targets, m, spread) in [
            (1000usize, 200_000usize, 1000u64),
            (100_000, 150_000, 100_000),
            (50_000, 100_000, 7),
        ]
        .into_iter()
        .chain(wide)
        {
            let into = random_arr(&mut rng, dt, &[targets]);
            let upd = random_arr(&mut rng, dt, &[m]);
            // One position in 64 out of range (dropped), either side.
            let pv: Vec<i64> = (0..m)
                .map(|_| match rng.below(128) {
                    0 => -1 - rng.below(1000) as i64,
                    1 => (targets as u64 + rng.below(1000)) as i64,
                    _ => (rng.below(spread) * (targets as u64 / spread).max(1)) as i64,
                })
                .collect();
            let pos = i64_arr(&[m], &pv);
            let mut first: Option<Vec<u8>> = None;
            for c in [Combine::Add, Combine::Max] {
                if !taken(c, dt) {
                    continue;
                }
                for e in execs() {
                    let mut out = vec![0u8; targets * eb(dt)];
                    scatter(
                        c,
                        0,
                        &ArrayView::contiguous(dt, &[targets], &into.data).unwrap(),
                        &ArrayView::contiguous(DType::I64, &[m], &pos.data).unwrap(),
                        &ArrayView::contiguous(dt, &[m], &upd.data).unwrap(),
                        &mut ArrayViewMut::contiguous(dt, &[targets], &mut out).unwrap(),
                        &e,
                    )
                    .unwrap();
                    if c == Combine::Add {
                        match &first {
                            None => first = Some(out),
                            Some(f) => assert!(*f == out, "{dt} {targets} {e:?}"),
                        }
                    }
                }
            }
            // And the model agrees with the bits (NaN positions aside).
            let (want, touched) = scatter_model(Combine::Add, 0, &into, &pos, &upd);
            let got = Arr {
                dtype: dt,
                shape: vec![targets],
                data: first.unwrap(),
            };
            assert!(same_elements(Combine::Add, &got, &want, &touched), "{dt}");
        }
    }
}

#[test]
fn empty_and_single_element_operands() {
    let e = Exec::default();
    // No updates: dst is into.
    let into = [1.5f64, -0.0];
    let mut out = [9.0f64; 2];
    let none: [f64; 0] = [];
    let nopos: [i64; 0] = [];
    scatter(
        Combine::Add,
        0,
        &ArrayView::from_slice(&into, &[2]).unwrap(),
        &ArrayView::from_slice(&nopos, &[0]).unwrap(),
        &ArrayView::from_slice(&none, &[0]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[2]).unwrap(),
        &e,
    )
    .unwrap();
    assert_eq!(out[0], 1.5);
    assert_eq!(out[1].to_bits(), (-0.0f64).to_bits());
    // A gather from an empty axis reads zeros.
    let x: [u16; 0] = [];
    let pos = [0i64];
    let mut g = [7u16];
    gather(
        0,
        &ArrayView::from_slice(&x, &[0]).unwrap(),
        &ArrayView::from_slice(&pos, &[1]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut g, &[1]).unwrap(),
        &e,
    )
    .unwrap();
    assert_eq!(g, [0]);
    // One element.
    let x = [42u16];
    gather(
        0,
        &ArrayView::from_slice(&x, &[1]).unwrap(),
        &ArrayView::from_slice(&pos, &[1]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut g, &[1]).unwrap(),
        &e,
    )
    .unwrap();
    assert_eq!(g, [42]);
}

// ---------- refusals ----------

#[test]
fn refusals_write_nothing() {
    let e = Exec::default();
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let pos = [0i64, 1];
    let pos32 = [0i32, 1];
    let upd = [5.0f32, 6.0];
    let cz = [num_complex::Complex::new(1.0f32, 0.0); 2];
    let b = [true, false];
    let mut out = [7.0f32; 4];
    let xv = ArrayView::from_slice(&x, &[4]).unwrap();
    let pv = ArrayView::from_slice(&pos, &[2]).unwrap();
    let uv = ArrayView::from_slice(&upd, &[2]).unwrap();
    let check = |r: tessera::Result<()>, out: &[f32], what: &str| {
        assert!(r.is_err(), "{what}");
        assert!(out.iter().all(|&v| v == 7.0), "{what} wrote");
    };
    // Positions not int64.
    let r = gather(
        0,
        &xv,
        &ArrayView::from_slice(&pos32, &[2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out[..2], &[2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })));
    check(r, &out, "gather i32 positions");
    let r = scatter(
        Combine::Add,
        0,
        &xv,
        &ArrayView::from_slice(&pos32, &[2]).unwrap(),
        &uv,
        &mut ArrayViewMut::from_slice(&mut out, &[4]).unwrap(),
        &e,
    );
    check(r, &out, "scatter i32 positions");
    // Mismatched shapes.
    let r = gather(
        0,
        &xv,
        &pv,
        &mut ArrayViewMut::from_slice(&mut out[..3], &[3]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })));
    check(r, &out, "gather shape");
    let r = scatter(
        Combine::Set,
        0,
        &xv,
        &pv,
        &ArrayView::from_slice(&upd[..1], &[1]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[4]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })));
    check(r, &out, "scatter shape");
    let r = scatter(
        Combine::Set,
        0,
        &ArrayView::from_slice(&x[..3], &[3]).unwrap(),
        &pv,
        &uv,
        &mut ArrayViewMut::from_slice(&mut out, &[4]).unwrap(),
        &e,
    );
    check(r, &out, "scatter into shape");
    // Axis out of range.
    let r = gather(
        1,
        &xv,
        &pv,
        &mut ArrayViewMut::from_slice(&mut out[..2], &[2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Axis { .. })));
    check(r, &out, "axis");
    // A destination that reaches an element twice.
    let r = gather(
        0,
        &xv,
        &pv,
        &mut ArrayViewMut::from_slice_strided(&mut out, &[2], &[0], 0).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Layout { .. })));
    check(r, &out, "overlapping gather dst");
    let r = scatter(
        Combine::Add,
        0,
        &ArrayView::from_slice(&x[..2], &[2]).unwrap(),
        &pv,
        &uv,
        &mut ArrayViewMut::from_slice_strided(&mut out, &[2], &[0], 1).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Layout { .. })));
    check(r, &out, "overlapping scatter dst");
    let r = gather_ranges(
        &xv,
        &pv,
        &pv,
        &mut ArrayViewMut::from_slice_strided(&mut out, &[3], &[0], 0).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Layout { .. })));
    check(r, &out, "overlapping ranges dst");
    // gather_ranges: non-int64 runs, mismatched ends, mismatched cells.
    let r = gather_ranges(
        &xv,
        &ArrayView::from_slice(&pos32, &[2]).unwrap(),
        &pv,
        &mut ArrayViewMut::from_slice(&mut out, &[4]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })));
    check(r, &out, "ranges i32");
    let r = gather_ranges(
        &xv,
        &pv,
        &ArrayView::from_slice(&pos[..1], &[1]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[4]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })));
    check(r, &out, "ranges ends shape");
    let r = gather_ranges(
        &ArrayView::from_slice(&x, &[2, 2]).unwrap(),
        &pv,
        &pv,
        &mut ArrayViewMut::from_slice(&mut out, &[4, 1]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::Shape { .. })));
    check(r, &out, "ranges cells");
    // Combines a dtype does not take.
    let mut bout = [false; 2];
    let r = scatter(
        Combine::Add,
        0,
        &ArrayView::from_slice(&b, &[2]).unwrap(),
        &pv,
        &ArrayView::from_slice(&b, &[2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut bout, &[2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeUnsupported { .. })));
    assert_eq!(bout, [false; 2]);
    let mut cout = [num_complex::Complex::new(9.0f32, 9.0); 2];
    let r = scatter(
        Combine::Max,
        0,
        &ArrayView::from_slice(&cz, &[2]).unwrap(),
        &pv,
        &ArrayView::from_slice(&cz, &[2]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut cout, &[2]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeUnsupported { .. })));
    assert!(cout.iter().all(|c| c.re == 9.0));
    // into of another dtype.
    let xd = [1.0f64; 4];
    let r = scatter(
        Combine::Set,
        0,
        &ArrayView::from_slice(&xd, &[4]).unwrap(),
        &pv,
        &uv,
        &mut ArrayViewMut::from_slice(&mut out, &[4]).unwrap(),
        &e,
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })));
    check(r, &out, "into dtype");
}

#[test]
fn threaded_scatter_along_an_outer_axis_keeps_c_order() {
    // A 2-D destination past 8 MiB, updates along axis 0 of rows of 1000
    // targets: the threaded path with targets computed from (position,
    // column), on every thread count, against the model.
    let mut rng = Rng::for_label("scatter partitioned 2-D", tessera_testkit::rng::seed());
    let dt = DType::F32;
    let (rows, cols, mu) = (3000usize, 1000usize, 120usize);
    let into = random_arr(&mut rng, dt, &[rows, cols]);
    let upd = random_arr(&mut rng, dt, &[mu, cols]);
    let pv: Vec<i64> = (0..mu * cols)
        .map(|_| match rng.below(64) {
            0 => -7,
            1 => rows as i64,
            _ => rng.below(rows as u64) as i64,
        })
        .collect();
    let pos = i64_arr(&[mu, cols], &pv);
    let mut first: Option<Vec<u8>> = None;
    for e in execs() {
        let mut out = vec![0u8; rows * cols * eb(dt)];
        scatter(
            Combine::Add,
            0,
            &ArrayView::contiguous(dt, &[rows, cols], &into.data).unwrap(),
            &ArrayView::contiguous(DType::I64, &[mu, cols], &pos.data).unwrap(),
            &ArrayView::contiguous(dt, &[mu, cols], &upd.data).unwrap(),
            &mut ArrayViewMut::contiguous(dt, &[rows, cols], &mut out).unwrap(),
            &e,
        )
        .unwrap();
        match &first {
            None => first = Some(out),
            Some(f) => assert!(*f == out, "{e:?}"),
        }
    }
    let (want, touched) = scatter_model(Combine::Add, 0, &into, &pos, &upd);
    let got = Arr {
        dtype: dt,
        shape: vec![rows, cols],
        data: first.unwrap(),
    };
    assert!(same_elements(Combine::Add, &got, &want, &touched));
}
