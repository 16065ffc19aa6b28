/* SPDX-License-Identifier: MIT */
/*
 * read/write/readv/writev on a temp file with content checks:
 * IORING_OP_WRITE/READ at offsets, READV/WRITEV with several iovecs,
 * a short read at EOF, a read at/after EOF returning 0, offset -1 using
 * (and advancing) the file position, and several requests in flight at once.
 */
#include "../rsuring_test.h"
#include <sys/uio.h>

#define FSIZE (64 * 1024)
#define BS 4096

static void test_write_read_offsets(struct io_uring *ring, int fd)
{
	static unsigned char wbuf[FSIZE], rbuf[FSIZE];
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	int i, nblocks = FSIZE / BS;
	unsigned done = 0;

	T_STEP("write blocks at offsets (out of order, all in flight)");
	t_fill(wbuf, FSIZE, 0, 3);
	for (i = nblocks - 1; i >= 0; i--) {
		sqe = t_queue(ring, (uint64_t)i, io_uring_prep_write, fd, wbuf + i * BS, BS, (uint64_t)i * BS);
	}
	t_submit_expect(ring, nblocks);
	for (i = 0; i < nblocks; i++) {
		c = t_reap(ring);
		CHECK_MSG(c.res == BS, "write %llu res=%d", (unsigned long long)c.user_data, c.res);
		CHECK(c.user_data < (uint64_t)nblocks);
		CHECK_MSG(!(done & (1u << c.user_data)), "dup completion");
		done |= 1u << c.user_data;
	}
	CHECK_EQ(done, (1u << nblocks) - 1);

	T_STEP("verify written content with pread");
	CHECK_EQ(pread(fd, rbuf, FSIZE, 0), FSIZE);
	CHECK_EQ(t_verify(rbuf, FSIZE, 0, 3), -1);

	T_STEP("read blocks at offsets");
	memset(rbuf, 0, sizeof(rbuf));
	for (i = 0; i < nblocks; i++) {
		sqe = t_queue(ring, 1000 + (uint64_t)i, io_uring_prep_read, fd, rbuf + i * BS, BS, (uint64_t)i * BS);
	}
	t_submit_expect(ring, nblocks);
	for (i = 0; i < nblocks; i++) {
		c = t_reap(ring);
		CHECK_MSG(c.res == BS, "read %llu res=%d", (unsigned long long)c.user_data, c.res);
	}
	CHECK_EQ(t_verify(rbuf, FSIZE, 0, 3), -1);

	T_STEP("unaligned read in the middle");
	memset(rbuf, 0, 1000);
	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, fd, rbuf, 1000, 12345);
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.res, 1000);
	CHECK_EQ(t_verify(rbuf, 1000, 12345, 3), -1);
}

static void test_short_read_eof(struct io_uring *ring, int fd)
{
	static unsigned char rbuf[BS];
	struct io_uring_sqe *sqe;
	struct t_cqe c;

	T_STEP("short read at EOF");
	t_submit1(ring, 7, io_uring_prep_read, fd, rbuf, BS, FSIZE - 100);
	c = t_reap_expect(ring, 7, 100);
	CHECK_EQ(t_verify(rbuf, 100, FSIZE - 100, 3), -1);

	T_STEP("read at EOF returns 0");
	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, fd, rbuf, BS, FSIZE);
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.res, 0);

	T_STEP("read past EOF returns 0");
	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, fd, rbuf, BS, FSIZE * 4);
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.res, 0);
}

static void test_vectored(struct io_uring *ring, int fd)
{
	static unsigned char a[100], b[3000], d[5000], r1[2000], r2[6100];
	struct iovec wv[3], rv[2];
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	unsigned char *all;
	const size_t total = sizeof(a) + sizeof(b) + sizeof(d);
	const uint64_t off = 20000;

	T_STEP("writev 3 iovecs");
	t_fill(a, sizeof(a), 0, 9);
	t_fill(b, sizeof(b), sizeof(a), 9);
	t_fill(d, sizeof(d), sizeof(a) + sizeof(b), 9);
	wv[0].iov_base = a; wv[0].iov_len = sizeof(a);
	wv[1].iov_base = b; wv[1].iov_len = sizeof(b);
	wv[2].iov_base = d; wv[2].iov_len = sizeof(d);
	t_submit1(ring, 11, io_uring_prep_writev, fd, wv, 3, off);
	c = t_reap_expect(ring, 11, (int)total);

	all = malloc(total);
	CHECK(all != NULL);
	CHECK_EQ(pread(fd, all, total, (off_t)off), (ssize_t)total);
	CHECK_EQ(t_verify(all, total, 0, 9), -1);
	free(all);

	T_STEP("readv 2 iovecs spanning the written region");
	rv[0].iov_base = r1; rv[0].iov_len = sizeof(r1);
	rv[1].iov_base = r2; rv[1].iov_len = sizeof(r2);
	t_submit1(ring, 12, io_uring_prep_readv, fd, rv, 2, off);
	c = t_reap_expect(ring, 12, (int)(sizeof(r1) + sizeof(r2)));
	CHECK_EQ(t_verify(r1, sizeof(r1), 0, 9), -1);
	CHECK_EQ(t_verify(r2, total - sizeof(r1), sizeof(r1), 9), -1);

	T_STEP("readv at EOF short");
	rv[0].iov_len = sizeof(r1);
	rv[1].iov_len = sizeof(r2);
	sqe = t_get_sqe(ring);
	io_uring_prep_readv(sqe, fd, rv, 2, FSIZE - 2500);
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.res, 2500);
}

static void test_file_position(struct io_uring *ring)
{
	unsigned char buf[300];
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	int fd = t_tmpfile(1000, 5);
	off_t pos;

	T_STEP("offset -1 uses and advances file position");
	CHECK_EQ(lseek(fd, 200, SEEK_SET), 200);
	/* Two reads in a row: from 200, then from where the first stopped. */
	for (pos = 200; pos <= 500; pos += 300) {
		sqe = t_get_sqe(ring);
		io_uring_prep_read(sqe, fd, buf, 300, (uint64_t)-1);
		t_submit_expect(ring, 1);
		c = t_reap(ring);
		CHECK_EQ(c.res, 300);
		CHECK_EQ(t_verify(buf, 300, (size_t)pos, 5), -1);
		CHECK_EQ(lseek(fd, 0, SEEK_CUR), pos + 300);
	}
	close(fd);
}

static void test_bad_fd(struct io_uring *ring)
{
	char buf[16];

	T_STEP("read on bad fd gives -EBADF in cqe");
	t_submit1(ring, 99, io_uring_prep_read, 12345, buf, sizeof(buf), 0);
	t_reap_expect(ring, 99, -EBADF);
}

int main(void)
{
	/* In this order, on the one file. */
	static void (*const file_tests[])(struct io_uring *, int) = {
		test_write_read_offsets, test_short_read_eof, test_vectored,
	};
	struct io_uring ring;
	size_t i;
	int fd;

	t_queue_init(&ring, 32, 0);
	fd = t_tmpfile(0, 0);
	for (i = 0; i < sizeof(file_tests) / sizeof(file_tests[0]); i++)
		file_tests[i](&ring, fd);
	test_file_position(&ring);
	test_bad_fd(&ring);
	close(fd);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
