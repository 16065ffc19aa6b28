/* SPDX-License-Identifier: MIT */
/*
 * The bodies of the helpers that c_tests/rsuring_test.h declares (see
 * there). Compiled into every C test program with the program's own
 * flags and header; the extension helpers only where <rsuring.h> exists.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#if __has_include(<rsuring.h>)
#include <rsuring.h>
#endif
/* The watchdog is the program's (its T_WATCHDOG_SECS, or T_NO_WATCHDOG):
 * none from this file. */
#define T_NO_WATCHDOG
#include "rsuring_test.h"

#include <dirent.h>
#include <poll.h>
#include <sys/syscall.h>

/* ---- checks and the watchdog ------------------------------------------- */

unsigned t_watchdog_secs = T_WATCHDOG_SECS;
const char *volatile t_step = "start";
static char t_step_buf[256];
unsigned long t_progress_count;
static unsigned long t_progress_seen;
void t_set_step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t_step_buf, sizeof(t_step_buf), fmt, ap);
	va_end(ap);
	t_step = t_step_buf;
	T_PROGRESS();
}

void t_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d [step: %s] [pid %d]: ", file, line, t_step,
		(int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(T_EXIT_FAIL);
}

void t_watchdog(int sig)
{
	unsigned long now = __atomic_load_n(&t_progress_count, __ATOMIC_RELAXED);
	char msg[400];
	int n;

	(void)sig;
	if (now != t_progress_seen) {
		t_progress_seen = now;
		alarm(t_watchdog_secs);
		return;
	}
	n = snprintf(msg, sizeof(msg),
		     "FAIL watchdog: no progress for %u s (hang) [step: %s] [pid %d]\n",
		     t_watchdog_secs, t_step, (int)getpid());
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n);
	_exit(T_EXIT_FAIL);
}

void t_arm_watchdog(void)
{
	t_progress_seen = __atomic_load_n(&t_progress_count, __ATOMIC_RELAXED);
	signal(SIGALRM, t_watchdog);
	alarm(t_watchdog_secs);
}

struct io_uring_sqe *t_get_sqe_at(struct io_uring *ring,
						 const char *file, int line)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		t_fail_at(file, line, "io_uring_get_sqe returned NULL");
	return sqe;
}

struct io_uring_cqe *t_wait_cqe_at(struct io_uring *ring,
						  const char *file, int line)
{
	struct io_uring_cqe *cqe = NULL;
	int ret = io_uring_wait_cqe(ring, &cqe);

	if (ret < 0)
		t_fail_at(file, line, "io_uring_wait_cqe failed: %d (%s)", ret,
			  strerror(-ret));
	if (!cqe)
		t_fail_at(file, line, "io_uring_wait_cqe returned 0 but no cqe");
	return cqe;
}

struct t_cqe t_reap_at(struct io_uring *ring, const char *file,
				     int line)
{
	struct io_uring_cqe *cqe = t_wait_cqe_at(ring, file, line);
	struct t_cqe c;

	c.user_data = cqe->user_data;
	c.res = cqe->res;
	c.flags = cqe->flags;
	io_uring_cqe_seen(ring, cqe);
	return c;
}

struct t_cqe t_reap_expect_at(struct io_uring *ring, uint64_t user_data,
					    int32_t res, const char *file, int line)
{
	struct t_cqe c = t_reap_at(ring, file, line);

	if (c.user_data != user_data)
		t_fail_at(file, line, "CQE user_data %llu (res %d), expected %llu",
			  (unsigned long long)c.user_data, c.res,
			  (unsigned long long)user_data);
	if (res != T_ANY_RES && c.res != res)
		t_fail_at(file, line, "user_data %llu: res %d (%s), expected %d",
			  (unsigned long long)c.user_data, c.res,
			  c.res < 0 ? strerror(-c.res) : "ok", res);
	return c;
}

void t_reap_each_at(struct io_uring *ring, const struct t_want *want,
				  unsigned n, struct t_cqe *got, const char *file,
				  int line)
{
	unsigned long long seen = 0;
	unsigned i, k;

	if (n > 64)
		t_fail_at(file, line, "t_reap_each: %u CQEs, at most 64", n);
	for (i = 0; i < n; i++) {
		struct t_cqe c = t_reap_at(ring, file, line);

		for (k = 0; k < n; k++)
			if (!(seen & (1ull << k)) && want[k].user_data == c.user_data)
				break;
		if (k == n)
			t_fail_at(file, line, "CQE %u of %u: unexpected user_data %llu (res %d)",
				  i + 1, n, (unsigned long long)c.user_data, c.res);
		if (want[k].res != T_ANY_RES && c.res != want[k].res)
			t_fail_at(file, line, "user_data %llu: res %d (%s), expected %d",
				  (unsigned long long)c.user_data, c.res,
				  c.res < 0 ? strerror(-c.res) : "ok", want[k].res);
		seen |= 1ull << k;
		if (got)
			got[k] = c;
	}
}

struct __kernel_timespec t_timeout_ms(long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	return ts;
}

struct t_cqe t_reap_within_at(struct io_uring *ring, long ms,
					    const char *what, const char *file,
					    int line)
{
	struct __kernel_timespec ts = t_timeout_ms(ms);
	struct io_uring_cqe *cqe = NULL;
	struct t_cqe c;
	int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

	if (ret < 0 || !cqe)
		t_fail_at(file, line, "%s: no CQE within %ld ms (%d: %s)", what,
			  ms, ret, strerror(-ret));
	c.user_data = cqe->user_data;
	c.res = cqe->res;
	c.flags = cqe->flags;
	io_uring_cqe_seen(ring, cqe);
	T_PROGRESS();
	return c;
}

void t_cq_empty_at(struct io_uring *ring, const char *what,
				 const char *file, int line)
{
	struct io_uring_cqe *cqe = NULL;

	if (io_uring_peek_cqe(ring, &cqe) == 0 && cqe)
		t_fail_at(file, line, "%s: unexpected CQE user_data=%llu (0x%llx) res=%d",
			  what, (unsigned long long)cqe->user_data,
			  (unsigned long long)cqe->user_data, cqe->res);
}

unsigned char t_pattern(size_t off, unsigned seed)
{
	return (unsigned char)((off * 31u + seed * 7u + (off >> 8)) & 0xff);
}

void t_fill(void *buf, size_t len, size_t off, unsigned seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = t_pattern(off + i, seed);
}

long t_verify(const void *buf, size_t len, size_t off,
			    unsigned seed)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != t_pattern(off + i, seed))
			return (long)i;
	return -1;
}

int t_tmpfile(size_t size, unsigned seed)
{
	char path[] = "/tmp/rsuring-test-XXXXXX";
	unsigned char buf[4096];
	size_t off = 0;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		T_FAIL("mkstemp: %s", strerror(errno));
	unlink(path);
	while (off < size) {
		size_t n = size - off < sizeof(buf) ? size - off : sizeof(buf);
		ssize_t w;

		t_fill(buf, n, off, seed);
		w = pwrite(fd, buf, n, (off_t)off);
		if (w != (ssize_t)n)
			T_FAIL("pwrite to tmpfile: %s", strerror(errno));
		off += n;
	}
	return fd;
}

int t_data_file(void)
{
	int fd = t_tmpfile(T_DATA_SIZE, T_DATA_SEED);

	CHECK_SYS(fsync(fd));
	return fd;
}

void t_check_data(const unsigned char *buf, size_t len, size_t off,
				  const char *what)
{
	long bad = t_verify(buf, len, off, T_DATA_SEED);

	if (bad >= 0)
		T_FAIL("%s: byte %ld of the read at offset %zu is 0x%02x, want 0x%02x",
		       what, bad, off, buf[bad],
		       t_pattern(off + (size_t)bad, T_DATA_SEED));
}

const char *t_library(void)
{
	Dl_info info;

	if (dladdr((void *)io_uring_queue_init, &info) && info.dli_fname)
		return info.dli_fname;
	return NULL;
}

void print_impl(void)
{
	const char *lib = t_library();

	CHECK_MSG(lib != NULL, "dladdr cannot name the file of io_uring_queue_init");
	printf("impl=%s\n", lib);
}

void t_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		T_FAIL("pipe: %s", strerror(errno));
}

unsigned long long t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000ull +
	       (unsigned long long)ts.tv_nsec / 1000000ull;
}

void t_msleep(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void t_wait_child(pid_t pid, long ms, const char *what)
{
	unsigned long long end = t_now_ms() + (unsigned long long)ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		CHECK_MSG(r == 0, "waitpid(%s): %s", what, strerror(errno));
		if (t_now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			T_FAIL("%s (pid %d) still running after %ld ms (a hang?)",
			       what, (int)pid, ms);
		}
		t_msleep(2);
	}
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "%s failed (status 0x%x: %s %d)", what, status,
		  WIFEXITED(status) ? "exit" : "signal",
		  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

void t_queue_nops_at(struct io_uring *ring, unsigned n,
				   uint64_t base, const char *file, int line)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = t_get_sqe_at(ring, file, line);

		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, base + i);
	}
}

void t_queue_bad_at(struct io_uring *ring, uint64_t data,
				  const char *file, int line)
{
	struct io_uring_sqe *sqe = t_get_sqe_at(ring, file, line);

	io_uring_prep_nop(sqe);
	sqe->opcode = 0xff;
	io_uring_sqe_set_data64(sqe, data);
}

void t_nop_round_trip_at(struct io_uring *ring, unsigned n,
				       uint64_t base, const char *file, int line)
{
	unsigned i;
	int ret;

	t_queue_nops_at(ring, n, base, file, line);
	ret = io_uring_submit(ring);
	if (ret != (int)n)
		t_fail_at(file, line, "io_uring_submit returned %d (%s), expected %u",
			  ret, ret < 0 ? strerror(-ret) : "ok", n);
	for (i = 0; i < n; i++) {
		struct t_cqe c = t_reap_at(ring, file, line);

		if (c.user_data != base + i || c.res != 0)
			t_fail_at(file, line,
				  "NOP %u of %u: user_data %llu res %d, expected user_data %llu res 0",
				  i, n, (unsigned long long)c.user_data, c.res,
				  (unsigned long long)(base + i));
	}
}

void t_queue_init(struct io_uring *ring, unsigned entries,
				unsigned flags)
{
	int ret = io_uring_queue_init(entries, ring, flags);

	if (ret < 0)
		T_FAIL("io_uring_queue_init(%u, flags=0x%x) failed: %d (%s)",
		       entries, flags, ret, strerror(-ret));
}

int t_init_params(struct io_uring *ring, unsigned entries,
				struct io_uring_params *p, unsigned flags)
{
	memset(p, 0, sizeof(*p));
	p->flags = flags;
	return io_uring_queue_init_params(entries, ring, p);
}

int t_strict(void)
{
	const char *s = getenv("RSURING_STRICT");

	return s && strcmp(s, "1") == 0;
}

int count_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	CHECK(d != NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int t_proc_value(const char *path, const char *name, int base,
				 long long *v)
{
	size_t len = strlen(name);
	char line[256];
	int found = 0;
	FILE *f = fopen(path, "r");

	CHECK_MSG(f != NULL, "open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			*v = base == 10 ? strtoll(line + len + 1, NULL, 10)
					: (long long)strtoull(line + len + 1, NULL, base);
			found = 1;
		}
	fclose(f);
	return found;
}

int t_is_io_uring_fd(int fd)
{
	static const char want[] = "anon_inode:[io_uring]";
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return !strcmp(target, want);
}

int t_fdinfo_value(int fd, const char *name, long long *v)
{
	char path[64];
	long long head;
	int attempt;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	for (attempt = 0; attempt < 2100; attempt++) {
		if (t_proc_value(path, "SqHead", 10, &head) ||
		    !t_is_io_uring_fd(fd))
			break;
		if (attempt < 100)
			sched_yield();
		else
			usleep(1000);
	}
	return t_proc_value(path, name, 10, v);
}

int sqp_snapshot(int *tids, int max, int *settled)
{
	char path[300], stat[512];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	CHECK(d != NULL);
	*settled = 1;
	while ((de = readdir(d))) {
		char *open_paren, *close_paren, *fields;
		unsigned long flags = 0;
		size_t len;
		FILE *f;
		int i;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* the thread just exited */
		len = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
		stat[len] = '\0';
		open_paren = strchr(stat, '(');
		close_paren = strrchr(stat, ')');
		if (!open_paren || !close_paren || close_paren < open_paren)
			continue;
		*close_paren = '\0';
		/* after ")": state ppid pgrp session tty_nr tpgid flags */
		fields = close_paren + 1;
		for (i = 0; i < 6 && fields; i++)
			fields = strchr(fields + 1, ' ');
		if (fields)
			flags = strtoul(fields + 1, NULL, 10);
		if (!strncmp(open_paren + 1, "iou-sqp-", 8)) {
			if (tids && n < max)
				tids[n] = atoi(de->d_name);
			n++;
		} else if ((flags & SQ_PF_IO_WORKER) &&
			   strncmp(open_paren + 1, "iou-", 4)) {
			*settled = 0;
		}
	}
	closedir(d);
	return n;
}

int list_sqp_threads(int *tids, int max)
{
	unsigned long long end = t_now_ms() + 2000;
	int settled, n;

	for (;;) {
		n = sqp_snapshot(tids, max, &settled);
		if (settled || t_now_ms() >= end)
			return n;
		t_msleep(1);
	}
}

int count_sqp_threads(void)
{
	return list_sqp_threads(NULL, 0);
}

int wait_sqp_threads(int want, long timeout_ms)
{
	unsigned long long end = t_now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = count_sqp_threads();
		if (n == want || t_now_ms() >= end)
			return n;
		t_msleep(10);
	}
}

int thread_single_cpu(int tid)
{
	char path[100], line[256];
	FILE *f;
	int cpu = -2;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		char *v, *end;
		long c;

		if (strncmp(line, "Cpus_allowed_list:", 18))
			continue;
		v = line + 18;
		while (*v == ' ' || *v == '\t')
			v++;
		c = strtol(v, &end, 10);
		cpu = (end != v && (*end == '\n' || *end == '\0')) ? (int)c : -1;
		break;
	}
	fclose(f);
	return cpu;
}

void print_sqp_cpus(const char *label)
{
	int tids[64], cpus[64];
	int n = list_sqp_threads(tids, 64);
	int i, j;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++) {
		int c = thread_single_cpu(tids[i]);

		for (j = i; j > 0 && cpus[j - 1] > c; j--)
			cpus[j] = cpus[j - 1];
		cpus[j] = c;
	}
	printf("%s=", label);
	for (i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", cpus[i]);
	printf("\n");
}

void check_pollers_at(const char *file, int line, int n,
				       const int *cpus)
{
	int tids[64], got[64], used[64] = { 0 };
	int count = wait_sqp_threads(n, SQ_THREAD_GONE_MS);
	int i, j;

	if (count != n)
		t_fail_at(file, line, "expected %d iou-sqp threads, found %d",
			   n, count);
	count = list_sqp_threads(tids, 64);
	if (count != n)
		t_fail_at(file, line, "iou-sqp thread count changed: %d -> %d",
			   n, count);
	for (i = 0; i < n; i++)
		got[i] = thread_single_cpu(tids[i]);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			if (!used[j] && got[j] == cpus[i])
				break;
		if (j == n) {
			char buf[200];
			int off = 0;

			for (j = 0; j < n && off < 180; j++)
				off += snprintf(buf + off, sizeof(buf) - off,
						" tid %d cpu %d;", tids[j], got[j]);
			t_fail_at(file, line,
				   "no iou-sqp thread bound to cpu %d (-1 = unbound); threads:%s",
				   cpus[i], buf);
		}
		used[j] = 1;
	}
}

void exit_rings_no_leak(struct io_uring *rings, int n, int fds0)
{
	int i;

	for (i = 0; i < n; i++)
		io_uring_queue_exit(&rings[i]);
	CHECK_EQ(count_fds(), fds0);
	CHECK_NO_POLLERS();
}

void teardown_ok(struct io_uring *rings, int n, int fds0, int data_fd,
		 const char *name)
{
	T_STEP("teardown");
	exit_rings_no_leak(rings, n, fds0);
	close(data_fd);
	printf("%s: ok\n", name);
}

void end_no_leak(int fds0, int data_fd)
{
	T_STEP("end");
	CHECK_NO_POLLERS();
	CHECK_EQ(count_fds(), fds0);
	close(data_fd);
}

struct io_uring_cqe *wait_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe = NULL;
	int ret = io_uring_wait_cqe(ring, &cqe);

	CHECK_MSG(ret == 0, "io_uring_wait_cqe: %d (%s)", ret, strerror(-ret));
	CHECK(cqe != NULL);
	T_PROGRESS();
	return cqe;
}

void ring_nop(struct io_uring *ring, unsigned long long tag)
{
	struct io_uring_cqe *cqe;
	int ret;

	t_queue_nops(ring, 1, tag);
	ret = io_uring_submit(ring);
	CHECK_SUBMITTED(ret, 1, "NOP");
	cqe = wait_one(ring);
	CHECK_MSG(cqe->user_data == tag, "NOP user_data %llu, want %llu",
		  (unsigned long long)cqe->user_data, tag);
	CHECK_MSG(cqe->res == 0, "NOP res %d", cqe->res);
	io_uring_cqe_seen(ring, cqe);
}

void queue_read(struct io_uring *ring, int fd, void *buf,
				 unsigned len, size_t off, unsigned long long tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK_MSG(sqe != NULL, "no SQE for a read");
	io_uring_prep_read(sqe, fd, buf, len, (__u64)off);
	io_uring_sqe_set_data64(sqe, tag);
}

void ring_io(struct io_uring *ring, int fd, unsigned which)
{
	unsigned char buf[T_CHUNK];
	size_t off = ((size_t)which * T_CHUNK * 3 + 512) % (T_DATA_SIZE - T_CHUNK);
	struct io_uring_cqe *cqe;
	int ret;

	memset(buf, 0, sizeof(buf));
	queue_read(ring, fd, buf, sizeof(buf), off, 0xbeef00 + which);
	ret = io_uring_submit(ring);
	CHECK_SUBMITTED(ret, 1, "read");
	cqe = wait_one(ring);
	CHECK_MSG(cqe->user_data == 0xbeef00 + which, "read user_data %llu",
		  (unsigned long long)cqe->user_data);
	CHECK_MSG(cqe->res == T_CHUNK, "read res %d (%s)", cqe->res,
		  cqe->res < 0 ? strerror(-cqe->res) : "short");
	io_uring_cqe_seen(ring, cqe);
	t_check_data(buf, sizeof(buf), off, "ring_io");
	ring_nop(ring, 0x1000 + which);
}

void rings_io_concurrent(struct io_uring *rings, int n, int fd)
{
	static unsigned char bufs[64][2][T_CHUNK];
	int i, k, ret;

	CHECK(n <= 64);
	for (i = 0; i < n; i++) {
		memset(bufs[i], 0, sizeof(bufs[i]));
		for (k = 0; k < 2; k++)
			queue_read(&rings[i], fd, bufs[i][k], T_CHUNK,
				   (size_t)(i * 2 + k) * T_CHUNK, (unsigned long long)(i * 2 + k));
		ret = io_uring_submit(&rings[i]);
		CHECK_SUBMITTED(ret, 2, "2 reads");
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < 2; k++) {
			struct io_uring_cqe *cqe = wait_one(&rings[i]);
			unsigned long long ud = cqe->user_data;

			CHECK_MSG(ud / 2 == (unsigned long long)i,
				  "ring %d got user_data %llu", i, ud);
			CHECK_MSG(cqe->res == T_CHUNK, "ring %d read res %d", i, cqe->res);
			io_uring_cqe_seen(&rings[i], cqe);
			t_check_data(bufs[i][ud % 2], T_CHUNK, (size_t)ud * T_CHUNK,
				   "concurrent read");
		}
	}
}

void skip_if_no_io_uring(int ret)
{
	if (ret == -ENOSYS || ret == -EPERM)
		T_SKIP("io_uring unavailable: %s", strerror(-ret));
}

#ifdef RSURING_H
int shared_ring_init(struct io_uring *ring, int cpu, unsigned entries)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQPOLL_PERCPU;
	if (cpu >= 0) {
		p.flags |= IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = (unsigned)cpu;
	}
	return io_uring_queue_init_params(entries, ring, &p);
}

void shared_ring(struct io_uring *ring, int cpu)
{
	int ret = shared_ring_init(ring, cpu, 8);

	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "shared ring on cpu %d: setup returned %d (%s)", cpu,
		  ret, strerror(-ret));
	CHECK_MSG(ring->flags & IORING_SETUP_SQPOLL, "ring.flags 0x%x lacks SQPOLL",
		  ring->flags);
	CHECK_MSG(!(ring->flags & IORING_SETUP_SQPOLL_PERCPU),
		  "ring.flags 0x%x shows the library-only PERCPU bit", ring->flags);
	CHECK_MSG(!(ring->flags & IORING_SETUP_ATTACH_WQ),
		  "ring.flags 0x%x shows ATTACH_WQ the application did not ask for",
		  ring->flags);
}

void second_ring_on_cpu0(struct io_uring *ring, struct io_uring *first,
			 int data_fd)
{
	shared_ring(ring, 0);
	CHECK_GROUP(ring, 0, 2);
	CHECK_GROUP(first, 0, 2);
	CHECK_POLLERS(1, 0);
	ring_io(ring, data_fd, 2);
}
#endif /* RSURING_H */

long ring_sq_thread(int ring_fd)
{
	long long tid = -1;

	t_fdinfo_value(ring_fd, "SqThread", &tid);
	return (long)tid;
}

int is_own_sqp_thread(long tid)
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

void check_plain_ring_at(const char *file, int line,
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

long check_transparent_ring_at(const char *file, int line,
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

int expect_transparent(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "transparent"))
		return 1;
	if (argc >= 2 && !strcmp(argv[1], "plain"))
		return 0;
	fprintf(stderr, "usage: %s plain|transparent [...]\n", argv[0]);
	exit(2);
}

void check_ring_mode_at(const char *file, int line,
					 struct io_uring *ring, int transparent)
{
	if (transparent)
		check_transparent_ring_at(file, line, ring);
	else
		check_plain_ring_at(file, line, ring, 1);
}

void contract_ring_at(const char *file, int line, struct io_uring *ring,
				       unsigned entries, int transparent)
{
	int ret = io_uring_queue_init(entries, ring, 0);

	skip_if_no_io_uring(ret);
	if (ret != 0)
		t_fail_at(file, line, "setup = %d (%s)", ret, strerror(-ret));
	check_ring_mode_at(file, line, ring, transparent);
}

unsigned long long status_field(const char *name, int base)
{
	long long v = 0;

	CHECK_MSG(t_proc_value("/proc/self/status", name, base, &v),
		  "no %s in /proc/self/status", name);
	return (unsigned long long)v;
}

int has_no_capabilities(void)
{
	return status_field("CapPrm", 16) == 0 && status_field("CapEff", 16) == 0 &&
	       status_field("CapAmb", 16) == 0;
}

void become_nobody(void)
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

void check_unprivileged(void)
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

static const char *tp_alarm_what = "";
void tp_alarm_fired(int sig)
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

void hang_alarm(unsigned secs, const char *what)
{
	tp_alarm_what = what;
	signal(SIGALRM, tp_alarm_fired);
	alarm(secs);
}

void hang_alarm_off(void)
{
	t_arm_watchdog();
}

void reap_nops(struct io_uring *ring, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct t_cqe c = t_reap_within(ring, 1000, "a NOP's CQE");

		CHECK_MSG(c.res == 0, "CQE %u of %u (user_data %llu): res %d", i, n,
			  (unsigned long long)c.user_data, c.res);
	}
}

void use_rings(int transparent)
{
	struct io_uring ring[3];
	int data_fd = t_data_file();
	int i;

	for (i = 0; i < 3; i++) {
		T_STEP("ring %d", i);
		CONTRACT_RING(&ring[i], 8, transparent);
		ring_io(&ring[i], data_fd, (unsigned)i);
	}
	for (i = 0; i < 3; i++)
		ring_io(&ring[i], data_fd, (unsigned)i + 3);
	for (i = 0; i < 3; i++)
		io_uring_queue_exit(&ring[i]);
	close(data_fd);
}

int t_on_rsuring(void)
{
	return dlsym(RTLD_DEFAULT, "rsuring_sqpoll_group") != NULL;
}

int t_run_cases(const struct t_case *cases, size_t n)
{
	int failed = 0, skipped = 0;
	size_t i;

	/* The children have their own watchdogs; the driver times us out. */
	alarm(0);
	for (i = 0; i < n; i++) {
		int status = 0;
		pid_t pid;

		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "fork: %s\n", strerror(errno));
			return T_EXIT_FAIL;
		}
		if (pid == 0) {
			T_STEP(cases[i].name);
			alarm(t_watchdog_secs);
			cases[i].run();
			fflush(stdout);
			_exit(T_EXIT_PASS);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) && WEXITSTATUS(status) == T_EXIT_PASS) {
			printf("case %s: ok\n", cases[i].name);
		} else if (WIFEXITED(status) &&
			   WEXITSTATUS(status) == T_EXIT_SKIP) {
			printf("case %s: skipped\n", cases[i].name);
			skipped++;
		} else {
			if (WIFSIGNALED(status))
				printf("case %s: FAILED (signal %d)\n",
				       cases[i].name, WTERMSIG(status));
			else
				printf("case %s: FAILED\n", cases[i].name);
			failed++;
		}
	}
	fflush(stdout);
	if (failed)
		return T_EXIT_FAIL;
	return skipped ? T_EXIT_SKIP : T_EXIT_PASS;
}

/* ---- printed differentials (differential, hostile) ---------------------- */

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("", fmt, ap);
	va_end(ap);
}

void crit(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("* ", fmt, ap);
	va_end(ap);
}

/* ---- children ---------------------------------------------------------- */

#define MAX_CHILDREN 64
static volatile pid_t children[MAX_CHILDREN];

void track_child(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++) {
		if (children[i] == 0) {
			children[i] = pid;
			return;
		}
	}
}

static void forget_child(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pid)
			children[i] = 0;
}

void kill_children(void)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("!! ", fmt, ap);
	va_end(ap);
	kill_children();
	exit(2);
}

const char *reap_child(pid_t pid, int ms)
{
	static char buf[64];
	long long deadline = (long long)t_now_ms() + ms;
	int status = 0;
	pid_t got;

	for (;;) {
		got = waitpid(pid, &status, WNOHANG | __WALL);
		if (got == pid)
			break;
		if (got < 0 && errno != EINTR) {
			snprintf(buf, sizeof(buf), "waitpid failed (%s)",
				 strerrorname_np(errno));
			forget_child(pid);
			return buf;
		}
		if ((long long)t_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, __WALL);
			forget_child(pid);
			return "hung (killed)";
		}
		usleep(2000);
	}
	forget_child(pid);
	if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "signal %d (%s)", WTERMSIG(status),
			 sigabbrev_np(WTERMSIG(status)));
	else
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(status));
	return buf;
}

/* ---- formatting -------------------------------------------------------- */

const char *rstr(long long ret, int slot)
{
	static char bufs[4][48];
	char *buf = bufs[slot & 3];
	const char *name = ret < 0 ? strerrorname_np((int)-ret) : NULL;

	if (ret < 0)
		snprintf(buf, sizeof(bufs[0]), "%lld (%s)", ret,
			 name ? name : "?");
	else
		snprintf(buf, sizeof(bufs[0]), "%lld", ret);
	return buf;
}

/* ---- files ------------------------------------------------------------- */

void make_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		die("pipe2: %s", strerror(errno));
}

int make_letters_file(void)
{
	char path[] = "/tmp/rsuring-hostile-XXXXXX";
	char buf[4096];
	int fd = mkstemp(path), i;

	if (fd < 0)
		die("mkstemp: %s", strerror(errno));
	unlink(path);
	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		die("pwrite: %s", strerror(errno));
	return fd;
}

/* ---- rings ------------------------------------------------------------- */

int wait_one_within(struct io_uring *ring, int ms, __u64 *ud, int *res)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};
	struct io_uring_cqe *cqe = NULL;
	int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

	if (ret < 0)
		return ret;
	if (!cqe)
		return -ENODATA;
	*ud = cqe->user_data;
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

const char *cqe_str(struct io_uring *ring, int ms)
{
	static char buf[96];
	__u64 ud = 0;
	int res = 0, ret = wait_one_within(ring, ms, &ud, &res);

	if (ret < 0)
		snprintf(buf, sizeof(buf), "no cqe (%s)", rstr(ret, 3));
	else
		snprintf(buf, sizeof(buf), "cqe ud=0x%llx res=%s",
			 (unsigned long long)ud, rstr(res, 3));
	return buf;
}

const char *nop_roundtrip(struct io_uring *ring, __u64 ud)
{
	static char buf[160];
	int ret;

	queue_nop(ring, ud, 0);
	ret = io_uring_submit(ring);
	snprintf(buf, sizeof(buf), "submit=%s %s", rstr(ret, 2),
		 cqe_str(ring, 1000));
	return buf;
}

/* ---- pipes and threads ------------------------------------------------- */

const char *eof_within(int rfd, int ms)
{
	long long deadline = (long long)t_now_ms() + ms;
	char buf[256];

	for (;;) {
		long long left = deadline - (long long)t_now_ms();
		struct pollfd pfd = { .fd = rfd, .events = POLLIN };
		int n;

		if (left <= 0)
			return "no-eof";
		n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (n <= 0)
			continue;
		n = (int)read(rfd, buf, sizeof(buf));
		if (n == 0)
			return "eof";
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			die("read: %s", strerror(errno));
	}
}

int t_count_sq_threads(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	int count = 0;

	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		char path[300], comm[64] = "";
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* the thread has just gone */
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, "iou-sqp-", 8))
			count++;
		fclose(f);
	}
	closedir(dir);
	return count;
}

int sq_threads(void)
{
	int count = t_count_sq_threads();

	if (count < 0)
		die("opendir /proc/self/task: %s", strerror(errno));
	return count;
}

/* ---- sections ---------------------------------------------------------- */

static const char *t_section_name = "none";
static unsigned t_section_secs;

static void t_section_watchdog(int sig)
{
	char buf[256];
	int n;

	(void)sig;
	n = snprintf(buf, sizeof(buf),
		     "!! watchdog: section %s still running after %u s "
		     "[step: %s]\n",
		     t_section_name, t_section_secs, t_step);
	if (n > 0)
		(void)!write(STDOUT_FILENO, buf, (size_t)n);
	kill_children();
	_exit(3);
}

void start_section_watchdog(const char *name, unsigned secs)
{
	t_section_name = name;
	t_section_secs = secs;
	signal(SIGALRM, t_section_watchdog);
	alarm(secs);
}

void report_library(void)
{
	const char *lib = t_library();

	if (lib)
		fprintf(stderr, "library: %s\n", lib);
}

/* ---- raw system calls -------------------------------------------------- */

long sys_register(int fd, unsigned op, const void *arg, unsigned nr)
{
	long ret = syscall(__NR_io_uring_register, fd, op, arg, nr);

	return ret < 0 ? -errno : ret;
}

long sys_enter(int fd, unsigned to_submit, unsigned min, unsigned flags)
{
	long ret = syscall(__NR_io_uring_enter, fd, to_submit, min, flags,
			   NULL, 0);

	return ret < 0 ? -errno : ret;
}

long raw_register_ring(int ring_fd, unsigned offset, unsigned *got)
{
	struct io_uring_rsrc_update upd = {
		.offset = offset,
		.data = (__u64)ring_fd,
	};
	long ret = sys_register(ring_fd, IORING_REGISTER_RING_FDS, &upd, 1);

	if (got)
		*got = upd.offset;
	return ret;
}

long raw_unregister_ring(int any_ring_fd, unsigned offset)
{
	struct io_uring_rsrc_update upd = { .offset = offset };

	return sys_register(any_ring_fd, IORING_UNREGISTER_RING_FDS, &upd, 1);
}

static const char *err_name(long long ret)
{
	const char *name = ret < 0 ? strerrorname_np((int)-ret) : NULL;

	return name ? name : "?";
}

void show_ret(const char *what, long long ret)
{
	if (ret < 0)
		say("%s = %lld (%s)", what, ret, err_name(ret));
	else
		say("%s = %lld", what, ret);
}

void show_ret_in(const char *what, long long ret, long long lo, long long hi)
{
	if (ret >= lo && ret <= hi)
		say("%s = in [%lld, %lld]", what, lo, hi);
	else
		show_ret(what, ret);
}

struct cqe_rec {
	__u64 ud;
	__s32 res;
	__u32 flags;
	__u64 big[2];
	int has_big;
};

/* Flags as names; IORING_CQE_F_SOCK_NONEMPTY is left out (timing). */
static void flags_str(__u32 flags, char *buf, size_t len)
{
	__u32 rest = flags & 0xffff &
		     ~(IORING_CQE_F_SOCK_NONEMPTY | IORING_CQE_F_BUFFER |
		       IORING_CQE_F_MORE | IORING_CQE_F_NOTIF);
	size_t used = 0;

	buf[0] = '\0';
	if (flags & IORING_CQE_F_BUFFER)
		used += (size_t)snprintf(buf + used, len - used, "|BUFFER(%u)",
					 flags >> IORING_CQE_BUFFER_SHIFT);
	if (flags & IORING_CQE_F_MORE)
		used += (size_t)snprintf(buf + used, len - used, "|MORE");
	if (flags & IORING_CQE_F_NOTIF)
		used += (size_t)snprintf(buf + used, len - used, "|NOTIF");
	if (rest)
		used += (size_t)snprintf(buf + used, len - used, "|0x%x", rest);
	if (used == 0)
		snprintf(buf, len, "0");
	else
		memmove(buf, buf + 1, strlen(buf));
}

static void print_rec(const char *indent, const struct cqe_rec *r)
{
	char res[32], flags[96];

	if ((r->ud & UD_FD) && r->res >= 0)
		snprintf(res, sizeof(res), "fd");
	else if (r->res < 0)
		snprintf(res, sizeof(res), "%d (%s)", r->res, err_name(r->res));
	else
		snprintf(res, sizeof(res), "%d", r->res);
	flags_str(r->flags, flags, sizeof(flags));
	if (r->has_big)
		say("%scqe ud=0x%llx res=%s flags=%s big=%llx,%llx", indent,
		    (unsigned long long)r->ud, res, flags,
		    (unsigned long long)r->big[0],
		    (unsigned long long)r->big[1]);
	else
		say("%scqe ud=0x%llx res=%s flags=%s", indent,
		    (unsigned long long)r->ud, res, flags);
}

static struct cqe_rec record(struct io_uring *ring,
			     const struct io_uring_cqe *cqe)
{
	struct cqe_rec r = {
		.ud = cqe->user_data,
		.res = cqe->res,
		.flags = cqe->flags,
	};

	if (ring->flags & IORING_SETUP_CQE32) {
		r.has_big = 1;
		r.big[0] = cqe->big_cqe[0];
		r.big[1] = cqe->big_cqe[1];
	}
	return r;
}

void submit_show(struct io_uring *ring, const char *what, unsigned expected)
{
	show_ret(what, io_uring_submit(ring));
	show_cqes(ring, expected, 1000, NULL);
}

void show_cqe(const char *what, const struct io_uring_cqe *cqe)
{
	struct cqe_rec r;

	if (!cqe) {
		say("%s: no cqe", what);
		return;
	}
	r.ud = cqe->user_data;
	r.res = cqe->res;
	r.flags = cqe->flags;
	r.has_big = 0;
	printf("%s: ", what);
	print_rec("", &r);
}

#define MAX_CQES 64

void wait_sq_head(struct io_uring *ring)
{
	int waited;

	if (!(ring->flags & IORING_SETUP_SQPOLL))
		return;
	for (waited = 0; io_uring_sq_ready(ring) && waited < 2000; waited++)
		usleep(1000);
}

unsigned show_cqes(struct io_uring *ring, unsigned expected, long timeout_ms,
		   int *fds)
{
	struct cqe_rec recs[MAX_CQES];
	long long deadline = (long long)t_now_ms() + timeout_ms;
	struct io_uring_cqe *cqe;
	unsigned n = 0, nfds = 0, i, j;

	while (n < expected && n < MAX_CQES) {
		long long left = deadline - (long long)t_now_ms();
		struct __kernel_timespec ts;
		int ret;

		if (left <= 0)
			break;
		ts = t_timeout_ms((long)left);
		cqe = NULL;
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (ret < 0 || !cqe) {
			if (ret != -ETIME)
				show_ret("  wait_cqe_timeout", ret);
			break;
		}
		recs[n++] = record(ring, cqe);
		io_uring_cqe_seen(ring, cqe);
	}
	/* Anything already posted besides is printed too. */
	while (n < MAX_CQES && io_uring_peek_cqe(ring, &cqe) == 0 && cqe) {
		recs[n++] = record(ring, cqe);
		io_uring_cqe_seen(ring, cqe);
	}
	for (i = 0; i < n; i++)
		if (fds && (recs[i].ud & UD_FD) && recs[i].res >= 0 && nfds < 16)
			fds[nfds++] = recs[i].res;
	/* Stable insertion sort by user_data. */
	for (i = 1; i < n; i++) {
		struct cqe_rec r = recs[i];

		for (j = i; j > 0 && recs[j - 1].ud > r.ud; j--)
			recs[j] = recs[j - 1];
		recs[j] = r;
	}
	for (i = 0; i < n; i++)
		print_rec("  ", &recs[i]);
	if (n < expected)
		say("  (%u of %u CQEs within %ld ms)", n, expected, timeout_ms);
	return n;
}

struct io_uring_sqe *sqe_of(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		die("io_uring_get_sqe returned NULL [step: %s]", t_step);
	return sqe;
}

void queue_nop(struct io_uring *ring, __u64 ud, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, ud);
	sqe->flags |= (__u8)sqe_flags;
}

void queue_bad(struct io_uring *ring, __u64 ud, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_nop(sqe);
	sqe->opcode = 0xff;
	io_uring_sqe_set_data64(sqe, ud);
	sqe->flags |= (__u8)sqe_flags;
}

void init_or_die(struct io_uring *ring)
{
	int ret = io_uring_queue_init(8, ring, 0);

	if (ret < 0)
		die("io_uring_queue_init: %s", rstr(ret, 0));
}

void init_params_or_die(struct io_uring *ring, struct io_uring_params *p,
			unsigned flags)
{
	int ret;

	memset(p, 0, sizeof(*p));
	p->flags = flags;
	ret = io_uring_queue_init_params(8, ring, p);
	if (ret < 0)
		die("io_uring_queue_init_params: %s", rstr(ret, 0));
}

void init_shown(struct io_uring *ring, int critical)
{
	int ret = io_uring_queue_init(8, ring, 0);

	if (critical)
		crit("io_uring_queue_init = %s", rstr(ret, 0));
	else
		say("io_uring_queue_init = %s", rstr(ret, 0));
	if (ret < 0)
		die("io_uring_queue_init failed");
}

int init_ring(struct io_uring *ring, unsigned entries, unsigned flags,
	      const char *what)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	if (flags & IORING_SETUP_SQPOLL)
		p.sq_thread_idle = 50;
	ret = io_uring_queue_init_params(entries, ring, &p);
	show_ret(what, ret);
	return ret;
}

void need(int ret, const char *what)
{
	if (ret < 0) {
		say("!! %s failed (%d), section ends", what, ret);
		exit(1);
	}
}

unsigned char pattern_at(size_t off)
{
	return (unsigned char)(off * 7 + off / 251);
}

int make_pattern_file(size_t size)
{
	char path[] = "/tmp/rsuring-differential-XXXXXX";
	unsigned char buf[4096];
	size_t off, i;
	int fd = mkstemp(path);

	if (fd < 0) {
		say("!! mkstemp: %s", strerror(errno));
		exit(1);
	}
	unlink(path);
	for (off = 0; off < size; off += sizeof(buf)) {
		for (i = 0; i < sizeof(buf); i++)
			buf[i] = pattern_at(off + i);
		if (pwrite(fd, buf, sizeof(buf), (off_t)off) != sizeof(buf)) {
			say("!! pwrite: %s", strerror(errno));
			exit(1);
		}
	}
	return fd;
}
