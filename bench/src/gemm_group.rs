//! The `gemm` group: tessera's chain-order matrix product beside the `gemm`
//! crate (faer's), `matrixmultiply` (with its AVX-512 kernels), and, when
//! `python3` with numpy is on the PATH, OpenBLAS (numpy's) and MKL (the `mkl`
//! wheel's `cblas_*gemm`) driven through `bench/scripts/blas_peer.py`, all in
//! one run, in GFLOP/s (2·m·n·k per call over the best sample) with ratios to
//! the fastest peer.
//!
//! Cases: f32 and f64 square products n = 64, 256, 512, 1024, 2048 and the
//! skinny 1024 × 4096 × 64 (m × k × n), at 1 and 2 threads (tessera through
//! `Exec::threads`, gemm through `Parallelism::Rayon`; matrixmultiply,
//! OpenBLAS and MKL run one thread and are shown at 1 thread only: the script
//! runs with `OPENBLAS_NUM_THREADS=1` and `MKL_NUM_THREADS=1`, without
//! `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE`, and the table's header names
//! the kernels OpenBLAS chose). All operands are contiguous row-major. Each
//! peer's result is checked against tessera's within 1e-4 relative to
//! Σ|a||b| before it is timed.
//!
//! Samples: each peer runs back to back for about 0.1 s (at least one call)
//! per sample (the script's peers time their own loop, so the pipe's latency
//! is not counted), samples alternate between peers over 5 rounds, and the
//! best is kept.

use crate::chart::Chart;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;
use tessera::{matmul, ArrayView, ArrayViewMut, Exec};
use tessera_testkit::rng::Rng;

/// The group's name on the command line.
pub const NAME: &str = "gemm";
/// The integer products' group name (a filter `gemm` names it too).
pub const INT_NAME: &str = "gemm-int";

trait Elem: Copy + Default + 'static + tessera::Element + std::fmt::Debug {
    fn of(x: f64) -> Self;
    fn to(self) -> f64;
    fn one() -> Self {
        Self::of(1.0)
    }
    fn mm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]);
    /// From little-endian bytes.
    fn from_le(b: &[u8]) -> Self;
}

impl Elem for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    fn to(self) -> f64 {
        self as f64
    }
    fn from_le(b: &[u8]) -> Self {
        f32::from_le_bytes(b.try_into().expect("4 bytes"))
    }
    fn mm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
        // SAFETY: row-major buffers of m×k, k×n and m×n elements.
        unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    }
}

impl Elem for f64 {
    fn of(x: f64) -> Self {
        x
    }
    fn to(self) -> f64 {
        self
    }
    fn from_le(b: &[u8]) -> Self {
        f64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
    fn mm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
        // SAFETY: as for f32.
        unsafe {
            matrixmultiply::dgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    }
}

fn faer_gemm<T: Elem>(m: usize, k: usize, n: usize, a: &[T], b: &[T], c: &mut [T], threads: usize) {
    faer(m, k, n, a, b, c, threads, T::one())
}

/// `gemm`'s product (faer's) of row-major `a` [m, k] and `b` [k, n] into `c`,
/// `threads` threads; `one` is the type's 1 (gemm's scale of the product).
#[allow(clippy::too_many_arguments)]
fn faer<T: Copy + Default + 'static>(
    m: usize,
    k: usize,
    n: usize,
    a: &[T],
    b: &[T],
    c: &mut [T],
    threads: usize,
    one: T,
) {
    let par = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: row-major buffers of m×k, k×n and m×n elements; dst not read
    // (alpha is zero and read_dst false); gemm takes f32, f64 and its c32/c64
    // (num_complex's types).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            T::default(),
            one,
            false,
            false,
            false,
            par,
        )
    }
}

fn tessera_mm<T: Elem>(
    m: usize,
    k: usize,
    n: usize,
    a: &[T],
    b: &[T],
    c: &mut [T],
    threads: usize,
) {
    matmul(
        &ArrayView::from_slice(a, &[m, k]).expect("view"),
        &ArrayView::from_slice(b, &[k, n]).expect("view"),
        &mut ArrayViewMut::from_slice(c, &[m, n]).expect("view"),
        &Exec::default().threads(threads),
    )
    .expect("matmul");
}

/// The BLAS peers' script, started once per run (None without python3 and
/// numpy).
struct Blas {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    info: String,
    dir: std::path::PathBuf,
}

impl Blas {
    fn start() -> Option<Blas> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/blas_peer.py");
        let mut child = Command::new("python3")
            .arg(script)
            .env("OPENBLAS_NUM_THREADS", "1")
            .env("MKL_NUM_THREADS", "1")
            .env_remove("OPENBLAS_CORETYPE")
            .env_remove("OPENBLAS_L2_SIZE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let input = child.stdin.take()?;
        let output = BufReader::new(child.stdout.take()?);
        let dir = std::env::temp_dir().join(format!("tessera-bench-blas-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let mut b = Blas {
            child,
            input,
            output,
            info: String::new(),
            dir,
        };
        b.info = b.ask("info")?;
        Some(b)
    }
    fn ask(&mut self, line: &str) -> Option<String> {
        writeln!(self.input, "{line}").ok()?;
        self.input.flush().ok()?;
        let mut answer = String::new();
        self.output.read_line(&mut answer).ok()?;
        let answer = answer.trim().to_string();
        (!answer.is_empty()).then_some(answer)
    }
    /// Hand the script a case's operands.
    fn load<T: Elem>(
        &mut self,
        dt: &str,
        (m, k, n): (usize, usize, usize),
        a: &[T],
        b: &[T],
    ) -> Option<()> {
        let (pa, pb) = (self.dir.join("a.bin"), self.dir.join("b.bin"));
        std::fs::write(&pa, tessera::array::as_bytes(a)).ok()?;
        std::fs::write(&pb, tessera::array::as_bytes(b)).ok()?;
        let r = self.ask(&format!(
            "load {dt} {m} {k} {n} {} {}",
            pa.display(),
            pb.display()
        ))?;
        (r == "ok").then_some(())
    }
    /// One product by `lib` into `c` (None if the library is missing).
    fn product<T: Elem>(&mut self, lib: &str, c: &mut [T]) -> Option<()> {
        let pc = self.dir.join("c.bin");
        if self.ask(&format!("run {lib} 1"))? == "missing" {
            return None;
        }
        (self.ask(&format!("save {lib} {}", pc.display()))? == "ok").then_some(())?;
        let bytes = std::fs::read(&pc).ok()?;
        if bytes.len() != std::mem::size_of_val(c) {
            return None;
        }
        for (x, chunk) in c.iter_mut().zip(bytes.chunks_exact(size_of::<T>())) {
            *x = T::from_le(chunk);
        }
        Some(())
    }
    /// Seconds per product by `lib`, over a sample of about `target` seconds.
    fn sample(&mut self, lib: &str, target: f64) -> Option<f64> {
        let one: f64 = self.ask(&format!("run {lib} 1"))?.parse().ok()?;
        let reps = ((target / one.max(1e-9)) as u64).clamp(1, 1 << 20);
        let t: f64 = self.ask(&format!("run {lib} {reps}"))?.parse().ok()?;
        Some(t / reps as f64)
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "quit");
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

type Peer<'a, T> = (&'static str, Box<dyn Fn(&mut [T]) + 'a>);

/// The script's libraries, in the table's order.
const BLAS_LIBS: [&str; 2] = ["openblas", "mkl"];

/// One case: GFLOP/s of each peer (None where it failed the check) as rows.
fn case<T: Elem>(
    m: usize,
    k: usize,
    n: usize,
    threads: usize,
    quick: bool,
    mut blas: Option<&mut Blas>,
) -> (Vec<(String, Option<f64>)>, bool) {
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    let mut rnd = || T::of(rng.unit() - 0.5);
    let a: Vec<T> = (0..m * k).map(|_| rnd()).collect();
    let b: Vec<T> = (0..k * n).map(|_| rnd()).collect();
    let mut peers: Vec<Peer<T>> = vec![
        (
            "tessera",
            Box::new(|c: &mut [T]| tessera_mm(m, k, n, &a, &b, c, threads)),
        ),
        (
            "gemm",
            Box::new(|c: &mut [T]| faer_gemm(m, k, n, &a, &b, c, threads)),
        ),
    ];
    if threads == 1 {
        peers.push((
            "matrixmultiply",
            Box::new(|c: &mut [T]| T::mm(m, k, n, &a, &b, c)),
        ));
    }
    let mut c = vec![T::default(); m * n];
    let mut want = vec![T::default(); m * n];
    tessera_mm(m, k, n, &a, &b, &mut want, 1);
    let tol = 1e-4 * k as f64 * 0.25;
    let mut ok = vec![true; peers.len()];
    for (p, (_, f)) in peers.iter().enumerate() {
        f(&mut c);
        ok[p] = c
            .iter()
            .zip(&want)
            .all(|(x, y)| (x.to() - y.to()).abs() <= tol);
    }
    // The script's libraries (one thread): present, and agreeing with tessera.
    let mut libs: Vec<(&'static str, bool)> = Vec::new();
    if threads == 1 {
        if let Some(bl) = blas.as_deref_mut() {
            let dt = if size_of::<T>() == 4 { "f32" } else { "f64" };
            if bl.load(dt, (m, k, n), &a, &b).is_some() {
                for lib in BLAS_LIBS {
                    if bl.product(lib, &mut c).is_some() {
                        let agrees = c
                            .iter()
                            .zip(&want)
                            .all(|(x, y)| (x.to() - y.to()).abs() <= tol);
                        libs.push((lib, agrees));
                    }
                }
            }
        }
    }
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    let mut best = vec![f64::INFINITY; peers.len()];
    let mut lib_best = vec![f64::INFINITY; libs.len()];
    let target = if quick { 0.005 } else { 0.1 };
    let total = peers.len() + libs.len();
    for round in 0..5 {
        for q in 0..total {
            let p = if round % 2 == 0 { q } else { total - 1 - q };
            if p >= peers.len() {
                let l = p - peers.len();
                if let (true, Some(b)) = (libs[l].1, blas.as_deref_mut()) {
                    if let Some(t) = b.sample(libs[l].0, target) {
                        lib_best[l] = lib_best[l].min(t);
                    }
                }
                continue;
            }
            if !ok[p] {
                continue;
            }
            let t0 = Instant::now();
            let mut calls = 0u32;
            while calls == 0 || t0.elapsed().as_secs_f64() < target {
                (peers[p].1)(&mut c);
                calls += 1;
            }
            best[p] = best[p].min(t0.elapsed().as_secs_f64() / calls as f64);
        }
    }
    let mut rows: Vec<(String, Option<f64>)> = peers
        .iter()
        .enumerate()
        .map(|(p, (name, _))| (name.to_string(), ok[p].then(|| flops / best[p] / 1e9)))
        .collect();
    for (l, &(name, agreed)) in libs.iter().enumerate() {
        rows.push((
            name.to_string(),
            (agreed && lib_best[l].is_finite()).then(|| flops / lib_best[l] / 1e9),
        ));
    }
    let all = ok.iter().all(|&x| x) && libs.iter().all(|l| l.1);
    (rows, all)
}

/// A case's row label: `f32 1024³ 1 thr`, `f32 1024×4096×64 2 thr`.
fn shape_label(dt: &str, (m, k, n): (usize, usize, usize), threads: usize) -> String {
    if m == k && k == n {
        format!("{dt} {n}³ {threads} thr")
    } else {
        format!("{dt} {m}×{k}×{n} {threads} thr")
    }
}

/// Run the group; the text of its table, whether every peer agreed, and
/// the table as a chart.
pub fn run(quick: bool) -> (String, bool, Chart) {
    let mut blas = Blas::start();
    let mut chart = Chart::new(
        NAME,
        "f32 and f64 products, 2·m·n·k per call over the best sample; BLAS peers one thread",
        "GFLOP/s",
    )
    .ratio_note("tessera ÷ the fastest peer at the same threads (above 1: tessera faster)");
    let mut out = String::new();
    out.push_str(&format!("{NAME}: GFLOP/s (2·m·n·k / best sample); ratio = tessera / the fastest peer at the same threads\n"));
    match &blas {
        Some(b) => out.push_str(&format!("BLAS peers (one thread): {}\n", b.info)),
        None => out.push_str("BLAS peers: none (python3 with numpy not found)\n"),
    }
    out.push_str(&format!(
        "{:<5} {:>20} {:>3}  {:>8} {:>8} {:>8} {:>8} {:>8}  {:>6}  {:>9}\n",
        "dtype",
        "m x k x n",
        "thr",
        "tessera",
        "gemm",
        "mm",
        "openblas",
        "mkl",
        "ratio",
        "2thr/1thr"
    ));
    let mut all_ok = true;
    let sizes: Vec<(usize, usize, usize)> = if quick {
        vec![(64, 64, 64), (256, 256, 256), (128, 4096, 64)]
    } else {
        let mut v: Vec<_> = [64, 256, 512, 1024, 2048]
            .iter()
            .map(|&n| (n, n, n))
            .collect();
        v.push((1024, 4096, 64));
        v
    };
    for dt in ["f32", "f64"] {
        for &(m, k, n) in &sizes {
            let mut one = None;
            for threads in [1, 2] {
                eprintln!("  {dt} {m}x{k}x{n}, {threads} thread(s)");
                let (rows, ok) = if dt == "f32" {
                    case::<f32>(m, k, n, threads, quick, blas.as_mut())
                } else {
                    case::<f64>(m, k, n, threads, quick, blas.as_mut())
                };
                all_ok &= ok;
                let get = |name: &str| rows.iter().find(|r| r.0 == name).and_then(|r| r.1);
                let present = |name: &str| rows.iter().any(|r| r.0 == name);
                let fmt = |name: &str| match (get(name), present(name)) {
                    (Some(x), _) => format!("{x:.1}"),
                    (None, true) => "FAILED".to_string(),
                    (None, false) => "-".to_string(),
                };
                let t = get("tessera");
                let peer = ["gemm", "matrixmultiply", "openblas", "mkl"]
                    .into_iter()
                    .filter_map(get)
                    .fold(0.0f64, f64::max);
                let ratio = t.map(|t| t / peer);
                let cells: Vec<(&str, Option<f64>)> =
                    ["tessera", "gemm", "matrixmultiply", "openblas", "mkl"]
                        .into_iter()
                        .filter(|p| present(p))
                        .map(|p| (p, get(p)))
                        .collect();
                // A peer that disagreed is no bar, named in the row's label.
                let failed: Vec<&str> = cells
                    .iter()
                    .filter(|c| c.1.is_none())
                    .map(|c| c.0)
                    .collect();
                let mut label = shape_label(dt, (m, k, n), threads);
                if !failed.is_empty() {
                    label += &format!(" ({} FAILED)", failed.join(", "));
                }
                chart.add_row(label, &cells, ratio);
                if threads == 1 {
                    one = t;
                }
                let scale = match (threads, t, one) {
                    (2, Some(t2), Some(t1)) => format!("{:.2}", t2 / t1),
                    _ => String::new(),
                };
                out.push_str(&format!(
                    "{:<5} {:>20} {:>3}  {:>8} {:>8} {:>8} {:>8} {:>8}  {:>6}  {:>9}\n",
                    dt,
                    format!("{m} x {k} x {n}"),
                    threads,
                    fmt("tessera"),
                    fmt("gemm"),
                    fmt("matrixmultiply"),
                    fmt("openblas"),
                    fmt("mkl"),
                    ratio.map(|r| format!("{r:.2}")).unwrap_or_default(),
                    scale
                ));
            }
        }
    }
    drop(blas.take());
    (out, all_ok, chart)
}

/// The integer products: `qmatmul_i8` (u8 × i8 → i32, the VNNI quads on an
/// AVX-512 VNNI host) and i16 × i16 → i32 in GOP/s (2·m·n·k), beside
/// tessera's own f32 product of the same shape in GFLOP/s, alternated in one
/// run. Each integer result is checked against an exact i64 model of a few
/// outputs first. The text, whether every check held, and the chart.
pub fn run_int(quick: bool) -> (String, bool, Chart) {
    let mut chart = Chart::new(
        INT_NAME,
        "u8·i8 and i16·i16 into i32 beside tessera's f32 product, 2·m·n·k per call",
        "GOP/s (f32: GFLOP/s)",
    )
    .ratio_note("u8·i8 ÷ f32 (the table's 8-bit column)");
    let mut out = String::from(
        "gemm-int: GOP/s (2·m·n·k / best sample) beside tessera's f32 GFLOP/s; ratio = integer / f32\n",
    );
    out.push_str(&format!(
        "{:>16} {:>3}  {:>9} {:>9} {:>9}  {:>6} {:>6}\n",
        "m x k x n", "thr", "u8·i8", "i16·i16", "f32", "8-bit", "16-bit"
    ));
    let sizes: &[usize] = if quick {
        &[128]
    } else {
        &[256, 512, 1024, 2048]
    };
    let mut all_ok = true;
    let mut rng = Rng::new(0x1234_5678);
    for &n in sizes {
        let a8: Vec<u8> = (0..n * n).map(|_| rng.next_u64() as u8).collect();
        let b8: Vec<i8> = (0..n * n).map(|_| rng.next_u64() as i8).collect();
        let a16: Vec<i16> = (0..n * n).map(|_| rng.next_u64() as i16).collect();
        let b16: Vec<i16> = (0..n * n).map(|_| rng.next_u64() as i16).collect();
        let af: Vec<f32> = a8.iter().map(|&x| x as f32).collect();
        let bf: Vec<f32> = b8.iter().map(|&x| x as f32).collect();
        for threads in [1, 2] {
            let exec = Exec::default().threads(threads);
            let (mut c8, mut c16, mut cf) =
                (vec![0i32; n * n], vec![0i32; n * n], vec![0f32; n * n]);
            let mut run8 = || {
                tessera::contract::qmatmul::qmatmul_i8(
                    &ArrayView::from_slice(&a8, &[n, n]).expect("view"),
                    &ArrayView::from_slice(&b8, &[n, n]).expect("view"),
                    &mut ArrayViewMut::from_slice(&mut c8, &[n, n]).expect("view"),
                    &exec,
                )
                .expect("qmatmul_i8")
            };
            run8();
            let mut run16 = || {
                tessera::contract(
                    &tessera::ContractSpec::new(tessera::DType::I32).contracting(1, 0),
                    &ArrayView::from_slice(&a16, &[n, n]).expect("view"),
                    &ArrayView::from_slice(&b16, &[n, n]).expect("view"),
                    None,
                    &mut ArrayViewMut::from_slice(&mut c16, &[n, n]).expect("view"),
                    &exec,
                )
                .expect("i16 product")
            };
            run16();
            let mut runf = || tessera_mm(n, n, n, &af, &bf, &mut cf, threads);
            let target = if quick { 0.005 } else { 0.1 };
            let t = crate::harness::alternate(&mut [&mut run8, &mut run16, &mut runf], target);
            // A few outputs against the exact sum.
            let exact = |i: usize, j: usize, wide: &dyn Fn(usize, usize) -> i64| {
                (0..n).map(|t| wide(i * n + t, t * n + j)).sum::<i64>() as i32
            };
            let ok = [(0, 0), (n - 1, n - 1), (n / 3, n / 2)]
                .iter()
                .all(|&(i, j)| {
                    c8[i * n + j] == exact(i, j, &|x, y| a8[x] as i64 * b8[y] as i64)
                        && c16[i * n + j] == exact(i, j, &|x, y| a16[x] as i64 * b16[y] as i64)
                });
            all_ok &= ok;
            let ops = 2.0 * (n * n * n) as f64 / 1e9;
            let (g8, g16, gf) = (ops / t[0], ops / t[1], ops / t[2]);
            chart.add_row(
                format!("{n}³ {threads} thr{}", if ok { "" } else { " WRONG" }),
                &[
                    ("tessera u8·i8", Some(g8)),
                    ("tessera i16·i16", Some(g16)),
                    ("tessera f32", Some(gf)),
                ],
                Some(g8 / gf),
            );
            out.push_str(&format!(
                "{:>16} {:>3}  {:>9.1} {:>9.1} {:>9.1}  {:>6.2} {:>6.2}{}\n",
                format!("{n} x {n} x {n}"),
                threads,
                g8,
                g16,
                gf,
                g8 / gf,
                g16 / gf,
                if ok { "" } else { "  WRONG" }
            ));
        }
    }
    (out, all_ok, chart)
}

/// The complex products' group name (a filter `gemm` names it too).
pub const COMPLEX_NAME: &str = "gemm-complex";

/// A complex element type of the complex group.
trait Cplx: tessera::Element + Copy + Default + Send + Sync + 'static {
    const NAME: &'static str;
    fn of(re: f64, im: f64) -> Self;
    fn parts(self) -> (f64, f64);
    fn mm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]);
}

macro_rules! cplx {
    ($t:ty, $name:literal, $f:ty, $mm:ident) => {
        impl Cplx for num_complex::Complex<$f> {
            const NAME: &'static str = $name;
            fn of(re: f64, im: f64) -> Self {
                num_complex::Complex::new(re as $f, im as $f)
            }
            fn parts(self) -> (f64, f64) {
                (self.re as f64, self.im as f64)
            }
            fn mm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
                // SAFETY: row-major buffers of m×k, k×n and m×n elements, as
                // [re, im] pairs (num_complex's layout).
                unsafe {
                    matrixmultiply::$mm(
                        matrixmultiply::CGemmOption::Standard,
                        matrixmultiply::CGemmOption::Standard,
                        m,
                        k,
                        n,
                        [1.0, 0.0],
                        a.as_ptr() as *const [$f; 2],
                        k as isize,
                        1,
                        b.as_ptr() as *const [$f; 2],
                        n as isize,
                        1,
                        [0.0, 0.0],
                        c.as_mut_ptr() as *mut [$f; 2],
                        n as isize,
                        1,
                    )
                }
            }
        }
    };
}
cplx!(c64, "c64", f32, cgemm);
cplx!(c128, "c128", f64, zgemm);

/// The complex products c64 and c128: tessera beside `gemm` (1 and 2
/// threads) and `matrixmultiply`'s cgemm/zgemm (1 thread), alternated in
/// one run, in GFLOP/s counted as 8·m·n·k; each peer's result checked
/// against tessera's within 1e-4 (c64) relative to Σ|a||b| first. The
/// text, whether every peer agreed, and the chart.
pub fn run_complex(quick: bool) -> (String, bool, Chart) {
    let mut chart = Chart::new(
        COMPLEX_NAME,
        "c64 and c128 products, 8·m·n·k per call over the best sample",
        "GFLOP/s",
    )
    .ratio_note("tessera ÷ the fastest peer at the same threads (above 1: tessera faster)");
    let mut out = String::from(
        "gemm-complex: GFLOP/s (8·m·n·k / best sample); ratio = tessera / the fastest peer at the same threads\n",
    );
    out.push_str(&format!(
        "{:<5} {:>16} {:>3}  {:>8} {:>8} {:>8}  {:>6}\n",
        "dtype", "m x k x n", "thr", "tessera", "gemm", "mm", "ratio"
    ));
    let mut all_ok = true;
    fn rows<T: Cplx>(quick: bool, out: &mut String, all_ok: &mut bool, chart: &mut Chart) {
        let sizes: &[usize] = if quick { &[64] } else { &[64, 256, 512, 1024] };
        let mut rng = Rng::new(0x5eed);
        for &n in sizes {
            let mut draw = || T::of(rng.unit() - 0.5, rng.unit() - 0.5);
            let a: Vec<T> = (0..n * n).map(|_| draw()).collect();
            let b: Vec<T> = (0..n * n).map(|_| draw()).collect();
            for threads in [1, 2] {
                let exec = Exec::default().threads(threads);
                let (mut ct, mut cg, mut cm) = (
                    vec![T::default(); n * n],
                    vec![T::default(); n * n],
                    vec![T::default(); n * n],
                );
                let mut run_t = || {
                    matmul(
                        &ArrayView::from_slice(&a, &[n, n]).expect("view"),
                        &ArrayView::from_slice(&b, &[n, n]).expect("view"),
                        &mut ArrayViewMut::from_slice(&mut ct, &[n, n]).expect("view"),
                        &exec,
                    )
                    .expect("matmul")
                };
                let mut run_g = || faer(n, n, n, &a, &b, &mut cg, threads, T::of(1.0, 0.0));
                let mut run_m = || T::mm(n, n, n, &a, &b, &mut cm);
                let target = if quick { 0.005 } else { 0.1 };
                let t = if threads == 1 {
                    crate::harness::alternate(&mut [&mut run_t, &mut run_g, &mut run_m], target)
                } else {
                    let mut t = crate::harness::alternate(&mut [&mut run_t, &mut run_g], target);
                    t.push(f64::NAN);
                    t
                };
                let tol = 1e-4 * n as f64 * 0.5;
                let agree = |c: &[T]| {
                    c.iter().zip(&ct).all(|(x, y)| {
                        let ((a, b), (c, d)) = (x.parts(), y.parts());
                        (a - c).abs() <= tol && (b - d).abs() <= tol
                    })
                };
                let ok = agree(&cg) && (threads > 1 || agree(&cm));
                *all_ok &= ok;
                let fl = 8.0 * (n * n * n) as f64 / 1e9;
                let g: Vec<f64> = t.iter().map(|&s| fl / s).collect();
                let peer = g[1].max(if threads == 1 { g[2] } else { 0.0 });
                let mut cells = vec![("tessera", Some(g[0])), ("gemm", Some(g[1]))];
                if threads == 1 {
                    cells.push(("matrixmultiply", Some(g[2])));
                }
                chart.add_row(
                    format!(
                        "{} {n}³ {threads} thr{}",
                        T::NAME,
                        if ok { "" } else { " DISAGREE" }
                    ),
                    &cells,
                    Some(g[0] / peer),
                );
                out.push_str(&format!(
                    "{:<5} {:>16} {:>3}  {:>8.1} {:>8.1} {:>8}  {:>6.2}{}\n",
                    T::NAME,
                    format!("{n} x {n} x {n}"),
                    threads,
                    g[0],
                    g[1],
                    if threads == 1 {
                        format!("{:.1}", g[2])
                    } else {
                        "-".into()
                    },
                    g[0] / peer,
                    if ok { "" } else { "  DISAGREE" }
                ));
            }
        }
    }
    rows::<num_complex::Complex<f32>>(quick, &mut out, &mut all_ok, &mut chart);
    rows::<num_complex::Complex<f64>>(quick, &mut out, &mut all_ok, &mut chart);
    (out, all_ok, chart)
}

/// The group of `B packed once` products' name (a filter `gemm` names it too).
pub const PACKED_NAME: &str = "gemm-packed";

/// `matmul_packed` against `matmul` on the same operands (B packed once,
/// outside the timing), f32 and f64, one thread, shapes from skinny to
/// square; checked bit for bit first; best of alternating samples.
pub fn run_packed(quick: bool) -> (String, bool, Chart) {
    use tessera::contract::{matmul_packed, PackedB};
    let mut rng = Rng::for_label("bench gemm-packed", 1);
    let rounds = if quick { 3 } else { 15 };
    let shapes: &[(usize, usize, usize)] = if quick {
        &[(16, 256, 256), (64, 256, 256)]
    } else {
        &[
            (8, 1024, 1024),
            (16, 1024, 1024),
            (32, 2048, 512),
            (64, 1024, 1024),
            (256, 512, 512),
            (512, 512, 512),
        ]
    };
    let exec = Exec::default().threads(1);
    let mut out = format!(
        "{PACKED_NAME}: matmul_packed (B packed once) vs matmul, one thread, tier {:?}, best of {rounds} alternating samples\n{:<22} {:>12} {:>12} {:>9}\n",
        exec.resolve_tier().ok(),
        "m × k × n",
        "matmul GF/s",
        "packed GF/s",
        "packed ÷"
    );
    let mut ok = true;
    fn one<T: Elem>(
        (m, k, n): (usize, usize, usize),
        acc: tessera::DType,
        rng: &mut Rng,
        rounds: usize,
        exec: &Exec,
        out: &mut String,
    ) -> bool {
        let a: Vec<T> = (0..m * k).map(|_| T::of(rng.unit() - 0.5)).collect();
        let b: Vec<T> = (0..k * n).map(|_| T::of(rng.unit() - 0.5)).collect();
        let av = ArrayView::from_slice(&a, &[m, k]).unwrap();
        let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
        let packed = PackedB::new(&bv, acc, exec).unwrap();
        let mut y1 = vec![T::default(); m * n];
        let mut y2 = vec![T::default(); m * n];
        let plain = |y: &mut [T]| {
            matmul(
                &av,
                &bv,
                &mut ArrayViewMut::from_slice(y, &[m, n]).unwrap(),
                exec,
            )
            .unwrap()
        };
        let pk = |y: &mut [T]| {
            matmul_packed(
                &av,
                &packed,
                &mut ArrayViewMut::from_slice(y, &[m, n]).unwrap(),
                exec,
            )
            .unwrap()
        };
        plain(&mut y1);
        pk(&mut y2);
        let same = y1
            .iter()
            .zip(&y2)
            .all(|(p, q)| p.to().to_bits() == q.to().to_bits());
        let flops = 2.0 * (m * k * n) as f64;
        let inner = ((2e8 / flops).ceil() as usize).max(1);
        let mut best = [f64::INFINITY; 2];
        for r in 0..rounds {
            for s in 0..2 {
                let which = (s + r) % 2;
                let t = Instant::now();
                for _ in 0..inner {
                    if which == 0 {
                        plain(&mut y1)
                    } else {
                        pk(&mut y2)
                    }
                }
                best[which] = best[which].min(t.elapsed().as_secs_f64() / inner as f64);
            }
        }
        let (g1, g2) = (flops / best[0] / 1e9, flops / best[1] / 1e9);
        out.push_str(&format!(
            "{:<22} {:>12.1} {:>12.1} {:>9.2}{}\n",
            format!("{} {m}×{k}×{n}", acc),
            g1,
            g2,
            g2 / g1,
            if same { "" } else { "  BITS DIFFER" }
        ));
        same
    }
    for &(m, k, n) in shapes {
        ok &= one::<f32>(
            (m, k, n),
            tessera::DType::F32,
            &mut rng,
            rounds,
            &exec,
            &mut out,
        );
        ok &= one::<f64>(
            (m, k, n),
            tessera::DType::F64,
            &mut rng,
            rounds,
            &exec,
            &mut out,
        );
    }
    let chart = Chart::new(PACKED_NAME, "B packed once", "GFLOP/s");
    (out, ok, chart)
}
