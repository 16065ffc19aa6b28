//! The layering of src/ (src/bin aside), read from the tokens of each file
//! without its `#[cfg(test)]` items, against the layers src/lib.rs lists
//! ([`layers_of`]). Every path of two segments or more (code, types, `use`
//! trees, macro calls such as `ffi_boundary!`) is an edge of the module graph,
//! which must be acyclic and go to an earlier layer. Ring methods live only in
//! ring.rs and queue/, no module below queue calls one of queue/'s (an edge no
//! import shows), and only ring.rs reaches a kernel-shared ring word. Each
//! rule also runs on made-up trees ([`CASES`]) that break it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The fields of `struct io_uring_sq`/`io_uring_cq` that point into memory
/// the kernel shares; only ring.rs may dereference them or call one of
/// `POINTER_METHODS` on them (or make an `AtomicU32` from a pointer).
const RING_WORDS: &str = "khead ktail kflags kring_mask kring_entries kdropped koverflow array";
const POINTER_METHODS: &str = "add offset read write as_ref as_mut";

/// src/ by module (`stats::slot` for src/stats/slot.rs, `ffi` for
/// src/ffi/mod.rs, "" for the crate root): its file (for messages), text.
type Tree = BTreeMap<String, (String, String)>;

/// The module of a file of src/ (`a/b.rs`, `a/b/mod.rs`: `a::b`).
fn module_of(rel: &Path) -> String {
    let parts = rel.with_extension("");
    let parts = parts.iter().filter_map(|p| p.to_str());
    Vec::from_iter(parts.filter(|&p| p != "mod" && p != "lib")).join("::")
}

/// Adds the files under `dir` of `src` (src/bin aside) to `tree`.
fn read_tree(src: &Path, dir: &Path, tree: &mut Tree) {
    for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
        let rel = path.strip_prefix(src).unwrap();
        if path.is_dir() && rel != Path::new("bin") {
            read_tree(src, &path, tree);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            tree.insert(module_of(rel), (format!("src/{}", rel.display()), text));
        }
    }
}

/// What the rules read in one file.
#[derive(Default)]
struct Facts {
    paths: Vec<Vec<String>>,             // every path of two segments or more
    ring_impl: bool,                     // gives io_uring/LiveRing methods
    live_ring_methods: BTreeSet<String>, // of inherent `impl LiveRing`s
    calls: BTreeSet<String>,             // names of the methods called
    ring_word: bool,                     // reaches a kernel-shared word
}

/// Reads `tokens` into `f`, `#[cfg(test)]` items (each up to its `;` or
/// body) left out. `prefix`: of a `use` tree's group; `live`: the body of an
/// `impl LiveRing`; `deref`: a group after `*`.
fn scan(tokens: TokenStream, prefix: &[String], (live, deref): (bool, bool), f: &mut Facts) {
    let tts = Vec::from_iter(tokens);
    let text = |i: usize| tts.get(i).map(|t| t.to_string()).unwrap_or_default();
    let flush = |run: &mut Vec<String>, f: &mut Facts| {
        if !run.is_empty() && prefix.len() + run.len() > 1 {
            f.paths.push([prefix, &run[..]].concat());
        }
        run.clear();
    };
    let (mut run, mut skip, mut star) = (Vec::new(), false, deref);
    for (i, tt) in tts.iter().enumerate() {
        let (t, after) = (text(i), text(i + 1));
        let (before, b2) = (text(i.wrapping_sub(1)), text(i.wrapping_sub(2)));
        // In a chain of fields and names right after a `*`.
        star = (star || before == "*") && (matches!(tt, TokenTree::Ident(_)) || t == ".");
        let brace = matches!(tt, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace);
        let joined = before == ":" && b2 == ":"; // the token follows `::`
        if skip || t == "#" && after.replace(' ', "") == "[cfg(test)]" {
            skip = !(t == ";" || brace);
            continue;
        }
        match tt {
            TokenTree::Ident(_) => {
                if !joined {
                    flush(&mut run, f);
                }
                run.push(t.clone());
                if before == "." && (after.starts_with('(') || after == ":") {
                    f.calls.insert(t.clone());
                } else if live && t == "fn" {
                    f.live_ring_methods.insert(after.clone());
                }
                if before == "." && RING_WORDS.split(' ').any(|w| w == t) {
                    let method = POINTER_METHODS.split(' ').any(|m| m == text(i + 2));
                    f.ring_word |= if after == "." { method } else { star };
                }
            }
            TokenTree::Group(g) if brace && joined => {
                let prefix = [prefix, &run[..]].concat();
                scan(g.stream(), &prefix, Default::default(), f);
                run.clear();
            }
            TokenTree::Group(g) => {
                flush(&mut run, f);
                let inherent = brace && b2 == "impl";
                f.ring_impl |= inherent && (before == "LiveRing" || before == "io_uring");
                let live = inherent && before == "LiveRing";
                scan(g.stream(), &[], (live, before == "*"), f);
            }
            _ if t == ":" && (after == ":" || before == ":") => {}
            _ => flush(&mut run, f),
        }
    }
    flush(&mut run, f);
}

/// The module (from the crate root) a path of `module` lands in, if it names
/// one of this crate (`crate::`, `self::`, `super::`, a child): its longest
/// prefix that is a module of `tree` ("" for the crate root).
fn target(module: &str, path: &[String], tree: &Tree) -> Option<String> {
    let here = module.split_terminator("::").map(String::from).collect();
    let (mut base, mut rest): (Vec<String>, _) = match path[0].as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (here, &path[1..]),
        "super" => (here, path),
        kid if tree.contains_key(&[module, kid].join("::")) => (here, path),
        _ => return None,
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    let full = [base, rest.to_vec()].concat();
    let mut prefixes = (1..=full.len()).rev().map(|n| full[..n].join("::"));
    Some(prefixes.find(|m| tree.contains_key(m)).unwrap_or_default())
}

/// Everything wrong with `tree` under `layers`, lowest first.
fn check(layers: &[Vec<String>], tree: &Tree) -> Vec<String> {
    let (mut problems, mut edges, mut layer) = (Vec::new(), Vec::new(), BTreeMap::new());
    let top = |m: &str| m.split("::").next().unwrap_or_default().to_string();
    for (n, names) in layers.iter().enumerate() {
        layer.extend(names.iter().map(|m| (m.as_str(), n + 1)));
    }
    let layer_of = |m: &str| layer.get(&*top(m)).copied();
    let (mut queue_methods, mut below_queue) = (BTreeSet::new(), Vec::new());
    for (module, (file, text)) in tree {
        let mut f = Facts::default();
        scan(text.parse().unwrap(), &[], Default::default(), &mut f);
        let from_ptr = |p: &Vec<String>| p.windows(2).any(|w| w == ["AtomicU32", "from_ptr"]);
        if module != "ring" && (f.ring_word || f.paths.iter().any(from_ptr)) {
            problems.push(format!("{file}: reaches a kernel-shared ring word"));
        }
        if f.ring_impl && top(module) != "ring" && top(module) != "queue" {
            problems.push(format!("{file}: ring methods live in ring.rs and queue/"));
        }
        if !module.is_empty() && layer_of(module).is_none() {
            problems.push(format!("{file}: module `{module}` is in no layer"));
        }
        for path in &f.paths {
            let to = target(module, path, tree).filter(|to| to != module);
            edges.extend(to.map(|to| (module.as_str(), to, path.join("::"))));
        }
        if top(module) == "queue" {
            queue_methods.extend(f.live_ring_methods);
        } else if layer_of(module).is_some_and(|l| Some(l) < layer_of("queue")) {
            below_queue.push((file, f.calls));
        }
    }
    for (file, calls) in below_queue {
        for name in queue_methods.intersection(&calls) {
            problems.push(format!("{file}: calls `.{name}(…)` of queue/"));
        }
    }
    let mut seen = BTreeSet::new();
    for (from, to, via) in &edges {
        let (file, lf, lt) = (&tree[*from].0, layer_of(from), layer_of(to));
        if from.is_empty() || top(from) == top(to) || !seen.insert((from, to)) {
            continue;
        } else if to.is_empty() {
            problems.push(format!("{file}: `{via}` goes through the crate root"));
        } else if let Some((lf, lt)) = lf.zip(lt).filter(|(lf, lt)| lt >= lf) {
            let message = format!("{file}: {from} ({lf}) imports {to} ({lt}): `{via}`");
            problems.push(message);
        }
    }
    // Peel off modules that import nothing left; what remains has a cycle.
    let mut left: Vec<_> = edges.iter().map(|e| (e.0, &*e.1)).collect();
    while let Some(&(_, sink)) = left.iter().find(|e| !left.iter().any(|o| o.0 == e.1)) {
        left.retain(|e| e.1 != sink);
    }
    let cycle: BTreeSet<_> = left.iter().map(|e| e.0).collect();
    if !cycle.is_empty() {
        problems.push(format!("a module cycle among {cycle:?}"));
    }
    problems
}

/// The layers of src/lib.rs's crate documentation, its lines `//! N. [`a`],
/// `b` — …`: the names in backticks before the dash.
fn layers_of(lib_rs: &str) -> Vec<Vec<String>> {
    let mut layers = Vec::new();
    for line in lib_rs.lines().filter_map(|l| l.strip_prefix("//! ")) {
        if let Some((_, text)) = line.split_once(". ").filter(|l| l.0.parse::<u8>().is_ok()) {
            let names = text.split(" — ").next().unwrap_or_default().split('`');
            layers.push(names.skip(1).step_by(2).map(String::from).collect());
        }
    }
    layers
}

#[test]
fn the_module_graph_of_src_follows_the_layers_of_src_lib_rs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut tree = Tree::new();
    read_tree(&src, &src, &mut tree);
    let layers = layers_of(&tree[""].1);
    assert_eq!(layers.len(), 7, "src/lib.rs's layers as read: {layers:?}");
    let problems = check(&layers, &tree).join("\n  ");
    assert!(
        problems.is_empty(),
        "src/ breaks the layering:\n  {problems}"
    );
}

/// Made-up trees: what each shows, its layers (`|` between layers), its
/// files (under src/, text), and what `check` says (one problem containing each).
type Files = &'static [(&'static str, &'static str)];

#[rustfmt::skip]
const CASES: &[(&str, &str, Files, &[&str])] = &[
    ("earlier layers; comments, strings, tests", "a | b", &[("a.rs", "pub fn f() {}\n// crate::b\n\
        const S: &str = \"crate::b::g\";\n#[cfg(test)]\nmod tests { use crate::b::g; }"),
        ("b.rs", "use crate::{a::{self, f}};\nfn h(_: crate::a::X) { assert!(super::a::f() == ()); }")], &[]),
    ("paths against the order; the crate root; no layer", "a n w | x", &[("x.rs", ""),
        ("a.rs", "use crate::{x::X};\nuse crate::Reexported;"), ("stray.rs", ""), ("w/mod.rs", "mod kid;"),
        ("n.rs", "fn f() { own_syntax!(nonnull p; ring => $crate::x::g(ring)); }"), ("w/kid.rs", "fn f() -> Vec<super::super::x::X> {}")],
        &["src/a.rs: a (1) imports x (2): `crate::x::X`", "n (1) imports x (2): `crate::x::g`", "src/w/kid.rs: w::kid (1) imports x (2)",
          "`crate::Reexported` goes through the crate root", "src/stray.rs: module `stray` is in no"]),
    ("a cycle", "a", &[("a.rs", "fn f() { kid::g() }"), ("a/kid.rs", "fn g() { super::h() }")], &["a module cycle among"]),
    ("ring methods, queue/'s methods and ring words", "ring | stats env lock reg | queue | ffi", &[
        ("ring.rs", "impl LiveRing { pub fn head(&self) -> u32 { unsafe { *self.cq.khead } } }"), ("stats.rs", "impl LiveRing { fn count(&self) { self.flush_sq(); } }"),
        ("env.rs", "fn s(r: &LiveRing) -> *mut u32 { unsafe { r.sq.array.add(1) } }"), ("lock.rs", "fn w() { AtomicU32::from_ptr(p) }"),
        ("reg.rs", "fn f(r: &LiveRing) -> u32 { r.sq.array = 0; unsafe { *(r.cq.khead) } }"),
        ("queue/mod.rs", "mod submit;"), ("queue/submit.rs", "impl LiveRing { fn flush_sq(&self) {} }"),
        ("ffi.rs", "fn f(r: &LiveRing) { r.flush_sq(); r.cq.khead.is_null(); }")],
        &["src/stats.rs: ring methods live", "src/stats.rs: calls `.flush_sq(…)` of queue/",
          "src/env.rs: reaches a kernel", "src/lock.rs: reaches a kernel", "src/reg.rs: reaches a kernel"]),
];

#[test]
fn the_checker_finds_what_each_made_up_tree_breaks() {
    let words = |l: &str| l.split_whitespace().map(String::from).collect();
    let file =
        |&(f, text): &(&str, &str)| (module_of(Path::new(f)), (format!("src/{f}"), text.into()));
    for &(what, layers, files, want) in CASES {
        let layers: Vec<_> = layers.split('|').map(words).collect();
        let problems = check(&layers, &files.iter().map(file).collect());
        let found = |w: &&str| problems.iter().any(|p| p.contains(w));
        let all = want.iter().all(found) && problems.len() == want.len();
        assert!(all, "{what}: {problems:#?}");
    }
}
