//! The public API's shape and its conveniences: every call that computes
//! takes (attributes, inputs, destinations, exec) in that order (checked by
//! the compiler below); the typed slice and ndarray forms, the map plan and
//! the caller's contraction scratch give the view-based calls' bits.

mod common;

use num_complex::Complex;
use tessera::contract::scaled::Operand;
use tessera::contract::{ContractPlan, ContractScratch, ContractSpec};
use tessera::map::{MapPlan, Program, Source};
use tessera::reduce::series;
use tessera::{
    typed, ArrayView, ArrayViewMut, CastMode, DType, Error, Exec, Kind, Par, ReduceOp, Result,
    ScanOp, Terms,
};
use tessera_testkit::rng::Rng;

type V<'a> = ArrayView<'a>;
type M<'a> = ArrayViewMut<'a>;

/// Each public call, coerced to a function pointer of its documented shape:
/// attributes, inputs, destinations, then `&Exec`. A call whose order
/// changes no longer compiles here.
#[test]
#[allow(clippy::type_complexity)]
fn every_call_takes_attributes_inputs_destinations_then_exec() {
    let _: fn(Kind, &[V], &mut M, &Exec) -> Result<()> = tessera::elementwise;
    let _: fn(CastMode, &V, &mut M, &Exec) -> Result<()> = tessera::cast;
    let _: fn(&Program, &[V], &mut [M], &Exec) -> Result<()> = tessera::map;
    let _: fn(&Program, &[Source], &mut [M], &Exec) -> Result<()> = tessera::map_in_place;
    let _: fn(&MapPlan, &[V], &mut [M], &Exec) -> Result<()> = MapPlan::run;
    let _: fn(&MapPlan, &[Source], &mut [M], &Exec) -> Result<()> = MapPlan::run_in_place;
    let _: fn(ReduceOp, &[usize], &V, &mut M, &Exec) -> Result<()> = tessera::reduce;
    let _: fn(&[usize], &V, &mut [(ReduceOp, &mut M)], &Exec) -> Result<()> = tessera::reduce_many;
    let _: fn(&[usize], Terms, &mut [(ReduceOp, &mut M)], &Exec) -> Result<()> =
        tessera::reduce_terms;
    let _: fn(&[usize], &V, &V, &mut M, &Exec) -> Result<()> = tessera::dot;
    let _: fn(&[usize], &V, &mut M, &Exec) -> Result<()> = tessera::sum_squares;
    let _: fn(&[usize], &V, &mut M, &Exec) -> Result<()> = tessera::l1_norm;
    let _: fn(&[usize], &V, &mut M, &Exec) -> Result<()> = tessera::l2_norm;
    let _: fn(&[usize], &V, &V, &mut M, &Exec) -> Result<()> = tessera::squared_distance;
    let _: fn(&[usize], &V, &V, &mut M, &Exec) -> Result<()> = tessera::l1_distance;
    let _: for<'a> fn(&[usize], &V, &mut M<'a>, &mut M<'a>, &Exec) -> Result<()> = tessera::min_max;
    let _: fn(ScanOp, usize, &V, Option<&V>, &mut M, &Exec) -> Result<()> = tessera::scan;
    let _: fn(usize, &V, Option<&V>, &mut [(ScanOp, &mut M)], &Exec) -> Result<()> =
        tessera::scan_many;
    let _: fn(usize, Terms, Option<&V>, &mut [(ScanOp, &mut M)], &Exec) -> Result<()> =
        tessera::scan_terms;
    let _: fn(&[f32], &mut [[f32; 16]], &Exec) -> Result<()> =
        tessera::reduce::lanes::sum_lanes::<f32>;
    let _: fn(f32, &[f32], &Exec) -> Result<f32> = series::sum_squared_deviations::<f32>;
    let _: fn(&[f32], &mut [f32], &Exec) -> Result<()> = series::diff::<f32>;
    let _: fn(usize, &[f32], &mut [f32], &Exec) -> Result<()> = series::rolling_max::<f32>;
    let _: fn(usize, &[f32], &mut [f32], &Exec) -> Result<()> = series::rolling_min::<f32>;
    let _: fn(usize, &[f32], &mut [f32], &Exec) -> Result<()> = series::rolling_mean::<f32>;
    let _: fn(f32, &[f32], &mut [f32], &Exec) -> Result<()> = series::ema::<f32>;
    let _: fn(&ContractSpec, &V, &V, Option<&V>, &mut M, &Exec) -> Result<()> = tessera::contract;
    let _: fn(&ContractPlan, &V, &V, Option<&V>, &mut M, &Exec) -> Result<()> = ContractPlan::run;
    let _: fn(
        &ContractPlan,
        &V,
        &V,
        Option<&V>,
        &mut M,
        &mut ContractScratch,
        &Exec,
    ) -> Result<()> = ContractPlan::run_with_scratch;
    let _: fn(&ContractSpec, (&[usize], DType), (&[usize], DType)) -> Result<ContractPlan> =
        ContractPlan::new;
    let _: fn(&ContractPlan) -> usize = ContractPlan::scratch_bytes;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<()> = tessera::matmul;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<()> = tessera::contract::gemv;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<()> = tessera::contract::inner_product;
    let _: fn(&ContractSpec, &Operand, &Operand, Option<&V>, &mut M, &Exec) -> Result<()> =
        tessera::contract::scaled::contract_scaled;
    let _: fn(DType, &V, &V, &'static [u32], Option<&V>, &mut M, &Exec) -> Result<()> =
        tessera::contract::grouped::contract_grouped_rows::<&'static [u32]>;
    let _: fn(DType, &V, &V, &'static [i64], Option<&V>, &mut M, &Exec) -> Result<()> =
        tessera::contract::grouped::contract_grouped_rows::<&'static [i64]>;
    let _: fn(DType, usize, &V, &V, &'static [u32], Option<&V>, &mut M, &Exec) -> Result<()> =
        tessera::contract::grouped::contract_grouped_depth::<&'static [u32]>;
    let _: fn(DType, usize, &V, &V, &'static [i64], Option<&V>, &mut M, &Exec) -> Result<()> =
        tessera::contract::grouped::contract_grouped_depth::<&'static [i64]>;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<()> = tessera::contract::qmatmul::qmatmul_i8;
    let _: fn(f32, i32, &V, &mut M, &Exec) -> Result<()> =
        tessera::contract::qmatmul::requantize_i8;
    let _: fn(u64, &mut M, &Exec) -> Result<()> = tessera::fill::random;
    let _: fn(&[f64], &V, &mut M, &Exec) -> Result<()> = tessera::poly::polyval;
    let _: fn(&tessera::quant::QParams, &V, &mut M, &Exec) -> Result<()> = tessera::quant::quantize;
    let _: fn(&tessera::quant::QParams, &V, &mut M, &Exec) -> Result<()> =
        tessera::quant::dequantize;
    type Rule = Option<tessera::ScaleRule>;
    let _: fn(tessera::Format, Rule, &V, &mut [u8], &mut [u8], &Exec) -> Result<Option<f32>> =
        tessera::formats::encode;
    let _: fn(tessera::Format, &[u8], &[u8], Option<f32>, &mut M, &Exec) -> Result<()> =
        tessera::formats::decode;
    type Transcode = fn(
        tessera::Format,
        tessera::Format,
        Rule,
        &[usize],
        &[u8],
        &[u8],
        Option<f32>,
        &mut [u8],
        &mut [u8],
        &Exec,
    ) -> Result<Option<f32>>;
    let _: Transcode = tessera::formats::transcode;
    // The typed forms follow the same rule.
    let _: fn(Kind, &[&[f32]], &mut [f32], &Exec) -> Result<()> = typed::elementwise::<f32, f32>;
    let _: fn(CastMode, &[f32], &mut [u8], &Exec) -> Result<()> = typed::cast::<f32, u8>;
    let _: fn(ReduceOp, &[f32], &Exec) -> Result<f32> = typed::reduce::<f32, f32>;
}

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in tessera::available_tiers() {
        for par in [Par::Seq, Par::threads(2), Par::threads(7), Par::Pool] {
            v.push(Exec::on(t).par(par));
        }
    }
    v
}

use common::{bits_of as bits, grid_f32s as f32s};

#[test]
fn par_counts_and_exec_defaults() {
    assert_eq!(Par::threads(0), Par::Seq);
    assert_eq!(Par::threads(1), Par::Seq);
    assert_eq!(Par::threads(3).count(), 3);
    assert_eq!(Par::Seq.count(), 1);
    assert!(Par::Pool.count() >= 1);
    assert_eq!(Exec::default().par, Par::Pool);
    assert_eq!(Exec::SEQ.thread_count(), 1);
    assert_eq!(Exec::default().threads(5).thread_count(), 5);
}

#[test]
fn typed_slices_give_the_view_calls_bits() {
    let mut rng = Rng::new(11);
    let n = 1000;
    let (a, b) = (f32s(&mut rng, n), f32s(&mut rng, n));
    for exec in execs() {
        for kind in [Kind::Add, Kind::Mul, Kind::Exp, Kind::Atan2, Kind::Lt] {
            let ar = kind.info().arity;
            let ins: Vec<&[f32]> = [&a[..], &b[..]][..ar].to_vec();
            let views: Vec<ArrayView> = ins
                .iter()
                .map(|s| ArrayView::from_slice(s, &[n]).unwrap())
                .collect();
            if kind == Kind::Lt {
                let (mut t, mut w) = (vec![false; n], vec![false; n]);
                typed::elementwise(kind, &ins, &mut t, &exec).unwrap();
                let mut wv = ArrayViewMut::from_slice(&mut w, &[n]).unwrap();
                tessera::elementwise(kind, &views, &mut wv, &exec).unwrap();
                assert_eq!(t, w, "{kind}");
                continue;
            }
            let (mut t, mut w) = (vec![0f32; n], vec![0f32; n]);
            typed::elementwise(kind, &ins, &mut t, &exec).unwrap();
            let mut wv = ArrayViewMut::from_slice(&mut w, &[n]).unwrap();
            tessera::elementwise(kind, &views, &mut wv, &exec).unwrap();
            assert_eq!(bits(&t), bits(&w), "{kind} on {exec:?}");
        }
        // A broadcast input of length 1.
        let mut t = vec![0f32; n];
        typed::elementwise(Kind::Mul, &[&a, &[0.5]], &mut t, &exec).unwrap();
        assert!(t.iter().zip(&a).all(|(t, a)| *t == a * 0.5));
        // Casts into half, bf16, e4m3fn codes and complex, and back.
        let mut h = vec![half::f16::ZERO; n];
        typed::cast(CastMode::Default, &a, &mut h, &exec).unwrap();
        assert!(h.iter().zip(&a).all(|(h, a)| *h == half::f16::from_f32(*a)));
        let mut bf = vec![half::bf16::ZERO; n];
        typed::cast(CastMode::Saturating, &a, &mut bf, &exec).unwrap();
        assert!(bf
            .iter()
            .zip(&a)
            .all(|(h, a)| *h == half::bf16::from_f32(*a)));
        let mut c = vec![Complex::<f64>::default(); n];
        typed::cast(CastMode::Default, &h, &mut c, &exec).unwrap();
        assert!(c
            .iter()
            .zip(&h)
            .all(|(c, h)| c.re == h.to_f64() && c.im == 0.0));
        // f16 arithmetic through the typed form equals the view form.
        let mut s16 = vec![half::f16::ZERO; n];
        typed::elementwise(Kind::Add, &[&h, &h], &mut s16, &exec).unwrap();
        let mut w16 = vec![half::f16::ZERO; n];
        tessera::elementwise(
            Kind::Add,
            &[
                ArrayView::from_slice(&h, &[n]).unwrap(),
                ArrayView::from_slice(&h, &[n]).unwrap(),
            ],
            &mut ArrayViewMut::from_slice(&mut w16, &[n]).unwrap(),
            &exec,
        )
        .unwrap();
        assert_eq!(bits(&s16), bits(&w16));
        // Reductions of the whole slice.
        for op in [
            ReduceOp::Sum,
            ReduceOp::Max,
            ReduceOp::Mean,
            ReduceOp::Variance,
        ] {
            let t: f64 = typed::reduce(op, &a, &exec).unwrap();
            let mut w = [0f64];
            tessera::reduce(
                op,
                &[0],
                &ArrayView::from_slice(&a, &[n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut w, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(t.to_bits(), w[0].to_bits(), "{op:?}");
        }
        let pos: i64 = typed::reduce(ReduceOp::ArgMax, &a, &exec).unwrap();
        let max = a.iter().cloned().fold(f32::MIN, f32::max);
        assert_eq!(a[pos as usize], max);
        // A fused program, planned and not.
        let p = Program::parse("y0 = fma(x0, x1, x0); y1 = x0 - x1", &[DType::F32; 2]).unwrap();
        let plan = MapPlan::new(&p, &[&[n], &[n]], &[n]).unwrap();
        let (mut y0, mut y1) = (vec![0f32; n], vec![0f32; n]);
        typed::map(&p, &[&a, &b], &mut [&mut y0, &mut y1], &exec).unwrap();
        let (mut z0, mut z1) = (vec![0f32; n], vec![0f32; n]);
        typed::map_planned(&plan, &[&a, &b], &mut [&mut z0, &mut z1], &exec).unwrap();
        assert_eq!(bits(&y0), bits(&z0));
        assert_eq!(bits(&y1), bits(&z1));
        assert!(y0
            .iter()
            .zip(&a)
            .zip(&b)
            .all(|((y, a), b)| *y == a.mul_add(*b, *a)));
    }
}

#[test]
fn typed_matmul_and_contract_give_the_view_calls_bits() {
    let mut rng = Rng::new(12);
    for (m, k, n) in [(1, 1, 1), (7, 5, 9), (33, 70, 20), (64, 64, 64)] {
        let (a, b) = (f32s(&mut rng, m * k), f32s(&mut rng, k * n));
        for exec in execs() {
            let mut t = vec![0f32; m * n];
            typed::matmul(&a, &b, (m, k, n), &mut t, &exec).unwrap();
            let mut w = vec![0f32; m * n];
            tessera::matmul(
                &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut w, &[m, n]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(bits(&t), bits(&w));
            // The same product as a contraction into f64.
            let spec = ContractSpec::new(DType::F64).contracting(1, 0);
            let mut c = vec![0f64; m * n];
            typed::contract(
                &spec,
                (&a, &[m, k]),
                (&b, &[k, n]),
                (&mut c, &[m, n]),
                &exec,
            )
            .unwrap();
            let mut cw = vec![0f64; m * n];
            tessera::contract(
                &spec,
                &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                None,
                &mut ArrayViewMut::from_slice(&mut cw, &[m, n]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(bits(&c), bits(&cw));
        }
    }
    // Lengths that do not match the dimensions are refused before any write.
    let mut out = vec![3f32; 4];
    let e = typed::matmul(
        &[1f32; 6],
        &[1f32; 6],
        (2, 2, 2),
        &mut out,
        &Exec::default(),
    );
    assert!(
        matches!(
            e,
            Err(Error::Length {
                expected: 4,
                len: 6,
                ..
            })
        ),
        "{e:?}"
    );
    assert!(out.iter().all(|&x| x == 3.0));
}

#[test]
fn a_map_plan_runs_with_the_bits_of_map() {
    let mut rng = Rng::new(14);
    let p = Program::parse(
        "t = x0 * x1 + 0.25f32; y0 = select(t > x0, exp(t), t); y1 = cast<f64>(t) + cast<f64>(coord(1))",
        &[DType::F32, DType::F32],
    )
    .unwrap();
    let (r, c) = (37, 53);
    let a = f32s(&mut rng, r * c);
    let b = f32s(&mut rng, c);
    let plan = MapPlan::new(&p, &[&[r, c], &[1, c]], &[r, c]).unwrap();
    for exec in execs() {
        let (mut w0, mut w1) = (vec![0f32; r * c], vec![0f64; r * c]);
        tessera::map(
            &p,
            &[
                ArrayView::from_slice(&a, &[r, c]).unwrap(),
                ArrayView::from_slice(&b, &[1, c]).unwrap(),
            ],
            &mut [
                ArrayViewMut::from_slice(&mut w0, &[r, c]).unwrap(),
                ArrayViewMut::from_slice(&mut w1, &[r, c]).unwrap(),
            ],
            &exec,
        )
        .unwrap();
        // The plan, run twice, on a transposed output of its own.
        for _ in 0..2 {
            let (mut g0, mut g1) = (vec![0f32; r * c], vec![0f64; r * c]);
            plan.run(
                &[
                    ArrayView::from_slice(&a, &[r, c]).unwrap(),
                    ArrayView::from_slice(&b, &[1, c]).unwrap(),
                ],
                &mut [
                    ArrayViewMut::from_slice_strided(&mut g0, &[r, c], &[1, r as isize], 0)
                        .unwrap(),
                    ArrayViewMut::from_slice(&mut g1, &[r, c]).unwrap(),
                ],
                &exec,
            )
            .unwrap();
            let g0t: Vec<f32> = (0..r * c).map(|i| g0[(i % c) * r + i / c]).collect();
            assert_eq!(bits(&g0t), bits(&w0));
            assert_eq!(bits(&g1), bits(&w1));
        }
    }
    // Operands of other shapes than planned are refused before any write.
    let mut y0 = vec![7f32; r * c];
    let mut y1 = vec![7f64; r * c];
    let e = plan.run(
        &[
            ArrayView::from_slice(&a, &[r, c]).unwrap(),
            ArrayView::from_slice(&a[..c], &[c]).unwrap(),
        ],
        &mut [
            ArrayViewMut::from_slice(&mut y0, &[r, c]).unwrap(),
            ArrayViewMut::from_slice(&mut y1, &[r, c]).unwrap(),
        ],
        &Exec::default(),
    );
    assert!(matches!(e, Err(Error::Shape { .. })), "{e:?}");
    assert!(y0.iter().all(|&v| v == 7.0) && y1.iter().all(|&v| v == 7.0));
    // Planning refuses what map would refuse of shapes.
    let e = MapPlan::new(&p, &[&[r, c], &[2, c]], &[r, c]);
    assert!(matches!(e, Err(Error::Shape { .. })), "{e:?}");
    let e = MapPlan::new(&p, &[&[r, c]], &[r, c]);
    assert!(matches!(e, Err(Error::Program { .. })), "{e:?}");
    // In place: y0 = y0 * 2 over an output read before it is written.
    let q = Program::parse("y0 = x0 * 2f32", &[DType::F32]).unwrap();
    let qp = MapPlan::new(&q, &[&[r, c]], &[r, c]).unwrap();
    let mut y = a.clone();
    qp.run_in_place(
        &[Source::Output(0)],
        &mut [ArrayViewMut::from_slice(&mut y, &[r, c]).unwrap()],
        &Exec::default(),
    )
    .unwrap();
    assert!(y.iter().zip(&a).all(|(y, a)| *y == a * 2.0));
}

/// A product through the caller's scratch has the bits of the default path,
/// and a scratch of the size asked for is not grown.
#[test]
fn contraction_scratch_gives_the_same_bits_and_is_sized_by_the_query() {
    let mut rng = Rng::new(15);
    // (m, k, n, dtype of a, accumulator): chain order in f32 and f64, an
    // operand cast panel by panel (raw codes), the exact f64 path of narrow
    // integers, a complex product, lane order and an empty product.
    let cases: [(usize, usize, usize, DType, DType); 7] = [
        (70, 300, 90, DType::F32, DType::F32),
        (40, 50, 130, DType::F64, DType::F64),
        (33, 65, 17, DType::Bf16, DType::F32),
        (24, 40, 31, DType::I8, DType::I32),
        (20, 30, 12, DType::C64, DType::C64),
        (2, 5000, 3, DType::F32, DType::F32),
        (9, 0, 9, DType::F32, DType::F32),
    ];
    for (m, k, n, dt, acc) in cases {
        let bytes = |len: usize, rng: &mut Rng| -> Vec<u8> {
            let item = dt.info().item_bytes;
            (0..len * item)
                .map(|i| match dt {
                    // small integers, and floats without NaN or huge codes
                    DType::I8 => (rng.below(256)) as u8,
                    _ if i % item == item - 1 => 0x3c | (rng.below(2) as u8) << 7,
                    _ => rng.below(256) as u8,
                })
                .collect()
        };
        let (ab, bb) = (bytes(m * k, &mut rng), bytes(k * n, &mut rng));
        let a = ArrayView::contiguous(dt, &[m, k], &ab).unwrap();
        let b = ArrayView::contiguous(dt, &[k, n], &bb).unwrap();
        let spec = ContractSpec::new(acc).contracting(1, 0);
        let out_bytes = m * n * acc.info().item_bytes;
        for exec in execs() {
            let mut want = vec![0u8; out_bytes];
            tessera::contract(
                &spec,
                &a,
                &b,
                None,
                &mut ArrayViewMut::contiguous(acc, &[m, n], &mut want).unwrap(),
                &exec,
            )
            .unwrap();
            let plan = ContractPlan::new(&spec, (&[m, k], dt), (&[k, n], dt)).unwrap();
            assert_eq!(plan.output_shape(), &[m, n]);
            let size = plan.scratch_bytes();
            // No packed real float GEMM: lane order, the packed integer
            // products (which keep their own panels on the vector tiers, and
            // plan for the scalar tier's f64 GEMM otherwise) and the complex
            // microkernels (which keep their own panels).
            let complex = acc == DType::C64;
            let lane = k == 0 || (m <= 4 || n <= 4) || complex;
            assert_eq!(size == 0, lane, "({m}, {k}, {n}) {dt}: size {size}");
            // The plan's run and a run with a scratch of one thread, of
            // every thread, and empty (grown), each with contract's bits.
            let mut got = vec![0xa5u8; out_bytes];
            plan.run(
                &a,
                &b,
                None,
                &mut ArrayViewMut::contiguous(acc, &[m, n], &mut got).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(
                got, want,
                "run: ({m}, {k}, {n}) {dt} into {acc} on {exec:?}"
            );
            for threads in [1, exec.thread_count()] {
                let mut scratch = ContractScratch::with_size(size * threads).unwrap();
                let before = scratch.size();
                let mut got = vec![0xa5u8; out_bytes];
                plan.run_with_scratch(
                    &a,
                    &b,
                    None,
                    &mut ArrayViewMut::contiguous(acc, &[m, n], &mut got).unwrap(),
                    &mut scratch,
                    &exec,
                )
                .unwrap();
                assert_eq!(
                    got, want,
                    "({m}, {k}, {n}) {dt} into {acc} on {exec:?}, {threads}"
                );
                assert_eq!(scratch.size(), before, "a scratch of the asked size grew");
            }
            let mut empty = ContractScratch::new();
            let mut again = vec![0u8; out_bytes];
            plan.run_with_scratch(
                &a,
                &b,
                None,
                &mut ArrayViewMut::contiguous(acc, &[m, n], &mut again).unwrap(),
                &mut empty,
                &exec,
            )
            .unwrap();
            assert_eq!(again, want);
            assert!(empty.size() >= size);
            // Views of other shapes or dtypes than planned are refused.
            let other = ArrayView::contiguous(dt, &[k, m], &ab).unwrap();
            if m != k {
                let mut y = vec![0u8; out_bytes];
                assert!(matches!(
                    plan.run(
                        &other,
                        &b,
                        None,
                        &mut ArrayViewMut::contiguous(acc, &[m, n], &mut y).unwrap(),
                        &exec
                    ),
                    Err(Error::Shape { .. })
                ));
            }
        }
    }
}
