/* SPDX-License-Identifier: MIT */
/*
 * What the engine's option table (engine_options.c) and the engine
 * (rsuring_engine.c) share: the per-job option values.
 */
#ifndef RSURING_FIO_ENGINE_H
#define RSURING_FIO_ENGINE_H

#include "fio.h"

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

#endif
