//! Where things are: the repository, the library under test, the
//! directory that presents it as `liburing.so.2`, and each test crate's
//! own directory for what it builds.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

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
/// it is newer. `cargo test` does not build the cdylib: the test command
/// runs `cargo build --release` first.
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

/// What one test crate builds and runs against.
pub struct Area {
    /// `<target-dir>/<profile>/librsuring.so`, canonicalized.
    pub lib: PathBuf,
    /// Holds `liburing.so.2` and `liburing.so` links to `lib`: the RPATH
    /// (or `LD_LIBRARY_PATH`) that makes a program load rsuring under
    /// liburing's name.
    pub lib_dir: PathBuf,
    /// Where the crate's programs and their files go.
    pub bin_dir: PathBuf,
}

/// This test crate's area, `<target-dir>/<profile>/tests/<crate>/{lib,bin}`,
/// created on first use. (Each test crate compiles its own copy of this
/// module, so the name and the cell are per crate.)
pub fn area() -> &'static Area {
    static AREA: OnceLock<Area> = OnceLock::new();
    AREA.get_or_init(|| {
        let root = profile_dir().join("tests").join(env!("CARGO_CRATE_NAME"));
        let lib = library();
        let lib_dir = root.join("lib");
        let bin_dir = root.join("bin");
        for dir in [&lib_dir, &bin_dir] {
            fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        }
        for link in ["liburing.so.2", "liburing.so"] {
            replace_symlink(&lib, &lib_dir.join(link));
        }
        Area {
            lib,
            lib_dir,
            bin_dir,
        }
    })
}

/// Points `link` at `target`, replacing whatever is there; safe when several
/// test processes race on it (symlink to a temporary name, rename over).
pub fn replace_symlink(target: &Path, link: &Path) {
    if fs::read_link(link).ok().as_deref() == Some(target) {
        return;
    }
    let tmp = link.with_file_name(unique(".link"));
    std::os::unix::fs::symlink(target, &tmp)
        .unwrap_or_else(|e| panic!("symlink {}: {e}", tmp.display()));
    fs::rename(&tmp, link).unwrap_or_else(|e| panic!("rename to {}: {e}", link.display()));
}

/// A name no other test process or thread uses at the same time:
/// `<stem>.<pid>.<n>`.
pub fn unique(stem: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{stem}.{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A file or directory removed when dropped, also when the test panics.
pub struct Removed(pub PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0).or_else(|_| fs::remove_file(&self.0));
    }
}

/// Debian's liburing header (liburing-dev): what "unmodified binaries"
/// and the system-header C tests are compiled against.
pub const DEBIAN_HEADER: &str = "/usr/include/liburing.h";

/// Debian's liburing (liburing2), if installed: the reference library.
pub fn debian_liburing() -> Option<PathBuf> {
    [
        "/usr/lib/x86_64-linux-gnu/liburing.so.2",
        "/lib/x86_64-linux-gnu/liburing.so.2",
        "/usr/lib/aarch64-linux-gnu/liburing.so.2",
    ]
    .iter()
    .map(Path::new)
    .find(|p| p.exists())
    .map(Path::to_path_buf)
}
