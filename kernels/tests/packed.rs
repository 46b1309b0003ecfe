//! `PackedB` and `matmul_packed`: B packed once gives, for every A, the bits
//! of `contract` of A and the original B with the same accumulator, on every
//! tier and thread count, in every layout and dtype the accumulator takes,
//! across depth blocks and partial micro-panels; exact on small integers;
//! refusals before any write.

mod common;

use common::*;
use tessera::contract::{matmul_packed, ContractSpec, PackedB};
use tessera::{contract, ArrayView, ArrayViewMut, DType, Exec, Tier};
use tessera_testkit::rng::Rng;

fn reference<T: tessera::Element + Default + Copy>(
    a: &ArrayView<'_>,
    b: &ArrayView<'_>,
    acc: DType,
    m: usize,
    n: usize,
) -> Vec<T> {
    let mut y = vec![T::default(); m * n];
    let mut yv = ArrayViewMut::from_slice(&mut y, &[m, n]).unwrap();
    contract(
        &ContractSpec::matmul(2, acc),
        a,
        b,
        None,
        &mut yv,
        &Exec::on(Tier::ALL[0]).threads(1),
    )
    .unwrap();
    y
}

#[test]
fn packed_products_have_contracts_bits_on_every_tier_and_thread_count() {
    let mut rng = Rng::new(0x9acb_0001);
    let shapes = [
        (1, 7, 5),
        (3, 300, 33),
        (6, 64, 16),
        (17, 600, 100),
        (64, 1100, 47),
        (200, 96, 700),
        (9, 5, 1),
    ];
    for (m, k, n) in shapes {
        let a = grid_f32s(&mut rng, m * k);
        let b = grid_f32s(&mut rng, k * n);
        let av = ArrayView::from_slice(&a, &[m, k]).unwrap();
        let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
        let want = reference::<f32>(&av, &bv, DType::F32, m, n);
        // A transposed in memory (column-major) gives the same bits.
        let mut at = vec![0f32; m * k];
        for i in 0..m {
            for t in 0..k {
                at[t * m + i] = a[i * k + t];
            }
        }
        let atv = ArrayView::from_slice_strided(&at, &[m, k], &[1, m as isize], 0).unwrap();
        for tier in tiers() {
            let packed = PackedB::new(&bv, DType::F32, &Exec::on(tier)).unwrap();
            assert_eq!(
                Some(packed.held_bytes()),
                PackedB::bytes(k, n, DType::F32, tier).ok(),
                "the size query"
            );
            for threads in [1, 3] {
                let exec = Exec::on(tier).threads(threads);
                for (what, x) in [("a", &av), ("a transposed", &atv)] {
                    let mut y = vec![f32::NAN; m * n];
                    let mut yv = ArrayViewMut::from_slice(&mut y, &[m, n]).unwrap();
                    matmul_packed(x, &packed, &mut yv, &exec).unwrap();
                    assert_eq!(
                        bits_of(&y),
                        bits_of(&want),
                        "{m}×{k}×{n} {what} {tier:?} threads {threads}"
                    );
                }
            }
            // Packed on this tier, run on every other (the values serve).
            for other in tiers() {
                let mut y = vec![f32::NAN; m * n];
                let mut yv = ArrayViewMut::from_slice(&mut y, &[m, n]).unwrap();
                matmul_packed(&av, &packed, &mut yv, &Exec::on(other)).unwrap();
                assert_eq!(bits_of(&y), bits_of(&want), "packed {tier:?} run {other:?}");
            }
        }
    }
}

#[test]
fn other_dtypes_into_an_f64_accumulator_and_another_destination() {
    let mut rng = Rng::new(0x9acb_0002);
    let (m, k, n) = (23, 515, 41);
    let a: Vec<f64> = (0..m * k)
        .map(|_| rng.below(2001) as f64 - 1000.0)
        .collect();
    let b: Vec<i16> = (0..k * n).map(|_| rng.below(2001) as i16 - 1000).collect();
    let av = ArrayView::from_slice(&a, &[m, k]).unwrap();
    let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
    // Small integers: every sum exact, so the naive product is the answer.
    let mut exact = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            exact[i * n + j] = (0..k).map(|t| a[i * k + t] * b[t * n + j] as f64).sum();
        }
    }
    for tier in tiers() {
        let exec = Exec::on(tier).threads(2);
        let packed = PackedB::new(&bv, DType::F64, &exec).unwrap();
        assert_eq!(packed.shape(), (k, n));
        assert_eq!(packed.acc(), DType::F64);
        let mut y = vec![0f64; m * n];
        matmul_packed(
            &av,
            &packed,
            &mut ArrayViewMut::from_slice(&mut y, &[m, n]).unwrap(),
            &exec,
        )
        .unwrap();
        assert_eq!(y, exact, "{tier:?}");
        // An f32 destination every other element of a wider buffer: one
        // rounding of the same sums.
        let mut wide = vec![7f32; 2 * m * n];
        let mut yv =
            ArrayViewMut::from_slice_strided(&mut wide, &[m, n], &[2 * n as isize, 2], 0).unwrap();
        matmul_packed(&av, &packed, &mut yv, &exec).unwrap();
        for i in 0..m * n {
            assert_eq!(wide[2 * i], exact[i] as f32, "{tier:?} {i}");
            assert_eq!(wide[2 * i + 1], 7.0, "{tier:?}: a write outside");
        }
    }
}

#[test]
fn refusals_come_before_any_write() {
    let b = vec![1f32; 12];
    let bv = ArrayView::from_slice(&b, &[3, 4]).unwrap();
    let packed = PackedB::new(&bv, DType::F32, &Exec::default()).unwrap();
    let a = [1f32; 10];
    let mut y = [7f32; 30];
    let cases: [(&[usize], &[usize], &str); 3] = [
        (&[5, 2], &[5, 4], "a depth of 2 against 3"),
        (&[2, 3], &[2, 5], "a destination of 5 columns"),
        (&[6], &[6, 4], "a of one axis"),
    ];
    for (ash, ysh, what) in cases {
        let na: usize = ash.iter().product();
        let ny: usize = ysh.iter().product();
        let av = ArrayView::from_slice(&a[..na.min(10)], ash)
            .unwrap_or_else(|_| ArrayView::from_slice(&a[..6], &[6]).unwrap());
        let mut yv = ArrayViewMut::from_slice(&mut y[..ny], ysh).unwrap();
        assert!(
            matmul_packed(&av, &packed, &mut yv, &Exec::default()).is_err(),
            "{what}"
        );
        assert!(y.iter().all(|&v| v == 7.0), "{what}: a write");
    }
    assert!(PackedB::new(&bv, DType::C64, &Exec::default()).is_err());
    assert!(PackedB::new(
        &ArrayView::from_slice(&b, &[12]).unwrap(),
        DType::F32,
        &Exec::default()
    )
    .is_err());
    assert!(PackedB::bytes(usize::MAX, 3, DType::F32, Tier::ALL[0]).is_err());
}

#[test]
fn typed_and_ndarray_conveniences_give_the_view_calls_bits() {
    let mut rng = Rng::new(0x9acb_0003);
    let (m, k, n) = (20, 70, 30);
    let a = grid_f32s(&mut rng, m * k);
    let b = grid_f32s(&mut rng, k * n);
    let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
    let want = reference::<f32>(
        &ArrayView::from_slice(&a, &[m, k]).unwrap(),
        &bv,
        DType::F32,
        m,
        n,
    );
    let packed = PackedB::new(&bv, DType::F32, &Exec::default()).unwrap();
    let mut y = vec![0f32; m * n];
    tessera::typed::matmul_packed(&a, &packed, &mut y, &Exec::default()).unwrap();
    assert_eq!(bits_of(&y), bits_of(&want));
    #[cfg(feature = "ndarray")]
    {
        let aa = ndarray::Array2::from_shape_vec((m, k), a.clone()).unwrap();
        let mut ya = ndarray::Array2::<f32>::zeros((m, n));
        tessera::nd::matmul_packed(aa.view(), &packed, ya.view_mut(), &Exec::default()).unwrap();
        assert_eq!(bits_of(ya.as_slice().unwrap()), bits_of(&want));
    }
    let mut short = vec![0f32; m * n - 1];
    assert!(tessera::typed::matmul_packed(&a, &packed, &mut short, &Exec::default()).is_err());
    assert!(tessera::typed::matmul_packed(&a[1..], &packed, &mut y, &Exec::default()).is_err());
}
