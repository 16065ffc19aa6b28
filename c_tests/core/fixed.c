/* SPDX-License-Identifier: MIT */
/*
 * Fixed buffers: io_uring_register_buffers + write_fixed/read_fixed with
 * buf_index, a bad buf_index (-EFAULT), unregister.
 * Fixed files: io_uring_register_files + IOSQE_FIXED_FILE, files_update
 * (replace / remove a slot: using it then fails with -EBADF),
 * register_files_sparse + filling a slot with files_update, unregister.
 */
#include "../rsuring_test.h"
#include <sys/uio.h>

#define NBUFS 4
#define BUFSZ 8192

/* What a 4096-byte read_fixed at offset 0 into buf, with buf_index, gives. */
static int read_fixed_res(struct io_uring *ring, int fd, void *buf,
			  int buf_index)
{
	struct io_uring_sqe *sqe = t_get_sqe(ring);

	io_uring_prep_read_fixed(sqe, fd, buf, 4096, 0, buf_index);
	t_submit_expect(ring, 1);
	return t_reap(ring).res;
}

static void test_fixed_buffers(struct io_uring *ring, int fd)
{
	struct iovec iov[NBUFS];
	struct t_cqe c;
	int i;

	T_STEP("register_buffers");
	for (i = 0; i < NBUFS; i++) {
		iov[i].iov_base = aligned_alloc(4096, BUFSZ);
		CHECK(iov[i].iov_base != NULL);
		iov[i].iov_len = BUFSZ;
	}
	CHECK_EQ(io_uring_register_buffers(ring, iov, NBUFS), 0);

	T_STEP("write_fixed from each registered buffer");
	for (i = 0; i < NBUFS; i++) {
		t_fill(iov[i].iov_base, BUFSZ, (size_t)i * BUFSZ, 21);
		t_queue(ring, (uint64_t)i, io_uring_prep_write_fixed, fd, iov[i].iov_base, BUFSZ,
			(uint64_t)i * BUFSZ, i);
	}
	t_submit_expect(ring, NBUFS);
	for (i = 0; i < NBUFS; i++) {
		c = t_reap(ring);
		CHECK_MSG(c.res == BUFSZ, "write_fixed %llu res=%d",
			  (unsigned long long)c.user_data, c.res);
	}
	{
		unsigned char *chk = malloc(NBUFS * BUFSZ);

		CHECK(chk != NULL);
		CHECK_EQ(pread(fd, chk, NBUFS * BUFSZ, 0), NBUFS * BUFSZ);
		CHECK_EQ(t_verify(chk, NBUFS * BUFSZ, 0, 21), -1);
		free(chk);
	}

	T_STEP("read_fixed into a sub-range of registered buffers");
	for (i = 0; i < NBUFS; i++)
		memset(iov[i].iov_base, 0, BUFSZ);
	for (i = 0; i < NBUFS; i++) {
		/* read block (NBUFS-1-i) into the middle of buffer i */
		t_queue(ring, (uint64_t)i, io_uring_prep_read_fixed, fd, (char *)iov[i].iov_base + 100,
			4000, (uint64_t)(NBUFS - 1 - i) * BUFSZ, i);
	}
	t_submit_expect(ring, NBUFS);
	for (i = 0; i < NBUFS; i++) {
		c = t_reap(ring);
		CHECK_MSG(c.res == 4000, "read_fixed %llu res=%d",
			  (unsigned long long)c.user_data, c.res);
	}
	for (i = 0; i < NBUFS; i++) {
		unsigned char *p = iov[i].iov_base;

		CHECK_EQ(t_verify(p + 100, 4000, (size_t)(NBUFS - 1 - i) * BUFSZ, 21), -1);
		CHECK_EQ(p[99], 0);
		CHECK_EQ(p[4100], 0);
	}

	T_STEP("read_fixed outside the registered range -> -EFAULT");
	/* buffer 0 address but index 1: range not inside buffer 1 */
	CHECK_EQ(read_fixed_res(ring, fd, iov[0].iov_base, 1), -EFAULT);

	T_STEP("read_fixed with out-of-range buf_index -> -EFAULT");
	CHECK_EQ(read_fixed_res(ring, fd, iov[0].iov_base, NBUFS + 3), -EFAULT);

	T_STEP("double register -> -EBUSY; unregister; unregister again -> -ENXIO");
	CHECK_EQ(io_uring_register_buffers(ring, iov, NBUFS), -EBUSY);
	CHECK_EQ(io_uring_unregister_buffers(ring), 0);
	CHECK_EQ(io_uring_unregister_buffers(ring), -ENXIO);

	T_STEP("read_fixed after unregister -> -EFAULT");
	CHECK_EQ(read_fixed_res(ring, fd, iov[0].iov_base, 0), -EFAULT);

	for (i = 0; i < NBUFS; i++)
		free(iov[i].iov_base);
}

static int read_slot(struct io_uring *ring, int slot, void *buf, unsigned len,
		     uint64_t off)
{
	struct io_uring_sqe *sqe = t_get_sqe(ring);
	struct t_cqe c;

	io_uring_prep_read(sqe, slot, buf, len, off);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	sqe->user_data = 0x5107;
	t_submit_expect(ring, 1);
	c = t_reap_expect(ring, 0x5107, T_ANY_RES);
	return c.res;
}

static void test_fixed_files(struct io_uring *ring)
{
	int fds[3], files[3], newfd, ret, i;
	unsigned char buf[512];

	T_STEP("register_files");
	for (i = 0; i < 3; i++)
		fds[i] = t_tmpfile(4096, 40 + (unsigned)i);
	files[0] = fds[0];
	files[1] = -1;		/* empty slot */
	files[2] = fds[2];
	CHECK_EQ(io_uring_register_files(ring, files, 3), 0);

	T_STEP("read via fixed file slots");
	CHECK_EQ(read_slot(ring, 0, buf, 512, 100), 512);
	CHECK_EQ(t_verify(buf, 512, 100, 40), -1);
	CHECK_EQ(read_slot(ring, 2, buf, 512, 0), 512);
	CHECK_EQ(t_verify(buf, 512, 0, 42), -1);

	T_STEP("empty slot -> -EBADF, out of range slot -> -EBADF");
	CHECK_EQ(read_slot(ring, 1, buf, 512, 0), -EBADF);
	CHECK_EQ(read_slot(ring, 7, buf, 512, 0), -EBADF);

	T_STEP("closing the original fd does not affect the registered file");
	newfd = dup(fds[0]);
	CHECK_SYS(newfd);
	close(fds[0]);
	fds[0] = newfd;
	CHECK_EQ(read_slot(ring, 0, buf, 512, 0), 512);
	CHECK_EQ(t_verify(buf, 512, 0, 40), -1);

	T_STEP("files_update: fill slot 1, replace slot 2");
	files[0] = fds[1];
	files[1] = fds[0];
	ret = io_uring_register_files_update(ring, 1, files, 2);
	CHECK_EQ(ret, 2);
	CHECK_EQ(read_slot(ring, 1, buf, 512, 0), 512);
	CHECK_EQ(t_verify(buf, 512, 0, 41), -1);
	CHECK_EQ(read_slot(ring, 2, buf, 512, 0), 512);
	CHECK_EQ(t_verify(buf, 512, 0, 40), -1);

	T_STEP("files_update: remove slot 0 with -1");
	files[0] = -1;
	CHECK_EQ(io_uring_register_files_update(ring, 0, files, 1), 1);
	CHECK_EQ(read_slot(ring, 0, buf, 512, 0), -EBADF);

	T_STEP("files_update with a bad fd -> -EBADF");
	files[0] = 9999;
	ret = io_uring_register_files_update(ring, 0, files, 1);
	CHECK_EQ(ret, -EBADF);

	T_STEP("double register -> -EBUSY; unregister; again -> -ENXIO");
	files[0] = fds[0];
	CHECK_EQ(io_uring_register_files(ring, files, 1), -EBUSY);
	CHECK_EQ(io_uring_unregister_files(ring), 0);
	CHECK_EQ(io_uring_unregister_files(ring), -ENXIO);
	CHECK_EQ(read_slot(ring, 0, buf, 512, 0), -EBADF);

	T_STEP("register_files_sparse + update one slot");
	CHECK_EQ(io_uring_register_files_sparse(ring, 64), 0);
	CHECK_EQ(read_slot(ring, 63, buf, 512, 0), -EBADF);
	files[0] = fds[2];
	CHECK_EQ(io_uring_register_files_update(ring, 63, files, 1), 1);
	CHECK_EQ(read_slot(ring, 63, buf, 512, 8), 512);
	CHECK_EQ(t_verify(buf, 512, 8, 42), -1);
	CHECK_EQ(read_slot(ring, 62, buf, 512, 0), -EBADF);

	T_STEP("update beyond the table -> -EINVAL");
	ret = io_uring_register_files_update(ring, 64, files, 1);
	CHECK_EQ(ret, -EINVAL);

	CHECK_EQ(io_uring_unregister_files(ring), 0);
	for (i = 0; i < 3; i++)
		close(fds[i]);
}

int main(void)
{
	struct io_uring ring;
	int fd;

	t_queue_init(&ring, 16, 0);
	fd = t_tmpfile(0, 0);
	test_fixed_buffers(&ring, fd);
	test_fixed_files(&ring);
	close(fd);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
