/* SPDX-License-Identifier: MIT */
/*
 * Helpers the hot-path benchmark programs (interleave.c, batch.c) share:
 * fatal errors, clocks, per-thread CPU time, argument parsing, symbol
 * look-up, the middle-half mean of the rounds' times. The including program defines BENCH_NAME (its name in error
 * messages) and includes the system headers this needs first (stdio,
 * stdlib, string, errno, time, sys/resource, dlfcn).
 */
#ifndef RSURING_BENCH_COMMON_H
#define RSURING_BENCH_COMMON_H

static void die(const char *what, const char *detail)
{
	fprintf(stderr, BENCH_NAME ": %s: %s\n", what, detail);
	exit(1);
}

static void die_ret(const char *what, int ret)
{
	die(what, strerror(ret < 0 ? -ret : EIO));
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* User and system CPU time of the calling thread, in ns. */
static void thread_rusage_ns(uint64_t *user, uint64_t *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*user = (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u;
	*sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
}

/* A decimal number from 1 to max, or die naming what it was for. */
static unsigned long parse_ul(const char *s, const char *what, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !*s || v == 0 || v > max)
		die(what, s);
	return v;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		die("dlsym", name);
	return p;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The mean of the middle half of `n` values (sorts them). */
static double middle_mean(uint64_t *v, unsigned long n)
{
	unsigned long i, lo = n / 4, hi = n - n / 4;
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = lo; i < hi; i++)
		sum += (double)v[i];
	return hi > lo ? sum / (double)(hi - lo) : 0;
}

#endif
