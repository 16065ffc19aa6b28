//! One source of truth for the kernel ABI: the C headers.
//!
//! `src/uapi.rs` mirrors constants and structs of the kernel's io_uring
//! interface (`include/liburing/io_uring.h`), a few of liburing's
//! (`include/liburing.h`), system call numbers (`<sys/syscall.h>`) and two
//! facts the kernel does not export. This test reads every module-level
//! constant, type alias and struct of `src/uapi.rs`, writes a C program that
//! prints what the C side says about each one — the constant's value, the
//! type's size and alignment, each field's offset and size — compiles it
//! against `include/`, runs it, and produces from its output a Rust table:
//! [`TABLE`], committed, one row per item, each row holding the C value
//! next to a Rust expression for the same item.
//!
//! - This test fails when the committed table differs from what the C
//!   program prints now: a constant, struct or field added to (or removed
//!   from, or retyped in) `src/uapi.rs`, or a header that changed.
//!   `RSURING_BLESS=1 cargo test --release --test kernel_abi` rewrites it.
//! - `src/uapi.rs`'s unit tests `include!` the table and fail on every row
//!   whose Rust value differs from the C value (`cargo test --lib`).
//!
//! So nothing in `src/uapi.rs` goes unchecked: a new item changes the
//! generated table (this test fails until it is regenerated, and it cannot
//! be generated unless the C side knows the name), and a wrong value fails
//! the unit test.
//!
//! The few names that differ between the two sides are listed below
//! ([`C_FIELDS`], [`NOT_IN_THE_UAPI_HEADER`]), each with its reason.

mod common;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;

use common::{launch, CProgram, Link};

/// The committed table, relative to the repository root.
const TABLE: &str = "tests/kernel_abi/expected.rs";

/// Constants of src/uapi.rs that are not in the kernel's uapi header: the
/// C expression that gives each one, and where that fact comes from.
const NOT_IN_THE_UAPI_HEADER: &[(&str, &str, &str)] = &[
    (
        "LIBURING_UDATA_TIMEOUT",
        "LIBURING_UDATA_TIMEOUT",
        "liburing's, in include/liburing.h",
    ),
    (
        "KERN_MAX_ENTRIES",
        "32768",
        "the kernel's IORING_MAX_ENTRIES (io_uring/io_uring.h), not exported to user space",
    ),
    (
        "KERN_MAX_CQ_ENTRIES",
        "(2 * 32768)",
        "the kernel's IORING_MAX_CQ_ENTRIES, not exported to user space",
    ),
    (
        "NSIG_BYTES",
        "(_NSIG / 8)",
        "the kernel's signal set size, computed from <signal.h> as liburing does",
    ),
];

/// Rust fields whose C counterpart has another name (C unions that the
/// Rust side flattens to one member, or folds into reserved bytes): the
/// Rust field stands for the C members from the first to the last named.
const C_FIELDS: &[(&str, &str, &str, &str)] = &[
    // (struct, Rust field, first C member, last C member)
    ("io_uring_sqe", "op_flags", "rw_flags", "rw_flags"),
    ("io_uring_sqe", "pad2", "__pad2", "__pad2"),
    ("io_uring_restriction", "arg", "register_op", "register_op"),
    // Rust zeroes min_left and resv[5] as one reserved block.
    ("io_uring_buf_reg", "resv", "min_left", "resv"),
];

/// Structs whose Rust declaration is a smaller view of the C struct, used
/// only through pointers (never allocated or indexed by value in Rust):
/// their fields are checked, and their alignment; the Rust size may be
/// smaller than C's.
const VIEWS: &[(&str, &str)] = &[(
    "io_uring_buf_ring",
    "declared as its bufs[] array only; in C a union with the 16-byte header \
     whose last field is the tail",
)];

/// One module-level item of src/uapi.rs.
#[derive(Debug)]
enum Item {
    /// A constant: its Rust path (`IORING_SETUP_SQPOLL`, `nr::MMAP`) and
    /// the C expression of the same value.
    Const { rust: String, c: String },
    /// A type alias (`__u64`): same size and alignment in C.
    Alias { name: String },
    /// A `#[repr(C)]` struct with its fields (name, Rust type).
    Struct {
        name: String,
        fields: Vec<(String, String)>,
    },
    /// A struct declared zero-sized in Rust (a `_opaque` field only),
    /// passed through to the kernel untouched: the C header has it.
    Opaque { name: String },
}

/// The items of src/uapi.rs, in file order. System call numbers come from
/// the `mod nr` of this machine's architecture only.
fn uapi_items(source: &str) -> Vec<Item> {
    let arch_cfg = format!("#[cfg(target_arch = \"{}\")]", std::env::consts::ARCH);
    let mut items = Vec::new();
    let mut lines = source.lines().peekable();
    let mut last_attr = String::new();
    while let Some(line) = lines.next() {
        if line.starts_with("#[") {
            last_attr = line.to_string();
            continue;
        }
        let attr = std::mem::take(&mut last_attr);
        let decl = line.strip_prefix("pub ").unwrap_or(line);
        if decl.starts_with("macro_rules! passed_through {") {
            // The macro's own body (its `pub struct` lines are indented).
            for inner in lines.by_ref() {
                if inner.starts_with('}') {
                    break;
                }
            }
        } else if decl.starts_with("passed_through! {") {
            // Zero-sized pass-through structs, one `struct name;` a line.
            for inner in lines.by_ref().take_while(|l| !l.starts_with('}')) {
                let name = inner
                    .trim()
                    .strip_prefix("struct ")
                    .and_then(|n| n.strip_suffix(';'));
                let name = name.unwrap_or_else(|| panic!("src/uapi.rs: passed_through!: {inner}"));
                items.push(Item::Opaque {
                    name: name.to_string(),
                });
            }
        } else if decl.starts_with("mod tests {") && attr == "#[cfg(test)]" {
            // The unit tests that use the table.
            for inner in lines.by_ref() {
                if inner.starts_with('}') {
                    break;
                }
            }
        } else if decl.starts_with("mod nr {") {
            let mine = attr == arch_cfg;
            for inner in lines.by_ref() {
                if inner.starts_with('}') {
                    break;
                }
                if let (true, Some((name, _))) = (mine, const_decl(inner.trim())) {
                    items.push(Item::Const {
                        rust: format!("nr::{name}"),
                        c: format!("__NR_{}", name.to_lowercase()),
                    });
                }
            }
        } else if let Some((name, _)) = const_decl(decl) {
            if name == "_" {
                continue;
            }
            let c = if let Some(call) = name.strip_prefix("NR_") {
                format!("__NR_{}", call.to_lowercase())
            } else if let Some((_, c, _)) =
                NOT_IN_THE_UAPI_HEADER.iter().find(|(n, _, _)| *n == name)
            {
                c.to_string()
            } else {
                name.clone()
            };
            items.push(Item::Const { rust: name, c });
        } else if let Some(rest) = decl.strip_prefix("type ") {
            let name = rest.split([' ', '=']).next().unwrap().to_string();
            items.push(Item::Alias { name });
        } else if let Some(rest) = decl.strip_prefix("struct ") {
            let name = rest.split([' ', '{', ';', '(']).next().unwrap().to_string();
            assert!(
                rest.trim_end().ends_with('{'),
                "src/uapi.rs: struct {name}: only structs with named fields are supported"
            );
            let mut fields = Vec::new();
            for inner in lines.by_ref() {
                if inner.starts_with('}') {
                    break;
                }
                let f = inner.trim();
                if f.is_empty() || f.starts_with("//") || f.starts_with("#[") {
                    continue;
                }
                let f = f.strip_prefix("pub ").unwrap_or(f);
                let (field, ty) = f
                    .trim_end_matches(',')
                    .split_once(':')
                    .unwrap_or_else(|| panic!("src/uapi.rs: struct {name}: cannot read {inner:?}"));
                fields.push((field.trim().to_string(), ty.trim().to_string()));
            }
            if fields.len() == 1 && fields[0].0 == "_opaque" {
                items.push(Item::Opaque { name });
            } else {
                items.push(Item::Struct { name, fields });
            }
        } else {
            for kind in ["enum ", "union ", "static ", "mod ", "macro_rules!"] {
                assert!(
                    !decl.starts_with(kind) && !decl.ends_with("! {"),
                    "src/uapi.rs: `{line}`: tests/kernel_abi.rs cannot check this kind of item yet"
                );
            }
        }
    }
    items
}

/// `const NAME: TYPE = ...` → (NAME, TYPE).
fn const_decl(decl: &str) -> Option<(String, String)> {
    let rest = decl
        .strip_prefix("pub const ")
        .or_else(|| decl.strip_prefix("const "))?;
    let (name, rest) = rest.split_once(':')?;
    let ty = rest.split('=').next()?.trim();
    Some((name.trim().to_string(), ty.to_string()))
}

/// `[T; 0]` → T: a trailing array the C side declares flexible.
fn trailing_array(ty: &str) -> Option<&str> {
    ty.strip_prefix('[')?.strip_suffix("; 0]")
}

/// The C members a Rust field stands for: (first, last).
fn c_members<'a>(strukt: &str, field: &'a str) -> (&'a str, &'a str) {
    C_FIELDS
        .iter()
        .find(|(s, f, _, _)| *s == strukt && *f == field)
        .map(|(_, _, first, last)| (*first, *last))
        .unwrap_or((field, field))
}

/// The C program: prints one line per fact, `KEY VALUE...`.
fn c_program(items: &[Item]) -> String {
    let mut c = String::from(
        "/* Generated by tests/kernel_abi.rs from src/uapi.rs: what the C headers say. */\n\
         #include <liburing/io_uring.h> /* include/, ahead of any system copy */\n\
         #include <liburing.h>\n\
         #include <signal.h>\n\
         #include <stddef.h>\n\
         #include <stdio.h>\n\
         #include <sys/syscall.h>\n\
         \n\
         static void value(const char *name, int negative, long long s, unsigned long long u)\n\
         {\n\
         \tif (negative)\n\
         \t\tprintf(\"const %s %lld\\n\", name, s);\n\
         \telse\n\
         \t\tprintf(\"const %s %llu\\n\", name, u);\n\
         }\n\
         #define VALUE(name, x) value(name, (x) < 0, (long long)(x), (unsigned long long)(x))\n\
         #define MEMBER_SIZE(type, m) sizeof(((type *)0)->m)\n\
         \n\
         int main(void)\n{\n",
    );
    for item in items {
        match item {
            Item::Const { rust, c: expr } => {
                writeln!(c, "\tVALUE(\"{rust}\", {expr});").unwrap();
            }
            Item::Alias { name } => {
                writeln!(
                    c,
                    "\tprintf(\"layout {name} %zu %zu\\n\", sizeof({name}), _Alignof({name}));"
                )
                .unwrap();
            }
            Item::Opaque { name } => {
                writeln!(
                    c,
                    "\tprintf(\"layout {name} %zu %zu\\n\", sizeof(struct {name}), _Alignof(struct {name}));"
                )
                .unwrap();
            }
            Item::Struct { name, fields } => {
                let ty = format!("struct {name}");
                writeln!(
                    c,
                    "\tprintf(\"layout {name} %zu %zu\\n\", sizeof({ty}), _Alignof({ty}));"
                )
                .unwrap();
                for (field, rust_ty) in fields {
                    let (first, last) = c_members(name, field);
                    let size = if trailing_array(rust_ty).is_some() {
                        format!("MEMBER_SIZE({ty}, {first}[0])")
                    } else {
                        format!(
                            "(offsetof({ty}, {last}) + MEMBER_SIZE({ty}, {last}) - offsetof({ty}, {first}))"
                        )
                    };
                    writeln!(
                        c,
                        "\tprintf(\"field {name}.{field} %zu %zu\\n\", offsetof({ty}, {first}), {size});"
                    )
                    .unwrap();
                }
            }
        }
    }
    c.push_str("\treturn 0;\n}\n");
    c
}

/// The Rust table from the items and the C program's output.
fn rust_table(items: &[Item], c_output: &str) -> String {
    let facts: HashMap<(&str, &str), Vec<&str>> = c_output
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(((words.next()?, words.next()?), words.collect()))
        })
        .collect();
    let fact = |kind: &str, name: &str| -> Vec<&str> {
        facts
            .get(&(kind, name))
            .unwrap_or_else(|| panic!("the C program printed nothing for {kind} {name}"))
            .clone()
    };
    let arch = std::env::consts::ARCH;
    let (mut consts, mut syscalls, mut layouts, mut views, mut fields, mut opaque): (
        String,
        String,
        String,
        String,
        String,
        String,
    ) = Default::default();
    // (type, size in C, size in Rust, alignment in C, alignment in Rust)
    let layout_row = |name: &str| {
        let v = fact("layout", name);
        format!(
            "({name:?}, {}, size_of::<{name}>(), {}, align_of::<{name}>())",
            v[0], v[1]
        )
    };
    let push = |s: &mut String, row: String| {
        s.push_str("    ");
        s.push_str(&row);
        s.push_str(",\n");
    };
    for item in items {
        match item {
            Item::Const { rust, c } => {
                let v = fact("const", rust)[0];
                let shown = if c == rust {
                    rust.clone()
                } else {
                    format!("{rust} (C: {c})")
                };
                let row = format!("({shown:?}, {v}, {rust} as i128)");
                if rust.starts_with("nr::") {
                    push(&mut syscalls, row);
                } else {
                    push(&mut consts, row);
                }
            }
            Item::Alias { name } | Item::Opaque { name } => {
                let table = if matches!(item, Item::Opaque { .. }) {
                    &mut opaque
                } else {
                    &mut layouts
                };
                push(table, layout_row(name));
            }
            Item::Struct { name, fields: fs } => {
                let table = if VIEWS.iter().any(|(n, _)| n == name) {
                    &mut views
                } else {
                    &mut layouts
                };
                push(table, layout_row(name));
                for (field, ty) in fs {
                    let v = fact("field", &format!("{name}.{field}"));
                    let (first, last) = c_members(name, field);
                    let mut shown = format!("{name}.{field}");
                    if (first, last) != (field.as_str(), field.as_str()) {
                        if first == last {
                            write!(shown, " (C: {first})").unwrap();
                        } else {
                            write!(shown, " (C: {first} to {last})").unwrap();
                        }
                    }
                    let rust_size = match trailing_array(ty) {
                        Some(elem) => {
                            shown.push_str(" (one element)");
                            format!("size_of::<{elem}>()")
                        }
                        None => format!("size_of::<{ty}>()"),
                    };
                    push(
                        &mut fields,
                        format!(
                            "({shown:?}, {}, offset_of!({name}, {field}), {}, {rust_size})",
                            v[0], v[1]
                        ),
                    );
                }
            }
        }
    }
    format!(
        "// Generated by tests/kernel_abi.rs from src/uapi.rs and the C headers\n\
         // (include/liburing/io_uring.h, include/liburing.h, <sys/syscall.h>).\n\
         // Do not edit: `RSURING_BLESS=1 cargo test --release --test kernel_abi`\n\
         // regenerates it; src/uapi.rs's unit tests compare every row.\n\
         \n\
         /// (constant, value in C, value in src/uapi.rs)\n\
         const CONSTANTS: &[(&str, i128, i128)] = &[\n{consts}];\n\
         \n\
         /// System call numbers of {arch}: (constant, value in C, value in src/uapi.rs)\n\
         #[cfg(target_arch = \"{arch}\")]\n\
         const SYSCALL_NUMBERS: Option<&[(&str, i128, i128)]> = Some(&[\n{syscalls}]);\n\
         #[cfg(not(target_arch = \"{arch}\"))]\n\
         const SYSCALL_NUMBERS: Option<&[(&str, i128, i128)]> = None;\n\
         \n\
         /// (type, size in C, size in Rust, alignment in C, alignment in Rust)\n\
         const LAYOUTS: &[(&str, usize, usize, usize, usize)] = &[\n{layouts}];\n\
         \n\
         /// Views (tests/kernel_abi.rs, VIEWS): Rust no bigger than C, same alignment:\n\
         /// (type, size in C, size in Rust, alignment in C, alignment in Rust)\n\
         const VIEWS: &[(&str, usize, usize, usize, usize)] = &[\n{views}];\n\
         \n\
         /// (struct.field, offset in C, offset in Rust, size in C, size in Rust)\n\
         const FIELDS: &[(&str, usize, usize, usize, usize)] = &[\n{fields}];\n\
         \n\
         /// Structs Rust declares zero-sized (passed through to the kernel):\n\
         /// (type, size in C, size in Rust, alignment in C, alignment in Rust)\n\
         const OPAQUE: &[(&str, usize, usize, usize, usize)] = &[\n{opaque}];\n"
    )
}

#[test]
fn uapi_rs_table_is_generated_from_the_c_headers() {
    let repo = common::repo();
    let source = fs::read_to_string(repo.join("src/uapi.rs")).expect("read src/uapi.rs");
    let items = uapi_items(&source);
    let count = |f: fn(&Item) -> bool| items.iter().filter(|i| f(i)).count();
    let consts = count(|i| matches!(i, Item::Const { .. }));
    let structs = count(|i| matches!(i, Item::Struct { .. } | Item::Opaque { .. }));
    assert!(
        consts >= 100 && structs >= 20,
        "src/uapi.rs: read only {consts} constants and {structs} structs; has its layout changed?"
    );
    for (name, why) in VIEWS {
        assert!(
            items
                .iter()
                .any(|i| matches!(i, Item::Struct { name: n, .. } if n == name)),
            "VIEWS lists {name} ({why}), which src/uapi.rs no longer has"
        );
    }
    for (name, _, why) in NOT_IN_THE_UAPI_HEADER {
        assert!(
            items
                .iter()
                .any(|i| matches!(i, Item::Const { rust, .. } if rust == name)),
            "NOT_IN_THE_UAPI_HEADER lists {name} ({why}), which src/uapi.rs no longer has"
        );
    }

    let area = common::area();
    let c_file = area.bin_dir.join("kernel_abi_facts.c");
    fs::write(&c_file, c_program(&items)).expect("write the C program");
    let build = std::panic::catch_unwind(|| {
        CProgram::new("kernel_abi_facts", &c_file)
            .link(Link::Dlopen)
            // VALUE() asks `x < 0` of unsigned constants too.
            .flag("-Wno-type-limits")
            .build()
    });
    let bin = build.unwrap_or_else(|e| {
        let why = e
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_else(|| "(no message)".into());
        panic!(
            "the C side does not know an item of src/uapi.rs (see the compiler's message): \
             a name the C headers lack goes in tests/kernel_abi.rs's NOT_IN_THE_UAPI_HEADER \
             with where its value comes from, a field named differently in C_FIELDS\n{why}"
        )
    });
    let run = launch(&bin, &[]).run();
    assert!(run.ok(), "the C program failed: {}", run.describe());
    let table = rust_table(&items, &run.stdout);

    let path = repo.join(TABLE);
    if std::env::var_os("RSURING_BLESS").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, &table).expect("write the table");
        eprintln!("{TABLE} regenerated: {consts} constants, {structs} structs");
        return;
    }
    let committed = fs::read_to_string(&path).unwrap_or_default();
    if committed != table {
        let old: Vec<&str> = committed.lines().collect();
        let new: Vec<&str> = table.lines().collect();
        let diff: Vec<String> = new
            .iter()
            .filter(|l| !old.contains(l))
            .map(|l| format!("+ {l}"))
            .chain(
                old.iter()
                    .filter(|l| !new.contains(l))
                    .map(|l| format!("- {l}")),
            )
            .take(40)
            .collect();
        panic!(
            "{TABLE} is stale (src/uapi.rs or a C header changed): regenerate it with \
             `RSURING_BLESS=1 cargo test --release --test kernel_abi`, run \
             `cargo test --release --lib uapi::` and commit it:\n{}",
            diff.join("\n")
        );
    }
}

/// The parser sees what it must: a constant, a private constant, a struct
/// with a renamed field, an opaque struct (written out, or in the
/// `passed_through!` table), an alias, `mod nr` of this
/// architecture only, and nothing inside function bodies.
#[test]
fn uapi_rs_parser_reads_every_kind_of_item() {
    let arch = std::env::consts::ARCH;
    let source = format!(
        "#[cfg(target_arch = \"{arch}\")]\nmod nr {{\n    pub const MMAP: i64 = 9;\n}}\n\
         #[cfg(target_arch = \"other\")]\nmod nr {{\n    pub const MMAP: i64 = 1;\n}}\n\
         const NR_IO_URING_SETUP: i64 = 425;\n\
         pub type __u64 = u64;\n\
         /// doc\n#[repr(C)]\n#[derive(Debug)]\npub struct io_uring_sqe {{\n    pub opcode: u8,\n    /// doc\n    pub op_flags: u32,\n    pub ops: [u8; 0],\n}}\n\
         #[repr(C)]\npub struct io_uring_napi {{\n    _opaque: [u8; 0],\n}}\n\
         macro_rules! passed_through {{\n    ($name:ident) => {{\n        pub struct $name {{}}\n    }};\n}}\n\
         passed_through! {{\n    struct io_uring_bpf;\n    struct zcrx_ctrl;\n}}\n\
         pub fn f() {{\n    const VERSION_3: u32 = 1;\n    struct Header {{\n        a: u32,\n    }}\n}}\n\
         pub const IORING_SETUP_IOPOLL: u32 = 1 << 0;\n\
         pub const KERN_MAX_ENTRIES: u32 = 32768;\n\
         const _: () = {{\n    assert!(true);\n}};\n\
         #[cfg(test)]\nmod tests {{\n    const T: u32 = 1;\n    struct S {{\n        a: u32,\n    }}\n}}\n"
    );
    let items = format!("{:?}", uapi_items(&source));
    let want = [
        "Const { rust: \"nr::MMAP\", c: \"__NR_mmap\" }",
        "Const { rust: \"NR_IO_URING_SETUP\", c: \"__NR_io_uring_setup\" }",
        "Alias { name: \"__u64\" }",
        "Struct { name: \"io_uring_sqe\", fields: [(\"opcode\", \"u8\"), (\"op_flags\", \"u32\"), (\"ops\", \"[u8; 0]\")] }",
        "Opaque { name: \"io_uring_napi\" }",
        "Opaque { name: \"io_uring_bpf\" }",
        "Opaque { name: \"zcrx_ctrl\" }",
        "Const { rust: \"IORING_SETUP_IOPOLL\", c: \"IORING_SETUP_IOPOLL\" }",
        "Const { rust: \"KERN_MAX_ENTRIES\", c: \"32768\" }",
    ];
    assert_eq!(items, format!("[{}]", want.join(", ")));
    let c = c_program(&uapi_items(&source));
    assert!(
        c.contains("offsetof(struct io_uring_sqe, rw_flags)")
            && c.contains("MEMBER_SIZE(struct io_uring_sqe, ops[0])"),
        "{c}"
    );
}
