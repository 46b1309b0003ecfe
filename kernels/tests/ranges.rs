//! `Program::ranges` is sound: over random boxes and loads, every value
//! each output takes (computed by `map` at every index) lies in its range;
//! and the ranges decide the masks attention relies on (causal, windows,
//! documents) where a box is all on one side.

use tessera::map::{map, Program, Range};
use tessera::{ArrayView, ArrayViewMut, DType, Exec};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let z = self.0 ^ (self.0 >> 29);
        z.wrapping_mul(0xbf58476d1ce4e5b9) ^ (z >> 32)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Whether `v` (an output's element, as f64; bools 0/1) lies in `r`.
fn inside(r: &Range, v: f64) -> bool {
    match *r {
        Range::Bool {
            may_false,
            may_true,
        } => (v != 0.0 && may_true) || (v == 0.0 && may_false),
        Range::Int { lo, hi } => (lo as f64) <= v && v <= hi as f64,
        Range::Float { lo, hi, nan } => (v.is_nan() && nan) || (lo <= v && v <= hi),
        Range::Any => true,
    }
}

fn read(d: DType, b: &[u8], i: usize) -> f64 {
    match d {
        DType::Bool => b[i] as f64,
        DType::I32 => i32::from_ne_bytes(b[4 * i..4 * i + 4].try_into().unwrap()) as f64,
        DType::I64 => i64::from_ne_bytes(b[8 * i..8 * i + 8].try_into().unwrap()) as f64,
        DType::F32 => f32::from_ne_bytes(b[4 * i..4 * i + 4].try_into().unwrap()) as f64,
        DType::F64 => f64::from_ne_bytes(b[8 * i..8 * i + 8].try_into().unwrap()),
        _ => unreachable!(),
    }
}

const PROGRAMS: &[&str] = &[
    "y0 = coord(2) <= coord(1) + 3",
    "y0 = logical_and(coord(2) <= coord(1), coord(2) > coord(1) - 5)",
    "y0 = x0 == x1; y1 = x0 - x1 * 2147483647",
    "y0 = logical_or(x2, coord(0) * 3 - coord(2) >= 2)",
    "y0 = select(x2, coord(1) - coord(2), -coord(0)); y1 = abs(coord(2) - 7) * 2",
    "y0 = min(cast<i64>(x0), coord(2)) + max(cast<i64>(x1), -coord(1)); y1 = x0 * x1 - 3",
    "y0 = cast<f32>(coord(2) - coord(1)) * x3 + 0.5f32; y1 = x3 - x3",
    "y0 = max(x3, 1f32) > min(x3 * x3, 4f32); y1 = -abs(x3) / 2f32",
    "y0 = cast<f64>(x0) * 1e300 * 1e10; y1 = logical_xor(x2, x0 < 0)",
    "y0 = (coord(2) - coord(1)) % 5 == 0; y1 = logical_not(x2)",
    "y0 = cast<i32>(x3); y1 = cast<bool>(coord(1) - 2)",
];

#[test]
fn every_value_lies_in_its_range() {
    let ins = [DType::I32, DType::I32, DType::Bool, DType::F32];
    let mut g = Rng(7);
    let mut checked = 0usize;
    for text in PROGRAMS {
        let p = Program::parse(text, &ins).unwrap();
        for _ in 0..40 {
            let shape = [
                1 + g.below(3) as usize,
                1 + g.below(9) as usize,
                1 + g.below(9) as usize,
            ];
            let n: usize = shape.iter().product();
            let lo = g.below(20) as i32 - 10;
            let x0: Vec<i32> = (0..shape[2]).map(|_| lo + g.below(6) as i32).collect();
            let x1: Vec<i32> = (0..shape[1]).map(|_| lo + g.below(3) as i32).collect();
            let x2: Vec<bool> = (0..n).map(|_| g.below(2) == 0).collect();
            let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0];
            let x3: Vec<f32> = (0..shape[2])
                .map(|_| {
                    if g.below(10) == 0 {
                        special[g.below(4) as usize]
                    } else {
                        (g.below(400) as f32 - 200.0) / 16.0
                    }
                })
                .collect();
            // The inputs' ranges from their elements.
            let irange = |v: &[i32]| Range::Int {
                lo: *v.iter().min().unwrap() as i128,
                hi: *v.iter().max().unwrap() as i128,
            };
            let finite: Vec<f64> = x3
                .iter()
                .filter(|x| !x.is_nan())
                .map(|&x| x as f64)
                .collect();
            let frange = if finite.is_empty() {
                Range::Float {
                    lo: 0.0,
                    hi: 0.0,
                    nan: true,
                }
            } else {
                Range::Float {
                    lo: finite.iter().cloned().fold(f64::INFINITY, f64::min),
                    hi: finite.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                    nan: x3.iter().any(|x| x.is_nan()),
                }
            };
            let ranges = p.ranges(
                &[
                    irange(&x0),
                    irange(&x1),
                    Range::Bool {
                        may_false: x2.iter().any(|&b| !b),
                        may_true: x2.iter().any(|&b| b),
                    },
                    frange,
                ],
                &[
                    (0, shape[0] as i64 - 1),
                    (0, shape[1] as i64 - 1),
                    (0, shape[2] as i64 - 1),
                ],
            );
            let outs = p.output_dtypes();
            let mut bufs: Vec<Vec<u8>> = outs
                .iter()
                .map(|d| vec![0u8; n * d.info().item_bytes])
                .collect();
            {
                let views = [
                    ArrayView::from_slice(&x0, &[shape[2]]).unwrap(),
                    ArrayView::from_slice(&x1, &[shape[1], 1]).unwrap(),
                    ArrayView::from_slice(&x2, &shape).unwrap(),
                    ArrayView::from_slice(&x3, &[shape[2]]).unwrap(),
                ];
                let mut o: Vec<ArrayViewMut<'_>> = bufs
                    .iter_mut()
                    .zip(&outs)
                    .map(|(b, &d)| ArrayViewMut::contiguous(d, &shape, b).unwrap())
                    .collect();
                map(&p, &views, &mut o, &Exec::default()).unwrap();
            }
            for (k, (b, &d)) in bufs.iter().zip(&outs).enumerate() {
                for i in 0..n {
                    let v = read(d, b, i);
                    assert!(
                        inside(&ranges[k], v),
                        "{text}: output {k} = {v} at {i} of {shape:?} outside {:?}",
                        ranges[k]
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000);
}

#[test]
fn masks_are_decided_off_the_diagonal() {
    let causal = Program::parse("y0 = coord(2) <= coord(1)", &[]).unwrap();
    let r =
        |p: &Program, rows: (i64, i64), keys: (i64, i64)| p.ranges(&[], &[(0, 0), rows, keys])[0];
    assert!(r(&causal, (64, 127), (0, 63)).is_always(true));
    assert!(r(&causal, (0, 63), (64, 127)).is_always(false));
    let mixed = r(&causal, (0, 63), (0, 63));
    assert!(!mixed.is_always(true) && !mixed.is_always(false));
    let window = Program::parse(
        "y0 = logical_and(coord(2) <= coord(1), coord(2) > coord(1) - 100)",
        &[],
    )
    .unwrap();
    assert!(r(&window, (500, 563), (0, 63)).is_always(false));
    assert!(r(&window, (100, 163), (64, 99)).is_always(true));
    let doc = Program::parse(
        "y0 = x0 == x1; y1 = x0 - x1 * 2147483647",
        &[DType::I64, DType::I64],
    )
    .unwrap();
    let ids = |a: i128, b: i128| Range::Int { lo: a, hi: b };
    assert!(doc.ranges(&[ids(3, 3), ids(4, 9)], &[])[0].is_always(false));
    assert!(doc.ranges(&[ids(3, 3), ids(3, 3)], &[])[0].is_always(true));
    // Unmodelled kinds take their whole range.
    let rem = Program::parse("y0 = coord(0) % 5 == 0", &[]).unwrap();
    let r = rem.ranges(&[], &[(10, 10)])[0];
    assert!(!r.is_always(true) && !r.is_always(false));
}
