/* SPDX-License-Identifier: MIT */
/*
 * The automatic ring fd registration of a ring is the creating thread's:
 * an io_uring_enter checks the thread pointer against the ring's key, and
 * when that fails (another thread; or the epoch moved on, here because a
 * thread exited holding a ring) looks in a thread-local table
 * (src/ring_fd.rs), which the library reaches through TLS descriptors
 * (.cargo/config.toml). This program checks both however the library was
 * loaded:
 *
 *   auto_slot LIBRARY dlopen    the library is not loaded at start; the
 *                               program dlopen()s it (dynamic TLS block)
 *   auto_slot LIBRARY preload   LD_PRELOAD loaded it at start (static TLS);
 *                               dlopen() returns that copy
 *
 * The registered index is made observable: the ring's fd number is
 * dup2()ed over with a second ring's fd, so an enter through the fd lands
 * on the decoy ring (whose SQ is empty: 0 submitted) and only an enter
 * through the registered index reaches the ring itself. The creating
 * thread must reach it; another thread and a fork()ed child (whose tables
 * hold no registration) must go through the fd, as with liburing.
 */
#include "../rsuring_test.h"

#include <dlfcn.h>
#include <pthread.h>

static int (*init_params)(unsigned, struct io_uring *, struct io_uring_params *);
static void (*queue_exit)(struct io_uring *);
static int (*submit)(struct io_uring *);

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	CHECK_MSG(p, "dlsym %s: %s", name, dlerror());
	return p;
}

static void queue_one_nop(struct io_uring *ring, __u64 data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, data);
}

/* The CQE of `data`, which must be ready on `ring` (NOPs complete inline). */
static void expect_cqe(struct io_uring *ring, __u64 data)
{
	struct io_uring_cqe *cqe = NULL;

	CHECK_EQ(__io_uring_peek_cqe(ring, &cqe, NULL), 0);
	CHECK(cqe);
	CHECK_EQ(cqe->user_data, data);
	CHECK_EQ(cqe->res, 0);
	io_uring_cqe_seen(ring, cqe);
}

/* Sets a ring up and exits holding its registration. */
static void *holder_exits(void *arg)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	CHECK_EQ(init_params(8, arg, &p), 0);
	return NULL;
}

static void *other_thread(void *arg)
{
	struct io_uring *ring = arg;

	/* Through the fd, i.e. the decoy: nothing to submit there. */
	queue_one_nop(ring, 2);
	return (void *)(long)submit(ring);
}

int main(int argc, char **argv)
{
	struct io_uring ring, decoy, left;
	struct io_uring_params p;
	void *h, *ret_ptr;
	int saved, ret;
	pthread_t t;
	pid_t pid;

	/* The registration is opt-in: ask for it before the first ring. */
	setenv("RSURING_REGISTER_RING_FD", "1", 1);
	CHECK_MSG(argc == 3, "usage: auto_slot LIBRARY dlopen|preload");
	T_STEP("loading %s (%s)", argv[1], argv[2]);
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!strcmp(argv[2], "preload"))
		CHECK_MSG(h, "the library was not loaded at start");
	else
		CHECK_MSG(!h, "the library was loaded at start");
	if (!h)
		h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	CHECK_MSG(h, "dlopen: %s", dlerror());
	sym(h, "rsuring_wait_batch_cqe"); /* it is rsuring */
	*(void **)&init_params = sym(h, "io_uring_queue_init_params");
	*(void **)&queue_exit = sym(h, "io_uring_queue_exit");
	*(void **)&submit = sym(h, "io_uring_submit");

	T_STEP("a SINGLE_ISSUER ring and a decoy");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER;
	ret = init_params(8, &ring, &p);
	if (ret == -EINVAL)
		T_SKIP("no IORING_SETUP_SINGLE_ISSUER");
	CHECK_EQ(ret, 0);
	memset(&p, 0, sizeof(p));
	CHECK_EQ(init_params(8, &decoy, &p), 0);
	if (ring.enter_ring_fd == ring.ring_fd)
		T_SKIP("the kernel refused the automatic ring fd registration");

	T_STEP("the ring's fd number now names the decoy");
	saved = dup(ring.ring_fd);
	CHECK(saved >= 0);
	CHECK(dup2(decoy.ring_fd, ring.ring_fd) == ring.ring_fd);

	T_STEP("the creating thread enters through its registered index");
	queue_one_nop(&ring, 1);
	CHECK_EQ(submit(&ring), 1);
	expect_cqe(&ring, 1);

	T_STEP("another thread goes through the fd (the decoy)");
	CHECK_EQ(pthread_create(&t, NULL, other_thread, &ring), 0);
	CHECK_EQ(pthread_join(t, &ret_ptr), 0);
	CHECK_EQ((long)ret_ptr, 0);
	CHECK_EQ(io_uring_cq_ready(&ring), 0);

	T_STEP("a forked child goes through the fd (the decoy)");
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* The SQE the other thread left is published: nothing new. */
		_exit(submit(&ring) == 0 ? 0 : 1);
	}
	t_wait_child(pid, 10000, "forked child");

	T_STEP("the creating thread again: submits what the others left");
	CHECK_EQ(submit(&ring), 1);
	expect_cqe(&ring, 2);
	CHECK_EQ(io_uring_cq_ready(&decoy), 0);

	T_STEP("a thread exits holding a ring: the creating thread's table still has its index");
	CHECK_EQ(pthread_create(&t, NULL, holder_exits, &left), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK(left.enter_ring_fd != left.ring_fd);
	for (__u64 data = 3; data < 6; data++) {
		queue_one_nop(&ring, data);
		CHECK_EQ(submit(&ring), 1);
		expect_cqe(&ring, data);
	}
	CHECK_EQ(io_uring_cq_ready(&decoy), 0);
	queue_exit(&left);

	T_STEP("teardown");
	CHECK(dup2(saved, ring.ring_fd) == ring.ring_fd);
	close(saved);
	queue_exit(&ring);
	queue_exit(&decoy);
	CHECK_EQ(dlclose(h), 0);
	return 0;
}
