//! Hostile call files: a few bytes that name huge or endless work. Huge pads
//! (and windows) on one-element and small operands, calls naming many
//! operands or pieces (some missing, some not canonical), large group counts
//! of grouped contractions, long windows of the series kernels, and numeric
//! attributes given as every kind of number string (shortest round-trip
//! strings of random doubles, subnormals, ±0, the largest finite values,
//! out-of-range exponents, integers past 2^53 and past 2^64). Each must be
//! refused by a budget or an attribute check, or finish (the harness holds
//! a long run's cases to a time limit); a number string a degree-0
//! polynomial reads has a model: the result is the string's nearest double.

use crate::calls::{Bank, CallCase, Model};
use serde_json::{json, Value};
use tessera_testkit::rng::Rng;

/// Counts from small to far beyond any budget.
const COUNTS: &[u64] = &[
    0,
    1,
    2,
    3,
    40,
    1 << 10,
    1 << 16,
    1 << 20,
    1 << 24,
    1 << 28,
    1 << 31,
    1 << 32,
    1 << 40,
    1 << 62,
    u64::MAX,
];

fn count(rng: &mut Rng) -> u64 {
    *rng.pick(COUNTS)
}

/// A pad of `rank` entries: `[before, after]` or a window
/// `[before, after, size, stride, dilation]`, from [`COUNTS`].
fn pad(rng: &mut Rng, rank: usize) -> Value {
    let entries: Vec<Vec<u64>> = (0..rank)
        .map(|_| {
            let (b, a) = if rng.chance(1, 2) {
                (count(rng), 0)
            } else {
                (rng.below(3), count(rng))
            };
            if rng.chance(1, 3) {
                vec![b, a, count(rng), 1 + rng.below(3), 1 + rng.below(2)]
            } else {
                vec![b, a]
            }
        })
        .collect();
    json!(entries)
}

/// A hostile call of one of the five kinds above.
pub fn hostile(rng: &mut Rng, bank: &Bank) -> CallCase {
    let _ = bank;
    let case = |v: Value| CallCase {
        text: v.to_string(),
        pre: Vec::new(),
        model: None,
    };
    match rng.below(5) {
        0 => case(huge_pad(rng)),
        1 => case(many_operands(rng)),
        2 => case(groups(rng)),
        3 => case(windows(rng)),
        _ => numbers(rng),
    }
}

fn huge_pad(rng: &mut Rng) -> Value {
    // A short vector, a longer one and a matrix.
    let (file, rank) = *rng.pick(&[("c.npy", 1usize), ("v.npy", 1), ("a.npy", 2)]);
    let mut x = json!({"npy": file, "pad": pad(rng, rank)});
    if rng.chance(1, 4) {
        x["fill"] = json!(rng.pick(&[0.5, -1.0, 1e300]));
    }
    let y = json!({"npy": "y.npy"});
    match rng.below(9) {
        0 => json!({"kernel": "sum_lanes", "operands": {"x": x}, "results": {"y": y}}),
        1 => {
            let shape: Vec<u64> = (0..rank).map(|_| count(rng)).collect();
            json!({"kernel": "fold", "attrs": {"pad": pad(rng, rank)},
                   "operands": {"x": x}, "results": {"y": {"npy": "y.npy", "shape": shape}}})
        }
        2 => json!({"kernel": "series", "attrs": {"op": "diff"}, "operands": {"x": x},
                    "results": {"y": y}}),
        3 => json!({"kernel": "contract_grouped", "attrs": {"by": "depth", "groups": 4},
                    "operands": {"a": {"npy": "m1.npy"}, "b": {"npy": "m2.npy"},
                                 "ids": {"npy": "g.npy", "pad": pad(rng, 1)}},
                    "results": {"y": y}}),
        4 => json!({"kernel": "reduce", "attrs": {"op": *rng.pick(&["sum", "max", "mean"])},
                    "operands": {"x": x}, "results": {"y": y}}),
        5 => json!({"kernel": "cast", "operands": {"x": x},
                    "results": {"y": {"npy": "y.npy", "dtype": *rng.pick(&["f64", "u4", "u1", "i8"])}}}),
        6 => json!({"kernel": "map", "attrs": {"program": "y0 = x0 * x0"},
                    "operands": {"x0": x}, "results": {"y0": y}}),
        7 => json!({"kernel": "sort", "operands": {"x": x},
                    "results": {"values": {"npy": "y.npy"}, "positions": {"npy": "p.npy"}}}),
        _ => json!({"kernel": "scan", "attrs": {"op": "sum"}, "operands": {"x": x},
                    "results": {"y": y}}),
    }
}

/// `prefix0 … prefix{n-1}` naming `file`, now and then with one missing,
/// one extra, or one written with a leading zero.
fn names(rng: &mut Rng, prefix: &str, n: usize, file: &str) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    for i in 0..n {
        m.insert(format!("{prefix}{i}"), json!({"npy": file}));
    }
    match rng.below(6) {
        0 if n > 0 => {
            let gone = rng.below_usize(n);
            m.remove(&format!("{prefix}{gone}"));
        }
        1 => {
            m.insert(
                format!("{prefix}{}", n + rng.below_usize(3)),
                json!({"npy": file}),
            );
        }
        2 if n > 1 => {
            let at = 1 + rng.below_usize(n - 1);
            m.remove(&format!("{prefix}{at}"));
            m.insert(format!("{prefix}0{at}"), json!({"npy": file}));
        }
        _ => {}
    }
    m
}

fn many_operands(rng: &mut Rng) -> Value {
    // Mostly hundreds; now and then thousands (each operand is a file read).
    let n = if rng.chance(1, 50) {
        2000 + rng.below_usize(3000)
    } else {
        1 + rng.below_usize(300)
    };
    let last = n - 1;
    match rng.below(3) {
        0 => json!({"kernel": "map", "attrs": {"program": format!("y0 = x0 + x{last}")},
                    "operands": names(rng, "x", n, "c.npy"),
                    "results": {"y0": {"npy": "y.npy"}}}),
        1 => json!({"kernel": "reduce",
                    "attrs": {"op": "sum", "program": format!("y0 = x0 * x{last}")},
                    "operands": names(rng, "x", n, "c.npy"),
                    "results": {"y": {"npy": "y.npy"}}}),
        _ => {
            let starts: Vec<Vec<u64>> = (0..n).map(|i| vec![(i % 6) as u64]).collect();
            json!({"kernel": "assemble", "attrs": {"starts": starts, "fill": 1.5},
                   "operands": names(rng, "piece", n, "c.npy"),
                   "results": {"y": {"npy": "y.npy", "shape": [8]}}})
        }
    }
}

fn groups(rng: &mut Rng) -> Value {
    let g = count(rng);
    let mut ops = json!({"a": {"npy": "m1.npy"}, "b": {"npy": "m2.npy"}, "ids": {"npy": "g.npy"}});
    if rng.chance(1, 3) {
        ops["init"] = json!({"npy": "s.npy"});
    }
    json!({"kernel": "contract_grouped",
           "attrs": {"by": "depth", "groups": g, "acc": *rng.pick(&["f32", "f64", "i64"])},
           "operands": ops, "results": {"y": {"npy": "y.npy"}}})
}

fn windows(rng: &mut Rng) -> Value {
    let op = *rng.pick(&["rolling_min", "rolling_max", "rolling_mean"]);
    let mut x = json!({"npy": "v.npy"});
    if rng.chance(1, 2) {
        // 40 values padded to a long series.
        x["pad"] = json!([[0, *rng.pick(&[1u64 << 10, 1 << 16, 1 << 20, 1 << 22])]]);
    }
    let w = *rng.pick(&[
        0u64,
        1,
        2,
        40,
        41,
        1 << 10,
        1 << 16,
        1 << 19,
        1 << 21,
        1 << 40,
        u64::MAX,
    ]);
    json!({"kernel": "series", "attrs": {"op": op, "window": w},
           "operands": {"x": x}, "results": {"y": {"npy": "y.npy"}}})
}

/// A number as JSON text: shortest strings of random doubles, the edges,
/// strings beyond f64's range and integers past 2^53 and 2^64.
fn number_text(rng: &mut Rng) -> String {
    const EDGES: &[&str] = &[
        "0",
        "-0",
        "0.0",
        "-0.0",
        "0e0",
        "5e-324",
        "-5e-324",
        "2.4703282292062328e-324",
        "2.4703282292062327e-324",
        "2.225073858507201e-308",
        "2.2250738585072014e-308",
        "1.7976931348623157e308",
        "-1.7976931348623157e308",
        "1.7976931348623158e308",
        "1e400",
        "-1e400",
        "1e-400",
        "9007199254740993",
        "-9007199254740993",
        "9223372036854775807",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "123456789012345678901234567890",
        "0.30000000000000004",
        "1.00000000000000011102230246251565404236316680908203125",
        "1E5",
        "1e+5",
        "0.5",
    ];
    if rng.chance(1, 2) {
        return rng.pick(EDGES).to_string();
    }
    loop {
        let v = f64::from_bits(rng.next_u64());
        if v.is_finite() {
            return if rng.chance(1, 2) {
                format!("{v:?}")
            } else {
                format!("{v:e}")
            };
        }
    }
}

fn numbers(rng: &mut Rng) -> CallCase {
    let text = number_text(rng);
    const NUM: &str = "\"@NUMBER@\"";
    let (call, model) = match rng.below(7) {
        // A degree-0 polynomial is its coefficient: a model where the text
        // names a finite double.
        0 | 1 => {
            let value: Option<f64> = text.parse::<f64>().ok().filter(|v| v.is_finite());
            (
                json!({"kernel": "polyval", "attrs": {"coeffs": ["@NUMBER@"]},
                       "operands": {"x": {"npy": "w.npy"}}, "results": {"y": {"npy": "y.npy"}}}),
                value.map(|value| Model::Constant {
                    value,
                    shape: vec![3],
                }),
            )
        }
        2 => (
            json!({"kernel": "quantile", "attrs": {"q": "@NUMBER@"},
                   "operands": {"x": {"npy": "w.npy"}}, "results": {"y": {"npy": "y.npy"}}}),
            None,
        ),
        3 => (
            json!({"kernel": "series", "attrs": {"op": "ema", "alpha": "@NUMBER@"},
                   "operands": {"x": {"npy": "v.npy"}}, "results": {"y": {"npy": "y.npy"}}}),
            None,
        ),
        4 => (
            json!({"kernel": "quantize", "attrs": {"scale": "@NUMBER@", "zero_point": 3},
                   "operands": {"x": {"npy": "w.npy"}},
                   "results": {"y": {"npy": "y.npy", "dtype": "i8"}}}),
            None,
        ),
        5 => (
            json!({"kernel": "assemble", "attrs": {"starts": [[0]], "fill": "@NUMBER@"},
                   "operands": {"piece0": {"npy": *rng.pick(&["c.npy", "i.npy", "w.npy", "u.npy"])}},
                   "results": {"y": {"npy": "y.npy", "shape": [4]}}}),
            None,
        ),
        _ => (
            json!({"kernel": "random", "attrs": {"seed": "@NUMBER@"}, "operands": {},
                   "results": {"y": {"npy": "y.npy", "dtype": "f32", "shape": [4]}}}),
            None,
        ),
    };
    let text = call.to_string().replacen(NUM, &text, 1);
    // A number beyond f64's range is no JSON number serde_json reads: the
    // call is refused, and the model above only exists for finite values.
    CallCase {
        text,
        pre: Vec::new(),
        model,
    }
}
