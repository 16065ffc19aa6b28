//! Skips, and the switch that turns them into failures.
//!
//! A test that cannot run here (a tool, header or kernel feature is
//! missing) calls [`skip`]: under `RSURING_STRICT=1` (CI: `.ci/run`) that
//! is a failure, otherwise it is reported, with the reason, on the test
//! process's real stderr, which the test harness does not capture, so the
//! line shows in every `cargo test` run.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The variable that makes every skip a failure.
pub const STRICT_VAR: &str = "RSURING_STRICT";

/// Whether skips are failures (`RSURING_STRICT=1`).
pub fn strict() -> bool {
    std::env::var(STRICT_VAR).as_deref() == Ok("1")
}

/// `what` cannot run here because of `why`: panics under strict mode,
/// else reports the skip; the caller then returns.
pub fn skip(what: &str, why: &str) {
    if let Err(failure) = skip_or_fail(what, why) {
        panic!("{failure}");
    }
}

/// [`skip`] for a caller that collects failures: `Err` with the message
/// under strict mode, otherwise reports the skip and returns `Ok`.
pub fn skip_or_fail(what: &str, why: &str) -> Result<(), String> {
    if strict() {
        return Err(format!(
            "{what}: cannot be skipped under {STRICT_VAR}=1: {why}"
        ));
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {what}: {why}");
    Ok(())
}

/// Whether `tool` is an executable file in a directory of `PATH`.
pub fn have_tool(tool: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(tool))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// True when `tool` is installed; otherwise [`skip`]s `what`, naming the
/// Debian package that has it (scripts/setup.sh installs them all).
pub fn require_tool(what: &str, tool: &str, package: &str) -> bool {
    if have_tool(tool) {
        return true;
    }
    skip(
        what,
        &format!(
            "{tool} is not installed (Debian package {package}; scripts/setup.sh installs it)"
        ),
    );
    false
}

/// True when `file` exists; otherwise [`skip`]s `what`, naming the
/// Debian package that has it.
pub fn require_file(what: &str, file: &Path, package: &str) -> bool {
    if file.exists() {
        return true;
    }
    skip(
        what,
        &format!(
            "{} does not exist (Debian package {package}; scripts/setup.sh installs it)",
            file.display()
        ),
    );
    false
}
