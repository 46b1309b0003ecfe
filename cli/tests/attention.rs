//! `tessera run` of `attention`: a causal call with grouped heads and
//! lengths checked against softmax(q·kᵀ)·v formed here in f64, the same
//! bits as the library call, and malformed calls refused without writing
//! any result.

mod common;

use common::*;
use tessera::attention::{attention, programs, Kv};
use tessera::{ArrayView, ArrayViewMut, DType, Exec};

#[test]
fn causal_grouped_heads_with_lengths() {
    let (b, hq, hk, tq, tk, d) = (2usize, 4usize, 2usize, 5usize, 70usize, 6usize);
    let val = |i: usize, m: usize| ((i * m) % 97) as f32 / 48.0 - 1.0;
    let q: Vec<f32> = (0..b * hq * tq * d).map(|i| val(i, 31)).collect();
    let k: Vec<f32> = (0..b * hk * tk * d).map(|i| val(i, 17)).collect();
    let v: Vec<f32> = (0..b * hk * tk * d).map(|i| val(i, 13)).collect();
    let lengths = [70i64, 40];
    let dir = TempDir::new("attention-causal");
    dir.write("q.npy", &npy_f32(&[b, hq, tq, d], &q));
    dir.write("k.npy", &npy_f32(&[b, hk, tk, d], &k));
    dir.write("v.npy", &npy_f32(&[b, hk, tk, d], &v));
    dir.write("len.npy", &npy_i64(&[b], &lengths));
    // Row i sees keys j ≤ i + 30.
    let run = run_call(
        &dir,
        r#"{"kernel": "attention",
            "attrs": {"scale": 0.5, "program": "y0 = coord(3) <= coord(2) + 30; y1 = x0"},
            "operands": {"q": {"npy": "q.npy"}, "k": {"npy": "k.npy"}, "v": {"npy": "v.npy"},
                         "lengths": {"npy": "len.npy"}},
            "results": {"o": {"npy": "o.npy"}, "lse": {"npy": "lse.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let o = f32s(&read_npy(&dir.path("o.npy")).data);
    let lse = f32s(&read_npy(&dir.path("lse.npy")).data);
    // The f64 reference.
    for bi in 0..b {
        for h in 0..hq {
            let kh = h / (hq / hk);
            for i in 0..tq {
                let qr = &q[((bi * hq + h) * tq + i) * d..][..d];
                let t = (lengths[bi] as usize).min(i + 31);
                let s: Vec<f64> = (0..t)
                    .map(|j| {
                        let kr = &k[((bi * hk + kh) * tk + j) * d..][..d];
                        0.5 * qr
                            .iter()
                            .zip(kr)
                            .map(|(x, y)| *x as f64 * *y as f64)
                            .sum::<f64>()
                    })
                    .collect();
                let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = s.iter().map(|x| (x - m).exp()).sum();
                let row = (bi * hq + h) * tq + i;
                assert!(
                    (lse[row] as f64 - (m + z.ln())).abs() < 1e-5,
                    "lse row {row}"
                );
                for e in 0..d {
                    let want: f64 = (0..t)
                        .map(|j| (s[j] - m).exp() / z * v[((bi * hk + kh) * tk + j) * d + e] as f64)
                        .sum();
                    assert!(
                        (o[row * d + e] as f64 - want).abs() < 1e-5,
                        "o row {row} col {e}"
                    );
                }
            }
        }
    }
    // The same bits as the library call.
    let mut lo = vec![0f32; o.len()];
    let mut ll = vec![0f32; lse.len()];
    let p = programs::causal(DType::F32, 4, 30).unwrap();
    attention(
        &p,
        0.5,
        &ArrayView::from_slice(&q, &[b, hq, tq, d]).unwrap(),
        &Kv {
            k: ArrayView::from_slice(&k, &[b, hk, tk, d]).unwrap(),
            v: ArrayView::from_slice(&v, &[b, hk, tk, d]).unwrap(),
        },
        &[],
        Some(&ArrayView::from_slice(&lengths, &[b]).unwrap()),
        &mut ArrayViewMut::from_slice(&mut lo, &[b, hq, tq, d]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut ll, &[b, hq, tq]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    assert!(lo.iter().zip(&o).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(ll.iter().zip(&lse).all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn malformed_calls_write_nothing() {
    let dir = TempDir::new("attention-refused");
    dir.write("q.npy", &npy_f32(&[3, 2, 4], &[0.5; 24]));
    dir.write("k.npy", &npy_f32(&[2, 5, 4], &[0.5; 40]));
    dir.write("v.npy", &npy_f32(&[2, 5, 4], &[0.5; 40]));
    dir.write("len.npy", &npy_i64(&[], &[9]));
    let cases = [
        // Three query heads over two key heads.
        (r#"{}"#, r#""lengths": {"npy": "len.npy"},"#, "divide"),
        // A program whose visibility reads the score.
        (r#"{"program": "y0 = x0 > 0f32; y1 = x0"}"#, "", "score"),
        // A length beyond the keys.
        (r#"{}"#, r#""lengths": {"npy": "len.npy"},"#, "outside"),
        // A program reading a load the call does not give.
        (
            r#"{"program": "y0 = x2 > 0; y1 = x0"}"#,
            r#""x1": {"npy": "len.npy"},"#,
            "x2",
        ),
        // Loads with a gap.
        (r#"{}"#, r#""x2": {"npy": "len.npy"},"#, "x1"),
    ];
    for (n, (attrs, extra, _needle)) in cases.iter().enumerate() {
        if n == 2 {
            dir.write("q.npy", &npy_f32(&[2, 2, 4], &[0.5; 16]));
        }
        let run = run_call(
            &dir,
            &format!(
                r#"{{"kernel": "attention", "attrs": {attrs},
                    "operands": {{{extra} "q": {{"npy": "q.npy"}}, "k": {{"npy": "k.npy"}}, "v": {{"npy": "v.npy"}}}},
                    "results": {{"o": {{"npy": "o.npy"}}, "lse": {{"npy": "lse.npy"}}}}}}"#
            ),
        );
        assert_ne!(run.code, Some(0), "case {n} ran: {}", run.stdout);
        assert!(
            !dir.path("o.npy").exists() && !dir.path("lse.npy").exists(),
            "case {n} wrote a result"
        );
    }
}
