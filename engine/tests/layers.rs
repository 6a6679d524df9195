//! The engine's dependencies point one way:
//!
//! ```text
//! clock, sync  →  api  →  framework  →  { cache, queue, plugins }  →  { config, scheduler }
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

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layer of each top-level module of `engine/src`.
const LAYERS: &[(&str, u32)] = &[
    ("clock", 0),
    ("sync", 0),
    ("api", 1),
    ("framework", 2),
    ("cache", 3),
    ("queue", 3),
    ("plugins", 3),
    ("config", 4),
    ("scheduler", 4),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
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
        } else if b[i] == b'"' {
            // A string literal (raw strings of this code base hold no `crate::` either way).
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let c = src[i..].chars().next().expect("char boundary");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Top-level module → (module it uses → files that use it).
fn dependencies(src_dir: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
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
        if from == "lib" || rel.file_name().is_some_and(|f| f == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read source");
        let code = code_only(&text);
        for (at, _) in code.match_indices("crate::") {
            let name: String = code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name != from && layer(&name).is_some() {
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

#[test]
fn engine_dependencies_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let deps = dependencies(&src);
    let mut wrong = Vec::new();
    println!("engine/src dependencies (non-test code):");
    for (from, tos) in &deps {
        let lf = layer(from).unwrap_or_else(|| {
            panic!("engine/src/{from}: a top-level module missing from LAYERS in tests/layers.rs")
        });
        let names: Vec<&str> = tos.keys().map(String::as_str).collect();
        println!("  {from} (layer {lf}) -> {}", names.join(", "));
        for (to, files) in tos {
            let lt = layer(to).expect("filtered on known layers");
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
        "dependencies against the layering:\n{}",
        wrong.join("\n")
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
