/* SPDX-License-Identifier: MIT */
/*
 * Spaced single reads: a plain liburing program that reads 4 KiB at a time
 * from a file, one read in flight, with a pause between reads (the poller
 * goes idle or stays awake depending on the pause and sq_thread_idle).
 * Prints the median and 90th percentile of the submit-to-completion time.
 *
 *   spaced [-s] READS PAUSE_MS FILE
 *     -s   ask for IORING_SETUP_SQPOLL itself (the reference for transparent
 *          SQPOLL: what a program that wants a poller pays)
 *
 * Built against Debian's <liburing.h>; run linked to Debian's liburing, or
 * to rsuring with RSURING_SQPOLL=1 (see bench/transparent.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned flags = 0;
	static char buf[4096];
	long long *lat;
	int arg = 1, reads, pause_ms, fd, i, ret;

	if (argc > 1 && !strcmp(argv[1], "-s")) {
		flags = IORING_SETUP_SQPOLL;
		arg++;
	}
	if (argc - arg != 3) {
		fprintf(stderr, "usage: %s [-s] READS PAUSE_MS FILE\n", argv[0]);
		return 2;
	}
	reads = atoi(argv[arg]);
	pause_ms = atoi(argv[arg + 1]);
	fd = open(argv[arg + 2], O_RDONLY);
	if (fd < 0 || reads <= 0) {
		fprintf(stderr, "spaced: %s: %s\n", argv[arg + 2], strerror(errno));
		return 1;
	}
	lat = calloc((size_t)reads, sizeof(*lat));
	ret = io_uring_queue_init(8, &ring, flags);
	if (ret < 0 || !lat) {
		fprintf(stderr, "spaced: setup: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < reads; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		long long t0;

		io_uring_prep_read(sqe, fd, buf, sizeof(buf), (unsigned long long)i * sizeof(buf));
		t0 = now_ns();
		ret = io_uring_submit(&ring);
		if (ret == 1)
			ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret < 0 || cqe->res != (int)sizeof(buf)) {
			fprintf(stderr, "spaced: read %d: %d / %d\n", i, ret, ret < 0 ? 0 : cqe->res);
			return 1;
		}
		lat[i] = now_ns() - t0;
		io_uring_cqe_seen(&ring, cqe);
		usleep((useconds_t)pause_ms * 1000);
	}
	qsort(lat, (size_t)reads, sizeof(*lat), by_value);
	printf("reads=%d pause_ms=%d p50_us=%.1f p90_us=%.1f\n", reads, pause_ms,
	       lat[reads / 2] / 1000.0, lat[reads * 9 / 10] / 1000.0);
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}
