/* SPDX-License-Identifier: MIT */
/*
 * Provided buffers (API available in liburing 2.3):
 *  - ring-mapped buffers: mmap'ed io_uring_buf_ring registered with
 *    io_uring_register_buf_ring, filled with io_uring_buf_ring_init / _add /
 *    _advance (io_uring_buf_ring_mask); reads and pipe reads with
 *    IOSQE_BUFFER_SELECT pick buffers in ring order, CQE carries
 *    IORING_CQE_F_BUFFER and the buffer id, data lands in that buffer;
 *    running out -> -ENOBUFS; recycling with io_uring_buf_ring_cq_advance;
 *    a read with a missing group -> -ENOBUFS; unregister_buf_ring, twice
 *    -> -ENOENT; registering a non-power-of-2 size -> -EINVAL;
 *  - classic provided buffers: io_uring_prep_provide_buffers /
 *    io_uring_prep_remove_buffers.
 */
#include "../rsuring_test.h"
#include <sys/mman.h>

#define NBUFS 8
#define BSZ 1024
#define BGID 7

static unsigned char bufs[NBUFS][BSZ];

static struct t_cqe read_select(struct io_uring *ring, int fd, unsigned len,
				uint64_t off, int bgid)
{
	struct io_uring_sqe *sqe = t_get_sqe(ring);

	io_uring_prep_read(sqe, fd, NULL, len, off);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = (unsigned short)bgid;
	sqe->user_data = 0xb0f;
	t_submit_expect(ring, 1);
	return t_reap(ring);
}

/* Registers br as a ring of `entries` buffers of group `bgid`. */
static int register_ring(struct io_uring *ring, struct io_uring_buf_ring *br,
			 unsigned int entries, unsigned short bgid)
{
	struct io_uring_buf_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)br;
	reg.ring_entries = entries;
	reg.bgid = bgid;
	return io_uring_register_buf_ring(ring, &reg, 0);
}

/*
 * Maps a ring of `entries` buffers (ring_size bytes) and registers it as
 * group `bgid`; returns what io_uring_register_buf_ring returned.
 */
static int map_buf_ring(struct io_uring *ring, size_t ring_size,
			unsigned int entries, unsigned short bgid,
			struct io_uring_buf_ring **br)
{
	*br = mmap(NULL, ring_size, PROT_READ | PROT_WRITE,
		   MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	CHECK(*br != MAP_FAILED);
	return register_ring(ring, *br, entries, bgid);
}

static void test_buf_ring(struct io_uring *ring)
{
	struct io_uring_buf_ring *br;
	size_t ring_size = NBUFS * sizeof(struct io_uring_buf);
	int fd, i, ret, mask = io_uring_buf_ring_mask(NBUFS);
	struct t_cqe c;

	fd = t_tmpfile(NBUFS * BSZ * 2, 31);

	T_STEP("register_buf_ring");
	ret = map_buf_ring(ring, ring_size, NBUFS, BGID, &br);
	if (ret == -EINVAL)
		T_SKIP("buf rings not supported");
	CHECK_EQ(ret, 0);
	io_uring_buf_ring_init(br);
	for (i = 0; i < NBUFS; i++)
		io_uring_buf_ring_add(br, bufs[i], BSZ, (unsigned short)(100 + i), mask, i);
	io_uring_buf_ring_advance(br, NBUFS);

	T_STEP("reads consume buffers in ring order");
	for (i = 0; i < NBUFS; i++) {
		unsigned bid;

		c = read_select(ring, fd, 500, (uint64_t)i * 500, BGID);
		CHECK_MSG(c.res == 500, "read %d res=%d", i, c.res);
		CHECK(c.flags & IORING_CQE_F_BUFFER);
		bid = c.flags >> IORING_CQE_BUFFER_SHIFT;
		CHECK_EQ(bid, 100 + i);
		CHECK_EQ(t_verify(bufs[bid - 100], 500, (size_t)i * 500, 31), -1);
	}

	T_STEP("no buffers left -> -ENOBUFS");
	c = read_select(ring, fd, 100, 0, BGID);
	CHECK_EQ(c.res, -ENOBUFS);
	CHECK(!(c.flags & IORING_CQE_F_BUFFER));

	T_STEP("recycle buffers with buf_ring_cq_advance");
	for (i = 0; i < 3; i++)
		io_uring_buf_ring_add(br, bufs[i], BSZ, (unsigned short)(100 + i), mask, i);
	{
		struct io_uring_sqe *sqe = t_get_sqe(ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_nop(sqe);
		t_submit_expect(ring, 1);
		CHECK_OK(io_uring_wait_cqe(ring, &cqe));
		io_uring_buf_ring_advance(br, 3);
		io_uring_cq_advance(ring, 1);
	}
	for (i = 0; i < 3; i++) {
		c = read_select(ring, fd, BSZ, 4096, BGID);
		CHECK_EQ(c.res, BSZ);
		CHECK_EQ(c.flags >> IORING_CQE_BUFFER_SHIFT, 100 + i);
		CHECK_EQ(t_verify(bufs[i], BSZ, 4096, 31), -1);
	}
	c = read_select(ring, fd, 10, 0, BGID);
	CHECK_EQ(c.res, -ENOBUFS);

	T_STEP("read with an unknown buffer group -> -ENOBUFS");
	c = read_select(ring, fd, 100, 0, BGID + 1);
	CHECK_EQ(c.res, -ENOBUFS);

	T_STEP("unregister_buf_ring");
	CHECK_EQ(io_uring_unregister_buf_ring(ring, BGID), 0);
	/* 6.18: -ENOENT; older kernels said -EINVAL */
	ret = io_uring_unregister_buf_ring(ring, BGID);
	CHECK_MSG(ret == -ENOENT || ret == -EINVAL, "second unregister: %d", ret);

	T_STEP("non power of 2 ring entries -> -EINVAL");
	CHECK_EQ(register_ring(ring, br, 6, BGID), -EINVAL);
	munmap(br, ring_size);
	close(fd);
}

static void test_buf_ring_cq_advance(struct io_uring *ring)
{
	struct io_uring_buf_ring *br;
	size_t ring_size = 4 * sizeof(struct io_uring_buf);
	int p[2], i, round, mask = io_uring_buf_ring_mask(4);

	T_STEP("pipe reads, recycle via buf_ring_cq_advance");
	CHECK_EQ(map_buf_ring(ring, ring_size, 4, 3, &br), 0);
	io_uring_buf_ring_init(br);
	for (i = 0; i < 4; i++)
		io_uring_buf_ring_add(br, bufs[i], 64, (unsigned short)i, mask, i);
	io_uring_buf_ring_advance(br, 4);

	t_pipe(p);
	/* 20 rounds over a ring of 4: the buffer ring tail wraps */
	for (round = 0; round < 20; round++) {
		struct io_uring_sqe *sqe = t_get_sqe(ring);
		struct io_uring_cqe *cqe;
		char msg[32];
		unsigned bid;
		int len = snprintf(msg, sizeof(msg), "message %d", round);

		io_uring_prep_read(sqe, p[0], NULL, 64, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = 3;
		sqe->user_data = (uint64_t)round;
		t_submit_expect(ring, 1);
		CHECK_EQ(write(p[1], msg, (size_t)len), len);
		CHECK_OK(io_uring_wait_cqe(ring, &cqe));
		CHECK_EQ(cqe->user_data, round);
		CHECK_EQ(cqe->res, len);
		CHECK(cqe->flags & IORING_CQE_F_BUFFER);
		bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
		CHECK_EQ(bid, round % 4);
		CHECK(memcmp(bufs[bid], msg, (size_t)len) == 0);
		/* give the buffer back and consume the CQE in one go */
		io_uring_buf_ring_add(br, bufs[bid], 64, (unsigned short)bid, mask, 0);
		io_uring_buf_ring_cq_advance(ring, br, 1);
	}
	t_expect_no_cqe(ring);
	CHECK_EQ(io_uring_unregister_buf_ring(ring, 3), 0);
	munmap(br, ring_size);
	close(p[0]);
	close(p[1]);
}

static void test_provide_buffers(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	int fd, i, seen = 0;

	fd = t_tmpfile(8192, 44);

	T_STEP("provide_buffers");
	sqe = t_get_sqe(ring);
	io_uring_prep_provide_buffers(sqe, bufs, BSZ, 4, 9, 0);
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_MSG(c.res == 0 || c.res == 4, "provide_buffers res=%d", c.res);

	for (i = 0; i < 4; i++) {
		unsigned bid;

		c = read_select(ring, fd, 256, (uint64_t)i * 256, 9);
		CHECK_EQ(c.res, 256);
		CHECK(c.flags & IORING_CQE_F_BUFFER);
		bid = c.flags >> IORING_CQE_BUFFER_SHIFT;
		CHECK(bid < 4);
		CHECK(!(seen & (1 << bid)));
		seen |= 1 << bid;
		CHECK_EQ(t_verify(bufs[bid], 256, (size_t)i * 256, 44), -1);
	}
	c = read_select(ring, fd, 256, 0, 9);
	CHECK_EQ(c.res, -ENOBUFS);

	T_STEP("remove_buffers");
	sqe = t_get_sqe(ring);
	io_uring_prep_provide_buffers(sqe, bufs, BSZ, 2, 9, 0);
	t_submit_expect(ring, 1);
	(void)t_reap(ring);
	sqe = t_get_sqe(ring);
	io_uring_prep_remove_buffers(sqe, 5, 9);
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.res, 2);
	c = read_select(ring, fd, 256, 0, 9);
	CHECK_EQ(c.res, -ENOBUFS);
	close(fd);
}

int main(void)
{
	struct io_uring ring;

	t_queue_init(&ring, 8, 0);
	test_buf_ring(&ring);
	test_buf_ring_cq_advance(&ring);
	test_provide_buffers(&ring);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
