/* SPDX-License-Identifier: MIT */
/*
 * The hostile program's runner and helpers (see hostile.h).
 *
 *   hostile SECTION   runs one section in this process (what the driver does:
 *                     every section starts in a fresh process, with no ring,
 *                     thread or fork handler left by another);
 *   hostile all       runs every section that way, one after the other;
 *   hostile list      prints the section names.
 */
#include "hostile.h"

#include <dirent.h>
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>

/* A section still running after this long is reported as stuck. */
#define WATCHDOG_SECS 60

const char *volatile h_step = "start";
static const char *section_name = "none";

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

static void kill_children(void)
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

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *reap_child(pid_t pid, int ms)
{
	static char buf[64];
	long long deadline = now_ms() + ms;
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
		if (now_ms() > deadline) {
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

int make_file(void)
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

void queue_nop(struct io_uring *ring, __u64 ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		die("io_uring_get_sqe returned NULL [step: %s]", h_step);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, ud);
}

int wait_one(struct io_uring *ring, int ms, __u64 *ud, int *res)
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
	int res = 0, ret = wait_one(ring, ms, &ud, &res);

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

	queue_nop(ring, ud);
	ret = io_uring_submit(ring);
	snprintf(buf, sizeof(buf), "submit=%s %s", rstr(ret, 2),
		 cqe_str(ring, 1000));
	return buf;
}

/* ---- pipes and threads ------------------------------------------------- */

const char *eof_within(int rfd, int ms)
{
	long long deadline = now_ms() + ms;
	char buf[256];

	for (;;) {
		long long left = deadline - now_ms();
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

int sq_threads(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	int count = 0;

	if (!dir)
		die("opendir /proc/self/task: %s", strerror(errno));
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

/* ---- the runner -------------------------------------------------------- */

static void watchdog(int sig)
{
	char buf[256];
	int n;

	(void)sig;
	n = snprintf(buf, sizeof(buf),
		     "!! watchdog: section %s still running after %d s "
		     "[step: %s]\n",
		     section_name, WATCHDOG_SECS, h_step);
	if (n > 0)
		(void)!write(STDOUT_FILENO, buf, (size_t)n);
	kill_children();
	_exit(3);
}

struct section {
	const char *name;
	void (*run)(void);
};

static const struct section sections[] = {
	{ "fork", sec_fork },
	{ "fork_atfork", sec_fork_atfork },
	{ "fork_outlive", sec_fork_outlive },
	{ "threads", sec_threads },
	{ "sqpoll_exit", sec_sqpoll_exit },
	{ "churn", sec_churn },
	{ "raw_slots", sec_raw_slots },
	{ "full_table", sec_full_table },
	{ "fd_games", sec_fd_games },
	{ "seccomp", sec_seccomp },
	{ "seccomp_allowlist", sec_seccomp_allowlist },
	{ "fields", sec_fields },
	{ "bad_input", sec_bad_input },
	{ "mmap_not_a_ring", sec_mmap_not_a_ring },
	{ "nofile", sec_nofile },
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

/* Every section in a process of its own: this program again. */
static int run_all(void)
{
	size_t i;
	int failed = 0;

	for (i = 0; i < NSECTIONS; i++) {
		const char *status;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			execl("/proc/self/exe", "hostile", sections[i].name,
			      (char *)NULL);
			_exit(127);
		}
		status = reap_child(pid, (WATCHDOG_SECS + 10) * 1000);
		if (strcmp(status, "exit 0")) {
			say("!! section %s: %s", sections[i].name, status);
			failed = 1;
		}
	}
	return failed;
}

int main(int argc, char **argv)
{
	Dl_info info;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc != 2) {
		fprintf(stderr, "usage: %s SECTION|all|list\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "list")) {
		for (i = 0; i < NSECTIONS; i++)
			say("%s", sections[i].name);
		return 0;
	}
	if (dladdr((void *)io_uring_queue_init, &info) && info.dli_fname)
		fprintf(stderr, "library: %s\n", info.dli_fname);
	if (!strcmp(argv[1], "all"))
		return run_all();
	for (i = 0; i < NSECTIONS; i++) {
		if (strcmp(argv[1], sections[i].name))
			continue;
		section_name = sections[i].name;
		say("== %s", section_name);
		signal(SIGALRM, watchdog);
		alarm(WATCHDOG_SECS);
		sections[i].run();
		kill_children();
		return 0;
	}
	fprintf(stderr, "no section %s\n", argv[1]);
	return 2;
}
