/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the per-CPU shared SQPOLL tests (c_tests/sqpoll/) and, through
 * c_tests/transparent/tp_common.h, the RSURING_SQPOLL=1 tests, on top of
 * c_tests/test_helpers.h (exit codes, T_STEP/T_FAIL/T_SKIP, CHECK*, the
 * progress watchdog, NOP helpers).
 *
 * Compiles against rsuring's include/liburing.h (with -I include) and against
 * Debian's /usr/include/liburing.h (the programs for unmodified binaries).
 * The rsuring.h helpers are only compiled when rsuring.h was included first.
 */
#ifndef SQ_COMMON_H
#define SQ_COMMON_H

/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../test_helpers.h"

#include <dirent.h>

/* Teardown of a kernel SQ thread is asynchronous (a workqueue item): wait
 * this long for it. Usually milliseconds; generous for loaded CI machines. */
#define SQ_THREAD_GONE_MS 15000

/* ---- process inspection ------------------------------------------------ */

/* Open file descriptors of this process (the directory's own fd included,
 * which cancels out when two counts are compared). */
static T_UNUSED int count_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	CHECK(d != NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

#define SQ_PF_IO_WORKER 0x00000010	/* kernel PF_IO_WORKER task flag */

/* One pass over /proc/self/task: counts the SQ poll threads (comm
 * "iou-sqp-<pid>") and fills tids[] (up to max). Sets *settled to 0 when
 * some io_uring kernel thread (PF_IO_WORKER) has not named itself yet: a
 * new SQ thread carries its creator's comm until it first runs, so such a
 * snapshot may undercount. */
static T_UNUSED int sqp_snapshot(int *tids, int max, int *settled)
{
	char path[300], stat[512];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	CHECK(d != NULL);
	*settled = 1;
	while ((de = readdir(d))) {
		char *open_paren, *close_paren, *fields;
		unsigned long flags = 0;
		size_t len;
		FILE *f;
		int i;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* the thread just exited */
		len = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
		stat[len] = '\0';
		open_paren = strchr(stat, '(');
		close_paren = strrchr(stat, ')');
		if (!open_paren || !close_paren || close_paren < open_paren)
			continue;
		*close_paren = '\0';
		/* after ")": state ppid pgrp session tty_nr tpgid flags */
		fields = close_paren + 1;
		for (i = 0; i < 6 && fields; i++)
			fields = strchr(fields + 1, ' ');
		if (fields)
			flags = strtoul(fields + 1, NULL, 10);
		if (!strncmp(open_paren + 1, "iou-sqp-", 8)) {
			if (tids && n < max)
				tids[n] = atoi(de->d_name);
			n++;
		} else if ((flags & SQ_PF_IO_WORKER) &&
			   strncmp(open_paren + 1, "iou-", 4)) {
			*settled = 0;
		}
	}
	closedir(d);
	return n;
}

/* Lists the kernel SQ poll threads ("iou-sqp-<pid>") of this process:
 * returns how many; fills tids[] (up to max) when non-NULL. Retries (up to
 * 2 s) until no io_uring kernel thread is still unnamed. */
static T_UNUSED int list_sqp_threads(int *tids, int max)
{
	unsigned long long end = t_now_ms() + 2000;
	int settled, n;

	for (;;) {
		n = sqp_snapshot(tids, max, &settled);
		if (settled || t_now_ms() >= end)
			return n;
		t_msleep(1);
	}
}

static T_UNUSED int count_sqp_threads(void)
{
	return list_sqp_threads(NULL, 0);
}

/* Polls until the SQ thread count equals `want` or `timeout_ms` passes;
 * returns the last count seen. Thread exit is asynchronous in the kernel. */
static T_UNUSED int wait_sqp_threads(int want, long timeout_ms)
{
	unsigned long long end = t_now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = count_sqp_threads();
		if (n == want || t_now_ms() >= end)
			return n;
		t_msleep(10);
	}
}

/* The CPU a thread is restricted to, from Cpus_allowed_list: the CPU number
 * when it is exactly one CPU, -1 when it may run on several, -2 if the
 * thread is gone. */
static T_UNUSED int thread_single_cpu(int tid)
{
	char path[100], line[256];
	FILE *f;
	int cpu = -2;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		char *v, *end;
		long c;

		if (strncmp(line, "Cpus_allowed_list:", 18))
			continue;
		v = line + 18;
		while (*v == ' ' || *v == '\t')
			v++;
		c = strtol(v, &end, 10);
		cpu = (end != v && (*end == '\n' || *end == '\0')) ? (int)c : -1;
		break;
	}
	fclose(f);
	return cpu;
}

/* Prints "<label>=c1,c2,..." : the CPU binding of each SQ thread (-1 =
 * unbound), sorted, for a driver to check. */
static T_UNUSED void print_sqp_cpus(const char *label)
{
	int tids[64], cpus[64];
	int n = list_sqp_threads(tids, 64);
	int i, j;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++) {
		int c = thread_single_cpu(tids[i]);

		for (j = i; j > 0 && cpus[j - 1] > c; j--)
			cpus[j] = cpus[j - 1];
		cpus[j] = c;
	}
	printf("%s=", label);
	for (i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", cpus[i]);
	printf("\n");
}

/* Checks there are exactly `n` SQ threads and that their CPU bindings are
 * the multiset cpus[0..n) (-1 = unbound). Waits for stragglers first. */
#define CHECK_POLLERS(n, ...)						\
	check_pollers_at(__FILE__, __LINE__, (n), (const int[]){ __VA_ARGS__ })

static T_UNUSED void check_pollers_at(const char *file, int line, int n,
				       const int *cpus)
{
	int tids[64], got[64], used[64] = { 0 };
	int count = wait_sqp_threads(n, SQ_THREAD_GONE_MS);
	int i, j;

	if (count != n)
		t_fail_at(file, line, "expected %d iou-sqp threads, found %d",
			   n, count);
	count = list_sqp_threads(tids, 64);
	if (count != n)
		t_fail_at(file, line, "iou-sqp thread count changed: %d -> %d",
			   n, count);
	for (i = 0; i < n; i++)
		got[i] = thread_single_cpu(tids[i]);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			if (!used[j] && got[j] == cpus[i])
				break;
		if (j == n) {
			char buf[200];
			int off = 0;

			for (j = 0; j < n && off < 180; j++)
				off += snprintf(buf + off, sizeof(buf) - off,
						" tid %d cpu %d;", tids[j], got[j]);
			t_fail_at(file, line,
				   "no iou-sqp thread bound to cpu %d (-1 = unbound); threads:%s",
				   cpus[i], buf);
		}
		used[j] = 1;
	}
}

/* Waits for all SQ threads of the process to be gone. */
#define CHECK_NO_POLLERS()						\
	do {								\
		int _n = wait_sqp_threads(0, SQ_THREAD_GONE_MS);	\
		if (_n != 0)						\
			T_FAIL("%d iou-sqp thread(s) still alive %d ms after "\
			     "the last ring closed", _n, SQ_THREAD_GONE_MS);\
	} while (0)

/* ---- data ---------------------------------------------------------------- */

#define SQ_FILE_SIZE (512 * 1024)
#define SQ_CHUNK 4096

static T_UNUSED unsigned char pattern_byte(size_t off)
{
	return (unsigned char)((off * 131u + (off >> 12) * 7u + 0x5a) & 0xff);
}

/* An unlinked temp file of SQ_FILE_SIZE bytes of pattern_byte(). */
static T_UNUSED int make_data_file(void)
{
	char path[] = "/tmp/rsuring-sqpoll-XXXXXX";
	unsigned char buf[SQ_CHUNK];
	size_t off, i;
	int fd = mkstemp(path);

	CHECK_MSG(fd >= 0, "mkstemp: %s", strerror(errno));
	unlink(path);
	for (off = 0; off < SQ_FILE_SIZE; off += sizeof(buf)) {
		for (i = 0; i < sizeof(buf); i++)
			buf[i] = pattern_byte(off + i);
		CHECK(pwrite(fd, buf, sizeof(buf), (off_t)off) == (ssize_t)sizeof(buf));
	}
	CHECK(fsync(fd) == 0);
	return fd;
}

static T_UNUSED void check_data(const unsigned char *buf, size_t len, size_t off,
				 const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern_byte(off + i))
			T_FAIL("%s: byte %zu of the read at offset %zu is 0x%02x, want 0x%02x",
			     what, i, off, buf[i], pattern_byte(off + i));
}

/* ---- ring I/O -------------------------------------------------------------- */

/*
 * io_uring_submit's count on an SQPOLL ring is "SQ tail minus the kernel's
 * SQ head", as in liburing: the kernel posts the CQEs of a batch before it
 * publishes the new SQ head, so right after reaping a completion the head
 * may still count the SQEs of that batch. At least the new SQEs, at most a
 * ring's worth, is all that can be asserted.
 */
#define CHECK_SUBMITTED(ret, want, what)				\
	CHECK_MSG((ret) >= (want) && (ret) <= 64,			\
		  "io_uring_submit(%s) = %d (%s), want >= %d", (what), (ret),\
		  (ret) < 0 ? strerror(-(ret)) : "", (want))

static T_UNUSED struct io_uring_cqe *wait_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe = NULL;
	int ret = io_uring_wait_cqe(ring, &cqe);

	CHECK_MSG(ret == 0, "io_uring_wait_cqe: %d (%s)", ret, strerror(-ret));
	CHECK(cqe != NULL);
	T_PROGRESS();
	return cqe;
}

/* One NOP round trip on a ring that may have an SQ thread (see
 * CHECK_SUBMITTED; t_nop_round_trip is the exact one for other rings). */
static T_UNUSED void ring_nop(struct io_uring *ring, unsigned long long tag)
{
	struct io_uring_cqe *cqe;
	int ret;

	t_queue_nops(ring, 1, tag);
	ret = io_uring_submit(ring);
	CHECK_SUBMITTED(ret, 1, "NOP");
	cqe = wait_one(ring);
	CHECK_MSG(cqe->user_data == tag, "NOP user_data %llu, want %llu",
		  (unsigned long long)cqe->user_data, tag);
	CHECK_MSG(cqe->res == 0, "NOP res %d", cqe->res);
	io_uring_cqe_seen(ring, cqe);
}

/* Queues a read of `len` bytes at `off` (no submit). */
static T_UNUSED void queue_read(struct io_uring *ring, int fd, void *buf,
				 unsigned len, size_t off, unsigned long long tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK_MSG(sqe != NULL, "no SQE for a read");
	io_uring_prep_read(sqe, fd, buf, len, (__u64)off);
	io_uring_sqe_set_data64(sqe, tag);
}

/* A real read of one chunk through `ring`, checked against the pattern;
 * plus a NOP. `which` varies the offset so rings read different data. */
static T_UNUSED void ring_io(struct io_uring *ring, int fd, unsigned which)
{
	unsigned char buf[SQ_CHUNK];
	size_t off = ((size_t)which * SQ_CHUNK * 3 + 512) % (SQ_FILE_SIZE - SQ_CHUNK);
	struct io_uring_cqe *cqe;
	int ret;

	memset(buf, 0, sizeof(buf));
	queue_read(ring, fd, buf, sizeof(buf), off, 0xbeef00 + which);
	ret = io_uring_submit(ring);
	CHECK_SUBMITTED(ret, 1, "read");
	cqe = wait_one(ring);
	CHECK_MSG(cqe->user_data == 0xbeef00 + which, "read user_data %llu",
		  (unsigned long long)cqe->user_data);
	CHECK_MSG(cqe->res == SQ_CHUNK, "read res %d (%s)", cqe->res,
		  cqe->res < 0 ? strerror(-cqe->res) : "short");
	io_uring_cqe_seen(ring, cqe);
	check_data(buf, sizeof(buf), off, "ring_io");
	ring_nop(ring, 0x1000 + which);
}

/* Reads through several rings at once: all submitted before any is reaped. */
static T_UNUSED void rings_io_concurrent(struct io_uring *rings, int n, int fd)
{
	static unsigned char bufs[64][2][SQ_CHUNK];
	int i, k, ret;

	CHECK(n <= 64);
	for (i = 0; i < n; i++) {
		memset(bufs[i], 0, sizeof(bufs[i]));
		for (k = 0; k < 2; k++)
			queue_read(&rings[i], fd, bufs[i][k], SQ_CHUNK,
				   (size_t)(i * 2 + k) * SQ_CHUNK, (unsigned long long)(i * 2 + k));
		ret = io_uring_submit(&rings[i]);
		CHECK_SUBMITTED(ret, 2, "2 reads");
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < 2; k++) {
			struct io_uring_cqe *cqe = wait_one(&rings[i]);
			unsigned long long ud = cqe->user_data;

			CHECK_MSG(ud / 2 == (unsigned long long)i,
				  "ring %d got user_data %llu", i, ud);
			CHECK_MSG(cqe->res == SQ_CHUNK, "ring %d read res %d", i, cqe->res);
			io_uring_cqe_seen(&rings[i], cqe);
			check_data(bufs[i][ud % 2], SQ_CHUNK, (size_t)ud * SQ_CHUNK,
				   "concurrent read");
		}
	}
}

/* Skips when the kernel has no io_uring or forbids it here. */
static T_UNUSED void skip_if_no_io_uring(int ret)
{
	if (ret == -ENOSYS || ret == -EPERM)
		T_SKIP("io_uring unavailable: %s", strerror(-ret));
}

/* ---- rsuring extensions ---------------------------------------------------- */
#ifdef RSURING_H

/* Creates a shared SQPOLL ring; cpu >= 0 pins it (SQ_AFF), cpu < 0 leaves
 * placement to the library. Returns the setup result. */
static T_UNUSED int shared_ring_init(struct io_uring *ring, int cpu, unsigned entries)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQPOLL_PERCPU;
	if (cpu >= 0) {
		p.flags |= IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = (unsigned)cpu;
	}
	return io_uring_queue_init_params(entries, ring, &p);
}

static T_UNUSED void shared_ring(struct io_uring *ring, int cpu)
{
	int ret = shared_ring_init(ring, cpu, 8);

	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "shared ring on cpu %d: setup returned %d (%s)", cpu,
		  ret, strerror(-ret));
	CHECK_MSG(ring->flags & IORING_SETUP_SQPOLL, "ring.flags 0x%x lacks SQPOLL",
		  ring->flags);
	CHECK_MSG(!(ring->flags & IORING_SETUP_SQPOLL_PERCPU),
		  "ring.flags 0x%x shows the library-only PERCPU bit", ring->flags);
	CHECK_MSG(!(ring->flags & IORING_SETUP_ATTACH_WQ),
		  "ring.flags 0x%x shows ATTACH_WQ the application did not ask for",
		  ring->flags);
}

/* Checks rsuring_sqpoll_group(ring) = { cpu, members }. */
#define CHECK_GROUP(ring, want_cpu, want_members)			\
	do {								\
		struct rsuring_sqpoll_info _gi = { -7, 9999 };		\
		int _r = rsuring_sqpoll_group((ring), &_gi);		\
		if (_r != 0)						\
			T_FAIL("rsuring_sqpoll_group(%s) = %d (%s)", #ring, _r,\
			     strerror(-_r));				\
		if (_gi.cpu != (want_cpu) || _gi.members != (unsigned)(want_members))\
			T_FAIL("rsuring_sqpoll_group(%s): cpu %d members %u, want cpu %d members %u",\
			     #ring, _gi.cpu, _gi.members, (int)(want_cpu),	\
			     (unsigned)(want_members));			\
	} while (0)

#endif /* RSURING_H */

#endif /* SQ_COMMON_H */
