//! The ndarray conveniences (feature `ndarray`): on dense, transposed,
//! reversed, stepped and blocked views, as inputs and as destinations, they
//! give the view-based calls' bits; a refusal writes nothing.

#![cfg(feature = "ndarray")]

mod common;

use ndarray::{s, Array, Array1, Array2, Array3, ArrayView2, Axis};
use tessera::map::Program;
use tessera::{nd, ArrayView, ArrayViewMut, CastMode, DType, Error, Exec, Kind, ReduceOp, Result};
use tessera_testkit::rng::Rng;

use common::{bits_of as bits, grid_f32s as f32s};

#[test]
#[allow(clippy::type_complexity)]
fn the_calls_follow_the_api_rule() {
    let _: fn(ArrayView2<f32>, ArrayView2<f32>, ndarray::ArrayViewMut2<f32>, &Exec) -> Result<()> =
        nd::matmul::<f32, f32>;
    let _: fn(Kind, &[ArrayView2<f32>], ndarray::ArrayViewMut2<f32>, &Exec) -> Result<()> =
        nd::elementwise::<f32, f32, ndarray::Ix2>;
}

/// The ndarray layouts the tests run: dense, transposed, reversed, stepped
/// (with gaps) and a column block (with gaps).
fn layouts(a: &Array2<f32>) -> Vec<(&'static str, ArrayView2<'_, f32>)> {
    vec![
        ("dense", a.view()),
        ("transposed", a.t()),
        ("reversed", a.slice(s![..;-1, ..])),
        ("stepped", a.slice(s![..;2, 1..;3])),
        ("column block", a.slice(s![1.., ..5])),
    ]
}

/// `view`'s values into a C-order vector, by ndarray's own iteration.
fn c_order(v: &ArrayView2<f32>) -> (Vec<usize>, Vec<f32>) {
    (v.shape().to_vec(), v.iter().copied().collect())
}

#[test]
fn ndarray_views_give_the_view_calls_bits_on_any_layout() {
    let mut rng = Rng::new(13);
    let big = Array2::from_shape_vec((12, 15), f32s(&mut rng, 180)).unwrap();
    let other = Array2::from_shape_vec((15, 12), f32s(&mut rng, 180)).unwrap();
    let row: Array1<f32> = Array1::from_iter((0..15).map(|j| j as f32 - 3.5));
    for exec in [Exec::on(tessera::Tier::Scalar), Exec::default().threads(3)] {
        for (what, v) in layouts(&big) {
            let (shape, vals) = c_order(&v);
            let dense = ArrayView::from_slice(&vals, &shape).unwrap();
            // elementwise, into a dense and into a stepped destination.
            let mut want = vec![0f32; vals.len()];
            tessera::elementwise(
                Kind::Sqrt,
                std::slice::from_ref(&dense),
                &mut ArrayViewMut::from_slice(&mut want, &shape).unwrap(),
                &exec,
            )
            .unwrap();
            let mut out = Array2::<f32>::zeros((shape[0], shape[1]));
            nd::elementwise(Kind::Sqrt, &[v], out.view_mut(), &exec).unwrap();
            assert_eq!(bits(out.as_slice().unwrap()), bits(&want), "{what}");
            let mut wide = Array2::<f32>::from_elem((shape[0] * 2, shape[1] + 3), 9.0);
            nd::elementwise(Kind::Sqrt, &[v], wide.slice_mut(s![..;2, 3..]), &exec).unwrap();
            let got: Vec<f32> = wide.slice(s![..;2, 3..]).iter().copied().collect();
            assert_eq!(bits(&got), bits(&want), "{what} into a stepped destination");
            assert!(
                wide.slice(s![1..;2, ..]).iter().all(|&x| x == 9.0),
                "{what}: gaps written"
            );
            // A row-broadcast second input.
            let row = row.slice(s![..shape[1]]);
            let rowb = row.insert_axis(Axis(0));
            let mut out = Array2::<f32>::zeros((shape[0], shape[1]));
            nd::elementwise(Kind::Hypot, &[v, rowb], out.view_mut(), &exec).unwrap();
            let mut want = vec![0f32; vals.len()];
            tessera::elementwise(
                Kind::Hypot,
                &[
                    dense.clone(),
                    ArrayView::from_slice(row.as_slice().unwrap(), &[1, shape[1]]).unwrap(),
                ],
                &mut ArrayViewMut::from_slice(&mut want, &shape).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(
                bits(out.as_slice().unwrap()),
                bits(&want),
                "{what} broadcast"
            );
            // cast
            let mut h = Array2::<half::bf16>::from_elem((shape[0], shape[1]), half::bf16::ZERO);
            nd::cast(CastMode::Default, v, h.view_mut(), &exec).unwrap();
            assert!(
                h.iter()
                    .zip(&vals)
                    .all(|(h, x)| *h == half::bf16::from_f32(*x)),
                "{what}"
            );
            // reduce along each axis and over both
            for axes in [&[0usize][..], &[1], &[0, 1]] {
                let rshape: Vec<usize> = (0..2)
                    .filter(|d| !axes.contains(d))
                    .map(|d| shape[d])
                    .collect();
                let len: usize = rshape.iter().product();
                let mut want = vec![0f32; len];
                tessera::reduce(
                    ReduceOp::Sum,
                    axes,
                    &dense,
                    &mut ArrayViewMut::from_slice(&mut want, &rshape).unwrap(),
                    &exec,
                )
                .unwrap();
                let mut got = Array::<f32, _>::zeros(ndarray::IxDyn(&rshape));
                nd::reduce(ReduceOp::Sum, axes, v, got.view_mut(), &exec).unwrap();
                assert_eq!(
                    bits(got.as_slice().unwrap()),
                    bits(&want),
                    "{what} {axes:?}"
                );
            }
            // matmul against a dense matrix of fitting shape
            let k = shape[1];
            let rhs = other.slice(s![..k, ..]);
            let (rs, rv) = c_order(&rhs);
            let mut want = vec![0f32; shape[0] * rs[1]];
            tessera::matmul(
                &dense,
                &ArrayView::from_slice(&rv, &rs).unwrap(),
                &mut ArrayViewMut::from_slice(&mut want, &[shape[0], rs[1]]).unwrap(),
                &exec,
            )
            .unwrap();
            let mut got = Array2::<f32>::zeros((shape[0], rs[1]));
            nd::matmul(v, rhs, got.view_mut(), &exec).unwrap();
            assert_eq!(bits(got.as_slice().unwrap()), bits(&want), "{what} matmul");
            // and into a transposed destination
            let mut gt = Array2::<f32>::zeros((rs[1], shape[0]));
            nd::matmul(v, rhs, gt.view_mut().reversed_axes(), &exec).unwrap();
            let gt: Vec<f32> = gt.t().iter().copied().collect();
            assert_eq!(bits(&gt), bits(&want), "{what} matmul into a transpose");
            // a program with two outputs, one of them stepped
            let p = Program::parse("y0 = x0 * x0; y1 = -x0", &[DType::F32]).unwrap();
            let mut y0 = Array2::<f32>::zeros((shape[0], shape[1]));
            let mut y1 = Array2::<f32>::zeros((shape[0] * 2, shape[1]));
            nd::map(
                &p,
                &[v],
                &mut [y0.view_mut(), y1.slice_mut(s![..;2, ..])],
                &exec,
            )
            .unwrap();
            assert!(y0.iter().zip(&vals).all(|(y, x)| *y == x * x), "{what}");
            assert!(y1
                .slice(s![..;2, ..])
                .iter()
                .zip(&vals)
                .all(|(y, x)| *y == -x));
            assert!(y1.slice(s![1..;2, ..]).iter().all(|&y| y == 0.0));
        }
    }
    // A refusal writes nothing, also through a copied destination.
    let x = Array3::<f32>::ones((2, 3, 4));
    let mut y = Array2::<f32>::from_elem((3, 8), 5.0);
    let r = nd::reduce(
        ReduceOp::Sum,
        &[0, 0],
        x.view(),
        y.slice_mut(s![.., ..;2]),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::Axis { .. })), "{r:?}");
    assert!(y.iter().all(|&v| v == 5.0));
}
