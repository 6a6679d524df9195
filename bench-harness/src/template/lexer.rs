//! The lexer: template text to items (Go's text/template/parse lex.go), with the literal decoders
//! (`unquote`, `unquote_char`) the string and character tokens use.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kw {
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
    pub(super) fn name(self) -> &'static str {
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
pub(super) enum Tok {
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
pub(super) struct Item {
    pub(super) tok: Tok,
    pub(super) pos: usize,
    pub(super) end: usize,
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
pub(super) fn lex(src: &str) -> Vec<Item> {
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
        if is_space(c) {
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
            continue;
        }
        match lex_token(rest, start, c) {
            Ok((tok, len)) => {
                items.push(Item {
                    tok,
                    pos: start,
                    end: start + len,
                });
                *pos += len;
            }
            Err(e) => {
                items.push(e);
                return None;
            }
        }
    }
}

/// One token inside an action: the token and its length in bytes, or the error item to end with.
type Lexed = Result<(Tok, usize), Item>;

/// Lexes the (non-space) token at the start of `rest`, whose first character is `c` and which
/// starts at byte `start` of the template.
fn lex_token(rest: &str, start: usize, c: char) -> Lexed {
    match c {
        '=' => Ok((Tok::Assign, 1)),
        ':' => {
            if rest[1..].starts_with('=') {
                Ok((Tok::Declare, 2))
            } else {
                Err(err_item(start, "expected :="))
            }
        }
        '|' => Ok((Tok::Pipe, 1)),
        '(' => Ok((Tok::LParen, 1)),
        ')' => Ok((Tok::RParen, 1)),
        ',' => Ok((Tok::Comma, 1)),
        '"' => lex_quoted(rest, start),
        '`' => {
            let Some(x) = rest[1..].find('`') else {
                return Err(err_item(start, "unterminated raw quoted string"));
            };
            let s = rest[1..1 + x].replace('\r', "");
            Ok((Tok::Str(s), x + 2))
        }
        '\'' => lex_char(rest, start),
        '$' => {
            let n = 1 + rest[1..].len() - rest[1..].trim_start_matches(is_alnum).len();
            if !at_terminator(&rest[n..]) {
                return Err(bad_char(start + n, &rest[n..]));
            }
            Ok((Tok::Var, n))
        }
        '.' if !rest[1..].starts_with(|c: char| c.is_ascii_digit()) => {
            let n = 1 + rest[1..].len() - rest[1..].trim_start_matches(is_alnum).len();
            if !at_terminator(&rest[n..]) {
                return Err(bad_char(start + n, &rest[n..]));
            }
            let tok = if n == 1 { Tok::Dot } else { Tok::Field };
            Ok((tok, n))
        }
        '.' | '+' | '-' | '0'..='9' => {
            let n = scan_number(rest);
            if let Some(c) = rest[n..].chars().next().filter(|&c| is_alnum(c)) {
                let end = n + c.len_utf8();
                return Err(err_item(
                    start,
                    format!("bad number syntax: {:?}", &rest[..end]),
                ));
            }
            Ok((Tok::Number, n))
        }
        c if c == '_' || c.is_alphabetic() => lex_word(rest, start),
        c if c.is_ascii() && !c.is_ascii_control() => Ok((Tok::OtherChar, 1)),
        c => Err(err_item(
            start,
            format!("unrecognized character in action: {}", char_desc(c)),
        )),
    }
}

/// The length of the quoted literal at the start of `rest` (opening `quote` included), or None
/// when it is not closed on its line.
fn quoted_len(rest: &str, quote: char) -> Option<usize> {
    let mut it = rest.char_indices().skip(1);
    while let Some((i, ch)) = it.next() {
        match ch {
            '\\' => match it.next() {
                Some((_, '\n')) | None => break,
                Some(_) => {}
            },
            '\n' => break,
            ch if ch == quote => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// A `"..."` string literal.
fn lex_quoted(rest: &str, start: usize) -> Lexed {
    let Some(len) = quoted_len(rest, '"') else {
        return Err(err_item(start, "unterminated quoted string"));
    };
    match unquote(&rest[1..len - 1], '"') {
        Ok(s) => Ok((Tok::Str(s), len)),
        Err(e) => Err(err_item(start, e)),
    }
}

/// A `'c'` character constant.
fn lex_char(rest: &str, start: usize) -> Lexed {
    let Some(len) = quoted_len(rest, '\'') else {
        return Err(err_item(start, "unterminated character constant"));
    };
    match unquote_char(&rest[1..len - 1]) {
        Some(v) => Ok((Tok::Char(v), len)),
        None => Err(err_item(
            start,
            format!("malformed character constant: {}", &rest[..len]),
        )),
    }
}

/// An identifier: a keyword, `true`/`false`/`nil`, or a function name.
fn lex_word(rest: &str, start: usize) -> Lexed {
    let n = rest.len() - rest.trim_start_matches(is_alnum).len();
    if !at_terminator(&rest[n..]) {
        return Err(bad_char(start + n, &rest[n..]));
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
    Ok((tok, n))
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
