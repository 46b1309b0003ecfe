//! Scans against an independent model of DESIGN §5.4 (chunks of 4096, each
//! chunk's total in lane order, carries, results left to right within a
//! chunk), bit for bit on every tier at 1, 2 and 7 threads and through several
//! layouts; a carried scan continues a whole one; refusals write nothing.

use tessera::{available_tiers, reduce, scan, ArrayView, ArrayViewMut, Exec, ReduceOp, ScanOp};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn spread(&mut self) -> f64 {
        let r = self.next();
        let m = 1.0 + (r >> 11) as f64 / (1u64 << 53) as f64;
        let e = ((r >> 3) % 25) as i32 - 12;
        if r & 1 == 1 {
            -m * 2f64.powi(e)
        } else {
            m * 2f64.powi(e)
        }
    }
}

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in available_tiers() {
        for th in [1, 2, 7] {
            v.push(Exec::on(t).threads(th));
        }
    }
    v
}

/// The lane-order sum of a run of terms (DESIGN §5.3, plain loops).
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
    let mut rng = Rng(11);
    let mut sizes: Vec<usize> = (0..=40).collect();
    sizes.extend([1023, 1025, 4095, 4096, 4097, 3 * 4096 + 17, 70_001]);
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
                &x,
                0,
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
                &xr,
                0,
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
                &xm,
                0,
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
    let mut rng = Rng(12);
    let n = 3 * 4096 + 17;
    let v: Vec<f32> = (0..n).map(|_| rng.spread() as f32).collect();
    for e in execs() {
        let x = ArrayView::from_slice(&v, &[n]).unwrap();
        let mut whole = vec![0f32; n];
        scan(
            ScanOp::Sum,
            &x,
            0,
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
                &c,
                &[0],
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
            &rest,
            0,
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
    let mut rng = Rng(13);
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
    let iv: Vec<i32> = (0..n).map(|_| rng.next() as i32).collect();
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
            &x,
            0,
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
            &xi,
            0,
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
        &x,
        0,
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
        &ArrayView::from_slice(&z, &[1]).unwrap(),
        0,
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
            &x,
            2,
            None,
            &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
            &e,
        ),
        scan(
            ScanOp::Sum,
            &x,
            0,
            None,
            &mut ArrayViewMut::from_slice(&mut y, &[6]).unwrap(),
            &e,
        ),
        scan(
            ScanOp::Max,
            &x,
            0,
            Some(&k),
            &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
            &e,
        ),
        scan(
            ScanOp::Sum,
            &x,
            0,
            Some(&bad_k),
            &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
            &e,
        ),
        scan(
            ScanOp::Sum,
            &x,
            0,
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
        &x,
        0,
        Some(&k),
        &mut ArrayViewMut::from_slice(&mut y, &[2, 3]).unwrap(),
        &e,
    )
    .unwrap();
    assert_eq!(y, [1.0, 2.0, 3.0, 5.0, 7.0, 9.0]);
}
