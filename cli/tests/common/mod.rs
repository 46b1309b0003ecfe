//! Helpers shared by the command-line tests: temporary directories, a `.npy`
//! writer and reader written independently of the crate's own, and a way to
//! run the built binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("tessera-cli-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write a test file");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The bytes of a `.npy` file, built by hand from the format's description.
pub fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], data: &[u8], version: u8) -> Vec<u8> {
    let shape_text = if shape.len() == 1 {
        format!("({},)", shape[0])
    } else {
        let parts: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
        format!("({})", parts.join(", "))
    };
    let order = if fortran { "True" } else { "False" };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape_text}, }}");
    let prefix = if version == 1 { 10 } else { 12 };
    while (prefix + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.push(version);
    out.push(0);
    if version == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// A C-order little-endian `.npy` file of f32 values.
pub fn npy_f32(shape: &[usize], values: &[f32]) -> Vec<u8> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_bytes("<f4", false, shape, &data, 1)
}

/// A C-order `.npy` file of bytes (`|u1`).
pub fn npy_u8(shape: &[usize], values: &[u8]) -> Vec<u8> {
    npy_bytes("|u1", false, shape, values, 1)
}

/// A `.npy` file read back: its descr, order, shape and data.
#[derive(Debug)]
pub struct ReadBack {
    pub descr: String,
    pub fortran: bool,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

/// Read a `.npy` file as the tool writes it (version 1.0 or 2.0), checking the
/// parts of the format the tool promises: magic, 64-byte aligned data, C order.
pub fn read_npy(path: &Path) -> ReadBack {
    let bytes = std::fs::read(path).expect("the result file exists");
    assert_eq!(&bytes[..6], b"\x93NUMPY", "magic");
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => panic!("unexpected version {v}"),
    };
    assert_eq!((start + len) % 64, 0, "data starts on a 64-byte boundary");
    let header = std::str::from_utf8(&bytes[start..start + len]).expect("ASCII header");
    assert!(header.ends_with('\n'));
    let field = |key: &str| -> String {
        let at = header.find(&format!("'{key}': ")).expect("key present") + key.len() + 4;
        header[at..].to_string()
    };
    let descr_text = field("descr");
    let descr = descr_text[1..].split('\'').next().unwrap().to_string();
    let fortran = field("fortran_order").starts_with("True");
    let shape_text = field("shape");
    let inner = &shape_text[1..shape_text.find(')').unwrap()];
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    ReadBack {
        descr,
        fortran,
        shape,
        data: bytes[start + len..].to_vec(),
    }
}

/// A call file for an elementwise kind: operands as (name, file, dtype, packed),
/// and the result's extra JSON fields.
pub fn call_json(
    kernel: &str,
    operands: &[(&str, &str, &str, bool)],
    result_extra: &str,
) -> String {
    let ops: Vec<String> = operands
        .iter()
        .map(|(name, file, dtype, packed)| {
            format!(r#""{name}": {{"npy": "{file}", "dtype": "{dtype}", "packed": {packed}}}"#)
        })
        .collect();
    format!(
        r#"{{"kernel": "{kernel}", "attrs": {{}}, "operands": {{{}}}, "results": {{"y": {{"npy": "y.npy"{result_extra}}}}}}}"#,
        ops.join(", ")
    )
}

/// What a run of the binary gave.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Assert a refusal: the exit code, one `error:` line on stderr, no panic.
    pub fn assert_refused(&self, code: i32, needle: &str) {
        assert_eq!(self.code, Some(code), "exit code; stderr: {}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "panic: {}", self.stderr);
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line on stderr: {:?}", self.stderr);
        assert!(lines[0].starts_with("error: "), "{}", lines[0]);
        assert!(
            lines[0].contains(needle),
            "stderr {:?} should mention {needle:?}",
            lines[0]
        );
    }
}

/// Run the built `tessera` binary in `dir`.
pub fn tessera(dir: &Path, args: &[&str]) -> Run {
    tessera_env(dir, args, &[])
}

/// Run the built `tessera` binary in `dir` with extra environment variables.
pub fn tessera_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera"));
    cmd.args(args).current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the tessera binary");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Write `json` as `call.json` in `dir` and run it.
pub fn run_call(dir: &TempDir, json: &str) -> Run {
    dir.write("call.json", json.as_bytes());
    tessera(&dir.0, &["run", "call.json"])
}

/// Little-endian f32 values.
pub fn f32s(d: &[u8]) -> Vec<f32> {
    d.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// An `.npy` file of little-endian i64 values.
pub fn npy_i64(shape: &[usize], v: &[i64]) -> Vec<u8> {
    let data: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    npy_bytes("<i8", false, shape, &data, 1)
}
