/* SPDX-License-Identifier: MIT */
/*
 * CPU cost per submit with one ring per thread (issue 21): T threads, each
 * with its own ring set up plain, each making N NOP round trips
 * (io_uring_submit + io_uring_wait_cqe + io_uring_cqe_seen). Built against
 * Debian's <liburing.h>; run on rsuring with or without RSURING_SQPOLL=1.
 *
 *   threads T N
 *
 * Prints one line:
 *   threads=T ops=T*N wall_s=S app_cpu_ns_per_op=X proc_cpu_ns_per_op=Y
 * app_cpu: the submitting threads' CPU time (CLOCK_THREAD_CPUTIME_ID);
 * proc_cpu: the whole process's (getrusage: SQ poll threads included).
 */
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static unsigned n_ops;
static pthread_barrier_t start;

static double ts_s(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	double *cpu = arg;
	struct io_uring ring;
	struct timespec t0, t1;
	unsigned i;
	int ret = io_uring_queue_init(8, &ring, 0);

	if (ret < 0) {
		fprintf(stderr, "queue_init: %s\n", strerror(-ret));
		exit(1);
	}
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&start);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (i = 0; i < n_ops; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_nop(sqe);
		ret = io_uring_submit(&ring);
		if (ret != 1) {
			fprintf(stderr, "submit = %d\n", ret);
			exit(1);
		}
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret < 0 || cqe->res != 0) {
			fprintf(stderr, "wait = %d\n", ret);
			exit(1);
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	*cpu = ts_s(&t1) - ts_s(&t0);
	pthread_barrier_wait(&start);
	io_uring_queue_exit(&ring);
	return NULL;
}

static double rusage_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	unsigned t, threads;
	pthread_t tid[64];
	double cpu[64], app = 0, p0, p1;
	struct timespec w0, w1;

	if (argc != 3 || (threads = (unsigned)atoi(argv[1])) < 1 || threads > 64) {
		fprintf(stderr, "usage: %s THREADS(1-64) OPS_PER_THREAD\n", argv[0]);
		return 2;
	}
	n_ops = (unsigned)atoi(argv[2]);
	pthread_barrier_init(&start, NULL, threads + 1);
	for (t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker, &cpu[t]);
	pthread_barrier_wait(&start); /* every ring is set up */
	p0 = rusage_s();
	clock_gettime(CLOCK_MONOTONIC, &w0);
	pthread_barrier_wait(&start); /* go */
	pthread_barrier_wait(&start); /* every thread is done */
	clock_gettime(CLOCK_MONOTONIC, &w1);
	p1 = rusage_s();
	for (t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		app += cpu[t];
	}
	printf("threads=%u ops=%u wall_s=%.3f app_cpu_ns_per_op=%.1f proc_cpu_ns_per_op=%.1f\n",
	       threads, threads * n_ops, ts_s(&w1) - ts_s(&w0), app * 1e9 / (threads * n_ops),
	       (p1 - p0) * 1e9 / (threads * n_ops));
	return 0;
}
