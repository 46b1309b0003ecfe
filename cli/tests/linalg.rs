//! `tessera run` of the linear-algebra routines: each kernel's results
//! checked here (products formed in f64 against the inputs), the batch and
//! Fortran-order operands, and malformed calls refused without writing any
//! result.

#![allow(clippy::needless_range_loop)]

mod common;

use common::*;

fn run_call(dir: &TempDir, json: &str) -> Run {
    dir.write("call.json", json.as_bytes());
    tessera(&dir.0, &["run", "call.json"])
}

fn f64s(d: &[u8]) -> Vec<f64> {
    d.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn i64s(d: &[u8]) -> Vec<i64> {
    d.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn npy_f64(shape: &[usize], v: &[f64], fortran: bool) -> Vec<u8> {
    // Fortran order stores the transpose's C order.
    let data: Vec<u8> = if fortran {
        let (m, n) = (shape[0], shape[1]);
        (0..n)
            .flat_map(|j| (0..m).map(move |i| (i, j)))
            .flat_map(|(i, j)| v[i * n + j].to_le_bytes())
            .collect()
    } else {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    };
    npy_bytes("<f8", fortran, shape, &data, 1)
}

/// `a·b` of row-major matrices, in f64.
fn mul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
        }
    }
    c
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

const SPD: [f64; 9] = [4.0, 2.0, 0.4, 2.0, 5.0, 1.0, 0.4, 1.0, 3.0];

#[test]
fn cholesky_lu_qr_and_solve() {
    let dir = TempDir::new("linalg-factor");
    dir.write("a.npy", &npy_f64(&[3, 3], &SPD, true));
    let run = run_call(
        &dir,
        r#"{"kernel": "cholesky", "attrs": {"triangle": "upper"},
            "operands": {"a": {"npy": "a.npy"}}, "results": {"u": {"npy": "u.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let u = f64s(&read_npy(&dir.path("u.npy")).data);
    let ut: Vec<f64> = (0..9).map(|p| u[(p % 3) * 3 + p / 3]).collect();
    assert!(close(&mul(&ut, &u, 3, 3, 3), &SPD, 1e-14), "{u:?}");
    assert_eq!(u[3], 0.0);

    let run = run_call(
        &dir,
        r#"{"kernel": "lu", "operands": {"a": {"npy": "a.npy"}},
            "results": {"lu": {"npy": "lu.npy"}, "pivots": {"npy": "p.npy"}, "permutation": {"npy": "perm.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let f = f64s(&read_npy(&dir.path("lu.npy")).data);
    let perm = i64s(&read_npy(&dir.path("perm.npy")).data);
    // Column 0: 4 is the largest; after it, 5 − 2·½ = 4 beats 1 − 0.4·½.
    assert_eq!(i64s(&read_npy(&dir.path("p.npy")).data), [0, 1, 2]);
    let l: Vec<f64> = (0..9)
        .map(|p| {
            if p / 3 > p % 3 {
                f[p]
            } else if p / 3 == p % 3 {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let uu: Vec<f64> = (0..9)
        .map(|p| if p / 3 <= p % 3 { f[p] } else { 0.0 })
        .collect();
    let pa: Vec<f64> = (0..9)
        .map(|p| SPD[perm[p / 3] as usize * 3 + p % 3])
        .collect();
    assert!(close(&mul(&l, &uu, 3, 3, 3), &pa, 1e-14));

    let run = run_call(
        &dir,
        r#"{"kernel": "qr", "attrs": {"mode": "complete"}, "operands": {"a": {"npy": "a.npy"}},
            "results": {"q": {"npy": "q.npy"}, "r": {"npy": "r.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let q = f64s(&read_npy(&dir.path("q.npy")).data);
    let r = f64s(&read_npy(&dir.path("r.npy")).data);
    assert!(close(&mul(&q, &r, 3, 3, 3), &SPD, 1e-14));

    dir.write("b.npy", &npy_f64(&[3, 1], &[1.0, 2.0, 3.0], false));
    let run = run_call(
        &dir,
        r#"{"kernel": "solve_triangular", "attrs": {"triangle": "lower", "adjoint": true, "unit_diagonal": false},
            "operands": {"a": {"npy": "a.npy"}, "b": {"npy": "b.npy"}}, "results": {"x": {"npy": "x.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let x = f64s(&read_npy(&dir.path("x.npy")).data);
    // aᴴ x = b with a's lower triangle: an upper system.
    let lt: Vec<f64> = (0..9)
        .map(|p| {
            if p / 3 <= p % 3 {
                SPD[(p % 3) * 3 + p / 3]
            } else {
                0.0
            }
        })
        .collect();
    assert!(
        close(&mul(&lt, &x, 3, 3, 1), &[1.0, 2.0, 3.0], 1e-14),
        "{x:?}"
    );
}

#[test]
fn eigh_svd_and_eig_in_a_batch() {
    let dir = TempDir::new("linalg-spectral");
    let mut two = SPD.to_vec();
    two.extend(SPD.iter().map(|x| 2.0 * x));
    let data: Vec<u8> = two.iter().flat_map(|x| x.to_le_bytes()).collect();
    dir.write("a.npy", &npy_bytes("<f8", false, &[2, 3, 3], &data, 1));
    let run = run_call(
        &dir,
        r#"{"kernel": "eigh", "operands": {"a": {"npy": "a.npy"}},
            "results": {"w": {"npy": "w.npy"}, "v": {"npy": "v.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let w = f64s(&read_npy(&dir.path("w.npy")).data);
    assert!(close(
        &w[3..],
        &w[..3].iter().map(|x| 2.0 * x).collect::<Vec<_>>(),
        1e-13
    ));
    let tr: f64 = w[..3].iter().sum();
    assert!((tr - 12.0).abs() < 1e-13, "{w:?}");

    let run = run_call(
        &dir,
        r#"{"kernel": "svd", "attrs": {"vectors": false}, "operands": {"a": {"npy": "a.npy"}},
            "results": {"s": {"npy": "s.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let s = f64s(&read_npy(&dir.path("s.npy")).data);
    let mut ws: Vec<f64> = w[..3].to_vec();
    ws.reverse();
    assert!(close(&s[..3], &ws, 1e-13), "{s:?} {ws:?}");

    let run = run_call(
        &dir,
        r#"{"kernel": "eig", "operands": {"a": {"npy": "a.npy"}},
            "results": {"w": {"npy": "ew.npy"}, "v": {"npy": "ev.npy"}}}"#,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let back = read_npy(&dir.path("ew.npy"));
    assert_eq!(back.shape, vec![2, 3]);
    let ew = f64s(&back.data);
    let mut re: Vec<f64> = (0..3).map(|i| ew[2 * i]).collect();
    re.sort_by(f64::total_cmp);
    assert!(close(&re, &w[..3], 1e-13), "{ew:?}");
    assert!((0..3).all(|i| ew[2 * i + 1] == 0.0));
}

#[test]
fn malformed_calls_write_nothing() {
    let dir = TempDir::new("linalg-refusals");
    dir.write("a.npy", &npy_f64(&[2, 3], &[1.0; 6], false));
    let run = run_call(
        &dir,
        r#"{"kernel": "cholesky", "operands": {"a": {"npy": "a.npy"}}, "results": {"l": {"npy": "l.npy"}}}"#,
    );
    assert_ne!(run.code, Some(0));
    assert!(!dir.path("l.npy").exists());
    // The wrong result name for the triangle.
    dir.write("sq.npy", &npy_f64(&[3, 3], &SPD, false));
    let run = run_call(
        &dir,
        r#"{"kernel": "cholesky", "attrs": {"triangle": "upper"}, "operands": {"a": {"npy": "sq.npy"}}, "results": {"l": {"npy": "l.npy"}}}"#,
    );
    assert_ne!(run.code, Some(0));
    assert!(run.stderr.contains("u"), "{}", run.stderr);
    assert!(!dir.path("l.npy").exists());
    // A bad attribute value.
    let run = run_call(
        &dir,
        r#"{"kernel": "qr", "attrs": {"mode": "economic"}, "operands": {"a": {"npy": "sq.npy"}},
            "results": {"q": {"npy": "q.npy"}, "r": {"npy": "r.npy"}}}"#,
    );
    assert_ne!(run.code, Some(0));
    assert!(!dir.path("q.npy").exists() && !dir.path("r.npy").exists());
    // b of another row count: x is not written.
    dir.write("b.npy", &npy_f64(&[2, 1], &[1.0, 2.0], false));
    let run = run_call(
        &dir,
        r#"{"kernel": "solve_triangular", "operands": {"a": {"npy": "sq.npy"}, "b": {"npy": "b.npy"}},
            "results": {"x": {"npy": "x.npy"}}}"#,
    );
    assert_ne!(run.code, Some(0));
    assert!(!dir.path("x.npy").exists());
    // An integer matrix.
    let data: Vec<u8> = (0..9i64).flat_map(|x| x.to_le_bytes()).collect();
    dir.write("i.npy", &npy_bytes("<i8", false, &[3, 3], &data, 1));
    let run = run_call(
        &dir,
        r#"{"kernel": "eigh", "operands": {"a": {"npy": "i.npy"}}, "results": {"w": {"npy": "w.npy"}, "v": {"npy": "v.npy"}}}"#,
    );
    assert_ne!(run.code, Some(0));
    assert!(!dir.path("w.npy").exists() && !dir.path("v.npy").exists());
}
