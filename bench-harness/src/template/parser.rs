//! The parser: items to the tree (Go's text/template/parse parse.go and node.go).

use super::error::{TemplateError, line_col};
use super::funcs::Func;
use super::lexer::{Item, Kw, Tok, lex};
use super::limits::MAX_DEPTH;
use super::values::Const;

/// Parses a whole template into its top-level nodes.
pub(super) fn parse(text: &str) -> Result<Vec<Node>, TemplateError> {
    let items = lex(text);
    let mut p = Parser {
        src: text,
        items,
        i: 0,
        vars: vec!["$".to_string()],
        depth: 0,
        range_depth: 0,
    };
    p.parse_root()
}

#[derive(Debug)]
pub(super) enum Node {
    Text(usize, Box<str>),
    Action(Pipe),
    If(Box<Control>),
    With(Box<Control>),
    Range(Box<Control>),
    Break,
    Continue,
}

#[derive(Debug)]
pub(super) struct Control {
    pub(super) pipe: Pipe,
    pub(super) list: Vec<Node>,
    pub(super) else_list: Vec<Node>,
}

#[derive(Debug)]
pub(super) struct Pipe {
    pub(super) span: (usize, usize),
    pub(super) decl: Vec<String>,
    pub(super) is_assign: bool,
    pub(super) cmds: Vec<Cmd>,
}

#[derive(Debug)]
pub(super) struct Cmd {
    pub(super) span: (usize, usize),
    pub(super) args: Vec<Arg>,
}

#[derive(Debug)]
pub(super) struct Arg {
    pub(super) span: (usize, usize),
    pub(super) kind: ArgKind,
}

#[derive(Debug)]
pub(super) enum ArgKind {
    Dot,
    Nil,
    Const(Const),
    Field(Vec<String>),
    Var(String, Vec<String>),
    Func(Func),
    Pipe(Box<Pipe>),
    Chain(Box<Arg>, Vec<String>),
}

/// Parses a number token like Go's NumberNode + idealConstant.
fn parse_number(text: &str) -> Result<Const, String> {
    let illegal = || format!("illegal number syntax: {text:?}");
    if text.ends_with('i') {
        return Err(format!("complex number {text} is not supported"));
    }
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if body.is_empty() {
        return Err(illegal());
    }
    let lower = body.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    if is_hex && lower.contains(['.', 'p']) {
        return Err(format!(
            "hexadecimal floating-point {text} is not supported"
        ));
    }
    if !is_hex && lower.contains(['.', 'e']) {
        let cleaned: String = text.chars().filter(|&c| c != '_').collect();
        return cleaned
            .parse::<f64>()
            .map(Const::Float)
            .map_err(|_| illegal());
    }
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return Err(illegal());
    }
    let mag = u128::from_str_radix(&digits, radix).map_err(|_| {
        if digits.chars().all(|c| c.is_digit(radix)) {
            format!("{text} overflows int")
        } else {
            illegal()
        }
    })?;
    let v = if neg { -(mag as i128) } else { mag as i128 };
    i64::try_from(v)
        .map(Const::Int)
        .map_err(|_| format!("{text} overflows int"))
}

struct Parser<'s> {
    src: &'s str,
    items: Vec<Item>,
    i: usize,
    vars: Vec<String>,
    depth: usize,
    range_depth: usize,
}

enum ListEnd {
    End(usize),
    Else(usize, bool),
    Eof,
}

enum Act {
    Node(Node),
    End(usize),
    Else(usize, bool),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PipeEnd {
    Delim,
    Paren,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CtlKind {
    If,
    With,
    Range,
}

impl<'s> Parser<'s> {
    fn error(&self, pos: usize, msg: impl Into<String>) -> TemplateError {
        let (line, column) = line_col(self.src, pos);
        TemplateError::Parse {
            line,
            column,
            message: msg.into(),
        }
    }

    fn peek(&self) -> &Item {
        &self.items[self.i.min(self.items.len() - 1)]
    }

    fn next(&mut self) -> Result<Item, TemplateError> {
        let it = self.peek().clone();
        if let Tok::Error(msg) = &it.tok {
            return Err(self.error(it.pos, msg.clone()));
        }
        if self.i < self.items.len() - 1 {
            self.i += 1;
        }
        Ok(it)
    }

    /// Skips spaces; returns the index of the next non-space item.
    fn skip_spaces(&mut self) -> usize {
        while self.peek().tok == Tok::Space {
            self.i += 1;
        }
        self.i
    }

    fn next_non_space(&mut self) -> Result<Item, TemplateError> {
        self.skip_spaces();
        self.next()
    }

    fn peek_non_space(&mut self) -> &Item {
        self.skip_spaces();
        self.peek()
    }

    fn describe(&self, it: &Item) -> String {
        match &it.tok {
            Tok::Eof => "EOF".to_string(),
            Tok::Kw(k) => format!("<{}>", k.name()),
            Tok::Error(m) => m.clone(),
            _ => {
                let text = &self.src[it.pos..it.end.min(self.src.len())];
                if text.chars().count() > 10 {
                    let short: String = text.chars().take(10).collect();
                    format!("{short:?}...")
                } else {
                    format!("{text:?}")
                }
            }
        }
    }

    fn unexpected(&self, it: &Item, context: &str) -> TemplateError {
        self.error(
            it.pos,
            format!("unexpected {} in {}", self.describe(it), context),
        )
    }

    fn parse_root(&mut self) -> Result<Vec<Node>, TemplateError> {
        let (nodes, end) = self.parse_list()?;
        match end {
            ListEnd::Eof => Ok(nodes),
            ListEnd::End(p) => Err(self.error(p, "unexpected {{end}}")),
            ListEnd::Else(p, _) => Err(self.error(p, "unexpected {{else}}")),
        }
    }

    fn parse_list(&mut self) -> Result<(Vec<Node>, ListEnd), TemplateError> {
        let mut nodes = Vec::new();
        loop {
            let it = self.next()?;
            match it.tok {
                Tok::Text(s) => {
                    if let Some(Node::Text(_, prev)) = nodes.last_mut() {
                        let mut joined = String::with_capacity(prev.len() + s.len());
                        joined.push_str(prev);
                        joined.push_str(&s);
                        *prev = joined.into_boxed_str();
                    } else {
                        nodes.push(Node::Text(it.pos, s.into_boxed_str()));
                    }
                }
                Tok::LeftDelim => match self.action()? {
                    Act::Node(n) => nodes.push(n),
                    Act::End(p) => return Ok((nodes, ListEnd::End(p))),
                    Act::Else(p, chained) => return Ok((nodes, ListEnd::Else(p, chained))),
                },
                Tok::Eof => return Ok((nodes, ListEnd::Eof)),
                _ => return Err(self.unexpected(&it, "input")),
            }
        }
    }

    fn expect_right_delim(&mut self, context: &str) -> Result<(), TemplateError> {
        let it = self.next_non_space()?;
        if it.tok == Tok::RightDelim {
            Ok(())
        } else {
            Err(self.unexpected(&it, context))
        }
    }

    fn action(&mut self) -> Result<Act, TemplateError> {
        let idx = self.skip_spaces();
        let it = self.next()?;
        match it.tok {
            Tok::Kw(Kw::Else) => {
                if matches!(
                    self.peek_non_space().tok,
                    Tok::Kw(Kw::If) | Tok::Kw(Kw::With)
                ) {
                    return Ok(Act::Else(it.pos, true));
                }
                self.expect_right_delim("else")?;
                Ok(Act::Else(it.pos, false))
            }
            Tok::Kw(Kw::End) => {
                self.expect_right_delim("end")?;
                Ok(Act::End(it.pos))
            }
            Tok::Kw(Kw::If) => Ok(Act::Node(self.control(CtlKind::If, it.pos)?)),
            Tok::Kw(Kw::With) => Ok(Act::Node(self.control(CtlKind::With, it.pos)?)),
            Tok::Kw(Kw::Range) => Ok(Act::Node(self.control(CtlKind::Range, it.pos)?)),
            Tok::Kw(k @ (Kw::Break | Kw::Continue)) => {
                if self.range_depth == 0 {
                    return Err(self.error(
                        it.pos,
                        format!("{{{{{}}}}} outside {{{{range}}}}", k.name()),
                    ));
                }
                self.expect_right_delim(k.name())?;
                Ok(Act::Node(if k == Kw::Break {
                    Node::Break
                } else {
                    Node::Continue
                }))
            }
            Tok::Kw(k @ (Kw::Define | Kw::Template | Kw::Block)) => {
                Err(self.error(it.pos, format!("{{{{{}}}}} is not supported", k.name())))
            }
            _ => {
                self.i = idx;
                let pipe = self.pipeline("command", PipeEnd::Delim)?;
                Ok(Act::Node(Node::Action(pipe)))
            }
        }
    }

    fn enter(&mut self, pos: usize) -> Result<(), TemplateError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(
                pos,
                format!("exceeded maximum template depth ({MAX_DEPTH})"),
            ));
        }
        Ok(())
    }

    fn control(&mut self, kind: CtlKind, kw_pos: usize) -> Result<Node, TemplateError> {
        self.enter(kw_pos)?;
        let name = match kind {
            CtlKind::If => "if",
            CtlKind::With => "with",
            CtlKind::Range => "range",
        };
        let mark = self.vars.len();
        let pipe = self.pipeline(name, PipeEnd::Delim)?;
        if kind == CtlKind::Range {
            self.range_depth += 1;
        }
        let (list, end) = self.parse_list()?;
        if kind == CtlKind::Range {
            self.range_depth -= 1;
        }
        let else_list = match end {
            ListEnd::End(_) => Vec::new(),
            ListEnd::Else(_, true) => {
                self.skip_spaces();
                let it = self.next()?;
                match (kind, &it.tok) {
                    (CtlKind::If, Tok::Kw(Kw::If)) => vec![self.control(CtlKind::If, it.pos)?],
                    (CtlKind::With, Tok::Kw(Kw::With)) => {
                        vec![self.control(CtlKind::With, it.pos)?]
                    }
                    _ => return Err(self.unexpected(&it, "input")),
                }
            }
            ListEnd::Else(_, false) => {
                let (l, e) = self.parse_list()?;
                match e {
                    ListEnd::End(_) => l,
                    ListEnd::Else(p, _) => {
                        return Err(self.error(p, "expected end; found {{else}}"));
                    }
                    ListEnd::Eof => {
                        return Err(self.error(
                            kw_pos,
                            format!("unexpected EOF: {{{{{name}}}}} has no {{{{end}}}}"),
                        ));
                    }
                }
            }
            ListEnd::Eof => {
                return Err(self.error(
                    kw_pos,
                    format!("unexpected EOF: {{{{{name}}}}} has no {{{{end}}}}"),
                ));
            }
        };
        self.vars.truncate(mark);
        self.depth -= 1;
        let c = Box::new(Control {
            pipe,
            list,
            else_list,
        });
        Ok(match kind {
            CtlKind::If => Node::If(c),
            CtlKind::With => Node::With(c),
            CtlKind::Range => Node::Range(c),
        })
    }

    fn var_text(&self, it: &Item) -> String {
        self.src[it.pos..it.end].to_string()
    }

    fn pipeline(&mut self, context: &str, end: PipeEnd) -> Result<Pipe, TemplateError> {
        let start = self.peek_non_space().pos;
        let mut decl = Vec::new();
        let mut is_assign = false;
        loop {
            let save = self.i;
            if self.peek_non_space().tok != Tok::Var {
                break;
            }
            let v = self.next()?;
            let name = self.var_text(&v);
            let nxt = self.peek_non_space().clone();
            match nxt.tok {
                Tok::Assign | Tok::Declare => {
                    self.next()?;
                    is_assign = nxt.tok == Tok::Assign;
                    if is_assign && !self.vars.contains(&name) {
                        return Err(self.error(v.pos, format!("undefined variable {name:?}")));
                    }
                    self.vars.push(name.clone());
                    decl.push(name);
                    break;
                }
                Tok::Comma => {
                    self.next()?;
                    self.vars.push(name.clone());
                    decl.push(name);
                    if context == "range" && decl.len() < 2 {
                        match self.peek_non_space().tok {
                            Tok::Var | Tok::RightDelim | Tok::RParen => continue,
                            _ => {
                                let it = self.peek().clone();
                                return Err(
                                    self.error(it.pos, "range can only initialize variables")
                                );
                            }
                        }
                    }
                    return Err(self.error(nxt.pos, format!("too many declarations in {context}")));
                }
                _ => {
                    self.i = save;
                    break;
                }
            }
        }
        let mut cmds = Vec::new();
        let end_pos;
        loop {
            let idx = self.skip_spaces();
            let it = self.next()?;
            match it.tok {
                Tok::RightDelim if end == PipeEnd::Delim => {
                    end_pos = it.pos;
                    break;
                }
                Tok::RParen if end == PipeEnd::Paren => {
                    end_pos = it.pos;
                    break;
                }
                Tok::RightDelim => return Err(self.error(it.pos, "unclosed left paren")),
                Tok::RParen => return Err(self.error(it.pos, "unexpected right paren")),
                Tok::Bool(_)
                | Tok::Char(_)
                | Tok::Dot
                | Tok::Field
                | Tok::Ident
                | Tok::Number
                | Tok::Nil
                | Tok::Str(_)
                | Tok::Var
                | Tok::LParen => {
                    self.i = idx;
                    cmds.push(self.command()?);
                }
                _ => return Err(self.unexpected(&it, context)),
            }
        }
        if cmds.is_empty() {
            return Err(self.error(start, format!("missing value for {context}")));
        }
        for (k, c) in cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args[0].kind,
                ArgKind::Const(_) | ArgKind::Dot | ArgKind::Nil
            ) {
                return Err(self.error(
                    c.span.0,
                    format!("non executable command in pipeline stage {}", k + 1),
                ));
            }
        }
        Ok(Pipe {
            span: (start, end_pos.max(start)),
            decl,
            is_assign,
            cmds,
        })
    }

    fn command(&mut self) -> Result<Cmd, TemplateError> {
        let start = self.peek_non_space().pos;
        let mut args: Vec<Arg> = Vec::new();
        loop {
            self.skip_spaces();
            if let Some(op) = self.operand()? {
                args.push(op);
            }
            let idx = self.i;
            let it = self.next()?;
            match it.tok {
                Tok::Space => continue,
                Tok::RightDelim | Tok::RParen => {
                    self.i = idx;
                    break;
                }
                Tok::Pipe => break,
                _ => return Err(self.unexpected(&it, "operand")),
            }
        }
        let Some(last) = args.last() else {
            return Err(self.error(start, "empty command"));
        };
        Ok(Cmd {
            span: (start, last.span.1),
            args,
        })
    }

    fn operand(&mut self) -> Result<Option<Arg>, TemplateError> {
        let Some(mut term) = self.term()? else {
            return Ok(None);
        };
        if self.peek().tok != Tok::Field {
            return Ok(Some(term));
        }
        let mut fields = Vec::new();
        let mut end = term.span.1;
        while self.peek().tok == Tok::Field {
            let it = self.next()?;
            fields.push(self.src[it.pos + 1..it.end].to_string());
            end = it.end;
        }
        let span = (term.span.0, end);
        match &mut term.kind {
            ArgKind::Field(path) | ArgKind::Var(_, path) => {
                path.extend(fields);
                term.span = span;
                Ok(Some(term))
            }
            ArgKind::Func(_) | ArgKind::Pipe(_) | ArgKind::Chain(..) => Ok(Some(Arg {
                span,
                kind: ArgKind::Chain(Box::new(term), fields),
            })),
            ArgKind::Const(_) | ArgKind::Nil | ArgKind::Dot => Err(self.error(
                term.span.0,
                format!(
                    "unexpected . after term {:?}",
                    &self.src[term.span.0..term.span.1]
                ),
            )),
        }
    }

    fn term(&mut self) -> Result<Option<Arg>, TemplateError> {
        let idx = self.skip_spaces();
        let it = self.next()?;
        let span = (it.pos, it.end);
        let kind = match it.tok {
            Tok::Ident => {
                let name = &self.src[it.pos..it.end];
                match Func::lookup(name) {
                    Some(f) => ArgKind::Func(f),
                    None if matches!(name, "call" | "html" | "js" | "urlquery" | "slice") => {
                        return Err(
                            self.error(it.pos, format!("function {name:?} is not supported"))
                        );
                    }
                    None => {
                        return Err(self.error(it.pos, format!("function {name:?} not defined")));
                    }
                }
            }
            Tok::Dot => ArgKind::Dot,
            Tok::Nil => ArgKind::Nil,
            Tok::Var => {
                let name = self.var_text(&it);
                if !self.vars.contains(&name) {
                    return Err(self.error(it.pos, format!("undefined variable {name:?}")));
                }
                ArgKind::Var(name, Vec::new())
            }
            Tok::Field => ArgKind::Field(vec![self.src[it.pos + 1..it.end].to_string()]),
            Tok::Bool(b) => ArgKind::Const(Const::Bool(b)),
            Tok::Char(c) => ArgKind::Const(Const::Int(c)),
            Tok::Number => ArgKind::Const(
                parse_number(&self.src[it.pos..it.end]).map_err(|e| self.error(it.pos, e))?,
            ),
            Tok::Str(s) => ArgKind::Const(Const::Str(s)),
            Tok::LParen => {
                self.enter(it.pos)?;
                let pipe = self.pipeline("parenthesized pipeline", PipeEnd::Paren)?;
                self.depth -= 1;
                let end = self.items[self.i.saturating_sub(1)].end;
                return Ok(Some(Arg {
                    span: (it.pos, end),
                    kind: ArgKind::Pipe(Box::new(pipe)),
                }));
            }
            _ => {
                self.i = idx;
                return Ok(None);
            }
        };
        Ok(Some(Arg { span, kind }))
    }
}
