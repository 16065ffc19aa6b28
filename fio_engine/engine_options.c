/* SPDX-License-Identifier: MIT */
/*
 * The engine's fio options: the names of fio's own io_uring engine
 * options (so job files carry over), rsuring's extensions, and strict
 * parsing. Numbers are taken as text (FIO_OPT_STR_STORE) and parsed here:
 * fio's integer types accept size suffixes and split values at '-', so
 * "reap_batch=-3" would end up as 3. A refused value makes fio stop
 * parsing the job; rse_init also fails any job whose bad_value is set.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"
#include "optgroup.h"

static void rse_refuse(struct rse_options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reports a refused value now and keeps the first one for rse_init. */
static void rse_refuse(struct rse_options *o, const char *fmt, ...)
{
	char msg[RSE_BAD_VALUE_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("rsuring: %s\n", msg);
	if (!o->bad_value[0])
		snprintf(o->bad_value, sizeof(o->bad_value), "%s", msg);
}

/* A whole decimal number in [lo, hi], nothing before or after it. */
static int rse_parse_number(void *data, const char *name, const char *text,
			    long long lo, long long hi, int *out)
{
	struct rse_options *o = data;
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < lo || v > hi) {
		rse_refuse(o, "%s=%s: expected a whole number from %lld to %lld",
			   name, text, lo, hi);
		return 1;
	}
	*out = (int) v;
	return 0;
}

/* Options given bare ("hipri") or with 0/1 (FIO_OPT_STR_SET). */
static int rse_check_flag(void *data, const char *name, int v, int *out)
{
	if (v != 0 && v != 1) {
		rse_refuse(data, "%s=%d: expected 0 or 1 (or the name alone)",
			   name, v);
		return 1;
	}
	*out = v;
	return 0;
}

#define RSE_NUMBER_OPTION(field, name, lo, hi)				\
static int rse_set_##field(void *data, const char *text)		\
{									\
	return rse_parse_number(data, name, text, lo, hi,		\
				&((struct rse_options *) data)->field);	\
}

#define RSE_FLAG_OPTION(field, name)					\
static int rse_set_##field(void *data, int *v)				\
{									\
	return rse_check_flag(data, name, *v,				\
			      &((struct rse_options *) data)->field);	\
}

RSE_FLAG_OPTION(hipri, "hipri")
RSE_FLAG_OPTION(fixedbufs, "fixedbufs")
RSE_FLAG_OPTION(registerfiles, "registerfiles")
RSE_FLAG_OPTION(sqpoll, "sqthread_poll")
RSE_NUMBER_OPTION(nonvectored, "nonvectored", -1, 1)
RSE_NUMBER_OPTION(uncached, "uncached", 0, 1)
RSE_NUMBER_OPTION(nowait, "nowait", 0, 1)
RSE_NUMBER_OPTION(force_async, "force_async", 0, INT_MAX)
RSE_NUMBER_OPTION(sqpoll_percpu, "sqthread_poll_percpu", 0, 1)
RSE_NUMBER_OPTION(reap_batch, "reap_batch", 0, RSE_MAX_REAP_BATCH)
RSE_NUMBER_OPTION(defer_taskrun, "defer_taskrun", -1, 1)
RSE_NUMBER_OPTION(ring_stats, "ring_stats", 0, 1)
RSE_NUMBER_OPTION(submit_and_wait, "submit_and_wait", 0, 1)

static int rse_set_sqpoll_cpu(void *data, const char *text)
{
	struct rse_options *o = data;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < 0 ||
	    v >= (ncpus > 0 ? ncpus : INT_MAX)) {
		rse_refuse(o, "sqthread_poll_cpu=%s: no such CPU (this machine"
			   " has CPUs 0 to %ld)", text, ncpus - 1);
		return 1;
	}
	o->sqpoll_cpu = (int) v;
	o->sqpoll_cpu_set = 1;
	return 0;
}

#define RSE_OPTION(opt_name, opt_type, setter, default_value, long_name,	\
		   help_text)						\
	{								\
		.name		= opt_name,				\
		.lname		= long_name,				\
		.type		= opt_type,				\
		.cb		= setter,				\
		.def		= default_value,			\
		.help		= help_text,				\
		.category	= FIO_OPT_C_ENGINE,			\
		.group		= FIO_OPT_G_IOURING,			\
	}

struct fio_option rse_options_table[] = {
	/* The option names of fio's io_uring engine. */
	RSE_OPTION("hipri", FIO_OPT_STR_SET, rse_set_hipri, NULL,
		"Polled completions (IOPOLL)",
		"Set up the ring with IORING_SETUP_IOPOLL: the job spins on"
		" the device for completions instead of sleeping until an"
		" interrupt (O_DIRECT on a device with poll queues)"),
	RSE_OPTION("fixedbufs", FIO_OPT_STR_SET, rse_set_fixedbufs, NULL,
		"Registered I/O buffers",
		"Register the job's I/O buffers with the ring once and send"
		" READ_FIXED/WRITE_FIXED, so pages are not pinned again for"
		" every request"),
	RSE_OPTION("registerfiles", FIO_OPT_STR_SET, rse_set_registerfiles, NULL,
		"Registered files",
		"Keep the job's open files in the ring's file table and name"
		" them by slot, saving a file lookup per request"),
	RSE_OPTION("sqthread_poll", FIO_OPT_STR_SET, rse_set_sqpoll, NULL,
		"Kernel submission thread (SQPOLL)",
		"Set up the ring with IORING_SETUP_SQPOLL: a kernel thread"
		" picks requests off the ring, so queueing I/O rarely needs a"
		" system call. Turns on registerfiles"),
	RSE_OPTION("sqthread_poll_cpu", FIO_OPT_STR_STORE, rse_set_sqpoll_cpu, NULL,
		"CPU of the submission thread",
		"Pin the sqthread_poll kernel thread to this CPU"
		" (IORING_SETUP_SQ_AFF)"),
	RSE_OPTION("nonvectored", FIO_OPT_STR_STORE, rse_set_nonvectored, "-1",
		"Single-buffer opcodes",
		"1: READ/WRITE with one buffer; 0: READV/WRITEV with a"
		" one-entry iovec; -1 (default): READ/WRITE if this kernel"
		" knows them"),
	RSE_OPTION("uncached", FIO_OPT_STR_STORE, rse_set_uncached, "0",
		"Drop pages after buffered I/O",
		"1: buffered reads and writes carry RWF_DONTCACHE, so their"
		" pages leave the page cache when the I/O is done (Linux"
		" 6.14+; no effect with direct=1)"),
	RSE_OPTION("nowait", FIO_OPT_STR_STORE, rse_set_nowait, "0",
		"Fail instead of blocking",
		"1: reads and writes carry RWF_NOWAIT; one that would have to"
		" wait fails with EAGAIN"),
	RSE_OPTION("force_async", FIO_OPT_STR_STORE, rse_set_force_async, "0",
		"Punt every Nth request",
		"N > 0: every Nth request gets IOSQE_ASYNC and goes straight"
		" to a kernel worker thread instead of being tried inline;"
		" 0 (default): none"),
	/* rsuring's extensions. */
	RSE_OPTION("sqthread_poll_percpu", FIO_OPT_STR_STORE,
		rse_set_sqpoll_percpu, "0",
		"One submission thread per CPU",
		"1: like sqthread_poll, but the rings of all jobs whose"
		" thread would run on the same CPU (sqthread_poll_cpu, or"
		" none) share ONE kernel thread (IORING_SETUP_SQPOLL_PERCPU)."
		" The kernel shares these threads only inside one process:"
		" use thread=1"),
	RSE_OPTION("reap_batch", FIO_OPT_STR_STORE, rse_set_reap_batch, "0",
		"Completions per blocking reap",
		"N > 0: a reap that has to wait waits for N completions"
		" (fewer if fewer are in flight) and may take that many even"
		" above iodepth_batch_complete_max; 0 (default): fio's"
		" iodepth_batch_complete_min/max decide"),
	RSE_OPTION("defer_taskrun", FIO_OPT_STR_STORE, rse_set_defer_taskrun, "-1",
		"Deferred completion work",
		"1: ring with IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN, so"
		" completion work runs in one go when the job reaps; 0: a"
		" plain ring; -1 (default): 1 unless sqthread_poll, which it"
		" cannot be combined with"),
	RSE_OPTION("submit_and_wait", FIO_OPT_STR_STORE, rse_set_submit_and_wait,
		"0", "Wait in the submit call",
		"1: once every io_u is in flight, submit and wait for the next"
		" completion in one io_uring_enter (one system call per I/O"
		" instead of up to two). fio then counts the submission in clat"
		" rather than slat; lat is unchanged. 0 (default): like fio's"
		" io_uring engine"),
	RSE_OPTION("ring_stats", FIO_OPT_STR_STORE, rse_set_ring_stats, "0",
		"Print ring statistics",
		"1: when the job ends, print its ring's counters (SQEs, CQEs,"
		" io_uring_enter calls, reap batches) to stderr;"
		" RSURING_STATS=1 does the same for every job"),
	{
		.name	= NULL,
	},
};
