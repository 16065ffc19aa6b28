/* SPDX-License-Identifier: MIT */
/*
 * Stress: THREADS threads x CYCLES create / submit / destroy cycles, mixing
 * plain rings and shared per-CPU SQPOLL rings (IORING_SETUP_SQPOLL |
 * IORING_SETUP_SQ_AFF | IORING_SETUP_SQPOLL_PERCPU on CPU 0 or 1), with
 * random early exits (io_uring_queue_exit with requests in flight).
 *
 *   stress [THREADS [CYCLES [SEED]]]      (default 8 2000 1)
 *
 * Checks:
 *  - every request of a cycle that is not cut short completes exactly once
 *    (no CQE lost, none duplicated, none with a foreign user_data);
 *  - afterwards the process has the fds, the mappings and (after polling up
 *    to 10 s for the kernel's SQ poll and io-wq threads to exit) the threads
 *    it had before.
 * Prints figures (cycles/s) on stdout. Exit 0 pass, 1 fail.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <rsuring.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

#define MAX_REQ 48

static int n_threads = 8, n_cycles = 2000;
static unsigned seed = 1;
static int memfd = -1;
static atomic_int failed;
static atomic_long st_cycles, st_early, st_sqpoll, st_requests, st_completed,
	st_setup_fail;

#define FAILF(...)                                                       \
	do {                                                             \
		fprintf(stderr, "stress: " __VA_ARGS__);                 \
		fputc('\n', stderr);                                     \
		atomic_store(&failed, 1);                                \
	} while (0)

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* ---- process resources ---------------------------------------------------- */

struct snapshot {
	char *fds;	/* space-separated fd numbers */
	char *maps;	/* named mappings (see read_maps) */
	int io_uring_maps;
	long anon_kib;
	int tasks;
};

static char *list_dir(const char *path, int *count)
{
	DIR *d = opendir(path);
	struct dirent *e;
	size_t cap = 4096, len = 0;
	char *out = calloc(1, cap);
	int n = 0;

	if (!d)
		return out;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		/* the directory's own fd shows up while we list it */
		if (!strcmp(path, "/proc/self/fd") && atoi(e->d_name) == dirfd(d))
			continue;
		if (len + strlen(e->d_name) + 2 > cap)
			out = realloc(out, cap *= 2);
		len += (size_t)sprintf(out + len, "%s ", e->d_name);
		n++;
	}
	closedir(d);
	if (count)
		*count = n;
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Named mappings (files, anon_inode:[io_uring], ...), one per line, sorted;
 * counts the io_uring ones and adds up the anonymous ones. Anonymous memory
 * is not compared line by line: glibc keeps per-thread malloc arenas and a
 * cache of thread stacks after the threads are gone, at addresses that vary.
 */
static char *read_maps(int *io_uring_maps, long *anon_kib)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], *lines[8192], *out;
	size_t n = 0, total = 1;

	*io_uring_maps = 0;
	*anon_kib = 0;
	while (f && n < 8192 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int path_at = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &path_at) < 2 ||
		    !path_at || line[path_at] == '\n' || line[path_at] == 0) {
			*anon_kib += (long)((hi - lo) / 1024);
			continue;
		}
		if (strstr(line, "[heap]") || strstr(line, "[stack]"))
			continue;
		if (strstr(line, "io_uring"))
			(*io_uring_maps)++;
		lines[n++] = strdup(line);
		total += strlen(line);
	}
	if (f)
		fclose(f);
	qsort(lines, n, sizeof(lines[0]), cmp_str);
	out = calloc(1, total);
	for (size_t i = 0; i < n; i++) {
		strcat(out, lines[i]);
		free(lines[i]);
	}
	return out;
}

static void snap(struct snapshot *s)
{
	s->fds = list_dir("/proc/self/fd", NULL);
	s->maps = read_maps(&s->io_uring_maps, &s->anon_kib);
	free(list_dir("/proc/self/task", &s->tasks));
}

/* Prints lines of `a` missing from `b` with `label`; returns their count. */
static int diff_lines(const char *a, const char *b, const char *label)
{
	int n = 0;
	char *copy = strdup(a), *save = NULL;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strstr(b, l)) {
			fprintf(stderr, "  %s %s\n", label, l);
			n++;
		}
	}
	free(copy);
	return n;
}

static void print_tasks(void)
{
	int n;
	char *ids = list_dir("/proc/self/task", &n), *save = NULL;

	for (char *id = strtok_r(ids, " ", &save); id; id = strtok_r(NULL, " ", &save)) {
		char path[64], comm[64] = "?";
		FILE *f;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", id);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				strcpy(comm, "?\n");
			fclose(f);
		}
		fprintf(stderr, "  task %s: %s", id, comm);
	}
	free(ids);
}

/* ---- the cycles ------------------------------------------------------------- */

struct cycle_state {
	unsigned char seen[MAX_REQ];
	struct __kernel_timespec ts[MAX_REQ];
	char buf[MAX_REQ][64];
};

static int ring_setup(struct io_uring *ring, unsigned *rs, int *is_sqpoll)
{
	struct io_uring_params p;
	unsigned entries = 4u << (rand_r(rs) % 4); /* 4 .. 32 */
	int ret;

	memset(&p, 0, sizeof(p));
	*is_sqpoll = rand_r(rs) % 2;
	if (*is_sqpoll) {
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF |
			  IORING_SETUP_SQPOLL_PERCPU;
		p.sq_thread_cpu = rand_r(rs) % 2;
		p.sq_thread_idle = 20;
	}
	ret = io_uring_queue_init_params(entries, ring, &p);
	if (ret == -EINVAL && *is_sqpoll) {
		/* a one-CPU machine: CPU 1 is offline */
		p.sq_thread_cpu = 0;
		ret = io_uring_queue_init_params(entries, ring, &p);
	}
	return ret;
}

/* One create / submit / (early) destroy cycle; 0 ok, -1 failure. */
static int one_cycle(unsigned *rs, struct cycle_state *cs, int cycle)
{
	struct io_uring ring;
	int is_sqpoll, ret, nreq = 1 + rand_r(rs) % MAX_REQ, submitted = 0;
	int early = rand_r(rs) % 8 == 0;
	int done = 0;
	double deadline;

	ret = ring_setup(&ring, rs, &is_sqpoll);
	if (ret < 0) {
		if (ret == -ENOMEM || ret == -EAGAIN) {
			atomic_fetch_add(&st_setup_fail, 1);
			return 0; /* resource pressure is not a library bug */
		}
		FAILF("cycle %d: ring setup: %d", cycle, ret);
		return -1;
	}
	if (is_sqpoll)
		atomic_fetch_add(&st_sqpoll, 1);
	memset(cs->seen, 0, sizeof(cs->seen));

	for (int i = 0; i < nreq; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		if (!sqe) {
			ret = io_uring_submit(&ring);
			if (ret < 0) {
				FAILF("cycle %d: submit: %d", cycle, ret);
				io_uring_queue_exit(&ring);
				return -1;
			}
			if (is_sqpoll)
				io_uring_sqring_wait(&ring);
			sqe = io_uring_get_sqe(&ring);
			if (!sqe) {
				/* CQ may be the limit: reap before queueing more */
				i--;
				struct io_uring_cqe *cqe;
				struct __kernel_timespec t = { 0, 1000000 };
				if (!io_uring_wait_cqe_timeout(&ring, &cqe, &t)) {
					unsigned k = (unsigned)cqe->user_data;
					if (k >= (unsigned)nreq || cs->seen[k]++) {
						FAILF("cycle %d: bad or duplicate CQE %u", cycle, k);
						io_uring_queue_exit(&ring);
						return -1;
					}
					done++;
					io_uring_cqe_seen(&ring, cqe);
				}
				continue;
			}
		}
		switch (rand_r(rs) % 3) {
		case 0:
			io_uring_prep_nop(sqe);
			break;
		case 1:
			cs->ts[i].tv_sec = 0;
			cs->ts[i].tv_nsec = (rand_r(rs) % 200) * 1000;
			io_uring_prep_timeout(sqe, &cs->ts[i], 0, 0);
			break;
		default:
			io_uring_prep_read(sqe, memfd, cs->buf[i], sizeof(cs->buf[i]),
					   (rand_r(rs) % 64) * 64);
			break;
		}
		sqe->user_data = (unsigned)i;
		submitted++;
	}
	ret = io_uring_submit(&ring);
	if (ret < 0) {
		FAILF("cycle %d: submit: %d", cycle, ret);
		io_uring_queue_exit(&ring);
		return -1;
	}
	atomic_fetch_add(&st_requests, submitted);
	if (early) {
		/* destroy with requests in flight */
		atomic_fetch_add(&st_early, 1);
		io_uring_queue_exit(&ring);
		return 0;
	}
	deadline = now() + 10;
	while (done < nreq) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec t = { 0, 50000000 };

		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &t);
		if (ret == -ETIME || ret == -EINTR) {
			if (now() > deadline) {
				FAILF("cycle %d: %d of %d requests never completed (%s)",
				      cycle, nreq - done, nreq, is_sqpoll ? "SQPOLL" : "plain");
				io_uring_queue_exit(&ring);
				return -1;
			}
			continue;
		}
		if (ret < 0) {
			FAILF("cycle %d: wait: %d", cycle, ret);
			io_uring_queue_exit(&ring);
			return -1;
		}
		unsigned k = (unsigned)cqe->user_data;
		if (k >= (unsigned)nreq || cs->seen[k]++) {
			FAILF("cycle %d: bad or duplicate CQE user_data %u (res %d)",
			      cycle, k, cqe->res);
			io_uring_queue_exit(&ring);
			return -1;
		}
		done++;
		io_uring_cqe_seen(&ring, cqe);
	}
	atomic_fetch_add(&st_completed, done);
	/* nothing else may arrive */
	if (io_uring_cq_ready(&ring)) {
		FAILF("cycle %d: %u extra CQEs", cycle, io_uring_cq_ready(&ring));
		io_uring_queue_exit(&ring);
		return -1;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

static void *worker(void *arg)
{
	unsigned rs = seed * 7919u + (unsigned)(long)arg;
	struct cycle_state *cs = calloc(1, sizeof(*cs));

	for (int c = 0; c < n_cycles && !atomic_load(&failed); c++) {
		if (one_cycle(&rs, cs, c) < 0)
			break;
		atomic_fetch_add(&st_cycles, 1);
	}
	free(cs);
	return NULL;
}

static void *warm(void *arg)
{
	free(malloc(1000 + (size_t)(long)arg));
	return NULL;
}

/* Thread creation warms glibc's stack cache and malloc arenas so that the
 * before/after mapping comparison sees only what rings leave behind. */
static void run_threads(void *(*fn)(void *))
{
	pthread_t t[64];
	for (long i = 0; i < n_threads; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)i)) {
			perror("pthread_create");
			exit(1);
		}
	for (int i = 0; i < n_threads; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	struct snapshot before, after;
	int leaked = 0;
	double t0, t1, t_settle;

	if (argc > 1)
		n_threads = atoi(argv[1]);
	if (argc > 2)
		n_cycles = atoi(argv[2]);
	if (argc > 3)
		seed = (unsigned)atoi(argv[3]);
	if (n_threads < 1 || n_threads > 64 || n_cycles < 1) {
		fprintf(stderr, "usage: stress [THREADS(1-64) [CYCLES [SEED]]]\n");
		return 2;
	}
	memfd = memfd_create("stress", 0);
	if (memfd < 0 || ftruncate(memfd, 1 << 16) < 0) {
		perror("memfd");
		return 1;
	}
	run_threads(warm);
	run_threads(warm);
	snap(&before);

	t0 = now();
	run_threads(worker);
	t1 = now();

	/* The kernel's SQ poll threads and io-wq workers exit asynchronously. */
	for (t_settle = now(); now() - t_settle < 10;) {
		int tasks;
		free(list_dir("/proc/self/task", &tasks));
		if (tasks <= before.tasks)
			break;
		usleep(10000);
	}
	t_settle = now() - t_settle;
	snap(&after);

	printf("stress: %d threads x %d cycles: %ld cycles in %.2f s = %.0f cycles/s; "
	       "%ld shared-SQPOLL rings, %ld early exits, %ld requests submitted, "
	       "%ld completed and checked, %ld setups refused for memory; "
	       "threads gone %.2f s after the last cycle; anonymous memory "
	       "%+ld KiB (glibc arenas, stack cache)\n",
	       n_threads, n_cycles, atomic_load(&st_cycles), t1 - t0,
	       atomic_load(&st_cycles) / (t1 - t0), atomic_load(&st_sqpoll),
	       atomic_load(&st_early), atomic_load(&st_requests),
	       atomic_load(&st_completed), atomic_load(&st_setup_fail), t_settle,
	       after.anon_kib - before.anon_kib);

	if (strcmp(before.fds, after.fds)) {
		fprintf(stderr, "stress: fds before: %s\nstress: fds after:  %s\n",
			before.fds, after.fds);
		leaked++;
	}
	if (after.tasks > before.tasks) {
		fprintf(stderr, "stress: %d threads before, %d after 10 s:\n",
			before.tasks, after.tasks);
		print_tasks();
		leaked++;
	}
	if (after.io_uring_maps) {
		fprintf(stderr, "stress: %d io_uring mappings left\n", after.io_uring_maps);
		leaked++;
	}
	if (diff_lines(after.maps, before.maps, "new mapping:"))
		leaked++;
	if (leaked)
		FAILF("resources leaked (see above)");
	free(before.fds);
	free(before.maps);
	free(after.fds);
	free(after.maps);
	if (atomic_load(&st_cycles) != (long)n_threads * n_cycles)
		FAILF("only %ld of %ld cycles ran", atomic_load(&st_cycles),
		      (long)n_threads * n_cycles);
	return atomic_load(&failed) ? 1 : 0;
}
