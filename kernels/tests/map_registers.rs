//! The register path of `map` (programs of add, sub, mul, div, sqrt, fma,
//! neg, abs, min and max on one float dtype, run vector by vector on the AVX2 and
//! AVX-512 tiers, through the machine code and the interpreter)
//! against node-by-node evaluation: random programs of those kinds over
//! two or three inputs and constants, f32 and f64, with special values
//! (±0, ±∞, NaN, subnormals, huge and tiny numbers), lengths around the
//! vector, block, tile and span sizes, one row or several (rows shorter and
//! longer than a span of tiles, and past the size that runs on several
//! threads), inputs contiguous, strided (gathered) and broadcast (one
//! value), every operand in C order (packed or padded rows) or in Fortran
//! order (dense: the whole call at once), one or two outputs (an
//! intermediate node among them). Every tier's outputs must be the scalar tier's bit for bit (a NaN
//! as any NaN, ARCHITECTURE.md §5.1), and the scalar tier's must be an
//! independent evaluation of the same expression in Rust's own arithmetic.

mod common;

use tessera::map::{map, Program};
use tessera::{ArrayView, ArrayViewMut, DType, Exec};
use tessera_testkit::rng::Rng;

/// A random program's text and its model: node values from the inputs.
struct Case {
    text: String,
    /// Per node: (op, args) with op one of "x0".."x2", "c", "+", "-", "*",
    /// "/", "sqrt", "fma"; constants in `consts`.
    nodes: Vec<(&'static str, Vec<usize>, f64)>,
    outputs: Vec<usize>,
}

fn gen_case(rng: &mut Rng, inputs: usize, suffix: &str) -> Case {
    let mut nodes: Vec<(&'static str, Vec<usize>, f64)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for i in 0..inputs {
        nodes.push((["x0", "x1", "x2"][i], vec![], 0.0));
        names.push(format!("x{i}"));
    }
    let mut stmts = Vec::new();
    let count = 2 + rng.below_usize(7);
    for t in 0..count {
        let pick = |rng: &mut Rng, n: usize| rng.below_usize(n);
        let n = nodes.len();
        let op = *rng.pick(&[
            "+", "-", "*", "/", "sqrt", "fma", "c+", "neg", "abs", "min", "max",
        ]);
        let (label, args, c, expr) = match op {
            "sqrt" => {
                let a = pick(rng, n);
                ("sqrt", vec![a], 0.0, format!("sqrt({})", names[a]))
            }
            "neg" => {
                let a = pick(rng, n);
                ("neg", vec![a], 0.0, format!("-{}", names[a]))
            }
            "abs" => {
                let a = pick(rng, n);
                ("abs", vec![a], 0.0, format!("abs({})", names[a]))
            }
            "min" | "max" => {
                let (a, b) = (pick(rng, n), pick(rng, n));
                (
                    op,
                    vec![a, b],
                    0.0,
                    format!("{op}({}, {})", names[a], names[b]),
                )
            }
            "fma" => {
                let (a, b, d) = (pick(rng, n), pick(rng, n), pick(rng, n));
                (
                    "fma",
                    vec![a, b, d],
                    0.0,
                    format!("fma({}, {}, {})", names[a], names[b], names[d]),
                )
            }
            "c+" => {
                // A constant operand (uniform), then an add with it.
                let v = *rng.pick(&[0.5, -3.0, 1e30, 1e-30, 0.0]);
                nodes.push(("c", vec![], v));
                names.push(format!("{v:e}{suffix}"));
                let a = pick(rng, n);
                ("+", vec![a, n], 0.0, format!("{} + {}", names[a], names[n]))
            }
            o => {
                let (a, b) = (pick(rng, n), pick(rng, n));
                let label = match o {
                    "+" => "+",
                    "-" => "-",
                    "*" => "*",
                    _ => "/",
                };
                (
                    label,
                    vec![a, b],
                    0.0,
                    format!("{} {o} {}", names[a], names[b]),
                )
            }
        };
        nodes.push((label, args, c));
        let name = format!("t{t}");
        stmts.push(format!("{name} = {expr}"));
        names.push(name);
    }
    let last = nodes.len() - 1;
    let mut outputs = vec![last];
    stmts.push(format!("y0 = {}", names[last]));
    if rng.chance(1, 2) {
        // An intermediate (not a constant) as a second output.
        let k = (inputs..last).find(|&k| nodes[k].0 != "c").unwrap_or(last);
        outputs.push(k);
        stmts.push(format!("y1 = {}", names[k]));
    }
    Case {
        text: stmts.join("; "),
        nodes,
        outputs,
    }
}

trait F: Copy + Default + tessera::Element + std::fmt::Debug + PartialEq {
    const DT: DType;
    const SUFFIX: &'static str;
    fn of(v: f64) -> Self;
    fn eval(op: &str, a: &[Self], c: f64) -> Self;
    fn nan(self) -> bool;
    fn bits(self) -> u64;
}

macro_rules! f {
    ($t:ty, $dt:ident, $s:literal) => {
        impl F for $t {
            const DT: DType = DType::$dt;
            const SUFFIX: &'static str = $s;
            fn of(v: f64) -> Self {
                v as $t
            }
            fn eval(op: &str, a: &[Self], c: f64) -> Self {
                match op {
                    "c" => c as $t,
                    "+" => a[0] + a[1],
                    "-" => a[0] - a[1],
                    "*" => a[0] * a[1],
                    "/" => a[0] / a[1],
                    "sqrt" => a[0].sqrt(),
                    "neg" => -a[0],
                    "abs" => a[0].abs(),
                    // IEEE 754-2019 minimum and maximum: the smaller
                    // (larger); -0 below +0; a NaN operand gives a NaN.
                    "min" | "max" => {
                        let (x, y) = (a[0], a[1]);
                        if x.is_nan() || y.is_nan() {
                            <$t>::NAN
                        } else if x == y {
                            let (nx, ny) = (x.is_sign_negative(), y.is_sign_negative());
                            let neg = if op == "min" { nx || ny } else { nx && ny };
                            if neg {
                                -x.abs()
                            } else {
                                x.abs()
                            }
                        } else if (x < y) == (op == "min") {
                            x
                        } else {
                            y
                        }
                    }
                    _ => a[0].mul_add(a[1], a[2]),
                }
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
        }
    };
}
f!(f32, F32, "f32");
f!(f64, F64, "f64");

fn special<T: F>(rng: &mut Rng) -> T {
    let v = match rng.below(12) {
        0 => 0.0,
        1 => -0.0,
        2 => f64::INFINITY,
        3 => f64::NEG_INFINITY,
        4 => f64::NAN,
        5 => 1e-310,
        6 => 1e-40,
        7 => 3e38,
        _ => (rng.unit() - 0.5) * 2f64.powi(rng.below(40) as i32 - 20),
    };
    T::of(v)
}

fn run_case<T: F>(rng: &mut Rng) {
    let inputs = 2 + rng.below_usize(2);
    let case = gen_case(rng, inputs, T::SUFFIX);
    let program = Program::parse(&case.text, &vec![T::DT; inputs]).unwrap_or_else(|e| {
        panic!("{}: {e}", case.text);
    });
    // One row of n, or rows of `cols` (shorter than a span of tiles, or
    // longer and not a multiple of it, so spans stop at row ends; one
    // shape past the size that runs on several threads).
    let (rows, cols) = if rng.below_usize(4) == 0 {
        *rng.pick(&[
            (3usize, 5000usize),
            (2, 20000),
            (4, 1100),
            (3, 2048),
            (2, 17408),
            (2, 131_075),
        ])
    } else {
        let n = *rng.pick(&[
            1usize, 7, 8, 9, 63, 64, 65, 127, 2047, 2048, 2049, 5000, 16383, 16384, 16385, 40000,
        ]);
        (1, n)
    };
    let n = rows * cols;
    // Input 0 strided (every other element of a buffer: gathered) or
    // contiguous (read where it lies: the register path then runs spans of
    // tiles, or, where every operand is one dense block laid out alike,
    // the whole call at once), input 1 contiguous, input 2 (if any) one
    // broadcast value or an array laid out as input 1.
    let gathered = rng.below_usize(2) == 0;
    let step0 = if gathered { 2 } else { 1 };
    // Input 1, input 2 when it is an array, and the outputs: in C order
    // with rows `pitch` apart (packed, or padded: rows that no longer merge
    // into one axis; a run of whole tiles per row where `cols` is a
    // multiple of the tile, else tiles across rows), or in Fortran order
    // (column by column, packed: dense, but not in the loop's order).
    let fortran = rows > 1 && rng.below_usize(3) == 0;
    let pitch = if !fortran && rows > 1 && rng.below_usize(2) == 0 {
        cols + 9
    } else {
        cols
    };
    let (strides, at): ([isize; 2], Box<dyn Fn(usize) -> usize>) = if fortran {
        (
            [1, rows as isize],
            Box::new(move |i| i % cols * rows + i / cols),
        )
    } else {
        (
            [pitch as isize, 1],
            Box::new(move |i| i / cols * pitch + i % cols),
        )
    };
    let len = rows * pitch;
    let buf0: Vec<T> = (0..step0 * len).map(|_| special(rng)).collect();
    let x1: Vec<T> = (0..len).map(|_| special(rng)).collect();
    let x2: Vec<T> = if rng.below_usize(2) == 0 {
        vec![special(rng)]
    } else {
        (0..len).map(|_| special(rng)).collect()
    };
    let value = |k: usize, i: usize| -> T {
        match k {
            0 => buf0[step0 * at(i)],
            1 => x1[at(i)],
            _ if x2.len() == 1 => x2[0],
            _ => x2[at(i)],
        }
    };
    // The model, element by element.
    let want: Vec<Vec<T>> = case
        .outputs
        .iter()
        .map(|&o| {
            (0..n)
                .map(|i| {
                    let mut vals: Vec<T> = Vec::with_capacity(case.nodes.len());
                    for (k, (op, args, c)) in case.nodes.iter().enumerate() {
                        let v = if k < inputs {
                            value(k, i)
                        } else {
                            let a: Vec<T> = args.iter().map(|&j| vals[j]).collect();
                            T::eval(op, &a, *c)
                        };
                        vals.push(v);
                    }
                    vals[o]
                })
                .collect()
        })
        .collect();
    for tier in common::tiers() {
        for threads in [1, 2] {
            let mut outs: Vec<Vec<T>> = vec![vec![T::default(); len]; case.outputs.len()];
            {
                let shape = [rows, cols];
                let s0 = step0 as isize;
                let v0 = ArrayView::from_slice_strided(&buf0, &shape, &strides.map(|s| s * s0), 0)
                    .unwrap();
                let rs = strides;
                let v1 = ArrayView::from_slice_strided(&x1, &shape, &rs, 0).unwrap();
                let s2 = if x2.len() == 1 { [0, 0] } else { rs };
                let v2 = ArrayView::from_slice_strided(&x2, &shape, &s2, 0).unwrap();
                let ins: Vec<ArrayView<'_>> = [v0, v1, v2].into_iter().take(inputs).collect();
                let mut ovs: Vec<ArrayViewMut<'_>> = outs
                    .iter_mut()
                    .map(|o| ArrayViewMut::from_slice_strided(o, &shape, &rs, 0).unwrap())
                    .collect();
                map(&program, &ins, &mut ovs, &Exec::on(tier).threads(threads)).unwrap();
            }
            for (k, (got, want)) in outs.iter().zip(&want).enumerate() {
                for (i, g) in got.iter().enumerate() {
                    assert!(
                        fortran || i % pitch < cols || g.bits() == T::default().bits(),
                        "{:?} `{}` output {k}: padding at {i} written",
                        T::DT,
                        case.text
                    );
                }
                for i in 0..n {
                    let (g, w) = (got[at(i)], want[i]);
                    assert!(
                        g.bits() == w.bits() || (g.nan() && w.nan()),
                        "{:?} `{}` n {n} output {k} index {i} {tier:?}: {g:?} vs {w:?}",
                        T::DT,
                        case.text
                    );
                }
            }
        }
    }
}

#[test]
fn register_path_matches_node_by_node_evaluation() {
    let mut rng = Rng::for_label("map/registers", 1);
    for _ in 0..150 {
        run_case::<f32>(&mut rng);
        run_case::<f64>(&mut rng);
    }
}
