//! Go's string quoting (`strconv.Quote`, `%q`), the one helper for every message that quotes
//! a value as kube or Go's text/template prints it.

use std::fmt::Write as _;

/// Go's `strconv.Quote` (`%q` of a string): `"` delimiters.
pub fn go_quote(s: &str) -> String {
    go_quote_with(s, '"')
}

/// Go's `strconv.Quote` with delimiter `q` (`"`, or `'` for a rune as `%q` prints one):
/// printable runes (Go's `unicode.IsPrint`, approximated below) are kept, `\a \b \f \n \r
/// \t \v` as such, other runes below 0x20 and 0x7f as `\xNN`, the rest as `\uNNNN` or
/// `\UNNNNNNNN`.
pub fn go_quote_with(s: &str, q: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if is_go_printable(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if u32::from(c) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
        }
    }
    out.push(q);
    out
}

/// An approximation of Go's `unicode.IsPrint` (unassigned code points are not
/// detected and count as printable).
fn is_go_printable(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    let format_or_private = matches!(
        u32::from(c),
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
            | 0xE000..=0xF8FF | 0xFEFF | 0xFFF9..=0xFFFB | 0xFFFE..=0xFFFF | 0x110BD | 0x110CD
            | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001
            | 0xE0020..=0xE007F | 0xF0000..
    );
    !c.is_control() && !c.is_whitespace() && !format_or_private
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_escapes_like_strconv_quote() {
        assert_eq!(go_quote("bad name"), "\"bad name\"");
        assert_eq!(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(go_quote("\n\t\u{7}\u{1}\u{7f}"), "\"\\n\\t\\a\\x01\\x7f\"");
        assert_eq!(
            go_quote("é日本\u{a0}\u{200b}😀\u{e000}"),
            "\"é日本\\u00a0\\u200b😀\\ue000\""
        );
    }

    #[test]
    fn other_delimiters_are_escaped_and_double_quotes_kept() {
        assert_eq!(go_quote_with("it's \"x\"", '\''), "'it\\'s \"x\"'");
    }
}
