//! The committed prototypes header must match what cbindgen generates from
//! src/ffi. Run with RSURING_BLESS=1 to rewrite it after changing the ABI.

use std::path::Path;

#[test]
fn generated_api_header_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_crate(root)
        .generate()
        .expect("cbindgen failed to parse src/ffi");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("utf-8 header");

    let path = root.join("include/liburing/rsuring_api.h");
    if std::env::var_os("RSURING_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: run `RSURING_BLESS=1 cargo test --test header` and commit it",
        path.display()
    );
}
