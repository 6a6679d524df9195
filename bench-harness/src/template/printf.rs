//! `print`, `println` and `printf`: Go's fmt for the values templates handle.

use std::borrow::Cow;
use std::fmt::Write as _;

use tidegate_engine::api::{go_quote, go_quote_with};

use super::limits::{MAX_DEPTH, MAX_FMT_WIDTH};
use super::values::{V, fmt_float_e, fmt_float_g, non_finite, sorted, write_v};

/// fmt.Sprint / fmt.Sprintln.
pub(super) fn sprint(args: &[V<'_>], ln: bool) -> String {
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
pub(super) fn sprintf(format: &str, args: &[V<'_>]) -> String {
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
            'q' => spec.pad(out, &go_quote(s), false),
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
            spec.pad(
                out,
                &go_quote_with(c.encode_utf8(&mut [0u8; 4]), '\''),
                false,
            );
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
