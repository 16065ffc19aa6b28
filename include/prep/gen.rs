//! Generator of the SQE preparation helpers of include/liburing.h from the
//! table (include/prep/table.rs): for each helper, the stores it makes, each
//! value converted to its field's type, in SQE layout order.
//!
//! Used by tests/prep_table.rs, which compares the generated section with
//! the committed header; include/prep/dump.rs builds the programs that check
//! what the generated helpers write.

use std::fmt::Write as _;

use crate::table::{
    is_ident, kind_of, overlaps, sqe_field, Field, Helper, Kind, Op, Param, Table, CORE,
};

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
        "\n/*\n * Generated from include/prep/prep.table by tests/prep_table.rs; edit the\n \
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
