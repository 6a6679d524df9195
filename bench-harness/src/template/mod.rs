//! A subset of Go's `text/template`, enough to render scheduler_perf object templates unchanged.
//!
//! scheduler_perf renders every object template with `text/template` (funcs from
//! `getTemplateFuncs()` in `test/integration/scheduler_perf/scheduler_perf.go`, default options)
//! before parsing the result as YAML. The data is a map holding `Index`, `Count` and the
//! operation's `templateParams`.
//!
//! # Protocol
//! [`Template::parse`] once per template file (a syntax error is a [`TemplateError::Parse`] with
//! its line and column), then [`Template::render`] once per object with that map as dot and `$`
//! (`manifest::ObjectTemplate` adds `Index` and `Count` to the op's params). A template without
//! `{{` is [`Template::is_static`]: the harness parses its YAML once and skips rendering.
//!
//! # Layout
//! `lexer` (text to items, literal decoding), `parser` (items to the tree), `values` (the
//! template's literals and the runtime values borrowed from the JSON data, Go `%v` printing),
//! `funcs` (the builtins and scheduler_perf's functions), `printf` (Go's fmt for
//! `print`/`printf`/`println`), `exec` (walks the tree), `error` (the error type and positions)
//! and `limits`. `%q` quotes with the engine's `api::go_quote`. Imports point one way, no
//! circle: `error`, `limits`, `lexer` → `values` → `printf` → `funcs` → `parser` → `exec` →
//! this file.
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
//!   iterations per render, 64 MiB of output, printf width/precision up to 1e6 (larger ones print
//!   `%!(BADWIDTH)`/`%!(BADPREC)`; Go pads literal widths of up to 8 digits).
//! - `is_static` is true when the text contains no `{{` at all (comments count as actions).
//!
//! # Why not the `gotmpl` crate
//! `gotmpl` 0.6.1 (a Rust port of text/template) was compared with this engine on the same data
//! (every template of `tests.rs` with every test data map, every workload YAML upstream and in
//! `perf-data/`, 200,000 random templates). The 128 workload files render byte for byte the same,
//! but gotmpl differs from this engine, and from Go, elsewhere:
//! - Floats print without Go's exponent form: `{{1e6}}` `{{0.00001}}` `{{print 1e21}}` give
//!   `1000000` `0.00001` `1000000000000000000000` (Go and here: `1e+06` `1e-05` `1e+21`).
//! - `printf "%T"` is not a verb there: `{{printf "%T" 2.5}}` gives `%!T(float64=2.5)` (here and
//!   Go: `float64`).
//! - It renders what Go rejects: `line\n {{if .a}}never closed` (Go and here: `2:4: unexpected
//!   EOF: {{if}} has no {{end}}`), a stray `{{end}}` or `{{else}}`, `{{range .a}}{{else if .b}}`,
//!   `{{$x = 1}}` without `$x` declared.
//! - Nil and missing values: with `n: null`, `{{.n.x}}` gives `<no value>` (Go: "nil pointer
//!   evaluating interface {}.x"); with `.m` missing, `{{.m.a 1}}` is an error (Go: `<no value>`).
//! - Execution errors carry no position or command: `{{DivideInt .Index 0}}` fails with
//!   `execution error: division by zero` where this engine says `template: 1:3: executing at
//!   <DivideInt .Index 0>: error calling DivideInt: division by zero`.
//! - Speed: a 491-byte pod template renders in about 0.5 µs here, 1.0 µs with gotmpl (params
//!   converted to its `Value` once, `Index`/`Count` added per pod) or 1.5 µs (whole data converted
//!   per pod), release build.
//!
//! gotmpl does more than this engine (`define`/`template`/`block`, `html`, `js`, `urlquery`,
//! `slice`, `call`, Go's printf widths), none of which a workload uses.

mod error;
mod exec;
mod funcs;
mod lexer;
mod limits;
mod parser;
mod printf;
#[cfg(test)]
mod tests;
mod values;

/// A float as Go's `strconv.FormatFloat(f, 'g', -1, 64)` writes it (`1.5e-05`, `0.001`,
/// `+Inf`): how Prometheus' Go client prints sample values and bucket bounds.
pub fn go_format_float(f: f64) -> String {
    values::fmt_float_g(f, None, false)
}

use serde_json::{Map, Value};

pub use error::TemplateError;
use parser::Node;

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
        let nodes = parser::parse(text)?;
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
        exec::render(&self.src, &self.nodes, data)
    }
}
