//! Generator of the SQE preparation helpers of include/liburing.h, from the
//! table in tools/prep/prep.table (its header explains the format).
//!
//! Used by tests/prep_table.rs, which compares the generated section with
//! the committed header and runs the programs built here: one that fills an
//! SQE with every helper (compiled against rsuring's header or liburing's),
//! and one that fills it by applying the table's assignments byte by byte,
//! the reference meaning of the table.

use std::fmt::Write as _;

/// A member of `struct io_uring_sqe` (union alternatives included): where it
/// lives, how wide it is and its C type.
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    /// What to write after `sqe->` (differs for array members).
    pub lvalue: &'static str,
    pub offset: usize,
    pub size: usize,
    pub ctype: &'static str,
}

const fn field(name: &'static str, offset: usize, size: usize, ctype: &'static str) -> Field {
    Field {
        name,
        lvalue: name,
        offset,
        size,
        ctype,
    }
}

/// The SQE members the table may name, from the kernel's uapi
/// (include/liburing/io_uring.h). tests/prep_table.rs checks every entry
/// against the compiler's offsetof/sizeof.
pub const SQE_FIELDS: &[Field] = &[
    field("opcode", 0, 1, "__u8"),
    field("flags", 1, 1, "__u8"),
    field("ioprio", 2, 2, "__u16"),
    field("fd", 4, 4, "__s32"),
    field("off", 8, 8, "__u64"),
    field("addr2", 8, 8, "__u64"),
    field("cmd_op", 8, 4, "__u32"),
    field("__pad1", 12, 4, "__u32"),
    field("addr", 16, 8, "__u64"),
    field("splice_off_in", 16, 8, "__u64"),
    field("level", 16, 4, "__u32"),
    field("optname", 20, 4, "__u32"),
    field("len", 24, 4, "__u32"),
    field("rw_flags", 28, 4, "__kernel_rwf_t"),
    field("fsync_flags", 28, 4, "__u32"),
    field("poll32_events", 28, 4, "__u32"),
    field("sync_range_flags", 28, 4, "__u32"),
    field("msg_flags", 28, 4, "__u32"),
    field("timeout_flags", 28, 4, "__u32"),
    field("accept_flags", 28, 4, "__u32"),
    field("cancel_flags", 28, 4, "__u32"),
    field("open_flags", 28, 4, "__u32"),
    field("statx_flags", 28, 4, "__u32"),
    field("fadvise_advice", 28, 4, "__u32"),
    field("splice_flags", 28, 4, "__u32"),
    field("rename_flags", 28, 4, "__u32"),
    field("unlink_flags", 28, 4, "__u32"),
    field("hardlink_flags", 28, 4, "__u32"),
    field("xattr_flags", 28, 4, "__u32"),
    field("msg_ring_flags", 28, 4, "__u32"),
    field("uring_cmd_flags", 28, 4, "__u32"),
    field("waitid_flags", 28, 4, "__u32"),
    field("futex_flags", 28, 4, "__u32"),
    field("install_fd_flags", 28, 4, "__u32"),
    field("nop_flags", 28, 4, "__u32"),
    field("pipe_flags", 28, 4, "__u32"),
    field("user_data", 32, 8, "__u64"),
    field("buf_index", 40, 2, "__u16"),
    field("buf_group", 40, 2, "__u16"),
    field("personality", 42, 2, "__u16"),
    field("splice_fd_in", 44, 4, "__s32"),
    field("file_index", 44, 4, "__u32"),
    field("optlen", 44, 4, "__u32"),
    field("addr_len", 44, 2, "__u16"),
    field("addr3", 48, 8, "__u64"),
    Field {
        name: "__pad2",
        lvalue: "__pad2[0]",
        offset: 56,
        size: 8,
        ctype: "__u64",
    },
    field("optval", 48, 8, "__u64"),
];

/// Fields every helper that sets an opcode writes (zero unless named).
pub const CORE: [&str; 3] = ["off", "addr", "len"];

pub fn sqe_field(name: &str) -> Option<&'static Field> {
    SQE_FIELDS.iter().find(|f| f.name == name)
}

/// What a C type is, as far as conversions go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    U8,
    U16,
    U32,
    S32,
    U64,
    S64,
    Pointer,
    /// Anything the generator does not know (size_t, enums, ...): always
    /// converted explicitly.
    Other,
}

pub fn kind_of(ctype: &str) -> Kind {
    match ctype {
        _ if ctype.ends_with('*') => Kind::Pointer,
        "__u8" | "uint8_t" | "unsigned char" => Kind::U8,
        "__u16" | "uint16_t" | "unsigned short" => Kind::U16,
        "__u32" | "uint32_t" | "unsigned" | "unsigned int" | "socklen_t" | "mode_t" | "id_t" => {
            Kind::U32
        }
        "__s32" | "int32_t" | "int" | "__kernel_rwf_t" => Kind::S32,
        "__u64" | "uint64_t" => Kind::U64,
        "__s64" | "int64_t" | "off_t" | "loff_t" => Kind::S64,
        _ => Kind::Other,
    }
}

/// Names the table uses whose type the generator knows, so that no
/// needless cast is written for them. Unknown names just get a cast.
const KNOWN_NAMES: &[(&str, Kind)] = &[
    ("AT_FDCWD", Kind::S32),
    ("IORING_FILE_INDEX_ALLOC", Kind::U32),
    ("IORING_TIMEOUT_UPDATE", Kind::U32),
    ("IORING_ASYNC_CANCEL_FD", Kind::U32),
    ("IORING_MSG_RING_FLAGS_PASS", Kind::U32),
    ("IORING_RECVSEND_FIXED_BUF", Kind::U32),
    ("IORING_POLL_ADD_MULTI", Kind::U32),
    ("__rsuring_direct_slot", Kind::U32),
    ("__io_uring_prep_poll_mask", Kind::U32),
];

#[derive(Debug)]
pub struct Param {
    pub ctype: String,
    pub name: String,
}

impl Param {
    pub fn declaration(&self) -> String {
        if self.ctype.ends_with('*') {
            format!("{}{}", self.ctype, self.name)
        } else {
            format!("{} {}", self.ctype, self.name)
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Set,
    Or,
}

#[derive(Debug)]
pub struct Assign {
    pub field: &'static Field,
    pub op: Op,
    pub expr: String,
}

#[derive(Debug)]
pub struct Block {
    /// `IORING_OP_...`, or None for "op -".
    pub opcode: Option<String>,
    pub what: String,
    pub guards: Vec<String>,
}

#[derive(Debug)]
pub struct Helper {
    pub name: String,
    pub params: Vec<Param>,
    pub guards: Vec<String>,
    pub block: usize,
    pub assigns: Vec<Assign>,
    line: usize,
}

impl Helper {
    fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The opcode expression, from the block or an `opcode =` assignment.
    pub fn opcode<'a>(&'a self, table: &'a Table) -> Option<&'a str> {
        table.blocks[self.block].opcode.as_deref().or_else(|| {
            self.assigns
                .iter()
                .find(|a| a.field.name == "opcode")
                .map(|a| a.expr.as_str())
        })
    }
}

#[derive(Debug)]
pub struct Table {
    pub blocks: Vec<Block>,
    pub helpers: Vec<Helper>,
}

/// `text [A B]` -> ("text", ["A", "B"]).
fn split_guards(s: &str) -> Result<(&str, Vec<String>), String> {
    let s = s.trim();
    match s.strip_suffix(']') {
        Some(rest) => {
            let open = rest.rfind('[').ok_or("unbalanced [ ]")?;
            let guards = rest[open + 1..]
                .split_whitespace()
                .map(String::from)
                .collect();
            Ok((rest[..open].trim(), guards))
        }
        None => Ok((s, Vec::new())),
    }
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_param(text: &str) -> Result<Param, String> {
    let text = text.trim();
    let start = text
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let (ctype, name) = (text[..start].trim(), &text[start..]);
    if ctype.is_empty() || !is_ident(name) {
        return Err(format!("cannot read parameter `{text}` as `type name`"));
    }
    let ctype = ctype.replace(" *", "*").replace('*', " *");
    Ok(Param {
        ctype: ctype.trim().to_string(),
        name: name.to_string(),
    })
}

fn parse_helper(line: &str, block: usize, lineno: usize) -> Result<Helper, String> {
    let (sig, guards) = split_guards(line)?;
    let open = sig.find('(').ok_or("a helper line needs (parameters)")?;
    let close = sig
        .rfind(')')
        .filter(|&c| c == sig.len() - 1)
        .ok_or("missing )")?;
    let short = sig[..open].trim();
    if !is_ident(short) {
        return Err(format!("bad helper name `{short}`"));
    }
    let name = if short.starts_with("io_uring_") || short.starts_with("__") {
        short.to_string()
    } else {
        format!("io_uring_prep_{short}")
    };
    let list = sig[open + 1..close].trim();
    let mut params = Vec::new();
    if !list.is_empty() {
        for p in list.split(',') {
            params.push(parse_param(p)?);
        }
    }
    if !params.iter().any(|p| p.name == "sqe") {
        params.insert(0, parse_param("struct io_uring_sqe *sqe")?);
    }
    Ok(Helper {
        name,
        params,
        guards,
        block,
        assigns: Vec::new(),
        line: lineno,
    })
}

fn parse_assign(text: &str) -> Result<Assign, String> {
    let (lhs, op, rhs) = if let Some((l, r)) = text.split_once("|=") {
        (l, Op::Or, r)
    } else if let Some((l, r)) = text.split_once('=') {
        (l, Op::Set, r)
    } else {
        return Err(format!("`{text}` is not `field = expression`"));
    };
    let field = sqe_field(lhs.trim())
        .ok_or_else(|| format!("`{}` is not a field of struct io_uring_sqe", lhs.trim()))?;
    let expr = rhs.trim();
    if expr.is_empty() {
        return Err(format!("no value for {}", field.name));
    }
    Ok(Assign {
        field,
        op,
        expr: expr.to_string(),
    })
}

/// Reads the table and checks each helper (see [`check`]).
pub fn parse(text: &str) -> Result<Table, String> {
    let mut table = Table {
        blocks: Vec::new(),
        helpers: Vec::new(),
    };
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let at = |e: String| format!("prep.table:{lineno}: {e}");
        let line = raw.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            let helper = table
                .helpers
                .last_mut()
                .ok_or_else(|| at("assignments before any helper".into()))?;
            for part in line.split(';').filter(|p| !p.trim().is_empty()) {
                helper.assigns.push(parse_assign(part.trim()).map_err(at)?);
            }
        } else if let Some(rest) = line.strip_prefix("op ") {
            let (head, what) = rest
                .split_once(':')
                .ok_or_else(|| at("op line needs `: what`".into()))?;
            let (name, guards) = split_guards(head).map_err(at)?;
            let opcode = match name {
                "-" => None,
                n if is_ident(n) => Some(format!("IORING_OP_{n}")),
                n => return Err(at(format!("bad opcode `{n}`"))),
            };
            table.blocks.push(Block {
                opcode,
                what: what.trim().to_string(),
                guards,
            });
        } else {
            let block = table
                .blocks
                .len()
                .checked_sub(1)
                .ok_or_else(|| at("helper before any op".into()))?;
            table
                .helpers
                .push(parse_helper(line, block, lineno).map_err(at)?);
        }
    }
    for h in &table.helpers {
        check(&table, h).map_err(|e| format!("prep.table:{}: {}: {e}", h.line, h.name))?;
    }
    Ok(table)
}

fn overlaps(a: &Field, b: &Field) -> bool {
    a.offset < b.offset + b.size && b.offset < a.offset + a.size
}

/// Does `word` occur in `expr` as a whole identifier?
fn mentions(expr: &str, word: &str) -> bool {
    expr.match_indices(word).any(|(i, _)| {
        let before = expr[..i].chars().next_back();
        let after = expr[i + word.len()..].chars().next();
        let edge = |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        edge(before) && edge(after)
    })
}

/// A helper is well formed when its writes do not overlap one another (so
/// their order does not matter), a helper with an opcode names fd and either
/// names each core field or leaves all of its bytes alone, every parameter
/// is used, and pointers only go into 64-bit fields.
fn check(table: &Table, h: &Helper) -> Result<(), String> {
    for (i, a) in h.assigns.iter().enumerate() {
        if let Some(b) = h.assigns[..i].iter().find(|b| overlaps(a.field, b.field)) {
            return Err(format!("{} and {} share bytes", b.field.name, a.field.name));
        }
        if let Some(p) = h.param(a.expr.trim()) {
            if kind_of(&p.ctype) == Kind::Pointer && a.field.size != 8 {
                return Err(format!(
                    "pointer {} into the {}-byte {}",
                    p.name, a.field.size, a.field.name
                ));
            }
        }
    }
    if h.opcode(table).is_some() {
        if !h.assigns.iter().any(|a| a.field.name == "fd") {
            return Err("a helper with an opcode must say what goes in fd".into());
        }
        for core in CORE.iter().map(|c| sqe_field(c).expect("core field")) {
            let covered: usize = h
                .assigns
                .iter()
                .filter(|a| overlaps(a.field, core))
                .map(|a| a.field.size)
                .sum();
            if covered != 0 && covered != core.size {
                return Err(format!("writes part of {}: name the rest too", core.name));
            }
        }
    }
    for p in h.params.iter().filter(|p| p.name != "sqe") {
        if !h.assigns.iter().any(|a| mentions(&a.expr, &p.name)) {
            return Err(format!("parameter {} is not used", p.name));
        }
    }
    Ok(())
}

/// The type of an expression, when the generator can tell.
pub fn expr_kind(h: &Helper, expr: &str) -> Option<Kind> {
    let expr = expr.trim();
    if let Some(p) = h.param(expr) {
        return Some(kind_of(&p.ctype));
    }
    if let Some(rest) = expr.strip_prefix('(') {
        if let Some((ty, _)) = rest.split_once(')') {
            let k = kind_of(ty.trim());
            if k != Kind::Other {
                return Some(k);
            }
        }
    }
    let head = expr.split('(').next().unwrap_or(expr).trim();
    if let Some(&(_, k)) = KNOWN_NAMES.iter().find(|(n, _)| *n == head) {
        return Some(k);
    }
    // a | b, a + b: the operands' common type, literals fitting any
    if expr.contains('|') || expr.contains('+') {
        let kinds: Option<Vec<Kind>> = expr
            .split(['|', '+'])
            .map(str::trim)
            .filter(|t| !is_literal(t))
            .map(|t| expr_kind(h, t))
            .collect();
        let kinds = kinds?;
        if kinds.windows(2).all(|w| w[0] == w[1]) {
            return kinds.first().copied();
        }
    }
    None
}

fn is_literal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// `expr` as a value for `field`: pointers become addresses, everything
/// else is converted to the field's type unless it already has it.
fn value_for(h: &Helper, field: &Field, expr: &str) -> String {
    let expr = expr.trim();
    match expr_kind(h, expr) {
        Some(Kind::Pointer) => format!("uring_ptr_to_u64({expr})"),
        Some(k) if k == kind_of(field.ctype) => expr.to_string(),
        _ if is_literal(expr) => expr.to_string(),
        _ => {
            let simple = is_ident(expr)
                || expr.starts_with('(')
                || expr.ends_with(')') && !expr.contains(' ');
            if simple {
                format!("({}) {expr}", field.ctype)
            } else {
                format!("({}) ({expr})", field.ctype)
            }
        }
    }
}

/// One store of the generated C: `sqe->field op value`.
struct Store {
    field: &'static Field,
    op: Op,
    value: String,
}

/// What the generated helper writes: the opcode, the core fields it does
/// not name (zero), its assignments; in SQE layout order. The writes do not
/// overlap (see [`check`]), so the order is free to choose.
fn stores(table: &Table, h: &Helper) -> Vec<Store> {
    let mut out: Vec<Store> = h
        .assigns
        .iter()
        .map(|a| Store {
            field: a.field,
            op: a.op,
            value: value_for(h, a.field, &a.expr),
        })
        .collect();
    if let Some(op) = &table.blocks[h.block].opcode {
        out.push(Store {
            field: sqe_field("opcode").expect("opcode"),
            op: Op::Set,
            value: op.clone(),
        });
    }
    if h.opcode(table).is_some() {
        for core in CORE {
            let f = sqe_field(core).expect("core field");
            if !h.assigns.iter().any(|a| overlaps(a.field, f)) {
                out.push(Store {
                    field: f,
                    op: Op::Set,
                    value: "0".into(),
                });
            }
        }
    }
    out.sort_by_key(|s| s.field.offset);
    out
}

const WIDTH: usize = 80;

fn columns(s: &str) -> usize {
    s.chars().fold(0, |col, c| {
        if c == '\t' {
            (col / 8 + 1) * 8
        } else {
            col + 1
        }
    })
}

/// `IOURINGINLINE void` on one line, then `name(params) LIBURING_NOEXCEPT`
/// wrapped at 80 columns, continuation lines aligned after the parenthesis.
fn signature(h: &Helper) -> String {
    let mut pieces: Vec<String> = h.params.iter().map(Param::declaration).collect();
    let last = pieces.len() - 1;
    for (i, p) in pieces.iter_mut().enumerate() {
        p.push_str(if i == last {
            ") LIBURING_NOEXCEPT"
        } else {
            ","
        });
    }
    let indent_cols = h.name.len() + 1;
    let indent = format!(
        "{}{}",
        "\t".repeat(indent_cols / 8),
        " ".repeat(indent_cols % 8)
    );
    let mut out = String::from("IOURINGINLINE void\n");
    let mut line = format!("{}(", h.name);
    let mut fresh = true;
    for p in pieces {
        let candidate = if fresh {
            format!("{line}{p}")
        } else {
            format!("{line} {p}")
        };
        if !fresh && columns(&candidate) > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = format!("{indent}{p}");
        } else {
            line = candidate;
        }
        fresh = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// A C comment holding `text`, on one line when it fits in 80 columns.
fn comment(text: &str) -> String {
    if text.len() + 6 <= WIDTH {
        return format!("/* {text} */\n");
    }
    let mut out = String::from("/*\n");
    let mut line = String::from(" *");
    for word in text.split_whitespace() {
        if line.len() + 1 + word.len() > WIDTH - 2 {
            out.push_str(&line);
            out.push('\n');
            line = String::from(" *");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push_str("\n */\n");
    out
}

fn guard_condition(guards: &[String]) -> String {
    guards
        .iter()
        .map(|g| format!("defined({g})"))
        .collect::<Vec<_>>()
        .join(" && ")
}

pub const SECTION_BEGIN: &str = "/* ---- BEGIN generated SQE preparation helpers ---- */";
pub const SECTION_END: &str = "/* ---- END generated SQE preparation helpers ---- */";

/// The generated section of include/liburing.h, markers included.
pub fn header_section(table: &Table) -> String {
    let mut out = String::new();
    out.push_str(SECTION_BEGIN);
    out.push_str(
        "\n/*\n * Generated from tools/prep/prep.table by tests/prep_table.rs; edit the\n \
         * table, then run RSURING_BLESS=1 cargo test --test prep_table.\n */\n",
    );
    let mut open_guard: Option<Vec<String>> = None;
    let mut last_block = usize::MAX;
    for h in &table.helpers {
        let block = &table.blocks[h.block];
        let guards: Vec<String> = block.guards.iter().chain(&h.guards).cloned().collect();
        if open_guard.as_ref() != Some(&guards) {
            if open_guard.take().is_some_and(|g| !g.is_empty()) {
                out.push_str("#endif\n");
            }
            if !guards.is_empty() {
                let _ = writeln!(out, "\n#if {}", guard_condition(&guards));
            }
            open_guard = Some(guards);
        }
        if h.block != last_block {
            let name = block.opcode.as_deref().unwrap_or("any opcode");
            out.push('\n');
            out.push_str(&comment(&format!("{name}: {}", block.what)));
            last_block = h.block;
        }
        out.push('\n');
        out.push_str(&signature(h));
        out.push_str("{\n");
        for s in stores(table, h) {
            let op = if s.op == Op::Or { "|=" } else { "=" };
            let _ = writeln!(out, "\tsqe->{} {op} {};", s.field.lvalue, s.value);
        }
        out.push_str("}\n");
    }
    if open_guard.is_some_and(|g| !g.is_empty()) {
        out.push_str("#endif\n");
    }
    out.push('\n');
    out.push_str(SECTION_END);
    out
}
