//! The engine's dependencies point one way:
//!
//! ```text
//! clock, sync, features  →  api  →  framework  →  { cache, queue, plugins }  →  { config, scheduler }
//! ```
//!
//! (`framework` holds the extension points, `Status`, `CycleState`, `NodeInfo`, the snapshot,
//! `QueuedPodInfo`, the `PodNominator` trait, the plugin registry, the runtime and the
//! metrics; the queue, the cache and the plugins build on it and not on each other; the
//! configuration and the scheduler put everything together.)
//!
//! This test reads `engine/src`, takes every `crate::<module>` path of non-test code (comments,
//! doc comments and `#[cfg(test)]` modules and files left out), and fails on any path that
//! points to the same layer's other folder or to a higher layer. It prints the dependency
//! listing:
//!
//! ```sh
//! cargo test -p tidegate-engine --test layers -- --nocapture
//! ```
//!
//! The harness (`bench-harness/src`) is held to its own layers the same way:
//! `template` → `workload` → {`cluster`, `output`} → `run` (with the ops) → the CLI.
//! It also holds the house limits on size: no non-test function over 120 lines and no
//! non-test source file over 1,200 lines, in `engine/src` and `bench-harness/src`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layer of each top-level module of `engine/src`.
const LAYERS: &[(&str, u32)] = &[
    ("clock", 0),
    ("sync", 0),
    ("features", 0),
    ("api", 1),
    ("framework", 2),
    ("cache", 3),
    ("queue", 3),
    ("plugins", 3),
    ("config", 4),
    ("scheduler", 4),
];

/// The harness's layers (`bench-harness/src`; `main.rs` and `cli/` are the binary, above
/// them all).
const HARNESS_LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("interrupt", 0),
    ("template", 1),
    ("workload", 2),
    ("cluster", 3),
    ("output", 3),
    ("run", 4),
    ("oracle", 4),
    ("fuzzing", 5),
    ("main", 6),
    ("cli", 6),
];

fn layer_in(layers: &[(&str, u32)], module: &str) -> Option<u32> {
    layers.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn layer(module: &str) -> Option<u32> {
    layer_in(LAYERS, module)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read engine/src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src` without comments, string contents and `#[cfg(test)]` items (a test module or
/// function: from the attribute to the end of its braces).
fn code_only(src: &str) -> String {
    let stripped = strip_comments_and_strings(src);
    let mut out = String::with_capacity(stripped.len());
    let mut rest = stripped.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        // The item ends at the `;` of a `mod x;` or the brace closing its body.
        let open = after.find('{');
        let semi = after.find(';');
        match (open, semi) {
            (Some(o), Some(s)) if s < o => rest = &after[s + 1..],
            (Some(o), _) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (i, c) in after[o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = o + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &after[end..];
            }
            _ => rest = "",
        }
    }
    out.push_str(rest);
    out
}

fn strip_comments_and_strings(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(b, i) {
            i = end;
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if let Some(end) = char_literal_end(src, i) {
            i = end;
            out.push_str("' '");
        } else {
            let c = src[i..].chars().next().expect("char boundary");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The end of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`, if one does.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let mut j = i;
    if b[j] == b'b' {
        j += 1;
    }
    if ident_before || b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(b.len())
}

/// The end of a char literal (`'x'`, `'\n'`, `'\u{1F600}'`) starting at `i`; `None` for a
/// lifetime or label (`'a`).
fn char_literal_end(src: &str, i: usize) -> Option<usize> {
    let rest = &src[i..];
    let mut chars = rest.char_indices();
    if chars.next()?.1 != '\'' {
        return None;
    }
    let (_, c) = chars.next()?;
    if c == '\\' {
        // An escape: up to the closing quote.
        return rest[2..].find('\'').map(|k| i + 2 + k + 1);
    }
    match chars.next()? {
        (k, '\'') => Some(i + k + 1),
        _ => None,
    }
}

/// Top-level module → (module it uses → files that use it).
fn dependencies(
    src_dir: &Path,
    layers: &[(&str, u32)],
) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut files = Vec::new();
    rust_files(src_dir, &mut files);
    let mut deps: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(src_dir).expect("under src").to_path_buf();
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        let from = rel_s
            .split('/')
            .next()
            .expect("a component")
            .trim_end_matches(".rs")
            .to_string();
        if from == "lib" || is_test_file(&rel_s) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read source");
        let code = code_only(&text);
        for (at, _) in code.match_indices("crate::") {
            let name: String = code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name != from && layer_in(layers, &name).is_some() {
                deps.entry(from.clone())
                    .or_default()
                    .entry(name)
                    .or_default()
                    .insert(rel_s.clone());
            }
        }
    }
    deps
}

/// Checks `deps` against `layers`; prints the listing.
fn check_layers(
    what: &str,
    layers: &[(&str, u32)],
    deps: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
) {
    let mut wrong = Vec::new();
    println!("{what} dependencies (non-test code):");
    for (from, tos) in deps {
        let lf = layer_in(layers, from).unwrap_or_else(|| {
            panic!("{what}/{from}: a top-level module missing from the layers in tests/layers.rs")
        });
        let names: Vec<&str> = tos.keys().map(String::as_str).collect();
        println!("  {from} (layer {lf}) -> {}", names.join(", "));
        for (to, files) in tos {
            let lt = layer_in(layers, to).expect("filtered on known layers");
            if lt >= lf {
                wrong.push(format!(
                    "{from} (layer {lf}) uses {to} (layer {lt}) in {}",
                    files.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{what}: dependencies against the layering:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn engine_dependencies_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    check_layers("engine/src", LAYERS, &dependencies(&src, LAYERS));
}

/// The harness: `workload/` (with `template/`) → {`cluster/`, `output/`} → `run/` (with
/// `run/ops/`, one type per op) → the CLI.
#[test]
fn harness_dependencies_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench-harness/src");
    check_layers(
        "bench-harness/src",
        HARNESS_LAYERS,
        &dependencies(&src, HARNESS_LAYERS),
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).expect("read engine/src") {
        let path = entry.expect("dir entry").path();
        let name = path
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .to_string();
        if name == "lib" || (path.is_file() && path.extension().is_none_or(|e| e != "rs")) {
            continue;
        }
        assert!(
            layer(&name).is_some(),
            "engine/src/{name} has no layer in tests/layers.rs"
        );
    }
}

#[test]
fn the_checker_sees_code_and_skips_comments_and_tests() {
    let src = "use crate::a::X; // crate::b\n/// [`crate::c`]\n/* crate::d */ fn f() { \"crate::e\"; }\n#[cfg(test)]\nmod tests { use crate::f; }\nfn g() { crate::h::y(); }\n";
    let code = code_only(src);
    assert!(code.contains("crate::a") && code.contains("crate::h"));
    for hidden in ["crate::b", "crate::c", "crate::d", "crate::e", "crate::f"] {
        assert!(!code.contains(hidden), "{hidden} should be skipped: {code}");
    }
}

/// The longest a non-test function may be, and a source file outside tests.
const MAX_FN_LINES: usize = 120;
const MAX_FILE_LINES: usize = 1200;

fn is_test_file(rel: &str) -> bool {
    rel.ends_with("/tests.rs")
        || rel == "tests.rs"
        || rel.ends_with("_test.rs")
        || rel.contains("/tests/")
        || rel.ends_with("_prop.rs")
}

/// `(name, first line, lines)` of every function with a body in `code` (comments, strings
/// and test modules already stripped).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let mut l = line.trim_start();
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ] {
            l = l.strip_prefix(prefix).unwrap_or(l);
        }
        let Some(rest) = l.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let mut depth = 0usize;
        let mut opened = false;
        'scan: for (k, l) in lines[at..].iter().enumerate() {
            for c in l.chars() {
                match c {
                    ';' if !opened => break 'scan,
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            out.push((name.clone(), at + 1, k + 1));
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// No non-test function over MAX_FN_LINES lines and no non-test file over MAX_FILE_LINES
/// lines in `engine/src` and `bench-harness/src` (tables ported from kube live in test files).
#[test]
fn no_long_functions_or_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut wrong = Vec::new();
    for krate in ["engine/src", "bench-harness/src"] {
        let dir = root.join(krate);
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for path in files {
            let rel = path.strip_prefix(&dir).expect("under src");
            let rel = rel.to_string_lossy().replace('\\', "/");
            if is_test_file(&rel) {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read source");
            let non_test_lines = text
                .lines()
                .take_while(|l| !l.starts_with("#[cfg(test)]"))
                .count();
            if non_test_lines > MAX_FILE_LINES {
                wrong.push(format!("{krate}/{rel}: {non_test_lines} lines"));
            }
            for (name, _, len) in functions(&code_only(&text)) {
                if len > MAX_FN_LINES {
                    wrong.push(format!("{krate}/{rel}: fn {name} is {len} lines"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "over the house limits ({MAX_FN_LINES} lines a function, {MAX_FILE_LINES} a file):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_function_finder_measures_bodies() {
    let code = "fn a() {\n    if x {\n    }\n}\ntrait T {\n    fn b(&self);\n}\npub(crate) fn c() -> u8 { 1 }\n";
    let got = functions(code);
    assert_eq!(
        got,
        vec![("a".to_string(), 1, 4), ("c".to_string(), 8, 1)],
        "{got:?}"
    );
    let stripped =
        strip_comments_and_strings("let a = '{'; let b = r#\"}\"#; let c: &'static str = \"{\";");
    assert!(
        !stripped.contains('{') && !stripped.contains('}'),
        "{stripped}"
    );
    assert!(stripped.contains("'static"), "{stripped}");
}
