/* SPDX-License-Identifier: MIT */
/*
 * rings — shared-SQPOLL benchmark for rsuring.
 *
 * K rings, each driven by its own pthread, keep D 4 KiB O_DIRECT random
 * reads in flight on a block device for T seconds. Every application
 * thread is pinned to --app-cpu; SQ poll threads are bound to --poll-cpu
 * (IORING_SETUP_SQ_AFF). Modes:
 *
 *   shared     SQPOLL + SQ_AFF + IORING_SETUP_SQPOLL_PERCPU: the K rings
 *              share one kernel SQ thread (rsuring's per-CPU poller).
 *   dedicated  SQPOLL + SQ_AFF: K SQ threads, all on --poll-cpu.
 *   single     one ring at depth K*D, SQPOLL + SQ_AFF (the upper bound).
 *   nopoll     K rings without SQPOLL (reference).
 *
 * Every completion must carry res == 4096; anything else aborts the run.
 * While measuring, the program samples its own /proc/self/task entries to
 * count the kernel SQ threads (iou-sqp-*) and io-wq workers (iou-wrk-*),
 * and reports the CPU time and run-queue wait of each kind of thread from
 * /proc/self/task/<tid>/schedstat.
 *
 * Each thread waits for completions in the kernel (io_uring_wait_cqes) when
 * none are ready; --spin busy-polls the CQ instead, which is what fio's
 * io_uring engine does with sqthread_poll=1.
 *
 * The last line of output is machine-readable:
 *   RESULT mode=shared rings=4 depth=32 iops=... pollers=1 ...
 *
 * Build (bench/sqpoll.sh does this):
 *   cc -O2 -Wall -Wextra -Werror -pthread -Iinclude bench/sqpoll/rings.c \
 *      -o target/bench/rings -Ltarget/bench/lib -l:liburing.so.2 -Wl,-rpath,'$ORIGIN/lib'
 * with target/bench/lib/liburing.so.2 -> ../../release/librsuring.so.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#if __has_include(<rsuring.h>)
#include <rsuring.h>
#define HAVE_RSURING_H 1
#endif

#ifndef IORING_SETUP_SQPOLL_PERCPU
#define IORING_SETUP_SQPOLL_PERCPU (1U << 31)
#endif

#define BS 4096u

enum mode { MODE_SHARED, MODE_DEDICATED, MODE_SINGLE, MODE_NOPOLL };
static const char *const mode_names[] = { "shared", "dedicated", "single", "nopoll" };

enum wait_kind { WAIT_BLOCK, WAIT_SPIN };

struct opts {
	const char *dev;
	enum mode mode;
	unsigned rings;		/* K */
	unsigned depth;		/* D */
	double seconds;		/* T */
	double warmup;
	int app_cpu;
	int poll_cpu;
	unsigned idle_ms;	/* sq_thread_idle; 0 = kernel default (1 s) */
	unsigned wait_nr;	/* completions to wait for when none are ready */
	enum wait_kind wait;
	bool fixed_files;
	bool quiet;
	int autogroup_nice;	/* INT_MIN: leave the scheduling group alone */
};

/* One per ring; padded so the counters of different threads never share a line. */
struct worker {
	_Alignas(64) _Atomic uint64_t done;	/* completions reaped */
	_Atomic uint64_t blocks;		/* waits that went to the kernel */
	_Atomic uint64_t wakeups;		/* submits that found NEED_WAKEUP */
	struct io_uring ring;
	unsigned depth;
	unsigned index;
	int fd;
	pid_t tid;
	void *bufs;
	char pad[64];
};

static struct opts o = {
	.mode = MODE_SHARED,
	.rings = 4,
	.depth = 32,
	.seconds = 5.0,
	.warmup = 1.0,
	.app_cpu = 0,
	.poll_cpu = 1,
	.idle_ms = 0,
	.wait_nr = 1,
	.wait = WAIT_BLOCK,
	.fixed_files = true,
	.autogroup_nice = INT_MIN,
};

static uint64_t dev_blocks;		/* device size in BS units */
static atomic_bool stop;
static atomic_uint ready_threads;

#define die(...) do { fprintf(stderr, "rings: " __VA_ARGS__); fputc('\n', stderr); exit(2); } while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void pin_self(int cpu)
{
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ret)
		die("cannot pin to CPU %d: %s", cpu, strerror(ret));
}

static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void prep_read(struct worker *w, struct io_uring_sqe *sqe, unsigned slot, uint64_t *rng)
{
	uint64_t off = (xorshift64(rng) % dev_blocks) * BS;
	void *buf = (char *)w->bufs + (size_t)slot * BS;

	if (o.fixed_files) {
		io_uring_prep_read(sqe, 0, buf, BS, off);
		sqe->flags |= IOSQE_FIXED_FILE;
	} else {
		io_uring_prep_read(sqe, w->fd, buf, BS, off);
	}
	io_uring_sqe_set_data64(sqe, slot);
}

static void check_cqe(const struct worker *w, const struct io_uring_cqe *cqe)
{
	if (cqe->res != (int)BS) {
		fprintf(stderr, "rings: FAIL ring %u slot %llu: res=%d (%s), expected %u\n",
			w->index, (unsigned long long)cqe->user_data, cqe->res,
			cqe->res < 0 ? strerror(-cqe->res) : "short read", BS);
		exit(1);
	}
}

static void submit_or_die(struct worker *w)
{
	int ret;

	/* With SQPOLL this only enters the kernel when the poller sleeps. */
	if (w->ring.flags & IORING_SETUP_SQPOLL &&
	    IO_URING_READ_ONCE(*w->ring.sq.kflags) & IORING_SQ_NEED_WAKEUP)
		atomic_fetch_add_explicit(&w->wakeups, 1, memory_order_relaxed);
	ret = io_uring_submit(&w->ring);
	if (ret < 0)
		die("ring %u: io_uring_submit: %s", w->index, strerror(-ret));
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct io_uring_cqe **cqes = calloc(w->depth, sizeof(*cqes));
	uint64_t rng = 0x9e3779b97f4a7c15ull * (w->index + 1) ^ (uint64_t)now_s();
	unsigned inflight = 0, i;

	if (!cqes)
		die("out of memory");
	w->tid = (pid_t)syscall(SYS_gettid);
	pin_self(o.app_cpu);
	atomic_fetch_add(&ready_threads, 1);

	for (i = 0; i < w->depth; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

		if (!sqe)
			die("ring %u: no SQE for slot %u", w->index, i);
		prep_read(w, sqe, i, &rng);
	}
	submit_or_die(w);
	inflight = w->depth;

	while (inflight) {
		bool stopping = atomic_load_explicit(&stop, memory_order_relaxed);
		unsigned n, want;
		int ret;

		n = io_uring_peek_batch_cqe(&w->ring, cqes, w->depth);
		if (!n) {
			if (o.wait == WAIT_SPIN && !stopping)
				continue;
			want = o.wait_nr < inflight ? o.wait_nr : inflight;
			atomic_fetch_add_explicit(&w->blocks, 1, memory_order_relaxed);
			ret = io_uring_wait_cqes(&w->ring, &cqes[0], want, NULL, NULL);
			if (ret < 0 && ret != -EINTR)
				die("ring %u: io_uring_wait_cqes: %s", w->index, strerror(-ret));
			continue;
		}
		for (i = 0; i < n; i++) {
			unsigned slot = (unsigned)cqes[i]->user_data;

			check_cqe(w, cqes[i]);
			if (!stopping) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

				if (!sqe)
					die("ring %u: SQ full", w->index);
				prep_read(w, sqe, slot, &rng);
			}
		}
		io_uring_cq_advance(&w->ring, n);
		atomic_fetch_add_explicit(&w->done, n, memory_order_relaxed);
		if (stopping)
			inflight -= n;
		else
			submit_or_die(w);
	}
	free(cqes);
	return NULL;
}

/* ---- /proc/self/task sampling -------------------------------------- */

enum tkind { T_APP, T_SQP, T_WRK, T_OTHER, T_KINDS };
static const char *const tkind_names[] = { "app", "iou-sqp", "iou-wrk", "other" };

struct tsample {
	pid_t tid;
	enum tkind kind;
	uint64_t run_ns, wait_ns;
	int cpu;		/* last CPU it ran on */
};

#define MAX_TASKS 256

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static enum tkind classify(pid_t tid, const struct worker *ws, unsigned nw)
{
	char path[64], comm[64];
	unsigned i;

	for (i = 0; i < nw; i++)
		if (ws[i].tid == tid)
			return T_APP;
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	if (read_small(path, comm, sizeof(comm)))
		return T_OTHER;
	if (!strncmp(comm, "iou-sqp-", 8))
		return T_SQP;
	if (!strncmp(comm, "iou-wrk-", 8))
		return T_WRK;
	return T_OTHER;
}

static int sample_tasks(struct tsample *out, const struct worker *ws, unsigned nw)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < MAX_TASKS) {
		char path[64], buf[1024], *p;
		unsigned long long run = 0, wait = 0;
		pid_t tid = (pid_t)atoi(de->d_name);
		int field, cpu = -1;

		if (tid <= 0)
			continue;
		out[n].tid = tid;
		out[n].kind = classify(tid, ws, nw);
		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
		if (!read_small(path, buf, sizeof(buf)))
			sscanf(buf, "%llu %llu", &run, &wait);
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
		if (!read_small(path, buf, sizeof(buf)) && (p = strrchr(buf, ')'))) {
			/* field 3 (state) follows ") "; "processor" is field 39 */
			for (field = 2; *p && field < 39; p++)
				if (*p == ' ')
					field++;
			cpu = atoi(p);
		}
		out[n].run_ns = run;
		out[n].wait_ns = wait;
		out[n].cpu = cpu;
		n++;
	}
	closedir(d);
	return n;
}

static const struct tsample *find_task(const struct tsample *s, int n, pid_t tid)
{
	for (int i = 0; i < n; i++)
		if (s[i].tid == tid)
			return &s[i];
	return NULL;
}

/* Busy and total jiffies of one CPU from /proc/stat. */
struct cpustat {
	unsigned long long busy, total;
};

static void sample_cpu(int cpu, struct cpustat *cs)
{
	char want[16], line[512];
	FILE *f = fopen("/proc/stat", "re");

	cs->busy = cs->total = 0;
	if (!f)
		return;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[10] = { 0 };

		if (strncmp(line, want, strlen(want)))
			continue;
		sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
		/* user nice system idle iowait irq softirq steal (guest* are in user) */
		cs->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		cs->busy = cs->total - v[3] - v[4];
		break;
	}
	fclose(f);
}

static double cpu_busy_pct(const struct cpustat *a, const struct cpustat *b)
{
	unsigned long long dt = b->total - a->total;

	return dt ? 100.0 * (double)(b->busy - a->busy) / (double)dt : 0.0;
}

/* ---- setup ---------------------------------------------------------- */

static void setup_ring(struct worker *w, unsigned entries, int devfd)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	switch (o.mode) {
	case MODE_SHARED:
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF | IORING_SETUP_SQPOLL_PERCPU;
		break;
	case MODE_DEDICATED:
	case MODE_SINGLE:
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
		break;
	case MODE_NOPOLL:
		break;
	}
	if (p.flags & IORING_SETUP_SQPOLL) {
		p.sq_thread_cpu = (unsigned)o.poll_cpu;
		p.sq_thread_idle = o.idle_ms;
	}
	ret = io_uring_queue_init_params(entries, &w->ring, &p);
	if (ret < 0)
		die("ring %u: io_uring_queue_init_params(%u, flags=%#x): %s",
		    w->index, entries, p.flags, strerror(-ret));
	w->fd = devfd;
	if (o.fixed_files) {
		ret = io_uring_register_files(&w->ring, &devfd, 1);
		if (ret < 0)
			die("ring %u: io_uring_register_files: %s", w->index, strerror(-ret));
	}
	if (posix_memalign(&w->bufs, BS, (size_t)entries * BS))
		die("out of memory");
	memset(w->bufs, 0, (size_t)entries * BS);
	w->depth = entries;
}

static uint64_t device_bytes(int fd)
{
	struct stat st;
	uint64_t bytes = 0;

	if (fstat(fd, &st))
		die("fstat %s: %s", o.dev, strerror(errno));
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &bytes))
			die("BLKGETSIZE64 %s: %s", o.dev, strerror(errno));
	} else {
		bytes = (uint64_t)st.st_size;
	}
	return bytes;
}

static const char *library_of(void *sym)
{
	Dl_info info;

	if (sym && dladdr(sym, &info) && info.dli_fname)
		return info.dli_fname;
	return "?";
}

/*
 * With CONFIG_SCHED_AUTOGROUP every session is one scheduling entity, so on
 * a machine shared with other sessions all our threads (SQ threads included)
 * together get one session's share of a CPU whatever their nice values. A
 * session of our own with a raised autogroup priority keeps other work from
 * skewing the comparison; the modes still compete among themselves exactly
 * as before, since every thread of the benchmark is in that one group.
 */
static void own_autogroup(int nice)
{
	char buf[16];
	int fd, len;

	if (setsid() < 0)
		fprintf(stderr, "rings: setsid: %s (run me via setsid); autogroup not changed\n",
			strerror(errno));
	fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "rings: /proc/self/autogroup: %s (no CONFIG_SCHED_AUTOGROUP?)\n",
			strerror(errno));
		return;
	}
	len = snprintf(buf, sizeof(buf), "%d", nice);
	if (write(fd, buf, (size_t)len) != len)
		fprintf(stderr, "rings: setting autogroup nice %d: %s\n", nice, strerror(errno));
	close(fd);
}

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
"usage: rings --dev BLOCKDEV [options]\n"
"  --mode shared|dedicated|single|nopoll  (default shared)\n"
"  --rings K          rings, one pthread each (default 4; single: 1 ring of K*D)\n"
"  --depth D          reads in flight per ring (default 32)\n"
"  --time T           measured seconds (default 5)\n"
"  --warmup W         warm-up seconds (default 1)\n"
"  --app-cpu N        CPU of every application thread (default 0)\n"
"  --poll-cpu N       CPU of the SQ poll threads, IORING_SETUP_SQ_AFF (default 1)\n"
"  --idle MS          sq_thread_idle (default 0 = kernel default, 1 s)\n"
"  --wait-nr N        completions to wait for when none are ready (default 1)\n"
"  --spin             busy-poll the CQ instead of sleeping in io_uring_enter\n"
"  --no-fixed         do not register the device fd (plain fd in every SQE)\n"
"  --autogroup-nice N  run in a session (autogroup) of our own with this nice\n"
"                     value, e.g. -20: shields the run from other sessions' load\n"
"  --quiet            only the RESULT line\n");
	exit(code);
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, 0, 'f' },
		{ "mode", required_argument, 0, 'm' },
		{ "rings", required_argument, 0, 'k' },
		{ "depth", required_argument, 0, 'd' },
		{ "time", required_argument, 0, 't' },
		{ "warmup", required_argument, 0, 'w' },
		{ "app-cpu", required_argument, 0, 'a' },
		{ "poll-cpu", required_argument, 0, 'p' },
		{ "idle", required_argument, 0, 'i' },
		{ "wait-nr", required_argument, 0, 'n' },
		{ "spin", no_argument, 0, 's' },
		{ "no-fixed", no_argument, 0, 'F' },
		{ "quiet", no_argument, 0, 'q' },
		{ "autogroup-nice", required_argument, 0, 'g' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "f:m:k:d:t:w:a:p:i:n:sFqg:h", lo, NULL)) != -1) {
		switch (c) {
		case 'f': o.dev = optarg; break;
		case 'm': {
			unsigned i;

			for (i = 0; i < 4; i++)
				if (!strcmp(optarg, mode_names[i]))
					break;
			if (i == 4)
				die("unknown mode '%s'", optarg);
			o.mode = (enum mode)i;
			break;
		}
		case 'k': o.rings = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'd': o.depth = (unsigned)strtoul(optarg, NULL, 0); break;
		case 't': o.seconds = atof(optarg); break;
		case 'w': o.warmup = atof(optarg); break;
		case 'a': o.app_cpu = atoi(optarg); break;
		case 'p': o.poll_cpu = atoi(optarg); break;
		case 'i': o.idle_ms = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'n': o.wait_nr = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': o.wait = WAIT_SPIN; break;
		case 'F': o.fixed_files = false; break;
		case 'q': o.quiet = true; break;
		case 'g': o.autogroup_nice = atoi(optarg); break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (!o.dev)
		usage(2);
	if (!o.rings || !o.depth || o.depth > 4096 || o.rings > 64 || o.seconds <= 0)
		die("need 1 <= rings <= 64, 1 <= depth <= 4096, time > 0");
	if (!o.wait_nr)
		o.wait_nr = 1;
}

int main(int argc, char **argv)
{
	struct tsample s0[MAX_TASKS], s1[MAX_TASKS], mid[MAX_TASKS];
	struct cpustat app_cpu0, app_cpu1, poll_cpu0, poll_cpu1;
	double app_busy, poll_busy, app_ours, poll_ours;
	unsigned nw, i, k, max_sqp = 0, max_wrk = 0, sqp_cpus = 0;
	uint64_t *start_done, total = 0, blocks = 0, wakeups = 0;
	uint64_t *start_blocks, *start_wakeups, min_ring = UINT64_MAX, max_ring = 0;
	double t0, t1, elapsed, kind_run[T_KINDS] = { 0 }, kind_wait[T_KINDS] = { 0 };
	pthread_t *threads;
	struct worker *ws;
	int devfd, n0, n1, nm, shared_members = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	if (o.autogroup_nice != INT_MIN)
		own_autogroup(o.autogroup_nice);

	devfd = open(o.dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (devfd < 0)
		die("open %s O_DIRECT: %s", o.dev, strerror(errno));
	dev_blocks = device_bytes(devfd) / BS;
	if (dev_blocks < 1)
		die("%s is smaller than %u bytes", o.dev, BS);

	/* The main thread samples /proc; keep it off the application CPU's
	 * hot path as much as possible but never on the poller's CPU either:
	 * it sleeps almost all the time, so CPU 0 with the workers is fine. */
	pin_self(o.app_cpu);

	nw = o.mode == MODE_SINGLE ? 1 : o.rings;
	ws = aligned_alloc(64, sizeof(*ws) * nw);
	threads = calloc(nw, sizeof(*threads));
	start_done = calloc(nw, sizeof(*start_done));
	start_blocks = calloc(nw, sizeof(*start_blocks));
	start_wakeups = calloc(nw, sizeof(*start_wakeups));
	if (!ws || !threads || !start_done || !start_blocks || !start_wakeups)
		die("out of memory");
	memset(ws, 0, sizeof(*ws) * nw);

	for (i = 0; i < nw; i++) {
		ws[i].index = i;
		setup_ring(&ws[i], o.mode == MODE_SINGLE ? o.rings * o.depth : o.depth, devfd);
	}
#ifdef HAVE_RSURING_H
	if (o.mode == MODE_SHARED) {
		struct rsuring_sqpoll_info info;
		int ret = rsuring_sqpoll_group(&ws[nw - 1].ring, &info);

		if (ret < 0)
			die("rsuring_sqpoll_group: %s (ring not in a shared poller group)", strerror(-ret));
		if (info.cpu != o.poll_cpu)
			die("shared poller on CPU %d, expected %d", info.cpu, o.poll_cpu);
		shared_members = (int)info.members;
	}
#endif
	if (!o.quiet) {
		printf("rings: mode=%s rings=%u depth=%u dev=%s (%" PRIu64 " MiB) app-cpu=%d poll-cpu=%d"
		       " idle=%ums wait=%s wait-nr=%u fixed-files=%d\n",
		       mode_names[o.mode], nw, ws[0].depth, o.dev, dev_blocks * BS >> 20,
		       o.app_cpu, o.poll_cpu, o.idle_ms, o.wait == WAIT_SPIN ? "spin" : "block",
		       o.wait_nr, o.fixed_files);
		printf("rings: io_uring_queue_init_params from %s\n",
		       library_of((void *)io_uring_queue_init_params));
		if (shared_members >= 0)
			printf("rings: rsuring_sqpoll_group: %d rings share the poller on CPU %d\n",
			       shared_members, o.poll_cpu);
	}

	for (i = 0; i < nw; i++) {
		int ret = pthread_create(&threads[i], NULL, worker_main, &ws[i]);

		if (ret)
			die("pthread_create: %s", strerror(ret));
	}
	while (atomic_load(&ready_threads) < nw)
		sleep_s(0.001);

	sleep_s(o.warmup);
	n0 = sample_tasks(s0, ws, nw);
	sample_cpu(o.app_cpu, &app_cpu0);
	sample_cpu(o.poll_cpu, &poll_cpu0);
	t0 = now_s();
	for (i = 0; i < nw; i++) {
		start_done[i] = atomic_load(&ws[i].done);
		start_blocks[i] = atomic_load(&ws[i].blocks);
		start_wakeups[i] = atomic_load(&ws[i].wakeups);
	}

	/* Count pollers and io-wq workers a few times while measuring. */
	for (k = 0; k < 4; k++) {
		unsigned sqp = 0, wrk = 0, cpus = 0;

		sleep_s(o.seconds / 4);
		nm = sample_tasks(mid, ws, nw);
		for (int j = 0; j < nm; j++) {
			if (mid[j].kind == T_SQP) {
				sqp++;
				if (mid[j].cpu >= 0 && mid[j].cpu < 32)
					cpus |= 1u << mid[j].cpu;
			} else if (mid[j].kind == T_WRK) {
				wrk++;
			}
		}
		if (sqp > max_sqp)
			max_sqp = sqp;
		if (wrk > max_wrk)
			max_wrk = wrk;
		sqp_cpus |= cpus;
	}

	t1 = now_s();
	for (i = 0; i < nw; i++) {
		uint64_t d = atomic_load(&ws[i].done) - start_done[i];

		start_done[i] = d;
		total += d;
		blocks += atomic_load(&ws[i].blocks) - start_blocks[i];
		wakeups += atomic_load(&ws[i].wakeups) - start_wakeups[i];
	}
	n1 = sample_tasks(s1, ws, nw);
	sample_cpu(o.app_cpu, &app_cpu1);
	sample_cpu(o.poll_cpu, &poll_cpu1);
	elapsed = t1 - t0;

	atomic_store(&stop, true);
	for (i = 0; i < nw; i++)
		pthread_join(threads[i], NULL);

	for (int j = 0; j < n1; j++) {
		const struct tsample *a = find_task(s0, n0, s1[j].tid);
		uint64_t r0 = a ? a->run_ns : 0, w0 = a ? a->wait_ns : 0;

		kind_run[s1[j].kind] += (double)(s1[j].run_ns - r0) * 1e-9;
		kind_wait[s1[j].kind] += (double)(s1[j].wait_ns - w0) * 1e-9;
	}

	/*
	 * Whole-CPU busy time against what this process used there: the rest
	 * is other load (or kernel work done outside our threads), which on a
	 * shared machine is noise to report, not to hide.
	 */
	app_busy = cpu_busy_pct(&app_cpu0, &app_cpu1);
	poll_busy = cpu_busy_pct(&poll_cpu0, &poll_cpu1);
	app_ours = 100 * (kind_run[T_APP] + kind_run[T_OTHER]) / elapsed;
	poll_ours = 100 * kind_run[T_SQP] / elapsed;

	if (!o.quiet) {
		printf("rings: %.0f IOPS total over %.2f s", total / elapsed, elapsed);
		if (nw > 1) {
			printf(" (per ring:");
			for (i = 0; i < nw; i++)
				printf(" %.0f", start_done[i] / elapsed);
			printf(")");
		}
		printf("\n");
		printf("rings: iou-sqp threads seen: %u (on CPU mask %#x), iou-wrk threads: %u\n",
		       max_sqp, sqp_cpus, max_wrk);
		printf("rings: app waits in kernel: %.0f/s (%.2f IOs per wait), poller wake-ups: %.0f/s\n",
		       blocks / elapsed, blocks ? (double)total / blocks : 0.0, wakeups / elapsed);
		for (int kd = 0; kd < T_KINDS; kd++)
			if (kind_run[kd] > 0 || kind_wait[kd] > 0)
				printf("rings: cpu %-8s run %5.1f%%  runqueue-wait %6.1f%% (sum over threads, of one CPU)\n",
				       tkind_names[kd], 100 * kind_run[kd] / elapsed,
				       100 * kind_wait[kd] / elapsed);
		printf("rings: CPU %d (app) busy %.0f%% (this process %.0f%%), CPU %d (poll) busy %.0f%% (iou-sqp %.0f%%)\n",
		       o.app_cpu, app_busy, app_ours, o.poll_cpu, poll_busy, poll_ours);
	}

	for (i = 0; i < nw; i++) {
		if (start_done[i] < min_ring)
			min_ring = start_done[i];
		if (start_done[i] > max_ring)
			max_ring = start_done[i];
	}
	printf("RESULT mode=%s rings=%u depth=%u iops=%.0f pollers=%u iowq=%u members=%d"
	       " app_cpu_pct=%.1f sqp_cpu_pct=%.1f sqp_wait_pct=%.1f waits_per_s=%.0f wakeups_per_s=%.0f"
	       " min_ring_iops=%.0f max_ring_iops=%.0f app_cpu_busy=%.0f poll_cpu_busy=%.0f\n",
	       mode_names[o.mode], o.rings, o.depth, total / elapsed, max_sqp, max_wrk, shared_members,
	       100 * kind_run[T_APP] / elapsed, 100 * kind_run[T_SQP] / elapsed,
	       100 * kind_wait[T_SQP] / elapsed, blocks / elapsed, wakeups / elapsed,
	       min_ring / elapsed, max_ring / elapsed, app_busy, poll_busy);

	for (i = 0; i < nw; i++) {
		if (!o.quiet)
			printf("rings: ring %u: %" PRIu64 " reads completed and checked in all\n",
			       i, atomic_load(&ws[i].done));
		io_uring_queue_exit(&ws[i].ring);
		free(ws[i].bufs);
	}
	close(devfd);
	free(ws);
	free(threads);
	free(start_done);
	free(start_blocks);
	free(start_wakeups);
	return 0;
}
