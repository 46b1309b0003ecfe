//! Scans against an independent model of ARCHITECTURE.md §5.4 (chunks of 4096, each
//! chunk's total in lane order, carries, results left to right within a
//! chunk), bit for bit on every tier at 1, 2 and 7 threads and through several
//! layouts; a carried scan continues a whole one; refusals write nothing.

use tessera::tier::Par;
use tessera::{reduce, scan, ArrayView, ArrayViewMut, Exec, ReduceOp, ScanOp};
use tessera_testkit::rng::Rng;

mod common;

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in common::tiers() {
        for th in [1, 2, 7] {
            v.push(Exec::on(t).threads(th));
        }
    }
    v
}

/// The lane-order sum of a run of terms (ARCHITECTURE.md §5.3, plain loops).
fn lane_sum(terms: &[f64]) -> f64 {
    let blocks: Vec<f64> = terms
        .chunks(1024)
        .map(|b| {
            let mut l: Vec<Option<f64>> = vec![None; 16];
            for (j, &v) in b.iter().enumerate() {
                l[j % 16] = Some(l[j % 16].unwrap_or(0.0) + v);
            }
            for w in [8, 4, 2, 1] {
                for i in 0..w {
                    if let Some(r) = l[i + w] {
                        l[i] = Some(l[i].unwrap() + r);
                    }
                }
            }
            l[0].unwrap()
        })
        .collect();
    fn tree(v: &[f64]) -> f64 {
        if v.len() == 1 {
            return v[0];
        }
        let mut p = 1;
        while p * 2 < v.len() {
            p *= 2;
        }
        tree(&v[..p]) + tree(&v[p..])
    }
    if blocks.is_empty() {
        0.0
    } else {
        tree(&blocks)
    }
}

/// The model of a Sum scan of one slice from `carry`.
fn model_sum_scan(x: &[f64], carry: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    let mut c = carry;
    for chunk in x.chunks(4096) {
        let mut r = c;
        for &v in chunk {
            r += v;
            out.push(r);
        }
        c += lane_sum(chunk);
    }
    out
}

fn ieee_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        if a.is_sign_negative() {
            b
        } else {
            a
        }
    } else {
        a.max(b)
    }
}

#[test]
fn sum_scan_follows_the_chunked_order() {
    let ex = execs();
    let mut rng = Rng::new(11);
    let mut sizes: Vec<usize> = (0..=40).collect();
    // Around the groups of four chunks scanned side by side, too.
    sizes.extend([
        1023,
        1025,
        4095,
        4096,
        4097,
        3 * 4096 + 17,
        4 * 4096,
        5 * 4096 + 3,
    ]);
    sizes.extend([8 * 4096 - 1, 70_001]);
    for n in sizes {
        let v: Vec<f64> = (0..n).map(|_| rng.spread()).collect();
        let want = model_sum_scan(&v, -0.0);
        // Contiguous, reversed, and as axis 0 of an (n, 3) array.
        let mut rev = vec![0.0; n];
        for (i, &t) in v.iter().enumerate() {
            rev[n - 1 - i] = t;
        }
        let cols = 3;
        let mut m = vec![0.0; n * cols];
        let mut wants = Vec::new();
        for c in 0..cols {
            let col: Vec<f64> = (0..n).map(|_| rng.spread()).collect();
            for i in 0..n {
                m[i * cols + c] = col[i];
            }
            wants.push(model_sum_scan(&col, -0.0));
        }
        for e in &ex {
            let x = ArrayView::from_slice(&v, &[n]).unwrap();
            let mut y = vec![f64::NAN; n];
            scan(
                ScanOp::Sum,
                0,
                &x,
                None,
                &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
                e,
            )
            .unwrap();
            for i in 0..n {
                assert_eq!(y[i].to_bits(), want[i].to_bits(), "n={n} i={i} {e:?}");
            }
            let off = n.saturating_sub(1);
            let xr = ArrayView::from_slice_strided(&rev, &[n], &[-1], off).unwrap();
            let mut y2 = vec![f64::NAN; n];
            scan(
                ScanOp::Sum,
                0,
                &xr,
                None,
                &mut ArrayViewMut::from_slice(&mut y2, &[n]).unwrap(),
                e,
            )
            .unwrap();
            assert_eq!(y, y2, "reversed n={n} {e:?}");
            let xm = ArrayView::from_slice(&m, &[n, cols]).unwrap();
            let mut ym = vec![f64::NAN; n * cols];
            scan(
                ScanOp::Sum,
                0,
                &xm,
                None,
                &mut ArrayViewMut::from_slice(&mut ym, &[n, cols]).unwrap(),
                e,
            )
            .unwrap();
            for c in 0..cols {
                for i in 0..n {
                    assert_eq!(
                        ym[i * cols + c].to_bits(),
                        wants[c][i].to_bits(),
                        "col {c} n={n} i={i} {e:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_carried_scan_continues_the_whole_one() {
    let mut rng = Rng::new(12);
    let n = 3 * 4096 + 17;
    let v: Vec<f32> = (0..n).map(|_| rng.spread() as f32).collect();
    for e in execs() {
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        let mut whole = vec![0f32; n];
        scan(
            ScanOp::Sum,
            0,
            &x,
            None,
            &mut ArrayViewMut::from_slice(&mut whole, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        // The carry into chunk 2: (-0 + total 0) + total 1, each total a
        // lane-order reduction of its chunk.
        let mut t = [0f32; 2];
        for (k, tk) in t.iter_mut().enumerate() {
            let c = ArrayView::from_slice(&v[k * 4096..(k + 1) * 4096], &[4096]).unwrap();
            let mut y = [0f32];
            reduce(
                ReduceOp::Sum,
                &[0],
                &c,
                &mut ArrayViewMut::from_slice(&mut y, &[]).unwrap(),
                &e,
            )
            .unwrap();
            *tk = y[0];
        }
        let carry = [(-0.0f32 + t[0]) + t[1]];
        let rest = ArrayView::from_slice(&v[8192..], &[n - 8192]).unwrap();
        let k = ArrayView::from_slice(&carry, &[]).unwrap();
        let mut tail = vec![0f32; n - 8192];
        scan(
            ScanOp::Sum,
            0,
            &rest,
            Some(&k),
            &mut ArrayViewMut::from_slice(&mut tail, &[n - 8192]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(&whole[8192..], &tail[..], "{e:?}");
    }
}

#[test]
fn max_min_prod_and_integer_scans() {
    let mut rng = Rng::new(13);
    let n = 70_003;
    let mut v: Vec<f64> = (0..n).map(|_| rng.spread()).collect();
    v[5000] = -0.0;
    v[60_000] = f64::NAN;
    let mut mx = f64::NEG_INFINITY;
    let wmax: Vec<f64> = v
        .iter()
        .map(|&t| {
            mx = ieee_max(mx, t);
            mx
        })
        .collect();
    let iv: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
    let mut acc = 0i64;
    let wint: Vec<i64> = iv
        .iter()
        .map(|&t| {
            acc = acc.wrapping_add(t as i64);
            acc
        })
        .collect();
    for e in execs() {
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        let mut y = vec![0f64; n];
        scan(
            ScanOp::Max,
            0,
            &x,
            None,
            &mut ArrayViewMut::from_slice(&mut y, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        for i in 0..n {
            assert!(
                y[i].to_bits() == wmax[i].to_bits() || (y[i].is_nan() && wmax[i].is_nan()),
                "max i={i}"
            );
        }
        let xi = ArrayView::from_slice(&iv, &[n]).unwrap();
        let mut yi = vec![0i64; n];
        scan(
            ScanOp::Sum,
            0,
            &xi,
            None,
            &mut ArrayViewMut::from_slice(&mut yi, &[n]).unwrap(),
            &e,
        )
        .unwrap();
        assert_eq!(yi, wint);
    }
    // A product scan of a few terms is the running product.
    let p = [2.0f32, -0.5, 3.0, 0.25];
    let x = ArrayView::from_slice(&p, &[4]).unwrap();
    let mut y = [0f32; 4];
    scan(
        ScanOp::Prod,
        0,
        &x,
        None,
        &mut ArrayViewMut::from_slice(&mut y, &[4]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert_eq!(y, [2.0, -1.0, -3.0, -0.75]);
    // -0 passes through a Sum scan (the identity is -0).
    let z = [-0.0f64];
    let mut yz = [1.0f64];
    scan(
        ScanOp::Sum,
        0,
        &ArrayView::from_slice(&z, &[1]).unwrap(),
        None,
        &mut ArrayViewMut::from_slice(&mut yz, &[1]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert!(yz[0] == 0.0 && yz[0].is_sign_negative());
}

#[test]
fn scan_refusals_write_nothing() {
    let v = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let x = ArrayView::from_slice(&v, &[2, 3]).unwrap();
    let e = Exec::default();
    let mut y = [7f32; 6];
    let carry = [0f32; 3];
    let k = ArrayView::from_slice(&carry, &[3]).unwrap();
    let bad_k = ArrayView::from_slice(&carry[..2], &[2]).unwrap();
    let carry64 = [0f64; 3];
    let k64 = ArrayView::from_slice(&carry64, &[3]).unwrap();
    let attempts: Vec<tessera::Result<()>> = vec![
        scan(
            ScanOp::Sum,
            2,
            &x,
            None,
            &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
            &e,
        ),
        scan(
            ScanOp::Sum,
            0,
            &x,
            None,
            &mut ArrayViewMut::from_slice(&mut y, &[6]).unwrap(),
            &e,
        ),
        scan(
            ScanOp::Logsumexp,
            0,
            &x,
            Some(&k),
            &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
            &e,
        ),
        scan(
            ScanOp::Sum,
            0,
            &x,
            Some(&bad_k),
            &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
            &e,
        ),
        scan(
            ScanOp::Sum,
            0,
            &x,
            Some(&k64),
            &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
            &e,
        ),
    ];
    for (i, r) in attempts.into_iter().enumerate() {
        assert!(r.is_err(), "attempt {i} was accepted");
    }
    assert!(y.iter().all(|&t| t == 7.0), "a refusal wrote");
    // The good carry continues each column.
    scan(
        ScanOp::Sum,
        0,
        &x,
        Some(&k),
        &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
        &e,
    )
    .unwrap();
    assert_eq!(y, [1.0, 2.0, 3.0, 5.0, 7.0, 9.0]);
}

/// The odd/even prefix network, written out for the test: pairs, the network
/// on the pairs, then the even positions.
fn network<S: Copy>(a: &[S], op: &dyn Fn(S, S) -> S) -> Vec<S> {
    if a.len() < 2 {
        return a.to_vec();
    }
    let pairs: Vec<S> = a.chunks_exact(2).map(|p| op(p[0], p[1])).collect();
    let inner = network(&pairs, op);
    let mut out = a.to_vec();
    for (i, &v) in inner.iter().enumerate() {
        out[2 * i + 1] = v;
    }
    let mut i = 2;
    while i < a.len() {
        out[i] = op(out[i - 1], a[i]);
        i += 2;
    }
    out
}

/// The `exp` kind's function (the contract's e; pinned to mpmath by
/// tests/math.rs), 0 below the cut.
fn ex(z: f32) -> f32 {
    if z < -87.0 {
        0.0
    } else {
        tessera::generated::runtime::math::exp::exp_f32(z)
    }
}

#[test]
fn logsumexp_and_moments_scans_follow_the_network_and_their_bounds() {
    let mut rng = Rng::new(16);
    for n in [1usize, 2, 3, 7, 64, 1000, 70_001] {
        let v: Vec<f32> = (0..n)
            .map(|_| 100.0 + (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
            .collect();
        // The model: states and combinations as stated, in f32.
        let cen = |m: f32| if m.is_finite() { m } else { 0.0 };
        let st: Vec<(f32, f32)> = v.iter().map(|&t| (t, ex(t - cen(t)))).collect();
        let lse: Vec<f32> = network(&st, &|a, b| {
            let m = if a.0 > b.0 { a.0 } else { b.0 };
            (m, a.1 * ex(a.0 - cen(m)) + b.1 * ex(b.0 - cen(m)))
        })
        .iter()
        .map(|&(m, s)| m + tessera::generated::runtime::math::log::log_f32(s))
        .collect();
        let c = v[0];
        let ms: Vec<(f32, f32, f32)> = v.iter().map(|&t| (t - c, 0.0, 1.0)).collect();
        let mom = network(&ms, &|a, b| {
            let k = a.2 + b.2;
            let d = b.0 - a.0;
            let w = b.2 / k;
            (a.0 + d * w, (a.1 + b.1) + (d * d) * (a.2 * w), k)
        });
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        for e in execs() {
            let (mut l, mut m, mut s) = (vec![0f32; n], vec![0f32; n], vec![0f32; n]);
            scan(
                ScanOp::Logsumexp,
                0,
                &x,
                None,
                &mut ArrayViewMut::from_slice(&mut l, &[n]).unwrap(),
                &e,
            )
            .unwrap();
            scan(
                ScanOp::Mean,
                0,
                &x,
                None,
                &mut ArrayViewMut::from_slice(&mut m, &[n]).unwrap(),
                &e,
            )
            .unwrap();
            scan(
                ScanOp::Variance,
                0,
                &x,
                None,
                &mut ArrayViewMut::from_slice(&mut s, &[n]).unwrap(),
                &e,
            )
            .unwrap();
            for i in 0..n {
                assert_eq!(l[i].to_bits(), lse[i].to_bits(), "lse n={n} i={i} {e:?}");
                assert_eq!(m[i].to_bits(), (c + mom[i].0).to_bits(), "mean n={n} i={i}");
                assert_eq!(
                    s[i].to_bits(),
                    (mom[i].1 / (i + 1) as f32).to_bits(),
                    "var n={n} i={i}"
                );
            }
            if e.par != Par::Seq {
                continue;
            }
            // Bounds (ARCHITECTURE.md §5.4: the Logsumexp and Moments scans), against f64.
            let u = 2f64.powi(-24);
            let d = 2.0 * (usize::BITS - (n.max(2) - 1).leading_zeros()) as f64;
            let (mut mx, mut acc, mut lo, mut hi) =
                (f64::NEG_INFINITY, 0.0f64, f64::INFINITY, f64::NEG_INFINITY);
            let mut sum = 0.0f64;
            for i in 0..n {
                let t = v[i] as f64;
                if t > mx {
                    acc *= (mx - t).exp();
                    mx = t;
                }
                acc += (t - mx).exp();
                let r = mx + acc.ln();
                let k = (i + 1) as f64;
                assert!(
                    (l[i] as f64 - r).abs() <= (7.0 * d + 6.0 * k.ln()) * u + u * r.abs(),
                    "lse bound i={i}"
                );
                sum += t;
                lo = lo.min(t);
                hi = hi.max(t);
                let mu = sum / k;
                let range = hi - lo;
                assert!(
                    (m[i] as f64 - mu).abs() <= (4.0 * d + 1.0) * u * range + u * mu.abs(),
                    "mean bound i={i}"
                );
                if i % 97 == 0 || i + 1 == n {
                    let var = v[..=i]
                        .iter()
                        .map(|&q| (q as f64 - mu).powi(2))
                        .sum::<f64>()
                        / k;
                    let b = (7.0 * d + 1.0) * u * var
                        + (4.0 * d * d - 2.0 * d) * u * range * var.sqrt();
                    assert!(
                        (s[i] as f64 - var).abs() <= b + 1e-30,
                        "variance bound i={i}: {} vs {var}",
                        s[i]
                    );
                }
            }
        }
    }
}

/// A NaN met along a scan makes every later result NaN; whatever sign the
/// hardware gave it, the scan rounds the positive NaN into the destination
/// (ARCHITECTURE.md §5.1), so a NaN-free format (e2m3fn rounds a NaN to the
/// zero of the opposite sign, 0x20) holds the same byte on every tier.
#[test]
fn nan_results_into_a_nan_free_format_are_the_same_on_every_tier() {
    let mut rng = tessera_testkit::rng::Rng::new(0x5ca7);
    for case in 0..200 {
        let n = 1 + rng.below_usize(150);
        let x: Vec<f32> = (0..n)
            .map(|_| match rng.below_usize(12) {
                0 => f32::from_bits(0x7fc0_0000 | (rng.next_u64() as u32 & 0x3f_ffff)),
                1 => f32::from_bits(0xffc0_0000 | (rng.next_u64() as u32 & 0x3f_ffff)),
                _ => (rng.unit() as f32 - 0.5) * 2.0,
            })
            .collect();
        let first_nan = x.iter().position(|v| v.is_nan()).unwrap_or(n);
        let xv = tessera::ArrayView::from_slice(&x, &[n]).unwrap();
        for t in common::tiers() {
            for op in [ScanOp::Sum, ScanOp::Prod] {
                let mut d = vec![0xffu8; n];
                tessera::scan(
                    op,
                    0,
                    &xv,
                    None,
                    &mut tessera::ArrayViewMut::contiguous(tessera::DType::E2m3fn, &[n], &mut d)
                        .unwrap(),
                    &tessera::Exec::on(t),
                )
                .unwrap();
                for (i, &b) in d.iter().enumerate().skip(first_nan) {
                    assert_eq!(b, 0x20, "case {case} {op:?} on {t:?}, element {i}: {x:?}");
                }
                // Into f32 (the carrier, written in place without a buffer):
                // the positive quiet NaN's bits exactly.
                let mut f = vec![0f32; n];
                tessera::scan(
                    op,
                    0,
                    &xv,
                    None,
                    &mut tessera::ArrayViewMut::from_slice(&mut f, &[n]).unwrap(),
                    &tessera::Exec::on(t),
                )
                .unwrap();
                for (i, v) in f.iter().enumerate().skip(first_nan) {
                    assert_eq!(
                        v.to_bits(),
                        0x7fc0_0000,
                        "case {case} {op:?} on {t:?}, element {i}"
                    );
                }
            }
        }
    }
}

/// A term as the Arg model ranks it: floats as f64 (exact for f32 and f64),
/// integers as i128.
#[derive(Clone, Copy, Debug)]
enum Term {
    F(f64),
    I(i128),
}

/// Whether `cand` is strictly more extreme than `cur`: a NaN above all (the
/// first one stays), -0 below +0, otherwise the values' order.
fn more_extreme(cand: Term, cur: Term, max: bool) -> bool {
    match (cand, cur) {
        (Term::F(a), Term::F(b)) => {
            if b.is_nan() {
                false
            } else if a.is_nan() {
                true
            } else {
                let key = |v: f64| (v, v == 0.0 && v.is_sign_positive());
                let (ka, kb) = (key(a), key(b));
                let greater = ka.0 > kb.0 || (ka.0 == kb.0 && ka.1 && !kb.1);
                let less = ka.0 < kb.0 || (ka.0 == kb.0 && !ka.1 && kb.1);
                if max {
                    greater
                } else {
                    less
                }
            }
        }
        (Term::I(a), Term::I(b)) => {
            if max {
                a > b
            } else {
                a < b
            }
        }
        _ => unreachable!(),
    }
}

/// The positions an ArgMax/ArgMin scan of one slice writes, by a plain loop.
fn model_arg_scan(x: &[Term], max: bool) -> Vec<i64> {
    let mut best = 0usize;
    (0..x.len())
        .map(|i| {
            if i > 0 && more_extreme(x[i], x[best], max) {
                best = i;
            }
            best as i64
        })
        .collect()
}

/// Random terms of `dtype` as bytes, and the same terms as the model reads
/// them: NaNs of both signs, ±0, ±∞, subnormals and many repeats.
fn ranked_terms(rng: &mut Rng, dtype: tessera::DType, n: usize) -> (Vec<u8>, Vec<Term>) {
    use tessera::DType as D;
    let mut bytes = Vec::new();
    let mut terms = Vec::new();
    let few = 1 + rng.below_usize(6);
    for _ in 0..n {
        let pick = rng.below_usize(16);
        let f = match pick {
            0 => f64::NAN,
            1 => -f64::NAN,
            2 => 0.0,
            3 => -0.0,
            4 => f64::INFINITY,
            5 => f64::NEG_INFINITY,
            6 => 1e-310,
            7..=10 => (rng.below_usize(few) as f64) - 2.0,
            _ => (rng.unit() - 0.5) * 1e3,
        };
        let i = if pick < 7 {
            rng.next_u64() as i64 as i128
        } else {
            f.round().clamp(-1e18, 1e18) as i128
        };
        match dtype {
            D::F32 => {
                let v = f as f32;
                bytes.extend_from_slice(&v.to_le_bytes());
                terms.push(Term::F(v as f64));
            }
            D::F64 => {
                bytes.extend_from_slice(&f.to_le_bytes());
                terms.push(Term::F(f));
            }
            D::I8 => {
                let v = i as i8;
                bytes.push(v as u8);
                terms.push(Term::I(v as i128));
            }
            D::U16 => {
                let v = i as u16;
                bytes.extend_from_slice(&v.to_le_bytes());
                terms.push(Term::I(v as i128));
            }
            D::I64 => {
                let v = i as i64;
                bytes.extend_from_slice(&v.to_le_bytes());
                terms.push(Term::I(v as i128));
            }
            D::U64 => {
                let v = i as u64;
                bytes.extend_from_slice(&v.to_le_bytes());
                terms.push(Term::I(v as i128));
            }
            _ => unreachable!(),
        }
    }
    (bytes, terms)
}

#[test]
fn arg_scans_match_a_plain_loop_on_every_tier_thread_count_and_layout() {
    use tessera::DType as D;
    let mut rng = Rng::new(0xa59);
    let cases: Vec<(usize, usize)> = vec![(1, 1), (3, 7), (2, 1500), (1, 9000), (5, 4096), (0, 4)];
    for (case, &(rows, n)) in cases.iter().enumerate() {
        for dtype in [D::F32, D::F64, D::I8, D::U16, D::I64, D::U64] {
            // x is [rows, n], scanned along axis 1; the same terms transposed
            // ([n, rows] read with swapped strides) scan along axis 0.
            let (bytes, terms) = ranked_terms(&mut rng, dtype, rows * n);
            let item = dtype.info().item_bytes;
            for op in [ScanOp::ArgMax, ScanOp::ArgMin] {
                let max = op == ScanOp::ArgMax;
                let want: Vec<i64> = terms
                    .chunks(n.max(1))
                    .take(rows)
                    .flat_map(|s| model_arg_scan(s, max))
                    .collect();
                for exec in execs() {
                    let xv = ArrayView::contiguous(dtype, &[rows, n], &bytes).unwrap();
                    let mut got = vec![-1i64; rows * n];
                    scan(
                        op,
                        1,
                        &xv,
                        None,
                        &mut ArrayViewMut::from_slice(&mut got, &[rows, n]).unwrap(),
                        &exec,
                    )
                    .unwrap();
                    assert_eq!(got, want, "case {case} {dtype} {op:?} {exec:?}");
                    // Transposed: element (j, r) of a [n, rows] view is x[r][j].
                    let tv =
                        ArrayView::new(dtype, &[n, rows], &[1, n as isize], 0, &bytes).unwrap();
                    let mut gt = vec![-1i64; rows * n];
                    scan(
                        op,
                        0,
                        &tv,
                        None,
                        &mut ArrayViewMut::from_slice(&mut gt, &[n, rows]).unwrap(),
                        &exec,
                    )
                    .unwrap();
                    for r in 0..rows {
                        for j in 0..n {
                            assert_eq!(
                                gt[j * rows + r],
                                want[r * n + j],
                                "case {case} {dtype} {op:?} transposed"
                            );
                        }
                    }
                }
                let _ = item;
            }
        }
    }
}

#[test]
fn max_and_min_scans_continue_from_a_carry_and_arg_scans_refuse_one() {
    let mut rng = Rng::new(0xca11);
    let (rows, n) = (3usize, 5000usize);
    let (bytes, terms) = ranked_terms(&mut rng, tessera::DType::F64, rows * n);
    let carry = [f64::NEG_INFINITY, 250.0, -f64::NAN];
    for op in [ScanOp::Max, ScanOp::Min] {
        let pick = |a: f64, b: f64| -> f64 {
            if a.is_nan() || b.is_nan() {
                return f64::NAN;
            }
            let a_wins = if op == ScanOp::Max {
                a > b || (a == b && b.is_sign_negative())
            } else {
                a < b || (a == b && a.is_sign_negative())
            };
            if a_wins {
                a
            } else {
                b
            }
        };
        let mut want = Vec::new();
        for r in 0..rows {
            let mut c = carry[r];
            for t in &terms[r * n..(r + 1) * n] {
                let Term::F(v) = *t else { unreachable!() };
                c = pick(c, v);
                want.push(c);
            }
        }
        for exec in execs() {
            let xv = ArrayView::contiguous(tessera::DType::F64, &[rows, n], &bytes).unwrap();
            let cv = ArrayView::from_slice(&carry, &[rows]).unwrap();
            let mut got = vec![0f64; rows * n];
            scan(
                op,
                1,
                &xv,
                Some(&cv),
                &mut ArrayViewMut::from_slice(&mut got, &[rows, n]).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{op:?} {exec:?} element {i}: {g} vs {w}"
                );
            }
        }
    }
    // Arg scans take no carry, and write only i64; nothing is written.
    let xv = ArrayView::contiguous(tessera::DType::F64, &[rows, n], &bytes).unwrap();
    let cv = ArrayView::from_slice(&carry, &[rows]).unwrap();
    let mut pos = vec![7i64; rows * n];
    let r = scan(
        ScanOp::ArgMax,
        1,
        &xv,
        Some(&cv),
        &mut ArrayViewMut::from_slice(&mut pos, &[rows, n]).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(tessera::Error::Attribute { .. })), "{r:?}");
    let mut wrong = vec![7i32; rows * n];
    let r = scan(
        ScanOp::ArgMin,
        1,
        &xv,
        None,
        &mut ArrayViewMut::from_slice(&mut wrong, &[rows, n]).unwrap(),
        &Exec::default(),
    );
    assert!(
        matches!(r, Err(tessera::Error::DTypeMismatch { .. })),
        "{r:?}"
    );
    assert!(pos.iter().all(|&p| p == 7) && wrong.iter().all(|&p| p == 7));
}

#[test]
fn in_place_scans_write_the_scan_over_their_input() {
    let mut rng = Rng::new(29);
    // A Sum of f64 against the model, every exec, long enough for groups of
    // chunks and threads.
    let n = 70_001;
    let v: Vec<f64> = (0..n).map(|_| rng.spread()).collect();
    let want = model_sum_scan(&v, -0.0);
    for e in &execs() {
        let mut x = v.clone();
        tessera::scan_in_place(
            ScanOp::Sum,
            0,
            &mut ArrayViewMut::from_slice(&mut x, &[n]).unwrap(),
            None,
            e,
        )
        .unwrap();
        let same = x.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{e:?}");
    }
    // Along either axis of a 2-D f32 array, through a strided view, and into
    // a narrow dtype (one rounding of each result into f16): the bits of
    // the scan into a separate destination, the elements outside the view
    // untouched.
    let (rows, cols) = (3usize, 5000usize);
    let m: Vec<f32> = (0..rows * cols * 2).map(|_| rng.spread() as f32).collect();
    for op in [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min] {
        for axis in [0, 1] {
            let src = ArrayView::from_slice_strided(&m, &[rows, cols], &[2 * cols as isize, 2], 0)
                .unwrap();
            let mut want = vec![0f32; rows * cols];
            let e = Exec::default();
            scan(
                op,
                axis,
                &src,
                None,
                &mut ArrayViewMut::from_slice(&mut want, &[rows, cols]).unwrap(),
                &e,
            )
            .unwrap();
            let mut x = m.clone();
            let mut xv =
                ArrayViewMut::from_slice_strided(&mut x, &[rows, cols], &[2 * cols as isize, 2], 0)
                    .unwrap();
            tessera::scan_in_place(op, axis, &mut xv, None, &e).unwrap();
            for i in 0..rows * cols {
                assert_eq!(
                    x[2 * i].to_bits(),
                    want[i].to_bits(),
                    "{op:?} axis {axis} {i}"
                );
                assert_eq!(
                    x[2 * i + 1].to_bits(),
                    m[2 * i + 1].to_bits(),
                    "outside the view"
                );
            }
        }
    }
    let h: Vec<half::f16> = (0..4000)
        .map(|_| half::f16::from_f64(rng.spread().clamp(-100.0, 100.0)))
        .collect();
    let mut want = vec![half::f16::ZERO; h.len()];
    let e = Exec::default();
    scan(
        ScanOp::Sum,
        0,
        &ArrayView::from_slice(&h, &[h.len()]).unwrap(),
        None,
        &mut ArrayViewMut::from_slice(&mut want, &[h.len()]).unwrap(),
        &e,
    )
    .unwrap();
    let mut x = h.clone();
    tessera::scan_in_place(
        ScanOp::Sum,
        0,
        &mut ArrayViewMut::from_slice(&mut x, &[h.len()]).unwrap(),
        None,
        &e,
    )
    .unwrap();
    assert!(x.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
    // An ArgMax scan of i64 values: the position of the first largest so
    // far, by a plain loop.
    let iv: Vec<i64> = (0..1000).map(|_| rng.below(50) as i64).collect();
    let mut best = 0usize;
    let want: Vec<i64> = (0..iv.len())
        .map(|i| {
            if iv[i] > iv[best] {
                best = i;
            }
            best as i64
        })
        .collect();
    let mut x = iv.clone();
    tessera::scan_in_place(
        ScanOp::ArgMax,
        0,
        &mut ArrayViewMut::from_slice(&mut x, &[iv.len()]).unwrap(),
        None,
        &e,
    )
    .unwrap();
    assert_eq!(x, want);
}

#[test]
fn in_place_scans_refuse_before_writing() {
    let e = Exec::default();
    let v: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
    // An Arg scan of floats (positions need i64), an axis out of range, a
    // carry for a scan that takes none: the array is left as it was.
    for (op, axis) in [(ScanOp::ArgMax, 0), (ScanOp::Sum, 1)] {
        let mut x = v.clone();
        let r = tessera::scan_in_place(
            op,
            axis,
            &mut ArrayViewMut::from_slice(&mut x, &[100]).unwrap(),
            None,
            &e,
        );
        assert!(r.is_err(), "{op:?} axis {axis}");
        assert_eq!(x, v);
    }
    let carry = [0f32];
    let mut x = v.clone();
    let r = tessera::scan_in_place(
        ScanOp::Mean,
        0,
        &mut ArrayViewMut::from_slice(&mut x, &[100]).unwrap(),
        Some(&ArrayView::from_slice(&carry, &[]).unwrap()),
        &e,
    );
    assert!(r.is_err());
    assert_eq!(x, v);
    // A view that reaches one element many times (stride 0).
    let mut x = v.clone();
    let mut b = ArrayViewMut::from_slice_strided(&mut x, &[10], &[0], 0).unwrap();
    let r = tessera::scan_in_place(ScanOp::Sum, 0, &mut b, None, &e);
    assert!(matches!(r, Err(tessera::Error::Layout { .. })), "{r:?}");
    assert_eq!(x, v);
}
