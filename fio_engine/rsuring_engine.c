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
 * This file is the I/O path (queue, commit, getevents); ring set-up, files
 * and clean-up are in engine_setup.c, the options in engine_options.c.
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
 *   commit     io_uring_submit_and_get_events (io_uring_submit with an SQ
 *              thread; io_uring_submit_and_wait when fio's queue is full
 *              and submit_and_wait=1); issue times stamped
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

/* Uncached buffered I/O as merged in Linux 6.14 (fio 3.33 predates it). */
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE	0x00000080
#endif

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
	 * carry the io_u's priority in every request. fio starts every
	 * io_u at the job's priority; cmdprio* may pick another for this
	 * one (fio's helper, which also files its latency by priority).
	 */
	if (ld->cmdprio.mode != CMDPRIO_MODE_NONE)
		fio_cmdprio_set_ioprio(td, &ld->cmdprio, io_u);
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
		break;
	case DDIR_SYNC_FILE_RANGE:
		/*
		 * No write completed since the last sync (fio resets the
		 * range to -1 when a sync completes): nothing to sync, done,
		 * as fio's synchronous path answers an empty range. The
		 * kernel would refuse offset -1 with EINVAL (fio 3.42 asks
		 * for such syncs; its own io_uring engine fails them).
		 */
		if (f->first_write == -1ULL || f->last_write <= f->first_write) {
			io_u->error = 0;
			return FIO_Q_COMPLETED;
		}
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
 * Without an SQ thread the submission also posts what has completed by
 * the time it leaves the kernel (io_uring_submit_and_get_events, as fio's
 * engine enters with GETEVENTS): on a DEFER_TASKRUN ring, completions
 * that arrive while the submit call runs would otherwise wait for the
 * next io_uring_enter, and getevents would need one more to see them.
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
		int ret;

		if (wait_nr)
			ret = io_uring_submit_and_wait(&ld->ring, wait_nr);
		else if (ld->ring_flags & IORING_SETUP_SQPOLL)
			ret = io_uring_submit(&ld->ring);
		else
			ret = io_uring_submit_and_get_events(&ld->ring);

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

/* fio looks this symbol up by name in an external engine. */
__attribute__((visibility("default")))
struct ioengine_ops ioengine;

/*
 * The engine is compiled against one fio tree: the layouts of
 * thread_data, io_u, fio_file and thread_options are that fio's. Loaded
 * into another fio (fio_version_string, which the fio binary exports,
 * differs from the FIO_VERSION we were compiled with), say so and make
 * fio refuse the engine before it calls into it: fio checks the ops
 * version first, and -1 is never its FIO_IOOPS_VERSION. Runs when fio
 * dlopen()s the engine.
 */
__attribute__((constructor))
static void rse_check_fio_version(void)
{
	if (!strcmp(fio_version_string, FIO_VERSION))
		return;
	fprintf(stderr, "rsuring: this engine was built for %s (ioengine"
		" interface %d) and cannot run in %s: build it against that"
		" fio's source tree (FIO_SRC=/path/to/fio fio_engine/build.sh)\n",
		FIO_VERSION, FIO_IOOPS_VERSION, fio_version_string);
	ioengine.version = -1;
}

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
