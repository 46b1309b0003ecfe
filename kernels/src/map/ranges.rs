//! Interval ranges of a program: what each output may hold over a box of
//! indices, given what each input and each coordinate may hold there.
//!
//! The ranges are sound, not tight: every value an output takes at an index
//! of the box lies in its range (for a bool, the truth values it may take),
//! so a caller that finds an output's range a single truth value knows the
//! output without running it. A node whose kind the ranges do not model
//! takes its dtype's whole range (and may be a NaN); nothing here is ever
//! narrower than the node's exact values.

use super::program::{Op, Program};
use crate::{Class, DType, Kind};

/// What a node may hold over a box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// A bool: whether it may be false, whether it may be true.
    Bool {
        /// It may be false somewhere in the box.
        may_false: bool,
        /// It may be true somewhere in the box.
        may_true: bool,
    },
    /// An integer, exactly: every value lies in `lo..=hi`.
    Int {
        /// The least value it may take.
        lo: i128,
        /// The greatest value it may take.
        hi: i128,
    },
    /// A real float: every value that is not a NaN lies in `lo..=hi`
    /// (infinities included), and `nan` says whether it may be a NaN.
    Float {
        /// The least value (may be -inf).
        lo: f64,
        /// The greatest value (may be +inf).
        hi: f64,
        /// It may be a NaN.
        nan: bool,
    },
    /// Anything its dtype holds (complex dtypes, and nodes not modelled).
    Any,
}

impl Range {
    /// A bool that is `v` everywhere.
    pub fn bool(v: bool) -> Range {
        Range::Bool {
            may_false: !v,
            may_true: v,
        }
    }
    /// Everything `dtype` holds: both truth values, an integer dtype's
    /// ends, every float and a NaN.
    pub fn full(dtype: DType) -> Range {
        let info = dtype.info();
        match info.class {
            Class::Bool => Range::Bool {
                may_false: true,
                may_true: true,
            },
            Class::Int | Class::Uint => match info.int_range {
                Some((lo, hi)) => Range::Int { lo, hi },
                None => Range::Any,
            },
            Class::Float => Range::Float {
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
                nan: true,
            },
            Class::Complex | Class::Pair => Range::Any,
        }
    }
    /// Whether this bool range says the value is `v` at every index.
    pub fn is_always(&self, v: bool) -> bool {
        match *self {
            Range::Bool {
                may_false,
                may_true,
            } => {
                if v {
                    !may_false
                } else {
                    !may_true
                }
            }
            _ => false,
        }
    }
}

/// The range of a value of `dtype` (for an integer, its ends must hold it).
fn int_in(dtype: DType, lo: i128, hi: i128) -> Range {
    match dtype.info().int_range {
        Some((a, b)) if lo >= a && hi <= b && lo <= hi => Range::Int { lo, hi },
        _ => Range::full(dtype),
    }
}

/// A float range of a node of `dtype` from the exact interval `lo..=hi`
/// computed in f64: each end rounded into the dtype and pushed out by one
/// step of it, so that whatever the node's own rounding (once, in its
/// carrier, or twice through f64) the value it stores lies inside. Only f32
/// and f64 nodes are modelled; other floats take their whole range.
fn float_in(dtype: DType, lo: f64, hi: f64, nan: bool) -> Range {
    if lo.is_nan() || hi.is_nan() {
        return Range::full(dtype);
    }
    match dtype {
        DType::F64 => Range::Float {
            lo: lo.next_down(),
            hi: hi.next_up(),
            nan,
        },
        DType::F32 => Range::Float {
            lo: (lo as f32).next_down() as f64,
            hi: (hi as f32).next_up() as f64,
            nan,
        },
        _ => Range::full(dtype),
    }
}

/// The range of a node's argument as a float interval (None where it is not
/// one).
fn as_float(r: Range) -> Option<(f64, f64, bool)> {
    match r {
        Range::Float { lo, hi, nan } => Some((lo, hi, nan)),
        _ => None,
    }
}

fn as_int(r: Range) -> Option<(i128, i128)> {
    match r {
        Range::Int { lo, hi } => Some((lo, hi)),
        _ => None,
    }
}

fn as_bool(r: Range) -> Option<(bool, bool)> {
    match r {
        Range::Bool {
            may_false,
            may_true,
        } => Some((may_false, may_true)),
        _ => None,
    }
}

/// The truth values a comparison may take, from the values of its two
/// sides' ranges: `lt` whether some a < b is possible, `eq` whether some
/// a == b, `gt` whether some a > b; `nan` whether either side may be a NaN
/// (every comparison of a NaN is false but `!=`).
fn compare(kind: Kind, lt: bool, eq: bool, gt: bool, nan: bool) -> Range {
    // Whether the comparison may be true / false on ordered values.
    let (t, f) = match kind {
        Kind::Lt => (lt, eq || gt),
        Kind::Le => (lt || eq, gt),
        Kind::Gt => (gt, lt || eq),
        Kind::Ge => (gt || eq, lt),
        Kind::Eq => (eq, lt || gt),
        Kind::Ne => (lt || gt, eq),
        _ => (true, true),
    };
    let (t, f) = if nan {
        if kind == Kind::Ne {
            (true, f)
        } else {
            (t, true)
        }
    } else {
        (t, f)
    };
    Range::Bool {
        may_false: f,
        may_true: t,
    }
}

fn compare_int(kind: Kind, (alo, ahi): (i128, i128), (blo, bhi): (i128, i128)) -> Range {
    compare(kind, alo < bhi, alo <= bhi && blo <= ahi, ahi > blo, false)
}

fn compare_float(kind: Kind, a: (f64, f64, bool), b: (f64, f64, bool)) -> Range {
    let (alo, ahi, an) = a;
    let (blo, bhi, bn) = b;
    compare(
        kind,
        alo < bhi,
        alo <= bhi && blo <= ahi,
        ahi > blo,
        an || bn,
    )
}

/// The least and greatest of four values (none a NaN).
fn span(v: [f64; 4]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// The range of one node, from its arguments' ranges.
fn node_range(kind: Kind, dtype: DType, args: &[Range]) -> Range {
    let full = Range::full(dtype);
    match (kind, args) {
        (Kind::Lt | Kind::Le | Kind::Gt | Kind::Ge | Kind::Eq | Kind::Ne, [a, b]) => {
            if let (Some(a), Some(b)) = (as_int(*a), as_int(*b)) {
                return compare_int(kind, a, b);
            }
            if let (Some(a), Some(b)) = (as_float(*a), as_float(*b)) {
                return compare_float(kind, a, b);
            }
            if let (Some(a), Some(b)) = (as_bool(*a), as_bool(*b)) {
                // false < true, as 0 < 1.
                let a = (!a.0 as i128, a.1 as i128);
                let b = (!b.0 as i128, b.1 as i128);
                return compare_int(kind, a, b);
            }
            full
        }
        (Kind::LogicalAnd | Kind::LogicalOr | Kind::LogicalXor, [a, b]) => {
            let (Some((af, at)), Some((bf, bt))) = (as_bool(*a), as_bool(*b)) else {
                return full;
            };
            let (t, f) = match kind {
                Kind::LogicalAnd => (at && bt, af || bf),
                Kind::LogicalOr => (at || bt, af && bf),
                _ => ((at && bf) || (af && bt), (at && bt) || (af && bf)),
            };
            Range::Bool {
                may_false: f,
                may_true: t,
            }
        }
        (Kind::LogicalNot, [a]) => match as_bool(*a) {
            Some((f, t)) => Range::Bool {
                may_false: t,
                may_true: f,
            },
            None => full,
        },
        (Kind::Select, [c, a, b]) => {
            let Some((cf, ct)) = as_bool(*c) else {
                return full;
            };
            match (ct, cf) {
                (true, false) => *a,
                (false, true) => *b,
                _ => union(dtype, *a, *b),
            }
        }
        (Kind::Add | Kind::Sub | Kind::Mul | Kind::Min | Kind::Max, [a, b]) => {
            if let (Some((alo, ahi)), Some((blo, bhi))) = (as_int(*a), as_int(*b)) {
                let (lo, hi) = match kind {
                    Kind::Add => (alo + blo, ahi + bhi),
                    Kind::Sub => (alo - bhi, ahi - blo),
                    Kind::Mul => {
                        let p = [
                            alo.checked_mul(blo),
                            alo.checked_mul(bhi),
                            ahi.checked_mul(blo),
                            ahi.checked_mul(bhi),
                        ];
                        let Some(p) = p.into_iter().collect::<Option<Vec<i128>>>() else {
                            return full;
                        };
                        let lo = p.iter().copied().fold(i128::MAX, i128::min);
                        let hi = p.iter().copied().fold(i128::MIN, i128::max);
                        (lo, hi)
                    }
                    Kind::Min => (alo.min(blo), ahi.min(bhi)),
                    _ => (alo.max(blo), ahi.max(bhi)),
                };
                return int_in(dtype, lo, hi);
            }
            if let (Some(a), Some(b)) = (as_float(*a), as_float(*b)) {
                return float_binary(kind, dtype, a, b);
            }
            full
        }
        (Kind::Neg, [a]) => {
            if let Some((lo, hi)) = as_int(*a) {
                return int_in(dtype, -hi, -lo);
            }
            if let Some((lo, hi, nan)) = as_float(*a) {
                return float_in(dtype, -hi, -lo, nan);
            }
            full
        }
        (Kind::Abs, [a]) => {
            let abs = |lo: f64, hi: f64| {
                if lo >= 0.0 {
                    (lo, hi)
                } else if hi <= 0.0 {
                    (-hi, -lo)
                } else {
                    (0.0, hi.max(-lo))
                }
            };
            if let Some((lo, hi)) = as_int(*a) {
                let (l, h) = if lo >= 0 {
                    (lo, hi)
                } else if hi <= 0 {
                    (-hi, -lo)
                } else {
                    (0, hi.max(-lo))
                };
                return int_in(dtype, l, h);
            }
            if let Some((lo, hi, nan)) = as_float(*a) {
                let (l, h) = abs(lo, hi);
                return float_in(dtype, l, h, nan);
            }
            full
        }
        _ => full,
    }
}

/// Add, Sub, Mul, Min and Max of two float ranges, exact in f64 where no end
/// is infinite and widened by [`float_in`]; a NaN where either side may be
/// one or where ∞ − ∞ or 0 · ∞ may occur.
fn float_binary(kind: Kind, dtype: DType, a: (f64, f64, bool), b: (f64, f64, bool)) -> Range {
    let (alo, ahi, an) = a;
    let (blo, bhi, bn) = b;
    let nan = an || bn;
    match kind {
        Kind::Add | Kind::Sub => {
            let (blo, bhi) = if kind == Kind::Sub {
                (-bhi, -blo)
            } else {
                (blo, bhi)
            };
            let inf_clash = (alo == f64::NEG_INFINITY && bhi == f64::INFINITY)
                || (ahi == f64::INFINITY && blo == f64::NEG_INFINITY);
            let lo = alo + blo;
            let hi = ahi + bhi;
            if lo.is_nan() || hi.is_nan() {
                return Range::full(dtype);
            }
            float_in(dtype, lo, hi, nan || inf_clash)
        }
        Kind::Mul => {
            let has_zero = |lo: f64, hi: f64| lo <= 0.0 && hi >= 0.0;
            let has_inf = |lo: f64, hi: f64| lo.is_infinite() || hi.is_infinite();
            let clash = (has_zero(alo, ahi) && has_inf(blo, bhi))
                || (has_zero(blo, bhi) && has_inf(alo, ahi));
            let p = [alo * blo, alo * bhi, ahi * blo, ahi * bhi];
            if p.iter().any(|x| x.is_nan()) {
                // 0 · ∞ at an end: the other values lie anywhere.
                return Range::full(dtype);
            }
            let (lo, hi) = span(p);
            float_in(dtype, lo, hi, nan || clash)
        }
        Kind::Min | Kind::Max => {
            let (lo, hi) = if kind == Kind::Min {
                (alo.min(blo), ahi.min(bhi))
            } else {
                (alo.max(blo), ahi.max(bhi))
            };
            if nan {
                // A NaN on one side may give the other side's value.
                let (ulo, uhi) = (alo.min(blo), ahi.max(bhi));
                return float_in(dtype, ulo, uhi, true);
            }
            float_in(dtype, lo, hi, false)
        }
        _ => Range::full(dtype),
    }
}

/// The smallest range holding both.
fn union(dtype: DType, a: Range, b: Range) -> Range {
    match (a, b) {
        (
            Range::Bool {
                may_false: af,
                may_true: at,
            },
            Range::Bool {
                may_false: bf,
                may_true: bt,
            },
        ) => Range::Bool {
            may_false: af || bf,
            may_true: at || bt,
        },
        (Range::Int { lo: al, hi: ah }, Range::Int { lo: bl, hi: bh }) => Range::Int {
            lo: al.min(bl),
            hi: ah.max(bh),
        },
        (
            Range::Float {
                lo: al,
                hi: ah,
                nan: an,
            },
            Range::Float {
                lo: bl,
                hi: bh,
                nan: bn,
            },
        ) => Range::Float {
            lo: al.min(bl),
            hi: ah.max(bh),
            nan: an || bn,
        },
        _ => Range::full(dtype),
    }
}

/// The range of a cast of a value of range `a` into `to`: exact between
/// integers that fit and from bool; float targets f32 and f64 widened by
/// [`float_in`]; everything else the target's whole range.
fn cast_range(a: Range, to: DType) -> Range {
    let class = to.info().class;
    match (a, class) {
        (
            Range::Bool {
                may_false,
                may_true,
            },
            Class::Int | Class::Uint,
        ) => int_in(to, (!may_false) as i128, may_true as i128),
        (Range::Bool { .. }, Class::Bool) => a,
        (Range::Int { lo, hi }, Class::Int | Class::Uint) => int_in(to, lo, hi),
        (Range::Int { lo, hi }, Class::Float) => float_in(to, lo as f64, hi as f64, false),
        (Range::Int { lo, hi }, Class::Bool) => Range::Bool {
            may_false: lo <= 0 && hi >= 0,
            may_true: lo != 0 || hi != 0,
        },
        (Range::Float { lo, hi, nan }, Class::Float) => float_in(to, lo, hi, nan),
        _ => Range::full(to),
    }
}

impl Program {
    /// The range of each output over a box of indices, from the range of
    /// each input there (`inputs`, one per input, by index) and of each
    /// coordinate (`coords[a]` the least and greatest index along axis `a`;
    /// a coordinate axis beyond `coords` takes the whole i64 range).
    ///
    /// Sound, not tight: at every index of the box each output's value lies
    /// in its range. Modelled exactly (integers) or within one step of the
    /// node's dtype (f32 and f64): loads, constants, coordinates, the six
    /// comparisons, `logical_and`/`or`/`xor`/`not`, `select`, `add`, `sub`,
    /// `mul`, `min`, `max`, `neg`, `abs` and casts between bool, integers
    /// and f32/f64; an integer result beyond its dtype, and every other
    /// node, takes its dtype's whole range ([`Range::full`]). An input range
    /// that is not of its input's class is taken as the whole range.
    pub fn ranges(&self, inputs: &[Range], coords: &[(i64, i64)]) -> Vec<Range> {
        let mut r: Vec<Range> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let v = match &node.op {
                Op::Load(i) => {
                    let given = inputs.get(*i).copied().unwrap_or(Range::Any);
                    fits(given, node.dtype)
                }
                Op::Const(s) => const_range(*s, node.dtype),
                Op::Coord(a) => match coords.get(*a) {
                    Some(&(lo, hi)) if lo <= hi => Range::Int {
                        lo: lo as i128,
                        hi: hi as i128,
                    },
                    _ => Range::full(DType::I64),
                },
                Op::Kind(kind, args) => {
                    let a: Vec<Range> = args.iter().map(|id| r[id.0]).collect();
                    node_range(*kind, node.dtype, &a)
                }
                Op::Cast(arg, _mode) => cast_range(r[arg.0], node.dtype),
            };
            r.push(v);
        }
        self.outputs.iter().map(|o| r[o.0]).collect()
    }
}

/// `r` if it is of `dtype`'s class (an integer within its ends), else the
/// dtype's whole range.
fn fits(r: Range, dtype: DType) -> Range {
    let class = dtype.info().class;
    match (r, class) {
        (Range::Bool { .. }, Class::Bool) => r,
        (Range::Int { lo, hi }, Class::Int | Class::Uint) => int_in(dtype, lo, hi),
        (Range::Float { lo, hi, .. }, Class::Float) if lo <= hi => r,
        _ => Range::full(dtype),
    }
}

fn const_range(s: super::Scalar, dtype: DType) -> Range {
    use super::Scalar;
    match (s.canonical(), dtype.info().class) {
        (Scalar::Bool(b), Class::Bool) => Range::bool(b),
        (Scalar::Int(v), Class::Int | Class::Uint) => int_in(dtype, v as i128, v as i128),
        (Scalar::UInt(v), Class::Int | Class::Uint) => int_in(dtype, v as i128, v as i128),
        (Scalar::Float(v), Class::Float) if v.is_nan() => Range::Float {
            lo: 0.0,
            hi: 0.0,
            nan: true,
        },
        (Scalar::Float(v), Class::Float) => float_in(dtype, v, v, false),
        (Scalar::Int(v), Class::Float) => float_in(dtype, v as f64, v as f64, false),
        _ => Range::full(dtype),
    }
}
