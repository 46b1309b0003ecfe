//! Sizes (ARCHITECTURE.md §4, "Refusals" and "Resources"): size arithmetic
//! that would overflow is refused with `Error::Overflow` naming the operand,
//! before any work; the block tree of the lane order (§5.3) is evaluated
//! with O(log B) state and the bits of its recursive definition; empty
//! arrays are accepted everywhere (and write nothing) unless a call's
//! contract refuses them; broadcast views (stride 0) that name far more
//! elements than they store are handled without scratch proportional to
//! what they name, or refused.
//!
//! The expected values come from models written here: the recursive block
//! tree, the lane order of a block, and exact sums of values whose sums are
//! exact.

use tessera::contract::grouped::{contract_grouped_depth, contract_grouped_rows};
use tessera::contract::{self, ContractSpec};
use tessera::map::{MapPlan, Program};
use tessera::reduce::lanes::{combine_block_products, combine_blocks};
use tessera::reduce::{scan_terms, ScanOp, Terms};
use tessera::{
    cast, elementwise, fill, formats, map, poly, quant, reduce, reduce_terms, scan, typed,
    ArrayView, ArrayViewMut, CastMode, DType, Error, Exec, Format, Kind, ReduceOp,
};
use tessera_testkit::rng::{seed, Rng};

mod common;

const SENTINEL: f32 = -7.25;

/// The execs every identity below runs on: each tier, 1, 2 and 7 threads.
fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for tier in common::tiers() {
        for threads in [1, 2, 7] {
            v.push(Exec::on(tier).threads(threads));
        }
    }
    v
}

fn is_overflow(r: tessera::Result<()>, operand_part: &str) {
    match r {
        Err(Error::Overflow { operand }) => assert!(
            operand.contains(operand_part),
            "the overflow names {operand:?}, not {operand_part:?}"
        ),
        other => panic!("expected an overflow naming {operand_part:?}, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Size arithmetic.

/// A reduction of `y0 = 1f32` over a loop of `shape` into a sentinel.
fn ones_reduced(
    shape: &[usize],
    axes: &[usize],
    op: ReduceOp,
    exec: &Exec,
) -> (tessera::Result<()>, f32) {
    let p = Program::parse("y0 = 1f32", &[]).expect("a program");
    let mut out = [SENTINEL];
    let r = {
        let mut d = ArrayViewMut::from_slice(&mut out, &[]).expect("a destination");
        reduce_terms(
            axes,
            Terms::program(&p, 0, &[], shape),
            &mut [(op, &mut d)],
            exec,
        )
    };
    (r, out[0])
}

#[test]
fn a_program_loop_whose_size_overflows_is_refused() {
    // 3 · 6148914691236517206 = 2^64 + 2: a count that wraps to 2.
    let wraps = [3usize, 6148914691236517206];
    // 2^64: wraps to 0 (a sum of 0, a mean of NaN, "extent 0" for Max).
    let zero = [1usize << 32, 1 << 32];
    // 2^63: fits a usize, not an isize (no array of it can be addressed).
    let past_isize = [1usize << 62, 2];
    for exec in [Exec::SEQ, Exec::default().threads(3)] {
        for shape in [&wraps[..], &zero, &past_isize] {
            for op in [
                ReduceOp::Sum,
                ReduceOp::Mean,
                ReduceOp::Max,
                ReduceOp::Variance,
            ] {
                let (r, v) = ones_reduced(shape, &[0, 1], op, &exec);
                is_overflow(r, "loop shape");
                assert_eq!(v.to_bits(), SENTINEL.to_bits(), "{shape:?} {op:?}: written");
            }
        }
    }
    // A loop that fits is reduced: 3 · 5 ones.
    let (r, v) = ones_reduced(&[3, 5], &[0, 1], ReduceOp::Sum, &Exec::SEQ);
    r.expect("a loop that fits");
    assert_eq!(v, 15.0);
}

#[test]
fn a_scan_of_a_program_loop_whose_size_overflows_is_refused() {
    let p = Program::parse("y0 = 1f32", &[]).expect("a program");
    let mut out = [SENTINEL; 4];
    let r = {
        let mut d = ArrayViewMut::from_slice(&mut out, &[4]).expect("a destination");
        scan_terms(
            0,
            Terms::program(&p, 0, &[], &[3, 6148914691236517206]),
            None,
            &mut [(ScanOp::Sum, &mut d)],
            &Exec::SEQ,
        )
    };
    is_overflow(r, "loop shape");
    assert!(out.iter().all(|v| v.to_bits() == SENTINEL.to_bits()));
}

#[test]
fn a_map_plan_of_shapes_whose_size_overflows_is_refused() {
    let p = Program::parse("y0 = x0 + 1f32", &[DType::F32]).expect("a program");
    let huge = [3usize, 6148914691236517206];
    is_overflow(MapPlan::new(&p, &[&[1]], &huge).map(|_| ()), "outputs");
    is_overflow(MapPlan::new(&p, &[&huge], &[4]).map(|_| ()), "input 0");
    // An empty shape of huge other extents is a plan of nothing.
    MapPlan::new(&p, &[&[1]], &[1 << 40, 1 << 40, 0]).expect("an empty loop");
}

#[test]
fn contraction_queries_of_shapes_whose_size_overflows_are_refused() {
    let spec = ContractSpec::new(DType::F32).contracting(1, 0);
    let huge = [1usize << 40, 1 << 40];
    is_overflow(
        contract::output_shape(&huge, &huge, &spec).map(|_| ()),
        "contract: a",
    );
    is_overflow(
        contract::ContractPlan::new(&spec, (&huge, DType::F32), (&huge, DType::F32)).map(|_| ()),
        "contract: a",
    );
    // Empty operands whose product would have 2^64 elements.
    let (a, b) = ([1usize << 32, 0], [0usize, 1 << 32]);
    is_overflow(
        contract::output_shape(&a, &b, &spec).map(|_| ()),
        "destination",
    );
    // And empty ones with an empty product: nothing to pack.
    let size =
        contract::ContractPlan::new(&spec, (&[1 << 40, 0], DType::F32), (&[0, 0], DType::F32))
            .expect("an empty product")
            .scratch_bytes();
    assert_eq!(size, 0);
}

#[test]
fn views_follow_the_size_rule() {
    let none: [u8; 0] = [];
    // More elements than an isize counts: refused, however the product is
    // reached.
    for shape in [&[1usize << 40, 1 << 40][..], &[1 << 62, 2], &[usize::MAX]] {
        match ArrayView::contiguous(DType::F32, shape, &none) {
            Err(Error::Overflow { operand }) => assert_eq!(operand, "view"),
            other => panic!("{shape:?}: {other:?}"),
        }
    }
    // An extent of 0 makes a view empty whatever the others are.
    for shape in [
        &[1usize << 40, 1 << 40, 0][..],
        &[0, usize::MAX, usize::MAX],
    ] {
        let v = ArrayView::contiguous(DType::F32, shape, &none).expect("an empty view");
        assert_eq!(v.layout().len(), 0);
        assert!(v.layout().is_empty());
    }
    assert_eq!(
        tessera::array::element_count(&[3, 6148914691236517206]),
        None
    );
    assert_eq!(tessera::array::element_count(&[usize::MAX, 0]), Some(0));
    assert_eq!(tessera::array::element_count(&[]), Some(1));
    assert_eq!(
        tessera::array::element_count(&[1 << 31, 1 << 31]),
        Some(1 << 62)
    );
}

#[test]
fn encoded_sizes_count_empty_tensors_as_empty() {
    let s = formats::encoded_sizes(Format::Mxfp8E4m3, &[1 << 40, 1 << 40, 0]).expect("empty");
    assert_eq!((s.blocks, s.code_bytes), (0, 0));
    match formats::encoded_sizes(Format::Mxfp8E4m3, &[1 << 40, 1 << 40, 32]) {
        Err(Error::Overflow { operand }) => assert_eq!(operand, "source"),
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------
// The block tree.

/// The block tree by its definition: the left part holds the largest power
/// of two of values strictly below their count, each part the same way.
fn model_tree<T: Copy>(v: &[T], op: &impl Fn(T, T) -> T) -> Option<T> {
    match v.len() {
        0 => None,
        1 => Some(v[0]),
        n => {
            let mut p = 1;
            while p * 2 < n {
                p *= 2;
            }
            Some(op(model_tree(&v[..p], op)?, model_tree(&v[p..], op)?))
        }
    }
}

/// One block of terms (f32 or f64) in lane order: lane j mod 16 from +0, the fold
/// 8, 4, 2, 1.
fn model_block<T: Copy + Default + core::ops::AddAssign>(x: &[T]) -> T {
    let mut l = [T::default(); 16];
    for (j, &v) in x.iter().enumerate() {
        l[j % 16] += v;
    }
    for w in [8, 4, 2, 1] {
        for i in 0..w {
            let r = l[i + w];
            l[i] += r;
        }
    }
    l[0]
}

/// A Sum of f32 terms in lane order, by the models.
fn model_sum(x: &[f32]) -> f32 {
    let blocks: Vec<f32> = x.chunks(1024).map(model_block::<f32>).collect();
    model_tree(&blocks, &|a, b| a + b).unwrap_or(0.0)
}

#[test]
fn the_streamed_block_tree_has_the_bits_of_its_definition() {
    let mut rng = Rng::for_label("sizes/tree", seed());
    let v64: Vec<f64> = (0..5000).map(|_| rng.spread()).collect();
    let v32: Vec<f32> = (0..5000).map(|_| rng.spread() as f32).collect();
    // Products near 1 (so they neither overflow nor vanish).
    let p64: Vec<f64> = (0..5000).map(|_| 1.0 + rng.spread() * 1e-5).collect();
    for b in 1..=5000 {
        let (x, y, z) = (&v64[..b], &v32[..b], &p64[..b]);
        let want = model_tree(x, &|a, b| a + b).unwrap();
        assert_eq!(
            combine_blocks(x).to_bits(),
            want.to_bits(),
            "f64, {b} blocks"
        );
        let want = model_tree(y, &|a, b| a + b).unwrap();
        assert_eq!(
            combine_blocks(y).to_bits(),
            want.to_bits(),
            "f32, {b} blocks"
        );
        let want = model_tree(z, &|a, b| a * b).unwrap();
        assert_eq!(
            combine_block_products(z).to_bits(),
            want.to_bits(),
            "prod, {b} blocks"
        );
    }
    assert_eq!(combine_blocks::<f32>(&[]), 0.0);
    assert_eq!(combine_block_products::<f64>(&[]), 1.0);
}

/// The Sum of every term of `x`, through `tessera::reduce`.
fn sum_on<T: tessera::Element + Copy + Default>(x: &[T], exec: Exec) -> T {
    let mut out = [T::default()];
    tessera::reduce(
        ReduceOp::Sum,
        &[0],
        &ArrayView::from_slice(x, &[x.len()]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
        &exec,
    )
    .unwrap();
    out[0]
}

#[test]
fn block_sums_have_their_bits_wherever_the_slice_starts() {
    // The vector tiers read whole blocks by loads aligned to their register
    // size, their lanes rotated by the slice's offset from the alignment;
    // every offset of a 64-byte line, block counts around the four blocks
    // summed side by side, a partial last block, and -0 terms (a lane that
    // starts from +0 must give +0 for them).
    let mut rng = Rng::for_label("sizes/aligned-blocks", seed());
    let big = 9 * 1024 + 40;
    let mut v32 = spread_f32(&mut rng, big + 16);
    let mut v64: Vec<f64> = (0..big + 16).map(|_| rng.spread()).collect();
    for j in (0..big).step_by(7) {
        v32[j] = -0.0;
        v64[j] = -0.0;
    }
    for n in [
        1024usize,
        3 * 1024,
        4 * 1024,
        5 * 1024 + 1,
        8 * 1024,
        9 * 1024 + 37,
    ] {
        for off in 0..16 {
            let x = &v32[off..off + n];
            let blocks: Vec<f32> = x.chunks(1024).map(model_block).collect();
            let want = model_tree(&blocks, &|a, b| a + b).unwrap();
            let y = &v64[off..off + n];
            let blocks: Vec<f64> = y.chunks(1024).map(model_block).collect();
            let want64 = model_tree(&blocks, &|a, b| a + b).unwrap();
            for tier in common::tiers() {
                let got = sum_on(x, Exec::on(tier));
                let say = |t| format!("{t}, {n} terms from element {off}, {tier:?}");
                assert_eq!(got.to_bits(), want.to_bits(), "{}", say("f32"));
                let got = sum_on(y, Exec::on(tier));
                assert_eq!(got.to_bits(), want64.to_bits(), "{}", say("f64"));
            }
        }
    }
}

/// `n` values of widely spread magnitudes, so that another association
/// almost surely changes a sum's bits.
fn spread_f32(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.spread() as f32).collect()
}

#[test]
fn reductions_combine_their_blocks_by_the_tree_at_every_thread_count() {
    let mut rng = Rng::for_label("sizes/reduce-tree", seed());
    // Block counts around powers of two and a few odd ones; the parallel
    // path (few outputs, many blocks) starts at 2^16 terms.
    for blocks in [
        1usize, 2, 3, 7, 8, 9, 63, 64, 65, 100, 127, 129, 255, 257, 300,
    ] {
        let n = blocks * 1024 - rng.below_usize(1024);
        let x = spread_f32(&mut rng, n);
        let want = model_sum(&x);
        // Contiguous in place; strided (gathered); a program's output.
        let strided: Vec<f32> = x.iter().flat_map(|&v| [v, f32::NAN]).collect();
        let p = Program::parse("y0 = x0 * 1f32", &[DType::F32]).expect("a program");
        for exec in execs() {
            let mut out = [0f32];
            let v = ArrayView::from_slice(&x, &[n]).unwrap();
            tessera::reduce(
                ReduceOp::Sum,
                &[0],
                &v,
                &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(
                out[0].to_bits(),
                want.to_bits(),
                "contiguous, {n} terms, {exec:?}"
            );
            let s = ArrayView::from_slice_strided(&strided, &[n], &[2], 0).unwrap();
            tessera::reduce(
                ReduceOp::Sum,
                &[0],
                &s,
                &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(
                out[0].to_bits(),
                want.to_bits(),
                "strided, {n} terms, {exec:?}"
            );
            let views = [v.clone()];
            reduce_terms(
                &[0],
                Terms::program(&p, 0, &views, &[n]),
                &mut [(
                    ReduceOp::Sum,
                    &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
                )],
                &exec,
            )
            .unwrap();
            assert_eq!(
                out[0].to_bits(),
                want.to_bits(),
                "program, {n} terms, {exec:?}"
            );
        }
    }
}

#[test]
fn outputs_gathered_in_groups_combine_their_blocks_by_the_tree() {
    // A reduction over the outer axis of [n, 20]: 20 outputs whose terms
    // are gathered, block by block, a group of outputs at a time.
    let mut rng = Rng::for_label("sizes/reduce-groups", seed());
    let cols = 20;
    for blocks in [1usize, 3, 5, 17] {
        let n = blocks * 1024 - 3;
        let x = spread_f32(&mut rng, n * cols);
        let want: Vec<f32> = (0..cols)
            .map(|j| model_sum(&(0..n).map(|i| x[i * cols + j]).collect::<Vec<_>>()))
            .collect();
        for exec in execs() {
            let mut out = vec![0f32; cols];
            tessera::reduce(
                ReduceOp::Sum,
                &[0],
                &ArrayView::from_slice(&x, &[n, cols]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut out, &[cols]).unwrap(),
                &exec,
            )
            .unwrap();
            for j in 0..cols {
                assert_eq!(
                    out[j].to_bits(),
                    want[j].to_bits(),
                    "column {j}, {n} rows, {exec:?}"
                );
            }
        }
    }
}

/// A lane-order dot of f32 products, by the models (each lane fused
/// multiply-adds from +0).
fn model_dot(a: &[f32], b: &[f32]) -> f32 {
    let blocks: Vec<f32> = a
        .chunks(1024)
        .zip(b.chunks(1024))
        .map(|(x, y)| {
            let mut l = [0f32; 16];
            for (j, (&p, &q)) in x.iter().zip(y).enumerate() {
                l[j % 16] = p.mul_add(q, l[j % 16]);
            }
            for w in [8, 4, 2, 1] {
                for i in 0..w {
                    l[i] += l[i + w];
                }
            }
            l[0]
        })
        .collect();
    model_tree(&blocks, &|a, b| a + b).unwrap_or(0.0)
}

#[test]
fn a_long_lane_order_dot_walks_its_depth_with_the_bits_of_the_tree() {
    // Depths below and above the one from which lane order stops gathering
    // whole rows and columns (2^22 products), with one operand broadcast.
    let mut rng = Rng::for_label("sizes/dot", seed());
    for k in [3 * 1024 + 5, (1 << 22) + 1000] {
        let a = spread_f32(&mut rng, k);
        let c = [rng.spread() as f32];
        let b = vec![c[0]; k];
        let want = model_dot(&a, &b);
        let va = ArrayView::from_slice(&a, &[k]).unwrap();
        let vb = ArrayView::from_slice_strided(&c, &[k], &[0], 0).unwrap();
        for exec in [
            Exec::SEQ,
            Exec::default().threads(2),
            Exec::default().threads(7),
        ] {
            let mut out = [0f32];
            contract::inner_product(
                &va,
                &vb,
                &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(out[0].to_bits(), want.to_bits(), "k {k}, {exec:?}");
            // The same product with the broadcast operand first, and a
            // strided (every other element) contiguous one.
            let a2: Vec<f32> = a.iter().flat_map(|&v| [v, 0.0]).collect();
            let va2 = ArrayView::from_slice_strided(&a2, &[k], &[2], 0).unwrap();
            contract::inner_product(
                &vb,
                &va2,
                &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            let want2 = model_dot(&b, &a);
            assert_eq!(out[0].to_bits(), want2.to_bits(), "k {k} swapped, {exec:?}");
        }
    }
}

#[test]
fn a_broadcast_gemv_of_a_long_depth_has_each_rows_dot() {
    // a [3, K] broadcast along its rows (stride 0) times x [K]: every row is
    // the same dot, in lane order.
    let mut rng = Rng::for_label("sizes/gemv", seed());
    let k = (1 << 21) + 77;
    let row = spread_f32(&mut rng, k);
    let x = spread_f32(&mut rng, k);
    let want = model_dot(&row, &x);
    let a = ArrayView::from_slice_strided(&row, &[3, k], &[0, 1], 0).unwrap();
    let vx = ArrayView::from_slice(&x, &[k]).unwrap();
    for exec in [Exec::SEQ, Exec::default().threads(4)] {
        let mut y = [0f32; 3];
        contract::gemv(
            &a,
            &vx,
            &mut ArrayViewMut::from_slice(&mut y, &[3]).unwrap(),
            &exec,
        )
        .unwrap();
        for v in y {
            assert_eq!(v.to_bits(), want.to_bits(), "{exec:?}");
        }
    }
}

#[test]
fn series_sums_follow_the_tree() {
    let mut rng = Rng::for_label("sizes/series", seed());
    let x = spread_f32(&mut rng, 70 * 1024 + 9);
    let c = 0.25f32;
    let d: Vec<f32> = x.iter().map(|&v| (v - c) * (v - c)).collect();
    let got = tessera::reduce::sum_squared_deviations(c, &x, &Exec::SEQ).unwrap();
    assert_eq!(got.to_bits(), model_sum(&d).to_bits());
    let w = 3 * 1024 + 1;
    let mut out = vec![0f32; x.len() - w + 1];
    tessera::reduce::rolling_mean(w, &x, &mut out, &Exec::SEQ).unwrap();
    for i in [0, 1, 500, out.len() - 1] {
        let want = model_sum(&x[i..i + w]) / w as f32;
        assert_eq!(out[i].to_bits(), want.to_bits(), "window {i}");
    }
}

// ---------------------------------------------------------------------------
// Empty arrays.

#[test]
fn an_empty_packed_view_takes_no_packing_rule() {
    let none: [u8; 0] = [];
    let mut nothing: [u8; 0] = [];
    let src = ArrayView::contiguous(DType::F32, &[3, 0], &none).unwrap();
    for dtype in [DType::I4, DType::U4, DType::U1, DType::E2m1fn] {
        for shape in [&[3usize, 0][..], &[0, 0, 5], &[0, 3], &[5, 0, 7]] {
            let mut d = ArrayViewMut::contiguous(dtype, shape, &mut nothing)
                .unwrap_or_else(|e| panic!("{dtype} {shape:?}: {e}"));
            if shape == [3, 0] {
                for exec in execs() {
                    cast(CastMode::Default, &src, &mut d, &exec).unwrap();
                }
            }
        }
    }
    // A packed view that is not empty still follows the rules.
    let one = [0u8; 2];
    assert!(matches!(
        ArrayView::contiguous(DType::I4, &[3, 1, 3], &one),
        Err(Error::Layout { .. })
    ));
}

#[test]
fn an_empty_destination_of_any_strides_is_written_nothing() {
    // Zero strides on an empty destination reach no element twice.
    let mut nothing: [u8; 0] = [];
    let x = [1.0f32; 5];
    let vx = ArrayView::from_slice(&x, &[5]).unwrap();
    let mut d = ArrayViewMut::new(DType::F32, &[0, 5], &[0, 0], 0, &mut nothing).unwrap();
    fill::random(3, &mut d, &Exec::SEQ).unwrap();
    elementwise(Kind::Add, &[vx.clone(), vx.clone()], &mut d, &Exec::SEQ).unwrap();
    cast(CastMode::Default, &vx, &mut d, &Exec::SEQ).unwrap();
    let p = Program::parse("y0 = x0 * 2f32", &[DType::F32]).unwrap();
    map(
        &p,
        std::slice::from_ref(&vx),
        std::slice::from_mut(&mut d),
        &Exec::SEQ,
    )
    .unwrap();
    poly::polyval(
        &[1.0, 2.0],
        &ArrayView::contiguous(DType::F32, &[0, 5], &[]).unwrap(),
        &mut d,
        &Exec::SEQ,
    )
    .unwrap();
    let y = ArrayView::contiguous(DType::F32, &[0, 5, 4], &[]).unwrap();
    let mut r = ArrayViewMut::new(DType::F32, &[0, 5], &[0, 0], 0, &mut []).unwrap();
    reduce(ReduceOp::Sum, &[2], &y, &mut r, &Exec::SEQ).unwrap();
    reduce(ReduceOp::Max, &[2], &y, &mut r, &Exec::SEQ).unwrap();
}

#[test]
fn empty_operands_of_huge_other_extents_run_every_call() {
    let huge = [1usize << 40, 1 << 40, 0];
    let e = |d: DType| ArrayView::contiguous(d, &huge, &[]).unwrap();
    let mut none: [u8; 0] = [];
    for exec in execs() {
        let mut out = ArrayViewMut::contiguous(DType::F32, &huge, &mut none).unwrap();
        elementwise(Kind::Mul, &[e(DType::F32), e(DType::F32)], &mut out, &exec).unwrap();
        cast(CastMode::Saturating, &e(DType::F64), &mut out, &exec).unwrap();
        fill::random(1, &mut out, &exec).unwrap();
        let p = Program::parse("y0 = x0 + cast<f32>(coord(1))", &[DType::F32]).unwrap();
        map(&p, &[e(DType::F32)], std::slice::from_mut(&mut out), &exec).unwrap();
        poly::polyval(&[1.0, -1.0], &e(DType::F32), &mut out, &exec).unwrap();
        scan(ScanOp::Sum, 1, &e(DType::F32), None, &mut out, &exec).unwrap();
        scan(ScanOp::Variance, 2, &e(DType::F32), None, &mut out, &exec).unwrap();
        let mut q = ArrayViewMut::contiguous(DType::I8, &huge, &mut none).unwrap();
        quant::quantize(
            &quant::QParams::Tensor {
                scale: 0.5,
                zero_point: 1,
            },
            &e(DType::F32),
            &mut q,
            &exec,
        )
        .unwrap();
        contract::qmatmul::requantize_i8(0.5, 0, &e(DType::I32), &mut q, &exec).unwrap();
        // Reductions: no output at all, for every op (Max of no term is
        // refused only where there is an output).
        let mut r = ArrayViewMut::contiguous(DType::F32, &[1 << 40, 0], &mut none).unwrap();
        for op in [
            ReduceOp::Sum,
            ReduceOp::Mean,
            ReduceOp::Max,
            ReduceOp::L2Norm,
        ] {
            reduce(op, &[1], &e(DType::F32), &mut r, &exec).unwrap();
        }
        let mut r = ArrayViewMut::contiguous(DType::F32, &[0], &mut none).unwrap();
        reduce(ReduceOp::Sum, &[0, 1], &e(DType::F32), &mut r, &exec).unwrap();
        // A program's empty loop, reduced over its huge axes.
        let (res, v) = ones_reduced(&[0, 1 << 40, 1 << 40], &[0], ReduceOp::Sum, &exec);
        assert!(matches!(res, Err(Error::Shape { .. })), "{res:?}");
        assert_eq!(v.to_bits(), SENTINEL.to_bits());
        let p = Program::parse("y0 = 1f32", &[]).unwrap();
        reduce_terms(
            &[1, 2],
            Terms::program(&p, 0, &[], &[0, 1 << 40, 1 << 40]),
            &mut [(ReduceOp::Max, &mut r)],
            &exec,
        )
        .unwrap();
    }
}

#[test]
fn terms_of_no_term_reduce_to_their_identities_whatever_the_other_extents() {
    // x [4, 0, 2^40]: four outputs of no term each.
    let x = ArrayView::contiguous(DType::F32, &[4, 0, 1 << 40], &[]).unwrap();
    for exec in execs() {
        for (op, want) in [
            (ReduceOp::Sum, 0.0f32),
            (ReduceOp::Prod, 1.0),
            (ReduceOp::L2Norm, 0.0),
        ] {
            let mut out = [SENTINEL; 4];
            reduce(
                op,
                &[1, 2],
                &x,
                &mut ArrayViewMut::from_slice(&mut out, &[4]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(out, [want; 4], "{op:?}");
        }
        let mut out = [SENTINEL; 4];
        let r = reduce(
            ReduceOp::Max,
            &[1, 2],
            &x,
            &mut ArrayViewMut::from_slice(&mut out, &[4]).unwrap(),
            &exec,
        );
        assert!(matches!(r, Err(Error::Axis { axis: 1, .. })), "{r:?}");
        assert_eq!(out, [SENTINEL; 4]);
    }
}

#[test]
fn contractions_of_empty_operands_hold_their_init() {
    // (batch, rows, cols) = (2^32, 2^32, 0): no element anywhere.
    let a = ArrayView::contiguous(DType::F32, &[1 << 32, 1 << 32, 0], &[]).unwrap();
    let b = ArrayView::contiguous(DType::F32, &[1 << 32, 0, 0], &[]).unwrap();
    let mut none: [u8; 0] = [];
    let mut d = ArrayViewMut::contiguous(DType::F32, &[1 << 32, 1 << 32, 0], &mut none).unwrap();
    let spec = ContractSpec::matmul(3, DType::F32);
    for exec in execs() {
        contract::contract(&spec, &a, &b, None, &mut d, &exec).unwrap();
    }
    // A depth of 0 (its extents [2^40, 0]) with outputs: each is its init.
    let a = ArrayView::contiguous(DType::F32, &[2, 1 << 40, 0], &[]).unwrap();
    let b = ArrayView::contiguous(DType::F32, &[1 << 40, 0, 3], &[]).unwrap();
    let init = [1.5f32, -2.0, 0.25];
    let vi = ArrayView::from_slice(&init, &[3]).unwrap();
    let spec = ContractSpec::new(DType::F32)
        .contracting(1, 0)
        .contracting(2, 1);
    for acc in [DType::F32, DType::F64, DType::C64, DType::I32] {
        let spec = ContractSpec {
            acc,
            ..spec.clone()
        };
        for exec in execs() {
            let mut out = [SENTINEL; 6];
            contract::contract(
                &spec,
                &a,
                &b,
                Some(&vi),
                &mut ArrayViewMut::from_slice(&mut out, &[2, 3]).unwrap(),
                &exec,
            )
            .unwrap();
            let want: Vec<f32> = (0..6)
                .map(|i| {
                    if acc == DType::I32 {
                        init[i % 3].trunc()
                    } else {
                        init[i % 3]
                    }
                })
                .collect();
            assert_eq!(out.to_vec(), want, "{acc}");
        }
    }
}

#[test]
fn grouped_contractions_of_no_output_run_nothing() {
    // Depth groups: 2^40 groups of empty [R, N] outputs.
    let a = ArrayView::contiguous(DType::F32, &[0, 2], &[]).unwrap();
    let b = ArrayView::contiguous(DType::F32, &[2, 0], &[]).unwrap();
    let mut none: [u8; 0] = [];
    let mut d = ArrayViewMut::contiguous(DType::F32, &[1 << 40, 0, 0], &mut none).unwrap();
    contract_grouped_depth(
        DType::F32,
        1 << 40,
        &a,
        &b,
        &[0u32, (1 << 31) + 5],
        None,
        &mut d,
        &Exec::SEQ,
    )
    .unwrap();
    // Its ids are still checked.
    let r = contract_grouped_depth(DType::F32, 3, &a, &b, &[0u32, 3], None, &mut d, &Exec::SEQ);
    assert!(matches!(r, Err(Error::Attribute { .. })), "{r:?}");
}

#[test]
fn formats_of_empty_tensors_encode_and_decode_nothing() {
    let src = ArrayView::contiguous(DType::F32, &[1 << 40, 1 << 40, 0], &[]).unwrap();
    for format in [Format::Mxfp8E4m3, Format::Mxfp4, Format::Nvfp4] {
        let t = formats::encode(format, None, &src, &mut [], &mut [], &Exec::SEQ).unwrap();
        assert_eq!(t.is_some(), format.info().tensor_scale.is_some());
        let mut none: [u8; 0] = [];
        let mut d =
            ArrayViewMut::contiguous(DType::F64, &[1 << 40, 1 << 40, 0], &mut none).unwrap();
        formats::decode(format, &[], &[], t, &mut d, &Exec::SEQ).unwrap();
    }
}

#[test]
fn the_other_calls_take_empty_operands_too() {
    let huge = [1usize << 40, 0, 1 << 40];
    let e = |d: DType| ArrayView::contiguous(d, &huge, &[]).unwrap();
    for exec in [Exec::SEQ, Exec::default().threads(3)] {
        // map in place, and planned.
        let p = Program::parse("y0 = x0 * x1", &[DType::F32, DType::F32]).unwrap();
        let mut out = ArrayViewMut::contiguous(DType::F32, &huge, &mut []).unwrap();
        map::map_in_place(
            &p,
            &[map::Source::Output(0), map::Source::View(e(DType::F32))],
            std::slice::from_mut(&mut out),
            &exec,
        )
        .unwrap();
        let plan = MapPlan::new(&p, &[&huge, &[1]], &huge).unwrap();
        let one = [2.0f32];
        plan.run(
            &[e(DType::F32), ArrayView::from_slice(&one, &[1]).unwrap()],
            std::slice::from_mut(&mut out),
            &exec,
        )
        .unwrap();
        // Reductions of pairs and their helpers, several outputs, scans of
        // several outputs.
        let mut r = ArrayViewMut::contiguous(DType::F32, &[1 << 40, 0], &mut []).unwrap();
        tessera::dot(&[2], &e(DType::F32), &e(DType::F32), &mut r, &exec).unwrap();
        tessera::l2_norm(&[2], &e(DType::F64), &mut r, &exec).unwrap();
        let mut r2 = ArrayViewMut::contiguous(DType::F32, &[1 << 40, 0], &mut []).unwrap();
        tessera::min_max(&[2], &e(DType::I8), &mut r, &mut r2, &exec).unwrap();
        let mut o2 = ArrayViewMut::contiguous(DType::F64, &huge, &mut []).unwrap();
        tessera::scan_many(
            0,
            &e(DType::F32),
            None,
            &mut [(ScanOp::Prod, &mut out), (ScanOp::Logsumexp, &mut o2)],
            &exec,
        )
        .unwrap();
        // Contractions: with caller's scratch, quantised, block-scaled.
        let spec = ContractSpec::new(DType::F32).contracting(2, 0);
        let b = ArrayView::from_slice_strided(&one, &[1 << 40, 3], &[0, 0], 0).unwrap();
        let mut d = ArrayViewMut::contiguous(DType::F32, &[1 << 40, 0, 3], &mut []).unwrap();
        let mut scratch = tessera::Scratch::new();
        contract::ContractPlan::new(&spec, (&huge, DType::F32), (&[1 << 40, 3], DType::F32))
            .unwrap()
            .run_with_scratch(&e(DType::F32), &b, None, &mut d, &mut scratch, &exec)
            .unwrap();
        let qa = ArrayView::contiguous(DType::I8, &[0, 1 << 40], &[]).unwrap();
        let qb = ArrayView::contiguous(DType::U8, &[1 << 40, 0], &[]).unwrap();
        let mut qd = ArrayViewMut::contiguous(DType::I32, &[0, 0], &mut []).unwrap();
        contract::qmatmul::qmatmul_i8(&qa, &qb, &mut qd, &exec).unwrap();
        let scaled = contract::scaled::Operand::Scaled(contract::scaled::Scaled {
            format: Format::Mxfp8E4m3,
            shape: &[0, 1 << 40, 32],
            codes: &[],
            scales: &[],
            tensor_scale: None,
        });
        let bb = [0.5f32; 160];
        let plain = contract::scaled::Operand::Plain(ArrayView::from_slice(&bb, &[32, 5]).unwrap());
        let mut sd = ArrayViewMut::contiguous(DType::F32, &[0, 1 << 40, 5], &mut []).unwrap();
        contract::scaled::contract_scaled(
            &ContractSpec::new(DType::F32).contracting(2, 0),
            &scaled,
            &plain,
            None,
            &mut sd,
            &exec,
        )
        .unwrap();
        // A transcode of an empty tensor.
        let t = formats::transcode(
            Format::Mxfp8E4m3,
            Format::Nvfp4,
            None,
            &[1 << 40, 0, 64],
            &[],
            &[],
            None,
            &mut [],
            &mut [],
            &exec,
        )
        .unwrap();
        assert_eq!(t, Some(1.0));
    }
    // The lane-level and series calls on empty slices.
    let none: [f32; 0] = [];
    tessera::reduce::lanes::sum_lanes(&none, &mut [], &Exec::SEQ).unwrap();
    tessera::reduce::diff(&none, &mut [], &Exec::SEQ).unwrap();
    tessera::reduce::ema(0.5, &none, &mut [], &Exec::SEQ).unwrap();
    let s = tessera::reduce::sum_squared_deviations(1.0, &none, &Exec::SEQ).unwrap();
    assert_eq!(s, 0.0);
}

#[test]
fn typed_slices_may_be_empty() {
    let none: [f32; 0] = [];
    let mut out: [f32; 0] = [];
    let exec = Exec::SEQ;
    typed::elementwise(Kind::Add, &[&none, &none], &mut out, &exec).unwrap();
    typed::cast(CastMode::Default, &none, &mut out, &exec).unwrap();
    let s: f32 = typed::reduce(ReduceOp::Sum, &none, &exec).unwrap();
    assert_eq!(s, 0.0);
    let m: tessera::Result<f32> = typed::reduce(ReduceOp::Max, &none, &exec);
    assert!(matches!(m, Err(Error::Axis { .. })), "{m:?}");
    let mut c = [SENTINEL; 6];
    typed::matmul(&none, &none, (2, 0, 3), &mut c, &exec).unwrap();
    assert_eq!(c, [0.0; 6]);
    typed::matmul(&none, &[1.0f32; 3], (0, 1, 3), &mut out, &exec).unwrap();
}

// ---------------------------------------------------------------------------
// Broadcast operands and scratch.

#[test]
fn row_groups_of_a_broadcast_b_allocate_for_the_rows_not_the_groups() {
    // b names 2^40 groups (stride 0): the grouping holds one entry per row
    // (ids up to u32::MAX).
    let a = [1.0f32, 2.0, 3.0, 4.0];
    let bb = [1.0f32, 10.0, 100.0, 1000.0];
    let va = ArrayView::from_slice(&a, &[2, 2]).unwrap();
    let vb = ArrayView::from_slice_strided(&bb, &[1 << 40, 2, 2], &[0, 2, 1], 0).unwrap();
    for exec in execs() {
        let mut d = [SENTINEL; 4];
        contract_grouped_rows(
            DType::F32,
            &va,
            &vb,
            &[u32::MAX, 7],
            None,
            &mut ArrayViewMut::from_slice(&mut d, &[2, 2]).unwrap(),
            &exec,
        )
        .unwrap();
        // [1 2; 3 4] · [1 10; 100 1000]
        assert_eq!(d, [201.0, 2010.0, 403.0, 4030.0], "{exec:?}");
    }
}

#[test]
fn a_transcode_checks_its_buffers_before_it_allocates() {
    let r = formats::transcode(
        Format::Mxfp8E4m3,
        Format::Mxfp8E5m2,
        None,
        &[1 << 40],
        &[],
        &[],
        None,
        &mut [],
        &mut [],
        &Exec::SEQ,
    );
    match r {
        Err(Error::Length {
            operand, expected, ..
        }) => {
            assert_eq!(operand, "codes");
            assert_eq!(expected, 1 << 40);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_broadcast_reduction_is_the_sum_of_its_repeated_value() {
    // 2^22 + 2^21 copies of 0.5 (stride 0): a sum exact in f32, computed
    // block by block with no array of the terms.
    let n = (1 << 22) + (1 << 21);
    let half = [0.5f32];
    let v = ArrayView::from_slice_strided(&half, &[n], &[0], 0).unwrap();
    for exec in [Exec::SEQ, Exec::default().threads(3)] {
        let (mut sum, mut mean) = ([0f32], [0f32]);
        tessera::reduce_many(
            &[0],
            &v,
            &mut [
                (
                    ReduceOp::Sum,
                    &mut ArrayViewMut::from_slice(&mut sum, &[]).unwrap(),
                ),
                (
                    ReduceOp::Mean,
                    &mut ArrayViewMut::from_slice(&mut mean, &[]).unwrap(),
                ),
            ],
            &exec,
        )
        .unwrap();
        assert_eq!((sum[0], mean[0]), (n as f32 / 2.0, 0.5), "{exec:?}");
    }
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_views_may_be_empty() {
    use ndarray::{s, Array2, Array3};
    let a = Array3::<f32>::zeros((4, 0, 6));
    let mut y = Array3::<f32>::zeros((4, 0, 6));
    let exec = Exec::SEQ;
    tessera::nd::elementwise(Kind::Add, &[a.view(), a.view()], y.view_mut(), &exec).unwrap();
    // A stepped (gapped) empty destination, and a stepped input.
    let mut big = Array3::<f32>::zeros((4, 0, 12));
    let stepped = big.slice_mut(s![.., .., ..;2]);
    tessera::nd::cast(CastMode::Default, a.view(), stepped, &exec).unwrap();
    let mut r = Array2::<f32>::from_elem((4, 6), SENTINEL);
    tessera::nd::reduce(ReduceOp::Sum, &[1], a.view(), r.view_mut(), &exec).unwrap();
    assert!(r.iter().all(|&v| v == 0.0));
    let m = Array2::<f32>::zeros((3, 0));
    let n = Array2::<f32>::zeros((0, 2));
    let mut p = Array2::<f32>::from_elem((3, 2), SENTINEL);
    tessera::nd::matmul(m.view(), n.view(), p.view_mut(), &exec).unwrap();
    assert!(p.iter().all(|&v| v == 0.0));
}
