/* SPDX-License-Identifier: MIT */
/*
 * What the engine's files share: the per-job option values
 * (engine_options.c fills them), the per-job state, and the fio hooks
 * engine_setup.c implements for the ioengine_ops in rsuring_engine.c.
 */
#ifndef RSURING_FIO_ENGINE_H
#define RSURING_FIO_ENGINE_H

#include "fio.h"

#include <rsuring.h>

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
