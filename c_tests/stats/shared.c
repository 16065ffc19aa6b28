/* SPDX-License-Identifier: MIT */
/*
 * Statistics of rings that several processes share, as prefork servers
 * keep them (driven by tests/stats.rs, which sets RSURING_STATS and adds
 * up the lines). The parent puts RINGS `struct io_uring`s and their ring
 * memory (io_uring_queue_init_mem) in one MAP_SHARED region, then:
 *
 *  1. reaps HISTORY NOPs on ring 0 itself (its reaps before the fork are
 *     the parent's, not the first batch of the child that looks next);
 *  2. forks one worker per ring; all run at once, each submitting and
 *     reaping ROUNDS x BATCH NOPs on its own ring; each then counts its
 *     last reaps (an empty submit) and waits for the others; worker 0
 *     then submits BATCH more on ring 0 and exits without reaping them;
 *  3. a reaper, forked before the workers started, waits until they have
 *     exited, then reaps worker 0's leftover CQEs on ring 0 (a ring it
 *     never submitted on, and that moved by thousands since its fork);
 *  4. reads each ring's CqTail from /proc/self/fdinfo and prints
 *     "ring<i>=FD cqtail<i>=N" plus "parent=PID worker<i>=PID reaper=PID".
 *
 * CQ size CQ_ENTRIES: every process's reap_max must stay within it.
 */
#include <rsuring.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "../rsuring_test.h"

#define RINGS 3
#define SQ_ENTRIES 8
#define CQ_ENTRIES 16
#define BATCH 8
#define ROUNDS 250
#define HISTORY 296
#define MEM_PER_RING (64 * 1024)

struct shared {
	int go;
	int done; /* workers that have counted their last reaps */
	struct io_uring rings[RINGS];
	char mem[RINGS][MEM_PER_RING] __attribute__((aligned(4096)));
};

/* Submits BATCH NOPs (one io_uring_enter). */
static void submit_batch(struct io_uring *ring)
{
	int i;

	for (i = 0; i < BATCH; i++)
		io_uring_prep_nop(t_get_sqe(ring));
	CHECK_EQ(io_uring_submit(ring), BATCH);
}

/* Reaps n CQEs with io_uring_wait_cqe and io_uring_cqe_seen. */
static void reap_n(struct io_uring *ring, int n)
{
	int i;

	for (i = 0; i < n; i++)
		t_reap(ring);
}

static void rounds(struct io_uring *ring, int n)
{
	int r;

	for (r = 0; r < n; r++) {
		submit_batch(ring);
		reap_n(ring, BATCH);
	}
}

static pid_t start(void (*body)(struct shared *, int), struct shared *sh, int i)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		body(sh, i);
		exit(0);
	}
	return pid;
}

static void worker(struct shared *sh, int i)
{
	rounds(&sh->rings[i], ROUNDS);
	/* A reap is counted at the next call into the library on the ring
	 * (docs/statistics.md): an empty submit counts the last ones, before
	 * any worker's exit looks at the others' rings. */
	CHECK_EQ(io_uring_submit(&sh->rings[i]), 0);
	__atomic_add_fetch(&sh->done, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) < RINGS)
		usleep(1000);
	if (i == 0)
		submit_batch(&sh->rings[0]);
}

static void reaper(struct shared *sh, int i)
{
	(void)i;
	/* Forked with the workers, it looks at ring 0 only after worker 0
	 * has exited (the parent says so; the watchdog bounds the wait). */
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	reap_n(&sh->rings[0], BATCH);
}

static void wait_ok(pid_t pid)
{
	int status;

	CHECK_SYS(waitpid(pid, &status, 0));
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "process %d: status %#x", (int)pid, status);
}

/* The CqTail line of the ring fd's fdinfo. */
static unsigned cq_tail(int fd)
{
	char path[64], line[256];
	unsigned tail = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	CHECK_MSG(f != NULL, "open %s", path);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CqTail: %u", &tail) == 1)
			found = 1;
	fclose(f);
	if (!found)
		T_SKIP("%s has no CqTail line", path);
	return tail;
}

int main(void)
{
	pid_t workers[RINGS], reaper_pid;
	struct io_uring_params p;
	struct shared *sh;
	int i, ret;

	t_arm_watchdog();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	for (i = 0; i < RINGS; i++) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = CQ_ENTRIES;
		ret = io_uring_queue_init_mem(SQ_ENTRIES, &sh->rings[i], &p,
					      sh->mem[i], MEM_PER_RING);
		if (ret == -EINVAL || ret == -ENOSYS || ret == -EPERM)
			T_SKIP("io_uring_queue_init_mem: %s", strerror(-ret));
		CHECK_MSG(ret > 0, "io_uring_queue_init_mem: %d", ret);
		printf("ring%d=%d\n", i, sh->rings[i].ring_fd);
	}
	rounds(&sh->rings[0], HISTORY / BATCH);
	reaper_pid = start(reaper, sh, 0);
	for (i = 0; i < RINGS; i++)
		workers[i] = start(worker, sh, i);
	for (i = 0; i < RINGS; i++)
		wait_ok(workers[i]);
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	wait_ok(reaper_pid);
	printf("parent=%d reaper=%d", getpid(), (int)reaper_pid);
	for (i = 0; i < RINGS; i++)
		printf(" worker%d=%d cqtail%d=%u", i, (int)workers[i], i,
		       cq_tail(sh->rings[i].ring_fd));
	printf("\n");
	return 0;
}
