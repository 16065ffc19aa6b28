/*
 * What a program sees of the kernel's io_uring: raw system calls only, so
 * the answers are the (emulated) kernel's, not a library's. Prints
 * "key=value" lines; with "thread" or "fork" as argument the checks run in
 * a new thread or a forked child (the emulation must follow both).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <liburing/io_uring.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

static long setup(unsigned flags, struct io_uring_params *p)
{
	long ret;

	memset(p, 0, sizeof(*p));
	p->flags = flags;
	ret = syscall(__NR_io_uring_setup, 8, p);
	return ret < 0 ? -errno : ret;
}

static long reg(int fd, unsigned op, void *arg, unsigned n)
{
	long ret = syscall(__NR_io_uring_register, fd, op, arg, n);

	return ret < 0 ? -errno : ret;
}

static long enter(int fd, unsigned flags)
{
	long ret = syscall(__NR_io_uring_enter, fd, 0, 0, flags, NULL, 0);

	return ret < 0 ? -errno : ret;
}

static void *checks(void *unused)
{
	static struct {
		struct io_uring_probe p;
		struct io_uring_probe_op ops[256];
	} probe;
	struct io_uring_params p;
	unsigned i, supported = 0, past_last = 0;
	long fd, ret;

	(void)unused;
	printf("no_sqarray=%ld\n", (ret = setup(IORING_SETUP_NO_SQARRAY, &p)) >= 0 ? 0L : ret);
	if (ret >= 0)
		close((int)ret);
	printf("defer_taskrun=%ld\n", (ret = setup(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, &p)) >= 0 ? 0L : ret);
	if (ret >= 0)
		close((int)ret);
	printf("submit_all=%ld\n", (ret = setup(IORING_SETUP_SUBMIT_ALL, &p)) >= 0 ? 0L : ret);
	if (ret >= 0)
		close((int)ret);
	fd = setup(0, &p);
	if (fd < 0) {
		printf("setup=%ld\n", fd);
		return NULL;
	}
	printf("features=%#x\n", p.features);
	printf("sq_user_addr=%llu\n", (unsigned long long)p.sq_off.user_addr);
	ret = reg((int)fd, IORING_REGISTER_PROBE, &probe, 256);
	for (i = 0; i < 256; i++) {
		supported += !!(probe.ops[i].flags & IO_URING_OP_SUPPORTED);
		past_last += i > probe.p.last_op && (probe.ops[i].op || probe.ops[i].flags);
	}
	printf("probe=%ld\nlast_op=%u\nops_len=%u\nsupported=%u\npast_last=%u\n", ret,
	       probe.p.last_op, probe.p.ops_len, supported, past_last);
	/* A NULL argument: -EFAULT from a kernel that knows the opcode. */
	printf("register_ring_fds=%ld\n", reg((int)fd, IORING_REGISTER_RING_FDS, NULL, 1));
	printf("register_use_registered=%ld\n",
	       reg((int)fd, IORING_REGISTER_PROBE | IORING_REGISTER_USE_REGISTERED_RING, NULL, 1));
	printf("enter_plain=%ld\n", enter((int)fd, IORING_ENTER_GETEVENTS));
	printf("enter_abs_timer=%ld\n", enter((int)fd, IORING_ENTER_GETEVENTS | IORING_ENTER_ABS_TIMER));
	close((int)fd);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "main";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(how, "thread")) {
		pthread_t t;

		if (pthread_create(&t, NULL, checks, NULL) || pthread_join(t, NULL))
			return 1;
	} else if (!strcmp(how, "fork")) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			checks(NULL);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	} else {
		checks(NULL);
	}
	return 0;
}
