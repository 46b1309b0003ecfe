//! The part of `tessera selftest` that checks the hand-written engines on
//! every tier and two thread counts against models written out here:
//!
//! - a float sum of 2^17 + 17 terms (beyond the size at which a sum splits
//!   over threads) against the lane order of ARCHITECTURE.md §5.3 (16 lanes by term
//!   number, the fixed fold, the block tree), computed with plain loops over
//!   `Option` lanes;
//! - a 160 × 97 by 97 × 131 f32 product (chain order: R, C > 4, R·C ≥ 64,
//!   K < 128·R·C; large enough to split over threads) against each output's
//!   products added in increasing k by `mul_add` from +0.

use crate::failure::Outcome;
use crate::outln;
use std::io::Write;
use tessera::{available_tiers, matmul, reduce, ArrayView, ArrayViewMut, Exec, ReduceOp};

/// Deterministic values of mixed sign and magnitude (a multiplicative hash of
/// the index, scaled over six binades).
fn values(n: usize, salt: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| {
            let h = (i ^ salt).wrapping_mul(0x9e37_79b9).rotate_left(13);
            let unit = (h >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            unit * (1u32 << ((h & 7) * 3)) as f32
        })
        .collect()
}

/// The lane-order sum, term by term as ARCHITECTURE.md §5.3 states it.
fn lane_order_sum(x: &[f32]) -> f32 {
    let block_sums: Vec<f32> = x
        .chunks(1024)
        .map(|block| {
            let mut lane: [Option<f32>; 16] = [None; 16];
            for (j, &t) in block.iter().enumerate() {
                lane[j % 16] = Some(lane[j % 16].unwrap_or(0.0) + t);
            }
            for half in [8, 4, 2, 1] {
                for i in 0..half {
                    lane[i] = match (lane[i], lane[i + half]) {
                        (Some(p), Some(q)) => Some(p + q),
                        (p, None) => p,
                        (None, q) => q,
                    };
                }
            }
            lane[0].unwrap_or(0.0)
        })
        .collect();
    fn tree(b: &[f32]) -> f32 {
        match b.len() {
            0 => 0.0,
            1 => b[0],
            n => {
                let left = 1 << (usize::BITS - 1 - (n - 1).leading_zeros());
                tree(&b[..left]) + tree(&b[left..])
            }
        }
    }
    tree(&block_sums)
}

/// Run the engine checks; prints a line each and returns the failures.
pub fn run(out: &mut dyn Write) -> Outcome<usize> {
    let mut failures = 0;
    let x = values((1 << 17) + 17, 1);
    let want = lane_order_sum(&x);
    let (m, k, n) = (160, 97, 131);
    let (a, b) = (values(m * k, 2), values(k * n, 3));
    let chain: Vec<f32> = (0..m * n)
        .map(|ij| {
            let (i, j) = (ij / n, ij % n);
            (0..k).fold(0.0f32, |acc, q| a[i * k + q].mul_add(b[q * n + j], acc))
        })
        .collect();
    for tier in available_tiers() {
        for threads in [1, 2] {
            let exec = Exec::on(tier).threads(threads);
            let mut s = [0f32];
            let summed = ArrayView::from_slice(&x, &[x.len()]).and_then(|xv| {
                reduce(
                    ReduceOp::Sum,
                    &[0],
                    &xv,
                    &mut ArrayViewMut::from_slice(&mut s, &[])?,
                    &exec,
                )
            });
            let ok = summed.is_ok() && s[0].to_bits() == want.to_bits();
            failures += usize::from(!ok);
            outln!(
                out,
                "  sum of {} f32 in lane order, {tier}, {threads} thread(s): {} (model {want})  {}",
                x.len(),
                s[0],
                if ok { "ok" } else { "FAILED" }
            )?;
            let mut c = vec![0f32; m * n];
            let product = ArrayView::from_slice(&a, &[m, k]).and_then(|av| {
                let bv = ArrayView::from_slice(&b, &[k, n])?;
                matmul(
                    &av,
                    &bv,
                    &mut ArrayViewMut::from_slice(&mut c, &[m, n])?,
                    &exec,
                )
            });
            let same = c
                .iter()
                .zip(&chain)
                .filter(|(p, q)| p.to_bits() == q.to_bits())
                .count();
            let ok = product.is_ok() && same == m * n;
            failures += usize::from(!ok);
            outln!(
                out,
                "  f32 product {m}x{k} by {k}x{n} in chain order, {tier}, {threads} thread(s): \
                 {same} of {} outputs have the model's bits  {}",
                m * n,
                if ok { "ok" } else { "FAILED" }
            )?;
        }
    }
    Ok(failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_model_follows_the_stated_order() {
        // 17 terms: lane 0 holds terms 0 and 16, the others one term each.
        let x: Vec<f32> = (0..17).map(|i| (1u32 << i) as f32).collect();
        let lanes: Vec<f32> = (0..16)
            .map(|l| if l == 0 { 1.0 + 65536.0 } else { x[l] })
            .collect();
        let mut l = lanes.clone();
        for half in [8, 4, 2, 1] {
            for i in 0..half {
                l[i] += l[i + half];
            }
        }
        assert_eq!(lane_order_sum(&x), l[0]);
        // Three blocks: (b0 + b1) + b2.
        let y = vec![1.0f32; 3 * 1024];
        assert_eq!(lane_order_sum(&y), 3072.0);
        assert_eq!(lane_order_sum(&[]), 0.0);
    }
}
