//! The one harness of the integration tests that build and run programs:
//!
//! - [`paths`]: the repository, the library under test
//!   (`<target-dir>/<profile>/librsuring.so`) and each test crate's
//!   [`Area`] (`<target-dir>/<profile>/tests/<crate>/`): `lib/`, holding
//!   `liburing.so.2` → the library (the RPATH of the programs, or their
//!   `LD_LIBRARY_PATH`), and `bin/` for what the crate builds;
//! - [`cbuild`]: [`CProgram`] compiles a C program against our header or
//!   Debian's, links it to our library, Debian's, or neither, and checks
//!   with `ldd` which `liburing.so.2` it loads;
//! - [`launch`]: [`launch()`] runs a program in its own process group with
//!   a timeout that kills the group, without the caller's `RSURING_*` /
//!   `LD_*` variables, optionally as nobody, on chosen CPUs or under a
//!   wrapper, and returns a [`Run`] (status, output, a reproducing command
//!   line);
//! - [`strict`]: [`skip`] — a failure under `RSURING_STRICT=1` (CI),
//!   otherwise a reported skip — and the checks for tools and files that
//!   use it;
//! - [`two_libs`]: one program built against Debian's liburing header and
//!   run on Debian's `liburing.so.2` and on rsuring (the drop-in and
//!   differential drivers).
//!
//! One layout: the driver `tests/foo.rs` keeps its C programs in
//! `c_tests/foo/`; each includes the one C helper header,
//! `c_tests/rsuring_test.h` (`#include "../rsuring_test.h"`), and
//! [`CProgram`] links it with the helper's bodies, `c_tests/rsuring_test.c`.
//! `tests/harness.rs` checks the harness itself. A new test driver
//! `tests/foo.rs` adopts it with `mod common;` and, e.g.:
//!
//! ```ignore
//! let bin = common::CProgram::new("prog", "c_tests/foo/prog.c").build();
//! let run = common::launch(&bin, &["arg"]).var("RSURING_STATS", "1").run();
//! if !run.expect_pass() { return; } // exit 77: a skip, a failure under strict mode
//! assert_eq!(run.field("rings"), "2", "{}", run.describe());
//! ```

#![allow(dead_code, unused_imports)] // each test crate uses its own subset

pub mod cbuild;
pub mod launch;
pub mod paths;
pub mod strict;
pub mod two_libs;

pub use cbuild::{argv_line, c_compiler, CProgram, Header, Link};
pub use launch::{launch, tail, Launch, Run, EXIT_SKIP, NOBODY};
pub use paths::{
    area, debian_liburing, library, profile_dir, repo, unique, Area, Removed, DEBIAN_HEADER,
};
pub use strict::{have_tool, require_file, require_tool, skip, skip_or_fail, strict};
