//! Compiling the C test programs, and checking with `ldd` which
//! `liburing.so.2` each one loads.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use super::paths::{area, repo, unique, DEBIAN_HEADER};

/// The C compiler cargo would use (through the `cc` crate, without the
/// build-script environment it normally reads), with debug info,
/// `-O<opt_level>` and warnings on (`-Wall -Wextra`; the caller may add
/// more). Not `.warnings(false)`: for GCC the `cc` crate turns that into
/// `-w`, which silences every warning, `-Werror` included.
pub fn c_compiler(opt_level: u32) -> Command {
    let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    cc::Build::new()
        .cargo_metadata(false)
        .opt_level(opt_level)
        .debug(true)
        .host(&triple)
        .target(&triple)
        .warnings(true)
        .try_get_compiler()
        .unwrap_or_else(|e| panic!("no C compiler found through the cc crate: {e}"))
        .to_command()
}

/// The bodies of the C helper pair, `c_tests/rsuring_test.c`, which every
/// C test program is linked with (its header is `c_tests/rsuring_test.h`).
pub fn helpers() -> PathBuf {
    repo().join("c_tests/rsuring_test.c")
}

/// Each function in a section of its own, and unused sections dropped at
/// link time: a program carries only the helpers it calls, so one that
/// links no liburing ([`Link::Dlopen`]) does not need the symbols of the
/// helpers it does not call.
pub const GC_FLAGS: &[&str] = &[
    "-ffunction-sections",
    "-fdata-sections",
    "-Wl,--gc-sections",
];

/// Which `liburing.h` a program is compiled against.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Header {
    /// Ours: `<repo>/include` (also has `rsuring.h`).
    Ours,
    /// Debian's liburing 2.3 `/usr/include/liburing.h`, as a binary built
    /// on Debian would be.
    Debian,
}

/// Which library a program is linked to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Link {
    /// Ours, by path: DT_NEEDED is its SONAME `liburing.so.2`, which a
    /// DT_RPATH to the area's `lib/` resolves to our file (RPATH, not
    /// RUNPATH, so `LD_LIBRARY_PATH` cannot redirect it, and the loader
    /// honours it for setuid programs too). `ldd` must confirm it.
    Rsuring,
    /// Debian's (`-luring`): an unmodified binary, which gets our library
    /// only through `LD_PRELOAD` or `LD_LIBRARY_PATH`. `ldd` must show a
    /// `liburing.so.2` that is not ours.
    Debian,
    /// Neither: the program `dlopen()`s what it tests.
    Dlopen,
}

/// A C program to build into the test crate's area: `-Wall -Wextra
/// -Werror -std=gnu11 -D_GNU_SOURCE -pthread`, debug info, `-O2` unless
/// changed, linked with the helper bodies ([`helpers`], [`GC_FLAGS`]).
#[derive(Clone, Debug)]
pub struct CProgram {
    name: String,
    sources: Vec<PathBuf>,
    header: Header,
    link: Link,
    opt_level: u32,
    flags: Vec<String>,
    libs: Vec<String>,
}

impl CProgram {
    /// `<area>/bin/<name>` from `source` (relative to the repository
    /// root, or absolute), against our header and library.
    pub fn new(name: &str, source: impl AsRef<Path>) -> Self {
        CProgram {
            name: name.to_string(),
            sources: vec![repo().join(source)],
            header: Header::Ours,
            link: Link::Rsuring,
            opt_level: 2,
            flags: Vec::new(),
            libs: Vec::new(),
        }
    }

    /// One more source file.
    pub fn source(mut self, source: impl AsRef<Path>) -> Self {
        self.sources.push(repo().join(source));
        self
    }

    pub fn header(mut self, header: Header) -> Self {
        self.header = header;
        self
    }

    pub fn link(mut self, link: Link) -> Self {
        self.link = link;
        self
    }

    /// Debian's header and `-luring`: what a Debian package's binary is.
    pub fn debian(self) -> Self {
        self.header(Header::Debian).link(Link::Debian)
    }

    pub fn opt_level(mut self, level: u32) -> Self {
        self.opt_level = level;
        self
    }

    /// A compiler flag, before the sources.
    pub fn flag(mut self, flag: &str) -> Self {
        self.flags.push(flag.to_string());
        self
    }

    pub fn flags(mut self, flags: &[&str]) -> Self {
        self.flags.extend(flags.iter().map(|f| f.to_string()));
        self
    }

    /// `-D<definition>`.
    pub fn define(self, definition: &str) -> Self {
        self.flag(&format!("-D{definition}"))
    }

    /// A library argument, after the sources (`-ldl`).
    pub fn lib(mut self, lib: &str) -> Self {
        self.libs.push(lib.to_string());
        self
    }

    /// The compiler command line, writing the binary to `out`.
    fn command(&self, out: &Path) -> Command {
        let area = area();
        let mut cmd = c_compiler(self.opt_level);
        cmd.args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-std=gnu11",
            "-D_GNU_SOURCE",
            "-pthread",
        ]);
        cmd.args(&self.flags);
        if self.header == Header::Ours {
            cmd.arg(format!("-I{}", repo().join("include").display()));
        }
        cmd.args(GC_FLAGS);
        cmd.arg("-o").arg(out).args(&self.sources).arg(helpers());
        match self.link {
            Link::Rsuring => {
                cmd.arg(&area.lib)
                    .arg("-Wl,--disable-new-dtags")
                    .arg(format!("-Wl,-rpath,{}", area.lib_dir.display()));
            }
            Link::Debian => {
                cmd.arg("-luring");
            }
            Link::Dlopen => {
                cmd.arg("-ldl");
            }
        }
        cmd.args(&self.libs);
        cmd
    }

    /// Builds the program (once per test process for the same command)
    /// and returns its path; panics with the command line and the
    /// compiler's output when it fails, or when `ldd` shows the wrong
    /// library. Debian's header must be installed for [`Header::Debian`]
    /// (callers that may skip check [`super::paths::DEBIAN_HEADER`]
    /// first).
    pub fn build(&self) -> PathBuf {
        static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
        let out = area().bin_dir.join(&self.name);
        let key = format!("{:?}", self.command(&out));
        // Builds take turns, so two tests needing one program build it
        // once. A failed build panics with the lock held; the others still
        // go on.
        let mut built = BUILT
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(path) = built.get(&key) {
            return path.clone();
        }
        if self.header == Header::Debian {
            assert!(
                Path::new(DEBIAN_HEADER).exists(),
                "{DEBIAN_HEADER} is missing: install liburing-dev (scripts/setup.sh does)"
            );
        }
        let dir = out.parent().expect("the binary's directory");
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        // Build under a private name, then rename: other test processes
        // may be running the previous binary.
        let file = out.file_name().unwrap().to_string_lossy().into_owned();
        let tmp = dir.join(unique(&format!(".{file}")));
        let mut cmd = self.command(&tmp);
        let shown = argv_line(&cmd);
        let res = cmd
            .output()
            .unwrap_or_else(|e| panic!("running the C compiler ({shown}): {e}"));
        if !res.status.success() {
            let _ = fs::remove_file(&tmp);
            panic!(
                "compiling {} failed ({})\ncommand: {shown}\n{}{}",
                self.name,
                res.status,
                String::from_utf8_lossy(&res.stdout),
                String::from_utf8_lossy(&res.stderr)
            );
        }
        fs::rename(&tmp, &out)
            .unwrap_or_else(|e| panic!("rename {} to {}: {e}", tmp.display(), out.display()));
        match self.link {
            Link::Rsuring => assert_loads_rsuring(&out),
            Link::Debian => assert_loads_other_liburing(&out),
            Link::Dlopen => {}
        }
        built.insert(key, out.clone());
        out
    }
}

/// A command's program and arguments, for messages (Debug of a Command
/// would list the whole environment).
pub fn argv_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `ldd bin` (without the caller's `LD_PRELOAD` / `LD_LIBRARY_PATH`) and
/// the canonical paths it resolves `liburing.so.2` to.
fn resolved_liburing(bin: &Path) -> (String, Vec<PathBuf>) {
    let res = Command::new("ldd")
        .arg(bin)
        .env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap_or_else(|e| panic!("running ldd: {e}"));
    let text = String::from_utf8_lossy(&res.stdout).into_owned();
    let paths = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("liburing.so.2 => "))
        .map(|rest| {
            let path = rest.split(" (").next().unwrap_or(rest).trim();
            Path::new(path)
                .canonicalize()
                .unwrap_or_else(|e| panic!("ldd {}: {path}: {e}\n{text}", bin.display()))
        })
        .collect();
    (text, paths)
}

/// `ldd`: `bin` resolves `liburing.so.2` to our library, exactly once, and
/// loads no other liburing.
pub fn assert_loads_rsuring(bin: &Path) {
    let (text, paths) = resolved_liburing(bin);
    assert!(
        paths.len() == 1 && paths[0] == area().lib,
        "{}: ldd must show liburing.so.2 => {} once:\n{text}",
        bin.display(),
        area().lib.display()
    );
    for line in text.lines().map(str::trim) {
        assert!(
            !line.starts_with("liburing") || line.starts_with("liburing.so.2 => "),
            "{}: another liburing is loaded too: {line}\n{text}",
            bin.display()
        );
    }
}

/// `ldd`: `bin` (linked with `-luring`) resolves `liburing.so.2` to a
/// library that is not ours.
pub fn assert_loads_other_liburing(bin: &Path) {
    let (text, paths) = resolved_liburing(bin);
    assert!(
        paths.len() == 1 && paths[0] != area().lib,
        "{}: linked with -luring, ldd must show one liburing.so.2 that is not ours:\n{text}",
        bin.display()
    );
}
