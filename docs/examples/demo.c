/* SPDX-License-Identifier: MIT */
/*
 * rsuring demonstration: an ordinary liburing program. It writes a test file
 * of pseudo-random blocks, copies it through an io_uring (reads and writes in
 * flight together, QD 32), verifies the copy, and says which library served
 * the io_uring calls.
 *
 * Usage: demo [size-in-MiB]   (default 64; files live in /tmp and are removed)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (128 * 1024)
#define QD 32

struct slot {
	char *buf;
	off_t off;
	size_t len;
	int writing;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int make_source(const char *path, off_t size)
{
	unsigned long long x = 0x9e3779b97f4a7c15ULL;
	char *buf = malloc(BLOCK);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);

	if (fd < 0 || !buf)
		return -1;
	for (off_t done = 0; done < size; done += BLOCK) {
		for (size_t i = 0; i < BLOCK; i += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(buf + i, &x, 8);
		}
		if (write(fd, buf, BLOCK) != BLOCK)
			return -1;
	}
	free(buf);
	return close(fd);
}

static void queue_read(struct io_uring *ring, struct slot *s, int fd, off_t off, off_t size)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	s->off = off;
	s->len = (size - off) < BLOCK ? (size_t)(size - off) : BLOCK;
	s->writing = 0;
	io_uring_prep_read(sqe, fd, s->buf, s->len, s->off);
	io_uring_sqe_set_data(sqe, s);
}

static int copy(struct io_uring *ring, int in, int out, off_t size)
{
	struct slot slots[QD];
	off_t next = 0;
	int inflight = 0;

	for (int i = 0; i < QD && next < size; i++, next += BLOCK) {
		slots[i].buf = malloc(BLOCK);
		queue_read(ring, &slots[i], in, next, size);
		inflight++;
	}
	while (inflight) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_submit_and_wait(ring, 1);

		if (ret < 0)
			return ret;
		ret = io_uring_peek_cqe(ring, &cqe);
		if (ret < 0)
			return ret;
		struct slot *s = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(ring, cqe);
		if (res < 0)
			return res;
		if ((size_t)res != s->len)
			return -EIO;
		if (!s->writing) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			s->writing = 1;
			io_uring_prep_write(sqe, out, s->buf, s->len, s->off);
			io_uring_sqe_set_data(sqe, s);
		} else if (next < size) {
			queue_read(ring, s, in, next, size);
			next += BLOCK;
		} else {
			free(s->buf);
			inflight--;
		}
	}
	return 0;
}

static int same_content(const char *a, const char *b)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "cmp -s %s %s", a, b);
	return system(cmd) == 0;
}

int main(int argc, char **argv)
{
	off_t size = (off_t)(argc > 1 ? atoi(argv[1]) : 64) << 20;
	char src[] = "/tmp/rsuring-demo-src-XXXXXX";
	char dst[] = "/tmp/rsuring-demo-dst-XXXXXX";
	struct io_uring ring;
	Dl_info info = { 0 };
	int in, out, ret;
	double t;

	if (size <= 0) {
		fprintf(stderr, "usage: %s [size-in-MiB]\n", argv[0]);
		return 2;
	}
	close(mkstemp(src));
	close(mkstemp(dst));
	if (make_source(src, size) < 0) {
		perror("make source");
		return 1;
	}
	in = open(src, O_RDONLY);
	out = open(dst, O_WRONLY | O_TRUNC);
	ret = io_uring_queue_init(2 * QD, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	t = now();
	ret = copy(&ring, in, out, size);
	t = now() - t;
	io_uring_queue_exit(&ring);
	close(in);
	close(out);
	int ok = ret == 0 && same_content(src, dst);

	unlink(src);
	unlink(dst);
	dladdr((void *)io_uring_queue_init, &info);
	printf("io_uring calls served by: %s (liburing API %d.%d)\n",
	       info.dli_fname ? info.dli_fname : "?", io_uring_major_version(),
	       io_uring_minor_version());
	if (!ok) {
		fprintf(stderr, "copy failed: %s\n", ret ? strerror(-ret) : "content differs");
		return 1;
	}
	printf("copied %lld MiB through the ring in %.3f s (%.0f MiB/s), content verified\n",
	       (long long)(size >> 20), t, (size >> 20) / t);
	return 0;
}
