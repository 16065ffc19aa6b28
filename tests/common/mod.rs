//! What the integration tests that build and run C programs share: where the
//! library under test is, a directory that presents it as `liburing.so.2`,
//! and the C compiler.

#![allow(dead_code)] // each test crate uses its own subset

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `<target-dir>/<profile>/`: test binaries live in its `deps/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary is not in <target-dir>/<profile>/deps/")
        .to_path_buf()
}

/// `<target-dir>/<profile>/librsuring.so`, canonicalized. Cargo uplifts the
/// cdylib from deps/ into the profile directory; the copy in deps/ wins when
/// it is newer. `cargo test` does not build the cdylib: the README test
/// command runs `cargo build --release` first.
pub fn library() -> PathBuf {
    let dir = profile_dir();
    let uplifted = dir.join("librsuring.so");
    let in_deps = dir.join("deps").join("librsuring.so");
    let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let lib = match (mtime(&uplifted), mtime(&in_deps)) {
        (Some(a), Some(b)) if b > a => in_deps,
        (Some(_), _) => uplifted,
        (None, Some(_)) => in_deps,
        (None, None) => panic!(
            "{} does not exist: build the cdylib for this profile first \
             (`cargo build --release`, then `cargo test --release`)",
            uplifted.display()
        ),
    };
    lib.canonicalize().expect("canonicalize librsuring.so")
}

/// `<profile>/<name>/`, created, holding `liburing.so.2` and `liburing.so`
/// links to `lib`: the RPATH (or LD_LIBRARY_PATH) that makes a program load
/// rsuring under liburing's name.
pub fn library_dir(name: &str, lib: &Path) -> PathBuf {
    let dir = profile_dir().join(name);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    for link in ["liburing.so.2", "liburing.so"] {
        replace_symlink(lib, &dir.join(link));
    }
    dir
}

/// Points `link` at `target`, replacing whatever is there; safe when several
/// test processes race on it (symlink to a temporary name, rename over).
pub fn replace_symlink(target: &Path, link: &Path) {
    if fs::read_link(link).ok().as_deref() == Some(target) {
        return;
    }
    let tmp = link.with_extension(format!("tmp{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)
        .unwrap_or_else(|e| panic!("symlink {}: {e}", tmp.display()));
    fs::rename(&tmp, link).unwrap_or_else(|e| panic!("rename to {}: {e}", link.display()));
}

/// The C compiler cargo would use (through the `cc` crate, without the
/// build-script environment it normally reads), with debug info and
/// `-O<opt_level>`; warnings are left to the caller.
pub fn c_compiler(opt_level: u32) -> Command {
    let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    cc::Build::new()
        .cargo_metadata(false)
        .opt_level(opt_level)
        .debug(true)
        .host(&triple)
        .target(&triple)
        .warnings(false)
        .try_get_compiler()
        .unwrap_or_else(|e| panic!("no C compiler found through the cc crate: {e}"))
        .to_command()
}
