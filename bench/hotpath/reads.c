/* SPDX-License-Identifier: MIT */
/*
 * 4 KiB random reads through a liburing-compatible library, one process per
 * run (the NOP and reaping loops are in interleave.c).
 *
 * Built once against Debian's liburing header (/usr/include) and run with
 * each library in turn (Debian's liburing.so.2, upstream liburing's, rsuring's,
 * chosen by LD_LIBRARY_PATH), so every library runs the very same inline
 * header code and only the library calls differ.
 *
 * Usage:
 *   reads FILE QD direct|buffered plain|defer OPS
 *
 * defer: the ring is set up with SINGLE_ISSUER | DEFER_TASKRUN.
 *
 * A run does OPS reads after a warm-up of OPS/10 that is not counted,
 * timed with the process's CPU clock (CLOCK_PROCESS_CPUTIME_ID: user + system
 * time of all its threads, which time spent waiting for the CPU does not
 * inflate) and with the wall clock. It prints one line:
 *   RESULT ops=<counted> cpu_ns=<CPU ns> wall_ns=<wall ns> user_ns=<U>
 *          sys_ns=<S> total_ops=<N> lib=<library path>
 * user_ns/sys_ns: the CPU time split into user and kernel mode (getrusage;
 * the kernel apportions it by tick samples, so it is coarser than cpu_ns).
 * lib: the real path of the library io_uring_submit came from, so the driver
 * can check which library really ran.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define BENCH_NAME "reads"
#include "bench_common.h"

#define BS 4096
#define MAX_QD 1024
#define MAX_OPS (1UL << 34)

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
		rusage_ns(RUSAGE_SELF, &w->user0, &w->sys0);
		w->wall0 = clock_ns(CLOCK_MONOTONIC);
		w->cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		return false;
	}
	if (ops - w->start_ops < w->target)
		return false;
	w->cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - w->cpu0;
	w->wall = clock_ns(CLOCK_MONOTONIC) - w->wall0;
	rusage_ns(RUSAGE_SELF, &w->user, &w->sys);
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

static struct io_uring_sqe *get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		fprintf(stderr, "reads: SQ ring full\n");
		exit(1);
	}
	return sqe;
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
/* 1 for the word `one`, 0 for `zero`, -1 for anything else. */
static int pick(const char *arg, const char *one, const char *zero)
{
	if (!strcmp(arg, one))
		return 1;
	return strcmp(arg, zero) ? -1 : 0;
}

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
	direct = pick(argv[2], "direct", "buffered");
	defer = pick(argv[3], "defer", "plain");
	if (direct < 0 || defer < 0)
		return 2;
	work_init(&w, parse_ul(argv[4], "operation count", MAX_OPS));

	fd = open(argv[0], O_RDONLY | (direct ? O_DIRECT : 0));
	if (fd < 0)
		die(argv[0], strerror(errno));
	end = lseek(fd, 0, SEEK_END);
	if (end < BS)
		die("file size", strerror(EINVAL));
	blocks = (uint64_t)end / BS;
	if (posix_memalign((void **)&bufs, BS, (size_t)qd * BS))
		die("posix_memalign", strerror(ENOMEM));
	memset(bufs, 0, (size_t)qd * BS);

	memset(&p, 0, sizeof(p));
	if (defer)
		p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(qd, &ring, &p);
	if (ret)
		die_ret("queue_init_params", ret);

	for (i = 0; i < qd; i++)
		prep_read(&ring, fd, bufs + (size_t)i * BS, blocks, i);

	do {
		unsigned n;

		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0)
			die_ret("submit_and_wait", ret);
		n = io_uring_peek_batch_cqe(&ring, cqes, qd);
		for (i = 0; i < n; i++) {
			unsigned slot = (unsigned)io_uring_cqe_get_data64(cqes[i]);

			if (cqes[i]->res != BS) {
				fprintf(stderr, "reads: read res %d (want %d)\n",
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
	int ret = rand_read(argc - 1, argv + 1);

	if (ret == 2)
		fprintf(stderr, "usage: %s FILE QD direct|buffered plain|defer OPS\n", argv[0]);
	return ret;
}
