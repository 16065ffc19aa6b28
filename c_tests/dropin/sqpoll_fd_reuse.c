/* SPDX-License-Identifier: MIT */
/*
 * Issue 10, deviation 4: the shared-poller registry must not trust fd
 * numbers.
 *
 * Every ring here is an SQPOLL ring bound to a CPU (SQ_AFF). On rsuring
 * they are shared per-CPU SQPOLL rings: built against rsuring's header the
 * program asks for that with IORING_SETUP_SQPOLL_PERCPU; built against
 * Debian's header it is run with RSURING_SQPOLL_PERCPU=1 (which liburing
 * ignores: there every ring has its own SQ thread on its CPU).
 *
 * The application closes a member ring's fd behind the library's back
 * (close-all-fds loops, dup2 over it) and the number comes back as another
 * io_uring. Whatever the library does with its registry, every SQPOLL ring
 * must still be created, and its SQ thread must run on the CPU it asked for
 * (the kernel says so in /proc/self/fdinfo/FD: SqThread, SqThreadCpu).
 * On rsuring, rsuring_sqpoll_group must report the CPU each ring asked for.
 *
 * The member whose fd the application closed is never passed to
 * io_uring_queue_exit: its fd number belongs to another ring by then. The
 * case's process exits instead, which releases it.
 */
#define T_CASE_PROGRAM 1
#define T_WATCHDOG_SECS 10
#include "../rsuring_test.h"

#include <sched.h>

#ifndef T_RSURING_HEADER
/* rsuring_sqpoll_group's result, as include/rsuring.h defines it. */
struct rsuring_sqpoll_info {
	int cpu;
	unsigned members;
};
#endif

struct sq_thread {
	int pid; /* SqThread */
	int cpu; /* SqThreadCpu */
};

static void need_cpu(unsigned cpu)
{
	cpu_set_t set;

	CHECK_SYS(sched_getaffinity(0, sizeof(set), &set));
	if (!CPU_ISSET(cpu, &set))
		T_SKIP_OR_FAIL("CPU %u is not available to this process",
				    cpu);
}

/* An SQPOLL ring on @cpu, shared per CPU on rsuring. */
static void shared_ring(struct io_uring *ring, unsigned cpu)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
#ifdef T_RSURING_HEADER
	p.flags |= IORING_SETUP_SQPOLL_PERCPU;
#else
	{
		const char *env = getenv("RSURING_SQPOLL_PERCPU");

		if (t_on_rsuring() && (!env || strcmp(env, "1") != 0))
			T_FAIL("built against Debian's header: run with "
			       "RSURING_SQPOLL_PERCPU=1 to get shared pollers");
	}
#endif
	p.sq_thread_cpu = cpu;
	ret = io_uring_queue_init_params(8, ring, &p);
	if (ret == -EPERM)
		T_SKIP_OR_FAIL("SQPOLL rings need privileges here");
	if (ret < 0)
		T_FAIL("SQPOLL ring on CPU %u: io_uring_queue_init_params "
		       "returned %d (%s)", cpu, ret, strerror(-ret));
}

/* The kernel's word on @ring's SQ thread. */
static struct sq_thread sq_thread_of(int fd)
{
	long long pid, cpu;

	if (!t_fdinfo_value(fd, "SqThread", &pid) ||
	    !t_fdinfo_value(fd, "SqThreadCpu", &cpu))
		T_FAIL("fdinfo of fd %d has no SqThread/SqThreadCpu lines", fd);
	return (struct sq_thread){ (int)pid, (int)cpu };
}

/* Mismatches found by the expect_* checks; a case fails at its end if
 * there are any, after all of them were reported. */
static int mismatches;

static void expect_sq_thread_cpu(struct io_uring *ring, int cpu,
				 const char *what)
{
	struct sq_thread t = sq_thread_of(ring->ring_fd);

	if (t.pid <= 0 || t.cpu != cpu) {
		fprintf(stderr, "%s: the kernel reports SqThread %d on CPU %d, "
				"expected a thread on CPU %d\n",
			what, t.pid, t.cpu, cpu);
		mismatches++;
	}
}

/* On rsuring: the poller group must be the one of the CPU asked for. */
static void expect_group_cpu(struct io_uring *ring, int cpu, const char *what)
{
	int (*group)(struct io_uring *, struct rsuring_sqpoll_info *);
	struct rsuring_sqpoll_info info = { -2, 0 };
	int ret;

	*(void **)&group = dlsym(RTLD_DEFAULT, "rsuring_sqpoll_group");
	if (!group)
		return; /* liburing: no poller groups */
	ret = group(ring, &info);
	if (ret < 0) {
		fprintf(stderr, "%s: rsuring_sqpoll_group returned %d (%s)\n",
			what, ret, strerror(-ret));
		mismatches++;
	} else if (info.cpu != cpu) {
		fprintf(stderr, "%s: rsuring_sqpoll_group reports CPU %d, "
				"expected %d\n", what, info.cpu, cpu);
		mismatches++;
	}
}

/* Both of the above: the kernel's SQ thread and the poller group. */
static void expect_polled_on(struct io_uring *ring, int cpu, const char *what)
{
	expect_sq_thread_cpu(ring, cpu, what);
	expect_group_cpu(ring, cpu, what);
}

static void no_mismatches(void)
{
	if (mismatches)
		T_FAIL("%d mismatch(es), listed above", mismatches);
}

static void round_trip(struct io_uring *ring, __u64 data, const char *what)
{
	struct t_cqe c;
	int ret;

	t_queue_nop(ring, data);
	ret = io_uring_submit(ring);
	if (ret < 0)
		T_FAIL("%s: io_uring_submit returned %d (%s)", what, ret,
		       strerror(-ret));
	c = t_reap_within(ring, 5000, what);
	CHECK_EQ(c.user_data, data);
	CHECK_EQ(c.res, 0);
}

/* A shared SQPOLL member on @cpu that works; returns its fd number. */
static int member_ring(struct io_uring *member, unsigned cpu)
{
	char what[32];

	T_STEP("member ring on CPU %u", cpu);
	snprintf(what, sizeof(what), "member on CPU %u", cpu);
	shared_ring(member, cpu);
	round_trip(member, 1, what);
	return member->ring_fd;
}

static void plain_ring(struct io_uring *ring)
{
	CHECK_OK(io_uring_queue_init(8, ring, 0));
}

/*
 * After a member's fd number went to another ring: a new SQPOLL ring on
 * CPU 0 is created, works and is polled on CPU 0 (and `plain`, if not
 * NULL, still works); the new ring is torn down again.
 */
static void new_ring_on_cpu0(struct io_uring *plain)
{
	struct io_uring fresh;

	T_STEP("a new SQPOLL ring on CPU 0");
	shared_ring(&fresh, 0);
	round_trip(&fresh, 2, "new ring on CPU 0");
	if (plain)
		round_trip(plain, 3, "plain ring");
	expect_polled_on(&fresh, 0, "new ring on CPU 0");
	no_mismatches();
	io_uring_queue_exit(&fresh);
}

/* (a) A plain ring gets the number of a member the application closed:
 * a new SQPOLL ring on that CPU is still created and polled there. */
static void plain_ring_reuses_member_fd(void)
{
	struct io_uring member, plain;
	int fd;

	need_cpu(0);
	fd = member_ring(&member, 0);

	T_STEP("close the member's fd, a plain ring takes the number");
	CHECK_SYS(close(fd));
	plain_ring(&plain);
	CHECK_MSG(plain.ring_fd == fd, "the plain ring got fd %d, not %d",
		  plain.ring_fd, fd);

	new_ring_on_cpu0(&plain);
	io_uring_queue_exit(&plain);
}

/* (a') The same with dup2: the application puts another ring's fd over a
 * member's number. */
static void dup2_plain_ring_over_member_fd(void)
{
	struct io_uring member, plain;
	int fd;

	need_cpu(0);
	fd = member_ring(&member, 0);

	T_STEP("dup2 a plain ring's fd over the member's");
	plain_ring(&plain);
	CHECK_SYS(dup2(plain.ring_fd, fd));

	new_ring_on_cpu0(NULL);
	CHECK_SYS(close(fd));
	io_uring_queue_exit(&plain);
}

/* (b) A shared ring of CPU 0 gets the number of a CPU 1 member the
 * application closed: a ring asked for CPU 1 is polled on CPU 1, and each
 * ring's group is the one of its own CPU. */
static void other_cpus_ring_reuses_member_fd(void)
{
	struct io_uring member, on_cpu0, on_cpu1;
	struct sq_thread t0, t1;
	int fd;

	need_cpu(0);
	need_cpu(1);
	fd = member_ring(&member, 1);

	T_STEP("close the member's fd, a CPU 0 ring takes the number");
	CHECK_SYS(close(fd));
	shared_ring(&on_cpu0, 0);
	CHECK_MSG(on_cpu0.ring_fd == fd, "the CPU 0 ring got fd %d, not %d",
		  on_cpu0.ring_fd, fd);

	T_STEP("a ring asked for CPU 1");
	shared_ring(&on_cpu1, 1);
	round_trip(&on_cpu0, 2, "ring on CPU 0");
	round_trip(&on_cpu1, 3, "ring on CPU 1");
	T_STEP("where the rings are polled");
	expect_polled_on(&on_cpu0, 0, "ring on CPU 0");
	expect_polled_on(&on_cpu1, 1, "ring asked for CPU 1");
	t0 = sq_thread_of(on_cpu0.ring_fd);
	t1 = sq_thread_of(on_cpu1.ring_fd);
	if (t0.pid == t1.pid) {
		fprintf(stderr, "the CPU 0 and CPU 1 rings share SQ thread "
				"%d\n", t0.pid);
		mismatches++;
	}
	no_mismatches();
	io_uring_queue_exit(&on_cpu1);
	io_uring_queue_exit(&on_cpu0);
}

static const struct t_case cases[] = {
	{ "plain_ring_reuses_member_fd", plain_ring_reuses_member_fd },
	{ "dup2_plain_ring_over_member_fd", dup2_plain_ring_over_member_fd },
	{ "other_cpus_ring_reuses_member_fd",
	  other_cpus_ring_reuses_member_fd },
};

T_CASES_MAIN(cases)
