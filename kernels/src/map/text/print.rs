//! The printer of programs: [`std::fmt::Display`] of [`Program`], which
//! names nodes and walks with an explicit stack so that what it writes never
//! nests deeper than [`MAX_NESTING`] allows.

use super::*;

// Printing precedences.
pub(super) const CMP: u8 = 1;
pub(super) const ADD: u8 = 2;
pub(super) const MUL: u8 = 3;
pub(super) const UNARY: u8 = 4;

/// The infix operator of a kind, with its precedence.
fn infix(kind: Kind) -> Option<(&'static str, u8)> {
    Some(match kind.name() {
        "add" => ("+", ADD),
        "sub" => ("-", ADD),
        "mul" => ("*", MUL),
        "div" => ("/", MUL),
        "rem" => ("%", MUL),
        "lt" => ("<", CMP),
        "le" => ("<=", CMP),
        "gt" => (">", CMP),
        "ge" => (">=", CMP),
        "eq" => ("==", CMP),
        "ne" => ("!=", CMP),
        _ => return None,
    })
}

/// The kind an infix operator names, with the operator's precedence.
pub(super) fn infix_kind(op: &str) -> Option<(&'static str, u8)> {
    Some(match op {
        "+" => ("add", ADD),
        "-" => ("sub", ADD),
        "*" => ("mul", MUL),
        "/" => ("div", MUL),
        "%" => ("rem", MUL),
        "<" => ("lt", CMP),
        "<=" => ("le", CMP),
        ">" => ("gt", CMP),
        ">=" => ("ge", CMP),
        "==" => ("eq", CMP),
        "!=" => ("ne", CMP),
        _ => return None,
    })
}

// ---------------------------------------------------------------- printing

/// How a node is written inline.
#[derive(Clone, Copy)]
enum Form {
    /// A load, a constant or a coordinate: no arguments.
    Leaf,
    /// `a op b`, at the operator's precedence.
    Infix(&'static str, u8),
    /// `-a`.
    Neg,
    /// `kind(a, …)`.
    Call(&'static str),
    /// `cast<d>(a)` or `cast_sat<d>(a)`.
    Cast(&'static str),
}

impl Form {
    fn of(nodes: &[Node], node: &Node) -> Form {
        match &node.op {
            Op::Kind(kind, args) => {
                if let (Some((sym, p)), 2) = (infix(*kind), args.len()) {
                    Form::Infix(sym, p)
                } else if kind.name() == "neg"
                    && args.len() == 1
                    && !matches!(nodes.get(args[0].0).map(|n| &n.op), Some(Op::Const(_)))
                {
                    // (A constant is never named, so an argument that is a
                    // constant is always written as a literal: `neg(2f32)`
                    // keeps it apart from the literal `-2f32`.)
                    Form::Neg
                } else {
                    Form::Call(kind.name())
                }
            }
            Op::Cast(_, CastMode::Default) => Form::Cast("cast"),
            Op::Cast(_, CastMode::Saturating) => Form::Cast("cast_sat"),
            _ => Form::Leaf,
        }
    }

    /// Whether it is parenthesised where the context asks for `min_prec`.
    fn wrapped(self, min_prec: u8) -> bool {
        match self {
            Form::Infix(_, p) => p < min_prec,
            Form::Neg => UNARY < min_prec,
            _ => false,
        }
    }

    /// The precedence argument `j` is written at.
    fn arg_prec(self, j: usize) -> u8 {
        match self {
            Form::Infix(_, p) => p + (j > 0) as u8,
            Form::Neg => UNARY,
            _ => 0,
        }
    }

    /// The levels of nesting it opens around its arguments (besides its
    /// parentheses when wrapped): an argument list or a unary minus.
    fn opens(self) -> usize {
        match self {
            Form::Neg | Form::Call(_) | Form::Cast(_) => 1,
            Form::Leaf | Form::Infix(..) => 0,
        }
    }
}

/// What is left to write.
enum Item {
    Node(NodeId, u8, bool),
    Text(&'static str),
    Infix(&'static str),
}

/// Write node `id` of `nodes` as an expression: a child that `names` names is
/// written by its name; the rest inline. Parenthesised when its precedence is
/// below `min_prec`; once `out` passes `limit` bytes, writes `…` and stops.
pub(crate) fn write_expr(
    nodes: &[Node],
    id: NodeId,
    names: &dyn Fn(usize) -> Option<String>,
    min_prec: u8,
    out: &mut String,
    limit: usize,
) {
    // An explicit stack (the next item last): a chain of any length is
    // written without recursion.
    let mut stack = vec![Item::Node(id, min_prec, true)];
    while let Some(item) = stack.pop() {
        if out.len() > limit {
            out.push('…');
            return;
        }
        let (id, min_prec, top) = match item {
            Item::Text(s) => {
                out.push_str(s);
                continue;
            }
            Item::Infix(sym) => {
                out.push(' ');
                out.push_str(sym);
                out.push(' ');
                continue;
            }
            Item::Node(id, min_prec, top) => (id, min_prec, top),
        };
        let Some(node) = nodes.get(id.0) else {
            let _ = write!(out, "node{}?", id.0);
            continue;
        };
        if !top {
            if let Some(name) = names(id.0) {
                out.push_str(&name);
                continue;
            }
        }
        let args = node_args(&node.op);
        let form = Form::of(nodes, node);
        let wrap = form.wrapped(min_prec);
        if wrap {
            out.push('(');
            stack.push(Item::Text(")"));
        }
        match form {
            Form::Leaf => match &node.op {
                Op::Load(i) => {
                    let _ = write!(out, "x{i}");
                }
                Op::Coord(a) => {
                    let _ = write!(out, "coord({a})");
                }
                Op::Const(v) => {
                    let s = literal_text(*v, node.dtype);
                    let wrap = s.starts_with('-') && min_prec > UNARY;
                    if wrap {
                        out.push('(');
                    }
                    out.push_str(&s);
                    if wrap {
                        out.push(')');
                    }
                }
                Op::Kind(..) | Op::Cast(..) => {}
            },
            Form::Infix(sym, _) => {
                stack.push(Item::Node(args[1], form.arg_prec(1), false));
                stack.push(Item::Infix(sym));
                stack.push(Item::Node(args[0], form.arg_prec(0), false));
            }
            Form::Neg => {
                out.push('-');
                stack.push(Item::Node(args[0], UNARY, false));
            }
            Form::Call(name) | Form::Cast(name) => {
                out.push_str(name);
                if let Form::Cast(_) = form {
                    let _ = write!(out, "<{}>", node.dtype);
                }
                out.push('(');
                stack.push(Item::Text(")"));
                for (j, a) in args.iter().enumerate().rev() {
                    stack.push(Item::Node(*a, 0, false));
                    if j > 0 {
                        stack.push(Item::Text(", "));
                    }
                }
            }
        }
    }
}

/// The nesting depth past which the printer names a kind or cast node rather
/// than write it inline: a node written inline at depth `d` opens at most
/// one level itself (its parentheses, or its argument list, or its minus)
/// and a literal argument of it one more (`(-2f32)`), so every level stays
/// within [`MAX_NESTING`].
const PRINT_CUT: usize = MAX_NESTING - 2;

impl fmt::Display for Program {
    /// The program's text: `t{i} = …` for each node (other than loads,
    /// constants and coordinates) read more than once, or written past a
    /// depth of nesting near [`MAX_NESTING`], in node order, then `y{k} = …`
    /// for each output; statements joined by `; `. Parsing it with the same
    /// input dtypes gives an equal program.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nodes = &self.nodes;
        let mut uses = vec![0usize; nodes.len()];
        for n in nodes {
            for a in node_args(&n.op) {
                uses[a.0] += 1;
            }
        }
        for o in &self.outputs {
            uses[o.0] += 1;
        }
        let inner = |n: &Node| matches!(n.op, Op::Kind(..) | Op::Cast(..));
        let mut named: Vec<bool> = nodes
            .iter()
            .zip(&uses)
            .map(|(n, &u)| u > 1 && inner(n))
            .collect();
        // Every other kind or cast node is written once, inline, inside the
        // statement of the one node that reads it (or of its output). From
        // the last node to the first (readers come after what they read),
        // find the depth and precedence each is written at, and name those
        // that would be written deeper than PRINT_CUT.
        let mut at: Vec<Option<(usize, u8)>> = vec![None; nodes.len()];
        for o in &self.outputs {
            if !named[o.0] {
                at[o.0] = Some((0, 0));
            }
        }
        for i in (0..nodes.len()).rev() {
            let (depth, min_prec) = match (named[i], at[i]) {
                (true, _) => (0, 0),
                (false, Some(c)) => c,
                (false, None) => continue,
            };
            let form = Form::of(nodes, &nodes[i]);
            let below = depth + form.wrapped(min_prec) as usize + form.opens();
            for (j, a) in node_args(&nodes[i].op).iter().enumerate() {
                if named[a.0] || !inner(&nodes[a.0]) {
                    continue;
                }
                if below > PRINT_CUT {
                    named[a.0] = true;
                } else {
                    at[a.0] = Some((below, form.arg_prec(j)));
                }
            }
        }
        let names = |i: usize| named[i].then(|| format!("t{i}"));
        let mut s = String::new();
        let mut sep = "";
        for (i, &is_named) in named.iter().enumerate() {
            if is_named {
                let _ = write!(s, "{sep}t{i} = ");
                write_expr(nodes, NodeId(i), &names, 0, &mut s, usize::MAX);
                sep = "; ";
            }
        }
        for (k, o) in self.outputs.iter().enumerate() {
            let _ = write!(s, "{sep}y{k} = ");
            match names(o.0) {
                Some(n) => s.push_str(&n),
                None => write_expr(nodes, *o, &names, 0, &mut s, usize::MAX),
            }
            sep = "; ";
        }
        f.write_str(&s)
    }
}
