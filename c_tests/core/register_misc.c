/* SPDX-License-Identifier: MIT */
/*
 * Misc registration calls:
 *  - io_uring_register_iowq_aff / unregister_iowq_aff (an IOSQE_ASYNC nop
 *    still completes while the io-wq is pinned to one CPU);
 *  - io_uring_register_iowq_max_workers: query (0,0) returns the current
 *    values, set returns the old ones, query again reads back the new ones;
 *  - io_uring_register_personality: usable via sqe->personality,
 *    unregister, then the id is rejected (-EINVAL), unregistering twice
 *    -> -EINVAL;
 *  - io_uring_register_file_alloc_range: direct socket allocation lands
 *    inside the range, and the range exhausted -> -ENFILE;
 *  - io_uring_register_buffers_sparse + register_buffers_update_tag, and
 *    register_buffers_tags: a replaced/unregistered tagged buffer posts a
 *    CQE with user_data == tag;
 *  - io_uring_register_files_tags + register_files_update_tag: same for files.
 */
#include "../rsuring_test.h"
#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>

static void test_iowq_aff(struct io_uring *ring)
{
	cpu_set_t set;
	struct io_uring_sqe *sqe;
	int ret, cpu;

	T_STEP("register_iowq_aff");
	CHECK_SYS(sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			break;
	CHECK(cpu < CPU_SETSIZE);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = io_uring_register_iowq_aff(ring, sizeof(set), &set);
	if (ret == -EINVAL) {
		fprintf(stderr, "note: iowq_aff not supported\n");
		return;
	}
	CHECK_EQ(ret, 0);

	sqe = t_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = 1;
	t_submit_expect(ring, 1);
	t_reap_expect(ring, 1, 0);

	T_STEP("unregister_iowq_aff");
	CHECK_EQ(io_uring_unregister_iowq_aff(ring), 0);

	T_STEP("unregister_iowq_aff twice is harmless");
	CHECK_EQ(io_uring_unregister_iowq_aff(ring), 0);
}

static void test_max_workers(struct io_uring *ring)
{
	unsigned vals[2];
	int ret;

	T_STEP("iowq_max_workers query");
	vals[0] = vals[1] = 0;
	ret = io_uring_register_iowq_max_workers(ring, vals);
	if (ret == -EINVAL) {
		fprintf(stderr, "note: iowq_max_workers not supported\n");
		return;
	}
	CHECK_EQ(ret, 0);
	CHECK_MSG(vals[0] > 0 && vals[1] > 0, "current limits %u %u", vals[0], vals[1]);

	T_STEP("iowq_max_workers set returns old values");
	{
		unsigned old0 = vals[0], old1 = vals[1];

		vals[0] = 3;
		vals[1] = 5;
		CHECK_EQ(io_uring_register_iowq_max_workers(ring, vals), 0);
		CHECK_EQ(vals[0], old0);
		CHECK_EQ(vals[1], old1);
	}
	vals[0] = vals[1] = 0;
	CHECK_EQ(io_uring_register_iowq_max_workers(ring, vals), 0);
	CHECK_EQ(vals[0], 3);
	CHECK_EQ(vals[1], 5);
}

static void test_personality(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;
	int id;

	T_STEP("register_personality");
	id = io_uring_register_personality(ring);
	CHECK_MSG(id > 0, "register_personality returned %d", id);

	sqe = t_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->personality = (unsigned short)id;
	sqe->user_data = 2;
	t_submit_expect(ring, 1);
	t_reap_expect(ring, 2, 0);

	T_STEP("unregister_personality");
	CHECK_EQ(io_uring_unregister_personality(ring, id), 0);
	sqe = t_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->personality = (unsigned short)id;
	sqe->user_data = 3;
	t_submit_expect(ring, 1);
	t_reap_expect(ring, 3, -EINVAL);
	CHECK_EQ(io_uring_unregister_personality(ring, id), -EINVAL);
}

static void test_file_alloc_range(struct io_uring *ring)
{
	struct t_cqe c;
	int i, ret;
	unsigned used = 0;

	T_STEP("file_alloc_range");
	CHECK_EQ(io_uring_register_files_sparse(ring, 16), 0);
	ret = io_uring_register_file_alloc_range(ring, 4, 3);
	if (ret == -EINVAL) {
		fprintf(stderr, "note: file_alloc_range not supported\n");
		CHECK_EQ(io_uring_unregister_files(ring), 0);
		return;
	}
	CHECK_EQ(ret, 0);

	for (i = 0; i < 4; i++) {
		t_submit1(ring, 10 + (uint64_t)i, io_uring_prep_socket_direct_alloc, AF_INET, SOCK_STREAM, 0, 0);
		c = t_reap_expect(ring, 10 + (uint64_t)i, T_ANY_RES);
		if (i == 0 && c.res == -EINVAL) {
			fprintf(stderr, "note: socket direct alloc unsupported\n");
			break;
		}
		if (i < 3) {
			CHECK_MSG(c.res >= 4 && c.res < 7,
				  "allocated slot %d outside [4,7)", c.res);
			CHECK_MSG(!(used & (1u << c.res)), "slot %d twice", c.res);
			used |= 1u << c.res;
		} else {
			CHECK_EQ(c.res, -ENFILE);
		}
	}

	T_STEP("bad alloc range -> -EINVAL");
	CHECK_EQ(io_uring_register_file_alloc_range(ring, 10, 10), -EINVAL);
	CHECK_EQ(io_uring_unregister_files(ring), 0);
}

/* wait for a CQE with the given user_data (a resource tag) */
static void expect_tag_cqe(struct io_uring *ring, uint64_t tag)
{
	struct __kernel_timespec ts = { .tv_sec = 2, .tv_nsec = 0 };
	struct io_uring_cqe *cqe;
	int ret;

	ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
	CHECK_MSG(ret == 0, "no tag CQE for %llu: %d", (unsigned long long)tag, ret);
	CHECK_EQ(cqe->user_data, tag);
	CHECK_EQ(cqe->res, 0);
	io_uring_cqe_seen(ring, cqe);
}

static int read_fixed_buf(struct io_uring *ring, int fd, void *buf, unsigned len,
			  int idx)
{
	struct io_uring_sqe *sqe = t_get_sqe(ring);
	struct t_cqe c;

	io_uring_prep_read_fixed(sqe, fd, buf, len, 0, idx);
	sqe->user_data = 0x77;
	t_submit_expect(ring, 1);
	c = t_reap_expect(ring, 0x77, T_ANY_RES);
	return c.res;
}

static void test_buffer_tags(struct io_uring *ring)
{
	static char b0[4096], b1[4096], b2[4096];
	struct iovec iov[2];
	__u64 tags[2];
	int fd, ret;

	fd = t_tmpfile(4096, 88);

	T_STEP("register_buffers_sparse");
	ret = io_uring_register_buffers_sparse(ring, 4);
	CHECK_EQ(ret, 0);
	CHECK_EQ(read_fixed_buf(ring, fd, b0, 100, 0), -EFAULT);

	T_STEP("register_buffers_update_tag fills sparse slots");
	iov[0].iov_base = b0;
	iov[0].iov_len = sizeof(b0);
	iov[1].iov_base = b1;
	iov[1].iov_len = sizeof(b1);
	tags[0] = 0x1000;
	tags[1] = 0x1001;
	ret = io_uring_register_buffers_update_tag(ring, 1, iov, tags, 2);
	CHECK_EQ(ret, 2);
	CHECK_EQ(read_fixed_buf(ring, fd, b0, 100, 1), 100);
	CHECK_EQ(t_verify(b0, 100, 0, 88), -1);
	CHECK_EQ(read_fixed_buf(ring, fd, b1, 200, 2), 200);
	CHECK_EQ(t_verify(b1, 200, 0, 88), -1);
	t_expect_no_cqe(ring);

	T_STEP("replacing a tagged buffer posts its tag");
	iov[0].iov_base = b2;
	iov[0].iov_len = sizeof(b2);
	tags[0] = 0x1002;
	CHECK_EQ(io_uring_register_buffers_update_tag(ring, 1, iov, tags, 1), 1);
	expect_tag_cqe(ring, 0x1000);
	CHECK_EQ(read_fixed_buf(ring, fd, b2, 300, 1), 300);

	T_STEP("unregister posts remaining tags");
	CHECK_EQ(io_uring_unregister_buffers(ring), 0);
	t_reap_each(ring, NULL, { 0x1001, T_ANY_RES }, { 0x1002, T_ANY_RES });

	T_STEP("register_buffers_tags");
	iov[0].iov_base = b0;
	iov[1].iov_base = b1;
	tags[0] = 0;		/* untagged: no CQE */
	tags[1] = 0x2001;
	CHECK_EQ(io_uring_register_buffers_tags(ring, iov, tags, 2), 0);
	CHECK_EQ(read_fixed_buf(ring, fd, b1, 64, 1), 64);
	CHECK_EQ(io_uring_unregister_buffers(ring), 0);
	expect_tag_cqe(ring, 0x2001);
	t_msleep(5);
	t_expect_no_cqe(ring);
	close(fd);
}

static void test_file_tags(struct io_uring *ring)
{
	int fds[3], files[2], i;
	__u64 tags[2];
	unsigned char buf[64];
	struct io_uring_sqe *sqe;

	for (i = 0; i < 3; i++)
		fds[i] = t_tmpfile(1024, 50 + (unsigned)i);

	T_STEP("register_files_tags");
	files[0] = fds[0];
	files[1] = fds[1];
	tags[0] = 0x3000;
	tags[1] = 0x3001;
	CHECK_EQ(io_uring_register_files_tags(ring, files, tags, 2), 0);

	T_STEP("register_files_update_tag replaces slot 0");
	files[0] = fds[2];
	tags[0] = 0x3002;
	CHECK_EQ(io_uring_register_files_update_tag(ring, 0, files, tags, 1), 1);
	expect_tag_cqe(ring, 0x3000);

	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = 5;
	t_submit_expect(ring, 1);
	t_reap_expect(ring, 5, 64);
	CHECK_EQ(t_verify(buf, 64, 0, 52), -1);

	T_STEP("unregister_files posts remaining file tags");
	CHECK_EQ(io_uring_unregister_files(ring), 0);
	t_reap_each(ring, NULL, { 0x3001, T_ANY_RES }, { 0x3002, T_ANY_RES });
	for (i = 0; i < 3; i++)
		close(fds[i]);
}

int main(void)
{
	struct io_uring ring;

	t_queue_init(&ring, 8, 0);
	test_iowq_aff(&ring);
	test_max_workers(&ring);
	test_personality(&ring);
	test_file_alloc_range(&ring);
	test_buffer_tags(&ring);
	test_file_tags(&ring);
	t_expect_no_cqe(&ring);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
