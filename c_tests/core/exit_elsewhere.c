/* SPDX-License-Identifier: MIT */
/*
 * A ring set up on one thread and torn down on another. rsuring registers
 * every ring's fd for the thread that set it up, and only that thread can
 * drop the registration; the ring must still go away as a liburing ring
 * does: its pending requests are cancelled and the files it holds are
 * released, so that closing the application's last descriptor of a pipe's
 * read end leaves the writer with EPIPE, while the setting-up thread stays
 * alive and touches no ring.
 */
#include "../rsuring_test.h"

#include <pthread.h>
#include <signal.h>

static void *exit_ring(void *arg)
{
	io_uring_queue_exit(arg);
	return NULL;
}

/* Writes one byte until the pipe has no reader left (EPIPE). */
static void wait_for_epipe(int wfd, const char *what)
{
	unsigned long long deadline = t_now_ms() + 5000;

	for (;;) {
		char c = 'x';
		ssize_t n = write(wfd, &c, 1);

		if (n < 0 && errno == EPIPE)
			return;
		if (n < 0 && errno != EAGAIN)
			T_FAIL("%s: write: %s", what, strerror(errno));
		if (t_now_ms() > deadline)
			T_FAIL("%s: the pipe still has a reader 5 s after the ring's exit", what);
		t_msleep(10);
	}
}

static void one_case(bool fixed)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	pthread_t thread;
	char buf[16];
	int fds[2];

	t_pipe(fds);
	CHECK_SYS(fcntl(fds[1], F_SETFL, O_NONBLOCK));
	CHECK_OK(io_uring_queue_init(8, &ring, 0));
	sqe = io_uring_get_sqe(&ring);
	CHECK(sqe != NULL);
	if (fixed) {
		CHECK_OK(io_uring_register_files(&ring, &fds[0], 1));
		io_uring_prep_read(sqe, 0, buf, sizeof(buf), 0);
		sqe->flags |= IOSQE_FIXED_FILE;
	} else {
		io_uring_prep_read(sqe, fds[0], buf, sizeof(buf), 0);
	}
	CHECK_EQ(io_uring_submit(&ring), 1);
	/* The read is pending: nothing was written. */
	CHECK_EQ(io_uring_cq_ready(&ring), 0);

	CHECK_EQ(pthread_create(&thread, NULL, exit_ring, &ring), 0);
	CHECK_EQ(pthread_join(thread, NULL), 0);
	CHECK_SYS(close(fds[0]));
	wait_for_epipe(fds[1], fixed ? "registered file" : "pending read");
	CHECK_SYS(close(fds[1]));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	T_STEP("a pending read, ring exited on another thread");
	one_case(false);
	T_STEP("a registered file with a pending read, ring exited on another thread");
	one_case(true);
	return T_EXIT_PASS;
}
