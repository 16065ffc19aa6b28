/* SPDX-License-Identifier: MIT */
/*
 * The differential program's runner and printing helpers (see diff.h).
 */
#include "diff.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>

/* A section that takes longer than this is reported as stuck. */
#define SECTION_WATCHDOG_SECS 20

const char *volatile diff_step = "start";
static const char *section_name = "none";
static unsigned section_watchdog_secs = SECTION_WATCHDOG_SECS;

void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
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

struct __kernel_timespec ms_ts(long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	return ts;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	long long deadline = now_ms() + timeout_ms;
	struct io_uring_cqe *cqe;
	unsigned n = 0, nfds = 0, i, j;

	while (n < expected && n < MAX_CQES) {
		long long left = deadline - now_ms();
		struct __kernel_timespec ts;
		int ret;

		if (left <= 0)
			break;
		ts = ms_ts((long)left);
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

	if (!sqe) {
		say("!! io_uring_get_sqe returned NULL [step: %s]", diff_step);
		exit(1);
	}
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

void make_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0) {
		say("!! pipe2: %s", strerror(errno));
		exit(1);
	}
}

unsigned char pattern_at(size_t off)
{
	return (unsigned char)(off * 7 + off / 251);
}

int make_file(size_t size)
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

static void watchdog(int sig)
{
	char buf[256];
	int n;

	(void)sig;
	n = snprintf(buf, sizeof(buf),
		     "!! watchdog: section %s still running after %d s "
		     "[step: %s]\n",
		     section_name, section_watchdog_secs, diff_step);
	if (n > 0)
		(void)!write(STDOUT_FILENO, buf, (size_t)n);
	_exit(3);
}

struct section {
	const char *name;
	void (*run)(void);
	unsigned watchdog_secs; /* 0: SECTION_WATCHDOG_SECS */
};

static const struct section sections[] = {
	{ "setup_matrix", sec_setup_matrix, 0 },
	{ "setup_other", sec_setup_other, 0 },
	{ "submit_wait", sec_submit_wait, 0 },
	{ "mid_batch_failure", sec_mid_batch_failure, 0 },
	{ "task_work", sec_task_work, 0 },
	{ "links_drain", sec_links_drain, 0 },
	{ "timeouts", sec_timeouts, 0 },
	{ "cancel", sec_cancel, 0 },
	{ "multishot_poll", sec_multishot_poll, 0 },
	{ "net", sec_net, 0 },
	{ "buffers_provided", sec_buffers_provided, 0 },
	{ "registered_files", sec_registered_files, 0 },
	{ "registered_buffers", sec_registered_buffers, 0 },
	{ "register_misc", sec_register_misc, 0 },
	{ "probe", sec_probe, 0 },
	{ "ring_fds", sec_ring_fds, 0 },
	{ "overflow", sec_overflow, 0 },
	{ "sqpoll", sec_sqpoll, 0 },
	/* Last: its waits have no timeout, so a library that loses the
	 * rest of a stopped batch hangs it until its watchdog. */
	{ "untimed_wait_after_bad_sqe", sec_untimed_wait_after_bad_sqe, 5 },
};

int main(void)
{
	Dl_info info;
	size_t i;

	/* Lines reach the pipe as they are printed: a section killed by its
	 * watchdog loses nothing it printed. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (dladdr((void *)io_uring_queue_init, &info) && info.dli_fname)
		fprintf(stderr, "library: %s\n", info.dli_fname);

	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		int status = 0;
		pid_t pid;

		say("== %s", sections[i].name);
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			say("!! fork: %s", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			section_name = sections[i].name;
			if (sections[i].watchdog_secs)
				section_watchdog_secs = sections[i].watchdog_secs;
			signal(SIGALRM, watchdog);
			alarm(section_watchdog_secs);
			sections[i].run();
			fflush(stdout);
			_exit(0);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status))
			say("!! section %s killed by signal %d",
			    sections[i].name, WTERMSIG(status));
		else if (WEXITSTATUS(status) != 0)
			say("!! section %s exited with %d", sections[i].name,
			    WEXITSTATUS(status));
	}
	return 0;
}
