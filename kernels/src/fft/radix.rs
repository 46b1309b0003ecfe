//! Mixed-radix passes: Stockham's self-sorting decimation in frequency.
//!
//! A line of `n = p₁·p₂·…·p_k` points runs `k` passes, one per factor in the
//! plan's order. Before a pass of radix `p` the line is `s` interleaved
//! sequences of `n/s` points (`s` the product of the radices already run);
//! the pass computes, for `q < m = n/(s·p)` and `r < s`,
//!
//! ```text
//! a_j = x[r + s·(q + m·j)]                      (j < p)
//! y[r + s·(p·q + k)] = DFT_p(a)_k · w^(q·k)     (k < p, w = exp(∓2πi·s/n))
//! ```
//!
//! and the next pass reads `y`. The last pass (`m = 1`) multiplies by no
//! twiddle. Each point of each pass is computed by the same operations in
//! the same order whatever the line's position, layout, thread or tier; the
//! vector versions of the passes (`simd.rs`) run these very loops.

use super::butterflies::{
    bf2, bf3, bf4, bf5, bf8, bf_prime, cmul, Consts3, Consts5, Consts8, PrimeConsts,
};
use super::twiddle::RootTable;
use super::FftFloat;
use crate::error::Result;
use num_complex::Complex;

/// The butterfly of one pass.
#[derive(Clone, Debug)]
pub(crate) enum Butterfly<T> {
    R2,
    R3(Consts3<T>),
    R4,
    R5(Consts5<T>),
    R8(Consts8<T>),
    Prime(PrimeConsts<T>),
}

/// One pass: its radix, its `m` and its twiddles `w^(q·k)`, `k = 1..p`, for each `q`.
#[derive(Clone, Debug)]
pub(crate) struct Pass<T> {
    pub p: usize,
    pub m: usize,
    pub bf: Butterfly<T>,
    /// `tw[q·(p−1) + k − 1] = w^(q·k)`; empty where `m = 1`.
    pub tw: Vec<Complex<T>>,
    /// The first pass's twiddles again, by k: `twk[(k − 1)·m + q] = w^(q·k)`
    /// (for the vector loops over q, radix 2 to 5 and 8); empty for the other passes.
    pub twk: Vec<Complex<T>>,
}

/// The factors of `n` in pass order: the power of two as 8s, with one or two
/// 4s for the rest (2·2 = 4, 2⁴ = 4·4; a lone 2 for n = 2), then 3s, 5s and
/// the other primes ascending.
pub(crate) fn radices(n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut r = n;
    let mut twos = 0;
    while r.is_multiple_of(2) && r > 1 {
        r /= 2;
        twos += 1;
    }
    let (eights, rest) = match twos % 3 {
        1 if twos >= 4 => (twos / 3 - 1, vec![4, 4]),
        1 => (0, vec![2]),
        2 => (twos / 3, vec![4]),
        _ => (twos / 3, vec![]),
    };
    out.extend(std::iter::repeat_n(8, eights));
    out.extend(rest);
    let mut f = 3;
    while f * f <= r {
        while r.is_multiple_of(f) {
            out.push(f);
            r /= f;
        }
        f += 2;
    }
    if r > 1 {
        out.push(r);
    }
    out
}

/// The prime factors of `n` with multiplicity, ascending.
pub(crate) fn prime_factors(n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut r = n;
    let mut f = 2;
    while f * f <= r {
        while r.is_multiple_of(f) {
            out.push(f);
            r /= f;
        }
        f += 1;
    }
    if r > 1 {
        out.push(r);
    }
    out
}

/// The passes of a line of `n ≥ 2` points.
pub(crate) fn build_passes<T: FftFloat>(
    n: usize,
    inverse: bool,
    table: &RootTable,
) -> Result<Vec<Pass<T>>> {
    let mut passes = Vec::new();
    let mut s = 1usize;
    for p in radices(n) {
        let len = n / s;
        let m = len / p;
        let bf = match p {
            2 => Butterfly::R2,
            3 => Butterfly::R3(Consts3::new(inverse)),
            4 => Butterfly::R4,
            5 => Butterfly::R5(Consts5::new(inverse)),
            8 => Butterfly::R8(Consts8::new(inverse)),
            _ => Butterfly::Prime(PrimeConsts::new(p, inverse)?),
        };
        let tw = if m == 1 {
            Vec::new()
        } else {
            let count = m * (p - 1);
            let mut tw = super::plan::try_vec(count, "twiddles")?;
            for q in 0..m {
                for k in 1..p {
                    tw.push(table.get::<T>(s * q * k, inverse));
                }
            }
            tw
        };
        let mut twk = Vec::new();
        if s == 1 && m > 1 && matches!(p, 2..=5 | 8) {
            twk = super::plan::try_vec(tw.len(), "twiddles")?;
            for k in 1..p {
                for q in 0..m {
                    twk.push(tw[q * (p - 1) + k - 1]);
                }
            }
        }
        passes.push(Pass { p, m, bf, tw, twk });
        s *= p;
    }
    Ok(passes)
}

/// Scratch (points) the passes need besides the line's ping-pong buffer.
pub(crate) fn extra_scratch<T>(passes: &[Pass<T>]) -> usize {
    passes
        .iter()
        .map(|p| {
            if matches!(p.bf, Butterfly::Prime(_)) {
                p.p
            } else {
                0
            }
        })
        .max()
        .unwrap_or(0)
}

/// One pass from `x` into `y` (both of `n` points), `s` sequences
/// interleaved, for `q ≥ q0` (0: the whole pass; the vector loops run the
/// `q`s below and leave the rest here: the same operations on each point).
#[inline(always)]
pub(crate) fn run_pass_from<T: FftFloat>(
    pass: &Pass<T>,
    s: usize,
    inverse: bool,
    x: &[Complex<T>],
    y: &mut [Complex<T>],
    work: &mut [Complex<T>],
    q0: usize,
) {
    let (p, m) = (pass.p, pass.m);
    let tw = &pass.tw[..];
    let twid = m > 1;
    match &pass.bf {
        Butterfly::R2 => {
            for q in q0..m {
                let w1 = if twid {
                    tw[q]
                } else {
                    Complex::new(T::ONE, T::ZERO)
                };
                let (xa, xb) = (&x[s * q..s * q + s], &x[s * (q + m)..s * (q + m) + s]);
                let (y0, y1) = y[s * 2 * q..s * 2 * q + 2 * s].split_at_mut(s);
                for r in 0..s {
                    let (b0, b1) = bf2(xa[r], xb[r]);
                    y0[r] = b0;
                    y1[r] = if twid { cmul(b1, w1) } else { b1 };
                }
            }
        }
        Butterfly::R4 => {
            for q in q0..m {
                let base = 3 * q;
                let (w1, w2, w3) = if twid {
                    (tw[base], tw[base + 1], tw[base + 2])
                } else {
                    let one = Complex::new(T::ONE, T::ZERO);
                    (one, one, one)
                };
                let x0 = &x[s * q..s * q + s];
                let x1 = &x[s * (q + m)..s * (q + m) + s];
                let x2 = &x[s * (q + 2 * m)..s * (q + 2 * m) + s];
                let x3 = &x[s * (q + 3 * m)..s * (q + 3 * m) + s];
                let yq = &mut y[s * 4 * q..s * 4 * q + 4 * s];
                let (y0, rest) = yq.split_at_mut(s);
                let (y1, rest) = rest.split_at_mut(s);
                let (y2, y3) = rest.split_at_mut(s);
                for r in 0..s {
                    let (b0, b1, b2, b3) = bf4(x0[r], x1[r], x2[r], x3[r], inverse);
                    y0[r] = b0;
                    if twid {
                        y1[r] = cmul(b1, w1);
                        y2[r] = cmul(b2, w2);
                        y3[r] = cmul(b3, w3);
                    } else {
                        y1[r] = b1;
                        y2[r] = b2;
                        y3[r] = b3;
                    }
                }
            }
        }
        Butterfly::R3(c) => {
            for q in q0..m {
                let (w1, w2) = if twid {
                    (tw[2 * q], tw[2 * q + 1])
                } else {
                    let one = Complex::new(T::ONE, T::ZERO);
                    (one, one)
                };
                let x0 = &x[s * q..s * q + s];
                let x1 = &x[s * (q + m)..s * (q + m) + s];
                let x2 = &x[s * (q + 2 * m)..s * (q + 2 * m) + s];
                let yq = &mut y[s * 3 * q..s * 3 * q + 3 * s];
                let (y0, rest) = yq.split_at_mut(s);
                let (y1, y2) = rest.split_at_mut(s);
                for r in 0..s {
                    let (b0, b1, b2) = bf3(x0[r], x1[r], x2[r], c, inverse);
                    y0[r] = b0;
                    if twid {
                        y1[r] = cmul(b1, w1);
                        y2[r] = cmul(b2, w2);
                    } else {
                        y1[r] = b1;
                        y2[r] = b2;
                    }
                }
            }
        }
        Butterfly::R5(c) => {
            for q in q0..m {
                let one = Complex::new(T::ONE, T::ZERO);
                let w = if twid {
                    [tw[4 * q], tw[4 * q + 1], tw[4 * q + 2], tw[4 * q + 3]]
                } else {
                    [one; 4]
                };
                for r in 0..s {
                    let a = [
                        x[r + s * q],
                        x[r + s * (q + m)],
                        x[r + s * (q + 2 * m)],
                        x[r + s * (q + 3 * m)],
                        x[r + s * (q + 4 * m)],
                    ];
                    let b = bf5(a, c, inverse);
                    let o = r + s * 5 * q;
                    y[o] = b[0];
                    for k in 1..5 {
                        y[o + s * k] = if twid { cmul(b[k], w[k - 1]) } else { b[k] };
                    }
                }
            }
        }
        Butterfly::R8(c) => {
            for q in q0..m {
                for r in 0..s {
                    let a = core::array::from_fn(|j| x[r + s * (q + j * m)]);
                    let b = bf8(a, c, inverse);
                    let o = r + s * 8 * q;
                    y[o] = b[0];
                    for k in 1..8 {
                        y[o + s * k] = if twid {
                            cmul(b[k], tw[7 * q + k - 1])
                        } else {
                            b[k]
                        };
                    }
                }
            }
        }
        Butterfly::Prime(c) => {
            let uv = &mut work[..p - 1];
            for q in q0..m {
                for r in 0..s {
                    let o = r + s * p * q;
                    bf_prime(
                        |j| x[r + s * (q + m * j)],
                        |k, v| {
                            y[o + s * k] = if twid && k > 0 {
                                cmul(v, tw[q * (p - 1) + k - 1])
                            } else {
                                v
                            }
                        },
                        c,
                        inverse,
                        uv,
                    );
                }
            }
        }
    }
}

/// All passes over `data` (n points), with `scratch` of at least `n +
/// extra_scratch` points; the result is left in `data`.
#[inline(always)]
pub(crate) fn run_passes<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
) {
    run_passes_with(passes, inverse, data, scratch, |_, _, _, _| false)
}

/// [`run_passes`], where `vector(pass, s, x, y)` runs a pass itself when it
/// can (returning true) with the same operations in the same order.
#[inline(always)]
pub(crate) fn run_passes_with<T: FftFloat>(
    passes: &[Pass<T>],
    inverse: bool,
    data: &mut [Complex<T>],
    scratch: &mut [Complex<T>],
    vector: impl Fn(&Pass<T>, usize, &[Complex<T>], &mut [Complex<T>]) -> bool,
) {
    let n = data.len();
    let run =
        |pass: &Pass<T>, s: usize, x: &[Complex<T>], y: &mut [Complex<T>], w: &mut [Complex<T>]| {
            if !vector(pass, s, x, y) {
                run_pass_from(pass, s, inverse, x, y, w, 0);
            }
        };
    if passes.len() >= 3 && scratch.len() >= 2 * n + extra_scratch(passes) {
        // Two buffers in the scratch: the first pass from `data` into one,
        // the middle passes between the two, the last one back into `data`
        // (a caller's buffer off a cache-line boundary then meets two
        // passes, not all of them).
        let (a, rest) = scratch.split_at_mut(n);
        let (b, work) = rest.split_at_mut(n);
        let last = passes.len() - 1;
        run(&passes[0], 1, data, a, work);
        let mut s = passes[0].p;
        let mut in_a = true;
        for (i, pass) in passes.iter().enumerate().skip(1) {
            let (x, y): (&[Complex<T>], &mut [Complex<T>]) = match (i == last, in_a) {
                (true, true) => (&*a, &mut *data),
                (true, false) => (&*b, &mut *data),
                (false, true) => (&*a, &mut *b),
                (false, false) => (&*b, &mut *a),
            };
            run(pass, s, x, y, work);
            in_a = !in_a;
            s *= pass.p;
        }
        return;
    }
    let (buf, work) = scratch.split_at_mut(n);
    let mut in_data = true;
    let mut s = 1;
    for pass in passes {
        if in_data {
            run(pass, s, data, buf, work);
        } else {
            run(pass, s, buf, data, work);
        }
        in_data = !in_data;
        s *= pass.p;
    }
    if !in_data {
        crate::copy::copy_slice(data, buf);
    }
}
