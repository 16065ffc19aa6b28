/* SPDX-License-Identifier: MIT */
/*
 * Ring setup variants (API available in liburing 2.3):
 *  - IORING_SETUP_CQSIZE honoured (64, and 100 rounded to 128), too small
 *    cq_entries -> -EINVAL;
 *  - SQE128 + CQE32: NOPs and a read work over several rounds, the SQE
 *    pointers are 128 bytes apart and CQE pointers 32 bytes apart (indices
 *    scaled right), user_data round-trips;
 *  - errors come back as negative errno (not -1/errno): bad flag
 *    combinations, entries 0, too many entries without CLAMP;
 *    IORING_SETUP_CLAMP clamps instead;
 *  - params are filled in (sq/cq entries, features) and ring.features set;
 *  - io_uring_setup + io_uring_queue_mmap;
 *  - io_uring_mlock_size / mlock_size_params;
 *  - io_uring_ring_dontfork: a forked child cannot touch the ring memory
 *    (SIGSEGV) while without it a child can, and the parent ring still works;
 *  - flags SUBMIT_ALL, COOP_TASKRUN(+TASKRUN_FLAG), SINGLE_ISSUER accepted.
 */
#include "../rsuring_test.h"
#include <sys/wait.h>

static void test_cqsize(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret;

	T_STEP("CQSIZE 64");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 64;
	CHECK_OK(io_uring_queue_init_params(8, &ring, &p));
	CHECK_EQ(p.sq_entries, 8);
	CHECK_EQ(p.cq_entries, 64);
	CHECK_EQ(ring.sq.ring_entries, 8);
	CHECK_EQ(ring.cq.ring_entries, 64);
	CHECK_EQ(ring.cq.ring_mask, 63);
	/* the whole CQ is usable: 64 completions without reaping */
	{
		unsigned i, j;

		for (i = 0; i < 8; i++) {
			for (j = 0; j < 8; j++) {
				struct io_uring_sqe *sqe = t_get_sqe(&ring);

				io_uring_prep_nop(sqe);
				sqe->user_data = i * 8 + j;
			}
			t_submit_expect(&ring, 8);
		}
		CHECK_EQ(io_uring_cq_ready(&ring), 64);
		CHECK(!io_uring_cq_has_overflow(&ring));
		for (i = 0; i < 64; i++)
			CHECK_EQ(t_reap(&ring).user_data, i);
	}
	io_uring_queue_exit(&ring);

	T_STEP("CQSIZE 100 -> 128");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 100;
	CHECK_OK(io_uring_queue_init_params(8, &ring, &p));
	CHECK_EQ(ring.cq.ring_entries, 128);
	CHECK_EQ(p.cq_entries, 128);
	io_uring_queue_exit(&ring);

	T_STEP("CQSIZE smaller than SQ -> -EINVAL");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 4;
	ret = io_uring_queue_init_params(16, &ring, &p);
	CHECK_EQ(ret, -EINVAL);

	T_STEP("CQSIZE 0 -> -EINVAL");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 0;
	ret = io_uring_queue_init_params(16, &ring, &p);
	CHECK_EQ(ret, -EINVAL);
}

static void test_big_sqe_cqe(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *s1, *s2;
	struct io_uring_cqe *cqes[8];
	unsigned round, i, n;
	int ret, fd;

	T_STEP("SQE128 + CQE32 setup");
	ret = t_init_params(&ring, 4, &p, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (ret == -EINVAL) {
		fprintf(stderr, "note: SQE128/CQE32 not supported, skipped\n");
		return;
	}
	CHECK_OK(ret);
	CHECK(ring.flags & IORING_SETUP_SQE128);
	CHECK(ring.flags & IORING_SETUP_CQE32);

	T_STEP("SQE128 pointers 128 bytes apart");
	s1 = t_get_sqe(&ring);
	s2 = t_get_sqe(&ring);
	CHECK_EQ((char *)s2 - (char *)s1, 128);
	io_uring_prep_nop(s1);
	s1->user_data = 1;
	io_uring_prep_nop(s2);
	s2->user_data = 2;
	t_submit_expect(&ring, 2);

	T_STEP("CQE32 pointers 32 bytes apart");
	CHECK_OK(io_uring_wait_cqe_nr(&ring, &cqes[0], 2));
	n = io_uring_peek_batch_cqe(&ring, cqes, 8);
	CHECK_EQ(n, 2);
	CHECK_EQ((char *)cqes[1] - (char *)cqes[0], 32);
	CHECK_EQ(cqes[0]->user_data, 1);
	CHECK_EQ(cqes[1]->user_data, 2);
	io_uring_cq_advance(&ring, 2);

	T_STEP("SQE128/CQE32 rounds across wrap");
	for (round = 0; round < 20; round++)
		t_nop_round_trip(&ring, 1 + round % 4, round * 10);

	T_STEP("for_each_cqe with CQE32");
	for (i = 0; i < 3; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = 500 + i;
	}
	t_submit_expect(&ring, 3);
	{
		struct io_uring_cqe *cqe;
		unsigned head, cnt = 0;

		io_uring_for_each_cqe(&ring, head, cqe) {
			CHECK_EQ(cqe->user_data, 500 + cnt);
			cnt++;
		}
		CHECK_EQ(cnt, 3);
		io_uring_cq_advance(&ring, cnt);
	}

	T_STEP("read on SQE128 ring");
	fd = t_tmpfile(4096, 61);
	{
		unsigned char buf[256];
		struct io_uring_sqe *sqe = t_get_sqe(&ring);

		io_uring_prep_read(sqe, fd, buf, sizeof(buf), 256);
		sqe->user_data = 0xfeed;
		t_submit_expect(&ring, 1);
		t_reap_expect(&ring, 0xfeed, 256);
		CHECK_EQ(t_verify(buf, 256, 256, 61), -1);
	}
	close(fd);
	io_uring_queue_exit(&ring);

	for (i = 0; i < 2; i++) {
		unsigned flags = i ? IORING_SETUP_CQE32 : IORING_SETUP_SQE128;

		T_STEP("%s only", i ? "CQE32" : "SQE128");
		CHECK_OK(t_init_params(&ring, 8, &p, flags));
		for (round = 0; round < 6; round++)
			t_nop_round_trip(&ring, 8, round * 100);
		io_uring_queue_exit(&ring);
	}
}

static void test_errors(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret;

	T_STEP("entries 0 -> -EINVAL");
	errno = 0;
	ret = io_uring_queue_init(0, &ring, 0);
	CHECK_EQ(ret, -EINVAL);

	T_STEP("entries 0 via init_params -> -EINVAL");
	memset(&p, 0, sizeof(p));
	ret = io_uring_queue_init_params(0, &ring, &p);
	CHECK_EQ(ret, -EINVAL);

	T_STEP("SQ_AFF without SQPOLL -> -EINVAL");
	ret = t_init_params(&ring, 8, &p, IORING_SETUP_SQ_AFF);
	CHECK_EQ(ret, -EINVAL);

	T_STEP("unknown setup flag -> -EINVAL");
	/* bit 25: no meaning to the kernel (6.18 uses up to bit 20) */
	ret = t_init_params(&ring, 8, &p, 1U << 25);
	CHECK_EQ(ret, -EINVAL);

	T_STEP("ATTACH_WQ with a bad wq_fd -> -ENXIO/-EBADF");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_ATTACH_WQ;
	p.wq_fd = 9999;
	ret = io_uring_queue_init_params(8, &ring, &p);
	/* 6.18 says -ENXIO, older kernels -EBADF */
	CHECK_MSG(ret == -ENXIO || ret == -EBADF, "ret=%d", ret);

	T_STEP("ATTACH_WQ to a non-ring fd -> -EINVAL");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_ATTACH_WQ;
	p.wq_fd = STDERR_FILENO;
	ret = io_uring_queue_init_params(8, &ring, &p);
	CHECK_EQ(ret, -EINVAL);

	T_STEP("too many entries -> -EINVAL; CLAMP clamps");
	ret = io_uring_queue_init(1U << 20, &ring, 0);
	CHECK_EQ(ret, -EINVAL);
	ret = t_init_params(&ring, 1U << 20, &p, IORING_SETUP_CLAMP);
	CHECK_OK(ret);
	CHECK_EQ(ring.sq.ring_entries, 32768);
	CHECK_EQ(p.sq_entries, 32768);
	io_uring_queue_exit(&ring);

	T_STEP("a valid ring still works after failed setups");
	t_queue_init(&ring, 4, 0);
	t_nop_round_trip(&ring, 4, 0);
	io_uring_queue_exit(&ring);
}

static void test_params_and_mmap(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	int fd, ret;

	T_STEP("params filled by queue_init_params");
	memset(&p, 0, sizeof(p));
	CHECK_OK(io_uring_queue_init_params(16, &ring, &p));
	CHECK_EQ(p.sq_entries, 16);
	CHECK_EQ(p.cq_entries, 32);
	CHECK(p.features & IORING_FEAT_SINGLE_MMAP);
	CHECK_EQ(ring.features, p.features);
	CHECK(p.sq_off.array != 0 || p.sq_off.tail != 0);
	io_uring_queue_exit(&ring);

	T_STEP("io_uring_setup + io_uring_queue_mmap");
	memset(&p, 0, sizeof(p));
	fd = io_uring_setup(8, &p);
	CHECK_MSG(fd >= 0, "io_uring_setup: %d", fd);
	memset(&ring, 0, sizeof(ring));
	ret = io_uring_queue_mmap(fd, &p, &ring);
	CHECK_OK(ret);
	CHECK_EQ(ring.ring_fd, fd);
	CHECK_EQ(ring.sq.ring_entries, 8);
	/*
	 * liburing's io_uring_queue_mmap (2.3 and 2.15 alike) does not fill
	 * the SQ index array; only queue_init does. The application must.
	 */
	{
		unsigned i;

		for (i = 0; i < ring.sq.ring_entries; i++)
			ring.sq.array[i] = i;
	}
	t_nop_round_trip(&ring, 8, 40);
	t_nop_round_trip(&ring, 8, 50);
	io_uring_queue_exit(&ring);
	/* queue_exit closed the fd */
	CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
}

static void test_mlock_size(void)
{
	struct io_uring_params p;
	ssize_t a, b;

	T_STEP("mlock_size");
	a = io_uring_mlock_size(64, 0);
	CHECK_MSG(a >= 0, "mlock_size: %zd", a);
	memset(&p, 0, sizeof(p));
	b = io_uring_mlock_size_params(64, &p);
	CHECK_MSG(b >= 0, "mlock_size_params: %zd", b);
	CHECK_EQ(a, b);
	/* too many entries without CLAMP is an error there too */
	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_mlock_size_params(1U << 20, &p), -EINVAL);
}

/* fork a child that reads the SQ head; returns its wait status */
static int child_touch(struct io_uring *ring)
{
	int status;
	pid_t pid = fork();

	CHECK_SYS(pid);
	if (pid == 0) {
		volatile unsigned v = *(volatile unsigned *)ring->sq.khead;
		volatile struct io_uring_sqe *s = ring->sq.sqes;

		(void)v;
		s->user_data = 1;	/* write to the SQE array */
		_exit(0);
	}
	CHECK_SYS(waitpid(pid, &status, 0));
	return status;
}

static void test_dontfork(void)
{
	struct io_uring ring;
	int status;

	T_STEP("child can touch the ring without dontfork");
	t_queue_init(&ring, 8, 0);
	status = child_touch(&ring);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child status 0x%x", status);

	T_STEP("ring_dontfork: child gets SIGSEGV");
	CHECK_EQ(io_uring_ring_dontfork(&ring), 0);
	status = child_touch(&ring);
	CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
		  "child status 0x%x (expected SIGSEGV)", status);

	T_STEP("parent ring works after dontfork");
	t_nop_round_trip(&ring, 8, 900);
	io_uring_queue_exit(&ring);
}

static void test_misc_flags(void)
{
	static const unsigned flag_sets[] = {
		IORING_SETUP_SUBMIT_ALL,
		IORING_SETUP_COOP_TASKRUN,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_SINGLE_ISSUER,
	};
	unsigned i;

	for (i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]); i++) {
		struct io_uring_params p;
		struct io_uring ring;
		int ret;

		T_STEP("misc setup flags");
		ret = t_init_params(&ring, 8, &p, flag_sets[i]);
		if (ret == -EINVAL)
			continue;	/* older kernel */
		CHECK_MSG(ret == 0, "flags 0x%x: %d", flag_sets[i], ret);
		/* liburing 2.15 adds NO_SQARRAY on its own: only require ours */
		CHECK_EQ(ring.flags & flag_sets[i], flag_sets[i]);
		t_nop_round_trip(&ring, 8, 0);
		t_nop_round_trip(&ring, 5, 10);
		io_uring_queue_exit(&ring);
	}
}

static void test_submit_all(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	char buf[8];
	unsigned i;
	int ret;

	T_STEP("SUBMIT_ALL: a failing SQE does not stop the batch");
	ret = t_init_params(&ring, 8, &p, IORING_SETUP_SUBMIT_ALL);
	if (ret == -EINVAL)
		return;
	CHECK_OK(ret);
	sqe = t_queue(&ring, 1, io_uring_prep_nop);
	sqe = t_get_sqe(&ring);
	/* invalid at submit time: fixed file with no file table */
	io_uring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = 2;
	sqe = t_queue(&ring, 3, io_uring_prep_nop);
	t_submit_expect(&ring, 3);
	for (i = 0; i < 3; i++) {
		struct t_cqe c = t_reap(&ring);

		if (c.user_data == 2)
			CHECK(c.res < 0);
		else
			CHECK_EQ(c.res, 0);
	}
	io_uring_queue_exit(&ring);
}

int main(void)
{
	test_cqsize();
	test_big_sqe_cqe();
	test_errors();
	test_params_and_mmap();
	test_mlock_size();
	test_dontfork();
	test_misc_flags();
	test_submit_all();
	return T_EXIT_PASS;
}
