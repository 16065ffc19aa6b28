//! `rsuring-stat`: the rings and SQ poll threads of a running process.
//!
//! ```text
//! rsuring-stat [-i SECS] [-n COUNT] PID    refresh every SECS (default 1), like iostat
//! rsuring-stat --once PID                  one snapshot, key=value lines (for scripts)
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
use rsuring::live_view::Sqpoll;

const USAGE: &str = "usage: rsuring-stat [-i SECS] [-n COUNT] PID\n       \
                     rsuring-stat --once PID\n       rsuring-stat            \
                     (list processes with statistics)";

struct Args {
    pid: Option<u32>,
    once: bool,
    interval: Duration,
    count: Option<u64>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        pid: None,
        once: false,
        interval: Duration::from_secs(1),
        count: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--once" => args.once = true,
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
            "-h" | "--help" => return Err(String::new()),
            pid if args.pid.is_none() && pid.parse::<u32>().is_ok() => {
                args.pid = pid.parse().ok();
            }
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(why) => {
            if !why.is_empty() {
                eprintln!("rsuring-stat: {why}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(pid) = args.pid else {
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
            fields.push(("cq_overflow", Value::Num(k.cq_overflow as u64)));
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
