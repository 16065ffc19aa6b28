/* SPDX-License-Identifier: MIT */
/*
 * The SQ index array and IORING_SETUP_NO_SQARRAY.
 *
 * rsuring sets rings up with NO_SQARRAY where the kernel has it (as liburing
 * 2.6+ does): the kernel then takes SQE `head & mask` directly. Programs
 * built against older headers (this file is also built against Debian's
 * liburing 2.3 header) may still store into ring.sq.array themselves, the
 * way liburing once did and liburing 2.3's own tests still do; on rsuring
 * that pointer leads to private memory the kernel never reads, so storing
 * the identity mapping there is harmless. Checked here:
 *
 *  - a default ring has NO_SQARRAY (ring.flags) and the caller's params
 *    flags are given back unchanged; sq.array points outside every ring
 *    mapping and holds the identity mapping;
 *  - SQEs published by the library and SQEs published behind its back
 *    (storing sq.array, the SQE and the kernel's tail, then io_uring_enter)
 *    complete, across several wraps of the ring;
 *  - the kernel really ignores the array: an out-of-range index stored for
 *    an SQE does not drop it, and sq.kdropped stays 0;
 *  - a ring that asks for NO_SQARRAY itself gets it and a NULL sq.array, as
 *    with liburing 2.6+;
 *  - io_uring_setup() + io_uring_queue_mmap() give the application exactly
 *    the ring it set up: with the kernel's array (an out-of-range index is
 *    dropped and counted);
 *  - in a child process with RSURING_SQARRAY=1, default rings keep the
 *    kernel's array (the documented way out for programs that need it);
 *  - built against rsuring's header: rings in application memory
 *    (io_uring_queue_init_mem) and resized rings (io_uring_resize_rings)
 *    keep a private array too.
 *
 * Kernels without NO_SQARRAY (before 6.6) skip the NO_SQARRAY checks; with
 * RSURING_STRICT=1 that skip is a failure.
 */
#include "../rsuring_test.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif

#define ENTRIES 8

/* Whether the kernel accepts IORING_SETUP_NO_SQARRAY (raw system call). */
static int kernel_has_no_sqarray(void)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_SQARRAY;
	fd = syscall(__NR_io_uring_setup, 2, &p);
	if (fd >= 0) {
		close((int)fd);
		return 1;
	}
	if (errno != EINVAL)
		T_FAIL("io_uring_setup(NO_SQARRAY) probe: %s", strerror(errno));
	return 0;
}

static int inside(const void *p, const void *start, size_t len)
{
	const char *c = p, *s = start;

	return start && c >= s && c < s + len;
}

/* sq.array lies in none of the ring's kernel-shared mappings. */
static void check_array_private(struct io_uring *ring)
{
	size_t sqes_len = (size_t)ring->sq.ring_entries * sizeof(struct io_uring_sqe);

	CHECK(ring->sq.array != NULL);
	CHECK(!inside(ring->sq.array, ring->sq.ring_ptr, ring->sq.ring_sz));
	CHECK(!inside(ring->sq.array, ring->cq.ring_ptr, ring->cq.ring_sz));
	CHECK(!inside(ring->sq.array, ring->sq.sqes, sqes_len));
	/* The same reach as the kernel's array would have. */
	CHECK(!inside(ring->sq.array + ring->sq.ring_entries - 1,
		      ring->sq.ring_ptr, ring->sq.ring_sz));
}

static void check_identity(struct io_uring *ring)
{
	unsigned i;

	for (i = 0; i < ring->sq.ring_entries; i++)
		CHECK_EQ(ring->sq.array[i], i);
}

static void reap_one(struct io_uring *ring, uint64_t user_data)
{
	struct t_cqe c = t_reap(ring);

	CHECK_EQ(c.user_data, user_data);
	CHECK_EQ(c.res, 0);
}

/*
 * Old-program style, through the library: get an SQE, store its index in
 * sq.array at its SQ position (what liburing's submit did before 2.2 and
 * programs copied), submit with io_uring_submit.
 */
static void submit_storing_array(struct io_uring *ring, unsigned rounds)
{
	unsigned mask = ring->sq.ring_mask, r, i;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < ring->sq.ring_entries; i++) {
			struct io_uring_sqe *sqe = t_get_sqe(ring);
			unsigned idx = (unsigned)(sqe - ring->sq.sqes);

			io_uring_prep_nop(sqe);
			sqe->user_data = 1000 * r + i;
			ring->sq.array[(ring->sq.sqe_tail - 1) & mask] = idx;
		}
		t_submit_expect(ring, ring->sq.ring_entries);
		for (i = 0; i < ring->sq.ring_entries; i++)
			reap_one(ring, 1000 * r + i);
	}
}

/*
 * Behind the library's back, as liburing 2.3's accept-reuse and
 * io_uring_enter tests do: fill the SQE at the kernel's tail, store its
 * index in sq.array, release the new tail, io_uring_enter. The library's
 * own SQ state is moved along so that later library calls agree.
 */
static void submit_raw(struct io_uring *ring, unsigned count, uint64_t base)
{
	unsigned mask = ring->sq.ring_mask, i;
	int ret;

	for (i = 0; i < count; i++) {
		unsigned tail = *ring->sq.ktail;
		struct io_uring_sqe *sqe = &ring->sq.sqes[tail & mask];

		memset(sqe, 0, sizeof(*sqe));
		io_uring_prep_nop(sqe);
		sqe->user_data = base + i;
		ring->sq.array[tail & mask] = tail & mask;
		io_uring_smp_store_release(ring->sq.ktail, tail + 1);
		ret = io_uring_enter(ring->ring_fd, 1, 1, IORING_ENTER_GETEVENTS, NULL);
		CHECK_EQ(ret, 1);
		reap_one(ring, base + i);
		ring->sq.sqe_head++;
		ring->sq.sqe_tail++;
	}
}

/*
 * Stores an out-of-range index in sq.array for one SQE and publishes it.
 * Returns 1 if the kernel ran the SQE, 0 if it dropped it (and counted it
 * in sq.kdropped); the identity mapping is restored afterwards.
 */
static int submit_bad_index(struct io_uring *ring, uint64_t user_data)
{
	unsigned mask = ring->sq.ring_mask, dropped = *ring->sq.kdropped;
	unsigned tail = *ring->sq.ktail;
	struct io_uring_sqe *sqe = &ring->sq.sqes[tail & mask];
	struct io_uring_cqe *cqe = NULL;
	int ret;

	memset(sqe, 0, sizeof(*sqe));
	io_uring_prep_nop(sqe);
	sqe->user_data = user_data;
	ring->sq.array[tail & mask] = ring->sq.ring_entries + 1;
	io_uring_smp_store_release(ring->sq.ktail, tail + 1);
	ret = io_uring_enter(ring->ring_fd, 1, 0, 0, NULL);
	ring->sq.array[tail & mask] = tail & mask;
	ring->sq.sqe_head++;
	ring->sq.sqe_tail++;
	if (*ring->sq.kdropped != dropped) {
		/* Nothing submitted; -EAGAIN if the kernel has no spare request. */
		CHECK_MSG(ret == 0 || ret == -EAGAIN, "io_uring_enter returned %d", ret);
		CHECK_EQ(*ring->sq.kdropped, dropped + 1);
		CHECK_EQ(*ring->sq.khead, tail + 1);
		CHECK(io_uring_peek_cqe(ring, &cqe) != 0);
		return 0;
	}
	CHECK_EQ(ret, 1);
	reap_one(ring, user_data);
	return 1;
}

static void check_default_ring(void)
{
	struct io_uring_params p;
	struct io_uring ring;

	T_STEP("default ring has NO_SQARRAY");
	memset(&p, 0, sizeof(p));
	CHECK_OK(io_uring_queue_init_params(ENTRIES, &ring, &p));
	CHECK(ring.flags & IORING_SETUP_NO_SQARRAY);
	CHECK_EQ(p.flags, 0);
	check_array_private(&ring);
	check_identity(&ring);

	T_STEP("identity stores, library submit, wrapping");
	submit_storing_array(&ring, 3);
	T_STEP("identity stores, raw submit, wrapping");
	submit_raw(&ring, 3 * ENTRIES + 3, 5000);
	T_STEP("library submit after raw submits");
	submit_storing_array(&ring, 1);

	T_STEP("the kernel ignores the array");
	CHECK_EQ(submit_bad_index(&ring, 77), 1);
	CHECK_EQ(*ring.sq.kdropped, 0);
	submit_storing_array(&ring, 1);
	io_uring_queue_exit(&ring);

	T_STEP("flags given to io_uring_queue_init");
	t_queue_init(&ring, ENTRIES, 0);
	CHECK(ring.flags & IORING_SETUP_NO_SQARRAY);
	check_array_private(&ring);
	submit_storing_array(&ring, 2);
	io_uring_queue_exit(&ring);
}

static void check_asked_for(void)
{
	struct io_uring ring;

	T_STEP("NO_SQARRAY asked for: NULL sq.array");
	t_queue_init(&ring, ENTRIES, IORING_SETUP_NO_SQARRAY);
	CHECK(ring.flags & IORING_SETUP_NO_SQARRAY);
	CHECK(ring.sq.array == NULL);
	t_submit1(&ring, 3, io_uring_prep_nop);
	reap_one(&ring, 3);
	io_uring_queue_exit(&ring);
}

/* A ring with the kernel's array: stores go to the kernel, bad ones drop. */
static void check_kernel_array(struct io_uring *ring)
{
	CHECK(!(ring->flags & IORING_SETUP_NO_SQARRAY));
	CHECK(inside(ring->sq.array, ring->sq.ring_ptr, ring->sq.ring_sz));
	submit_storing_array(ring, 2);
	submit_raw(ring, ENTRIES + 1, 7000);
	CHECK_EQ(submit_bad_index(ring, 88), 0);
	submit_storing_array(ring, 1);
}

static void check_queue_mmap(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	unsigned i;
	int fd;

	T_STEP("io_uring_setup + io_uring_queue_mmap: the kernel's array");
	memset(&p, 0, sizeof(p));
	fd = io_uring_setup(ENTRIES, &p);
	CHECK_GE(fd, 0);
	CHECK_EQ(p.flags, 0);
	CHECK_OK(io_uring_queue_mmap(fd, &p, &ring));
	/* Filling the array is the caller's job here, as with liburing. */
	for (i = 0; i < ring.sq.ring_entries; i++)
		ring.sq.array[i] = i;
	check_kernel_array(&ring);
	io_uring_queue_exit(&ring);
}

#ifdef IO_URING_VERSION_MAJOR
/* rsuring's header (2.15 API): application memory and resized rings. */
static void check_newer_api(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	size_t len = 2 * 1024 * 1024;
	void *buf;
	int ret;

	T_STEP("io_uring_queue_init_mem");
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(buf != MAP_FAILED);
	memset(&p, 0, sizeof(p));
	ret = io_uring_queue_init_mem(ENTRIES, &ring, &p, buf, len);
	CHECK_GE(ret, 0);
	CHECK(ring.flags & IORING_SETUP_NO_SQARRAY);
	CHECK(!inside(ring.sq.array, buf, len));
	check_identity(&ring);
	submit_storing_array(&ring, 2);
	CHECK_EQ(submit_bad_index(&ring, 66), 1);
	io_uring_queue_exit(&ring);
	munmap(buf, len);

	T_STEP("io_uring_resize_rings");
	CHECK_OK(t_init_params(&ring, ENTRIES, &p, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN));
	submit_storing_array(&ring, 1);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 4 * ENTRIES;
	p.cq_entries = 8 * ENTRIES;
	p.flags = IORING_SETUP_CQSIZE;
	ret = io_uring_resize_rings(&ring, &p);
	if (ret == -EINVAL || ret == -EOPNOTSUPP) {
		io_uring_queue_exit(&ring);
		T_SKIP_OR_FAIL("the kernel cannot resize rings");
	}
	CHECK_OK(ret);
	CHECK_EQ(ring.sq.ring_entries, 4 * ENTRIES);
	CHECK(ring.flags & IORING_SETUP_NO_SQARRAY);
	check_array_private(&ring);
	check_identity(&ring);
	submit_storing_array(&ring, 2);
	CHECK_EQ(submit_bad_index(&ring, 55), 1);
	io_uring_queue_exit(&ring);
}
#endif

/* Child, RSURING_SQARRAY=1 set before the library read its environment. */
static int child_keep_array(void)
{
	struct io_uring ring;

	T_STEP("RSURING_SQARRAY=1: default rings keep the kernel's array");
	t_queue_init(&ring, ENTRIES, 0);
	check_identity(&ring);
	check_kernel_array(&ring);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}

static void run_child_keep_array(void)
{
	char self[4096];
	ssize_t n;
	pid_t pid;
	int status;

	T_STEP("child with RSURING_SQARRAY=1");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK_SYS(n);
	self[n] = 0;
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		setenv("RSURING_SQARRAY", "1", 1);
		execl(self, self, "keep-array", (char *)NULL);
		_exit(127);
	}
	CHECK_SYS(waitpid(pid, &status, 0));
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child with RSURING_SQARRAY=1 failed (status 0x%x)", status);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "keep-array"))
		return child_keep_array();
	/* The library reads it once, at the first ring: the default mode. */
	unsetenv("RSURING_SQARRAY");

	check_queue_mmap();
	run_child_keep_array();
	if (!kernel_has_no_sqarray())
		T_SKIP_OR_FAIL("the kernel has no IORING_SETUP_NO_SQARRAY (Linux < 6.6)");
	check_default_ring();
	check_asked_for();
#ifdef IO_URING_VERSION_MAJOR
	check_newer_api();
#endif
	return T_EXIT_PASS;
}
