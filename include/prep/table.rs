//! The table of SQE preparation helpers (include/prep/prep.table, whose
//! header explains the format), read into helpers and their field
//! assignments, and checked: the rules here are what makes a table entry
//! well formed. include/prep/gen.rs turns it into C.

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
    pub fn param(&self, name: &str) -> Option<&Param> {
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

pub fn is_ident(s: &str) -> bool {
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

pub fn overlaps(a: &Field, b: &Field) -> bool {
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
