/* SPDX-License-Identifier: MIT */
/*
 * The engine's set-up and tear-down: per-job state (init, io_u_init), the
 * ring (post_init, in the job's own thread), files in the ring's file
 * table (open_file, close_file), statistics and clean-up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* The kernel's largest SQ (IORING_MAX_ENTRIES). */
#define RSE_MAX_SQ_ENTRIES	32768U

/*
 * Fails the job with a message that fio prints in its error line (fio
 * shows a bare td->error as "err=1/" and nothing more).
 */
static int rse_fail(struct thread_data *td, int err, const char *msg)
{
	td_vmsg(td, err, msg, "rsuring");
	return 1;
}

int rse_init(struct thread_data *td)
{
	struct rse_options *o = td->eo;
	struct rse_data *ld;
	unsigned int depth = td->o.iodepth ? td->o.iodepth : 1;

	if (o->bad_value[0])
		return rse_fail(td, EINVAL, o->bad_value);

	if (o->sqpoll_percpu) {
		o->sqpoll = 1;
		if (!td->o.use_thread)
			log_err("rsuring: note: %s: sqthread_poll_percpu shares an SQ"
				 " thread only among jobs of one process; with"
				 " forked jobs (thread=0) each job has its own\n",
				 td->o.name);
	}
	if (o->defer_taskrun == -1)
		o->defer_taskrun = !o->sqpoll;
	if (o->defer_taskrun && o->sqpoll)
		return rse_fail(td, EINVAL, "defer_taskrun=1 cannot be combined"
				" with sqthread_poll");
	/* As fio's io_uring engine: SQ thread submission uses fixed files. */
	if (o->sqpoll)
		o->registerfiles = 1;

	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return rse_fail(td, ENOMEM, "no memory for the engine's state");
	ld->depth = depth;
	ld->io_us = calloc(depth, sizeof(*ld->io_us));
	ld->iovecs = calloc(depth, sizeof(*ld->iovecs));
	ld->pending = calloc(depth, sizeof(*ld->pending));
	ld->cqes = calloc(depth, sizeof(*ld->cqes));
	ld->events = calloc(depth, sizeof(*ld->events));
	td->io_ops_data = ld;
	if (!ld->io_us || !ld->iovecs || !ld->pending || !ld->cqes ||
	    !ld->events)
		return rse_fail(td, ENOMEM, "no memory for the engine's state");

	/*
	 * cmdprio*: fio's helpers (engines/cmdprio.c, in the fio binary)
	 * check the combination, parse cmdprio_bssplit and set up the
	 * per-priority latency statistics; they log what they refuse.
	 */
	if (fio_cmdprio_init(td, &ld->cmdprio, &o->cmdprio_options))
		return rse_fail(td, EINVAL, "cmdprio options refused (see"
				" the message above)");
	ld->cmdprio_ready = 1;
	return 0;
}

int rse_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct rse_data *ld = td->io_ops_data;

	if (io_u->index >= ld->depth) {
		char msg[96];

		snprintf(msg, sizeof(msg), "io_u index %u beyond iodepth %u",
			 io_u->index, ld->depth);
		return rse_fail(td, EINVAL, msg);
	}
	ld->io_us[io_u->index] = io_u;
	return 0;
}

static int rse_setup_ring(struct thread_data *td, struct rse_data *ld,
			  struct rse_options *o)
{
	/* Taskrun modes to try, best first, for rings without an SQ thread. */
	static const unsigned int deferred[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		0,
	};
	unsigned int base = IORING_SETUP_SUBMIT_ALL;
	unsigned int i, tries = 1, entries = ld->depth;
	int ret = -EINVAL;

	/*
	 * An SQ thread posts the completions of a submission batch before
	 * it publishes the SQ head that frees the batch's slots, so the job
	 * can reap a request and queue the next one while that request's
	 * slot still counts as used. A batch holds at most the SQEs that
	 * were in the SQ when it started, at most iodepth: the SQ never
	 * shows more than 2 x iodepth - 1 slots used, and 2 x iodepth
	 * entries always leave one free. Without an SQ thread the head only
	 * moves inside our own io_uring_submit and iodepth is enough.
	 */
	if (o->sqpoll)
		entries = ld->depth <= RSE_MAX_SQ_ENTRIES / 2 ?
			  2 * ld->depth : RSE_MAX_SQ_ENTRIES;

	if (o->hipri)
		base |= IORING_SETUP_IOPOLL;
	if (o->sqpoll) {
		base |= IORING_SETUP_SQPOLL;
		if (o->sqpoll_percpu)
			base |= IORING_SETUP_SQPOLL_PERCPU;
		if (o->sqpoll_cpu_set)
			base |= IORING_SETUP_SQ_AFF;
	}
	if (o->defer_taskrun)
		tries = FIO_ARRAY_SIZE(deferred);

	for (i = 0; i < tries; i++) {
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		p.flags = base | (o->defer_taskrun ? deferred[i] : 0);
		p.sq_thread_cpu = (unsigned int) o->sqpoll_cpu;
		ret = io_uring_queue_init_params(entries, &ld->ring, &p);
		if (ret != -EINVAL)
			break;
		/* SUBMIT_ALL is a convenience; retry once without it. */
		memset(&p, 0, sizeof(p));
		p.flags = (base & ~IORING_SETUP_SUBMIT_ALL) |
			  (o->defer_taskrun ? deferred[i] : 0);
		p.sq_thread_cpu = (unsigned int) o->sqpoll_cpu;
		ret = io_uring_queue_init_params(entries, &ld->ring, &p);
		if (ret != -EINVAL)
			break;
	}
	if (ret < 0) {
		if (ret == -ENOSYS)
			log_err("rsuring: this kernel has no io_uring\n");
		td_verror(td, -ret, "io_uring_queue_init_params");
		return ret;
	}
	ld->ring_flags = ld->ring.flags;
	ld->ring_ready = 1;
	if (o->defer_taskrun && !(ld->ring_flags & IORING_SETUP_DEFER_TASKRUN))
		log_err("rsuring: note: %s: kernel refused DEFER_TASKRUN, using %s\n",
			 td->o.name,
			 (ld->ring_flags & IORING_SETUP_COOP_TASKRUN) ?
			 "COOP_TASKRUN" : "a plain ring");
	return 0;
}

static void rse_probe_nonvectored(struct rse_data *ld, struct rse_options *o)
{
	struct io_uring_probe *probe;

	if (o->nonvectored != -1)
		return;
	o->nonvectored = 0;
	probe = io_uring_get_probe_ring(&ld->ring);
	if (!probe)
		return;
	if (io_uring_opcode_supported(probe, IORING_OP_READ) &&
	    io_uring_opcode_supported(probe, IORING_OP_WRITE))
		o->nonvectored = 1;
	io_uring_free_probe(probe);
}

static int rse_register_file(struct thread_data *td, struct rse_data *ld,
			     struct fio_file *f, int fd)
{
	int ret = io_uring_register_files_update(&ld->ring,
						 (unsigned int) f->fileno,
						 &fd, 1);

	if (ret < 0) {
		td_verror(td, -ret, "io_uring_register_files_update");
		return ret;
	}
	return 0;
}

int rse_post_init(struct thread_data *td)
{
	struct rse_data *ld = td->io_ops_data;
	struct rse_options *o = td->eo;
	struct fio_file *f;
	unsigned int i;
	int ret;

	ret = rse_setup_ring(td, ld, o);
	if (ret)
		return 1;

	rse_probe_nonvectored(ld, o);

	if (o->ring_stats)
		rsuring_stats_enable(&ld->ring);

	if (o->fixedbufs) {
		for (i = 0; i < ld->depth; i++) {
			if (!ld->io_us[i]) {
				char msg[96];

				snprintf(msg, sizeof(msg), "fixedbufs: fio set"
					 " up no io_u %u", i);
				return rse_fail(td, EINVAL, msg);
			}
			ld->iovecs[i].iov_base = ld->io_us[i]->buf;
			ld->iovecs[i].iov_len = td_max_bs(td);
		}
		ret = io_uring_register_buffers(&ld->ring, ld->iovecs,
						ld->depth);
		if (ret < 0) {
			td_verror(td, -ret, "io_uring_register_buffers");
			return 1;
		}
	}

	if (o->registerfiles) {
		/*
		 * One table slot per file (slot = fileno), filled as fio
		 * opens files and emptied as it closes them: any
		 * nr_files/open_files combination works.
		 */
		unsigned int slots = td->o.nr_files;

		if (td->files_index > slots)
			slots = td->files_index;
		ret = io_uring_register_files_sparse(&ld->ring, slots);
		if (ret < 0) {
			td_verror(td, -ret, "io_uring_register_files_sparse");
			return 1;
		}
		ld->fixed_files = 1;
		for_each_file(td, f, i) {
			if (f->fd != -1 && rse_register_file(td, ld, f, f->fd))
				return 1;
		}
	}
	return 0;
}

int rse_open_file(struct thread_data *td, struct fio_file *f)
{
	struct rse_data *ld = td->io_ops_data;
	int ret = generic_open_file(td, f);

	if (ret || !ld || !ld->fixed_files)
		return ret;
	if (rse_register_file(td, ld, f, f->fd)) {
		int fio_unused ret2 = generic_close_file(td, f);
		return 1;
	}
	return 0;
}

int rse_close_file(struct thread_data *td, struct fio_file *f)
{
	struct rse_data *ld = td->io_ops_data;

	if (ld && ld->fixed_files && f->fd != -1)
		rse_register_file(td, ld, f, -1);
	return generic_close_file(td, f);
}

/*
 * The library's statistics line for the job's ring (one format for both,
 * see rsuring.h), followed by the job name and the engine's own getevents
 * figures.
 */
static void rse_print_stats(struct thread_data *td, struct rse_data *ld)
{
	char line[1024], job[128];
	size_t i;

	if (rsuring_stats_format(&ld->ring, line, sizeof(line)) < 0)
		return;
	/* A value holds no blanks: key=value parsers split on them. */
	snprintf(job, sizeof(job), "%s", td->o.name ? td->o.name : "?");
	for (i = 0; job[i]; i++)
		if (job[i] == ' ' || job[i] == '\t')
			job[i] = '_';
	fprintf(stderr, "%s job=%s getevents=%llu mean_reaped=%.1f\n", line,
		job, ld->getevents_calls,
		ld->getevents_calls ?
		(double) ld->events_reaped / ld->getevents_calls : 0.0);
}

void rse_cleanup(struct thread_data *td)
{
	struct rse_data *ld = td->io_ops_data;

	if (!ld)
		return;
	if (ld->ring_ready) {
		rse_print_stats(td, ld);
		io_uring_queue_exit(&ld->ring);
	}
	if (ld->cmdprio_ready)
		fio_cmdprio_cleanup(&ld->cmdprio);
	free(ld->io_us);
	free(ld->iovecs);
	free(ld->pending);
	free(ld->cqes);
	free(ld->events);
	free(ld);
	td->io_ops_data = NULL;
}

