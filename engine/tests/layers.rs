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
//!
//! Inside each folder of both crates, the files' imports form no circle
//! (`no_import_circle_inside_a_folder`): every `crate::`/`super::`/`self::` path of non-test
//! code, and every name a glob import (`use super::*`) brings in, is resolved to the file that
//! defines it (through `mod.rs` re-exports); a subfolder counts as one node and a folder's
//! `mod.rs`, the parent, as none.

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
    ("oracle", 5),
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

// ---------------------------------------------------------------------------------------------
// Import circles between the files of one folder.
// ---------------------------------------------------------------------------------------------

/// One `use` tree or path, flattened: `crate::a::{b, c::D as E}` gives `(["crate","a","b"],
/// "b")` and `(["crate","a","c","D"], "E")`; a glob ends in `"*"`.
fn parse_tree(s: &[u8], i: &mut usize, prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    fn skip_ws(s: &[u8], i: &mut usize) {
        while *i < s.len() && s[*i].is_ascii_whitespace() {
            *i += 1;
        }
    }
    fn ident(s: &[u8], i: &mut usize) -> String {
        let start = *i;
        while *i < s.len() && (s[*i].is_ascii_alphanumeric() || s[*i] == b'_') {
            *i += 1;
        }
        String::from_utf8_lossy(&s[start..*i]).into_owned()
    }
    let mut prefix = prefix;
    loop {
        skip_ws(s, i);
        match s.get(*i) {
            Some(b'{') => {
                *i += 1;
                loop {
                    skip_ws(s, i);
                    match s.get(*i) {
                        Some(b'}') => {
                            *i += 1;
                            return;
                        }
                        Some(b',') => *i += 1,
                        None => return,
                        _ => {
                            let before = *i;
                            parse_tree(s, i, prefix.clone(), out);
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
            }
            Some(b'*') => {
                *i += 1;
                prefix.push("*".into());
                out.push((prefix, "*".into()));
                return;
            }
            _ => {}
        }
        let id = ident(s, i);
        if id.is_empty() {
            if let Some(last) = prefix.last().cloned() {
                out.push((prefix, last));
            }
            return;
        }
        let save = *i;
        skip_ws(s, i);
        if s[*i..].starts_with(b"::") {
            *i += 2;
            prefix.push(id);
            continue;
        }
        *i = save;
        let (path, mut name) = if id == "self" {
            let name = prefix.last().cloned().unwrap_or_default();
            (prefix, name)
        } else {
            prefix.push(id.clone());
            (prefix, id)
        };
        skip_ws(s, i);
        if s[*i..].starts_with(b"as") && s.get(*i + 2).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 2;
            skip_ws(s, i);
            name = ident(s, i);
        }
        out.push((path, name));
        return;
    }
}

/// Every path of `code` that starts with `crate::`, `super::` or `self::` (the `use`
/// statements and the paths written inline), flattened.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let s = code.as_bytes();
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            let before = at.checked_sub(1).map(|k| s[k]);
            if before
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':' || c == b'$')
            {
                continue;
            }
            let mut i = at;
            let mut paths = Vec::new();
            parse_tree(s, &mut i, Vec::new(), &mut paths);
            out.extend(paths.into_iter().map(|(p, _)| p));
        }
    }
    out
}

/// The `use` statements of `code` (private and public), each leaf with the name it binds.
fn use_statements(code: &str) -> Vec<(Vec<String>, String)> {
    let s = code.as_bytes();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("use ") {
        let before = at.checked_sub(1).map(|k| s[k]);
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            continue;
        }
        let mut i = at + "use ".len();
        parse_tree(s, &mut i, Vec::new(), &mut out);
    }
    out
}

/// A crate's modules (file modules only) and what each file's code uses.
struct ModuleTree {
    /// Module path → file (relative to the source folder).
    files: BTreeMap<Vec<String>, String>,
    /// Module path → its file's code (comments, strings and tests left out).
    code: BTreeMap<Vec<String>, String>,
}

fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    let last = parts.pop().expect("a file name");
    if last != "mod.rs" && last != "lib.rs" && last != "main.rs" {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

impl ModuleTree {
    fn read(src_dir: &Path) -> ModuleTree {
        let mut paths = Vec::new();
        rust_files(src_dir, &mut paths);
        let mut tree = ModuleTree {
            files: BTreeMap::new(),
            code: BTreeMap::new(),
        };
        for path in paths {
            let rel = path.strip_prefix(src_dir).expect("under src");
            let rel = rel.to_string_lossy().replace('\\', "/");
            if is_test_file(&rel) || rel == "main.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read source");
            let m = module_path(&rel);
            tree.code.insert(m.clone(), code_only(&text));
            tree.files.insert(m, rel);
        }
        tree
    }

    /// The module `path` (written in module `m`) points into: the deepest file module it
    /// names, or, for an item a module imports or re-exports (`pub use interface::*`,
    /// `use crate::framework::QueuedPodInfo`), the module that defines the item.
    fn resolve(&self, m: &[String], path: &[String], depth: u32) -> Option<Vec<String>> {
        let mut i = 0;
        let mut cur: Vec<String> = match path.first().map(String::as_str) {
            Some("crate") => {
                i = 1;
                Vec::new()
            }
            Some("super") => {
                let mut cur = m.to_vec();
                while path.get(i).map(String::as_str) == Some("super") {
                    cur.pop();
                    i += 1;
                }
                cur
            }
            Some("self") => {
                i = 1;
                m.to_vec()
            }
            Some(first) => {
                // A child module (`use interface::*` in a `mod.rs`); anything else is another
                // crate.
                let mut child = m.to_vec();
                child.push(first.to_string());
                if !self.files.contains_key(&child) {
                    return None;
                }
                m.to_vec()
            }
            None => return None,
        };
        while let Some(seg) = path.get(i) {
            let mut next = cur.clone();
            next.push(seg.clone());
            if !self.files.contains_key(&next) {
                break;
            }
            cur = next;
            i += 1;
        }
        match path.get(i) {
            Some(item) if depth < 8 => Some(self.defined_in(&cur, item, depth).unwrap_or(cur)),
            _ => Some(cur),
        }
    }

    /// Where `item`, imported or re-exported by module `m`, is defined.
    fn defined_in(&self, m: &[String], item: &str, depth: u32) -> Option<Vec<String>> {
        let code = self.code.get(m)?;
        let uses = use_statements(code);
        if let Some((p, _)) = uses.iter().find(|(_, name)| name == item) {
            return self.resolve(m, p, depth + 1);
        }
        for (p, name) in &uses {
            if name != "*" {
                continue;
            }
            let target = self.resolve(m, &p[..p.len() - 1], depth + 1)?;
            let defines = self.code.get(&target).is_some_and(|c| {
                [
                    "struct", "enum", "trait", "fn", "type", "const", "static", "mod",
                ]
                .iter()
                .any(|kw| c.contains(&format!("{kw} {item}")))
            });
            if defines && target != m {
                return Some(target);
            }
        }
        None
    }
}

impl ModuleTree {
    /// What module `m` takes through its glob imports (`use super::*`): a path to each name
    /// the globbed module binds (its imports and re-exports, its own items) that `m`'s code
    /// mentions.
    fn glob_uses(&self, m: &[String]) -> Vec<Vec<String>> {
        let code = &self.code[m];
        let mut out = Vec::new();
        for (p, name) in use_statements(code) {
            if name != "*" {
                continue;
            }
            let prefix = &p[..p.len() - 1];
            let Some(target) = self.resolve(m, prefix, 0) else {
                continue;
            };
            let target_code = &self.code[&target];
            let mut names: BTreeSet<String> = use_statements(target_code)
                .into_iter()
                .map(|(_, n)| n)
                .filter(|n| n != "*")
                .collect();
            for kw in [
                "struct", "enum", "trait", "fn", "type", "const", "static", "mod",
            ] {
                for (at, _) in target_code.match_indices(&format!("{kw} ")) {
                    let name: String = target_code[at + kw.len() + 1..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    names.insert(name);
                }
            }
            for name in names {
                if !name.is_empty() && mentions(code, &name) {
                    let mut path = prefix.to_vec();
                    path.push(name);
                    out.push(path);
                }
            }
        }
        out
    }
}

/// Whether `code` has `word` as a whole identifier.
fn mentions(code: &str, word: &str) -> bool {
    let b = code.as_bytes();
    code.match_indices(word).any(|(at, _)| {
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        (at == 0 || !ident(b[at - 1])) && !b.get(at + word.len()).is_some_and(|&c| ident(c))
    })
}

/// The node standing for file `rel` in `folder` (`""` or `"a/b/"`): the file's name, or
/// `"sub/"` for a file under a subfolder; `None` for the folder's own `mod.rs` (its parent)
/// and files outside it.
fn node_in(folder: &str, rel: &str) -> Option<String> {
    let rest = rel.strip_prefix(folder)?;
    match rest.split_once('/') {
        Some((sub, _)) => Some(format!("{sub}/")),
        None if ["mod.rs", "lib.rs", "main.rs"].contains(&rest) => None,
        None => Some(rest.to_string()),
    }
}

/// One folder's graph: node → (node it uses → the `(file, file)` pairs that make the edge).
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<(String, String)>>>;

/// Folder → its graph.
type FolderGraphs = BTreeMap<String, Graph>;

fn folder_graphs(src_dir: &Path) -> FolderGraphs {
    let tree = ModuleTree::read(src_dir);
    let mut graphs = FolderGraphs::new();
    for (m, from) in &tree.files {
        let mut targets = BTreeSet::new();
        for p in crate_paths(&tree.code[m])
            .into_iter()
            .chain(tree.glob_uses(m))
        {
            if let Some(t) = tree.resolve(m, &p, 0) {
                targets.insert(tree.files[&t].clone());
            }
        }
        let mut folder = String::new();
        for part in from.split('/') {
            for to in &targets {
                if let (Some(a), Some(b)) = (node_in(&folder, from), node_in(&folder, to))
                    && a != b
                {
                    graphs
                        .entry(folder.clone())
                        .or_default()
                        .entry(a)
                        .or_default()
                        .entry(b)
                        .or_default()
                        .insert((from.clone(), to.clone()));
                }
            }
            folder.push_str(part);
            folder.push('/');
        }
    }
    graphs
}

/// The strongly connected components with more than one node (Tarjan), each sorted.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Tarjan<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, (usize, usize)>,
        stack: Vec<&'g str>,
        out: Vec<Vec<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flat_map(|e| e.keys()) {
                match self.index.get(w.as_str()) {
                    None => {
                        self.visit(w);
                        let low = self.index[w.as_str()].1.min(self.index[v].1);
                        self.index.get_mut(v).expect("visited").1 = low;
                    }
                    Some(&(wi, _)) if self.stack.contains(&w.as_str()) => {
                        let low = wi.min(self.index[v].1);
                        self.index.get_mut(v).expect("visited").1 = low;
                    }
                    Some(_) => {}
                }
            }
            let (vi, vl) = self.index[v];
            if vi == vl {
                let at = self
                    .stack
                    .iter()
                    .rposition(|&x| x == v)
                    .expect("on the stack");
                let mut scc: Vec<String> = self.stack.drain(at..).map(str::to_string).collect();
                if scc.len() > 1 {
                    scc.sort();
                    self.out.push(scc);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

/// The circles of one crate, each written with the files that close it.
fn folder_circles(krate: &str, src_dir: &Path) -> Vec<(String, Vec<String>, String)> {
    let graphs = folder_graphs(src_dir);
    let mut out = Vec::new();
    for (folder, graph) in &graphs {
        for scc in circles(graph) {
            let mut how = Vec::new();
            for a in &scc {
                for (b, files) in &graph[a] {
                    if scc.contains(b) {
                        let (f, t) = files.iter().next().expect("a witness");
                        how.push(format!("{krate}/{f} uses {krate}/{t}"));
                    }
                }
            }
            out.push((folder.clone(), scc, how.join("; ")));
        }
    }
    out
}

/// No file of a folder takes part in an import circle with its siblings (a subfolder counts
/// as one node, a folder's `mod.rs` is their parent and takes part in none), in `engine/src`
/// and `bench-harness/src`.
#[test]
fn no_import_circle_inside_a_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut wrong = Vec::new();
    for krate in ["engine/src", "bench-harness/src"] {
        for (folder, scc, how) in folder_circles(krate, &root.join(krate)) {
            wrong.push(format!("{krate}/{folder}: {} ({how})", scc.join(" <-> ")));
        }
    }
    assert!(
        wrong.is_empty(),
        "import circles inside folders:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_circle_finder_resolves_paths_and_finds_circles() {
    let mut out = Vec::new();
    parse_tree(
        b"crate::a::{b, c::{self, D as E}, f::*};",
        &mut 0,
        Vec::new(),
        &mut out,
    );
    let got: Vec<(String, String)> = out.into_iter().map(|(p, n)| (p.join("::"), n)).collect();
    let want = [
        ("crate::a::b", "b"),
        ("crate::a::c", "c"),
        ("crate::a::c::D", "E"),
        ("crate::a::f::*", "*"),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(p, n)| (p.to_string(), n.to_string()))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        crate_paths("use super::super::x::Y; fn f() { $crate::no; crate::z::w() }"),
        vec![
            vec!["crate".to_string(), "z".into(), "w".into()],
            vec!["super".into(), "super".into(), "x".into(), "Y".into()]
        ]
    );
    // A ring of three and a file outside it.
    let dir = std::env::temp_dir().join(format!("tidegate-circles-{}", std::process::id()));
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("lib.rs", "pub mod f;\n");
    write("f/mod.rs", "mod a; mod b; mod c; mod d; pub use a::*;\n");
    write("f/a.rs", "use super::b::X; pub struct A;\n");
    write("f/b.rs", "pub struct X; fn g() { crate::f::c::h() }\n");
    write("f/c.rs", "use crate::f::A;\npub fn h() {}\n");
    write("f/d.rs", "use super::a::A;\n");
    // A circle seen only through a glob import of the parent's re-exports.
    write(
        "g/mod.rs",
        "mod p; mod q; mod r; pub use q::Q; use std::sync::Arc;\n",
    );
    write(
        "g/p.rs",
        "use super::*;\npub struct P;\nfn f(_: Q, _: Arc<u8>) {}\n",
    );
    write("g/q.rs", "use super::p::P;\npub struct Q;\n");
    write("g/r.rs", "use super::*;\nfn f(_: Arc<u8>) {}\n");
    let found = folder_circles("x", &dir);
    std::fs::remove_dir_all(&dir).expect("clean up");
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(
        (found[1].0.as_str(), &found[1].1[..]),
        ("g/", &["p.rs".to_string(), "q.rs".into()][..])
    );
    assert_eq!(found[0].0, "f/");
    assert_eq!(found[0].1, ["a.rs", "b.rs", "c.rs"]);
    assert!(
        found[0].2.contains("x/f/c.rs uses x/f/a.rs"),
        "{}",
        found[0].2
    );
}
