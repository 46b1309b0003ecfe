//! Flash attention: `o = softmax(scale · q·kᵀ, masked and rewritten by a
//! program) · v` row by row over key blocks of 64, with the log-sum-exp of
//! each row, in one stated order whose bits depend on a row's own pairs, its
//! dimensions and the dtypes alone — not on the layout, the batch, the head
//! grouping, the thread count or the tier.
//!
//! # Operands
//!
//! - `q`: `[lead…, hq, tq, dk]`; `k`: `[lead…, hk, tk, dk]`; `v`:
//!   `[lead…, hk, tk, dv]` ([`Kv`]), one dtype among f16, bf16, f32 and
//!   f64, no wider than the accumulator. Query head `h` reads key head
//!   `h / (hq / hk)` (grouped and multi-query heads: `hk` divides `hq`; k and
//!   v are read where they lie, never copied per query head).
//! - `lse`: `[lead…, hq, tq]`, of the accumulator's dtype, f32 or f64: the
//!   accumulator *is* lse's dtype. `o`: `[lead…, hq, tq, dv]`, of the
//!   accumulator's or q's dtype.
//! - `lengths` (optional): i64 of shape `[lead…]`, each in `0..=tk`: the
//!   rows of lead index `b` read keys `0..lengths[b]` (all `tk` without it).
//! - `loads`: the program's operands 1…, each broadcasting to the pair
//!   space `[lead…, hq, tq, tk]`.
//! - The program ([`crate::map::Program`]) has the score (the accumulator)
//!   as operand 0 and one operand per load; output 0 is a bool, whether the
//!   pair is visible, and must not read operand 0; output 1 (the
//!   accumulator) is the score the softmax takes; its coordinates are the
//!   pair space's (axis `r − 3` the query head, `r − 2` the query row,
//!   `r − 1` the key, `r` q's rank) and must be below `r`. [`programs`]
//!   makes the common ones; [`Program::parse`](crate::map::Program::parse)
//!   reads any from text.
//!
//! # Order
//!
//! Each row reads its keys in blocks of 64 from key 0 and keeps a maximum
//! `m`, a sum `l` and an accumulator `a` of `dv` elements, from −∞, +0, +0,
//! all in the accumulator. For each block where the row has a visible pair:
//! 1. each pair's score is the sum of the `dk` products of the row's and the
//!    key's elements, added in increasing dimension from +0, each product
//!    fused into the sum, then multiplied by the scale rounded to the
//!    accumulator, then rewritten by output 1;
//! 2. `m′` is the greatest of `m` and the block's visible scores, a NaN where
//!    one is; where it is −∞ the row's state is left as it was. Otherwise
//!    each weight is `exp(x − m′)` (tessera's `exp`), 0 at a hidden pair;
//!    `α = exp(m − m′)`; `l ← α·l + s` (the product rounded, then the sum)
//!    with `s` the block's weights summed term `j` into lane `j mod 8`,
//!    lanes `i` and `i + 4` added, then `i + 2`, then `i + 1`; `a ← α·a`
//!    (unchanged where α is 1);
//! 3. `a` then adds each weight, rounded to the values' dtype, times its
//!    key's value, in increasing key, each product fused into its sum, over
//!    the block's keys (a hidden pair's weight 0 included) — over its
//!    visible pairs alone where a value the row hides in the block is a NaN
//!    or an infinity.
//!
//! A block where the row has no visible pair leaves its state as it was.
//! At the end `o = a / l + 0` in the accumulator, rounded once into o's
//! dtype (the `+ 0` makes a −0 +0); `lse = m + log l` (tessera's `log`),
//! +∞ where `m` is; a row of `l = 0` (no visible key, or every visible
//! score −∞) has `o = +0` and `lse = −∞`. A NaN result is the positive quiet
//! NaN. So a value at a pair hidden from a row, finite or not, never
//! reaches its `o`.
//!
//! # The program and block skipping
//!
//! Output 0 runs, as [`map`](crate::map::map) computes it, on the pairs of a
//! block before its keys are read; output 1 on the block's scores. A
//! program whose output 0 is the constant true, or whose output 1 is its
//! operand 0, runs no node for it. The rows of a lead index's key head go
//! in units of `h` consecutive query heads of its group (`h` the lesser of
//! the group's size and 64) and `⌊64 / h⌋` consecutive rows of each. Before
//! a unit reads a block it takes the ranges of output 0
//! ([`Program::ranges`](crate::map::Program::ranges)) over the block's box
//! (the unit's lead index, heads and rows, the block's keys, each load's
//! least and greatest element there, a load of fewer than 8 bits taking its
//! dtype's ends): a block whose range is "false" is skipped, one whose
//! range is "true" is read without running output 0. The ranges are sound,
//! so skipping changes no bit.
//!
//! # Bound
//!
//! For a row that reads `t` keys in `n = ⌈t / 64⌉` blocks, barring overflow
//! and underflow, with `u` the accumulator's unit roundoff, `u′ = u / (1 −
//! u)`, `b` a bound on the visible scores' magnitudes and `L` the exact
//! log-sum-exp of the row's computed scores: a rounding errs by at most `u′`
//! in log space, tessera's `exp` (within 2 ulps) by `5u′`, its `log` (1 ulp
//! in f32, 2 in f64) by a relative `e^{λu} − 1` with λ = 3 (f32) or 5 (f64).
//! Then `l` is within `(7n + 9 + ln t)·u′` of its exact value in log space;
//! `|lse − L| ≤ e^{λu}(7n + 9 + ln t)u′ + (e^{λu} − 1) ln t + u′|lse|`; and
//! each weight `w` an element of `o` holds (with that element's roundings of
//! `α·a` and of the division by `l`) has `|ln w − (x − L)| ≤ 2bu + (13n + 9
//! + ln t)u′`. The error of an element of `o` is then that of a convex
//! combination of the values with these weights, plus the final rounding
//! into o's dtype (and, for narrow values, the weights' rounding to the
//! values' dtype, a relative `2^{-p}` of each weight).
//!
//! # Work and memory
//!
//! Keys are copied into the accumulator by blocks of 64 (`dk × 64`); values
//! of the accumulator's dtype whose dimension steps one element are read in
//! place, others copied by blocks. Each task holds one work area of
//! [`AttentionPlan::scratch_bytes`] bytes, about `w·(198·dk + 193·dv +
//! 22 000) + 4 200` for an accumulator of `w` bytes, whatever `tq` and
//! `tk`, plus 32 KiB per node of a program that runs (its tiles, lent to
//! `map`, so a run allocates nothing for them); where
//! output 0 is shared across lead indices and heads the call also holds
//! one byte per query row and key block. The scores' and values' products
//! run on the contraction's microkernels. Threads take whole units (never a
//! part of a row's keys), so the bits are the same at any count.
//!
//! # Refusals
//!
//! Before any write: ranks, extents and dtypes that do not fit the above
//! ([`Error::Rank`], [`Error::Shape`], [`Error::DTypeMismatch`],
//! [`Error::DTypeUnsupported`]), a key head count that does not divide the
//! query heads ([`Error::Shape`]), a program of another arity or dtypes, an
//! output 0 that reads the score, a coordinate beyond q's rank
//! ([`Error::Attribute`], [`Error::DTypeMismatch`], [`Error::Axis`]), a
//! load that does not broadcast to the pair space, lengths of another
//! shape or dtype or out of `0..=tk` ([`Error::Attribute`]), destinations
//! that reach an element twice ([`Error::Layout`]), an unavailable tier, a
//! work area that cannot be allocated ([`Error::Alloc`]).
//! [`attention_refusal`] answers, without computing, whether a call would be
//! refused.

mod engine;
mod pack;
pub mod programs;
mod softmax;

use crate::array::{count_of, ArrayView, ArrayViewMut};
use crate::checks::check_destination_of;
use crate::elementwise::broadcasts_to;
use crate::error::{Error, Result};
use crate::map::Program;
use crate::scratch::Scratch;
use crate::tier::Exec;
use crate::DType;
use engine::{Addr, Call};
use programs::Analysed;

/// The keys and values of an attention.
#[derive(Clone, Debug)]
pub struct Kv<'a> {
    /// Keys, `[lead…, hk, tk, dk]`.
    pub k: ArrayView<'a>,
    /// Values, `[lead…, hk, tk, dv]`.
    pub v: ArrayView<'a>,
}

/// The dtypes and shapes an [`AttentionPlan`] is made for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttentionShapes {
    /// q's dtype and shape.
    pub q: (DType, Vec<usize>),
    /// k's.
    pub k: (DType, Vec<usize>),
    /// v's.
    pub v: (DType, Vec<usize>),
    /// Each load's.
    pub loads: Vec<(DType, Vec<usize>)>,
    /// The lengths' shape (i64), if given.
    pub lengths: Option<Vec<usize>>,
    /// o's.
    pub o: (DType, Vec<usize>),
    /// lse's (its dtype is the accumulator).
    pub lse: (DType, Vec<usize>),
}

fn of(v: &ArrayView<'_>) -> (DType, Vec<usize>) {
    (v.dtype(), v.shape().to_vec())
}

impl AttentionShapes {
    /// The shapes of a call's operands.
    pub fn of(
        q: &ArrayView<'_>,
        kv: &Kv<'_>,
        loads: &[ArrayView<'_>],
        lengths: Option<&ArrayView<'_>>,
        o: &ArrayViewMut<'_>,
        lse: &ArrayViewMut<'_>,
    ) -> AttentionShapes {
        AttentionShapes {
            q: of(q),
            k: of(&kv.k),
            v: of(&kv.v),
            loads: loads.iter().map(of).collect(),
            lengths: lengths.map(|l| l.shape().to_vec()),
            o: (o.dtype(), o.shape().to_vec()),
            lse: (lse.dtype(), lse.shape().to_vec()),
        }
    }
}

/// An attention planned once for its program, scale and operand shapes
/// (the plan and scratch convention of the crate: [`AttentionPlan::new`]
/// refuses what cannot run, [`AttentionPlan::scratch_bytes`] is one task's
/// work area, [`AttentionPlan::run`] and
/// [`AttentionPlan::run_with_scratch`] compute). The results are
/// [`attention`]'s, bit for bit.
#[derive(Clone, Debug)]
pub struct AttentionPlan {
    shapes: AttentionShapes,
    scale: f64,
    program: Analysed,
    acc: DType,
    blocks: usize,
}

fn rank_err(name: &str, shape: &[usize], expected: String) -> Error {
    Error::Rank {
        operand: format!("attention {name}"),
        shape: shape.to_vec(),
        expected,
    }
}

fn shape_err(name: &str, shape: &[usize], target: Vec<usize>) -> Error {
    Error::Shape {
        operand: format!("attention {name}"),
        shape: shape.to_vec(),
        target,
    }
}

impl AttentionPlan {
    /// Plan an attention of `program` with `scale` over operands of
    /// `shapes`. Refuses (before any work) everything the module documents
    /// but layouts, length values and the tier, which a run checks.
    pub fn new(program: &Program, scale: f64, shapes: &AttentionShapes) -> Result<AttentionPlan> {
        let s = shapes;
        for (name, sh) in [
            ("q", &s.q.1),
            ("k", &s.k.1),
            ("v", &s.v.1),
            ("o", &s.o.1),
            ("lse", &s.lse.1),
        ] {
            count_of(sh, &format!("attention {name}"))?;
        }
        for (i, l) in s.loads.iter().enumerate() {
            count_of(&l.1, &format!("attention load {i}"))?;
        }
        let acc = s.lse.0;
        if !matches!(acc, DType::F32 | DType::F64) {
            return Err(Error::DTypeUnsupported {
                operand: "attention lse (the accumulator)".into(),
                dtype: acc,
                reason: "the accumulator is f32 or f64".into(),
            });
        }
        let input = s.q.0;
        if !matches!(input, DType::F16 | DType::Bf16 | DType::F32 | DType::F64) {
            return Err(Error::DTypeUnsupported {
                operand: "attention q".into(),
                dtype: input,
                reason: "q, k and v are f16, bf16, f32 or f64".into(),
            });
        }
        if input == DType::F64 && acc == DType::F32 {
            return Err(Error::DTypeUnsupported {
                operand: "attention q".into(),
                dtype: input,
                reason: "q, k and v are no wider than the accumulator (lse's dtype, f32)".into(),
            });
        }
        for (name, d) in [("k", s.k.0), ("v", s.v.0)] {
            if d != input {
                return Err(Error::DTypeMismatch {
                    operand: format!("attention {name}"),
                    expected: input,
                    got: d,
                });
            }
        }
        if s.o.0 != acc && s.o.0 != input {
            return Err(Error::DTypeUnsupported {
                operand: "attention o".into(),
                dtype: s.o.0,
                reason: format!("o is of the accumulator's dtype ({acc}) or q's ({input})"),
            });
        }
        let q = &s.q.1;
        let r = q.len();
        if r < 3 {
            return Err(rank_err(
                "q",
                q,
                "rank 3 or more: [lead…, heads, rows, dk]".into(),
            ));
        }
        let nl = r - 3;
        let lead = &q[..nl];
        let (hq, tq, dk) = (q[nl], q[nl + 1], q[nl + 2]);
        let k = &s.k.1;
        if k.len() != r {
            return Err(rank_err(
                "k",
                k,
                format!("q's rank, {r}: [lead…, key heads, keys, dk]"),
            ));
        }
        let (hk, tk) = (k[nl], k[nl + 1]);
        let want_k: Vec<usize> = lead.iter().copied().chain([hk, tk, dk]).collect();
        if *k != want_k {
            return Err(shape_err("k", k, want_k));
        }
        if (hk == 0 && hq != 0) || (hk != 0 && hq % hk != 0) {
            return Err(Error::Shape {
                operand: format!("attention k (key heads {hk} must divide query heads {hq})"),
                shape: k.clone(),
                target: want_k,
            });
        }
        let v = &s.v.1;
        if v.len() != r {
            return Err(rank_err(
                "v",
                v,
                format!("q's rank, {r}: [lead…, key heads, keys, dv]"),
            ));
        }
        let dv = v[nl + 2];
        let want_v: Vec<usize> = lead.iter().copied().chain([hk, tk, dv]).collect();
        if *v != want_v {
            return Err(shape_err("v", v, want_v));
        }
        let want_o: Vec<usize> = lead.iter().copied().chain([hq, tq, dv]).collect();
        if s.o.1 != want_o {
            return Err(shape_err("o", &s.o.1, want_o));
        }
        let want_lse: Vec<usize> = lead.iter().copied().chain([hq, tq]).collect();
        if s.lse.1 != want_lse {
            return Err(shape_err("lse", &s.lse.1, want_lse));
        }
        if let Some(l) = &s.lengths {
            if l.as_slice() != lead {
                return Err(shape_err("lengths", l, lead.to_vec()));
            }
        }
        let pair: Vec<usize> = lead.iter().copied().chain([hq, tq, tk]).collect();
        for (i, l) in s.loads.iter().enumerate() {
            if !broadcasts_to(&l.1, &pair) {
                return Err(shape_err(&format!("load {i}"), &l.1, pair.clone()));
            }
        }
        let load_dtypes: Vec<DType> = s.loads.iter().map(|l| l.0).collect();
        let program = programs::analyse(program, acc, r, &load_dtypes)?;
        let blocks = engine::blocks_per_task(acc, dk, dv, program.tile_blocks);
        Ok(AttentionPlan {
            shapes: shapes.clone(),
            scale,
            program,
            acc,
            blocks,
        })
    }

    /// The shapes planned.
    pub fn shapes(&self) -> &AttentionShapes {
        &self.shapes
    }

    /// Bytes of one task's work area (a query: on any tier and layout). A
    /// run uses as many of its `exec`'s threads as its scratch holds areas
    /// for, and the bits are the same at any count.
    pub fn scratch_bytes(&self) -> usize {
        self.blocks * 64
    }

    /// Run on operands of the planned shapes, on `exec`'s tier and threads,
    /// with work areas allocated for the call.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        q: &ArrayView<'_>,
        kv: &Kv<'_>,
        loads: &[ArrayView<'_>],
        lengths: Option<&ArrayView<'_>>,
        o: &mut ArrayViewMut<'_>,
        lse: &mut ArrayViewMut<'_>,
        exec: &Exec,
    ) -> Result<()> {
        let tier = exec.resolve_tier()?;
        let lens = self.check(q, kv, loads, lengths, o, lse)?;
        // One area per thread where memory allows, else one.
        let one = self.scratch_bytes();
        let want = one.saturating_mul(exec.thread_count());
        let mut scratch = Scratch::with_size(want).or_else(|_| Scratch::with_size(one))?;
        self.execute(tier, q, kv, loads, lens, o, lse, &mut scratch, exec)
    }

    /// [`AttentionPlan::run`] with the work areas in the caller's
    /// `scratch`, grown (fallibly) to one task's area where it is smaller;
    /// the run uses as many of `exec`'s threads as `scratch` holds areas
    /// for.
    #[allow(clippy::too_many_arguments)]
    pub fn run_with_scratch(
        &self,
        q: &ArrayView<'_>,
        kv: &Kv<'_>,
        loads: &[ArrayView<'_>],
        lengths: Option<&ArrayView<'_>>,
        o: &mut ArrayViewMut<'_>,
        lse: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        let tier = exec.resolve_tier()?;
        let lens = self.check(q, kv, loads, lengths, o, lse)?;
        self.execute(tier, q, kv, loads, lens, o, lse, scratch, exec)
    }

    /// Everything a run checks of its operands, and the lengths read.
    fn check(
        &self,
        q: &ArrayView<'_>,
        kv: &Kv<'_>,
        loads: &[ArrayView<'_>],
        lengths: Option<&ArrayView<'_>>,
        o: &ArrayViewMut<'_>,
        lse: &ArrayViewMut<'_>,
    ) -> Result<Vec<usize>> {
        let got = AttentionShapes::of(q, kv, loads, lengths, o, lse);
        if got.loads.len() != self.shapes.loads.len() {
            return Err(Error::Attribute {
                name: "attention loads".into(),
                reason: format!(
                    "{} loads given; the plan was made for {}",
                    got.loads.len(),
                    self.shapes.loads.len()
                ),
            });
        }
        if got.lengths.is_some() != self.shapes.lengths.is_some() {
            return Err(Error::Attribute {
                name: "attention lengths".into(),
                reason: "the plan was made with lengths given or left out, and the run differs"
                    .into(),
            });
        }
        if got != self.shapes {
            // Name the first operand that differs.
            let named = [
                ("q".to_string(), &got.q, &self.shapes.q),
                ("k".to_string(), &got.k, &self.shapes.k),
                ("v".to_string(), &got.v, &self.shapes.v),
                ("o".to_string(), &got.o, &self.shapes.o),
                ("lse".to_string(), &got.lse, &self.shapes.lse),
            ];
            let loads = (got.loads.iter().zip(&self.shapes.loads))
                .enumerate()
                .map(|(i, (g, w))| (format!("load {i}"), g, w));
            for (name, g, w) in named.into_iter().chain(loads) {
                if g.0 != w.0 {
                    return Err(Error::DTypeMismatch {
                        operand: format!("attention {name}"),
                        expected: w.0,
                        got: g.0,
                    });
                }
                if g.1 != w.1 {
                    return Err(shape_err(&name, &g.1, w.1.clone()));
                }
            }
            if got.lengths != self.shapes.lengths {
                return Err(shape_err(
                    "lengths",
                    got.lengths.as_deref().unwrap_or(&[]),
                    self.shapes.lengths.clone().unwrap_or_default(),
                ));
            }
        }
        check_destination_of(o, "attention o", &[])?;
        check_destination_of(lse, "attention lse", &[])?;
        let q = &self.shapes.q.1;
        let nl = q.len() - 3;
        let tk = self.shapes.k.1[nl + 1];
        let leads: usize = q[..nl].iter().product();
        match lengths {
            None => Ok(vec![tk; leads]),
            Some(l) => {
                if l.dtype() != DType::I64 {
                    return Err(Error::DTypeMismatch {
                        operand: "attention lengths".into(),
                        expected: DType::I64,
                        got: l.dtype(),
                    });
                }
                let mut out = Vec::new();
                out.try_reserve_exact(leads).map_err(|_| Error::Alloc {
                    what: "attention lengths".into(),
                    elements: leads,
                })?;
                let a = Addr::of(l);
                let shape = l.shape().to_vec();
                let mut idx = vec![0usize; shape.len()];
                for _ in 0..leads {
                    let mut e = a.offset;
                    for (&i, &s) in idx.iter().zip(&a.strides) {
                        e += i as isize * s;
                    }
                    let p = e as usize * 8;
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&l.data()[p..p + 8]);
                    let v = i64::from_ne_bytes(b);
                    if v < 0 || v as u128 > tk as u128 {
                        return Err(Error::Attribute {
                            name: "attention lengths".into(),
                            reason: format!("length {v} at lead index {idx:?} is outside 0..={tk}"),
                        });
                    }
                    out.push(v as usize);
                    for ax in (0..shape.len()).rev() {
                        idx[ax] += 1;
                        if idx[ax] < shape[ax] {
                            break;
                        }
                        idx[ax] = 0;
                    }
                }
                Ok(out)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        tier: crate::Tier,
        q: &ArrayView<'_>,
        kv: &Kv<'_>,
        loads: &[ArrayView<'_>],
        lengths: Vec<usize>,
        o: &mut ArrayViewMut<'_>,
        lse: &mut ArrayViewMut<'_>,
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        let qs = &self.shapes.q.1;
        let nl = qs.len() - 3;
        let pair: Vec<usize> = qs[..nl]
            .iter()
            .copied()
            .chain([qs[nl], qs[nl + 1], self.shapes.k.1[nl + 1]])
            .collect();
        let loads: Vec<(ArrayView<'_>, Vec<isize>)> = loads
            .iter()
            .map(|l| (l.clone(), pair_strides(l, &pair)))
            .collect();
        let call = Call {
            tier,
            acc: self.acc,
            input: self.shapes.q.0,
            out: self.shapes.o.0,
            scale: self.scale,
            lead: qs[..nl].to_vec(),
            hq: qs[nl],
            hk: self.shapes.k.1[nl],
            tq: qs[nl + 1],
            tk: self.shapes.k.1[nl + 1],
            dk: qs[nl + 2],
            dv: self.shapes.v.1[nl + 2],
            q: Addr::of(q),
            k: Addr::of(&kv.k),
            v: Addr::of(&kv.v),
            o: Addr::of_mut(o),
            lse: Addr::of_mut(lse),
            lengths,
            loads,
            program: &self.program,
            shared: None,
        };
        let mut call = call;
        if engine::shareable(&call) {
            call.shared = Some(engine::shared_classes(&call)?);
        }
        // An empty o or lse: nothing to write (every row count is then 0,
        // or dv is 0 and lse still has rows).
        engine::run(&call, scratch, exec)
    }
}

/// A load's strides in the pair space (right-aligned; 0 where it
/// broadcasts or has extent 1).
fn pair_strides(l: &ArrayView<'_>, pair: &[usize]) -> Vec<isize> {
    let r = pair.len();
    let lr = l.shape().len();
    (0..r)
        .map(|a| {
            if a + lr < r {
                0
            } else {
                let la = a + lr - r;
                if l.shape()[la] == 1 {
                    0
                } else {
                    l.strides()[la]
                }
            }
        })
        .collect()
}

/// Attention of `q` over `kv` with `program` (the module documentation's
/// contract, order, bound and refusals): `o` and `lse` are written, on
/// `exec`'s tier and threads, or the call is refused before any write.
#[allow(clippy::too_many_arguments)]
pub fn attention(
    program: &Program,
    scale: f64,
    q: &ArrayView<'_>,
    kv: &Kv<'_>,
    loads: &[ArrayView<'_>],
    lengths: Option<&ArrayView<'_>>,
    o: &mut ArrayViewMut<'_>,
    lse: &mut ArrayViewMut<'_>,
    exec: &Exec,
) -> Result<()> {
    let shapes = AttentionShapes::of(q, kv, loads, lengths, o, lse);
    AttentionPlan::new(program, scale, &shapes)?.run(q, kv, loads, lengths, o, lse, exec)
}

/// Whether [`attention`] would refuse these operands, and why (a query: no
/// `exec`, nothing computed or written; the tier is checked by the call).
#[allow(clippy::too_many_arguments)]
pub fn attention_refusal(
    program: &Program,
    scale: f64,
    q: &ArrayView<'_>,
    kv: &Kv<'_>,
    loads: &[ArrayView<'_>],
    lengths: Option<&ArrayView<'_>>,
    o: &ArrayViewMut<'_>,
    lse: &ArrayViewMut<'_>,
) -> Option<Error> {
    let shapes = AttentionShapes::of(q, kv, loads, lengths, o, lse);
    match AttentionPlan::new(program, scale, &shapes) {
        Err(e) => Some(e),
        Ok(plan) => plan.check(q, kv, loads, lengths, o, lse).err(),
    }
}
