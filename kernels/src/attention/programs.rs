//! Mask-and-score programs: the ready-made ones (causal, sliding window,
//! ALiBi, soft-capping) and what the engine learns of a program once a call
//! (whether output 0 is the constant true, whether output 1 is its operand
//! 0, which loads output 0 reads, the programs it runs on a block).
//!
//! A program of an attention over q of rank `r` has operand 0, the pair's
//! score in the accumulator, then one operand per load; its coordinates are
//! those of the pair space `[lead…, query head, query row, key]`, of rank
//! `r`: axis `r − 3` is the query head, `r − 2` the query row and `r − 1`
//! the key. Output 0 (bool) says whether the pair is visible; output 1 (the
//! accumulator) is the score the softmax takes.

use crate::error::{Error, Result};
use crate::map::{Op, Program, ProgramBuilder, Range, Scalar};
use crate::{DType, Kind};

/// The program that shows every pair and keeps every score: no node runs
/// for it (`y0 = true; y1 = x0`).
pub fn full(acc: DType) -> Result<Program> {
    let mut b = ProgramBuilder::with_inputs(&[acc]);
    let t = b.constant(true, DType::Bool)?;
    let x = b.load(0, acc)?;
    b.output(t)?;
    b.output(x)?;
    b.build()
}

/// Causal attention over q of rank `rank` (≥ 3): key `j` is visible from
/// query row `i` where `j ≤ i + offset` (offset 0 for a prefill whose
/// queries are its keys; `tk − tq` where the queries are the last rows of
/// the keys). Scores are kept. Text: `y0 = coord(r-1) <= coord(r-2) +
/// offset; y1 = x0`.
pub fn causal(acc: DType, rank: usize, offset: i64) -> Result<Program> {
    let mut b = ProgramBuilder::with_inputs(&[acc]);
    let (row, key) = row_key(&mut b, rank)?;
    let off = b.constant(offset, DType::I64)?;
    let limit = b.apply(Kind::Add, &[row, off])?;
    let vis = b.apply(Kind::Le, &[key, limit])?;
    let x = b.load(0, acc)?;
    b.output(vis)?;
    b.output(x)?;
    b.build()
}

/// A causal sliding window of `window ≥ 1` keys: key `j` is visible from
/// row `i` where `i + offset − window < j ≤ i + offset`. Scores are kept.
pub fn sliding_window(acc: DType, rank: usize, offset: i64, window: i64) -> Result<Program> {
    if window < 1 {
        return Err(Error::Attribute {
            name: "sliding_window window".into(),
            reason: format!("a window of {window} keys shows none; it must be at least 1"),
        });
    }
    let mut b = ProgramBuilder::with_inputs(&[acc]);
    let (row, key) = row_key(&mut b, rank)?;
    let off = b.constant(offset, DType::I64)?;
    let hi = b.apply(Kind::Add, &[row, off])?;
    let w = b.constant(window, DType::I64)?;
    let lo = b.apply(Kind::Sub, &[hi, w])?;
    let below = b.apply(Kind::Le, &[key, hi])?;
    let above = b.apply(Kind::Gt, &[key, lo])?;
    let vis = b.apply(Kind::LogicalAnd, &[below, above])?;
    let x = b.load(0, acc)?;
    b.output(vis)?;
    b.output(x)?;
    b.build()
}

/// ALiBi: the score of row `i` and key `j` of query head `h` becomes
/// `x0 − x1 · |i + offset − j|`, the distance cast to the accumulator and
/// `x1` a load of the heads' slopes (in the accumulator; any shape that
/// broadcasts to the pair space, typically `[heads, 1, 1]`). Causal
/// (visible where `j ≤ i + offset`) when `causal`, else every pair is
/// visible.
pub fn alibi(acc: DType, rank: usize, offset: i64, causal: bool) -> Result<Program> {
    let mut b = ProgramBuilder::with_inputs(&[acc, acc]);
    let (row, key) = row_key(&mut b, rank)?;
    let off = b.constant(offset, DType::I64)?;
    let at = b.apply(Kind::Add, &[row, off])?;
    let vis = if causal {
        b.apply(Kind::Le, &[key, at])?
    } else {
        b.constant(true, DType::Bool)?
    };
    let d = b.apply(Kind::Sub, &[at, key])?;
    let d = b.apply(Kind::Abs, &[d])?;
    let d = b.cast(d, acc, crate::CastMode::Default)?;
    let slope = b.load(1, acc)?;
    let bias = b.apply(Kind::Mul, &[slope, d])?;
    let x = b.load(0, acc)?;
    let y = b.apply(Kind::Sub, &[x, bias])?;
    b.output(vis)?;
    b.output(y)?;
    b.build()
}

/// Soft-capping: the score becomes `cap · tanh(x0 / cap)` (cap > 0, finite),
/// every pair visible, or causal (`j ≤ i + offset`) when `causal`.
pub fn softcap(acc: DType, rank: usize, cap: f64, offset: i64, causal: bool) -> Result<Program> {
    if !(cap > 0.0 && cap.is_finite()) {
        return Err(Error::Attribute {
            name: "softcap cap".into(),
            reason: format!("{cap} is not a positive finite cap"),
        });
    }
    let mut b = ProgramBuilder::with_inputs(&[acc]);
    let vis = if causal {
        let (row, key) = row_key(&mut b, rank)?;
        let off = b.constant(offset, DType::I64)?;
        let at = b.apply(Kind::Add, &[row, off])?;
        b.apply(Kind::Le, &[key, at])?
    } else {
        b.constant(true, DType::Bool)?
    };
    let x = b.load(0, acc)?;
    let c = b.constant(cap, acc)?;
    let q = b.apply(Kind::Div, &[x, c])?;
    let t = b.apply(Kind::Tanh, &[q])?;
    let y = b.apply(Kind::Mul, &[c, t])?;
    b.output(vis)?;
    b.output(y)?;
    b.build()
}

/// The row and key coordinates of the pair space of rank `rank`.
fn row_key(
    b: &mut ProgramBuilder,
    rank: usize,
) -> Result<(crate::map::NodeId, crate::map::NodeId)> {
    if rank < 3 {
        return Err(Error::Attribute {
            name: "attention program rank".into(),
            reason: format!("q's rank is at least 3 ([lead…, heads, rows, depth]), not {rank}"),
        });
    }
    Ok((b.coord(rank - 2), b.coord(rank - 1)))
}

/// What a call learns of its program once.
#[derive(Clone, Debug)]
pub(super) struct Analysed {
    /// Output 0 alone (for its ranges), None where it is the constant true.
    pub mask: Option<Program>,
    /// Output 0 alone with every coordinate read as `coord(a) + x{n+a}`,
    /// `n` the program's inputs (the box's offset along axis a as an i64
    /// operand), so that it runs on one block's box with the pair space's
    /// coordinates.
    pub mask_boxed: Option<Program>,
    /// Output 1 alone, boxed the same way; None where it is operand 0.
    pub score_boxed: Option<Program>,
    /// The loads (by program input, 1…) output 0 reads.
    pub mask_loads: Vec<usize>,
    /// 64-byte blocks of tile scratch that suffice for either boxed
    /// program on one thread.
    pub tile_blocks: usize,
}

/// Check `program` for an attention of accumulator `acc` over q of rank
/// `rank` with loads of `loads` dtypes, and analyse it. Refuses an arity,
/// input dtype or output dtype other than the call's, an output 0 that
/// reads operand 0 and a coordinate axis not below `rank`.
pub(super) fn analyse(
    program: &Program,
    acc: DType,
    rank: usize,
    loads: &[DType],
) -> Result<Analysed> {
    let bad = |reason: String| Error::Attribute {
        name: "attention program".into(),
        reason,
    };
    let ins = program.inputs();
    if ins.len() != loads.len() + 1 {
        return Err(bad(format!(
            "the program has {} operands; the call gives the score and {} loads ({})",
            ins.len(),
            loads.len(),
            loads.len() + 1
        )));
    }
    if ins[0] != acc {
        return Err(Error::DTypeMismatch {
            operand: "attention program operand 0 (the score)".into(),
            expected: acc,
            got: ins[0],
        });
    }
    for (i, (&want, &got)) in ins[1..].iter().zip(loads).enumerate() {
        if want != got {
            return Err(Error::DTypeMismatch {
                operand: format!("attention load {i} (program operand {})", i + 1),
                expected: want,
                got,
            });
        }
    }
    let outs = program.output_dtypes();
    if outs.len() != 2 {
        return Err(bad(format!(
            "the program has {} outputs; attention takes two (visibility, score)",
            outs.len()
        )));
    }
    if outs[0] != DType::Bool {
        return Err(Error::DTypeMismatch {
            operand: "attention program output 0 (visibility)".into(),
            expected: DType::Bool,
            got: outs[0],
        });
    }
    if outs[1] != acc {
        return Err(Error::DTypeMismatch {
            operand: "attention program output 1 (score)".into(),
            expected: acc,
            got: outs[1],
        });
    }
    for n in program.nodes() {
        if let Op::Coord(a) = n.op {
            if a >= rank {
                return Err(Error::Axis {
                    operand: "attention program".into(),
                    axis: a,
                    reason: format!("coord({a}) reads an axis beyond the pair space's rank {rank}"),
                });
            }
        }
    }
    let out0 = program.outputs()[0];
    let out1 = program.outputs()[1];
    let nodes = program.nodes();
    let mask = match nodes[out0.index()].op {
        Op::Const(Scalar::Bool(true)) => None,
        _ => Some(single(program, 0)?),
    };
    if let Some(m) = &mask {
        if m.nodes().iter().any(|n| n.op == Op::Load(0)) {
            return Err(bad(
                "output 0 (visibility) reads operand 0, the score, which is computed after it"
                    .into(),
            ));
        }
    }
    let mask_loads = match &mask {
        Some(m) => {
            let mut v: Vec<usize> = m
                .nodes()
                .iter()
                .filter_map(|n| match n.op {
                    Op::Load(i) => Some(i),
                    _ => None,
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        None => Vec::new(),
    };
    let mask_boxed = match mask {
        Some(_) => Some(boxed(program, 0, rank)?),
        None => None,
    };
    let score_boxed = match nodes[out1.index()].op {
        Op::Load(0) => None,
        _ => Some(boxed(program, 1, rank)?),
    };
    let tile_blocks = [&mask_boxed, &score_boxed]
        .iter()
        .filter_map(|p| p.as_ref())
        .map(|p| crate::map::tile_bytes_bound(p).div_ceil(64))
        .max()
        .unwrap_or(0);
    Ok(Analysed {
        mask,
        mask_boxed,
        score_boxed,
        mask_loads,
        tile_blocks,
    })
}

/// Output `k` of `program` alone (same inputs).
fn single(program: &Program, k: usize) -> Result<Program> {
    Program::new(
        program.inputs(),
        program.nodes().to_vec(),
        vec![program.outputs()[k]],
    )
}

/// Output `k` alone, with `rank` i64 operands appended, `coord(a)` read as
/// `coord(a) + x{n + a}`: the same value, as an exact i64 sum, where the
/// operand holds the box's offset along axis `a`.
fn boxed(program: &Program, k: usize, rank: usize) -> Result<Program> {
    let n = program.inputs().len();
    let mut ins = program.inputs().to_vec();
    ins.extend(std::iter::repeat_n(DType::I64, rank));
    let mut b = ProgramBuilder::with_inputs(&ins);
    let mut map = Vec::with_capacity(program.nodes().len());
    for node in program.nodes() {
        let id = match &node.op {
            Op::Load(i) => b.load(*i, node.dtype)?,
            Op::Const(v) => b.constant(*v, node.dtype)?,
            Op::Coord(a) => {
                let c = b.coord(*a);
                let off = b.load(n + a, DType::I64)?;
                b.apply(Kind::Add, &[c, off])?
            }
            Op::Kind(kind, args) => {
                let args: Vec<_> = args.iter().map(|a| map[a.index()]).collect();
                b.apply(*kind, &args)?
            }
            Op::Cast(arg, mode) => b.cast(map[arg.index()], node.dtype, *mode)?,
        };
        map.push(id);
    }
    b.output(map[program.outputs()[k].index()])?;
    b.build()
}

/// The class of a block from its mask's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    /// Every pair hidden: the block is skipped.
    Hidden,
    /// Every pair visible: read without running output 0.
    Shown,
    /// Output 0 runs on the block.
    Mixed,
}

impl Class {
    pub(super) fn of(r: Range) -> Class {
        if r.is_always(false) {
            Class::Hidden
        } else if r.is_always(true) {
            Class::Shown
        } else {
            Class::Mixed
        }
    }
}
