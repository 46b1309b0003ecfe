//! One-dimensional series kernels on typed slices of `f32` or `f64`: the sum
//! of squared deviations, differences, rolling extremes and means over a
//! window, and the exponential moving average. Each states its order; none
//! depends on threads or tier. Like every call, each takes an [`Exec`] last
//! (only its tier is used: the series kernels run on the calling thread).

use super::lanes::{LaneFloat, BLOCK};
use super::tree::tree_of;
use crate::error::{Error, Result};
use crate::tier::Exec;

fn check_len(what: &str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::Length {
            operand: format!("{what}: the destination"),
            len: got,
            expected: want,
            unit: "values",
        })
    }
}

fn check_window(window: usize, n: usize) -> Result<usize> {
    if window == 0 || window > n {
        return Err(Error::Attribute {
            name: "window".into(),
            reason: format!("window {window} must be between 1 and the series length {n}"),
        });
    }
    Ok(n - window + 1)
}

/// The lane-order sum of terms made by `f` from `x` (blocks converted into a
/// stack buffer).
fn lane_sum_of<F: LaneFloat>(exec: &Exec, x: &[F], f: impl Fn(F) -> F) -> Result<F> {
    let tier = exec.resolve_tier()?;
    let add = |a: F, b: F| a + b;
    let mut t = [F::ZERO; BLOCK];
    let block = |i: usize| {
        let c = &x[i * BLOCK..((i + 1) * BLOCK).min(x.len())];
        for (d, &v) in t.iter_mut().zip(c) {
            *d = f(v);
        }
        F::sum_block_on(tier, &t[..c.len()])
    };
    Ok(tree_of(x.len().div_ceil(BLOCK), F::ZERO, block, &add).unwrap_or(F::ZERO))
}

/// `Σ (x - c)²` about a given centre `c`: each term `(x - c)·(x - c)` rounded
/// once after the rounded difference, summed in lane order (ARCHITECTURE.md §5.3). For
/// the variance about the mean, see [`crate::ReduceOp::Variance`].
pub fn sum_squared_deviations<F: LaneFloat>(c: F, x: &[F], exec: &Exec) -> Result<F> {
    lane_sum_of(exec, x, |v| {
        let d = v - c;
        d * d
    })
}

/// `out[i] = x[i + 1] - x[i]` (each rounded once); `out` holds `n - 1` values
/// (none for an empty `x`).
pub fn diff<F: LaneFloat>(x: &[F], out: &mut [F], exec: &Exec) -> Result<()> {
    exec.resolve_tier()?;
    check_len("diff", out.len(), x.len().saturating_sub(1))?;
    for (o, w) in out.iter_mut().zip(x.windows(2)) {
        *o = w[1] - w[0];
    }
    Ok(())
}

/// `out[i]` = the IEEE 754-2019 maximum of `x[i .. i + window]` (NaN
/// propagates, -0 < +0); `out` holds `n - window + 1` values. Refuses a window
/// of 0 or longer than `x`.
pub fn rolling_max<F: LaneFloat>(window: usize, x: &[F], out: &mut [F], exec: &Exec) -> Result<()> {
    exec.resolve_tier()?;
    rolling_ext(x, window, out, true)
}

/// [`rolling_max`] for the minimum.
pub fn rolling_min<F: LaneFloat>(window: usize, x: &[F], out: &mut [F], exec: &Exec) -> Result<()> {
    exec.resolve_tier()?;
    rolling_ext(x, window, out, false)
}

/// The rolling extreme in O(n) whatever the window (van Herk / Gil-Werman):
/// the series is cut into blocks of `window` elements; the window starting at
/// `i` is the tail of `i`'s block from `i` (its suffix extreme) followed by
/// the head of the next block up to `i + window - 1` (its prefix extreme).
/// The IEEE maximum (minimum) taken left to right is associative, so
/// combining the two parts in order gives the bits of the left-to-right fold
/// over the window: the first NaN where there is one, else the extreme with
/// -0 < +0. The suffix extremes are written into `out` itself (the windows
/// starting in a block are exactly `out`'s entries of that block), then
/// combined with a running prefix extreme of the next block.
fn rolling_ext<F: LaneFloat>(x: &[F], window: usize, out: &mut [F], max: bool) -> Result<()> {
    let m = check_window(window, x.len())?;
    check_len("rolling extreme", out.len(), m)?;
    let op = |a: F, b: F| {
        if max {
            super::engine::fmax(a, b)
        } else {
            super::engine::fmin(a, b)
        }
    };
    let w = window;
    let mut start = 0;
    while start < m {
        // Windows starting at start..end lie in this block and the next.
        let end = (start + w).min(m);
        // Suffix extremes of the block (read to the block's end, which may
        // lie beyond the last window's start but never beyond x).
        let block_end = (start + w).min(x.len());
        let mut acc = x[block_end - 1];
        for j in (end..block_end - 1).rev() {
            acc = op(x[j], acc);
        }
        for j in (start..end).rev() {
            if j < block_end - 1 {
                acc = op(x[j], acc);
            }
            out[j] = acc;
        }
        // The window at `start` is the whole block; each later one adds the
        // next block's head, one element more each step.
        let mut head: Option<F> = None;
        for i in start + 1..end {
            let v = x[i + w - 1];
            let h = match head {
                None => v,
                Some(h) => op(h, v),
            };
            head = Some(h);
            out[i] = op(out[i], h);
        }
        start = end;
    }
    Ok(())
}

/// `out[i]` = the mean of `x[i .. i + window]`: the window's terms summed in
/// lane order as a reduction of exactly them (so within the Sum bound of
/// [`crate::reduce()`]), divided by the window length once. `out` holds
/// `n - window + 1` values. Each window is summed afresh (no running sum whose
/// error would grow along the series).
pub fn rolling_mean<F: LaneFloat>(
    window: usize,
    x: &[F],
    out: &mut [F],
    exec: &Exec,
) -> Result<()> {
    let m = check_window(window, x.len())?;
    check_len("rolling mean", out.len(), m)?;
    let tier = exec.resolve_tier()?;
    let w = F::from_count(window);
    let add = |a: F, b: F| a + b;
    let blocks = window.div_ceil(BLOCK);
    for (o, win) in out.iter_mut().zip(x.windows(window)) {
        let block =
            |i: usize| F::sum_block_on(tier, &win[i * BLOCK..((i + 1) * BLOCK).min(window)]);
        *o = tree_of(blocks, F::ZERO, block, &add).unwrap_or(F::ZERO) / w;
    }
    Ok(())
}

/// The exponential moving average: `out[0] = x[0]`, then
/// `out[i] = alpha·x[i] + (1 - alpha)·out[i-1]`, each product and the sum
/// rounded once, `1 - alpha` rounded once up front; strictly sequential.
/// Refuses an `alpha` outside [0, 1] (or NaN).
pub fn ema<F: LaneFloat>(alpha: F, x: &[F], out: &mut [F], exec: &Exec) -> Result<()> {
    exec.resolve_tier()?;
    if !(alpha >= F::ZERO && alpha <= F::ONE) {
        return Err(Error::Attribute {
            name: "ema: alpha".into(),
            reason: format!("{alpha:?} is not in [0, 1]"),
        });
    }
    check_len("ema", out.len(), x.len())?;
    let beta = F::ONE - alpha;
    let mut prev = F::ZERO;
    for (i, (o, &v)) in out.iter_mut().zip(x).enumerate() {
        prev = if i == 0 { v } else { alpha * v + beta * prev };
        *o = prev;
    }
    Ok(())
}
