//! C programs that show what the SQE preparation helpers write: each fills
//! a 128-byte SQE (pre-set to 0xa5) per helper and argument set and prints
//! it as hex, either by calling the helpers of whatever <liburing.h> it is
//! compiled against, or by applying include/prep/prep.table's assignments at
//! their byte offsets (the table's meaning, independent of the generated C).
//! Used by tests/prep_table.rs.

use std::fmt::Write as _;

use crate::gen::expr_kind;
use crate::table::{kind_of, sqe_field, Field, Helper, Kind, Op, Param, Table, CORE, SQE_FIELDS};

/// How a dump program fills each SQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Call the header's helper.
    Helper,
    /// Apply the table's meaning by byte offsets: opcode and zeroed core
    /// fields first (for helpers with an opcode), then each assignment in
    /// the order written.
    Table,
}

/// Argument sets the dump programs run every helper with: distinct
/// wide values that show truncation and sign extension, all ones (-1,
/// IORING_FILE_INDEX_ALLOC, ...), and small realistic numbers.
pub const ARG_SETS: [char; 3] = ['A', 'B', 'C'];

fn arg_bits(set: char, k: usize) -> u64 {
    let k = k as u64;
    match set {
        'A' => 0x89ab_cdef_1234_5678u64.wrapping_add(0x0101_0101_0101_0101u64.wrapping_mul(k)),
        'B' => u64::MAX,
        _ => k + 1,
    }
}

fn arg_value(p: &Param, set: char, k: usize) -> String {
    let bits = arg_bits(set, k);
    if kind_of(&p.ctype) == Kind::Pointer {
        let addr = if set == 'A' {
            0x7f12_3456_0000 + 0x40 * k as u64
        } else {
            bits
        };
        format!("({}) (uintptr_t) {addr:#x}ULL", p.ctype)
    } else {
        format!("({}) {bits:#x}ULL", p.ctype)
    }
}

const DUMP_PRELUDE: &str = r#"#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <liburing.h>

/* RSURING_DUMP_INIT: start from io_uring_initialize_sqe(), as io_uring_get_sqe() does */
static unsigned char sqe_bytes[128] __attribute__((aligned(64)));

static struct io_uring_sqe *start(void)
{
	struct io_uring_sqe *sqe = (struct io_uring_sqe *) sqe_bytes;

	memset(sqe_bytes, 0xa5, sizeof(sqe_bytes));
#if RSURING_DUMP_INIT
	io_uring_initialize_sqe(sqe);
#endif
	return sqe;
}

static void dump(const char *name, char set)
{
	size_t i;

	printf("%s %c ", name, set);
	for (i = 0; i < sizeof(sqe_bytes); i++)
		printf("%02x", sqe_bytes[i]);
	putchar('\n');
}

static inline uint64_t get(size_t off, size_t size)
{
	uint8_t b; uint16_t h; uint32_t w; uint64_t d;

	switch (size) {
	case 1: memcpy(&b, sqe_bytes + off, 1); return b;
	case 2: memcpy(&h, sqe_bytes + off, 2); return h;
	case 4: memcpy(&w, sqe_bytes + off, 4); return w;
	default: memcpy(&d, sqe_bytes + off, 8); return d;
	}
}

static inline void put(size_t off, size_t size, uint64_t v)
{
	uint8_t b = (uint8_t) v; uint16_t h = (uint16_t) v; uint32_t w = (uint32_t) v;

	switch (size) {
	case 1: memcpy(sqe_bytes + off, &b, 1); break;
	case 2: memcpy(sqe_bytes + off, &h, 2); break;
	case 4: memcpy(sqe_bytes + off, &w, 4); break;
	default: memcpy(sqe_bytes + off, &v, 8); break;
	}
}

int main(void)
{
"#;

/// A C program printing `name set hex-bytes` for each helper in `helpers`
/// and each argument set.
pub fn dump_program(table: &Table, helpers: &[&Helper], fill: Fill) -> String {
    let mut out = String::from(DUMP_PRELUDE);
    for h in helpers {
        for set in ARG_SETS {
            out.push_str("\t{\n");
            match fill {
                Fill::Helper => {
                    let args: Vec<String> = h
                        .params
                        .iter()
                        .enumerate()
                        .map(|(k, p)| {
                            if p.name == "sqe" {
                                "start()".into()
                            } else {
                                arg_value(p, set, k)
                            }
                        })
                        .collect();
                    let _ = writeln!(out, "\t\t{}({});", h.name, args.join(", "));
                }
                Fill::Table => table_fill(&mut out, table, h, set),
            }
            let _ = writeln!(out, "\t\tdump(\"{}\", '{set}');\n\t}}", h.name);
        }
    }
    out.push_str("\treturn 0;\n}\n");
    out
}

fn table_fill(out: &mut String, table: &Table, h: &Helper, set: char) {
    for (k, p) in h.params.iter().enumerate().filter(|(_, p)| p.name != "sqe") {
        let _ = writeln!(out, "\t\t{} = {};", p.declaration(), arg_value(p, set, k));
    }
    out.push_str("\t\tstart();\n");
    let put = |out: &mut String, f: &Field, op: Op, expr: &str| {
        let value = match expr_kind(h, expr) {
            Some(Kind::Pointer) => format!("(uintptr_t) ({expr})"),
            _ => format!("({}) ({expr})", f.ctype),
        };
        let value = if op == Op::Or {
            format!("get({}, {}) | (uint64_t) {value}", f.offset, f.size)
        } else {
            format!("(uint64_t) {value}")
        };
        let _ = writeln!(out, "\t\tput({}, {}, {value});", f.offset, f.size);
    };
    if let Some(op) = h.opcode(table) {
        put(out, sqe_field("opcode").expect("opcode"), Op::Set, op);
        for core in CORE {
            put(out, sqe_field(core).expect("core field"), Op::Set, "0");
        }
    }
    for a in &h.assigns {
        put(out, a.field, a.op, &a.expr);
    }
}

/// A C program printing `name offset size` for every field of
/// [`SQE_FIELDS`], as the compiler lays out struct io_uring_sqe.
pub fn layout_program() -> String {
    let mut out = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <liburing.h>\n\nint main(void)\n{\n",
    );
    for f in SQE_FIELDS {
        let _ = writeln!(
            out,
            "\tprintf(\"{} %zu %zu\\n\", offsetof(struct io_uring_sqe, {}),\n\t       sizeof(((struct io_uring_sqe *) 0)->{}));",
            f.name, f.lvalue, f.lvalue
        );
    }
    out.push_str("\treturn 0;\n}\n");
    out
}
