//! The module layering of src/, checked on syn's syntax tree of every file
//! under src/ (the rsuring-stat binary aside; `#[cfg(test)]` items may use
//! anything). Every `use` path and every other path of two segments or more
//! (in code, types, and the tokens of macro calls, read by syn as items,
//! expressions and types wherever they are some) is an edge of the module
//! graph, which must be acyclic and go from a later layer of [`LAYERS`] to
//! an earlier one; a path through the crate root must name its module.
//! Also: ring methods (`impl io_uring`, `impl LiveRing`) live only in ring.rs
//! and queue.rs, no module below queue calls a method of queue.rs's `impl
//! LiveRing` (a method call is an edge no import shows), and no file but
//! ring.rs reaches a kernel-shared ring word. Each rule is also run on small
//! made-up trees ([`CASES`]), so that it is known to fail when it should.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream, Parser};
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

/// The ring types, whose methods only ring.rs and queue.rs define.
const RING_TYPES: [&str; 2] = ["io_uring", "LiveRing"];
/// The fields of `struct io_uring_sq`/`io_uring_cq` that point into memory
/// the kernel shares; only ring.rs may dereference them, hand them to a
/// free `load`/`store`, or call one of `POINTER_METHODS` on them.
const RING_WORDS: &str = "khead ktail kflags kring_mask kring_entries kdropped koverflow array";
const POINTER_METHODS: &str = "add offset read write as_ref as_mut";

/// src/ by module (`stats::slot` for src/stats/slot.rs, `ffi` for
/// src/ffi/mod.rs, "" for the crate root): its file (for messages), text.
type Tree = BTreeMap<String, (String, String)>;

/// Reads src/ (without src/bin) into a [`Tree`].
fn read_tree(src: &Path) -> Tree {
    let (mut tree, mut dirs) = (Tree::new(), vec![src.to_path_buf()]);
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(src).unwrap();
            if path.is_dir() && rel != Path::new("bin") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let parts = rel.with_extension("");
                let parts = parts.iter().filter_map(|p| p.to_str());
                let module: Vec<_> = parts.filter(|&p| p != "mod").collect();
                let module = if module == ["lib"] { vec![] } else { module };
                let text = std::fs::read_to_string(&path).unwrap();
                let file = format!("src/{}", rel.display());
                tree.insert(module.join("::"), (file, text));
            }
        }
    }
    tree
}

/// What the rules read in one file (its `#[cfg(test)]` items left out).
#[derive(Default)]
struct Facts {
    children: BTreeSet<String>,          // modules declared as `mod x;`
    paths: Vec<(Vec<String>, String)>,   // segments, text for messages
    impls: BTreeSet<String>,             // types given inherent methods
    live_ring_methods: BTreeSet<String>, // of inherent `impl LiveRing`s
    calls: BTreeSet<String>,             // names of the methods called
    ring_word: bool,                     // reaches a kernel-shared word
    in_access: usize,                    // inside a free `load`/`store`
}

/// The attributes of an item of `$enum`, for the variants listed.
macro_rules! attrs {
    ($item:expr, $enum:ident: $($v:ident)*) => {
        match $item { $($enum::$v(i) => &i.attrs[..],)* _ => &[] }
    };
}

fn test_only(attrs: &[Attribute]) -> bool {
    let test = |a: &Attribute| a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test");
    attrs.iter().any(|a| a.path().is_ident("cfg") && test(a))
}

/// The paths of a use tree, each from its first segment (`self` in a
/// group stays a segment; a glob names its prefix), and their texts.
fn use_paths(tree: &UseTree, prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let with = |name: &syn::Ident| [prefix.clone(), vec![name.to_string()]].concat();
    let path = match tree {
        UseTree::Path(p) => return use_paths(&p.tree, with(&p.ident), out),
        UseTree::Name(n) => with(&n.ident),
        UseTree::Rename(r) => with(&r.ident),
        UseTree::Glob(_) => prefix,
        UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix.clone(), out);
            }
            return;
        }
    };
    let text = format!("use {}", path.join("::"));
    out.push((path, text));
}

fn is_ring_word(e: &Expr) -> bool {
    let word = |n: &syn::Ident| RING_WORDS.split(' ').any(|w| n == w);
    match e {
        Expr::Paren(p) => is_ring_word(&p.expr),
        Expr::Field(f) => matches!(&f.member, Member::Named(n) if word(n)),
        _ => false,
    }
}

/// A `T` at the start of `tokens`, and the tokens after it.
fn then_rest<T: Parse>(tokens: &TokenStream) -> Option<(T, TokenStream)> {
    let parser = |input: ParseStream| Ok((input.parse()?, input.parse()?));
    parser.parse2(tokens.clone()).ok()
}

impl Facts {
    /// The tokens of a macro call, whatever its syntax: from each place,
    /// the longest item, else expression, else type that syn reads there
    /// is visited; where none is, one token is skipped (a group's tokens
    /// are read the same way).
    fn tokens(&mut self, mut tokens: TokenStream) {
        while !tokens.is_empty() {
            tokens = if let Some((item, rest)) = then_rest::<Item>(&tokens) {
                self.visit_item(&item);
                rest
            } else if let Some((expr, rest)) = then_rest::<Expr>(&tokens) {
                self.visit_expr(&expr);
                rest
            } else if let Some((ty, rest)) = then_rest::<syn::Type>(&tokens) {
                self.visit_type(&ty);
                rest
            } else {
                let mut trees = tokens.into_iter();
                if let Some(TokenTree::Group(g)) = trees.next() {
                    self.tokens(g.stream());
                }
                trees.collect()
            };
        }
    }
}

impl<'ast> Visit<'ast> for Facts {
    fn visit_item(&mut self, item: &'ast Item) {
        let attrs = attrs!(item, Item: Const Enum ExternCrate ForeignMod Fn Impl Macro Mod Static
            Struct Trait TraitAlias Type Union Use);
        if !test_only(attrs) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        if !test_only(attrs!(item, ImplItem: Const Fn Type Macro)) {
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
        use_paths(&u.tree, Vec::new(), &mut self.paths);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.ring_word |= segments.windows(2).any(|w| w == ["AtomicU32", "from_ptr"]);
        if segments.len() > 1 {
            let text = segments.join("::");
            self.paths.push((segments, text));
        }
        visit::visit_path(self, path);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if let (None, syn::Type::Path(t)) = (&i.trait_, &*i.self_ty) {
            let ty = t.path.segments.last().map(|s| s.ident.to_string());
            for item in i.items.iter().filter(|_| ty.as_deref() == Some("LiveRing")) {
                if let ImplItem::Fn(f) = item {
                    self.live_ring_methods.insert(f.sig.ident.to_string());
                }
            }
            self.impls.extend(ty);
        }
        visit::visit_item_impl(self, i);
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        let last_name = |f: &Expr| match f {
            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        match e {
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                let pointer = POINTER_METHODS.split(' ').any(|p| p == name);
                self.ring_word |= pointer && is_ring_word(&m.receiver);
                self.calls.insert(name);
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                self.ring_word |= is_ring_word(&u.expr)
            }
            Expr::Field(_) => self.ring_word |= self.in_access > 0 && is_ring_word(e),
            Expr::Call(c) if matches!(last_name(&c.func).as_deref(), Some("load" | "store")) => {
                self.in_access += 1;
                visit::visit_expr(self, e);
                self.in_access -= 1;
                return;
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
    let mut base: Vec<&str> = module.split_terminator("::").collect();
    let mut rest = match path.first()?.as_str() {
        "crate" => {
            base.clear();
            &path[1..]
        }
        "self" => &path[1..],
        name if name == "super" || children.contains(name) => path,
        _ => return None,
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    let base = base.into_iter().map(String::from);
    Some(base.chain(rest.to_vec()).collect())
}

/// The module a path from the crate root lands in: its longest prefix that
/// is a module of the tree ("" for the crate root itself).
fn target_module(path: &[String], tree: &Tree) -> String {
    let mut prefixes = (1..=path.len()).rev().map(|n| path[..n].join("::"));
    prefixes.find(|m| tree.contains_key(m)).unwrap_or_default()
}

fn top_level(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// A cycle of the graph of `edges` (from, to), as its modules in order
/// (the first repeated at the end), if there is one: a depth-first walk.
fn find_cycle(edges: &[(&str, &str)]) -> Option<Vec<String>> {
    let (mut done, mut path) = (BTreeSet::new(), Vec::new());
    fn walk<'a>(
        m: &'a str,
        edges: &[(&'a str, &'a str)],
        (done, path): (&mut BTreeSet<&'a str>, &mut Vec<&'a str>),
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|&p| p == m) {
            let cycle = path[at..].iter().chain([&m]);
            return Some(cycle.map(|s| s.to_string()).collect());
        }
        done.insert(m).then_some(())?;
        path.push(m);
        let mut next = edges.iter().filter(|e| e.0 == m);
        let found = next.find_map(|e| walk(e.1, edges, (&mut *done, &mut *path)));
        path.pop();
        found
    }
    let mut starts = edges.iter().map(|e| e.0);
    starts.find_map(|m| walk(m, edges, (&mut done, &mut path)))
}

/// Everything wrong with `tree` under `layers` (empty when the layering
/// holds).
fn check<L: AsRef<[&'static str]>>(layers: &[L], tree: &Tree) -> Vec<String> {
    let mut problems = Vec::new();
    let file = |m: &str| tree[m].0.clone();
    let mut layer_of = BTreeMap::new();
    for (n, layer) in layers.iter().enumerate() {
        for &name in layer.as_ref() {
            if layer_of.insert(name, n + 1).is_some() {
                let p = format!("tests/layering.rs: LAYERS lists `{name}` in two layers");
                problems.push(p);
            }
        }
    }
    let mut facts: BTreeMap<&str, Facts> = BTreeMap::new();
    for (module, (file, text)) in tree {
        let f = facts.entry(module).or_default();
        match syn::parse_file(text) {
            Ok(ast) => f.visit_file(&ast),
            Err(e) => problems.push(format!("{file}: does not parse: {e}")),
        }
    }
    for m in tree.keys().filter(|m| !m.is_empty() && !m.contains("::")) {
        if !layer_of.contains_key(m.as_str()) {
            let in_no = "is in no layer of LAYERS in tests/layering.rs";
            problems.push(format!("{}: module `{m}` {in_no}", file(m)));
        }
    }
    // Every edge: from, to, and the path that makes it.
    let mut edges: Vec<(&str, String, &str)> = Vec::new();
    for (&from, f) in &facts {
        for (path, via) in &f.paths {
            let to = absolute(from, &f.children, path).map(|abs| target_module(&abs, tree));
            edges.extend(to.filter(|to| to != from).map(|to| (from, to, &**via)));
        }
    }
    let mut reported = BTreeSet::new();
    for (from, to, via) in edges.iter().filter(|e| !e.0.is_empty()) {
        let (lf, lt) = (top_level(from), top_level(to));
        if !reported.insert((from, to)) || (lf == lt && !to.is_empty()) {
            continue;
        }
        let f = file(from);
        if to.is_empty() {
            let root = "goes through the crate root; name the module";
            problems.push(format!("{f}: `{via}` {root}"));
        } else if let (Some(&lf), Some(&lt)) = (layer_of.get(lf), layer_of.get(lt)) {
            if lt >= lf {
                problems.push(format!(
                    "{f}: {from} (layer {lf}) imports {to} (layer {lt}) with `{via}`: a module \
                     may only import from earlier layers"
                ));
            }
        }
    }
    // Every cycle, one at a time: report it, cut its last hop, look again.
    let mut remaining: Vec<(&str, &str)> = edges.iter().map(|e| (e.0, &*e.1)).collect();
    while let Some(cycle) = find_cycle(&remaining) {
        let hop = |w: &[String]| {
            let via = edges.iter().find(|e| e.0 == w[0] && e.1 == w[1]).unwrap().2;
            format!("{} -> {} (`{via}` in {})", w[0], w[1], file(&w[0]))
        };
        let hops: Vec<String> = cycle.windows(2).map(hop).collect();
        problems.push(format!("module cycle: {}", hops.join(", ")));
        let cut = (&*cycle[cycle.len() - 2], &*cycle[cycle.len() - 1]);
        remaining.retain(|&e| e != cut);
    }
    let queue_layer = layer_of.get("queue");
    for (&module, f) in &facts {
        let f_ = file(module);
        for ty in RING_TYPES.iter().filter(|ty| f.impls.contains(**ty)) {
            if module != "ring" && module != "queue" {
                problems.push(format!(
                    "{f_}: `impl {ty}`: ring methods live in ring.rs and queue.rs; offer a \
                     function that takes the ring"
                ));
            }
        }
        if module != "ring" && f.ring_word {
            let what = "reaches a kernel-shared ring word directly; use ring.rs's accessors";
            problems.push(format!("{f_}: {what}"));
        }
        let layer = layer_of.get(top_level(module));
        let below_queue = layer.is_some() && layer < queue_layer;
        let queue = facts.get("queue").filter(|_| below_queue);
        for name in queue.iter().flat_map(|q| &q.live_ring_methods) {
            if f.calls.contains(name) {
                let what = "a method of queue.rs (a later layer)";
                problems.push(format!("{f_}: calls `.{name}(…)`, {what}"));
            }
        }
    }
    problems
}

/// The layers src/lib.rs's documentation lists: lines `//! N. [`a`],
/// `b` — …`: the names before the dash (read on until it, if wrapped).
fn documented_layers(lib_rs: &str) -> Vec<BTreeSet<String>> {
    let (mut layers, mut open) = (Vec::<BTreeSet<String>>::new(), false);
    for doc in lib_rs.lines().filter_map(|l| l.strip_prefix("//!")) {
        let mut text = doc.trim();
        let numbered = text.split_once(". ").filter(|p| p.0.parse::<u8>().is_ok());
        if let Some((_, rest)) = numbered {
            (text, open) = (rest, true);
            layers.push(BTreeSet::new());
        }
        if open {
            let head = text.split(" — ").next().unwrap_or_default();
            let names = head.split('`').skip(1).step_by(2).map(String::from);
            layers.last_mut().unwrap().extend(names);
            open = !text.is_empty() && !text.contains(" — ");
        }
    }
    layers
}

fn real_tree() -> Tree {
    read_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn the_module_graph_of_src_follows_the_layers() {
    let tree = real_tree();
    assert!(tree.len() > 10, "src/ has {} modules", tree.len());
    let problems = check(LAYERS, &tree);
    let problems = problems.join("\n  ");
    assert!(
        problems.is_empty(),
        "the layering of src/ is broken:\n  {problems}"
    );
}

#[test]
fn src_lib_rs_documents_the_same_layers() {
    let tree = real_tree();
    let exists = |l: &&[&str]| -> BTreeSet<String> {
        let names = l.iter().filter(|m| tree.contains_key(**m));
        names.map(|m| m.to_string()).collect()
    };
    let existing = LAYERS.iter().map(exists).filter(|l| !l.is_empty());
    assert_eq!(
        documented_layers(&tree[""].1),
        existing.collect::<Vec<_>>(),
        "src/lib.rs's list of layers (left) and LAYERS in tests/layering.rs (right, modules \
         that exist) disagree: edit both"
    );
}

#[test]
fn the_documented_layers_are_read_with_wrapped_lines() {
    let doc = "//! Layers:\n//!\n//! 1. [`a`], `b` — the first; not `c`.\n\
               //! 2. [`d`], [`e`],\n//!    [`f`] — wrapped, not `h`.\n//!\n//! Not a layer: `g`.\n";
    let want = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        documented_layers(doc),
        [want(&["a", "b"]), want(&["d", "e", "f"])]
    );
}

/// A made-up case: what it shows, its layers (`|` between layers), its
/// files (module, text; the crate root is empty), and what `check` says
/// (one problem containing each string, no other).
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

#[rustfmt::skip]
const CASES: &[Case] = &[
    ("imports from earlier layers; a listed module without a file", "a planned | b c", &[
        ("a", "pub fn f() {}\npub struct X;"),
        ("b", "use crate::a::{self as other, f as g, *};\nfn h(_: crate::a::X) { crate::a::f() }"),
        ("c", "use crate::{a::{self, f}};\nfn h() { assert!(super::a::f() == ()); }"),
    ], &[]),
    ("an import against the order", "a | b",
        &[("a", "fn f() { crate::b::g() }"), ("b", "pub fn g() {}")],
        &["src/a.rs: a (layer 1) imports b (layer 2) with `crate::b::g`: a module may only"]),
    ("an import within one layer", "a b", &[("a", "use crate::b::X;"), ("b", "pub struct X;")],
        &["src/a.rs: a (layer 1) imports b (layer 1) with `use crate::b::X`"]),
    ("every kind of path", "u s t g m n k y w | b", &[
        ("b", "pub fn g() {}\npub struct X;"),
        ("u", "use crate::b::X;"),
        ("s", "fn f() { super::b::g() }"),
        ("t", "fn f(_: &crate::b::X) {}"),
        ("g", "const N: usize = core::mem::size_of::<crate::b::X>();"),
        ("m", "fn f() { assert!(crate::b::g() == ()); }"),
        ("n", "fn f() { own_syntax!(nonnull p; ring => crate::b::g(ring)); }"),
        ("k", "own_syntax! { $crate::b::g }"),
        ("y", "macro_rules! y { ($e:expr) => { fn f(x: Vec<crate::b::X>) { $e } } }"),
        ("w", "mod kid;"),
        ("w::kid", "fn f() { super::super::b::g() }"),
    ], &[
        "u (layer 1) imports b (layer 2) with `use crate::b::X`",
        "s (layer 1) imports b (layer 2) with `super::b::g`",
        "t (layer 1) imports b (layer 2) with `crate::b::X`",
        "g (layer 1) imports b (layer 2) with `crate::b::X`",
        "m (layer 1) imports b (layer 2) with `crate::b::g`",
        "n (layer 1) imports b (layer 2) with `crate::b::g`",
        "k (layer 1) imports b (layer 2) with `crate::b::g`",
        "y (layer 1) imports b (layer 2) with `crate::b::X`",
        "src/w/kid.rs: w::kid (layer 1) imports b (layer 2) with `super::super::b::g`",
    ]),
    ("a path through the crate root", "a", &[("a", "use crate::Reexported;")],
        &["src/a.rs: `use crate::Reexported` goes through the crate root; name the module"]),
    ("a cycle through a submodule", "a", &[
        ("a", "mod kid;\nfn f() { kid::g() }\npub fn h() {}"),
        ("a::kid", "pub fn g() { super::h() }"),
    ], &["module cycle: a -> a::kid (`kid::g` in src/a.rs), \
          a::kid -> a (`super::h` in src/a/kid.rs)"]),
    ("comments, strings and tests do not count", "a | b", &[
        ("a", "// see crate::b::g\n/// [`crate::b`]\nconst S: &str = \"crate::b::g\";\n\
               const C: char = '\"';\n#[cfg(test)]\nmod tests { use crate::b::g; }\n\
               #[cfg(test)]\nfn t() { crate::b::g() }\nstruct X;\n\
               impl X {\n    #[cfg(test)]\n    fn t() { crate::b::g() }\n}\n\
               own_syntax! { #[cfg(test)] fn t() { crate::b::g() } }"),
        ("b", "pub fn g() {}"),
    ], &[]),
    ("a module in no layer", "a", &[("a", ""), ("stray", "")],
        &["src/stray.rs: module `stray` is in no layer of LAYERS"]),
    ("a module in two layers", "a | a", &[("a", "")], &["LAYERS lists `a` in two layers"]),
    ("ring methods, queue.rs's methods and ring words",
        "ring | stats setup env lock register | queue | ffi", &[
        ("ring", "pub struct LiveRing;\n\
                  impl LiveRing { pub fn head(&self) -> u32 { unsafe { *self.cq.khead } } }"),
        ("stats", "use crate::ring::LiveRing;\n\
                   impl LiveRing { fn count(&self) { self.flush_sq(); } }\n\
                   fn peek(r: &LiveRing) -> u32 { unsafe { *r.cq.khead } }"),
        ("setup", "fn tail(r: &LiveRing) -> u32 { unsafe { load(r.sq.ktail, Relaxed) } }"),
        ("env", "fn slot(r: &LiveRing) -> *mut u32 { unsafe { r.sq.array.add(1) } }"),
        ("lock", "fn word(p: *mut u32) { let _ = unsafe { AtomicU32::from_ptr(p) }; }"),
        ("register", "fn peek(r: &LiveRing) { assert!(unsafe { *(r.cq.khead) } != 0); }"),
        ("queue", "use crate::ring::LiveRing;\nimpl LiveRing { fn flush_sq(&self) {} }\n\
                   impl Drop for LiveRing { fn drop(&mut self) {} }"),
        ("ffi", "fn f(r: &LiveRing) { r.flush_sq(); r.cq.khead.is_null(); }"),
    ], &[
        "src/stats.rs: `impl LiveRing`: ring methods live in ring.rs and queue.rs",
        "src/stats.rs: calls `.flush_sq(…)`, a method of queue.rs (a later layer)",
        "src/stats.rs: reaches a kernel-shared ring word directly",
        "src/setup.rs: reaches a kernel-shared ring word",
        "src/env.rs: reaches a kernel-shared ring word",
        "src/lock.rs: reaches a kernel-shared ring word",
        "src/register.rs: reaches a kernel-shared ring word",
    ]),
];

#[test]
fn the_checker_finds_what_each_made_up_tree_breaks() {
    for &(what, layers, files, want) in CASES {
        let layers = layers.split('|').map(|l| l.split_whitespace().collect());
        let source = |&(m, text): &(&str, &str)| {
            let name = m.replace("::", "/");
            let name = if m.is_empty() { "lib" } else { &name };
            (m.to_string(), (format!("src/{name}.rs"), text.to_string()))
        };
        let tree: Tree = [("", "")].iter().chain(files).map(source).collect();
        let problems = check(&layers.collect::<Vec<Vec<_>>>(), &tree);
        for w in want {
            let found = problems.iter().any(|p| p.contains(w));
            assert!(found, "{what}: no `{w}` in {problems:#?}");
        }
        assert_eq!(problems.len(), want.len(), "{what}: {problems:#?}");
    }
}
