/* SPDX-License-Identifier: MIT */
/*
 * What the hot-path benchmark programs (interleave.c, reads.c, batch.c)
 * share: the headers every one includes (and the setup flags Debian's
 * liburing 2.3 header lacks), fatal errors, clocks, CPU time, argument
 * parsing, symbol look-up, the middle-half mean of the rounds' times. The
 * including program defines _GNU_SOURCE and BENCH_NAME (its name in error
 * messages) first; a helper a program does not use costs it nothing.
 */
#ifndef RSURING_BENCH_COMMON_H
#define RSURING_BENCH_COMMON_H

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <liburing.h>

#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

/* Not every program uses every helper. */
#define BENCH_HELPER static __attribute__((unused))

BENCH_HELPER void die(const char *what, const char *detail)
{
	fprintf(stderr, BENCH_NAME ": %s: %s\n", what, detail);
	exit(1);
}

BENCH_HELPER void die_ret(const char *what, int ret)
{
	die(what, strerror(ret < 0 ? -ret : EIO));
}

BENCH_HELPER uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * User and system CPU time, in ns, of the calling thread (RUSAGE_THREAD)
 * or of the whole process (RUSAGE_SELF).
 */
BENCH_HELPER void rusage_ns(int who, uint64_t *user, uint64_t *sys)
{
	struct rusage ru;

	getrusage(who, &ru);
	*user = (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u;
	*sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
}

/* User and system CPU time of the calling thread, in ns. */
BENCH_HELPER void thread_rusage_ns(uint64_t *user, uint64_t *sys)
{
	rusage_ns(RUSAGE_THREAD, user, sys);
}

/* A decimal number from 1 to max, or die naming what it was for. */
BENCH_HELPER unsigned long parse_ul(const char *s, const char *what, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !*s || v == 0 || v > max)
		die(what, s);
	return v;
}

BENCH_HELPER void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		die("dlsym", name);
	return p;
}

BENCH_HELPER int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The mean of the middle half of `n` values (sorts them). */
BENCH_HELPER double middle_mean(uint64_t *v, unsigned long n)
{
	unsigned long i, lo = n / 4, hi = n - n / 4;
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = lo; i < hi; i++)
		sum += (double)v[i];
	return hi > lo ? sum / (double)(hi - lo) : 0;
}

#endif
