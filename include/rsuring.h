/* SPDX-License-Identifier: MIT */
/*
 * rsuring extensions to the liburing API.
 *
 * Include this instead of (or after) <liburing.h>. Everything in liburing.h
 * keeps liburing's meaning; what follows exists only in rsuring.
 */
#ifndef RSURING_H
#define RSURING_H

#include <liburing.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * rsuring's own version (liburing's API level is IO_URING_VERSION_MAJOR /
 * _MINOR). Cargo.toml is the source: `make` fails when these disagree with
 * it, and rsuring.pc reports the same version.
 */
#define RSURING_VERSION_MAJOR	0
#define RSURING_VERSION_MINOR	1
#define RSURING_VERSION_PATCH	0
#define RSURING_VERSION		"0.1.0"

/*
 * Setup flag (library level, never passed to the kernel): together with
 * IORING_SETUP_SQPOLL, the ring joins the process-wide shared SQ poller of
 * its CPU — sq_thread_cpu when IORING_SETUP_SQ_AFF is set, otherwise the
 * placement policy (RSURING_SQPOLL_CPUS, or one shared unbound poller).
 * All rings of the process on that CPU share one kernel SQ thread.
 * Without IORING_SETUP_SQPOLL, or with an offline CPU, setup fails with
 * -EINVAL. Rings the application attaches itself (IORING_SETUP_ATTACH_WQ)
 * are left alone.
 */
#define IORING_SETUP_SQPOLL_PERCPU	(1U << 31)

/* The shared SQ poller a ring belongs to (rsuring_sqpoll_group). */
struct rsuring_sqpoll_info {
	int cpu;		/* CPU of the poller thread, -1 if unbound */
	unsigned members;	/* live rings sharing it, this one included */
};

/*
 * Per-ring statistics (rsuring_ring_stats, rsuring_stats_format). Counted
 * for every ring when RSURING_STATS is on (1/true/yes/on: each ring's line
 * goes to stderr when the ring exits, or at process exit for rings never
 * torn down; json:PATH: the same fields as JSON lines appended to PATH),
 * or for one ring after rsuring_stats_enable() (then nothing is printed by
 * the library). The line, one per ring:
 *
 *   rsuring: pid=P ring=FD flags=0xF sq_entries=N cq_entries=N
 *     sqpoll=no|own|shared|transparent poller_cpu=CPU|unbound|none
 *     poller_rings=N [transparent=on|refused:REASON] sqes=N cqes=N
 *     enters=N enters_submit=N enters_wait=N enters_sqwait=N wakeups=N
 *     reap_batches=N reap_mean=X.Y reap_max=N chains_split=N
 *     [end=ring_exit|process_exit]
 *
 * (transparent=: only under RSURING_SQPOLL=1.) Under RSURING_SQPOLL=1, or
 * when a shared poller could not be verified, the exit report ends with
 * one "rsuring-process:" line: refused_REASON=N per refusal reason,
 * stats_overflowed=N, pollers_unverified=N.
 *
 * CQEs count when the application consumes them, whether through the
 * library or the inline helpers; a reap batch is one advance of the CQ
 * head as seen between library calls. Counters are exact when one thread
 * submits while another reaps. `rsuring-stat PID` shows them live.
 */
struct rsuring_stats {
	__u64 sqes_submitted;	/* SQEs submitted (SQ poll rings: published) */
	__u64 cqes_reaped;	/* CQEs consumed */
	__u64 enters_submit;	/* io_uring_enter calls to submit only */
	__u64 enters_wait;	/* ... to wait for or flush completions */
	__u64 enters_wakeup;	/* ... to wake an idle SQ poll thread */
	__u64 reap_batches;	/* CQ head advances seen */
	__u64 reap_max;		/* largest single advance */
	__u64 enters_sqwait;	/* ... to wait for SQ space (SQ poll rings) */
	__u64 chains_split;	/* link chains a shared SQ poll thread split */
};

#ifdef __cplusplus
}
#endif

#include "liburing/rsuring_ext_api.h"

#endif /* RSURING_H */
