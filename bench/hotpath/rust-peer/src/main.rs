//! NOP throughput with the `io-uring` crate, shaped like hotpath.c's
//! `nop-qd`: keep up to DEPTH in flight, push BATCH NOPs, submit (waiting for
//! BATCH completions only when the ring is at its depth), drain the CQ.
//! Fixed work as there: OPS operations after OPS/10 of warm-up.
//!
//! Usage: rust-peer DEPTH BATCH OPS
//! Prints: RESULT ops=<counted> cpu_ns=<N> wall_ns=<N> user_ns=<N> sys_ns=<N>
//! total_ops=<N> lib=io-uring-crate

use io_uring::{opcode, IoUring};

/// Nanoseconds of `clock` (see hotpath.c: CLOCK_PROCESS_CPUTIME_ID for CPU time).
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// User and system CPU time of the process in nanoseconds (getrusage).
fn rusage_ns() -> (u64, u64) {
    // SAFETY: an all-zero rusage is a valid value to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid rusage to write.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

fn arg(args: &[String], i: usize, what: &str) -> u64 {
    args.get(i)
        .and_then(|a| a.parse().ok())
        .filter(|&v| v > 0)
        .unwrap_or_else(|| {
            eprintln!("usage: rust-peer DEPTH BATCH OPS (bad or missing {what})");
            std::process::exit(2)
        })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let depth = arg(&args, 1, "DEPTH") as u32;
    let batch = arg(&args, 2, "BATCH") as u32;
    let target = arg(&args, 3, "OPS");
    assert!(batch <= depth, "need BATCH <= DEPTH");
    let warmup = target / 10;

    let mut ring = IoUring::new(depth).expect("io_uring setup");
    let nop = opcode::Nop::new().build();
    let mut inflight = 0u32;
    let mut ops = 0u64;
    let mut start: Option<(u64, u64, u64, (u64, u64))> = None;
    loop {
        let to_prep = batch.min(depth - inflight);
        {
            let mut sq = ring.submission();
            for _ in 0..to_prep {
                // SAFETY: a NOP references no memory.
                unsafe { sq.push(&nop).expect("SQ ring full") };
            }
        }
        inflight += to_prep;
        let submitted = if inflight >= depth {
            ring.submit_and_wait(batch as usize)
        } else {
            ring.submit()
        }
        .expect("submit");
        assert_eq!(submitted, to_prep as usize, "short submit");

        let mut n = 0u32;
        for cqe in ring.completion() {
            assert_eq!(cqe.result(), 0, "NOP failed");
            n += 1;
        }
        inflight -= n;
        ops += n as u64;

        match start {
            None if ops >= warmup => {
                start = Some((
                    ops,
                    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID),
                    clock_ns(libc::CLOCK_MONOTONIC),
                    rusage_ns(),
                ));
            }
            Some((ops0, cpu0, wall0, (user0, sys0))) if ops - ops0 >= target => {
                let cpu = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID) - cpu0;
                let wall = clock_ns(libc::CLOCK_MONOTONIC) - wall0;
                let (user, sys) = rusage_ns();
                println!(
                    "RESULT ops={} cpu_ns={cpu} wall_ns={wall} user_ns={} sys_ns={} total_ops={ops} lib=io-uring-crate",
                    ops - ops0,
                    user - user0,
                    sys - sys0
                );
                break;
            }
            _ => {}
        }
    }
}
