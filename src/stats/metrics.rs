//! The statistics as metrics a collector scrapes: OpenMetrics text
//! (`rsuring-stat --openmetrics`) and the Prometheus text format that
//! node_exporter's textfile collector reads (`rsuring-stat --prometheus`).
//!
//! Every family comes from one table, [`FAMILIES`]: its name, type, unit,
//! help text and the extra label it has, if any. The writer, rsuring-stat(1)
//! and docs/statistics.md follow the table (a test checks the two
//! documents against it).
//!
//! **Labels.** Ring families: `pid`, `comm` (the command name), `ring`
//! (the ring fd; `FD/SLOT` when two rings of the process show the same fd,
//! so that no two series of a family have the same labels), `mode`
//! (`plain`, `sqpoll` for an SQ poll thread of its own, `shared`,
//! `transparent`) and `poller_cpu` (the poll thread's CPU, `unbound`, or
//! `none`). Process families: `pid` and `comm`. `enters` adds `kind`,
//! `transparent_refusals` adds `reason`, histograms add `le`.
//!
//! **Cardinality.** A process contributes at most `max_rings` ring label
//! sets; its further rings (by fd) are summed into one set with `ring`,
//! `mode` and `poller_cpu` all `other`. With `aggregate`, all of a
//! process's rings are summed into one set without those three labels. So
//! a snapshot has at most processes x (max_rings + 1) ring label sets, and
//! [`series_per_ring`] series for each.
//!
//! **Untrusted input.** The values come from pages other processes write:
//! every number is printed as an unsigned integer (or a float made from
//! one), bucket counts are made cumulative with saturating additions, and
//! label values are escaped, so no page can make the output malformed.

use std::fmt::Write;

use super::live::{Page, Ring, Snapshot};
use super::slot::{Counters, Hist, Sqpoll, REFUSAL_NAMES, SIZE_BUCKETS, WAIT_BUCKETS};

/// A family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// Which label set a family's series carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Ring,
    Process,
}

/// What a family measures (the writer's key into a snapshot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    SqesSubmitted,
    CqesReaped,
    Enters,
    SqFull,
    PollerWakeups,
    ChainsSplit,
    CqOverflow,
    CqOverflowPending,
    Inflight,
    CqReady,
    SqEntries,
    CqEntries,
    WaitSeconds,
    SqesPerSubmit,
    CqesPerReap,
    Rings,
    Refusals,
    RingsWithoutStats,
    PollersUnverified,
}

/// One metric family.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub id: Id,
    /// The family name (a counter's samples add `_total`).
    pub name: &'static str,
    pub kind: Kind,
    /// The unit, a suffix of the name (empty: none).
    pub unit: &'static str,
    pub scope: Scope,
    /// The label this family adds to its scope's, if any.
    pub label: Option<&'static str>,
    pub help: &'static str,
}

const fn family(
    id: Id,
    name: &'static str,
    kind: Kind,
    scope: Scope,
    label: Option<&'static str>,
    help: &'static str,
) -> Family {
    Family {
        id,
        name,
        kind,
        unit: "",
        scope,
        label,
        help,
    }
}

use Kind::{Counter, Gauge, Histogram};
use Scope::{Process, Ring as OfRing};

/// Every family, in output order: the one table.
pub const FAMILIES: [Family; 19] = [
    family(
        Id::SqesSubmitted,
        "rsuring_sqes_submitted",
        Counter,
        OfRing,
        None,
        "SQEs this process submitted on the ring (SQ poll rings: handed to the poll thread).",
    ),
    family(
        Id::CqesReaped,
        "rsuring_cqes_reaped",
        Counter,
        OfRing,
        None,
        "CQEs this process consumed from the ring, whoever submitted them.",
    ),
    family(
        Id::Enters,
        "rsuring_enters",
        Counter,
        OfRing,
        Some("kind"),
        "io_uring_enter system calls this process made on the ring, by purpose: submit, wait \
         (for completions), sqwait (for SQ space), wakeup (of a sleeping SQ poll thread).",
    ),
    family(
        Id::SqFull,
        "rsuring_sq_full",
        Counter,
        OfRing,
        None,
        "Times a submission of this process found the SQ full and waited for space.",
    ),
    family(
        Id::PollerWakeups,
        "rsuring_poller_wakeups",
        Counter,
        OfRing,
        None,
        "Times this process woke the ring's sleeping SQ poll thread.",
    ),
    family(
        Id::ChainsSplit,
        "rsuring_chains_split",
        Counter,
        OfRing,
        None,
        "Link chains of this process that a shared SQ poll thread had to split.",
    ),
    family(
        Id::CqOverflow,
        "rsuring_cq_overflow",
        Counter,
        OfRing,
        None,
        "CQEs the kernel could not post on the ring for lack of room (the kernel's count for \
         the ring, as this process last read it).",
    ),
    family(
        Id::CqOverflowPending,
        "rsuring_cq_overflow_pending",
        Gauge,
        OfRing,
        None,
        "CQEs waiting on the kernel's overflow list of the ring because the CQ was full.",
    ),
    family(
        Id::Inflight,
        "rsuring_inflight",
        Gauge,
        OfRing,
        None,
        "Requests the kernel took from the SQ and has not completed yet (SQ head minus CQ \
         tail, all processes; requests with several or no CQEs skew it).",
    ),
    family(
        Id::CqReady,
        "rsuring_cq_ready",
        Gauge,
        OfRing,
        None,
        "CQEs posted on the ring and not consumed yet.",
    ),
    family(
        Id::SqEntries,
        "rsuring_sq_entries",
        Gauge,
        OfRing,
        None,
        "Entries of the ring's SQ.",
    ),
    family(
        Id::CqEntries,
        "rsuring_cq_entries",
        Gauge,
        OfRing,
        None,
        "Entries of the ring's CQ.",
    ),
    Family {
        unit: "seconds",
        ..family(
            Id::WaitSeconds,
            "rsuring_wait_seconds",
            Histogram,
            OfRing,
            None,
            "Time io_uring_enter calls of this process spent waiting for completions on the ring.",
        )
    },
    family(
        Id::SqesPerSubmit,
        "rsuring_sqes_per_submit",
        Histogram,
        OfRing,
        None,
        "SQEs per io_uring_enter call of this process that submitted on the ring.",
    ),
    family(
        Id::CqesPerReap,
        "rsuring_cqes_per_reap",
        Histogram,
        OfRing,
        None,
        "CQEs per reap batch of this process (a movement of the CQ head between two looks).",
    ),
    family(
        Id::Rings,
        "rsuring_rings",
        Gauge,
        Process,
        None,
        "io_uring rings the process has open, with statistics or without.",
    ),
    family(
        Id::Refusals,
        "rsuring_transparent_refusals",
        Counter,
        Process,
        Some("reason"),
        "Rings RSURING_SQPOLL=1 left plain, by reason.",
    ),
    family(
        Id::RingsWithoutStats,
        "rsuring_rings_without_stats",
        Counter,
        Process,
        None,
        "Rings that found no free statistics slot and have no statistics.",
    ),
    family(
        Id::PollersUnverified,
        "rsuring_pollers_unverified",
        Counter,
        Process,
        None,
        "Shared SQ poll threads whose thread the kernel did not show, so that later rings got \
         poll threads of their own.",
    ),
];

/// The `kind` label values of `rsuring_enters`.
pub const ENTER_KINDS: [&str; 4] = ["submit", "wait", "sqwait", "wakeup"];

/// Series one ring label set has at most (every family of ring scope).
pub fn series_per_ring() -> usize {
    FAMILIES
        .iter()
        .filter(|f| f.scope == Scope::Ring)
        .map(|f| match (f.id, f.kind) {
            (Id::Enters, _) => ENTER_KINDS.len(),
            (Id::WaitSeconds, _) => WAIT_BUCKETS + 2,
            (_, Kind::Histogram) => SIZE_BUCKETS + 2,
            _ => 1,
        })
        .sum()
}

/// The two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0 text (`application/openmetrics-text`), `# EOF` last.
    OpenMetrics,
    /// The Prometheus text format 0.0.4, which node_exporter's textfile
    /// collector reads: a counter's TYPE names its `_total` samples, no
    /// UNIT lines, no `# EOF`.
    Prometheus,
}

/// How to write a snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub format: Format,
    /// One label set per process (rings summed).
    pub aggregate: bool,
    /// Ring label sets per process before the rest are summed as `other`.
    pub max_rings: usize,
}

/// The name a family's TYPE and HELP lines use.
pub fn type_name(f: &Family, format: Format) -> String {
    match (f.kind, format) {
        (Kind::Counter, Format::Prometheus) => format!("{}_total", f.name),
        _ => f.name.to_string(),
    }
}

/// The values of one ring label set (a ring, or several summed).
#[derive(Debug, Clone, Default)]
struct RingValues {
    counters: Option<Counters>,
    sizes: Option<(u64, u64)>,
    cq_overflow_pending: Option<u64>,
    inflight: Option<u64>,
    cq_ready: Option<u64>,
}

fn add_hist<const N: usize>(a: &mut Hist<N>, b: &Hist<N>) {
    for (x, y) in a.buckets.iter_mut().zip(b.buckets) {
        *x = x.saturating_add(y);
    }
    a.sum = a.sum.saturating_add(b.sum);
}

fn add_counters(a: &mut Counters, b: &Counters) {
    for (x, y) in [
        (&mut a.sqes, b.sqes),
        (&mut a.cqes, b.cqes),
        (&mut a.enters_submit, b.enters_submit),
        (&mut a.enters_wait, b.enters_wait),
        (&mut a.enters_sqwait, b.enters_sqwait),
        (&mut a.wakeups, b.wakeups),
        (&mut a.reap_batches, b.reap_batches),
        (&mut a.chains_split, b.chains_split),
        (&mut a.cq_overflow, b.cq_overflow),
    ] {
        *x = x.saturating_add(y);
    }
    a.reap_max = a.reap_max.max(b.reap_max);
    add_hist(&mut a.submit_hist, &b.submit_hist);
    add_hist(&mut a.reap_hist, &b.reap_hist);
    add_hist(&mut a.wait_hist, &b.wait_hist);
}

fn add_opt(a: &mut Option<u64>, b: Option<u64>) {
    if let Some(b) = b {
        *a = Some(a.unwrap_or(0).saturating_add(b));
    }
}

impl RingValues {
    fn of(r: &Ring) -> Self {
        let k = r.kernel;
        RingValues {
            counters: r.counters,
            sizes: r.info.map(|i| (i.sq_entries as u64, i.cq_entries as u64)),
            cq_overflow_pending: k.map(|k| k.cq_overflow as u64),
            inflight: k.map(|k| (k.sq_head.wrapping_sub(k.cq_tail) as i32).max(0) as u64),
            cq_ready: k.map(|k| k.cq_fill() as u64),
        }
    }

    fn add(&mut self, o: &RingValues) {
        if let Some(c) = &o.counters {
            add_counters(self.counters.get_or_insert_with(Counters::default), c);
        }
        if let Some((sq, cq)) = o.sizes {
            let (a, b) = self.sizes.unwrap_or((0, 0));
            self.sizes = Some((a.saturating_add(sq), b.saturating_add(cq)));
        }
        add_opt(&mut self.cq_overflow_pending, o.cq_overflow_pending);
        add_opt(&mut self.inflight, o.inflight);
        add_opt(&mut self.cq_ready, o.cq_ready);
    }
}

/// A label value, escaped for both formats.
fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// `{a="x",b="y"}` (the values escaped); "" without labels.
fn labels(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn mode_of(r: &Ring) -> (&'static str, String) {
    match r.info {
        Some(info) => {
            let mode = match Sqpoll::from_raw(info.sqpoll) {
                Sqpoll::No => "plain",
                Sqpoll::Own => "sqpoll",
                Sqpoll::Shared => "shared",
                Sqpoll::Transparent => "transparent",
            };
            let cpu = match (mode, info.poller_cpu) {
                ("plain", _) => "none".to_string(),
                (_, c) if c < 0 => "unbound".to_string(),
                (_, c) => c.to_string(),
            };
            (mode, cpu)
        }
        None => match r.kernel.and_then(|k| k.sq_thread) {
            Some(_) => (
                "sqpoll",
                r.kernel
                    .and_then(|k| k.sq_thread_cpu)
                    .filter(|c| *c >= 0)
                    .map_or("unbound".into(), |c| c.to_string()),
            ),
            None => ("plain", "none".into()),
        },
    }
}

/// One label set of ring scope: its labels (without pid and comm) and values.
struct RingSeries {
    labels: Vec<(&'static str, String)>,
    values: RingValues,
}

/// The ring label sets of a process, bounded as the options say.
fn ring_series(s: &Snapshot, opts: &Options) -> Vec<RingSeries> {
    if opts.aggregate {
        let mut total = RingValues::default();
        for r in &s.rings {
            total.add(&RingValues::of(r));
        }
        return vec![RingSeries {
            labels: Vec::new(),
            values: total,
        }];
    }
    let mut out = Vec::new();
    let mut other: Option<RingValues> = None;
    for (i, r) in s.rings.iter().enumerate() {
        let values = RingValues::of(r);
        if i >= opts.max_rings {
            other.get_or_insert_with(RingValues::default).add(&values);
            continue;
        }
        let twins = s.rings.iter().filter(|o| o.fd == r.fd).count();
        let ring = match (twins, r.slot) {
            (1, _) => r.fd.to_string(),
            (_, Some((slot, _))) => format!("{}/{slot}", r.fd),
            (_, None) => format!("{}/kernel", r.fd),
        };
        let (mode, cpu) = mode_of(r);
        out.push(RingSeries {
            labels: vec![("ring", ring), ("mode", mode.into()), ("poller_cpu", cpu)],
            values,
        });
    }
    if let Some(values) = other {
        let labels = ["ring", "mode", "poller_cpu"].map(|k| (k, "other".to_string()));
        out.push(RingSeries {
            labels: labels.to_vec(),
            values,
        });
    }
    out
}

/// A histogram's samples: cumulative buckets with their `le` values.
fn hist_lines<const N: usize>(
    out: &mut String,
    name: &str,
    base: &[(&str, &str)],
    h: &Hist<N>,
    le: impl Fn(usize) -> String,
    sum: String,
) {
    let mut cumulative = 0u64;
    for (k, n) in h.buckets.iter().enumerate() {
        cumulative = cumulative.saturating_add(*n);
        let bound = if k + 1 == N {
            "+Inf".to_string()
        } else {
            le(k)
        };
        let mut with_le = base.to_vec();
        with_le.push(("le", &bound));
        let _ = writeln!(out, "{name}_bucket{} {cumulative}", labels(&with_le));
    }
    let _ = writeln!(out, "{name}_count{} {cumulative}", labels(base));
    let _ = writeln!(out, "{name}_sum{} {sum}", labels(base));
}

/// The upper bound of wait bucket `k` in seconds (2^k microseconds).
fn wait_le(k: usize) -> String {
    format!("{}", (1u64 << k) as f64 / 1e6)
}

/// The samples of ring family `f` for one label set.
fn ring_samples(out: &mut String, f: &Family, base: &[(&str, &str)], v: &RingValues) {
    let c = v.counters.as_ref();
    let one = |out: &mut String, value: Option<u64>| {
        if let Some(value) = value {
            let name = match f.kind {
                Kind::Counter => format!("{}_total", f.name),
                _ => f.name.to_string(),
            };
            let _ = writeln!(out, "{name}{} {value}", labels(base));
        }
    };
    match f.id {
        Id::SqesSubmitted => one(out, c.map(|c| c.sqes)),
        Id::CqesReaped => one(out, c.map(|c| c.cqes)),
        Id::SqFull => one(out, c.map(|c| c.enters_sqwait)),
        Id::PollerWakeups => one(out, c.map(|c| c.wakeups)),
        Id::ChainsSplit => one(out, c.map(|c| c.chains_split)),
        Id::CqOverflow => one(out, c.map(|c| c.cq_overflow)),
        Id::CqOverflowPending => one(out, v.cq_overflow_pending),
        Id::Inflight => one(out, v.inflight),
        Id::CqReady => one(out, v.cq_ready),
        Id::SqEntries => one(out, v.sizes.map(|s| s.0)),
        Id::CqEntries => one(out, v.sizes.map(|s| s.1)),
        Id::Enters => {
            let Some(c) = c else { return };
            let counts = [c.enters_submit, c.enters_wait, c.enters_sqwait, c.wakeups];
            for (kind, n) in ENTER_KINDS.iter().zip(counts) {
                let mut l = base.to_vec();
                l.push(("kind", kind));
                let _ = writeln!(out, "{}_total{} {n}", f.name, labels(&l));
            }
        }
        Id::WaitSeconds => {
            let Some(c) = c else { return };
            let sum = format!("{}", c.wait_hist.sum as f64 / 1e9);
            hist_lines(out, f.name, base, &c.wait_hist, wait_le, sum);
        }
        Id::SqesPerSubmit | Id::CqesPerReap => {
            let Some(c) = c else { return };
            let h = if f.id == Id::SqesPerSubmit {
                &c.submit_hist
            } else {
                &c.reap_hist
            };
            let le = |k: usize| (1u64 << k).to_string();
            hist_lines(out, f.name, base, h, le, h.sum.to_string());
        }
        _ => {}
    }
}

/// The samples of process family `f`.
fn process_samples(out: &mut String, f: &Family, s: &Snapshot, base: &[(&str, &str)]) {
    let one = |out: &mut String, name: String, l: &[(&str, &str)], value: u64| {
        let _ = writeln!(out, "{name}{} {value}", labels(l));
    };
    let total = format!("{}_total", f.name);
    match (f.id, &s.page) {
        (Id::Rings, _) => one(out, f.name.into(), base, s.rings.len() as u64),
        (Id::Refusals, Page::Live { refused, .. }) => {
            for (reason, n) in REFUSAL_NAMES.iter().zip(refused) {
                let mut l = base.to_vec();
                l.push(("reason", reason));
                one(out, total.clone(), &l, *n as u64);
            }
        }
        (Id::RingsWithoutStats, Page::Live { overflowed, .. }) => {
            one(out, total, base, *overflowed as u64)
        }
        (
            Id::PollersUnverified,
            Page::Live {
                unverified_pollers, ..
            },
        ) => one(out, total, base, *unverified_pollers as u64),
        _ => {}
    }
}

/// Writes the snapshots as `opts` says (processes in the order given;
/// a pid given twice is written once).
pub fn write(snapshots: &[Snapshot], opts: &Options) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let procs: Vec<(&Snapshot, Vec<RingSeries>)> = snapshots
        .iter()
        .filter(|s| seen.insert(s.pid))
        .map(|s| (s, ring_series(s, opts)))
        .collect();
    let mut out = String::new();
    for f in &FAMILIES {
        let mut samples = String::new();
        for (s, series) in &procs {
            let pid = s.pid.to_string();
            let mut base: Vec<(&str, &str)> = vec![("pid", &pid), ("comm", &s.comm)];
            match f.scope {
                Scope::Process => process_samples(&mut samples, f, s, &base),
                Scope::Ring => {
                    for rs in series {
                        base.truncate(2);
                        base.extend(rs.labels.iter().map(|(k, v)| (*k, v.as_str())));
                        ring_samples(&mut samples, f, &base, &rs.values);
                    }
                }
            }
        }
        if samples.is_empty() {
            continue;
        }
        let name = type_name(f, opts.format);
        let _ = writeln!(out, "# HELP {name} {}", f.help);
        let _ = writeln!(out, "# TYPE {name} {}", f.kind.word());
        if !f.unit.is_empty() && opts.format == Format::OpenMetrics {
            let _ = writeln!(out, "# UNIT {name} {}", f.unit);
        }
        out.push_str(&samples);
    }
    if opts.format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_follows_the_naming_conventions() {
        let mut names = std::collections::BTreeSet::new();
        for f in &FAMILIES {
            assert!(names.insert(f.name), "{} twice", f.name);
            assert!(f.name.starts_with("rsuring_"), "{}", f.name);
            assert!(
                f.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                f.name
            );
            for suffix in ["_total", "_count", "_sum", "_bucket", "_created", "_info"] {
                assert!(!f.name.ends_with(suffix), "{} ends with {suffix}", f.name);
            }
            assert!(f.unit.is_empty() || f.name.ends_with(&format!("_{}", f.unit)));
            assert!(f.help.ends_with('.'), "{}", f.name);
            assert!(
                !f.help.contains(['\\', '\n', '"']),
                "{}: the help text needs no escaping",
                f.name
            );
        }
        let ids: std::collections::BTreeSet<String> =
            FAMILIES.iter().map(|f| format!("{:?}", f.id)).collect();
        assert_eq!(ids.len(), FAMILIES.len(), "one family per id");
        assert_eq!(series_per_ring(), 81, "docs/statistics.md says 81");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(
            labels(&[("comm", "a\"b\\c\nd")]),
            "{comm=\"a\\\"b\\\\c\\nd\"}"
        );
        assert_eq!(labels(&[]), "");
    }

    #[test]
    fn wait_bounds_are_powers_of_two_microseconds() {
        assert_eq!(wait_le(0), "0.000001");
        assert_eq!(wait_le(1), "0.000002");
        assert_eq!(wait_le(22), "4.194304");
    }
}
