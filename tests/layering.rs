//! The module layering of src/ (the list in src/lib.rs's documentation):
//! every `use crate::…`, `crate::x::`, `super::` and child-module path of
//! every file under src/ (the rsuring-stat binary aside, and `#[cfg(test)]`
//! modules, which may use anything) is an edge of the module graph, which
//! must be acyclic, and must go from a later layer to an earlier one. Also
//! checked: ring methods (`impl io_uring`, `impl LiveRing`) live only in
//! ring.rs and queue.rs, no module below queue calls a queue.rs method
//! (a method call is an edge no import shows), and no file but ring.rs
//! dereferences the kernel-shared ring words.
//!
//! The checker runs on the real tree and, so that it is known to fail when
//! it should, on small made-up trees.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module: `stats::slot` for src/stats/slot.rs, `ffi` for src/ffi/mod.rs.
type Module = String;

/// A file of src/: its path (for messages) and text.
#[derive(Debug, Clone)]
struct Source {
    file: String,
    text: String,
}

/// The files of src/ by module, the crate root (lib.rs) as "".
type Tree = BTreeMap<Module, Source>;

/// The layers listed in the crate root's documentation: lines
/// `//! N. [`a`], [`b`] — …` (names before the dash, with or without link
/// brackets), possibly wrapped over several lines.
fn documented_layers(lib_rs: &str) -> Vec<Vec<String>> {
    let mut layers = Vec::new();
    let mut current: Option<String> = None;
    let flush = |text: &mut Option<String>, layers: &mut Vec<Vec<String>>| {
        if let Some(t) = text.take() {
            let names = t.split(" — ").next().unwrap_or("");
            let found: Vec<String> = names
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            layers.push(found);
        }
    };
    for line in lib_rs.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            flush(&mut current, &mut layers);
            continue;
        };
        let doc = doc.trim();
        let numbered = doc
            .split_once(". ")
            .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if let Some((_, rest)) = numbered {
            flush(&mut current, &mut layers);
            current = Some(rest.to_string());
        } else if doc.is_empty() {
            flush(&mut current, &mut layers);
        } else if let Some(t) = current.as_mut() {
            if !t.contains(" — ") {
                t.push(' ');
                t.push_str(doc);
            }
        }
    }
    flush(&mut current, &mut layers);
    layers
}

/// Reads src/ into a [`Tree`].
fn read_tree(src: &Path) -> Tree {
    let mut tree = Tree::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(src).unwrap();
            if path.is_dir() {
                if rel != Path::new("bin") {
                    stack.push(path);
                }
                continue;
            }
            if !path.extension().is_some_and(|e| e == "rs") {
                continue;
            }
            let mut parts: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let module = if parts == ["lib"] {
                String::new()
            } else {
                parts.join("::")
            };
            let source = Source {
                file: format!("src/{}", rel.display()),
                text: std::fs::read_to_string(&path).unwrap(),
            };
            tree.insert(module, source);
        }
    }
    tree
}

/// The file of a module, for messages.
fn file_of(tree: &Tree, module: &str) -> String {
    tree.get(module).map_or_else(
        || format!("src/{}.rs", module.replace("::", "/")),
        |s| s.file.clone(),
    )
}

/// `src` without comments, string and character literals (each replaced
/// by a blank, so that nothing inside them reads as a path).
fn strip_comments_and_literals(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            // A raw string: r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime.
            let end = if next == Some('\\') {
                (i + 2..b.len()).find(|&j| b[j] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    i = e + 1;
                    out.push_str("' '");
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// `src` (already stripped) without its `#[cfg(test)]` items.
fn strip_test_items(src: &str) -> String {
    let mut out = src.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = at + "#[cfg(test)]".len();
        // The item ends at its first `;` outside braces, or at the brace
        // that closes its first block.
        let mut depth = 0usize;
        let mut end = out.len();
        for (k, ch) in out[after..].char_indices() {
            match ch {
                '{' | '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = after + k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = after + k + 1;
                    break;
                }
                _ => {}
            }
        }
        out.replace_range(at..end, " ");
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into its paths.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn split_top(s: &str) -> Vec<&str> {
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0, 0);
        for (i, c) in s.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        parts
    }
    fn go(prefix: &[String], s: &str, out: &mut Vec<Vec<String>>) {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        if s.is_empty() {
            return;
        }
        if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            for part in split_top(inner) {
                go(prefix, part, out);
            }
            return;
        }
        match s.split_once("::") {
            Some((head, rest)) => {
                let mut p = prefix.to_vec();
                p.push(head.to_string());
                go(&p, rest, out);
            }
            None => {
                let mut p = prefix.to_vec();
                if s != "*" {
                    p.push(s);
                }
                out.push(p);
            }
        }
    }
    // Aliases (`x as y`) name the same module: drop `as y`.
    let mut words: Vec<&str> = Vec::new();
    let mut tokens = tree.split_whitespace().peekable();
    while let Some(w) = tokens.next() {
        if w == "as" {
            // The alias may carry the `,` or `}` that follows it.
            if let Some(alias) = tokens.next() {
                let tail = alias.trim_start_matches(is_ident);
                if !tail.is_empty() {
                    words.push(tail);
                }
            }
        } else {
            words.push(w);
        }
    }
    let mut out = Vec::new();
    go(&[], &words.join(" "), &mut out);
    out
}

/// The child modules a file declares (`mod x;`, `pub mod x;`).
fn declared_children(src: &str) -> BTreeSet<String> {
    let mut children = BTreeSet::new();
    for line in src.lines() {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ';')
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(at) = words.iter().position(|&w| w == "mod") {
            if line.trim_end().ends_with(';') {
                if let Some(name) = words.get(at + 1) {
                    children.insert(name.to_string());
                }
            }
        }
    }
    children
}

/// Every module path a file names: (the path's segments from the crate
/// root, the text as written).
fn referenced_paths(module: &str, src: &str, tree: &Tree) -> Vec<(Vec<String>, String)> {
    let here: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(str::to_string).collect()
    };
    let children = declared_children(src);
    let absolute = |path: &[String]| -> Option<Vec<String>> {
        let first = path.first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => here.clone(),
            "super" => {
                let mut b = here.clone();
                b.pop()?;
                b
            }
            name if children.contains(name) => {
                let mut b = here.clone();
                b.push(name.to_string());
                return Some(b.into_iter().chain(path[1..].iter().cloned()).collect());
            }
            _ => return None,
        };
        let mut rest = &path[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    };
    let mut found = Vec::new();
    let mut rest = src;
    // `use` declarations.
    while let Some(at) = find_word(rest, "use") {
        let after = &rest[at + 3..];
        let Some(end) = after.find(';') else { break };
        for path in expand_use(&after[..end]) {
            if let Some(abs) = absolute(&path) {
                found.push((abs, format!("use {}", path.join("::"))));
            }
        }
        rest = &after[end..];
    }
    // Paths anywhere: crate::…, super::…, self::…, child::….
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_ident(chars[i]) || (i > 0 && (is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            while j < chars.len() && is_ident(chars[j]) {
                j += 1;
            }
            segs.push(chars[start..j].iter().collect::<String>());
            if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                j += 2;
                if chars.get(j).is_some_and(|&c| is_ident(c)) {
                    continue;
                }
            }
            break;
        }
        if segs.len() > 1 {
            if let Some(abs) = absolute(&segs) {
                found.push((abs, segs.join("::")));
            }
        }
        i = j.max(i + 1);
    }
    let _ = tree;
    found
}

/// The position of `word` as a whole word in `s`.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = s[from..].find(word) {
        let at = from + at;
        let before = s[..at].chars().next_back();
        let after = s[at + word.len()..].chars().next();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The module a path from the crate root lands in: its longest prefix that
/// is a module of the tree ("" for the crate root itself).
fn target_module(path: &[String], tree: &Tree) -> Module {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| tree.contains_key(m))
        .unwrap_or_default()
}

fn top_level(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// One import edge: from, to, and the path that makes it.
#[derive(Debug, Clone)]
struct Edge {
    from: Module,
    to: Module,
    via: String,
}

fn edges(tree: &Tree, stripped: &BTreeMap<Module, String>) -> Vec<Edge> {
    let mut all = Vec::new();
    for (module, src) in stripped {
        for (path, via) in referenced_paths(module, src, tree) {
            let to = target_module(&path, tree);
            if &to != module {
                all.push(Edge {
                    from: module.clone(),
                    to,
                    via,
                });
            }
        }
    }
    all
}

/// A cycle of the graph, as its modules in order, if there is one.
fn find_cycle(edges: &[Edge]) -> Option<Vec<Module>> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in edges {
        next.entry(&e.from).or_default().insert(&e.to);
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit<'a>(
        m: &'a str,
        next: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        marks: &mut BTreeMap<&'a str, Mark>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<Module>> {
        match marks.get(m) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = path.iter().position(|&p| p == m).unwrap();
                let mut cycle: Vec<Module> = path[from..].iter().map(|s| s.to_string()).collect();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(m, Mark::Open);
        path.push(m);
        for &n in next.get(m).into_iter().flatten() {
            if let Some(c) = visit(n, next, marks, path) {
                return Some(c);
            }
        }
        path.pop();
        marks.insert(m, Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for &m in next.keys() {
        if let Some(c) = visit(m, &next, &mut marks, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

/// Names of the methods queue.rs defines on the ring types.
fn queue_methods(queue_src: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = queue_src;
    while let Some(at) = rest.find("impl LiveRing") {
        let body = &rest[at..];
        let mut depth = 0usize;
        let mut end = body.len();
        for (k, ch) in body.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let block = &body[..end];
        let mut from = 0;
        while let Some(f) = find_word(&block[from..], "fn") {
            let name: String = block[from + f + 2..]
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect();
            names.insert(name);
            from += f + 2;
        }
        rest = &body[end..];
    }
    names
}

/// Everything wrong with `tree` (empty when the layering holds).
fn check(tree: &Tree) -> Vec<String> {
    let mut problems = Vec::new();
    let layers = documented_layers(tree.get("").map_or("", |s| s.text.as_str()));
    let mut layer_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (n, names) in layers.iter().enumerate() {
        for name in names {
            if layer_of.insert(name, n + 1).is_some() {
                problems.push(format!("src/lib.rs lists `{name}` in two layers"));
            }
        }
    }
    if layers.is_empty() {
        problems.push("src/lib.rs documents no layers (lines `//! 1. [`a`], … — …`)".into());
    }
    let stripped: BTreeMap<Module, String> = tree
        .iter()
        .map(|(m, s)| {
            (
                m.clone(),
                strip_test_items(&strip_comments_and_literals(&s.text)),
            )
        })
        .collect();
    for module in tree.keys().filter(|m| !m.is_empty() && !m.contains("::")) {
        if !layer_of.contains_key(module.as_str()) {
            problems.push(format!(
                "{}: module `{module}` is in no layer of src/lib.rs's list",
                file_of(tree, module)
            ));
        }
    }
    for name in layer_of.keys() {
        if !tree.contains_key(*name) {
            problems.push(format!("src/lib.rs lists `{name}`, which is not a module"));
        }
    }
    let all = edges(tree, &stripped);
    let mut reported = BTreeSet::new();
    for e in all.iter().filter(|e| !e.from.is_empty()) {
        if !reported.insert((e.from.clone(), e.to.clone())) {
            continue;
        }
        if e.to.is_empty() {
            problems.push(format!(
                "{}: `{}` goes through the crate root; name the module",
                file_of(tree, &e.from),
                e.via
            ));
            continue;
        }
        let (from, to) = (top_level(&e.from), top_level(&e.to));
        if from == to {
            continue;
        }
        if let (Some(&lf), Some(&lt)) = (layer_of.get(from), layer_of.get(to)) {
            if lt >= lf {
                problems.push(format!(
                    "{}: {} (layer {lf}) imports {} (layer {lt}) with `{}`: a module may only \
                     import from earlier layers",
                    file_of(tree, &e.from),
                    e.from,
                    e.to,
                    e.via
                ));
            }
        }
    }
    // Every cycle, one at a time: report it, cut its last hop, look again.
    let mut remaining = all.clone();
    while let Some(cycle) = find_cycle(&remaining) {
        let via: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                let e = all.iter().find(|e| e.from == w[0] && e.to == w[1]).unwrap();
                format!(
                    "{} -> {} (`{}` in {})",
                    w[0],
                    w[1],
                    e.via,
                    file_of(tree, &w[0])
                )
            })
            .collect();
        problems.push(format!("module cycle: {}", via.join(", ")));
        let (a, b) = (&cycle[cycle.len() - 2], &cycle[cycle.len() - 1]);
        remaining.retain(|e| !(&e.from == a && &e.to == b));
    }
    for (module, src) in &stripped {
        if module == "ring" || module == "queue" {
            continue;
        }
        for ty in ["io_uring", "LiveRing"] {
            let pattern = format!("impl {ty} ");
            if src.contains(&pattern) {
                problems.push(format!(
                    "{}: `impl {ty}`: ring methods live in ring.rs and queue.rs; offer a \
                     function that takes the ring",
                    file_of(tree, module)
                ));
            }
        }
    }
    if let (Some(queue_src), Some(&queue_layer)) = (stripped.get("queue"), layer_of.get("queue")) {
        let methods = queue_methods(queue_src);
        for (module, src) in &stripped {
            let below = layer_of
                .get(top_level(module))
                .is_some_and(|&l| l < queue_layer);
            if !below {
                continue;
            }
            for name in &methods {
                let call = format!(".{name}(");
                if src.contains(&call) {
                    problems.push(format!(
                        "{}: calls `{call}…)`, a method of queue.rs (a later layer)",
                        file_of(tree, module)
                    ));
                }
            }
        }
    }
    const WORDS: &str = "khead|ktail|kflags|kring_mask|kring_entries|kdropped|koverflow|array";
    for (module, src) in &stripped {
        if module == "ring" {
            continue;
        }
        let mut bad = src.contains("AtomicU32::from_ptr");
        // A free `load(…)` / `store(…)` (not an atomic's method) of a word.
        for call in ["load(", "store("] {
            let mut from = 0;
            while let Some(at) = find_word(&src[from..], &call[..call.len() - 1]) {
                let at = from + at;
                from = at + call.len();
                let free = !src[..at].ends_with('.') && src[at..].starts_with(call);
                let args = src[at..].split(')').next().unwrap_or("");
                bad |= free && WORDS.split('|').any(|w| args.contains(&format!(".{w}")));
            }
        }
        for word in WORDS.split('|') {
            for suffix in [
                ".add(", ".offset(", ".read(", ".write(", ".as_ref(", ".as_mut(",
            ] {
                bad |= src.contains(&format!(".{word}{suffix}"));
            }
            let mut from = 0;
            while let Some(at) = src[from..].find(&format!(".{word}")) {
                let at = from + at;
                let start = src[..at]
                    .rfind(|c: char| !(is_ident(c) || c == '.'))
                    .unwrap_or(0);
                let end = at + word.len() + 1;
                let whole_word = !src[end..].starts_with(is_ident);
                bad |= whole_word && src[..=start].ends_with('*');
                from = end;
            }
        }
        if bad {
            problems.push(format!(
                "{}: reaches a kernel-shared ring word directly; use ring.rs's accessors",
                file_of(tree, module)
            ));
        }
    }
    problems
}

#[test]
fn the_module_graph_of_src_follows_the_documented_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tree = read_tree(&root.join("src"));
    assert!(tree.len() > 10, "src/ has {} modules", tree.len());
    let problems = check(&tree);
    assert!(
        problems.is_empty(),
        "the layering of src/ is broken:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_documented_layers_name_the_known_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let layers = documented_layers(&lib);
    assert!(layers.len() >= 5, "{layers:?}");
    assert_eq!(layers[0].first().map(String::as_str), Some("uapi"));
    assert!(
        layers.last().unwrap().contains(&"ffi".to_string()),
        "{layers:?}"
    );
}

/// A made-up tree: a crate root documenting `layers`, and `files`.
fn fake(layers: &[&str], files: &[(&str, &str)]) -> Tree {
    let mut lib = String::from("//! Layers:\n//!\n");
    for (n, l) in layers.iter().enumerate() {
        lib.push_str(&format!("//! {}. {l} — what they are.\n", n + 1));
    }
    lib.push_str("\nmod a;\n");
    let source = |module: &str, text: &str| Source {
        file: format!("src/{}.rs", module.replace("::", "/")),
        text: text.to_string(),
    };
    let mut tree = Tree::new();
    tree.insert(String::new(), source("lib", &lib));
    for (m, s) in files {
        tree.insert(m.to_string(), source(m, s));
    }
    tree
}

#[test]
fn the_checker_accepts_imports_from_earlier_layers() {
    let tree = fake(
        &["[`a`]", "[`b`], `c`"],
        &[
            ("a", "pub fn f() {}\n"),
            ("b", "use crate::a;\nfn g() { crate::a::f() }\n"),
            ("c", "use crate::{a::{self, f}};\n"),
        ],
    );
    assert_eq!(check(&tree), Vec::<String>::new());
}

#[test]
fn the_checker_names_an_import_against_the_order() {
    let tree = fake(
        &["[`a`]", "[`b`]"],
        &[
            ("a", "fn f() { crate::b::g() }\n"),
            ("b", "pub fn g() {}\n"),
        ],
    );
    let problems = check(&tree);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("a (layer 1) imports b (layer 2)") && p.contains("crate::b::g")),
        "{problems:?}"
    );
}

#[test]
fn the_checker_refuses_imports_between_modules_of_one_layer() {
    let tree = fake(
        &["[`a`], [`b`]"],
        &[("a", "use crate::b::X;\n"), ("b", "pub struct X;\n")],
    );
    let problems = check(&tree);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("a (layer 1) imports b (layer 1)")),
        "{problems:?}"
    );
}

#[test]
fn the_checker_finds_a_cycle_through_a_submodule() {
    let tree = fake(
        &["[`a`]"],
        &[
            ("a", "mod kid;\nfn f() { kid::g() }\npub fn h() {}\n"),
            ("a::kid", "pub fn g() { super::h() }\n"),
        ],
    );
    let problems = check(&tree);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("module cycle: ") && p.contains("a::kid -> a")),
        "{problems:?}"
    );
}

#[test]
fn the_checker_ignores_comments_strings_and_tests() {
    let tree = fake(
        &["[`a`]", "[`b`]"],
        &[
            (
                "a",
                "// see crate::b::g\n/// [`crate::b`]\nconst S: &str = \"crate::b::g\";\n\
                 const C: char = '\"';\n#[cfg(test)]\nmod tests { use crate::b::g; }\n",
            ),
            ("b", "pub fn g() {}\n"),
        ],
    );
    assert_eq!(check(&tree), Vec::<String>::new());
}

#[test]
fn the_checker_wants_every_module_in_a_layer() {
    let tree = fake(&["[`a`]"], &[("a", ""), ("stray", "")]);
    let problems = check(&tree);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("`stray` is in no layer")),
        "{problems:?}"
    );
}

#[test]
fn the_checker_keeps_ring_methods_and_ring_words_in_their_modules() {
    let tree = fake(
        &["[`ring`]", "[`stats`], [`setup`]", "[`queue`]"],
        &[
            ("ring", "pub struct LiveRing;\nimpl LiveRing { pub fn cq_head(&self) {} }\n"),
            (
                "stats",
                "use crate::ring::LiveRing;\nimpl LiveRing { fn count(&self) { self.flush_sq(); } }\n\
                 fn peek(r: &LiveRing) -> u32 { unsafe { *r.cq.khead } }\n",
            ),
            (
                "setup",
                "fn tail(r: &LiveRing) -> u32 { unsafe { load(r.sq.ktail, Relaxed) } }\n",
            ),
            ("queue", "use crate::ring::LiveRing;\nimpl LiveRing { fn flush_sq(&self) {} }\n"),
        ],
    );
    let problems = check(&tree);
    for want in [
        "src/stats.rs: `impl LiveRing`",
        "src/stats.rs: calls `.flush_sq(…)`",
        "src/stats.rs: reaches a kernel-shared ring word",
        "src/setup.rs: reaches a kernel-shared ring word",
    ] {
        assert!(
            problems.iter().any(|p| p.starts_with(want)),
            "{want}: {problems:?}"
        );
    }
    assert_eq!(problems.len(), 4, "{problems:?}");
}
