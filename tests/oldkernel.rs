//! rsuring on the kernels people run, and under the limits they run with.
//!
//! - `mlock_size_with_memlock_used_up`: as nobody whose rings used up
//!   RLIMIT_MEMLOCK, `io_uring_mlock_size` and friends return what Debian's
//!   liburing 2.3 returns (`tests/oldkernel/mlock.c`, built twice).
//! - The `emulated_*` tests run programs under `tests/oldkernel/supervise.c`,
//!   which makes the real kernel's io_uring answer as an older kernel's
//!   would (its tables: `tests/oldkernel/kernels.h`; what it cannot
//!   emulate: docs/compatibility.md).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::{launch, CProgram, Run};

fn fields(run: &Run) -> BTreeMap<String, String> {
    run.stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn debian_ready(what: &str) -> bool {
    common::require_file(what, Path::new(common::DEBIAN_HEADER), "liburing-dev")
        && common::debian_liburing().is_some()
        && common::require_tool(what, "setpriv", "util-linux")
}

#[test]
fn mlock_size_with_memlock_used_up() {
    let what = "oldkernel mlock_size as nobody";
    if !debian_ready(what) {
        return;
    }
    let src = "tests/oldkernel/mlock.c";
    let ours = CProgram::new("mlock", src).build();
    let theirs = CProgram::new("mlock.debian", src).debian().build();
    let run = |bin: &Path| {
        let run = launch(bin, &[])
            .nobody()
            .timeout(Duration::from_secs(30))
            .run();
        assert!(run.ok(), "{}", run.describe());
        run
    };
    let (a, b) = (run(&ours), run(&theirs));
    let (got, want) = (fields(&a), fields(&b));
    assert_eq!(
        got,
        want,
        "rsuring (left) and liburing 2.3 (right) differ:\n{}\n{}",
        a.describe(),
        b.describe()
    );
    // The case of the issue: the probe ring cannot be set up, the size is
    // computed all the same (two 64-page blocks on 4 KiB pages).
    assert_eq!(got["probe_errno"], libc::ENOMEM.to_string());
    assert_eq!(got["queue_init"], (-libc::ENOMEM).to_string());
    // SAFETY: sysconf has no preconditions.
    if unsafe { libc::sysconf(libc::_SC_PAGESIZE) } == 4096 {
        assert_eq!(got["mlock_size_4096"], "524288");
    }
}
