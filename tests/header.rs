//! The committed prototype headers must match what cbindgen generates from src/ffi (the struct
//! definitions around them are hand-written). Run with RSURING_BLESS=1 to rewrite them after
//! changing the ABI.

use std::path::Path;

/// (header, include guard, its src/ files: the type modules, for the struct names, then src/ffi's)
const HEADERS: &[(&str, &str, &str)] = &[
    (
        "include/liburing/rsuring_api.h",
        "LIBURING_RSURING_API_H",
        "uapi.rs ring.rs stats.rs ffi/setup.rs ffi/queue.rs ffi/register.rs ffi/syscall.rs",
    ),
    (
        "include/liburing/rsuring_ext_api.h",
        "RSURING_EXT_API_H",
        "uapi.rs ring.rs stats.rs ffi/rsuring.rs",
    ),
];

fn generate(root: &Path, files: &str, guard: &str) -> String {
    let mut config = cbindgen::Config::from_file(root.join("include/cbindgen.toml")).unwrap();
    config.include_guard = Some(guard.to_string());
    // cbindgen does not expand macros: each file goes to it with its tables unfolded, from a
    // temporary directory.
    let dir = std::env::temp_dir().join(format!("rsuring-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut builder = cbindgen::Builder::new().with_config(config);
    for file in files.split(' ') {
        let text = std::fs::read_to_string(root.join("src").join(file)).unwrap();
        let path = dir.join(file.replace('/', "-"));
        std::fs::write(&path, unfold_tables(&text)).unwrap();
        builder = builder.with_src(path);
    }
    let (generated, mut out) = (builder.generate(), Vec::new());
    std::fs::remove_dir_all(&dir).unwrap();
    generated.expect("cbindgen parses src/ffi").write(&mut out);
    String::from_utf8(out).expect("utf-8 header")
}

/// `text` as cbindgen must read it: the lines of a table of src/ffi/mod.rs's `ffi_exports!` or of
/// src/uapi.rs's `passed_through!` (`struct name;` lines) stand without it, an export entry (one
/// line) as its `#[no_mangle] extern "C"` signature, with its docs.
fn unfold_tables(text: &str) -> String {
    let mut table = false;
    let unfold = |line: &str| {
        let entry = line.trim_start().trim_start_matches("unsafe ");
        let opens = line.ends_with("! {") && line.matches(' ').count() == 1;
        if opens || table && line == "}" {
            table = opens;
            return String::new();
        }
        match entry.split_once(" { ") {
            Some((signature, _)) if table && entry.starts_with("fn ") => {
                format!("#[no_mangle]\npub extern \"C\" {signature} {{}}")
            }
            _ => line.to_string(),
        }
    };
    text.lines().map(unfold).collect::<Vec<_>>().join("\n")
}

/// Every header is current, and every file of src/ffi but mod.rs is in one.
#[test]
fn headers_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for &(header, guard, files) in HEADERS {
        let (path, generated) = (root.join(header), generate(root, files, guard));
        if std::env::var_os("RSURING_BLESS").is_some() {
            std::fs::write(&path, &generated).expect("write header");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let stale = "is stale: run `RSURING_BLESS=1 cargo test --test header` and commit it";
        assert!(committed == generated, "{header} {stale}");
    }
    for entry in std::fs::read_dir(root.join("src/ffi")).unwrap() {
        let name = format!("ffi/{}", entry.unwrap().file_name().into_string().unwrap());
        let generated = HEADERS.iter().any(|h| h.2.split(' ').any(|f| f == name));
        let rust = name.ends_with(".rs") && name != "ffi/mod.rs";
        assert!(!rust || generated, "src/{name}: in no header");
    }
}
