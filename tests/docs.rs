//! The documents against their sources: `docs/performance.md` is `bench/performance_doc.py`'s
//! output and holds the README's headline figures; the README's paths and links resolve, its
//! test command is CI's, its package count `scripts/setup.sh`'s; `docs/CHANGELOG.md`, compatibility.md
//! and rsuring(7) list `src/ffi/liburing.map`'s nodes; bad-input counts are `docs/bad-input.md`'s; every
//! script is referenced; Debian's fio uses no liburing. (Manual pages: `scripts/check-man.sh`.)

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

fn read(rel: &str) -> String {
    let path = common::repo().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn files_in(dir: &str) -> Vec<String> {
    let entries = std::fs::read_dir(common::repo().join(dir)).unwrap();
    let files = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file());
    let names = files.map(|p| p.file_name().unwrap().to_str().unwrap().to_owned());
    names.map(|name| format!("{dir}/{name}")).collect()
}

#[test]
fn performance_doc_is_generated_from_the_results() {
    if !common::require_tool("docs/performance.md", "python3", "python3") {
        return;
    }
    let script = common::repo().join("bench/performance_doc.py");
    let out = Command::new("python3").arg(script).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "bench/performance_doc.py: {stderr}");
    let stale = "docs/performance.md is stale: python3 bench/performance_doc.py --write";
    assert!(stdout == read("docs/performance.md"), "{stale}");
}

/// The decimal figures (`0.990`, `3.57`, `±2.8%`, `0.723–0.827`) of a text.
fn figures(text: &str) -> Vec<&str> {
    let words = text.split(|c: char| !c.is_ascii_digit() && c != '.');
    words
        .map(|w| w.trim_matches('.'))
        .filter(|w| w.contains('.'))
        .collect()
}

/// A README section's text, from its `## ` heading to the next one.
fn readme_section<'a>(readme: &'a str, heading: &str) -> &'a str {
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no section \"{heading}\""));
    let rest = &readme[start + 1..];
    &rest[..rest[1..].find("\n## ").map_or(rest.len(), |e| e + 1)]
}

#[test]
fn readme_figures_come_from_the_performance_doc() {
    let (readme, performance) = (read("README.md"), read("docs/performance.md"));
    let known = figures(&performance);
    let quoted = figures(readme_section(&readme, "Headline results"));
    assert!(!quoted.is_empty(), "no figure in the headline results");
    let unknown: Vec<_> = quoted.into_iter().filter(|f| !known.contains(f)).collect();
    assert!(
        unknown.is_empty(),
        "not in docs/performance.md: {unknown:?}"
    );
}

#[test]
fn readme_paths_and_commands_are_the_repository_s() {
    let readme = read("README.md");
    // Links, and the paths it names in the repository's directories.
    let links = readme
        .split("](")
        .skip(1)
        .map(|s| s.split([')', '#']).next().unwrap());
    let words = readme.split(|c: char| !c.is_ascii_alphanumeric() && !"_./-".contains(c));
    let dirs: Vec<&str> = "scripts docs bench fio_engine c_tests include"
        .split(' ')
        .collect();
    let paths = words.filter(|w| w.split_once('/').is_some_and(|(d, _)| dirs.contains(&d)));
    for path in links.filter(|l| !l.starts_with("http")).chain(paths) {
        let path = path.trim_end_matches('.');
        assert!(common::repo().join(path).exists(), "README.md: {path}");
    }
    // The test command is the one CI runs, and its set-up's package count.
    let quick = readme_section(&readme, "Quick start: the two commands").replace('\n', " ");
    assert!(quick.contains("sudo scripts/test.sh") && quick.contains("(.ci/run)"));
    assert!(read(".ci/run").contains("\nexec bash scripts/test.sh\n"));
    let setup = read("scripts/setup.sh");
    let (_, list) = setup.split_once("\npackages=(").expect("packages=(");
    let count = list.split("\n)").next().unwrap().split_whitespace().count();
    assert!(
        quick.contains(&format!(" {count} Debian packages")),
        "README.md's quick start does not say \"{count} Debian packages\" (scripts/setup.sh)"
    );
}

type Nodes = BTreeMap<String, BTreeSet<String>>;

/// src/ffi/liburing.map's nodes, each with its symbols.
fn map_nodes() -> Nodes {
    let map = read("src/ffi/liburing.map");
    let (mut node, mut nodes) = (String::new(), Nodes::new());
    for line in map.lines().map(str::trim) {
        if let Some(name) = line.strip_suffix(" {") {
            node = name.to_string();
            nodes.insert(node.clone(), BTreeSet::new());
        } else if let Some(symbol) = line
            .strip_suffix(';')
            .filter(|s| !s.starts_with(['}', '*', '/']))
        {
            nodes.get_mut(&node).unwrap().insert(symbol.to_string());
        }
    }
    assert!(nodes.len() > 10, "src/ffi/liburing.map: {nodes:?}");
    nodes
}

/// docs/CHANGELOG.md's `#### NODE` headings, each with the names of its symbol lines (lines of
/// backquoted names and commas).
fn changelog_nodes() -> Nodes {
    let (mut nodes, mut node) = (Nodes::new(), None);
    for line in read("docs/CHANGELOG.md").lines() {
        if line.starts_with('#') {
            node = line.strip_prefix("#### ").map(|n| n.trim().to_string());
            node.iter()
                .for_each(|n| drop(nodes.insert(n.clone(), BTreeSet::new())));
        } else if let Some(node) = node.as_ref().filter(|_| line.starts_with('`')) {
            if line.ends_with('`') {
                let names = line.split('`').skip(1).step_by(2).map(String::from);
                nodes.get_mut(node).unwrap().extend(names);
            }
        }
    }
    nodes
}

#[test]
fn documents_list_every_symbol_node() {
    let (map, changelog) = (map_nodes(), changelog_nodes());
    assert_eq!(
        changelog, map,
        "docs/CHANGELOG.md's nodes, then liburing.map's"
    );
    let compatibility = read("docs/compatibility.md");
    let man = read("docs/man/man7/rsuring.7");
    for node in map.keys().filter(|n| n.starts_with("RSURING_")) {
        let quoted = format!("`{node}`");
        assert!(compatibility.contains(&quoted), "compatibility.md: {node}");
        let named = [format!(".B {node}\n"), format!(".BR {node} ")];
        assert!(named.iter().any(|n| man.contains(n)), "rsuring(7): {node}");
    }
}

#[test]
fn bad_input_counts_are_the_tables() {
    let table = read("docs/bad-input.md");
    let rows = table.lines().filter(|l| l.starts_with("| `")).count();
    assert!(rows > 100, "docs/bad-input.md: {rows} rows");
    let mut documents = vec!["README.md".to_string()];
    for dir in ["docs", "docs/man/man3", "docs/man/man7"] {
        documents.extend(files_in(dir));
    }
    let mut in_readme = false;
    for doc in &documents {
        let text = read(doc).replace('\n', " ");
        for (i, _) in text.match_indices(" bad-input cases") {
            let n = text[..i].rsplit(' ').next().unwrap();
            assert_eq!(n.parse(), Ok(rows), "{doc}: {n} bad-input cases");
            in_readme |= doc == "README.md";
        }
    }
    assert!(in_readme, "README.md gives no bad-input count");
}

#[test]
fn every_script_is_referenced() {
    let mut places = ["README.md", "Makefile", ".cargo/config.toml"]
        .map(String::from)
        .to_vec();
    for dir in ["docs", "tests", "bench", "scripts", "fio_engine", ".ci"] {
        places.extend(files_in(dir));
    }
    let texts: Vec<(String, String)> = places.into_iter().map(|p| (read(&p), p)).collect();
    for script in files_in("scripts") {
        let name = script.trim_start_matches("scripts/");
        let used = |(text, place): &(String, String)| *place != script && text.contains(name);
        assert!(texts.iter().any(used), "{script} is referenced nowhere");
    }
}

/// The README says fio's own `ioengine=io_uring` makes the system calls itself, so
/// `LD_PRELOAD` cannot put rsuring under it: Debian's fio links no liburing, imports no
/// `io_uring_*` function.
#[test]
fn fio_builtin_engine_does_not_use_liburing() {
    let have = |tool, package| common::require_tool("fio's io_uring engine", tool, package);
    if !have("fio", "fio") || !have("readelf", "binutils") {
        return;
    }
    let readelf = "readelf -d --dyn-syms -W \"$(command -v fio)\"";
    let out = Command::new("sh").args(["-c", readelf]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ok = out.status.success() && text.contains("(NEEDED)");
    assert!(ok, "{readelf}: {text}");
    let uses_liburing = text.contains("liburing") || text.contains("io_uring_");
    assert!(!uses_liburing, "fio links liburing: {text}");
}
