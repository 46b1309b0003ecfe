//! The text form of programs: a lexer, an operator-precedence parser that
//! builds a flat arena of expressions with explicit stacks, the lowering of
//! that arena into [`ProgramBuilder`] (again with an explicit stack), and the
//! printer ([`std::fmt::Display`] of [`Program`]), which walks with an
//! explicit stack too. Nothing here recurses, so neither the nesting of a text
//! nor the length of a chain of terms reaches the call stack; the nesting is
//! bounded by [`MAX_NESTING`] all the same, and the printer keeps within it.
//! The grammar and the limits are documented in the module `map`.

use super::program::{literal_text, node_args, Node, NodeId, Op, Program, ProgramBuilder, Scalar};
use crate::cast::CastMode;
use crate::elementwise::operand_dtype;
use crate::error::{Error, Result};
use crate::{DType, Kind, OperandRule};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fmt::Write as _;

mod lex;
mod print;

use lex::*;
use print::infix_kind;
pub(crate) use print::write_expr;

/// The deepest nesting a program's text may have: at no point may more than
/// this many parentheses, argument lists (of kinds and casts) and unary
/// minuses be open at once. `coord(…)`, and a minus that belongs to a
/// literal (`-2f32`), open nothing. Deeper text is refused with an
/// [`Error::Parse`](crate::Error::Parse) at the token that opens the level
/// past the limit; the printer names nodes (`t{i} = …`) so that what it
/// writes never nests deeper.
pub const MAX_NESTING: usize = 256;

/// The most bytes of the text (a node, a token, a name) an error message
/// quotes; a longer text is cut there and ends with `…`.
pub(crate) const QUOTE: usize = 400;

/// `s` as an error message quotes it: at most [`QUOTE`] bytes, cut on a
/// character boundary and ended with `…` when cut.
pub(crate) fn clip(s: &str) -> String {
    if s.len() <= QUOTE {
        return s.to_string();
    }
    let mut end = QUOTE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

impl Program {
    /// Parse a program's text, its inputs `x0, x1, …` of the dtypes `inputs`
    /// (the grammar and the limits are in the module `map`'s documentation).
    ///
    /// Refuses text that does not lex or parse, or nests deeper than
    /// [`MAX_NESTING`] ([`Error::Parse`], naming the byte offset and the
    /// token) and a program that does not type ([`Error::Program`], naming
    /// the node by its text): unknown kinds, variables or dtypes, wrong
    /// arity, operands of mismatched dtypes, literals their dtype cannot hold
    /// or whose dtype nothing gives, reassigned names, missing outputs.
    /// Messages quote at most a few hundred bytes of the text.
    pub fn parse(text: &str, inputs: &[DType]) -> Result<Program> {
        // Lex the whole text first, so that a malformed token anywhere is
        // the error reported (as it always was), then parse from the start.
        let mut lex = Lexer { text, i: 0 };
        while lex.next()?.tok != Tok::End {}
        let mut p = Parser::new(text)?;
        let stmts = p.program()?;
        lower(text, inputs, &p.arena, &stmts)
    }
}

/// A parsed expression. Arguments are positions in the arena, always
/// before the expression that reads them; the arena is flat, so a tree of
/// any depth is dropped (and walked) without recursion.
#[derive(Clone, Copy, Debug)]
enum Expr<'t> {
    Var(&'t str),
    /// A literal: value and dtype (None: from the other operand).
    Lit(Scalar, Option<DType>),
    Coord(usize),
    /// A kind by name, its arguments `Arena::args[lo..hi]`.
    Call(&'t str, usize, usize),
    Cast(usize, DType, CastMode),
}

/// An expression and its span in the text.
#[derive(Clone, Copy, Debug)]
struct Ex<'t> {
    e: Expr<'t>,
    start: usize,
    end: usize,
}

#[derive(Default)]
struct Arena<'t> {
    exs: Vec<Ex<'t>>,
    args: Vec<usize>,
}

impl<'t> Arena<'t> {
    fn push(&mut self, e: Expr<'t>, start: usize, end: usize) -> usize {
        self.exs.push(Ex { e, start, end });
        self.exs.len() - 1
    }
    fn call(&mut self, name: &'t str, args: &[usize], start: usize, end: usize) -> usize {
        let lo = self.args.len();
        self.args.extend_from_slice(args);
        self.push(Expr::Call(name, lo, self.args.len()), start, end)
    }
}

struct Stmt<'t> {
    name: &'t str,
    name_at: (usize, usize),
    value: usize,
}

/// What an operand's first tokens are: a whole operand, or the opening of
/// one (a unary minus, a parenthesis, an argument list).
enum Step<'t> {
    Leaf(Expr<'t>),
    Open(Pending<'t>),
}

/// What is open while an expression is parsed.
enum Pending<'t> {
    /// A binary operator (its kind and precedence) awaiting its right operand.
    Bin(&'static str, u8),
    /// A unary minus (its offset) awaiting its operand.
    Neg(usize),
    /// `(` awaiting its `)`.
    Paren,
    /// `kind(` (the kind's name and offset): its arguments are the values
    /// from `base` on.
    Call {
        name: &'t str,
        start: usize,
        base: usize,
    },
    /// `cast<d>(` or `cast_sat<d>(`.
    Cast {
        name: &'static str,
        dtype: DType,
        mode: CastMode,
        start: usize,
        base: usize,
    },
}

struct Parser<'t> {
    text: &'t str,
    lex: Lexer<'t>,
    /// The next token, not yet taken.
    cur: Token,
    /// The end of the last token taken.
    prev_end: usize,
    arena: Arena<'t>,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Result<Parser<'t>> {
        let mut lex = Lexer { text, i: 0 };
        let cur = lex.next()?;
        Ok(Parser {
            text,
            lex,
            cur,
            prev_end: 0,
            arena: Arena::default(),
        })
    }
    fn peek(&self) -> Token {
        self.cur
    }
    fn next(&mut self) -> Result<Token> {
        let t = self.cur;
        if t.tok != Tok::End {
            self.cur = self.lex.next()?;
        }
        self.prev_end = t.end;
        Ok(t)
    }
    fn ident(&self, t: &Token) -> &'t str {
        &self.text[t.start..t.end]
    }
    fn err(&self, t: &Token, reason: impl Into<String>) -> Error {
        parse_error(self.text, t.start, t.end, reason)
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.cur.tok, Tok::Punct(q) if q == p)
    }
    fn expect(&mut self, p: &str) -> Result<Token> {
        if self.is(p) {
            self.next()
        } else {
            let t = self.peek();
            Err(self.err(&t, format!("expected `{p}`")))
        }
    }

    fn program(&mut self) -> Result<Vec<Stmt<'t>>> {
        let mut stmts = Vec::new();
        loop {
            while self.is(";") {
                self.next()?;
            }
            if self.peek().tok == Tok::End {
                return Ok(stmts);
            }
            let t = self.next()?;
            if t.tok != Tok::Ident {
                return Err(self.err(&t, "expected a name to assign (`y0 = …`)"));
            }
            self.expect("=")?;
            let value = self.expr()?;
            stmts.push(Stmt {
                name: self.ident(&t),
                name_at: (t.start, t.end),
                value,
            });
            if self.peek().tok != Tok::End {
                self.expect(";")?;
            }
        }
    }

    /// Whether the next token is a number or `inf` (which a minus before it
    /// belongs to).
    fn literal_follows(&self) -> bool {
        let t = self.peek();
        match t.tok {
            Tok::Num(..) => true,
            Tok::Ident => literal_ident(self.ident(&t)).is_some_and(|(v, _)| !v.is_nan()),
            _ => false,
        }
    }

    /// An expression, up to what ends it (`;`, the end, or a token that
    /// cannot follow), as its position in the arena. Operator precedence
    /// with explicit stacks (`ops` of what is open, `vals` of the operands
    /// parsed): comparisons bind loosest, then `+ -`, then `* / %`, then
    /// unary minus, all left to right; parentheses, argument lists and unary
    /// minuses nest at most [`MAX_NESTING`] deep.
    fn expr(&mut self) -> Result<usize> {
        let text = self.text;
        let mut ops: Vec<Pending<'t>> = Vec::new();
        let mut vals: Vec<usize> = Vec::new();
        let mut depth = 0usize;
        let mut want_operand = true;
        loop {
            if want_operand {
                let t = self.next()?;
                let step = match t.tok {
                    Tok::Punct("-") if self.literal_follows() => {
                        // A minus written right before a number (or inf) is
                        // part of the literal.
                        let lit = self.next()?;
                        let (v, d) = self.literal(&lit);
                        let v = negate(v).ok_or_else(|| {
                            parse_error(
                                text,
                                t.start,
                                lit.end,
                                "integer literal beyond the range of i64",
                            )
                        })?;
                        Step::Leaf(Expr::Lit(v, d))
                    }
                    Tok::Punct("-") => Step::Open(Pending::Neg(t.start)),
                    Tok::Punct("(") => Step::Open(Pending::Paren),
                    Tok::Num(..) => {
                        let (v, d) = self.literal(&t);
                        Step::Leaf(Expr::Lit(v, d))
                    }
                    Tok::Ident => {
                        let name = self.ident(&t);
                        if let Some((v, d)) = literal_ident(name) {
                            Step::Leaf(Expr::Lit(Scalar::Float(v), d))
                        } else if name == "true" || name == "false" {
                            Step::Leaf(Expr::Lit(Scalar::Bool(name == "true"), Some(DType::Bool)))
                        } else if name == "cast" || name == "cast_sat" {
                            self.expect("<")?;
                            let dt = self.next()?;
                            let dtype = match dt.tok {
                                Tok::Ident => {
                                    let s = self.ident(&dt);
                                    DType::from_name(s).ok_or_else(|| {
                                        self.err(&dt, format!("unknown dtype `{}`", clip(s)))
                                    })?
                                }
                                _ => return Err(self.err(&dt, "expected a dtype name")),
                            };
                            self.expect(">")?;
                            self.expect("(")?;
                            let (name, mode) = if name == "cast" {
                                ("cast", CastMode::Default)
                            } else {
                                ("cast_sat", CastMode::Saturating)
                            };
                            Step::Open(Pending::Cast {
                                name,
                                dtype,
                                mode,
                                start: t.start,
                                base: vals.len(),
                            })
                        } else if name == "coord" && self.is("(") {
                            self.next()?;
                            let a = self.next()?;
                            let axis = match a.tok {
                                Tok::Num(Lit::Int(v), None) => {
                                    usize::try_from(v).map_err(|_| {
                                        self.err(&a, "coord's axis is beyond the range of usize")
                                    })?
                                }
                                _ => {
                                    return Err(
                                        self.err(&a, "coord takes an axis: an untyped integer")
                                    )
                                }
                            };
                            self.expect(")")?;
                            Step::Leaf(Expr::Coord(axis))
                        } else if self.is("(") {
                            self.next()?;
                            Step::Open(Pending::Call {
                                name,
                                start: t.start,
                                base: vals.len(),
                            })
                        } else {
                            Step::Leaf(Expr::Var(name))
                        }
                    }
                    _ => return Err(self.err(&t, "expected an expression")),
                };
                match step {
                    Step::Leaf(e) => {
                        vals.push(self.arena.push(e, t.start, self.prev_end));
                        want_operand = false;
                    }
                    Step::Open(p) => {
                        if depth == MAX_NESTING {
                            return Err(self.err(
                                &t,
                                format!(
                                    "nesting deeper than {MAX_NESTING} levels (parentheses, \
                                     argument lists and unary minuses open at once)"
                                ),
                            ));
                        }
                        depth += 1;
                        // `kind()`: an empty argument list closes at once.
                        want_operand = !(matches!(p, Pending::Call { .. } | Pending::Cast { .. })
                            && self.is(")"));
                        ops.push(p);
                    }
                }
                continue;
            }
            // After an operand: a binary operator, or the end of what is open.
            let t = self.peek();
            if let Tok::Punct(p) = t.tok {
                if let Some((kind, prec)) = infix_kind(p) {
                    self.next()?;
                    while let Some(top) = ops.last() {
                        match top {
                            Pending::Bin(_, q) if *q >= prec => {}
                            Pending::Neg(_) => depth -= 1,
                            _ => break,
                        }
                        self.reduce(&mut ops, &mut vals);
                    }
                    ops.push(Pending::Bin(kind, prec));
                    want_operand = true;
                    continue;
                }
            }
            while let Some(Pending::Bin(..) | Pending::Neg(_)) = ops.last() {
                if let Some(Pending::Neg(_)) = ops.last() {
                    depth -= 1;
                }
                self.reduce(&mut ops, &mut vals);
            }
            match ops.last() {
                None => return Ok(vals.pop().expect("a statement's value")),
                Some(Pending::Paren) => {
                    self.expect(")")?;
                    ops.pop();
                    depth -= 1;
                }
                Some(Pending::Call { .. } | Pending::Cast { .. }) => {
                    if self.is(",") {
                        self.next()?;
                        want_operand = true;
                        continue;
                    }
                    self.expect(")")?;
                    depth -= 1;
                    match ops.pop() {
                        Some(Pending::Call { name, start, base }) => {
                            let v = self.arena.call(name, &vals[base..], start, self.prev_end);
                            vals.truncate(base);
                            vals.push(v);
                        }
                        Some(Pending::Cast {
                            name,
                            dtype,
                            mode,
                            start,
                            base,
                        }) => {
                            let n = vals.len() - base;
                            if n != 1 {
                                return Err(parse_error(
                                    text,
                                    start,
                                    self.prev_end,
                                    format!("{name} takes one argument, got {n}"),
                                ));
                            }
                            let arg = vals.pop().expect("a cast's argument");
                            let v =
                                self.arena
                                    .push(Expr::Cast(arg, dtype, mode), start, self.prev_end);
                            vals.push(v);
                        }
                        _ => unreachable!("an argument list is open"),
                    }
                }
                Some(Pending::Bin(..) | Pending::Neg(_)) => unreachable!("reduced above"),
            }
        }
    }

    /// Apply the operator on top of `ops` to its operands on `vals`.
    fn reduce(&mut self, ops: &mut Vec<Pending<'t>>, vals: &mut Vec<usize>) {
        let v = match ops.pop() {
            Some(Pending::Bin(kind, _)) => {
                let rhs = vals.pop().expect("a right operand");
                let lhs = vals.pop().expect("a left operand");
                let (start, end) = (self.arena.exs[lhs].start, self.arena.exs[rhs].end);
                self.arena.call(kind, &[lhs, rhs], start, end)
            }
            Some(Pending::Neg(start)) => {
                let arg = vals.pop().expect("an operand");
                let end = self.arena.exs[arg].end;
                self.arena.call("neg", &[arg], start, end)
            }
            _ => unreachable!("an operator is on top"),
        };
        vals.push(v);
    }

    /// The value and dtype of a number token or a literal name.
    fn literal(&self, t: &Token) -> (Scalar, Option<DType>) {
        match t.tok {
            Tok::Num(Lit::Int(v), d) => (Scalar::from(v), d),
            Tok::Num(Lit::Float(v), d) => (Scalar::Float(v), d),
            _ => match literal_ident(self.ident(t)) {
                Some((v, d)) => (Scalar::Float(v), d),
                None => unreachable!("literal_follows checked it"),
            },
        }
    }
}

/// `inf`, `nan`, `inf_<dtype>`, `nan_<dtype>`.
fn literal_ident(s: &str) -> Option<(f64, Option<DType>)> {
    let (head, tail) = match s.split_once('_') {
        Some((h, t)) => (h, Some(t)),
        None => (s, None),
    };
    let v = match head {
        "inf" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => return None,
    };
    match tail {
        None => Some((v, None)),
        Some(t) => DType::from_name(t).map(|d| (v, Some(d))),
    }
}

fn negate(v: Scalar) -> Option<Scalar> {
    Some(match v {
        Scalar::Int(i) => Scalar::Int(i.checked_neg()?),
        Scalar::UInt(u) if u == 1u64 << 63 => Scalar::Int(i64::MIN),
        Scalar::UInt(_) => return None,
        Scalar::Float(f) => Scalar::Float(-f),
        Scalar::Bool(_) => return None,
    })
}

// ---------------------------------------------------------------- lowering

const KEYWORDS: [&str; 7] = ["cast", "cast_sat", "coord", "true", "false", "inf", "nan"];

/// What a name is as `x{i}` / `y{k}`.
enum Index {
    /// Not the prefix and digits.
    No,
    /// The index.
    Yes(usize),
    /// The prefix and digits, but no index: why.
    Bad(&'static str),
}

/// `x{i}` / `y{k}` names: the index, parsed with checked arithmetic (never
/// used to size anything).
fn indexed(name: &str, prefix: char) -> Index {
    let Some(rest) = name.strip_prefix(prefix) else {
        return Index::No;
    };
    if rest.is_empty() || !rest.bytes().all(|c| c.is_ascii_digit()) {
        return Index::No;
    }
    if rest.len() > 1 && rest.starts_with('0') {
        return Index::Bad("an index is written without leading zeros");
    }
    match rest.parse() {
        Ok(i) => Index::Yes(i),
        Err(_) => Index::Bad("its index is beyond the range of usize"),
    }
}

struct Lower<'t> {
    text: &'t str,
    b: ProgramBuilder,
    env: HashMap<&'t str, NodeId>,
    loads: HashMap<usize, NodeId>,
}

/// An expression being lowered: `next` is the next argument to look at,
/// `pending` the argument whose lowering is under way.
struct Task {
    ex: usize,
    started: bool,
    next: usize,
    pending: Option<usize>,
    ids: Vec<Option<NodeId>>,
    call: Option<DType>,
}

impl Task {
    fn new(ex: usize) -> Task {
        Task {
            ex,
            started: false,
            next: 0,
            pending: None,
            ids: Vec::new(),
            call: None,
        }
    }
}

impl<'t> Lower<'t> {
    fn node_text(&self, ex: &Ex<'_>) -> String {
        clip(self.text[ex.start..ex.end].trim())
    }

    fn refuse(&self, ex: &Ex<'_>, reason: impl Into<String>) -> Error {
        Error::Program {
            node: self.node_text(ex),
            reason: reason.into(),
        }
    }

    /// Rename a builder refusal after the node's text.
    fn rename(&self, ex: &Ex<'_>, e: Error) -> Error {
        match e {
            Error::Program { reason, .. } => self.refuse(ex, reason),
            e => e,
        }
    }

    fn untyped(ex: &Ex<'_>) -> bool {
        matches!(ex.e, Expr::Lit(_, None))
    }

    /// A variable, literal or coordinate (`want`: the dtype an untyped
    /// literal takes).
    fn leaf(&mut self, ex: &Ex<'t>, want: Option<DType>) -> Result<NodeId> {
        match ex.e {
            Expr::Var(name) => {
                if let Some(&id) = self.env.get(name) {
                    return Ok(id);
                }
                let n = self.b.input_count();
                let inputs = format!("the program has {n} input{}", if n == 1 { "" } else { "s" });
                let i = match indexed(name, 'x') {
                    Index::Yes(i) => i,
                    Index::Bad(why) => {
                        return Err(self.refuse(
                            ex,
                            format!("unknown variable `{}`: {inputs}, and {why}", clip(name)),
                        ))
                    }
                    Index::No => {
                        return Err(self.refuse(ex, format!("unknown variable `{}`", clip(name))))
                    }
                };
                if let Some(&id) = self.loads.get(&i) {
                    return Ok(id);
                }
                let Some(dtype) = self.b.input_dtype(i) else {
                    return Err(self.refuse(ex, format!("unknown variable `{name}`: {inputs}")));
                };
                let id = self.b.load(i, dtype).map_err(|e| self.rename(ex, e))?;
                self.loads.insert(i, id);
                Ok(id)
            }
            Expr::Lit(v, d) => {
                let Some(dtype) = d.or(want) else {
                    return Err(self.refuse(
                        ex,
                        "an untyped literal takes the dtype of the other operands, and there is none: \
                         give it a dtype suffix (as in `2f32`)",
                    ));
                };
                self.b.constant(v, dtype).map_err(|e| self.rename(ex, e))
            }
            Expr::Coord(a) => Ok(self.b.coord(a)),
            Expr::Call(..) | Expr::Cast(..) => unreachable!("not a leaf"),
        }
    }

    /// Lower expression `root` of `arena`: the arguments of a kind are
    /// lowered left to right, those with a dtype of their own first, then
    /// the untyped literals, which take the dtype of the others (the
    /// condition of `select` is bool). An explicit stack of tasks, so a
    /// chain of any depth is lowered without recursion.
    fn lower(&mut self, arena: &Arena<'t>, root: usize) -> Result<NodeId> {
        let mut stack = vec![Task::new(root)];
        // The node of the last task finished.
        let mut ret: Option<NodeId> = None;
        while let Some(task) = stack.last_mut() {
            let ex = &arena.exs[task.ex];
            let id = match ex.e {
                Expr::Var(_) | Expr::Lit(..) | Expr::Coord(_) => self.leaf(ex, None)?,
                Expr::Cast(arg, dtype, mode) => {
                    if !task.started {
                        let a = &arena.exs[arg];
                        if Self::untyped(a) {
                            return Err(self.refuse(
                                a,
                                "an untyped literal has no dtype to cast from: give it a dtype suffix",
                            ));
                        }
                        task.started = true;
                        stack.push(Task::new(arg));
                        continue;
                    }
                    let a = ret.take().expect("the cast's argument is lowered");
                    self.b
                        .cast(a, dtype, mode)
                        .map_err(|e| self.rename(ex, e))?
                }
                Expr::Call(name, lo, hi) => {
                    let args = &arena.args[lo..hi];
                    let kind = Kind::from_name(name)
                        .ok_or_else(|| self.refuse(ex, format!("unknown kind `{}`", clip(name))))?;
                    let info = kind.info();
                    // An argument whose dtype is not the call's (select's
                    // condition, scale's real factor) does not set the call's.
                    let fixed = |j: usize| match info.operands {
                        OperandRule::CondFirst => j == 0,
                        OperandRule::ComplexReal => j == 1,
                        OperandRule::Same => false,
                    };
                    if !task.started {
                        if args.len() != info.arity {
                            return Err(self.refuse(
                                ex,
                                format!(
                                    "kind `{name}` takes {} argument{}, got {}",
                                    info.arity,
                                    if info.arity == 1 { "" } else { "s" },
                                    args.len()
                                ),
                            ));
                        }
                        task.started = true;
                        task.ids = vec![None; args.len()];
                    }
                    if let Some(j) = task.pending.take() {
                        let id = ret.take().expect("the argument is lowered");
                        if !fixed(j) && task.call.is_none() {
                            task.call = self.b.dtype(id);
                        }
                        task.ids[j] = Some(id);
                    }
                    while task.next < args.len() && Self::untyped(&arena.exs[args[task.next]]) {
                        task.next += 1;
                    }
                    if task.next < args.len() {
                        let j = task.next;
                        task.next += 1;
                        task.pending = Some(j);
                        stack.push(Task::new(args[j]));
                        continue;
                    }
                    let mut ids = Vec::with_capacity(args.len());
                    for (j, &a) in args.iter().enumerate() {
                        let id = match task.ids[j] {
                            Some(id) => id,
                            None => {
                                let want = match (fixed(j), info.operands) {
                                    (true, OperandRule::CondFirst) => Some(DType::Bool),
                                    (true, _) => task.call.map(|c| operand_dtype(kind, c, j)),
                                    (false, _) => task.call,
                                };
                                self.leaf(&arena.exs[a], want)?
                            }
                        };
                        ids.push(id);
                    }
                    self.b.apply(kind, &ids).map_err(|e| self.rename(ex, e))?
                }
            };
            stack.pop();
            ret = Some(id);
        }
        Ok(ret.expect("the root is lowered"))
    }
}

fn lower<'t>(
    text: &'t str,
    inputs: &[DType],
    arena: &Arena<'t>,
    stmts: &[Stmt<'t>],
) -> Result<Program> {
    let mut l = Lower {
        text,
        b: ProgramBuilder::with_inputs(inputs),
        env: HashMap::new(),
        loads: HashMap::new(),
    };
    // Outputs by index: only the indices assigned are held.
    let mut outputs: BTreeMap<usize, NodeId> = BTreeMap::new();
    for s in stmts {
        let name = s.name;
        let (a, z) = s.name_at;
        let bad = |reason: String| parse_error(text, a, z, reason);
        let shown = clip(name);
        if !matches!(indexed(name, 'x'), Index::No) {
            return Err(bad(format!("`{shown}` is an input and cannot be assigned")));
        }
        if KEYWORDS.contains(&name) || literal_ident(name).is_some() {
            return Err(bad(format!("`{shown}` is a keyword")));
        }
        if l.env.contains_key(name) {
            return Err(bad(format!(
                "`{shown}` is already assigned (a name is assigned once)"
            )));
        }
        let output = match indexed(name, 'y') {
            Index::No => None,
            Index::Yes(k) => Some(k),
            Index::Bad(why) => {
                return Err(bad(format!(
                    "`{shown}` names no output: {why} (outputs are y0, y1, … without gaps)"
                )))
            }
        };
        let id = l.lower(arena, s.value)?;
        if let Some(k) = output {
            outputs.insert(k, id);
        }
        l.env.insert(name, id);
    }
    for (k, (&assigned, &id)) in outputs.iter().enumerate() {
        if assigned != k {
            return Err(Error::Program {
                node: format!("y{k}"),
                reason: format!("outputs are y0, y1, … without gaps, and y{k} is never assigned"),
            });
        }
        l.b.output(id)?;
    }
    l.b.build()
}
