//! The distributed calls against the single-process calls, bit for bit, at
//! whatever process count this program is started with (`mpiexec -n 1 … 4`;
//! plain `cargo test` runs it as one process): every rank builds the same
//! whole arrays from one seed, takes its rows of an uneven split (empty
//! ranks and single rows among them), calls the distributed function on its
//! own tier and thread count, and compares with the one-process call on the
//! whole array. Then the collective refusals: a bad destination on one
//! rank, a dtype that differs, a failure injected mid-call on one rank:
//! every rank gets the same error and no destination changes.
//!
//! One program (no test harness): MPI is initialised once per process and
//! driven from one thread.

use mpi::traits::*;
use tessera::fft::{Direction, Norm};
use tessera::{
    available_tiers, cast, contract, ArrayView, ArrayViewMut, CastMode, ContractSpec, DType, Exec,
    ReduceOp, Terms,
};
use tessera::{FloatOrder, ScanOp};
use tessera_mpi::{
    contract_cols, contract_depth, contract_rows, dot, fault, fft_c2c, fft_c2r, fft_r2c, reduce,
    reduce_many, reduce_terms, scan, sort, unique, DistError, Form, Order,
};
use tessera_testkit::rng::Rng;

/// Values with NaNs, ±0, infinities and subnormals now and then.
fn value(rng: &mut Rng, wild: bool) -> f64 {
    if wild {
        match rng.below(50) {
            0 => return f64::NAN,
            1 => return -0.0,
            2 => return 0.0,
            3 => return f64::INFINITY,
            4 => return 1e-310,
            5 => return -2e-40,
            _ => {}
        }
    }
    (rng.unit() - 0.5) * 2f64.powi(rng.below(10) as i32 - 5)
}

/// `count` elements of `dtype` (floats through a cast from f64).
fn elements(rng: &mut Rng, dtype: DType, count: usize, wild: bool) -> Vec<u8> {
    let info = dtype.info();
    if info.class == tessera::Class::Float {
        let v: Vec<f64> = (0..count).map(|_| value(rng, wild)).collect();
        let mut out = vec![0u8; count * info.item_bytes];
        let x = ArrayView::from_slice(&v, &[count]).unwrap();
        let mut d = ArrayViewMut::contiguous(dtype, &[count], &mut out).unwrap();
        cast(CastMode::Default, &x, &mut d, &Exec::default().threads(1)).unwrap();
        out
    } else {
        (0..count * info.item_bytes)
            .map(|_| rng.next_u32() as u8)
            .collect()
    }
}

/// An uneven split of `rows` over `size` ranks (the same on every rank):
/// this rank's first row and row count.
fn split(rng: &mut Rng, rows: usize, size: usize, rank: usize) -> (usize, usize) {
    let mut cuts: Vec<usize> = (0..size - 1).map(|_| rng.below_usize(rows + 1)).collect();
    cuts.sort_unstable();
    let lo = if rank == 0 { 0 } else { cuts[rank - 1] };
    let hi = if rank + 1 == size { rows } else { cuts[rank] };
    (lo, hi - lo)
}

/// This rank's own tier and thread count.
fn my_exec(rank: usize) -> Exec {
    let tiers = available_tiers();
    Exec::on(tiers[rank % tiers.len()]).threads(1 + rank % 3)
}

struct Ctx<'w> {
    world: &'w mpi::topology::SimpleCommunicator,
    rank: usize,
    size: usize,
    checked: usize,
}

fn bytes_of(shape: &[usize], dtype: DType) -> usize {
    shape.iter().product::<usize>() * dtype.info().item_bytes
}

fn reductions(ctx: &mut Ctx, rng: &mut Rng) {
    let dtypes = [
        DType::F32,
        DType::F64,
        DType::Bf16,
        DType::F16,
        DType::C64,
        DType::I32,
        DType::U8,
        DType::I64,
    ];
    let shapes: [(&[usize], &[usize]); 5] = [
        (&[3000], &[0]),
        (&[1], &[0]),
        (&[2100, 3], &[0]),
        (&[40, 7, 5], &[0, 2]),
        (&[9, 4], &[1]),
    ];
    for dtype in dtypes {
        for op in ReduceOp::ALL {
            if op == ReduceOp::Sum2 || !op.accepts(dtype) {
                continue;
            }
            for (shape, axes) in shapes {
                let x = elements(rng, dtype, shape.iter().product(), true);
                let (lo, n) = split(rng, shape[0], ctx.size, ctx.rank);
                let row = bytes_of(&shape[1..], dtype);
                let mut local_shape = shape.to_vec();
                local_shape[0] = n;
                let xl = ArrayView::contiguous(dtype, &local_shape, &x[lo * row..(lo + n) * row])
                    .unwrap();
                let xw = ArrayView::contiguous(dtype, shape, &x).unwrap();
                let od = if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
                    DType::I64
                } else {
                    dtype
                };
                let distributed = axes.contains(&0);
                let oshape = |s: &[usize]| -> Vec<usize> {
                    (0..s.len())
                        .filter(|a| !axes.contains(a))
                        .map(|a| s[a])
                        .collect()
                };
                let (want_shape, src) = if distributed {
                    (oshape(shape), xw.clone())
                } else {
                    (oshape(&local_shape), xl.clone())
                };
                let mut want = vec![0x5Au8; bytes_of(&want_shape, od)];
                let single = tessera::reduce(
                    op,
                    axes,
                    &src,
                    &mut ArrayViewMut::contiguous(od, &want_shape, &mut want).unwrap(),
                    &Exec::default(),
                );
                let mut got = vec![0x5Au8; want.len()];
                let dist = reduce(
                    ctx.world,
                    op,
                    axes,
                    &xl,
                    &mut ArrayViewMut::contiguous(od, &want_shape, &mut got).unwrap(),
                    &my_exec(ctx.rank),
                );
                match (single, dist) {
                    (Ok(()), Ok(())) => assert_eq!(
                        got,
                        want,
                        "rank {}: {} of {dtype} {shape:?} along {axes:?}, rows {lo}+{n}",
                        ctx.rank,
                        op.name()
                    ),
                    // The one-process call refuses only what every rank
                    // refuses (a Max of no term): nothing written.
                    (Err(_), Err(DistError::Refused { .. })) => {
                        assert!(got.iter().all(|&b| b == 0x5A))
                    }
                    (s, d) => panic!(
                        "rank {}: {} of {dtype} {shape:?}: single {s:?}, distributed {d:?}",
                        ctx.rank,
                        op.name()
                    ),
                }
                ctx.checked += 1;
            }
        }
    }
}

fn many_and_two_stage(ctx: &mut Ctx, rng: &mut Rng) {
    let shape = [5000usize, 2];
    let x = elements(rng, DType::F32, 10_000, false);
    let (lo, n) = split(rng, 5000, ctx.size, ctx.rank);
    let xl = ArrayView::contiguous(DType::F32, &[n, 2], &x[lo * 8..(lo + n) * 8]).unwrap();
    let xw = ArrayView::contiguous(DType::F32, &shape, &x).unwrap();
    let ops = [
        ReduceOp::Sum,
        ReduceOp::Logsumexp,
        ReduceOp::Variance,
        ReduceOp::L2Norm,
        ReduceOp::ArgMin,
    ];
    let mut want: Vec<Vec<u8>> = ops.iter().map(|_| vec![0u8; 16]).collect();
    let mut got = want.clone();
    for (k, &op) in ops.iter().enumerate() {
        let od = if op == ReduceOp::ArgMin {
            DType::I64
        } else {
            DType::F32
        };
        let len = 2 * od.info().item_bytes;
        let mut d = ArrayViewMut::contiguous(od, &[1, 2], &mut want[k][..len]).unwrap();
        tessera::reduce(op, &[0], &xw, &mut d, &Exec::default()).unwrap();
    }
    {
        let mut views: Vec<ArrayViewMut> = got
            .iter_mut()
            .zip(&ops)
            .map(|(g, &op)| {
                let od = if op == ReduceOp::ArgMin {
                    DType::I64
                } else {
                    DType::F32
                };
                let len = 2 * od.info().item_bytes;
                ArrayViewMut::contiguous(od, &[1, 2], &mut g[..len]).unwrap()
            })
            .collect();
        let mut outs: Vec<(ReduceOp, &mut ArrayViewMut)> =
            ops.iter().copied().zip(views.iter_mut()).collect();
        reduce_many(ctx.world, &[0], &xl, &mut outs, &my_exec(ctx.rank)).unwrap();
    }
    assert_eq!(got, want, "rank {}: reduce_many", ctx.rank);
    ctx.checked += 1;
}

fn contractions(ctx: &mut Ctx, rng: &mut Rng) {
    for (dtype, m, k, n) in [
        (DType::F32, 20usize, 33usize, 24usize),
        (DType::F64, 9, 300, 7),
        (DType::F32, 3, 2000, 2),
        (DType::C64, 12, 17, 6),
        (DType::I8, 30, 40, 10),
    ] {
        let acc = match dtype {
            DType::I8 => DType::I32,
            d => d,
        };
        let a = elements(rng, dtype, m * k, false);
        let b = elements(rng, dtype, k * n, false);
        let (lo, rows) = split(rng, m, ctx.size, ctx.rank);
        let row = k * dtype.info().item_bytes;
        let al = ArrayView::contiguous(dtype, &[rows, k], &a[lo * row..(lo + rows) * row]).unwrap();
        let aw = ArrayView::contiguous(dtype, &[m, k], &a).unwrap();
        let bv = ArrayView::contiguous(dtype, &[k, n], &b).unwrap();
        let spec = ContractSpec::matmul(2, acc);
        let item = acc.info().item_bytes;
        let mut want = vec![0u8; m * n * item];
        contract(
            &spec,
            &aw,
            &bv,
            None,
            &mut ArrayViewMut::contiguous(acc, &[m, n], &mut want).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let mut got = vec![0u8; rows * n * item];
        contract_rows(
            ctx.world,
            &spec,
            &al,
            &bv,
            None,
            &mut ArrayViewMut::contiguous(acc, &[rows, n], &mut got).unwrap(),
            &my_exec(ctx.rank),
        )
        .unwrap();
        assert_eq!(
            got,
            want[lo * n * item..(lo + rows) * n * item],
            "rank {}: {dtype} {m}x{k}x{n}, rows {lo}+{rows}",
            ctx.rank
        );
        // Columns split: b given as its transpose [N, K], split by its rows.
        let bt: Vec<u8> = (0..n)
            .flat_map(|j| {
                (0..k).flat_map(move |kk| {
                    (kk * n + j) * dtype.info().item_bytes
                        ..(kk * n + j + 1) * dtype.info().item_bytes
                })
            })
            .map(|i| b[i])
            .collect();
        let (c0, cn) = split(rng, n, ctx.size, ctx.rank);
        let bl = ArrayView::contiguous(dtype, &[cn, k], &bt[c0 * row..(c0 + cn) * row]).unwrap();
        let spec_t = ContractSpec::new(acc).contracting(1, 1);
        let mut got = vec![0u8; m * cn * item];
        contract_cols(
            ctx.world,
            &spec_t,
            &aw,
            &bl,
            None,
            &mut ArrayViewMut::contiguous(acc, &[m, cn], &mut got).unwrap(),
            &my_exec(ctx.rank),
        )
        .unwrap();
        let want_cols: Vec<u8> = (0..m)
            .flat_map(|i| want[(i * n + c0) * item..(i * n + c0 + cn) * item].to_vec())
            .collect();
        assert_eq!(
            got, want_cols,
            "rank {}: {dtype} {m}x{k}x{n}, columns {c0}+{cn}",
            ctx.rank
        );
        ctx.checked += 1;
    }
}

fn scans(ctx: &mut Ctx, rng: &mut Rng) {
    let cases: [(DType, ScanOp, &[usize], usize); 10] = [
        (DType::F32, ScanOp::Sum, &[9000, 3], 0),
        (DType::F64, ScanOp::Sum, &[13000], 0),
        (DType::Bf16, ScanOp::Sum, &[4097, 2], 0),
        (DType::F32, ScanOp::Prod, &[8200], 0),
        (DType::F64, ScanOp::Max, &[9000, 2], 0),
        (DType::F32, ScanOp::Min, &[5000], 0),
        (DType::I32, ScanOp::Sum, &[9000], 0),
        (DType::C64, ScanOp::Sum, &[6000], 0),
        (DType::F32, ScanOp::ArgMax, &[50, 300], 1),
        (DType::F64, ScanOp::Variance, &[40, 70], 1),
    ];
    for (dtype, op, shape, axis) in cases {
        for with_carry in [false, true] {
            if with_carry && !op.takes_carry() {
                continue;
            }
            let count: usize = shape.iter().product();
            let x = if op == ScanOp::Prod {
                // Factors near 1: the products stay finite.
                let v: Vec<f32> = (0..count)
                    .map(|_| 1.0 + (rng.unit() as f32 - 0.5) / 256.0)
                    .collect();
                bytemuck_f32(&v).to_vec()
            } else {
                elements(rng, dtype, count, true)
            };
            let c = tessera::reduce::carrier(dtype);
            let rest = &shape[1..];
            let carry_bytes = elements(rng, c, rest.iter().product(), false);
            let carry_view = ArrayView::contiguous(c, rest, &carry_bytes).unwrap();
            let carry = with_carry.then_some(&carry_view);
            let (lo, n) = split(rng, shape[0], ctx.size, ctx.rank);
            let row = bytes_of(rest, dtype);
            let mut local_shape = shape.to_vec();
            local_shape[0] = n;
            let xl =
                ArrayView::contiguous(dtype, &local_shape, &x[lo * row..(lo + n) * row]).unwrap();
            let xw = ArrayView::contiguous(dtype, shape, &x).unwrap();
            let od = if op.is_arg() { DType::I64 } else { dtype };
            let orow = bytes_of(rest, od);
            let mut want = vec![0u8; count * od.info().item_bytes];
            tessera::scan(
                op,
                axis,
                &xw,
                carry,
                &mut ArrayViewMut::contiguous(od, shape, &mut want).unwrap(),
                &Exec::default(),
            )
            .unwrap();
            let mut got = vec![0u8; n * orow];
            scan(
                ctx.world,
                op,
                axis,
                &xl,
                carry,
                &mut ArrayViewMut::contiguous(od, &local_shape, &mut got).unwrap(),
                &my_exec(ctx.rank),
            )
            .unwrap();
            assert_eq!(
                got,
                want[lo * orow..(lo + n) * orow],
                "rank {}: {} scan of {dtype} {shape:?} along {axis}, rows {lo}+{n}, carry {with_carry}",
                ctx.rank,
                op.name()
            );
            ctx.checked += 1;
        }
    }
}

fn depth_contractions(ctx: &mut Ctx, rng: &mut Rng) {
    for (dtype, acc, rows, cols, depth) in [
        (DType::F32, DType::F32, 3usize, 2usize, 5000usize),
        (DType::F64, DType::F64, 2, 9, 3000),
        (DType::Bf16, DType::F32, 1, 4, 2049),
    ] {
        let item = dtype.info().item_bytes;
        let a = elements(rng, dtype, rows * depth, false);
        let b = elements(rng, dtype, depth * cols, false);
        let init = elements(rng, acc, rows * cols, false);
        let initv = ArrayView::contiguous(acc, &[rows, cols], &init).unwrap();
        let spec = ContractSpec::new(acc).contracting(1, 0);
        let mut want = vec![0u8; rows * cols * acc.info().item_bytes];
        contract(
            &spec,
            &ArrayView::contiguous(dtype, &[rows, depth], &a).unwrap(),
            &ArrayView::contiguous(dtype, &[depth, cols], &b).unwrap(),
            Some(&initv),
            &mut ArrayViewMut::contiguous(acc, &[rows, cols], &mut want).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let (lo, n) = split(rng, depth, ctx.size, ctx.rank);
        // This rank's columns of a (a strided view) and rows of b.
        let al = ArrayView::new(dtype, &[rows, n], &[depth as isize, 1], lo, &a).unwrap();
        let bl = ArrayView::contiguous(
            dtype,
            &[n, cols],
            &b[lo * cols * item..(lo + n) * cols * item],
        )
        .unwrap();
        let mut got = vec![0u8; want.len()];
        contract_depth(
            ctx.world,
            &spec,
            &al,
            &bl,
            Some(&initv),
            &mut ArrayViewMut::contiguous(acc, &[rows, cols], &mut got).unwrap(),
            &my_exec(ctx.rank),
        )
        .unwrap();
        assert_eq!(
            got, want,
            "rank {}: {dtype} into {acc}, {rows}x{cols}, depth {depth} split at {lo}+{n}",
            ctx.rank
        );
        ctx.checked += 1;
    }
}

/// A transform's dtype, shape, axes, direction and norm.
type Transform = (DType, &'static [usize], &'static [usize], Direction, Norm);

fn transforms(ctx: &mut Ctx, rng: &mut Rng) {
    let cases: [Transform; 7] = [
        (
            DType::C64,
            &[16, 12],
            &[0, 1],
            Direction::Forward,
            Norm::None,
        ),
        (
            DType::C128,
            &[30, 7],
            &[0, 1],
            Direction::Inverse,
            Norm::Backward,
        ),
        (
            DType::C64,
            &[9, 10, 6],
            &[0, 1, 2],
            Direction::Forward,
            Norm::Ortho,
        ),
        (
            DType::C128,
            &[8, 5, 4],
            &[0, 2],
            Direction::Forward,
            Norm::Forward,
        ),
        (DType::C64, &[67, 3], &[0], Direction::Inverse, Norm::Ortho),
        (
            DType::C64,
            &[6, 64],
            &[1],
            Direction::Forward,
            Norm::Backward,
        ),
        (
            DType::C128,
            &[3, 2],
            &[0, 1],
            Direction::Forward,
            Norm::None,
        ),
    ];
    for (dtype, shape, axes, direction, norm) in cases {
        let count: usize = shape.iter().product();
        let part = if dtype == DType::C64 {
            DType::F32
        } else {
            DType::F64
        };
        let x = elements(rng, part, 2 * count, false);
        let (lo, n) = split(rng, shape[0], ctx.size, ctx.rank);
        let row = bytes_of(&shape[1..], dtype);
        let mut local = shape.to_vec();
        local[0] = n;
        let xl = ArrayView::contiguous(dtype, &local, &x[lo * row..(lo + n) * row]).unwrap();
        let xw = ArrayView::contiguous(dtype, shape, &x).unwrap();
        let mut want = vec![0u8; x.len()];
        tessera::fft::c2c(
            axes,
            direction,
            norm,
            &xw,
            &mut ArrayViewMut::contiguous(dtype, shape, &mut want).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let mut got = vec![0u8; n * row];
        fft_c2c(
            ctx.world,
            axes,
            direction,
            norm,
            &xl,
            &mut ArrayViewMut::contiguous(dtype, &local, &mut got).unwrap(),
            &my_exec(ctx.rank),
        )
        .unwrap();
        assert_eq!(
            got,
            want[lo * row..(lo + n) * row],
            "rank {}: c2c of {dtype} {shape:?} along {axes:?} {direction:?} {norm:?}, rows {lo}+{n}",
            ctx.rank
        );
        ctx.checked += 1;
    }
}

fn sorts(ctx: &mut Ctx, rng: &mut Rng) {
    let orders = [
        Order::default(),
        Order {
            descending: true,
            floats: FloatOrder::NanLast,
        },
        Order {
            descending: false,
            floats: FloatOrder::Total,
        },
        Order {
            descending: true,
            floats: FloatOrder::Total,
        },
    ];
    for (case, dtype) in [
        DType::F32,
        DType::F64,
        DType::Bf16,
        DType::I16,
        DType::C64,
        DType::U8,
        DType::Bool,
    ]
    .into_iter()
    .enumerate()
    {
        for count in [0usize, 1, 7, 3000, 40_000] {
            let how = orders[(case + count) % orders.len()];
            let item = dtype.info().item_bytes;
            let mut x = elements(rng, dtype, count, true);
            if dtype == DType::F32 {
                // NaNs of several signs and payloads: equal in the order,
                // distinct in bits, so only a stable sort gives one answer.
                for i in (0..count).step_by(97) {
                    let nan = 0x7fc0_0000u32 | (i as u32 & 0xff) | ((i as u32 & 1) << 31);
                    x[i * 4..i * 4 + 4].copy_from_slice(&nan.to_le_bytes());
                }
            }
            if count > 10 && dtype != DType::Bool {
                // Runs of repeats (splitters fall on equal elements).
                let (a, b) = x.split_at_mut(item * 5);
                for c in b.chunks_exact_mut(item).step_by(3) {
                    c.copy_from_slice(&a[..item]);
                }
            }
            let (lo, n) = split(rng, count, ctx.size, ctx.rank);
            let xw = ArrayView::contiguous(dtype, &[count], &x).unwrap();
            let xl = ArrayView::contiguous(dtype, &[n], &x[lo * item..(lo + n) * item]).unwrap();
            let mut want = vec![0u8; count * item];
            let mut want_pos = vec![0i64; count];
            tessera::sort_with(
                0,
                how.descending,
                how.floats,
                &xw,
                &mut ArrayViewMut::contiguous(dtype, &[count], &mut want).unwrap(),
                Some(&mut ArrayViewMut::from_slice(&mut want_pos, &[count]).unwrap()),
                &Exec::default(),
            )
            .unwrap();
            let mut got = vec![0u8; n * item];
            let mut got_pos = vec![0i64; n];
            sort(
                ctx.world,
                how,
                &xl,
                &mut ArrayViewMut::contiguous(dtype, &[n], &mut got).unwrap(),
                Some(&mut ArrayViewMut::from_slice(&mut got_pos, &[n]).unwrap()),
                &my_exec(ctx.rank),
            )
            .unwrap();
            assert_eq!(
                got,
                want[lo * item..(lo + n) * item],
                "rank {}: sort of {count} {dtype}",
                ctx.rank
            );
            assert_eq!(
                got_pos,
                want_pos[lo..lo + n],
                "rank {}: positions of {count} {dtype}",
                ctx.rank
            );
            ctx.checked += 1;
        }
    }
}

fn numberings(ctx: &mut Ctx, rng: &mut Rng) {
    for (count, w, alphabet) in [
        (0usize, 1usize, 4u64),
        (1, 1, 4),
        (5000, 1, 37),
        (3000, 2, 5),
        (20_000, 1, 1 << 40),
    ] {
        let words: Vec<u64> = (0..count * w).map(|_| rng.below(alphabet)).collect();
        let (lo, n) = split(rng, count, ctx.size, ctx.rank);
        let kw = ArrayView::from_slice(&words, &[count, w]).unwrap();
        let kl = ArrayView::from_slice(&words[lo * w..(lo + n) * w], &[n, w]).unwrap();
        let m = 64;
        let (mut ids, mut first, mut counts) = (vec![0i64; count], vec![0i64; m], vec![0i64; m]);
        let k = tessera::unique(
            &kw,
            &mut ArrayViewMut::from_slice(&mut ids, &[count]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut first, &[m]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut counts, &[m]).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let (mut gids, mut gfirst, mut gcounts) = (vec![0i64; n], vec![0i64; m], vec![0i64; m]);
        let gk = unique(
            ctx.world,
            &kl,
            &mut ArrayViewMut::from_slice(&mut gids, &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut gfirst, &[m]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut gcounts, &[m]).unwrap(),
            &my_exec(ctx.rank),
        )
        .unwrap();
        let what = format!("rank {}: unique of {count} keys of {w} words", ctx.rank);
        assert_eq!(gk, k, "{what}");
        assert_eq!(gids, ids[lo..lo + n], "{what}");
        assert_eq!(gfirst, first, "{what}");
        assert_eq!(gcounts, counts, "{what}");
        ctx.checked += 1;
    }
}

fn real_transforms(ctx: &mut Ctx, rng: &mut Rng) {
    let cases: [(DType, &[usize], &[usize], Norm); 5] = [
        (DType::F32, &[16, 12], &[0, 1], Norm::None),
        (DType::F64, &[30, 7], &[0, 1], Norm::Backward),
        (DType::F32, &[9, 10, 6], &[0, 1, 2], Norm::Ortho),
        (DType::F64, &[8, 5, 600], &[0, 2], Norm::Forward),
        (DType::F32, &[6, 1030], &[1], Norm::Backward),
    ];
    for (real, shape, axes, norm) in cases {
        let cplx = if real == DType::F32 {
            DType::C64
        } else {
            DType::C128
        };
        let last = *axes.last().unwrap();
        let mut cshape = shape.to_vec();
        cshape[last] = shape[last] / 2 + 1;
        let count: usize = shape.iter().product();
        let ccount: usize = cshape.iter().product();
        let x = elements(rng, real, count, false);
        let (lo, n) = split(rng, shape[0], ctx.size, ctx.rank);
        let (rrow, crow) = (bytes_of(&shape[1..], real), bytes_of(&cshape[1..], cplx));
        let mut local = shape.to_vec();
        local[0] = n;
        let mut clocal = cshape.clone();
        clocal[0] = n;
        // Forward.
        let mut want = vec![0u8; ccount * cplx.info().item_bytes];
        tessera::fft::r2c(
            axes,
            norm,
            &ArrayView::contiguous(real, shape, &x).unwrap(),
            &mut ArrayViewMut::contiguous(cplx, &cshape, &mut want).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let mut got = vec![0u8; n * crow];
        fft_r2c(
            ctx.world,
            axes,
            norm,
            &ArrayView::contiguous(real, &local, &x[lo * rrow..(lo + n) * rrow]).unwrap(),
            &mut ArrayViewMut::contiguous(cplx, &clocal, &mut got).unwrap(),
            &my_exec(ctx.rank),
        )
        .unwrap();
        assert_eq!(
            got,
            want[lo * crow..(lo + n) * crow],
            "rank {}: r2c of {real} {shape:?} along {axes:?}",
            ctx.rank
        );
        // Inverse, from the forward result.
        let mut back = vec![0u8; count * real.info().item_bytes];
        tessera::fft::c2r(
            axes,
            norm,
            &ArrayView::contiguous(cplx, &cshape, &want).unwrap(),
            &mut ArrayViewMut::contiguous(real, shape, &mut back).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let mut got_back = vec![0u8; n * rrow];
        fft_c2r(
            ctx.world,
            axes,
            norm,
            &ArrayView::contiguous(cplx, &clocal, &want[lo * crow..(lo + n) * crow]).unwrap(),
            &mut ArrayViewMut::contiguous(real, &local, &mut got_back).unwrap(),
            &my_exec(ctx.rank),
        )
        .unwrap();
        assert_eq!(
            got_back,
            back[lo * rrow..(lo + n) * rrow],
            "rank {}: c2r of {real} {shape:?} along {axes:?}",
            ctx.rank
        );
        ctx.checked += 2;
    }
}

fn dots_and_distances(ctx: &mut Ctx, rng: &mut Rng) {
    for dtype in [DType::F32, DType::F64, DType::Bf16] {
        let shape = [3000usize, 2];
        let x = elements(rng, dtype, 6000, false);
        let y = elements(rng, dtype, 6000, false);
        let (lo, n) = split(rng, 3000, ctx.size, ctx.rank);
        let row = bytes_of(&shape[1..], dtype);
        let (xw, yw) = (
            ArrayView::contiguous(dtype, &shape, &x).unwrap(),
            ArrayView::contiguous(dtype, &shape, &y).unwrap(),
        );
        let (xl, yl) = (
            ArrayView::contiguous(dtype, &[n, 2], &x[lo * row..(lo + n) * row]).unwrap(),
            ArrayView::contiguous(dtype, &[n, 2], &y[lo * row..(lo + n) * row]).unwrap(),
        );
        let item = dtype.info().item_bytes;
        for (op, axes, whole, mine) in [
            (
                ReduceOp::Sum,
                &[0usize][..],
                Terms::squared_difference(&xw, &yw),
                Form::SquaredDifferences(&yl),
            ),
            (
                ReduceOp::Sum,
                &[0, 1][..],
                Terms::abs_difference(&xw, &yw),
                Form::AbsDifferences(&yl),
            ),
            (ReduceOp::Sum, &[0][..], Terms::abs(&xw), Form::Magnitudes),
            (
                ReduceOp::Max,
                &[0, 1][..],
                Terms::square(&xw),
                Form::Squares,
            ),
        ] {
            let oshape: Vec<usize> = if axes.len() == 2 { vec![] } else { vec![2] };
            let mut want = vec![0u8; 2 * item];
            let len = oshape.iter().product::<usize>() * item;
            tessera::reduce_terms(
                axes,
                whole,
                &mut [(
                    op,
                    &mut ArrayViewMut::contiguous(dtype, &oshape, &mut want[..len]).unwrap(),
                )],
                &Exec::default(),
            )
            .unwrap();
            let mut got = vec![0u8; 2 * item];
            reduce_terms(
                ctx.world,
                axes,
                &xl,
                mine,
                &mut [(
                    op,
                    &mut ArrayViewMut::contiguous(dtype, &oshape, &mut got[..len]).unwrap(),
                )],
                &my_exec(ctx.rank),
            )
            .unwrap();
            assert_eq!(got, want, "rank {}: {mine:?} of {dtype}", ctx.rank);
            ctx.checked += 1;
        }
        let mut want = vec![0u8; item];
        tessera::dot(
            &[0, 1],
            &xw,
            &yw,
            &mut ArrayViewMut::contiguous(dtype, &[], &mut want).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        let mut got = vec![0u8; item];
        dot(
            ctx.world,
            &xl,
            &yl,
            &mut ArrayViewMut::contiguous(dtype, &[], &mut got).unwrap(),
            &my_exec(ctx.rank),
        )
        .unwrap();
        assert_eq!(got, want, "rank {}: dot of {dtype}", ctx.rank);
        ctx.checked += 1;
    }
}

fn bytemuck_f32(v: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding and every byte of it is initialised; u8
    // has alignment 1 and the length covers exactly the values.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// A reduction of 4000 f64 split evenly, `bad` changing this rank's call;
/// the destination's bytes after the call and its outcome.
fn attempt(
    ctx: &Ctx,
    op: ReduceOp,
    bad: impl Fn(usize) -> Option<(Vec<usize>, DType)>,
) -> (std::result::Result<(), DistError>, bool) {
    let x: Vec<f64> = (0..4000).map(|i| (i as f64 * 0.37).sin()).collect();
    let per = 4000 / ctx.size;
    let lo = ctx.rank * per;
    let n = if ctx.rank + 1 == ctx.size {
        4000 - lo
    } else {
        per
    };
    let (shape, dtype) = bad(ctx.rank).unwrap_or((vec![], DType::F64));
    let mut out = [0x77u8; 8];
    let outcome = {
        let xl_bytes: &[u8] = bytemuck_f64(&x[lo..lo + n]);
        let xl = ArrayView::contiguous(DType::F64, &[n], xl_bytes).unwrap();
        let len = shape.iter().product::<usize>() * dtype.info().item_bytes;
        let mut d = ArrayViewMut::contiguous(dtype, &shape, &mut out[..len]).unwrap();
        reduce(ctx.world, op, &[0], &xl, &mut d, &my_exec(ctx.rank))
    };
    (outcome, out.iter().all(|&b| b == 0x77))
}

fn bytemuck_f64(v: &[f64]) -> &[u8] {
    // SAFETY: f64 has no padding and every byte of it is initialised; u8
    // has alignment 1 and the length covers exactly the values.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn refusals(ctx: &mut Ctx) {
    let last = ctx.size - 1;
    // A destination of the wrong shape on the last rank.
    let (r, untouched) = attempt(ctx, ReduceOp::Sum, |rank| {
        (rank == last).then(|| (vec![1, 1, 1, 1], DType::F64))
    });
    match r {
        Err(DistError::Refused { rank, .. }) => assert_eq!(rank as usize, last),
        other => panic!("rank {}: a bad destination gave {other:?}", ctx.rank),
    }
    assert!(untouched, "rank {}: written after a refusal", ctx.rank);
    // A dtype that differs (where there are two ranks to differ).
    let (r, untouched) = attempt(ctx, ReduceOp::Logsumexp, |rank| {
        (rank == last && last > 0).then(|| (vec![], DType::F32))
    });
    if last > 0 {
        assert!(
            matches!(r, Err(DistError::Mismatch { .. })),
            "rank {}: {r:?}",
            ctx.rank
        );
        assert!(untouched);
    } else {
        assert!(r.is_ok());
    }
    // A failure while computing a state on the last rank, and one while
    // merging on rank 0 (the second stage of a Variance).
    for (point, who) in [("state", last), ("merge", 0)] {
        if ctx.rank == who {
            fault::inject(Some(point));
        }
        let (r, untouched) = attempt(ctx, ReduceOp::Variance, |_| None);
        fault::inject(None);
        if point == "merge" && ctx.size == 1 {
            // One rank merges nothing.
            assert!(r.is_ok());
            continue;
        }
        match r {
            Err(DistError::Refused { rank, message }) => {
                assert_eq!(rank as usize, who, "{message}");
                assert!(message.contains("injected"), "{message}");
            }
            other => panic!("rank {}: a failure at {point} gave {other:?}", ctx.rank),
        }
        assert!(untouched, "rank {}: written after a failure", ctx.rank);
    }
    // Every rank still agrees after the refusals: a last good call.
    let (r, _) = attempt(ctx, ReduceOp::Sum, |_| None);
    assert!(r.is_ok());
    ctx.checked += 5;
}

fn main() {
    // No rank may hang: a call that waited on a rank that gave up would
    // stop here, not in CI's outer timeout.
    std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(240));
        eprintln!("tessera-mpi tests: still running after 240 s: a rank is waiting on another");
        std::process::exit(3);
    });
    let universe = mpi::initialize().expect("MPI initialises");
    let world = universe.world();
    let mut ctx = Ctx {
        world: &world,
        rank: world.rank() as usize,
        size: world.size() as usize,
        checked: 0,
    };
    let mut rng = Rng::for_label("mpi-ranks", tessera_testkit::rng::seed());
    reductions(&mut ctx, &mut rng);
    many_and_two_stage(&mut ctx, &mut rng);
    dots_and_distances(&mut ctx, &mut rng);
    contractions(&mut ctx, &mut rng);
    depth_contractions(&mut ctx, &mut rng);
    scans(&mut ctx, &mut rng);
    transforms(&mut ctx, &mut rng);
    real_transforms(&mut ctx, &mut rng);
    sorts(&mut ctx, &mut rng);
    numberings(&mut ctx, &mut rng);
    refusals(&mut ctx);
    let mut total = 0usize;
    world.all_reduce_into(
        &ctx.checked,
        &mut total,
        mpi::collective::SystemOperation::sum(),
    );
    if ctx.rank == 0 {
        println!(
            "tessera-mpi: {} ranks, {} checks per rank ({} in all) gave the single-process bits \
             and the collective refusals (tiers {:?})",
            ctx.size,
            ctx.checked,
            total,
            available_tiers()
        );
    }
}
