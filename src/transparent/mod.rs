//! Transparent SQPOLL (`RSURING_SQPOLL=1`): a ring the application created
//! without SQPOLL gets a shared kernel SQ poll thread, and the program must
//! not be able to tell, except by speed.
//!
//! Layer 5 (see lib.rs). Which rings get it is decided in
//! `crate::lifecycle` with [`eligible`]; the enters here watch the ring's SQ
//! words through an [`SqView`] taken of a `LiveRing`.
//!
//! The kernel's SQ thread runs requests with its creator's credentials and
//! in its creator's address space and file table, consumes SQEs on its own
//! schedule, and makes `io_uring_enter` report `to_submit` whatever
//! happened. This module is the contract that hides that:
//!
//! - **Who gets it** ([`eligible`]): every ring not refused by one of
//!   [`CONDITIONS`], the one list of refusal conditions (credentials that
//!   can change, no CPU the poller can have to itself, the setup flags of
//!   [`PLAIN_SETUPS`], a cpuset that refuses the poller's CPU, a forked
//!   child, a kernel refusal, a poller's CPU measured busy: the
//!   step-aside rule of [`qualify`]; a ring in memory shared with other
//!   processes, [`shared_memory`]). docs/transparent-sqpoll.md and rsuring(7)
//!   hold the list as generated from it (the tests check both). Each
//!   refusal leaves the ring plain, is counted (statistics, rsuring-stat)
//!   and is noted once per reason on stderr.
//! - **How an enter behaves** ([`enter`], and [`enter_by_fd`] for the
//!   exported `io_uring_enter`): as on a plain ring. The SQEs the call
//!   submits are handed to the poller (woken at most once) and the call
//!   returns only when the kernel has consumed them, so the SQ is free
//!   again and inline completions are posted; the count is the plain
//!   ring's (`min(to_submit, queued)`), and a partial submission skips the
//!   wait, as the kernel does. The submit path takes no lock: where each
//!   ring's submitted SQEs end (for mixing library submits with the
//!   exported io_uring_enter) lives in a lock-free table ([`MARKS`]).
//! - **fork**: the poller belongs to the process that created the ring.
//!   Rings that other processes may use by design (their struct or ring
//!   memory shared) stay plain from setup on ([`Refusal::SharedMemory`]).
//!   A forked child that submits on an inherited transparent ring it holds
//!   a private copy of gets `-EOWNERDEAD` (its SQEs are never published,
//!   so they can run neither in the parent's memory nor with the parent's
//!   files), counted and noted once: nothing else could run them right.
//!
//! The files, one concept each: [`refusal`] (the conditions, counts and
//! notes), [`eligibility`] (who gets it), [`step_aside`] (busy CPUs and
//! hand-overs that do not pay), [`handover`] (an enter on a transparent
//! ring), [`marks`] (where each ring's submitted SQEs end), [`fd_table`]
//! (rings by fd, for the exported `io_uring_enter`), [`shared_memory`]
//! (rings other processes may use).
//!
//! Known limits, documented: a submission the kernel rejects mid-batch
//! stops a plain ring's submit early; the poller goes on with the rest, so
//! the count covers them all. A raw `syscall(__NR_io_uring_enter)` cannot be
//! intercepted, and neither can an exported `io_uring_enter` through a
//! registered ring index; both get the kernel's SQPOLL behaviour.

use core::ffi::c_int;
use core::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::fork;
use crate::lock::ForkSafeLock;

pub mod shared_memory;

use crate::ring::{fork_generation, io_uring, EnterTarget, LiveRing, SqWords};
use crate::sys::{self, EnterArgs};
use crate::uapi::{
    IORING_ENTER_GETEVENTS, IORING_ENTER_REGISTERED_RING, IORING_ENTER_SQ_WAIT,
    IORING_ENTER_SQ_WAKEUP, IORING_SETUP_ATTACH_WQ, IORING_SETUP_COOP_TASKRUN,
    IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_IOPOLL, IORING_SETUP_R_DISABLED,
    IORING_SETUP_SINGLE_ISSUER, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF, IORING_SETUP_SQ_REWIND,
    IORING_SETUP_TASKRUN_FLAG, IORING_SQ_NEED_WAKEUP,
};

mod eligibility;
mod fd_table;
mod handover;
mod marks;
mod refusal;
mod step_aside;

use self::marks::*;
pub use self::{eligibility::*, fd_table::*, handover::*, refusal::*, step_aside::*};

#[cfg(test)]
mod tests {
    //! The CPU mask helper and the refusal bookkeeping, without a ring.

    use super::*;
    use std::sync::Mutex;

    /// The refusal counters are process-wide: the tests that read them
    /// take turns.
    static COUNTERS: Mutex<()> = Mutex::new(());

    #[test]
    fn in_mask_reads_the_bit_of_each_cpu() {
        let mut mask = [0u64; 16];
        mask[0] = 0b101;
        mask[1] = 1;
        mask[15] = 1 << 63;
        for cpu in [0, 2, 64, 1023] {
            assert!(in_mask(&mask, cpu), "cpu {cpu}");
        }
        for cpu in [1, 3, 63, 65, 1022] {
            assert!(!in_mask(&mask, cpu), "cpu {cpu}");
        }
        // Past the 1024 CPUs the mask holds: not in it (no panic).
        assert!(!in_mask(&[u64::MAX; 16], 1024));
        assert!(!in_mask(&[u64::MAX; 16], u32::MAX));
    }

    #[test]
    fn refusals_have_distinct_names_and_notes_in_counter_order() {
        for (i, c) in CONDITIONS.iter().enumerate() {
            assert_eq!(c.why.index(), i, "{:?}", c.why);
            assert_eq!(Refusal::from_index(i), Some(c.why));
            for other in &CONDITIONS[i + 1..] {
                assert_ne!(c.name, other.name);
                assert_ne!(c.why.note(), other.why.note());
            }
        }
        assert_eq!(Refusal::from_index(REFUSALS), None);
    }

    /// The statistics page and format name the counters with this list.
    #[test]
    fn statistics_name_the_refusals_of_the_one_list() {
        let names: Vec<&str> = CONDITIONS.iter().map(|c| c.name).collect();
        assert_eq!(names, crate::stats::slot::REFUSAL_NAMES);
        for (i, c) in CONDITIONS.iter().enumerate() {
            let word = crate::stats::format::transparent_word(VERDICT_REFUSED + i as u32);
            assert_eq!(word.unwrap(), format!("refused:{}", c.name));
        }
        let word = crate::stats::format::transparent_word;
        assert_eq!(word(VERDICT_ON).as_deref(), Some("on"));
        assert_eq!(word(0), None);
    }

    /// The setup-flags note names every flag of the list.
    #[test]
    fn the_setup_flags_note_names_every_flag() {
        let note = Refusal::SetupFlags.note();
        for (_, name, _) in &PLAIN_SETUPS {
            assert!(note.contains(name), "{name} missing from {note:?}");
        }
    }

    /// What lies between `begin` and `end` in the repository file `path`.
    fn generated_block(path: &str, begin: &str, end: &str) -> String {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{path}: {e}"));
        let from = text
            .find(begin)
            .unwrap_or_else(|| panic!("{path} lacks the line {begin:?}"));
        let body = &text[from + begin.len()..];
        let to = body
            .find(end)
            .unwrap_or_else(|| panic!("{path} lacks the line {end:?}"));
        body[..to].trim_start_matches('\n').to_string()
    }

    const DOCS: (&str, &str, &str) = (
        "docs/transparent-sqpoll.md",
        "<!-- refusals: generated from src/transparent/refusal.rs CONDITIONS; checked by its tests -->",
        "<!-- refusals: end -->",
    );
    const MAN: (&str, &str, &str) = (
        "docs/man/man7/rsuring.7",
        ".\\\" refusals: generated from src/transparent/refusal.rs CONDITIONS; checked by its tests",
        ".\\\" refusals: end",
    );

    /// Rewrites the generated blocks of the docs and the man page:
    /// `cargo test --lib -- --ignored regenerate_refusal_docs`.
    #[test]
    #[ignore]
    fn regenerate_refusal_docs() {
        for ((path, begin, end), body) in [(DOCS, conditions_markdown()), (MAN, conditions_roff())]
        {
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
            let text = std::fs::read_to_string(&file).unwrap();
            let a = text.find(begin).expect("begin marker") + begin.len();
            let b = a + text[a..].find(end).expect("end marker");
            let new = format!("{}\n{body}{}", &text[..a], &text[b..]);
            std::fs::write(&file, new).unwrap();
        }
    }

    /// docs/transparent-sqpoll.md and rsuring(7)'s RSURING_SQPOLL section
    /// hold the refusal conditions as this module generates them; on a
    /// mismatch the message gives the text.
    #[test]
    fn the_docs_state_the_refusal_conditions_of_the_code() {
        for (place, want) in [(DOCS, conditions_markdown()), (MAN, conditions_roff())] {
            let have = generated_block(place.0, place.1, place.2);
            assert!(
                have == want,
                "{} disagrees with src/transparent/refusal.rs (regenerate: cargo test --lib -- --ignored regenerate_refusal_docs):\n{want}",
                place.0
            );
        }
    }

    #[test]
    fn proc_stat_gives_each_cpus_idle_and_total_ticks() {
        let text = "cpu  10 0 10 100 5 0 0 0 0 0\n\
                    cpu0 1 2 3 40 5 6 7 8 9 10\n\
                    cpu1 5 0 5 50 0\n\
                    cpu2 x\n\
                    intr 1 2\n";
        let want = [
            CpuTime {
                cpu: 0,
                idle: 45,
                total: 72,
            },
            CpuTime {
                cpu: 1,
                idle: 50,
                total: 60,
            },
        ];
        assert_eq!(parse_cpu_times(text), want);
        assert!(cpu_times().iter().any(|t| t.cpu == 0), "this machine's");
    }

    #[test]
    fn busy_share_is_the_non_idle_part_of_the_ticks_between_samples() {
        let at = |idle, total| {
            [CpuTime {
                cpu: 1,
                idle,
                total,
            }]
        };
        assert_eq!(busy_percent(&at(50, 60), &at(80, 100), 1), Some(25));
        assert_eq!(busy_percent(&at(50, 60), &at(50, 70), 1), Some(100));
        assert_eq!(busy_percent(&at(50, 60), &at(60, 70), 1), Some(0));
        // No tick passed, or the CPU is missing: not measurable.
        assert_eq!(busy_percent(&at(50, 60), &at(50, 60), 1), None);
        assert_eq!(busy_percent(&at(50, 60), &at(80, 100), 2), None);
        // Counters that went backwards (a CPU back from offline) do not panic.
        assert_eq!(busy_percent(&at(50, 60), &at(10, 20), 1), None);
    }

    #[test]
    fn a_window_loses_when_its_mean_wait_exceeds_the_limit() {
        assert!(!window_lost(WINDOW_HANDOVERS - 1, 1_000_000, 1), "too few");
        // Few hand-overs that waited half the window: judged.
        assert!(window_lost(3, WINDOW_NS / 2, 4000));
        assert!(!window_lost(3, WINDOW_NS / 2 - 1, 4000));
        let n = WINDOW_HANDOVERS;
        assert!(!window_lost(n, n as u64 * 4000, 4000));
        assert!(window_lost(n, n as u64 * 4000 + 1, 4000));
    }

    /// A ring's window: fast hand-overs never step back, however many; one
    /// window of slow ones over 200 ms does, and stops the watching.
    #[test]
    fn slow_hand_overs_over_a_window_step_back() {
        let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        let limit = HANDOVER_LIMIT_NS.swap(4_000, Ordering::Relaxed);
        let mark = Mark {
            key: AtomicUsize::new(EMPTY),
            to: AtomicU32::new(0),
            handovers: AtomicU32::new(0),
            window_at: AtomicU64::new(0),
            waited_ns: AtomicU64::new(0),
        };
        // 10,000 hand-overs of 1 us each, 25 us apart: 250 ms.
        let mut t = 1_000_000_000u64;
        for _ in 0..10_000 {
            watch_handover(&mark, t, t + 1_000);
            t += 25_000;
        }
        assert!(!STEPPED_BACK.load(Ordering::Relaxed));
        // 100 hand-overs that each waited 3 ms for the poller.
        WATCH.store(true, Ordering::Relaxed);
        for _ in 0..100 {
            watch_handover(&mark, t, t + 3_000_000);
            t += 3_100_000;
        }
        assert!(STEPPED_BACK.swap(false, Ordering::Relaxed));
        assert!(!WATCH.swap(false, Ordering::Relaxed));
        HANDOVER_LIMIT_NS.store(limit, Ordering::Relaxed);
    }

    #[test]
    fn kernel_cpu_lists_parse() {
        assert_eq!(parse_ranges("0-3,6"), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_ranges("1"), vec![1]);
        assert_eq!(parse_ranges(""), Vec::<u32>::new());
        assert_eq!(parse_ranges("x,2"), vec![2]);
        assert!(online_cpus().contains(&0));
    }

    #[test]
    fn rings_that_chose_sqpoll_or_sq_aff_are_no_candidates_and_not_noted() {
        let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        let before = refusal_counts();
        for flags in [IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF] {
            assert_eq!(eligible(flags, Some(&[1]), &[]), Err(Refusal::SetupFlags));
        }
        assert_eq!(refusal_counts(), before, "nothing counted");
    }

    #[test]
    fn setups_with_their_own_semantics_are_refused_and_counted() {
        let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        for flags in [
            IORING_SETUP_IOPOLL,
            IORING_SETUP_SQ_REWIND,
            IORING_SETUP_ATTACH_WQ,
            IORING_SETUP_COOP_TASKRUN,
            IORING_SETUP_TASKRUN_FLAG,
            IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
            IORING_SETUP_SINGLE_ISSUER,
            IORING_SETUP_R_DISABLED,
        ] {
            let count = |counts: [u32; REFUSALS]| counts[Refusal::SetupFlags.index()];
            let before = count(refusal_counts());
            assert_eq!(
                eligible(flags, Some(&[1]), &[]),
                Err(Refusal::SetupFlags),
                "{flags:#x}"
            );
            assert!(count(refusal_counts()) > before, "{flags:#x} counted");
        }
    }
}
