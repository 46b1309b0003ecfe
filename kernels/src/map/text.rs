//! The text form of programs: a lexer, a recursive-descent parser lowering
//! into [`ProgramBuilder`], and the printer ([`std::fmt::Display`] of
//! [`Program`]). The grammar is documented in the module `map`.

use super::program::{literal_text, node_args, Node, NodeId, Op, Program, ProgramBuilder, Scalar};
use crate::cast::CastMode;
use crate::error::{Error, Result};
use crate::{DType, Kind, OperandRule};
use std::collections::HashMap;
use std::fmt;

// Printing precedences.
const CMP: u8 = 1;
const ADD: u8 = 2;
const MUL: u8 = 3;
const UNARY: u8 = 4;

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

/// The kind an infix operator names.
fn infix_kind(op: &str) -> Option<&'static str> {
    Some(match op {
        "+" => "add",
        "-" => "sub",
        "*" => "mul",
        "/" => "div",
        "%" => "rem",
        "<" => "lt",
        "<=" => "le",
        ">" => "gt",
        ">=" => "ge",
        "==" => "eq",
        "!=" => "ne",
        _ => return None,
    })
}

/// Write node `id` of `nodes` as an expression: a child that `names` names is
/// written by its name; the rest inline. Parenthesised when its precedence is
/// below `min_prec`; stops with `…` once `out` passes `limit` bytes.
pub(crate) fn write_expr(
    nodes: &[Node],
    id: NodeId,
    names: &dyn Fn(usize) -> Option<String>,
    min_prec: u8,
    out: &mut String,
    limit: usize,
) {
    write_node(nodes, id, names, min_prec, out, limit, true)
}

fn write_node(
    nodes: &[Node],
    id: NodeId,
    names: &dyn Fn(usize) -> Option<String>,
    min_prec: u8,
    out: &mut String,
    limit: usize,
    top: bool,
) {
    if out.len() > limit {
        out.push('…');
        return;
    }
    let Some(node) = nodes.get(id.0) else {
        out.push_str(&format!("node{}?", id.0));
        return;
    };
    if !top {
        if let Some(name) = names(id.0) {
            out.push_str(&name);
            return;
        }
    }
    let child =
        |c: NodeId, p: u8, out: &mut String| write_node(nodes, c, names, p, out, limit, false);
    match &node.op {
        Op::Load(i) => out.push_str(&format!("x{i}")),
        Op::Coord(a) => out.push_str(&format!("coord({a})")),
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
        Op::Cast(a, mode) => {
            let f = match mode {
                CastMode::Default => "cast",
                CastMode::Saturating => "cast_sat",
            };
            out.push_str(&format!("{f}<{}>(", node.dtype));
            child(*a, 0, out);
            out.push(')');
        }
        Op::Kind(kind, args) => {
            let arg_is_literal = |a: NodeId| {
                names(a.0).is_none() && matches!(nodes.get(a.0).map(|n| &n.op), Some(Op::Const(_)))
            };
            if let (Some((sym, p)), 2) = (infix(*kind), args.len()) {
                let wrap = p < min_prec;
                if wrap {
                    out.push('(');
                }
                child(args[0], p, out);
                out.push_str(&format!(" {sym} "));
                child(args[1], p + 1, out);
                if wrap {
                    out.push(')');
                }
            } else if kind.name() == "neg" && args.len() == 1 && !arg_is_literal(args[0]) {
                let wrap = UNARY < min_prec;
                if wrap {
                    out.push('(');
                }
                out.push('-');
                child(args[0], UNARY, out);
                if wrap {
                    out.push(')');
                }
            } else {
                out.push_str(kind.name());
                out.push('(');
                for (j, a) in args.iter().enumerate() {
                    if j > 0 {
                        out.push_str(", ");
                    }
                    child(*a, 0, out);
                }
                out.push(')');
            }
        }
    }
}

impl fmt::Display for Program {
    /// The program's text: `t{i} = …` for each node (other than loads,
    /// constants and coordinates) read more than once, in node order, then
    /// `y{k} = …` for each output; statements joined by `; `. Parsing it with
    /// the same input dtypes gives an equal program.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut uses = vec![0usize; self.nodes.len()];
        for n in &self.nodes {
            for a in node_args(&n.op) {
                uses[a.0] += 1;
            }
        }
        for o in &self.outputs {
            uses[o.0] += 1;
        }
        let named: Vec<bool> = self
            .nodes
            .iter()
            .zip(&uses)
            .map(|(n, &u)| u > 1 && matches!(n.op, Op::Kind(..) | Op::Cast(..)))
            .collect();
        let names = |i: usize| named[i].then(|| format!("t{i}"));
        let mut stmts: Vec<String> = Vec::new();
        for (i, &is_named) in named.iter().enumerate() {
            if is_named {
                let mut s = format!("t{i} = ");
                write_expr(&self.nodes, NodeId(i), &names, 0, &mut s, usize::MAX);
                stmts.push(s);
            }
        }
        for (k, o) in self.outputs.iter().enumerate() {
            let mut s = format!("y{k} = ");
            match names(o.0) {
                Some(n) => s.push_str(&n),
                None => write_expr(&self.nodes, *o, &names, 0, &mut s, usize::MAX),
            }
            stmts.push(s);
        }
        f.write_str(&stmts.join("; "))
    }
}

impl Program {
    /// Parse a program's text, its inputs `x0, x1, …` of the dtypes `inputs`
    /// (the grammar is in the module `map`'s documentation).
    ///
    /// Refuses text that does not lex or parse ([`Error::Parse`], naming the
    /// byte offset and the token) and a program that does not type
    /// ([`Error::Program`], naming the node by its text): unknown kinds,
    /// variables or dtypes, wrong arity, operands of mismatched dtypes,
    /// literals their dtype cannot hold or whose dtype nothing gives,
    /// reassigned names, missing outputs.
    pub fn parse(text: &str, inputs: &[DType]) -> Result<Program> {
        let toks = lex(text)?;
        let mut p = Parser { text, toks, pos: 0 };
        let stmts = p.program()?;
        lower(text, inputs, &stmts)
    }
}

// ---------------------------------------------------------------- lexing

#[derive(Clone, Debug, PartialEq)]
enum Lit {
    Int(u64),
    Float(f64),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(Lit, Option<DType>),
    Punct(&'static str),
    End,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

const PUNCTS: [&str; 16] = [
    "<=", ">=", "==", "!=", "+", "-", "*", "/", "%", "<", ">", "(", ")", ",", ";", "=",
];

fn parse_error(text: &str, start: usize, end: usize, reason: impl Into<String>) -> Error {
    let token = if start >= text.len() {
        "end of input".to_string()
    } else {
        text[start..end.max(start + 1).min(text.len())].to_string()
    };
    Error::Parse {
        offset: start,
        token,
        reason: reason.into(),
    }
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn lex(text: &str) -> Result<Vec<Token>> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && is_ident_char(b[i]) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(text[start..i].to_string()),
                start,
                end: i,
            });
            continue;
        }
        if c.is_ascii_digit() {
            let (tok, end) = lex_number(text, start)?;
            out.push(Token { tok, start, end });
            i = end;
            continue;
        }
        let p = PUNCTS
            .iter()
            .find(|p| text[i..].starts_with(**p))
            .ok_or_else(|| {
                let ch = text[i..].chars().next().map_or(1, |c| c.len_utf8());
                parse_error(text, start, start + ch, "unexpected character")
            })?;
        i += p.len();
        out.push(Token {
            tok: Tok::Punct(p),
            start,
            end: i,
        });
    }
    out.push(Token {
        tok: Tok::End,
        start: text.len(),
        end: text.len(),
    });
    Ok(out)
}

/// A number from `start`: digits, an optional fraction and exponent, and an
/// optional dtype suffix (an optional `_`, then a dtype name). An exponent is
/// taken only where what follows it is empty or a dtype name, so `2e4m3fn`
/// is 2 of dtype e4m3fn.
fn lex_number(text: &str, start: usize) -> Result<(Tok, usize)> {
    let b = text.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(start);
    let mut float = false;
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i = digits(i + 1);
        float = true;
    }
    let mantissa_end = i;
    let suffix_at = |from: usize| {
        let mut j = from;
        while j < b.len() && is_ident_char(b[j]) {
            j += 1;
        }
        let s = &text[from..j];
        let name = s.strip_prefix('_').unwrap_or(s);
        if s.is_empty() {
            Some((None, j))
        } else {
            DType::from_name(name).map(|d| (Some(d), j))
        }
    };
    let mut chosen = None;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            let exp_end = digits(j);
            if let Some((d, end)) = suffix_at(exp_end) {
                chosen = Some((exp_end, true, d, end));
            }
        }
    }
    let (num_end, has_exp, dtype, end) = match chosen {
        Some(c) => c,
        None => match suffix_at(mantissa_end) {
            Some((d, end)) => (mantissa_end, false, d, end),
            None => {
                let mut j = mantissa_end;
                while j < b.len() && is_ident_char(b[j]) {
                    j += 1;
                }
                return Err(parse_error(
                    text,
                    start,
                    j,
                    format!("unknown dtype suffix `{}`", &text[mantissa_end..j]),
                ));
            }
        },
    };
    let s = &text[start..num_end];
    let lit = if float || has_exp {
        Lit::Float(
            s.parse::<f64>()
                .map_err(|_| parse_error(text, start, end, "malformed number"))?,
        )
    } else {
        Lit::Int(s.parse::<u64>().map_err(|_| {
            parse_error(text, start, end, "integer literal beyond the range of u64")
        })?)
    };
    Ok((Tok::Num(lit, dtype), end))
}

// ---------------------------------------------------------------- parsing

#[derive(Clone, Debug)]
enum Expr {
    Var(String),
    /// A literal: value and dtype (None: from the other operand).
    Lit(Scalar, Option<DType>),
    Coord(usize),
    Call(String, Vec<Ex>),
    Cast(Box<Ex>, DType, CastMode),
}

#[derive(Clone, Debug)]
struct Ex {
    e: Expr,
    start: usize,
    end: usize,
}

struct Stmt {
    name: String,
    name_at: (usize, usize),
    value: Ex,
}

struct Parser<'t> {
    text: &'t str,
    toks: Vec<Token>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }
    fn next(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn err(&self, t: &Token, reason: impl Into<String>) -> Error {
        parse_error(self.text, t.start, t.end, reason)
    }
    fn is(&self, p: &str) -> bool {
        matches!(&self.peek().tok, Tok::Punct(q) if *q == p)
    }
    fn expect(&mut self, p: &str) -> Result<Token> {
        if self.is(p) {
            Ok(self.next())
        } else {
            let t = self.peek().clone();
            Err(self.err(&t, format!("expected `{p}`")))
        }
    }
    fn last_end(&self) -> usize {
        self.toks[self.pos.saturating_sub(1)].end
    }

    fn program(&mut self) -> Result<Vec<Stmt>> {
        let mut stmts = Vec::new();
        loop {
            while self.is(";") {
                self.next();
            }
            if self.peek().tok == Tok::End {
                return Ok(stmts);
            }
            let t = self.next();
            let name = match &t.tok {
                Tok::Ident(s) => s.clone(),
                _ => return Err(self.err(&t, "expected a name to assign (`y0 = …`)")),
            };
            self.expect("=")?;
            let value = self.expr()?;
            stmts.push(Stmt {
                name,
                name_at: (t.start, t.end),
                value,
            });
            if self.peek().tok != Tok::End {
                self.expect(";")?;
            }
        }
    }

    fn expr(&mut self) -> Result<Ex> {
        let mut lhs = self.additive()?;
        while let Tok::Punct(p) = self.peek().tok {
            if !matches!(p, "<" | "<=" | ">" | ">=" | "==" | "!=") {
                break;
            }
            self.next();
            let rhs = self.additive()?;
            lhs = binary(p, lhs, rhs);
        }
        Ok(lhs)
    }

    fn additive(&mut self) -> Result<Ex> {
        let mut lhs = self.term()?;
        while let Tok::Punct(p) = self.peek().tok {
            if !matches!(p, "+" | "-") {
                break;
            }
            self.next();
            let rhs = self.term()?;
            lhs = binary(p, lhs, rhs);
        }
        Ok(lhs)
    }

    fn term(&mut self) -> Result<Ex> {
        let mut lhs = self.unary()?;
        while let Tok::Punct(p) = self.peek().tok {
            if !matches!(p, "*" | "/" | "%") {
                break;
            }
            self.next();
            let rhs = self.unary()?;
            lhs = binary(p, lhs, rhs);
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Ex> {
        if !self.is("-") {
            return self.primary();
        }
        let minus = self.next();
        // A minus written right before a number (or inf) is part of the literal.
        let literal_next = match &self.peek().tok {
            Tok::Num(..) => true,
            Tok::Ident(s) => literal_ident(s).is_some_and(|(v, _)| !v.is_nan()),
            _ => false,
        };
        if literal_next {
            let lit = self.primary()?;
            if let Expr::Lit(v, d) = lit.e {
                let v = negate(v).ok_or_else(|| {
                    parse_error(
                        self.text,
                        minus.start,
                        lit.end,
                        "integer literal beyond the range of i64",
                    )
                })?;
                return Ok(Ex {
                    e: Expr::Lit(v, d),
                    start: minus.start,
                    end: lit.end,
                });
            }
        }
        let arg = self.unary()?;
        let end = arg.end;
        Ok(Ex {
            e: Expr::Call("neg".into(), vec![arg]),
            start: minus.start,
            end,
        })
    }

    fn args(&mut self) -> Result<Vec<Ex>> {
        self.expect("(")?;
        let mut args = Vec::new();
        if self.is(")") {
            self.next();
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.is(",") {
                self.next();
                continue;
            }
            self.expect(")")?;
            return Ok(args);
        }
    }

    fn primary(&mut self) -> Result<Ex> {
        let t = self.next();
        let start = t.start;
        let e = match t.tok.clone() {
            Tok::Num(Lit::Int(v), d) => Expr::Lit(Scalar::from(v), d),
            Tok::Num(Lit::Float(v), d) => Expr::Lit(Scalar::Float(v), d),
            Tok::Punct("(") => {
                // The node keeps its own text (without the parentheses).
                let inner = self.expr()?;
                self.expect(")")?;
                return Ok(inner);
            }
            Tok::Ident(name) => {
                if let Some((v, d)) = literal_ident(&name) {
                    Expr::Lit(Scalar::Float(v), d)
                } else if name == "true" || name == "false" {
                    Expr::Lit(Scalar::Bool(name == "true"), Some(DType::Bool))
                } else if name == "cast" || name == "cast_sat" {
                    self.expect("<")?;
                    let dt = self.next();
                    let dtype = match &dt.tok {
                        Tok::Ident(s) => DType::from_name(s)
                            .ok_or_else(|| self.err(&dt, format!("unknown dtype `{s}`")))?,
                        _ => return Err(self.err(&dt, "expected a dtype name")),
                    };
                    self.expect(">")?;
                    let mut args = self.args()?;
                    if args.len() != 1 {
                        return Err(parse_error(
                            self.text,
                            start,
                            self.last_end(),
                            format!("{name} takes one argument, got {}", args.len()),
                        ));
                    }
                    let mode = if name == "cast" {
                        CastMode::Default
                    } else {
                        CastMode::Saturating
                    };
                    Expr::Cast(Box::new(args.remove(0)), dtype, mode)
                } else if name == "coord" && self.is("(") {
                    self.expect("(")?;
                    let a = self.next();
                    let axis = match a.tok {
                        Tok::Num(Lit::Int(v), None) => v as usize,
                        _ => return Err(self.err(&a, "coord takes an axis: an untyped integer")),
                    };
                    self.expect(")")?;
                    Expr::Coord(axis)
                } else if self.is("(") {
                    Expr::Call(name, self.args()?)
                } else {
                    Expr::Var(name)
                }
            }
            _ => return Err(self.err(&t, "expected an expression")),
        };
        Ok(Ex {
            e,
            start,
            end: self.last_end(),
        })
    }
}

fn binary(op: &str, lhs: Ex, rhs: Ex) -> Ex {
    let (start, end) = (lhs.start, rhs.end);
    Ex {
        e: Expr::Call(
            infix_kind(op).expect("an infix operator").into(),
            vec![lhs, rhs],
        ),
        start,
        end,
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

/// `x{i}` / `y{k}` names: the index.
fn indexed(name: &str, prefix: char) -> Option<usize> {
    let rest = name.strip_prefix(prefix)?;
    if rest.is_empty() || !rest.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

struct Lower<'t> {
    text: &'t str,
    b: ProgramBuilder,
    env: HashMap<String, NodeId>,
    loads: HashMap<usize, NodeId>,
}

impl Lower<'_> {
    fn node_text(&self, ex: &Ex) -> String {
        self.text[ex.start..ex.end].trim().to_string()
    }

    fn refuse(&self, ex: &Ex, reason: impl Into<String>) -> Error {
        Error::Program {
            node: self.node_text(ex),
            reason: reason.into(),
        }
    }

    /// Rename a builder refusal after the node's text.
    fn rename(&self, ex: &Ex, e: Error) -> Error {
        match e {
            Error::Program { reason, .. } => self.refuse(ex, reason),
            e => e,
        }
    }

    fn untyped(ex: &Ex) -> bool {
        matches!(ex.e, Expr::Lit(_, None))
    }

    fn lower(&mut self, ex: &Ex, want: Option<DType>) -> Result<NodeId> {
        match &ex.e {
            Expr::Var(name) => {
                if let Some(&id) = self.env.get(name) {
                    return Ok(id);
                }
                if let Some(i) = indexed(name, 'x') {
                    if let Some(&id) = self.loads.get(&i) {
                        return Ok(id);
                    }
                    let n = self.b.input_count();
                    let Some(dtype) = self.b.input_dtype(i) else {
                        return Err(self.refuse(
                            ex,
                            format!(
                                "unknown variable `{name}`: the program has {n} input{}",
                                if n == 1 { "" } else { "s" }
                            ),
                        ));
                    };
                    let id = self.b.load(i, dtype).map_err(|e| self.rename(ex, e))?;
                    self.loads.insert(i, id);
                    return Ok(id);
                }
                Err(self.refuse(ex, format!("unknown variable `{name}`")))
            }
            Expr::Lit(v, d) => {
                let Some(dtype) = d.or(want) else {
                    return Err(self.refuse(
                        ex,
                        "an untyped literal takes the dtype of the other operands, and there is none: \
                         give it a dtype suffix (as in `2f32`)",
                    ));
                };
                self.b.constant(*v, dtype).map_err(|e| self.rename(ex, e))
            }
            Expr::Coord(a) => Ok(self.b.coord(*a)),
            Expr::Cast(arg, dtype, mode) => {
                if Self::untyped(arg) {
                    return Err(self.refuse(
                        arg,
                        "an untyped literal has no dtype to cast from: give it a dtype suffix",
                    ));
                }
                let a = self.lower(arg, None)?;
                self.b
                    .cast(a, *dtype, *mode)
                    .map_err(|e| self.rename(ex, e))
            }
            Expr::Call(name, args) => {
                let kind = Kind::from_name(name)
                    .ok_or_else(|| self.refuse(ex, format!("unknown kind `{name}`")))?;
                let info = kind.info();
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
                let mut ids: Vec<Option<NodeId>> = vec![None; args.len()];
                let mut call: Option<DType> = None;
                for (j, a) in args.iter().enumerate() {
                    if !Self::untyped(a) {
                        let id = self.lower(a, None)?;
                        let cond = j == 0 && info.operands == OperandRule::CondFirst;
                        if !cond && call.is_none() {
                            call = self.b.dtype(id);
                        }
                        ids[j] = Some(id);
                    }
                }
                for (j, a) in args.iter().enumerate() {
                    if ids[j].is_none() {
                        let cond = j == 0 && info.operands == OperandRule::CondFirst;
                        let want = if cond { Some(DType::Bool) } else { call };
                        ids[j] = Some(self.lower(a, want)?);
                    }
                }
                let ids: Vec<NodeId> = ids.into_iter().map(|i| i.expect("lowered")).collect();
                self.b.apply(kind, &ids).map_err(|e| self.rename(ex, e))
            }
        }
    }
}

fn lower(text: &str, inputs: &[DType], stmts: &[Stmt]) -> Result<Program> {
    let mut l = Lower {
        text,
        b: ProgramBuilder::with_inputs(inputs),
        env: HashMap::new(),
        loads: HashMap::new(),
    };
    let mut outputs: Vec<Option<NodeId>> = Vec::new();
    for s in stmts {
        let name = &s.name;
        let (a, z) = s.name_at;
        let bad = |reason: String| parse_error(text, a, z, reason);
        if indexed(name, 'x').is_some() {
            return Err(bad(format!("`{name}` is an input and cannot be assigned")));
        }
        if KEYWORDS.contains(&name.as_str()) || literal_ident(name).is_some() {
            return Err(bad(format!("`{name}` is a keyword")));
        }
        if l.env.contains_key(name) {
            return Err(bad(format!(
                "`{name}` is already assigned (a name is assigned once)"
            )));
        }
        let id = l.lower(&s.value, None)?;
        if let Some(k) = indexed(name, 'y') {
            if outputs.len() <= k {
                outputs.resize(k + 1, None);
            }
            outputs[k] = Some(id);
        }
        l.env.insert(name.clone(), id);
    }
    for (k, o) in outputs.iter().enumerate() {
        match o {
            Some(id) => {
                l.b.output(*id)?;
            }
            None => {
                return Err(Error::Program {
                    node: format!("y{k}"),
                    reason: format!(
                        "outputs are y0, y1, … without gaps, and y{k} is never assigned"
                    ),
                })
            }
        }
    }
    l.b.build()
}
