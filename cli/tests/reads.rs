//! `tessera run` reads its call file and operands through a bounded reader:
//! a FIFO, a device (`/dev/zero`) or a directory is refused up front, a
//! `.npy` file whose size contradicts its header is refused before its data
//! is read, and a call file has a size limit.
//!
//! Each run is a child killed after 10 s if it has not exited (a hang check,
//! not a timing assertion), under a 4 GiB address-space limit so that a tool
//! that reads without bound fails instead of taking the machine's memory.

mod common;

use common::*;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `tessera args…` in `dir` under a 4 GiB address-space limit; kill it
/// and fail if it has not exited after 10 s.
fn run_bounded(case: &str, dir: &Path, args: &[&str]) -> Run {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 2>/dev/null; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sh");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for the child") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("case {case}: tessera had not exited after 10 s (killed)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Run {
        code: status.code(),
        stdout,
        stderr,
    }
}

fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

fn neg_call(x: &str) -> String {
    format!(
        r#"{{"kernel": "neg", "operands": {{"x": {{"npy": "{x}"}}}}, "results": {{"y": {{"npy": "y.npy"}}}}}}"#
    )
}

#[test]
fn fifos_devices_and_directories_are_refused_up_front() {
    let dir = TempDir::new("special");
    let have_fifo = mkfifo(&dir.path("fifo"));
    if !have_fifo {
        eprintln!("note: mkfifo is not available; the FIFO cases are skipped");
    }
    std::fs::create_dir(dir.path("adir")).unwrap();
    let mut operands: Vec<(&str, &str)> = vec![
        ("/dev/zero as an operand", "/dev/zero"),
        ("a directory as an operand", "adir"),
    ];
    if have_fifo {
        operands.push(("a FIFO as an operand", "fifo"));
    }
    for (case, x) in operands {
        dir.write("call.json", neg_call(x).as_bytes());
        let run = run_bounded(case, &dir.0, &["run", "call.json"]);
        std::panic::catch_unwind(|| run.assert_refused(1, "not a regular file"))
            .unwrap_or_else(|_| panic!("case `{case}`: {run:?}"));
        assert!(
            !dir.path("y.npy").exists(),
            "case {case}: a result was written"
        );
    }
    let mut calls: Vec<(&str, &str)> = vec![
        ("/dev/zero as the call file", "/dev/zero"),
        ("a directory as the call file", "adir"),
    ];
    if have_fifo {
        calls.push(("a FIFO as the call file", "fifo"));
    }
    for (case, call) in calls {
        let run = run_bounded(case, &dir.0, &["run", call]);
        std::panic::catch_unwind(|| run.assert_refused(2, "not a regular file"))
            .unwrap_or_else(|_| panic!("case `{case}`: {run:?}"));
    }
}

/// A `.npy` file of `n` f32 values whose length is then set to `len` bytes
/// (sparse: the file system holds no data for the rest).
fn sparse_npy(dir: &TempDir, name: &str, n: usize, len: u64) {
    let p = dir.write(name, &npy_f32(&[n], &vec![1.5; n]));
    let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
    f.set_len(len).expect("extend a file");
}

#[test]
fn a_file_longer_than_its_header_says_is_refused_before_its_data_is_read() {
    let dir = TempDir::new("long-npy");
    // A header of four f32 values (16 bytes of data) on a 64 GiB file.
    sparse_npy(&dir, "x.npy", 4, 64 << 30);
    dir.write("call.json", neg_call("x.npy").as_bytes());
    let run = run_bounded("a 64 GiB file", &dir.0, &["run", "call.json"]);
    run.assert_refused(1, "size mismatch");
    assert!(run.stderr.contains("needs 16 bytes"), "{}", run.stderr);
    assert!(!dir.path("y.npy").exists());

    // A header that promises more than the file holds.
    let mut short = npy_f32(&[1000], &vec![0.5; 1000]);
    short.truncate(short.len() - 4);
    dir.write("x.npy", &short);
    let run = run_bounded("a short file", &dir.0, &["run", "call.json"]);
    run.assert_refused(1, "truncated");
}

#[test]
fn a_call_file_over_the_limit_is_refused() {
    let dir = TempDir::new("big-call");
    let p = dir.write("call.json", neg_call("x.npy").as_bytes());
    // 16 MiB and one byte: the call file's limit is 16 MiB.
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len((16 << 20) + 1).unwrap();
    drop(f);
    let run = run_bounded("a call file of 16 MiB + 1", &dir.0, &["run", "call.json"]);
    run.assert_refused(2, "16 MiB");

    // Exactly at the limit it is read (and then parsed: trailing spaces are
    // JSON whitespace).
    dir.write("x.npy", &npy_f32(&[2], &[1.0, -2.0]));
    let mut text = neg_call("x.npy").into_bytes();
    text.resize(16 << 20, b' ');
    dir.write("call.json", &text);
    let run = run_bounded("a call file of 16 MiB", &dir.0, &["run", "call.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("y.npy"));
    assert_eq!(
        y.data,
        [(-1.0f32).to_le_bytes(), 2.0f32.to_le_bytes()].concat()
    );
}
