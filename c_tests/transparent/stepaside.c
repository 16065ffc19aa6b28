/* SPDX-License-Identifier: MIT */
/*
 * RSURING_SQPOLL=1's step-aside rule (poller-busy), driven by
 * tests/transparent.rs, run unprivileged on CPU 0 with RSURING_SQPOLL_CPUS=1
 * and RSURING_STATS=1:
 *
 *   stepaside setup N
 *     The driver keeps CPU 1 busy. The ring set up must be plain (its
 *     poller's CPU is measured busy) and N NOP round trips on it complete.
 *
 *   stepaside slow SPINNERS SECONDS
 *     An SQPOLL ring of the program's own (IORING_SETUP_SQPOLL_PERCPU,
 *     bound to CPU 1) gives the process a poller there, so ring A, set up
 *     next, becomes transparent on it without a load measurement. Then
 *     SPINNERS busy child processes share CPU 1 with the poller while the
 *     program makes paced NOP round trips on A for SECONDS: now and then a
 *     submit waits a scheduler time slice for the poller, which the library
 *     measures. The spinners are stopped; ring B, set up next, must be
 *     plain: its CPU runs a poller of the process (no load measurement),
 *     so only the measured hand-overs can refuse it. Then NOP round trips
 *     on A (still transparent) and B complete, in order.
 *
 * Prints `line_a=`/`line_b=` (rsuring_stats_format of each ring),
 * `a_round_trips=N`, `b_round_trips=N`, then `ready pid=P` last, and waits
 * for stdin to close (for rsuring-stat --once P), then exits.
 */
#include <rsuring.h>
#include "../rsuring_test.h"
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#define MAX_SPINNERS 8

/* One NOP round trip on `ring` with user_data `i`. */
static void round_trip(struct io_uring *ring, unsigned long long i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	CHECK(sqe != NULL);
	io_uring_prep_nop(sqe);
	sqe->user_data = i;
	ret = io_uring_submit(ring);
	CHECK_MSG(ret == 1, "NOP %llu: io_uring_submit = %d", i, ret);
	ret = io_uring_wait_cqe(ring, &cqe);
	CHECK_MSG(ret == 0, "NOP %llu: io_uring_wait_cqe = %d (%s)", i, ret, strerror(-ret));
	CHECK_EQ(cqe->user_data, i);
	CHECK_EQ(cqe->res, 0);
	io_uring_cqe_seen(ring, cqe);
	T_PROGRESS();
}

static void print_line(const char *name, struct io_uring *ring)
{
	char line[1024];
	int ret = rsuring_stats_format(ring, line, sizeof(line));

	CHECK_MSG(ret > 0 && ret < (int)sizeof(line), "rsuring_stats_format = %d", ret);
	printf("%s=%s\n", name, line);
}

/* A child that keeps CPU 1 busy until killed (or its parent dies). */
static pid_t spinner(void)
{
	pid_t pid = fork();

	CHECK_MSG(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		cpu_set_t one;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CPU_ZERO(&one);
		CPU_SET(1, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			_exit(1);
		for (;;)
			__asm__ volatile("" ::: "memory");
	}
	return pid;
}

/* Waits for stdin to close, so that the driver can look at the live page. */
static void hold(void)
{
	char buf[64];

	printf("ready pid=%d\n", (int)getpid());
	fflush(stdout);
	hang_alarm_off();
	while (read(0, buf, sizeof(buf)) > 0)
		;
}

static int setup_mode(int n)
{
	struct io_uring ring;
	int i, ret;

	ret = io_uring_queue_init(8, &ring, 0);
	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "setup = %d (%s)", ret, strerror(-ret));
	CHECK_PLAIN_RING(&ring);
	for (i = 0; i < n; i++)
		round_trip(&ring, i);
	printf("a_round_trips=%d\n", n);
	print_line("line_a", &ring);
	hold();
	io_uring_queue_exit(&ring);
	return 0;
}

static int slow_mode(int spinners, int seconds)
{
	struct io_uring_params p = { 0 };
	struct io_uring own, a, b;
	pid_t pids[MAX_SPINNERS];
	unsigned long long end, n = 0;
	int i, ret;

	CHECK(spinners >= 0 && spinners <= MAX_SPINNERS);
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF | IORING_SETUP_SQPOLL_PERCPU;
	p.sq_thread_cpu = 1;
	ret = io_uring_queue_init_params(8, &own, &p);
	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "SQPOLL_PERCPU setup on CPU 1 = %d (%s)", ret, strerror(-ret));
	ret = io_uring_queue_init(8, &a, 0);
	CHECK_MSG(ret == 0, "setup of A = %d (%s)", ret, strerror(-ret));
	CHECK_TRANSPARENT_RING(&a);

	for (i = 0; i < spinners; i++)
		pids[i] = spinner();
	end = t_now_ms() + 1000ULL * seconds;
	while (t_now_ms() < end) {
		struct timespec pace = { 0, 100000 };

		round_trip(&a, n++);
		nanosleep(&pace, NULL);
	}
	for (i = 0; i < spinners; i++) {
		kill(pids[i], SIGKILL);
		CHECK_EQ(waitpid(pids[i], NULL, 0), pids[i]);
	}

	ret = io_uring_queue_init(8, &b, 0);
	CHECK_MSG(ret == 0, "setup of B = %d (%s)", ret, strerror(-ret));
	check_plain_ring_at(__FILE__, __LINE__, &b, 0);
	for (i = 0; i < 100; i++) {
		round_trip(&a, n++);
		round_trip(&b, i);
	}
	printf("a_round_trips=%llu\nb_round_trips=%d\n", n, i);
	print_line("line_a", &a);
	print_line("line_b", &b);
	hold();
	io_uring_queue_exit(&b);
	io_uring_queue_exit(&a);
	io_uring_queue_exit(&own);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "setup")) {
		check_unprivileged();
		return setup_mode(atoi(argv[2]));
	}
	if (argc == 4 && !strcmp(argv[1], "slow")) {
		check_unprivileged();
		return slow_mode(atoi(argv[2]), atoi(argv[3]));
	}
	fprintf(stderr, "usage: %s setup N | slow SPINNERS SECONDS\n", argv[0]);
	return 2;
}
