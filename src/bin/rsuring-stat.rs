//! `rsuring-stat`: the rings and SQ poll threads of a running process.
//!
//! ```text
//! rsuring-stat [-i SECS] [-n COUNT] PID    refresh every SECS (default 1), like iostat
//! rsuring-stat --once PID                  one snapshot, key=value lines (for scripts)
//! rsuring-stat --openmetrics [PID...]      metrics for a collector (also --prometheus)
//! rsuring-stat                             the processes that publish statistics
//! ```
//!
//! Per ring: SQEs/s, CQEs/s, enters/s, wake-ups/s and SQ-space waits/s, the
//! mean completion batch, and how full the SQ and CQ rings are. Per SQ poll
//! thread: its CPU (and whether it is bound there), the rings it serves, its
//! CPU use and the part of it spent submitting rather than spinning idle.
//! Library counters need the process to run with `RSURING_STATS`; without
//! it, the kernel-side figures are shown.

use std::process::ExitCode;
use std::time::Duration;

use rsuring::live_view::format::{self, Value};
use rsuring::live_view::live::{self, Page, Poller, Ring, Snapshot};
use rsuring::live_view::{metrics, Sqpoll};

const USAGE: &str = "\
usage: rsuring-stat [-i SECS] [-n COUNT] PID   refresh every SECS (default 1)
       rsuring-stat --once PID                 one snapshot, key=value lines
       rsuring-stat --openmetrics [--aggregate] [--max-rings N] [-o FILE] [PID...]
       rsuring-stat --prometheus [--aggregate] [--max-rings N] [-o FILE] [PID...]
                                               metrics of the PIDs, or of every
                                               process with statistics
       rsuring-stat                            list processes with statistics
       rsuring-stat --help | --version";

/// Ring label sets per process in the metrics unless `--max-rings` says.
const DEFAULT_MAX_RINGS: usize = 64;

struct Args {
    pids: Vec<u32>,
    once: bool,
    metrics: Option<metrics::Format>,
    aggregate: bool,
    max_rings: usize,
    output: Option<std::path::PathBuf>,
    interval: Duration,
    count: Option<u64>,
}

/// What the command line asks for.
enum Command {
    Run(Args),
    Help,
    Version,
}

fn parse_args() -> Result<Command, String> {
    let mut args = Args {
        pids: Vec::new(),
        once: false,
        metrics: None,
        aggregate: false,
        max_rings: DEFAULT_MAX_RINGS,
        output: None,
        interval: Duration::from_secs(1),
        count: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--once" => args.once = true,
            "--openmetrics" => args.metrics = Some(metrics::Format::OpenMetrics),
            "--prometheus" => args.metrics = Some(metrics::Format::Prometheus),
            "--aggregate" => args.aggregate = true,
            "--max-rings" => {
                let v = it.next().ok_or("--max-rings needs a number")?;
                args.max_rings = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=100_000).contains(n))
                    .ok_or(format!("bad --max-rings {v:?} (1 to 100000)"))?;
            }
            "-o" | "--output" => {
                let v = it.next().ok_or("-o needs a file")?;
                args.output = Some(v.into());
            }
            "-i" | "--interval" => {
                let v = it.next().ok_or("-i needs a number of seconds")?;
                let secs: f64 = v.parse().map_err(|_| format!("bad interval {v:?}"))?;
                if !(0.01..=3600.0).contains(&secs) {
                    return Err(format!("interval {secs} out of range (0.01 to 3600 s)"));
                }
                args.interval = Duration::from_secs_f64(secs);
            }
            "-n" | "--count" => {
                let v = it.next().ok_or("-n needs a count")?;
                args.count = Some(v.parse().map_err(|_| format!("bad count {v:?}"))?);
            }
            pid if pid.parse::<u32>().is_ok_and(|p| p != 0) => {
                args.pids.push(pid.parse().map_err(|_| "bad pid")?);
            }
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    let metrics_only =
        args.aggregate || args.output.is_some() || args.max_rings != DEFAULT_MAX_RINGS;
    if args.metrics.is_none() && metrics_only {
        return Err("--aggregate, --max-rings and -o go with --openmetrics or --prometheus".into());
    }
    if args.metrics.is_none() && args.pids.len() > 1 {
        return Err("one PID at a time (several only with --openmetrics or --prometheus)".into());
    }
    if args.metrics.is_some() && args.once {
        return Err("--once and --openmetrics/--prometheus are different outputs".into());
    }
    Ok(Command::Run(args))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Command::Run(a)) => a,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("rsuring-stat {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("rsuring-stat: {why}");
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(format) = args.metrics {
        return write_metrics(&args, format);
    }
    let Some(&pid) = args.pids.first() else {
        list_processes();
        return ExitCode::SUCCESS;
    };
    let Some(first) = live::snapshot(pid) else {
        eprintln!("rsuring-stat: no process {pid}");
        return ExitCode::FAILURE;
    };
    note_page(&first);
    if args.once {
        print_once(&first);
        return ExitCode::SUCCESS;
    }
    watch(first, &args);
    ExitCode::SUCCESS
}

/// `--openmetrics` / `--prometheus`: one snapshot of the PIDs given, or
/// of every process that publishes statistics and that this user may
/// read, to stdout or (`-o`) atomically to a file.
fn write_metrics(args: &Args, format: metrics::Format) -> ExitCode {
    let named = !args.pids.is_empty();
    let pids = if named {
        args.pids.clone()
    } else {
        live::published_pids()
    };
    let mut snapshots = Vec::new();
    let mut missing = false;
    for pid in pids {
        let Some(s) = live::snapshot(pid) else {
            if named {
                eprintln!("rsuring-stat: no process {pid}");
                missing = true;
            }
            continue;
        };
        match &s.page {
            Page::Live { .. } => {}
            // A PID asked for by name shows what the kernel says.
            _ if named => note_page(&s),
            Page::Rejected(reason) => {
                eprintln!("rsuring-stat: {}", rejected(pid, reason));
                continue;
            }
            _ => continue,
        }
        snapshots.push(s);
    }
    let opts = metrics::Options {
        format,
        aggregate: args.aggregate,
        max_rings: args.max_rings,
    };
    let text = metrics::write(&snapshots, &opts);
    let written = match &args.output {
        None => {
            use std::io::Write;
            std::io::stdout().write_all(text.as_bytes())
        }
        Some(path) => replace_file(path, text.as_bytes()),
    };
    if let Err(e) = written {
        eprintln!("rsuring-stat: cannot write the metrics: {e}");
        return ExitCode::FAILURE;
    }
    if missing {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Replaces `path` with `bytes` so that a reader sees the old file or the
/// new one, never a part: a temporary file in the same directory, synced,
/// then renamed over it.
fn replace_file(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the output needs a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// One stderr line when the page is not shown as it is.
fn note_page(s: &Snapshot) {
    let why = match &s.page {
        Page::Live { overflowed: 0, .. } => return,
        &Page::Live { overflowed, .. } => {
            format!(
                "{overflowed} rings of process {} found no statistics slot",
                s.pid
            )
        }
        Page::Missing | Page::Stale => format!(
            "process {} publishes no statistics (run it with RSURING_STATS=1 on rsuring); \
             showing what the kernel reports",
            s.pid
        ),
        Page::Foreign => format!(
            "the statistics page of process {} has a layout this rsuring-stat does not know",
            s.pid
        ),
        Page::Rejected(reason) => rejected(s.pid, reason) + "; showing what the kernel reports",
        Page::Unreadable => format!(
            "this user may not read {} (run as its owner or root); \
             showing what the kernel reports",
            live::page_path(s.pid)
        ),
    };
    eprintln!("rsuring-stat: {why}");
}

/// Why the file under the page's name of `pid` is not read.
fn rejected(pid: u32, reason: &str) -> String {
    format!("ignoring {}: {reason}", live::page_path(pid))
}

/// Without a pid: the processes that publish statistics.
fn list_processes() {
    println!(
        "{:>8}  {:<16} {:>5} {:>7}",
        "PID", "COMMAND", "RINGS", "POLLERS"
    );
    for pid in live::published_pids() {
        let Some(s) = live::snapshot(pid) else {
            continue;
        };
        match &s.page {
            Page::Live { .. } => {}
            Page::Rejected(reason) => {
                eprintln!("rsuring-stat: {}", rejected(pid, reason));
                continue;
            }
            Page::Foreign => {
                eprintln!(
                    "rsuring-stat: ignoring {}: a layout this rsuring-stat does not know",
                    live::page_path(pid)
                );
                continue;
            }
            // Other users' processes are not this user's to list.
            Page::Missing | Page::Stale | Page::Unreadable => continue,
        }
        println!(
            "{:>8}  {:<16} {:>5} {:>7}",
            pid,
            s.comm,
            s.rings.len(),
            s.pollers.len()
        );
    }
}

/// `--once`: one `rsuring:` line per ring (the library's format, plus live
/// fields) and one `rsuring-poller:` line per SQ poll thread.
fn print_once(s: &Snapshot) {
    for r in &s.rings {
        let mut fields = match (&r.info, &r.counters) {
            (Some(info), Some(c)) => format::ring_fields(s.pid, info, c, None),
            _ => kernel_only_fields(s.pid, r),
        };
        if let Some(k) = r.kernel {
            fields.push(("sq_fill", Value::Num(k.sq_fill() as u64)));
            fields.push(("cq_fill", Value::Num(k.cq_fill() as u64)));
            fields.push(("cq_overflow_list", Value::Num(k.cq_overflow as u64)));
            if let Some(tid) = k.sq_thread {
                fields.push(("poller_tid", Value::Int(tid as i64)));
            }
        }
        println!("{}", format::text("rsuring:", &fields));
    }
    for p in &s.pollers {
        let fds: Vec<String> = p.ring_fds.iter().map(i32::to_string).collect();
        let mut fields: format::Fields = vec![
            ("pid", Value::Num(s.pid as u64)),
            ("tid", Value::Int(p.tid as i64)),
            ("cpu", Value::Int(p.cpu as i64)),
            (
                "bound",
                Value::Word(if p.bound { "yes" } else { "no" }.into()),
            ),
            ("rings", Value::Num(p.ring_fds.len() as u64)),
            ("ring_fds", Value::Word(fds.join(","))),
        ];
        if let Some(t) = &p.task {
            fields.push(("cpu_ticks", Value::Num(t.cpu_ticks)));
            fields.push(("last_cpu", Value::Int(t.last_cpu as i64)));
            fields.push(("state", Value::Word(t.state.to_string())));
        }
        if let (Some(total), Some(work)) = (p.total_us, p.work_us) {
            fields.push(("sq_total_us", Value::Num(total)));
            fields.push(("sq_work_us", Value::Num(work)));
        }
        println!("{}", format::text("rsuring-poller:", &fields));
    }
    if let Page::Live {
        overflowed,
        refused,
        unverified_pollers,
    } = s.page
    {
        let fields = format::process_fields(s.pid, &refused, overflowed, unverified_pollers, false);
        println!("{}", format::text("rsuring-process:", &fields));
    }
}

/// A ring without statistics: what the kernel says.
fn kernel_only_fields(pid: u32, r: &Ring) -> format::Fields {
    let k = r.kernel.unwrap_or_default();
    let sqpoll = if k.sq_thread.is_some() {
        Sqpoll::Own
    } else {
        Sqpoll::No
    };
    vec![
        ("pid", Value::Num(pid as u64)),
        ("ring", Value::Int(r.fd as i64)),
        ("stats", Value::Word("off".into())),
        ("sqpoll", Value::Word(sqpoll.word().into())),
    ]
}

fn human(x: f64) -> String {
    if x >= 10e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 10e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or("-".into(), human)
}

fn poller_word(r: &Ring) -> String {
    let Some(info) = r.info else {
        return match r.kernel.and_then(|k| k.sq_thread_cpu) {
            Some(cpu) => format!(
                "tid {} cpu{cpu}",
                r.kernel.and_then(|k| k.sq_thread).unwrap_or(0)
            ),
            None => "-".into(),
        };
    };
    match (Sqpoll::from_raw(info.sqpoll), info.poller_cpu) {
        (Sqpoll::No, _) => format::transparent_word(info.transparent).unwrap_or("-".into()),
        (kind, cpu) => {
            let at = if cpu < 0 {
                "unbound".to_string()
            } else {
                format!("cpu{cpu}")
            };
            format!("{} {at}", kind.word())
        }
    }
}

/// Refreshes every interval until the process exits or COUNT reports.
fn watch(mut before: Snapshot, args: &Args) {
    let mut reports = 0u64;
    loop {
        std::thread::sleep(args.interval);
        let Some(now) = live::snapshot(before.pid) else {
            println!("rsuring-stat: process {} exited", before.pid);
            return;
        };
        if now.page != before.page {
            note_page(&now);
        }
        let secs = now.taken.duration_since(before.taken).as_secs_f64();
        render(&before, &now, secs);
        before = now;
        reports += 1;
        if args.count.is_some_and(|n| reports >= n) {
            return;
        }
    }
}

fn render(before: &Snapshot, now: &Snapshot, secs: f64) {
    let mut out = format!(
        "\npid {} ({})  {} rings, {} SQ poll threads, over {:.2} s\n",
        now.pid,
        now.comm,
        now.rings.len(),
        now.pollers.len(),
        secs
    );
    if let Page::Live { refused, .. } = now.page {
        if refused.iter().any(|&n| n != 0) {
            let parts: Vec<String> = format::process_fields(now.pid, &refused, 0, 0, false)
                .into_iter()
                .filter_map(|(k, v)| match (k.strip_prefix("refused_"), v) {
                    (Some(name), format::Value::Num(n)) if n != 0 => {
                        Some(format!("{} {n}", name.replace('_', "-")))
                    }
                    _ => None,
                })
                .collect();
            out += &format!("RSURING_SQPOLL=1 refused: {}\n", parts.join(", "));
        }
    }
    let ring_row = |cells: [&str; 11]| {
        let [fd, poller, sqes, cqes, enters, wake, sqwait, batch, sq, cq, ovf] = cells;
        format!(
            "{fd:>4} {poller:<18} {sqes:>8} {cqes:>8} {enters:>8} {wake:>7} {sqwait:>8} \
             {batch:>6} {sq:>10} {cq:>10} {ovf:>4}\n"
        )
    };
    out += &ring_row([
        "fd", "poller", "SQE/s", "CQE/s", "enter/s", "wake/s", "sqwait/s", "batch", "SQ fill",
        "CQ fill", "ovf",
    ]);
    let mut wakeups_by_tid: std::collections::HashMap<i32, f64> = Default::default();
    for r in &now.rings {
        let rates = live::ring_rates(live::find_ring(before, r), r, secs);
        let fill = |used: Option<u32>, size: Option<u32>| match (used, size) {
            (Some(u), Some(s)) => format!("{u}/{s}"),
            (Some(u), None) => u.to_string(),
            _ => "-".into(),
        };
        let rt = rates.unwrap_or_default();
        if let (Some(tid), Some(w)) = (r.kernel.and_then(|k| k.sq_thread), rt.wakeups) {
            *wakeups_by_tid.entry(tid).or_default() += w;
        }
        let num = |x: f64| {
            if rates.is_some() {
                human(x)
            } else {
                "-".into()
            }
        };
        out += &ring_row([
            &r.fd.to_string(),
            &poller_word(r),
            &num(rt.sqes),
            &num(rt.cqes),
            &opt(rt.enters),
            &opt(rt.wakeups),
            &opt(rt.sqwaits),
            &opt(rt.batch),
            &fill(r.kernel.map(|k| k.sq_fill()), r.info.map(|i| i.sq_entries)),
            &fill(r.kernel.map(|k| k.cq_fill()), r.info.map(|i| i.cq_entries)),
            &r.kernel.map_or("-".into(), |k| k.cq_overflow.to_string()),
        ]);
    }
    let poller_row = |cells: [&str; 10]| {
        let [tid, cpu, bound, rings, pct, work, wake, ran, state, fds] = cells;
        format!(
            "{tid:>8} {cpu:>4} {bound:>5} {rings:>5} {pct:>6} {work:>6} {wake:>7} {ran:>4} \
             {state:>5}  {fds}\n"
        )
    };
    if !now.pollers.is_empty() {
        out += &poller_row([
            "SQ tid", "cpu", "bound", "rings", "CPU%", "work%", "wake/s", "ran", "state",
            "ring fds",
        ]);
    }
    for p in &now.pollers {
        let earlier: Option<&Poller> = before.pollers.iter().find(|q| q.tid == p.tid);
        let (cpu, work) = live::poller_usage(earlier, p, secs);
        let fds: Vec<String> = p.ring_fds.iter().map(i32::to_string).collect();
        let task = p.task.as_ref();
        out += &poller_row([
            &p.tid.to_string(),
            &p.cpu.to_string(),
            if p.bound { "yes" } else { "no" },
            &p.ring_fds.len().to_string(),
            &cpu.map_or("-".into(), |c| format!("{c:.1}")),
            &work.map_or("-".into(), |w| format!("{w:.1}")),
            &wakeups_by_tid.get(&p.tid).map_or("-".into(), |w| human(*w)),
            &task.map_or("-".into(), |t| t.last_cpu.to_string()),
            &task.map_or("-".into(), |t| t.state.to_string()),
            &fds.join(","),
        ]);
    }
    print!("{out}");
}
