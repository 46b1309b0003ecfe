//! `fold`, `assemble`, padded operands, `convolve` and `correlate` through
//! `tessera run`: results checked against values worked out from the
//! definitions; refusals write nothing.

mod common;

use common::{npy_f32, read_npy, tessera, TempDir};

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn fold_adds_each_windows_elements_back() {
    let dir = TempDir::new("fold");
    // Windows of 3 over y of 4 padded by 1 each side: 4 windows, 3 taps.
    let x: Vec<f32> = (0..12).map(|v| v as f32).collect();
    dir.write("x.npy", &npy_f32(&[4, 3], &x));
    dir.write(
        "call.json",
        br#"{"kernel": "fold", "attrs": {"pad": [[1, 1, 3, 1, 1]]},
             "operands": {"x": {"npy": "x.npy"}},
             "results": {"y": {"npy": "y.npy", "shape": [4]}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Window i, tap t reads padded i + t, i.e. y[i + t - 1]; taps in order:
    // y0 = x[1][0] + x[0][1] = 3 + 1 (t = 0 first), y1 = x[2][0] + x[1][1] + x[0][2] …
    let xv = |i: usize, t: usize| x[i * 3 + t];
    let want = [
        xv(1, 0) + xv(0, 1),
        xv(2, 0) + xv(1, 1) + xv(0, 2),
        xv(3, 0) + xv(2, 1) + xv(1, 2),
        xv(3, 1) + xv(2, 2),
    ];
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![4]);
    assert_eq!(f32s(&y.data), want);
    // Without y's shape: refused, nothing written.
    std::fs::remove_file(dir.path("y.npy")).unwrap();
    dir.write(
        "call.json",
        br#"{"kernel": "fold", "attrs": {"pad": [[1, 1, 3, 1, 1]]},
             "operands": {"x": {"npy": "x.npy"}}, "results": {"y": {"npy": "y.npy"}}}"#,
    );
    tessera(&dir.0, &["run", "call.json"]).assert_refused(2, "shape");
    assert!(!dir.path("y.npy").exists());
}

#[test]
fn assemble_places_pieces_last_one_winning() {
    let dir = TempDir::new("assemble");
    dir.write("a.npy", &npy_f32(&[2, 2], &[1.0, 2.0, 3.0, 4.0]));
    dir.write("b.npy", &npy_f32(&[1, 3], &[7.0, 8.0, 9.0]));
    dir.write(
        "call.json",
        br#"{"kernel": "assemble", "attrs": {"starts": [[0, 0], [1, 1]], "fill": -1},
             "operands": {"piece0": {"npy": "a.npy"}, "piece1": {"npy": "b.npy"}},
             "results": {"y": {"npy": "y.npy", "shape": [3, 4]}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(
        f32s(&y.data),
        [1.0, 2.0, -1.0, -1.0, 3.0, 7.0, 8.0, 9.0, -1.0, -1.0, -1.0, -1.0]
    );
    // A region leaving y: refused, the existing file kept.
    dir.write(
        "call.json",
        br#"{"kernel": "assemble", "attrs": {"starts": [[0, 0], [2, 2]]},
             "operands": {"piece0": {"npy": "a.npy"}, "piece1": {"npy": "b.npy"}},
             "results": {"y": {"npy": "y.npy", "shape": [3, 4]}}}"#,
    );
    let before = std::fs::read(dir.path("y.npy")).unwrap();
    tessera(&dir.0, &["run", "call.json"]).assert_refused(1, "piece 1");
    assert_eq!(std::fs::read(dir.path("y.npy")).unwrap(), before);
}

#[test]
fn a_padded_operand_feeds_reduce_as_max_pooling() {
    let dir = TempDir::new("padded-reduce");
    let x = [3.0f32, -1.0, 4.0, 1.0, -5.0];
    dir.write("x.npy", &npy_f32(&[5], &x));
    // Windows of 3, stride 2, padded by 1 with -inf: windows over
    // [-inf, 3, -1, 4, 1, -5, -inf] at 0, 2, 4.
    dir.write(
        "call.json",
        br#"{"kernel": "reduce", "attrs": {"op": "max", "axes": [1]},
             "operands": {"x": {"npy": "x.npy", "pad": [[1, 1, 3, 2, 1]], "fill": -1e300}},
             "results": {"y": {"npy": "y.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(y.shape, vec![3]);
    assert_eq!(f32s(&y.data), [3.0, 4.0, 1.0]);
    // A pad of another rank, and a fill without a pad: refused.
    for operand in [
        r#"{"npy": "x.npy", "pad": [[1, 1], [0, 0]]}"#,
        r#"{"npy": "x.npy", "fill": 2}"#,
        r#"{"npy": "x.npy", "pad": [[1, 1, 9, 1, 1]]}"#,
        r#"{"npy": "x.npy", "pad": [[1]]}"#,
    ] {
        std::fs::remove_file(dir.path("y.npy")).ok();
        let call = format!(
            r#"{{"kernel": "reduce", "attrs": {{"op": "max", "axes": [0]}},
                 "operands": {{"x": {operand}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        );
        dir.write("call.json", call.as_bytes());
        let run = tessera(&dir.0, &["run", "call.json"]);
        assert!(
            matches!(run.code, Some(1) | Some(2)),
            "{operand}: {}",
            run.stderr
        );
        assert!(!dir.path("y.npy").exists(), "{operand}");
    }
}

#[test]
fn tile_and_sparse_dot_calls() {
    let dir = TempDir::new("tile-sparse");
    dir.write("p.npy", &npy_f32(&[2], &[1.5, -2.0]));
    dir.write(
        "call.json",
        br#"{"kernel": "tile", "operands": {"pattern": {"npy": "p.npy"}},
             "results": {"y": {"npy": "y.npy", "shape": [5]}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        f32s(&read_npy(&dir.path("y.npy")).data),
        [1.5, -2.0, 1.5, -2.0, 1.5]
    );
    // 2·x[3] + 4·x[0] + 8·x[9] (column 9 lies outside x: nothing).
    dir.write("v.npy", &npy_f32(&[3], &[2.0, 4.0, 8.0]));
    dir.write("x.npy", &npy_f32(&[4], &[1.0, 10.0, 100.0, 1000.0]));
    let mut idx = Vec::new();
    for c in [3i64, 0, 9] {
        idx.extend_from_slice(&c.to_le_bytes());
    }
    dir.write("i.npy", &common::npy_bytes("<i8", false, &[3], &idx, 1));
    dir.write(
        "call.json",
        br#"{"kernel": "sparse_dot", "operands": {"v": {"npy": "v.npy"}, "idx": {"npy": "i.npy"}, "x": {"npy": "x.npy"}},
             "results": {"y": {"npy": "s.npy"}}}"#,
    );
    let run = tessera(&dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("s.npy"));
    assert!(y.shape.is_empty());
    assert_eq!(f32s(&y.data), [2004.0]);
}

#[test]
fn convolve_and_correlate_calls() {
    let dir = TempDir::new("signal");
    // numpy.convolve([1, 2, 3], [0, 1, 0.5]) and numpy.correlate, as f32
    // results of an f64 accumulator.
    dir.write("x.npy", &npy_f32(&[3], &[1.0, 2.0, 3.0]));
    dir.write("k.npy", &npy_f32(&[3], &[0.0, 1.0, 0.5]));
    for (kernel, mode, want) in [
        ("convolve", "full", &[0.0f32, 1.0, 2.5, 4.0, 1.5][..]),
        ("convolve", "same", &[1.0, 2.5, 4.0][..]),
        ("correlate", "full", &[0.5, 2.0, 3.5, 3.0, 0.0][..]),
        ("correlate", "valid", &[3.5][..]),
    ] {
        let call = format!(
            r#"{{"kernel": "{kernel}", "attrs": {{"mode": "{mode}", "acc": "f64"}},
                 "operands": {{"x": {{"npy": "x.npy"}}, "k": {{"npy": "k.npy"}}}},
                 "results": {{"y": {{"npy": "y.npy", "dtype": "f32"}}}}}}"#
        );
        dir.write("call.json", call.as_bytes());
        let run = tessera(&dir.0, &["run", "call.json"]);
        assert_eq!(run.code, Some(0), "{kernel} {mode}: {}", run.stderr);
        let y = read_npy(&dir.path("y.npy"));
        assert_eq!(y.shape, vec![want.len()], "{kernel} {mode}");
        assert_eq!(f32s(&y.data), want, "{kernel} {mode}");
    }
    // A kernel longer than the signal in valid mode, and an unknown mode:
    // refused, nothing written.
    std::fs::remove_file(dir.path("y.npy")).unwrap();
    dir.write("k.npy", &npy_f32(&[4], &[1.0; 4]));
    for mode in ["valid", "middle"] {
        let call = format!(
            r#"{{"kernel": "convolve", "attrs": {{"mode": "{mode}"}},
                 "operands": {{"x": {{"npy": "x.npy"}}, "k": {{"npy": "k.npy"}}}},
                 "results": {{"y": {{"npy": "y.npy"}}}}}}"#
        );
        dir.write("call.json", call.as_bytes());
        let run = tessera(&dir.0, &["run", "call.json"]);
        assert_ne!(run.code, Some(0), "{mode} accepted");
        assert!(!dir.path("y.npy").exists(), "{mode}: a result written");
    }
}
