/* SPDX-License-Identifier: MIT */
/*
 * What the engine's files share: the per-job option values
 * (engine_options.c fills them), the per-job state, and the fio hooks
 * engine_setup.c implements for the ioengine_ops in rsuring_engine.c.
 */
#ifndef RSURING_FIO_ENGINE_H
#define RSURING_FIO_ENGINE_H

#include "fio.h"
#include "verify-state.h"
#include "engines/cmdprio.h"

#include <rsuring.h>

/*
 * Which io_uring engine options the fio we are built against has, from
 * its version macros (build.sh compiles the engine inside that fio's
 * tree): FIO_IOOPS_VERSION is 31 in fio 3.33, 32 in 3.34-3.35, 33 in
 * 3.36-3.37, 36 in 3.38-3.39, 37 in 3.40, 39 in 3.41-3.42.
 *
 *   cmdprio_hint                    fio 3.36+ (cmdprio.h has CMDPRIO_OPTIONS)
 *   md_per_io_size, pi_act, pi_chk,
 *   apptag, apptag_mask             fio 3.36+ (FIO_IOOPS_VERSION 33)
 *   readfua, writefua, write_mode,
 *   verify_mode                     fio 3.38+ (FIO_IOOPS_VERSION 36)
 *   deac                            fio 3.39+ (36 and verify-state.h's
 *                                   VSTATE_HDR_VERSION 4, or 37+)
 */
#ifdef CMDPRIO_OPTIONS
#define RSE_HAVE_CMDPRIO_HINT	1
#else
#define RSE_HAVE_CMDPRIO_HINT	0
#endif
#define RSE_HAVE_PI_OPTIONS	(FIO_IOOPS_VERSION >= 33)
#define RSE_HAVE_FUA_OPTIONS	(FIO_IOOPS_VERSION >= 36)
#define RSE_HAVE_DEAC		(FIO_IOOPS_VERSION > 36 || \
				 (FIO_IOOPS_VERSION == 36 && VSTATE_HDR_VERSION >= 4))

/* Largest reap_batch accepted. */
#define RSE_MAX_REAP_BATCH	65536

/* Room for the first bad option value's message. */
#define RSE_BAD_VALUE_LEN	160

/*
 * Filled by fio's option parser through the callbacks in
 * engine_options.c, which range-check every value; fio zeroes the
 * struct for every job before it applies defaults and the job's options.
 */
struct rse_options {
	void *pad;	/* fio treats an option at offset 0 as "no storage" */
	int hipri;
	int fixedbufs;
	int registerfiles;
	int sqpoll;
	int sqpoll_cpu;
	int sqpoll_cpu_set;
	int sqpoll_percpu;
	int nonvectored;	/* -1: READ/WRITE when the kernel has them */
	int uncached;
	int nowait;
	int force_async;
	int reap_batch;
	int defer_taskrun;	/* -1: on unless sqpoll */
	int ring_stats;
	int submit_and_wait;
	/* cmdprio*: fio's own struct, filled by our parsers (cmdprio.c reads it). */
	struct cmdprio_options cmdprio_options;
	/*
	 * The first value a callback refused, as a message; rse_init fails
	 * the job with it. Needed because fio can overrule a refusal: it
	 * parses "hipri=-1" as the range "-" "1", calls the callback for
	 * "-1" and then for "1", and keeps the last verdict.
	 */
	char bad_value[RSE_BAD_VALUE_LEN];
};

extern struct fio_option rse_options_table[];

/* Per-job state, td->io_ops_data. */
struct rse_data {
	struct io_uring ring;
	int ring_ready;
	unsigned int ring_flags;	/* what io_uring_setup accepted */
	unsigned int depth;		/* number of io_us == td->o.iodepth */

	struct io_u **io_us;		/* by io_u->index */
	struct iovec *iovecs;		/* by io_u->index */

	struct io_u **pending;		/* queued, not yet committed, in SQ order */
	unsigned int nr_pending;

	struct io_uring_cqe **cqes;	/* scratch for rsuring_wait_batch_cqe */
	struct io_u **events;		/* reaped by the last getevents */

	int fixed_files;		/* fds live in the ring's file table */
	unsigned int since_async;	/* force_async counter */
	int trim_warned;
	struct cmdprio cmdprio;		/* fio's per-request priority state */
	int cmdprio_ready;		/* fio_cmdprio_init succeeded */

	unsigned long long getevents_calls;	/* for ring_stats */
	unsigned long long events_reaped;
};

/* engine_setup.c */
int rse_init(struct thread_data *td);
int rse_io_u_init(struct thread_data *td, struct io_u *io_u);
int rse_post_init(struct thread_data *td);
int rse_open_file(struct thread_data *td, struct fio_file *f);
int rse_close_file(struct thread_data *td, struct fio_file *f);
void rse_cleanup(struct thread_data *td);

#endif
