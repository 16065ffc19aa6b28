/* SPDX-License-Identifier: MIT */
/*
 * Hot-path micro-benchmarks for rsuring vs liburing.
 *
 * Built once against liburing's header (Debian's /usr/include) and run twice,
 * once with Debian's liburing.so.2 and once with rsuring's (LD_LIBRARY_PATH),
 * so both libraries execute the very same inline header code and only the
 * library calls differ. Built a second time with -DRSURING_EXT against
 * rsuring's include/rsuring.h for the rsuring-only reaping variant.
 *
 * Usage:
 *   hotpath nop-qd1   SECS
 *   hotpath nop-qd    DEPTH BATCH SECS [regring]
 *   hotpath reap      one|batch|waitbatch ITERS
 *   hotpath read      FILE QD direct|buffered plain|defer SECS
 *
 * Every run prints one line:
 *   RESULT <value> <unit> lib=<library path> ops=<N> cpu_rate=<R>
 * lib: the real path of the library io_uring_submit came from, so the driver
 * can check which library really ran. ops: operations including the warm-up
 * (for syscalls per op under strace). cpu_rate: operations per second of
 * this process's CPU time over the timed window (its threads, io-wq workers
 * included), which time spent preempted by other work does not dilute: the
 * steadier figure on a shared machine, and the whole cost for NOPs, which
 * complete inside io_uring_enter. 0 where it does not apply.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef RSURING_EXT
#include <rsuring.h>
#else
#include <liburing.h>
#endif

#define BS 4096
#define MAX_QD 1024

static void die(const char *what, int err)
{
	fprintf(stderr, "hotpath: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The library the hot-path symbols resolve to, as a real path. */
static const char *lib_path(void)
{
	static char path[PATH_MAX];
	Dl_info info;

	if (!dladdr((void *)io_uring_submit, &info) || !info.dli_fname)
		return "unknown";
	if (!realpath(info.dli_fname, path))
		return info.dli_fname;
	return path;
}

static void result(double value, const char *unit, unsigned long total_ops,
		   double cpu_rate)
{
	printf("RESULT %.6g %s lib=%s ops=%lu cpu_rate=%.6g\n", value, unit,
	       lib_path(), total_ops, cpu_rate);
}

/*
 * The measuring window of a loop: the first tenth of the run warms up,
 * then `secs` seconds are counted (wall and process CPU time).
 */
struct window {
	double secs, t0, t, start, cpu_start;
	unsigned long counted;
};

static void window_begin(struct window *w, double secs)
{
	memset(w, 0, sizeof(*w));
	w->secs = secs;
	w->t0 = now();
}

/* Called every few iterations with the running op count; true when done. */
static bool window_tick(struct window *w, unsigned long ops)
{
	w->t = now();
	if (!w->start && w->t - w->t0 >= w->secs / 10) {
		w->start = w->t;
		w->cpu_start = cpu_now();
		w->counted = ops;
	}
	return w->start && w->t - w->start >= w->secs;
}

static void window_report(struct window *w, unsigned long ops, const char *unit)
{
	result((ops - w->counted) / (w->t - w->start), unit, ops,
	       (ops - w->counted) / (cpu_now() - w->cpu_start));
}

static unsigned parse_u(const char *s, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || !*s || v == 0 || v > 1u << 20) {
		fprintf(stderr, "hotpath: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static double parse_secs(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (*end || v <= 0) {
		fprintf(stderr, "hotpath: bad duration '%s'\n", s);
		exit(2);
	}
	return v;
}

static void check_nop(struct io_uring_cqe *cqe)
{
	if (cqe->res != 0) {
		fprintf(stderr, "hotpath: NOP res %d\n", cqe->res);
		exit(1);
	}
}

static struct io_uring_sqe *get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		fprintf(stderr, "hotpath: SQ ring full\n");
		exit(1);
	}
	return sqe;
}

/*
 * QD1 round trip: get_sqe, prep_nop, submit_and_wait(1), peek + cqe_seen.
 * A warm-up of a tenth of the time is not counted.
 */
static int nop_qd1(int argc, char **argv)
{
	struct io_uring ring;
	struct window w;
	double secs;
	unsigned long ops = 0;
	int ret;

	if (argc != 1)
		return 2;
	secs = parse_secs(argv[0]);
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		die("queue_init", ret);

	window_begin(&w, secs);
	for (;;) {
		struct io_uring_cqe *cqe;
		int i;

		for (i = 0; i < 256; i++) {
			io_uring_prep_nop(get_sqe(&ring));
			ret = io_uring_submit_and_wait(&ring, 1);
			if (ret != 1)
				die("submit_and_wait", ret < 0 ? ret : EIO);
			ret = io_uring_peek_cqe(&ring, &cqe);
			if (ret)
				die("peek_cqe", ret);
			check_nop(cqe);
			io_uring_cqe_seen(&ring, cqe);
		}
		ops += 256;
		if (window_tick(&w, ops))
			break;
	}
	window_report(&w, ops, "ops/s");
	io_uring_queue_exit(&ring);
	return 0;
}

/*
 * NOP throughput at a queue depth: keep up to DEPTH in flight, prepare BATCH
 * SQEs, submit (waiting for BATCH completions only when the ring is at its
 * depth), reap whatever completed with peek_batch_cqe + cq_advance.
 */
static int nop_qd(int argc, char **argv)
{
	struct io_uring_cqe *cqes[MAX_QD];
	struct io_uring ring;
	unsigned depth, batch, inflight = 0;
	unsigned long ops = 0, iters = 0;
	struct window w;
	double secs;
	int ret;

	if (argc != 3 && argc != 4)
		return 2;
	depth = parse_u(argv[0], "depth");
	batch = parse_u(argv[1], "batch");
	secs = parse_secs(argv[2]);
	if (depth > MAX_QD || batch > depth)
		return 2;
	ret = io_uring_queue_init(depth, &ring, 0);
	if (ret)
		die("queue_init", ret);
	if (argc == 4) {
		if (strcmp(argv[3], "regring"))
			return 2;
		ret = io_uring_register_ring_fd(&ring);
		if (ret != 1)
			die("register_ring_fd", ret < 0 ? ret : EIO);
	}

	window_begin(&w, secs);
	for (;;) {
		unsigned i, n, to_prep = depth - inflight;

		if (to_prep > batch)
			to_prep = batch;
		for (i = 0; i < to_prep; i++)
			io_uring_prep_nop(get_sqe(&ring));
		inflight += to_prep;
		if (inflight >= depth)
			ret = io_uring_submit_and_wait(&ring, batch);
		else
			ret = io_uring_submit(&ring);
		if (ret != (int)to_prep)
			die("submit", ret < 0 ? ret : EIO);

		n = io_uring_peek_batch_cqe(&ring, cqes, depth);
		for (i = 0; i < n; i++)
			check_nop(cqes[i]);
		io_uring_cq_advance(&ring, n);
		inflight -= n;
		ops += n;

		if ((++iters & 63) == 0) {
			if (window_tick(&w, ops))
				break;
		}
	}
	window_report(&w, ops, "ops/s");
	io_uring_queue_exit(&ring);
	return 0;
}

/*
 * Completion reaping cost: submit 128 NOPs (they complete during the submit
 * call), then time only the reaping of all 128, ITERS times. ns per CQE: the
 * median round, so that a round preempted by other work does not count (the
 * figure includes one clock_gettime, about 0.2 ns per CQE).
 *   one       - io_uring_peek_cqe + io_uring_cqe_seen until the CQ is empty
 *               (the last, empty peek is the library call liburing makes)
 *   batch     - io_uring_peek_batch_cqe + io_uring_cq_advance
 *   waitbatch - rsuring_wait_batch_cqe(max 128, min 1) + io_uring_cq_advance
 */
#define REAP_N 128
enum reap_mode { REAP_ONE, REAP_BATCH, REAP_WAITBATCH };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int reap(int argc, char **argv)
{
	struct io_uring_cqe *cqes[REAP_N];
	struct io_uring ring;
	enum reap_mode mode;
	unsigned long iters, it, warmup;
	double *rounds;
	long sum = 0;
	int ret;

	if (argc != 2)
		return 2;
	if (!strcmp(argv[0], "one"))
		mode = REAP_ONE;
	else if (!strcmp(argv[0], "batch"))
		mode = REAP_BATCH;
	else if (!strcmp(argv[0], "waitbatch"))
		mode = REAP_WAITBATCH;
	else
		return 2;
#ifndef RSURING_EXT
	if (mode == REAP_WAITBATCH) {
		fprintf(stderr, "hotpath: waitbatch needs the RSURING_EXT build\n");
		return 2;
	}
#endif
	iters = parse_u(argv[1], "iterations");
	warmup = iters / 10;
	rounds = calloc(iters, sizeof(*rounds));
	if (!rounds)
		die("calloc", ENOMEM);
	ret = io_uring_queue_init(REAP_N, &ring, 0);
	if (ret)
		die("queue_init", ret);

	/* The first tenth warms up and is not counted. */
	for (it = 0; it < iters + warmup; it++) {
		struct io_uring_cqe *cqe;
		unsigned i, n = 0;
		double t0, t1;

		for (i = 0; i < REAP_N; i++)
			io_uring_prep_nop(get_sqe(&ring));
		ret = io_uring_submit(&ring);
		if (ret != REAP_N)
			die("submit", ret < 0 ? ret : EIO);
		if (io_uring_cq_ready(&ring) != REAP_N) {
			fprintf(stderr, "hotpath: NOPs did not complete inline\n");
			return 1;
		}

		t0 = now();
		switch (mode) {
		case REAP_ONE:
			while (io_uring_peek_cqe(&ring, &cqe) == 0) {
				sum += cqe->res;
				io_uring_cqe_seen(&ring, cqe);
				n++;
			}
			break;
		case REAP_BATCH:
			n = io_uring_peek_batch_cqe(&ring, cqes, REAP_N);
			for (i = 0; i < n; i++)
				sum += cqes[i]->res;
			io_uring_cq_advance(&ring, n);
			break;
		case REAP_WAITBATCH:
#ifdef RSURING_EXT
			ret = rsuring_wait_batch_cqe(&ring, cqes, REAP_N, 1, NULL);
			if (ret < 0)
				die("rsuring_wait_batch_cqe", ret);
			n = ret;
			for (i = 0; i < n; i++)
				sum += cqes[i]->res;
			io_uring_cq_advance(&ring, n);
#endif
			break;
		}
		t1 = now();
		if (n != REAP_N || sum) {
			fprintf(stderr, "hotpath: reaped %u CQEs (sum of res %ld)\n", n, sum);
			return 1;
		}
		if (it >= warmup)
			rounds[it - warmup] = t1 - t0;
	}
	qsort(rounds, iters, sizeof(*rounds), cmp_double);
	result(rounds[iters / 2] * 1e9 / REAP_N, "ns/CQE", it * REAP_N, 0);
	free(rounds);
	io_uring_queue_exit(&ring);
	return 0;
}

/* xorshift64*: cheap, good enough to scatter offsets. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static void prep_read(struct io_uring *ring, int fd, void *buf, uint64_t blocks,
		      unsigned slot)
{
	struct io_uring_sqe *sqe = get_sqe(ring);

	io_uring_prep_read(sqe, fd, buf, BS, (rnd() % blocks) * BS);
	io_uring_sqe_set_data64(sqe, slot);
}

/*
 * 4 KiB random reads at queue depth QD: fill the queue, then submit and wait
 * for at least one completion, reap all that completed (each must return
 * 4096) and refill as many. IOPS.
 */
static int rand_read(int argc, char **argv)
{
	struct io_uring_cqe *cqes[MAX_QD];
	struct io_uring_params p;
	struct io_uring ring;
	unsigned qd, i;
	unsigned long ops = 0, iters = 0;
	uint64_t size, blocks;
	struct window w;
	double secs;
	char *bufs;
	int fd, direct, defer, ret;

	if (argc != 5)
		return 2;
	qd = parse_u(argv[1], "qd");
	if (qd > MAX_QD)
		return 2;
	if (!strcmp(argv[2], "direct"))
		direct = 1;
	else if (!strcmp(argv[2], "buffered"))
		direct = 0;
	else
		return 2;
	if (!strcmp(argv[3], "defer"))
		defer = 1;
	else if (!strcmp(argv[3], "plain"))
		defer = 0;
	else
		return 2;
	secs = parse_secs(argv[4]);

	fd = open(argv[0], O_RDONLY | (direct ? O_DIRECT : 0));
	if (fd < 0)
		die(argv[0], errno);
	{
		off_t end = lseek(fd, 0, SEEK_END);

		if (end < BS)
			die("file size", EINVAL);
		size = end;
	}
	blocks = size / BS;
	if (posix_memalign((void **)&bufs, BS, (size_t)qd * BS))
		die("posix_memalign", ENOMEM);
	memset(bufs, 0, (size_t)qd * BS);

	memset(&p, 0, sizeof(p));
	if (defer)
		p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(qd, &ring, &p);
	if (ret)
		die("queue_init_params", ret);

	for (i = 0; i < qd; i++)
		prep_read(&ring, fd, bufs + (size_t)i * BS, blocks, i);

	window_begin(&w, secs);
	for (;;) {
		unsigned n;

		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0)
			die("submit_and_wait", ret);
		n = io_uring_peek_batch_cqe(&ring, cqes, qd);
		for (i = 0; i < n; i++) {
			unsigned slot = (unsigned)io_uring_cqe_get_data64(cqes[i]);

			if (cqes[i]->res != BS) {
				fprintf(stderr, "hotpath: read res %d (want %d)\n",
					cqes[i]->res, BS);
				return 1;
			}
			prep_read(&ring, fd, bufs + (size_t)slot * BS, blocks, slot);
		}
		io_uring_cq_advance(&ring, n);
		ops += n;

		if ((++iters & 15) == 0) {
			if (window_tick(&w, ops))
				break;
		}
	}
	window_report(&w, ops, "IOPS");
	/* Let the in-flight reads finish before the buffers go away. */
	io_uring_queue_exit(&ring);
	free(bufs);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	if (argc >= 2) {
		if (!strcmp(argv[1], "nop-qd1"))
			ret = nop_qd1(argc - 2, argv + 2);
		else if (!strcmp(argv[1], "nop-qd"))
			ret = nop_qd(argc - 2, argv + 2);
		else if (!strcmp(argv[1], "reap"))
			ret = reap(argc - 2, argv + 2);
		else if (!strcmp(argv[1], "read"))
			ret = rand_read(argc - 2, argv + 2);
	}
	if (ret == 2)
		fprintf(stderr,
			"usage: %s nop-qd1 SECS\n"
			"       %s nop-qd DEPTH BATCH SECS [regring]\n"
			"       %s reap one|batch|waitbatch ITERS\n"
			"       %s read FILE QD direct|buffered plain|defer SECS\n",
			argv[0], argv[0], argv[0], argv[0]);
	return ret;
}
