/* SPDX-License-Identifier: MIT */
/*
 * Forked children and the parent's ring. The parent holds registered files,
 * a registered buffer and an eventfd, and a read of an empty pipe is still
 * pending when the child is made; the child exits its copy of the ring
 * (io_uring_queue_exit), or submits a NOP on it first. Children are made by
 * fork(), _Fork(), syscall(SYS_fork), a raw clone(SIGCHLD) and vfork()
 * before exec. With liburing the parent never notices: its read completes
 * with the data, its eventfd fires, read_fixed works and every unregister
 * returns 0.
 *
 * The parent submits nothing after a child submitted on the shared SQ: how
 * a library's private SQ tail catches up with one another process moved is
 * where liburing 2.3 and 2.15 differ, and not what is tested here.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define UD_PENDING 0x1
#define UD_CHILD_NOP 0x2
#define UD_READ_FIXED 0x3

struct parent {
	struct io_uring ring;
	int pipe[2];	/* read end: registered file 0 */
	int file;	/* registered file 1 */
	int efd;	/* the registered eventfd */
	char *buf;	/* registered buffer 0 */
	char data[16];	/* the pending read's target */
};

static void parent_setup(struct parent *P)
{
	struct io_uring_sqe *sqe;
	struct iovec iov;
	int files[2], ret, rf, rb, re;

	memset(P, 0, sizeof(*P));
	init_or_die(&P->ring);
	make_pipe(P->pipe);
	P->file = make_letters_file();
	P->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (P->efd < 0)
		die("eventfd: %s", strerror(errno));
	P->buf = aligned_alloc(4096, 4096);
	if (!P->buf)
		die("aligned_alloc");
	files[0] = P->pipe[0];
	files[1] = P->file;
	iov.iov_base = P->buf;
	iov.iov_len = 4096;
	rf = io_uring_register_files(&P->ring, files, 2);
	rb = io_uring_register_buffers(&P->ring, &iov, 1);
	re = io_uring_register_eventfd(&P->ring, P->efd);
	sqe = io_uring_get_sqe(&P->ring);
	io_uring_prep_read(sqe, 0, P->data, 5, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, UD_PENDING);
	ret = io_uring_submit(&P->ring);
	say("parent: register files=%s buffers=%s eventfd=%s, pending read submit=%s",
	    rstr(rf, 0), rstr(rb, 1), rstr(re, 2), rstr(ret, 3));
}

static void drain_eventfd(int efd)
{
	eventfd_t v;

	(void)eventfd_read(efd, &v);
}

static const char *eventfd_fired(int efd, int ms)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };

	return poll(&pfd, 1, ms) == 1 ? "signalled" : "not signalled";
}

/*
 * What the parent checks once its child is gone; @submit: the parent may
 * submit (no child submitted on the shared SQ).
 */
static void parent_check(struct parent *P, int submit)
{
	__u64 ud = 0;
	int res = 0, ret, i, ok;

	drain_eventfd(P->efd);
	if (write(P->pipe[1], "hello", 5) != 5)
		die("write to the pipe: %s", strerror(errno));
	ret = wait_one_within(&P->ring, 2000, &ud, &res);
	if (ret < 0)
		crit("parent: pending read: no cqe (%s)", rstr(ret, 0));
	else
		crit("parent: pending read: cqe ud=0x%llx res=%s data=%s",
		     (unsigned long long)ud, rstr(res, 0),
		     res == 5 && !memcmp(P->data, "hello", 5) ? "ok" : "bad");
	crit("parent: eventfd %s", eventfd_fired(P->efd, 1000));
	if (submit) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&P->ring);

		memset(P->buf, 0, 64);
		io_uring_prep_read_fixed(sqe, 1, P->buf, 64, 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_sqe_set_data64(sqe, UD_READ_FIXED);
		ret = io_uring_submit(&P->ring);
		res = 0;
		ud = 0;
		i = wait_one_within(&P->ring, 1000, &ud, &res);
		for (ok = res == 64, i = 0; ok && i < 64; i++)
			ok = P->buf[i] == 'a' + i % 26;
		crit("parent: read_fixed submit=%s cqe ud=0x%llx res=%s data=%s",
		     rstr(ret, 0), (unsigned long long)ud, rstr(res, 1),
		     ok ? "ok" : "bad");
	}
	crit("parent: unregister eventfd=%s buffers=%s files=%s",
	     rstr(io_uring_unregister_eventfd(&P->ring), 0),
	     rstr(io_uring_unregister_buffers(&P->ring), 1),
	     rstr(io_uring_unregister_files(&P->ring), 2));
	if (submit)
		crit("parent: after the child: %s",
		     nop_roundtrip(&P->ring, 0x4));
	io_uring_queue_exit(&P->ring);
	close(P->pipe[0]);
	close(P->pipe[1]);
	close(P->file);
	close(P->efd);
	free(P->buf);
}

enum how { BY_FORK, BY_UFORK, BY_SYSFORK, BY_CLONE };
static const char *const how_name[] = { "fork()", "_Fork()",
					"syscall(SYS_fork)",
					"clone(SIGCHLD)" };

static pid_t make_child(enum how how)
{
	pid_t pid = -1;

	fflush(stdout);
	switch (how) {
	case BY_FORK:
		pid = fork();
		break;
	case BY_UFORK:
		pid = _Fork();
		break;
	case BY_SYSFORK:
		pid = (pid_t)syscall(SYS_fork);
		break;
	case BY_CLONE:
		pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
		break;
	}
	if (pid < 0)
		die("%s: %s", how_name[how], strerror(errno));
	if (pid > 0)
		track_child(pid);
	return pid;
}

/*
 * One child made by @how: it submits a NOP on the inherited ring when
 * @child_submits, then exits its copy of the ring.
 */
static void one_child(enum how how, int child_submits)
{
	struct parent P;
	pid_t pid;

	STEP(how_name[how]);
	say("-- child made by %s %s", how_name[how],
	    child_submits ? "submits a NOP, then exits the ring" :
			    "exits the ring");
	parent_setup(&P);
	pid = make_child(how);
	if (pid == 0) {
		alarm(10);
		if (child_submits)
			say("child: %s", nop_roundtrip(&P.ring, UD_CHILD_NOP));
		io_uring_queue_exit(&P.ring);
		say("child: ring exited");
		fflush(stdout);
		_exit(0);
	}
	crit("parent: child %s", reap_child(pid, 10000));
	parent_check(&P, !child_submits);
}

/* vfork()'s child shares our memory until it execs: results go here. */
static volatile int vfork_submit_ret;
static struct parent vfork_parent;
static volatile int vfork_child_submits;

static void vfork_child(int child_submits)
{
	pid_t pid;

	STEP("vfork");
	say("-- child made by vfork() %s",
	    child_submits ? "submits a NOP, then execs /bin/true" :
			    "execs /bin/true");
	parent_setup(&vfork_parent);
	vfork_child_submits = child_submits;
	vfork_submit_ret = 0;
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		if (vfork_child_submits) {
			queue_nop(&vfork_parent.ring, UD_CHILD_NOP, 0);
			vfork_submit_ret = io_uring_submit(&vfork_parent.ring);
		}
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		die("vfork: %s", strerror(errno));
	track_child(pid);
	if (child_submits) {
		say("child: submit=%s", rstr(vfork_submit_ret, 0));
		say("parent: the child's NOP: %s",
		    cqe_str(&vfork_parent.ring, 1000));
	}
	crit("parent: child %s", reap_child(pid, 10000));
	/* The child's SQ moves were made on our own struct: we may submit. */
	parent_check(&vfork_parent, 1);
}

/*
 * The parent registered its ring fd itself (io_uring_register_ring_fd): a
 * forked child does not hold the kernel's slot, so its enters through
 * the registered index fail with liburing.
 */
static void app_registered_child(void)
{
	struct parent P;
	pid_t pid;

	STEP("app registered");
	say("-- the parent registered its ring fd; a fork() child submits");
	parent_setup(&P);
	say("parent: io_uring_register_ring_fd = %s",
	    rstr(io_uring_register_ring_fd(&P.ring), 0));
	pid = make_child(BY_FORK);
	if (pid == 0) {
		alarm(10);
		say("child: %s", nop_roundtrip(&P.ring, UD_CHILD_NOP));
		io_uring_queue_exit(&P.ring);
		fflush(stdout);
		_exit(0);
	}
	crit("parent: child %s", reap_child(pid, 10000));
	parent_check(&P, 0);
}

void sec_fork(void)
{
	enum how how;

	for (how = BY_FORK; how <= BY_CLONE; how++) {
		one_child(how, 0);
		one_child(how, 1);
	}
	vfork_child(0);
	vfork_child(1);
	app_registered_child();
}

/* ---- a fork handler installed before the first ring ----------------- */

static struct io_uring *atfork_ring;
static int atfork_ret = 1;

static void atfork_child(void)
{
	if (!atfork_ring)
		return;
	queue_nop(atfork_ring, UD_CHILD_NOP, 0);
	atfork_ret = io_uring_submit(atfork_ring);
}

void sec_fork_atfork(void)
{
	struct parent P;
	pid_t pid;

	STEP("pthread_atfork");
	if (pthread_atfork(NULL, NULL, atfork_child))
		die("pthread_atfork failed");
	say("-- an atfork child handler (installed before the first ring) submits a NOP");
	parent_setup(&P);
	atfork_ring = &P.ring;
	pid = make_child(BY_FORK);
	if (pid == 0) {
		alarm(10);
		say("child: submit in the handler=%s, %s", rstr(atfork_ret, 0),
		    cqe_str(&P.ring, 1000));
		io_uring_queue_exit(&P.ring);
		fflush(stdout);
		_exit(0);
	}
	atfork_ring = NULL;
	crit("parent: child %s", reap_child(pid, 10000));
	parent_check(&P, 0);
}

/* ---- a child that outlives the parent's ring -------------------------- */

/* Makes the pipe @go and forks a child that waits for the parent to close
 * its write end; returns make_child's result (0 in the child). */
static pid_t child_waiting_for_go(int go[2])
{
	pid_t pid;
	char c;

	make_pipe(go);
	pid = make_child(BY_FORK);
	if (pid == 0) {
		alarm(10);
		close(go[1]);
		if (read(go[0], &c, 1) != 0)
			say("child: unexpected byte");
	}
	return pid;
}

/* The parent exits its ring while the child waits, then lets the child
 * go on and reaps it. */
static void exit_ring_then_child(struct io_uring *ring, int go[2], pid_t pid)
{
	close(go[0]);
	io_uring_queue_exit(ring);
	say("parent: ring exited");
	close(go[1]);
	crit("parent: child %s", reap_child(pid, 10000));
}

void sec_fork_outlive(void)
{
	struct io_uring ring;
	int go[2], ret;
	pid_t pid;

	STEP("outlive");
	say("-- the parent exits its ring first; the child then uses its copy");
	init_or_die(&ring);
	say("parent: %s", nop_roundtrip(&ring, 0x1));
	pid = child_waiting_for_go(go);
	if (pid == 0) {
		crit("child: %s", nop_roundtrip(&ring, 0x2));
		crit("child: second %s", nop_roundtrip(&ring, 0x3));
		io_uring_queue_exit(&ring);
		fflush(stdout);
		_exit(0);
	}
	exit_ring_then_child(&ring, go, pid);

	/* The same with SQPOLL: the ring's SQ thread serves the child. */
	STEP("outlive sqpoll");
	say("-- the same on an SQPOLL ring");
	{
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 50;
		ret = io_uring_queue_init_params(8, &ring, &p);
		if (ret < 0)
			die("io_uring_queue_init_params (SQPOLL): %s",
			    rstr(ret, 0));
	}
	queue_nop(&ring, 0x1, 0);
	ret = io_uring_submit(&ring);
	say("parent: submit=%s %s", ret == 1 || ret == 0 ? "0..1" : rstr(ret, 0),
	    cqe_str(&ring, 1000));
	pid = child_waiting_for_go(go);
	if (pid == 0) {
		queue_nop(&ring, 0x2, 0);
		ret = io_uring_submit(&ring);
		crit("child: submit=%s %s",
		     ret == 1 || ret == 0 ? "0..1" : rstr(ret, 0),
		     cqe_str(&ring, 1000));
		io_uring_queue_exit(&ring);
		fflush(stdout);
		_exit(0);
	}
	exit_ring_then_child(&ring, go, pid);
}
