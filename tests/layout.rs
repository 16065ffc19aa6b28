//! Struct layouts: `c_tests/layout/layout.c` prints the size and alignment of
//! every public liburing structure and the offset and size of each of its
//! fields. Built against Debian's liburing 2.3 header (the reference, from
//! liburing-dev) and against ours, the two programs must print the same
//! lines: a binary built against either header finds every field where
//! the other put it.

mod common;

use std::path::Path;

use common::{launch, CProgram, Header, Link};

/// What `layout.c` prints when compiled against `header` (it calls no
/// library function: nothing is linked but libc).
fn layout_report(header: Header, name: &str) -> String {
    let bin = CProgram::new(name, "c_tests/layout/layout.c")
        .header(header)
        .link(Link::Dlopen)
        .build();
    let run = launch(&bin, &[]).run();
    assert!(run.ok(), "{name} failed: {}", run.describe());
    run.stdout
}

#[test]
fn layouts_match_debian_liburing_header() {
    let what = "layouts_match_debian_liburing_header";
    if !common::require_file(what, Path::new(common::DEBIAN_HEADER), "liburing-dev") {
        return;
    }
    let reference = layout_report(Header::Debian, "layout.debian");
    let ours = layout_report(Header::Ours, "layout.ours");
    let (theirs, mine): (Vec<&str>, Vec<&str>) =
        (reference.lines().collect(), ours.lines().collect());
    let differ: Vec<String> = theirs
        .iter()
        .filter(|l| !mine.contains(l))
        .map(|l| format!("- {l}"))
        .chain(
            mine.iter()
                .filter(|l| !theirs.contains(l))
                .map(|l| format!("+ {l}")),
        )
        .collect();
    assert!(
        differ.is_empty() && theirs == mine,
        "layouts differ (- Debian's header, + ours):\n{}",
        if differ.is_empty() {
            "the same lines in another order".to_string()
        } else {
            differ.join("\n")
        }
    );
    // A program that printed nothing would compare equal too.
    assert!(
        theirs.len() > 100 && theirs.iter().any(|l| l.starts_with("struct io_uring_sqe.")),
        "layout.c printed {} lines:\n{reference}",
        theirs.len()
    );
    println!(
        "layout: {} sizes and offsets identical to Debian's liburing header",
        theirs.len()
    );
}
