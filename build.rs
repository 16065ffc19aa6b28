//! Gives the shared library liburing's SONAME and symbol versions, and
//! links in the header's inline helpers as real symbols (liburing-ffi's
//! symbol set, see src/ffi/inline_ffi.c) and liburing-ffi's LIBURING_2.4
//! restatements of older functions (src/ffi/ffi_restated.c), and older
//! versions of rsuring's own extension functions (src/ffi/ffi_compat.c).
use std::path::Path;

/// Static library holding src/ffi/inline_ffi.c, src/ffi/ffi_restated.c and
/// src/ffi/ffi_compat.c, linked whole into every crate type.
const INLINE_FFI_LIB: &str = "rsuring_inline_ffi";

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = root.join("src/ffi/liburing.map");
    println!("cargo:rerun-if-changed={}", map.display());
    println!("cargo:rerun-if-changed=scripts/linker.sh");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,liburing.so.2");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
    build_inline_ffi(root);
}

/// Compiles the inline helpers of include/liburing.h as external definitions,
/// the `name@LIBURING_2.4` entry points of src/ffi/ffi_restated.c, and the
/// older `name@RSURING_0.x` versions of rsuring's functions (src/ffi/ffi_compat.c).
///
/// Nothing in the Rust code references them, so a plain static library would
/// contribute nothing to the link: `+whole-archive` makes the linker take the
/// objects anyway, and liburing.map then exports the helpers under their
/// versions (the restated names carry theirs from `.symver`).
fn build_inline_ffi(root: &Path) {
    let sources = [
        root.join("src/ffi/inline_ffi.c"),
        root.join("src/ffi/ffi_restated.c"),
        root.join("src/ffi/ffi_compat.c"),
    ];
    let include = root.join("include");
    for source in &sources {
        println!("cargo:rerun-if-changed={}", source.display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        include.join("liburing.h").display()
    );
    for dir in ["liburing", "liburing/io_uring"] {
        // A directory entry only notices files added or removed; list them.
        let dir = include.join(dir);
        println!("cargo:rerun-if-changed={}", dir.display());
        for entry in std::fs::read_dir(&dir).expect("include/liburing") {
            let path = entry.expect("include/liburing entry").path();
            if path.extension().is_some_and(|e| e == "h") {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }

    cc::Build::new()
        .files(&sources)
        .include(&include)
        // The helpers call one another (io_uring_get_sqe ->
        // _io_uring_get_sqe -> io_uring_initialize_sqe, ...): without this
        // a -fPIC build may not inline an exported function into another,
        // and each would pay calls the header's inline code does not.
        .flag_if_supported("-fno-semantic-interposition")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .cargo_metadata(false)
        .compile(INLINE_FFI_LIB);

    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    println!("cargo:rustc-link-search=native={out_dir}");
    println!("cargo:rustc-link-lib=static:+whole-archive={INLINE_FFI_LIB}");
    for var in ["CC", "CFLAGS", "TARGET_CC", "TARGET_CFLAGS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
}
