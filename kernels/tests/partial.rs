//! Partial states of reductions (`reduce::partial`): the terms of a
//! reduction cut into ranges (of 0, 1, 1023, 1024, 1025 terms, across block
//! and tree boundaries, at random), each range reduced apart on its own tier
//! and thread count, the states merged in any grouping and through their
//! bytes, give the single `reduce` call's bits for every reduction and
//! dtype it takes; damaged bytes, ranges that do not follow each other and
//! wrong centres are refused.

use tessera::reduce::{
    partial_stages, reduce_centres, reduce_finish, reduce_partial, Centres, Partial, TermRange,
};
use tessera::{
    available_tiers, cast, reduce_terms, ArrayView, ArrayViewMut, CastMode, DType, Error, Exec,
    ReduceOp, Terms,
};
use tessera_testkit::rng::Rng;

/// Every dtype (a packed one is cut only where its bytes are: 1-D, at
/// multiples of its values per byte).
fn dtypes() -> Vec<DType> {
    DType::ALL.to_vec()
}

/// Values of `dtype` per byte (1 for whole-byte dtypes).
fn per_byte(dtype: DType) -> usize {
    dtype.info().values_per_byte as usize
}

/// Bytes of `count` elements of `dtype`.
fn bytes_for(count: usize, dtype: DType) -> usize {
    count.div_ceil(per_byte(dtype)) * dtype.info().item_bytes
}

/// Values of a float spread over magnitudes, with NaNs, ±0, infinities and
/// subnormals now and then.
fn value(rng: &mut Rng, wild: bool) -> f64 {
    if wild {
        match rng.below(40) {
            0 => return f64::NAN,
            1 => return -0.0,
            2 => return 0.0,
            3 => return f64::INFINITY,
            4 => return f64::NEG_INFINITY,
            5 => return 1e-310,
            6 => return -3e-42,
            _ => {}
        }
    }
    (rng.unit() - 0.5) * 2f64.powi(rng.below(12) as i32 - 6)
}

/// `count` elements of `dtype` as bytes.
fn elements(rng: &mut Rng, dtype: DType, count: usize, wild: bool) -> Vec<u8> {
    let info = dtype.info();
    match dtype {
        DType::F64 | DType::C128 => {
            let k = if dtype == DType::C128 { 2 } else { 1 };
            (0..count * k)
                .flat_map(|_| value(rng, wild).to_le_bytes())
                .collect()
        }
        DType::F32 | DType::C64 => {
            let k = if dtype == DType::C64 { 2 } else { 1 };
            (0..count * k)
                .flat_map(|_| (value(rng, wild) as f32).to_le_bytes())
                .collect()
        }
        _ if info.class == tessera::Class::Float => {
            let v: Vec<f32> = (0..count).map(|_| value(rng, wild) as f32).collect();
            let mut out = vec![0u8; bytes_for(count, dtype)];
            let x = ArrayView::from_slice(&v, &[count]).unwrap();
            let mut d = ArrayViewMut::contiguous(dtype, &[count], &mut out).unwrap();
            cast(CastMode::Default, &x, &mut d, &Exec::default()).unwrap();
            out
        }
        _ => (0..bytes_for(count, dtype))
            .map(|_| rng.next_u32() as u8)
            .collect(),
    }
}

/// How the terms are formed from one or two operands.
#[derive(Clone, Copy, Debug)]
enum Form {
    Value,
    Square,
    Product,
    SquaredDifference,
}

fn terms<'v, 'a>(form: Form, x: &'v ArrayView<'a>, y: &'v ArrayView<'a>) -> Terms<'v, 'a> {
    match form {
        Form::Value => Terms::of(x),
        Form::Square => Terms::square(x),
        Form::Product => Terms::product(x, y),
        Form::SquaredDifference => Terms::squared_difference(x, y),
    }
}

/// One reduction of a C-order array of `shape` along `axes` (axis 0 among
/// them) cut by rows at `cuts`.
struct Case<'c> {
    dtype: DType,
    shape: &'c [usize],
    axes: &'c [usize],
    op: ReduceOp,
    form: Form,
}

fn out_dtype(c: &Case) -> DType {
    if matches!(c.op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
        DType::I64
    } else {
        c.dtype
    }
}

/// The single call's bytes.
fn whole_call(c: &Case, x: &[u8], y: &[u8], exec: &Exec) -> Result<Vec<u8>, Error> {
    let xv = ArrayView::contiguous(c.dtype, c.shape, x).unwrap();
    let yv = ArrayView::contiguous(c.dtype, c.shape, y).unwrap();
    let od = out_dtype(c);
    let oshape: Vec<usize> = (0..c.shape.len())
        .filter(|a| !c.axes.contains(a))
        .map(|a| c.shape[a])
        .collect();
    let n: usize = oshape.iter().product();
    let mut out = vec![0xA5u8; bytes_for(n, od)];
    let mut d = ArrayViewMut::contiguous(od, &oshape, &mut out).unwrap();
    reduce_terms(c.axes, terms(c.form, &xv, &yv), &mut [(c.op, &mut d)], exec)?;
    Ok(out)
}

/// The state of rows `r0..r1` for one stage.
fn rows_state(
    c: &Case,
    (x, y): (&[u8], &[u8]),
    (r0, r1): (usize, usize),
    centres: Option<&Centres>,
    exec: &Exec,
) -> Result<Partial, Error> {
    // Rows cut where whole bytes begin (a packed dtype: 1-D, cuts at
    // multiples of its values per byte).
    let row: usize = c.shape[1..].iter().product();
    let (b0, b1) = (bytes_for(r0 * row, c.dtype), bytes_for(r1 * row, c.dtype));
    let mut local = c.shape.to_vec();
    local[0] = r1 - r0;
    let xv = ArrayView::contiguous(c.dtype, &local, &x[b0..b1]).unwrap();
    let yv = ArrayView::contiguous(c.dtype, &local, &y[b0..b1]).unwrap();
    // Terms per row of axis 0 among the reduced axes.
    let per: usize = c
        .axes
        .iter()
        .filter(|&&a| a != 0)
        .map(|&a| c.shape[a])
        .product();
    let range = TermRange {
        start: r0 * per,
        total: c.shape[0] * per,
    };
    reduce_partial(c.op, c.axes, terms(c.form, &xv, &yv), range, centres, exec)
}

/// The states of consecutive ranges merged by a random grouping (a random
/// split, each side merged the same way).
fn merge_any(rng: &mut Rng, parts: &[Partial]) -> Partial {
    if parts.len() == 1 {
        return parts[0].clone();
    }
    let k = 1 + rng.below_usize(parts.len() - 1);
    let a = merge_any(rng, &parts[..k]);
    let b = merge_any(rng, &parts[k..]);
    a.merge(&b).unwrap()
}

/// The reduction computed range by range at `cuts` (row boundaries), each
/// range on an exec of `execs` in turn, merged left to right, by a random
/// grouping and through bytes (all three must be one state), finished.
fn by_ranges(
    rng: &mut Rng,
    c: &Case,
    data: (&[u8], &[u8]),
    cuts: &[usize],
    execs: &[Exec],
) -> Vec<u8> {
    let mut bounds = vec![0];
    let step = per_byte(c.dtype);
    bounds.extend(cuts.iter().map(|&k| k.min(c.shape[0]) / step * step));
    bounds.push(c.shape[0]);
    let mut centres: Option<Centres> = None;
    let mut last = None;
    for stage in 0..partial_stages(c.op) {
        let parts: Vec<Partial> = bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let exec = &execs[i % execs.len()];
                rows_state(c, data, (w[0], w[1]), centres.as_ref(), exec).unwrap()
            })
            .collect();
        let left = Partial::combine(&parts).unwrap();
        let grouped = merge_any(rng, &parts);
        assert_eq!(left, grouped, "{c:?}: a grouping changed the state");
        let moved: Vec<Partial> = parts
            .iter()
            .map(|p| Partial::from_bytes(&p.to_bytes()).unwrap())
            .collect();
        assert_eq!(
            Partial::combine(&moved).unwrap(),
            left,
            "{c:?}: the bytes changed the state"
        );
        assert!(left.is_whole());
        if stage + 1 < partial_stages(c.op) {
            let cs = reduce_centres(&left).unwrap();
            centres = Some(Centres::from_bytes(&cs.to_bytes()).unwrap());
        }
        last = Some(left);
    }
    let od = out_dtype(c);
    let oshape: Vec<usize> = (0..c.shape.len())
        .filter(|a| !c.axes.contains(a))
        .map(|a| c.shape[a])
        .collect();
    let n: usize = oshape.iter().product();
    let mut out = vec![0xA5u8; bytes_for(n, od)];
    let mut d = ArrayViewMut::contiguous(od, &oshape, &mut out).unwrap();
    reduce_finish(
        last.as_ref().unwrap(),
        centres.as_ref(),
        &mut d,
        &Exec::default(),
    )
    .unwrap();
    out
}

impl std::fmt::Debug for Case<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {:?} {} {:?} along {:?}",
            self.op.name(),
            self.form,
            self.dtype,
            self.shape,
            self.axes
        )
    }
}

/// Random row cuts of `rows` (sorted, repeats allowed: empty ranges).
fn random_cuts(rng: &mut Rng, rows: usize) -> Vec<usize> {
    let k = rng.below_usize(6);
    let mut v: Vec<usize> = (0..k).map(|_| rng.below_usize(rows + 1)).collect();
    v.sort_unstable();
    v
}

fn execs_mixed() -> Vec<Exec> {
    // Ranges run on every tier this CPU has; a tier it lacks is skipped,
    // and said so.
    let have = available_tiers();
    for t in tessera::Tier::ALL {
        if !have.contains(&t) {
            eprintln!(
                "partial states: tier {} skipped (this CPU lacks it)",
                t.name()
            );
        }
    }
    let mut v = Vec::new();
    for (i, t) in available_tiers().into_iter().enumerate() {
        v.push(Exec::on(t).threads(1 + 2 * (i % 2)));
    }
    v
}

fn check(rng: &mut Rng, c: &Case, cut_sets: &[Vec<usize>], wild: bool) -> usize {
    let count: usize = c.shape.iter().product();
    let x = elements(rng, c.dtype, count, wild);
    let y = elements(rng, c.dtype, count, wild);
    let want = match whole_call(c, &x, &y, &Exec::default()) {
        Ok(w) => w,
        // What the single call refuses (a Max of no term) is refused by
        // the finish too.
        Err(_) => return 0,
    };
    let execs = execs_mixed();
    for cuts in cut_sets {
        let got = by_ranges(rng, c, (&x, &y), cuts, &execs);
        assert_eq!(got, want, "{c:?} cut at {cuts:?}");
    }
    cut_sets.len()
}

#[test]
fn every_reduction_and_dtype_cut_into_ranges_gives_the_single_calls_bits() {
    let mut rng = Rng::for_label("partial-all", tessera_testkit::rng::seed());
    let mut checked = 0;
    for dtype in dtypes() {
        for op in ReduceOp::ALL {
            if op == ReduceOp::Sum2 || !op.accepts(dtype) {
                continue;
            }
            // 1-D, cut across the first block boundaries and at random.
            for n in [0usize, 1, 17, 1023, 1024, 1025, 3100] {
                // A packed axis fills whole bytes.
                let n = n / per_byte(dtype) * per_byte(dtype);
                let shape = [n];
                let c = Case {
                    dtype,
                    shape: &shape,
                    axes: &[0],
                    op,
                    form: Form::Value,
                };
                let mut cuts = vec![vec![]];
                if n > 0 {
                    cuts.push(vec![n / 2]);
                }
                if n >= 1025 {
                    cuts.push(vec![1, 1023, 1024, 1025, 1025]);
                    cuts.push(vec![5, 700, 2050]);
                    cuts.push((0..n).step_by(300).collect());
                }
                cuts.push(random_cuts(&mut rng, n));
                checked += check(&mut rng, &c, &cuts, true);
            }
            if per_byte(dtype) > 1 {
                continue;
            }
            // Outputs along a kept axis, the leading axis reduced.
            let shape = [37, 5, 3];
            for axes in [&[0usize][..], &[0, 2]] {
                let c = Case {
                    dtype,
                    shape: &shape,
                    axes,
                    op,
                    form: Form::Value,
                };
                let cuts = [vec![3, 3, 20], random_cuts(&mut rng, 37)];
                checked += check(&mut rng, &c, &cuts, true);
            }
        }
    }
    eprintln!("{checked} cuttings checked");
    assert!(checked > 1000, "{checked} cuttings checked");
}

#[test]
fn long_reductions_across_tree_nodes_and_threads() {
    // Enough blocks (and terms for threads to split a node) that the
    // states hold nodes of several heights.
    let mut rng = Rng::for_label("partial-long", tessera_testkit::rng::seed());
    for (dtype, op) in [
        (DType::F32, ReduceOp::Sum),
        (DType::F64, ReduceOp::Sum),
        (DType::F32, ReduceOp::Logsumexp),
        (DType::F64, ReduceOp::Variance),
        (DType::Bf16, ReduceOp::ArgMax),
        (DType::C64, ReduceOp::Prod),
        (DType::I32, ReduceOp::Sum),
    ] {
        let shape = [150_001];
        let c = Case {
            dtype,
            shape: &shape,
            axes: &[0],
            op,
            form: Form::Value,
        };
        let cuts = [
            vec![65_536, 65_537, 131_072],
            vec![1, 40_000, 99_999, 149_000],
            random_cuts(&mut rng, 150_001),
        ];
        check(&mut rng, &c, &cuts, false);
    }
}

#[test]
fn dots_norms_and_distances_cut_into_ranges() {
    let mut rng = Rng::for_label("partial-terms", tessera_testkit::rng::seed());
    for dtype in [DType::F32, DType::F64, DType::F16, DType::Bf16] {
        for (form, op) in [
            (Form::Product, ReduceOp::Sum),
            (Form::SquaredDifference, ReduceOp::Sum),
            (Form::Square, ReduceOp::Sum),
            (Form::Value, ReduceOp::L2Norm),
            (Form::Product, ReduceOp::Max),
        ] {
            for shape in [&[2500usize][..], &[70, 40]] {
                let c = Case {
                    dtype,
                    shape,
                    axes: if shape.len() == 1 { &[0] } else { &[0, 1] },
                    op,
                    form,
                };
                let rows = shape[0];
                let cuts = [vec![rows / 3, rows / 2], random_cuts(&mut rng, rows)];
                check(&mut rng, &c, &cuts, false);
            }
        }
    }
}

fn sum_state(x: &[f32], start: usize, total: usize) -> Result<Partial, Error> {
    let v = ArrayView::from_slice(x, &[x.len()]).unwrap();
    reduce_partial(
        ReduceOp::Sum,
        &[0],
        Terms::of(&v),
        TermRange { start, total },
        None,
        &Exec::default(),
    )
}

#[test]
fn states_that_do_not_fit_are_refused() {
    let x: Vec<f32> = (0..3000).map(|i| i as f32 * 0.25).collect();
    let a = sum_state(&x[..1500], 0, 3000).unwrap();
    let b = sum_state(&x[1500..], 1500, 3000).unwrap();
    let partial = |r: Result<Partial, Error>| matches!(r, Err(Error::Partial { .. }));
    // Not adjacent, wrong order, past the total, another reduction.
    assert!(partial(b.merge(&a)));
    assert!(partial(a.merge(&a)));
    assert!(partial(sum_state(&x[..1501], 1500, 3000)));
    let c = sum_state(&x[1500..], 1500, 3001).unwrap();
    assert!(partial(a.merge(&c)));
    assert!(partial(Partial::combine(&[])));
    // Finishing a state that lacks terms writes nothing.
    let mut out = [7.0f32];
    let mut d = ArrayViewMut::from_slice(&mut out, &[]).unwrap();
    let e = reduce_finish(&a, None, &mut d, &Exec::default());
    assert!(matches!(e, Err(Error::Partial { .. })), "{e:?}");
    assert_eq!(out, [7.0]);
    // A Max of no term is refused by the finish, as by `reduce`.
    let v = ArrayView::from_slice(&x[..0], &[0]).unwrap();
    let none = reduce_partial(
        ReduceOp::Max,
        &[0],
        Terms::of(&v),
        TermRange { start: 0, total: 0 },
        None,
        &Exec::default(),
    )
    .unwrap();
    let mut d = ArrayViewMut::from_slice(&mut out, &[]).unwrap();
    assert!(reduce_finish(&none, None, &mut d, &Exec::default()).is_err());
    assert_eq!(out, [7.0]);
    // A second stage needs the centres it was computed with.
    let full = ArrayView::from_slice(&x, &[3000]).unwrap();
    let lse = |centres: Option<&Centres>| {
        reduce_partial(
            ReduceOp::Logsumexp,
            &[0],
            Terms::of(&full),
            TermRange {
                start: 0,
                total: 3000,
            },
            centres,
            &Exec::default(),
        )
    };
    let first = lse(None).unwrap();
    let mut d = ArrayViewMut::from_slice(&mut out, &[]).unwrap();
    assert!(reduce_finish(&first, None, &mut d, &Exec::default()).is_err());
    let centres = reduce_centres(&first).unwrap();
    let second = lse(Some(&centres)).unwrap();
    let other = {
        let y: Vec<f32> = x.iter().map(|v| v + 1.0).collect();
        let yv = ArrayView::from_slice(&y, &[3000]).unwrap();
        let f = reduce_partial(
            ReduceOp::Logsumexp,
            &[0],
            Terms::of(&yv),
            TermRange {
                start: 0,
                total: 3000,
            },
            None,
            &Exec::default(),
        )
        .unwrap();
        reduce_centres(&f).unwrap()
    };
    let mut d = ArrayViewMut::from_slice(&mut out, &[]).unwrap();
    assert!(reduce_finish(&second, Some(&other), &mut d, &Exec::default()).is_err());
    assert_eq!(out, [7.0]);
    assert!(partial(sum_state(&x, 0, 3000).and_then(|_| {
        let v = ArrayView::from_slice(&x, &[3000]).unwrap();
        reduce_partial(
            ReduceOp::Sum,
            &[0],
            Terms::of(&v),
            TermRange {
                start: 0,
                total: 3000,
            },
            Some(&centres),
            &Exec::default(),
        )
    })));
}

#[test]
fn damaged_bytes_are_refused_without_a_panic() {
    let mut rng = Rng::for_label("partial-bytes", tessera_testkit::rng::seed());
    let x: Vec<f32> = (0..2500).map(|i| (i as f32).sin()).collect();
    let good = sum_state(&x[700..2200], 700, 2500).unwrap().to_bytes();
    assert_eq!(Partial::from_bytes(&good).unwrap().range(), 700..2200);
    let dict: [&[u8]; 3] = [b"TSRP", &[0xff; 8], &[0; 8]];
    let mut refused = 0;
    for _ in 0..20_000 {
        let b = tessera_testkit::mutate::mutate(&mut rng, &good, &dict);
        match Partial::from_bytes(&b) {
            Ok(p) => {
                // A state that decodes still merges and finishes without a
                // panic (its values may be anything).
                let _ = p.merge(&p);
                let mut out = [0f32];
                let mut d = ArrayViewMut::from_slice(&mut out, &[]).unwrap();
                let _ = reduce_finish(&p, None, &mut d, &Exec::default());
            }
            Err(Error::Partial { .. }) => refused += 1,
            Err(e) => panic!("not a partial-state refusal: {e:?}"),
        }
        let _ = Centres::from_bytes(&b);
    }
    assert!(refused > 1000, "{refused} refused");
    for n in 0..good.len() {
        assert!(Partial::from_bytes(&good[..n]).is_err(), "cut at {n}");
    }
}

/// A lane-order contraction (few rows: `choose_order` picks lane order)
/// cut along its depth, each range on its own tier, merged and finished,
/// against `contract`'s bits, with and without init.
#[test]
fn contractions_cut_along_their_depth_give_contracts_bits() {
    use tessera::contract::{contract_finish, contract_partial};
    use tessera::{contract, ContractSpec};
    let mut rng = Rng::for_label("partial-contract", tessera_testkit::rng::seed());
    let execs = execs_mixed();
    for (dtype, acc) in [
        (DType::F32, DType::F32),
        (DType::F64, DType::F64),
        (DType::Bf16, DType::F32),
        (DType::F32, DType::F64),
    ] {
        for (rows, cols, depth) in [(3usize, 2usize, 5000usize), (1, 7, 1025), (4, 4, 70_000)] {
            for transposed in [false, true] {
                let item = dtype.info().item_bytes;
                let a = elements(&mut rng, dtype, rows * depth, false);
                let b = elements(&mut rng, dtype, depth * cols, false);
                let init: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5 - 1.0).collect();
                let initv = ArrayView::from_slice(&init, &[rows, cols]).unwrap();
                // a as [R, K] (or [K, R] when transposed), b as [K, C].
                let (ashape, spec) = if transposed {
                    ([depth, rows], ContractSpec::new(acc).contracting(0, 0))
                } else {
                    ([rows, depth], ContractSpec::new(acc).contracting(1, 0))
                };
                let aw = ArrayView::contiguous(dtype, &ashape, &a).unwrap();
                let bw = ArrayView::contiguous(dtype, &[depth, cols], &b).unwrap();
                let out_item = acc.info().item_bytes;
                let mut want = vec![0u8; rows * cols * out_item];
                contract(
                    &spec,
                    &aw,
                    &bw,
                    Some(&initv),
                    &mut ArrayViewMut::contiguous(acc, &[rows, cols], &mut want).unwrap(),
                    &Exec::default(),
                )
                .unwrap();
                let mut cuts = random_cuts(&mut rng, depth);
                cuts.extend([1024.min(depth), 1025.min(depth)]);
                cuts.sort_unstable();
                let mut bounds = vec![0];
                bounds.extend(cuts);
                bounds.push(depth);
                let parts: Vec<Partial> = bounds
                    .windows(2)
                    .enumerate()
                    .map(|(i, w)| {
                        let (k0, k1) = (w[0], w[1]);
                        // This range's columns of a (rows of a transposed a)
                        // and rows of b.
                        let av = if transposed {
                            ArrayView::contiguous(
                                dtype,
                                &[k1 - k0, rows],
                                &a[k0 * rows * item..k1 * rows * item],
                            )
                            .unwrap()
                        } else {
                            ArrayView::new(dtype, &[rows, k1 - k0], &[depth as isize, 1], k0, &a)
                                .unwrap()
                        };
                        let bv = ArrayView::contiguous(
                            dtype,
                            &[k1 - k0, cols],
                            &b[k0 * cols * item..k1 * cols * item],
                        )
                        .unwrap();
                        let range = TermRange {
                            start: k0,
                            total: depth,
                        };
                        let p = contract_partial(&spec, &av, &bv, range, &execs[i % execs.len()])
                            .unwrap();
                        Partial::from_bytes(&p.to_bytes()).unwrap()
                    })
                    .collect();
                let whole = merge_any(&mut rng, &parts);
                assert_eq!(whole, Partial::combine(&parts).unwrap());
                let mut got = vec![0u8; want.len()];
                contract_finish(
                    &whole,
                    Some(&initv),
                    &mut ArrayViewMut::contiguous(acc, &[rows, cols], &mut got).unwrap(),
                    &Exec::default(),
                )
                .unwrap();
                assert_eq!(
                    got, want,
                    "{dtype} into {acc}, {rows}x{cols} depth {depth}, transposed {transposed}, cut at {bounds:?}"
                );
            }
        }
    }
    // Chain order (many rows and columns) is refused: no range of its depth
    // can start apart.
    let x = vec![0f32; 64];
    let v = ArrayView::from_slice(&x, &[8, 8]).unwrap();
    let e = contract_partial(
        &ContractSpec::matmul(2, DType::F32),
        &v,
        &v,
        TermRange { start: 0, total: 8 },
        &Exec::default(),
    );
    assert!(matches!(e, Err(Error::Attribute { .. })), "{e:?}");
}

/// Sum, Prod, Max and Min scans cut into ranges of rows (across chunk
/// boundaries, within one chunk, empty), each range's results computed from
/// the merged state of every row before it, on its own tier: the single
/// scan's bits, with and without a carry; the states survive their bytes.
#[test]
fn scans_cut_into_ranges_give_the_single_scans_bits() {
    use tessera::reduce::{scan_range, scan_state, ScanState};
    use tessera::{scan, ScanOp};
    let mut rng = Rng::for_label("partial-scan", tessera_testkit::rng::seed());
    let execs = execs_mixed();
    for (dtype, op, shape) in [
        (DType::F32, ScanOp::Sum, &[9000usize, 2][..]),
        (DType::F64, ScanOp::Sum, &[13_000][..]),
        (DType::Bf16, ScanOp::Sum, &[4097, 3][..]),
        (DType::F32, ScanOp::Prod, &[8300][..]),
        (DType::F64, ScanOp::Max, &[9000, 2][..]),
        (DType::F16, ScanOp::Min, &[5000][..]),
        (DType::I32, ScanOp::Sum, &[9000][..]),
        (DType::C64, ScanOp::Sum, &[6000][..]),
        (DType::U8, ScanOp::Max, &[4096][..]),
    ] {
        let count: usize = shape.iter().product();
        let x = if op == ScanOp::Prod {
            let v: Vec<f32> = (0..count)
                .map(|_| 1.0 + (rng.unit() as f32 - 0.5) / 256.0)
                .collect();
            v.iter().flat_map(|f| f.to_le_bytes()).collect()
        } else {
            elements(&mut rng, dtype, count, true)
        };
        let c = tessera::reduce::carrier(dtype);
        let rest = &shape[1..];
        let carry_bytes = elements(&mut rng, c, rest.iter().product(), false);
        let carry_view = ArrayView::contiguous(c, rest, &carry_bytes).unwrap();
        for with_carry in [false, true] {
            let carry = with_carry.then_some(&carry_view);
            let xw = ArrayView::contiguous(dtype, shape, &x).unwrap();
            let item = dtype.info().item_bytes;
            let mut want = vec![0u8; count * item];
            scan(
                op,
                0,
                &xw,
                carry,
                &mut ArrayViewMut::contiguous(dtype, shape, &mut want).unwrap(),
                &Exec::default(),
            )
            .unwrap();
            let rows = shape[0];
            let row = rest.iter().product::<usize>() * item;
            for cuts in [
                vec![4096, 4100, 4100, 8192],
                random_cuts(&mut rng, rows),
                vec![1, 4095, 4097],
            ] {
                let mut bounds = vec![0];
                bounds.extend(cuts.iter().map(|&k| k.min(rows)));
                bounds.push(rows);
                bounds.sort_unstable();
                let view = |a: usize, b: usize| {
                    let mut s = shape.to_vec();
                    s[0] = b - a;
                    (s, &x[a * row..b * row])
                };
                let states: Vec<ScanState> = bounds
                    .windows(2)
                    .enumerate()
                    .map(|(i, w)| {
                        let (s, bytes) = view(w[0], w[1]);
                        let v = ArrayView::contiguous(dtype, &s, bytes).unwrap();
                        let st = scan_state(
                            op,
                            &v,
                            TermRange {
                                start: w[0],
                                total: rows,
                            },
                            &execs[i % execs.len()],
                        )
                        .unwrap();
                        ScanState::from_bytes(&st.to_bytes()).unwrap()
                    })
                    .collect();
                let mut got = vec![0u8; count * item];
                let mut before: Option<ScanState> = None;
                for (i, w) in bounds.windows(2).enumerate() {
                    let (s, bytes) = view(w[0], w[1]);
                    let v = ArrayView::contiguous(dtype, &s, bytes).unwrap();
                    let mut d =
                        ArrayViewMut::contiguous(dtype, &s, &mut got[w[0] * row..w[1] * row])
                            .unwrap();
                    scan_range(
                        op,
                        &v,
                        TermRange {
                            start: w[0],
                            total: rows,
                        },
                        before.as_ref(),
                        carry,
                        &mut d,
                        &execs[(i + 1) % execs.len()],
                    )
                    .unwrap_or_else(|e| {
                        panic!(
                            "{e}: rows {w:?} of {bounds:?}, before {:?}",
                            before
                                .as_ref()
                                .map(|b| (b.range(), b.clone().to_bytes().len()))
                        )
                    });
                    before = Some(match before {
                        None => states[i].clone(),
                        Some(b) => b.merge(&states[i], &Exec::default()).unwrap(),
                    });
                }
                assert_eq!(
                    got,
                    want,
                    "{} scan of {dtype} {shape:?}, carry {with_carry}, cut at {bounds:?}",
                    op.name()
                );
            }
        }
    }
}
