/* SPDX-License-Identifier: MIT */
/*
 * fork() and an inherited transparent ring. The SQ thread belongs to the
 * parent and runs requests in the parent's address space, so a child's
 * submit on the inherited ring must fail with -EOWNERDEAD (one note on
 * stderr), touching neither the child's nor the parent's memory, and never
 * hang. On a plain ring (the "plain" expectation) the child's read lands
 * in the child's buffer, as with liburing.
 *
 *   forkring <plain|transparent> parent-alive|parent-exited
 *
 * Run as an unprivileged user (the driver uses setpriv): RSURING_SQPOLL=1
 * refuses processes that can change credentials.
 *
 * parent-alive: the parent fills a static buffer with 'P' and forks; the
 *   child fills the same buffer (same address, its own copy) with 'C',
 *   queues a read into it on the inherited ring and submits (twice, with
 *   io_uring_submit and io_uring_submit_and_wait). After the child is done
 *   the parent's buffer must still be all 'P' and the parent's CQ empty,
 *   and the parent's ring must keep working. The child's own new ring
 *   works and is transparent. (On a plain ring the child's request moved
 *   the shared SQ and CQ, so the parent only checks its buffer.)
 * parent-exited: the setup process creates the ring, forks and exits at
 *   once (daemonize); the child waits until it is gone, then submits on
 *   the inherited ring: -EOWNERDEAD without a hang, its buffer untouched;
 *   its own new ring works. The top process is a subreaper that collects
 *   both.
 */
#ifndef SQ_DEBIAN
#include <rsuring.h>
#endif
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#include <sys/wait.h>

#define BUF_LEN 4096
#define HANG_SECS 5

static unsigned char buf[BUF_LEN] __attribute__((aligned(4096)));
static int data_fd;

static void check_filled(unsigned char c, const char *who)
{
	size_t i;

	for (i = 0; i < BUF_LEN; i++)
		if (buf[i] != c)
			T_FAIL("%s: byte %zu of the buffer is 0x%02x, want '%c' (0x%02x): "
			     "a read landed in memory it must not touch", who, i, buf[i], c, c);
}

static void new_ring_in_child(int transparent)
{
	struct io_uring ring;
	int ret;

	T_STEP("child: a new ring of its own");
	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_MSG(ret == 0, "child: setup = %d (%s)", ret, strerror(-ret));
	CHECK_RING_MODE(&ring, transparent);
	ring_io(&ring, data_fd, 40);
	ring_io(&ring, data_fd, 41);
	io_uring_queue_exit(&ring);
}

/* The child's read into buf on the inherited ring. */
static void child_submits(struct io_uring *ring, int transparent)
{
	struct io_uring_cqe *cqe = NULL;
	int ret;

	memset(buf, 'C', sizeof(buf));
	T_STEP("child: io_uring_submit on the inherited ring");
	queue_read(ring, data_fd, buf, BUF_LEN, 0, 0xc1);
	hang_alarm(HANG_SECS, "child: io_uring_submit on the inherited ring");
	ret = io_uring_submit(ring);
	hang_alarm_off();
	if (!transparent) {
		/* A plain ring: the child's own request, in the child's memory. */
		CHECK_MSG(ret == 1, "child: io_uring_submit = %d (%s), want 1", ret,
			  ret < 0 ? strerror(-ret) : "");
		cqe = wait_one(ring);
		CHECK_EQ(cqe->user_data, 0xc1);
		CHECK_EQ(cqe->res, BUF_LEN);
		io_uring_cqe_seen(ring, cqe);
		t_check_data(buf, BUF_LEN, 0, "child read");
		return;
	}
	CHECK_MSG(ret == -EOWNERDEAD, "child: io_uring_submit on the inherited ring = %d (%s), "
		  "want -EOWNERDEAD", ret, ret < 0 ? strerror(-ret) : "submitted");

	T_STEP("child: io_uring_submit_and_wait on the inherited ring");
	hang_alarm(HANG_SECS, "child: io_uring_submit_and_wait on the inherited ring");
	ret = io_uring_submit_and_wait(ring, 1);
	hang_alarm_off();
	CHECK_MSG(ret == -EOWNERDEAD, "child: io_uring_submit_and_wait = %d (%s), "
		  "want -EOWNERDEAD", ret, ret < 0 ? strerror(-ret) : "submitted");

	/* Give a poller that took the SQE anyway time to write somewhere. */
	t_msleep(200);
	check_filled('C', "child's buffer after the refused submits");
	CHECK_MSG(io_uring_peek_cqe(ring, &cqe) == -EAGAIN,
		  "child: a CQE (user_data %llu, res %d) arrived for a refused submit",
		  cqe ? (unsigned long long)cqe->user_data : 0ULL, cqe ? cqe->res : 0);
}

static void setup_ring(struct io_uring *ring, int transparent)
{
	int ret = io_uring_queue_init(8, ring, 0);

	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "setup = %d (%s)", ret, strerror(-ret));
	CHECK_RING_MODE(ring, transparent);
	ring_io(ring, data_fd, 1);
}

static void parent_alive(int transparent)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe = NULL;
	pid_t pid;

	T_STEP("parent: ring");
	setup_ring(&ring, transparent);
	memset(buf, 'P', sizeof(buf));

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		t_arm_watchdog();
		child_submits(&ring, transparent);
		new_ring_in_child(transparent);
		_exit(0);
	}
	T_STEP("parent: waiting for the child");
	t_wait_child(pid, 20000, "child");

	T_STEP("parent: after the child");
	check_filled('P', "parent's buffer after the child's submit");
	if (!transparent) {
		/* The child used the shared SQ and CQ: the parent's view of them
		 * is stale, as with liburing, so the parent stops here. */
		io_uring_queue_exit(&ring);
		return;
	}
	CHECK_MSG(io_uring_peek_cqe(&ring, &cqe) == -EAGAIN,
		  "parent: a CQE (user_data %llu, res %d) from the child's request "
		  "is in the parent's CQ", cqe ? (unsigned long long)cqe->user_data : 0ULL,
		  cqe ? cqe->res : 0);
	ring_io(&ring, data_fd, 2);
	/* And a read into the very buffer the child used. */
	queue_read(&ring, data_fd, buf, BUF_LEN, 0, 0xa1);
	CHECK_SUBMITTED(io_uring_submit(&ring), 1, "parent read");
	cqe = wait_one(&ring);
	CHECK_EQ(cqe->user_data, 0xa1);
	CHECK_EQ(cqe->res, BUF_LEN);
	io_uring_cqe_seen(&ring, cqe);
	t_check_data(buf, BUF_LEN, 0, "parent read");
	io_uring_queue_exit(&ring);
}

static void exited_child(struct io_uring *ring, pid_t setup_pid, int transparent)
{
	unsigned long long end = t_now_ms() + 10000;

	T_STEP("child: waiting for the setup process to be gone");
	/* Reaped by the subreaper: all its threads, the SQ thread included,
	 * have exited. */
	while (kill(setup_pid, 0) == 0 || errno != ESRCH) {
		CHECK_MSG(t_now_ms() < end, "the setup process %d is still there", (int)setup_pid);
		t_msleep(5);
	}
	child_submits(ring, transparent);
	new_ring_in_child(transparent);
}

static void parent_exited(int transparent)
{
	unsigned long long end;
	pid_t setup_pid;

	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0);
	setup_pid = fork();
	CHECK(setup_pid >= 0);
	if (setup_pid == 0) {
		struct io_uring ring;
		pid_t child, self = getpid();

		t_arm_watchdog();
		T_STEP("setup process: ring");
		setup_ring(&ring, transparent);
		child = fork();
		CHECK(child >= 0);
		if (child == 0) {
			t_arm_watchdog();
			/* Not getppid(): the setup process may be gone already. */
			exited_child(&ring, self, transparent);
			_exit(0);
		}
		/* Daemonize: the setup process leaves, the child carries on. */
		_exit(0);
	}
	T_STEP("top: reaping the setup process");
	t_wait_child(setup_pid, 20000, "setup process");
	T_STEP("top: waiting for the daemonized child");
	end = t_now_ms() + 30000;
	for (;;) {
		int status;
		pid_t r = waitpid(-1, &status, WNOHANG);

		if (r > 0) {
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				T_FAIL("daemonized child failed (%s %d)",
				     WIFEXITED(status) ? "exit" : "signal",
				     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			break;
		}
		CHECK_MSG(r == 0, "waitpid: %s (the child was not reparented to us?)",
			  strerror(errno));
		CHECK_MSG(t_now_ms() < end, "daemonized child still running");
		t_msleep(5);
	}
}

static const struct {
	const char *name;
	void (*run)(int transparent);
} scenarios[] = {
	{ "parent-alive", parent_alive },
	{ "parent-exited", parent_exited },
};

int main(int argc, char **argv)
{
	int transparent = expect_transparent(argc, argv);
	const char *scenario = argc > 2 ? argv[2] : "";
	size_t i, n = sizeof(scenarios) / sizeof(scenarios[0]);

	if (transparent)
		check_unprivileged();
	data_fd = t_data_file();
	for (i = 0; i < n && strcmp(scenario, scenarios[i].name); i++)
		;
	if (i == n) {
		fprintf(stderr, "unknown scenario \"%s\"\n", scenario);
		return 2;
	}
	scenarios[i].run(transparent);
	close(data_fd);
	printf("forkring %s: ok\n", scenario);
	return 0;
}
