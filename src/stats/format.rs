//! The one statistics format: a line of `key=value` fields per ring, and
//! the same fields as a JSON object (`RSURING_STATS=json:PATH`).
//!
//! ```text
//! rsuring: pid=4242 ring=5 flags=0x2 sq_entries=128 cq_entries=256 sqpoll=shared
//!   poller_cpu=1 poller_rings=2 sqes=1000 cqes=1000 enters=100 enters_submit=50
//!   enters_wait=50 enters_sqwait=0 wakeups=0 reap_batches=100 reap_mean=10.0
//!   reap_max=10 chains_split=0 end=process_exit
//! ```
//! (one line). Keys, in this order:
//!
//! | key | value |
//! | --- | --- |
//! | `pid` | the process the counts belong to |
//! | `ring` | ring fd (-1 for a ring with only a registered fd) |
//! | `flags` | setup flags as the kernel got them, hex |
//! | `sq_entries`, `cq_entries` | ring sizes |
//! | `sqpoll` | `no`, `own` (its own SQ poll thread), `shared` (a per-CPU shared one) or `transparent` (a shared one added by RSURING_SQPOLL=1 to a ring set up plain) |
//! | `poller_cpu` | the poll thread's CPU, `unbound`, or `none` without one |
//! | `poller_rings` | rings served by that poll thread, this one included |
//! | `transparent` | only under RSURING_SQPOLL=1: `on`, or `refused:REASON` (see `crate::transparent::CONDITIONS`) |
//! | `shared` | only `yes`, for a ring other processes may use too (inherited across fork(), or the process forked while it lived); the counts are still this process's own: each process reports what it did |
//! | `sqes` | SQEs submitted (for SQ poll rings: published to the thread) |
//! | `cqes` | CQEs consumed, through the library or the inline helpers |
//! | `enters` | io_uring_enter system calls made: the sum of the next four (a transparent ring's submit hands its SQEs to the poller and makes none) |
//! | `enters_submit` | ... to submit only |
//! | `enters_wait` | ... to wait for or flush completions |
//! | `enters_sqwait` | ... to wait for SQ space (SQ poll rings with a full SQ) |
//! | `wakeups` | ... to wake a sleeping SQ poll thread |
//! | `reap_batches` | CQ head advances seen between library calls |
//! | `reap_mean`, `reap_max` | CQEs per advance, mean (one decimal) and largest |
//! | `chains_split` | link chains a shared poll thread had to split |
//! | `cq_overflow` | the kernel's count of CQEs it could not post for lack of room (the ring's overflow word, the kernel's total for the ring, as this process last read it) |
//! | `submit_hist` | SQEs per io_uring_enter that submitted, as `BOUND:COUNT` pairs of the non-empty buckets (bucket bounds 1, 2, 4, ... 65536, `inf`; a count is of values above the bucket before and up to BOUND), `none` when empty; a JSON object in JSON |
//! | `reap_hist` | CQEs per reap batch, the same way |
//! | `wait_hist_us` | time io_uring_enter calls spent waiting for completions, microseconds, the same way (bounds 1, 2, 4, ... 4194304, `inf`) |
//! | `wait_ns` | the total of those waits, nanoseconds |
//! | `end` | only in exit reports: `ring_exit` or `process_exit` (the program never called io_uring_queue_exit) |
//!
//! Exit reports under RSURING_SQPOLL=1 end with one `rsuring-process:`
//! line ([`process_fields`]: `pid`, `kind=process`, `refused_REASON=N` per
//! reason, `stats_overflowed`, `pollers_unverified`, `end=process_exit`; the same object in
//! JSON); `rsuring-stat --once` prints it too (without `end`).
//!
//! `rsuring-stat --once` appends live fields (`sq_fill`, `cq_fill`,
//! `poller_tid`); the fio engine appends its own (`job`, ...). Readers must
//! accept keys they do not know.

use std::fmt::Write;

use super::slot::{Counters, Hist, RingInfo, Sqpoll, REFUSAL_NAMES};

/// A field value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Num(u64),
    Int(i64),
    /// Printed with one decimal.
    Mean(f64),
    Hex(u32),
    /// A word: text as is, a JSON string.
    Word(String),
    /// A word in text, `null` in JSON (a CPU that is `unbound`, `none`).
    Absent(&'static str),
    /// A histogram's non-empty buckets as (upper bound, count), not
    /// cumulative; `u64::MAX` is the open last bucket. Text:
    /// `1:40,8:2,inf:1` (`none` when empty); JSON: `{"1":40,"8":2,"inf":1}`.
    Hist(Vec<(u64, u64)>),
}

/// The non-empty buckets of `h`, whose bucket `k` has upper bound 2^k.
pub fn hist_value<const N: usize>(h: &Hist<N>) -> Value {
    Value::Hist(
        h.buckets
            .iter()
            .enumerate()
            .filter(|(_, &n)| n != 0)
            .map(|(k, &n)| (if k + 1 == N { u64::MAX } else { 1 << k }, n))
            .collect(),
    )
}

fn hist_text(buckets: &[(u64, u64)], json: bool) -> String {
    if buckets.is_empty() {
        return if json { "{}" } else { "none" }.into();
    }
    let parts: Vec<String> = buckets
        .iter()
        .map(|&(le, n)| {
            let le = if le == u64::MAX {
                "inf".to_string()
            } else {
                le.to_string()
            };
            if json {
                format!("\"{le}\":{n}")
            } else {
                format!("{le}:{n}")
            }
        })
        .collect();
    if json {
        format!("{{{}}}", parts.join(","))
    } else {
        parts.join(",")
    }
}

/// An ordered list of fields.
pub type Fields = Vec<(&'static str, Value)>;

/// Why a report is being made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    RingExit,
    ProcessExit,
}

/// The fields of one ring.
pub fn ring_fields(pid: u32, info: &RingInfo, c: &Counters, end: Option<End>) -> Fields {
    let sqpoll = Sqpoll::from_raw(info.sqpoll);
    let cpu = match (sqpoll, info.poller_cpu) {
        (Sqpoll::No, _) => Value::Absent("none"),
        (_, cpu) if cpu < 0 => Value::Absent("unbound"),
        (_, cpu) => Value::Int(cpu as i64),
    };
    let mean = if c.reap_batches != 0 {
        c.cqes as f64 / c.reap_batches as f64
    } else {
        0.0
    };
    let mut f: Fields = vec![
        ("pid", Value::Num(pid as u64)),
        ("ring", Value::Int(info.ring_fd as i64)),
        ("flags", Value::Hex(info.setup_flags)),
        ("sq_entries", Value::Num(info.sq_entries as u64)),
        ("cq_entries", Value::Num(info.cq_entries as u64)),
        ("sqpoll", Value::Word(sqpoll.word().into())),
        ("poller_cpu", cpu),
        ("poller_rings", Value::Num(info.poller_rings as u64)),
    ];
    if let Some(word) = transparent_word(info.transparent) {
        f.push(("transparent", Value::Word(word)));
    }
    if info.shared != 0 {
        f.push(("shared", Value::Word("yes".into())));
    }
    f.extend([
        ("sqes", Value::Num(c.sqes)),
        ("cqes", Value::Num(c.cqes)),
        ("enters", Value::Num(c.enters())),
        ("enters_submit", Value::Num(c.enters_submit)),
        ("enters_wait", Value::Num(c.enters_wait)),
        ("enters_sqwait", Value::Num(c.enters_sqwait)),
        ("wakeups", Value::Num(c.wakeups)),
        ("reap_batches", Value::Num(c.reap_batches)),
        ("reap_mean", Value::Mean(mean)),
        ("reap_max", Value::Num(c.reap_max)),
        ("chains_split", Value::Num(c.chains_split)),
        ("cq_overflow", Value::Num(c.cq_overflow)),
        ("submit_hist", hist_value(&c.submit_hist)),
        ("reap_hist", hist_value(&c.reap_hist)),
        ("wait_hist_us", hist_value(&c.wait_hist)),
        ("wait_ns", Value::Num(c.wait_hist.sum)),
    ]);
    if let Some(end) = end {
        let word = match end {
            End::RingExit => "ring_exit",
            End::ProcessExit => "process_exit",
        };
        f.push(("end", Value::Word(word.into())));
    }
    f
}

/// `on`, `refused:REASON`, or None (no RSURING_SQPOLL=1 verdict) for an
/// `Identity::transparent` word.
pub fn transparent_word(v: u32) -> Option<String> {
    match v {
        0 => None,
        1 => Some("on".into()),
        v => Some(match REFUSAL_NAMES.get(v.wrapping_sub(0x100) as usize) {
            Some(name) => format!("refused:{name}"),
            None => format!("unknown:{v:#x}"),
        }),
    }
}

/// The process fields (`rsuring-process:` lines): `kind=process`, RSURING_SQPOLL=1's
/// refusals by reason (`refused_REASON`), the rings that found no
/// statistics slot, the shared pollers that could not be verified, and in
/// exit reports `end=process_exit`.
pub fn process_fields(
    pid: u32,
    refused: &[u32],
    overflowed: u32,
    unverified_pollers: u32,
    end: bool,
) -> Fields {
    let mut f: Fields = vec![
        ("pid", Value::Num(pid as u64)),
        ("kind", Value::Word("process".into())),
    ];
    for (name, n) in REFUSAL_NAMES.iter().zip(refused) {
        f.push((refusal_key(name), Value::Num(*n as u64)));
    }
    f.push(("stats_overflowed", Value::Num(overflowed as u64)));
    f.push(("pollers_unverified", Value::Num(unverified_pollers as u64)));
    if end {
        f.push(("end", Value::Word("process_exit".into())));
    }
    f
}

/// `refused_setup_flags` for `setup-flags` (static keys, from the names).
fn refusal_key(name: &str) -> &'static str {
    const KEYS: [&str; REFUSAL_NAMES.len()] = [
        "refused_setup_flags",
        "refused_privileged",
        "refused_no_poller_cpu",
        "refused_cpu_refused",
        "refused_fork",
        "refused_kernel",
        "refused_poller_busy",
        "refused_shared_memory",
    ];
    REFUSAL_NAMES
        .iter()
        .position(|n| *n == name)
        .map_or("refused_unknown", |i| KEYS[i])
}

/// `rsuring: key=value ...` (no newline). Words never contain blanks.
pub fn text(prefix: &str, fields: &Fields) -> String {
    let mut s = String::with_capacity(400);
    s.push_str(prefix);
    for (k, v) in fields {
        s.push(' ');
        s.push_str(k);
        s.push('=');
        match v {
            Value::Num(n) => write!(s, "{n}"),
            Value::Int(n) => write!(s, "{n}"),
            Value::Mean(x) => write!(s, "{x:.1}"),
            Value::Hex(x) => write!(s, "{x:#x}"),
            Value::Word(w) => write!(s, "{}", w.replace(char::is_whitespace, "_")),
            Value::Absent(w) => write!(s, "{w}"),
            Value::Hist(b) => write!(s, "{}", hist_text(b, false)),
        }
        .expect("writing to a String");
    }
    s
}

/// The fields as one JSON object (no newline).
pub fn json(fields: &Fields) -> String {
    let mut s = String::with_capacity(500);
    s.push('{');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i != 0 {
            s.push(',');
        }
        write!(s, "\"{k}\":").expect("writing to a String");
        match v {
            Value::Num(n) => write!(s, "{n}"),
            Value::Int(n) => write!(s, "{n}"),
            Value::Mean(x) => write!(s, "{x:.1}"),
            Value::Hex(x) => write!(s, "\"{x:#x}\""),
            Value::Word(w) => write!(s, "{}", json_string(w)),
            Value::Absent(_) => write!(s, "null"),
            Value::Hist(b) => write!(s, "{}", hist_text(b, true)),
        }
        .expect("writing to a String");
    }
    s.push('}');
    s
}

fn json_string(w: &str) -> String {
    let mut s = String::with_capacity(w.len() + 2);
    s.push('"');
    for ch in w.chars() {
        match ch {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => write!(s, "\\u{:04x}", c as u32).expect("String"),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// Copies `line` into a C caller's buffer as snprintf does: truncated to
/// `out.len() - 1` bytes and NUL-terminated when `out` is not empty.
/// Returns the length of the whole line (a result >= `out.len()` means it
/// was truncated), at most `i32::MAX`.
pub fn copy_c_string(line: &str, out: &mut [core::mem::MaybeUninit<u8>]) -> i32 {
    if let Some(room) = out.len().checked_sub(1) {
        let n = line.len().min(room);
        for (slot, &b) in out.iter_mut().zip(&line.as_bytes()[..n]) {
            slot.write(b);
        }
        out[n].write(0);
    }
    line.len().min(i32::MAX as usize) as i32
}

/// Parses a `key=value` line into its fields (for tools and tests).
pub fn parse_line(line: &str) -> Vec<(String, String)> {
    line.split_whitespace()
        .filter_map(|tok| tok.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (RingInfo, Counters) {
        let info = RingInfo {
            ring_fd: 5,
            setup_flags: 0x2,
            sq_entries: 128,
            cq_entries: 256,
            sqpoll: Sqpoll::Shared as u32,
            poller_cpu: -1,
            poller_rings: 2,
            transparent: 0,
            shared: 0,
        };
        let c = Counters {
            sqes: 1000,
            cqes: 1000,
            enters_submit: 50,
            enters_wait: 50,
            reap_batches: 100,
            reap_max: 10,
            ..Default::default()
        };
        (info, c)
    }

    #[test]
    fn text_and_json_carry_the_same_fields() {
        let (info, c) = sample();
        let f = ring_fields(42, &info, &c, Some(End::ProcessExit));
        let t = text("rsuring:", &f);
        assert_eq!(
            t,
            "rsuring: pid=42 ring=5 flags=0x2 sq_entries=128 cq_entries=256 sqpoll=shared \
             poller_cpu=unbound poller_rings=2 sqes=1000 cqes=1000 enters=100 enters_submit=50 \
             enters_wait=50 enters_sqwait=0 wakeups=0 reap_batches=100 reap_mean=10.0 \
             reap_max=10 chains_split=0 cq_overflow=0 submit_hist=none reap_hist=none \
             wait_hist_us=none wait_ns=0 end=process_exit"
        );
        let j = json(&f);
        assert!(
            j.starts_with("{\"pid\":42,\"ring\":5,\"flags\":\"0x2\","),
            "{j}"
        );
        assert!(j.contains("\"poller_cpu\":null,"), "{j}");
        assert!(
            j.ends_with(
                "\"chains_split\":0,\"cq_overflow\":0,\"submit_hist\":{},\"reap_hist\":{},\"wait_hist_us\":{},\
                 \"wait_ns\":0,\"end\":\"process_exit\"}"
            ),
            "{j}"
        );
        assert_eq!(parse_line(&t).len(), f.len());
    }

    #[test]
    fn poller_cpu_words() {
        let (mut info, c) = sample();
        info.sqpoll = Sqpoll::No as u32;
        let t = text("x", &ring_fields(1, &info, &c, None));
        assert!(t.contains(" sqpoll=no poller_cpu=none "), "{t}");
        info.sqpoll = Sqpoll::Own as u32;
        info.poller_cpu = 1;
        let t = text("x", &ring_fields(1, &info, &c, None));
        assert!(t.contains(" sqpoll=own poller_cpu=1 "), "{t}");
        assert!(!t.contains("end="), "{t}");
    }

    #[test]
    fn transparent_rings_say_so_and_refused_rings_say_why() {
        let (mut info, c) = sample();
        info.sqpoll = Sqpoll::Transparent as u32;
        info.poller_cpu = 1;
        info.transparent = 1;
        let t = text("x", &ring_fields(1, &info, &c, None));
        assert!(
            t.contains(" sqpoll=transparent poller_cpu=1 poller_rings=2 transparent=on sqes="),
            "{t}"
        );
        info.sqpoll = Sqpoll::No as u32;
        info.transparent = 0x102;
        let t = text("x", &ring_fields(1, &info, &c, None));
        assert!(
            t.contains(
                " sqpoll=no poller_cpu=none poller_rings=2 transparent=refused:no-poller-cpu "
            ),
            "{t}"
        );
        let p = text(
            "rsuring-process:",
            &process_fields(7, &[0, 1, 2, 3, 4, 5, 6], 9, 1, true),
        );
        assert_eq!(
            p,
            "rsuring-process: pid=7 kind=process refused_setup_flags=0 refused_privileged=1 \
             refused_no_poller_cpu=2 refused_cpu_refused=3 refused_fork=4 refused_kernel=5 \
             refused_poller_busy=6 stats_overflowed=9 pollers_unverified=1 end=process_exit"
        );
    }

    #[test]
    fn c_strings_are_truncated_and_terminated_as_snprintf_does() {
        use core::mem::MaybeUninit;
        let read = |out: &[MaybeUninit<u8>], n: usize| -> Vec<u8> {
            // SAFETY: copy_c_string wrote the first n bytes.
            out[..n]
                .iter()
                .map(|b| unsafe { b.assume_init() })
                .collect()
        };
        let mut out = [MaybeUninit::new(b'x'); 8];
        assert_eq!(copy_c_string("abc", &mut out), 3);
        assert_eq!(read(&out, 4), b"abc\0");
        assert_eq!(
            copy_c_string("abcdefghij", &mut out),
            10,
            "the whole length"
        );
        assert_eq!(read(&out, 8), b"abcdefg\0");
        assert_eq!(copy_c_string("abc", &mut out[..1]), 3);
        assert_eq!(read(&out, 1), b"\0");
        assert_eq!(copy_c_string("abc", &mut []), 3, "nothing written");
    }

    #[test]
    fn json_strings_are_escaped() {
        let f: Fields = vec![("job", Value::Word("a\"b\\c\n".into()))];
        assert_eq!(json(&f), "{\"job\":\"a\\\"b\\\\c\\u000a\"}");
    }
}
