//! Grouped contractions with `i64` ids and leading batch axes: each batch
//! element is grouped independently (its own ids, or ids shared by all), and
//! each group computes as an unsegmented call of its indices alone. Checked
//! against unsegmented `contract` calls of each group's indices (gathered
//! here), against the same grouped call per batch element, and for the
//! refusals.

mod common;

use common::{place, store, Dt, Lay, ALL_LAYS};
use tessera::contract::grouped::{contract_grouped_depth, contract_grouped_rows, Ids};
use tessera::{contract, ArrayView, ArrayViewMut, ContractSpec, DType, Error, Exec, Par};
use tessera_testkit::rng::Rng;

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in tessera::available_tiers() {
        for p in [Par::Seq, Par::threads(2), Par::threads(7)] {
            v.push(Exec::on(t).par(p));
        }
    }
    v
}

fn vals(rng: &mut Rng, n: usize, exact: bool) -> Vec<f32> {
    (0..n)
        .map(|_| {
            if exact {
                rng.range_i64(-8, 8) as f32
            } else {
                (rng.unit() - 0.5) as f32 * 2f32.powi(rng.range_i64(-6, 6) as i32)
            }
        })
        .collect()
}

/// `v` (C order of `shape`) in a buffer of layout `lay`.
fn placed(v: &[f32], shape: &[usize], lay: Lay) -> (Vec<u8>, common::Geo) {
    let g = place(lay, shape, 1);
    let codes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let buf = store(Dt::of(DType::F32), &g, &codes, &mut Rng::new(9));
    (buf, g)
}

fn view<'a>(buf: &'a [u8], g: &common::Geo) -> ArrayView<'a> {
    ArrayView::new(DType::F32, &g.shape, &g.strides, g.offset, buf).unwrap()
}

/// An unsegmented contraction of C-order `a` [m, k] and `b` [k, n] plus
/// `init` [m, n] (C order), in f32.
fn plain(
    a: &[f32],
    b: &[f32],
    init: &[f32],
    m: usize,
    k: usize,
    n: usize,
    exec: &Exec,
) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    contract(
        &ContractSpec::new(DType::F32).contracting(1, 0),
        &ArrayView::from_slice(a, &[m, k]).unwrap(),
        &ArrayView::from_slice(b, &[k, n]).unwrap(),
        Some(&ArrayView::from_slice(init, &[m, n]).unwrap()),
        &mut ArrayViewMut::from_slice(&mut out, &[m, n]).unwrap(),
        exec,
    )
    .unwrap();
    out
}

fn same(x: &[f32], y: &[f32]) -> bool {
    x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()) && x.len() == y.len()
}

/// Row groups over batch axes [2, 3] (b broadcast along the second), ids
/// per batch element (i64) or shared (u32), init broadcast along the first
/// batch axis; every group of every batch element against an unsegmented
/// call of its rows alone. The shapes are such that the whole call and each
/// group's own call choose the same order (lane: at most 4 columns), or the
/// values make every order exact (small integers).
#[test]
fn batched_row_groups_match_unsegmented_calls_of_each_group() {
    let mut rng = Rng::for_label("seg_rows", tessera_testkit::rng::seed());
    let bat = [2usize, 3];
    let nb = 6;
    for (r, k, n, g, exact) in [
        (7, 9, 3, 3, false),
        (12, 20, 8, 4, true),
        (5, 1200, 2, 2, false),
    ] {
        let a = vals(&mut rng, nb * r * k, exact);
        let b = vals(&mut rng, 2 * g * k * n, exact); // [2, 1, G, K, N]
        let init = vals(&mut rng, 3 * r * n, exact); // [1, 3, R, N]
        let shared = rng.chance(1, 2);
        let ids64: Vec<i64> = (0..if shared { r } else { nb * r })
            .map(|_| rng.below_usize(g) as i64)
            .collect();
        let ids32: Vec<u32> = ids64.iter().map(|&x| x as u32).collect();
        let lays = (
            *rng.pick(&ALL_LAYS),
            *rng.pick(&ALL_LAYS),
            *rng.pick(&ALL_LAYS),
        );
        let (ba, ga) = placed(&a, &[2, 3, r, k], lays.0);
        let (bb, gb) = placed(&b, &[2, 1, g, k, n], lays.1);
        let (bi_, gi_) = placed(&init, &[1, 3, r, n], lays.2);
        for exec in execs() {
            for ids in [Ids::I64(&ids64), Ids::U32(&ids32)] {
                let mut got = vec![f32::NAN; nb * r * n];
                contract_grouped_rows(
                    DType::F32,
                    &view(&ba, &ga),
                    &view(&bb, &gb),
                    ids,
                    Some(&view(&bi_, &gi_)),
                    &mut ArrayViewMut::from_slice(&mut got, &[2, 3, r, n]).unwrap(),
                    &exec,
                )
                .unwrap();
                for x in 0..bat[0] {
                    for y in 0..bat[1] {
                        let be = x * 3 + y;
                        let own = if shared {
                            &ids64[..]
                        } else {
                            &ids64[be * r..(be + 1) * r]
                        };
                        for gi in 0..g as i64 {
                            let rows: Vec<usize> = (0..r).filter(|&i| own[i] == gi).collect();
                            if rows.is_empty() {
                                continue;
                            }
                            let ga_: Vec<f32> = rows
                                .iter()
                                .flat_map(|&i| a[(be * r + i) * k..(be * r + i + 1) * k].to_vec())
                                .collect();
                            let gb_ = &b[(x * g + gi as usize) * k * n..][..k * n];
                            let gi_v: Vec<f32> = rows
                                .iter()
                                .flat_map(|&i| init[(y * r + i) * n..(y * r + i + 1) * n].to_vec())
                                .collect();
                            let want = plain(&ga_, gb_, &gi_v, rows.len(), k, n, &Exec::SEQ);
                            let got_rows: Vec<f32> = rows
                                .iter()
                                .flat_map(|&i| got[(be * r + i) * n..(be * r + i + 1) * n].to_vec())
                                .collect();
                            assert!(
                                same(&got_rows, &want),
                                "{r}x{k}x{n} g{g} batch ({x},{y}) group {gi} {lays:?} {exec:?}: {got_rows:?} vs {want:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Depth groups over a batch axis of 3 (a broadcast along it), ids per batch
/// element or shared, against unsegmented calls of each group's contracted
/// indices alone (K < 128·R·N, so both choose the same order), and the
/// batched call against the unbatched call of each batch element.
#[test]
fn batched_depth_groups_match_unsegmented_calls_of_each_group() {
    let mut rng = Rng::for_label("seg_depth", tessera_testkit::rng::seed());
    for (r, k, n, groups) in [(6, 40, 12, 3), (3, 50, 2, 4), (9, 8, 9, 2)] {
        let nb = 3;
        let a = vals(&mut rng, r * k, false); // [1, R, K]
        let b = vals(&mut rng, nb * k * n, false); // [3, K, N]
        let shared = rng.chance(1, 2);
        let ids: Vec<i64> = (0..if shared { k } else { nb * k })
            .map(|_| rng.below_usize(groups) as i64)
            .collect();
        let lays = (*rng.pick(&ALL_LAYS), *rng.pick(&ALL_LAYS));
        let (ba, ga) = placed(&a, &[1, r, k], lays.0);
        let (bb, gb) = placed(&b, &[nb, k, n], lays.1);
        for exec in execs() {
            let mut got = vec![f32::NAN; nb * groups * r * n];
            contract_grouped_depth(
                DType::F32,
                groups,
                &view(&ba, &ga),
                &view(&bb, &gb),
                &ids,
                None,
                &mut ArrayViewMut::from_slice(&mut got, &[nb, groups, r, n]).unwrap(),
                &exec,
            )
            .unwrap();
            for be in 0..nb {
                let own = if shared {
                    &ids[..]
                } else {
                    &ids[be * k..(be + 1) * k]
                };
                for gi in 0..groups {
                    let ks: Vec<usize> = (0..k).filter(|&q| own[q] == gi as i64).collect();
                    let ga_: Vec<f32> = (0..r)
                        .flat_map(|i| ks.iter().map(move |&q| (i, q)))
                        .map(|(i, q)| a[i * k + q])
                        .collect();
                    let gb_: Vec<f32> = ks
                        .iter()
                        .flat_map(|&q| b[(be * k + q) * n..(be * k + q + 1) * n].to_vec())
                        .collect();
                    let want = plain(&ga_, &gb_, &vec![0f32; r * n], r, ks.len(), n, &Exec::SEQ);
                    let part = &got[((be * groups + gi) * r) * n..][..r * n];
                    assert!(
                        same(part, &want),
                        "{r}x{k}x{n} batch {be} group {gi} {lays:?} {exec:?}"
                    );
                }
                // The unbatched call of this batch element: the same bits.
                let mut one = vec![0f32; groups * r * n];
                contract_grouped_depth(
                    DType::F32,
                    groups,
                    &ArrayView::from_slice(&a, &[r, k]).unwrap(),
                    &ArrayView::from_slice(&b[be * k * n..(be + 1) * k * n], &[k, n]).unwrap(),
                    own,
                    None,
                    &mut ArrayViewMut::from_slice(&mut one, &[groups, r, n]).unwrap(),
                    &exec,
                )
                .unwrap();
                assert!(same(&one, &got[be * groups * r * n..][..groups * r * n]));
            }
        }
    }
}

/// Refusals before any write: a negative or too large i64 id, a number of
/// ids that is neither the unbatched count nor that times the batch
/// elements, batch extents that differ and are not 1.
#[test]
fn batched_and_i64_refusals() {
    let a = vec![1f32; 2 * 3 * 4];
    let b = vec![1f32; 2 * 2 * 4 * 5];
    let va = ArrayView::from_slice(&a, &[2, 3, 4]).unwrap();
    let vb = ArrayView::from_slice(&b, &[2, 2, 4, 5]).unwrap();
    let cases: Vec<(Vec<i64>, &str)> = vec![
        (vec![0, -1, 1], "negative"),
        (vec![0, 2, 1], "too large"),
        (vec![0, 1, 1, 0], "length"),
        (vec![0, 1, 1, 0, 1, -5], "negative in a batch element"),
    ];
    for (ids, what) in cases {
        let mut d = vec![7f32; 2 * 3 * 5];
        let r = contract_grouped_rows(
            DType::F32,
            &va,
            &vb,
            &ids,
            None,
            &mut ArrayViewMut::from_slice(&mut d, &[2, 3, 5]).unwrap(),
            &Exec::default(),
        );
        assert!(
            matches!(r, Err(Error::Attribute { .. } | Error::Length { .. })),
            "{what}: {r:?}"
        );
        assert!(d.iter().all(|&x| x == 7.0), "{what}: wrote");
    }
    // Batch extents 2 and 3.
    let b3 = vec![1f32; 3 * 2 * 4 * 5];
    let mut d = vec![7f32; 2 * 3 * 5];
    let r = contract_grouped_rows(
        DType::F32,
        &va,
        &ArrayView::from_slice(&b3, &[3, 2, 4, 5]).unwrap(),
        &[0i64, 1, 1],
        None,
        &mut ArrayViewMut::from_slice(&mut d, &[2, 3, 5]).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    assert!(d.iter().all(|&x| x == 7.0));
    // Depth groups: a negative id.
    let bd = vec![1f32; 2 * 4 * 5];
    let mut dd = vec![7f32; 2 * 2 * 3 * 5];
    let r = contract_grouped_depth(
        DType::F32,
        2,
        &va,
        &ArrayView::from_slice(&bd, &[2, 4, 5]).unwrap(),
        &[0i64, 1, -1, 0],
        None,
        &mut ArrayViewMut::from_slice(&mut dd, &[2, 2, 3, 5]).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::Attribute { .. })), "{r:?}");
    assert!(dd.iter().all(|&x| x == 7.0));
}

/// Depth groups with most groups empty (the ids name a few of many): an
/// empty group's outputs are its init rounded through the accumulator (a
/// sum of no product adds nothing, not even a +0: a -0 init stays -0), or
/// +0 without init, in either order; a group with indices has the exact sum
/// of its products plus init (small integers: exact in any order). Checked
/// against that model for a chain-order shape (8 × 8, depth 16) and a
/// lane-order one (1 × 1, depth 4), with and without init, over 2,000
/// groups, on every tier and thread count.
#[test]
fn depth_groups_without_indices_hold_init_through_the_accumulator() {
    let mut rng = Rng::new(77);
    for (r, k, n, chain) in [(8usize, 16usize, 8usize, true), (1, 4, 1, false)] {
        // The documented rule: chain where R > 4, C > 4, R·C ≥ 64 and
        // K < 128·R·C.
        assert_eq!(chain, r > 4 && n > 4 && r * n >= 64 && k < 128 * r * n);
        let groups = 2000;
        let a = vals(&mut rng, r * k, true);
        let b = vals(&mut rng, k * n, true);
        // ids in a handful of groups, some shared.
        let ids: Vec<i64> = (0..k).map(|i| [3i64, 1999, 700, 3][i % 4]).collect();
        let init: Vec<f32> = (0..groups * r * n)
            .map(|i| match i % 5 {
                0 => -0.0,
                1 => 0.0,
                2 => 1.5,
                3 => -(i as f32),
                _ => 3.0e38,
            })
            .collect();
        for with_init in [true, false] {
            let want: Vec<u32> = (0..groups * r * n)
                .map(|o| {
                    let (g, i, j) = (o / (r * n), (o / n) % r, o % n);
                    let start = if with_init { init[o] as f64 } else { 0.0 };
                    let members: Vec<usize> = (0..k).filter(|&kk| ids[kk] == g as i64).collect();
                    let v = if members.is_empty() {
                        start
                    } else {
                        let s: f64 = members
                            .iter()
                            .map(|&kk| a[i * k + kk] as f64 * b[kk * n + j] as f64)
                            .sum();
                        start + s
                    };
                    (v as f32).to_bits()
                })
                .collect();
            for exec in execs() {
                let mut out = vec![0f32; groups * r * n];
                let av = ArrayView::from_slice(&a, &[r, k]).unwrap();
                let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
                let iv = ArrayView::from_slice(&init, &[groups, r, n]).unwrap();
                contract_grouped_depth(
                    DType::F64,
                    groups,
                    &av,
                    &bv,
                    Ids::I64(&ids),
                    with_init.then_some(&iv),
                    &mut ArrayViewMut::from_slice(&mut out, &[groups, r, n]).unwrap(),
                    &exec,
                )
                .unwrap();
                let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
                if let Some(o) = (0..got.len()).find(|&o| got[o] != want[o]) {
                    panic!(
                        "r {r} k {k} n {n} init {with_init} {exec:?}: output {o} (group {}) is {:?}, not {:?}",
                        o / (r * n),
                        f32::from_bits(got[o]),
                        f32::from_bits(want[o])
                    );
                }
            }
        }
    }
}
