/* SPDX-License-Identifier: MIT */
/*
 * Overflow and signals. Uses only the liburing 2.3 API (plus rsuring's
 * extensions where <rsuring.h> is available), so the same source is built
 * twice: against our header and library, and against Debian's liburing; the
 * test driver compares the two outputs line by line.
 *
 *  1. CQ overflow: 8-entry SQ and CQ, 10,000 requests (NOPs and timeouts)
 *     in flight before anything is reaped; every user_data must come back
 *     exactly once, none lost (koverflow stays 0), overflow really happened.
 *     Plain ring and DEFER_TASKRUN ring.
 *  2. Signals: waits interrupted by SIGALRM (handler installed without
 *     SA_RESTART, and again with it) return -EINTR, and a retry then
 *     succeeds: io_uring_wait_cqe, io_uring_wait_cqe_timeout,
 *     io_uring_wait_cqes with a sigmask, io_uring_submit_and_wait,
 *     io_uring_submit_and_wait_timeout (and rsuring_wait_batch_cqe).
 *  3. SQ full under SQPOLL: a 4-entry SQPOLL ring gets 20,000 NOPs; when
 *     get_sqe finds the SQ full, io_uring_sqring_wait must make room.
 *
 * Output: one line per check, "name: result"; exit 0 pass, 1 fail. Every
 * line the liburing build prints must appear unchanged in the rsuring
 * build's output (which has more: shared SQPOLL, rsuring_wait_batch_cqe).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#ifdef WITH_RSURING
#include <rsuring.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"
#endif

static int failures;

#define EXPECT(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "FAIL line %d: ", __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			failures++;                                        \
		}                                                          \
	} while (0)

static const char *err(int ret)
{
	static char buf[8][32];
	static int slot;
	char *b = buf[slot++ % 8];
	const char *n = ret < 0 ? strerrorname_np(-ret) : NULL;

	if (n)
		snprintf(b, 32, "-%s", n);
	else
		snprintf(b, 32, "%d", ret);
	return b;
}

/* ---- 1. CQ overflow ------------------------------------------------------- */

#define OVF_TOTAL 10000

static void overflow(const char *name, unsigned flags)
{
	static unsigned char seen[OVF_TOTAL];
	static struct __kernel_timespec ts[OVF_TOTAL];
	struct io_uring ring;
	struct io_uring_params p;
	unsigned queued = 0, reaped = 0, dups = 0, unknown = 0, ebusy = 0;
	int ret, saw_overflow = 0;

	memset(&p, 0, sizeof(p));
	memset(seen, 0, sizeof(seen));
	p.flags = flags | IORING_SETUP_CQSIZE;
	p.cq_entries = 8;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret == -EINVAL && (flags & IORING_SETUP_DEFER_TASKRUN)) {
		printf("overflow %s: skipped (kernel without DEFER_TASKRUN)\n", name);
		return;
	}
	EXPECT(ret == 0, "overflow %s: init %s", name, err(ret));
	if (ret)
		return;
	EXPECT(ring.cq.ring_entries == 8, "CQ has %u entries", ring.cq.ring_entries);

	/* Everything in flight before the first reap. */
	while (queued < OVF_TOTAL) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		if (!sqe) {
			ret = io_uring_submit(&ring);
			if (ret == -EBUSY) {
				/* the kernel wants the CQ drained first */
				ebusy++;
				goto reap_one;
			}
			EXPECT(ret >= 0, "submit: %s", err(ret));
			if (ret < 0)
				break;
			continue;
		}
		if (queued % 3 == 2) {
			ts[queued].tv_sec = 0;
			ts[queued].tv_nsec = (queued % 7) * 1000; /* 0 .. 6 us */
			io_uring_prep_timeout(sqe, &ts[queued], queued % 5 == 0 ? 1 : 0, 0);
		} else {
			io_uring_prep_nop(sqe);
		}
		sqe->user_data = queued++;
		continue;
reap_one:
		{
			struct io_uring_cqe *cqe;
			if (io_uring_wait_cqe(&ring, &cqe) == 0) {
				if (cqe->user_data < OVF_TOTAL && !seen[cqe->user_data]++)
					reaped++;
				else
					dups++;
				io_uring_cqe_seen(&ring, cqe);
			}
		}
	}
	ret = io_uring_submit(&ring);
	EXPECT(ret >= 0, "final submit: %s", err(ret));
	/* Let every timeout fire so all CQEs exist before reaping. */
	usleep(20000);
	saw_overflow = io_uring_cq_has_overflow(&ring) || *ring.cq.koverflow;

	while (reaped < OVF_TOTAL) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec t = { 1, 0 };
		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &t);
		if (ret) {
			EXPECT(0, "overflow %s: wait %s after %u of %u CQEs", name,
			      err(ret), reaped, OVF_TOTAL);
			break;
		}
		if (cqe->user_data >= OVF_TOTAL)
			unknown++;
		else if (seen[cqe->user_data]++)
			dups++;
		else
			reaped++;
		io_uring_cqe_seen(&ring, cqe);
	}
	/* Nothing more may arrive. */
	{
		struct io_uring_cqe *cqe;
		struct __kernel_timespec t = { 0, 10000000 };
		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &t);
		EXPECT(ret == -ETIME, "extra CQE after all %u (%s)", OVF_TOTAL, err(ret));
	}
	EXPECT(reaped == OVF_TOTAL && !dups && !unknown,
	      "overflow %s: %u of %u reaped, %u duplicates, %u unknown", name,
	      reaped, OVF_TOTAL, dups, unknown);
	EXPECT(*ring.cq.koverflow == 0, "kernel dropped %u CQEs", *ring.cq.koverflow);
	EXPECT(saw_overflow, "overflow %s: the CQ never overflowed", name);
	printf("overflow %s: %u requests, 8-entry CQ, overflowed %s, reaped %u, "
	       "duplicates %u, unknown %u, dropped %u\n",
	       name, OVF_TOTAL, saw_overflow ? "yes" : "no", reaped, dups, unknown,
	       *ring.cq.koverflow);
	(void)ebusy; /* kernel-dependent: not printed, so outputs compare */
	io_uring_queue_exit(&ring);
}

/* ---- 2. signals ------------------------------------------------------------ */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void arm(int restart)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 50000 } }; /* 50 ms, once */

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
}

static void post_nop(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 77;
}

enum wait_kind { W_WAIT_CQE, W_WAIT_CQE_TIMEOUT, W_WAIT_CQES_SIGMASK,
		 W_SUBMIT_AND_WAIT, W_SUBMIT_AND_WAIT_TIMEOUT, W_BATCH };

static const char *const wait_names[] = {
	"io_uring_wait_cqe", "io_uring_wait_cqe_timeout(5 s)",
	"io_uring_wait_cqes(sigmask)", "io_uring_submit_and_wait(1)",
	"io_uring_submit_and_wait_timeout(5 s)", "rsuring_wait_batch_cqe(5 s)",
};

static int do_wait(struct io_uring *ring, enum wait_kind k)
{
	struct io_uring_cqe *cqe = NULL;
	struct __kernel_timespec ts = { 5, 0 };
	sigset_t mask;
	int ret = -ENOSYS;

	switch (k) {
	case W_WAIT_CQE:
		ret = io_uring_wait_cqe(ring, &cqe);
		break;
	case W_WAIT_CQE_TIMEOUT:
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		break;
	case W_WAIT_CQES_SIGMASK:
		sigemptyset(&mask);
		sigaddset(&mask, SIGUSR1);
		ret = io_uring_wait_cqes(ring, &cqe, 1, NULL, &mask);
		break;
	case W_SUBMIT_AND_WAIT:
		ret = io_uring_submit_and_wait(ring, 1);
		if (ret >= 0)
			ret = io_uring_peek_cqe(ring, &cqe);
		break;
	case W_SUBMIT_AND_WAIT_TIMEOUT:
		ret = io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
		break;
	case W_BATCH:
#ifdef WITH_RSURING
		{
			struct io_uring_cqe *cqes[4];
			ret = rsuring_wait_batch_cqe(ring, cqes, 4, 1, &ts);
			if (ret > 0) {
				cqe = cqes[0];
				ret = 0;
			}
		}
#endif
		break;
	}
	if (ret >= 0 && cqe) {
		if (cqe->user_data != 77)
			ret = -EPROTO;
		io_uring_cqe_seen(ring, cqe);
		return ret > 0 ? 0 : ret;
	}
	return ret < 0 ? ret : -ENODATA;
}

static void signals(const char *ring_name, unsigned flags, int restart)
{
	for (int k = W_WAIT_CQE; k <= W_BATCH; k++) {
		struct io_uring ring;
		struct io_uring_params p;
		int first, retry, ret;

#ifndef WITH_RSURING
		if (k == W_BATCH)
			continue;
#endif
		memset(&p, 0, sizeof(p));
		p.flags = flags;
		p.sq_thread_idle = 10;
		ret = io_uring_queue_init_params(8, &ring, &p);
		if (ret) {
			printf("signal %s %s%s: ring setup %s\n", ring_name,
			       wait_names[k], restart ? " SA_RESTART" : "", err(ret));
			continue;
		}
		alarms = 0;
		arm(restart);
		first = do_wait(&ring, (enum wait_kind)k);
		disarm();
		/* Now a completion exists: the retry must get it. */
		post_nop(&ring);
		if (k != W_SUBMIT_AND_WAIT && k != W_SUBMIT_AND_WAIT_TIMEOUT) {
			ret = io_uring_submit(&ring);
			EXPECT(ret == 1, "submit NOP: %s", err(ret));
		}
		retry = do_wait(&ring, (enum wait_kind)k);
		EXPECT(first == -EINTR, "%s on a %s ring%s: %s, want -EINTR",
		      wait_names[k], ring_name, restart ? " (SA_RESTART)" : "",
		      err(first));
		EXPECT(retry == 0, "%s retry on a %s ring: %s", wait_names[k],
		      ring_name, err(retry));
		EXPECT(alarms == 1, "%d alarms", (int)alarms);
		printf("signal %s %s%s: interrupted %s, retry %s\n", ring_name,
		       wait_names[k], restart ? " SA_RESTART" : "", err(first),
		       err(retry));
		io_uring_queue_exit(&ring);
	}
}

/* ---- 3. SQ full under SQPOLL ------------------------------------------------ */

#define SQF_TOTAL 20000

static void sq_full(const char *name, unsigned flags)
{
	static unsigned char seen[SQF_TOTAL];
	struct io_uring ring;
	struct io_uring_params p;
	unsigned queued = 0, reaped = 0, full = 0, waits_ok = 0, bad = 0, rewaits = 0;
	int ret;

	memset(&p, 0, sizeof(p));
	memset(seen, 0, sizeof(seen));
	p.flags = flags | IORING_SETUP_SQPOLL | IORING_SETUP_CQSIZE;
	p.cq_entries = 64;
	p.sq_thread_idle = 2;
	ret = io_uring_queue_init_params(4, &ring, &p);
	EXPECT(ret == 0, "sq_full %s: init %s", name, err(ret));
	if (ret)
		return;
	while (queued < SQF_TOTAL || reaped < queued) {
		struct io_uring_cqe *cqe;

		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->user_data >= SQF_TOTAL || seen[cqe->user_data]++)
				bad++;
			else
				reaped++;
			io_uring_cqe_seen(&ring, cqe);
		}
		if (queued == SQF_TOTAL) {
			struct __kernel_timespec t = { 1, 0 };
			if (reaped == queued)
				break;
			ret = io_uring_wait_cqe_timeout(&ring, &cqe, &t);
			if (ret == -ETIME) {
				EXPECT(0, "sq_full %s: %u of %u NOPs never completed",
				      name, queued - reaped, queued);
				break;
			}
			continue;
		}
		/* keep the CQ from overflowing: at most 48 in flight */
		if (queued - reaped >= 48) {
			ret = io_uring_wait_cqe(&ring, &cqe);
			EXPECT(ret == 0, "wait: %s", err(ret));
			continue;
		}
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		if (!sqe) {
			/*
			 * Full: wait for the poller to make room. The kernel may
			 * wake us a moment before it publishes its new SQ head,
			 * so a wait can return with the SQ still full: wait again
			 * (a bounded number of times).
			 */
			full++;
			ret = io_uring_submit(&ring);
			EXPECT(ret >= 0, "submit: %s", err(ret));
			for (int tries = 0; tries < 1000; tries++) {
				ret = io_uring_sqring_wait(&ring);
				EXPECT(ret >= 0, "io_uring_sqring_wait: %s", err(ret));
				if (ret < 0)
					break;
				if (io_uring_sq_space_left(&ring) > 0) {
					waits_ok++;
					break;
				}
				rewaits++;
			}
			continue;
		}
		io_uring_prep_nop(sqe);
		sqe->user_data = queued++;
		/* flush every 4th so the SQ does fill up */
		if (queued % 4 == 0) {
			ret = io_uring_submit(&ring);
			EXPECT(ret >= 0, "submit: %s", err(ret));
		}
	}
	EXPECT(!bad && reaped == SQF_TOTAL, "sq_full %s: reaped %u of %u, %u bad",
	      name, reaped, SQF_TOTAL, bad);
	EXPECT(full > 0, "sq_full %s: the SQ never filled up", name);
	EXPECT(waits_ok == full, "sq_full %s: io_uring_sqring_wait made room %u of %u times",
	      name, waits_ok, full);
	/* __io_uring_sqring_wait on a ring with room returns at once */
	ret = __io_uring_sqring_wait(&ring);
	EXPECT(ret >= 0, "__io_uring_sqring_wait with room: %s", err(ret));
	printf("sq_full %s: %u NOPs through a 4-entry SQPOLL SQ, completed once each: %s; "
	       "io_uring_sqring_wait made room every time the SQ was full: %s\n",
	       name, SQF_TOTAL, !bad && reaped == SQF_TOTAL ? "yes" : "no",
	       full > 0 && waits_ok == full ? "yes" : "no");
	fprintf(stderr, "sq_full %s: SQ full %u times, %u waits returned before the "
		"kernel published its SQ head\n", name, full, rewaits);
	io_uring_queue_exit(&ring);
}

int main(void)
{
	overflow("plain", 0);
	overflow("defer_taskrun", IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);

	signals("plain", 0, 0);
	signals("plain", 0, 1);
	signals("sqpoll", IORING_SETUP_SQPOLL, 0);
	signals("defer_taskrun", IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, 0);
	sq_full("sqpoll", 0);
#ifdef WITH_RSURING
	/* rsuring only (the driver compares the lines both builds print) */
	signals("shared-sqpoll", IORING_SETUP_SQPOLL | IORING_SETUP_SQPOLL_PERCPU, 0);
	sq_full("shared-sqpoll", IORING_SETUP_SQPOLL_PERCPU);
#endif

	fprintf(stderr, "overflow_signals: %d failures\n", failures);
	return failures ? 1 : 0;
}
