/* SPDX-License-Identifier: MIT */
/*
 * rsuring ioengine for fio.
 *
 * Drives io_uring through rsuring's liburing-compatible API and its
 * extensions: shared per-CPU SQ poll threads (IORING_SETUP_SQPOLL_PERCPU),
 * batched reaping (rsuring_wait_batch_cqe: one head update per batch),
 * single-issuer rings with deferred task work, and per-ring statistics.
 *
 *   fio --ioengine=external:fio_engine/build/rsuring-engine.so ...
 *
 * The options are in engine_options.c.
 *
 * Written against fio's external engine interface (ioengines.h: struct
 * ioengine_ops, FIO_IOOPS_VERSION; parse.h: struct fio_option) and compiled
 * by build.sh against the headers and config-host.h of the same fio tree
 * that builds fio_engine/build/fio, so that the engine's view of
 * struct thread_data, io_u and fio_file matches the binary that loads it.
 *
 * Life cycle (backend.c, all in the job's own thread or process):
 *   init       options checked, per-job state allocated
 *   io_u_init  one call per io_u (index 0 .. iodepth-1)
 *   post_init  the ring is created HERE, in the thread that will submit and
 *              reap: a SINGLE_ISSUER ring belongs to its creating task
 *   queue      one SQE per io_u, not yet submitted
 *   commit     io_uring_submit (or io_uring_submit_and_wait when fio's
 *              queue is full and submit_and_wait=1); issue times stamped
 *   getevents  what is in the CQ, else rsuring_wait_batch_cqe; one
 *              io_uring_cq_advance per batch
 *   event      the io_us reaped by the last getevents
 *   cleanup    statistics printed, ring closed
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>

#include "engine.h"

#include <rsuring.h>

/* Uncached buffered I/O as merged in Linux 6.14 (fio 3.33 predates it). */
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE	0x00000080
#endif

/* The kernel's largest SQ (IORING_MAX_ENTRIES). */
#define RSE_MAX_SQ_ENTRIES	32768U

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

/* ---- completions ------------------------------------------------------ */

static void rse_complete_io_u(struct io_u *io_u, int res)
{
	if (res < 0) {
		io_u->error = -res;
		return;
	}
	io_u->error = 0;
	/*
	 * Short reads/writes are retried by fio from resid. (Not ddir_rw():
	 * that includes trims, whose result is 0 on success.)
	 */
	if ((io_u->ddir == DDIR_READ || io_u->ddir == DDIR_WRITE) &&
	    (unsigned long long) res < io_u->xfer_buflen)
		io_u->resid = io_u->xfer_buflen - (unsigned long long) res;
}

/*
 * The completions a blocking reap waits for: fio's min, raised to
 * reap_batch (bounded by the I/Os in flight, all submitted: fio commits
 * before a blocking getevents).
 */
static unsigned int rse_reap_min(struct thread_data *td,
				 struct rse_options *o, unsigned int min)
{
	unsigned int batch = (unsigned int) o->reap_batch;

	if (min && batch > min)
		min = batch < td->cur_depth ? batch : td->cur_depth;
	return min;
}

/*
 * The min fio passes to getevents when its queue is full (backend.c,
 * wait_for_completions): iodepth_batch_complete_min, at least 1, at most
 * what is in flight.
 */
static unsigned int rse_fio_reap_min(struct thread_data *td)
{
	unsigned int min = td->o.iodepth_batch_complete_min;

	if (min > td->cur_depth)
		min = td->cur_depth;
	return min ? min : 1;
}

/*
 * fio's getevents(min, max, t): return between min and max completions;
 * with a timeout t, return what is there when it passes (fio only ever
 * passes t = 0 with min = 0: "poll without blocking").
 *
 * Each rsuring_wait_batch_cqe call makes at most one io_uring_enter and
 * hands back a whole batch, consumed with one head update.
 */
/* Takes up to max completions that are in the CQ now into ld->events. */
static unsigned int rse_reap_ready(struct rse_data *ld, unsigned int max)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	io_uring_for_each_cqe(&ld->ring, head, cqe) {
		struct io_u *io_u;

		if (n == max)
			break;
		io_u = io_uring_cqe_get_data(cqe);
		rse_complete_io_u(io_u, cqe->res);
		ld->events[n++] = io_u;
	}
	if (n)
		io_uring_cq_advance(&ld->ring, n);
	return n;
}

static int rse_getevents(struct thread_data *td, unsigned int min,
			 unsigned int max, const struct timespec *t)
{
	struct rse_data *ld = td->io_ops_data;
	struct rse_options *o = td->eo;
	struct __kernel_timespec ts, *tsp = NULL;
	unsigned int got = 0, want;

	/*
	 * reap_batch raises a blocking reap (min > 0) to that many
	 * completions, and max with it, bounded by the I/Os in flight (all
	 * submitted: fio commits before a blocking getevents). A poll
	 * (min == 0) stays a poll.
	 */
	min = rse_reap_min(td, o, min);
	if (max < min)
		max = min;
	if (max > ld->depth)
		max = ld->depth;
	if (min > max)
		min = max;
	want = min;
	if (t) {
		ts.tv_sec = t->tv_sec;
		ts.tv_nsec = t->tv_nsec;
		tsp = &ts;
	}

	/*
	 * Completions already in the CQ are taken inline; the library is
	 * called only to wait, or for a poll that found none (a deferred
	 * taskrun ring posts its completions only when the job enters).
	 */
	got = rse_reap_ready(ld, max);
	if (got >= want && (got || want))
		goto out;

	do {
		unsigned int wait_nr = want > got ? want - got : 0;
		unsigned int i;
		int n;

		n = rsuring_wait_batch_cqe(&ld->ring, ld->cqes, max - got,
					   wait_nr, tsp);
		if (n < 0) {
			if (n == -ETIME)
				break;
			if (n == -EINTR || n == -EAGAIN) {
				if (tsp)
					break;
				continue;
			}
			td_verror(td, -n, "rsuring_wait_batch_cqe");
			return n;
		}
		for (i = 0; i < (unsigned int) n; i++) {
			struct io_uring_cqe *cqe = ld->cqes[i];
			struct io_u *io_u = io_uring_cqe_get_data(cqe);

			rse_complete_io_u(io_u, cqe->res);
			ld->events[got + i] = io_u;
		}
		if (n)
			io_uring_cq_advance(&ld->ring, (unsigned int) n);
		got += (unsigned int) n;
		if (tsp && !n)
			break;
	} while (got < want);
out:
	ld->getevents_calls++;
	ld->events_reaped += got;
	return (int) got;
}

static struct io_u *rse_event(struct thread_data *td, int event)
{
	struct rse_data *ld = td->io_ops_data;

	return ld->events[event];
}

/* ---- submission ------------------------------------------------------- */

static int rse_trim_supported(struct fio_file *f)
{
	return f->filetype == FIO_TYPE_FILE || f->filetype == FIO_TYPE_BLOCK;
}

static void rse_prep_rw(struct thread_data *td, struct rse_data *ld,
			struct rse_options *o, struct io_uring_sqe *sqe,
			struct io_u *io_u, int fd)
{
	unsigned int len = (unsigned int) io_u->xfer_buflen;
	int is_read = io_u->ddir == DDIR_READ;

	if (o->fixedbufs) {
		if (is_read)
			io_uring_prep_read_fixed(sqe, fd, io_u->xfer_buf, len,
						 io_u->offset, (int) io_u->index);
		else
			io_uring_prep_write_fixed(sqe, fd, io_u->xfer_buf, len,
						  io_u->offset, (int) io_u->index);
	} else if (o->nonvectored) {
		if (is_read)
			io_uring_prep_read(sqe, fd, io_u->xfer_buf, len,
					   io_u->offset);
		else
			io_uring_prep_write(sqe, fd, io_u->xfer_buf, len,
					    io_u->offset);
	} else {
		/* Requeues may have moved xfer_buf/xfer_buflen: refresh. */
		struct iovec *iov = &ld->iovecs[io_u->index];

		iov->iov_base = io_u->xfer_buf;
		iov->iov_len = len;
		if (is_read)
			io_uring_prep_readv(sqe, fd, iov, 1, io_u->offset);
		else
			io_uring_prep_writev(sqe, fd, iov, 1, io_u->offset);
	}

	if (o->nowait)
		sqe->rw_flags |= RWF_NOWAIT;
	if (o->uncached && !td->o.odirect)
		sqe->rw_flags |= RWF_DONTCACHE;
	/*
	 * An SQ thread does not inherit the job's ioprio_set() priority:
	 * carry the io_u's priority in every request.
	 */
	sqe->ioprio = io_u->ioprio;
}

static int rse_commit(struct thread_data *td);

/*
 * The next free SQE. rse_setup_ring sizes the SQ so that fio's iodepth
 * requests always fit (see there); should the SQ still look full, wait
 * for room instead of handing fio a BUSY: with an SQ thread, until the
 * kernel publishes a new SQ head; without one, by submitting what is
 * queued. NULL only on a ring error, with the job's error set.
 */
static struct io_uring_sqe *rse_get_sqe(struct thread_data *td,
					struct rse_data *ld)
{
	for (;;) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ld->ring);
		int ret;

		if (sqe)
			return sqe;
		if (ld->ring_flags & IORING_SETUP_SQPOLL) {
			ret = io_uring_sqring_wait(&ld->ring);
			if (ret >= 0 || ret == -EINTR || ret == -EAGAIN)
				continue;
			td_verror(td, -ret, "io_uring_sqring_wait");
			return NULL;
		}
		if (!ld->nr_pending) {
			/* Without an SQ thread only our own SQEs fill it. */
			td_verror(td, EBUSY, "io_uring_get_sqe: SQ full with"
				  " nothing queued");
			return NULL;
		}
		if (rse_commit(td) < 0)
			return NULL;
	}
}

static enum fio_q_status rse_queue(struct thread_data *td, struct io_u *io_u)
{
	struct rse_data *ld = td->io_ops_data;
	struct rse_options *o = td->eo;
	struct fio_file *f = io_u->file;
	struct io_uring_sqe *sqe;
	int fd;

	fio_ro_check(td, io_u);

	switch (io_u->ddir) {
	case DDIR_READ:
	case DDIR_WRITE:
	case DDIR_SYNC:
	case DDIR_DATASYNC:
	case DDIR_SYNC_FILE_RANGE:
		break;
	case DDIR_TRIM:
		if (rse_trim_supported(f))
			break;
		if (!ld->trim_warned) {
			log_err("rsuring: trim is not supported on %s (only"
				" regular files: punch hole, and block devices:"
				" discard)\n", f->file_name);
			ld->trim_warned = 1;
		}
		io_u->error = EOPNOTSUPP;
		return FIO_Q_COMPLETED;
	default:
		io_u->error = EINVAL;
		return FIO_Q_COMPLETED;
	}

	/*
	 * Never FIO_Q_BUSY: fio 3.33 draws a new verify seed for a write it
	 * requeues, and a mixed read/write job then reads back blocks whose
	 * seeds no longer match its expectations.
	 */
	sqe = rse_get_sqe(td, ld);
	if (!sqe) {
		io_u->error = td->error ? td->error : EBUSY;
		return FIO_Q_COMPLETED;
	}

	fd = ld->fixed_files ? f->fileno : f->fd;

	switch (io_u->ddir) {
	case DDIR_READ:
	case DDIR_WRITE:
		rse_prep_rw(td, ld, o, sqe, io_u, fd);
		break;
	case DDIR_SYNC:
		io_uring_prep_fsync(sqe, fd, 0);
		break;
	case DDIR_DATASYNC:
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		break;
	case DDIR_SYNC_FILE_RANGE:
		io_uring_prep_sync_file_range(sqe, fd,
				(unsigned int) (f->last_write - f->first_write),
				f->first_write, (int) td->o.sync_file_range);
		break;
	default:	/* DDIR_TRIM, checked above */
		if (f->filetype == FIO_TYPE_BLOCK)
			io_uring_prep_cmd_discard(sqe, fd, io_u->offset,
						  io_u->xfer_buflen);
		else
			io_uring_prep_fallocate(sqe, fd,
				FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				io_u->offset, io_u->xfer_buflen);
		break;
	}

	if (ld->fixed_files)
		sqe->flags |= IOSQE_FIXED_FILE;
	if (o->force_async &&
	    ++ld->since_async >= (unsigned int) o->force_async) {
		ld->since_async = 0;
		sqe->flags |= IOSQE_ASYNC;
	}
	io_uring_sqe_set_data(sqe, io_u);

	ld->pending[ld->nr_pending++] = io_u;
	return FIO_Q_QUEUED;
}

/* The engine stamps issue times (FIO_ASYNCIO_SETS_ISSUE_TIME). */
static void rse_mark_issued(struct thread_data *td, struct rse_data *ld,
			    unsigned int first, unsigned int nr)
{
	if (fio_fill_issue_time(td)) {
		struct timespec now;
		unsigned int i;

		fio_gettime(&now, NULL);
		for (i = first; i < first + nr; i++) {
			struct io_u *io_u = ld->pending[i];

			io_u->issue_time = now;
			io_u_queued(td, io_u);
		}
		if (td->o.read_iolog_file)
			td->last_issue = now;
	}
	io_u_mark_submit(td, nr);
}

/*
 * fio's commit: every queued SQE goes to the kernel before it returns.
 * Issue times are stamped right after the submission, as fio's own engine
 * does, so fio counts the submit call in slat.
 *
 * With submit_and_wait=1: when no io_u is left free (fio's own
 * queue_full()), fio's next step is a getevents that waits for
 * completions, so the submission waits for them too
 * (io_uring_submit_and_wait): one io_uring_enter where a plain submit
 * needs a second one to wait. That call returns after a completion, so
 * the issue times are stamped before it and fio counts the submission in
 * clat instead. With an SQ thread there is no submit call to merge into.
 */
static int rse_commit(struct thread_data *td)
{
	struct rse_data *ld = td->io_ops_data;
	struct rse_options *o = td->eo;
	unsigned int done = 0, wait_nr = 0;
	int idle_tries = 0, stamped = 0;

	if (!ld->nr_pending)
		return 0;
	if (o->submit_and_wait && !(ld->ring_flags & IORING_SETUP_SQPOLL) &&
	    queue_full(td)) {
		wait_nr = rse_reap_min(td, o, rse_fio_reap_min(td));
		rse_mark_issued(td, ld, 0, ld->nr_pending);
		stamped = 1;
	}
	while (done < ld->nr_pending) {
		int ret = wait_nr ? io_uring_submit_and_wait(&ld->ring, wait_nr) :
				    io_uring_submit(&ld->ring);

		/*
		 * With an SQ thread, io_uring_submit returns how many SQEs
		 * the thread has not picked up yet, which may already be 0:
		 * any non-negative return means ours are in its hands.
		 */
		if (ret >= 0 && (ld->ring_flags & IORING_SETUP_SQPOLL))
			ret = (int) (ld->nr_pending - done);
		if (ret > 0) {
			unsigned int nr = (unsigned int) ret;

			if (nr > ld->nr_pending - done)
				nr = ld->nr_pending - done;
			if (!stamped)
				rse_mark_issued(td, ld, done, nr);
			done += nr;
			idle_tries = 0;
			wait_nr = 0;	/* waited once; the rest just goes */
			continue;
		}
		if (ret == 0 || ret == -EINTR || ret == -EAGAIN ||
		    ret == -EBUSY) {
			/* Transient; the CQ (2 x depth) cannot overflow. */
			if (++idle_tries > 100000) {
				td_verror(td, EAGAIN, "io_uring_submit");
				ld->nr_pending = 0;
				return -EAGAIN;
			}
			if (ret != -EINTR)
				usleep(1);
			continue;
		}
		td_verror(td, -ret, "io_uring_submit");
		ld->nr_pending = 0;
		return ret;
	}
	ld->nr_pending = 0;
	return 0;
}

/* ---- setup ------------------------------------------------------------ */

/*
 * Fails the job with a message that fio prints in its error line (fio
 * shows a bare td->error as "err=1/" and nothing more).
 */
static int rse_fail(struct thread_data *td, int err, const char *msg)
{
	td_vmsg(td, err, msg, "rsuring");
	return 1;
}

static int rse_init(struct thread_data *td)
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
	return 0;
}

static int rse_io_u_init(struct thread_data *td, struct io_u *io_u)
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

static int rse_post_init(struct thread_data *td)
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

static int rse_open_file(struct thread_data *td, struct fio_file *f)
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

static int rse_close_file(struct thread_data *td, struct fio_file *f)
{
	struct rse_data *ld = td->io_ops_data;

	if (ld && ld->fixed_files && f->fd != -1)
		rse_register_file(td, ld, f, -1);
	return generic_close_file(td, f);
}

static void rse_print_stats(struct thread_data *td, struct rse_data *ld)
{
	struct rsuring_stats s;
	struct rsuring_sqpoll_info info;
	char group[64] = "";

	if (rsuring_ring_stats(&ld->ring, &s))
		return;
	if (!rsuring_sqpoll_group(&ld->ring, &info))
		snprintf(group, sizeof(group),
			 " sqpoll_group=cpu%d/%u rings", info.cpu,
			 info.members);
	fprintf(stderr,
		"rsuring: job %s: sqes=%llu cqes=%llu enters: submit=%llu"
		" wait=%llu wakeup=%llu reap_batches=%llu mean_batch=%.1f"
		" max_batch=%llu getevents=%llu mean_reaped=%.1f%s\n",
		td->o.name ? td->o.name : "?",
		(unsigned long long) s.sqes_submitted,
		(unsigned long long) s.cqes_reaped,
		(unsigned long long) s.enters_submit,
		(unsigned long long) s.enters_wait,
		(unsigned long long) s.enters_wakeup,
		(unsigned long long) s.reap_batches,
		s.reap_batches ? (double) s.cqes_reaped / s.reap_batches : 0.0,
		(unsigned long long) s.reap_max, ld->getevents_calls,
		ld->getevents_calls ?
		(double) ld->events_reaped / ld->getevents_calls : 0.0, group);
}

static void rse_cleanup(struct thread_data *td)
{
	struct rse_data *ld = td->io_ops_data;

	if (!ld)
		return;
	if (ld->ring_ready) {
		rse_print_stats(td, ld);
		io_uring_queue_exit(&ld->ring);
	}
	free(ld->io_us);
	free(ld->iovecs);
	free(ld->pending);
	free(ld->cqes);
	free(ld->events);
	free(ld);
	td->io_ops_data = NULL;
}

/* fio looks this symbol up by name in an external engine. */
__attribute__((visibility("default")))
struct ioengine_ops ioengine = {
	.name			= "rsuring",
	.version		= FIO_IOOPS_VERSION,
	.flags			= FIO_NO_OFFLOAD | FIO_ASYNCIO_SETS_ISSUE_TIME,
	.init			= rse_init,
	.post_init		= rse_post_init,
	.io_u_init		= rse_io_u_init,
	.queue			= rse_queue,
	.commit			= rse_commit,
	.getevents		= rse_getevents,
	.event			= rse_event,
	.cleanup		= rse_cleanup,
	.open_file		= rse_open_file,
	.close_file		= rse_close_file,
	.get_file_size		= generic_get_file_size,
	.options		= rse_options_table,
	.option_struct_size	= sizeof(struct rse_options),
};
