//! The analyzer's top-level modules import each other without a cycle (docs/read-path.md).
//!
//! Why a test: a cycle between two modules (`load ⇄ store`, `query ⇄ cli`, …) crept in several
//! times and was only found by reading `grep -rn "use crate::"`. This test reads every module's
//! source under `analyze/src`, collects its `crate::<module>` references (comments left out: an
//! intra-doc link is not a dependency) and fails with the cycle, and a line that makes each of
//! its arrows, when the module graph has one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One reference of a module to another: where it is.
type Site = String;

/// `module -> (module it references -> first place it does)`.
type Graph = BTreeMap<String, BTreeMap<String, Site>>;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file below `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules (`src/x.rs` and/or `src/x/`) and the files each one holds.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src_dir()).expect("analyze/src") {
        let path = entry.expect("dir entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if stem == "lib" || stem == "main" {
            continue;
        }
        let files = out.entry(stem.to_string()).or_default();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|x| x == "rs") {
            files.push(path);
        }
    }
    out.retain(|_, files| !files.is_empty());
    out
}

/// The code of a line: without a `//` comment (line, doc or trailing; `//` inside a string
/// literal is kept, as far as a line can tell).
fn code_of(line: &str) -> &str {
    let mut in_str = false;
    let mut prev = '\0';
    for (i, ch) in line.char_indices() {
        match ch {
            '"' if prev != '\\' => in_str = !in_str,
            '/' if !in_str && prev == '/' => return &line[..i - 1],
            _ => {}
        }
        prev = if prev == '\\' && ch == '\\' { '\0' } else { ch };
    }
    line
}

/// The top-level modules a piece of code names after `crate::`: `crate::load::X` and the
/// groups of `use crate::{load::X, store}` alike (`$crate::` of macros is not this crate's path
/// syntax here and is skipped).
fn crate_refs(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = &rest[..at];
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if before.ends_with('$') || before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            // Top-level names of the group: the first identifier after `{` and after each `,`
            // at depth 0 (nested groups belong to the name before them).
            let mut depth = 0;
            let mut expect_name = true;
            let mut name = String::new();
            for ch in group.chars() {
                if expect_name && (ch.is_alphanumeric() || ch == '_') {
                    name.push(ch);
                    continue;
                }
                if !name.is_empty() {
                    out.push(std::mem::take(&mut name));
                    expect_name = false;
                }
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => expect_name = true,
                    _ => {}
                }
            }
            if !name.is_empty() {
                out.push(name);
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

fn graph() -> Graph {
    let modules = modules();
    let mut graph = Graph::new();
    for (module, files) in &modules {
        let edges = graph.entry(module.clone()).or_default();
        for file in files {
            let text = std::fs::read_to_string(file).expect("source file");
            // A multi-line `use crate::{…}` group is joined into one line before it is read.
            let mut pending = String::new();
            for (n, line) in text.lines().enumerate() {
                let code = code_of(line);
                pending.push_str(code);
                if let Some(at) = pending.rfind("crate::{") {
                    let group = &pending[at..];
                    if group.matches('{').count() > group.matches('}').count() {
                        continue;
                    }
                }
                for target in crate_refs(&pending) {
                    if &target != module && modules.contains_key(&target) {
                        let rel = file.strip_prefix(src_dir()).unwrap_or(file);
                        edges
                            .entry(target)
                            .or_insert_with(|| format!("src/{}:{}", rel.display(), n + 1));
                    }
                }
                pending.clear();
            }
        }
    }
    graph
}

/// A cycle of the graph as `[a, b, …, a]`, if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flat_map(|e| e.keys()) {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|start| visit(start, graph, &mut done, &mut Vec::new()))
}

#[test]
fn top_level_modules_import_each_other_without_a_cycle() {
    let graph = graph();
    // The reader must have seen the read path, or an empty graph would pass.
    for (from, to) in [("load", "store"), ("rules", "model"), ("render", "rules")] {
        assert!(
            graph.get(from).is_some_and(|e| e.contains_key(to)),
            "expected {from} to import {to}; the module reader found: {graph:#?}"
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        let arrows: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("  {} -> {} ({})", w[0], w[1], graph[&w[0]][&w[1]]))
            .collect();
        panic!(
            "import cycle between analyzer modules: {}\n{}\nmove what both need below them \
             (docs/read-path.md)",
            cycle.join(" -> "),
            arrows.join("\n")
        );
    }
}

#[test]
fn references_are_read_from_paths_and_groups_but_not_comments() {
    assert_eq!(crate_refs("use crate::load::{A, B};"), ["load"]);
    assert_eq!(
        crate_refs("use crate::{load::{A, B}, store, model::span::X};"),
        ["load", "store", "model"]
    );
    assert_eq!(
        crate_refs("let x = crate::store::f(); pub(crate) fn g() {}"),
        ["store"]
    );
    assert!(crate_refs("$crate::load::x!()").is_empty());
    assert!(crate_refs(code_of("/// see [`crate::load::Projection`]")).is_empty());
    assert_eq!(
        crate_refs(code_of(
            r#"let s = "a//b"; crate::render::x(); // crate::cli"#
        )),
        ["render"]
    );
}

#[test]
fn a_cycle_is_found_and_named() {
    let mut g = Graph::new();
    let site = || "here".to_string();
    g.entry("a".into()).or_default().insert("b".into(), site());
    g.entry("b".into()).or_default().insert("c".into(), site());
    g.entry("c".into()).or_default();
    assert_eq!(find_cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into(), site());
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
