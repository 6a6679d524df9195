//! DRA device selectors evaluated over a slice's attribute columns, without the CEL
//! interpreter, for the expressions whose meaning is plain.
//!
//! # What it is for
//!
//! Most device selectors compare an attribute, a capacity or the driver with a literal and
//! join the comparisons with `&&`, `||` and `!`
//! (`device.driver == "gpu.example.com"`, `device.attributes["d"].model == "a100"`,
//! `device.capacity["d"].memory.compareTo(quantity("40Gi")) >= 0`). The interpreter runs such
//! an expression by building the device's value as nested CEL maps and walking the program
//! over it. Here the expression is compiled once into a small typed tree
//! ([`ColumnProgram`]); a slice's attributes and capacities are laid out once as columns
//! ([`SliceColumns`], one per attribute name, one cell per device); and the tree reads a
//! device's cells by position.
//!
//! # Protocol
//!
//! - [`ColumnProgram::compile`] accepts the grammar below and returns `None` for anything
//!   else (another function, a macro, arithmetic, an escape in a string literal, a reserved
//!   word, a comparison whose operand types cannot match): the interpreter runs those.
//! - [`ColumnProgram::eval_row`] returns `Some(result)` or `None`. `None` means "ask the
//!   interpreter": it answers so for every device where evaluation would fail or where CEL's
//!   meaning is not the plain one (a missing attribute, a value of another type than the
//!   operator takes, a list or version value, an integer overflow, a device whose CEL value
//!   cannot be built). So the column answer, when there is one, is the interpreter's, and
//!   every error still comes from the interpreter, with its message.
//! - `&&` and `||` answer from their left side only when it decides the result (`false &&`,
//!   `true ||`), which both CEL's commutative error rule and a left-to-right evaluation agree
//!   on; otherwise both sides must have answers.
//!
//! Grammar (CEL's precedence): `or := and ("||" and)*`, `and := rel ("&&" rel)*`,
//! `rel := unary (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in") unary)*`,
//! `unary := "!" unary | "-" unary | member`, `member := primary ("." ident call? | "[" or "]")*`,
//! `primary := "(" or ")" | int | string | "true" | "false" | "device" | ident call`.
//! Values: `device.driver`, `device.allowMultipleAllocations`,
//! `device.attributes[D].N` (or `[D][N]`), `device.capacity[D].N`, `quantity(S)`,
//! `Q.compareTo(Q)`, `Q.isGreaterThan(Q)`, `Q.isLessThan(Q)`, `S in device.attributes[D]`,
//! `S in device.attributes` (and the same for `capacity`).
//!
//! # Invariant
//!
//! For every expression, device and slice: `eval_row` = `Some(b)` implies the interpreter
//! answers `Ok(b)`. The property test `cel_columns_prop.rs` checks it on random expressions
//! and devices.

use crate::api::Quantity;
use crate::api::dra::{AttributeValue, ResourceSlice};
use ahash::AHashMap;
use std::cmp::Ordering;
use std::sync::Arc;

/// One device's value of an attribute, as the operators read it.
#[derive(Debug, Clone)]
enum Cell {
    Int(i64),
    Bool(bool),
    Str(Arc<str>),
    /// A list or a version: the interpreter answers.
    Other,
}

type Column<T> = Vec<Option<T>>;
/// Domain → name → column.
type Columns<T> = AHashMap<Arc<str>, AHashMap<Arc<str>, Column<T>>>;

/// A slice's devices as columns (module doc), built once per slice.
#[derive(Debug)]
pub(crate) struct SliceColumns {
    attributes: Columns<Cell>,
    capacity: Columns<Quantity>,
    multi: Vec<bool>,
    /// The device's CEL value cannot be built (a version that does not parse): every
    /// expression fails on it, so the interpreter answers.
    broken: Vec<bool>,
    driver: Arc<str>,
}

/// Whether `s` is a version the CEL value accepts (`cel.rs` parses versions with the same
/// crate and rules; a device with one it refuses fails every expression).
fn is_semver(s: &str) -> bool {
    semver::Version::parse(s).is_ok()
}

/// A qualified name split as the CEL value splits it: `domain/name`, or `""` and the name.
fn split(name: &str) -> (&str, &str) {
    name.split_once('/').unwrap_or(("", name))
}

fn put<T: Clone>(cols: &mut Columns<T>, name: &str, rows: usize, row: usize, v: T) {
    let (domain, id) = split(name);
    let by_id = match cols.get_mut(domain) {
        Some(m) => m,
        None => cols.entry(Arc::from(domain)).or_default(),
    };
    let col = match by_id.get_mut(id) {
        Some(c) => c,
        None => by_id
            .entry(Arc::from(id))
            .or_insert_with(|| vec![None; rows]),
    };
    col[row] = Some(v);
}

impl SliceColumns {
    /// The slice's columns, built on first use and kept with the slice.
    pub(crate) fn of(slice: &ResourceSlice) -> &SliceColumns {
        slice
            .columns
            .get_or_init(|| SliceColumns::build(slice))
            .expect("the slot holds the columns only")
    }

    fn build(slice: &ResourceSlice) -> SliceColumns {
        let rows = slice.devices.len();
        let mut c = SliceColumns {
            attributes: AHashMap::new(),
            capacity: AHashMap::new(),
            multi: slice
                .devices
                .iter()
                .map(|d| d.allow_multiple_allocations)
                .collect(),
            broken: vec![false; rows],
            driver: slice.driver.as_arc(),
        };
        for (row, d) in slice.devices.iter().enumerate() {
            for (name, a) in &d.attributes {
                let cell = match a {
                    AttributeValue::Int(i) => Cell::Int(*i),
                    AttributeValue::Bool(b) => Cell::Bool(*b),
                    AttributeValue::String(s) => Cell::Str(s.clone()),
                    AttributeValue::Version(v) => {
                        c.broken[row] |= !is_semver(v);
                        Cell::Other
                    }
                    AttributeValue::Versions(vs) => {
                        c.broken[row] |= !vs.iter().all(|v| is_semver(v));
                        Cell::Other
                    }
                    AttributeValue::Ints(_)
                    | AttributeValue::Bools(_)
                    | AttributeValue::Strings(_) => Cell::Other,
                };
                put(&mut c.attributes, name, rows, row, cell);
            }
            for (name, q) in &d.capacity {
                put(&mut c.capacity, name, rows, row, *q);
            }
        }
        c
    }

    fn column<'c, T>(cols: &'c Columns<T>, domain: &str, id: &str) -> Option<&'c [Option<T>]> {
        cols.get(domain).and_then(|m| m.get(id)).map(Vec::as_slice)
    }

    fn has_domain<T>(cols: &Columns<T>, domain: &str, row: usize) -> bool {
        cols.get(domain)
            .is_some_and(|m| m.values().any(|c| c[row].is_some()))
    }
}

/// `device.attributes` or `device.capacity`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Attributes,
    Capacity,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rel {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum QMethod {
    CompareTo,
    IsGreaterThan,
    IsLessThan,
}

/// The compiled tree.
#[derive(Debug)]
enum Node {
    Int(i64),
    Bool(bool),
    Str(Arc<str>),
    Qty(Quantity),
    Driver,
    Multi,
    /// `device.<kind>[domain].name`: an index into the program's references.
    Value(usize),
    /// `"name" in device.<kind>[domain]`.
    HasName(usize),
    /// `"domain" in device.<kind>`.
    HasDomain(Kind, Arc<str>),
    Not(Box<Node>),
    Neg(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cmp(Rel, Box<Node>, Box<Node>),
    Method(QMethod, Box<Node>, Box<Node>),
}

/// A node's type where the expression fixes it; `Dyn` for an attribute's value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ty {
    Int,
    Bool,
    Str,
    Qty,
    Dyn,
}

/// One value as the operators see it.
#[derive(Debug, Clone, Copy)]
enum V<'a> {
    Int(i64),
    Bool(bool),
    Str(&'a str),
    Qty(Quantity),
}

/// A selector compiled for columns (module doc).
#[derive(Debug)]
pub(crate) struct ColumnProgram {
    root: Node,
    /// The attributes and capacities the tree reads: kind, domain, name.
    refs: Vec<(Kind, Arc<str>, Arc<str>)>,
}

/// A program's references resolved against one slice's columns.
struct Bound<'a> {
    cols: &'a SliceColumns,
    refs: Vec<Ref<'a>>,
}

enum Ref<'a> {
    Attribute(Option<&'a [Option<Cell>]>),
    Capacity(Option<&'a [Option<Quantity>]>),
}

impl ColumnProgram {
    /// The expression's column form, or `None` when the interpreter must run it.
    pub(crate) fn compile(expression: &str) -> Option<ColumnProgram> {
        let tokens = lex(expression)?;
        let mut p = Parser { t: &tokens, at: 0 };
        let syn = p.or()?;
        if p.at != tokens.len() {
            return None;
        }
        let mut refs = Vec::new();
        let root = lower(&syn, &mut refs)?;
        matches!(ty(&root, &refs), Ty::Bool | Ty::Dyn).then_some(ColumnProgram { root, refs })
    }

    fn bind<'a>(&self, cols: &'a SliceColumns) -> Bound<'a> {
        let refs = self
            .refs
            .iter()
            .map(|(kind, domain, id)| match kind {
                Kind::Attributes => {
                    Ref::Attribute(SliceColumns::column(&cols.attributes, domain, id))
                }
                Kind::Capacity => Ref::Capacity(SliceColumns::column(&cols.capacity, domain, id)),
            })
            .collect();
        Bound { cols, refs }
    }

    /// The result for the slice's device at `row`; `None`: ask the interpreter.
    pub(crate) fn eval_row(&self, slice: &ResourceSlice, row: usize) -> Option<bool> {
        let b = self.bind(SliceColumns::of(slice));
        self.row(&b, row)
    }

    /// The result for every device of the slice, in order (`None`: ask the interpreter).
    pub(crate) fn eval_slice(&self, slice: &ResourceSlice) -> Vec<Option<bool>> {
        let b = self.bind(SliceColumns::of(slice));
        (0..slice.devices.len()).map(|r| self.row(&b, r)).collect()
    }

    fn row(&self, b: &Bound<'_>, row: usize) -> Option<bool> {
        if b.cols.broken[row] {
            return None;
        }
        match eval(&self.root, b, row)? {
            V::Bool(x) => Some(x),
            _ => None,
        }
    }
}

fn eval<'a>(n: &'a Node, b: &Bound<'a>, row: usize) -> Option<V<'a>> {
    Some(match n {
        Node::Int(i) => V::Int(*i),
        Node::Bool(x) => V::Bool(*x),
        Node::Str(s) => V::Str(s),
        Node::Qty(q) => V::Qty(*q),
        Node::Driver => V::Str(&b.cols.driver),
        Node::Multi => V::Bool(b.cols.multi[row]),
        Node::Value(i) => match &b.refs[*i] {
            Ref::Attribute(col) => match col.and_then(|c| c[row].as_ref())? {
                Cell::Int(x) => V::Int(*x),
                Cell::Bool(x) => V::Bool(*x),
                Cell::Str(s) => V::Str(s),
                Cell::Other => return None,
            },
            Ref::Capacity(col) => V::Qty(col.and_then(|c| c[row])?),
        },
        Node::HasName(i) => V::Bool(match &b.refs[*i] {
            Ref::Attribute(col) => col.is_some_and(|c| c[row].is_some()),
            Ref::Capacity(col) => col.is_some_and(|c| c[row].is_some()),
        }),
        Node::HasDomain(kind, domain) => V::Bool(match kind {
            Kind::Attributes => SliceColumns::has_domain(&b.cols.attributes, domain, row),
            Kind::Capacity => SliceColumns::has_domain(&b.cols.capacity, domain, row),
        }),
        Node::Not(x) => match eval(x, b, row)? {
            V::Bool(x) => V::Bool(!x),
            _ => return None,
        },
        Node::Neg(x) => match eval(x, b, row)? {
            V::Int(x) => V::Int(x.checked_neg()?),
            _ => return None,
        },
        Node::And(l, r) => logic(l, r, b, row, false)?,
        Node::Or(l, r) => logic(l, r, b, row, true)?,
        Node::Cmp(rel, l, r) => V::Bool(compare(*rel, eval(l, b, row)?, eval(r, b, row)?)?),
        Node::Method(m, l, r) => match (eval(l, b, row)?, eval(r, b, row)?) {
            (V::Qty(x), V::Qty(y)) => match m {
                QMethod::CompareTo => V::Int(x.cmp(&y) as i64),
                QMethod::IsGreaterThan => V::Bool(x > y),
                QMethod::IsLessThan => V::Bool(x < y),
            },
            _ => return None,
        },
    })
}

/// `&&` (`decides` = false) or `||` (`decides` = true): the left side answers alone only
/// when it decides the result.
fn logic<'a>(l: &'a Node, r: &'a Node, b: &Bound<'a>, row: usize, decides: bool) -> Option<V<'a>> {
    match eval(l, b, row)? {
        V::Bool(x) if x == decides => Some(V::Bool(x)),
        V::Bool(_) => match eval(r, b, row)? {
            V::Bool(y) => Some(V::Bool(y)),
            _ => None,
        },
        _ => None,
    }
}

fn compare(rel: Rel, l: V<'_>, r: V<'_>) -> Option<bool> {
    let ord = match (l, r) {
        (V::Int(x), V::Int(y)) => x.cmp(&y),
        (V::Str(x), V::Str(y)) => x.cmp(y),
        (V::Bool(x), V::Bool(y)) if matches!(rel, Rel::Eq | Rel::Ne) => x.cmp(&y),
        _ => return None,
    };
    Some(match rel {
        Rel::Eq => ord == Ordering::Equal,
        Rel::Ne => ord != Ordering::Equal,
        Rel::Lt => ord == Ordering::Less,
        Rel::Le => ord != Ordering::Greater,
        Rel::Gt => ord == Ordering::Greater,
        Rel::Ge => ord != Ordering::Less,
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// An unsigned decimal literal (a `-` before it is a separate token).
    Int(u64),
    Str(String),
    P(&'static str),
}

/// CEL's reserved words: never a field name here (the interpreter reports them).
const RESERVED: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "false",
    "for",
    "function",
    "if",
    "import",
    "in",
    "let",
    "loop",
    "package",
    "namespace",
    "null",
    "return",
    "true",
    "var",
    "void",
    "while",
];

/// The tokens of `s`, or `None` for anything outside the grammar.
fn lex(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_string()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            // Hex, unsigned, floating point and exponent forms are the interpreter's.
            if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                return None;
            }
            if b[start] == b'0' && i - start > 1 {
                return None;
            }
            out.push(Tok::Int(s[start..i].parse().ok()?));
        } else if c == b'"' || c == b'\'' {
            if b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&c) {
                return None; // a triple-quoted string
            }
            let end = i + 1 + s[i + 1..].find(c as char)?;
            let body = &s[i + 1..end];
            if body.contains(['\\', '\n', '\r']) {
                return None;
            }
            out.push(Tok::Str(body.to_string()));
            i = end + 1;
        } else {
            let two = s.get(i..i + 2).unwrap_or("");
            let p = ["&&", "||", "==", "!=", "<=", ">="]
                .into_iter()
                .find(|p| *p == two);
            if let Some(p) = p {
                out.push(Tok::P(p));
                i += 2;
                continue;
            }
            let one = ["(", ")", "[", "]", ".", ",", "!", "<", ">", "-"]
                .into_iter()
                .find(|p| p.as_bytes()[0] == c)?;
            out.push(Tok::P(one));
            i += 1;
        }
    }
    Some(out)
}

/// The parsed expression, before its names are resolved.
#[derive(Debug)]
enum Syn {
    Int(i64),
    Str(String),
    Bool(bool),
    Ident(String),
    Select(Box<Syn>, String),
    Index(Box<Syn>, Box<Syn>),
    /// Receiver (none for a global function), function, arguments.
    Call(Option<Box<Syn>>, String, Vec<Syn>),
    Unary(&'static str, Box<Syn>),
    Binary(&'static str, Box<Syn>, Box<Syn>),
}

struct Parser<'t> {
    t: &'t [Tok],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.at)
    }

    fn eat(&mut self, p: &str) -> bool {
        let hit = matches!(self.peek(), Some(Tok::P(q)) if *q == p);
        self.at += hit as usize;
        hit
    }

    fn expect(&mut self, p: &str) -> Option<()> {
        self.eat(p).then_some(())
    }

    fn or(&mut self) -> Option<Syn> {
        let mut l = self.and()?;
        while self.eat("||") {
            l = Syn::Binary("||", Box::new(l), Box::new(self.and()?));
        }
        Some(l)
    }

    fn and(&mut self) -> Option<Syn> {
        let mut l = self.rel()?;
        while self.eat("&&") {
            l = Syn::Binary("&&", Box::new(l), Box::new(self.rel()?));
        }
        Some(l)
    }

    fn rel(&mut self) -> Option<Syn> {
        let mut l = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::P(p)) if ["==", "!=", "<", "<=", ">", ">="].contains(p) => *p,
                Some(Tok::Ident(w)) if w == "in" => "in",
                _ => return Some(l),
            };
            self.at += 1;
            l = Syn::Binary(op, Box::new(l), Box::new(self.unary()?));
        }
    }

    /// A run of one prefix operator and its operand, as CEL's grammar has it
    /// (`'!'+ member | '-'+ member`): CEL's parser drops an even run and keeps one operator
    /// of an odd one, so a long run nests nothing (and recurses nowhere here either). A run
    /// mixing `!` and `-` is not CEL.
    fn unary(&mut self) -> Option<Syn> {
        let op = match self.peek() {
            Some(Tok::P(p @ ("!" | "-"))) => *p,
            _ => {
                let p = self.primary()?;
                return self.member(p);
            }
        };
        let mut run = 0usize;
        while self.eat(op) {
            run += 1;
        }
        if matches!(self.peek(), Some(Tok::P("!" | "-"))) {
            return None;
        }
        if op == "-"
            && let Some(Tok::Int(u)) = self.peek()
        {
            // `-` before a literal is part of it (so that i64::MIN can be written).
            let u = i128::from(*u);
            let v = i64::try_from(if run % 2 == 1 { -u } else { u }).ok()?;
            self.at += 1;
            return self.member(Syn::Int(v));
        }
        let p = self.primary()?;
        let operand = self.member(p)?;
        Some(if run % 2 == 1 {
            Syn::Unary(op, Box::new(operand))
        } else {
            operand
        })
    }

    fn member(&mut self, mut x: Syn) -> Option<Syn> {
        loop {
            if self.eat(".") {
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    return None;
                };
                if RESERVED.contains(&name.as_str()) {
                    return None;
                }
                self.at += 1;
                x = if self.eat("(") {
                    Syn::Call(Some(Box::new(x)), name, self.args()?)
                } else {
                    Syn::Select(Box::new(x), name)
                };
            } else if self.eat("[") {
                let i = self.or()?;
                self.expect("]")?;
                x = Syn::Index(Box::new(x), Box::new(i));
            } else {
                return Some(x);
            }
        }
    }

    /// Arguments after `(`, through `)`.
    fn args(&mut self) -> Option<Vec<Syn>> {
        let mut out = Vec::new();
        if self.eat(")") {
            return Some(out);
        }
        loop {
            out.push(self.or()?);
            if self.eat(")") {
                return Some(out);
            }
            self.expect(",")?;
        }
    }

    fn primary(&mut self) -> Option<Syn> {
        let t = self.peek()?.clone();
        self.at += 1;
        Some(match t {
            Tok::P("(") => {
                let x = self.or()?;
                self.expect(")")?;
                x
            }
            Tok::Int(u) => Syn::Int(i64::try_from(u).ok()?),
            Tok::Str(s) => Syn::Str(s),
            Tok::Ident(w) if w == "true" => Syn::Bool(true),
            Tok::Ident(w) if w == "false" => Syn::Bool(false),
            Tok::Ident(w) if RESERVED.contains(&w.as_str()) => return None,
            Tok::Ident(w) if self.eat("(") => Syn::Call(None, w, self.args()?),
            Tok::Ident(w) => Syn::Ident(w),
            Tok::P(_) => return None,
        })
    }
}

/// `device.attributes` or `device.capacity`.
fn kind_of(x: &Syn) -> Option<Kind> {
    match x {
        Syn::Select(d, f) if matches!(&**d, Syn::Ident(v) if v == "device") => match f.as_str() {
            "attributes" => Some(Kind::Attributes),
            "capacity" => Some(Kind::Capacity),
            _ => None,
        },
        _ => None,
    }
}

/// `device.<kind>["domain"]`.
fn domain_of(x: &Syn) -> Option<(Kind, &str)> {
    match x {
        Syn::Index(m, d) => match &**d {
            Syn::Str(d) => Some((kind_of(m)?, d)),
            _ => None,
        },
        _ => None,
    }
}

fn reference(refs: &mut Vec<(Kind, Arc<str>, Arc<str>)>, kind: Kind, d: &str, n: &str) -> usize {
    refs.push((kind, Arc::from(d), Arc::from(n)));
    refs.len() - 1
}

/// The deepest tree the column form takes: evaluation recurses once per level, so a longer
/// chain (`a && b && ...`, left-deep here where CEL balances it) is the interpreter's.
const MAX_DEPTH: usize = 64;

/// The typed tree of `x`, or `None` outside the grammar (module doc) or past [`MAX_DEPTH`].
fn lower(x: &Syn, refs: &mut Vec<(Kind, Arc<str>, Arc<str>)>) -> Option<Node> {
    lower_at(x, refs, 0)
}

fn lower_at(x: &Syn, refs: &mut Vec<(Kind, Arc<str>, Arc<str>)>, depth: usize) -> Option<Node> {
    if depth > MAX_DEPTH {
        return None;
    }
    let lower = |x: &Syn, refs: &mut Vec<_>| lower_at(x, refs, depth + 1);
    let bin = |l: &Syn, r: &Syn, refs: &mut Vec<_>| -> Option<(Box<Node>, Box<Node>)> {
        Some((Box::new(lower(l, refs)?), Box::new(lower(r, refs)?)))
    };
    Some(match x {
        Syn::Int(i) => Node::Int(*i),
        Syn::Str(s) => Node::Str(Arc::from(s.as_str())),
        Syn::Bool(b) => Node::Bool(*b),
        Syn::Select(d, f) if matches!(&**d, Syn::Ident(v) if v == "device") => match f.as_str() {
            "driver" => Node::Driver,
            "allowMultipleAllocations" => Node::Multi,
            _ => return None,
        },
        Syn::Select(m, n) => {
            let (kind, d) = domain_of(m)?;
            Node::Value(reference(refs, kind, d, n))
        }
        Syn::Index(m, n) => match (domain_of(m), &**n) {
            (Some((kind, d)), Syn::Str(n)) => Node::Value(reference(refs, kind, d, n)),
            _ => return None,
        },
        Syn::Call(None, f, args) if f == "quantity" => match args.as_slice() {
            [Syn::Str(s)] => Node::Qty(Quantity::parse(s).ok()?),
            _ => return None,
        },
        Syn::Call(Some(recv), f, args) => {
            let m = match f.as_str() {
                "compareTo" => QMethod::CompareTo,
                "isGreaterThan" => QMethod::IsGreaterThan,
                "isLessThan" => QMethod::IsLessThan,
                _ => return None,
            };
            let [arg] = args.as_slice() else { return None };
            let (l, r) = bin(recv, arg, refs)?;
            // Only capacities and quantity literals (an attribute may be a version).
            if ty(&l, refs) != Ty::Qty || ty(&r, refs) != Ty::Qty {
                return None;
            }
            Node::Method(m, l, r)
        }
        Syn::Unary(op, e) => {
            let e = Box::new(lower(e, refs)?);
            match (*op, ty(&e, refs)) {
                ("!", Ty::Bool | Ty::Dyn) => Node::Not(e),
                ("-", Ty::Int | Ty::Dyn) => Node::Neg(e),
                _ => return None,
            }
        }
        Syn::Binary("in", key, m) => match (&**key, domain_of(m), kind_of(m)) {
            (Syn::Str(n), Some((kind, d)), _) => Node::HasName(reference(refs, kind, d, n)),
            (Syn::Str(d), None, Some(kind)) => Node::HasDomain(kind, Arc::from(d.as_str())),
            _ => return None,
        },
        Syn::Binary(op, l, r) => {
            let (l, r) = bin(l, r, refs)?;
            let (tl, tr) = (ty(&l, refs), ty(&r, refs));
            match *op {
                "&&" | "||" => {
                    if !matches!(tl, Ty::Bool | Ty::Dyn) || !matches!(tr, Ty::Bool | Ty::Dyn) {
                        return None;
                    }
                    if *op == "&&" {
                        Node::And(l, r)
                    } else {
                        Node::Or(l, r)
                    }
                }
                _ => {
                    let rel = match *op {
                        "==" => Rel::Eq,
                        "!=" => Rel::Ne,
                        "<" => Rel::Lt,
                        "<=" => Rel::Le,
                        ">" => Rel::Gt,
                        ">=" => Rel::Ge,
                        _ => return None,
                    };
                    // Operands whose types cannot meet, quantities compared without a
                    // method, and ordered booleans are the interpreter's.
                    let fixed = |t: Ty| t != Ty::Dyn;
                    if (fixed(tl) && fixed(tr) && tl != tr)
                        || tl == Ty::Qty
                        || tr == Ty::Qty
                        || (!matches!(rel, Rel::Eq | Rel::Ne) && (tl == Ty::Bool || tr == Ty::Bool))
                    {
                        return None;
                    }
                    Node::Cmp(rel, l, r)
                }
            }
        }
        Syn::Ident(_) | Syn::Call(None, ..) => return None,
    })
}

/// The type a node's value has whatever the device (module doc).
fn ty(n: &Node, refs: &[(Kind, Arc<str>, Arc<str>)]) -> Ty {
    match n {
        Node::Int(_) | Node::Neg(_) => Ty::Int,
        Node::Bool(_)
        | Node::Multi
        | Node::HasName(_)
        | Node::HasDomain(..)
        | Node::Not(_)
        | Node::And(..)
        | Node::Or(..)
        | Node::Cmp(..) => Ty::Bool,
        Node::Str(_) | Node::Driver => Ty::Str,
        Node::Qty(_) => Ty::Qty,
        Node::Method(QMethod::CompareTo, ..) => Ty::Int,
        Node::Method(..) => Ty::Bool,
        Node::Value(i) if refs[*i].0 == Kind::Capacity => Ty::Qty,
        Node::Value(_) => Ty::Dyn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::dynamic_resources::test_devices::{device, slice_of};
    use AttributeValue as A;

    fn gpus() -> ResourceSlice {
        slice_of(
            "gpu.example.com",
            vec![
                device(
                    "gpu.example.com",
                    &[("family", A::String("GPU".into())), ("index", A::Int(0))],
                    &[("memory", "2Gi")],
                ),
                device(
                    "gpu.example.com",
                    &[("family", A::String("FPGA".into())), ("index", A::Int(1))],
                    &[("memory", "1Gi")],
                ),
                device("gpu.example.com", &[("index", A::Int(2))], &[]),
                device(
                    "gpu.example.com",
                    &[("v", A::Version("not-semver".into()))],
                    &[],
                ),
            ],
        )
    }

    fn rows(expression: &str) -> Vec<Option<bool>> {
        let p = ColumnProgram::compile(expression)
            .unwrap_or_else(|| panic!("{expression}: no column form"));
        let s = gpus();
        let all = p.eval_slice(&s);
        for (i, r) in all.iter().enumerate() {
            assert_eq!(p.eval_row(&s, i), *r, "{expression} row {i}");
        }
        all
    }

    #[test]
    fn plain_selectors_answer_over_columns() {
        const D: &str = "device.attributes[\"gpu.example.com\"]";
        let cases: Vec<(String, Vec<Option<bool>>)> = vec![
            (
                "device.driver == \"gpu.example.com\"".into(),
                vec![Some(true), Some(true), Some(true), None],
            ),
            (
                format!("{D}.family == 'GPU'"),
                vec![Some(true), Some(false), None, None],
            ),
            (
                format!("{D}['index'] >= 1"),
                vec![Some(false), Some(true), Some(true), None],
            ),
            (
                format!("-{D}.index < -1"),
                vec![Some(false), Some(false), Some(true), None],
            ),
            // The left side decides, whatever the right.
            (
                format!("{D}.index == 2 || {D}.family == 'GPU'"),
                vec![Some(true), Some(false), Some(true), None],
            ),
            (
                format!("\"family\" in {D} && {D}.family != 'GPU'"),
                vec![Some(false), Some(true), Some(false), None],
            ),
            (
                "device.capacity['gpu.example.com'].memory.compareTo(quantity('1Gi')) > 0".into(),
                vec![Some(true), Some(false), None, None],
            ),
            (
                "\"gpu.example.com\" in device.capacity".into(),
                vec![Some(true), Some(true), Some(false), None],
            ),
            (
                "!device.allowMultipleAllocations".into(),
                vec![Some(true), Some(true), Some(true), None],
            ),
            // A value of another type than the operator takes: the interpreter answers.
            (format!("{D}.family > 1"), vec![None, None, None, None]),
        ];
        for (e, want) in cases {
            assert_eq!(rows(&e), want, "{e}");
        }
    }

    #[test]
    fn long_runs_and_chains_neither_nest_nor_overflow_the_stack() {
        // On a scheduler thread's stack (2 MiB): CEL's parser folds a run of `!` or `-`
        // (even: dropped, odd: one operator); a chain too deep is left to the interpreter.
        let t = std::thread::Builder::new().stack_size(2 << 20).spawn(|| {
            let s = gpus();
            let row = |e: &str| ColumnProgram::compile(e).and_then(|p| p.eval_row(&s, 0));
            assert_eq!(row(&format!("{}true", "!".repeat(10_000))), Some(true));
            assert_eq!(row(&format!("{}true", "!".repeat(10_001))), Some(false));
            assert_eq!(row(&format!("{}1 == 1", "-".repeat(9_998))), Some(true));
            assert_eq!(row(&format!("{}1 == -1", "-".repeat(9_999))), Some(true));
            assert!(ColumnProgram::compile("!-1 == 1").is_none(), "not CEL");
            let chain = vec!["true"; 2_000].join(" && ");
            assert!(ColumnProgram::compile(&chain).is_none(), "too deep");
            let short = vec!["true"; 32].join(" && ");
            assert_eq!(row(&short), Some(true));
        });
        t.unwrap().join().unwrap();
    }

    #[test]
    fn the_rest_is_the_interpreters() {
        for e in [
            "device.attributes[\"d\"].a.size() > 0",
            "device.attributes[\"d\"].v.isGreaterThan(semver(\"1.0.0\"))",
            "device.attributes[\"d\"].a + 1 == 2",
            "\"a\\\"b\" == device.driver",
            "device.driver == 1",
            "device.capacity[\"d\"].m == quantity(\"1\")",
            "true < false",
            "1u == 1",
            "0x1 == 1",
            "device.driver",
            "device.attributes[\"d\"].in",
            "device.attributes[\"d\"]",
            "device[\"driver\"] == \"d\"",
            "has(device.attributes[\"d\"].a)",
            "device.driver == 'x' ? true : false",
            "quantity(\"bad\").isGreaterThan(quantity(\"1\"))",
            "'''x''' == device.driver",
            "device.driver == \"x\" // comment",
        ] {
            assert!(ColumnProgram::compile(e).is_none(), "{e}");
        }
    }
}
