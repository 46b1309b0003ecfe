//! Fused elementwise programs: several kinds, casts, constants and
//! coordinates evaluated tile by tile, so a chain of kinds reads and writes
//! memory once.
//!
//! # Semantics
//!
//! A [`Program`] is a list of typed nodes ([`Node`], [`Op`]): loads of the
//! inputs, constants, coordinates, elementwise kinds of the catalogue and
//! casts, and a list of outputs. Each node computes exactly in its carrier and
//! rounds once into its own dtype: a kind node gives, at every index, the bits
//! one [`elementwise`](crate::elementwise()) call of that kind gives on arrays
//! holding its arguments' values, and a cast node the bits of one
//! [`cast`](crate::cast()) in its mode. So a program's outputs are the
//! composition of single-kind calls, and like them a function of the inputs'
//! values alone: not of their layouts, the thread count or the tier. An output
//! that is a load copies its input's storage as it is.
//!
//! Programs are typed when they are built: the input dtypes are given (to
//! [`ProgramBuilder::load`] or [`ProgramBuilder::with_inputs`], or to
//! [`Program::parse`]), every node's dtype follows
//! ([`call_dtype`](crate::elementwise::call_dtype) and
//! [`result_dtype`](crate::elementwise::result_dtype) for kinds), and a call
//! checks its operands against them.
//!
//! # Running
//!
//! [`map`] runs a program over inputs of any layouts (strides in elements,
//! zero and negative ones, offsets, sub-byte dtypes packed along the last
//! axis) into outputs that all have one shape, to which the inputs broadcast
//! by numpy's rules. It checks everything first — input and output counts and
//! dtypes, shapes, each output's layout (no element reached twice),
//! coordinate axes against the outputs' rank, the tier — and refuses with an
//! [`Error`](crate::Error) naming the operand or the node before it writes
//! anything. It then resolves every kernel once and runs the indices of the
//! outputs' shape in C order, in tiles of 1024: each input the program loads
//! is gathered into a scratch buffer of its dtype (read where it lies when
//! the tile is one unit-stride run), the nodes run in order on the scratch
//! buffers with the generated contiguous kernels (broadcast variants for
//! constants, which are computed once per call), and the outputs are stored
//! (an output's node writes a unit-stride tile straight into it when no
//! input is read in place).
//! Scratch is allocated once per thread and call. Calls of at least 2^18
//! indices split their tiles across the [`Exec`]'s threads.
//!
//! # In place
//!
//! [`map`] takes inputs by shared borrow and outputs by unique borrow, so no
//! input can overlap an output. [`map_in_place`] lets input `i` be the
//! current contents of output `k` ([`Source::Output`]): that input then has
//! exactly the output's layout (same memory, offset and strides, no
//! broadcast), and since each tile reads all its inputs before it stores any
//! output, the results are those of a fresh destination. No other overlap
//! of an input and an output can be expressed.
//!
//! # Text
//!
//! Statements `name = expression`, separated by `;` (a trailing `;`,
//! whitespace and `#` comments to the end of a line are allowed):
//!
//! ```text
//! program   := stmt { ";" stmt } [ ";" ]
//! stmt      := name "=" expr
//! expr      := additive { ("<" | "<=" | ">" | ">=" | "==" | "!=") additive }
//! additive  := term { ("+" | "-") term }
//! term      := unary { ("*" | "/" | "%") unary }
//! unary     := "-" unary | primary
//! primary   := literal | name | "(" expr ")" | kind "(" [ expr { "," expr } ] ")"
//!            | "cast<" dtype ">(" expr ")" | "cast_sat<" dtype ">(" expr ")"
//!            | "coord(" integer ")"
//! literal   := digits [ "." digits ] [ ("e" | "E") [ "+" | "-" ] digits ] [ [ "_" ] dtype ]
//!            | ("inf" | "nan") [ "_" dtype ] | "true" | "false"
//! ```
//!
//! - `x0, x1, …` are the inputs, of the dtypes given to [`Program::parse`];
//!   `y0, y1, …` are the outputs, each assigned once, without gaps; any other
//!   name is an intermediate, assigned once before it is read (so no cycle
//!   can be written) and usable like an output's name.
//! - Operators name kinds: `+ - * / %` are `add sub mul div rem`, `< <= > >=
//!   == !=` are `lt le gt ge eq ne`, unary `-` is `neg`; comparisons bind
//!   loosest, then `+ -`, then `* / %`, then unary minus, all left to right.
//!   Every kind of the catalogue is also a function of its arity (`fma(a, b,
//!   c)`, `select(c, a, b)`, `sqrt(a)`).
//! - `cast<d>(e)` is a default-mode cast into dtype `d`, `cast_sat<d>(e)` a
//!   saturating one; `coord(a)` is the index along axis `a` of the outputs'
//!   shape, an i64.
//! - A literal with a dtype suffix (`0.5f32`, `3i32`, `2_e4m3fn`) is that
//!   value rounded once into that dtype, as a default-mode cast from f64 (or
//!   i64/u64 for integers) rounds it; an integer dtype refuses a float literal
//!   and a value beyond its range. A literal without a suffix takes the dtype
//!   of the other operands of its kind (a literal with none to take is
//!   refused). A minus written right before a number or `inf` belongs to the
//!   literal (`-0.0f32` is a constant, `-(0.0f32)` is `neg` of one).
//! - `x{i}` and `y{k}` are written without leading zeros (`x01`, `y00` are
//!   refused). An index is parsed with checked arithmetic and never sizes
//!   anything: an `x` index must be below the number of inputs given, and
//!   the `y` indices assigned must be exactly `0 … n-1` (the first missing
//!   one is named); a `y` index beyond `usize` is a parse error.
//!
//! Printing a program ([`std::fmt::Display`]) gives text that parses, with the
//! same input dtypes, into an equal program; every literal is printed with
//! its dtype. Parse errors ([`Error::Parse`](crate::Error::Parse)) name the
//! byte offset and the token; type errors
//! ([`Error::Program`](crate::Error::Program)) name the node by its text.
//! Messages quote at most 400 bytes of a token, a name or a node's text (a
//! longer one is cut and ends with `…`).
//!
//! **Limits.** At most [`MAX_NESTING`] (256) levels may be open at once, a
//! level being a parenthesis, the argument list of a kind or a cast, or a
//! unary minus (`coord(…)` and the minus of a literal such as `-2f32` open
//! none); the token that opens level 257 is refused with an
//! [`Error::Parse`] at its offset. Nothing else is limited: statements,
//! terms of a flat chain (`x0 + x0 + …`, a million terms and more), nodes
//! and the length of names are bounded by memory alone. The parser, the lowering into nodes, dropping the parsed text and
//! printing all walk with explicit stacks, never recursion, so no text and
//! no program built with [`ProgramBuilder`] or [`Program::new`] reaches the
//! call stack's limit; the printer names nodes (`t{i} = …`) where writing
//! them inline would nest deeper than [`MAX_NESTING`], so what it prints
//! parses back.
//!
//! # Example
//!
//! ```
//! use tessera::map::{map, Program};
//! use tessera::{ArrayView, ArrayViewMut, DType, Exec};
//!
//! let p = Program::parse("y0 = (x0 - x1) * 0.5f32; y1 = x0 > x1", &[DType::F32, DType::F32])?;
//! let a = [1.0f32, 2.0, 3.0, 4.0];
//! let b = [2.0f32];                               // broadcast
//! let (mut y0, mut y1) = ([0.0f32; 4], [false; 4]);
//! map(
//!     &p,
//!     &[ArrayView::from_slice(&a, &[4])?, ArrayView::from_slice(&b, &[1])?],
//!     &mut [ArrayViewMut::from_slice(&mut y0, &[4])?, ArrayViewMut::from_slice(&mut y1, &[4])?],
//!     &Exec::default(),
//! )?;
//! assert_eq!(y0, [-0.5, 0.0, 0.5, 1.0]);
//! assert_eq!(y1, [false, false, true, true]);
//! assert_eq!(p.to_string(), "y0 = (x0 - x1) * 0.5f32; y1 = x0 > x1");
//! # Ok::<(), tessera::Error>(())
//! ```

mod exec;
pub mod forms;
pub(crate) use exec::{plan_terms, TermPlan, TileScratch, TILE};
mod program;
mod ranges;
mod text;

pub use program::{Node, NodeId, Op, Program, ProgramBuilder, Scalar};
pub use ranges::Range;
pub use text::MAX_NESTING;

use crate::array::{count_of, ArrayView, ArrayViewMut};
use crate::error::{Error, Result};
use crate::scratch::Scratch;
use crate::tier::Exec;

/// Where an input of [`map_in_place`] comes from.
#[derive(Clone, Debug)]
pub enum Source<'a> {
    /// A read-only view (it broadcasts to the outputs' shape).
    View(ArrayView<'a>),
    /// The current contents of output `k`, read before each tile of it is
    /// written (the in-place rule of the module documentation).
    Output(usize),
}

/// A program planned once for the shapes of its inputs and of its outputs,
/// to run many times on operands of those shapes (any layouts): the checks
/// that depend on shapes and dtypes alone, the choice of every node's kernel
/// and variant, the constants and the scratch slots are done by
/// [`MapPlan::new`]; each [`MapPlan::run`] checks the operands against the
/// plan and their layouts, binds them and runs. The results are those of
/// [`map`], bit for bit.
///
/// ```
/// use tessera::map::{MapPlan, Program};
/// use tessera::{ArrayView, ArrayViewMut, DType, Exec};
///
/// let p = Program::parse("y0 = fma(x0, x1, 1f32)", &[DType::F32, DType::F32])?;
/// let plan = MapPlan::new(&p, &[&[4], &[1]], &[4])?;
/// let mut y = [0.0f32; 4];
/// for scale in [2.0f32, 3.0] {
///     plan.run(
///         &[ArrayView::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])?, ArrayView::from_slice(&[scale], &[1])?],
///         &mut [ArrayViewMut::from_slice(&mut y, &[4])?],
///         &Exec::default(),
///     )?;
/// }
/// assert_eq!(y, [4.0, 7.0, 10.0, 13.0]);
/// # Ok::<(), tessera::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct MapPlan {
    program: Program,
    input_shapes: Vec<Vec<usize>>,
    shape: Vec<usize>,
    resolved: exec::Resolved,
}

impl MapPlan {
    /// Plan `program` for inputs of its input dtypes and of `inputs`' shapes
    /// (each broadcasting to `shape`) and outputs of `shape`. Refuses (with
    /// [`map`]'s errors) a wrong input count, a shape that does not
    /// broadcast, a shape of more elements than `isize::MAX`
    /// ([`Error::Overflow`]), a coordinate axis not below the rank of
    /// `shape`, and a node whose kind is not defined for its dtypes.
    pub fn new(program: &Program, inputs: &[&[usize]], shape: &[usize]) -> Result<MapPlan> {
        // The shapes are no views yet: their sizes are checked here as a
        // view's are when it is made.
        count_of(shape, "the outputs' shape")?;
        for (i, sh) in inputs.iter().enumerate() {
            count_of(sh, &format!("input {i} (x{i})"))?;
        }
        exec::check_input_count(program, inputs.len())?;
        for (i, sh) in inputs.iter().enumerate() {
            exec::check_input(program, i, program.inputs()[i], sh, shape)?;
        }
        exec::check_coords(program, shape.len(), "the outputs")?;
        let resolved = exec::resolve_shapes(program, shape, inputs)?;
        Ok(MapPlan {
            program: program.clone(),
            input_shapes: inputs.iter().map(|s| s.to_vec()).collect(),
            shape: shape.to_vec(),
            resolved,
        })
    }

    /// The program planned.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Bytes of tile scratch one thread of a run needs (a tile of the widest
    /// element per live node and per output), on any tier. A run uses as
    /// many of its `exec`'s threads as its scratch holds regions for, and the
    /// bits are the same at any count. A run still makes small allocations of
    /// the program's size for its bookkeeping.
    pub fn scratch_bytes(&self) -> usize {
        self.resolved
            .scratch_bytes(self.program.output_dtypes().len())
    }

    /// Run the plan on `inputs` and `outputs` of the planned shapes (and the
    /// program's dtypes), on `exec`'s tier and threads: [`map`]'s results.
    /// Refuses, before any write, operands of other shapes and everything
    /// [`map`] refuses of layouts.
    pub fn run(
        &self,
        inputs: &[ArrayView<'_>],
        outputs: &mut [ArrayViewMut<'_>],
        exec: &Exec,
    ) -> Result<()> {
        let ins: Vec<exec::In<'_, '_>> = inputs.iter().map(exec::In::View).collect();
        self.run_sources(&ins, outputs, exec)
    }

    /// [`MapPlan::run`] with the tile scratch in the caller's `scratch`,
    /// grown (fallibly) to [`MapPlan::scratch_bytes`] where it is smaller;
    /// the run uses as many of `exec`'s threads as `scratch` holds regions
    /// for.
    pub fn run_with_scratch(
        &self,
        inputs: &[ArrayView<'_>],
        outputs: &mut [ArrayViewMut<'_>],
        scratch: &mut Scratch,
        exec: &Exec,
    ) -> Result<()> {
        let ins: Vec<exec::In<'_, '_>> = inputs.iter().map(exec::In::View).collect();
        let tier = exec.resolve_tier_for(crate::tier::Engine::Map)?;
        self.check_sources(&ins, outputs)?;
        scratch.reserve(self.scratch_bytes().div_ceil(64) * 64)?;
        exec::execute(
            tier,
            exec,
            &self.program,
            &self.resolved,
            &ins,
            outputs,
            Some(scratch.blocks_mut()),
        )
    }

    /// [`MapPlan::run`] where an input may be an output's current contents
    /// ([`Source::Output`], as [`map_in_place`]); such an input must have
    /// been planned with the outputs' shape.
    pub fn run_in_place(
        &self,
        inputs: &[Source<'_>],
        outputs: &mut [ArrayViewMut<'_>],
        exec: &Exec,
    ) -> Result<()> {
        let ins = sources(inputs);
        self.run_sources(&ins, outputs, exec)
    }

    fn run_sources(
        &self,
        inputs: &[exec::In<'_, '_>],
        outputs: &mut [ArrayViewMut<'_>],
        exec: &Exec,
    ) -> Result<()> {
        let tier = exec.resolve_tier_for(crate::tier::Engine::Map)?;
        self.check_sources(inputs, outputs)?;
        exec::execute(
            tier,
            exec,
            &self.program,
            &self.resolved,
            inputs,
            outputs,
            None,
        )
    }

    /// The operands against the plan, before any write.
    fn check_sources(
        &self,
        inputs: &[exec::In<'_, '_>],
        outputs: &mut [ArrayViewMut<'_>],
    ) -> Result<()> {
        let shape = exec::check_call(&self.program, inputs, outputs)?;
        if shape != self.shape {
            return Err(Error::Shape {
                operand: "output 0".into(),
                shape,
                target: self.shape.clone(),
            });
        }
        for (i, (src, want)) in inputs.iter().zip(&self.input_shapes).enumerate() {
            let sh = match src {
                exec::In::View(v) => v.shape(),
                exec::In::Output(_) => &self.shape,
            };
            if sh != want.as_slice() {
                return Err(Error::Shape {
                    operand: format!("input {i} (x{i})"),
                    shape: sh.to_vec(),
                    target: want.clone(),
                });
            }
        }
        Ok(())
    }
}

fn sources<'r, 'a>(inputs: &'r [Source<'a>]) -> Vec<exec::In<'r, 'a>> {
    inputs
        .iter()
        .map(|s| match s {
            Source::View(v) => exec::In::View(v),
            Source::Output(k) => exec::In::Output(*k),
        })
        .collect()
}

/// Run `program` with input `i` read from `inputs[i]` and output `k` stored
/// into `outputs[k]`, on `exec`'s tier and threads (plans the call each
/// time: [`MapPlan`] plans once for many calls).
///
/// The outputs must all have one shape, each its output's dtype
/// ([`Program::output_dtypes`]) and a layout that reaches no element twice;
/// each input must have its program input's dtype and broadcast to that
/// shape; coordinate axes must lie below its rank. Any refusal comes before
/// any write. The results are the composition of single-kind elementwise
/// calls (see the module documentation), identical for every layout, thread
/// count and tier.
pub fn map(
    program: &Program,
    inputs: &[ArrayView<'_>],
    outputs: &mut [ArrayViewMut<'_>],
    exec: &Exec,
) -> Result<()> {
    let ins: Vec<exec::In<'_, '_>> = inputs.iter().map(exec::In::View).collect();
    exec::run(exec, program, &ins, outputs)
}

/// Bytes of tile scratch that suffice for one thread of any run of
/// `program`, whatever the shapes: a slot per node and per output (the
/// slots a run uses are at most those, each of the program's widest
/// element).
pub(crate) fn tile_bytes_bound(program: &Program) -> usize {
    exec::tile_scratch_bytes(
        program.nodes().len(),
        program.outputs().len(),
        exec::program_slot_bytes(program),
    )
}

/// [`map`] on one thread with its tile scratch in `lent`, which holds at
/// least [`tile_bytes_bound`] bytes: the run allocates no tile scratch
/// (only the bookkeeping of the program's size).
pub(crate) fn map_lent(
    program: &Program,
    inputs: &[ArrayView<'_>],
    outputs: &mut [ArrayViewMut<'_>],
    lent: &mut [crate::scratch::Block],
    tier: crate::Tier,
) -> Result<()> {
    let ins: Vec<exec::In<'_, '_>> = inputs.iter().map(exec::In::View).collect();
    let shape = exec::check_call(program, &ins, outputs)?;
    let r = exec::resolve_for(program, &shape, &ins)?;
    let exec1 = Exec {
        tier: Some(tier),
        par: crate::Par::Seq,
    };
    exec::execute(tier, &exec1, program, &r, &ins, outputs, Some(lent))
}

/// [`map`] where an input may be an output's current contents
/// ([`Source::Output`]): the results are those of [`map`] on a copy of that
/// output taken before the call. Refuses, besides [`map`]'s refusals, an
/// output index beyond the outputs.
pub fn map_in_place(
    program: &Program,
    inputs: &[Source<'_>],
    outputs: &mut [ArrayViewMut<'_>],
    exec: &Exec,
) -> Result<()> {
    exec::run(exec, program, &sources(inputs), outputs)
}
