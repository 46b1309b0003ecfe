//! The public API's shape and its conveniences: every call that computes
//! takes (attributes, inputs, destinations, exec) in that order (checked by
//! the compiler below); the typed slice and ndarray forms, the map plan, the
//! transform plans and the caller's scratch give the view-based calls' bits.

mod common;

use num_complex::Complex;
use tessera::contract::scaled::Operand;
use tessera::contract::{ContractPlan, ContractSpec};
use tessera::map::{MapPlan, Program, Source};
use tessera::reduce::series;
use tessera::{
    typed, ArrayView, ArrayViewMut, CastMode, DType, Error, Exec, Kind, Par, ReduceOp, Result,
    ScanOp, Scratch, Terms,
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
    let _: fn(&MapPlan, &[V], &mut [M], &mut Scratch, &Exec) -> Result<()> =
        MapPlan::run_with_scratch;
    let _: fn(&MapPlan) -> usize = MapPlan::scratch_bytes;
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
    let _: fn(&ContractPlan, &V, &V, Option<&V>, &mut M, &mut Scratch, &Exec) -> Result<()> =
        ContractPlan::run_with_scratch;
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
    let _: fn(tessera::Format, &[usize]) -> Result<tessera::formats::EncodedSizes> =
        tessera::formats::encoded_sizes;
    // Transforms: the one-shot calls, the plan of a whole transform and the
    // one-line plans.
    use tessera::fft::{Direction, FftPlan, NdPlan, Norm, RealFftPlan, Transform};
    let _: fn(&[usize], Direction, Norm, &V, &mut M, &Exec) -> Result<()> = tessera::fft::c2c;
    let _: fn(&[usize], Norm, &V, &mut M, &Exec) -> Result<()> = tessera::fft::r2c;
    let _: fn(&[usize], Norm, &V, &mut M, &Exec) -> Result<()> = tessera::fft::c2r;
    let _: fn(&[usize], Direction, Norm, &[usize], DType) -> Result<NdPlan> = NdPlan::c2c;
    let _: fn(&[usize], Norm, &[usize], DType) -> Result<NdPlan> = NdPlan::r2c;
    let _: fn(&[usize], Norm, &[usize], DType) -> Result<NdPlan> = NdPlan::c2r;
    let _: fn(&NdPlan) -> usize = NdPlan::scratch_bytes;
    let _: fn(&NdPlan, &V, &mut M, &Exec) -> Result<()> = NdPlan::run;
    let _: fn(&NdPlan, &V, &mut M, &mut Scratch, &Exec) -> Result<()> = NdPlan::run_with_scratch;
    let _: fn(usize, Direction) -> Result<FftPlan<f32>> = FftPlan::<f32>::new;
    let _: fn(&FftPlan<f64>) -> usize = FftPlan::<f64>::scratch_bytes;
    let _: fn(&FftPlan<f32>, &mut [Complex<f32>], &Exec) -> Result<()> = FftPlan::<f32>::run;
    let _: fn(&FftPlan<f32>, &mut [Complex<f32>], &mut [Complex<f32>], &Exec) -> Result<()> =
        FftPlan::<f32>::run_with_scratch;
    let _: fn(usize, Direction) -> Result<RealFftPlan<f64>> = RealFftPlan::<f64>::new;
    let _: fn(&RealFftPlan<f64>) -> usize = RealFftPlan::<f64>::scratch_bytes;
    let _: fn(
        &RealFftPlan<f64>,
        &[f64],
        &mut [Complex<f64>],
        &mut [Complex<f64>],
        &Exec,
    ) -> Result<()> = RealFftPlan::<f64>::r2c_with_scratch;
    let _: fn(
        &RealFftPlan<f64>,
        &[Complex<f64>],
        &mut [f64],
        &mut [Complex<f64>],
        &Exec,
    ) -> Result<()> = RealFftPlan::<f64>::c2r_with_scratch;
    let _: fn(Transform, &[usize], Norm, bool, Direction) -> Result<f64> =
        tessera::fft::error_factor;
    // Ordering, selection, sets: a call that counts what it wrote returns
    // the count (`usize`), as `unique` does.
    let _: for<'a> fn(usize, bool, &V, &mut M<'a>, Option<&mut M<'a>>, &Exec) -> Result<()> =
        tessera::order::sort;
    let _: fn(usize, bool, &V, &mut M, &Exec) -> Result<()> = tessera::order::argsort;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<usize> = tessera::order::compress;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<usize> = tessera::order::partition;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<usize> = tessera::order::intersect;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<usize> = tessera::order::difference;
    let _: fn(&V, &V, &mut M, &Exec) -> Result<()> = tessera::order::lower_bound;
    let _: fn(usize, &V, &mut M, &Exec) -> Result<()> = tessera::order::median;
    let _: fn(f64, usize, &V, &mut M, &Exec) -> Result<()> = tessera::order::quantile;
    let _: for<'a> fn(&V, &mut M<'a>, &mut M<'a>, &mut M<'a>, &Exec) -> Result<usize> =
        tessera::unique::unique;
    // Movement and assembly; fills are typed views of one element.
    let _: fn(usize, &V, &V, &mut M, &Exec) -> Result<()> = tessera::movement::gather;
    let _: fn(&V, &V, &V, &mut M, &Exec) -> Result<()> = tessera::movement::gather_ranges;
    let _: fn(tessera::Combine, usize, &V, &V, &V, &mut M, &Exec) -> Result<()> =
        tessera::movement::scatter;
    let _: fn(Option<&V>, &[tessera::assembly::Piece], &mut M, &Exec) -> Result<()> =
        tessera::assembly::assemble;
    let _: fn(&V, &mut M, &Exec) -> Result<()> = tessera::assembly::tile;
    let _: fn(&tessera::Pad, &V, &mut M, &Exec) -> Result<()> = tessera::assembly::fold;
    let _: fn(&tessera::Pad, &V, Option<&V>) -> Result<tessera::PaddedLoad> =
        tessera::PaddedLoad::new;
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

/// A map plan run with the caller's scratch (one thread's size, every
/// thread's, and an empty one that grows) gives map's bits; a scratch of the
/// size asked for does not grow.
#[test]
fn a_map_plan_runs_with_the_callers_scratch() {
    let mut rng = Rng::new(17);
    let p = Program::parse(
        "t = x0 * x1 - 1f32; y0 = select(t < 0f32, -t, t * t); y1 = cast<f64>(t) * 0.5f64",
        &[DType::F32, DType::F32],
    )
    .unwrap();
    let (r, c) = (601, 517);
    let a = f32s(&mut rng, r * c);
    let b = f32s(&mut rng, c);
    let plan = MapPlan::new(&p, &[&[r, c], &[1, c]], &[r, c]).unwrap();
    let size = plan.scratch_bytes();
    assert!(size > 0);
    let ins = [
        ArrayView::from_slice(&a, &[r, c]).unwrap(),
        ArrayView::from_slice(&b, &[1, c]).unwrap(),
    ];
    for exec in execs() {
        let (mut w0, mut w1) = (vec![0f32; r * c], vec![0f64; r * c]);
        tessera::map(
            &p,
            &ins,
            &mut [
                ArrayViewMut::from_slice(&mut w0, &[r, c]).unwrap(),
                ArrayViewMut::from_slice(&mut w1, &[r, c]).unwrap(),
            ],
            &exec,
        )
        .unwrap();
        for bytes in [Some(size), Some(size * exec.thread_count()), None] {
            let mut scratch = match bytes {
                Some(n) => Scratch::with_size(n).unwrap(),
                None => Scratch::new(),
            };
            let before = scratch.size();
            let (mut g0, mut g1) = (vec![7f32; r * c], vec![7f64; r * c]);
            plan.run_with_scratch(
                &ins,
                &mut [
                    ArrayViewMut::from_slice(&mut g0, &[r, c]).unwrap(),
                    ArrayViewMut::from_slice(&mut g1, &[r, c]).unwrap(),
                ],
                &mut scratch,
                &exec,
            )
            .unwrap();
            assert_eq!(bits(&g0), bits(&w0), "{bytes:?} {exec:?}");
            assert_eq!(bits(&g1), bits(&w1), "{bytes:?} {exec:?}");
            if bytes.is_some() {
                assert_eq!(scratch.size(), before, "a scratch of the asked size grew");
            } else {
                assert!(scratch.size() >= size);
            }
        }
    }
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
                let mut scratch = Scratch::with_size(size * threads).unwrap();
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
            let mut empty = Scratch::new();
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

/// A transform's plan (c2c, r2c, c2r over several axes, strided and reversed
/// layouts): `run`, and `run_with_scratch` with a scratch of one thread's
/// size, of every thread's and an empty one, give the one-shot call's bits;
/// a scratch of the asked size does not grow; views of other shapes or
/// dtypes are refused before any write. The c2c of one axis is checked
/// against a direct f64 DFT too.
#[test]
fn transform_plans_run_with_the_bits_of_the_one_shot_calls() {
    use tessera::fft::{c2c, c2r, r2c, Direction, NdPlan, Norm};
    let mut rng = Rng::new(16);
    let shape = [6usize, 10, 9];
    let count: usize = shape.iter().product();
    let reals: Vec<f64> = (0..count)
        .map(|_| rng.below(2001) as f64 / 1000.0 - 1.0)
        .collect();
    let cplx: Vec<Complex<f64>> = (0..count)
        .map(|i| Complex::new(reals[i], reals[(i * 7 + 3) % count]))
        .collect();
    // The operand reversed along axis 1 (a negative stride).
    let rev_strides = [90isize, -9, 1];
    let rev_offset = 81;
    let views = [
        ArrayView::from_slice(&cplx, &shape).unwrap(),
        ArrayView::from_slice_strided(&cplx, &shape, &rev_strides, rev_offset).unwrap(),
    ];
    for exec in execs() {
        for axes in [vec![2usize], vec![0, 2], vec![0, 1, 2], vec![1]] {
            // c2c, forward, orthonormal.
            let plan =
                NdPlan::c2c(&axes, Direction::Forward, Norm::Ortho, &shape, DType::C128).unwrap();
            for x in views.iter() {
                let mut want = vec![Complex::new(0.0, 0.0); count];
                c2c(
                    &axes,
                    Direction::Forward,
                    Norm::Ortho,
                    x,
                    &mut ArrayViewMut::from_slice(&mut want, &shape).unwrap(),
                    &exec,
                )
                .unwrap();
                let size = plan.scratch_bytes();
                for scratch in [Some(size), Some(size * exec.thread_count()), None] {
                    let mut got = vec![Complex::new(7.0, 7.0); count];
                    let mut y = ArrayViewMut::from_slice(&mut got, &shape).unwrap();
                    match scratch {
                        Some(bytes) => {
                            let mut s = Scratch::with_size(bytes).unwrap();
                            let before = s.size();
                            plan.run_with_scratch(x, &mut y, &mut s, &exec).unwrap();
                            assert_eq!(s.size(), before, "a scratch of the asked size grew");
                        }
                        None => {
                            // Grown to what these views need, at most the
                            // bound for any layout.
                            let need = plan.scratch_bytes_for(x, &y);
                            assert!(need <= size, "{need} > {size}");
                            let mut s = Scratch::new();
                            plan.run_with_scratch(x, &mut y, &mut s, &exec).unwrap();
                            assert!(s.size() >= need);
                        }
                    }
                    assert_eq!(bits(&got), bits(&want), "c2c {axes:?} {scratch:?} {exec:?}");
                }
                let mut got = vec![Complex::new(7.0, 7.0); count];
                plan.run(
                    x,
                    &mut ArrayViewMut::from_slice(&mut got, &shape).unwrap(),
                    &exec,
                )
                .unwrap();
                assert_eq!(bits(&got), bits(&want));
            }
            // r2c then c2r (the real side of the shape), contiguous operands.
            let last = *axes.last().unwrap();
            let mut bins_shape = shape.to_vec();
            bins_shape[last] = shape[last] / 2 + 1;
            let nb: usize = bins_shape.iter().product();
            let rp = NdPlan::r2c(&axes, Norm::None, &shape, DType::F64).unwrap();
            assert_eq!(rp.output(), (&bins_shape[..], DType::C128));
            let xr = ArrayView::from_slice(&reals, &shape).unwrap();
            let mut want = vec![Complex::new(0.0, 0.0); nb];
            r2c(
                &axes,
                Norm::None,
                &xr,
                &mut ArrayViewMut::from_slice(&mut want, &bins_shape).unwrap(),
                &exec,
            )
            .unwrap();
            let mut got = vec![Complex::new(7.0, 7.0); nb];
            let mut s = Scratch::with_size(rp.scratch_bytes()).unwrap();
            rp.run_with_scratch(
                &xr,
                &mut ArrayViewMut::from_slice(&mut got, &bins_shape).unwrap(),
                &mut s,
                &exec,
            )
            .unwrap();
            assert_eq!(bits(&got), bits(&want), "r2c {axes:?} {exec:?}");
            let ip = NdPlan::c2r(&axes, Norm::Backward, &shape, DType::C128).unwrap();
            assert_eq!(ip.input(), (&bins_shape[..], DType::C128));
            let xb = ArrayView::from_slice(&want, &bins_shape).unwrap();
            let mut back = vec![0.0f64; count];
            c2r(
                &axes,
                Norm::Backward,
                &xb,
                &mut ArrayViewMut::from_slice(&mut back, &shape).unwrap(),
                &exec,
            )
            .unwrap();
            for scratch_bytes in [ip.scratch_bytes(), 0] {
                let mut got = vec![7.0f64; count];
                let mut s = Scratch::with_size(scratch_bytes).unwrap();
                ip.run_with_scratch(
                    &xb,
                    &mut ArrayViewMut::from_slice(&mut got, &shape).unwrap(),
                    &mut s,
                    &exec,
                )
                .unwrap();
                assert_eq!(bits(&got), bits(&back), "c2r {axes:?} {exec:?}");
            }
            // The round trip returns the operand (a check of the pair, not
            // of the bits).
            for (g, w) in back.iter().zip(&reals) {
                assert!((g - w).abs() < 1e-12, "{g} {w}");
            }
        }
    }
    // One axis against a direct DFT in f64 (the bound of the module is far
    // below the tolerance here).
    let n = shape[2];
    let plan = NdPlan::c2c(&[2], Direction::Inverse, Norm::None, &shape, DType::C128).unwrap();
    let mut got = vec![Complex::new(0.0, 0.0); count];
    plan.run(
        &ArrayView::from_slice(&cplx, &shape).unwrap(),
        &mut ArrayViewMut::from_slice(&mut got, &shape).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for line in 0..count / n {
        for k in 0..n {
            let mut acc = Complex::new(0.0, 0.0);
            for j in 0..n {
                let t = 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                acc += cplx[line * n + j] * Complex::new(t.cos(), t.sin());
            }
            assert!((got[line * n + k] - acc).norm() < 1e-12, "{line} {k}");
        }
    }
    // Refusals before any write: another shape, another dtype.
    let plan = NdPlan::c2c(&[0], Direction::Forward, Norm::None, &shape, DType::C128).unwrap();
    let mut kept = vec![Complex::new(7.0, 7.0); count];
    let small = ArrayView::from_slice(&cplx[..count / 2], &[3, 10, 9]).unwrap();
    let r = plan.run(
        &small,
        &mut ArrayViewMut::from_slice(&mut kept, &shape).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    let as_real = ArrayView::from_slice(&reals, &shape).unwrap();
    let r = plan.run(
        &as_real,
        &mut ArrayViewMut::from_slice(&mut kept, &shape).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
    assert!(kept.iter().all(|z| *z == Complex::new(7.0, 7.0)));
    // Plans refuse what the calls refuse of axes and dtypes.
    assert!(NdPlan::c2c(&[1, 0], Direction::Forward, Norm::None, &shape, DType::C128).is_err());
    assert!(NdPlan::r2c(&[0], Norm::None, &shape, DType::C64).is_err());
    assert!(NdPlan::c2r(&[3], Norm::None, &shape, DType::C64).is_err());
}
