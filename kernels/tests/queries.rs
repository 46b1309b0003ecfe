//! The refusal and shape queries (`reduce_query`, `scan_query`,
//! `gather_ranges_shape`, `assemble_query`, `gather_query`, `scatter_query`,
//! `fft::query`)
//! decide exactly what the calls decide: for each
//! case the query's answer is compared with the call's, on real views of
//! the same shapes and dtypes (the error, or success and the shape the call
//! wrote into).

use tessera::reduce::{reduce_query, scan_query};
use tessera::{
    gather_ranges, gather_ranges_shape, reduce, scan, ArrayView, ArrayViewMut, DType, Exec,
    ReduceOp, ScanOp,
};

fn zeros(dtype: DType, shape: &[usize]) -> Vec<u8> {
    vec![0u8; shape.iter().product::<usize>() * dtype.info().item_bytes]
}

/// The same outcome: both succeed, or both fail with the same error.
fn same<T>(query: &tessera::Result<T>, call: &tessera::Result<()>, what: &str) {
    match (query, call) {
        (Ok(_), Ok(())) => {}
        (Err(q), Err(c)) => assert_eq!(q.to_string(), c.to_string(), "{what}"),
        (q, c) => panic!(
            "{what}: the query says {:?}, the call {c:?}",
            q.as_ref().map(|_| "fits").map_err(|e| e.to_string())
        ),
    }
}

#[test]
fn reduce_query_decides_as_reduce() {
    let ops = [
        ReduceOp::Sum,
        ReduceOp::Max,
        ReduceOp::ArgMax,
        ReduceOp::Logsumexp,
        ReduceOp::Sum2,
    ];
    let shapes: [&[usize]; 4] = [&[3, 4], &[2, 0, 5], &[7], &[]];
    let axes_list: [&[usize]; 5] = [&[0], &[1], &[0, 1], &[2], &[1, 1]];
    let dtypes = [DType::F32, DType::I32, DType::Bool, DType::C64];
    let mut checked = 0;
    for op in ops {
        for shape in shapes {
            for axes in axes_list {
                for dtype in dtypes {
                    for out_dtype in [dtype, DType::I64, DType::F64] {
                        // The query's destination shape, or a wrong one.
                        let q = reduce_query(op, axes, shape, dtype, None);
                        let out_shapes: Vec<Vec<usize>> = match &q {
                            Ok(s) => vec![s.clone(), vec![9]],
                            Err(_) => vec![vec![1]],
                        };
                        for out in out_shapes {
                            let xb = zeros(dtype, shape);
                            let x = ArrayView::contiguous(dtype, shape, &xb).unwrap();
                            let mut yb = zeros(out_dtype, &out);
                            let mut y = ArrayViewMut::contiguous(out_dtype, &out, &mut yb).unwrap();
                            let call = reduce(op, axes, &x, &mut y, &Exec::SEQ);
                            let query =
                                reduce_query(op, axes, shape, dtype, Some((&out, out_dtype)));
                            same(
                                &query,
                                &call,
                                &format!(
                                    "{op:?} {axes:?} of {dtype} {shape:?} into {out_dtype} {out:?}"
                                ),
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 500);
}

#[test]
fn scan_query_decides_as_scan() {
    let ops = [
        ScanOp::Sum,
        ScanOp::Max,
        ScanOp::ArgMin,
        ScanOp::Mean,
        ScanOp::SumDoubling,
    ];
    let shapes: [&[usize]; 3] = [&[3, 4], &[0, 2], &[5]];
    let dtypes = [DType::F32, DType::U8, DType::C128];
    let mut checked = 0;
    for op in ops {
        for shape in shapes {
            for axis in [0usize, 1, 3] {
                for dtype in dtypes {
                    let q = scan_query(op, axis, shape, dtype, None, None);
                    if let Ok(s) = &q {
                        assert_eq!(s.out, shape);
                        assert_eq!(s.out_dtype.is_some(), matches!(op, ScanOp::ArgMin));
                    }
                    let carries: Vec<Option<(Vec<usize>, DType)>> = match &q {
                        Ok(s) => vec![
                            None,
                            Some((s.carry.clone(), s.carry_dtype)),
                            Some((vec![7], s.carry_dtype)),
                        ],
                        Err(_) => vec![None],
                    };
                    for carry in carries {
                        for out_dtype in [dtype, DType::I64] {
                            let xb = zeros(dtype, shape);
                            let x = ArrayView::contiguous(dtype, shape, &xb).unwrap();
                            let kb = carry.as_ref().map(|(s, d)| zeros(*d, s));
                            let k = carry
                                .as_ref()
                                .zip(kb.as_ref())
                                .map(|((s, d), b)| ArrayView::contiguous(*d, s, b).unwrap());
                            let mut yb = zeros(out_dtype, shape);
                            let mut y =
                                ArrayViewMut::contiguous(out_dtype, shape, &mut yb).unwrap();
                            let call = scan(op, axis, &x, k.as_ref(), &mut y, &Exec::SEQ);
                            let query = scan_query(
                                op,
                                axis,
                                shape,
                                dtype,
                                carry.as_ref().map(|(s, d)| (s.as_slice(), *d)),
                                Some((shape, out_dtype)),
                            );
                            same(
                                &query,
                                &call,
                                &format!("{op:?} axis {axis} of {dtype} {shape:?} carry {carry:?} into {out_dtype}"),
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 100);
}

#[test]
fn gather_ranges_shape_decides_as_gather_ranges() {
    let cases: [(&[usize], &[usize]); 5] = [
        (&[10, 3], &[4]),
        (&[2, 10, 3], &[2, 4]),
        (&[3, 10], &[2, 4]),
        (&[10], &[]),
        (&[2, 5], &[2, 0]),
    ];
    for (xs, runs) in cases {
        for size in [0usize, 6] {
            let q = gather_ranges_shape(xs, runs, size);
            let out = q.clone().unwrap_or_else(|_| vec![size]);
            let xb = zeros(DType::F32, xs);
            let x = ArrayView::contiguous(DType::F32, xs, &xb).unwrap();
            let rb = zeros(DType::I64, runs);
            let r = ArrayView::contiguous(DType::I64, runs, &rb).unwrap();
            let mut yb = zeros(DType::F32, &out);
            let mut y = ArrayViewMut::contiguous(DType::F32, &out, &mut yb).unwrap();
            let call = gather_ranges(&x, &r, &r, &mut y, &Exec::SEQ);
            same(&q, &call, &format!("x {xs:?} runs {runs:?} size {size}"));
        }
    }
}

#[test]
fn assemble_query_decides_as_assemble() {
    use tessera::assembly::{assemble, Piece};
    use tessera::{assemble_query, assemble_region_shape, PieceShape};
    let dst_shape = [4usize, 6];
    // Pieces: (start, shape, dtype) — inside, at the edge, past it, of
    // another rank, of another dtype, empty.
    let cases: [(&[usize], &[usize], DType); 7] = [
        (&[0, 0], &[2, 3], DType::F32),
        (&[2, 3], &[2, 3], DType::F32),
        (&[3, 3], &[2, 3], DType::F32),
        (&[0, 5], &[1, 2], DType::F32),
        (&[0], &[3], DType::F32),
        (&[1, 1], &[1, 1], DType::I32),
        (&[4, 6], &[0, 0], DType::F32),
    ];
    let fills: [Option<(&[usize], DType)>; 4] = [
        None,
        Some((&[], DType::F32)),
        Some((&[1, 2], DType::F32)),
        Some((&[1], DType::F64)),
    ];
    for fill in fills {
        for (i, &(start, shape, dtype)) in cases.iter().enumerate() {
            for with_first in [false, true] {
                let mut chosen = vec![(start, shape, dtype)];
                if with_first {
                    chosen.insert(0, cases[0]);
                }
                let shapes: Vec<PieceShape> = chosen
                    .iter()
                    .map(|&(start, shape, dtype)| PieceShape {
                        start,
                        shape,
                        dtype,
                    })
                    .collect();
                let q = assemble_query(&dst_shape, DType::F32, fill, &shapes);
                let datas: Vec<Vec<u8>> = chosen.iter().map(|&(_, s, d)| zeros(d, s)).collect();
                let pieces: Vec<Piece> = chosen
                    .iter()
                    .zip(&datas)
                    .map(|(&(start, shape, dtype), data)| Piece {
                        start: start.to_vec(),
                        x: ArrayView::new(dtype, shape, &c_strides(shape), 0, data).unwrap(),
                    })
                    .collect();
                let fill_data = fill.map(|(s, d)| (s, d, zeros(d, s)));
                let fill_view = fill_data
                    .as_ref()
                    .map(|(s, d, data)| ArrayView::new(*d, s, &c_strides(s), 0, data).unwrap());
                let mut out = vec![0x5au8; 4 * 6 * 4];
                let before = out.clone();
                let mut dst = ArrayViewMut::contiguous(DType::F32, &dst_shape, &mut out).unwrap();
                let c = assemble(fill_view.as_ref(), &pieces, &mut dst, &Exec::default());
                same(
                    &q,
                    &c,
                    &format!("case {i}, fill {fill:?}, after a first piece {with_first}"),
                );
                if c.is_err() {
                    assert_eq!(out, before, "a refused assembly wrote");
                }
            }
        }
    }
    assert_eq!(assemble_region_shape(&[1, 2], &[4, 2]).unwrap(), vec![3, 0]);
    assert!(assemble_region_shape(&[1, 2], &[4, 1]).is_err());
    assert!(assemble_region_shape(&[1], &[4, 1]).is_err());
}

fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![1isize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1] as isize;
    }
    s
}

#[test]
fn gather_and_scatter_queries_decide_as_the_calls() {
    use tessera::movement::{gather, gather_query, scatter, scatter_query, Combine};
    // (x or updates shape, positions shape, dst shape, axis, positions dtype,
    // values dtype, dst dtype) — fitting, and each refusal in turn.
    type Case<'a> = (&'a [usize], &'a [usize], &'a [usize], usize);
    let shapes: [Case<'_>; 7] = [
        (&[3, 5], &[3, 4], &[3, 4], 1),
        (&[7, 4], &[2, 4], &[2, 4], 0),
        (&[3, 5], &[3, 4], &[3, 4], 2),
        (&[3, 5], &[3, 3], &[3, 4], 1),
        (&[2, 5], &[3, 4], &[3, 4], 1),
        (&[0, 4], &[2, 4], &[2, 4], 0),
        (&[3], &[3, 4], &[3, 4], 1),
    ];
    let dtypes = [
        (DType::I64, DType::F32, DType::F32),
        (DType::I32, DType::F32, DType::F32),
        (DType::I64, DType::F64, DType::F32),
        (DType::I64, DType::Bool, DType::Bool),
        (DType::I64, DType::C64, DType::C64),
    ];
    let mut cases = 0;
    for &(xs, ps, ds, axis) in &shapes {
        for &(pd, xd, dd) in &dtypes {
            let (xb, pb) = (zeros(xd, xs), zeros(pd, ps));
            let xv = ArrayView::contiguous(xd, xs, &xb).unwrap();
            let pv = ArrayView::contiguous(pd, ps, &pb).unwrap();
            let mut db = zeros(dd, ds);
            let q = gather_query(axis, (xs, xd), (ps, pd), (ds, dd));
            let c = {
                let mut dv = ArrayViewMut::contiguous(dd, ds, &mut db).unwrap();
                gather(axis, &xv, &pv, &mut dv, &Exec::default())
            };
            same(
                &q,
                &c,
                &format!("gather {xs:?} {ps:?} {ds:?} axis {axis} {pd} {xd} {dd}"),
            );
            // Scatter: into has dst's shape, updates x's role, positions
            // updates' shape.
            for combine in [Combine::Set, Combine::Add, Combine::Max] {
                let ib = zeros(dd, ds);
                let iv = ArrayView::contiguous(dd, ds, &ib).unwrap();
                let ub = zeros(xd, ps);
                let uv = ArrayView::contiguous(xd, ps, &ub).unwrap();
                let pb2 = zeros(pd, ps);
                let pv2 = ArrayView::contiguous(pd, ps, &pb2).unwrap();
                let q = scatter_query(combine, axis, (ds, dd), (ps, pd), (ps, xd), (ds, dd));
                let c = {
                    let mut dv = ArrayViewMut::contiguous(dd, ds, &mut db).unwrap();
                    scatter(combine, axis, &iv, &pv2, &uv, &mut dv, &Exec::default())
                };
                same(
                    &q,
                    &c,
                    &format!("scatter {combine:?} {ps:?} {ds:?} axis {axis} {pd} {xd} {dd}"),
                );
                cases += 1;
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 7 * 5 * 4);
    // What the stated rules decide, independently of the calls: the first
    // shapes with int64 positions and matching dtypes fit; int32 positions,
    // a values dtype other than dst's, an axis out of range, and positions
    // not of dst's shape are refused.
    let (xs, ps, ds): (&[usize], &[usize], &[usize]) = (&[3, 5], &[3, 4], &[3, 4]);
    let f = (DType::F32, DType::I64);
    assert!(gather_query(1, (xs, f.0), (ps, f.1), (ds, f.0)).is_ok());
    assert!(gather_query(1, (xs, f.0), (ps, DType::I32), (ds, f.0)).is_err());
    assert!(gather_query(1, (xs, DType::F64), (ps, f.1), (ds, f.0)).is_err());
    assert!(gather_query(2, (xs, f.0), (ps, f.1), (ds, f.0)).is_err());
    assert!(gather_query(1, (xs, f.0), (&[3, 3], f.1), (ds, f.0)).is_err());
    assert!(scatter_query(Combine::Add, 1, (ds, f.0), (ps, f.1), (ps, f.0), (ds, f.0)).is_ok());
    assert!(scatter_query(
        Combine::Add,
        1,
        (ds, DType::Bool),
        (ps, f.1),
        (ps, DType::Bool),
        (ds, DType::Bool)
    )
    .is_err());
}

#[test]
fn fft_query_decides_as_the_transforms() {
    use tessera::fft::{c2c, c2r, query, r2c, Direction, Norm, Transform};
    let shapes: [&[usize]; 5] = [&[8], &[4, 6], &[3, 0], &[], &[5, 4]];
    let axes_list: [&[usize]; 5] = [&[0], &[1], &[0, 1], &[1, 0], &[]];
    let dtypes = [DType::F32, DType::C64, DType::C128, DType::F64, DType::I32];
    let mut cases = 0;
    for t in [Transform::C2c, Transform::R2c, Transform::C2r] {
        for xs in shapes {
            for axes in axes_list {
                for xd in dtypes {
                    for dd in dtypes {
                        // The destination: the operand's shape, its last
                        // named axis halved plus one, or doubled less two
                        // (c2r's real points), or a wrong one.
                        let mut dss = vec![xs.to_vec(), vec![9]];
                        if let Some(&a) = axes.last().filter(|&&a| a < xs.len()) {
                            let mut h = xs.to_vec();
                            h[a] = xs[a] / 2 + 1;
                            dss.push(h);
                            let mut r = xs.to_vec();
                            r[a] = (2 * xs[a]).saturating_sub(2);
                            dss.push(r);
                        }
                        for ds in &dss {
                            let q = query(t, axes, (xs, xd), (ds, dd));
                            let xb = zeros(xd, xs);
                            let x = ArrayView::contiguous(xd, xs, &xb).unwrap();
                            let mut yb =
                                vec![0x5au8; ds.iter().product::<usize>() * dd.info().item_bytes];
                            let before = yb.clone();
                            let c = {
                                let mut y = ArrayViewMut::contiguous(dd, ds, &mut yb).unwrap();
                                let e = Exec::default();
                                match t {
                                    Transform::C2c => {
                                        c2c(axes, Direction::Forward, Norm::None, &x, &mut y, &e)
                                    }
                                    Transform::R2c => r2c(axes, Norm::None, &x, &mut y, &e),
                                    Transform::C2r => c2r(axes, Norm::None, &x, &mut y, &e),
                                }
                            };
                            same(
                                &q,
                                &c,
                                &format!("{t:?} {xs:?} {axes:?} {xd} -> {ds:?} {dd}"),
                            );
                            if c.is_err() {
                                assert_eq!(yb, before, "a refused transform wrote");
                            }
                            cases += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 1500, "{cases}");
    // The stated rules, independently of the calls.
    let (c2, r2) = (DType::C64, DType::F32);
    assert!(query(Transform::C2c, &[0, 1], (&[4, 6], c2), (&[4, 6], c2)).is_ok());
    assert!(query(Transform::C2c, &[0, 1], (&[4, 6], r2), (&[4, 6], r2)).is_err());
    assert!(query(Transform::C2c, &[1, 0], (&[4, 6], c2), (&[4, 6], c2)).is_err());
    assert!(query(Transform::C2c, &[0], (&[4, 6], c2), (&[4, 6], DType::C128)).is_err());
    assert!(query(Transform::R2c, &[0, 1], (&[4, 6], r2), (&[4, 4], c2)).is_ok());
    assert!(query(Transform::R2c, &[0, 1], (&[4, 6], r2), (&[4, 6], c2)).is_err());
    assert!(query(Transform::R2c, &[0], (&[4, 6], r2), (&[3, 6], c2)).is_ok());
    assert!(query(Transform::C2r, &[1], (&[4, 4], c2), (&[4, 6], r2)).is_ok());
    assert!(query(Transform::C2r, &[1], (&[4, 4], c2), (&[4, 7], r2)).is_ok());
    assert!(query(Transform::C2r, &[1], (&[4, 5], c2), (&[4, 6], r2)).is_err());
    assert!(query(Transform::C2r, &[1], (&[4, 4], c2), (&[4, 6], DType::F64)).is_err());
    assert!(query(Transform::R2c, &[], (&[4, 6], r2), (&[4, 6], c2)).is_err());
}
