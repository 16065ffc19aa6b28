/* SPDX-License-Identifier: MIT */
/*
 * NOP and reaping loops for several libraries in ONE process, interleaved in
 * short chunks, so that every library sees the same machine: on a shared
 * machine the speed of a CPU moves with what runs next to it (the other
 * hardware thread, the shared caches) within seconds, and runs of separate
 * processes, even alternating ones, catch different moments.
 *
 * Each library is loaded with dlmopen() into a namespace of its own (with
 * its own copy of libc where it uses one), so liburing and rsuring, or two
 * copies of rsuring, live side by side; the program calls their functions
 * through pointers from dlsym(), the same way for all. The program itself
 * is compiled once against Debian's liburing 2.3 header: its inline code
 * (io_uring_get_sqe, io_uring_prep_nop, io_uring_cq_advance, ...) is the
 * same for every library.
 *
 * Usage:
 *   interleave nop-qd1 OPS CHUNKS VARIANT...
 *   interleave nop-qd DEPTH BATCH OPS CHUNKS VARIANT...
 *   interleave reap-one|reap-batch ROUNDS CHUNKS VARIANT...
 * VARIANT: NAME=PATH[,FLAG...] with FLAGs
 *   regring    io_uring_register_ring_fd after setup
 *   defer      SINGLE_ISSUER | DEFER_TASKRUN ring
 *   env:VAR    VAR=1 in the library's namespace before its first call
 *   waitbatch  reap-batch with rsuring_wait_batch_cqe (rsuring only)
 *   libsqe     SQEs from the library's exported io_uring_get_sqe (what
 *              FFI callers and binaries of headers without the inline one
 *              call) instead of the header's inline code
 *
 * The reap modes are hotpath.c's reap cases: 128 NOPs submitted (they
 * complete during the submit), then only their reaping is timed, with the
 * wall clock (a round takes about 150 ns, too short for a CPU clock); the
 * figure is the mean of the middle half of the rounds (so that preempted
 * rounds do not count, while the clock's granularity averages out), in ns
 * per CQE (ns_per_cqe=).
 *
 * Every variant does OPS operations in CHUNKS chunks (plus one chunk of
 * warm-up), the variants taking turns chunk by chunk in an order that
 * rotates every turn. Each chunk is timed with the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID: user and kernel time; NOPs complete inside
 * io_uring_enter), and its user/kernel split taken from getrusage
 * (RUSAGE_THREAD, apportioned by tick samples: coarser). Prints per variant:
 *   RESULT name=NAME ops=N cpu_ns=N user_ns=N sys_ns=N total_ops=N
 *          [ns_per_cqe=X] lib=PATH
 * ops: the counted operations; total_ops: with the warm-up (for
 * instruction counts per operation). With a single variant this is simply
 * that library's run.
 */
#define _GNU_SOURCE
#include <link.h>

#define BENCH_NAME "interleave"
#include "bench_common.h"

#define MAX_VARIANTS 14
#define MAX_QD 1024
#define REAP_N 128

/* The library calls the loops make, from one namespace. */
struct lib {
	int (*queue_init_params)(unsigned, struct io_uring *, struct io_uring_params *);
	int (*get_cqe)(struct io_uring *, struct io_uring_cqe **, unsigned, unsigned, sigset_t *);
	int (*wait_batch_cqe)(struct io_uring *, struct io_uring_cqe **, unsigned, unsigned, void *);
	void (*queue_exit)(struct io_uring *);
	int (*register_ring_fd)(struct io_uring *);
	int (*submit)(struct io_uring *);
	int (*submit_and_wait)(struct io_uring *, unsigned);
	unsigned (*peek_batch_cqe)(struct io_uring *, struct io_uring_cqe **, unsigned);
	struct io_uring_sqe *(*get_sqe)(struct io_uring *);
};

struct variant {
	const char *name;
	char path[PATH_MAX];
	struct lib lib;
	struct io_uring ring;
	unsigned inflight;
	unsigned long counted_ops, total_ops;
	uint64_t cpu_ns, user_ns, sys_ns;
	uint64_t *rounds_ns; /* reap modes: each counted round */
	bool waitbatch;
	bool libsqe;
};

enum mode { NOP_QD1, NOP_QD, REAP_ONE, REAP_BATCH };
static enum mode mode;
static unsigned depth, batch;

/* Loads NAME=PATH[,FLAG...] and sets its ring up. */
static void setup_variant(struct variant *v, char *spec)
{
	struct io_uring_params p;
	bool regring = false;
	char *eq = strchr(spec, '='), *flag, *save;
	const char *path;
	Lmid_t lmid;
	void *h;
	int ret;

	if (!eq)
		die("variant without =PATH", spec);
	*eq = 0;
	v->name = spec;
	path = strtok_r(eq + 1, ",", &save);
	if (!path)
		die("variant without a path", spec);
	h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		die("dlmopen", dlerror());
	if (dlinfo(h, RTLD_DI_LMID, &lmid))
		die("dlinfo", dlerror());
	memset(&p, 0, sizeof(p));
	while ((flag = strtok_r(NULL, ",", &save))) {
		if (!strcmp(flag, "regring")) {
			regring = true;
		} else if (!strcmp(flag, "waitbatch")) {
			v->waitbatch = true;
		} else if (!strcmp(flag, "libsqe")) {
			v->libsqe = true;
		} else if (!strcmp(flag, "defer")) {
			p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
		} else if (!strncmp(flag, "env:", 4)) {
			/* The library's namespace has its own libc and environment. */
			void *libc = dlmopen(lmid, "libc.so.6", RTLD_NOW | RTLD_NOLOAD);
			int (*ns_setenv)(const char *, const char *, int);

			if (!libc)
				die("no libc in the namespace of", path);
			ns_setenv = (int (*)(const char *, const char *, int))sym(libc, "setenv");
			if (ns_setenv(flag + 4, "1", 1))
				die("setenv", flag + 4);
		} else {
			die("unknown flag", flag);
		}
	}
	*(void **)&v->lib.queue_init_params = sym(h, "io_uring_queue_init_params");
	*(void **)&v->lib.queue_exit = sym(h, "io_uring_queue_exit");
	*(void **)&v->lib.register_ring_fd = sym(h, "io_uring_register_ring_fd");
	*(void **)&v->lib.submit = sym(h, "io_uring_submit");
	*(void **)&v->lib.submit_and_wait = sym(h, "io_uring_submit_and_wait");
	*(void **)&v->lib.peek_batch_cqe = sym(h, "io_uring_peek_batch_cqe");
	*(void **)&v->lib.get_cqe = sym(h, "__io_uring_get_cqe");
	*(void **)&v->lib.get_sqe = sym(h, "io_uring_get_sqe");
	if (v->waitbatch)
		*(void **)&v->lib.wait_batch_cqe = sym(h, "rsuring_wait_batch_cqe");
	{
		Dl_info info;

		if (!dladdr(*(void **)&v->lib.submit, &info) || !info.dli_fname ||
		    !realpath(info.dli_fname, v->path))
			snprintf(v->path, sizeof(v->path), "%s", path);
	}
	ret = v->lib.queue_init_params(mode == NOP_QD1 ? 8 : mode == NOP_QD ? depth : REAP_N,
				       &v->ring, &p);
	if (ret)
		die_ret("queue_init_params", ret);
	if (regring) {
		ret = v->lib.register_ring_fd(&v->ring);
		if (ret != 1)
			die_ret("register_ring_fd", ret);
	}
}

static void check_nop(const struct io_uring_cqe *cqe)
{
	if (cqe->res != 0) {
		fprintf(stderr, "interleave: NOP res %d\n", cqe->res);
		exit(1);
	}
}

static struct io_uring_sqe *get_sqe(struct variant *v)
{
	struct io_uring_sqe *sqe = v->libsqe ? v->lib.get_sqe(&v->ring) : io_uring_get_sqe(&v->ring);

	if (!sqe)
		die("get_sqe", "SQ ring full");
	return sqe;
}

/* QD1 round trips, as hotpath.c's nop-qd1. Returns the operations done. */
static unsigned long chunk_qd1(struct variant *v, unsigned long ops)
{
	struct io_uring *ring = &v->ring;
	unsigned long i;

	for (i = 0; i < ops; i++) {
		struct io_uring_cqe *cqe;
		int ret;

		io_uring_prep_nop(get_sqe(v));
		ret = v->lib.submit_and_wait(ring, 1);
		if (ret != 1)
			die_ret("submit_and_wait", ret);
		/*
		 * The NOP completed inside the submit. io_uring_peek_cqe is the
		 * inline __io_uring_peek_cqe plus a library call for an empty CQ,
		 * which never happens here (and would have to be the variant's).
		 */
		cqe = NULL;
		ret = __io_uring_peek_cqe(ring, &cqe, NULL);
		if (ret || !cqe)
			die_ret("peek_cqe", ret ? ret : -EAGAIN);
		check_nop(cqe);
		io_uring_cqe_seen(ring, cqe);
	}
	return ops;
}

/*
 * The batch loop of hotpath.c's nop-qd, until `ops` more have completed.
 * Returns the operations done (a batch may end past `ops`).
 */
static unsigned long chunk_qd(struct variant *v, unsigned long ops)
{
	struct io_uring_cqe *cqes[MAX_QD];
	struct io_uring *ring = &v->ring;
	unsigned long done = 0;

	while (done < ops) {
		unsigned n, to_prep = depth - v->inflight;
		int ret;

		if (to_prep > batch)
			to_prep = batch;
		for (n = 0; n < to_prep; n++)
			io_uring_prep_nop(get_sqe(v));
		v->inflight += to_prep;
		if (v->inflight >= depth)
			ret = v->lib.submit_and_wait(ring, batch);
		else
			ret = v->lib.submit(ring);
		if (ret != (int)to_prep)
			die_ret("submit", ret);
		n = v->lib.peek_batch_cqe(ring, cqes, depth);
		for (unsigned k = 0; k < n; k++)
			check_nop(cqes[k]);
		io_uring_cq_advance(ring, n);
		v->inflight -= n;
		done += n;
	}
	return done;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * io_uring_peek_cqe of the 2.3 header, with its library call (made for an
 * empty CQ) going to the variant's library.
 */
static int peek_cqe(struct variant *v, struct io_uring_cqe **cqe)
{
	if (!__io_uring_peek_cqe(&v->ring, cqe, NULL) && *cqe)
		return 0;
	return v->lib.get_cqe(&v->ring, cqe, 0, 0, NULL);
}

/* `rounds` reaping rounds; the timed part of each goes to rounds_ns. */
static unsigned long chunk_reap(struct variant *v, unsigned long rounds, bool counted)
{
	struct io_uring_cqe *cqes[REAP_N];
	struct io_uring *ring = &v->ring;
	unsigned long r;

	for (r = 0; r < rounds; r++) {
		struct io_uring_cqe *cqe;
		unsigned i, n = 0;
		uint64_t t0, t1;
		long sum = 0;
		int ret;

		for (i = 0; i < REAP_N; i++)
			io_uring_prep_nop(get_sqe(v));
		ret = v->lib.submit(ring);
		if (ret != REAP_N)
			die_ret("submit", ret);
		if (io_uring_cq_ready(ring) != REAP_N)
			die("reap", "NOPs did not complete inline");
		t0 = mono_ns();
		if (mode == REAP_ONE) {
			while (peek_cqe(v, &cqe) == 0) {
				sum += cqe->res;
				io_uring_cqe_seen(ring, cqe);
				n++;
			}
		} else if (v->waitbatch) {
			ret = v->lib.wait_batch_cqe(ring, cqes, REAP_N, 1, NULL);
			if (ret < 0)
				die_ret("rsuring_wait_batch_cqe", ret);
			n = ret;
			for (i = 0; i < n; i++)
				sum += cqes[i]->res;
			io_uring_cq_advance(ring, n);
		} else {
			n = v->lib.peek_batch_cqe(ring, cqes, REAP_N);
			for (i = 0; i < n; i++)
				sum += cqes[i]->res;
			io_uring_cq_advance(ring, n);
		}
		t1 = mono_ns();
		if (n != REAP_N || sum)
			die("reap", "wrong CQEs");
		if (counted)
			v->rounds_ns[v->counted_ops / REAP_N + r] = t1 - t0;
	}
	return rounds * REAP_N;
}

int main(int argc, char **argv)
{
	struct variant vars[MAX_VARIANTS];
	unsigned long ops, chunks, chunk, turn;
	int first, nvars, i;

	if (argc >= 5 && (!strcmp(argv[1], "nop-qd1") || !strcmp(argv[1], "reap-one") ||
			  !strcmp(argv[1], "reap-batch"))) {
		mode = !strcmp(argv[1], "nop-qd1") ? NOP_QD1 :
		       !strcmp(argv[1], "reap-one") ? REAP_ONE : REAP_BATCH;
		ops = parse_ul(argv[2], "operation count", 1UL << 34);
		chunks = parse_ul(argv[3], "chunk count", 1UL << 20);
		first = 4;
	} else if (argc >= 7 && !strcmp(argv[1], "nop-qd")) {
		mode = NOP_QD;
		depth = parse_ul(argv[2], "depth", MAX_QD);
		batch = parse_ul(argv[3], "batch", depth);
		ops = parse_ul(argv[4], "operation count", 1UL << 34);
		chunks = parse_ul(argv[5], "chunk count", 1UL << 20);
		first = 6;
	} else {
		fprintf(stderr,
			"usage: %s nop-qd1 OPS CHUNKS VARIANT...\n"
			"       %s nop-qd DEPTH BATCH OPS CHUNKS VARIANT...\n"
			"       %s reap-one|reap-batch ROUNDS CHUNKS VARIANT...\n"
			"VARIANT: NAME=PATH[,regring][,defer][,env:VAR][,waitbatch][,libsqe]\n",
			argv[0], argv[0], argv[0]);
		return 2;
	}
	nvars = argc - first;
	if (nvars < 1 || nvars > MAX_VARIANTS)
		die("variants", "between 1 and 14");
	chunk = ops / chunks;
	if (!chunk)
		die("chunks", "more chunks than operations");

	memset(vars, 0, sizeof(vars));
	for (i = 0; i < nvars; i++) {
		setup_variant(&vars[i], argv[first + i]);
		if (mode == REAP_ONE || mode == REAP_BATCH) {
			vars[i].rounds_ns = calloc(chunk * chunks, sizeof(uint64_t));
			if (!vars[i].rounds_ns)
				die("calloc", strerror(ENOMEM));
		}
	}

	/* Turn 0 warms every variant up and is not counted. */
	for (turn = 0; turn <= chunks; turn++) {
		for (i = 0; i < nvars; i++) {
			int k = (int)((turn + (unsigned long)i) % (unsigned long)nvars);
			struct variant *v;
			uint64_t t0, u0, s0, u1, s1;
			unsigned long done;

			if (turn & 1)
				k = nvars - 1 - k;
			v = &vars[k];
			thread_rusage_ns(&u0, &s0);
			t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			switch (mode) {
			case NOP_QD1:
				done = chunk_qd1(v, chunk);
				break;
			case NOP_QD:
				done = chunk_qd(v, chunk);
				break;
			default:
				done = chunk_reap(v, chunk, turn != 0);
				break;
			}
			v->total_ops += done;
			if (turn) {
				v->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
				thread_rusage_ns(&u1, &s1);
				v->user_ns += u1 - u0;
				v->sys_ns += s1 - s0;
				v->counted_ops += done;
			}
		}
	}
	for (i = 0; i < nvars; i++) {
		struct variant *v = &vars[i];

		printf("RESULT name=%s ops=%lu cpu_ns=%llu user_ns=%llu sys_ns=%llu total_ops=%lu",
		       v->name, v->counted_ops, (unsigned long long)v->cpu_ns,
		       (unsigned long long)v->user_ns, (unsigned long long)v->sys_ns, v->total_ops);
		if (v->rounds_ns) {
			unsigned long n = v->counted_ops / REAP_N;

			printf(" ns_per_cqe=%.4f", middle_mean(v->rounds_ns, n) / REAP_N);
			free(v->rounds_ns);
		}
		printf(" lib=%s\n", v->path);
		v->lib.queue_exit(&v->ring);
	}
	return 0;
}
