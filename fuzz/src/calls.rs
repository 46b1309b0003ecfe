//! Call files of `tessera run`: a directory of operand files ([`Bank`]),
//! structured calls of every kernel the command routes (the elementwise
//! kinds of the catalogue and the sixteen others) with valid and invalid
//! attributes, operand and result names, paths, dtypes, shapes, tiers and
//! thread counts; byte mutations of them; a snapshot of the directory to
//! check that a refused call creates and changes no file; and slow models of
//! a few calls (add, sub and mul of f32 and f64, a cast of f32 to f64, the
//! sum of an i64 array) computed from the values the bank wrote.

use crate::program::random_text;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tessera::Kind;
use tessera_cli::npy::{self, NpyType};
use tessera_testkit::rng::Rng;

/// An operand file of the bank and the values it holds (for the models).
#[derive(Clone, Debug)]
pub struct File {
    /// The file name.
    pub name: &'static str,
    /// Its numpy type.
    pub dtype: NpyType,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its values as f64 (floats) or as i64 bit patterns cast (integers).
    pub values: Vec<f64>,
    /// Its integer values (integers only).
    pub ints: Vec<i64>,
}

/// The directory the calls run in and the operand files in it.
pub struct Bank {
    /// The directory.
    pub dir: PathBuf,
    /// The operand files.
    pub files: Vec<File>,
}

fn f32_values(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| match rng.below(10) {
            0 => *rng.pick(&[0.0, -0.0, f64::INFINITY, f64::NAN, 1e-40, -3.5e38]),
            _ => rng.spread() as f32 as f64,
        })
        .collect()
}

impl Bank {
    /// Write the operand files into a fresh directory `tag` under
    /// `/dev/shm` where this system has it (a file system in memory, where
    /// the command's syncs of its results cost nothing), else under the
    /// system's temporary directory.
    ///
    /// The calls run under a result budget of 256 MiB and a work budget of
    /// 2^27 steps (the CLI's `TESSERA_MAX_RESULT_BYTES` and
    /// `TESSERA_MAX_WORK`, unless the environment sets them), so that a call
    /// asking for a huge result or endless work from a tiny operand meets
    /// the CLI's stated refusal instead of the machine's memory limit or the
    /// run's patience.
    pub fn new(tag: &str, rng: &mut Rng) -> Bank {
        if std::env::var_os(tessera_cli::budget::BYTES_ENV).is_none() {
            std::env::set_var(tessera_cli::budget::BYTES_ENV, "268435456");
        }
        if std::env::var_os(tessera_cli::budget::WORK_ENV).is_none() {
            std::env::set_var(tessera_cli::budget::WORK_ENV, "134217728");
        }
        let shm = Path::new("/dev/shm");
        let root =
            if shm.is_dir() && std::fs::metadata(shm).is_ok_and(|m| !m.permissions().readonly()) {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            };
        let dir = root.join(format!("tessera-fuzz-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let mut files = Vec::new();
        let float = |name, dtype: NpyType, shape: &[usize], rng: &mut Rng| {
            let n: usize = shape.iter().product();
            let mut values = f32_values(rng, n);
            if dtype == NpyType::F32 {
                values.iter_mut().for_each(|v| *v = *v as f32 as f64);
            }
            let data: Vec<u8> = if dtype == NpyType::F32 {
                values
                    .iter()
                    .flat_map(|&v| (v as f32).to_le_bytes())
                    .collect()
            } else {
                values.iter().flat_map(|&v| v.to_le_bytes()).collect()
            };
            std::fs::write(dir.join(name), npy::encode(dtype, shape, &data).unwrap()).unwrap();
            File {
                name,
                dtype,
                shape: shape.to_vec(),
                values,
                ints: Vec::new(),
            }
        };
        files.push(float("a.npy", NpyType::F32, &[2, 3], rng));
        files.push(float("b.npy", NpyType::F32, &[2, 3], rng));
        files.push(float("c.npy", NpyType::F32, &[3], rng));
        files.push(float("s.npy", NpyType::F32, &[], rng));
        files.push(float("d.npy", NpyType::F64, &[2, 3], rng));
        files.push(float("e.npy", NpyType::F64, &[3], rng));
        files.push(float("x32.npy", NpyType::F32, &[2, 32], rng));
        files.push(float("m1.npy", NpyType::F32, &[3, 4], rng));
        files.push(float("m2.npy", NpyType::F32, &[4, 2], rng));
        files.push(float("z.npy", NpyType::F32, &[0, 3], rng));
        files.push(float("v.npy", NpyType::F64, &[40], rng));
        let int = |name, dtype: NpyType, shape: &[usize], rng: &mut Rng| {
            let n: usize = shape.iter().product();
            let ints: Vec<i64> = (0..n)
                .map(|_| match rng.below(4) {
                    0 => *rng.pick(&[i64::MIN, i64::MAX, -1, 0, 1 << 62]),
                    _ => rng.range_i64(-100, 100),
                })
                .collect();
            let size = dtype.size();
            let data: Vec<u8> = ints
                .iter()
                .flat_map(|v| v.to_le_bytes()[..size].to_vec())
                .collect();
            std::fs::write(dir.join(name), npy::encode(dtype, shape, &data).unwrap()).unwrap();
            let values = ints.iter().map(|&v| v as f64).collect();
            File {
                name,
                dtype,
                shape: shape.to_vec(),
                values,
                ints,
            }
        };
        files.push(int("i.npy", NpyType::I64, &[2, 3], rng));
        files.push(int("j.npy", NpyType::I32, &[2, 3], rng));
        files.push(int("u.npy", NpyType::U8, &[2, 3], rng));
        files.push(int("q1.npy", NpyType::I8, &[3, 4], rng));
        files.push(int("q2.npy", NpyType::I8, &[4, 2], rng));
        files.push(int("p.npy", NpyType::U8, &[2, 1], rng));
        files.push(int("bo.npy", NpyType::Bool, &[2, 3], rng));
        // Fixed files of the hostile generators (crate::hostile): group ids
        // of a depth of 4 and plain f64 values.
        let fixed = |name, dtype: NpyType, shape: &[usize], data: Vec<u8>| {
            std::fs::write(dir.join(name), npy::encode(dtype, shape, &data).unwrap()).unwrap();
        };
        fixed(
            "g.npy",
            NpyType::I64,
            &[4],
            [0i64, 1, 1, 3]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        );
        fixed(
            "w.npy",
            NpyType::F64,
            &[3],
            [0.5f64, -2.0, 3.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        );
        // A Fortran-order file, a file that is not a .npy file, and the
        // encodings the format calls read (written by the command itself).
        let fortran: Vec<u8> = (0..6u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
        let mut f = npy::encode(NpyType::F32, &[2, 3], &fortran).unwrap();
        let at = f.windows(5).position(|w| w == b"False").unwrap();
        f.splice(at..at + 5, b"True ".iter().copied());
        std::fs::write(dir.join("f.npy"), f).unwrap();
        std::fs::write(dir.join("junk.npy"), b"not an array").unwrap();
        let bank = Bank { dir, files };
        for call in [
            r#"{"kernel": "encode", "attrs": {"format": "mxfp8_e4m3"}, "operands": {"x": {"npy": "x32.npy"}}, "results": {"codes": {"npy": "mc.npy"}, "scales": {"npy": "ms.npy"}}}"#,
            r#"{"kernel": "encode", "attrs": {"format": "nvfp4"}, "operands": {"x": {"npy": "x32.npy"}}, "results": {"codes": {"npy": "nc.npy"}, "scales": {"npy": "ns.npy"}, "tensor_scale": {"npy": "nt.npy"}}}"#,
        ] {
            let r = bank.run(call);
            assert!(r.is_ok(), "the bank's encode call runs: {r:?}");
        }
        bank
    }

    /// Run a call file's text through the command in-process.
    pub fn run(&self, text: &str) -> Result<u8, tessera_cli::Failure> {
        self.write_call(text);
        self.run_written()
    }

    /// Write the call file `call.json`.
    pub fn write_call(&self, text: &str) {
        std::fs::write(self.dir.join("call.json"), text).expect("the call file is written");
    }

    /// Run the call file written by [`Bank::write_call`].
    pub fn run_written(&self) -> Result<u8, tessera_cli::Failure> {
        let path = self.dir.join("call.json");
        let args = vec!["run".to_string(), path.display().to_string()];
        let mut out = Vec::new();
        tessera_cli::main_with(&args, &mut out)
    }

    /// Every file of the directory and its bytes.
    pub fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        snapshot(&self.dir)
    }

    /// Every entry of the directory and its identity: inode, length and
    /// modification time. A file written in place changes its time (and
    /// maybe its length); one renamed over changes its inode; so equal
    /// identities say no file was created, removed or changed, without
    /// reading any.
    pub fn stat(&self) -> BTreeMap<String, (u64, u64, i128)> {
        use std::os::unix::fs::MetadataExt;
        let mut out = BTreeMap::new();
        if let Ok(rd) = std::fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Ok(m) = e.metadata() {
                    let t = m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
                    out.insert(name, (m.ino(), m.len(), t));
                }
            }
        }
        out
    }

    /// Put the directory back as `snap` holds it, touching only the entries
    /// whose identity differs from `base` (as [`Bank::stat`] gives it).
    pub fn restore(
        &self,
        snap: &BTreeMap<String, Vec<u8>>,
        base: &BTreeMap<String, (u64, u64, i128)>,
    ) {
        let now = self.stat();
        if &now == base {
            return;
        }
        for (name, id) in &now {
            if base.get(name) == Some(id) {
                continue;
            }
            let path = self.dir.join(name);
            match snap.get(name) {
                None if path.is_dir() => {
                    let _ = std::fs::remove_dir_all(&path);
                }
                None => {
                    let _ = std::fs::remove_file(&path);
                }
                Some(b) => std::fs::write(&path, b).unwrap(),
            }
        }
        for (name, bytes) in snap {
            if !now.contains_key(name) {
                std::fs::write(self.dir.join(name), bytes).unwrap();
            }
        }
    }

    /// The bank's file named `name`.
    pub fn file(&self, name: &str) -> Option<&File> {
        self.files.iter().find(|f| f.name == name)
    }
}

impl Drop for Bank {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every regular file under `dir` (one level, and the directories in it
/// named as such) with its bytes.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if path.is_dir() {
                out.insert(format!("{name}/"), Vec::new());
            } else {
                out.insert(name, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

/// A slow model of a call's result.
#[derive(Clone, Debug)]
pub enum Model {
    /// `y = x0 op x1` elementwise, in the files' float dtype (broadcast).
    Binary {
        /// add, sub or mul.
        op: &'static str,
        /// The files.
        x0: &'static str,
        /// The files.
        x1: &'static str,
        /// The float dtype (f32 or f64).
        dtype: NpyType,
    },
    /// `y` (f64) = cast of the f32 file `x`; saturating (infinities
    /// clamp to the largest finite f64) when the flag says so.
    CastF64(&'static str, bool),
    /// `y` (i64, shape []) = the wrapping sum of the i64 file `x`.
    SumI64(&'static str),
    /// `y` (f64, of `shape`) holds `value` (its bits) everywhere.
    Constant {
        /// The value.
        value: f64,
        /// The result's shape.
        shape: Vec<usize>,
    },
}

/// A generated call: its text, the result files created before it runs
/// (with their bytes), and a model of its result where it has one.
#[derive(Clone, Debug)]
pub struct CallCase {
    /// The call file's text.
    pub text: String,
    /// Files written before the call (pre-existing destinations).
    pub pre: Vec<(String, Vec<u8>)>,
    /// The model of `y.npy`, for calls that must succeed.
    pub model: Option<Model>,
}

const OTHER_KERNELS: &[&str] = &[
    "cast",
    "contract",
    "map",
    "encode",
    "decode",
    "transcode",
    "reduce",
    "scan",
    "series",
    "random",
    "quantize",
    "dequantize",
    "polyval",
    "qmatmul_i8",
    "requantize_i8",
    "sum_lanes",
    "attention",
    "spline",
    "terms",
];

const DTYPES: &[&str] = &[
    "f32", "f64", "i64", "i32", "u8", "i8", "bool", "f16", "bf16", "c64", "c128", "i4", "u4", "u1",
    "e4m3fn", "e5m2", "e2m1fn", "e8m0fnu", "float32", "bfloat16", "F32", "q8", "",
];

const FORMATS: &[&str] = &[
    "mxfp8_e4m3",
    "mxfp8_e5m2",
    "mxfp6_e2m3",
    "mxfp6_e3m2",
    "mxfp4",
    "mxint8",
    "nvfp4",
    "mxfp9",
];

fn any_file(rng: &mut Rng, bank: &Bank) -> String {
    match rng.below(20) {
        0 => "nope.npy".into(),
        1 => "junk.npy".into(),
        2 => "f.npy".into(),
        3 => "call.json".into(),
        4 => ".".into(),
        5 => "/dev/zero".into(),
        6 => rng
            .pick(&["mc.npy", "ms.npy", "nc.npy", "ns.npy", "nt.npy"])
            .to_string(),
        _ => rng.pick(&bank.files).name.to_string(),
    }
}

fn random_json_value(rng: &mut Rng) -> Value {
    match rng.below(10) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(1e300),
        4 => json!(u64::MAX),
        5 => json!("x"),
        6 => json!([]),
        7 => json!([[0, 0]]),
        8 => json!({"a": 1}),
        _ => json!(rng.below(5)),
    }
}

/// A value for attribute `key` of `kernel`: mostly valid, sometimes not.
fn attr_value(rng: &mut Rng, kernel: &str, key: &str) -> Value {
    if rng.chance(1, 10) {
        return random_json_value(rng);
    }
    match key {
        "mode" if kernel == "terms" => json!(rng.pick(&["combine", "exp", "phi"])),
        "count" if kernel == "terms" => json!(rng.pick(&[0, 1, 3, 8, 9, -1])),
        "mode" => json!(rng.pick(&["default", "saturating", "wrap"])),
        "weights" | "constant_tails" => {
            json!(rng.pick(&[vec![1.0, 0.5], vec![], vec![0.25], vec![1e300, -1.0, 3.0]]))
        }
        "coefficients" => json!(rng.pick(&[
            vec![vec![0.0, 0.0, 1.0, 0.5]],
            vec![],
            vec![vec![1.0, 2.0, 3.0]],
            vec![vec![0.1, 0.2, 0.3, 0.4], vec![1e300, 0.0, 0.0, 0.0]]
        ])),
        "log_e0" | "x_min" | "x_max" | "below" | "above" | "width" | "sign" => {
            json!(rng.pick(&[0.0, 1.0, -1.0, 0.5, 1e300, -1e-300, 40.0]))
        }
        "output" if kernel == "spline" => json!(rng.pick(&["exp", "linear", "log"])),
        "contracting" => json!(rng.pick(&[vec![[1, 0]], vec![[0, 0]], vec![[1, 1]], vec![[5, 0]]])),
        "batch" => json!(rng.pick(&[Vec::<[usize; 2]>::new(), vec![[0, 0]]])),
        "acc" => {
            json!(rng.pick(&["f32", "f64", "i32", "i64", "c64", "c128", "u8", "df32", "dd64"]))
        }
        "format" | "from" | "to" => json!(rng.pick(FORMATS)),
        "rule" => json!(rng.pick(&["floor", "ceil", "nvfp4", "round"])),
        "program" => {
            if rng.chance(1, 3) {
                json!(rng.pick(&[
                    "y0 = x0 * x0",
                    "y0 = x0 + 1f32",
                    "y0 = x0 > 0f32; y1 = -x0",
                    "y0 = 1f32",
                    "y18446744073709551615 = x0"
                ]))
            } else {
                json!(random_text(rng).text)
            }
        }
        "op" if kernel == "series" => json!(rng.pick(&[
            "diff",
            "rolling_min",
            "rolling_max",
            "rolling_mean",
            "ema",
            "sum_squared_deviations",
            "cumsum"
        ])),
        "op" => {
            let ops = [
                "sum2",
                "sum_doubling",
                "sum",
                "prod",
                "max",
                "min",
                "argmax",
                "argmin",
                "logsumexp",
                "mean",
                "variance",
                "l2norm",
                "median",
            ];
            if kernel == "reduce" && rng.chance(1, 4) {
                json!([rng.pick(&ops), rng.pick(&ops)])
            } else {
                json!(rng.pick(&ops))
            }
        }
        "axes" => json!(rng.pick(&[
            vec![0usize],
            vec![1],
            vec![0, 1],
            vec![],
            vec![1, 1],
            vec![7]
        ])),
        "axis" => json!(rng.below(3)),
        "terms" => json!(rng.pick(&[
            "square",
            "abs",
            "product",
            "squared_difference",
            "abs_difference",
            "cube"
        ])),
        "output" => json!(rng.below(3)),
        "shape" => json!(rng.pick(&[
            vec![2usize, 3],
            vec![6],
            vec![3, 6148914691236517206],
            vec![4611686018427387904],
            vec![0, 3]
        ])),
        "window" => json!(rng.pick(&[0usize, 1, 3, 40, 1 << 62])),
        "alpha" | "centre" => json!(rng.pick(&[0.5, 0.0, 1.0, -1.0, 2.0])),
        "seed" => json!(rng.next_u64()),
        "scale" => json!(rng.pick(&[0.5, 1.0, 0.0, -1.0, 1e-300, 1e300])),
        "zero_point" => json!(rng.pick(&[0i64, 3, -128, 255, 1 << 40])),
        "coeffs" => json!(rng.pick(&[
            vec![1.0, 2.0],
            vec![],
            vec![0.5],
            vec![1.0, -1.0, 3.0, 1e300]
        ])),
        _ => random_json_value(rng),
    }
}

/// The operands, results and attributes a kernel takes.
fn signature(kernel: &str) -> (Vec<&'static str>, Vec<&'static str>, Vec<&'static str>) {
    if let Some(kind) = Kind::from_name(kernel) {
        let names = ["x0", "x1", "x2", "x3"];
        return (
            names[..kind.info().arity.min(4)].to_vec(),
            vec!["y"],
            vec![],
        );
    }
    match kernel {
        "cast" => (vec!["x"], vec!["y"], vec!["mode"]),
        "contract" => (
            vec!["a", "b", "init"],
            vec!["y"],
            vec!["contracting", "batch", "acc"],
        ),
        "map" => (vec!["x0", "x1"], vec!["y0", "y1"], vec!["program"]),
        "encode" => (
            vec!["x"],
            vec!["codes", "scales", "tensor_scale"],
            vec!["format", "rule"],
        ),
        "decode" => (
            vec!["codes", "scales", "tensor_scale"],
            vec!["y"],
            vec!["format"],
        ),
        "transcode" => (
            vec!["codes", "scales", "tensor_scale"],
            vec!["codes", "scales", "tensor_scale"],
            vec!["from", "to", "rule"],
        ),
        "reduce" => (
            vec!["x", "x0", "x1"],
            vec!["y", "y0", "y1"],
            vec!["op", "axes", "terms", "program", "output", "shape"],
        ),
        "scan" => (
            vec!["x", "carry", "x0"],
            vec!["y"],
            vec!["op", "axis", "program", "output", "shape"],
        ),
        "series" => (
            vec!["x"],
            vec!["y"],
            vec!["op", "window", "alpha", "centre"],
        ),
        "random" => (vec![], vec!["y"], vec!["seed"]),
        "quantize" | "dequantize" => (
            vec!["x", "scale", "zero_point"],
            vec!["y"],
            vec!["scale", "zero_point", "axis"],
        ),
        "polyval" => (vec!["x"], vec!["y"], vec!["coeffs"]),
        "qmatmul_i8" => (vec!["a", "b"], vec!["y"], vec![]),
        "requantize_i8" => (vec!["x"], vec!["y"], vec!["scale", "zero_point"]),
        "sum_lanes" => (vec!["x"], vec!["y"], vec![]),
        "spline" => (
            vec!["x"],
            vec!["y"],
            vec![
                "log_e0",
                "width",
                "coefficients",
                "constant_tails",
                "x_min",
                "x_max",
                "below",
                "above",
                "output",
            ],
        ),
        "terms" => (
            vec!["terms"],
            vec!["y", "moments"],
            vec!["weights", "mode", "sign", "count"],
        ),
        "attention" => (
            vec!["q", "k", "v", "lengths", "x1"],
            vec!["o", "lse"],
            vec!["scale", "acc", "program"],
        ),
        _ => (vec!["x"], vec!["y"], vec![]),
    }
}

/// A file suited to operand `name` of `kernel` (mostly).
fn operand_file(rng: &mut Rng, bank: &Bank, kernel: &str, name: &str) -> String {
    if rng.chance(1, 6) {
        return any_file(rng, bank);
    }
    let pick = |rng: &mut Rng, xs: &[&str]| rng.pick(xs).to_string();
    match (kernel, name) {
        ("encode", _) => pick(rng, &["x32.npy", "a.npy", "z.npy", "d.npy"]),
        ("decode" | "transcode", "codes") => pick(rng, &["mc.npy", "nc.npy"]),
        ("decode" | "transcode", "scales") => pick(rng, &["ms.npy", "ns.npy"]),
        ("decode" | "transcode", _) => pick(rng, &["nt.npy", "s.npy"]),
        ("contract", "a") => pick(rng, &["m1.npy", "a.npy"]),
        ("contract", "b") => pick(rng, &["m2.npy", "c.npy"]),
        ("qmatmul_i8", "a") => pick(rng, &["q1.npy", "u.npy"]),
        ("qmatmul_i8", _) => pick(rng, &["q2.npy", "q1.npy"]),
        ("requantize_i8", _) => pick(rng, &["j.npy", "i.npy"]),
        ("series" | "sum_lanes", _) => pick(rng, &["v.npy", "c.npy", "a.npy"]),
        _ => pick(
            rng,
            &[
                "a.npy", "b.npy", "c.npy", "s.npy", "d.npy", "e.npy", "i.npy", "j.npy", "u.npy",
                "bo.npy", "p.npy", "z.npy",
            ],
        ),
    }
}

/// A structured call: every field drawn for the kernel, mostly valid.
pub fn structured(rng: &mut Rng, bank: &Bank) -> CallCase {
    if rng.chance(1, 8) {
        return model_call(rng, bank);
    }
    if rng.chance(1, 6) {
        return crate::hostile::hostile(rng, bank);
    }
    let kernel: String = if rng.chance(1, 2) {
        rng.pick(OTHER_KERNELS).to_string()
    } else if rng.chance(1, 30) {
        rng.pick(&["frobnicate", "", "ADD", "add ", "kernels"])
            .to_string()
    } else {
        rng.pick(&Kind::ALL).name().to_string()
    };
    let (operands, results, attrs) = signature(&kernel);
    let mut call = Map::new();
    call.insert("kernel".into(), json!(kernel));
    let mut a = Map::new();
    for key in &attrs {
        if rng.chance(2, 3) {
            a.insert(key.to_string(), attr_value(rng, &kernel, key));
        }
    }
    if rng.chance(1, 20) {
        a.insert("bogus".into(), json!(1));
    }
    if !a.is_empty() || rng.chance(1, 2) {
        call.insert("attrs".into(), Value::Object(a));
    }
    let mut ops = Map::new();
    for (i, name) in operands.iter().enumerate() {
        // The optional operands (init, carry, the per-channel parameters,
        // the tensor scale) mostly stay out.
        let optional = i > 0
            && matches!(
                *name,
                "init" | "carry" | "scale" | "zero_point" | "tensor_scale" | "x0" | "x1"
            )
            && !(kernel == "map" || Kind::from_name(&kernel).is_some());
        if optional && rng.chance(3, 4) {
            continue;
        }
        let mut o = Map::new();
        o.insert("npy".into(), json!(operand_file(rng, bank, &kernel, name)));
        if rng.chance(1, 3) {
            o.insert("dtype".into(), json!(rng.pick(DTYPES)));
        }
        if rng.chance(1, 10) {
            o.insert("packed".into(), json!(rng.chance(1, 2)));
        }
        let name = if rng.chance(1, 20) { "x9" } else { name };
        ops.insert(name.to_string(), Value::Object(o));
    }
    call.insert("operands".into(), Value::Object(ops));
    let mut res = Map::new();
    let mut pre = Vec::new();
    let n_res = if results.len() > 1 && rng.chance(1, 2) {
        1
    } else {
        results.len()
    };
    for name in &results[..n_res] {
        let mut o = Map::new();
        let path = match rng.below(12) {
            0 => "a.npy".to_string(),
            1 => "sub/y.npy".to_string(),
            2 => "y.npy".to_string(),
            3 => ".".to_string(),
            _ => format!("out_{name}.npy"),
        };
        if rng.chance(1, 2) {
            pre.push((path.clone(), vec![0xa5; 1 + rng.below_usize(100)]));
        }
        o.insert("npy".into(), json!(path));
        if rng.chance(1, 3) {
            o.insert("dtype".into(), json!(rng.pick(DTYPES)));
        }
        if rng.chance(1, 4) {
            let shape: Value = json!(rng.pick(&[
                vec![2usize, 3],
                vec![3],
                vec![],
                vec![2, 16],
                vec![0, 3],
                vec![1 << 40, 1 << 40]
            ]));
            o.insert("shape".into(), shape);
        }
        if rng.chance(1, 10) {
            o.insert("packed".into(), json!(true));
        }
        res.insert(name.to_string(), Value::Object(o));
    }
    call.insert("results".into(), Value::Object(res));
    if rng.chance(1, 5) {
        call.insert(
            "tier".into(),
            json!(rng.pick(&["scalar", "avx2", "avx512", "sse9"])),
        );
    }
    if rng.chance(1, 5) {
        call.insert("threads".into(), json!(rng.pick(&[0usize, 1, 2, 7, 5000])));
    }
    // Pre-existing destinations are written before the call; only those
    // whose directory exists.
    pre.retain(|(p, _)| !p.contains('/') && p != "." && bank.file(p).is_none());
    // Two results naming one file: the file holds what was written last.
    let mut seen = std::collections::HashSet::new();
    pre.reverse();
    pre.retain(|(p, _)| seen.insert(p.clone()));
    CallCase {
        text: Value::Object(call).to_string(),
        pre,
        model: None,
    }
}

/// A valid call with a slow model of its result `y.npy`.
fn model_call(rng: &mut Rng, bank: &Bank) -> CallCase {
    let _ = bank;
    let pre = if rng.chance(1, 2) {
        vec![("y.npy".to_string(), vec![0x5a; 17])]
    } else {
        Vec::new()
    };
    let threads = *rng.pick(&[0usize, 1, 3]);
    let tier = *rng.pick(&["scalar", "avx2", "avx512"]);
    let tier = if tessera::tier::parse_tier(tier).is_ok() {
        tier
    } else {
        "scalar"
    };
    let (text, model) = match rng.below(3) {
        0 => {
            let op = *rng.pick(&["add", "sub", "mul"]);
            let (files, dtype): (&[&'static str], NpyType) = if rng.chance(1, 2) {
                (&["a.npy", "b.npy", "c.npy", "s.npy"], NpyType::F32)
            } else {
                (&["d.npy", "e.npy"], NpyType::F64)
            };
            let x0 = *rng.pick(files);
            let x1 = *rng.pick(files);
            (
                json!({"kernel": op, "operands": {"x0": {"npy": x0}, "x1": {"npy": x1}},
                       "results": {"y": {"npy": "y.npy"}}, "tier": tier, "threads": threads}),
                Model::Binary { op, x0, x1, dtype },
            )
        }
        1 => {
            let x = *rng.pick(&["a.npy", "c.npy", "s.npy", "x32.npy", "z.npy"]);
            let mode = *rng.pick(&["default", "saturating"]);
            (
                json!({"kernel": "cast", "attrs": {"mode": mode}, "operands": {"x": {"npy": x}},
                       "results": {"y": {"npy": "y.npy", "dtype": "f64"}}, "tier": tier, "threads": threads}),
                Model::CastF64(x, mode == "saturating"),
            )
        }
        _ => (
            json!({"kernel": "reduce", "attrs": {"op": "sum", "axes": [0, 1]},
                   "operands": {"x": {"npy": "i.npy"}},
                   "results": {"y": {"npy": "y.npy", "dtype": "i64", "shape": []}}, "tier": tier, "threads": threads}),
            Model::SumI64("i.npy"),
        ),
    };
    CallCase {
        text: text.to_string(),
        pre,
        model: Some(model),
    }
}

/// Words a mutation of a call file may insert.
pub const WORDS: &[&[u8]] = &[
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
    b"\"c128\"",
    b"\"program\"",
    b"\"axes\"",
    b"\"op\"",
    b"\\u0000",
    b"\"/dev/zero\"",
    b"\"../a.npy\"",
    b"[1099511627776, 1099511627776]",
    b"\"format\"",
    b"\"nvfp4\"",
    b"\"tensor_scale\"",
    b"\"y0\"",
    b"\"y1\"",
];

/// The values of a result file the model checks: its shape and its
/// elements as f64 (f32, f64) or i64.
fn read_values(path: &Path) -> Result<(Vec<usize>, NpyType, Vec<u8>), String> {
    let a =
        npy::read(path).map_err(|e| format!("the result {} does not read: {e}", path.display()))?;
    Ok((a.shape, a.dtype, a.data))
}

fn broadcast2(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|k| {
            let x = if k + a.len() >= n {
                a[k + a.len() - n]
            } else {
                1
            };
            let y = if k + b.len() >= n {
                b[k + b.len() - n]
            } else {
                1
            };
            if x == 1 {
                y
            } else {
                x
            }
        })
        .collect()
}

fn at(f: &File, shape: &[usize], flat: usize) -> f64 {
    // The element of f broadcast to `shape` at C-order index `flat`.
    let mut rem = flat;
    let mut idx = vec![0usize; shape.len()];
    for k in (0..shape.len()).rev() {
        idx[k] = rem % shape[k];
        rem /= shape[k];
    }
    let lead = shape.len() - f.shape.len();
    let mut p = 0;
    for (k, &e) in f.shape.iter().enumerate() {
        p = p * e + if e == 1 { 0 } else { idx[lead + k] };
    }
    f.values[p]
}

/// Check `y.npy` against the model; returns the number of comparisons.
pub fn check_model(bank: &Bank, model: &Model) -> Result<u64, String> {
    let (shape, dtype, data) = read_values(&bank.dir.join("y.npy"))?;
    match model {
        Model::Binary {
            op,
            x0,
            x1,
            dtype: d,
        } => {
            let (a, b) = (bank.file(x0).unwrap(), bank.file(x1).unwrap());
            let want_shape = broadcast2(&a.shape, &b.shape);
            if shape != want_shape || dtype != *d {
                return Err(format!(
                    "{op}: result {dtype} {shape:?}, the model's {d} {want_shape:?}"
                ));
            }
            let n: usize = shape.iter().product();
            for i in 0..n {
                let (u, v) = (at(a, &shape, i), at(b, &shape, i));
                let exact = match *op {
                    "add" => u + v,
                    "sub" => u - v,
                    _ => u * v,
                };
                let (got, want) = if *d == NpyType::F32 {
                    let g = f32::from_le_bytes(data[4 * i..4 * i + 4].try_into().unwrap());
                    (g as f64, exact as f32 as f64)
                } else {
                    (
                        f64::from_le_bytes(data[8 * i..8 * i + 8].try_into().unwrap()),
                        exact,
                    )
                };
                if got.to_bits() != want.to_bits() && !(got.is_nan() && want.is_nan()) {
                    return Err(format!(
                        "{op}: element {i} is {got:e}, the model says {want:e} ({u:e} {op} {v:e})"
                    ));
                }
            }
            Ok(n as u64)
        }
        Model::CastF64(x, saturating) => {
            let a = bank.file(x).unwrap();
            if shape != a.shape || dtype != NpyType::F64 {
                return Err(format!(
                    "cast: result {dtype} {shape:?}, the model's f64 {:?}",
                    a.shape
                ));
            }
            for (i, &v) in a.values.iter().enumerate() {
                let v = if *saturating && v.is_infinite() {
                    f64::MAX.copysign(v)
                } else {
                    v
                };
                let got = f64::from_le_bytes(data[8 * i..8 * i + 8].try_into().unwrap());
                if got.to_bits() != v.to_bits() && !(got.is_nan() && v.is_nan()) {
                    return Err(format!(
                        "cast: element {i} is {got:e}, the model says {v:e}"
                    ));
                }
            }
            Ok(a.values.len() as u64)
        }
        Model::Constant { value, shape: want } => {
            if &shape != want || dtype != NpyType::F64 {
                return Err(format!(
                    "constant: result {dtype} {shape:?}, the model's f64 {want:?}"
                ));
            }
            for (i, c) in data.chunks(8).enumerate() {
                let got = f64::from_le_bytes(c.try_into().unwrap());
                if got.to_bits() != value.to_bits() {
                    return Err(format!(
                        "constant: element {i} is {got:?}, the model says {value:?}"
                    ));
                }
            }
            Ok(data.len() as u64 / 8)
        }
        Model::SumI64(x) => {
            let a = bank.file(x).unwrap();
            let want = a.ints.iter().fold(0i64, |s, &v| s.wrapping_add(v));
            if !shape.is_empty() || dtype != NpyType::I64 {
                return Err(format!("sum: result {dtype} {shape:?}, the model's i64 []"));
            }
            let got = i64::from_le_bytes(data[..8].try_into().unwrap());
            if got != want {
                return Err(format!("sum: {got}, the model says {want}"));
            }
            Ok(1)
        }
    }
}
