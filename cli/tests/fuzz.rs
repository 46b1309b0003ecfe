//! Fuzzing the parsers: thousands of mutations of a valid `.npy` file and of a
//! valid call file, fed to the parsers in-process and, end to end, to the run
//! command (in-process and through the binary). Nothing may panic; every
//! refusal is an error value or a one-line message.

mod common;

use common::*;
use tessera_cli::call::Call;
use tessera_cli::npy;
use tessera_testkit::mutate::mutate;
use tessera_testkit::rng::Rng;

const NPY_WORDS: &[&[u8]] = &[
    b"(",
    b")",
    b",",
    b"'",
    b"{",
    b"}",
    b":",
    b"True",
    b"False",
    b"'descr'",
    b"'shape'",
    b"'fortran_order'",
    b"<f8",
    b">f4",
    b"|b1",
    b"<c16",
    b"|u1",
    b"<u2",
    b"99999999999999999999",
    b"4611686018427387904",
    b"0",
    b"1099511627776",
    b"\xff\xff\xff\xff",
    b"\x00\x00",
    b"\x03\x00",
    b"\x02\x00",
    b"L",
    b"[",
    b"]",
    b"\\",
];

const JSON_WORDS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"null",
    b"true",
    b"-1",
    b"1e400",
    b"18446744073709551616",
    b"\"x0\"",
    b"\"x1\"",
    b"\"x\"",
    b"\"y\"",
    b"\"npy\"",
    b"\"dtype\"",
    b"\"shape\"",
    b"\"packed\"",
    b"\"tier\"",
    b"\"threads\"",
    b"\"attrs\"",
    b"\"kernel\"",
    b"\"i4\"",
    b"\"u1\"",
    b"\"e2m1fn\"",
    b"\"bf16\"",
    b"\"c128\"",
    b"\"fma\"",
    b"\"select\"",
    b"\"sub\"",
    b"[0]",
    b"[]",
    b"[1099511627776, 1099511627776]",
    b"\"scalar\"",
    b"\\u0000",
    b"\"cast\"",
    b"\"encode\"",
    b"\"decode\"",
    b"\"transcode\"",
    b"\"format\"",
    b"\"rule\"",
    b"\"mode\"",
    b"\"from\"",
    b"\"to\"",
    b"\"saturating\"",
    b"\"ceil\"",
    b"\"nvfp4\"",
    b"\"mxfp4\"",
    b"\"mxfp6_e2m3\"",
    b"\"mxint8\"",
    b"\"codes\"",
    b"\"scales\"",
    b"\"tensor_scale\"",
    b"\"e4m3fn\"",
    b"\"u8\"",
    b"[2, 32]",
    b"[16]",
];

fn base_npy() -> Vec<u8> {
    let data: Vec<u8> = (0..6u32)
        .flat_map(|i| (i as f32 * 1.5).to_le_bytes())
        .collect();
    npy_bytes("<f4", false, &[2, 3], &data, 1)
}

/// Valid calls of the cast and block-scaled-format kernels, on the files
/// [`write_format_files`] writes.
const FORMAT_CALLS: [&str; 6] = [
    r#"{"kernel": "cast", "attrs": {"mode": "saturating"}, "operands": {"x": {"npy": "a.npy", "dtype": "f32"}}, "results": {"y": {"npy": "y.npy", "dtype": "e4m3fn", "shape": [2, 3]}}}"#,
    r#"{"kernel": "cast", "operands": {"x": {"npy": "c.npy", "dtype": "i4", "packed": true}}, "results": {"y": {"npy": "y.npy", "dtype": "e2m1fn", "packed": true}}}"#,
    r#"{"kernel": "encode", "attrs": {"format": "mxfp8_e4m3", "rule": "ceil"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"codes": {"npy": "codes.npy"}, "scales": {"npy": "scales.npy"}}}"#,
    r#"{"kernel": "encode", "attrs": {"format": "nvfp4"}, "operands": {"x": {"npy": "x.npy"}}, "results": {"codes": {"npy": "nc.npy"}, "scales": {"npy": "ns.npy"}, "tensor_scale": {"npy": "nt.npy"}}}"#,
    r#"{"kernel": "decode", "attrs": {"format": "nvfp4"}, "operands": {"codes": {"npy": "nc.npy"}, "scales": {"npy": "ns.npy"}, "tensor_scale": {"npy": "nt.npy"}}, "results": {"y": {"npy": "y.npy", "dtype": "bf16", "shape": [2, 32]}}}"#,
    r#"{"kernel": "transcode", "attrs": {"from": "mxfp8_e4m3", "to": "mxfp6_e2m3"}, "operands": {"codes": {"npy": "codes.npy"}, "scales": {"npy": "scales.npy"}}, "results": {"codes": {"npy": "tc.npy"}, "scales": {"npy": "ts.npy"}}}"#,
];

/// The operand files of [`FORMAT_CALLS`]: `x.npy` (f32 [2, 32]), an mxfp8
/// encoding of it (`codes.npy`, `scales.npy`) and an nvfp4 one (`nc.npy`,
/// `ns.npy`, `nt.npy`), as the run command writes them.
fn write_format_files(dir: &TempDir) {
    let x: Vec<f32> = (0..64).map(|i| (i as f32 - 20.0) * 0.7).collect();
    dir.write("x.npy", &npy_f32(&[2, 32], &x));
    for call in &FORMAT_CALLS[2..4] {
        dir.write("fmt.json", call.as_bytes());
        let args = vec![
            "run".to_string(),
            dir.path("fmt.json").display().to_string(),
        ];
        let mut out = Vec::new();
        tessera_cli::main_with(&args, &mut out).expect("the base encode calls run");
    }
}

fn base_call() -> String {
    r#"{"kernel": "add", "attrs": {}, "operands": {"x0": {"npy": "a.npy", "dtype": "f32"}, "x1": {"npy": "b.npy", "dtype": "f32"}}, "results": {"y": {"npy": "y.npy", "dtype": "f32", "shape": [2, 3]}}}"#
        .to_string()
}

#[test]
fn npy_parser_never_panics() {
    let mut rng = Rng::new(0xF00D);
    let bases = [
        base_npy(),
        npy_bytes("|u1", true, &[3, 2], &[1, 2, 3, 4, 5, 6], 2),
        npy_bytes("<c16", false, &[1], &[0u8; 16], 3),
        npy_bytes(">i8", false, &[], &[0u8; 8], 1),
    ];
    let mut accepted = 0;
    for round in 0..4000 {
        let base = &bases[round % bases.len()];
        let bytes = mutate(&mut rng, base, NPY_WORDS);
        if let Ok(a) = npy::parse(bytes) {
            accepted += 1;
            // What is accepted is self-consistent.
            assert_eq!(a.data.len(), a.len() * a.dtype.size());
            assert_eq!(a.strides().len(), a.shape.len());
        }
    }
    // Some mutations (padding bytes, data bytes) keep the file valid.
    assert!(accepted > 0);
}

#[test]
fn call_parser_never_panics() {
    let mut rng = Rng::new(0xCA11);
    let base = base_call();
    let mut accepted = 0;
    for _ in 0..4000 {
        let bytes = mutate(&mut rng, base.as_bytes(), JSON_WORDS);
        let text = String::from_utf8_lossy(&bytes);
        if Call::parse(&text).is_ok() {
            accepted += 1;
        }
    }
    assert!(accepted > 0);
}

/// End to end in-process: mutated call files and operand files through the run
/// command; every outcome is a value.
#[test]
fn run_command_never_panics_in_process() {
    let dir = TempDir::new("fuzz-inproc");
    let mut rng = Rng::new(0xBEEF);
    let call_path = dir.path("call.json").display().to_string();
    let args = vec!["run".to_string(), call_path];
    let good_b = base_npy();
    let mut ok = 0;
    for round in 0..600 {
        let (a, call) = if round % 2 == 0 {
            (
                mutate(&mut rng, &base_npy(), NPY_WORDS),
                base_call().into_bytes(),
            )
        } else {
            (
                base_npy(),
                mutate(&mut rng, base_call().as_bytes(), JSON_WORDS),
            )
        };
        dir.write("a.npy", &a);
        dir.write("b.npy", &good_b);
        dir.write("call.json", &call);
        let mut out = Vec::new();
        match tessera_cli::main_with(&args, &mut out) {
            Ok(_) => ok += 1,
            Err(e) => {
                assert!(!e.one_line().contains('\n'));
                assert!(e.exit_code() == 1 || e.exit_code() == 2);
            }
        }
    }
    assert!(ok > 0);
}

/// The cast and format calls in-process: mutated call files, and mutated
/// operand files (the input, the codes, the scales, the tensor scale).
#[test]
fn format_calls_never_panic_in_process() {
    let dir = TempDir::new("fuzz-formats");
    write_format_files(&dir);
    dir.write("a.npy", &base_npy());
    dir.write("c.npy", &npy_u8(&[2, 1], &[0x12, 0xf0]));
    let originals: Vec<(&str, Vec<u8>)> = [
        "x.npy",
        "codes.npy",
        "scales.npy",
        "nc.npy",
        "ns.npy",
        "nt.npy",
        "c.npy",
    ]
    .iter()
    .map(|f| (*f, std::fs::read(dir.path(f)).unwrap()))
    .collect();
    let call_path = dir.path("call.json").display().to_string();
    let args = vec!["run".to_string(), call_path];
    // Every base call runs as it is.
    for call in FORMAT_CALLS {
        dir.write("call.json", call.as_bytes());
        let mut out = Vec::new();
        let r = tessera_cli::main_with(&args, &mut out);
        assert!(r.is_ok(), "{call}: {r:?}");
    }
    let mut rng = Rng::new(0xF0F0);
    let mut outcomes = [0usize; 3];
    for round in 0..900 {
        let call = FORMAT_CALLS[round % FORMAT_CALLS.len()];
        let (victim, bytes) = &originals[rng.below_usize(originals.len())];
        if round % 2 == 0 {
            dir.write("call.json", &mutate(&mut rng, call.as_bytes(), JSON_WORDS));
        } else {
            dir.write("call.json", call.as_bytes());
            dir.write(victim, &mutate(&mut rng, bytes, NPY_WORDS));
        }
        let mut out = Vec::new();
        match tessera_cli::main_with(&args, &mut out) {
            Ok(_) => outcomes[0] += 1,
            Err(e) => {
                assert!(!e.one_line().contains('\n'));
                assert!(e.exit_code() == 1 || e.exit_code() == 2);
                outcomes[e.exit_code() as usize] += 1;
            }
        }
        dir.write(victim, bytes);
    }
    assert!(outcomes.iter().all(|&n| n > 0), "{outcomes:?}");
}

/// End to end through the binary: a few hundred mutations, never a panic, exit
/// codes 0, 1 or 2 and at most one line on stderr.
#[test]
fn binary_never_panics_on_mutations() {
    let dir = TempDir::new("fuzz-bin");
    let mut rng = Rng::new(0xD1CE);
    let i4_call = r#"{"kernel": "mul", "operands": {"x0": {"npy": "a.npy", "dtype": "u8"}, "x1": {"npy": "c.npy", "dtype": "i4", "packed": true}}, "results": {"y": {"npy": "y.npy"}}}"#;
    dir.write("b.npy", &base_npy());
    write_format_files(&dir);
    let scales = std::fs::read(dir.path("ns.npy")).unwrap();
    for round in 0..320 {
        if round % 4 == 3 {
            // A cast or format call, its call file or the nvfp4 scales mutated.
            let call = FORMAT_CALLS[rng.below_usize(FORMAT_CALLS.len())];
            let call = if rng.next_u64() & 1 == 0 {
                String::from_utf8_lossy(&mutate(&mut rng, call.as_bytes(), JSON_WORDS)).into_owned()
            } else {
                dir.write("ns.npy", &mutate(&mut rng, &scales, NPY_WORDS));
                call.to_string()
            };
            dir.write("a.npy", &base_npy());
            dir.write("c.npy", &npy_u8(&[2, 1], &[0x12, 0xf0]));
            dir.write("call.json", call.as_bytes());
            let run = tessera(&dir.0, &["run", "call.json"]);
            dir.write("ns.npy", &scales);
            assert!(
                !run.stderr.contains("panicked"),
                "round {round}: {}",
                run.stderr
            );
            assert!(
                matches!(run.code, Some(0..=2)),
                "round {round}: {}",
                run.stderr
            );
            assert!(
                run.stderr.lines().count() <= 1,
                "round {round}: {}",
                run.stderr
            );
            continue;
        }
        let (a, call) = match round % 3 {
            0 => (mutate(&mut rng, &base_npy(), NPY_WORDS), base_call()),
            1 => (
                base_npy(),
                String::from_utf8_lossy(&mutate(&mut rng, base_call().as_bytes(), JSON_WORDS))
                    .into_owned(),
            ),
            _ => (
                mutate(&mut rng, &npy_u8(&[2, 2], &[1, 2, 3, 4]), NPY_WORDS),
                String::from_utf8_lossy(&mutate(&mut rng, i4_call.as_bytes(), JSON_WORDS))
                    .into_owned(),
            ),
        };
        dir.write("a.npy", &a);
        dir.write(
            "c.npy",
            &mutate(&mut rng, &npy_u8(&[2, 1], &[0x12, 0xf0]), NPY_WORDS),
        );
        dir.write("call.json", call.as_bytes());
        let run = tessera(&dir.0, &["run", "call.json"]);
        assert!(
            !run.stderr.contains("panicked"),
            "round {round}: {}",
            run.stderr
        );
        assert!(
            matches!(run.code, Some(0..=2)),
            "round {round}: exit {:?}, {}",
            run.code,
            run.stderr
        );
        assert!(
            run.stderr.lines().count() <= 1,
            "round {round}: {}",
            run.stderr
        );
        if run.code != Some(0) {
            assert!(
                run.stderr.starts_with("error: "),
                "round {round}: {}",
                run.stderr
            );
        }
    }
}
