/* SPDX-License-Identifier: MIT */
/*
 * Fault injection for the engine's tests (LD_PRELOAD, never shipped).
 *
 * An SQ poll thread posts the completions of a batch before it publishes
 * the SQ head that frees the batch's slots. An application that reaps those
 * completions and queues new requests can therefore find its SQ "full"
 * although fewer requests than the ring has slots are in flight. On an idle
 * machine that window is a few hundred nanoseconds; when the SQ thread's CPU
 * is preempted (a busy host) it lasts as long as the preemption.
 *
 * This library widens the window so that the tests meet it every run: for
 * each SQPOLL ring set up with io_uring_queue_init_params it points the
 * ring's sq.khead at a copy that a helper thread refreshes every LAG_US
 * microseconds with the value the real head had LAG_US earlier. The
 * application sees SQ slots freed late, never early, so no SQE the kernel
 * has yet to read is ever reused: only the timing of "full" changes.
 *
 * RSURING_TEST_SQ_HEAD_LAG_US=N sets the lag (default 200). When the
 * library lags a ring it says so once on stderr, so a test can check that
 * the injection was active.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

struct lagged_ring {
	struct io_uring *ring;
	unsigned *real_head;
	unsigned visible_head;	/* what ring->sq.khead points at */
	int stop;
	pthread_t thread;
	struct lagged_ring *next;
};

typedef int (*init_params_fn)(unsigned, struct io_uring *,
			      struct io_uring_params *);
typedef void (*queue_exit_fn)(struct io_uring *);

static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lagged_ring *rings;
static int announced;

/*
 * The engine is dlopen()ed without RTLD_GLOBAL, so its liburing.so.2 is
 * not behind us in the global scope: find it by its SONAME.
 */
static void *real_symbol(const char *name, const char *version)
{
	void *lib = dlopen("liburing.so.2", RTLD_NOW | RTLD_NOLOAD);
	void *sym;

	if (!lib)
		return NULL;
	sym = dlvsym(lib, name, version);
	dlclose(lib);
	return sym;
}

static long lag_us(void)
{
	const char *s = getenv("RSURING_TEST_SQ_HEAD_LAG_US");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 ? v : 200;
}

static void *refresh_head(void *arg)
{
	struct lagged_ring *lr = arg;
	long us = lag_us();
	struct timespec pause = { us / 1000000, (us % 1000000) * 1000 };
	unsigned earlier = __atomic_load_n(lr->real_head, __ATOMIC_ACQUIRE);

	while (!__atomic_load_n(&lr->stop, __ATOMIC_ACQUIRE)) {
		unsigned now;

		nanosleep(&pause, NULL);
		now = __atomic_load_n(lr->real_head, __ATOMIC_ACQUIRE);
		/* Release: pairs with the application's acquire of khead. */
		__atomic_store_n(&lr->visible_head, earlier, __ATOMIC_RELEASE);
		earlier = now;
	}
	return NULL;
}

int io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
			       struct io_uring_params *p)
{
	init_params_fn real = (init_params_fn)
		real_symbol("io_uring_queue_init_params", "LIBURING_2.0");
	struct lagged_ring *lr;
	int ret;

	if (!real)
		return -ENOSYS;
	ret = real(entries, ring, p);
	if (ret < 0 || !(ring->flags & IORING_SETUP_SQPOLL))
		return ret;

	lr = calloc(1, sizeof(*lr));
	if (!lr)
		return ret;	/* the ring works, just without the lag */
	lr->ring = ring;
	lr->real_head = ring->sq.khead;
	lr->visible_head = *ring->sq.khead;
	if (pthread_create(&lr->thread, NULL, refresh_head, lr)) {
		free(lr);
		return ret;
	}
	ring->sq.khead = &lr->visible_head;

	pthread_mutex_lock(&rings_lock);
	lr->next = rings;
	rings = lr;
	if (!announced) {
		announced = 1;
		fprintf(stderr, "late_sq_head: SQ head shown %ld us late\n",
			lag_us());
	}
	pthread_mutex_unlock(&rings_lock);
	return ret;
}

void io_uring_queue_exit(struct io_uring *ring)
{
	queue_exit_fn real = (queue_exit_fn)
		real_symbol("io_uring_queue_exit", "LIBURING_2.0");
	struct lagged_ring **pp, *lr = NULL;

	pthread_mutex_lock(&rings_lock);
	for (pp = &rings; *pp; pp = &(*pp)->next) {
		if ((*pp)->ring == ring) {
			lr = *pp;
			*pp = lr->next;
			break;
		}
	}
	pthread_mutex_unlock(&rings_lock);
	if (lr) {
		__atomic_store_n(&lr->stop, 1, __ATOMIC_RELEASE);
		pthread_join(lr->thread, NULL);
		ring->sq.khead = lr->real_head;
		free(lr);
	}
	if (real)
		real(ring);
}
