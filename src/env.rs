//! The `RSURING_*` environment: the one list of names, the one parser for
//! each kind of value, and the warnings for values and names that are wrong.
//!
//! Every variable is read once per process by whoever needs it (the poller
//! policy, statistics), through [`flag`] or [`parsed`]. The first read also
//! looks at every `RSURING_*` name in the environment and warns, once, about
//! the ones nobody reads: a misspelt name would otherwise do nothing,
//! silently. A malformed value is reported once and treated as unset; it
//! never makes a ring fail.
//!
//! Booleans accept, in any case and with surrounding blanks, `1 true yes on`
//! and `0 false no off`; an empty value is unset.

use std::sync::Once;

/// `RSURING_SQPOLL_PERCPU`: every SQPOLL ring shares its CPU's poller.
pub const SQPOLL_PERCPU: &str = "RSURING_SQPOLL_PERCPU";
/// `RSURING_SQPOLL`: rings created without SQPOLL get a shared poller.
pub const SQPOLL: &str = "RSURING_SQPOLL";
/// `RSURING_SQPOLL_CPUS`: CPUs for the pollers of rings without SQ_AFF.
pub const SQPOLL_CPUS: &str = "RSURING_SQPOLL_CPUS";
/// `RSURING_SQPOLL_IDLE_MS`: `sq_thread_idle` for rings that set none.
pub const SQPOLL_IDLE_MS: &str = "RSURING_SQPOLL_IDLE_MS";
/// `RSURING_SQPOLL_STEP_ASIDE`: RSURING_SQPOLL=1 leaves new rings plain
/// where the poller's CPU is measured busy (on unless set false).
pub const SQPOLL_STEP_ASIDE: &str = "RSURING_SQPOLL_STEP_ASIDE";
/// `RSURING_STATS`: per-ring statistics (a boolean, or `json:PATH`).
pub const STATS: &str = "RSURING_STATS";
/// `RSURING_SQARRAY`: keep the kernel's SQ index array (no NO_SQARRAY).
pub const SQARRAY: &str = "RSURING_SQARRAY";

/// `RSURING_REGISTER_RING_FD`: register each ring's fd with the kernel
/// for the thread that set it up (off by default: docs/compatibility.md).
pub const REGISTER_RING_FD: &str = "RSURING_REGISTER_RING_FD";
/// `RSURING_QUIET_UNKNOWN`: `RSURING_*` names not to warn about.
pub const QUIET_UNKNOWN: &str = "RSURING_QUIET_UNKNOWN";

/// Every name the library reads.
pub const LIBRARY_NAMES: &[&str] = &[
    SQPOLL_PERCPU,
    SQPOLL,
    SQPOLL_CPUS,
    SQPOLL_IDLE_MS,
    SQPOLL_STEP_ASIDE,
    STATS,
    SQARRAY,
    REGISTER_RING_FD,
    QUIET_UNKNOWN,
];

/// One variable as the documentation gives it: the value that turns it on,
/// what unset means, and what it does. Only the unit tests below read the
/// last three (they hold the documents to this table).
#[cfg_attr(not(test), allow(dead_code))]
pub struct Variable {
    pub name: &'static str,
    pub value: &'static str,
    pub default: &'static str,
    pub effect: &'static str,
}

/// The documented list, in [`LIBRARY_NAMES`]' order (a unit test checks
/// both and that README.md's table and rsuring(7)'s defaults say the same;
/// the defaults are what the code does when the variable is unset).
pub const VARIABLES: &[Variable] = &[
    Variable {
        name: SQPOLL_PERCPU,
        value: "`1`",
        default: "off",
        effect: "every SQPOLL ring behaves as if it had `IORING_SETUP_SQPOLL_PERCPU`: one shared SQ thread per CPU",
    },
    Variable {
        name: SQPOLL,
        value: "`1`",
        default: "off",
        effect: "rings created without SQPOLL get a shared poller, only where the program cannot tell; every refusal is noted once on stderr ([docs/transparent-sqpoll.md](docs/transparent-sqpoll.md))",
    },
    Variable {
        name: SQPOLL_CPUS,
        value: "CPU list, `0,2,4-7`",
        default: "unset: one shared poller not bound to a CPU, and no transparent SQPOLL",
        effect: "the CPUs the pollers of rings without `SQ_AFF` are placed on, least-loaded first",
    },
    Variable {
        name: SQPOLL_IDLE_MS,
        value: "milliseconds",
        default: "unset: the kernel's 1000 ms",
        effect: "`sq_thread_idle` for SQPOLL rings whose parameters leave it at 0",
    },
    Variable {
        name: SQPOLL_STEP_ASIDE,
        value: "`0`",
        default: "on: `RSURING_SQPOLL=1` steps aside where its poller's CPU is busy",
        effect: "`0` turns off the `poller-busy` rule of `RSURING_SQPOLL=1` (a poller's CPU measured busy at ring setup, or hand-overs to the poller measured slow), for measurements that need the mode on whatever the load",
    },
    Variable {
        name: STATS,
        value: "`1` or `json:PATH`",
        default: "off",
        effect: "per-ring statistics: one line per ring on stderr when it exits (or at process exit), or one JSON object per line appended to PATH",
    },
    Variable {
        name: SQARRAY,
        value: "`1`",
        default: "off: rings get `NO_SQARRAY` where the kernel has it",
        effect: "keep the kernel's SQ index array, for programs that store their own indices in `sq.array`",
    },
    Variable {
        name: REGISTER_RING_FD,
        value: "`1`",
        default: "off: every enter goes through the ring's fd, as with liburing",
        effect: "each ring set up by `io_uring_queue_init*` gets its fd registered for the thread that set it up, which saves the kernel's file lookup on that thread's enters; never under a seccomp filter; the differences a program can see are listed in [docs/compatibility.md](docs/compatibility.md)",
    },
    Variable {
        name: QUIET_UNKNOWN,
        value: "`1`, or names",
        default: "unset: every unknown `RSURING_*` name is reported once",
        effect: "no warning for the names listed (comma-separated, e.g. `RSURING_STRICT`), or with `1` for any name: for tools with `RSURING_*` variables of their own",
    },
];

const BOOL_WORDS: &str = "1/true/yes/on or 0/false/no/off";

/// Prints one warning line (a documented opt-in diagnostic: it appears only
/// when the user set an `RSURING_*` variable wrongly).
pub fn warn(message: &str) {
    let line = format!("rsuring: {message}\n");
    // SAFETY: writes a valid buffer to fd 2; a failed write is ignored, as
    // a diagnostic must never disturb the application.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
}

/// Reports a malformed value of `name`; the variable is then ignored.
pub fn warn_malformed(name: &str, value: &str, why: &str) {
    warn(&format!("ignoring {name}={value:?}: {why}"));
}

/// The value of a boolean word, or None when it is not one.
pub fn parse_bool(value: &str) -> Option<bool> {
    let v = value.trim().to_ascii_lowercase();
    match v.as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "" => Some(false),
        _ => None,
    }
}

/// Parses a non-negative number of milliseconds.
/// One part of a CPU list (`3` or `8-11`), as the kernel and
/// `RSURING_SQPOLL_CPUS` write them: the first and last CPU, within the
/// CPUs a `cpu_set_t` holds.
pub fn parse_cpu_range(part: &str) -> Result<(u32, u32), String> {
    let (a, b) = part.split_once('-').unwrap_or((part, part));
    let number = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("bad CPU number {:?}", t.trim()))
    };
    let (lo, hi) = (number(a)?, number(b)?);
    if lo > hi || hi >= libc::CPU_SETSIZE as u32 {
        return Err(format!("bad CPU range {part:?}"));
    }
    Ok((lo, hi))
}

pub fn parse_millis(value: &str) -> Result<u32, String> {
    value
        .trim()
        .parse::<u32>()
        .map_err(|_| "expected milliseconds (a whole number)".to_string())
}

/// Whether the process runs with elevated privileges from a set-id or
/// file-capability program (AT_SECURE): then, as with `secure_getenv`, the
/// environment (which the unprivileged caller chose) is not read at all.
fn secure_mode() -> bool {
    // SAFETY: getauxval has no preconditions and does not fail for AT_SECURE.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// The raw value of `name` (checking the environment's names on first use).
/// Values that are not UTF-8 are reported and treated as unset. In a
/// set-id process every variable reads as unset (see [`secure_mode`]).
pub fn get(name: &str) -> Option<String> {
    debug_assert!(
        LIBRARY_NAMES.contains(&name),
        "{name} is not in LIBRARY_NAMES"
    );
    if secure_mode() {
        return None;
    }
    check_names();
    match std::env::var(name) {
        Ok(v) => Some(v),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(v)) => {
            warn_malformed(name, &v.to_string_lossy(), "not valid UTF-8");
            None
        }
    }
}

/// A boolean variable: false when unset, empty or malformed (reported).
pub fn flag(name: &str) -> bool {
    let Some(v) = get(name) else { return false };
    parse_bool(&v).unwrap_or_else(|| {
        warn_malformed(name, &v, &format!("expected {BOOL_WORDS}"));
        false
    })
}

/// A variable with its own syntax: None when unset or when `parse` rejects
/// it (reported with its reason).
pub fn parsed<T>(name: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> Option<T> {
    let v = get(name)?;
    parse(&v).map_err(|why| warn_malformed(name, &v, &why)).ok()
}

/// What [`check_names`] says about one name, or None when it is known.
pub fn unknown_name_warning(name: &str) -> Option<String> {
    if LIBRARY_NAMES.contains(&name) {
        return None;
    }
    let closest = LIBRARY_NAMES
        .iter()
        .map(|known| (edit_distance(name, known), known))
        .min()
        .filter(|(d, _)| *d <= 3);
    Some(match closest {
        Some((_, known)) => format!("unknown variable {name} ignored (did you mean {known}?)"),
        None => format!(
            "unknown variable {name} ignored (rsuring reads {})",
            VARIABLES
                .iter()
                .map(|v| v.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The names `RSURING_QUIET_UNKNOWN` silences: None for all of them (a
/// true boolean word), else the listed names (commas or blanks between).
fn quiet_names(value: &str) -> Option<Vec<String>> {
    if parse_bool(value) == Some(true) {
        return None;
    }
    Some(
        value
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Warns, once per process, about every `RSURING_*` name nobody reads,
/// except those `RSURING_QUIET_UNKNOWN` names.
fn check_names() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let quiet = match std::env::var(QUIET_UNKNOWN) {
            Ok(v) => quiet_names(&v),
            Err(_) => Some(Vec::new()),
        };
        let Some(quiet) = quiet else { return };
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if !name.starts_with("RSURING_") || quiet.iter().any(|q| *q == name) {
                continue;
            }
            if let Some(w) = unknown_name_warning(&name) {
                warn(&w);
            }
        }
    });
}

/// Levenshtein distance (names are short; quadratic is fine).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + (ca != cb) as usize)
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boolean_words() {
        for v in ["1", "true", "yes", "on", "YES", " On ", "True"] {
            assert_eq!(parse_bool(v), Some(true), "{v:?}");
        }
        for v in ["0", "false", "no", "off", "", "OFF", " no"] {
            assert_eq!(parse_bool(v), Some(false), "{v:?}");
        }
        for v in ["2", "maybe", "y", "enable", "1x", "-1"] {
            assert_eq!(parse_bool(v), None, "{v:?}");
        }
    }

    #[test]
    fn misspelt_names_get_a_suggestion() {
        let w = unknown_name_warning(concat!("RSURING_", "SQPOL")).unwrap();
        assert!(w.contains("did you mean RSURING_SQPOLL?"), "{w}");
        let w = unknown_name_warning(concat!("RSURING_", "STAT")).unwrap();
        assert!(w.contains("did you mean RSURING_STATS?"), "{w}");
        let w = unknown_name_warning(concat!("RSURING_", "SQPOLL_CPU")).unwrap();
        assert!(w.contains("did you mean RSURING_SQPOLL_CPUS?"), "{w}");
        let w = unknown_name_warning(concat!("RSURING_", "SOMETHING_ELSE")).unwrap();
        assert!(w.contains("rsuring reads RSURING_SQPOLL_PERCPU"), "{w}");
        for known in LIBRARY_NAMES {
            assert_eq!(unknown_name_warning(known), None, "{known}");
        }
    }

    #[test]
    fn quiet_unknown_values() {
        assert_eq!(quiet_names("1"), None);
        assert_eq!(quiet_names(" yes "), None);
        assert_eq!(quiet_names(""), Some(vec![]));
        assert_eq!(quiet_names("0"), Some(vec!["0".to_string()]));
        assert_eq!(
            quiet_names("TOOL_A, TOOL_B TOOL_C"),
            Some(vec!["TOOL_A".into(), "TOOL_B".into(), "TOOL_C".into()])
        );
    }

    #[test]
    fn variables_table_is_the_names_list() {
        let names: Vec<&str> = VARIABLES.iter().map(|v| v.name).collect();
        assert_eq!(names, LIBRARY_NAMES);
    }

    fn read(rel: &str) -> String {
        let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// README.md's variable table is VARIABLES, row for row.
    #[test]
    fn readme_table_is_the_variables_table() {
        let mut want = vec![
            "| variable | value | unset | effect |".to_string(),
            "| --- | --- | --- | --- |".to_string(),
        ];
        for v in VARIABLES {
            want.push(format!(
                "| `{}` | {} | {} | {} |",
                v.name, v.value, v.default, v.effect
            ));
        }
        let readme = read("README.md");
        let have: Vec<&str> = readme
            .lines()
            .skip_while(|l| !l.starts_with("| variable |"))
            .take_while(|l| l.starts_with('|'))
            .collect();
        assert_eq!(
            have,
            want,
            "README.md's variable table differs from src/env.rs VARIABLES; it should be:\n{}",
            want.join("\n")
        );
    }

    /// rsuring(7) gives each variable a subsection saying its default.
    #[test]
    fn man_page_gives_every_default() {
        let page = read("docs/man/man7/rsuring.7").replace("\\-", "-");
        for v in VARIABLES {
            let start = page
                .find(&format!("\n.SS {}\n", v.name))
                .unwrap_or_else(|| panic!("rsuring(7): no .SS {}", v.name));
            let rest = &page[start + 1..];
            let end = rest[1..].find("\n.S").map_or(rest.len(), |e| e + 1);
            let section = rest[..end].replace('\n', " ");
            let default = v.default.replace('`', "");
            let line = format!("Default: {default}.");
            assert!(
                section.contains(&line),
                "rsuring(7) .SS {}: no line {line:?}",
                v.name
            );
        }
    }

    #[test]
    fn millis() {
        assert_eq!(parse_millis(" 10 "), Ok(10));
        assert!(parse_millis("-5").is_err());
        assert!(parse_millis("x").is_err());
    }
}
