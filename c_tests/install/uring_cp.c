/* SPDX-License-Identifier: MIT */
/*
 * uring_cp SRC DST: copies a file through an io_uring with reads and writes
 * in flight together, using liburing's API only (the kind of program
 * liburing's examples/io_uring-cp.c is). The install check builds it
 * against an installed rsuring, dynamically and with -static.
 *
 * After the copy it prints one "library: PATH" line per io_uring library
 * file mapped into the process (from /proc/self/maps), so the check can
 * tell which library served it; a static build prints none.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

#define QUEUE_DEPTH 16
#define CHUNK_SIZE (64 * 1024)

/* One block on its way: read into buf, then written from it. */
struct chunk {
	off_t offset;
	size_t len;  /* bytes of this block */
	size_t done; /* bytes read (or written) so far */
	int writing;
	char buf[CHUNK_SIZE];
};

struct copy {
	struct io_uring ring;
	int in, out;
	off_t size, next; /* file size, next offset to read */
	unsigned inflight;
};

static void queue_io(struct copy *c, struct chunk *ch)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&c->ring);

	/* At most QUEUE_DEPTH chunks exist and each holds one SQE. */
	if (ch->writing)
		io_uring_prep_write(sqe, c->out, ch->buf + ch->done, ch->len - ch->done,
				    ch->offset + ch->done);
	else
		io_uring_prep_read(sqe, c->in, ch->buf + ch->done, ch->len - ch->done,
				   ch->offset + ch->done);
	io_uring_sqe_set_data(sqe, ch);
}

/* Gives a free chunk the next block to read; false when none is left. */
static int start_block(struct copy *c, struct chunk *ch)
{
	off_t left = c->size - c->next;

	if (left <= 0)
		return 0;
	ch->offset = c->next;
	ch->len = left < CHUNK_SIZE ? (size_t)left : CHUNK_SIZE;
	ch->done = 0;
	ch->writing = 0;
	c->next += ch->len;
	queue_io(c, ch);
	c->inflight++;
	return 1;
}

/* Handles one completion; returns 0 or a negative errno. */
static int complete(struct copy *c, struct chunk *ch, int res)
{
	if (res < 0 && res != -EAGAIN && res != -EINTR)
		return res;
	if (res == 0 && !ch->writing)
		return -EIO; /* the file shrank under us */
	if (res > 0)
		ch->done += res;
	if (ch->done < ch->len) { /* short transfer: the rest again */
		queue_io(c, ch);
		return 0;
	}
	c->inflight--;
	if (!ch->writing) {
		ch->writing = 1;
		ch->done = 0;
		queue_io(c, ch);
		c->inflight++;
		return 0;
	}
	start_block(c, ch);
	return 0;
}

static int copy_file(struct copy *c)
{
	static struct chunk chunks[QUEUE_DEPTH];
	int ret;

	for (int i = 0; i < QUEUE_DEPTH && start_block(c, &chunks[i]); i++)
		;
	while (c->inflight) {
		struct io_uring_cqe *cqe;

		ret = io_uring_submit_and_wait(&c->ring, 1);
		if (ret < 0 && ret != -EINTR)
			return ret;
		ret = io_uring_wait_cqe(&c->ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			return ret;
		ret = complete(c, io_uring_cqe_get_data(cqe), cqe->res);
		io_uring_cqe_seen(&c->ring, cqe);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Prints each mapped file whose name contains "uring" once. */
static void print_libraries(void)
{
	char line[4096], last[4096] = "";
	FILE *maps = fopen("/proc/self/maps", "r");

	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');

		if (!path || !strstr(path, "uring"))
			continue;
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(path, last)) {
			printf("library: %s\n", path);
			snprintf(last, sizeof(last), "%s", path);
		}
	}
	fclose(maps);
}

int main(int argc, char **argv)
{
	struct copy c = { 0 };
	struct stat st;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SRC DST\n", argv[0]);
		return 2;
	}
	c.in = open(argv[1], O_RDONLY);
	c.out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (c.in < 0 || c.out < 0 || fstat(c.in, &st) < 0) {
		perror("uring_cp: open");
		return 1;
	}
	c.size = st.st_size;
	ret = io_uring_queue_init(QUEUE_DEPTH, &c.ring, 0);
	if (ret < 0) {
		fprintf(stderr, "uring_cp: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	ret = copy_file(&c);
	io_uring_queue_exit(&c.ring);
	if (ret < 0) {
		fprintf(stderr, "uring_cp: %s\n", strerror(-ret));
		return 1;
	}
	if (close(c.out) < 0) {
		perror("uring_cp: close");
		return 1;
	}
	printf("copied %lld bytes\n", (long long)c.size);
	print_libraries();
	return 0;
}
