//! The documents against their one sources: every list a document gives is
//! checked against the place it comes from, and fails on a mismatch.
//!
//! - `docs/performance.md` is exactly what `tools/performance_doc.py`
//!   writes from the committed results files;
//! - every figure of the README's headline results (at most 6 rows) is in
//!   `docs/performance.md`;
//! - the README is a front door: at most 150 lines, an opening of at most 8,
//!   its sections in order, the package count of `scripts/setup.sh`;
//! - `CHANGELOG.md` lists every symbol version node of `liburing.map` with
//!   exactly its symbols, and `docs/compatibility.md` and rsuring(7) name
//!   every `RSURING_*` node;
//! - every "N bad-input cases" in the documents is the row count of
//!   `docs/bad-input.md`'s table;
//! - every program in `tools/` is referenced outside itself.
//!
//! (The variables' table and defaults are checked by `src/env.rs`'s unit
//! tests, the manual pages by `scripts/check/man.sh`.)

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn read(rel: &str) -> String {
    let path = common::repo().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn performance_doc_is_generated_from_the_results() {
    if !common::require_tool("docs/performance.md", "python3", "python3") {
        return;
    }
    let out = Command::new("python3")
        .arg(common::repo().join("tools/performance_doc.py"))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "tools/performance_doc.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = String::from_utf8(out.stdout).expect("UTF-8");
    let have = read("docs/performance.md");
    assert!(
        have == want,
        "docs/performance.md is not tools/performance_doc.py's output: run \
         `python3 tools/performance_doc.py --write` (bench/run.sh --commit-results does)"
    );
}

/// The decimal figures (`0.990`, `3.57`, `±2.8%`, `0.723–0.827`) of a text.
fn figures(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !current.is_empty()) {
            current.push(c);
        } else {
            let number = current.trim_end_matches('.');
            if number.contains('.') {
                found.push(number.to_string());
            }
            current.clear();
        }
    }
    found
}

/// A README section's text, from its `## ` heading to the next one.
fn readme_section<'a>(readme: &'a str, heading: &str) -> &'a str {
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no section \"{heading}\""));
    let rest = &readme[start + 1..];
    let end = rest[1..].find("\n## ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

#[test]
fn readme_figures_come_from_the_performance_doc() {
    let readme = read("README.md");
    let results = readme_section(&readme, "Headline results");
    let rows: Vec<&str> = results
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| what ") && !l.starts_with("| ---"))
        .collect();
    assert!(
        (1..=6).contains(&rows.len()),
        "the README's headline table has {} rows (1 to 6)",
        rows.len()
    );
    let performance = read("docs/performance.md");
    let known = figures(&performance);
    for row in &rows {
        let quoted = figures(row);
        assert!(!quoted.is_empty(), "headline row without a figure: {row}");
        for f in &quoted {
            assert!(
                known.contains(f),
                "README.md's headline table quotes {f}, which docs/performance.md does not have: {row}"
            );
        }
    }
    // The prose of the section too: a figure there is a claim as well.
    for f in figures(results) {
        assert!(
            known.contains(&f),
            "README.md's headline results quote {f}, which docs/performance.md does not have"
        );
    }
}

#[test]
fn readme_is_a_front_door() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(lines <= 150, "README.md has {lines} lines (at most 150)");
    // What it is, for whom and why: at most 8 lines before the first section.
    let opening = readme.split("\n## ").next().unwrap();
    let said = opening
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count();
    assert!(
        said <= 8,
        "README.md's opening has {said} lines (at most 8)"
    );
    let sections: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .collect();
    assert_eq!(
        sections,
        [
            "Quick start: the two commands",
            "Headline results",
            "Install",
            "Use it",
            "Troubleshooting",
            "Compatibility",
            "Read more",
            "Licence and bugs"
        ],
        "README.md's sections"
    );
    for needle in [
        "scripts/demo.sh",
        "scripts/test.sh",
        "LD_PRELOAD",
        "pkg-config",
        "dpkg -i",
        "make install",
        "fio --ioengine=external:",
        "docs/transparent-sqpoll.md",
        "docs/compatibility.md",
        "LICENSE",
        "issue tracker",
        "limits.conf",
        "LimitMEMLOCK=",
        "not found",
        "FIO_SRC=",
    ] {
        assert!(
            readme.contains(needle),
            "README.md does not mention {needle}"
        );
    }
    // The number of packages the test command's set-up installs.
    let setup = read("scripts/setup.sh");
    let list = setup
        .split("\npackages=(")
        .nth(1)
        .and_then(|rest| rest.split("\n)").next())
        .expect("scripts/setup.sh has a packages=( ... ) list");
    let count = list.split_whitespace().count();
    let quick = readme_section(&readme, "Quick start: the two commands").replace('\n', " ");
    assert!(
        quick.contains(&format!(" {count} Debian packages")),
        "README.md's quick start does not say \"{count} Debian packages\" (scripts/setup.sh lists {count})"
    );
}

/// liburing.map's nodes in order, each with its symbols.
fn symbol_nodes() -> Vec<(String, Vec<String>)> {
    let mut map = read("src/ffi/liburing.map");
    // Drop comments.
    while let Some(start) = map.find("/*") {
        let end = map[start..].find("*/").expect("closed comment") + start + 2;
        map.replace_range(start..end, "");
    }
    let mut nodes = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in map.lines().map(str::trim) {
        if let Some(name) = line.strip_suffix('{') {
            current = Some((name.trim().to_string(), Vec::new()));
        } else if line.starts_with('}') {
            nodes.push(current.take().expect("node open"));
        } else if let Some(symbol) = line.strip_suffix(';') {
            if let Some((_, symbols)) = current.as_mut() {
                if symbol != "*" {
                    symbols.push(symbol.trim().to_string());
                }
            }
        }
    }
    assert!(nodes.len() > 10, "liburing.map: {} nodes", nodes.len());
    nodes
}

/// CHANGELOG.md's `#### NODE` headings, each with the names of its symbol
/// lines (lines made only of backquoted names and commas).
fn changelog_nodes(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut nodes = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("#### ") {
            current = Some(name.trim().to_string());
            nodes.insert(name.trim().to_string(), Vec::new());
            continue;
        }
        if line.starts_with('#') {
            current = None;
            continue;
        }
        let Some(node) = &current else { continue };
        let items: Vec<&str> = line.split(", ").collect();
        let names: Option<Vec<String>> = items
            .iter()
            .map(|i| {
                let name = i.strip_prefix('`')?.strip_suffix('`')?;
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    .then(|| name.to_string())
            })
            .collect();
        if let Some(names) = names.filter(|n| !n.is_empty()) {
            nodes.get_mut(node).unwrap().extend(names);
        }
    }
    nodes
}

#[test]
fn changelog_lists_every_symbol_node() {
    let nodes = symbol_nodes();
    let changelog = changelog_nodes(&read("CHANGELOG.md"));
    let names: Vec<&String> = nodes.iter().map(|(n, _)| n).collect();
    let listed: Vec<&String> = changelog.keys().collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        listed, sorted,
        "CHANGELOG.md's nodes against liburing.map's"
    );
    for (node, symbols) in &nodes {
        let mut want = symbols.clone();
        want.sort();
        let mut have = changelog[node].clone();
        have.sort();
        assert_eq!(have, want, "CHANGELOG.md {node} against liburing.map");
    }
}

#[test]
fn documents_name_every_rsuring_node() {
    let compatibility = read("docs/compatibility.md");
    let man = read("man/man7/rsuring.7");
    for (node, _) in symbol_nodes() {
        if !node.starts_with("RSURING_") {
            continue;
        }
        assert!(
            compatibility.contains(&format!("`{node}`")),
            "docs/compatibility.md does not name {node}"
        );
        assert!(
            man.contains(&format!(".B {node}\n")) || man.contains(&format!(".BR {node} ")),
            "rsuring(7) does not name {node}"
        );
    }
}

#[test]
fn bad_input_counts_are_the_tables() {
    let table = read("docs/bad-input.md");
    let rows = table.lines().filter(|l| l.starts_with("| `")).count();
    assert!(rows > 100, "docs/bad-input.md: {rows} rows");
    let mut documents: Vec<String> = vec!["README.md".into(), "CHANGELOG.md".into()];
    for dir in ["docs", "man/man3", "man/man7"] {
        for entry in std::fs::read_dir(common::repo().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            documents.push(format!(
                "{dir}/{}",
                path.file_name().unwrap().to_str().unwrap()
            ));
        }
    }
    let mut in_readme = 0;
    for doc in &documents {
        let text = read(doc).replace('\n', " ");
        let words: Vec<&str> = text.split(' ').collect();
        for (i, w) in words.iter().enumerate() {
            let word = |k: usize| {
                words
                    .get(i + k)
                    .map(|w| w.trim_end_matches([',', '.', ';', ')']))
            };
            if word(1) == Some("bad-input") && word(2) == Some("cases") {
                let n: usize = w
                    .parse()
                    .unwrap_or_else(|_| panic!("{doc}: \"{w} bad-input cases\""));
                assert_eq!(
                    n, rows,
                    "{doc} says {n} bad-input cases; docs/bad-input.md's table has {rows}"
                );
                in_readme += (doc == "README.md") as usize;
            }
        }
    }
    assert!(in_readme > 0, "README.md gives no bad-input count");
}

#[test]
fn every_tool_is_referenced() {
    let root = common::repo();
    let mut corpus = String::new();
    for rel in ["README.md", "Makefile", "bench/run.sh", "scripts/test.sh"] {
        corpus += &read(rel);
    }
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        corpus += &std::fs::read_to_string(entry.unwrap().path()).unwrap();
    }
    corpus += &read(".cargo/config.toml");
    for entry in std::fs::read_dir(root.join("tools")).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let name = format!("tools/{}", path.file_name().unwrap().to_str().unwrap());
        assert!(
            corpus.contains(&name) || referenced_by_tests(&root, &name),
            "{name} is referenced nowhere (README, docs/, Makefile, scripts, tests)"
        );
    }
}

fn referenced_by_tests(root: &Path, name: &str) -> bool {
    std::fs::read_dir(root.join("tests")).unwrap().any(|e| {
        let p = e.unwrap().path();
        p.extension().is_some_and(|x| x == "rs")
            && std::fs::read_to_string(&p).is_ok_and(|t| t.contains(name))
    })
}

/// The README says fio's own `ioengine=io_uring` issues the system calls
/// itself, so `LD_PRELOAD` cannot put rsuring under it: Debian's fio links
/// no liburing and imports no `io_uring_*` function.
#[test]
fn fio_builtin_engine_does_not_use_liburing() {
    if !common::require_tool("fio's io_uring engine", "fio", "fio")
        || !common::require_tool("fio's io_uring engine", "readelf", "binutils")
    {
        return;
    }
    let fio = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v fio"])
            .output()
            .expect("sh runs")
            .stdout,
    )
    .unwrap();
    let fio = fio.trim();
    let out = Command::new("readelf")
        .args(["-d", "--dyn-syms", "-W", fio])
        .output()
        .expect("readelf runs");
    assert!(out.status.success(), "readelf {fio}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(NEEDED)"),
        "readelf -d {fio}: no NEEDED entries"
    );
    assert!(
        !text.contains("liburing"),
        "{fio} links liburing: the README's fio note is wrong"
    );
    assert!(
        !text.contains("io_uring_"),
        "{fio} imports io_uring_* functions: the README's fio note is wrong"
    );
}
