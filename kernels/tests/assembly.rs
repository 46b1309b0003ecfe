//! Assemblies, padded loads and folds against independent models: the
//! assembly by a per-index scan of the pieces (last wins), the padded load
//! by the index arithmetic of its definition, the fold from the other
//! direction (for each destination index, its taps in C order), bit for bit
//! on every tier and at 1, 2 and 7 threads; refusals write nothing.

use tessera::assembly::{assemble, fold, AxisPad, Pad, PaddedLoad, Piece, Window};
use tessera::{available_tiers, ArrayView, ArrayViewMut, DType, Exec, ReduceOp};
use tessera_testkit::rng::Rng;

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in available_tiers() {
        for th in [1, 2, 7] {
            v.push(Exec::on(t).threads(th));
        }
    }
    v
}

fn c_index(index: &[usize], shape: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut k| {
            let mut idx = vec![0; shape.len()];
            for a in (0..shape.len()).rev() {
                idx[a] = k % shape[a];
                k /= shape[a];
            }
            idx
        })
        .collect()
}

fn random_f32(rng: &mut Rng) -> f32 {
    match rng.below_usize(10) {
        0 => f32::from_bits(0x7fc0_0000 | (rng.next_u64() as u32 & 0x3f_ffff)),
        1 => f32::from_bits(0xff80_0001 + (rng.next_u64() as u32 & 0xff)),
        2 => -0.0,
        3 => 1e-42,
        _ => ((rng.unit() - 0.5) * 64.0).round() as f32 / 4.0,
    }
}

#[test]
fn assemble_keeps_the_last_piece_and_the_fill_elsewhere() {
    let mut rng = Rng::new(0xa55);
    for case in 0..300 {
        let rank = 1 + rng.below_usize(3);
        let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below_usize(6)).collect();
        let n: usize = shape.iter().product();
        let fill = random_f32(&mut rng);
        let count = rng.below_usize(4);
        let mut pieces_data = Vec::new();
        for _ in 0..count {
            let start: Vec<usize> = shape.iter().map(|&d| rng.below_usize(d + 1)).collect();
            let ext: Vec<usize> = shape
                .iter()
                .zip(&start)
                .map(|(&d, &s)| rng.below_usize(d - s + 1))
                .collect();
            let m: usize = ext.iter().product();
            let vals: Vec<f32> = (0..m).map(|_| random_f32(&mut rng)).collect();
            pieces_data.push((start, ext, vals));
        }
        // The model: each index takes the last piece holding it.
        let mut want = vec![fill.to_bits(); n];
        for (start, ext, vals) in &pieces_data {
            for idx in indices(ext) {
                let at: Vec<usize> = idx.iter().zip(start).map(|(&i, &s)| i + s).collect();
                want[c_index(&at, &shape)] = vals[c_index(&idx, ext)].to_bits();
            }
        }
        // The pieces read reversed along their first axis (negative stride)
        // half the time; the destination transposed for rank 2.
        let reversed: Vec<Vec<f32>> = pieces_data
            .iter()
            .map(|(_, ext, vals)| {
                let mut r = vec![0f32; vals.len()];
                for idx in indices(ext) {
                    let mut j = idx.clone();
                    j[0] = ext[0] - 1 - idx[0];
                    r[c_index(&j, ext)] = vals[c_index(&idx, ext)];
                }
                r
            })
            .collect();
        let flip = rng.chance(1, 2);
        for exec in execs() {
            let pieces: Vec<Piece> = pieces_data
                .iter()
                .zip(&reversed)
                .map(|((start, ext, vals), rev)| {
                    let x = if flip && ext.iter().all(|&e| e > 0) {
                        let mut st = tessera::array::c_strides(ext);
                        let off = (ext[0] - 1) * st[0] as usize;
                        st[0] = -st[0];
                        ArrayView::from_slice_strided(rev, ext, &st, off).unwrap()
                    } else {
                        ArrayView::from_slice(vals, ext).unwrap()
                    };
                    Piece {
                        start: start.clone(),
                        x,
                    }
                })
                .collect();
            let mut out = vec![f32::from_bits(0x1234_5678); n];
            let got: Vec<u32> = if rank == 2 {
                // dst[i][j] stored at j * shape[0] + i.
                let st = [1isize, shape[0] as isize];
                let mut dv = ArrayViewMut::from_slice_strided(&mut out, &shape, &st, 0).unwrap();
                assemble(
                    Some(&ArrayView::from_slice(&[fill], &[]).unwrap()),
                    &pieces,
                    &mut dv,
                    &exec,
                )
                .unwrap();
                let mut back = vec![0u32; n];
                for i in 0..shape[0] {
                    for j in 0..shape[1] {
                        back[i * shape[1] + j] = out[j * shape[0] + i].to_bits();
                    }
                }
                back
            } else {
                let mut dv = ArrayViewMut::from_slice(&mut out, &shape).unwrap();
                assemble(
                    Some(&ArrayView::from_slice(&[fill], &[]).unwrap()),
                    &pieces,
                    &mut dv,
                    &exec,
                )
                .unwrap();
                out.iter().map(|v| v.to_bits()).collect()
            };
            assert_eq!(got, want, "case {case} {exec:?}");
        }
    }
}

#[test]
fn assemble_of_packed_codes_and_its_refusals() {
    // u4: two codes a byte, element 0 in the high half (a 0-d u4 view of
    // code 5 holds it there too).
    let fill_byte = [0x50u8];
    let fill = ArrayView::contiguous(DType::U4, &[], &fill_byte).unwrap();
    let a = [0xabu8, 0xcd]; // codes a b c d as a [1, 4] piece
    let pieces = [Piece {
        start: vec![1, 2],
        x: ArrayView::contiguous(DType::U4, &[1, 4], &a).unwrap(),
    }];
    let mut out = [0u8; 6]; // [2, 6]
    let mut dv = ArrayViewMut::contiguous(DType::U4, &[2, 6], &mut out).unwrap();
    assemble(Some(&fill), &pieces, &mut dv, &Exec::default()).unwrap();
    // Row 0: 5 5 5 5 5 5; row 1: 5 5 a b c d.
    assert_eq!(out, [0x55, 0x55, 0x55, 0x55, 0xab, 0xcd]);
    // A region leaving the destination, a wrong dtype, a wrong fill: nothing
    // written.
    let mut kept = [0x77u8; 6];
    let bad = [
        vec![Piece {
            start: vec![1, 4],
            x: ArrayView::contiguous(DType::U4, &[1, 4], &a).unwrap(),
        }],
        vec![Piece {
            start: vec![0, 0],
            x: ArrayView::contiguous(DType::U8, &[1, 2], &a).unwrap(),
        }],
    ];
    for pieces in &bad {
        let mut dv = ArrayViewMut::contiguous(DType::U4, &[2, 6], &mut kept).unwrap();
        assert!(assemble(Some(&fill), pieces, &mut dv, &Exec::default()).is_err());
    }
    // A fill of another dtype, a fill of two elements.
    let two = [0x12u8];
    for f in [
        ArrayView::contiguous(DType::U8, &[], &two).unwrap(),
        ArrayView::contiguous(DType::U4, &[2], &two).unwrap(),
    ] {
        let mut dv = ArrayViewMut::contiguous(DType::U4, &[2, 6], &mut kept).unwrap();
        assert!(assemble(Some(&f), &[], &mut dv, &Exec::default()).is_err());
    }
    assert_eq!(kept, [0x77; 6]);
}

/// A random pad of `shape`: pads up to 2, windows of 1–3 taps, strides and
/// dilations of 1–2, that fit.
fn random_pad(rng: &mut Rng, shape: &[usize]) -> Pad {
    let axes = shape
        .iter()
        .map(|&n| loop {
            let before = rng.below_usize(3);
            let after = rng.below_usize(3);
            let window = rng.chance(2, 3).then(|| Window {
                size: 1 + rng.below_usize(3),
                stride: 1 + rng.below_usize(2),
                dilation: 1 + rng.below_usize(2),
            });
            let p = n + before + after;
            if window.is_none_or(|w| p > (w.size - 1) * w.dilation) {
                break AxisPad {
                    before,
                    after,
                    window,
                };
            }
        })
        .collect();
    Pad { axes }
}

/// The operand element a load reads at `index` of its shape, or None for
/// the fill: the definition's arithmetic.
fn load_source(pad: &Pad, shape: &[usize], index: &[usize]) -> Option<Vec<usize>> {
    let rank = shape.len();
    let mut tap = rank;
    let mut at = Vec::with_capacity(rank);
    for a in 0..rank {
        let ap = pad.axes[a];
        let padded = match ap.window {
            None => index[a],
            Some(w) => {
                let t = index[tap];
                tap += 1;
                index[a] * w.stride + t * w.dilation
            }
        };
        if padded < ap.before || padded - ap.before >= shape[a] {
            return None;
        }
        at.push(padded - ap.before);
    }
    Some(at)
}

fn read_f32(v: &ArrayView, index: &[usize]) -> f32 {
    let pos = v.layout().offset as isize
        + index
            .iter()
            .zip(v.strides())
            .map(|(&i, &s)| i as isize * s)
            .sum::<isize>();
    let b = &v.data()[pos as usize * 4..pos as usize * 4 + 4];
    f32::from_le_bytes(b.try_into().unwrap())
}

#[test]
fn padded_loads_read_what_their_definition_says_and_feed_reduce() {
    let mut rng = Rng::new(0x9ad);
    for case in 0..200 {
        let rank = 1 + rng.below_usize(3);
        let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below_usize(5)).collect();
        let n: usize = shape.iter().product();
        let x: Vec<f32> = (0..n).map(|_| random_f32(&mut rng)).collect();
        let pad = random_pad(&mut rng, &shape);
        let fill = f32::NEG_INFINITY;
        // The operand broadcast along a new leading axis half the time (held
        // at one element in the copy).
        let bcast = rng.chance(1, 2);
        let (xv, full_shape, pad) = if bcast {
            let mut s = vec![3usize];
            s.extend(&shape);
            let mut st = vec![0isize];
            st.extend(tessera::array::c_strides(&shape));
            let mut p = Pad::none(1);
            p.axes.extend(pad.axes.iter().copied());
            (ArrayView::from_slice_strided(&x, &s, &st, 0).unwrap(), s, p)
        } else {
            (
                ArrayView::from_slice(&x, &shape).unwrap(),
                shape.clone(),
                pad,
            )
        };
        let fv = [fill];
        let load =
            PaddedLoad::new(&pad, &xv, Some(&ArrayView::from_slice(&fv, &[]).unwrap())).unwrap();
        let view = load.view();
        let ls = pad.load_shape(&full_shape).unwrap();
        assert_eq!(view.shape(), ls.as_slice());
        // The copy holds the padded operand once: the broadcast axis at one
        // element.
        let padded: usize = shape
            .iter()
            .zip(&pad.axes[full_shape.len() - shape.len()..])
            .map(|(&d, ap)| d + ap.before + ap.after)
            .product();
        assert_eq!(load.copy_bytes(), 4 * padded, "case {case}");
        for idx in indices(&ls) {
            let want = match load_source(&pad, &full_shape, &idx) {
                None => fill,
                Some(at) => {
                    let inner = if bcast { &at[1..] } else { &at[..] };
                    x[c_index(inner, &shape)]
                }
            };
            assert_eq!(
                read_f32(&view, &idx).to_bits(),
                want.to_bits(),
                "case {case} at {idx:?}"
            );
        }
        // Max pooling: reduce Max over the tap axes of the load.
        let taps: Vec<usize> = (full_shape.len()..ls.len()).collect();
        if taps.is_empty() {
            continue;
        }
        let kept: Vec<usize> = ls[..full_shape.len()].to_vec();
        let m: usize = kept.iter().product();
        let mut want = vec![f32::NEG_INFINITY; m];
        for idx in indices(&ls) {
            let o = c_index(&idx[..full_shape.len()], &kept);
            let v = read_f32(&view, &idx);
            if want[o].is_nan() {
                continue;
            }
            if v.is_nan() || v > want[o] || (v == want[o] && want[o].is_sign_negative()) {
                want[o] = if v.is_nan() { f32::NAN } else { v };
            }
        }
        for exec in execs() {
            let mut got = vec![0f32; m];
            tessera::reduce(
                ReduceOp::Max,
                &taps,
                &view,
                &mut ArrayViewMut::from_slice(&mut got, &kept).unwrap(),
                &exec,
            )
            .unwrap();
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "case {case}: {g} vs {w}"
                );
            }
        }
    }
}

/// The fold's model from the destination's side: for each index, its taps
/// in C order, each giving at most one window index, summed left to right
/// from the first term.
fn model_fold(pad: &Pad, shape: &[usize], x: &[f32]) -> Vec<u32> {
    let ls = pad.load_shape(shape).unwrap();
    let rank = shape.len();
    let windowed: Vec<usize> = (0..rank)
        .filter(|&a| pad.axes[a].window.is_some())
        .collect();
    let tap_shape: Vec<usize> = windowed
        .iter()
        .map(|&a| pad.axes[a].window.unwrap().size)
        .collect();
    indices(shape)
        .iter()
        .map(|p| {
            let mut acc: Option<f32> = None;
            for t in indices(&tap_shape) {
                let mut idx = Vec::with_capacity(ls.len());
                let mut ok = true;
                for a in 0..rank {
                    let ap = pad.axes[a];
                    let q = p[a] + ap.before;
                    match ap.window {
                        None => idx.push(q),
                        Some(w) => {
                            let j = windowed.iter().position(|&b| b == a).unwrap();
                            let back = t[j] * w.dilation;
                            if q < back
                                || !(q - back).is_multiple_of(w.stride)
                                || (q - back) / w.stride >= ls[a]
                            {
                                ok = false;
                                break;
                            }
                            idx.push((q - back) / w.stride);
                        }
                    }
                }
                if !ok {
                    continue;
                }
                idx.extend(&t);
                let v = x[c_index(&idx, &ls)];
                acc = Some(match acc {
                    None => v,
                    Some(s) => s + v,
                });
            }
            match acc {
                None => 0u32,
                Some(v) if v.is_nan() => f32::NAN.to_bits(),
                Some(v) => v.to_bits(),
            }
        })
        .collect()
}

#[test]
fn fold_sums_each_place_in_c_order_of_its_taps() {
    let mut rng = Rng::new(0xf01d);
    for case in 0..300 {
        let rank = 1 + rng.below_usize(3);
        let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.below_usize(5)).collect();
        let pad = random_pad(&mut rng, &shape);
        let ls = pad.load_shape(&shape).unwrap();
        let m: usize = ls.iter().product();
        let x: Vec<f32> = (0..m)
            .map(|_| {
                let v = random_f32(&mut rng);
                if rng.chance(1, 2) {
                    v * 1e7
                } else {
                    v
                }
            })
            .collect();
        let want = model_fold(&pad, &shape, &x);
        let n: usize = shape.iter().product();
        for exec in execs() {
            let mut out = vec![f32::from_bits(0x4242_4242); n];
            let xv = ArrayView::from_slice(&x, &ls).unwrap();
            let mut dv = ArrayViewMut::from_slice(&mut out, &shape).unwrap();
            fold(&pad, &xv, &mut dv, &exec).unwrap();
            let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "case {case} {exec:?} pad {pad:?}");
        }
    }
}

#[test]
fn fold_of_integers_wraps_and_refusals_write_nothing() {
    // A 1-D window of 3 over 4 elements, no pad: element j is read by the
    // windows j-2..=j.
    let pad = Pad {
        axes: vec![AxisPad {
            before: 0,
            after: 0,
            window: Some(Window::new(3)),
        }],
    };
    let x: Vec<i8> = vec![100, 100, 100, 100, 100, 100]; // [2 windows, 3 taps]
    let mut d = [0i8; 4];
    fold(
        &pad,
        &ArrayView::from_slice(&x, &[2, 3]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut d, &[4]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    // Element 1 and 2 are read twice: 200 wraps to -56 in i8.
    assert_eq!(d, [100, (200i32 as i8), (200i32 as i8), 100]);
    // Refusals: x of another shape, a window too long, another dtype, bool.
    let mut kept = [7i8; 4];
    let wrong = ArrayView::from_slice(&x, &[3, 2]).unwrap();
    assert!(fold(
        &pad,
        &wrong,
        &mut ArrayViewMut::from_slice(&mut kept, &[4]).unwrap(),
        &Exec::default()
    )
    .is_err());
    let long = Pad {
        axes: vec![AxisPad {
            before: 0,
            after: 0,
            window: Some(Window::new(9)),
        }],
    };
    assert!(fold(
        &long,
        &wrong,
        &mut ArrayViewMut::from_slice(&mut kept, &[4]).unwrap(),
        &Exec::default()
    )
    .is_err());
    let xf = [0f32; 6];
    assert!(fold(
        &pad,
        &ArrayView::from_slice(&xf, &[2, 3]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut kept, &[4]).unwrap(),
        &Exec::default()
    )
    .is_err());
    assert_eq!(kept, [7; 4]);
    let zero = Pad {
        axes: vec![AxisPad {
            before: 0,
            after: 0,
            window: Some(Window {
                size: 2,
                stride: 0,
                dilation: 1,
            }),
        }],
    };
    assert!(matches!(
        zero.load_shape(&[4]),
        Err(tessera::Error::Attribute { .. })
    ));
    assert!(matches!(
        Pad::none(2).load_shape(&[4]),
        Err(tessera::Error::Rank { .. })
    ));
}

#[test]
fn tile_repeats_the_pattern_axis_by_axis() {
    let mut rng = Rng::new(0x711e);
    for case in 0..200 {
        let rank = rng.below_usize(4);
        let pshape: Vec<usize> = (0..rank).map(|_| 1 + rng.below_usize(3)).collect();
        let shape: Vec<usize> = (0..rank).map(|_| rng.below_usize(7)).collect();
        let np: usize = pshape.iter().product();
        let n: usize = shape.iter().product();
        let pat: Vec<f32> = (0..np).map(|_| random_f32(&mut rng)).collect();
        let want: Vec<u32> = indices(&shape)
            .iter()
            .map(|i| {
                let j: Vec<usize> = i.iter().zip(&pshape).map(|(&a, &m)| a % m).collect();
                pat[c_index(&j, &pshape)].to_bits()
            })
            .collect();
        for exec in execs() {
            let mut out = vec![f32::from_bits(0x0bad_f00d); n];
            tessera::assembly::tile(
                &ArrayView::from_slice(&pat, &pshape).unwrap(),
                &mut ArrayViewMut::from_slice(&mut out, &shape).unwrap(),
                &exec,
            )
            .unwrap();
            let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "case {case}");
        }
    }
    // Packed codes: a u1 pattern 1 0 1 tiled over 8 bits.
    let p = [0b1010_0000u8];
    let mut out = [0u8];
    tessera::assembly::tile(
        &ArrayView::contiguous(DType::U1, &[1], &p).unwrap(),
        &mut ArrayViewMut::contiguous(DType::U1, &[8], &mut out).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert_eq!(out, [0xff]);
    let p3 = [0b1010_0000u8];
    let v = ArrayView::new(DType::U1, &[3], &[1], 0, &p3);
    // A 3-element packed axis is not whole bytes: the layout is refused.
    assert!(v.is_err());
    let mut kept = [9u8; 2];
    let empty = [0u8; 0];
    assert!(tessera::assembly::tile(
        &ArrayView::contiguous(DType::U8, &[0], &empty).unwrap(),
        &mut ArrayViewMut::contiguous(DType::U8, &[2], &mut kept).unwrap(),
        &Exec::default()
    )
    .is_err());
    assert_eq!(kept, [9, 9]);
}

/// The lane-order sum (ARCHITECTURE.md §5.3) of at most 1024 f32 terms.
fn lane_sum_f32(t: &[f32]) -> f32 {
    let mut l: Vec<Option<f32>> = vec![None; 16];
    for (j, &v) in t.iter().enumerate() {
        l[j % 16] = Some(l[j % 16].unwrap_or(0.0) + v);
    }
    for w in [8, 4, 2, 1] {
        for i in 0..w {
            if let Some(r) = l[i + w] {
                l[i] = Some(l[i].unwrap_or(0.0) + r);
            }
        }
    }
    l[0].unwrap_or(0.0)
}

#[test]
fn sparse_dot_sums_the_row_in_lane_order_and_skips_stray_columns() {
    let mut rng = Rng::new(0x5ba2);
    for case in 0..300 {
        let nnz = rng.below_usize(300);
        let nx = 1 + rng.below_usize(50);
        let x: Vec<f32> = (0..nx).map(|_| random_f32(&mut rng)).collect();
        let v: Vec<f32> = (0..nnz)
            .map(|_| {
                if rng.chance(1, 30) {
                    f32::INFINITY
                } else {
                    random_f32(&mut rng)
                }
            })
            .collect();
        let idx: Vec<i32> = (0..nnz)
            .map(|_| rng.below_usize(nx + 6) as i32 - 3)
            .collect();
        // Terms by hand: a stray column contributes nothing (−0).
        let terms: Vec<f32> = v
            .iter()
            .zip(&idx)
            .map(|(&a, &c)| {
                if c >= 0 && (c as usize) < nx {
                    a * x[c as usize]
                } else {
                    -0.0
                }
            })
            .collect();
        let want = lane_sum_f32(&terms);
        for exec in execs() {
            let mut out = [0f32];
            tessera::reduce::sparse_dot(
                &ArrayView::from_slice(&v, &[nnz]).unwrap(),
                &ArrayView::from_slice(&idx, &[nnz]).unwrap(),
                &ArrayView::from_slice(&x, &[nx]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            assert!(
                out[0].to_bits() == want.to_bits() || (out[0].is_nan() && want.is_nan()),
                "case {case}: {} vs {want}",
                out[0]
            );
        }
    }
    // Refusals: mismatched lengths, integer values, a non-0-d destination.
    let v = [1f32, 2.0];
    let i3 = [0i64, 1, 2];
    let x = [1f32; 4];
    let mut out = [5f32];
    assert!(tessera::reduce::sparse_dot(
        &ArrayView::from_slice(&v, &[2]).unwrap(),
        &ArrayView::from_slice(&i3, &[3]).unwrap(),
        &ArrayView::from_slice(&x, &[4]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
        &Exec::default(),
    )
    .is_err());
    let vi = [1i32, 2];
    let i2 = [0i64, 1];
    assert!(tessera::reduce::sparse_dot(
        &ArrayView::from_slice(&vi, &[2]).unwrap(),
        &ArrayView::from_slice(&i2, &[2]).unwrap(),
        &ArrayView::from_slice(&x, &[4]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
        &Exec::default(),
    )
    .is_err());
    assert_eq!(out, [5.0]);
}
