//! The typed IR of a map program: nodes, their dtypes, the builder that checks
//! each node as it is added, and the canonical form programs are kept in.

use crate::cast::CastMode;
use crate::elementwise::{call_dtype, result_dtype};
use crate::error::{Error, Result};
use crate::{Class, DType, Kind};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// A node of a program, by its position. Ids are only meaningful in the
/// builder (or the program) that made them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub(crate) usize);

impl NodeId {
    /// The node's position in its builder or program.
    pub fn index(self) -> usize {
        self.0
    }
    /// The id of the node at `index` (for [`Program::new`]).
    pub fn new(index: usize) -> NodeId {
        NodeId(index)
    }
}

/// The value of a constant node before it is rounded into its dtype.
///
/// A constant node holds `value` rounded once into the node's dtype as a
/// default-mode cast from f64 (`Float`), i64 (`Int`), u64 (`UInt`) or bool
/// (`Bool`) rounds it. Equality and hashing compare float values by their
/// bits (so `-0.0 != 0.0` and a NaN equals itself). An `UInt` that fits an
/// i64 is stored as `Int`.
#[derive(Clone, Copy, Debug)]
pub enum Scalar {
    /// A boolean (bool nodes only).
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer above `i64::MAX`.
    UInt(u64),
    /// A float (float and complex nodes only; complex ones get +0i).
    Float(f64),
}

impl Scalar {
    fn key(self) -> (u8, u64) {
        match self {
            Scalar::Bool(b) => (0, b as u64),
            Scalar::Int(v) => (1, v as u64),
            Scalar::UInt(v) => (2, v),
            Scalar::Float(v) => (3, v.to_bits()),
        }
    }
    /// The canonical form (a `UInt` that fits i64 becomes `Int`).
    pub(crate) fn canonical(self) -> Scalar {
        match self {
            Scalar::UInt(v) if v <= i64::MAX as u64 => Scalar::Int(v as i64),
            s => s,
        }
    }
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Scalar) -> bool {
        self.canonical().key() == other.canonical().key()
    }
}
impl Eq for Scalar {}
impl Hash for Scalar {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.canonical().key().hash(state)
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Scalar {
        Scalar::Float(v)
    }
}
impl From<f32> for Scalar {
    fn from(v: f32) -> Scalar {
        Scalar::Float(v as f64)
    }
}
impl From<i64> for Scalar {
    fn from(v: i64) -> Scalar {
        Scalar::Int(v)
    }
}
impl From<i32> for Scalar {
    fn from(v: i32) -> Scalar {
        Scalar::Int(v as i64)
    }
}
impl From<u64> for Scalar {
    fn from(v: u64) -> Scalar {
        Scalar::UInt(v).canonical()
    }
}
impl From<bool> for Scalar {
    fn from(v: bool) -> Scalar {
        Scalar::Bool(v)
    }
}

/// What a node computes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Program input `i` (`x{i}` in text), at each index of the outputs'
    /// shape (inputs broadcast to it).
    Load(usize),
    /// A constant, the same at every index.
    Const(Scalar),
    /// The index along axis `a` of the outputs' shape, as an i64.
    Coord(usize),
    /// An elementwise kind of the catalogue on earlier nodes, exactly as one
    /// elementwise call of that kind on arrays holding their values computes it.
    Kind(Kind, Vec<NodeId>),
    /// A cast of an earlier node into this node's dtype, exactly as one cast
    /// call in that mode computes it.
    Cast(NodeId, CastMode),
}

/// One node: what it computes and the dtype its result is rounded into.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    /// What it computes.
    pub op: Op,
    /// Its result's dtype: the input's for `Load`, any for `Const`, i64 for
    /// `Coord`, [`result_dtype`] of the call for `Kind`, the target for `Cast`.
    pub dtype: DType,
}

/// A validated program in canonical form: its input dtypes, its nodes (each
/// reading only earlier ones) and its outputs.
///
/// The canonical form keeps the nodes the outputs reach, once each (equal
/// nodes are merged), in the order a depth-first walk from output 0, 1, …
/// meets them (arguments left to right, each node after its arguments). Two
/// programs are equal (`==`) when their canonical forms are: the same inputs,
/// nodes and outputs. Parsing a program's text ([`std::fmt::Display`]) gives
/// an equal program.
///
/// A program also keeps the planning of its last [`crate::map()`] or
/// [`crate::map::map_in_place`] call (its kernels and scratch slots for that
/// loop shape), so that the next call of the same shapes skips it; results
/// never depend on it, a clone starts without it, and `==` and hashing
/// ignore it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    pub(crate) inputs: Vec<DType>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) outputs: Vec<NodeId>,
    /// The last resolution of a `map` call, for the next of the same shape
    /// (no part of the program's value: see its type).
    pub(crate) last_resolved: super::exec::ResolvedCache,
}

impl Program {
    /// A program from raw parts: `inputs` are the input dtypes, `nodes` in
    /// order (each may read only nodes before it, so no cycle can be
    /// expressed), `outputs` the nodes stored into the destinations.
    ///
    /// Refuses (an [`Error::Program`] naming the node) a node that reads a
    /// node not before it, an input beyond `inputs` or of another dtype, a kind
    /// of the wrong arity or dtypes, a constant its dtype cannot hold, a node
    /// whose stated dtype is not the one it computes, an output that is not a
    /// node, and a program without outputs.
    pub fn new(inputs: &[DType], nodes: Vec<Node>, outputs: Vec<NodeId>) -> Result<Program> {
        let mut b = ProgramBuilder::with_inputs(inputs);
        for (i, node) in nodes.into_iter().enumerate() {
            let id = match node.op {
                Op::Load(k) => b.load(k, node.dtype)?,
                Op::Const(v) => b.constant(v, node.dtype)?,
                Op::Coord(a) => {
                    if node.dtype != DType::I64 {
                        return Err(b.refuse_text(
                            format!("coord({a})"),
                            format!("a coord node is i64, not {}", node.dtype),
                        ));
                    }
                    b.coord(a)
                }
                Op::Kind(kind, args) => {
                    b.check_before(i, &args)?;
                    let id = b.apply(kind, &args)?;
                    b.check_dtype(id, node.dtype)?;
                    id
                }
                Op::Cast(arg, mode) => {
                    b.check_before(i, &[arg])?;
                    b.cast(arg, node.dtype, mode)?
                }
            };
            debug_assert_eq!(id.0, i);
        }
        for o in outputs {
            b.output(o)?;
        }
        b.build()
    }

    /// The input dtypes, by input index.
    pub fn inputs(&self) -> &[DType] {
        &self.inputs
    }
    /// The nodes in canonical order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    /// The node of `id`, or None where this program has no node at that
    /// position (an id of another program or builder, or made by
    /// [`NodeId::new`], may name none).
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.0)
    }
    /// The node each output stores, by output index.
    pub fn outputs(&self) -> &[NodeId] {
        &self.outputs
    }
    /// The dtype of each output, by output index: the destinations' dtypes.
    pub fn output_dtypes(&self) -> Vec<DType> {
        self.outputs.iter().map(|o| self.nodes[o.0].dtype).collect()
    }
    /// The text of node `id` as one expression (for messages), cut after a
    /// few hundred bytes (it then ends with `…`).
    pub fn describe(&self, id: NodeId) -> String {
        describe(&self.nodes, id)
    }
}

/// Builds a program one node at a time, checking each node as it is added:
/// every method refuses (an [`Error::Program`] naming the node) before the
/// node is added, so a refused call leaves the builder as it was.
#[derive(Clone, Debug, Default)]
pub struct ProgramBuilder {
    /// The dtypes of the inputs declared so far, by index: only the indices
    /// declared are held, so an index (however large) sizes nothing.
    inputs: BTreeMap<usize, DType>,
    /// The number of inputs, when they were given up front (no more may be
    /// declared).
    fixed: Option<usize>,
    nodes: Vec<Node>,
    outputs: Vec<NodeId>,
}

impl ProgramBuilder {
    /// An empty builder; inputs are declared by [`ProgramBuilder::load`].
    pub fn new() -> ProgramBuilder {
        ProgramBuilder::default()
    }

    /// An empty builder whose inputs have these dtypes.
    pub fn with_inputs(inputs: &[DType]) -> ProgramBuilder {
        ProgramBuilder {
            inputs: inputs.iter().copied().enumerate().collect(),
            fixed: Some(inputs.len()),
            ..ProgramBuilder::default()
        }
    }

    /// The inputs given up front, or one past the highest declared.
    pub(crate) fn input_count(&self) -> usize {
        self.fixed.unwrap_or_else(|| {
            self.inputs
                .keys()
                .next_back()
                .map_or(0, |&i| i.saturating_add(1))
        })
    }

    pub(crate) fn input_dtype(&self, i: usize) -> Option<DType> {
        self.inputs.get(&i).copied()
    }

    /// The dtype of a node of this builder, if the id is one.
    pub fn dtype(&self, id: NodeId) -> Option<DType> {
        self.nodes.get(id.0).map(|n| n.dtype)
    }

    fn push(&mut self, op: Op, dtype: DType) -> NodeId {
        self.nodes.push(Node { op, dtype });
        NodeId(self.nodes.len() - 1)
    }

    fn refuse_text(&self, node: String, reason: String) -> Error {
        Error::Program { node, reason }
    }

    fn check_ids(&self, what: impl Fn() -> String, args: &[NodeId]) -> Result<()> {
        for a in args {
            if a.0 >= self.nodes.len() {
                return Err(Error::Program {
                    node: what(),
                    reason: format!("reads node {}, which this builder does not hold", a.0),
                });
            }
        }
        Ok(())
    }

    fn check_before(&self, i: usize, args: &[NodeId]) -> Result<()> {
        for a in args {
            if a.0 >= i {
                return Err(Error::Program {
                    node: format!("node {i}"),
                    reason: format!(
                        "reads node {}, which does not come before it (a cycle or a forward reference)",
                        a.0
                    ),
                });
            }
        }
        Ok(())
    }

    fn check_dtype(&mut self, id: NodeId, want: DType) -> Result<()> {
        let got = self.nodes[id.0].dtype;
        if got != want {
            let node = describe(&self.nodes, id);
            self.nodes.pop();
            return Err(Error::Program {
                node,
                reason: format!("computes {got}, but the node states {want}"),
            });
        }
        Ok(())
    }

    /// Input `i` (`x{i}`), declaring it of `dtype`. Refuses an input declared
    /// (or given to [`ProgramBuilder::with_inputs`]) with another dtype, and
    /// one beyond the inputs given to `with_inputs`. Any index may be
    /// declared (it sizes nothing); [`ProgramBuilder::build`] refuses inputs
    /// below the highest that were never declared.
    pub fn load(&mut self, i: usize, dtype: DType) -> Result<NodeId> {
        let text = format!("x{i}");
        if let Some(n) = self.fixed {
            if i >= n {
                return Err(Error::Program {
                    node: text,
                    reason: format!("the program has {n} inputs"),
                });
            }
        }
        match self.inputs.get(&i) {
            Some(&d) if d != dtype => {
                return Err(Error::Program {
                    node: text,
                    reason: format!("input {i} is {d}, not {dtype}"),
                })
            }
            _ => {
                self.inputs.insert(i, dtype);
            }
        }
        Ok(self.push(Op::Load(i), dtype))
    }

    /// A constant: `value` rounded once into `dtype` (see [`Scalar`]). Refuses
    /// a bool value for any dtype but bool, a float value for a bool or
    /// integer dtype, and an integer beyond an integer dtype's range.
    pub fn constant(&mut self, value: impl Into<Scalar>, dtype: DType) -> Result<NodeId> {
        let value = value.into().canonical();
        if let Err(reason) = check_constant(value, dtype) {
            return Err(Error::Program {
                node: literal_text(value, dtype),
                reason,
            });
        }
        Ok(self.push(Op::Const(value), dtype))
    }

    /// The index along `axis` of the outputs' shape, as an i64 (the axis is
    /// checked against the outputs' rank when the program runs).
    pub fn coord(&mut self, axis: usize) -> NodeId {
        self.push(Op::Coord(axis), DType::I64)
    }

    /// `kind` applied to `args`, its dtype the kind's result dtype. Refuses a
    /// wrong number of arguments, arguments whose dtypes the kind does not
    /// take together ([`call_dtype`]) and ids this builder does not hold.
    pub fn apply(&mut self, kind: Kind, args: &[NodeId]) -> Result<NodeId> {
        let text = || describe_op(&self.nodes, &Op::Kind(kind, args.to_vec()));
        self.check_ids(text, args)?;
        let dtypes: Vec<DType> = args.iter().map(|a| self.nodes[a.0].dtype).collect();
        let dtype = call_dtype(kind, &dtypes)
            .and_then(|d| result_dtype(kind, d))
            .map_err(|e| Error::Program {
                node: text(),
                reason: e.to_string(),
            })?;
        Ok(self.push(Op::Kind(kind, args.to_vec()), dtype))
    }

    /// [`ProgramBuilder::apply`] of a kind named as the catalogue names it
    /// (refuses an unknown name).
    pub fn apply_named(&mut self, kind: &str, args: &[NodeId]) -> Result<NodeId> {
        match Kind::from_name(kind) {
            Some(k) => self.apply(k, args),
            None => Err(Error::Program {
                node: format!("{kind}(…)"),
                reason: format!("unknown kind `{kind}`"),
            }),
        }
    }

    /// `select(cond, a, b)`: [`ProgramBuilder::apply`] of [`Kind::Select`].
    pub fn select(&mut self, cond: NodeId, a: NodeId, b: NodeId) -> Result<NodeId> {
        self.apply(Kind::Select, &[cond, a, b])
    }

    /// `arg` cast into `dtype` in `mode` (any two dtypes cast). Refuses an id
    /// this builder does not hold.
    pub fn cast(&mut self, arg: NodeId, dtype: DType, mode: CastMode) -> Result<NodeId> {
        let op = Op::Cast(arg, mode);
        self.check_ids(|| format!("cast<{dtype}>(node {})", arg.0), &[arg])?;
        Ok(self.push(op, dtype))
    }

    /// Make `id` the next output; returns its output index. Refuses an id
    /// this builder does not hold.
    pub fn output(&mut self, id: NodeId) -> Result<usize> {
        self.check_ids(|| format!("y{}", self.outputs.len()), &[id])?;
        self.outputs.push(id);
        Ok(self.outputs.len() - 1)
    }

    /// The program in canonical form (see [`Program`]). Refuses a program
    /// without outputs and one whose inputs below the highest loaded were
    /// never declared.
    pub fn build(self) -> Result<Program> {
        if self.outputs.is_empty() {
            return Err(Error::Program {
                node: "program".into(),
                reason: "a program has at least one output".into(),
            });
        }
        let mut inputs = Vec::with_capacity(self.inputs.len());
        for (i, (&declared, &d)) in self.inputs.iter().enumerate() {
            if declared != i {
                return Err(Error::Program {
                    node: format!("x{i}"),
                    reason: format!("input {i} is never loaded, so its dtype is unknown"),
                });
            }
            inputs.push(d);
        }
        let (nodes, outputs) = canonical(&self.nodes, &self.outputs);
        Ok(Program {
            inputs,
            nodes,
            outputs,
            last_resolved: Default::default(),
        })
    }
}

/// Whether `dtype` can hold the constant `value` (a reason if not).
fn check_constant(value: Scalar, dtype: DType) -> std::result::Result<(), String> {
    let info = dtype.info();
    let integral = matches!(info.class, Class::Bool | Class::Int | Class::Uint);
    match value {
        Scalar::Bool(_) if dtype != DType::Bool => {
            Err(format!("a bool constant cannot be {dtype}"))
        }
        Scalar::Float(_) if integral => Err(format!(
            "a float constant cannot be {dtype}: write an integer, or cast"
        )),
        Scalar::Int(_) | Scalar::UInt(_) if integral => {
            let v: i128 = match value {
                Scalar::Int(v) => v as i128,
                Scalar::UInt(v) => v as i128,
                _ => unreachable!(),
            };
            match info.int_range {
                Some((lo, hi)) if v < lo || v > hi => {
                    Err(format!("{v} is outside the range {lo}..={hi} of {dtype}"))
                }
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// The text of a literal (as the printer writes it).
pub(crate) fn literal_text(value: Scalar, dtype: DType) -> String {
    let name = dtype.name();
    let sep = if name.starts_with('e') { "_" } else { "" };
    match value {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(v) => format!("{v}{sep}{name}"),
        Scalar::UInt(v) => format!("{v}{sep}{name}"),
        Scalar::Float(v) if v.is_nan() => format!("nan_{name}"),
        Scalar::Float(v) if v.is_infinite() => {
            format!("{}inf_{name}", if v < 0.0 { "-" } else { "" })
        }
        Scalar::Float(v) => format!("{v:?}{sep}{name}"),
    }
}

/// The canonical form of the nodes the outputs reach (see [`Program`]).
fn canonical(nodes: &[Node], outputs: &[NodeId]) -> (Vec<Node>, Vec<NodeId>) {
    let mut map: Vec<Option<NodeId>> = vec![None; nodes.len()];
    let mut seen: HashMap<Node, NodeId> = HashMap::new();
    let mut out_nodes: Vec<Node> = Vec::new();
    let mut outs = Vec::with_capacity(outputs.len());
    for &o in outputs {
        // Iterative post-order walk: (node, next argument to visit).
        let mut stack: Vec<(usize, usize)> = vec![(o.0, 0)];
        while let Some(&mut (n, ref mut next)) = stack.last_mut() {
            if map[n].is_some() {
                stack.pop();
                continue;
            }
            let args = node_args(&nodes[n].op);
            if *next < args.len() {
                let a = args[*next].0;
                *next += 1;
                if map[a].is_none() {
                    stack.push((a, 0));
                }
                continue;
            }
            let op = match &nodes[n].op {
                Op::Kind(k, args) => Op::Kind(*k, args.iter().map(|a| map[a.0].unwrap()).collect()),
                Op::Cast(a, m) => Op::Cast(map[a.0].unwrap(), *m),
                op => op.clone(),
            };
            let node = Node {
                op,
                dtype: nodes[n].dtype,
            };
            let id = *seen.entry(node.clone()).or_insert_with(|| {
                out_nodes.push(node);
                NodeId(out_nodes.len() - 1)
            });
            map[n] = Some(id);
            stack.pop();
        }
        outs.push(map[o.0].unwrap());
    }
    (out_nodes, outs)
}

/// The nodes an op reads.
pub(crate) fn node_args(op: &Op) -> &[NodeId] {
    match op {
        Op::Kind(_, args) => args,
        Op::Cast(a, _) => std::slice::from_ref(a),
        _ => &[],
    }
}

/// Text of node `id` as one expression, cut (with `…`) past a few hundred
/// bytes.
pub(crate) fn describe(nodes: &[Node], id: NodeId) -> String {
    let mut s = String::new();
    super::text::write_expr(nodes, id, &|_| None, 0, &mut s, super::text::QUOTE);
    s
}

/// Text of a node not yet added, from its op.
fn describe_op(nodes: &[Node], op: &Op) -> String {
    let mut tmp = nodes.to_vec();
    // The dtype only matters for literals, and this op is no literal.
    tmp.push(Node {
        op: op.clone(),
        dtype: DType::Bool,
    });
    describe(&tmp, NodeId(tmp.len() - 1))
}
