//! Running a program the way every test driver does: its own process
//! group, a timeout that kills the whole group, an environment without
//! the caller's `RSURING_*`, `LD_PRELOAD` and `LD_LIBRARY_PATH` (cargo
//! points the last at the target directory), and optionally as the user
//! nobody, on chosen CPUs, or under a wrapper such as strace.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::strict::STRICT_VAR;

/// Exit status of a C test program that could not run here (liburing's
/// convention): a skip, a failure under `RSURING_STRICT=1`.
pub const EXIT_SKIP: i32 = 77;

/// The library's switch that silences its warning about RSURING_* names it
/// does not read (the tools' own variables).
pub const QUIET_VAR: &str = "RSURING_QUIET_UNKNOWN";

/// nobody/nogroup on Debian.
pub const NOBODY: u32 = 65534;

/// How to run one program. The command line shown in messages (`$ ...`)
/// is a working reproduction: the variables, the wrappers, the program.
#[derive(Clone, Debug)]
pub struct Launch {
    program: OsString,
    args: Vec<OsString>,
    vars: Vec<(String, String)>,
    keep_rsuring_env: bool,
    user: Option<u32>,
    cpus: Option<String>,
    wrapper: Vec<String>,
    cwd: Option<PathBuf>,
    timeout: Duration,
}

/// [`Launch`] of `program` with `args`; 60 s timeout.
pub fn launch(program: impl AsRef<Path>, args: &[&str]) -> Launch {
    Launch {
        program: program.as_ref().as_os_str().to_owned(),
        args: args.iter().map(OsString::from).collect(),
        vars: Vec::new(),
        keep_rsuring_env: false,
        user: None,
        cpus: None,
        wrapper: Vec::new(),
        cwd: None,
        timeout: Duration::from_secs(60),
    }
}

impl Launch {
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// An environment variable for the program.
    pub fn var(mut self, key: &str, value: &str) -> Self {
        self.vars.push((key.into(), value.into()));
        self
    }

    /// Whether the launch sets `key`.
    pub fn has_var(&self, key: &str) -> bool {
        self.vars.iter().any(|(k, _)| k == key)
    }

    /// `LD_PRELOAD=<our library>`.
    pub fn preload(self) -> Self {
        let lib = super::paths::area().lib.display().to_string();
        self.var("LD_PRELOAD", &lib)
    }

    /// Pass the caller's `RSURING_*` variables through (`test.sh` runs the
    /// C scenario tests once more with `RSURING_SQPOLL=1` and so on).
    pub fn keep_rsuring_env(mut self) -> Self {
        self.keep_rsuring_env = true;
        self
    }

    /// Run as uid and gid `id`, with no supplementary groups and, as a
    /// non-root process after exec, no capabilities (`setpriv`).
    pub fn user(mut self, id: u32) -> Self {
        self.user = Some(id);
        self
    }

    /// [`Launch::user`] nobody.
    pub fn nobody(self) -> Self {
        self.user(NOBODY)
    }

    /// Allow the program only the CPUs of `list` (`taskset -c LIST`).
    pub fn cpus(mut self, list: &str) -> Self {
        self.cpus = Some(list.into());
        self
    }

    /// Run the whole launch under `argv` (outermost: outside `taskset`
    /// and `setpriv`), e.g. `strace -f -o FILE`.
    pub fn wrap(mut self, argv: &[&str]) -> Self {
        self.wrapper = argv.iter().map(|a| a.to_string()).collect();
        self
    }

    pub fn cwd(mut self, dir: &Path) -> Self {
        self.cwd = Some(dir.to_path_buf());
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn argv(&self) -> Vec<OsString> {
        let mut argv: Vec<OsString> = self.wrapper.iter().map(OsString::from).collect();
        if let Some(cpus) = &self.cpus {
            argv.extend(["taskset", "-c", cpus].map(OsString::from));
        }
        if let Some(id) = self.user {
            argv.push("setpriv".into());
            argv.push(format!("--reuid={id}").into());
            argv.push(format!("--regid={id}").into());
            argv.push("--clear-groups".into());
            argv.push("--".into());
        }
        argv.push(self.program.clone());
        argv.extend(self.args.iter().cloned());
        argv
    }

    fn cmdline_of(&self, argv: &[OsString]) -> String {
        let mut line = String::new();
        if let Some(dir) = &self.cwd {
            line.push_str(&format!("cd {} && ", dir.display()));
        }
        for (k, v) in &self.vars {
            line.push_str(&format!("{k}={v} "));
        }
        let words: Vec<_> = argv.iter().map(|a| a.to_string_lossy()).collect();
        line.push_str(&words.join(" "));
        line
    }

    /// The command line shown in messages: a working reproduction.
    pub fn cmdline(&self) -> String {
        self.cmdline_of(&self.argv())
    }

    /// The prepared command, not started: its own process group, the
    /// environment rule above, the variables, the wrappers. For a program
    /// a test talks to while it runs; the caller owns its pipes and must
    /// kill its process group (`-pid`) when done, even on failure.
    pub fn command(&self) -> Command {
        let argv = self.argv();
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).process_group(0);
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        for (key, _) in std::env::vars_os() {
            let Some(key) = key.to_str() else { continue };
            let rsuring = key.starts_with("RSURING_") && key != STRICT_VAR;
            if (rsuring && !self.keep_rsuring_env)
                || key == "LD_PRELOAD"
                || key == "LD_LIBRARY_PATH"
            {
                cmd.env_remove(key);
            }
        }
        // RSURING_STRICT is the tests' variable, not the library's: the
        // library reports every RSURING_* name it does not read unless
        // RSURING_QUIET_UNKNOWN names it.
        let quiet_set = self.vars.iter().any(|(k, _)| k == QUIET_VAR)
            || (self.keep_rsuring_env && std::env::var_os(QUIET_VAR).is_some());
        if std::env::var_os(STRICT_VAR).is_some() && !quiet_set {
            cmd.env(QUIET_VAR, STRICT_VAR);
        }
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// [`Self::command`] started with piped stdin and stdout, for a test
    /// that talks to it, and its stderr read to the end by a thread of its
    /// own. The same duty: kill its process group (`-pid`) when done.
    pub fn spawn_talking(&self, what: &str) -> (std::process::Child, JoinHandle<String>) {
        let mut cmd = self.command();
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("start {what}: {e}"));
        let stderr = child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>);
        (child, drain(stderr))
    }

    /// Runs it and collects its output. On timeout the whole process group
    /// is killed (`Run::timed_out`); once the program has exited, whatever
    /// it left running in its group is killed too. Panics only when it
    /// cannot be started.
    pub fn run(&self) -> Run {
        let cmdline = self.cmdline();
        let mut cmd = self.command();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{cmdline}`: {e}"));
        let group = child.id() as libc::pid_t;
        let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let mut timed_out = false;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for the program") {
                break status;
            }
            if start.elapsed() > self.timeout {
                timed_out = true;
                // SAFETY: kill(2) on the program's own process group.
                unsafe { libc::kill(-group, libc::SIGKILL) };
                break child.wait().expect("wait for the killed program");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        // Children that outlived the program would keep the pipes open.
        // SAFETY: as above; ESRCH when the group is already gone.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        let elapsed = start.elapsed();
        eprintln!("[{elapsed:>8.2?}] exit {:?}: {cmdline}", status.code());
        Run {
            code: status.code(),
            signal: status.signal(),
            timed_out,
            timeout: self.timeout,
            stdout: collect(stdout),
            stderr: collect(stderr),
            cmdline,
            elapsed,
        }
    }
}

/// Reads a pipe to its end on a thread of its own, so that a chatty
/// program never blocks on a full pipe.
fn drain(pipe: Option<Box<dyn Read + Send>>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// The output a drain thread read, waiting at most 5 s for the pipe to
/// close (a process that left the group could hold it open).
fn collect(reader: JoinHandle<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !reader.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    if reader.is_finished() {
        reader.join().unwrap_or_default()
    } else {
        "(output not collected: the pipe is still open)\n".into()
    }
}

/// What a [`Launch`] did.
#[derive(Debug)]
pub struct Run {
    /// Exit status, or None when killed by a signal.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub timeout: Duration,
    pub stdout: String,
    pub stderr: String,
    /// A command line that reproduces the run.
    pub cmdline: String,
    pub elapsed: Duration,
}

impl Run {
    /// Exited with status 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// Exited with [`EXIT_SKIP`].
    pub fn skipped(&self) -> bool {
        self.code == Some(EXIT_SKIP) && !self.timed_out
    }

    /// "exit status 1", "killed by signal 11", "timed out after 60 s".
    pub fn how(&self) -> String {
        if self.timed_out {
            format!(
                "timed out after {} s (its process group was killed)",
                self.timeout.as_secs()
            )
        } else if let Some(code) = self.code {
            format!("exit status {code}")
        } else {
            format!("killed by signal {}", self.signal.unwrap_or(0))
        }
    }

    /// The command line, how it ended, and the ends of its output.
    pub fn describe(&self) -> String {
        format!(
            "$ {}\n{} after {:.2?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.cmdline,
            self.how(),
            self.elapsed,
            tail(&self.stdout, 16000),
            tail(&self.stderr, 16000)
        )
    }

    /// Whether the program passed: true on exit 0; on [`EXIT_SKIP`] a
    /// [`super::strict::skip`] (a failure under strict mode) and false;
    /// anything else panics with [`Run::describe`].
    pub fn expect_pass(&self) -> bool {
        if self.skipped() {
            super::strict::skip(
                &self.cmdline,
                &format!(
                    "the program exited {EXIT_SKIP}: {}",
                    self.last_stderr_line()
                ),
            );
            return false;
        }
        assert!(self.ok(), "program failed: {}", self.describe());
        true
    }

    /// The last line of stderr: a skipping program's reason.
    pub fn last_stderr_line(&self) -> &str {
        self.stderr.lines().last().unwrap_or("(no reason given)")
    }

    /// The value of `key=value` on stdout (first occurrence); panics when
    /// there is none.
    pub fn field(&self, key: &str) -> String {
        let prefix = format!("{key}=");
        self.stdout
            .split_whitespace()
            .find_map(|tok| tok.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {key}= in the output:\n{}", self.describe()))
            .to_string()
    }
}

/// The last `n` bytes of `s` (at a character boundary).
pub fn tail(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut start = s.len() - n;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// scripts/fuzz.sh with `args`, on a fresh scratch corpus, for at most 7
/// minutes (the build included).
pub fn fuzz_script(args: &[&str]) -> Run {
    let repo = super::repo();
    let script = repo.join("scripts/fuzz.sh");
    let l = launch("bash", &[script.to_str().unwrap()]).cwd(&repo);
    let l = args.iter().fold(l, |l, a| l.arg(*a));
    l.var("RSURING_FUZZ_FRESH", "1")
        .timeout(Duration::from_secs(420))
        .run()
}
