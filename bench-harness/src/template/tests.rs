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
fn scheduler_perf_int_and_json() {
    // provenance: test/integration/scheduler_perf/operations.go (getTemplateFuncs: toInt,
    // toJSON), kubernetes v1.37.2; expected text as Go's strconv and encoding/json give it.
    let d = json!({"f": 2.9, "n": -2.5, "s": "42", "bad": "4x", "m": {"b": [1, 2.5, "x<y>&"], "a": null},
        "big": 1e21, "tiny": 1e-7, "u": "a\u{2028}b"});
    assert_eq!(
        ok("{{Int .f}} {{Int .n}} {{Int .s}} {{Int 7}}", d.clone()),
        "2 -2 42 7"
    );
    assert_eq!(ok("{{Int \"-3\"}}", d.clone()), "-3");
    let e = exec_err("{{Int .bad}}", d.clone());
    assert!(
        e.to_string()
            .ends_with("error calling Int: cannot cast 4x to int"),
        "{e}"
    );
    assert_eq!(
        ok("{{JSON .m}}", d.clone()),
        r#"{"a":null,"b":[1,2.5,"x<y>&"]}"#
    );
    assert_eq!(
        ok("{{JSON .s}} {{JSON 3}} {{JSON .f}}", d.clone()),
        r#""42" 3 2.9"#
    );
    assert_eq!(ok("{{JSON .big}} {{JSON .tiny}}", d.clone()), "1e+21 1e-7");
    assert_eq!(ok("{{JSON .u}}", d.clone()), r#""a\u2028b""#);
    assert_eq!(ok("{{JSON .missing}}", d), "null");
}

#[test]
fn scheduler_perf_funcs() {
    let d =
        json!({"Index": 7, "Count": 100, "priority": 5, "podsPerGroup": 2, "f": 2.5, "s": "10"});
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

/// `%q` quotes as Go's strconv.Quote (the engine's `go_quote`): printable runes (Go's
/// unicode.IsPrint) stay, format and non-ASCII space characters are escaped.
#[test]
fn printf_q_quotes_as_go() {
    let d = json!({"s": "a\u{200b}\u{7f}\té😀\n"});
    assert_eq!(
        ok(r#"{{printf "%q" .s}}"#, d.clone()),
        r#""a\u200b\x7f\té😀\n""#
    );
    assert_eq!(
        ok(r#"{{printf "%q %q %q" '\u200b' '\u00a0' 'é'}}"#, d.clone()),
        r#"'\u200b' '\u00a0' 'é'"#
    );
    assert_eq!(
        ok(r#"{{printf "%q|%q" "\u00ad" "\u2028"}}"#, d),
        r#""\u00ad"|"\u2028""#
    );
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
                let t = Template::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
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
