//! NOP throughput with the `io-uring` crate, shaped like hotpath.c's
//! `nop-qd`: keep up to DEPTH in flight, push BATCH NOPs, submit (waiting for
//! BATCH completions only when the ring is at its depth), drain the CQ.
//!
//! Usage: rust-peer DEPTH BATCH SECS
//! Prints: RESULT <ops/s> ops/s lib=io-uring-crate ops=<N> cpu_rate=<ops per CPU-second>

use std::time::Instant;

use io_uring::{opcode, IoUring};

/// This process's CPU time in seconds (see hotpath.c's cpu_rate).
fn cpu_now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn arg(args: &[String], i: usize, what: &str) -> String {
    args.get(i).cloned().unwrap_or_else(|| {
        eprintln!("usage: rust-peer DEPTH BATCH SECS (missing {what})");
        std::process::exit(2)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let depth: u32 = arg(&args, 1, "DEPTH").parse().expect("DEPTH");
    let batch: u32 = arg(&args, 2, "BATCH").parse().expect("BATCH");
    let secs: f64 = arg(&args, 3, "SECS").parse().expect("SECS");
    assert!(batch >= 1 && batch <= depth, "need 1 <= BATCH <= DEPTH");

    let mut ring = IoUring::new(depth).expect("io_uring setup");
    let nop = opcode::Nop::new().build();
    let mut inflight = 0u32;
    let mut ops = 0u64;
    let mut counted = 0u64;
    let mut iters = 0u64;
    let t0 = Instant::now();
    let mut start: Option<Instant> = None;
    let mut cpu_start = 0.0;
    let elapsed = loop {
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

        iters += 1;
        if iters & 63 == 0 {
            let now = Instant::now();
            match start {
                None if now.duration_since(t0).as_secs_f64() >= secs / 10.0 => {
                    start = Some(now);
                    cpu_start = cpu_now();
                    counted = ops;
                }
                Some(s) if now.duration_since(s).as_secs_f64() >= secs => {
                    break now.duration_since(s).as_secs_f64();
                }
                _ => {}
            }
        }
    };
    let cpu = cpu_now() - cpu_start;
    println!(
        "RESULT {:.6e} ops/s lib=io-uring-crate ops={} cpu_rate={:.6e}",
        (ops - counted) as f64 / elapsed,
        ops,
        (ops - counted) as f64 / cpu
    );
}
