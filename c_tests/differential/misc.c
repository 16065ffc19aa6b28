/* SPDX-License-Identifier: MIT */
/*
 * Eventfd, personalities, io-wq settings, restrictions, MSG_RING, probes
 * and registered ring fds.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <sched.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

/* One NOP through @ring, reaped with a timeout. */
static void round_trip(struct io_uring *ring, __u64 ud)
{
	queue_nop(ring, ud, 0);
	show_ret("submit", io_uring_submit(ring));
	show_cqes(ring, 1, 1000, NULL);
}

static int eventfd_signalled(int efd)
{
	eventfd_t v = 0;

	return eventfd_read(efd, &v) == 0 && v > 0;
}

static void sec_eventfd(struct io_uring *ring)
{
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	STEP("eventfd");
	say("-- eventfd");
	show_ret("register_eventfd", io_uring_register_eventfd(ring, efd));
	show_ret("register_eventfd twice", io_uring_register_eventfd(ring, efd));
	say("cq_eventfd_enabled = %d", io_uring_cq_eventfd_enabled(ring));
	round_trip(ring, 0x11);
	say("eventfd signalled = %d", eventfd_signalled(efd));
	show_ret("cq_eventfd_toggle(false)",
		 io_uring_cq_eventfd_toggle(ring, false));
	say("cq_eventfd_enabled = %d", io_uring_cq_eventfd_enabled(ring));
	round_trip(ring, 0x12);
	say("eventfd signalled = %d", eventfd_signalled(efd));
	show_ret("cq_eventfd_toggle(true)", io_uring_cq_eventfd_toggle(ring, true));
	show_ret_twice("unregister_eventfd", io_uring_unregister_eventfd(ring));
	show_ret("register_eventfd_async",
		 io_uring_register_eventfd_async(ring, efd));
	round_trip(ring, 0x13);
	say("eventfd signalled by an inline completion = %d",
	    eventfd_signalled(efd));
	show_ret("unregister_eventfd", io_uring_unregister_eventfd(ring));
	close(efd);
}

void sec_register_misc(void)
{
	struct io_uring_restriction res[1];
	unsigned int workers[2];
	struct io_uring_sqe *sqe;
	struct io_uring ring, other;
	cpu_set_t cpus;
	char buf[8];
	int id;

	need(init_ring(&ring, 16, 0, "init 16"), "init");
	sec_eventfd(&ring);

	STEP("personality");
	say("-- personality");
	id = io_uring_register_personality(&ring);
	show_ret("register_personality", id);
	sqe = sqe_of(&ring);
	io_uring_prep_nop(sqe);
	sqe->personality = (__u16)id;
	io_uring_sqe_set_data64(sqe, 0x21);
	sqe = sqe_of(&ring);
	io_uring_prep_nop(sqe);
	sqe->personality = 999;
	io_uring_sqe_set_data64(sqe, 0x22);
	submit_show(&ring, "submit NOPs with the id and with 999", 2);
	show_ret_twice("unregister_personality",
		       io_uring_unregister_personality(&ring, id));

	STEP("io-wq");
	say("-- io-wq max workers and affinity");
	workers[0] = workers[1] = 0;
	show_ret("register_iowq_max_workers(get)",
		 io_uring_register_iowq_max_workers(&ring, workers));
	say("workers: bounded=%u unbounded=%u", workers[0], workers[1]);
	workers[0] = 2;
	workers[1] = 3;
	show_ret("register_iowq_max_workers(set 2, 3)",
		 io_uring_register_iowq_max_workers(&ring, workers));
	workers[0] = workers[1] = 0;
	show_ret("register_iowq_max_workers(get)",
		 io_uring_register_iowq_max_workers(&ring, workers));
	say("workers: bounded=%u unbounded=%u", workers[0], workers[1]);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	show_ret("register_iowq_aff({0})",
		 io_uring_register_iowq_aff(&ring, sizeof(cpus), &cpus));
	show_ret("unregister_iowq_aff", io_uring_unregister_iowq_aff(&ring));

	STEP("msg_ring");
	say("-- MSG_RING to another ring, and to an fd that is not a ring");
	need(init_ring(&other, 8, 0, "init other"), "init");
	queue_op(&ring, 0x31, io_uring_prep_msg_ring, other.ring_fd, 0x77, 0x88,
		 0);
	submit_show(&ring, "submit", 1);
	say("other ring:");
	show_cqes(&other, 1, 1000, NULL);
	queue_op(&ring, 0x32, io_uring_prep_msg_ring, STDIN_FILENO, 0x77, 0x88,
		 0);
	submit_show(&ring, "submit", 1);
	io_uring_queue_exit(&other);
	io_uring_queue_exit(&ring);

	STEP("restrictions");
	say("-- R_DISABLED ring restricted to NOP");
	need(init_ring(&ring, 8, IORING_SETUP_R_DISABLED, "init R_DISABLED"),
	     "init");
	memset(res, 0, sizeof(res));
	res[0].opcode = IORING_RESTRICTION_SQE_OP;
	res[0].sqe_op = IORING_OP_NOP;
	/* liburing 2.3 declares io_uring_register_restrictions and
	 * io_uring_enable_rings but does not export them. */
	show_ret("register RESTRICTIONS",
		 io_uring_register(ring.ring_fd, IORING_REGISTER_RESTRICTIONS,
				   res, 1));
	queue_nop(&ring, 0x41, 0);
	show_ret("submit while disabled", io_uring_submit(&ring));
	show_ret("register ENABLE_RINGS",
		 io_uring_register(ring.ring_fd, IORING_REGISTER_ENABLE_RINGS,
				   NULL, 0));
	submit_show(&ring, "submit", 1);
	queue_op(&ring, 0x42, io_uring_prep_read, STDIN_FILENO, buf,
		 sizeof(buf), 0);
	submit_show(&ring, "submit a read", 1);
	show_ret("register RESTRICTIONS once enabled",
		 io_uring_register(ring.ring_fd, IORING_REGISTER_RESTRICTIONS,
				   res, 1));
	io_uring_queue_exit(&ring);
}

static void show_probe(const char *what, struct io_uring_probe *probe)
{
	char line[1024];
	size_t used = 0;
	int op;

	if (!probe) {
		say("%s: NULL", what);
		return;
	}
	for (op = 0; op <= probe->last_op && used < sizeof(line) - 8; op++)
		if (io_uring_opcode_supported(probe, op))
			used += (size_t)snprintf(line + used,
						 sizeof(line) - used, " %d",
						 op);
	line[used] = '\0';
	say("%s: last_op=%u ops_len=%u supported:%s", what, probe->last_op,
	    probe->ops_len, line);
	say("  NOP=%d READ=%d op 255=%d",
	    io_uring_opcode_supported(probe, IORING_OP_NOP),
	    io_uring_opcode_supported(probe, IORING_OP_READ),
	    io_uring_opcode_supported(probe, 255));
}

void sec_probe(void)
{
	struct io_uring_probe *probe;
	struct io_uring ring;
	size_t len;

	need(init_ring(&ring, 8, 0, "init 8"), "init");
	STEP("probes");
	say("-- io_uring_get_probe_ring, io_uring_get_probe, register_probe");
	probe = io_uring_get_probe_ring(&ring);
	show_probe("get_probe_ring", probe);
	io_uring_free_probe(probe);
	probe = io_uring_get_probe();
	show_probe("get_probe", probe);
	io_uring_free_probe(probe);
	len = sizeof(*probe) + 256 * sizeof(struct io_uring_probe_op);
	probe = calloc(1, len);
	show_ret("register_probe(256)", io_uring_register_probe(&ring, probe,
								 256));
	show_probe("register_probe", probe);
	memset(probe, 0, len);
	show_ret("register_probe(256) twice on the same ring",
		 io_uring_register_probe(&ring, probe, 256));
	free(probe);
	io_uring_queue_exit(&ring);
}

static void ring_fd_on(unsigned flags, const char *name)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	struct io_uring ring;

	STEP(name);
	say("-- registered ring fd, %s", name);
	if (init_ring(&ring, 8, flags, "init") < 0)
		return;
	show_ret("register_ring_fd", io_uring_register_ring_fd(&ring));
	round_trip(&ring, 0x11);
	queue_nop(&ring, 0x12, 0);
	ts = t_timeout_ms(1000);
	cqe = NULL;
	show_ret("submit_and_wait_timeout(1, 1 s)",
		 io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts, NULL));
	show_cqes(&ring, 1, 1000, NULL);
	show_ret("unregister_ring_fd", io_uring_unregister_ring_fd(&ring));
	round_trip(&ring, 0x13);
	io_uring_queue_exit(&ring);
}

/* A fork()ed child submits on its parent's SINGLE_ISSUER ring: the kernel
 * refuses (the child is not the ring's task). (A plain ring shared with a
 * child works, but leaves the parent's private SQ state behind the
 * kernel's, which is the application's problem, not a library's.) */
static void child_submits(unsigned flags, const char *name)
{
	struct io_uring ring;
	int status = 0;
	pid_t pid;

	STEP(name);
	say("-- a forked child submits on its parent's %s ring", name);
	if (init_ring(&ring, 8, flags, "init") < 0)
		return;
	round_trip(&ring, 0x31);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		queue_nop(&ring, 0x32, 0);
		show_ret("child: submit", io_uring_submit(&ring));
		show_cqes(&ring, 0, 0, NULL);
		fflush(stdout);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	say("child exit status %d", WIFEXITED(status) ? WEXITSTATUS(status)
						       : -1);
	say("parent: sq_ready=%u", io_uring_sq_ready(&ring));
	show_cqes(&ring, 0, 200, NULL);
	round_trip(&ring, 0x33);
	io_uring_queue_exit(&ring);
}

#define SI_RINGS 8
#define APP_RINGS 16

void sec_ring_fds(void)
{
	struct io_uring si[SI_RINGS], app[APP_RINGS];
	char what[64];
	int i;

	ring_fd_on(0, "plain");
	ring_fd_on(IORING_SETUP_SINGLE_ISSUER, "SINGLE_ISSUER");
	ring_fd_on(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		   "SINGLE_ISSUER|DEFER_TASKRUN");
	child_submits(IORING_SETUP_SINGLE_ISSUER, "SINGLE_ISSUER");

	STEP("the thread's 16 slots");
	say("-- 8 SINGLE_ISSUER rings, then 16 rings that register their fd");
	for (i = 0; i < SI_RINGS; i++)
		need(io_uring_queue_init(4, &si[i], IORING_SETUP_SINGLE_ISSUER),
		     "init SINGLE_ISSUER");
	for (i = 0; i < APP_RINGS; i++) {
		need(io_uring_queue_init(4, &app[i], 0), "init");
		snprintf(what, sizeof(what), "register_ring_fd ring %d", i);
		show_ret(what, io_uring_register_ring_fd(&app[i]));
	}
	for (i = 0; i < APP_RINGS; i++)
		round_trip(&app[i], 0x100 + (unsigned)i);
	for (i = 0; i < SI_RINGS; i++)
		round_trip(&si[i], 0x200 + (unsigned)i);
	for (i = 0; i < APP_RINGS; i++) {
		snprintf(what, sizeof(what), "unregister_ring_fd ring %d", i);
		show_ret(what, io_uring_unregister_ring_fd(&app[i]));
		io_uring_queue_exit(&app[i]);
	}
	for (i = 0; i < SI_RINGS; i++)
		io_uring_queue_exit(&si[i]);
}
