/* SPDX-License-Identifier: MIT */
/*
 * Hot-path micro-benchmarks: the same program on several liburing-compatible
 * libraries.
 *
 * Built once against Debian's liburing header (/usr/include) and run with
 * each library in turn (Debian's liburing.so.2, upstream liburing's, rsuring's,
 * chosen by LD_LIBRARY_PATH), so every library runs the very same inline
 * header code and only the library calls differ. Built a second time with
 * -DRSURING_EXT against rsuring's include/rsuring.h for the rsuring-only
 * reaping variant.
 *
 * Every case does a fixed amount of work: OPS operations after a warm-up of
 * OPS/10 that is not counted. The counted part is timed with the process's
 * CPU clock (CLOCK_PROCESS_CPUTIME_ID: user + system time of all its
 * threads, which time spent waiting for the CPU does not inflate) and with
 * the wall clock.
 *
 * Usage:
 *   hotpath nop-qd1   OPS
 *   hotpath nop-qd    DEPTH BATCH OPS [regring] [defer]
 *   hotpath reap      one|batch|waitbatch ROUNDS
 *   hotpath read      FILE QD direct|buffered plain|defer OPS
 *
 * regring: io_uring_register_ring_fd first. defer: the ring is set up with
 * SINGLE_ISSUER | DEFER_TASKRUN (what fio's t/io_uring uses).
 *
 * Every run prints one line:
 *   RESULT ops=<counted> cpu_ns=<CPU ns> wall_ns=<wall ns> user_ns=<U>
 *          sys_ns=<S> total_ops=<N> [ns_per_cqe=<median>] lib=<library path>
 * user_ns/sys_ns: the CPU time split into user and kernel mode (getrusage;
 * the kernel apportions it by tick samples, so it is coarser than cpu_ns).
 * lib: the real path of the library io_uring_submit came from, so the driver
 * can check which library really ran. total_ops: all operations including
 * the warm-up (for instruction and system-call counts per operation).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef RSURING_EXT
#include <rsuring.h>
#else
#include <liburing.h>
#endif

#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

#define BS 4096
#define MAX_QD 1024
#define MAX_OPS (1UL << 34)

static void die(const char *what, int err)
{
	fprintf(stderr, "hotpath: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/*
 * The counted part of a run: `warmup` operations first, then `target`
 * operations timed by both clocks. The loops call work_progress() with their
 * running count (a compare; the clocks are read only twice).
 */
struct work {
	unsigned long warmup, target;
	uint64_t cpu0, wall0, cpu, wall, user0, sys0, user, sys;
	unsigned long start_ops, counted;
	bool started;
};

static void rusage_ns(uint64_t *user, uint64_t *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u;
	*sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
}

static void work_init(struct work *w, unsigned long target)
{
	memset(w, 0, sizeof(*w));
	w->target = target;
	w->warmup = target / 10;
}

/* True when the counted operations are done. */
static inline bool work_progress(struct work *w, unsigned long ops)
{
	if (!w->started) {
		if (ops < w->warmup)
			return false;
		w->started = true;
		w->start_ops = ops;
		rusage_ns(&w->user0, &w->sys0);
		w->wall0 = clock_ns(CLOCK_MONOTONIC);
		w->cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		return false;
	}
	if (ops - w->start_ops < w->target)
		return false;
	w->cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - w->cpu0;
	w->wall = clock_ns(CLOCK_MONOTONIC) - w->wall0;
	rusage_ns(&w->user, &w->sys);
	w->user -= w->user0;
	w->sys -= w->sys0;
	w->counted = ops - w->start_ops;
	return true;
}

static void work_report(const struct work *w, unsigned long total_ops)
{
	printf("RESULT ops=%lu cpu_ns=%llu wall_ns=%llu user_ns=%llu sys_ns=%llu total_ops=%lu lib=%s\n",
	       w->counted, (unsigned long long)w->cpu, (unsigned long long)w->wall,
	       (unsigned long long)w->user, (unsigned long long)w->sys, total_ops, lib_path());
}

static unsigned long parse_ul(const char *s, const char *what, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !*s || v == 0 || v > max) {
		fprintf(stderr, "hotpath: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static void check_nop(const struct io_uring_cqe *cqe)
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

/* QD1 round trip: get_sqe, prep_nop, submit_and_wait(1), peek + cqe_seen. */
static int nop_qd1(int argc, char **argv)
{
	struct io_uring ring;
	struct work w;
	unsigned long ops = 0;
	int ret;

	if (argc != 1)
		return 2;
	work_init(&w, parse_ul(argv[0], "operation count", MAX_OPS));
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		die("queue_init", ret);

	do {
		struct io_uring_cqe *cqe;

		io_uring_prep_nop(get_sqe(&ring));
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret != 1)
			die("submit_and_wait", ret < 0 ? ret : EIO);
		ret = io_uring_peek_cqe(&ring, &cqe);
		if (ret)
			die("peek_cqe", ret);
		check_nop(cqe);
		io_uring_cqe_seen(&ring, cqe);
		ops++;
	} while (!work_progress(&w, ops));
	work_report(&w, ops);
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
	struct io_uring_params p;
	struct io_uring ring;
	unsigned depth, batch, inflight = 0;
	bool regring = false;
	unsigned long ops = 0;
	struct work w;
	int i, ret;

	if (argc < 3 || argc > 5)
		return 2;
	depth = parse_ul(argv[0], "depth", MAX_QD);
	batch = parse_ul(argv[1], "batch", depth);
	work_init(&w, parse_ul(argv[2], "operation count", MAX_OPS));
	memset(&p, 0, sizeof(p));
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "regring"))
			regring = true;
		else if (!strcmp(argv[i], "defer"))
			p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
		else
			return 2;
	}
	ret = io_uring_queue_init_params(depth, &ring, &p);
	if (ret)
		die("queue_init_params", ret);
	if (regring) {
		ret = io_uring_register_ring_fd(&ring);
		if (ret != 1)
			die("register_ring_fd", ret < 0 ? ret : EIO);
	}

	do {
		unsigned n, to_prep = depth - inflight;

		if (to_prep > batch)
			to_prep = batch;
		for (n = 0; n < to_prep; n++)
			io_uring_prep_nop(get_sqe(&ring));
		inflight += to_prep;
		if (inflight >= depth)
			ret = io_uring_submit_and_wait(&ring, batch);
		else
			ret = io_uring_submit(&ring);
		if (ret != (int)to_prep)
			die("submit", ret < 0 ? ret : EIO);

		n = io_uring_peek_batch_cqe(&ring, cqes, depth);
		for (unsigned k = 0; k < n; k++)
			check_nop(cqes[k]);
		io_uring_cq_advance(&ring, n);
		inflight -= n;
		ops += n;
	} while (!work_progress(&w, ops));
	work_report(&w, ops);
	io_uring_queue_exit(&ring);
	return 0;
}

/*
 * Completion reaping cost: submit 128 NOPs (they complete during the submit
 * call), then time only the reaping of all 128, ROUNDS times. ns per CQE:
 * the median round (wall clock), so that a round preempted by other work
 * does not count; a round takes about 150 ns, too short for the CPU clock,
 * and the CPU time of the whole run would be mostly the submits. The figure
 * includes one clock_gettime per round (about 0.2 ns per CQE).
 *   one       - io_uring_peek_cqe + io_uring_cqe_seen until the CQ is empty
 *               (the last, empty peek is the library call liburing makes)
 *   batch     - io_uring_peek_batch_cqe + io_uring_cq_advance
 *   waitbatch - rsuring_wait_batch_cqe(max 128, min 1) + io_uring_cq_advance
 */
#define REAP_N 128
enum reap_mode { REAP_ONE, REAP_BATCH, REAP_WAITBATCH };

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int reap(int argc, char **argv)
{
	struct io_uring_cqe *cqes[REAP_N];
	struct io_uring ring;
	enum reap_mode mode;
	unsigned long rounds, it, warmup;
	uint64_t *took, cpu0, wall0, user0 = 0, sys0 = 0, user, sys;
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
	rounds = parse_ul(argv[1], "round count", 1UL << 26);
	warmup = rounds / 10;
	took = calloc(rounds, sizeof(*took));
	if (!took)
		die("calloc", ENOMEM);
	ret = io_uring_queue_init(REAP_N, &ring, 0);
	if (ret)
		die("queue_init", ret);

	cpu0 = wall0 = 0;
	for (it = 0; it < rounds + warmup; it++) {
		struct io_uring_cqe *cqe;
		unsigned i, n = 0;
		uint64_t t0, t1;

		if (it == warmup) {
			rusage_ns(&user0, &sys0);
			wall0 = clock_ns(CLOCK_MONOTONIC);
			cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		}
		for (i = 0; i < REAP_N; i++)
			io_uring_prep_nop(get_sqe(&ring));
		ret = io_uring_submit(&ring);
		if (ret != REAP_N)
			die("submit", ret < 0 ? ret : EIO);
		if (io_uring_cq_ready(&ring) != REAP_N) {
			fprintf(stderr, "hotpath: NOPs did not complete inline\n");
			return 1;
		}

		t0 = clock_ns(CLOCK_MONOTONIC);
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
		t1 = clock_ns(CLOCK_MONOTONIC);
		if (n != REAP_N || sum) {
			fprintf(stderr, "hotpath: reaped %u CQEs (sum of res %ld)\n", n, sum);
			return 1;
		}
		if (it >= warmup)
			took[it - warmup] = t1 - t0;
	}
	cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	wall0 = clock_ns(CLOCK_MONOTONIC) - wall0;
	rusage_ns(&user, &sys);
	qsort(took, rounds, sizeof(*took), cmp_u64);
	printf("RESULT ops=%lu cpu_ns=%llu wall_ns=%llu user_ns=%llu sys_ns=%llu total_ops=%lu "
	       "ns_per_cqe=%.4f lib=%s\n",
	       rounds * REAP_N, (unsigned long long)cpu0, (unsigned long long)wall0,
	       (unsigned long long)(user - user0), (unsigned long long)(sys - sys0),
	       it * REAP_N, (double)took[rounds / 2] / REAP_N, lib_path());
	free(took);
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
 * 4096) and refill as many.
 */
static int rand_read(int argc, char **argv)
{
	struct io_uring_cqe *cqes[MAX_QD];
	struct io_uring_params p;
	struct io_uring ring;
	unsigned qd, i;
	unsigned long ops = 0;
	uint64_t blocks;
	struct work w;
	char *bufs;
	int fd, direct, defer, ret;
	off_t end;

	if (argc != 5)
		return 2;
	qd = parse_ul(argv[1], "qd", MAX_QD);
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
	work_init(&w, parse_ul(argv[4], "operation count", MAX_OPS));

	fd = open(argv[0], O_RDONLY | (direct ? O_DIRECT : 0));
	if (fd < 0)
		die(argv[0], errno);
	end = lseek(fd, 0, SEEK_END);
	if (end < BS)
		die("file size", EINVAL);
	blocks = (uint64_t)end / BS;
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

	do {
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
	} while (!work_progress(&w, ops));
	work_report(&w, ops);
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
			"usage: %s nop-qd1 OPS\n"
			"       %s nop-qd DEPTH BATCH OPS [regring] [defer]\n"
			"       %s reap one|batch|waitbatch ROUNDS\n"
			"       %s read FILE QD direct|buffered plain|defer OPS\n",
			argv[0], argv[0], argv[0], argv[0]);
	return ret;
}
