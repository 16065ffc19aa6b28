//! The shared library's ABI: exactly liburing's symbols with liburing's
//! version nodes (plus rsuring's own node, and liburing-ffi's non-default
//! `LIBURING_2.4` restatements), no Rust symbol leaking, and an unmodified
//! binary built against Debian's liburing running on rsuring through
//! LD_PRELOAD and through LD_LIBRARY_PATH; the library's thread-local
//! state reached through TLS descriptors however it was loaded.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// (version node, symbol) pairs that liburing.map declares.
fn declared() -> BTreeSet<(String, String)> {
    let map = std::fs::read_to_string(common::repo().join("src/ffi/liburing.map")).unwrap();
    let mut out = BTreeSet::new();
    let mut node = String::new();
    for raw in map.lines() {
        let line = raw.trim();
        if line.starts_with("/*") || line.starts_with('*') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_suffix('{').map(str::trim) {
            node = name.to_string();
        } else if let Some(sym) = line.strip_suffix(';') {
            let sym = sym.trim();
            if !sym.is_empty() && !sym.contains(':') && sym != "*" && !sym.starts_with('}') {
                out.insert((node.clone(), sym.to_string()));
            }
        }
    }
    out
}

/// Names src/ffi/ffi_restated.c exports a second time as the non-default
/// `name@LIBURING_2.4` (its `RSURING_FFI_RESTATED` list, one
/// `X(ret, name, params, args)` or `XV(...)` entry a line).
fn restated() -> Vec<String> {
    let src = std::fs::read_to_string(common::repo().join("src/ffi/ffi_restated.c")).unwrap();
    let mut lines = src
        .lines()
        .skip_while(|l| !l.starts_with("#define RSURING_FFI_RESTATED("));
    let head = lines
        .next()
        .expect("RSURING_FFI_RESTATED in src/ffi/ffi_restated.c");
    assert!(head.ends_with('\\'), "RSURING_FFI_RESTATED: {head}");
    let mut out = Vec::new();
    for line in lines {
        let entry = line.trim().trim_end_matches('\\').trim();
        let fields = entry
            .strip_prefix("X(")
            .or_else(|| entry.strip_prefix("XV("))
            .unwrap_or_else(|| panic!("not an X/XV entry: {line:?}"));
        let name = fields.split(',').nth(1).expect("X(ret, name, ...)").trim();
        out.push(name.to_string());
        if !line.trim_end().ends_with('\\') {
            break;
        }
    }
    out
}

/// The `name@RSURING_x` versions src/ffi/ffi_compat.c adds (its `.symver`
/// lines), as (version, name).
fn compat_versions() -> Vec<(String, String)> {
    let src = std::fs::read_to_string(common::repo().join("src/ffi/ffi_compat.c")).unwrap();
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("__asm__(\".symver "))
        .filter_map(|rest| rest.split(", ").nth(1))
        .filter_map(|versioned| versioned.split('"').next())
        .filter_map(|versioned| versioned.split_once('@'))
        .map(|(name, version)| (version.to_string(), name.to_string()))
        .collect()
}

/// (version, symbol) pairs the library defines, from `objdump -T`; a
/// non-default version is in parentheses, `(LIBURING_2.4)`.
fn exported(lib: &Path) -> BTreeSet<(String, String)> {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(lib)
        .output()
        .expect("objdump");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(" g ") && l.contains(" DF ") && !l.contains("*UND*"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[f.len() - 2].to_string(), f[f.len() - 1].to_string())
        })
        .collect()
}

#[test]
fn exports_exactly_the_declared_versioned_symbols() {
    let lib = common::library();
    let declared = declared();
    let exported = exported(&lib);
    assert!(
        declared.len() >= 59,
        "liburing.map parsed too few symbols: {declared:?}"
    );
    // liburing-ffi's restatements: each a liburing.so function whose
    // default version is another node, exported once more as a non-default
    // LIBURING_2.4 version, and nothing else without a declaration.
    let restated = restated();
    assert_eq!(
        restated.len(),
        53,
        "liburing 2.15's liburing-ffi.map restates 53 functions in LIBURING_2.4: {restated:?}"
    );
    let mut allowed = declared.clone();
    for name in &restated {
        let nodes: Vec<_> = declared.iter().filter(|(_, s)| s == name).collect();
        assert!(
            nodes.len() == 1 && nodes[0].0 != "LIBURING_2.4",
            "{name}: restated in src/ffi/ffi_restated.c, but liburing.map has it in {nodes:?}"
        );
        assert!(
            allowed.insert(("(LIBURING_2.4)".to_string(), name.clone())),
            "{name} listed twice"
        );
    }
    // Older versions of rsuring's own functions (src/ffi/ffi_compat.c), each
    // non-default beside a default in a later RSURING node.
    for (version, name) in compat_versions() {
        assert!(
            declared
                .iter()
                .any(|(v, s)| *s == name && v.starts_with("RSURING_") && *v != version),
            "{name}@{version} in src/ffi/ffi_compat.c has no newer default version in liburing.map"
        );
        assert!(allowed.insert((format!("({version})"), name.clone())));
    }
    let missing: Vec<_> = allowed.difference(&exported).collect();
    let extra: Vec<_> = exported.difference(&allowed).collect();
    assert!(
        missing.is_empty(),
        "declared but not exported (or wrong version): {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "exported but not declared (leak?): {extra:?}"
    );
    let soname = Command::new("readelf")
        .arg("-d")
        .arg(&lib)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&soname.stdout).contains("Library soname: [liburing.so.2]"));
}

#[test]
fn debian_built_binary_runs_on_rsuring() {
    let what = "debian_built_binary_runs_on_rsuring";
    if !common::require_file(what, Path::new(common::DEBIAN_HEADER), "liburing-dev") {
        return;
    }
    let area = common::area();
    let bin = common::CProgram::new("which_lib", "c_tests/abi/which_lib.c")
        .debian()
        .lib("-ldl")
        .build();
    let run = |l: common::Launch| {
        let r = l.run();
        assert!(r.ok(), "which_lib failed: {}", r.describe());
        r.stdout
    };
    let ours = |report: &str, how: &str| {
        for line in report.lines() {
            let path = line.split_once('=').unwrap().1;
            let real = std::fs::canonicalize(path).unwrap_or_default();
            assert_eq!(real, area.lib, "{how}: {line} is not rsuring");
        }
    };
    let plain = run(common::launch(&bin, &[]));
    assert!(
        !plain.contains(area.lib.to_str().unwrap()),
        "without substitution the binary should use Debian's liburing"
    );
    ours(&run(common::launch(&bin, &[]).preload()), "LD_PRELOAD");
    let dir = area.lib_dir.display().to_string();
    ours(
        &run(common::launch(&bin, &[]).var("LD_LIBRARY_PATH", &dir)),
        "LD_LIBRARY_PATH",
    );
}

/// `c_tests/abi/tls_auto_slot.c`: the automatic ring fd registration's
/// thread-local lookup (TLS descriptors, .cargo/config.toml) with the
/// library loaded by `dlopen()` (`preload` false) or by `LD_PRELOAD`.
fn run_auto_slot(preload: bool) {
    let mode = if preload { "preload" } else { "dlopen" };
    let what = format!("tls_auto_slot {mode}");
    let bin = common::CProgram::new("tls_auto_slot", "c_tests/abi/tls_auto_slot.c")
        .link(common::Link::Dlopen)
        .build();
    let lib = common::area().lib.display().to_string();
    let mut run = common::launch(&bin, &[&lib, mode]).timeout(Duration::from_secs(30));
    if preload {
        run = run.preload();
    }
    let run = run.run();
    if run.ok() {
        println!("{what} ... ok ({:.2}s)", run.elapsed.as_secs_f64());
    } else if run.skipped() {
        common::skip(&what, run.last_stderr_line());
    } else {
        panic!("{what} failed: {}", run.describe());
    }
}

#[test]
fn tls_auto_slot_dlopen() {
    run_auto_slot(false);
}

#[test]
fn tls_auto_slot_preload() {
    run_auto_slot(true);
}
