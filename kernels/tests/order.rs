//! The ordering kernels against slow models written here: every element
//! becomes a model value compared by the stated order (−∞ < … < −0 < +0 < …
//! < +∞ < NaN, every NaN equal; complex by (re, im), a NaN part makes it a
//! NaN), a stable comparison sort of (value, position) gives the expected
//! values and positions, and results must match bit for bit on every layout,
//! thread count and tier.

mod common;

use common::{load, place, positions, random_codes, store, Dt, Geo, Lay};
use std::cmp::Ordering;
use tessera::order::{
    argsort, argsort_with, compress, difference, intersect, lower_bound, median, partition,
    quantile, sort, sort_with, FloatOrder,
};
use tessera::{available_tiers, ArrayView, ArrayViewMut, CastMode, Class, DType, Error, Exec};
use tessera_testkit::rng::Rng;

/// A model value.
#[derive(Clone, Copy, Debug)]
enum V {
    I(i128),
    F(f64),
    C(f64, f64),
    Nan,
    /// A totalOrder rank: real part, imaginary part (0 for reals).
    T(i128, i128),
}

fn cmpv(a: &V, b: &V) -> Ordering {
    match (a, b) {
        (V::Nan, V::Nan) => Ordering::Equal,
        (V::Nan, _) => Ordering::Greater,
        (_, V::Nan) => Ordering::Less,
        (V::I(x), V::I(y)) => x.cmp(y),
        // total_cmp orders −0 below +0 and is the numeric order otherwise.
        (V::F(x), V::F(y)) => x.total_cmp(y),
        (V::C(a, b), V::C(c, d)) => a.total_cmp(c).then(b.total_cmp(d)),
        (V::T(a, b), V::T(c, d)) => a.cmp(c).then(b.cmp(d)),
        _ => unreachable!("values of one dtype"),
    }
}

fn le(b: &[u8]) -> u64 {
    b.iter()
        .enumerate()
        .fold(0u64, |acc, (i, &x)| acc | (x as u64) << (8 * i))
}

/// The f64 values of a float dtype's `codes` from the cast kernel (exact);
/// a packed dtype decodes whole bytes, so the tail is padded with zero
/// codes (the result may be longer than the codes).
fn decoded(dt: Dt, codes: &[u8]) -> Vec<f64> {
    let n = codes.len() / dt.item;
    let m = n.div_ceil(dt.vpb) * dt.vpb;
    let mut padded = codes.to_vec();
    padded.resize(m * dt.item, 0);
    let g = place(Lay::Contig, &[m], dt.vpb);
    let buf = store(dt, &g, &padded, &mut Rng::new(1));
    let mut out = vec![0f64; m];
    if n > 0 {
        tessera::cast(
            CastMode::Default,
            &ArrayView::new(dt.dtype, &[m], &g.strides, g.offset, &buf).unwrap(),
            &mut ArrayViewMut::from_slice(&mut out, &[m]).unwrap(),
            &Exec::SEQ,
        )
        .unwrap();
    }
    out
}

/// Model values of `codes` (C order, `dt.item` bytes each).
fn model(dt: Dt, codes: &[u8]) -> Vec<V> {
    let info = dt.dtype.info();
    match info.class {
        Class::Bool => codes.iter().map(|&b| V::I((b != 0) as i128)).collect(),
        Class::Int | Class::Uint => codes
            .chunks(dt.item)
            .map(|c| {
                let bits = info.bits;
                let u = le(c) as u128 & ((1u128 << bits) - 1);
                let v = if info.class == Class::Int && u >> (bits - 1) == 1 {
                    u as i128 - (1i128 << bits)
                } else {
                    u as i128
                };
                V::I(v)
            })
            .collect(),
        Class::Complex | Class::Pair => codes
            .chunks(dt.item)
            .map(|c| {
                let (re, im) = if dt.item == 4 {
                    // f16c, bf16c: two 16-bit codes.
                    let part = |b: &[u8]| {
                        let c = u16::from_le_bytes([b[0], b[1]]);
                        if dt.dtype == DType::F16c {
                            half::f16::from_bits(c).to_f64()
                        } else {
                            half::bf16::from_bits(c).to_f64()
                        }
                    };
                    (part(&c[..2]), part(&c[2..]))
                } else if dt.item == 8 {
                    (
                        f32::from_bits(le(&c[..4]) as u32) as f64,
                        f32::from_bits(le(&c[4..]) as u32) as f64,
                    )
                } else {
                    (f64::from_bits(le(&c[..8])), f64::from_bits(le(&c[8..])))
                };
                if common::is_nan(dt.dtype, c) {
                    V::Nan
                } else {
                    V::C(re, im)
                }
            })
            .collect(),
        Class::Float => {
            // Values from the cast kernel (exact into f64); NaN-ness from the
            // dtype's parameters.
            let out = decoded(dt, codes);
            codes
                .chunks(dt.item)
                .zip(out)
                .map(|(c, v)| {
                    if common::is_nan(dt.dtype, c) {
                        V::Nan
                    } else {
                        V::F(v)
                    }
                })
                .collect()
        }
    }
}

/// IEEE 754 totalOrder's definition on a binary float's bits: the
/// negatives (sign bit set) by decreasing magnitude field, then the
/// positives by increasing magnitude field, NaN payloads included.
fn ieee_rank(bits: u64, width: u32) -> i128 {
    let mag = (bits & ((1u64 << (width - 1)) - 1)) as i128;
    if bits >> (width - 1) & 1 == 1 {
        -(mag + 1)
    } else {
        mag + 1
    }
}

/// Model values in totalOrder ([`FloatOrder::Total`]): f16, bf16, f32,
/// f64 and the complex dtypes by [`ieee_rank`] of their (parts') bits; the
/// narrow floats by their decoded values, a NaN by its sign alone; other
/// dtypes as [`model`].
fn model_total(dt: Dt, codes: &[u8]) -> Vec<V> {
    let info = dt.dtype.info();
    match (info.class, dt.dtype) {
        (Class::Float, DType::F16 | DType::Bf16 | DType::F32 | DType::F64) => codes
            .chunks(dt.item)
            .map(|c| V::T(ieee_rank(le(c), info.bits), 0))
            .collect(),
        (Class::Complex, _) => codes
            .chunks(dt.item)
            .map(|c| {
                let h = dt.item / 2;
                let w = 8 * h as u32;
                V::T(ieee_rank(le(&c[..h]), w), ieee_rank(le(&c[h..]), w))
            })
            .collect(),
        (Class::Float, _) => {
            // The decoded values (NaN keeps its code's sign through the cast).
            let m = codes.len() / dt.item;
            let out = decoded(dt, codes);
            out[..m]
                .iter()
                .map(|&v| {
                    V::T(
                        match (v.is_nan(), v.is_sign_negative()) {
                            (true, true) => i128::MIN,
                            (true, false) => i128::MAX,
                            _ => ieee_rank(v.to_bits(), 64),
                        },
                        0,
                    )
                })
                .collect()
        }
        _ => model(dt, codes),
    }
}

/// The stable order of one slice: positions, ascending or descending, equal
/// elements in increasing position.
fn model_order(vals: &[V], desc: bool) -> Vec<usize> {
    let mut ix: Vec<usize> = (0..vals.len()).collect();
    ix.sort_by(|&a, &b| {
        let o = cmpv(&vals[a], &vals[b]);
        if desc {
            o.reverse()
        } else {
            o
        }
    });
    ix
}

/// Codes in a pattern over `n` elements (C order over `rows` slices of n).
fn pattern_codes(dt: Dt, rows: usize, n: usize, pat: usize, rng: &mut Rng) -> Vec<u8> {
    let total = rows * n;
    let it = dt.item;
    match pat {
        // Random bits with specials (NaNs of both signs and payloads, ±∞).
        0 => random_codes(dt, total, rng, true),
        // Heavy duplicates: three distinct codes, plus the dtype's specials.
        1 => {
            let mut pool = random_codes(dt, 3, rng, true);
            pool.extend(specials(dt));
            let k = pool.len() / it;
            (0..total)
                .flat_map(|_| {
                    let j = rng.below_usize(k);
                    pool[j * it..(j + 1) * it].to_vec()
                })
                .collect()
        }
        // All equal.
        2 => {
            let one = random_codes(dt, 1, rng, true);
            (0..total).flat_map(|_| one.clone()).collect()
        }
        // Sorted, reversed, organ pipe: arranged by the model.
        _ => {
            let mut out = Vec::with_capacity(total * it);
            for _ in 0..rows {
                let c = random_codes(dt, n, rng, true);
                let v = model(dt, &c);
                let mut ord = model_order(&v, false);
                match pat {
                    3 => {}
                    4 => ord.reverse(),
                    _ => {
                        let h = ord.len() / 2;
                        ord[h..].reverse();
                    }
                }
                for i in ord {
                    out.extend_from_slice(&c[i * it..(i + 1) * it]);
                }
            }
            out
        }
    }
}

/// ±0, ±∞, NaNs of both signs and two payloads, the smallest subnormals,
/// where the dtype has them (as codes of `dt.item` bytes).
fn specials(dt: Dt) -> Vec<u8> {
    let words: Vec<u64> = match dt.dtype {
        DType::F32 => vec![
            0,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0xffc0_0001,
            0x7f80_0001,
            1,
            0x8000_0001,
        ],
        DType::F64 => vec![
            0,
            1 << 63,
            0x7ff0 << 48,
            0xfff0 << 48,
            0x7ff8 << 48,
            (0xfff8 << 48) | 5,
            (0x7ff0 << 48) | 1,
            1,
            (1 << 63) | 1,
        ],
        DType::F16 => vec![0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01, 1, 0x8001],
        DType::Bf16 => vec![0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81, 1, 0x8001],
        DType::C64 => vec![
            0,
            0x8000_0000,
            0x7fc0_0000,
            0x7fc0_0000 << 32,
            0xffc0_0001 << 32 | 0x3f80_0000,
            0x7f80_0000,
            0xff80_0000,
        ],
        _ => vec![],
    };
    let mut out = Vec::new();
    for w in words {
        if dt.item == 16 {
            // c128: the same word in the real part, +0 or a NaN imaginary.
            out.extend_from_slice(&w.to_le_bytes());
            out.extend_from_slice(&(if w & 1 == 1 { 0x7ff8u64 << 48 } else { 0 }).to_le_bytes());
        } else {
            out.extend_from_slice(&w.to_le_bytes()[..dt.item]);
        }
    }
    out
}

/// Run sort (or argsort without values) and compare with the model.
#[allow(clippy::too_many_arguments)]
fn check_sort(
    dt: Dt,
    codes: &[u8],
    shape: &[usize],
    axis: usize,
    k: usize,
    desc: bool,
    lay: Lay,
    with_values: bool,
    with_positions: bool,
    execs: &[Exec],
    rng: &mut Rng,
) {
    check_sort_in(
        FloatOrder::NanLast,
        dt,
        codes,
        shape,
        axis,
        k,
        desc,
        lay,
        with_values,
        with_positions,
        execs,
        rng,
    )
}

/// [`check_sort`] in the float order `fo` (`sort_with`, `argsort_with`).
#[allow(clippy::too_many_arguments)]
fn check_sort_in(
    fo: FloatOrder,
    dt: Dt,
    codes: &[u8],
    shape: &[usize],
    axis: usize,
    k: usize,
    desc: bool,
    lay: Lay,
    with_values: bool,
    with_positions: bool,
    execs: &[Exec],
    rng: &mut Rng,
) {
    let gx = place(lay, shape, dt.vpb);
    let xbuf = store(dt, &gx, codes, rng);
    let x = ArrayView::new(dt.dtype, shape, &gx.strides, gx.offset, &xbuf).unwrap();
    let mut oshape = shape.to_vec();
    oshape[axis] = k;
    // Expected: per slice along axis.
    let n = shape[axis];
    let cstr = tessera::array::c_strides(shape);
    let ocstr = tessera::array::c_strides(&oshape);
    let total: usize = oshape.iter().product();
    let mut want_codes = vec![0u8; total * dt.item];
    let mut want_pos = vec![0i64; total];
    let vals = match fo {
        FloatOrder::NanLast => model(dt, codes),
        FloatOrder::Total => model_total(dt, codes),
    };
    let outer: Vec<Vec<usize>> = {
        let mut o = vec![vec![]];
        for (a, &e) in shape.iter().enumerate() {
            if a == axis {
                continue;
            }
            o = o
                .into_iter()
                .flat_map(|p| {
                    (0..e).map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect();
        }
        o
    };
    for idx in &outer {
        let mut full = idx.clone();
        full.insert(axis, 0);
        let at = |i: usize, st: &[isize]| -> usize {
            let mut f = full.clone();
            f[axis] = i;
            f.iter()
                .zip(st)
                .map(|(&a, &s)| a as isize * s)
                .sum::<isize>() as usize
        };
        let lane: Vec<V> = (0..n).map(|i| vals[at(i, &cstr)]).collect();
        let ord = model_order(&lane, desc);
        for (j, &o) in ord.iter().take(k).enumerate() {
            let src = at(o, &cstr);
            let dst = at(j, &ocstr);
            want_codes[dst * dt.item..(dst + 1) * dt.item]
                .copy_from_slice(&codes[src * dt.item..(src + 1) * dt.item]);
            want_pos[dst] = o as i64;
        }
    }
    for exec in execs {
        let go = place(lay, &oshape, dt.vpb);
        let gp = place(lay, &oshape, 1);
        let junk = random_codes(dt, total, rng, false);
        let mut vbuf = store(dt, &go, &junk, rng);
        let mut pbuf = vec![0x5au8; gp.elems * 8];
        {
            let mut v =
                ArrayViewMut::new(dt.dtype, &oshape, &go.strides, go.offset, &mut vbuf).unwrap();
            let mut p =
                ArrayViewMut::new(DType::I64, &oshape, &gp.strides, gp.offset, &mut pbuf).unwrap();
            let r = match (with_values, fo) {
                (true, FloatOrder::NanLast) => sort(
                    axis,
                    desc,
                    &x,
                    &mut v,
                    with_positions.then_some(&mut p),
                    exec,
                ),
                (true, _) => sort_with(
                    axis,
                    desc,
                    fo,
                    &x,
                    &mut v,
                    with_positions.then_some(&mut p),
                    exec,
                ),
                (false, FloatOrder::NanLast) => argsort(axis, desc, &x, &mut p, exec),
                (false, _) => argsort_with(axis, desc, fo, &x, &mut p, exec),
            };
            r.unwrap();
        }
        let ctx = format!(
            "{} shape {shape:?} axis {axis} k {k} desc {desc} {lay:?} {exec:?}",
            dt.dtype
        );
        if with_values {
            let got = load(dt, &go, &vbuf);
            assert_eq!(got, want_codes, "values: {ctx}");
        }
        if with_positions || !with_values {
            let got: Vec<i64> = positions(&gp)
                .into_iter()
                .map(|p| i64::from_le_bytes(pbuf[p * 8..p * 8 + 8].try_into().unwrap()))
                .collect();
            assert_eq!(got, want_pos, "positions: {ctx}");
        }
    }
}

fn execs() -> Vec<Exec> {
    let mut v = vec![];
    for t in available_tiers() {
        for n in [1, 2, 7] {
            v.push(Exec::on(t).threads(n));
        }
    }
    v
}

#[test]
fn sort_every_dtype_pattern_and_layout() {
    let mut rng = Rng::for_label("order/every", 11);
    let seq = [Exec::SEQ, Exec::default().threads(3)];
    for dtype in DType::ALL {
        let dt = Dt::of(dtype);
        let v = dt.vpb;
        for pat in 0..6 {
            for &n in &[0usize, 1, 2, 7, 40, 300] {
                let n = if n > 1 { n.div_ceil(v) * v } else { n };
                let rows = 3;
                for (axis, shape) in [(1, vec![rows, n]), (0, vec![n, 8])] {
                    let codes = pattern_codes(dt, 1, shape.iter().product(), pat, &mut rng);
                    let len = shape[axis];
                    let ks: Vec<usize> = if axis == 1 && v > 1 {
                        vec![len, (len / 2) / v * v]
                    } else {
                        vec![len, len / 3, 1.min(len)]
                    };
                    for &k in &ks {
                        for desc in [false, true] {
                            let lay =
                                [Lay::Contig, Lay::Reversed, Lay::Transposed][rng.below_usize(3)];
                            check_sort(
                                dt, &codes, &shape, axis, k, desc, lay, true, true, &seq, &mut rng,
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn values_only_and_argsort() {
    let mut rng = Rng::for_label("order/alone", 12);
    for dtype in [
        DType::F32,
        DType::I64,
        DType::U16,
        DType::F64,
        DType::E4m3fn,
        DType::I4,
    ] {
        let dt = Dt::of(dtype);
        for pat in [0, 1, 4] {
            let shape = [2, 1000];
            let codes = pattern_codes(dt, 1, 2000, pat, &mut rng);
            for desc in [false, true] {
                for k in [1000, 100] {
                    check_sort(
                        dt,
                        &codes,
                        &shape,
                        1,
                        k,
                        desc,
                        Lay::EveryOther,
                        true,
                        false,
                        &[Exec::SEQ],
                        &mut rng,
                    );
                    check_sort(
                        dt,
                        &codes,
                        &shape,
                        1,
                        k,
                        desc,
                        Lay::Padded,
                        false,
                        true,
                        &[Exec::SEQ],
                        &mut rng,
                    );
                }
            }
        }
    }
}

#[test]
fn long_values_alone_with_nans() {
    // Long slices sorted for values alone (the keys sorted inside the
    // destination where it is contiguous), NaNs of both signs included.
    let mut rng = Rng::for_label("order/long-values", 19);
    for dtype in [DType::F32, DType::I64, DType::F64, DType::U16] {
        let dt = Dt::of(dtype);
        let codes = random_codes(dt, 2 * 70_000, &mut rng, true);
        for desc in [false, true] {
            for lay in [Lay::Contig, Lay::EveryOther] {
                check_sort(
                    dt,
                    &codes,
                    &[2, 70_000],
                    1,
                    70_000,
                    desc,
                    lay,
                    true,
                    false,
                    &[Exec::SEQ, Exec::default().threads(2)],
                    &mut rng,
                );
            }
        }
    }
}

#[test]
fn threads_and_tiers_give_the_same_bits() {
    let mut rng = Rng::for_label("order/threads", 13);
    let all = execs();
    for dtype in [
        DType::F32,
        DType::U32,
        DType::I64,
        DType::F16,
        DType::C64,
        DType::U8,
    ] {
        let dt = Dt::of(dtype);
        // Many short slices (split among tasks) and one long slice (its
        // radix passes split among tasks).
        for shape in [vec![37, 300], vec![1, 140_000]] {
            let total = shape.iter().product();
            // Random bits with specials for f32, heavy duplicates otherwise.
            let codes = if dtype == DType::F32 {
                random_codes(dt, total, &mut rng, true)
            } else {
                pattern_codes(dt, 1, total, 1, &mut rng)
            };
            let k = shape[1];
            check_sort(
                dt,
                &codes,
                &shape,
                1,
                k,
                false,
                Lay::Contig,
                true,
                true,
                &all,
                &mut rng,
            );
            check_sort(
                dt,
                &codes,
                &shape,
                1,
                k / 50,
                true,
                Lay::Contig,
                true,
                true,
                &all[..2],
                &mut rng,
            );
        }
    }
}

#[test]
fn total_order_sort_matches_the_ieee_definition() {
    // Every float and complex dtype (the others sort as `sort` does), codes
    // drawn with NaNs of both signs and many payloads, every tier and
    // thread count, values and positions, ascending and descending, top-k.
    let mut rng = Rng::for_label("order/total", 13);
    let execs = execs();
    for dtype in DType::ALL {
        let class = dtype.info().class;
        if !matches!(class, Class::Float | Class::Complex | Class::Int) {
            continue;
        }
        let dt = Dt::of(dtype);
        for pat in 0..6 {
            for &n in &[1usize, 9, 64, 1500] {
                let n = n.div_ceil(dt.vpb) * dt.vpb;
                let mut codes = pattern_codes(dt, 1, 2 * n, pat, &mut rng);
                // NaN codes (random bit patterns) and the specials spliced in.
                let sp = specials(dt);
                for (i, c) in sp.chunks(dt.item).enumerate() {
                    let at = (i * 7 + pat) % (2 * n) * dt.item;
                    codes[at..at + dt.item].copy_from_slice(c);
                }
                for desc in [false, true] {
                    for k in [n, n / 3] {
                        let k = k / dt.vpb * dt.vpb;
                        let lay = [Lay::Contig, Lay::Reversed, Lay::Transposed][rng.below_usize(3)];
                        check_sort_in(
                            FloatOrder::Total,
                            dt,
                            &codes,
                            &[2, n],
                            1,
                            k,
                            desc,
                            lay,
                            k.is_multiple_of(2),
                            true,
                            if n > 64 { &execs[..1] } else { &execs },
                            &mut rng,
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn total_order_agrees_with_the_kind() {
    // Sorted in totalOrder, each neighbour pair compares ≤ 0 under the
    // elementwise `total_order` kind, and −NaN, −0, +0, +NaN land in place.
    let x = [
        f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        -f32::NAN,
        f32::NEG_INFINITY,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffff_ffff),
        -1e-45,
    ];
    let n = x.len();
    let mut v = vec![0f32; n];
    let mut p = vec![0i64; n];
    sort_with(
        0,
        false,
        FloatOrder::Total,
        &ArrayView::from_slice(&x, &[n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut v, &[n]).unwrap(),
        Some(&mut ArrayViewMut::from_slice(&mut p, &[n]).unwrap()),
        &Exec::SEQ,
    )
    .unwrap();
    // −NaN with the larger payload first; then −NaN, −∞, −1e−45, −0, +0,
    // +∞, the signalling NaN (payload 1), the quiet NaN (payload 2^22).
    assert_eq!(p, [7, 4, 5, 8, 2, 1, 3, 6, 0]);
    let mut c = vec![0i8; n - 1];
    tessera::elementwise(
        tessera::Kind::TotalOrder,
        &[
            ArrayView::from_slice(&v[..n - 1], &[n - 1]).unwrap(),
            ArrayView::from_slice(&v[1..], &[n - 1]).unwrap(),
        ],
        &mut ArrayViewMut::from_slice(&mut c, &[n - 1]).unwrap(),
        &Exec::SEQ,
    )
    .unwrap();
    assert_eq!(c, vec![-1i8; n - 1]);
}

#[test]
fn negative_zero_and_nans_in_order() {
    // A direct statement of the order, without the model.
    let x = [
        f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        -f32::NAN,
        f32::NEG_INFINITY,
        1e-45,
        -1e-45,
    ];
    let mut v = [0f32; 8];
    let mut p = [0i64; 8];
    sort(
        0,
        false,
        &ArrayView::from_slice(&x, &[8]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut v, &[8]).unwrap(),
        Some(&mut ArrayViewMut::from_slice(&mut p, &[8]).unwrap()),
        &Exec::SEQ,
    )
    .unwrap();
    assert_eq!(p, [5, 7, 2, 1, 6, 3, 0, 4]);
    let bits: Vec<u32> = v.iter().map(|f| f.to_bits()).collect();
    let want: Vec<u32> = p.iter().map(|&i| x[i as usize].to_bits()).collect();
    assert_eq!(bits, want);
    sort(
        0,
        true,
        &ArrayView::from_slice(&x, &[8]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut v, &[8]).unwrap(),
        Some(&mut ArrayViewMut::from_slice(&mut p, &[8]).unwrap()),
        &Exec::SEQ,
    )
    .unwrap();
    assert_eq!(p, [0, 4, 3, 6, 1, 2, 7, 5]);
}

#[test]
fn refusals_leave_destinations_untouched() {
    let x = [3.0f32, 1.0, 2.0, 0.0, 5.0, 4.0];
    let xv = ArrayView::from_slice(&x, &[2, 3]).unwrap();
    let mut v = [9.0f32; 6];
    let mut p = [7i64; 6];
    let mut p32 = [7i32; 6];
    let mut v7 = [9.0f32; 8];
    let mut u = [9u32; 6];
    let e = Exec::SEQ;
    {
        let mut vv = ArrayViewMut::from_slice(&mut v, &[2, 3]).unwrap();
        assert!(matches!(
            sort(2, false, &xv, &mut vv, None, &e),
            Err(Error::Axis { .. })
        ));
        let mut pp = ArrayViewMut::from_slice(&mut p32, &[2, 3]).unwrap();
        assert!(matches!(
            sort(1, false, &xv, &mut vv, Some(&mut pp), &e),
            Err(Error::DTypeMismatch { .. })
        ));
        let mut pw = ArrayViewMut::from_slice(&mut p, &[3, 2]).unwrap();
        assert!(matches!(
            sort(1, false, &xv, &mut vv, Some(&mut pw), &e),
            Err(Error::Shape { .. })
        ));
        let mut uu = ArrayViewMut::from_slice(&mut u, &[2, 3]).unwrap();
        assert!(matches!(
            sort(1, false, &xv, &mut uu, None, &e),
            Err(Error::DTypeMismatch { .. })
        ));
    }
    {
        // Longer than x along the axis.
        let mut vl = ArrayViewMut::from_slice(&mut v7, &[2, 4]).unwrap();
        assert!(matches!(
            sort(1, false, &xv, &mut vl, None, &e),
            Err(Error::Axis { .. })
        ));
        // Reaching one element twice.
        let mut vz = ArrayViewMut::from_slice_strided(&mut v7, &[2, 3], &[0, 1], 0).unwrap();
        assert!(matches!(
            sort(1, false, &xv, &mut vz, None, &e),
            Err(Error::Layout { .. })
        ));
    }
    assert_eq!(v, [9.0; 6]);
    assert_eq!(p, [7; 6]);
    assert_eq!(p32, [7; 6]);
    assert_eq!(v7, [9.0; 8]);
    assert_eq!(u, [9; 6]);
    // Overlap of a destination with x (built through raw bytes).
    let mut buf = vec![0u8; 24];
    let ptr = buf.as_mut_ptr();
    // SAFETY: the test builds an aliasing pair on purpose to see it refused;
    // the call reads and writes nothing when it refuses.
    let (xs, ds) = unsafe {
        (
            std::slice::from_raw_parts(ptr as *const u8, 24),
            std::slice::from_raw_parts_mut(ptr, 24),
        )
    };
    let xa = ArrayView::contiguous(DType::F32, &[6], xs).unwrap();
    let mut da = ArrayViewMut::contiguous(DType::F32, &[6], ds).unwrap();
    assert!(matches!(
        sort(0, false, &xa, &mut da, None, &e),
        Err(Error::Layout { .. })
    ));
    // Rank 0.
    let s = [1.0f32];
    let x0 = ArrayView::from_slice(&s, &[]).unwrap();
    let mut p0 = [0i64; 1];
    assert!(matches!(
        argsort(
            0,
            false,
            &x0,
            &mut ArrayViewMut::from_slice(&mut p0, &[]).unwrap(),
            &e
        ),
        Err(Error::Rank { .. })
    ));
    // Sets: too short a destination; compress: too short for the kept count.
    let a = [1u32, 2, 3, 4];
    let b = [2u32, 3, 9];
    let mut d = [0u32; 2];
    let av = ArrayView::from_slice(&a, &[4]).unwrap();
    let bv = ArrayView::from_slice(&b, &[3]).unwrap();
    assert!(matches!(
        intersect(
            &av,
            &bv,
            &mut ArrayViewMut::from_slice(&mut d, &[2]).unwrap(),
            &e
        ),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        difference(
            &av,
            &bv,
            &mut ArrayViewMut::from_slice(&mut d, &[2]).unwrap(),
            &e
        ),
        Err(Error::Length { .. })
    ));
    let m = [true, false, true, true];
    assert!(matches!(
        compress(
            &av,
            &ArrayView::from_slice(&m, &[4]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut d, &[2]).unwrap(),
            &e
        ),
        Err(Error::Length { .. })
    ));
    assert_eq!(d, [0, 0]);
    let mut q = [5.0f64; 2];
    assert!(matches!(
        quantile(
            1.5,
            1,
            &xv,
            &mut ArrayViewMut::from_slice(&mut q, &[2]).unwrap(),
            &e
        ),
        Err(Error::Attribute { .. })
    ));
    assert!(matches!(
        median(
            0,
            &xv,
            &mut ArrayViewMut::from_slice(&mut q, &[2]).unwrap(),
            &e
        ),
        Err(Error::Shape { .. })
    ));
    assert_eq!(q, [5.0; 2]);
}

/// numpy's linear quantile of sorted f64s (its `_lerp`).
fn model_quantile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = q * (n - 1) as f64;
    let i = h.floor() as usize;
    let t = h - i as f64;
    let a = sorted[i];
    let b = sorted[(i + 1).min(n - 1)];
    let d = b - a;
    if t < 0.5 {
        a + d * t
    } else {
        b - d * (1.0 - t)
    }
}

#[test]
fn median_and_quantile_match_the_model() {
    let mut rng = Rng::for_label("order/quantile", 14);
    for dtype in [
        DType::F32,
        DType::F64,
        DType::I32,
        DType::U8,
        DType::F16,
        DType::E5m2,
        DType::U4,
    ] {
        let dt = Dt::of(dtype);
        for &n in &[1usize, 2, 3, 8, 31, 400] {
            let n = n.div_ceil(dt.vpb) * dt.vpb;
            let rows = 4;
            let sp = rng.chance(1, 3);
            let codes = random_codes(dt, rows * n, &mut rng, sp);
            let vals = model(dt, &codes);
            let gx = place(Lay::Reversed, &[rows, n], dt.vpb);
            let xbuf = store(dt, &gx, &codes, &mut rng);
            let x = ArrayView::new(dtype, &[rows, n], &gx.strides, gx.offset, &xbuf).unwrap();
            for q in [0.0, 0.1, 0.25, 0.5, 0.77, 1.0] {
                let mut got = [0f64; 4];
                quantile(
                    q,
                    1,
                    &x,
                    &mut ArrayViewMut::from_slice(&mut got, &[4]).unwrap(),
                    &Exec::SEQ,
                )
                .unwrap();
                let mut med = [0f64; 4];
                median(
                    1,
                    &x,
                    &mut ArrayViewMut::from_slice(&mut med, &[4]).unwrap(),
                    &Exec::SEQ,
                )
                .unwrap();
                for r in 0..rows {
                    let lane = &vals[r * n..(r + 1) * n];
                    let has_nan = lane.iter().any(|v| matches!(v, V::Nan));
                    let mut s: Vec<f64> = lane
                        .iter()
                        .map(|v| match v {
                            V::F(f) => *f,
                            V::I(i) => *i as f64,
                            _ => f64::NAN,
                        })
                        .collect();
                    s.sort_by(f64::total_cmp);
                    let (wq, wm) = if has_nan {
                        (f64::NAN, f64::NAN)
                    } else {
                        let wm = if n % 2 == 1 {
                            s[n / 2]
                        } else {
                            (s[n / 2 - 1] + s[n / 2]) / 2.0
                        };
                        (model_quantile(&s, q), wm)
                    };
                    assert_eq!(
                        got[r].to_bits(),
                        wq.to_bits(),
                        "{dtype} n {n} q {q} row {r}"
                    );
                    if has_nan {
                        assert!(med[r].is_nan());
                    } else {
                        assert_eq!(
                            med[r].to_bits(),
                            wm.to_bits(),
                            "{dtype} n {n} median row {r}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn lower_bound_counts_smaller_elements() {
    let mut rng = Rng::for_label("order/search", 15);
    for dtype in [
        DType::F32,
        DType::F64,
        DType::I16,
        DType::U64,
        DType::Bf16,
        DType::E4m3fn,
        DType::C64,
    ] {
        let dt = Dt::of(dtype);
        for &n in &[0usize, 1, 5, 100, 1000] {
            let codes = pattern_codes(dt, 1, n, rng.below_usize(2), &mut rng);
            let vals = model(dt, &codes);
            let ord = model_order(&vals, false);
            let sorted_codes: Vec<u8> = ord
                .iter()
                .flat_map(|&i| codes[i * dt.item..(i + 1) * dt.item].to_vec())
                .collect();
            let sorted_vals: Vec<V> = ord.iter().map(|&i| vals[i]).collect();
            let mut qcodes = random_codes(dt, 50, &mut rng, true);
            qcodes.extend_from_slice(&sorted_codes[..sorted_codes.len().min(20 * dt.item)]);
            qcodes.extend(specials(dt));
            let nq = qcodes.len() / dt.item;
            let qv = model(dt, &qcodes);
            let a = ArrayView::contiguous(dtype, &[n], &sorted_codes).unwrap();
            let q = ArrayView::contiguous(dtype, &[nq], &qcodes).unwrap();
            for exec in [Exec::SEQ, Exec::default().threads(2)] {
                let mut got = vec![-1i64; nq];
                lower_bound(
                    &a,
                    &q,
                    &mut ArrayViewMut::from_slice(&mut got, &[nq]).unwrap(),
                    &exec,
                )
                .unwrap();
                for (j, v) in qv.iter().enumerate() {
                    let want = sorted_vals
                        .iter()
                        .filter(|s| cmpv(s, v) == Ordering::Less)
                        .count() as i64;
                    assert_eq!(got[j], want, "{dtype} n {n} query {j}");
                }
            }
        }
    }
}

#[test]
fn sets_match_the_model() {
    let mut rng = Rng::for_label("order/sets", 16);
    for dtype in [DType::U32, DType::U64, DType::I32, DType::I64] {
        let dt = Dt::of(dtype);
        for &(na, nb, span) in &[
            (0usize, 5usize, 10i64),
            (50, 50, 80),
            (300, 20, 1000),
            (20, 3000, 5000),
            (200, 200, 1 << 40),
        ] {
            let draw = |rng: &mut Rng, n: usize| -> Vec<i128> {
                let mut s = std::collections::BTreeSet::new();
                while s.len() < n {
                    let v = rng.range_i64(-span, span) as i128;
                    let v = if matches!(dtype, DType::U32 | DType::U64) {
                        v.abs()
                    } else {
                        v
                    };
                    s.insert(v);
                }
                s.into_iter().collect()
            };
            let a = draw(&mut rng, na);
            let b = draw(&mut rng, nb);
            let enc = |v: &[i128]| -> Vec<u8> {
                v.iter()
                    .flat_map(|&x| (x as i64 as u64).to_le_bytes()[..dt.item].to_vec())
                    .collect()
            };
            let (ab, bb) = (enc(&a), enc(&b));
            let av = ArrayView::contiguous(dtype, &[na], &ab).unwrap();
            let bv = ArrayView::contiguous(dtype, &[nb], &bb).unwrap();
            let inter: Vec<i128> = a.iter().copied().filter(|x| b.contains(x)).collect();
            let diff: Vec<i128> = a.iter().copied().filter(|x| !b.contains(x)).collect();
            let mut d = vec![0xeeu8; na * dt.item];
            let c = intersect(
                &av,
                &bv,
                &mut ArrayViewMut::contiguous(dtype, &[na.min(nb)], &mut d[..na.min(nb) * dt.item])
                    .unwrap(),
                &Exec::SEQ,
            )
            .unwrap();
            assert_eq!(c, inter.len());
            assert_eq!(
                &d[..c * dt.item],
                enc(&inter).as_slice(),
                "{dtype} intersect"
            );
            assert!(d[c * dt.item..].iter().all(|&x| x == 0xee));
            let mut d = vec![0xeeu8; na * dt.item];
            let c = difference(
                &av,
                &bv,
                &mut ArrayViewMut::contiguous(dtype, &[na], &mut d).unwrap(),
                &Exec::SEQ,
            )
            .unwrap();
            assert_eq!(c, diff.len());
            assert_eq!(
                &d[..c * dt.item],
                enc(&diff).as_slice(),
                "{dtype} difference"
            );
        }
    }
}

#[test]
fn compress_and_partition_are_stable() {
    let mut rng = Rng::for_label("order/compress", 17);
    for dtype in [
        DType::F32,
        DType::I8,
        DType::F64,
        DType::C128,
        DType::Bf16,
        DType::U4,
    ] {
        let dt = Dt::of(dtype);
        for &n in &[0usize, 1, 16, 333, 2048] {
            let n = n.div_ceil(dt.vpb) * dt.vpb;
            let codes = pattern_codes(dt, 1, n, rng.below_usize(2), &mut rng);
            let vals = model(dt, &codes);
            let g = place(Lay::Contig, &[n], dt.vpb);
            let xbuf = store(dt, &g, &codes, &mut rng);
            let x = ArrayView::new(dtype, &[n], &g.strides, g.offset, &xbuf).unwrap();
            let mask: Vec<bool> = (0..n).map(|_| rng.chance(1, 3)).collect();
            let kept: Vec<usize> = (0..n).filter(|&i| mask[i]).collect();
            // Compress into a destination exactly as long as the kept count
            // (packed: rounded up to whole bytes).
            let m = kept.len().div_ceil(dt.vpb) * dt.vpb;
            let gd = place(Lay::Contig, &[m], dt.vpb);
            let mut dbuf = vec![0u8; dt.buffer_bytes(gd.elems)];
            let c = compress(
                &x,
                &ArrayView::from_slice(&mask, &[n]).unwrap(),
                &mut ArrayViewMut::new(dtype, &[m], &gd.strides, gd.offset, &mut dbuf).unwrap(),
                &Exec::SEQ,
            )
            .unwrap();
            assert_eq!(c, kept.len());
            let got = load(dt, &gd, &dbuf);
            let want: Vec<u8> = kept
                .iter()
                .flat_map(|&i| codes[i * dt.item..(i + 1) * dt.item].to_vec())
                .collect();
            assert_eq!(
                &got[..c * dt.item],
                want.as_slice(),
                "{dtype} compress n {n}"
            );
            // Partition about a random element (or a special one).
            if n == 0 {
                continue;
            }
            let pi = rng.below_usize(n);
            let pcode = codes[pi * dt.item..(pi + 1) * dt.item].to_vec();
            let gp = place(Lay::Contig, &[1], dt.vpb);
            let pbuf = store(dt, &gp, &pcode, &mut rng);
            let pv = ArrayView::new(dtype, &[1], &gp.strides, gp.offset, &pbuf).unwrap();
            let mut obuf = vec![0u8; dt.buffer_bytes(g.elems)];
            let below = partition(
                &x,
                &pv,
                &mut ArrayViewMut::new(dtype, &[n], &g.strides, g.offset, &mut obuf).unwrap(),
                &Exec::SEQ,
            )
            .unwrap();
            let lo: Vec<usize> = (0..n)
                .filter(|&i| cmpv(&vals[i], &vals[pi]) == Ordering::Less)
                .collect();
            let hi: Vec<usize> = (0..n)
                .filter(|&i| cmpv(&vals[i], &vals[pi]) != Ordering::Less)
                .collect();
            assert_eq!(below, lo.len());
            let want: Vec<u8> = lo
                .iter()
                .chain(&hi)
                .flat_map(|&i| codes[i * dt.item..(i + 1) * dt.item].to_vec())
                .collect();
            assert_eq!(load(dt, &g, &obuf), want, "{dtype} partition n {n}");
        }
    }
}

#[test]
#[ignore = "a long sweep: sizes up to 2^20 and every dtype on every tier and thread count"]
fn long_sweep() {
    let mut rng = Rng::for_label("order/long", 18);
    let all = execs();
    for dtype in DType::ALL {
        let dt = Dt::of(dtype);
        for n in [1 << 12, 1 << 17, 1 << 20] {
            let codes = pattern_codes(dt, 1, n, rng.below_usize(6), &mut rng);
            check_sort(
                dt,
                &codes,
                &[1, n],
                1,
                n,
                rng.chance(1, 2),
                Lay::Contig,
                true,
                true,
                &all,
                &mut rng,
            );
            check_sort(
                dt,
                &codes,
                &[1, n],
                1,
                n / 100 / dt.vpb * dt.vpb,
                false,
                Lay::Contig,
                true,
                true,
                &all,
                &mut rng,
            );
        }
    }
}

#[allow(dead_code)]
fn unused(_: Geo) {}

#[test]
fn long_skewed_keys_make_buckets_from_their_values() {
    // Long slices whose keys crowd into a few top bits: floats of a few
    // binades, small integers in a wide type with one far outlier, keys
    // differing only in their low bits, two values. The top pass builds its
    // buckets from the keys' prefix counts; every shape must still give the
    // model's stable order, on one task and on several.
    let mut rng = Rng::for_label("order/skewed", 23);
    let n = 140_000;
    let le = |v: u64, w: usize| v.to_le_bytes()[..w].to_vec();
    let cases: Vec<(DType, Vec<u8>)> = vec![
        (
            DType::F32,
            (0..n)
                .flat_map(|_| (rng.unit() as f32).to_bits().to_le_bytes())
                .collect(),
        ),
        (
            DType::F64,
            (0..n)
                .flat_map(|_| (1.0 + 3.0 * rng.unit()).to_bits().to_le_bytes())
                .collect(),
        ),
        (
            DType::I64,
            (0..n)
                .flat_map(|i| {
                    let v: i64 = if i == n / 3 {
                        1 << 50
                    } else {
                        rng.below(1000) as i64 - 500
                    };
                    v.to_le_bytes()
                })
                .collect(),
        ),
        (
            DType::U32,
            (0..n).flat_map(|_| le(rng.below(1 << 13), 4)).collect(),
        ),
        (
            DType::U32,
            (0..n)
                .flat_map(|_| le(0xdead_0000 | rng.below(2), 4))
                .collect(),
        ),
        (
            DType::U16,
            (0..n).flat_map(|_| le(rng.below(1 << 16), 2)).collect(),
        ),
    ];
    for (dtype, codes) in cases {
        let dt = Dt::of(dtype);
        for desc in [false, true] {
            check_sort(
                dt,
                &codes,
                &[1, n],
                1,
                n,
                desc,
                Lay::Contig,
                true,
                desc,
                &[
                    Exec::SEQ,
                    Exec::default().threads(2),
                    Exec::default().threads(7),
                ],
                &mut rng,
            );
        }
    }
}

/// Codes of `n` elements of `dt` (an integer or IEEE float of 32 or 64
/// bits) in a pattern a quicksort finds hard: 0 random with specials, 1 all
/// equal, 2 two values, 3 eight values, 4 ascending bits, 5 descending
/// bits, 6 organ pipe, 7 all bits set (the largest key of unsigned
/// integers, a NaN of floats), 8 half the elements the least code and the
/// rest random, 9 sawtooth.
fn hard_codes(dt: Dt, n: usize, pat: usize, rng: &mut Rng) -> Vec<u8> {
    let w = dt.item;
    let pool = random_codes(dt, 8, rng, true);
    let random = random_codes(dt, n, rng, true);
    let mut out = Vec::with_capacity(n * w);
    for i in 0..n {
        let bits: u64 = match pat {
            1 => le(&pool[..w]),
            2 => le(&pool[(i % 2) * w..(i % 2 + 1) * w]) ^ (rng.below(2) * 3),
            3 => {
                let j = rng.below_usize(8);
                le(&pool[j * w..(j + 1) * w])
            }
            4 => (i as u64).wrapping_mul(0x9e37_79b9),
            5 => ((n - i) as u64).wrapping_mul(0x9e37_79b9),
            6 => i.min(n - i) as u64,
            7 => u64::MAX,
            8 if i % 2 == 0 => 0,
            9 => (i % 97) as u64,
            _ => le(&random[i * w..(i + 1) * w]),
        };
        out.extend_from_slice(&bits.to_le_bytes()[..w]);
    }
    out
}

/// Values alone of 32- and 64-bit dtypes: on an AVX-512 tier the keys sort
/// by a vector quicksort (register networks up to 16 registers, partitions
/// in groups, a pivot from a sample, a split-off run where the pivot is the
/// least key, a radix fallback past a depth), elsewhere by radix. Every
/// length across the network sizes and partition remainders, and patterns
/// made to hurt a quicksort, against the model on every tier and thread
/// count, ascending and descending, contiguous (sorted inside the
/// destination) and strided.
#[test]
fn values_alone_of_wide_keys_in_every_pattern_and_length() {
    let mut rng = Rng::for_label("order/vector-quicksort", 23);
    let execs = execs();
    let mut lengths: Vec<usize> = (0..=300).collect();
    lengths.extend([
        383, 384, 385, 511, 512, 513, 1000, 4095, 4096, 4097, 65535, 65536, 70001,
    ]);
    let mut cases = 0;
    for dtype in [
        DType::U32,
        DType::I32,
        DType::F32,
        DType::U64,
        DType::I64,
        DType::F64,
    ] {
        let dt = Dt::of(dtype);
        for &n in &lengths {
            // Every pattern at the longer lengths; one per length below 300.
            let pats: Vec<usize> = if n > 300 {
                (0..10).collect()
            } else {
                vec![n % 10]
            };
            for pat in pats {
                let codes = hard_codes(dt, n, pat, &mut rng);
                let desc = rng.below(2) == 1;
                let lay = if n >= 4096 && rng.below(2) == 0 {
                    Lay::Contig
                } else {
                    [Lay::Contig, Lay::EveryOther, Lay::Reversed][rng.below_usize(3)]
                };
                check_sort(
                    dt,
                    &codes,
                    &[n],
                    0,
                    n,
                    desc,
                    lay,
                    true,
                    false,
                    &execs,
                    &mut rng,
                );
                cases += 1;
            }
        }
    }
    let tiers: Vec<String> = available_tiers()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    let missing: Vec<&str> = ["scalar", "avx2", "avx512"]
        .into_iter()
        .filter(|t| !tiers.iter().any(|x| x == t))
        .collect();
    eprintln!("{cases} sorts on tiers {tiers:?}; skipped (not on this CPU): {missing:?}");
}
