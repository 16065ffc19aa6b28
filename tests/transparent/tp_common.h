/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the RSURING_SQPOLL=1 contract tests (c_tests/transparent/),
 * on top of the shared-SQPOLL helpers of c_tests/sqpoll/sq_common.h
 * (iou-sqp thread listing, the data file) and c_tests/test_helpers.h (exit
 * codes, CHECK/T_FAIL, the watchdog, NOP helpers).
 *
 * Each program takes the expected ring mode as its first argument where it
 * matters: "plain" (no SQ thread: the library refused, or RSURING_SQPOLL is
 * unset) or "transparent" (the library gave the plain ring a shared SQ
 * thread). The ring mode is read from the kernel (fdinfo SqThread, the
 * process's iou-sqp threads), not only from ring.flags.
 *
 * The programs print nothing on stderr themselves when they pass: whatever
 * is there is the library's (its notes), for the driver to count.
 */
#ifndef TP_COMMON_H
#define TP_COMMON_H

#include "../sqpoll/sq_common.h"

#include <grp.h>
#include <sys/auxv.h>
#include <sys/prctl.h>

#define NOBODY_ID 65534

/* The SqThread line of the ring's fdinfo: the SQ thread's tid, or -1 when
 * the ring has none (or the line is absent). */
static T_UNUSED long ring_sq_thread(int ring_fd)
{
	char path[64], line[256];
	long tid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ring_fd);
	f = fopen(path, "r");
	CHECK_MSG(f != NULL, "open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SqThread:", 9))
			tid = strtol(line + 9, NULL, 10);
	fclose(f);
	return tid;
}

/* Whether `tid` is one of this process's SQ poll threads. */
static T_UNUSED int is_own_sqp_thread(long tid)
{
	char path[100], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "iou-sqp-", 8);
}

/* A plain ring: no SQPOLL in ring.flags, no SQ thread in fdinfo. (A
 * transparent ring shows no SQPOLL in ring.flags either: the application
 * sees the setup it asked for; only the kernel's fdinfo tells.) With
 * `whole_process`, no iou-sqp thread in the process either (only where the
 * program created no SQPOLL ring of its own). */
static T_UNUSED void check_plain_ring_at(const char *file, int line,
					  struct io_uring *ring, int whole_process)
{
	long tid = ring_sq_thread(ring->ring_fd);
	int threads;

	if (ring->flags & IORING_SETUP_SQPOLL)
		t_fail_at(file, line, "ring fd %d: ring.flags 0x%x has SQPOLL, want a plain ring",
			   ring->ring_fd, ring->flags);
	if (tid != -1)
		t_fail_at(file, line, "ring fd %d: fdinfo SqThread %ld, want -1 (plain ring)",
			   ring->ring_fd, tid);
	if (whole_process && (threads = count_sqp_threads()) != 0)
		t_fail_at(file, line, "%d iou-sqp thread(s) in a process whose rings must be plain",
			   threads);
}

#define CHECK_PLAIN_RING(ring) check_plain_ring_at(__FILE__, __LINE__, (ring), 1)

/* A transparent ring: ring.flags as the application asked (no SQPOLL) and
 * an SQ thread of this process in fdinfo. Returns the thread's tid. */
static T_UNUSED long check_transparent_ring_at(const char *file, int line,
						struct io_uring *ring)
{
	unsigned long long end = t_now_ms() + 2000;
	long tid = ring_sq_thread(ring->ring_fd);

	if (ring->flags & IORING_SETUP_SQPOLL)
		t_fail_at(file, line,
			   "ring fd %d: ring.flags 0x%x shows SQPOLL: a transparent ring must "
			   "look like the plain ring the application asked for",
			   ring->ring_fd, ring->flags);
	/* Until a new SQ thread first runs, fdinfo shows its creator's tid and
	 * the thread its creator's comm. */
	while (tid > 0 && !is_own_sqp_thread(tid) && t_now_ms() < end) {
		t_msleep(1);
		tid = ring_sq_thread(ring->ring_fd);
	}
	if (tid <= 0)
		t_fail_at(file, line, "ring fd %d: fdinfo SqThread %ld, want an SQ thread",
			   ring->ring_fd, tid);
	if (!is_own_sqp_thread(tid))
		t_fail_at(file, line, "ring fd %d: SqThread %ld is not an iou-sqp thread of pid %d",
			   ring->ring_fd, tid, (int)getpid());
	return tid;
}

#define CHECK_TRANSPARENT_RING(ring) check_transparent_ring_at(__FILE__, __LINE__, (ring))

/* argv[1]: "plain" -> 0, "transparent" -> 1. */
static T_UNUSED int expect_transparent(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "transparent"))
		return 1;
	if (argc >= 2 && !strcmp(argv[1], "plain"))
		return 0;
	fprintf(stderr, "usage: %s plain|transparent [...]\n", argv[0]);
	exit(2);
}

static T_UNUSED void check_ring_mode_at(const char *file, int line,
					 struct io_uring *ring, int transparent)
{
	if (transparent)
		check_transparent_ring_at(file, line, ring);
	else
		check_plain_ring_at(file, line, ring, 1);
}

#define CHECK_RING_MODE(ring, transparent)				\
	check_ring_mode_at(__FILE__, __LINE__, (ring), (transparent))

/* One field of /proc/self/status as a number (hex for the Cap* lines). */
static T_UNUSED unsigned long long status_field(const char *name, int base)
{
	char line[256];
	size_t len = strlen(name);
	unsigned long long v = 0;
	int found = 0;
	FILE *f = fopen("/proc/self/status", "r");

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = strtoull(line + len + 1, NULL, base);
			found = 1;
		}
	fclose(f);
	CHECK_MSG(found, "no %s in /proc/self/status", name);
	return v;
}

/* No capability in any set a process could use or regain. */
static T_UNUSED int has_no_capabilities(void)
{
	return status_field("CapPrm", 16) == 0 && status_field("CapEff", 16) == 0 &&
	       status_field("CapAmb", 16) == 0;
}

/* Drops a root process to nobody/nogroup for good: no supplementary
 * groups, all uids and gids 65534, no capabilities. Stays dumpable so its
 * /proc/self files remain readable to it. */
static T_UNUSED void become_nobody(void)
{
	uid_t r, e, s;

	CHECK_MSG(setgroups(0, NULL) == 0, "setgroups: %s", strerror(errno));
	CHECK_MSG(setresgid(NOBODY_ID, NOBODY_ID, NOBODY_ID) == 0, "setresgid: %s",
		  strerror(errno));
	CHECK_MSG(setresuid(NOBODY_ID, NOBODY_ID, NOBODY_ID) == 0, "setresuid: %s",
		  strerror(errno));
	CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
	CHECK(getresuid(&r, &e, &s) == 0);
	CHECK(r == NOBODY_ID && e == NOBODY_ID && s == NOBODY_ID);
	CHECK_MSG(has_no_capabilities(), "capabilities left after dropping to nobody");
}

/* The process cannot change its credentials: what the contract calls
 * unprivileged (checked before expecting a transparent ring). */
static T_UNUSED void check_unprivileged(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	CHECK(getresuid(&ru, &eu, &su) == 0 && getresgid(&rg, &eg, &sg) == 0);
	CHECK_MSG(ru != 0 && eu != 0 && su != 0, "uids %d/%d/%d: run this as an unprivileged user",
		  (int)ru, (int)eu, (int)su);
	CHECK_MSG(ru == eu && eu == su && rg == eg && eg == sg,
		  "uids %d/%d/%d gids %d/%d/%d differ", (int)ru, (int)eu, (int)su,
		  (int)rg, (int)eg, (int)sg);
	CHECK_MSG(has_no_capabilities(), "the process holds capabilities");
	CHECK_MSG(getauxval(AT_SECURE) == 0, "AT_SECURE is set");
}

/* SIGALRM after `secs`: fails the program naming `what` (a hang). */
static const char *tp_alarm_what = "";

static void tp_alarm_fired(int sig)
{
	char msg[300];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg), "FAIL hang: %s did not return within the alarm [pid %d]\n",
		     tp_alarm_what, (int)getpid());
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		_exit(T_EXIT_FAIL);
	_exit(T_EXIT_FAIL);
}

static T_UNUSED void hang_alarm(unsigned secs, const char *what)
{
	tp_alarm_what = what;
	signal(SIGALRM, tp_alarm_fired);
	alarm(secs);
}

/* Back to the progress watchdog of test_helpers.h. */
static T_UNUSED void hang_alarm_off(void)
{
	t_arm_watchdog();
}

/* Reaps `n` CQEs of NOPs (1 s timeout each), each with res 0. */
static T_UNUSED void reap_nops(struct io_uring *ring, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct __kernel_timespec ts = { 1, 0 };
		struct io_uring_cqe *cqe = NULL;
		int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

		CHECK_MSG(ret == 0, "CQE %u of %u: io_uring_wait_cqe_timeout = %d (%s)", i, n,
			  ret, strerror(-ret));
		CHECK_MSG(cqe->res == 0, "CQE %u (user_data %llu): res %d", i,
			  (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(ring, cqe);
		T_PROGRESS();
	}
}

/* 3 rings as the process is: each in the expected mode (checked when it is
 * created, with the others live), each reads the data file correctly. */
static T_UNUSED void use_rings(int transparent)
{
	struct io_uring ring[3];
	int data_fd = make_data_file();
	int i, ret;

	for (i = 0; i < 3; i++) {
		T_STEP("ring %d", i);
		ret = io_uring_queue_init(8, &ring[i], 0);
		skip_if_no_io_uring(ret);
		CHECK_MSG(ret == 0, "ring %d: setup = %d (%s)", i, ret, strerror(-ret));
		CHECK_RING_MODE(&ring[i], transparent);
		ring_io(&ring[i], data_fd, (unsigned)i);
	}
	for (i = 0; i < 3; i++)
		ring_io(&ring[i], data_fd, (unsigned)i + 3);
	for (i = 0; i < 3; i++)
		io_uring_queue_exit(&ring[i]);
	close(data_fd);
}

#endif /* TP_COMMON_H */
