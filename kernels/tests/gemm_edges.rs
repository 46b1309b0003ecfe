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

/// A fused multiply-add of either precision.
trait Fma: Copy {
    fn fma(self, b: Self, c: Self) -> Self;
}
impl Fma for f32 {
    fn fma(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
}
impl Fma for f64 {
    fn fma(self, b: f64, c: f64) -> f64 {
        self.mul_add(b, c)
    }
}

/// The chain order from a given start per output (init), in f64 or f32.
fn chain_from<T: Fma>(a: &[T], b: &[T], init: &[T], m: usize, k: usize, n: usize) -> Vec<T> {
    let mut c = init.to_vec();
    for i in 0..m {
        for j in 0..n {
            let mut acc = init[i * n + j];
            for t in 0..k {
                acc = a[i * k + t].fma(b[t * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
    c
}

#[test]
fn deep_edge_tiles_continue_their_chains_across_depth_blocks() {
    // Depths past one k-block (at most 512 steps): every edge tile is
    // loaded, continued and stored again per block, in place, by the
    // masked edge kernels; with an init, from the init's values.
    let mut rng = Rng::new(5);
    let execs = execs();
    for &(m, n) in &[(15, 33), (29, 17), (33, 47), (43, 9), (14, 32)] {
        for k in [513, 1100] {
            let a = grid_f32s(&mut rng, m * k);
            let b = grid_f32s(&mut rng, k * n);
            let init = grid_f32s(&mut rng, m * n);
            let zero = vec![0f32; m * n];
            let want = chain_from(&a, &b, &zero, m, k, n);
            let want_init = chain_from(&a, &b, &init, m, k, n);
            let (a64, b64, i64s): (Vec<f64>, Vec<f64>, Vec<f64>) = (
                a.iter().map(|&x| x as f64 * 1.000_000_1).collect(),
                b.iter().map(|&x| x as f64 * 0.999_999_9).collect(),
                init.iter().map(|&x| x as f64 * 1.25).collect(),
            );
            let want64 = chain_from(&a64, &b64, &i64s, m, k, n);
            let spec = tessera::ContractSpec::new(tessera::DType::F32).contracting(1, 0);
            let spec64 = tessera::ContractSpec::new(tessera::DType::F64).contracting(1, 0);
            for exec in &execs {
                let mut c = vec![f32::NAN; m * n];
                tessera::matmul(
                    &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                    &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut c, &[m, n]).unwrap(),
                    exec,
                )
                .unwrap();
                assert_eq!(bits_of(&c), bits_of(&want), "f32 {m}x{k}x{n} on {exec:?}");
                let mut c = vec![f32::NAN; m * n];
                tessera::contract(
                    &spec,
                    &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                    &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                    Some(&ArrayView::from_slice(&init, &[m, n]).unwrap()),
                    &mut ArrayViewMut::from_slice(&mut c, &[m, n]).unwrap(),
                    exec,
                )
                .unwrap();
                assert_eq!(
                    bits_of(&c),
                    bits_of(&want_init),
                    "f32 {m}x{k}x{n} with init on {exec:?}"
                );
                let mut c64 = vec![f64::NAN; m * n];
                tessera::contract(
                    &spec64,
                    &ArrayView::from_slice(&a64, &[m, k]).unwrap(),
                    &ArrayView::from_slice(&b64, &[k, n]).unwrap(),
                    Some(&ArrayView::from_slice(&i64s, &[m, n]).unwrap()),
                    &mut ArrayViewMut::from_slice(&mut c64, &[m, n]).unwrap(),
                    exec,
                )
                .unwrap();
                assert_eq!(
                    bits_of(&c64),
                    bits_of(&want64),
                    "f64 {m}x{k}x{n} with init on {exec:?}"
                );
            }
        }
    }
}

#[test]
fn small_products_read_operands_in_place_through_any_strides() {
    // The small path reads b's rows in place where its columns are
    // consecutive (any depth stride, negative too) and writes a destination
    // with padded rows in place; misaligned byte views take the copies.
    // Every way gives the chain order's bits, and the padding is untouched.
    let mut rng = Rng::new(19);
    for &(m, k, n) in &[
        (5, 3, 13),
        (15, 64, 33),
        (29, 17, 64),
        (64, 64, 64),
        (9, 40, 8),
    ] {
        let a = grid_f32s(&mut rng, m * k);
        let b = grid_f32s(&mut rng, k * n);
        let want = chain_f32(&a, &b, m, k, n);
        // b's rows stored last first: depth stride −n.
        let brev: Vec<f32> = (0..k * n).map(|i| b[(k - 1 - i / n) * n + i % n]).collect();
        // a and b shifted by one byte inside a byte buffer (misaligned).
        let bytes = |v: &[f32]| {
            let mut out = vec![0u8; 1];
            out.extend(v.iter().flat_map(|x| x.to_le_bytes()));
            out
        };
        let (ab, bb) = (bytes(&a), bytes(&b));
        for exec in &execs() {
            let ld = n + 3;
            let mut cp = vec![f32::NAN; m * ld];
            tessera::matmul(
                &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                &ArrayView::from_slice_strided(&brev, &[k, n], &[-(n as isize), 1], (k - 1) * n)
                    .unwrap(),
                &mut ArrayViewMut::from_slice_strided(&mut cp, &[m, n], &[ld as isize, 1], 0)
                    .unwrap(),
                exec,
            )
            .unwrap();
            for i in 0..m {
                assert_eq!(
                    bits_of(&cp[i * ld..i * ld + n]),
                    bits_of(&want[i * n..(i + 1) * n]),
                    "{m}x{k}x{n} row {i}, b backwards, padded dst on {exec:?}"
                );
                assert!(cp[i * ld + n..(i + 1) * ld].iter().all(|x| x.is_nan()));
            }
            let mut cb = vec![0u8; 1 + 4 * m * n];
            {
                let mut d = ArrayViewMut::new(
                    tessera::DType::F32,
                    &[m, n],
                    &[n as isize, 1],
                    0,
                    &mut cb[1..],
                )
                .unwrap();
                tessera::matmul(
                    &ArrayView::new(tessera::DType::F32, &[m, k], &[k as isize, 1], 0, &ab[1..])
                        .unwrap(),
                    &ArrayView::new(tessera::DType::F32, &[k, n], &[n as isize, 1], 0, &bb[1..])
                        .unwrap(),
                    &mut d,
                    exec,
                )
                .unwrap();
            }
            let got: Vec<f32> = cb[1..]
                .chunks_exact(4)
                .map(|q| f32::from_le_bytes(q.try_into().unwrap()))
                .collect();
            assert_eq!(
                bits_of(&got),
                bits_of(&want),
                "{m}x{k}x{n} misaligned on {exec:?}"
            );
        }
    }
}

/// Products of few columns (A the stream, the skinny blocking) through
/// every layout of A the packer reads: row-major, padded rows, rows reversed
/// (a negative row stride), transposed in memory, one byte off its
/// alignment; row counts with and without a partial micro-panel, depths
/// within and past one depth block (chain order: more than 4 rows and
/// columns), columns below, at and past one micro-panel. Every tier and
/// thread count gives the chain order written out here.
#[test]
fn skinny_products_through_every_layout_of_a_keep_the_chain_order() {
    let mut rng = Rng::new(77);
    let execs: Vec<Exec> = tessera::available_tiers()
        .into_iter()
        .flat_map(|t| [Exec::on(t).par(Par::Seq), Exec::on(t).par(Par::threads(2))])
        .collect();
    for &(m, k, n) in &[
        (131, 70, 5),
        (70, 700, 7),
        (131, 700, 16),
        (84, 4500, 33),
        (45, 300, 64),
        (14, 5000, 32),
    ] {
        let a = grid_f32s(&mut rng, m * k);
        let b = grid_f32s(&mut rng, k * n);
        let want = chain_f32(&a, &b, m, k, n);
        let a64: Vec<f64> = a.iter().map(|&x| x as f64 * 1.000_000_1).collect();
        let b64: Vec<f64> = b.iter().map(|&x| x as f64 * 0.999_999_9).collect();
        let want64 = chain_f64(&a64, &b64, m, k, n);
        // The same A: rows padded by 3 elements; rows stored last first;
        // transposed; one byte past an aligned start.
        let pad = k + 3;
        let padded: Vec<f32> = (0..m * pad)
            .map(|i| {
                if i % pad < k {
                    a[i / pad * k + i % pad]
                } else {
                    f32::NAN
                }
            })
            .collect();
        let reversed: Vec<f32> = (0..m * k).map(|i| a[(m - 1 - i / k) * k + i % k]).collect();
        let at: Vec<f32> = (0..m * k).map(|i| a[(i % m) * k + i / m]).collect();
        let mut shifted = vec![0u8; 1 + 4 * m * k];
        for (i, x) in a.iter().enumerate() {
            shifted[1 + 4 * i..5 + 4 * i].copy_from_slice(&x.to_le_bytes());
        }
        let padded64: Vec<f64> = (0..m * pad)
            .map(|i| {
                if i % pad < k {
                    a64[i / pad * k + i % pad]
                } else {
                    f64::NAN
                }
            })
            .collect();
        for exec in &execs {
            let views = [
                ("row-major", ArrayView::from_slice(&a, &[m, k]).unwrap()),
                (
                    "padded rows",
                    ArrayView::from_slice_strided(&padded, &[m, k], &[pad as isize, 1], 0).unwrap(),
                ),
                (
                    "reversed rows",
                    ArrayView::from_slice_strided(
                        &reversed,
                        &[m, k],
                        &[-(k as isize), 1],
                        (m - 1) * k,
                    )
                    .unwrap(),
                ),
                (
                    "transposed",
                    ArrayView::from_slice_strided(&at, &[m, k], &[1, m as isize], 0).unwrap(),
                ),
                (
                    "unaligned",
                    ArrayView::contiguous(tessera::DType::F32, &[m, k], &shifted[1..]).unwrap(),
                ),
            ];
            for (what, av) in &views {
                let mut c = vec![f32::NAN; m * n];
                tessera::matmul(
                    av,
                    &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut c, &[m, n]).unwrap(),
                    exec,
                )
                .unwrap();
                assert_eq!(
                    bits_of(&c),
                    bits_of(&want),
                    "f32 {m}x{k}x{n}, A {what}, on {exec:?}"
                );
            }
            for (what, av) in [
                ("row-major", ArrayView::from_slice(&a64, &[m, k]).unwrap()),
                (
                    "padded rows",
                    ArrayView::from_slice_strided(&padded64, &[m, k], &[pad as isize, 1], 0)
                        .unwrap(),
                ),
            ] {
                let mut c = vec![f64::NAN; m * n];
                tessera::matmul(
                    &av,
                    &ArrayView::from_slice(&b64, &[k, n]).unwrap(),
                    &mut ArrayViewMut::from_slice(&mut c, &[m, n]).unwrap(),
                    exec,
                )
                .unwrap();
                assert_eq!(
                    bits_of(&c),
                    bits_of(&want64),
                    "f64 {m}x{k}x{n}, A {what}, on {exec:?}"
                );
            }
        }
    }
}
