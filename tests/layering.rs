//! The module layering of src/, checked on syn's syntax tree of every file
//! under src/ (the rsuring-stat binary aside; `#[cfg(test)]` items may use
//! anything). Every `use` path, every path (`crate::x::f`, `super::y`,
//! `child::z`, in code, types and the Rust inside macro calls) is an edge
//! of the module graph, which must be acyclic and go from a later layer of
//! [`LAYERS`] to an earlier one; a path through the crate root must name
//! its module. Also: ring methods (`impl io_uring`, `impl LiveRing`) live
//! only in ring.rs and queue.rs, no module below queue calls a method of
//! queue.rs's `impl LiveRing` (a method call is an edge no import shows),
//! and no file but ring.rs reaches a kernel-shared ring word.
//!
//! Each rule is also run on small made-up trees, so that it is known to
//! fail when it should.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, ImplItem, Item, Member, UseTree};

/// The layers of src/, lowest first: a module may use only modules of
/// earlier layers (submodules belong to their parent's layer and only have
/// to be acyclic among themselves). src/lib.rs documents the same list (a
/// test below compares them). A name without a file is allowed: a module
/// planned on another branch.
const LAYERS: &[&[&str]] = &[
    &["uapi", "version"],
    &["sys", "fork"],
    &["ring", "lock", "env", "procfs"],
    &["setup", "register", "stats"],
    &["ring_fd", "sqpoll", "transparent"],
    &["queue", "lifecycle"],
    &["ffi", "live_view"],
];

/// The ring types, whose methods only `RING_METHOD_MODULES` define.
const RING_TYPES: [&str; 2] = ["io_uring", "LiveRing"];
const RING_METHOD_MODULES: [&str; 2] = ["ring", "queue"];

/// The fields of `struct io_uring_sq`/`io_uring_cq` that point into memory
/// the kernel shares; only ring.rs may dereference them, hand them to a
/// free `load`/`store`, or call one of `POINTER_METHODS` on them.
const RING_WORDS: [&str; 8] = [
    "khead",
    "ktail",
    "kflags",
    "kring_mask",
    "kring_entries",
    "kdropped",
    "koverflow",
    "array",
];
const POINTER_METHODS: [&str; 6] = ["add", "offset", "read", "write", "as_ref", "as_mut"];

/// A module: `stats::slot` for src/stats/slot.rs, `ffi` for
/// src/ffi/mod.rs, "" for the crate root.
type Module = String;

/// A file of src/: its path (for messages) and text.
struct Source {
    file: String,
    text: String,
}

type Tree = BTreeMap<Module, Source>;

/// Reads src/ (without src/bin) into a [`Tree`].
fn read_tree(src: &Path) -> Tree {
    let mut tree = Tree::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(src).unwrap();
            if path.is_dir() && rel != Path::new("bin") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut parts: Vec<String> = rel
                    .with_extension("")
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .filter(|p| p != "mod")
                    .collect();
                if parts == ["lib"] {
                    parts.clear();
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let file = format!("src/{}", rel.display());
                tree.insert(parts.join("::"), Source { file, text });
            }
        }
    }
    tree
}

/// What the rules read in one file (its `#[cfg(test)]` items left out).
#[derive(Default)]
struct Facts {
    /// Child modules declared as `mod x;`.
    children: BTreeSet<String>,
    /// Every `use` path and every path of two segments or more: its
    /// segments and the text that shows it in a message.
    paths: Vec<(Vec<String>, String)>,
    /// Types given inherent methods here (`impl T { … }`).
    impls: BTreeSet<String>,
    /// The methods of this file's inherent `impl LiveRing` blocks.
    live_ring_methods: BTreeSet<String>,
    /// The names of the methods this file calls.
    calls: BTreeSet<String>,
    /// Whether it reaches a kernel-shared ring word.
    ring_word: bool,
}

fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The paths of a use tree, each from its first segment (`self` in a
/// group stays a segment; a glob names its prefix).
fn use_paths(tree: &UseTree, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let with = |name: &syn::Ident| [prefix.clone(), vec![name.to_string()]].concat();
    match tree {
        UseTree::Path(p) => use_paths(&p.tree, with(&p.ident), out),
        UseTree::Name(n) => out.push(with(&n.ident)),
        UseTree::Rename(r) => out.push(with(&r.ident)),
        UseTree::Glob(_) => out.push(prefix),
        UseTree::Group(g) => g
            .items
            .iter()
            .for_each(|t| use_paths(t, prefix.clone(), out)),
    }
}

fn is_ring_word(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => is_ring_word(&p.expr),
        Expr::Field(f) => {
            matches!(&f.member, Member::Named(n) if RING_WORDS.iter().any(|w| n == w))
        }
        _ => false,
    }
}

/// Whether an expression names a ring word anywhere inside.
fn mentions_ring_word(e: &Expr) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_expr(&mut self, e: &'ast Expr) {
            self.0 |= is_ring_word(e);
            visit::visit_expr(self, e);
        }
    }
    let mut f = Finder(false);
    f.visit_expr(e);
    f.0
}

impl Facts {
    fn path(&mut self, segments: Vec<String>) {
        self.ring_word |= segments.windows(2).any(|w| w == ["AtomicU32", "from_ptr"]);
        if segments.len() > 1 {
            let text = segments.join("::");
            self.paths.push((segments, text));
        }
    }

    /// The tokens of a macro call: as expressions or items where they are
    /// Rust; otherwise each piece between `,`, `;` and `=>` that is an
    /// expression is checked as one, and the rest still names paths.
    fn tokens(&mut self, tokens: TokenStream) {
        let exprs = Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        if let Ok(exprs) = exprs.parse2(tokens.clone()) {
            return exprs.iter().for_each(|e| self.visit_expr(e));
        }
        if let Ok(file) = syn::parse2::<syn::File>(tokens.clone()) {
            return self.visit_file(&file);
        }
        let is =
            |t: Option<&TokenTree>, c| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
        let mut piece = Vec::new();
        let mut trees = tokens.into_iter().peekable();
        while let Some(t) = trees.next() {
            let arrow = is(Some(&t), '=')
                && matches!(&t, TokenTree::Punct(p) if p.spacing() == Spacing::Joint)
                && is(trees.peek(), '>');
            if arrow {
                trees.next();
            }
            if arrow || is(Some(&t), ',') || is(Some(&t), ';') {
                self.piece(std::mem::take(&mut piece));
            } else {
                piece.push(t);
            }
        }
        self.piece(piece);
    }

    fn piece(&mut self, piece: Vec<TokenTree>) {
        if let Ok(e) = syn::parse2::<Expr>(piece.iter().cloned().collect()) {
            return self.visit_expr(&e);
        }
        let (mut segments, mut colons) = (Vec::new(), 0);
        for t in piece {
            match t {
                TokenTree::Ident(i) if segments.is_empty() || colons == 2 => {
                    segments.push(i.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !segments.is_empty() && colons < 2 => {
                    colons += 1
                }
                other => {
                    self.path(std::mem::take(&mut segments));
                    colons = 0;
                    match other {
                        TokenTree::Ident(i) => segments.push(i.to_string()),
                        TokenTree::Group(g) => self.tokens(g.stream()),
                        _ => {}
                    }
                }
            }
        }
        self.path(segments);
    }
}

impl<'ast> Visit<'ast> for Facts {
    fn visit_item(&mut self, item: &'ast Item) {
        if !test_only(item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        let attrs = match item {
            ImplItem::Const(i) => &i.attrs,
            ImplItem::Fn(i) => &i.attrs,
            ImplItem::Type(i) => &i.attrs,
            ImplItem::Macro(i) => &i.attrs,
            _ => &[][..],
        };
        if !test_only(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_none() {
            self.children.insert(m.ident.to_string());
        }
        visit::visit_item_mod(self, m);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&u.tree, Vec::new(), &mut paths);
        for p in paths {
            let text = format!("use {}", p.join("::"));
            self.paths.push((p, text));
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.path(path.segments.iter().map(|s| s.ident.to_string()).collect());
        visit::visit_path(self, path);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if let (None, syn::Type::Path(t)) = (&i.trait_, &*i.self_ty) {
            let ty = t.path.segments.last().map(|s| s.ident.to_string());
            if ty.as_deref() == Some("LiveRing") {
                for item in &i.items {
                    if let ImplItem::Fn(f) = item {
                        self.live_ring_methods.insert(f.sig.ident.to_string());
                    }
                }
            }
            self.impls.extend(ty);
        }
        visit::visit_item_impl(self, i);
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                self.ring_word |=
                    POINTER_METHODS.contains(&name.as_str()) && is_ring_word(&m.receiver);
                self.calls.insert(name);
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                self.ring_word |= is_ring_word(&u.expr);
            }
            Expr::Call(c) => {
                let free_access = matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "load" || s.ident == "store"));
                self.ring_word |= free_access && c.args.iter().any(mentions_ring_word);
            }
            _ => {}
        }
        visit::visit_expr(self, e);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        visit::visit_macro(self, m);
        self.tokens(m.tokens.clone());
    }
}

/// The module path (from the crate root) a path of `module` names, if it
/// names one of this crate: `crate::`, `self::`, `super::` or a child.
fn absolute(module: &str, children: &BTreeSet<String>, path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let mut rest = match path.first()?.as_str() {
        "crate" => {
            base.clear();
            &path[1..]
        }
        "self" => &path[1..],
        "super" => path,
        name if children.contains(name) => return Some([base, path.to_vec()].concat()),
        _ => return None,
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    Some([base, rest.to_vec()].concat())
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
struct Edge {
    from: Module,
    to: Module,
    via: String,
}

/// A cycle of the graph of `edges` (from, to), as its modules in order
/// (the first repeated at the end), if there is one.
fn find_cycle<'a>(edges: &[(&'a str, &'a str)]) -> Option<Vec<Module>> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for &(from, to) in edges {
        next.entry(from).or_default().insert(to);
    }
    fn visit<'a>(
        m: &'a str,
        next: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        done: &mut BTreeSet<&'a str>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<Module>> {
        if let Some(from) = path.iter().position(|&p| p == m) {
            return Some(
                path[from..]
                    .iter()
                    .chain([&m])
                    .map(|s| s.to_string())
                    .collect(),
            );
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        let found = next
            .get(m)
            .into_iter()
            .flatten()
            .find_map(|n| visit(n, next, done, path));
        path.pop();
        found
    }
    let mut done = BTreeSet::new();
    next.keys()
        .find_map(|m| visit(m, &next, &mut done, &mut Vec::new()))
}

/// Everything wrong with `tree` under `layers` (empty when the layering
/// holds).
fn check(layers: &[&[&str]], tree: &Tree) -> Vec<String> {
    let mut problems = Vec::new();
    let file = |m: &str| tree[m].file.clone();
    let mut layer_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (n, names) in layers.iter().enumerate() {
        for &name in *names {
            if layer_of.insert(name, n + 1).is_some() {
                problems.push(format!(
                    "tests/layering.rs: LAYERS lists `{name}` in two layers"
                ));
            }
        }
    }
    let mut facts: BTreeMap<&str, Facts> = BTreeMap::new();
    for (module, source) in tree {
        let mut f = Facts::default();
        match syn::parse_file(&source.text) {
            Ok(ast) => f.visit_file(&ast),
            Err(e) => problems.push(format!("{}: does not parse: {e}", source.file)),
        }
        facts.insert(module.as_str(), f);
    }
    for m in tree.keys().filter(|m| !m.is_empty() && !m.contains("::")) {
        if !layer_of.contains_key(m.as_str()) {
            problems.push(format!(
                "{}: module `{m}` is in no layer of LAYERS in tests/layering.rs",
                file(m)
            ));
        }
    }
    let mut edges = Vec::new();
    for (&module, f) in &facts {
        for (path, via) in &f.paths {
            let Some(abs) = absolute(module, &f.children, path) else {
                continue;
            };
            let to = target_module(&abs, tree);
            if to != module {
                edges.push(Edge {
                    from: module.to_string(),
                    to,
                    via: via.clone(),
                });
            }
        }
    }
    let mut reported = BTreeSet::new();
    for e in edges.iter().filter(|e| !e.from.is_empty()) {
        let (from, to) = (top_level(&e.from), top_level(&e.to));
        if !reported.insert((&e.from, &e.to)) || (from == to && !e.to.is_empty()) {
            continue;
        }
        if e.to.is_empty() {
            problems.push(format!(
                "{}: `{}` goes through the crate root; name the module",
                file(&e.from),
                e.via
            ));
        } else if let (Some(&lf), Some(&lt)) = (layer_of.get(from), layer_of.get(to)) {
            if lt >= lf {
                problems.push(format!(
                    "{}: {} (layer {lf}) imports {} (layer {lt}) with `{}`: a module may only \
                     import from earlier layers",
                    file(&e.from),
                    e.from,
                    e.to,
                    e.via
                ));
            }
        }
    }
    // Every cycle, one at a time: report it, cut its last hop, look again.
    let mut remaining: Vec<(&str, &str)> = edges.iter().map(|e| (&*e.from, &*e.to)).collect();
    while let Some(cycle) = find_cycle(&remaining) {
        let hops: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                let e = edges
                    .iter()
                    .find(|e| e.from == w[0] && e.to == w[1])
                    .unwrap();
                format!("{} -> {} (`{}` in {})", w[0], w[1], e.via, file(&w[0]))
            })
            .collect();
        problems.push(format!("module cycle: {}", hops.join(", ")));
        let (a, b) = (&cycle[cycle.len() - 2], &cycle[cycle.len() - 1]);
        remaining.retain(|&(from, to)| !(from == a && to == b));
    }
    for (&module, f) in &facts {
        if !RING_METHOD_MODULES.contains(&module) {
            for ty in RING_TYPES.iter().filter(|ty| f.impls.contains(**ty)) {
                problems.push(format!(
                    "{}: `impl {ty}`: ring methods live in ring.rs and queue.rs; offer a \
                     function that takes the ring",
                    file(module)
                ));
            }
        }
        if module != "ring" && f.ring_word {
            problems.push(format!(
                "{}: reaches a kernel-shared ring word directly; use ring.rs's accessors",
                file(module)
            ));
        }
    }
    if let (Some(queue), Some(&queue_layer)) = (facts.get("queue"), layer_of.get("queue")) {
        for (&module, f) in &facts {
            if layer_of
                .get(top_level(module))
                .is_some_and(|&l| l < queue_layer)
            {
                for name in f.calls.intersection(&queue.live_ring_methods) {
                    problems.push(format!(
                        "{}: calls `.{name}(…)`, a method of queue.rs (a later layer)",
                        file(module)
                    ));
                }
            }
        }
    }
    problems
}

/// The layers src/lib.rs's documentation lists: lines `//! N. [`a`],
/// `b` — …` (the names before the dash, possibly wrapped).
fn documented_layers(lib_rs: &str) -> Vec<BTreeSet<String>> {
    let mut items: Vec<String> = Vec::new();
    let mut open = false;
    for line in lib_rs.lines() {
        let doc = line.strip_prefix("//!").map(str::trim).unwrap_or("");
        let numbered = doc
            .split_once(". ")
            .filter(|(n, _)| n.parse::<u32>().is_ok());
        if let Some((_, rest)) = numbered {
            items.push(rest.to_string());
            open = true;
        } else if doc.is_empty() {
            open = false;
        } else if open {
            items.last_mut().unwrap().push_str(&format!(" {doc}"));
        }
    }
    let names = |item: &String| {
        let head = item.split(" — ").next().unwrap_or("");
        head.split('`')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect()
    };
    items.iter().map(names).collect()
}

fn real_tree() -> Tree {
    read_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn the_module_graph_of_src_follows_the_layers() {
    let tree = real_tree();
    assert!(tree.len() > 10, "src/ has {} modules", tree.len());
    let problems = check(LAYERS, &tree);
    assert!(
        problems.is_empty(),
        "the layering of src/ is broken:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn src_lib_rs_documents_the_same_layers() {
    let tree = real_tree();
    let documented = documented_layers(&tree[""].text);
    let existing: Vec<BTreeSet<String>> = LAYERS
        .iter()
        .map(|l| {
            l.iter()
                .filter(|m| tree.contains_key(**m))
                .map(|m| m.to_string())
                .collect()
        })
        .filter(|l: &BTreeSet<String>| !l.is_empty())
        .collect();
    assert_eq!(
        documented, existing,
        "src/lib.rs's list of layers (left) and LAYERS in tests/layering.rs (right, modules \
         that exist) disagree: edit both"
    );
}

#[test]
fn the_documented_layers_are_read_with_wrapped_lines() {
    let doc = "//! Layers:\n//!\n//! 1. [`a`], `b` — the first; not `c`.\n\
               //! 2. [`d`], [`e`],\n//!    [`f`] — wrapped.\n//!\n//! Not a layer: `g`.\n";
    let want: Vec<BTreeSet<String>> = vec![
        ["a", "b"].map(String::from).into(),
        ["d", "e", "f"].map(String::from).into(),
    ];
    assert_eq!(documented_layers(doc), want);
}

/// A made-up tree: a crate root and `files`, by module.
fn fake(files: &[(&str, &str)]) -> Tree {
    let source = |m: &str, text: &str| Source {
        file: format!(
            "src/{}.rs",
            if m.is_empty() {
                "lib".into()
            } else {
                m.replace("::", "/")
            }
        ),
        text: text.to_string(),
    };
    let root = [("", "")];
    root.iter()
        .chain(files)
        .map(|(m, t)| (m.to_string(), source(m, t)))
        .collect()
}

/// A made-up case: what it shows, its layers, its files (module, text),
/// and what `check` says (one problem containing each string, no other).
type Case = (
    &'static str,
    &'static [&'static [&'static str]],
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

const CASES: &[Case] = &[
    (
        "imports from earlier layers; a listed module without a file",
        &[&["a", "planned"], &["b", "c"]],
        &[
            ("a", "pub fn f() {}\npub struct X;"),
            ("b", "use crate::a::{self as other, f as g, *};\nfn h(_: crate::a::X) { crate::a::f() }"),
            ("c", "use crate::{a::{self, f}};\nfn h() { assert!(super::a::f() == ()); }"),
        ],
        &[],
    ),
    (
        "an import against the order",
        &[&["a"], &["b"]],
        &[("a", "fn f() { crate::b::g() }"), ("b", "pub fn g() {}")],
        &["src/a.rs: a (layer 1) imports b (layer 2) with `crate::b::g`: a module may only"],
    ),
    (
        "an import within one layer",
        &[&["a", "b"]],
        &[("a", "use crate::b::X;"), ("b", "pub struct X;")],
        &["src/a.rs: a (layer 1) imports b (layer 1) with `use crate::b::X`"],
    ),
    (
        "every kind of path",
        &[&["u", "s", "t", "g", "m", "n", "k", "w"], &["b"]],
        &[
            ("b", "pub fn g() {}\npub struct X;"),
            ("u", "use crate::b::X;"),
            ("s", "fn f() { super::b::g() }"),
            ("t", "fn f(_: &crate::b::X) {}"),
            ("g", "const N: usize = core::mem::size_of::<crate::b::X>();"),
            ("m", "fn f() { assert!(crate::b::g() == ()); }"),
            ("n", "fn f() { own_syntax!(nonnull p; ring => crate::b::g(ring)); }"),
            ("k", "own_syntax! { $crate::b::g }"),
            ("w", "mod kid;"),
            ("w::kid", "fn f() { super::super::b::g() }"),
        ],
        &[
            "u (layer 1) imports b (layer 2) with `use crate::b::X`",
            "s (layer 1) imports b (layer 2) with `super::b::g`",
            "t (layer 1) imports b (layer 2) with `crate::b::X`",
            "g (layer 1) imports b (layer 2) with `crate::b::X`",
            "m (layer 1) imports b (layer 2) with `crate::b::g`",
            "n (layer 1) imports b (layer 2) with `crate::b::g`",
            "k (layer 1) imports b (layer 2) with `crate::b::g`",
            "src/w/kid.rs: w::kid (layer 1) imports b (layer 2) with `super::super::b::g`",
        ],
    ),
    (
        "a path through the crate root",
        &[&["a"]],
        &[("a", "use crate::Reexported;")],
        &["src/a.rs: `use crate::Reexported` goes through the crate root; name the module"],
    ),
    (
        "a cycle through a submodule",
        &[&["a"]],
        &[("a", "mod kid;\nfn f() { kid::g() }\npub fn h() {}"), ("a::kid", "pub fn g() { super::h() }")],
        &["module cycle: a -> a::kid (`kid::g` in src/a.rs), a::kid -> a (`super::h` in src/a/kid.rs)"],
    ),
    (
        "comments, strings and tests do not count",
        &[&["a"], &["b"]],
        &[
            (
                "a",
                "// see crate::b::g\n/// [`crate::b`]\nconst S: &str = \"crate::b::g\";\nconst C: char = '\"';\n\
                 #[cfg(test)]\nmod tests { use crate::b::g; }\n#[cfg(test)]\nfn t() { crate::b::g() }\n\
                 struct X;\nimpl X {\n    #[cfg(test)]\n    fn t() { crate::b::g() }\n}",
            ),
            ("b", "pub fn g() {}"),
        ],
        &[],
    ),
    (
        "a module in no layer",
        &[&["a"]],
        &[("a", ""), ("stray", "")],
        &["src/stray.rs: module `stray` is in no layer of LAYERS"],
    ),
    ("a module in two layers", &[&["a"], &["a"]], &[("a", "")], &["LAYERS lists `a` in two layers"]),
    (
        "ring methods, queue.rs's methods and ring words",
        &[&["ring"], &["stats", "setup", "env", "lock", "register"], &["queue"], &["ffi"]],
        &[
            ("ring", "pub struct LiveRing;\nimpl LiveRing { pub fn head(&self) -> u32 { unsafe { *self.cq.khead } } }"),
            (
                "stats",
                "use crate::ring::LiveRing;\nimpl LiveRing { fn count(&self) { self.flush_sq(); } }\n\
                 fn peek(r: &LiveRing) -> u32 { unsafe { *r.cq.khead } }",
            ),
            ("setup", "fn tail(r: &LiveRing) -> u32 { unsafe { load(r.sq.ktail, Relaxed) } }"),
            ("env", "fn slot(r: &LiveRing) -> *mut u32 { unsafe { r.sq.array.add(1) } }"),
            ("lock", "fn word(p: *mut u32) { let _ = unsafe { AtomicU32::from_ptr(p) }; }"),
            ("register", "fn peek(r: &LiveRing) { assert!(unsafe { *(r.cq.khead) } != 0); }"),
            (
                "queue",
                "use crate::ring::LiveRing;\nimpl LiveRing { fn flush_sq(&self) {} }\n\
                 impl Drop for LiveRing { fn drop(&mut self) {} }",
            ),
            ("ffi", "fn f(r: &LiveRing) { r.flush_sq(); r.cq.khead.is_null(); }"),
        ],
        &[
            "src/stats.rs: `impl LiveRing`: ring methods live in ring.rs and queue.rs",
            "src/stats.rs: calls `.flush_sq(…)`, a method of queue.rs (a later layer)",
            "src/stats.rs: reaches a kernel-shared ring word directly",
            "src/setup.rs: reaches a kernel-shared ring word",
            "src/env.rs: reaches a kernel-shared ring word",
            "src/lock.rs: reaches a kernel-shared ring word",
            "src/register.rs: reaches a kernel-shared ring word",
        ],
    ),
];

#[test]
fn the_checker_finds_what_each_made_up_tree_breaks() {
    for (what, layers, files, want) in CASES {
        let problems = check(layers, &fake(files));
        for w in *want {
            assert!(
                problems.iter().any(|p| p.contains(w)),
                "{what}: no `{w}` in {problems:#?}"
            );
        }
        assert_eq!(problems.len(), want.len(), "{what}: {problems:#?}");
    }
}
