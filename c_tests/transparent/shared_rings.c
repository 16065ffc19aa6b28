/* SPDX-License-Identifier: MIT */
/*
 * A multi-process server's rings (issue 35): the parent creates one ring
 * per worker before it submits anything, with each `struct io_uring` (and,
 * through io_uring_queue_init_mem, the ring memory) in memory shared with
 * the processes it forks; each worker opens the data file itself, reads it
 * through its own ring and checks the bytes; worker 0 also waits for and
 * reaps the reads that worker 1 submitted on ring 1.
 *
 *   shared_rings <plain|transparent> <anon|sysv|posix> <both|struct|mem> [rings]
 *
 * plain|transparent: what RSURING_SQPOLL=1 should give a ring the parent
 *   creates in its private memory (the control ring): "transparent" is the
 *   configuration that grants the mode (unprivileged, pinned to CPU 0, the
 *   poller on CPU 1). The rings in shared memory must stay plain in both.
 * anon|sysv|posix: the shared memory (mmap MAP_SHARED|MAP_ANONYMOUS, a
 *   SysV segment removed at once, a POSIX object unlinked at once: nothing
 *   is left behind, whatever happens).
 * both|struct|mem: what lies in it: the structs and the ring memory, the
 *   structs only (the kernel maps the rings), or the ring memory only (each
 *   process keeps a private copy of the structs).
 *
 * Then the faults: a worker killed with SIGKILL while a read of an empty
 * pipe is in flight on its ring, a replacement on the same ring (the dead
 * worker's ring stays open in the parent), which must submit exactly its
 * own SQEs (the pipe's byte, written afterwards, is still there: nothing
 * ran twice); and a worker that forks again, whose child reads through the
 * ring too. Every wait is bounded; children die with the parent.
 *
 * With RSURING_STATS set (rsuring's build), prints `line=` with ring 0's
 * statistics line.
 */
#ifndef SQ_DEBIAN
#include <rsuring.h>
#endif
/* Many processes on one CPU, SQ threads that come and go. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>

#define MAX_RINGS 160
#define ENTRIES 16
#define READS 8
#define RING_MEM (64 * 1024)
#define WAIT_MS 10000
#define VICTIM_TAG 0x5151ULL

/* What one ring needs in the shared region. */
struct slot {
	struct io_uring ring;
	/* The reads worker 1 submits and worker 0 reaps. */
	unsigned char bufs[READS][T_CHUNK] __attribute__((aligned(4096)));
};

struct region {
	unsigned cross_submitted;
	unsigned cross_reaped;
	unsigned victim_ready;
	/* The killed read's CQE was reaped by the replacement. */
	unsigned victim_cqe_seen;
	struct slot slot[MAX_RINGS];
	unsigned char mem[MAX_RINGS][RING_MEM] __attribute__((aligned(4096)));
};

static struct region *shared;
/* The structs when they stay private ("mem"): each process its own copy. */
static struct io_uring private_rings[MAX_RINGS];
static struct io_uring *rings[MAX_RINGS];
/* The workers' rings; two more serve the faults. */
static int nrings = 16;
/* "mem": each process has its own copy of the structs, so that only one
 * process may use each ring (as with liburing): the faults that hand a
 * ring on to another process are left out. */
static int private_structs;
static int data_fd;

static void *map_shared(const char *kind, size_t len)
{
	void *p;

	if (!strcmp(kind, "anon")) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		CHECK_MSG(p != MAP_FAILED, "mmap(MAP_SHARED): %s", strerror(errno));
	} else if (!strcmp(kind, "sysv")) {
		int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);

		CHECK_MSG(id >= 0, "shmget(%zu): %s", len, strerror(errno));
		p = shmat(id, NULL, 0);
		/* Removed now: it goes when the last process detaches. */
		shmctl(id, IPC_RMID, NULL);
		CHECK_MSG(p != (void *)-1, "shmat: %s", strerror(errno));
	} else if (!strcmp(kind, "posix")) {
		char name[64];
		int fd;

		snprintf(name, sizeof(name), "/rsuring-shared-rings-%d", (int)getpid());
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
		CHECK_MSG(fd >= 0, "shm_open(%s): %s", name, strerror(errno));
		shm_unlink(name);
		if (ftruncate(fd, (off_t)len) < 0) {
			close(fd);
			T_FAIL("ftruncate(shm, %zu): %s", len, strerror(errno));
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		CHECK_MSG(p != MAP_FAILED, "mmap(shm): %s", strerror(errno));
	} else {
		fprintf(stderr, "memory: anon|sysv|posix, not %s\n", kind);
		exit(2);
	}
	memset(p, 0, len);
	return p;
}

static void create_rings(const char *where)
{
	int i, ret;

	for (i = 0; i < nrings + 2; i++) {
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		rings[i] = strcmp(where, "mem") ? &shared->slot[i].ring : &private_rings[i];
		T_STEP("parent: ring %d of %d (%s)", i, nrings, where);
		if (!strcmp(where, "struct")) {
			ret = io_uring_queue_init_params(ENTRIES, rings[i], &p);
		} else {
#ifdef SQ_DEBIAN
			fprintf(stderr, "liburing 2.3 has no io_uring_queue_init_mem\n");
			exit(2);
#else
			ret = io_uring_queue_init_mem(ENTRIES, rings[i], &p, shared->mem[i],
						      RING_MEM);
			if (ret == -EINVAL && i == 0)
				T_SKIP_OR_FAIL("io_uring_queue_init_mem: the kernel lacks "
					       "IORING_SETUP_NO_MMAP");
			if (ret > 0)
				ret = 0;
#endif
		}
		skip_if_no_io_uring(ret);
		CHECK_MSG(ret == 0, "ring %d: setup = %d (%s)", i, ret, strerror(-ret));
	}
}

static size_t read_offset(int w, int k)
{
	return ((size_t)(w * READS + k) * 5 * T_CHUNK + (size_t)(w % 7) * 512) %
	       (T_DATA_SIZE - T_CHUNK);
}

/* The data file, opened by this process (its own fd number, which the
 * parent's file table does not have). */
static int open_data(void)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", data_fd);
	fd = open(path, O_RDONLY);
	CHECK_MSG(fd >= 0, "open(%s): %s", path, strerror(errno));
	return fd;
}

/* Reaps `n` reads tagged (w << 8) + k on `ring` and checks bytes in bufs[k]. */
static void reap_reads(struct io_uring *ring, int w, unsigned char (*bufs)[T_CHUNK], int n,
		       const char *who)
{
	int seen = 0, i;

	for (i = 0; i < n; i++) {
		struct t_cqe c = t_reap_within(ring, WAIT_MS, who);
		int k = (int)(c.user_data & 0xff);

		CHECK_MSG(c.user_data >> 8 == (unsigned long long)w && k < n && !(seen & (1 << k)),
			  "%s: unexpected CQE user_data 0x%llx res %d", who,
			  (unsigned long long)c.user_data, c.res);
		seen |= 1 << k;
		CHECK_MSG(c.res == T_CHUNK, "%s: read %d: res %d (%s)", who, k, c.res,
			  c.res < 0 ? strerror(-c.res) : "short");
		t_check_data(bufs[k], T_CHUNK, read_offset(w, k), who);
	}
}

/* Queues and submits READS reads of the data file for worker `w`. */
static void submit_reads(struct io_uring *ring, int fd, int w, unsigned char (*bufs)[T_CHUNK],
			 const char *who)
{
	int k, ret;

	memset(bufs, 0, (size_t)READS * T_CHUNK);
	for (k = 0; k < READS; k++)
		queue_read(ring, fd, bufs[k], T_CHUNK, read_offset(w, k),
			   ((unsigned long long)w << 8) + (unsigned)k);
	ret = io_uring_submit(ring);
	/* A plain ring's count: exactly the SQEs queued since the last submit. */
	CHECK_MSG(ret == READS, "%s: io_uring_submit = %d (%s), want %d", who, ret,
		  ret < 0 ? strerror(-ret) : "", READS);
}

/* One worker's own I/O: reads through its ring into private memory. */
static void own_reads(int w, const char *who)
{
	static unsigned char bufs[READS][T_CHUNK];
	int fd = open_data();

	submit_reads(rings[w], fd, w, bufs, who);
	reap_reads(rings[w], w, bufs, READS, who);
	close(fd);
}

/* Waits (bounded) until *flag is set. */
static void wait_flag(unsigned *flag, const char *what)
{
	unsigned long long end = t_now_ms() + WAIT_MS;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (t_now_ms() > end)
			T_FAIL("%s: not within %d ms", what, WAIT_MS);
		t_msleep(1);
	}
}

static void child_start(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	t_arm_watchdog();
}

static void worker(int w)
{
	char who[64];

	child_start();
	snprintf(who, sizeof(who), "worker %d", w);
	T_STEP("%s: reads through its own ring", who);
	own_reads(w, who);
	if (w == 1) {
		int fd = open_data();

		T_STEP("worker 1: reads that worker 0 reaps");
		submit_reads(rings[1], fd, 1, shared->slot[1].bufs, who);
		__atomic_store_n(&shared->cross_submitted, 1, __ATOMIC_RELEASE);
		wait_flag(&shared->cross_reaped, "worker 1: worker 0 reaping ring 1");
		close(fd);
	} else if (w == 0) {
		T_STEP("worker 0: reaps ring 1");
		wait_flag(&shared->cross_submitted, "worker 0: worker 1's reads");
		reap_reads(rings[1], 1, shared->slot[1].bufs, READS, "worker 0 reaping ring 1");
		__atomic_store_n(&shared->cross_reaped, 1, __ATOMIC_RELEASE);
	}
	_exit(0);
}

static pid_t spawn(void (*fn)(int), int arg)
{
	pid_t pid = fork();

	CHECK_SYS(pid);
	if (pid == 0)
		fn(arg);
	return pid;
}

static int pipe_fds[2];

/* A worker with a read of an empty pipe in flight, waiting to be killed. */
static void victim(int w)
{
	struct io_uring_sqe *sqe;
	int ret;

	child_start();
	T_STEP("victim: a read of an empty pipe in flight on ring %d", w);
	sqe = io_uring_get_sqe(rings[w]);
	CHECK(sqe != NULL);
	io_uring_prep_read(sqe, pipe_fds[0], shared->slot[w].bufs[0], 1, 0);
	io_uring_sqe_set_data64(sqe, VICTIM_TAG);
	ret = io_uring_submit(rings[w]);
	CHECK_MSG(ret == 1, "victim: io_uring_submit = %d (%s)", ret,
		  ret < 0 ? strerror(-ret) : "");
	__atomic_store_n(&shared->victim_ready, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

/* The restarted worker on the dead one's ring: the killed read may have
 * left a CQE (cancelled), nothing else; then its own reads. (The kernel
 * cancels a dead task's pending read when it would next run: here, when
 * the parent writes the pipe.) */
static void replacement(int w)
{
	struct io_uring_cqe *cqe = NULL;
	struct __kernel_timespec ts = t_timeout_ms(500);
	int ret;

	child_start();
	T_STEP("replacement on ring %d", w);
	ret = io_uring_wait_cqe_timeout(rings[w], &cqe, &ts);
	if (ret == 0 && cqe) {
		CHECK_MSG(cqe->user_data == VICTIM_TAG &&
				  (cqe->res == -ECANCELED || cqe->res == -EINTR),
			  "replacement: leftover CQE user_data 0x%llx res %d",
			  (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(rings[w], cqe);
		__atomic_store_n(&shared->victim_cqe_seen, 1, __ATOMIC_RELEASE);
	} else {
		CHECK_MSG(ret == -ETIME, "replacement: wait for leftovers = %d (%s)", ret,
			  strerror(-ret));
	}
	own_reads(w, "replacement");
	_exit(0);
}

static void grandchild(int w)
{
	child_start();
	T_STEP("the forking worker's child on ring %d", w);
	own_reads(w, "the forking worker's child");
	_exit(0);
}

/* A worker that forks again: its child reads through the ring, then it. */
static void forking_worker(int w)
{
	pid_t pid;

	child_start();
	T_STEP("forking worker on ring %d", w);
	pid = spawn(grandchild, w);
	t_wait_child(pid, WAIT_MS, "the forking worker's child");
	if (!private_structs)
		own_reads(w, "forking worker");
	_exit(0);
}

/* Kills a worker with a request in flight, restarts one on its ring, and
 * checks that the killed request ran neither twice nor later. */
static void crash_and_restart(int w)
{
	char byte = 'x';
	pid_t pid;
	int status, flags;

	T_STEP("parent: a worker killed with a read in flight");
	t_pipe(pipe_fds);
	pid = spawn(victim, w);
	wait_flag(&shared->victim_ready, "the victim's submit");
	t_msleep(20);
	CHECK_SYS(kill(pid, SIGKILL));
	CHECK_MSG(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status),
		  "the victim did not die of SIGKILL (status 0x%x)", status);

	T_STEP("parent: a restarted worker on ring %d", w);
	t_wait_child(spawn(replacement, w), WAIT_MS, "the replacement worker");

	T_STEP("parent: the killed read took nothing from the pipe");
	CHECK_MSG(write(pipe_fds[1], &byte, 1) == 1, "write(pipe): %s", strerror(errno));
	t_msleep(50);
	flags = fcntl(pipe_fds[0], F_GETFL);
	CHECK_SYS(fcntl(pipe_fds[0], F_SETFL, flags | O_NONBLOCK));
	byte = 0;
	CHECK_MSG(read(pipe_fds[0], &byte, 1) == 1 && byte == 'x',
		  "the pipe's byte is gone (%s): the killed worker's read ran after its death",
		  strerror(errno));
	if (!__atomic_load_n(&shared->victim_cqe_seen, __ATOMIC_ACQUIRE)) {
		struct t_cqe c = t_reap_within(rings[w], 2000, "the killed read's CQE");

		CHECK_MSG(c.user_data == VICTIM_TAG && (c.res == -ECANCELED || c.res == -EINTR),
			  "the killed read's CQE: user_data 0x%llx res %d, want 0x%llx with "
			  "-ECANCELED", (unsigned long long)c.user_data, c.res, VICTIM_TAG);
	}
	t_cq_empty(rings[w], "the restarted worker's ring");
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

int main(int argc, char **argv)
{
	int transparent = expect_transparent(argc, argv);
	struct io_uring control;
	pid_t pids[MAX_RINGS];
	int i;

	if (argc < 4) {
		fprintf(stderr, "usage: %s plain|transparent anon|sysv|posix both|struct|mem "
				"[rings]\n", argv[0]);
		return 2;
	}
	if (argc > 4)
		nrings = atoi(argv[4]);
	CHECK_MSG(nrings >= 2 && nrings + 2 <= MAX_RINGS, "rings: 2..%d, not %d",
		  MAX_RINGS - 2, nrings);
	private_structs = !strcmp(argv[3], "mem");
	data_fd = t_data_file();

	T_STEP("parent: a ring in private memory");
	CONTRACT_RING(&control, 8, transparent);
	ring_io(&control, data_fd, 1);
	io_uring_queue_exit(&control);

	shared = map_shared(argv[2], sizeof(*shared));
	create_rings(argv[3]);

	T_STEP("parent: %d workers", nrings);
	for (i = 0; i < nrings; i++)
		pids[i] = spawn(worker, i);
	for (i = 0; i < nrings; i++) {
		char what[32];

		snprintf(what, sizeof(what), "worker %d", i);
		t_wait_child(pids[i], 4 * WAIT_MS, what);
	}

	if (!private_structs)
		crash_and_restart(nrings);
	T_STEP("parent: a worker that forks again");
	t_wait_child(spawn(forking_worker, nrings + 1), 2 * WAIT_MS, "the forking worker");

	T_STEP("parent: its own I/O on every ring, and their mode");
	for (i = 0; i < nrings + 2; i++) {
		/* Plain in every mode (the control ring's SQ thread may linger). */
		check_plain_ring_at(__FILE__, __LINE__, rings[i], 0);
		if (!private_structs)
			ring_io(rings[i], data_fd, (unsigned)i);
	}
#ifndef SQ_DEBIAN
	if (getenv("RSURING_STATS")) {
		char line[1024];
		int ret = rsuring_stats_format(rings[0], line, sizeof(line));

		CHECK_MSG(ret > 0 && ret < (int)sizeof(line), "rsuring_stats_format = %d", ret);
		printf("line=%s\n", line);
	}
#endif
	for (i = 0; i < nrings + 2; i++)
		io_uring_queue_exit(rings[i]);
	close(data_fd);
	printf("rings=%d\n", nrings);
	return 0;
}
