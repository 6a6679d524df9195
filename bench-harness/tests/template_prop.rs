//! Property tests of the Go-template renderer: parse + render never panic.

use proptest::prelude::*;
use serde_json::json;
use tidegate_bench::template::Template;

const PIECES: &[&str] = &[
    "{{",
    "}}",
    "{{- ",
    " -}}",
    ".",
    ".a",
    ".l",
    ".Index",
    "$",
    "$x",
    "$i",
    ":=",
    "=",
    "|",
    "(",
    ")",
    " ",
    "\n",
    "if ",
    "else ",
    "end",
    "range ",
    "with ",
    "break",
    "continue",
    "eq ",
    "and ",
    "or ",
    "not ",
    "lt ",
    "print ",
    "printf ",
    "\"%d %s %v %q %x %5.2f %\"",
    "\"s\"",
    "`r`",
    "1",
    "-1",
    "1.5",
    "1e400",
    "'c'",
    "nil",
    "true",
    "AddInt ",
    "DivideInt ",
    "Mod ",
    "MultiplyInt ",
    "DivideFloat ",
    "index ",
    "len ",
    "/*",
    "*/",
    ",",
    "0x",
    "é",
    "\"\\",
    "{{range $i, $v := .l}}",
    "{{end}}",
    "{{else}}",
    "{{if .a}}",
    "{{with .m}}",
    "text",
    "{{$x := 1}}",
    "{{$x = .l}}",
];

fn data() -> serde_json::Map<String, serde_json::Value> {
    match json!({"a": 1, "l": [1, "x", null, 2.5, [3]], "Index": 3, "m": {"k": [0], "z": null}, "s": "100m"})
    {
        serde_json::Value::Object(m) => m,
        _ => unreachable!(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,80}") {
        if let Ok(t) = Template::parse(&s) {
            let _ = t.render(&data());
        }
    }

    #[test]
    fn token_soup_never_panics(idx in proptest::collection::vec(0..PIECES.len(), 0..24)) {
        let s: String = idx.iter().map(|&i| PIECES[i]).collect();
        match Template::parse(&s) {
            Ok(t) => {
                let r = t.render(&data());
                if let Err(e) = r {
                    prop_assert!(e.line().is_some() && e.column().is_some());
                }
            }
            Err(e) => {
                prop_assert!(e.line().unwrap_or(0) >= 1);
                prop_assert!(e.to_string().starts_with("template: "));
            }
        }
    }

    #[test]
    fn static_text_renders_verbatim(s in "[^{]{0,60}") {
        let t = Template::parse(&s).unwrap();
        prop_assert!(t.is_static());
        prop_assert_eq!(t.render(&data()).unwrap(), s);
    }
}
