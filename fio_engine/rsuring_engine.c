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
 *   commit     io_uring_submit; issue times are stamped here
 *   getevents  rsuring_wait_batch_cqe + one io_uring_cq_advance
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

#include "fio.h"
#include "optgroup.h"

#include <rsuring.h>

/* Uncached buffered I/O as merged in Linux 6.14 (fio 3.33 predates it). */
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE	0x00000080
#endif

/* Largest reap_batch accepted before the job starts. */
#define RSE_MAX_REAP_BATCH	65536U
/* The kernel's largest SQ (IORING_MAX_ENTRIES). */
#define RSE_MAX_SQ_ENTRIES	32768U

struct rse_options {
	void *pad;	/* fio treats an option at offset 0 as "no storage" */
	unsigned int hipri;
	unsigned int fixedbufs;
	unsigned int registerfiles;
	unsigned int sqpoll;
	unsigned int sqpoll_cpu;
	unsigned int sqpoll_cpu_set;
	unsigned int sqpoll_percpu;
	unsigned int nonvectored;	/* (unsigned)-1: probe the kernel */
	unsigned int uncached;
	unsigned int nowait;
	unsigned int force_async;
	unsigned int reap_batch;
	unsigned int defer_taskrun;
	unsigned int ring_stats;
};

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

static int rse_sqpoll_cpu_cb(void *data, unsigned long long *val)
{
	struct rse_options *o = data;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);

	if (*val >= (unsigned long long) (ncpus > 0 ? ncpus : INT_MAX)) {
		log_err("rsuring: sqthread_poll_cpu=%lld: no such CPU (0..%ld)\n",
			(long long) *val, ncpus - 1);
		return 1;
	}
	o->sqpoll_cpu = (unsigned int) *val;
	o->sqpoll_cpu_set = 1;
	return 0;
}

static int rse_reap_batch_cb(void *data, unsigned long long *val)
{
	struct rse_options *o = data;

	if (*val > RSE_MAX_REAP_BATCH) {
		log_err("rsuring: reap_batch=%lld: must be 0..%u\n",
			(long long) *val, RSE_MAX_REAP_BATCH);
		return 1;
	}
	o->reap_batch = (unsigned int) *val;
	return 0;
}

static struct fio_option options[] = {
	/* Same names, types and meaning as fio's io_uring engine. */
	{
		.name	= "hipri",
		.lname	= "High Priority",
		.type	= FIO_OPT_STR_SET,
		.off1	= offsetof(struct rse_options, hipri),
		.help	= "Use polled IO completions",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "fixedbufs",
		.lname	= "Fixed (pre-mapped) IO buffers",
		.type	= FIO_OPT_STR_SET,
		.off1	= offsetof(struct rse_options, fixedbufs),
		.help	= "Pre map IO buffers",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "registerfiles",
		.lname	= "Register file set",
		.type	= FIO_OPT_STR_SET,
		.off1	= offsetof(struct rse_options, registerfiles),
		.help	= "Pre-open/register files",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "sqthread_poll",
		.lname	= "Kernel SQ thread polling",
		.type	= FIO_OPT_STR_SET,
		.off1	= offsetof(struct rse_options, sqpoll),
		.help	= "Offload submission/completion to kernel thread",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "sqthread_poll_cpu",
		.lname	= "SQ Thread Poll CPU",
		.type	= FIO_OPT_INT,
		.cb	= rse_sqpoll_cpu_cb,
		.help	= "What CPU to run SQ thread polling on",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "nonvectored",
		.lname	= "Non-vectored",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct rse_options, nonvectored),
		.def	= "-1",
		.help	= "Use non-vectored read/write commands",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "uncached",
		.lname	= "Uncached",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct rse_options, uncached),
		.help	= "Use RWF_UNCACHED for buffered read/writes"
			  " (RWF_DONTCACHE, Linux 6.14+)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "nowait",
		.lname	= "RWF_NOWAIT",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct rse_options, nowait),
		.help	= "Use RWF_NOWAIT for reads/writes",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "force_async",
		.lname	= "Force async",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct rse_options, force_async),
		.help	= "Set IOSQE_ASYNC every N requests",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	/* rsuring extensions. */
	{
		.name	= "sqthread_poll_percpu",
		.lname	= "Shared per-CPU SQ thread",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct rse_options, sqpoll_percpu),
		.def	= "0",
		.help	= "Implies sqthread_poll. The rings of all jobs polled on"
			  " the same CPU (sqthread_poll_cpu) share ONE kernel SQ"
			  " thread (IORING_SETUP_SQPOLL_PERCPU). The kernel shares"
			  " SQ threads only within one process: run the jobs as"
			  " threads (thread=1), forked jobs each get their own",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "reap_batch",
		.lname	= "Completions per reap",
		.type	= FIO_OPT_INT,
		.cb	= rse_reap_batch_cb,
		.def	= "0",
		.help	= "Minimum completions to wait for in one blocking reap"
			  " (capped at the I/Os in flight); 0: fio's own minimum"
			  " (iodepth_batch_complete_min)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "defer_taskrun",
		.lname	= "Single issuer, deferred task work",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct rse_options, defer_taskrun),
		.def	= "-1",
		.help	= "1: create the ring with IORING_SETUP_SINGLE_ISSUER |"
			  " DEFER_TASKRUN, so completions run in one batch when"
			  " the job reaps (not with sqthread_poll); 0: a plain"
			  " ring; default: 1 without sqthread_poll, as fio's"
			  " io_uring engine does",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= "ring_stats",
		.lname	= "Ring statistics",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct rse_options, ring_stats),
		.def	= "0",
		.help	= "Print the job's ring statistics (SQEs, CQEs,"
			  " io_uring_enter calls, reap batches) to stderr when it"
			  " ends; also on with RSURING_STATS=1",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_IOURING,
	},
	{
		.name	= NULL,
	},
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
 * fio's getevents(min, max, t): return between min and max completions;
 * with a timeout t, return what is there when it passes (fio only ever
 * passes t = 0 with min = 0: "poll without blocking").
 *
 * Each rsuring_wait_batch_cqe call makes at most one io_uring_enter and
 * hands back a whole batch, consumed with one head update.
 */
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
	if (min && o->reap_batch > min) {
		unsigned int in_flight = td->cur_depth;

		min = o->reap_batch < in_flight ? o->reap_batch : in_flight;
		if (max < min)
			max = min;
	}
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
	if (o->force_async && ++ld->since_async >= o->force_async) {
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

static int rse_commit(struct thread_data *td)
{
	struct rse_data *ld = td->io_ops_data;
	unsigned int done = 0;
	int idle_tries = 0;

	while (done < ld->nr_pending) {
		int ret = io_uring_submit(&ld->ring);

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
			rse_mark_issued(td, ld, done, nr);
			done += nr;
			idle_tries = 0;
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

static int rse_init(struct thread_data *td)
{
	struct rse_options *o = td->eo;
	struct rse_data *ld;
	unsigned int depth = td->o.iodepth ? td->o.iodepth : 1;

	if (o->sqpoll_percpu) {
		o->sqpoll = 1;
		if (!td->o.use_thread)
			log_err("rsuring: note: %s: sqthread_poll_percpu shares an SQ"
				 " thread only among jobs of one process; with"
				 " forked jobs (thread=0) each job has its own\n",
				 td->o.name);
	}
	if (o->defer_taskrun == (unsigned int) -1)
		o->defer_taskrun = !o->sqpoll;
	if (o->defer_taskrun && o->sqpoll) {
		log_err("rsuring: defer_taskrun cannot be combined with"
			" sqthread_poll: with an SQ thread the job does not run"
			" its own task work\n");
		return 1;
	}
	/* As fio's io_uring engine: SQ thread submission uses fixed files. */
	if (o->sqpoll)
		o->registerfiles = 1;

	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return 1;
	ld->depth = depth;
	ld->io_us = calloc(depth, sizeof(*ld->io_us));
	ld->iovecs = calloc(depth, sizeof(*ld->iovecs));
	ld->pending = calloc(depth, sizeof(*ld->pending));
	ld->cqes = calloc(depth, sizeof(*ld->cqes));
	ld->events = calloc(depth, sizeof(*ld->events));
	td->io_ops_data = ld;
	if (!ld->io_us || !ld->iovecs || !ld->pending || !ld->cqes ||
	    !ld->events) {
		td_verror(td, ENOMEM, "rsuring init");
		return 1;
	}
	return 0;
}

static int rse_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct rse_data *ld = td->io_ops_data;

	if (io_u->index >= ld->depth) {
		log_err("rsuring: io_u index %u beyond iodepth %u\n",
			io_u->index, ld->depth);
		return 1;
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
		p.sq_thread_cpu = o->sqpoll_cpu;
		ret = io_uring_queue_init_params(entries, &ld->ring, &p);
		if (ret != -EINVAL)
			break;
		/* SUBMIT_ALL is a convenience; retry once without it. */
		memset(&p, 0, sizeof(p));
		p.flags = (base & ~IORING_SETUP_SUBMIT_ALL) |
			  (o->defer_taskrun ? deferred[i] : 0);
		p.sq_thread_cpu = o->sqpoll_cpu;
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

	if (o->nonvectored != (unsigned int) -1)
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
				log_err("rsuring: fixedbufs: io_u %u missing\n",
					i);
				return 1;
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
	.options		= options,
	.option_struct_size	= sizeof(struct rse_options),
};
