/* SPDX-License-Identifier: MIT */
/*
 * Batched reaping: rsuring_wait_batch_cqe against the liburing patterns a
 * user would write instead, every library in ONE process (each in a
 * dlmopen() namespace of its own, as in interleave.c), taking turns in
 * chunks whose order rotates.
 *
 *   batch e2e|reap|deep nop|read BATCH ROUNDS CHUNKS FILE VARIANT...
 *   VARIANT: NAME=PATH,PATTERN
 *
 * A round queues BATCH operations (NOPs, or buffered 4 KiB reads of FILE at
 * pseudo-random offsets, the same sequence for every variant; use "-" for
 * FILE with NOPs), then completes and reaps them with PATTERN:
 *
 *   swpeek    io_uring_submit_and_wait(BATCH), io_uring_peek_batch_cqe,
 *             io_uring_cq_advance
 *   sweach    io_uring_submit_and_wait(BATCH), io_uring_for_each_cqe,
 *             io_uring_cq_advance
 *   wnrpeek   io_uring_submit, io_uring_wait_cqe_nr(BATCH),
 *             io_uring_peek_batch_cqe, io_uring_cq_advance
 *   wnreach   io_uring_submit, io_uring_wait_cqe_nr(BATCH),
 *             io_uring_for_each_cqe, io_uring_cq_advance
 *   wb        io_uring_submit, rsuring_wait_batch_cqe(max = min = BATCH),
 *             io_uring_cq_advance (rsuring only)
 *   wbb       wb on a ring set up by rsuring_queue_init_batched
 *
 * "dread" instead of "read": the same reads with O_DIRECT (FILE a block
 * device, e.g. a loop device over /dev/shm); they complete in the kernel
 * later, so the wait patterns sleep, and wall_ns gives IOPS.
 *
 * The work is the same for all: every CQE's res is read and checked.
 * e2e: each chunk of rounds is timed with the process's CPU clock (user and
 * kernel time of every thread: NOPs complete inside io_uring_enter, but the
 * kernel hands every buffered read of a tmpfs file to an io-wq worker, a
 * thread of this process, which does the copy), split by
 * getrusage(RUSAGE_SELF). Nothing else runs in the process meanwhile.
 * reap: the submission is not timed; only the reaping step of each round
 * is, with the monotonic clock (a round of 8 CQEs is a few tens of ns,
 * below the CPU clock's cost), minus the clock's own cost; the figure is the mean of the middle half of the
 * rounds. (Every CQE is ready before the timed step, waited for untimed
 * if need be, so the wait patterns make no system call.) deep: as reap,
 * but a round queues DEEP_CQES operations (DEEP_CQES / BATCH batches) in
 * one submit, untimed, then times the reaping steps of all of them, one
 * batch each, as one interval: the clock's cost and jitter are then a
 * small part of what is timed (a reap round of 8 CQEs is about as long as
 * one clock read).
 *
 * Prints per variant:
 *   RESULT name=NAME cqes=N cpu_ns=N user_ns=N sys_ns=N wall_ns=N [reap_ns_per_cqe=X]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#define BENCH_NAME "batch"
#include "bench_common.h"

#define MAX_VARIANTS 12
#define MAX_BATCH 256
#define DEEP_CQES 1024
#define BLOCK 4096

enum pattern { SWPEEK, SWEACH, WNRPEEK, WNREACH, WB, WBB };
static const char *const pattern_names[] = { "swpeek", "sweach", "wnrpeek", "wnreach", "wb", "wbb" };

struct lib {
	int (*queue_init)(unsigned, struct io_uring *, unsigned);
	void (*queue_exit)(struct io_uring *);
	int (*submit)(struct io_uring *);
	int (*submit_and_wait)(struct io_uring *, unsigned);
	unsigned (*peek_batch_cqe)(struct io_uring *, struct io_uring_cqe **, unsigned);
	int (*get_cqe)(struct io_uring *, struct io_uring_cqe **, unsigned, unsigned, sigset_t *);
	int (*wait_batch_cqe)(struct io_uring *, struct io_uring_cqe **, unsigned, unsigned, void *);
	int (*init_batched)(unsigned, struct io_uring *, unsigned);
};

struct variant {
	const char *name;
	enum pattern pattern;
	struct lib lib;
	struct io_uring ring;
	uint64_t seed;
	unsigned long cqes;
	uint64_t cpu_ns, user_ns, sys_ns, wall_ns;
	uint64_t *round_ns;
	unsigned long nrounds;
};

static bool reads, reap_only, deep;
static unsigned batch, queued; /* queued: operations per submit */
static int file_fd = -1;
static uint64_t file_blocks;
static char *bufs;
static uint64_t clock_cost;

static void setup_variant(struct variant *v, char *spec)
{
	char *eq = strchr(spec, '='), *comma;
	unsigned i;
	void *h;
	int ret;

	if (!eq || !(comma = strchr(eq, ',')))
		die("variant is not NAME=PATH,PATTERN", spec);
	*eq = 0;
	*comma = 0;
	v->name = spec;
	for (i = 0; i < sizeof(pattern_names) / sizeof(pattern_names[0]); i++)
		if (!strcmp(comma + 1, pattern_names[i]))
			break;
	if (i == sizeof(pattern_names) / sizeof(pattern_names[0]))
		die("unknown pattern", comma + 1);
	v->pattern = i;
	h = dlmopen(LM_ID_NEWLM, eq + 1, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		die("dlmopen", dlerror());
	*(void **)&v->lib.queue_init = sym(h, "io_uring_queue_init");
	*(void **)&v->lib.queue_exit = sym(h, "io_uring_queue_exit");
	*(void **)&v->lib.submit = sym(h, "io_uring_submit");
	*(void **)&v->lib.submit_and_wait = sym(h, "io_uring_submit_and_wait");
	*(void **)&v->lib.peek_batch_cqe = sym(h, "io_uring_peek_batch_cqe");
	*(void **)&v->lib.get_cqe = sym(h, "__io_uring_get_cqe");
	if (v->pattern >= WB)
		*(void **)&v->lib.wait_batch_cqe = sym(h, "rsuring_wait_batch_cqe");
	if (v->pattern == WBB) {
		*(void **)&v->lib.init_batched = sym(h, "rsuring_queue_init_batched");
		ret = v->lib.init_batched(queued < 8 ? 16 : 2 * queued, &v->ring, 0);
	} else {
		ret = v->lib.queue_init(queued < 8 ? 16 : 2 * queued, &v->ring, 0);
	}
	if (ret)
		die_ret("io_uring_queue_init", ret);
	v->seed = 0x9e3779b97f4a7c15ull;
}

static void queue_round(struct variant *v)
{
	unsigned i;

	for (i = 0; i < queued; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&v->ring);

		if (!sqe)
			die("get_sqe", "SQ full");
		if (reads) {
			v->seed = v->seed * 6364136223846793005ull + 1442695040888963407ull;
			io_uring_prep_read(sqe, file_fd, bufs + (size_t)i * BLOCK, BLOCK,
					   (v->seed >> 33) % file_blocks * BLOCK);
		} else {
			io_uring_prep_nop(sqe);
		}
		io_uring_sqe_set_data64(sqe, i % batch + 1);
	}
}

static void check_cqe(const struct io_uring_cqe *cqe)
{
	if (cqe->res != (reads ? BLOCK : 0) || !cqe->user_data || cqe->user_data > batch)
		die("CQE", cqe->res < 0 ? strerror(-cqe->res) : "unexpected result");
}

/* Waits (for the wait patterns) and reaps what is ready; returns the count. */
/* Not inlined: hotpath_callgrind.py counts its instructions (--toggle-collect). */
__attribute__((noinline)) static unsigned reap_step(struct variant *v, unsigned want)
{
	struct io_uring_cqe *cqes[MAX_BATCH], *cqe;
	struct io_uring *ring = &v->ring;
	unsigned head, n = 0, i;
	int ret;

	switch (v->pattern) {
	case WNRPEEK:
	case WNREACH:
		ret = v->lib.get_cqe(ring, &cqe, 0, want, NULL);
		if (ret)
			die_ret("io_uring_wait_cqe_nr", ret);
		break;
	case WB:
	case WBB:
		ret = v->lib.wait_batch_cqe(ring, cqes, want, want, NULL);
		if (ret < 0)
			die_ret("rsuring_wait_batch_cqe", ret);
		n = ret;
		break;
	default:
		break;
	}
	if (v->pattern != SWEACH && v->pattern != WNREACH) {
		/* One loop over the pointers for every pattern that has them. */
		if (v->pattern < WB)
			n = v->lib.peek_batch_cqe(ring, cqes, want);
		for (i = 0; i < n; i++)
			check_cqe(cqes[i]);
	} else {
		io_uring_for_each_cqe(ring, head, cqe) {
			check_cqe(cqe);
			if (++n == want)
				break;
		}
	}
	io_uring_cq_advance(ring, n);
	return n;
}

static void round_e2e(struct variant *v)
{
	unsigned got;
	int ret;

	queue_round(v);
	if (v->pattern == SWPEEK || v->pattern == SWEACH)
		ret = v->lib.submit_and_wait(&v->ring, batch);
	else
		ret = v->lib.submit(&v->ring);
	if (ret != (int)batch)
		die_ret("submit", ret < 0 ? ret : -EIO);
	for (got = 0; got < batch;)
		got += reap_step(v, batch - got);
}

static void round_reap(struct variant *v, bool counted)
{
	uint64_t t0, t1;
	int ret;

	queue_round(v);
	unsigned k;

	ret = v->lib.submit(&v->ring);
	if (ret != (int)queued)
		die_ret("submit", ret < 0 ? ret : -EIO);
	if (io_uring_cq_ready(&v->ring) != queued) {
		/* Not all complete inside the submit (reads that went async):
		 * wait for them, untimed, without consuming any. */
		struct io_uring_cqe *cqe;

		ret = v->lib.get_cqe(&v->ring, &cqe, 0, queued, NULL);
		if (ret || io_uring_cq_ready(&v->ring) != queued)
			die("reap", "the operations did not complete");
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	for (k = 0; k < queued; k += batch)
		if (reap_step(v, batch) != batch)
			die("reap", "short batch");
	t1 = clock_ns(CLOCK_MONOTONIC);
	if (counted)
		v->round_ns[v->nrounds++] = t1 - t0;
}

int main(int argc, char **argv)
{
	struct variant vars[MAX_VARIANTS];
	unsigned long rounds, chunks, chunk, turn, r;
	int nvars, i;

	if (argc < 8 || (strcmp(argv[1], "e2e") && strcmp(argv[1], "reap") && strcmp(argv[1], "deep")) ||
	    (strcmp(argv[2], "nop") && strcmp(argv[2], "read") && strcmp(argv[2], "dread"))) {
		fprintf(stderr, "usage: %s e2e|reap|deep nop|read BATCH ROUNDS CHUNKS FILE "
				"NAME=PATH,PATTERN...\n", argv[0]);
		return 2;
	}
	deep = !strcmp(argv[1], "deep");
	reap_only = deep || !strcmp(argv[1], "reap");
	reads = strcmp(argv[2], "nop") != 0;
	batch = parse_ul(argv[3], "batch", MAX_BATCH);
	if (!batch)
		die("batch", "must be at least 1");
	queued = deep ? DEEP_CQES / batch * batch : batch;
	rounds = parse_ul(argv[4], "rounds", 1UL << 30);
	chunks = parse_ul(argv[5], "chunks", 1UL << 20);
	chunk = rounds / chunks;
	if (!chunk)
		die("chunks", "more chunks than rounds");
	if (reads) {
		struct stat st;

		file_fd = open(argv[6], O_RDONLY | (!strcmp(argv[2], "dread") ? O_DIRECT : 0));
		if (file_fd < 0 || fstat(file_fd, &st))
			die(argv[6], strerror(errno));
		file_blocks = (uint64_t)(S_ISBLK(st.st_mode) ? lseek(file_fd, 0, SEEK_END) : st.st_size) / BLOCK;
		if (!file_blocks)
			die(argv[6], "smaller than one block");
		bufs = aligned_alloc(BLOCK, (size_t)DEEP_CQES * BLOCK);
		if (!bufs)
			die("aligned_alloc", strerror(ENOMEM));
	}
	nvars = argc - 7;
	if (nvars > MAX_VARIANTS)
		die("variants", "at most 12");
	memset(vars, 0, sizeof(vars));
	for (i = 0; i < nvars; i++) {
		setup_variant(&vars[i], argv[7 + i]);
		vars[i].round_ns = calloc(chunk * chunks, sizeof(uint64_t));
		if (!vars[i].round_ns)
			die("calloc", strerror(ENOMEM));
	}
	{
		uint64_t c[1001];

		for (r = 0; r < 1001; r++) {
			uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

			c[r] = clock_ns(CLOCK_MONOTONIC) - t0;
		}
		qsort(c, 1001, sizeof(c[0]), cmp_u64);
		clock_cost = c[500];
	}

	/* Turn 0 warms every variant up and is not counted. */
	for (turn = 0; turn <= chunks; turn++) {
		for (i = 0; i < nvars; i++) {
			int k = (int)((turn + (unsigned long)i) % (unsigned long)nvars);
			uint64_t t0, w0, u0, s0, u1, s1;
			struct variant *v;

			if (turn & 1)
				k = nvars - 1 - k;
			v = &vars[k];
			rusage_ns(RUSAGE_SELF, &u0, &s0);
			w0 = clock_ns(CLOCK_MONOTONIC);
			t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
			for (r = 0; r < chunk; r++) {
				if (reap_only)
					round_reap(v, turn != 0);
				else
					round_e2e(v);
			}
			if (turn) {
				v->cpu_ns += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
				v->wall_ns += clock_ns(CLOCK_MONOTONIC) - w0;
				rusage_ns(RUSAGE_SELF, &u1, &s1);
				v->user_ns += u1 - u0;
				v->sys_ns += s1 - s0;
				v->cqes += chunk * queued;
			}
		}
	}
	for (i = 0; i < nvars; i++) {
		struct variant *v = &vars[i];

		printf("RESULT name=%s cqes=%lu cpu_ns=%llu user_ns=%llu sys_ns=%llu wall_ns=%llu",
		       v->name, v->cqes, (unsigned long long)v->cpu_ns,
		       (unsigned long long)v->user_ns, (unsigned long long)v->sys_ns,
		       (unsigned long long)v->wall_ns);
		if (reap_only) {
			double m = middle_mean(v->round_ns, v->nrounds) - (double)clock_cost;

			printf(" reap_ns_per_cqe=%.4f", (m > 0 ? m : 0) / queued);
		}
		printf("\n");
		free(v->round_ns);
		v->lib.queue_exit(&v->ring);
	}
	return 0;
}
