//! Gives the shared library liburing's SONAME and symbol versions.
use std::path::Path;

fn main() {
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("liburing.map");
    println!("cargo:rerun-if-changed={}", map.display());
    println!("cargo:rerun-if-changed=tools/linker.sh");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,liburing.so.2");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
}
