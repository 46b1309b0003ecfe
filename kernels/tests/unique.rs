//! unique against a slow model written here (a linear search over the keys
//! met so far): few, many and all-distinct keys, runs of equal rows, keys
//! of 0 to 5 words, spans small enough for the direct table and not,
//! strided keys; identical results under two hash seeds, on 1, 2 and 7
//! threads and every tier; first/counts longer and shorter than k;
//! refusals that write nothing.

#![allow(clippy::needless_range_loop)]

use tessera::unique::{set_seed_for_tests, unique};
use tessera::{available_tiers, ArrayView, ArrayViewMut, DType, Error, Exec};
use tessera_testkit::rng::Rng;

struct Out {
    ids: Vec<i64>,
    first: Vec<i64>,
    counts: Vec<i64>,
    count: i64,
}

/// The model: each row's number by a search of the keys met so far.
fn model(keys: &[u64], n: usize, w: usize, m: usize) -> Out {
    let mut seen: Vec<usize> = Vec::new();
    let mut ids = Vec::new();
    let mut counts: Vec<i64> = Vec::new();
    for r in 0..n {
        let row = &keys[r * w..r * w + w];
        match seen.iter().position(|&f| &keys[f * w..f * w + w] == row) {
            Some(g) => {
                ids.push(g as i64);
                counts[g] += 1;
            }
            None => {
                ids.push(seen.len() as i64);
                seen.push(r);
                counts.push(1);
            }
        }
    }
    let k = seen.len();
    Out {
        ids,
        first: (0..m)
            .map(|g| if g < k { seen[g] as i64 } else { n as i64 })
            .collect(),
        counts: (0..m).map(|g| if g < k { counts[g] } else { 0 }).collect(),
        count: k as i64,
    }
}

fn run(keys: &ArrayView<'_>, n: usize, m: usize, exec: &Exec) -> Out {
    let mut ids = vec![-7i64; n];
    let mut first = vec![-7i64; m];
    let mut counts = vec![-7i64; m];
    let count = unique(
        keys,
        &mut ArrayViewMut::from_slice(&mut ids, &[n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut first, &[m]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut counts, &[m]).unwrap(),
        exec,
    )
    .unwrap();
    Out {
        ids,
        first,
        counts,
        count: count as i64,
    }
}

fn same(a: &Out, b: &Out) -> bool {
    a.ids == b.ids && a.first == b.first && a.counts == b.counts && a.count == b.count
}

/// Keys of a few kinds: drawn from `distinct` random rows (large words),
/// or small words (spans the direct table takes), with runs of repeats.
fn keys(rng: &mut Rng, n: usize, w: usize, distinct: usize, small: bool) -> Vec<u64> {
    let pool: Vec<u64> = (0..distinct.max(1) * w)
        .map(|_| {
            if small {
                rng.below(8) + 1000
            } else {
                rng.next_u64()
            }
        })
        .collect();
    let mut out = Vec::with_capacity(n * w);
    let mut r = 0;
    while r < n {
        let g = rng.below_usize(distinct.max(1));
        let run = if rng.chance(1, 4) {
            1 + rng.below_usize(4)
        } else {
            1
        };
        for _ in 0..run.min(n - r) {
            out.extend_from_slice(&pool[g * w..g * w + w]);
            r += 1;
        }
    }
    out
}

#[test]
fn unique_matches_the_model() {
    let mut rng = Rng::for_label("unique", tessera_testkit::rng::seed());
    for case in 0..200 {
        let n = rng.below_usize(300);
        let w = rng.below_usize(6);
        let distinct = 1 + rng.below_usize(if case % 3 == 0 { 400 } else { 12 });
        let small = rng.chance(1, 2);
        let k = keys(&mut rng, n, w, distinct, small);
        let m = rng.below_usize(20);
        let want = model(&k, n, w, m);
        let exec = Exec::default().threads(1 + rng.below_usize(7));
        let got = run(&ArrayView::from_slice(&k, &[n, w]).unwrap(), n, m, &exec);
        assert!(same(&got, &want), "case {case}: n {n} w {w}");
    }
}

#[test]
fn strided_and_signed_keys() {
    let mut rng = Rng::for_label("unique strided", tessera_testkit::rng::seed());
    let (n, w) = (200, 2);
    let k = keys(&mut rng, n, w, 30, false);
    let want = model(&k, n, w, 40);
    // The same rows stored reversed and with a gap: row r at (n-1-r).
    let mut buf = vec![0u64; n * 3];
    for r in 0..n {
        for c in 0..w {
            buf[(n - 1 - r) * 3 + c] = k[r * w + c];
        }
    }
    let v = ArrayView::from_slice_strided(&buf, &[n, w], &[-3, 1], (n - 1) * 3).unwrap();
    assert!(same(&run(&v, n, 40, &Exec::default()), &want));
    // i64 keys are the same words.
    let ki: Vec<i64> = k.iter().map(|&x| x as i64).collect();
    let v = ArrayView::from_slice(&ki, &[n, w]).unwrap();
    assert!(same(&run(&v, n, 40, &Exec::default()), &want));
}

#[test]
fn results_do_not_depend_on_seed_threads_or_tier() {
    let mut rng = Rng::for_label("unique big", tessera_testkit::rng::seed());
    // Few, many and all-distinct keys of one word (the sample sends the last
    // two to one thread, whose table starts sized from the sample); small
    // spans; two words.
    let n = 200_000;
    let cases: Vec<(usize, Vec<u64>)> = vec![
        (1, keys(&mut rng, n, 1, 50, false)),
        (1, keys(&mut rng, n, 1, 60_000, false)),
        (1, (0..n).map(|_| rng.next_u64()).collect()),
        (1, (0..n).map(|_| rng.below(5000)).collect()),
        // Small spans for most rows, then wide ones: the span scan must read
        // every row (it stops early only once spans are too wide).
        (
            1,
            (0..n)
                .map(|i| {
                    if i < 150_000 {
                        rng.below(100)
                    } else {
                        rng.next_u64()
                    }
                })
                .collect(),
        ),
        // A sample of few keys (the table starts at its least size), then
        // distinct keys: it grows past the size whose growth prefetches.
        (
            1,
            (0..n)
                .map(|i| {
                    if i < 20_000 {
                        rng.below(10)
                    } else {
                        rng.next_u64()
                    }
                })
                .collect(),
        ),
        (2, keys(&mut rng, n, 2, 20_000, false)),
        (3, keys(&mut rng, n, 3, 100, true)),
    ];
    for (ci, (w, k)) in cases.iter().enumerate() {
        let rows = k.len() / w;
        let v = ArrayView::from_slice(k, &[rows, *w]).unwrap();
        let mut first: Option<Out> = None;
        for seed in [Some(1u64), Some(0xDEAD_BEEF_u64), None] {
            set_seed_for_tests(seed);
            for t in available_tiers() {
                for th in [1, 2, 7] {
                    let got = run(&v, rows, rows + 3, &Exec::on(t).threads(th));
                    match &first {
                        None => first = Some(got),
                        Some(f) => assert!(same(f, &got), "case {ci} seed {seed:?} {t} {th}"),
                    }
                }
            }
        }
        set_seed_for_tests(None);
        // And a second model, by std's HashMap, agrees.
        let f = first.unwrap();
        let mut map = std::collections::HashMap::new();
        let mut want = Out {
            ids: Vec::with_capacity(rows),
            first: vec![rows as i64; rows + 3],
            counts: vec![0; rows + 3],
            count: 0,
        };
        for r in 0..rows {
            let next = map.len() as i64;
            let id = *map.entry(&k[r * w..r * w + w]).or_insert(next);
            if id == next {
                want.first[id as usize] = r as i64;
            }
            want.counts[id as usize] += 1;
            want.ids.push(id);
        }
        want.count = map.len() as i64;
        assert!(same(&f, &want), "case {ci}");
    }
}

#[test]
fn empty_keys_and_zero_words() {
    let k: [u64; 0] = [];
    let out = run(
        &ArrayView::from_slice(&k, &[0, 3]).unwrap(),
        0,
        2,
        &Exec::default(),
    );
    assert_eq!(
        (out.first, out.counts, out.count),
        (vec![0, 0], vec![0, 0], 0)
    );
    let out = run(
        &ArrayView::from_slice(&k, &[5, 0]).unwrap(),
        5,
        2,
        &Exec::default(),
    );
    assert_eq!(out.ids, vec![0; 5]);
    assert_eq!(
        (out.first, out.counts, out.count),
        (vec![0, 5], vec![5, 0], 1)
    );
}

#[test]
fn refusals_write_nothing() {
    let e = Exec::default();
    let k = [1u64, 2, 1, 3];
    let kf = [1.0f64; 4];
    let mut ids = [-7i64; 4];
    let mut first = [-7i64; 2];
    let mut counts = [-7i64; 2];
    let mut ids32 = [-7i32; 4];
    macro_rules! call {
        ($keys:expr, $ids:expr, $first:expr, $counts:expr) => {
            unique($keys, $ids, $first, $counts, &e)
        };
    }
    let kv = ArrayView::from_slice(&k, &[4, 1]).unwrap();
    let results = [
        (
            "f64 keys",
            call!(
                &ArrayView::from_slice(&kf, &[4, 1]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut ids, &[4]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut first, &[2]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut counts, &[2]).unwrap()
            ),
        ),
        (
            "rank-1 keys",
            call!(
                &ArrayView::from_slice(&k, &[4]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut ids, &[4]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut first, &[2]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut counts, &[2]).unwrap()
            ),
        ),
        (
            "ids of 3",
            call!(
                &kv,
                &mut ArrayViewMut::from_slice(&mut ids[..3], &[3]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut first, &[2]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut counts, &[2]).unwrap()
            ),
        ),
        (
            "counts of 1",
            call!(
                &kv,
                &mut ArrayViewMut::from_slice(&mut ids, &[4]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut first, &[2]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut counts[..1], &[1]).unwrap()
            ),
        ),
        (
            "overlapping ids",
            call!(
                &kv,
                &mut ArrayViewMut::from_slice_strided(&mut ids, &[4], &[0], 0).unwrap(),
                &mut ArrayViewMut::from_slice(&mut first, &[2]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut counts, &[2]).unwrap()
            ),
        ),
        (
            "i32 ids",
            call!(
                &kv,
                &mut ArrayViewMut::from_slice(&mut ids32, &[4]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut first, &[2]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut counts, &[2]).unwrap()
            ),
        ),
    ];
    for (what, r) in results {
        assert!(r.is_err(), "{what}");
    }
    assert!(ids.iter().chain(&first).chain(&counts).all(|&v| v == -7));
    assert!(ids32.iter().all(|&v| v == -7));
    // Too many rows: 2^40 − 1 rows of zero words fit in no bytes.
    let none: [u64; 0] = [];
    // An empty view (an extent of 0) is valid whatever its other extents
    // (ARCHITECTURE.md §4), so this call is always made.
    let big = ArrayView::new(
        DType::U64,
        &[(1 << 40) - 1, 0],
        &[0, 1],
        0,
        tessera::array::as_bytes(&none),
    )
    .expect("an empty view of 2^40 - 1 rows of no word is valid");
    {
        let mut f = [0i64; 0];
        let mut c = [0i64; 0];
        let mut ids0: [i64; 0] = [];
        let r = unique(
            &big,
            &mut ArrayViewMut::from_slice(&mut ids0, &[0]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut f, &[0]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut c, &[0]).unwrap(),
            &e,
        );
        assert!(matches!(r, Err(Error::Length { .. })), "{r:?}");
    }
}
