//! A subset of Go's `text/template`, enough to render scheduler_perf object templates unchanged.
//!
//! scheduler_perf renders every object template with `text/template` (funcs from
//! `getTemplateFuncs()` in `test/integration/scheduler_perf/scheduler_perf.go`, default options)
//! before parsing the result as YAML. The data is a map holding `Index`, `Count` and the
//! operation's `templateParams`.
//!
//! # Supported
//! - Text and actions `{{ ... }}` with trim markers `{{- ` / ` -}}` (all adjacent spaces, tabs,
//!   CRs and newlines are trimmed) and comments `{{/* ... */}}` (optionally trim-marked).
//! - Pipelines: fields `.a`, `.a.b`, `.`, variables `$x`, `$x.a`, `$` (the root data), literals
//!   (ints incl. `0x`/`0o`/`0b`/`_`, floats, `'c'` runes, `"..."` with Go escapes, `` `raw` ``,
//!   `true`/`false`/`nil`), function calls, `( ... )` sub-pipelines with field chains `(..).a`, and
//!   `|` chaining (the left value becomes the last argument).
//! - `{{$x := ...}}`, `{{$x = ...}}`, `if`/`else if`/`else`/`end`, `with`/`else with`/`else`/`end`,
//!   `range` over arrays, maps (sorted keys) and ints with `$v :=` / `$i, $v :=`, `{{break}}`,
//!   `{{continue}}`; variable scopes end at the enclosing control's `{{end}}` as in Go.
//! - Go truthiness: false, 0, 0.0, nil, missing, "", empty array/map are false.
//! - Builtins: `and`, `or` (short-circuit, return the deciding value), `not`, `len`, `index`,
//!   `print`, `printf`, `println`, `eq` (multi-arg), `ne`, `lt`, `le`, `gt`, `ge`.
//! - scheduler_perf's funcs, exactly upstream's set and semantics (values go through `float64`,
//!   strings are parsed as floats, results truncate to int): `AddInt`, `SubtractInt`,
//!   `MultiplyInt`, `DivideInt`, `Mod`, `AddFloat`, `SubtractFloat`, `MultiplyFloat`,
//!   `DivideFloat`. Division by zero and `Mod` by zero are errors.
//! - Missing map keys follow Go's default (`missingkey=invalid`): `{{.nope}}` prints `<no value>`
//!   (so does a JSON `null` printed directly), while `print`/`printf` see `<nil>`.
//! - Printing: ints as ints, floats like Go `%v` (`1.5`, `1e+06`, `+Inf`), strings raw, arrays
//!   `[a b]`, maps `map[k:v]`. `printf` supports flags `+-# 0`, width, precision and the verbs
//!   `v d s q f F e E g G x X o O b c t U T %`, with Go's `%!d(string=x)`, `%!d(MISSING)` and
//!   `%!(EXTRA ...)` forms.
//!
//! # Deviations
//! - Not supported (parse error): `define`, `template`, `block`, and the builtins `call`,
//!   `html`, `js`, `urlquery`, `slice`; complex and hexadecimal-float literals; `%x` on floats.
//! - Errors are `template: LINE:COL: message` without Go's template name; columns count
//!   characters (Go counts bytes). Parse errors point at the offending token (Go reports only the
//!   line); an unclosed action points at its `{{`, an unclosed control at its keyword. Execution
//!   errors read `executing at <source of the command>: ...`.
//! - Integer literals beyond `i64` and JSON numbers beyond `i64` (read as floats) differ from Go's
//!   int/uint handling; assigning to an undeclared variable is a parse error (Go: exec error).
//! - `eq` between arrays/maps is an error, and `eq` of nil and an array/map is false.
//! - Limits (errors, not panics): nesting depth 100 (controls and parentheses), 1,000,000 range
//!   iterations per render, 64 MiB of output, printf width/precision up to 1e6 (as Go).
//! - `is_static` is true when the text contains no `{{` at all (comments count as actions).

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::{Map, Value};

const MAX_DEPTH: usize = 100;
const MAX_RANGE_ITERATIONS: u64 = 1_000_000;
const MAX_OUTPUT: usize = 64 << 20;
const MAX_FMT_WIDTH: usize = 1_000_000;

/// A template error: where it happened (1-based line and column within the template text) and
/// Go's message for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The text is not a valid template.
    #[error("template: {line}:{column}: {message}")]
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    /// Rendering failed (bad function argument, limit reached, ...).
    #[error("template: {line}:{column}: {message}")]
    Exec {
        line: usize,
        column: usize,
        message: String,
    },
}

impl TemplateError {
    pub fn line(&self) -> Option<usize> {
        match self {
            TemplateError::Parse { line, .. } | TemplateError::Exec { line, .. } => Some(*line),
        }
    }

    pub fn column(&self) -> Option<usize> {
        match self {
            TemplateError::Parse { column, .. } | TemplateError::Exec { column, .. } => {
                Some(*column)
            }
        }
    }

    /// The message without the `template: L:C: ` prefix.
    pub fn message(&self) -> &str {
        match self {
            TemplateError::Parse { message, .. } | TemplateError::Exec { message, .. } => message,
        }
    }
}

/// 1-based line and column (in characters) of byte offset `pos` in `src`.
fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(src.len());
    while !src.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &src[..pos];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// A parsed template.
pub struct Template {
    src: String,
    nodes: Vec<Node>,
    is_static: bool,
}

impl std::fmt::Debug for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Template")
            .field("len", &self.src.len())
            .field("is_static", &self.is_static)
            .finish()
    }
}

impl Template {
    /// Parses `text` once; render it any number of times.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let items = lex(text);
        let mut p = Parser {
            src: text,
            items,
            i: 0,
            vars: vec!["$".to_string()],
            depth: 0,
            range_depth: 0,
        };
        let nodes = p.parse_root()?;
        Ok(Template {
            src: text.to_string(),
            nodes,
            is_static: !text.contains("{{"),
        })
    }

    /// True when the text has no actions at all (rendering returns it unchanged).
    pub fn is_static(&self) -> bool {
        self.is_static
    }

    /// Renders with `data` as dot (and `$`).
    pub fn render(&self, data: &Map<String, Value>) -> Result<String, TemplateError> {
        let mut st = Exec {
            src: &self.src,
            out: String::with_capacity(self.src.len() + 64),
            vars: vec![("$", V::Map(data))],
            iterations: 0,
        };
        let dot = V::Map(data);
        st.walk(&dot, &self.nodes)?;
        Ok(st.out)
    }
}

// ---------------------------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kw {
    If,
    Else,
    End,
    Range,
    With,
    Break,
    Continue,
    Define,
    Template,
    Block,
}

impl Kw {
    fn name(self) -> &'static str {
        match self {
            Kw::If => "if",
            Kw::Else => "else",
            Kw::End => "end",
            Kw::Range => "range",
            Kw::With => "with",
            Kw::Break => "break",
            Kw::Continue => "continue",
            Kw::Define => "define",
            Kw::Template => "template",
            Kw::Block => "block",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Text(String),
    LeftDelim,
    RightDelim,
    Space,
    Ident,
    Field,
    Var,
    Dot,
    Bool(bool),
    Nil,
    Number,
    Str(String),
    Char(i64),
    LParen,
    RParen,
    Pipe,
    Declare,
    Assign,
    Comma,
    OtherChar,
    Kw(Kw),
    Eof,
    Error(String),
}

#[derive(Debug, Clone)]
struct Item {
    tok: Tok,
    pos: usize,
    end: usize,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

fn has_left_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

fn char_desc(c: char) -> String {
    format!("U+{:04X} '{}'", c as u32, c)
}

/// Lexes the whole template; the last item is `Eof` or `Error`.
fn lex(src: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut pos = 0;
    let mut trim_next = false;
    loop {
        if trim_next {
            pos += src[pos..].len() - src[pos..].trim_start_matches(is_space).len();
        }
        let Some(off) = src[pos..].find("{{") else {
            if pos < src.len() {
                items.push(Item {
                    tok: Tok::Text(src[pos..].to_string()),
                    pos,
                    end: src.len(),
                });
            }
            items.push(Item {
                tok: Tok::Eof,
                pos: src.len(),
                end: src.len(),
            });
            return items;
        };
        let d = pos + off;
        let trim = has_left_trim(&src[d + 2..]);
        let mut text = &src[pos..d];
        if trim {
            text = text.trim_end_matches(is_space);
        }
        if !text.is_empty() {
            items.push(Item {
                tok: Tok::Text(text.to_string()),
                pos,
                end: pos + text.len(),
            });
        }
        let after = d + 2 + if trim { 2 } else { 0 };
        if src[after..].starts_with("/*") {
            let Some(x) = src[after + 2..].find("*/") else {
                items.push(err_item(d, "unclosed comment"));
                return items;
            };
            let p = after + 2 + x + 2;
            if src[p..].starts_with("}}") {
                pos = p + 2;
                trim_next = false;
                continue;
            }
            if has_right_trim(&src[p..]) && src[p + 2..].starts_with("}}") {
                pos = p + 4;
                trim_next = true;
                continue;
            }
            items.push(err_item(d, "comment ends before closing delimiter"));
            return items;
        }
        items.push(Item {
            tok: Tok::LeftDelim,
            pos: d,
            end: after,
        });
        pos = after;
        match lex_action(src, d, &mut pos, &mut items) {
            Some(t) => trim_next = t,
            None => return items,
        }
    }
}

fn err_item(pos: usize, msg: impl Into<String>) -> Item {
    Item {
        tok: Tok::Error(msg.into()),
        pos,
        end: pos,
    }
}

fn at_terminator(s: &str) -> bool {
    match s.chars().next() {
        None => true,
        Some(c) => {
            is_space(c) || matches!(c, '.' | ',' | '|' | ':' | ')' | '(') || s.starts_with("}}")
        }
    }
}

/// Lexes inside an action up to and including its right delimiter. Returns whether the delimiter
/// trims the following text, or None after pushing an error item.
fn lex_action(src: &str, delim: usize, pos: &mut usize, items: &mut Vec<Item>) -> Option<bool> {
    loop {
        let rest = &src[*pos..];
        if rest.starts_with("}}") {
            items.push(Item {
                tok: Tok::RightDelim,
                pos: *pos,
                end: *pos + 2,
            });
            *pos += 2;
            return Some(false);
        }
        if has_right_trim(rest) && rest[2..].starts_with("}}") {
            items.push(Item {
                tok: Tok::RightDelim,
                pos: *pos,
                end: *pos + 4,
            });
            *pos += 4;
            return Some(true);
        }
        let Some(c) = rest.chars().next() else {
            items.push(err_item(delim, "unclosed action"));
            return None;
        };
        let start = *pos;
        let simple = |tok: Tok, len: usize, pos: &mut usize, items: &mut Vec<Item>| {
            items.push(Item {
                tok,
                pos: start,
                end: start + len,
            });
            *pos += len;
        };
        match c {
            c if is_space(c) => {
                let n = rest.len() - rest.trim_start_matches(is_space).len();
                let mut end = start + n;
                // A space before "-}}" belongs to the trim marker.
                if rest[n..].starts_with("-}}") {
                    end -= 1;
                }
                *pos = end;
                if end > start {
                    items.push(Item {
                        tok: Tok::Space,
                        pos: start,
                        end,
                    });
                }
            }
            '=' => simple(Tok::Assign, 1, pos, items),
            ':' => {
                if rest[1..].starts_with('=') {
                    simple(Tok::Declare, 2, pos, items);
                } else {
                    items.push(err_item(start, "expected :="));
                    return None;
                }
            }
            '|' => simple(Tok::Pipe, 1, pos, items),
            '(' => simple(Tok::LParen, 1, pos, items),
            ')' => simple(Tok::RParen, 1, pos, items),
            ',' => simple(Tok::Comma, 1, pos, items),
            '"' => {
                let mut end = None;
                let mut it = rest.char_indices().skip(1);
                while let Some((i, ch)) = it.next() {
                    match ch {
                        '\\' => match it.next() {
                            Some((_, '\n')) | None => break,
                            Some(_) => {}
                        },
                        '\n' => break,
                        '"' => {
                            end = Some(i + 1);
                            break;
                        }
                        _ => {}
                    }
                }
                let Some(len) = end else {
                    items.push(err_item(start, "unterminated quoted string"));
                    return None;
                };
                match unquote(&rest[1..len - 1], '"') {
                    Ok(s) => simple(Tok::Str(s), len, pos, items),
                    Err(e) => {
                        items.push(err_item(start, e));
                        return None;
                    }
                }
            }
            '`' => {
                let Some(x) = rest[1..].find('`') else {
                    items.push(err_item(start, "unterminated raw quoted string"));
                    return None;
                };
                let s = rest[1..1 + x].replace('\r', "");
                simple(Tok::Str(s), x + 2, pos, items);
            }
            '\'' => {
                let mut end = None;
                let mut it = rest.char_indices().skip(1);
                while let Some((i, ch)) = it.next() {
                    match ch {
                        '\\' => match it.next() {
                            Some((_, '\n')) | None => break,
                            Some(_) => {}
                        },
                        '\n' => break,
                        '\'' => {
                            end = Some(i + 1);
                            break;
                        }
                        _ => {}
                    }
                }
                let Some(len) = end else {
                    items.push(err_item(start, "unterminated character constant"));
                    return None;
                };
                match unquote_char(&rest[1..len - 1]) {
                    Some(v) => simple(Tok::Char(v), len, pos, items),
                    None => {
                        items.push(err_item(
                            start,
                            format!("malformed character constant: {}", &rest[..len]),
                        ));
                        return None;
                    }
                }
            }
            '$' => {
                let n = 1 + rest[1..].len() - rest[1..].trim_start_matches(is_alnum).len();
                if !at_terminator(&rest[n..]) {
                    items.push(bad_char(start + n, &rest[n..]));
                    return None;
                }
                simple(Tok::Var, n, pos, items);
            }
            '.' if !rest[1..].starts_with(|c: char| c.is_ascii_digit()) => {
                let n = 1 + rest[1..].len() - rest[1..].trim_start_matches(is_alnum).len();
                if !at_terminator(&rest[n..]) {
                    items.push(bad_char(start + n, &rest[n..]));
                    return None;
                }
                let tok = if n == 1 { Tok::Dot } else { Tok::Field };
                simple(tok, n, pos, items);
            }
            '.' | '+' | '-' | '0'..='9' => {
                let n = scan_number(rest);
                if let Some(c) = rest[n..].chars().next().filter(|&c| is_alnum(c)) {
                    let end = n + c.len_utf8();
                    items.push(err_item(
                        start,
                        format!("bad number syntax: {:?}", &rest[..end]),
                    ));
                    return None;
                }
                simple(Tok::Number, n, pos, items);
            }
            c if c == '_' || c.is_alphabetic() => {
                let n = rest.len() - rest.trim_start_matches(is_alnum).len();
                if !at_terminator(&rest[n..]) {
                    items.push(bad_char(start + n, &rest[n..]));
                    return None;
                }
                let tok = match &rest[..n] {
                    "if" => Tok::Kw(Kw::If),
                    "else" => Tok::Kw(Kw::Else),
                    "end" => Tok::Kw(Kw::End),
                    "range" => Tok::Kw(Kw::Range),
                    "with" => Tok::Kw(Kw::With),
                    "break" => Tok::Kw(Kw::Break),
                    "continue" => Tok::Kw(Kw::Continue),
                    "define" => Tok::Kw(Kw::Define),
                    "template" => Tok::Kw(Kw::Template),
                    "block" => Tok::Kw(Kw::Block),
                    "true" => Tok::Bool(true),
                    "false" => Tok::Bool(false),
                    "nil" => Tok::Nil,
                    _ => Tok::Ident,
                };
                simple(tok, n, pos, items);
            }
            c if c.is_ascii() && !c.is_ascii_control() => {
                simple(Tok::OtherChar, 1, pos, items);
            }
            c => {
                items.push(err_item(
                    start,
                    format!("unrecognized character in action: {}", char_desc(c)),
                ));
                return None;
            }
        }
    }
}

fn bad_char(pos: usize, rest: &str) -> Item {
    let c = rest.chars().next().unwrap_or('\u{FFFD}');
    err_item(pos, format!("bad character {}", char_desc(c)))
}

/// Go's scanNumber: the length of the number-like prefix of `s`.
fn scan_number(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    let accept = |i: &mut usize, set: &[u8]| -> bool {
        if *i < b.len() && set.contains(&b[*i]) {
            *i += 1;
            true
        } else {
            false
        }
    };
    let accept_run = |i: &mut usize, set: &[u8]| {
        while *i < b.len() && set.contains(&b[*i]) {
            *i += 1;
        }
    };
    accept(&mut i, b"+-");
    let mut digits: &[u8] = b"0123456789_";
    if accept(&mut i, b"0") {
        if accept(&mut i, b"xX") {
            digits = b"0123456789abcdefABCDEF_";
        } else if accept(&mut i, b"oO") {
            digits = b"01234567_";
        } else if accept(&mut i, b"bB") {
            digits = b"01_";
        }
    }
    accept_run(&mut i, digits);
    if accept(&mut i, b".") {
        accept_run(&mut i, digits);
    }
    if digits.len() == 11 && accept(&mut i, b"eE") {
        accept(&mut i, b"+-");
        accept_run(&mut i, b"0123456789_");
    }
    if digits.len() == 23 && accept(&mut i, b"pP") {
        accept(&mut i, b"+-");
        accept_run(&mut i, b"0123456789_");
    }
    accept(&mut i, b"i");
    i
}

/// Go's strconv.Unquote body for a `quote`-delimited literal (without the quotes).
fn unquote(s: &str, quote: char) -> Result<String, String> {
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let bad = || "invalid syntax".to_string();
        let e = chars.next().ok_or_else(bad)?;
        let simple = match e {
            'a' => Some(7u8),
            'b' => Some(8),
            'f' => Some(12),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(11),
            '\\' => Some(b'\\'),
            '"' | '\'' if e == quote => Some(e as u8),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            continue;
        }
        let mut hex = |n: usize| -> Result<u32, String> {
            let mut v = 0u32;
            for _ in 0..n {
                let d = chars.next().and_then(|c| c.to_digit(16)).ok_or_else(bad)?;
                v = v * 16 + d;
            }
            Ok(v)
        };
        match e {
            'x' => out.push(hex(2)? as u8),
            'u' | 'U' => {
                let v = hex(if e == 'u' { 4 } else { 8 })?;
                let ch = char::from_u32(v).ok_or_else(bad)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let d = chars.next().and_then(|c| c.to_digit(8)).ok_or_else(bad)?;
                    v = v * 8 + d;
                }
                if v > 255 {
                    return Err(bad());
                }
                out.push(v as u8);
            }
            _ => return Err(bad()),
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The value of a character constant's body (between the single quotes).
fn unquote_char(s: &str) -> Option<i64> {
    let mut chars = s.chars();
    let first = chars.next()?;
    if first != '\\' {
        return chars.next().is_none().then_some(first as i64);
    }
    let e = chars.next()?;
    let rest: String = chars.collect();
    let v = match e {
        'a' => 7,
        'b' => 8,
        'f' => 12,
        'n' => 10,
        'r' => 13,
        't' => 9,
        'v' => 11,
        '\\' => 92,
        '\'' => 39,
        'x' | 'u' | 'U' => {
            let n = match e {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            if rest.len() != n {
                return None;
            }
            let v = u32::from_str_radix(&rest, 16).ok()?;
            if e != 'x' {
                char::from_u32(v)?;
            }
            return Some(v as i64);
        }
        '0'..='7' => {
            if rest.len() != 2 {
                return None;
            }
            let v = u32::from_str_radix(&format!("{e}{rest}"), 8).ok()?;
            return (v <= 255).then_some(v as i64);
        }
        _ => return None,
    };
    rest.is_empty().then_some(v)
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

// ---------------------------------------------------------------------------------------------
// Tree
// ---------------------------------------------------------------------------------------------

#[derive(Debug)]
enum Node {
    Text(usize, Box<str>),
    Action(Pipe),
    If(Box<Control>),
    With(Box<Control>),
    Range(Box<Control>),
    Break,
    Continue,
}

#[derive(Debug)]
struct Control {
    pipe: Pipe,
    list: Vec<Node>,
    else_list: Vec<Node>,
}

#[derive(Debug)]
struct Pipe {
    span: (usize, usize),
    decl: Vec<String>,
    is_assign: bool,
    cmds: Vec<Cmd>,
}

#[derive(Debug)]
struct Cmd {
    span: (usize, usize),
    args: Vec<Arg>,
}

#[derive(Debug)]
struct Arg {
    span: (usize, usize),
    kind: ArgKind,
}

#[derive(Debug)]
enum ArgKind {
    Dot,
    Nil,
    Const(Const),
    Field(Vec<String>),
    Var(String, Vec<String>),
    Func(Func),
    Pipe(Box<Pipe>),
    Chain(Box<Arg>, Vec<String>),
}

#[derive(Debug, Clone)]
enum Const {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    And,
    Or,
    Not,
    Len,
    Index,
    Print,
    Printf,
    Println,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    AddInt,
    SubtractInt,
    MultiplyInt,
    DivideInt,
    Mod,
    AddFloat,
    SubtractFloat,
    MultiplyFloat,
    DivideFloat,
}

const FUNCS: &[(&str, Func)] = &[
    ("and", Func::And),
    ("or", Func::Or),
    ("not", Func::Not),
    ("len", Func::Len),
    ("index", Func::Index),
    ("print", Func::Print),
    ("printf", Func::Printf),
    ("println", Func::Println),
    ("eq", Func::Eq),
    ("ne", Func::Ne),
    ("lt", Func::Lt),
    ("le", Func::Le),
    ("gt", Func::Gt),
    ("ge", Func::Ge),
    ("AddInt", Func::AddInt),
    ("SubtractInt", Func::SubtractInt),
    ("MultiplyInt", Func::MultiplyInt),
    ("DivideInt", Func::DivideInt),
    ("Mod", Func::Mod),
    ("AddFloat", Func::AddFloat),
    ("SubtractFloat", Func::SubtractFloat),
    ("MultiplyFloat", Func::MultiplyFloat),
    ("DivideFloat", Func::DivideFloat),
];

impl Func {
    fn lookup(name: &str) -> Option<Func> {
        FUNCS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    fn name(self) -> &'static str {
        FUNCS
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }

    /// (minimum, maximum) argument count; None = variadic.
    fn arity(self) -> (usize, Option<usize>) {
        match self {
            Func::And | Func::Or | Func::Index | Func::Printf | Func::Eq => (1, None),
            Func::Not | Func::Len => (1, Some(1)),
            Func::Print
            | Func::Println
            | Func::AddInt
            | Func::MultiplyInt
            | Func::AddFloat
            | Func::MultiplyFloat => (0, None),
            Func::Ne
            | Func::Lt
            | Func::Le
            | Func::Gt
            | Func::Ge
            | Func::SubtractInt
            | Func::DivideInt
            | Func::Mod
            | Func::SubtractFloat
            | Func::DivideFloat => (2, Some(2)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/// A runtime value. `Missing` is Go's invalid reflect.Value (a missing map key).
#[derive(Debug, Clone)]
enum V<'a> {
    Missing,
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    Arr(&'a [Value]),
    Map(&'a Map<String, Value>),
}

impl<'a> V<'a> {
    fn from_json(v: &'a Value) -> V<'a> {
        match v {
            Value::Null => V::Nil,
            Value::Bool(b) => V::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => V::Int(i),
                None => V::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => V::Str(Cow::Borrowed(s)),
            Value::Array(a) => V::Arr(a),
            Value::Object(m) => V::Map(m),
        }
    }

    fn from_const(c: &'a Const) -> V<'a> {
        match c {
            Const::Bool(b) => V::Bool(*b),
            Const::Int(i) => V::Int(*i),
            Const::Float(f) => V::Float(*f),
            Const::Str(s) => V::Str(Cow::Borrowed(s)),
        }
    }

    fn is_nilish(&self) -> bool {
        matches!(self, V::Missing | V::Nil)
    }

    fn truth(&self) -> bool {
        match self {
            V::Missing | V::Nil => false,
            V::Bool(b) => *b,
            V::Int(i) => *i != 0,
            V::Float(f) => *f != 0.0,
            V::Str(s) => !s.is_empty(),
            V::Arr(a) => !a.is_empty(),
            V::Map(m) => !m.is_empty(),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            V::Missing | V::Nil => "<nil>",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Float(_) => "float64",
            V::Str(_) => "string",
            V::Arr(_) => "[]interface {}",
            V::Map(_) => "map[string]interface {}",
        }
    }

    /// Go's `%v`.
    fn go_string(&self) -> String {
        let mut s = String::new();
        write_v(&mut s, self, 0);
        s
    }
}

/// Appends Go's `%v` rendering of `v` (nil as `<nil>`).
fn write_v(out: &mut String, v: &V<'_>, depth: usize) {
    match v {
        V::Missing | V::Nil => out.push_str("<nil>"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Int(i) => {
            let _ = write!(out, "{i}");
        }
        V::Float(f) => out.push_str(&fmt_float_g(*f, None, false)),
        V::Str(s) => out.push_str(s),
        V::Arr(a) => {
            if depth > MAX_DEPTH {
                out.push_str("[...]");
                return;
            }
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, &V::from_json(e), depth + 1);
            }
            out.push(']');
        }
        V::Map(m) => {
            if depth > MAX_DEPTH {
                out.push_str("map[...]");
                return;
            }
            out.push_str("map[");
            for (i, (k, e)) in sorted(m).into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, &V::from_json(e), depth + 1);
            }
            out.push(']');
        }
    }
}

fn sorted(m: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_unstable_by(|a, b| a.0.cmp(b.0));
    v
}

/// Decimal digits (no trailing zeros, at least "0") and the decimal exponent of `f` (finite,
/// non-negative): `f = 0.D * 10^dp`. `sig` rounds to that many significant digits.
fn decimal_digits(f: f64, sig: Option<usize>) -> (String, i32) {
    let s = match sig {
        None => format!("{f:e}"),
        Some(p) => format!("{:.*e}", p.max(1) - 1, f),
    };
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    if digits == "0" {
        return (digits, 1);
    }
    (digits, exp + 1)
}

fn exp_suffix(out: &mut String, exp: i32, upper: bool) {
    out.push(if upper { 'E' } else { 'e' });
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
}

fn non_finite(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

/// Go's `%g` (shortest when `prec` is None), including the sign.
fn fmt_float_g(f: f64, prec: Option<usize>, upper: bool) -> String {
    if let Some(s) = non_finite(f) {
        return s.to_string();
    }
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    let (digits, dp) = decimal_digits(f.abs(), prec);
    let nd = digits.len() as i32;
    let eprec = match prec {
        None => 6,
        Some(p) => {
            let p = p.max(1) as i32;
            if p > nd && nd >= dp { nd } else { p }
        }
    };
    let exp = dp - 1;
    if exp < -4 || exp >= eprec {
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        exp_suffix(&mut out, exp, upper);
    } else if dp <= 0 {
        out.push_str("0.");
        for _ in 0..-dp {
            out.push('0');
        }
        out.push_str(&digits);
    } else if dp >= nd {
        out.push_str(&digits);
        for _ in 0..dp - nd {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
    out
}

/// Go's `%e` with `prec` digits after the point, including the sign.
fn fmt_float_e(f: f64, prec: usize, upper: bool) -> String {
    if let Some(s) = non_finite(f) {
        return s.to_string();
    }
    let s = format!("{:.*e}", prec, f);
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mut out = mant.to_string();
    exp_suffix(&mut out, exp.parse().unwrap_or(0), upper);
    out
}

/// Go's `int(float64)` as on amd64: out-of-range and NaN give i64::MIN.
fn float_to_int(f: f64) -> i64 {
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// scheduler_perf's toFloat64.
fn to_float(v: &V<'_>) -> Result<f64, String> {
    match v {
        V::Int(i) => Ok(*i as f64),
        V::Float(f) => Ok(*f),
        V::Str(s) => parse_go_float(s).ok_or_else(|| format!("cannot cast {s} to float64")),
        other => Err(format!("cannot cast {} to float64", other.go_string())),
    }
}

/// strconv.ParseFloat(s, 64) for the decimal forms (plus inf/nan).
fn parse_go_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = body.to_ascii_lowercase();
    let ok = matches!(lower.as_str(), "inf" | "infinity" | "nan")
        || (!lower.is_empty()
            && lower
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')));
    if !ok {
        return None;
    }
    s.parse().ok()
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum BasicKind {
    Bool,
    Int,
    Float,
    Str,
}

fn basic_kind(v: &V<'_>) -> Option<BasicKind> {
    match v {
        V::Bool(_) => Some(BasicKind::Bool),
        V::Int(_) => Some(BasicKind::Int),
        V::Float(_) => Some(BasicKind::Float),
        V::Str(_) => Some(BasicKind::Str),
        _ => None,
    }
}

const ERR_BAD_COMPARISON: &str = "incompatible types for comparison";
const ERR_BAD_COMPARISON_TYPE: &str = "invalid type for comparison";

fn eq2(a: &V<'_>, b: &V<'_>) -> Result<bool, String> {
    if a.is_nilish() || b.is_nilish() {
        return Ok(a.is_nilish() && b.is_nilish());
    }
    for v in [a, b] {
        if matches!(v, V::Arr(_) | V::Map(_)) {
            return Err(format!(
                "non-comparable type {}: {}",
                v.go_string(),
                v.type_name()
            ));
        }
    }
    Ok(match (a, b) {
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Int(x), V::Int(y)) => x == y,
        (V::Float(x), V::Float(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        _ => return Err(ERR_BAD_COMPARISON.into()),
    })
}

fn lt2(a: &V<'_>, b: &V<'_>) -> Result<bool, String> {
    let k1 = basic_kind(a).ok_or(ERR_BAD_COMPARISON_TYPE)?;
    let k2 = basic_kind(b).ok_or(ERR_BAD_COMPARISON_TYPE)?;
    if k1 != k2 {
        return Err(ERR_BAD_COMPARISON.into());
    }
    Ok(match (a, b) {
        (V::Int(x), V::Int(y)) => x < y,
        (V::Float(x), V::Float(y)) => x < y,
        (V::Str(x), V::Str(y)) => x < y,
        _ => return Err(ERR_BAD_COMPARISON_TYPE.into()),
    })
}

fn index_of<'a>(item: &V<'a>, idx: &V<'a>) -> Result<V<'a>, String> {
    match item {
        V::Missing | V::Nil => Err("index of untyped nil".into()),
        V::Arr(a) => {
            let i = match idx {
                V::Int(i) => *i,
                V::Missing | V::Nil => return Err("cannot index slice/array with nil".into()),
                other => {
                    return Err(format!(
                        "cannot index slice/array with type {}",
                        other.type_name()
                    ));
                }
            };
            usize::try_from(i)
                .ok()
                .and_then(|u| a.get(u))
                .map(V::from_json)
                .ok_or_else(|| format!("index out of range: {i}"))
        }
        V::Str(s) => {
            let i = match idx {
                V::Int(i) => *i,
                other => {
                    return Err(format!(
                        "cannot index slice/array with type {}",
                        other.type_name()
                    ));
                }
            };
            usize::try_from(i)
                .ok()
                .and_then(|u| s.as_bytes().get(u))
                .map(|b| V::Int(i64::from(*b)))
                .ok_or_else(|| format!("index out of range: {i}"))
        }
        V::Map(m) => match idx {
            V::Str(k) => Ok(m.get(k.as_ref()).map_or(V::Nil, V::from_json)),
            other => Err(format!(
                "value has type {}; should be string",
                other.type_name()
            )),
        },
        other => Err(format!("can't index item of type {}", other.type_name())),
    }
}

/// Applies a non-short-circuit function to evaluated arguments.
fn apply<'a>(f: Func, args: &[V<'a>]) -> Result<V<'a>, String> {
    let int = |r: Result<f64, String>| r.map(|x| V::Int(float_to_int(x)));
    match f {
        Func::And | Func::Or => Ok(args.last().cloned().unwrap_or(V::Nil)),
        Func::Not => Ok(V::Bool(!args[0].truth())),
        Func::Len => match &args[0] {
            V::Str(s) => Ok(V::Int(s.len() as i64)),
            V::Arr(a) => Ok(V::Int(a.len() as i64)),
            V::Map(m) => Ok(V::Int(m.len() as i64)),
            V::Missing | V::Nil => Err("len of nil pointer".into()),
            other => Err(format!("len of type {}", other.type_name())),
        },
        Func::Index => {
            let mut cur = args[0].clone();
            for i in &args[1..] {
                cur = index_of(&cur, i)?;
            }
            Ok(cur)
        }
        Func::Print => Ok(V::Str(Cow::Owned(sprint(args, false)))),
        Func::Println => Ok(V::Str(Cow::Owned(sprint(args, true)))),
        Func::Printf => match &args[0] {
            V::Str(fmt) => Ok(V::Str(Cow::Owned(sprintf(fmt, &args[1..])))),
            V::Missing | V::Nil => Err("invalid value; expected string".into()),
            other => Err(format!(
                "wrong type for value; expected string; got {}",
                other.type_name()
            )),
        },
        Func::Eq => {
            if args.len() < 2 {
                return Err("missing argument for comparison".into());
            }
            for b in &args[1..] {
                if eq2(&args[0], b)? {
                    return Ok(V::Bool(true));
                }
            }
            Ok(V::Bool(false))
        }
        Func::Ne => Ok(V::Bool(!eq2(&args[0], &args[1])?)),
        Func::Lt => Ok(V::Bool(lt2(&args[0], &args[1])?)),
        Func::Le => Ok(V::Bool(
            lt2(&args[0], &args[1])? || eq2(&args[0], &args[1])?,
        )),
        Func::Gt => Ok(V::Bool(
            !(lt2(&args[0], &args[1])? || eq2(&args[0], &args[1])?),
        )),
        Func::Ge => Ok(V::Bool(!lt2(&args[0], &args[1])?)),
        Func::AddFloat => add_float(args).map(V::Float),
        Func::AddInt => int(add_float(args)),
        Func::MultiplyFloat => mul_float(args).map(V::Float),
        Func::MultiplyInt => int(mul_float(args)),
        Func::SubtractFloat => sub_float(args).map(V::Float),
        Func::SubtractInt => int(sub_float(args)),
        Func::DivideFloat => div_float(args).map(V::Float),
        Func::DivideInt => int(div_float(args)),
        Func::Mod => {
            let a = float_to_int(to_float(&args[0])?);
            let b = float_to_int(to_float(&args[1])?);
            if b == 0 {
                return Err("runtime error: integer divide by zero".into());
            }
            Ok(V::Int(a.wrapping_rem(b)))
        }
    }
}

fn add_float(args: &[V<'_>]) -> Result<f64, String> {
    args.iter().try_fold(0.0, |acc, v| Ok(acc + to_float(v)?))
}

fn mul_float(args: &[V<'_>]) -> Result<f64, String> {
    args.iter().try_fold(1.0, |acc, v| Ok(acc * to_float(v)?))
}

fn sub_float(args: &[V<'_>]) -> Result<f64, String> {
    Ok(to_float(&args[0])? - to_float(&args[1])?)
}

fn div_float(args: &[V<'_>]) -> Result<f64, String> {
    let a = to_float(&args[0])?;
    let b = to_float(&args[1])?;
    if b == 0.0 {
        return Err("division by zero".into());
    }
    Ok(a / b)
}

/// fmt.Sprint / fmt.Sprintln.
fn sprint(args: &[V<'_>], ln: bool) -> String {
    let mut out = String::new();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let is_string = matches!(a, V::Str(_));
        if i > 0 && (ln || (!is_string && !prev_string)) {
            out.push(' ');
        }
        write_v(&mut out, a, 0);
        prev_string = is_string;
    }
    if ln {
        out.push('\n');
    }
    out
}

#[derive(Default, Clone, Copy)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

impl Spec {
    /// Pads `s` to the width; `numeric` allows zero padding after the sign.
    fn pad(&self, out: &mut String, s: &str, numeric: bool) {
        let n = s.chars().count();
        let w = self.width.unwrap_or(0);
        if n >= w {
            out.push_str(s);
            return;
        }
        let fill = w - n;
        if self.minus {
            out.push_str(s);
            out.extend(std::iter::repeat_n(' ', fill));
        } else if self.zero && numeric {
            let (sign, rest) = match s.as_bytes().first() {
                Some(b'+' | b'-' | b' ') => s.split_at(1),
                _ => ("", s),
            };
            out.push_str(sign);
            out.extend(std::iter::repeat_n('0', fill));
            out.push_str(rest);
        } else {
            out.extend(std::iter::repeat_n(' ', fill));
            out.push_str(s);
        }
    }

    fn sign(&self, negative: bool) -> &'static str {
        if negative {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }
}

fn fmt_num(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<usize> {
    let mut v: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        v = Some(v.unwrap_or(0).saturating_mul(10).saturating_add(d as usize));
        chars.next();
    }
    v
}

/// fmt.Sprintf.
fn sprintf(format: &str, args: &[V<'_>]) -> String {
    let mut out = String::new();
    let mut ai = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                _ => break,
            }
            chars.next();
        }
        spec.width = fmt_num(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.prec = Some(fmt_num(&mut chars).unwrap_or(0));
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if spec.width.is_some_and(|w| w > MAX_FMT_WIDTH) {
            out.push_str("%!(BADWIDTH)");
            continue;
        }
        if spec.prec.is_some_and(|p| p > MAX_FMT_WIDTH) {
            out.push_str("%!(BADPREC)");
            continue;
        }
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(ai) else {
            let _ = write!(out, "%!{verb}(MISSING)");
            continue;
        };
        ai += 1;
        fmt_arg(&mut out, arg, verb, &spec, 0);
    }
    if ai < args.len() {
        out.push_str("%!(EXTRA ");
        for (i, a) in args[ai..].iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if a.is_nilish() {
                out.push_str("<nil>");
            } else {
                out.push_str(a.type_name());
                out.push('=');
                write_v(&mut out, a, 0);
            }
        }
        out.push(')');
    }
    out
}

fn bad_verb(out: &mut String, v: &V<'_>, verb: char) {
    let _ = write!(out, "%!{verb}(");
    if v.is_nilish() {
        out.push_str("<nil>");
    } else {
        out.push_str(v.type_name());
        out.push('=');
        write_v(out, v, 0);
    }
    out.push(')');
}

/// Go's strconv.Quote (printable runes kept, others escaped).
fn go_quote(s: &str, q: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\x7f' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

fn fmt_arg(out: &mut String, v: &V<'_>, verb: char, spec: &Spec, depth: usize) {
    if verb == 'T' {
        spec.pad(out, v.type_name(), false);
        return;
    }
    match v {
        V::Missing | V::Nil => {
            if verb == 'v' {
                spec.pad(out, "<nil>", false);
            } else {
                bad_verb(out, v, verb);
            }
        }
        V::Bool(b) => match verb {
            'v' | 't' => spec.pad(out, if *b { "true" } else { "false" }, false),
            _ => bad_verb(out, v, verb),
        },
        V::Int(i) => fmt_int(out, *i, verb, spec, v),
        V::Float(f) => {
            let f = *f;
            let body = match verb {
                'v' | 'g' | 'G' => fmt_float_g(f, spec.prec, verb == 'G'),
                'e' | 'E' => fmt_float_e(f, spec.prec.unwrap_or(6), verb == 'E'),
                'f' | 'F' => match non_finite(f) {
                    Some(s) => s.to_string(),
                    None => format!("{:.*}", spec.prec.unwrap_or(6), f),
                },
                _ => return bad_verb(out, v, verb),
            };
            let body = if body.starts_with(['-', '+']) || body == "NaN" {
                body
            } else {
                format!("{}{body}", spec.sign(false))
            };
            spec.pad(out, &body, f.is_finite());
        }
        V::Str(s) => match verb {
            'v' | 's' => {
                let t: Cow<'_, str> = match spec.prec {
                    Some(p) => Cow::Owned(s.chars().take(p).collect()),
                    None => Cow::Borrowed(s),
                };
                spec.pad(out, &t, false);
            }
            'q' => spec.pad(out, &go_quote(s, '"'), false),
            'x' | 'X' => {
                let mut h = String::with_capacity(s.len() * 2 + 2);
                if spec.sharp {
                    h.push_str(if verb == 'x' { "0x" } else { "0X" });
                }
                for b in s.bytes() {
                    if verb == 'x' {
                        let _ = write!(h, "{b:02x}");
                    } else {
                        let _ = write!(h, "{b:02X}");
                    }
                }
                spec.pad(out, &h, false);
            }
            _ => bad_verb(out, v, verb),
        },
        V::Arr(a) => {
            if depth > MAX_DEPTH {
                out.push_str("[...]");
                return;
            }
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                fmt_arg(out, &V::from_json(e), verb, spec, depth + 1);
            }
            out.push(']');
        }
        V::Map(m) => {
            if depth > MAX_DEPTH {
                out.push_str("map[...]");
                return;
            }
            out.push_str("map[");
            for (i, (k, e)) in sorted(m).into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                fmt_arg(out, &V::Str(Cow::Borrowed(k)), verb, spec, depth + 1);
                out.push(':');
                fmt_arg(out, &V::from_json(e), verb, spec, depth + 1);
            }
            out.push(']');
        }
    }
}

fn fmt_int(out: &mut String, i: i64, verb: char, spec: &Spec, v: &V<'_>) {
    let mag = i.unsigned_abs();
    let (digits, prefix) = match verb {
        'd' | 'v' => (mag.to_string(), ""),
        'b' => (format!("{mag:b}"), if spec.sharp { "0b" } else { "" }),
        'o' => (format!("{mag:o}"), if spec.sharp { "0" } else { "" }),
        'O' => (format!("{mag:o}"), "0o"),
        'x' => (format!("{mag:x}"), if spec.sharp { "0x" } else { "" }),
        'X' => (format!("{mag:X}"), if spec.sharp { "0X" } else { "" }),
        'c' => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            spec.pad(out, c.encode_utf8(&mut [0u8; 4]), false);
            return;
        }
        'q' => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            spec.pad(out, &go_quote(c.encode_utf8(&mut [0u8; 4]), '\''), false);
            return;
        }
        'U' => {
            let s = if i < 0 {
                format!("U+{:X}", i as u64)
            } else {
                format!("U+{i:04X}")
            };
            spec.pad(out, &s, false);
            return;
        }
        _ => return bad_verb(out, v, verb),
    };
    let mut digits = digits;
    if let Some(p) = spec.prec {
        if p == 0 && i == 0 {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    let s = format!("{}{prefix}{digits}", spec.sign(i < 0));
    let numeric = spec.prec.is_none();
    spec.pad(out, &s, numeric);
}

// ---------------------------------------------------------------------------------------------
// Execution
// ---------------------------------------------------------------------------------------------

#[derive(PartialEq, Eq)]
enum Flow {
    Normal,
    Break,
    Continue,
}

struct Exec<'a> {
    src: &'a str,
    out: String,
    vars: Vec<(&'a str, V<'a>)>,
    iterations: u64,
}

fn snippet(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() > 40 {
        let short: String = s.chars().take(40).collect();
        format!("{short}...")
    } else {
        s.to_string()
    }
}

impl<'a> Exec<'a> {
    fn error(&self, span: (usize, usize), msg: impl std::fmt::Display) -> TemplateError {
        let (line, column) = line_col(self.src, span.0);
        let end = span.1.clamp(span.0, self.src.len());
        let text = self.src.get(span.0..end).unwrap_or("");
        TemplateError::Exec {
            line,
            column,
            message: format!("executing at <{}>: {msg}", snippet(text)),
        }
    }

    fn check_output(&self, pos: usize) -> Result<(), TemplateError> {
        if self.out.len() > MAX_OUTPUT {
            let (line, column) = line_col(self.src, pos);
            return Err(TemplateError::Exec {
                line,
                column,
                message: format!("output exceeds the limit of {} MiB", MAX_OUTPUT >> 20),
            });
        }
        Ok(())
    }

    fn walk(&mut self, dot: &V<'a>, nodes: &'a [Node]) -> Result<Flow, TemplateError> {
        for node in nodes {
            let flow = match node {
                Node::Text(pos, t) => {
                    self.out.push_str(t);
                    self.check_output(*pos)?;
                    Flow::Normal
                }
                Node::Action(pipe) => {
                    let v = self.eval_pipe(dot, pipe)?;
                    if pipe.decl.is_empty() {
                        match &v {
                            V::Missing | V::Nil => self.out.push_str("<no value>"),
                            V::Str(s) => self.out.push_str(s),
                            V::Int(i) => {
                                let _ = write!(self.out, "{i}");
                            }
                            other => write_v(&mut self.out, other, 0),
                        }
                        self.check_output(pipe.span.0)?;
                    }
                    Flow::Normal
                }
                Node::If(c) | Node::With(c) => {
                    let mark = self.vars.len();
                    let v = self.eval_pipe(dot, &c.pipe)?;
                    let flow = if v.truth() {
                        if matches!(node, Node::With(_)) {
                            self.walk(&v, &c.list)?
                        } else {
                            self.walk(dot, &c.list)?
                        }
                    } else {
                        self.walk(dot, &c.else_list)?
                    };
                    self.vars.truncate(mark);
                    flow
                }
                Node::Range(c) => {
                    let mark = self.vars.len();
                    self.range(dot, c)?;
                    self.vars.truncate(mark);
                    Flow::Normal
                }
                Node::Break => Flow::Break,
                Node::Continue => Flow::Continue,
            };
            if flow != Flow::Normal {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn range(&mut self, dot: &V<'a>, c: &'a Control) -> Result<(), TemplateError> {
        let val = self.eval_pipe(dot, &c.pipe)?;
        let mark = self.vars.len();
        let mut ran = false;
        let mut one = |st: &mut Self, index: V<'a>, elem: V<'a>| -> Result<Flow, TemplateError> {
            ran = true;
            st.iterations += 1;
            if st.iterations > MAX_RANGE_ITERATIONS {
                return Err(st.error(
                    c.pipe.span,
                    format!("range exceeded {MAX_RANGE_ITERATIONS} iterations"),
                ));
            }
            let decl = &c.pipe.decl;
            if c.pipe.is_assign {
                if decl.len() > 1 {
                    st.set_var(&decl[0], index);
                    st.set_var(&decl[1], elem.clone());
                } else if let Some(d) = decl.first() {
                    st.set_var(d, elem.clone());
                }
            } else {
                let n = st.vars.len();
                if !decl.is_empty() && n >= 1 {
                    st.vars[n - 1].1 = elem.clone();
                }
                if decl.len() > 1 && n >= 2 {
                    st.vars[n - 2].1 = index;
                }
            }
            let flow = st.walk(&elem, &c.list)?;
            st.vars.truncate(mark);
            Ok(flow)
        };
        match &val {
            V::Arr(a) => {
                for (i, e) in a.iter().enumerate() {
                    if one(self, V::Int(i as i64), V::from_json(e))? == Flow::Break {
                        break;
                    }
                }
            }
            V::Map(m) => {
                for (k, e) in sorted(m) {
                    if one(self, V::Str(Cow::Borrowed(k)), V::from_json(e))? == Flow::Break {
                        break;
                    }
                }
            }
            V::Int(n) => {
                if c.pipe.decl.len() > 1 {
                    return Err(self.error(
                        c.pipe.span,
                        format!("can't use {n} to iterate over more than one variable"),
                    ));
                }
                for i in 0..*n {
                    if one(self, V::Int(i), V::Int(i))? == Flow::Break {
                        break;
                    }
                }
            }
            V::Missing | V::Nil => {}
            other => {
                return Err(self.error(
                    c.pipe.span,
                    format!("range can't iterate over {}", other.go_string()),
                ));
            }
        }
        if !ran {
            self.walk(dot, &c.else_list)?;
        }
        Ok(())
    }

    fn set_var(&mut self, name: &str, v: V<'a>) {
        if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
            slot.1 = v;
        }
    }

    fn var(&self, name: &str, span: (usize, usize)) -> Result<V<'a>, TemplateError> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.error(span, format!("undefined variable: {name}")))
    }

    fn eval_pipe(&mut self, dot: &V<'a>, pipe: &'a Pipe) -> Result<V<'a>, TemplateError> {
        let mut value: Option<V<'a>> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_cmd(dot, cmd, value.take())?;
            // Go digs a nil interface down to the invalid value between commands.
            value = Some(if matches!(v, V::Nil) { V::Missing } else { v });
        }
        let v = value.unwrap_or(V::Missing);
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, v.clone());
            } else {
                self.vars.push((name.as_str(), v.clone()));
            }
        }
        Ok(v)
    }

    fn not_a_function(&self, cmd: &Cmd, has_final: bool, first: &Arg) -> Result<(), TemplateError> {
        if cmd.args.len() > 1 || has_final {
            return Err(self.error(
                cmd.span,
                format!(
                    "can't give argument to non-function {}",
                    &self.src[first.span.0..first.span.1]
                ),
            ));
        }
        Ok(())
    }

    fn eval_cmd(
        &mut self,
        dot: &V<'a>,
        cmd: &'a Cmd,
        fin: Option<V<'a>>,
    ) -> Result<V<'a>, TemplateError> {
        let first = &cmd.args[0];
        let rest = &cmd.args[1..];
        let has_args = !rest.is_empty() || fin.is_some();
        match &first.kind {
            ArgKind::Field(path) => self.field_chain(dot.clone(), path, has_args, first.span),
            ArgKind::Var(name, path) => {
                let v = self.var(name, first.span)?;
                if path.is_empty() {
                    self.not_a_function(cmd, fin.is_some(), first)?;
                    Ok(v)
                } else {
                    self.field_chain(v, path, has_args, first.span)
                }
            }
            ArgKind::Chain(inner, path) => {
                let v = self.eval_arg(dot, inner)?;
                self.field_chain(v, path, has_args, first.span)
            }
            ArgKind::Func(f) => self.call(dot, *f, cmd, rest, fin),
            ArgKind::Pipe(p) => {
                self.not_a_function(cmd, fin.is_some(), first)?;
                self.eval_pipe(dot, p)
            }
            ArgKind::Const(c) => {
                self.not_a_function(cmd, fin.is_some(), first)?;
                Ok(V::from_const(c))
            }
            ArgKind::Dot => {
                self.not_a_function(cmd, fin.is_some(), first)?;
                Ok(dot.clone())
            }
            ArgKind::Nil => Err(self.error(cmd.span, "nil is not a command")),
        }
    }

    fn eval_arg(&mut self, dot: &V<'a>, arg: &'a Arg) -> Result<V<'a>, TemplateError> {
        match &arg.kind {
            ArgKind::Dot => Ok(dot.clone()),
            ArgKind::Nil => Ok(V::Nil),
            ArgKind::Const(c) => Ok(V::from_const(c)),
            ArgKind::Field(path) => self.field_chain(dot.clone(), path, false, arg.span),
            ArgKind::Var(name, path) => {
                let v = self.var(name, arg.span)?;
                self.field_chain(v, path, false, arg.span)
            }
            ArgKind::Chain(inner, path) => {
                let v = self.eval_arg(dot, inner)?;
                self.field_chain(v, path, false, arg.span)
            }
            ArgKind::Func(f) => {
                let cmd_like = Cmd {
                    span: arg.span,
                    args: Vec::new(),
                };
                self.call(dot, *f, &cmd_like, &[], None)
            }
            ArgKind::Pipe(p) => self.eval_pipe(dot, p),
        }
    }

    fn field_chain(
        &self,
        mut cur: V<'a>,
        path: &[String],
        has_args: bool,
        span: (usize, usize),
    ) -> Result<V<'a>, TemplateError> {
        for (i, name) in path.iter().enumerate() {
            cur = match cur {
                V::Missing => return Ok(V::Missing),
                V::Map(m) => {
                    if has_args && i + 1 == path.len() {
                        return Err(
                            self.error(span, format!("{name} is not a method but has arguments"))
                        );
                    }
                    m.get(name.as_str()).map_or(V::Missing, V::from_json)
                }
                V::Nil => {
                    return Err(self.error(
                        span,
                        format!("nil pointer evaluating interface {{}}.{name}"),
                    ));
                }
                other => {
                    return Err(self.error(
                        span,
                        format!("can't evaluate field {name} in type {}", other.type_name()),
                    ));
                }
            };
        }
        Ok(cur)
    }

    fn call(
        &mut self,
        dot: &V<'a>,
        f: Func,
        cmd: &Cmd,
        args: &'a [Arg],
        fin: Option<V<'a>>,
    ) -> Result<V<'a>, TemplateError> {
        let n = args.len() + usize::from(fin.is_some());
        let (min, max) = f.arity();
        if n < min || max.is_some_and(|m| n > m) {
            let want = match max {
                Some(m) if m == min => format!("want {m}"),
                _ => format!("want at least {min}"),
            };
            return Err(self.error(
                cmd.span,
                format!("wrong number of args for {}: {want} got {n}", f.name()),
            ));
        }
        let nil = |v: V<'a>| if matches!(v, V::Missing) { V::Nil } else { v };
        if matches!(f, Func::And | Func::Or) {
            let want = f == Func::Or;
            let mut v = V::Nil;
            for a in args {
                v = nil(self.eval_arg(dot, a)?);
                if v.truth() == want {
                    return Ok(v);
                }
            }
            if let Some(fv) = fin {
                v = nil(fv);
            }
            return Ok(v);
        }
        let mut vals = Vec::with_capacity(n);
        for a in args {
            vals.push(nil(self.eval_arg(dot, a)?));
        }
        if let Some(fv) = fin {
            vals.push(nil(fv));
        }
        apply(f, &vals)
            .map_err(|e| self.error(cmd.span, format!("error calling {}: {e}", f.name())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn render(t: &str, d: Value) -> Result<String, TemplateError> {
        Template::parse(t)?.render(&data(d))
    }

    fn ok(t: &str, d: Value) -> String {
        match render(t, d) {
            Ok(s) => s,
            Err(e) => panic!("{t:?}: {e}"),
        }
    }

    fn parse_err(t: &str) -> TemplateError {
        match Template::parse(t) {
            Ok(_) => panic!("{t:?} parsed"),
            Err(e) => e,
        }
    }

    fn exec_err(t: &str, d: Value) -> TemplateError {
        match render(t, d) {
            Ok(s) => panic!("{t:?} rendered {s:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn fields_and_text() {
        let d = json!({"Index": 7, "Count": 100, "name": "x", "a": {"b": {"c": 3}}});
        assert_eq!(ok("pod-{{.Index}}", d.clone()), "pod-7");
        assert_eq!(ok("pod-{{ .Index }}/{{ .Count }}", d.clone()), "pod-7/100");
        assert_eq!(ok("{{.a.b.c}}", d.clone()), "3");
        assert_eq!(ok("{{.name}}", d.clone()), "x");
        assert_eq!(ok("plain text\n", d.clone()), "plain text\n");
        assert_eq!(ok("", d.clone()), "");
        assert_eq!(ok("{{.a.b}}", d.clone()), "map[c:3]");
        assert_eq!(ok("{{$.Index}}", d), "7");
    }

    #[test]
    fn missing_and_nil() {
        let d = json!({"n": null, "a": {}});
        assert_eq!(ok("{{.nope}}", d.clone()), "<no value>");
        assert_eq!(ok("{{.nope.deeper}}", d.clone()), "<no value>");
        assert_eq!(ok("{{.n}}", d.clone()), "<no value>");
        assert_eq!(ok("{{print .nope}}", d.clone()), "<nil>");
        assert_eq!(ok("{{print nil}}", d.clone()), "<nil>");
        assert_eq!(ok("{{if .nope}}y{{else}}n{{end}}", d.clone()), "n");
        let e = exec_err("{{.n.x}}", d);
        assert!(
            e.to_string()
                .contains("nil pointer evaluating interface {}.x"),
            "{e}"
        );
    }

    #[test]
    fn literals() {
        let d = json!({});
        assert_eq!(
            ok(
                "{{1}} {{-2}} {{+3}} {{0x1F}} {{0o17}} {{017}} {{0b101}} {{1_000}}",
                d.clone()
            ),
            "1 -2 3 31 15 15 5 1000"
        );
        assert_eq!(
            ok(
                "{{1.5}} {{1e6}} {{1.0}} {{0.0001}} {{0.00001}} {{123456.0}} {{1234567.0}}",
                d.clone()
            ),
            "1.5 1e+06 1 0.0001 1e-05 123456 1.234567e+06"
        );
        assert_eq!(ok(r#"{{"a\tb\"c\\\x41\u00e9"}}"#, d.clone()), "a\tb\"c\\Aé");
        assert_eq!(ok("{{`raw\\n`}}", d.clone()), "raw\\n");
        assert_eq!(
            ok("{{true}} {{false}} {{'a'}} {{'\\n'}}", d.clone()),
            "true false 97 10"
        );
        assert_eq!(ok("{{.5}}", d), "0.5");
    }

    #[test]
    fn trim_markers_and_comments() {
        let d = json!({"x": 1});
        assert_eq!(ok("a  \n {{- .x -}} \n\t b", d.clone()), "a1b");
        assert_eq!(ok("a {{- .x}} b", d.clone()), "a1 b");
        assert_eq!(ok("a {{.x -}} b", d.clone()), "a 1b");
        assert_eq!(ok("a{{/* comment */}}b", d.clone()), "ab");
        assert_eq!(ok("a {{- /* c\nd */ -}} b", d.clone()), "ab");
        assert_eq!(ok("{{-3}}", d.clone()), "-3");
        assert_eq!(ok("{{ 3 -}}\n\n", d), "3");
    }

    #[test]
    fn if_else_chain() {
        let t = r#"{{if eq .m "single"}}S{{else if eq .m "multi"}}M{{else}}O{{end}}"#;
        assert_eq!(ok(t, json!({"m": "single"})), "S");
        assert_eq!(ok(t, json!({"m": "multi"})), "M");
        assert_eq!(ok(t, json!({"m": "x"})), "O");
        assert_eq!(ok("{{if .p}}p={{.p}}{{end}}", json!({"p": 5})), "p=5");
        assert_eq!(ok("{{if .p}}p={{.p}}{{end}}", json!({"p": 0})), "");
        assert_eq!(
            ok(
                "{{if and .a .b}}y{{else}}n{{end}}",
                json!({"a": 1, "b": ""})
            ),
            "n"
        );
        assert_eq!(
            ok(
                "{{if or .a .b}}y{{else}}n{{end}}",
                json!({"a": 0, "b": "x"})
            ),
            "y"
        );
        assert_eq!(ok("{{if not .a}}y{{end}}", json!({"a": []})), "y");
    }

    #[test]
    fn truthiness() {
        for (v, want) in [
            (json!(false), "F"),
            (json!(true), "T"),
            (json!(0), "F"),
            (json!(2), "T"),
            (json!(0.0), "F"),
            (json!(0.5), "T"),
            (json!(""), "F"),
            (json!("a"), "T"),
            (json!([]), "F"),
            (json!([0]), "T"),
            (json!({}), "F"),
            (json!({"a": 1}), "T"),
            (json!(null), "F"),
        ] {
            assert_eq!(
                ok("{{if .v}}T{{else}}F{{end}}", json!({"v": v})),
                want,
                "{v}"
            );
        }
    }

    #[test]
    fn with_blocks() {
        assert_eq!(ok("{{with .a}}{{.b}}{{end}}", json!({"a": {"b": 2}})), "2");
        assert_eq!(ok("{{with .z}}x{{else}}none{{end}}", json!({})), "none");
        assert_eq!(ok("{{with $x := .a}}{{$x}}{{end}}", json!({"a": 4})), "4");
        assert_eq!(
            ok(
                "{{with .z}}x{{else with .a}}a={{.}}{{end}}",
                json!({"a": 4})
            ),
            "a=4"
        );
    }

    #[test]
    fn range_forms() {
        let d = json!({"l": ["a", "b", "c"], "m": {"y": 2, "x": 1}, "e": []});
        assert_eq!(ok("{{range .l}}{{.}},{{end}}", d.clone()), "a,b,c,");
        assert_eq!(
            ok("{{range $i, $v := .l}}{{$i}}={{$v}} {{end}}", d.clone()),
            "0=a 1=b 2=c "
        );
        assert_eq!(ok("{{range $v := .l}}{{$v}}{{end}}", d.clone()), "abc");
        assert_eq!(
            ok("{{range $k, $v := .m}}{{$k}}:{{$v}};{{end}}", d.clone()),
            "x:1;y:2;"
        );
        assert_eq!(ok("{{range .e}}x{{else}}empty{{end}}", d.clone()), "empty");
        assert_eq!(
            ok("{{range .none}}x{{else}}empty{{end}}", d.clone()),
            "empty"
        );
        assert_eq!(ok("{{range 3}}{{.}}{{end}}", d.clone()), "012");
        assert_eq!(ok("{{range $i := 3}}{{$i}}{{end}}", d.clone()), "012");
        assert_eq!(
            ok(
                "{{range .l}}{{if eq . \"b\"}}{{continue}}{{end}}{{.}}{{end}}",
                d.clone()
            ),
            "ac"
        );
        assert_eq!(
            ok(
                "{{range .l}}{{if eq . \"b\"}}{{break}}{{end}}{{.}}{{end}}",
                d.clone()
            ),
            "a"
        );
        assert_eq!(ok("{{range .l}}{{$.m.x}}{{end}}", d.clone()), "111");
        let e = exec_err("{{range .s}}x{{end}}", json!({"s": "str"}));
        assert!(
            e.to_string().contains("range can't iterate over str"),
            "{e}"
        );
    }

    #[test]
    fn variables() {
        let d = json!({"a": 1});
        assert_eq!(ok("{{$x := 5}}{{$x}}", d.clone()), "5");
        assert_eq!(ok("{{$x := 5}}{{$x = 6}}{{$x}}", d.clone()), "6");
        assert_eq!(
            ok("{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}", d.clone()),
            "2"
        );
        assert_eq!(ok("{{$x := .}}{{$x.a}}", d.clone()), "1");
        assert_eq!(ok("{{$}}", d.clone()), "map[a:1]");
        let e = parse_err("{{if true}}{{$y := 1}}{{end}}{{$y}}");
        assert_eq!(e.message(), "undefined variable \"$y\"");
        assert_eq!((e.line(), e.column()), (Some(1), Some(32)));
    }

    #[test]
    fn pipes_and_parens() {
        let d = json!({"Index": 7, "s": "x"});
        assert_eq!(ok("{{.Index | print}}", d.clone()), "7");
        assert_eq!(ok("{{.Index | printf \"%03d\"}}", d.clone()), "007");
        assert_eq!(ok("{{\"a\" | printf \"%s-%s\" \"b\"}}", d.clone()), "b-a");
        assert_eq!(ok("{{(AddInt 1 2) | MultiplyInt 3}}", d.clone()), "9");
        assert_eq!(ok("{{print (len .s) (len \"abc\")}}", d.clone()), "1 3");
        assert_eq!(ok("{{(index . \"s\")}}", d.clone()), "x");
        assert_eq!(ok("{{(.).Index}}", d.clone()), "7");
        assert_eq!(ok("{{.Index | eq 7}}", d), "true");
    }

    #[test]
    fn scheduler_perf_funcs() {
        let d = json!({"Index": 7, "Count": 100, "priority": 5, "podsPerGroup": 2, "f": 2.5, "s": "10"});
        assert_eq!(ok("{{AddInt 0 .priority}}", d.clone()), "5");
        assert_eq!(ok("{{ Mod .Index 12 }}", d.clone()), "7");
        assert_eq!(ok("{{ DivideInt 30000 .Count }}", d.clone()), "300");
        assert_eq!(ok("{{DivideInt .Index .podsPerGroup}}", d.clone()), "3");
        assert_eq!(ok("{{SubtractInt .Index 10}}", d.clone()), "-3");
        assert_eq!(ok("{{MultiplyInt 2 3 4}}", d.clone()), "24");
        assert_eq!(
            ok("{{AddInt}} {{AddInt .f .f}} {{AddInt .s 1}}", d.clone()),
            "0 5 11"
        );
        assert_eq!(
            ok(
                "{{AddFloat 1 .f}} {{DivideFloat 1 4}} {{MultiplyFloat 2 .f}} {{SubtractFloat 1 .f}}",
                d.clone()
            ),
            "3.5 0.25 5 -1.5"
        );
        assert_eq!(ok("{{DivideInt -7 2}} {{Mod -7 3}}", d.clone()), "-3 -1");
        let e = exec_err("{{DivideInt .Index 0}}", d.clone());
        assert_eq!(
            e.to_string(),
            "template: 1:3: executing at <DivideInt .Index 0>: error calling DivideInt: division by zero"
        );
        let e = exec_err("\n  {{ Mod .Index 0 }}", d.clone());
        assert_eq!((e.line(), e.column()), (Some(2), Some(6)));
        assert!(
            e.to_string()
                .ends_with("error calling Mod: runtime error: integer divide by zero"),
            "{e}"
        );
        let e = exec_err("{{AddInt 1 \"100m\"}}", d.clone());
        assert!(
            e.to_string()
                .ends_with("error calling AddInt: cannot cast 100m to float64"),
            "{e}"
        );
        let e = exec_err("{{AddInt 1 .missing}}", d.clone());
        assert!(
            e.to_string().ends_with("cannot cast <nil> to float64"),
            "{e}"
        );
        let e = exec_err("{{DivideInt 1}}", d);
        assert!(
            e.to_string()
                .ends_with("wrong number of args for DivideInt: want 2 got 1"),
            "{e}"
        );
    }

    #[test]
    fn comparisons() {
        let d = json!({"i": 3, "f": 1.5, "s": "b"});
        assert_eq!(
            ok(
                "{{eq .i 3}} {{eq .i 1 2 3}} {{eq .i 1 2}} {{ne .s \"a\"}}",
                d.clone()
            ),
            "true true false true"
        );
        assert_eq!(
            ok("{{lt .i 4}} {{le .i 3}} {{gt .i 3}} {{ge .i 3}}", d.clone()),
            "true true false true"
        );
        assert_eq!(
            ok("{{lt .s \"c\"}} {{gt .f 1.0}} {{eq true true}}", d.clone()),
            "true true true"
        );
        assert_eq!(
            ok("{{eq .missing \"x\"}} {{eq .missing nil}}", d.clone()),
            "false true"
        );
        let e = exec_err("{{eq .i 1.5}}", d.clone());
        assert!(
            e.to_string()
                .ends_with("error calling eq: incompatible types for comparison"),
            "{e}"
        );
        let e = exec_err("{{lt true false}}", d);
        assert!(
            e.to_string().ends_with("invalid type for comparison"),
            "{e}"
        );
    }

    #[test]
    fn and_or_values() {
        let d = json!({"a": 0, "b": "x"});
        assert_eq!(
            ok(
                "{{and 1 .b}} {{and .a .b}} {{or .a .b}} {{or .a \"\"}}",
                d.clone()
            ),
            "x 0 x "
        );
        // Short-circuit: the failing call is never evaluated.
        assert_eq!(
            ok("{{or 1 (DivideInt 1 0)}} {{and 0 (DivideInt 1 0)}}", d),
            "1 0"
        );
    }

    #[test]
    fn len_index() {
        let d = json!({"l": [1, [2, 3]], "m": {"k": "v"}, "s": "héllo"});
        assert_eq!(ok("{{len .l}} {{len .m}} {{len .s}}", d.clone()), "2 1 6");
        assert_eq!(
            ok(
                "{{index .l 0}} {{index .l 1 1}} {{index .m \"k\"}} {{index .s 0}}",
                d.clone()
            ),
            "1 3 v 104"
        );
        assert_eq!(ok("{{index .m \"zz\"}}", d.clone()), "<no value>");
        let e = exec_err("{{index .l 5}}", d.clone());
        assert!(
            e.to_string()
                .ends_with("error calling index: index out of range: 5"),
            "{e}"
        );
        let e = exec_err("{{len 3}}", d);
        assert!(
            e.to_string()
                .ends_with("error calling len: len of type int"),
            "{e}"
        );
    }

    #[test]
    fn print_funcs() {
        let d = json!({"l": [1, "a", null, 2.5], "m": {"b": 1, "a": [true]}});
        assert_eq!(ok("{{print 1 2 \"a\" \"b\" 3}}", d.clone()), "1 2ab3");
        assert_eq!(ok("{{println 1 \"a\"}}", d.clone()), "1 a\n");
        assert_eq!(
            ok("{{.l}} {{.m}}", d.clone()),
            "[1 a <nil> 2.5] map[a:[true] b:1]"
        );
        assert_eq!(
            ok("{{print 1e21 1e20 -0.5 100000.0}}", d),
            "1e+21 1e+20 -0.5 100000"
        );
    }

    #[test]
    fn printf_verbs() {
        let d = json!({"i": 42, "f": 1.23456, "s": "hi", "b": true});
        assert_eq!(
            ok(
                r#"{{printf "%d|%5d|%-5d|%05d|%+d|%x|%X|%o|%b|%c" .i .i .i .i .i .i .i .i .i .i}}"#,
                d.clone()
            ),
            "42|   42|42   |00042|+42|2a|2A|52|101010|*"
        );
        assert_eq!(
            ok(
                r#"{{printf "%s|%q|%v|%5s|%-4s|%.1s|%x" .s .s .s .s .s .s .s}}"#,
                d.clone()
            ),
            r#"hi|"hi"|hi|   hi|hi  |h|6869"#
        );
        assert_eq!(
            ok(
                r#"{{printf "%f|%.2f|%e|%g|%v|%8.3f" .f .f .f .f .f .f}}"#,
                d.clone()
            ),
            "1.234560|1.23|1.234560e+00|1.23456|1.23456|   1.235"
        );
        assert_eq!(
            ok(r#"{{printf "%t|%v|%%|%T|%T" .b .b .f .s}}"#, d.clone()),
            "true|true|%|float64|string"
        );
        assert_eq!(
            ok(r#"{{printf "%d %s" .s .i}}"#, d.clone()),
            "%!d(string=hi) %!s(int=42)"
        );
        assert_eq!(ok(r#"{{printf "%d %d" 1}}"#, d.clone()), "1 %!d(MISSING)");
        assert_eq!(
            ok(r#"{{printf "%d" 1 "x" 2}}"#, d.clone()),
            "1%!(EXTRA string=x, int=2)"
        );
        assert_eq!(
            ok(r#"{{printf "%v %d" .nope nil}}"#, d.clone()),
            "<nil> %!d(<nil>)"
        );
        assert_eq!(ok(r#"{{printf "%q" 'x'}}"#, d), "'x'");
    }

    #[test]
    fn parse_errors_with_positions() {
        let e = parse_err("a: 1\nb: 2\nc:   {{ .x | Foo }}");
        assert_eq!(
            e.to_string(),
            "template: 3:14: function \"Foo\" not defined"
        );
        assert_eq!((e.line(), e.column()), (Some(3), Some(14)));

        let e = parse_err("x\n  {{ .Index ");
        assert_eq!(e.to_string(), "template: 2:3: unclosed action");

        let e = parse_err("ok\n{{if .a}}x{{end}}\n  {{end}}");
        assert_eq!(e.to_string(), "template: 3:5: unexpected {{end}}");

        let e = parse_err("{{else}}");
        assert_eq!(e.to_string(), "template: 1:3: unexpected {{else}}");

        let e = parse_err("line\n {{if .a}}never closed");
        assert_eq!((e.line(), e.column()), (Some(2), Some(4)));
        assert!(e.message().starts_with("unexpected EOF"), "{e}");

        let e = parse_err("{{/* open");
        assert_eq!(e.to_string(), "template: 1:1: unclosed comment");
        let e = parse_err("{{/* c */ x}}");
        assert_eq!(e.message(), "comment ends before closing delimiter");
        let e = parse_err("{{(1}}");
        assert_eq!(e.to_string(), "template: 1:5: unclosed left paren");
        let e = parse_err("{{1)}}");
        assert_eq!(e.message(), "unexpected right paren");
        let e = parse_err("{{}}");
        assert_eq!(e.message(), "missing value for command");
        let e = parse_err("{{ \"abc }}");
        assert_eq!(e.to_string(), "template: 1:4: unterminated quoted string");
        let e = parse_err("{{break}}");
        assert_eq!(e.message(), "{{break}} outside {{range}}");
        let e = parse_err("{{.x | 3}}");
        assert_eq!(e.message(), "non executable command in pipeline stage 2");
        let e = parse_err("{{3x}}");
        assert_eq!(e.message(), "bad number syntax: \"3x\"");
        let e = parse_err("{{99999999999999999999}}");
        assert_eq!(e.message(), "99999999999999999999 overflows int");
        let e = parse_err("{{template \"x\"}}");
        assert_eq!(e.message(), "{{template}} is not supported");
        let e = parse_err("{{if .a}}{{else}}{{else}}{{end}}");
        assert_eq!(e.message(), "expected end; found {{else}}");
        let e = parse_err("{{range .a}}{{else if .b}}{{end}}");
        assert_eq!(e.message(), "unexpected <if> in input");
        let e = parse_err("{{\"a\".x}}");
        assert_eq!(e.message(), "unexpected . after term \"\\\"a\\\"\"");
        let e = parse_err("{{.x y}}");
        assert_eq!(e.message(), "function \"y\" not defined");
        let e = parse_err("{{ .x # }}");
        assert_eq!(e.message(), "unexpected \"#\" in operand");
        let e = parse_err("{{html .x}}");
        assert_eq!(e.message(), "function \"html\" is not supported");
    }

    #[test]
    fn exec_errors() {
        let d = json!({"i": 1, "m": {"a": 1}});
        let e = exec_err("{{.i.x}}", d.clone());
        assert!(
            e.to_string()
                .ends_with("can't evaluate field x in type int"),
            "{e}"
        );
        let e = exec_err("{{.m.a 1}}", d.clone());
        assert!(
            e.to_string()
                .ends_with("a is not a method but has arguments"),
            "{e}"
        );
        let e = exec_err("{{nil}}", d.clone());
        assert!(e.to_string().ends_with("nil is not a command"), "{e}");
        let e = exec_err("{{1 2}}", d.clone());
        assert!(
            e.to_string()
                .ends_with("can't give argument to non-function 1"),
            "{e}"
        );
        let e = exec_err("{{printf 3}}", d);
        assert!(
            e.to_string()
                .ends_with("wrong type for value; expected string; got int"),
            "{e}"
        );
    }

    #[test]
    fn limits() {
        let deep = "{{if 1}}".repeat(101) + &"{{end}}".repeat(101);
        let e = parse_err(&deep);
        assert!(e.message().contains("depth"), "{e}");
        let ok_depth = "{{if 1}}".repeat(100) + "x" + &"{{end}}".repeat(100);
        assert_eq!(ok(&ok_depth, json!({})), "x");
        let parens = "{{".to_string() + &"(".repeat(150) + "1" + &")".repeat(150) + "}}";
        assert!(parse_err(&parens).message().contains("depth"));
        let e = exec_err("{{range 2000000}}{{end}}", json!({}));
        assert!(
            e.to_string().contains("range exceeded 1000000 iterations"),
            "{e}"
        );
        let e = exec_err("{{range 1000}}{{range 1001}}{{end}}{{end}}", json!({}));
        assert!(e.to_string().contains("range exceeded"), "{e}");
        let big = "x".repeat(1 << 20);
        let e = exec_err("{{range 100}}{{$.big}}{{end}}", json!({"big": big}));
        assert!(e.to_string().contains("output exceeds"), "{e}");
        assert_eq!(
            ok("{{printf \"%1000001d\" 1}}", json!({})),
            "%!(BADWIDTH)%!(EXTRA int=1)"
        );
    }

    #[test]
    fn template_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Template>();
        assert_send_sync::<TemplateError>();
    }

    #[test]
    fn static_detection() {
        assert!(Template::parse("a: b\n").unwrap().is_static());
        assert!(!Template::parse("a: {{.x}}\n").unwrap().is_static());
        assert!(!Template::parse("a: {{/* c */}}\n").unwrap().is_static());
        let t = Template::parse("kind: Pod\n").unwrap();
        assert_eq!(t.render(&Map::new()).unwrap(), "kind: Pod\n");
    }

    #[test]
    fn renders_upstream_workloads() {
        let root = std::path::Path::new("/work/shared/upstream/scheduler_perf");
        if !root.is_dir() {
            eprintln!("skipping: {} not present", root.display());
            return;
        }
        let d = data(json!({
            "Index": 7, "Count": 100, "priority": 5, "disruptionMode": "single",
            "cpuRequest": "100m", "minCount": 3, "podsPerGroup": 2
        }));
        let mut stack = vec![root.to_path_buf()];
        let mut n = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let p = entry.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|e| e == "yaml") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    let t =
                        Template::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                    let out = t
                        .render(&d)
                        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                    assert!(!out.contains("{{"), "{}", p.display());
                    assert!(!out.contains("<no value>"), "{}", p.display());
                    n += 1;
                }
            }
        }
        assert!(n > 0);
    }

    /// Deterministic fuzzing (no extra dev-dependency): parse + render never panic.
    #[test]
    fn fuzz_never_panics() {
        const PIECES: &[&str] = &[
            "{{",
            "}}",
            "{{-",
            " -}}",
            ".",
            ".a",
            ".Index",
            "$",
            "$x",
            ":=",
            "=",
            "|",
            "(",
            ")",
            " ",
            "\n",
            "if",
            "else",
            "end",
            "range",
            "with",
            "break",
            "continue",
            "eq",
            "and",
            "print",
            "printf",
            "\"%d\"",
            "\"s\"",
            "`r`",
            "1",
            "-1",
            "1.5",
            "'c'",
            "nil",
            "true",
            "AddInt",
            "DivideInt",
            "Mod",
            "index",
            "len",
            "/*",
            "*/",
            ",",
            "0x",
            "é",
            "\"\\",
            "%v",
            "{{range $i, $v := .l}}",
            "{{end}}",
            "{{else}}",
            "{{if .a}}",
            "text",
        ];
        let d = data(json!({"a": 1, "l": [1, "x", null], "Index": 3, "m": {"k": [0]}}));
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let n = (next() % 12) as usize;
            let mut s = String::new();
            for _ in 0..n {
                s.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            if let Ok(t) = Template::parse(&s) {
                let _ = t.render(&d);
            }
        }
    }
}
