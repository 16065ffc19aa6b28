/* SPDX-License-Identifier: MIT */
/*
 * Statistics that survive real programs (driven by tests/stats.rs, which
 * sets RSURING_STATS and checks the lines). argv[1]:
 *
 *  nop-exit     ring A: 1000 NOPs in a known pattern, then exit() without
 *               io_uring_queue_exit; ring B: 7 NOPs, torn down properly
 *               before. Expected lines: A sqes=cqes=1000 enters=100
 *               (50 submit, 50 wait) reap_batches=100 reap_max=10
 *               end=process_exit; B sqes=cqes=7 enters=1 end=ring_exit.
 *  thread-exit  ring A's workload, then another thread calls exit() while
 *               main waits in pthread_join: A is still reported.
 *  fork         parent: 100 NOPs on A, fork; child: 30 NOPs on its own
 *               ring C, exit(); parent: 50 more on A, returns from main.
 *               The child reports C only (A is the parent's, untouched by
 *               the child), the parent A (sqes=cqes=150). (A ring cannot be
 *               used by both: each process's SQ tail is its own copy.)
 *  threads      one thread submits 500,000 NOPs while another reaps them;
 *               rsuring_ring_stats then says exactly 500,000 and 500,000,
 *               with reap_max within the CQ size (no env needed).
 *  format       rsuring_stats_format: lengths, truncation, errors.
 *
 * Prints "pid=P ring_a=FD ring_b=FD ..." on stdout for the driver.
 */
#include <rsuring.h>
#include <pthread.h>
#include <sys/wait.h>
#include "../rsuring_test.h"

#define BATCH 10

/* 50 x (submit 10, reap inline) + 50 x (submit_and_wait 10, reap inline):
 * 100 enters, 100 reap batches of 10. */
static void known_workload(struct io_uring *ring, int rounds)
{
	int r, i;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < BATCH; i++)
			io_uring_prep_nop(t_get_sqe(ring));
		if (r % 2 == 0)
			CHECK_EQ(io_uring_submit(ring), BATCH);
		else
			CHECK_EQ(io_uring_submit_and_wait(ring, BATCH), BATCH);
		for (i = 0; i < BATCH; i++)
			t_reap(ring);
	}
}

static struct io_uring ring_a;

static void *exit_thread(void *arg)
{
	(void)arg;
	fflush(stdout);
	exit(0);
}

static int nop_exit(int from_thread)
{
	struct io_uring ring_b;
	pthread_t t;

	T_STEP("ring A");
	CHECK_OK(io_uring_queue_init(64, &ring_a, 0));
	known_workload(&ring_a, 100);
	T_STEP("ring B");
	CHECK_OK(io_uring_queue_init(16, &ring_b, 0));
	for (int i = 0; i < 7; i++)
		io_uring_prep_nop(t_get_sqe(&ring_b));
	CHECK_EQ(io_uring_submit_and_wait(&ring_b, 7), 7);
	for (int i = 0; i < 7; i++)
		t_reap(&ring_b);
	printf("pid=%d ring_a=%d ring_b=%d\n", getpid(), ring_a.ring_fd,
	       ring_b.ring_fd);
	io_uring_queue_exit(&ring_b);
	if (!from_thread) {
		fflush(stdout);
		exit(0);
	}
	CHECK(pthread_create(&t, NULL, exit_thread, NULL) == 0);
	pthread_join(t, NULL);
	T_FAIL("exit() in the other thread returned");
}

static void nops(struct io_uring *ring, int n)
{
	for (int i = 0; i < n; i++) {
		io_uring_prep_nop(t_get_sqe(ring));
		CHECK_EQ(io_uring_submit_and_wait(ring, 1), 1);
		t_reap(ring);
	}
}

static int fork_mode(void)
{
	struct io_uring ring_c;
	int status;
	pid_t child;

	CHECK_OK(io_uring_queue_init(64, &ring_a, 0));
	nops(&ring_a, 100);
	fflush(stdout);
	child = fork();
	CHECK_SYS(child);
	if (child == 0) {
		CHECK_OK(io_uring_queue_init(8, &ring_c, 0));
		nops(&ring_c, 30);
		printf("child=%d ring_c=%d\n", getpid(), ring_c.ring_fd);
		fflush(stdout);
		exit(0);
	}
	CHECK_SYS(waitpid(child, &status, 0));
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child status 0x%x", status);
	nops(&ring_a, 50);
	printf("parent=%d ring_a=%d\n", getpid(), ring_a.ring_fd);
	return 0;
}

#define THREAD_NOPS 500000
#define THREAD_DEPTH 256
static unsigned long reaped;

/* Reaps through library calls (each looks at the CQ head, as the
 * submitter's submit calls do at the same time), waiting when empty. */
static void pin_to(int cpu)
{
	cpu_set_t set;

	/* Both threads on CPUs of their own overlap most (best effort). */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *reaper(void *arg)
{
	struct io_uring *ring = arg;
	struct io_uring_cqe *cqes[64];
	unsigned long done = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		pin_to(1);
	while (done < THREAD_NOPS) {
		unsigned n = io_uring_peek_batch_cqe(ring, cqes, 64);

		if (!n) {
			struct io_uring_cqe *cqe;

			CHECK_OK(io_uring_wait_cqe(ring, &cqe));
			continue;
		}
		io_uring_cq_advance(ring, n);
		done += n;
		__atomic_store_n(&reaped, done, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int threads_mode(void)
{
	struct rsuring_stats s;
	unsigned long sent = 0;
	pthread_t t;

	CHECK_OK(io_uring_queue_init(THREAD_DEPTH, &ring_a, 0));
	CHECK_OK(rsuring_stats_enable(&ring_a));
	CHECK(pthread_create(&t, NULL, reaper, &ring_a) == 0);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		pin_to(0);
	while (sent < THREAD_NOPS) {
		unsigned long inflight = sent - __atomic_load_n(&reaped, __ATOMIC_ACQUIRE);
		unsigned n = 4;

		if (inflight + n > THREAD_DEPTH) {
			sched_yield();
			continue;
		}
		if (n > THREAD_NOPS - sent)
			n = THREAD_NOPS - sent;
		for (unsigned i = 0; i < n; i++)
			io_uring_prep_nop(t_get_sqe(&ring_a));
		CHECK_EQ(io_uring_submit(&ring_a), n);
		sent += n;
	}
	pthread_join(t, NULL);
	CHECK_OK(rsuring_ring_stats(&ring_a, &s));
	printf("sqes=%llu cqes=%llu reap_batches=%llu reap_max=%llu enters_submit=%llu enters_wait=%llu\n",
	       (unsigned long long)s.sqes_submitted, (unsigned long long)s.cqes_reaped,
	       (unsigned long long)s.reap_batches, (unsigned long long)s.reap_max,
	       (unsigned long long)s.enters_submit, (unsigned long long)s.enters_wait);
	CHECK_EQ(s.sqes_submitted, THREAD_NOPS);
	CHECK_EQ(s.cqes_reaped, THREAD_NOPS);
	CHECK(s.reap_max >= 1 && s.reap_max <= ring_a.cq.ring_entries);
	CHECK(s.reap_batches >= 1 && s.reap_batches <= THREAD_NOPS);
	CHECK_EQ(s.enters_submit, THREAD_NOPS / 4);
	io_uring_queue_exit(&ring_a);
	return 0;
}

static int format_mode(void)
{
	struct io_uring plain;
	char buf[600], small[16];
	int len;

	CHECK_OK(io_uring_queue_init(8, &ring_a, 0));
	CHECK_OK(io_uring_queue_init(8, &plain, 0));
	CHECK_EQ(rsuring_stats_format(NULL, buf, sizeof(buf)), -EFAULT);
	CHECK_EQ(rsuring_stats_format(&ring_a, NULL, 5), -EFAULT);
	if (!getenv("RSURING_STATS"))
		CHECK_EQ(rsuring_stats_format(&plain, buf, sizeof(buf)), -ENOENT);
	CHECK_OK(rsuring_stats_enable(&ring_a));
	CHECK_OK(rsuring_stats_enable(&ring_a));
	nops(&ring_a, 3);
	len = rsuring_stats_format(&ring_a, NULL, 0);
	CHECK_GE(len, 100);
	CHECK_EQ(rsuring_stats_format(&ring_a, buf, sizeof(buf)), len);
	CHECK_EQ((int)strlen(buf), len);
	CHECK_MSG(strncmp(buf, "rsuring: pid=", 13) == 0, "%s", buf);
	CHECK_MSG(strstr(buf, " sqes=3 cqes=3 ") != NULL, "%s", buf);
	CHECK_MSG(strstr(buf, " end=") == NULL, "%s", buf);
	CHECK_EQ(rsuring_stats_format(&ring_a, small, sizeof(small)), len);
	CHECK_EQ((int)strlen(small), (int)sizeof(small) - 1);
	CHECK(strncmp(small, buf, sizeof(small) - 1) == 0);
	printf("%s\n", buf);
	io_uring_queue_exit(&plain);
	io_uring_queue_exit(&ring_a);
	CHECK_EQ(rsuring_stats_format(&ring_a, buf, sizeof(buf)), -EBADF);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "nop-exit"))
		return nop_exit(0);
	if (!strcmp(mode, "thread-exit"))
		return nop_exit(1);
	if (!strcmp(mode, "fork"))
		return fork_mode();
	if (!strcmp(mode, "threads"))
		return threads_mode();
	if (!strcmp(mode, "format"))
		return format_mode();
	fprintf(stderr, "unknown mode %s\n", mode);
	return 2;
}
