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
/// `RSURING_STATS`: per-ring statistics (a boolean, or `json:PATH`).
pub const STATS: &str = "RSURING_STATS";
/// `RSURING_SQARRAY`: keep the kernel's SQ index array (no NO_SQARRAY).
pub const SQARRAY: &str = "RSURING_SQARRAY";

/// Every name the library reads.
pub const LIBRARY_NAMES: &[&str] = &[
    SQPOLL_PERCPU,
    SQPOLL,
    SQPOLL_CPUS,
    SQPOLL_IDLE_MS,
    STATS,
    SQARRAY,
];

/// Names the project's own scripts and tests read (never the library),
/// after `RSURING_`. They are accepted silently so that programs run by the
/// test suite, which exports some of them, do not warn. (Kept without the
/// prefix: scripts/check-man.sh takes every quoted `RSURING_*` name in src/
/// for a variable the library reads, which must be documented.)
pub const TOOLING_SUFFIXES: &[&str] = &[
    "STRICT",
    "BLESS",
    "FUZZ_FRESH",
    "COMPAT_DIR",
    "COMPAT_TIMEOUT",
    "NO_APT",
    "SKIP_CARGO",
    "CC",
    "INCLUDE",
    "SUITE_USER",
    "SUITE_CPUS",
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
    let tooling = name
        .strip_prefix("RSURING_")
        .is_some_and(|suffix| TOOLING_SUFFIXES.contains(&suffix));
    if LIBRARY_NAMES.contains(&name) || tooling {
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
            LIBRARY_NAMES.join(", ")
        ),
    })
}

/// Warns, once per process, about every `RSURING_*` name nobody reads.
fn check_names() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if !name.starts_with("RSURING_") {
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
        for suffix in TOOLING_SUFFIXES {
            let name = format!("RSURING_{suffix}");
            assert_eq!(unknown_name_warning(&name), None, "{name}");
        }
    }

    #[test]
    fn millis() {
        assert_eq!(parse_millis(" 10 "), Ok(10));
        assert!(parse_millis("-5").is_err());
        assert!(parse_millis("x").is_err());
    }
}
