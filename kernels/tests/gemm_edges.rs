//! The packed GEMM on every tier, at every edge: products of m × k by k × n
//! for m and n in 5..=33 (every partial micro-tile of the 6 × 16, 6 × 8,
//! 14 × 32 and 14 × 16 kernels) and several depths, plain and transposed,
//! at 1, 2 and 7 threads, against the chain order written out here
//! (ARCHITECTURE.md §5.5: each output adds its products in increasing k by
//! fused multiply-adds, from +0).

mod common;

use common::{bits_of, grid_f32s};
use tessera::{ArrayView, ArrayViewMut, Exec, Par};
use tessera_testkit::rng::Rng;

fn chain_f32(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for t in 0..k {
                acc = a[i * k + t].mul_add(b[t * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
    c
}

fn chain_f64(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f64;
            for t in 0..k {
                acc = a[i * k + t].mul_add(b[t * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
    c
}

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in tessera::available_tiers() {
        for p in [Par::Seq, Par::threads(2), Par::threads(7)] {
            v.push(Exec::on(t).par(p));
        }
    }
    v
}

#[test]
fn every_edge_tile_gives_the_chain_order_on_every_tier() {
    let mut rng = Rng::new(31);
    let execs = execs();
    for m in 5..=33 {
        for n in 5..=33 {
            if m * n < 64 {
                continue; // lane order (ARCHITECTURE.md §5.5)
            }
            let k = [1, 7, 70][(m + n) % 3];
            let a = grid_f32s(&mut rng, m * k);
            let b = grid_f32s(&mut rng, k * n);
            let want = chain_f32(&a, &b, m, k, n);
            let (a64, b64): (Vec<f64>, Vec<f64>) = (
                a.iter().map(|&x| x as f64 * 1.000_000_1).collect(),
                b.iter().map(|&x| x as f64 * 0.999_999_9).collect(),
            );
            let want64 = chain_f64(&a64, &b64, m, k, n);
            // b transposed in memory: the same values through other strides.
            let bt: Vec<f32> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
            for exec in &execs {
                let mut c = vec![0f32; m * n];
                tessera::matmul(
                    &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                    &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut c, &[m, n]).unwrap(),
                    exec,
                )
                .unwrap();
                assert_eq!(bits_of(&c), bits_of(&want), "f32 {m}x{k}x{n} on {exec:?}");
                let mut ct = vec![0f32; m * n];
                tessera::matmul(
                    &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                    &ArrayView::from_slice_strided(&bt, &[k, n], &[1, k as isize], 0).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut ct, &[m, n]).unwrap(),
                    exec,
                )
                .unwrap();
                assert_eq!(
                    bits_of(&ct),
                    bits_of(&want),
                    "f32 {m}x{k}x{n} bᵀ on {exec:?}"
                );
                let mut c64 = vec![0f64; m * n];
                tessera::matmul(
                    &ArrayView::from_slice(&a64, &[m, k]).unwrap(),
                    &ArrayView::from_slice(&b64, &[k, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut c64, &[m, n]).unwrap(),
                    exec,
                )
                .unwrap();
                assert_eq!(
                    bits_of(&c64),
                    bits_of(&want64),
                    "f64 {m}x{k}x{n} on {exec:?}"
                );
            }
        }
    }
}

#[test]
fn small_products_into_strided_destinations_keep_the_chain_order() {
    // The small-product path (every extent ≤ 64) writes through the
    // destination's strides: a transposed destination and one read
    // backwards hold the chain order's values.
    let mut rng = Rng::new(77);
    for &(m, k, n) in &[
        (5, 3, 13),
        (16, 16, 16),
        (33, 64, 9),
        (64, 64, 64),
        (6, 1, 40),
    ] {
        let a = grid_f32s(&mut rng, m * k);
        let b = grid_f32s(&mut rng, k * n);
        let want = chain_f32(&a, &b, m, k, n);
        for exec in &execs() {
            let mut ct = vec![f32::NAN; m * n];
            tessera::matmul(
                &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                &mut ArrayViewMut::from_slice_strided(&mut ct, &[m, n], &[1, m as isize], 0)
                    .unwrap(),
                exec,
            )
            .unwrap();
            let back: Vec<f32> = (0..m * n).map(|o| ct[(o % n) * m + o / n]).collect();
            assert_eq!(
                bits_of(&back),
                bits_of(&want),
                "{m}x{k}x{n} dstᵀ on {exec:?}"
            );
            let mut cr = vec![f32::NAN; m * n];
            tessera::matmul(
                &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                &mut ArrayViewMut::from_slice_strided(
                    &mut cr,
                    &[m, n],
                    &[-(n as isize), -1],
                    m * n - 1,
                )
                .unwrap(),
                exec,
            )
            .unwrap();
            let back: Vec<f32> = cr.iter().rev().copied().collect();
            assert_eq!(
                bits_of(&back),
                bits_of(&want),
                "{m}x{k}x{n} dst reversed on {exec:?}"
            );
        }
    }
}
