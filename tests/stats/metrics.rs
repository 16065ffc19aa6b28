//! `rsuring-stat --openmetrics` / `--prometheus`: checked by Prometheus's
//! own tools (`promtool check metrics` for the text format node_exporter
//! reads, promtool's OpenMetrics parser for OpenMetrics), served by a real
//! `prometheus-node-exporter`, fed hostile pages, and documented from the
//! one table of families.

use std::io::Write;
use std::net::TcpStream;

use rsuring::live_view::metrics::{self, Format, Options, FAMILIES};

use super::*;

/// A tool of Debian's `prometheus` / `prometheus-node-exporter`, or None
/// (a skip, a failure under RSURING_STRICT=1).
fn tool(name: &str, what: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        skip(
            what,
            &format!(
                "{name} is not installed (apt-get install prometheus prometheus-node-exporter)"
            ),
        );
    }
    found
}

/// `promtool check metrics` on Prometheus-format text: Ok or its complaint.
fn promtool_check(promtool: &Path, text: &str) -> Result<(), String> {
    let mut child = std::process::Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .expect("feed promtool");
    let out = child.wait_with_output().expect("promtool");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "promtool check metrics: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Prometheus's OpenMetrics parser (promtool's backfill reads OpenMetrics
/// strictly: the grammar, `# EOF`, and it wants a timestamp per sample,
/// which the check adds) on OpenMetrics text: Ok or its complaint.
fn promtool_openmetrics(promtool: &Path, text: &str, dir: &Path) -> Result<(), String> {
    let stamped: String = text
        .lines()
        .map(|l| {
            if l.starts_with('#') {
                format!("{l}\n")
            } else {
                format!("{l} 1700000000\n")
            }
        })
        .collect();
    let input = dir.join("input.om");
    fs::write(&input, stamped).expect("write the OpenMetrics input");
    let blocks = dir.join("blocks");
    let _ = fs::remove_dir_all(&blocks);
    let out = std::process::Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&input)
        .arg(&blocks)
        .output()
        .expect("promtool");
    let _ = fs::remove_dir_all(&blocks);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "promtool's OpenMetrics parser: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Checks text of `format` with Prometheus's tools.
fn prometheus_accepts(promtool: &Path, format: Format, text: &str, dir: &Path) {
    let verdict = match format {
        Format::Prometheus => promtool_check(promtool, text),
        Format::OpenMetrics => promtool_openmetrics(promtool, text, dir),
    };
    if let Err(why) = verdict {
        panic!("{why}\n--- the text ---\n{text}");
    }
}

/// The value of the sample `name{labels}` with every label in `want`.
fn sample(text: &str, name: &str, want: &[(&str, &str)]) -> Option<u64> {
    let found: Vec<u64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (n, labels) = series.split_once('{').unwrap_or((series, "}"));
            let ok = n == name
                && want
                    .iter()
                    .all(|(k, v)| labels.contains(&format!("{k}=\"{v}\"")));
            ok.then(|| value.parse().ok())?
        })
        .collect();
    assert!(found.len() <= 1, "{name} {want:?} matches several samples");
    found.first().copied()
}

/// What the exit report said of each ring (`rsuring:` lines), by fd.
fn exit_report(stderr: &str) -> HashMap<String, HashMap<String, String>> {
    stat_lines(stderr, "rsuring: pid=")
        .into_iter()
        .map(|l| (get(&l, "ring").to_string(), l))
        .collect()
}

/// The families' values of ring `fd` must be what the exit report says.
fn matches_exit_report(text: &str, pid: &str, fd: &str, line: &HashMap<String, String>) {
    let at = [("pid", pid), ("ring", fd)];
    let n = |k: &str| get(line, k).parse::<u64>().expect(k);
    let checks = [
        ("rsuring_sqes_submitted_total", vec![], n("sqes")),
        ("rsuring_cqes_reaped_total", vec![], n("cqes")),
        (
            "rsuring_enters_total",
            vec![("kind", "submit")],
            n("enters_submit"),
        ),
        (
            "rsuring_enters_total",
            vec![("kind", "wait")],
            n("enters_wait"),
        ),
        (
            "rsuring_enters_total",
            vec![("kind", "sqwait")],
            n("enters_sqwait"),
        ),
        (
            "rsuring_enters_total",
            vec![("kind", "wakeup")],
            n("wakeups"),
        ),
        ("rsuring_sq_full_total", vec![], n("enters_sqwait")),
        ("rsuring_poller_wakeups_total", vec![], n("wakeups")),
        ("rsuring_chains_split_total", vec![], n("chains_split")),
        ("rsuring_cq_overflow_total", vec![], n("cq_overflow")),
        ("rsuring_sq_entries", vec![], n("sq_entries")),
        ("rsuring_cq_entries", vec![], n("cq_entries")),
        ("rsuring_cqes_per_reap_count", vec![], n("reap_batches")),
        ("rsuring_cqes_per_reap_sum", vec![], n("cqes")),
    ];
    for (name, extra, want) in checks {
        let labels: Vec<(&str, &str)> = at.iter().copied().chain(extra).collect();
        assert_eq!(
            sample(text, name, &labels),
            Some(want),
            "{name} {labels:?} vs the exit report {line:?}\n{text}"
        );
    }
}

/// `rsuring-stat --openmetrics PID` and `--prometheus PID` of a live
/// program pass Prometheus's checks, and their values are what the
/// program's own exit report says afterwards (it does nothing meanwhile).
#[test]
fn metrics_of_a_live_process_pass_prometheus_and_match_its_exit_report() {
    let Some(promtool) = tool("promtool", "metrics_of_a_live_process") else {
        return;
    };
    let Some(live) = start_live(&[("RSURING_STATS", "1"), ("RSURING_SQPOLL_PERCPU", "1")]) else {
        return;
    };
    let pid = live.pid();
    let dir = tempdir();
    let mut texts = Vec::new();
    for (flag, format) in [
        ("--openmetrics", Format::OpenMetrics),
        ("--prometheus", Format::Prometheus),
    ] {
        let r = stat(&[flag, &pid]);
        assert_eq!(r.code, Some(0), "{}", r.describe());
        prometheus_accepts(&promtool, format, &r.stdout, &dir.0);
        texts.push(r.stdout);
    }
    let aggregate = stat(&["--openmetrics", "--aggregate", &pid]);
    prometheus_accepts(&promtool, Format::OpenMetrics, &aggregate.stdout, &dir.0);
    let bounded = stat(&["--openmetrics", "--max-rings", "1", &pid]);
    assert_eq!(bounded.code, Some(0), "{}", bounded.describe());
    let rings: std::collections::BTreeSet<&str> = bounded
        .stdout
        .lines()
        .filter(|l| l.starts_with("rsuring_sqes_submitted_total{"))
        .filter_map(|l| l.split("ring=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(rings.len(), 2, "one ring and `other`:\n{}", bounded.stdout);
    assert!(rings.contains("other"), "{rings:?}");
    let report = exit_report(&live.finish());
    let fds: Vec<&String> = report.keys().collect();
    assert_eq!(fds.len(), 4, "{report:?}");
    for text in &texts {
        for (fd, line) in &report {
            matches_exit_report(text, &pid, fd, line);
        }
    }
    let total: u64 = report
        .values()
        .map(|l| get(l, "sqes").parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        sample(
            &aggregate.stdout,
            "rsuring_sqes_submitted_total",
            &[("pid", &pid)]
        ),
        Some(total),
        "{}",
        aggregate.stdout
    );
    assert!(
        !aggregate.stdout.contains("ring=\""),
        "aggregates have no ring label:\n{}",
        aggregate.stdout
    );
}

/// A node_exporter started by hand; killed (and reaped) on drop.
struct Exporter {
    child: Child,
    port: u16,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on now.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// `GET /metrics` of 127.0.0.1:`port`: the body, or None.
fn scrape(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).ok()?;
    let (head, body) = reply.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then_some(())?;
    head.contains(" 200 ").then(|| body.to_string())
}

/// Starts node_exporter on a free loopback port with only the textfile
/// collector, reading `dir`; waits (at most 20 s) until it answers.
fn start_exporter(bin: &Path, dir: &Path) -> Exporter {
    for _ in 0..5 {
        let port = free_port();
        let child = std::process::Command::new(bin)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start prometheus-node-exporter");
        let mut exporter = Exporter { child, port };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if scrape(port).is_some() {
                return exporter;
            }
            if exporter.child.try_wait().ok().flatten().is_some() {
                break; // the port was taken meanwhile: try another
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    panic!("prometheus-node-exporter did not answer on any port tried");
}

/// A live program's metrics, written as node_exporter's textfile collector
/// expects (`rsuring-stat --prometheus -o DIR/rsuring.prom`), served by a
/// real node_exporter on loopback: a scrape returns the rsuring families,
/// with no textfile error, and the values the program's exit report says.
#[test]
fn node_exporter_serves_the_textfile_with_the_exit_reports_values() {
    let Some(exporter_bin) = tool("prometheus-node-exporter", "node_exporter_serves") else {
        return;
    };
    let Some(live) = start_live(&[("RSURING_STATS", "1")]) else {
        return;
    };
    let pid = live.pid();
    let dir = tempdir();
    let file = dir.0.join("rsuring.prom");
    let file_arg = file.display().to_string();
    let r = stat(&["--prometheus", "-o", &file_arg, &pid]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(r.stdout.is_empty(), "-o writes nothing on stdout");
    let leftovers: Vec<_> = fs::read_dir(&dir.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "rsuring.prom")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let exporter = start_exporter(&exporter_bin, &dir.0);
    let body = scrape(exporter.port).expect("a scrape of the exporter");
    drop(exporter);
    assert!(
        sample(&body, "node_textfile_scrape_error", &[]) == Some(0),
        "the textfile collector reported an error:\n{body}"
    );
    let report = exit_report(&live.finish());
    assert_eq!(report.len(), 4, "{report:?}");
    for (fd, line) in &report {
        matches_exit_report(&body, &pid, fd, line);
    }
}

/// Random pages (random bytes in every slot and the header) never make a
/// malformed exposition: each output of both formats passes Prometheus's
/// checks.
#[test]
fn random_pages_never_make_malformed_metrics() {
    let Some(promtool) = tool("promtool", "random_pages_never_make_malformed_metrics") else {
        return;
    };
    let dir = tempdir();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut snapshots = Vec::new();
    for round in 0..24u32 {
        let pid = 4000 + round;
        let mut page = page::blank_page(pid);
        let slots = 1 + (rand() % 6) as usize;
        page[page::SLOTS_USED_AT..page::SLOTS_USED_AT + 4]
            .copy_from_slice(&(slots as u32).to_ne_bytes());
        for b in &mut page[page::PID_AT + 8..page::HEADER_LEN] {
            *b = rand() as u8;
        }
        let end = page::SLOTS_AT + slots * page::SLOT_LEN;
        for b in &mut page[page::SLOTS_AT..end] {
            *b = rand() as u8;
        }
        if round % 2 == 0 {
            // Counters small enough to add up (a page whose enters do not
            // is rejected whole): the top bytes of every word zero.
            for (j, b) in page[page::SLOTS_AT..end].iter_mut().enumerate() {
                if j % 8 >= 6 {
                    *b = 0;
                }
            }
        }
        for i in 0..slots {
            // Live slots (odd generations) and a few repeated ring fds.
            let at = page::SLOTS_AT + i * page::SLOT_LEN;
            page[at] |= 1;
            if round % 3 == 0 {
                page[at + 4..at + 8].copy_from_slice(&3i32.to_ne_bytes());
            }
        }
        let header = &page[..page::HEADER_LEN];
        let copy = &page[page::SLOTS_AT..end];
        let (p, slots) = page::parse_page(pid, header, [copy, copy, copy]);
        let comm = ["a\"b", "x\\y", "new\nline", "plain", "ünï"][round as usize % 5];
        let snapshot = page::Snapshot {
            pid,
            comm: comm.into(),
            taken: Instant::now(),
            page: p,
            rings: page::join_rings(slots, Default::default()),
            pollers: Vec::new(),
        };
        for format in [Format::OpenMetrics, Format::Prometheus] {
            for aggregate in [false, true] {
                let opts = Options {
                    format,
                    aggregate,
                    max_rings: 1 + (round as usize % 4),
                };
                let text = metrics::write(std::slice::from_ref(&snapshot), &opts);
                prometheus_accepts(&promtool, format, &text, &dir.0);
            }
        }
        snapshots.push(snapshot);
    }
    for format in [Format::OpenMetrics, Format::Prometheus] {
        let opts = Options {
            format,
            aggregate: false,
            max_rings: 64,
        };
        let text = metrics::write(&snapshots, &opts);
        assert!(text.contains("rsuring_sqes_submitted"), "{text}");
        prometheus_accepts(&promtool, format, &text, &dir.0);
    }
}

/// rsuring-stat(1) and docs/statistics.md list every family of the table
/// with its type, and no other.
#[test]
fn the_manual_and_the_docs_list_the_metric_table() {
    let repo = common::repo();
    for doc in ["docs/man/man1/rsuring-stat.1", "docs/statistics.md"] {
        let text = fs::read_to_string(repo.join(doc)).expect(doc);
        let text = text
            .replace("\\_", "_")
            .replace("\\fB", "")
            .replace("\\fR", "");
        for f in &FAMILIES {
            let name = metrics::type_name(f, Format::OpenMetrics);
            // The name, and its type on the same line or the next.
            let lines: Vec<&str> = text.lines().collect();
            let listed = lines.iter().enumerate().any(|(i, l)| {
                l.contains(&name)
                    && lines[i..(i + 2).min(lines.len())]
                        .iter()
                        .any(|l| l.contains(f.kind.word()))
            });
            assert!(listed, "{doc} does not list {name} ({})", f.kind.word());
        }
        // The entries of the lists: `.B name` lines, `| \`name\`` rows.
        let listed: std::collections::BTreeSet<String> = text
            .lines()
            .filter_map(|l| {
                l.strip_prefix(".B rsuring_")
                    .or_else(|| l.strip_prefix("| `rsuring_"))
            })
            .filter_map(|rest| rest.split(['`', ' ']).next())
            .map(|w| format!("rsuring_{w}"))
            .map(|w| {
                w.trim_end_matches("_total")
                    .trim_end_matches("_bucket")
                    .to_string()
            })
            .collect();
        for name in listed {
            assert!(
                FAMILIES.iter().any(|f| f.name == name
                    || name.strip_suffix("_count") == Some(f.name)
                    || name.strip_suffix("_sum") == Some(f.name)),
                "{doc} names {name}, which is not in the table"
            );
        }
    }
}

/// `--help` and `--version` print on stdout and succeed; a usage error
/// prints the usage on stderr and exits 2.
#[test]
fn help_and_version_go_to_stdout() {
    for flag in ["--help", "-h"] {
        let r = stat(&[flag]);
        assert_eq!(r.code, Some(0), "{}", r.describe());
        assert!(
            r.stdout.starts_with("usage: rsuring-stat"),
            "{}",
            r.describe()
        );
        assert!(r.stdout.contains("--openmetrics"), "{}", r.describe());
        assert!(r.stderr.is_empty(), "{}", r.describe());
    }
    let r = stat(&["--version"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert_eq!(
        r.stdout.trim(),
        format!("rsuring-stat {}", env!("CARGO_PKG_VERSION")),
        "{}",
        r.describe()
    );
    for bad in [
        &["--bogus"][..],
        &["--aggregate"],
        &["--max-rings", "0", "--openmetrics"],
    ] {
        let r = stat(bad);
        assert_eq!(r.code, Some(2), "{}", r.describe());
        assert!(r.stdout.is_empty(), "{}", r.describe());
        assert!(r.stderr.contains("usage: rsuring-stat"), "{}", r.describe());
    }
}
