/* SPDX-License-Identifier: MIT */
/*
 * Many threads create and destroy shared rings at once:
 *  - 8 threads, started together, each loop ITERS times: shared ring on
 *    cpu (thread + i) % 2, NOP round trip, every 10th time a read checked
 *    against the file, rsuring_sqpoll_group reports that cpu and 1..16
 *    members, ring exit;
 *  - round 1 keeps no other ring, so groups empty and re-form all the time
 *    (the anchor closes while others attach); afterwards no SQ thread and
 *    no fd is left;
 *  - round 2: each thread also keeps one long-lived ring on cpu thread % 2
 *    through the churn;
 *  - at the end, with the kept rings alive: exactly one SQ thread per CPU
 *    in use (2, bound to cpus 0 and 1), each group has THREADS/2 members,
 *    the kept rings still work; a ring the main thread creates now (the
 *    rings' creators have exited) joins the existing poller of its CPU;
 *  - after closing everything: the fd count equals the one before the
 *    threads started, and no SQ thread is left.
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#include <pthread.h>

#define THREADS 8
#define ITERS 100

static pthread_barrier_t start;
static int data_fd;
static struct io_uring kept[THREADS];
static int keep;

static void *churn(void *arg)
{
	int t = (int)(long)arg;
	int i;

	if (keep)
		shared_ring(&kept[t], t % 2);
	pthread_barrier_wait(&start);
	for (i = 0; i < ITERS; i++) {
		struct io_uring ring;
		struct rsuring_sqpoll_info info;
		int cpu = (t + i) % 2;
		int ret;

		ret = shared_ring_init(&ring, cpu, 4);
		CHECK_MSG(ret == 0, "thread %d iter %d: setup on cpu %d = %d (%s)", t,
			  i, cpu, ret, strerror(-ret));
		CHECK_MSG(ring.flags & IORING_SETUP_SQPOLL, "thread %d: no SQPOLL", t);
		ret = rsuring_sqpoll_group(&ring, &info);
		CHECK_MSG(ret == 0, "thread %d iter %d: group = %d", t, i, ret);
		CHECK_MSG(info.cpu == cpu && info.members >= 1 &&
			  info.members <= THREADS + THREADS,
			  "thread %d iter %d: group cpu %d members %u (ring on cpu %d)",
			  t, i, info.cpu, info.members, cpu);
		ring_nop(&ring, (unsigned long long)(t * 100000 + i));
		if (i % 10 == 0)
			ring_io(&ring, data_fd, (unsigned)(t * 3 + i));
		io_uring_queue_exit(&ring);
	}
	if (keep)
		ring_nop(&kept[t], 7);
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	int fds0, i, ret;

	data_fd = t_data_file();
	fds0 = count_fds();
	CHECK_EQ(count_sqp_threads(), 0);

	for (keep = 0; keep < 2; keep++) {
		T_STEP("churn, keep %d", keep);
		CHECK(pthread_barrier_init(&start, NULL, THREADS) == 0);
		for (i = 0; i < THREADS; i++) {
			ret = pthread_create(&th[i], NULL, churn, (void *)(long)i);
			CHECK_MSG(ret == 0, "pthread_create: %s", strerror(ret));
		}
		for (i = 0; i < THREADS; i++)
			CHECK(pthread_join(th[i], NULL) == 0);
		pthread_barrier_destroy(&start);
		if (!keep) {
			T_STEP("after the churn without kept rings");
			CHECK_EQ(count_fds(), fds0);
			CHECK_NO_POLLERS();
		}
	}
	keep = 1;

	T_STEP("kept rings after the churn");
	CHECK_POLLERS(2, 0, 1);
	for (i = 0; i < THREADS; i++)
		CHECK_GROUP(&kept[i], i % 2, THREADS / 2);
	for (i = 0; i < THREADS; i++)
		ring_io(&kept[i], data_fd, (unsigned)i);
	rings_io_concurrent(kept, THREADS, data_fd);
	CHECK_POLLERS(2, 0, 1);

	T_STEP("rings made by exited threads still anchor new ones");
	{
		struct io_uring late[2];

		for (i = 0; i < 2; i++) {
			shared_ring(&late[i], i);
			CHECK_GROUP(&late[i], i, THREADS / 2 + 1);
			ring_io(&late[i], data_fd, (unsigned)(20 + i));
		}
		CHECK_POLLERS(2, 0, 1);
		for (i = 0; i < 2; i++)
			io_uring_queue_exit(&late[i]);
		CHECK_GROUP(&kept[0], 0, THREADS / 2);
	}

	T_STEP("close the kept rings");
	exit_rings_no_leak(kept, THREADS, fds0);
	close(data_fd);
	printf("concurrency: ok (%d threads x %d rings)\n", THREADS, ITERS);
	return 0;
}
