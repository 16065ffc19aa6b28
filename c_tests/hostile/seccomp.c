/* SPDX-License-Identifier: MIT */
/*
 * Seccomp sandboxes, installed with raw classic BPF (no libseccomp), each
 * in a forked child that then sets up a ring, submits and reaps a NOP and
 * exits the ring: filters that answer io_uring_register with EPERM, with
 * SIGSYS (SECCOMP_RET_TRAP) or by killing the process, and an allow-list
 * of the system calls liburing makes for that, which traps every other.
 * A program that never calls io_uring_register survives each of them with
 * liburing; its own register call is answered as the filter says.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#else
#error "seccomp.c knows the audit arch of x86-64 and aarch64 only"
#endif

#define LOAD(field)                                                         \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RETURN(action) BPF_STMT(BPF_RET | BPF_K, (action))

static int install(struct sock_filter *insns, unsigned short len)
{
	struct sock_fprog prog = { .len = len, .filter = insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}

/* io_uring_register gets @action; everything else is allowed. */
static int deny_register(unsigned action)
{
	struct sock_filter f[] = {
		LOAD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
		RETURN(SECCOMP_RET_ALLOW),
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 0,
			 1),
		RETURN(action),
		RETURN(SECCOMP_RET_ALLOW),
	};

	return install(f, sizeof(f) / sizeof(f[0]));
}

/* What a liburing program needs for a ring, a NOP and its output. */
static const unsigned allowed[] = {
	__NR_io_uring_setup, __NR_io_uring_enter, __NR_mmap, __NR_munmap,
	__NR_close,	     __NR_write,	  __NR_exit, __NR_exit_group,
	__NR_rt_sigreturn,
};
#define NALLOWED (sizeof(allowed) / sizeof(allowed[0]))

/* Only the calls of allowed[] pass; the others raise SIGSYS. */
static int allow_list(void)
{
	struct sock_filter f[4 + 2 * NALLOWED + 1];
	unsigned short n = 0;
	size_t i;

	f[n++] = (struct sock_filter)LOAD(arch);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      THIS_ARCH, 1, 0);
	f[n++] = (struct sock_filter)RETURN(SECCOMP_RET_TRAP);
	f[n++] = (struct sock_filter)LOAD(nr);
	for (i = 0; i < NALLOWED; i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(
			BPF_JMP | BPF_JEQ | BPF_K, allowed[i], 0, 1);
		f[n++] = (struct sock_filter)RETURN(SECCOMP_RET_ALLOW);
	}
	f[n++] = (struct sock_filter)RETURN(SECCOMP_RET_TRAP);
	return install(f, n);
}

/* SIGSYS under the allow-list: name the call, in allowed calls only. */
static void trapped(int sig, siginfo_t *si, void *uc)
{
	char buf[80];
	int n;

	(void)sig;
	(void)uc;
	n = snprintf(buf, sizeof(buf),
		     "child: system call %d is not on the list\n",
		     si->si_syscall);
	if (n > 0)
		(void)!write(STDOUT_FILENO, buf, (size_t)n);
	_exit(99);
}

enum filter { F_ERRNO, F_TRAP, F_KILL, F_LIST };
static const char *const filter_name[] = {
	"io_uring_register -> EPERM",
	"io_uring_register -> SIGSYS (SECCOMP_RET_TRAP)",
	"io_uring_register -> kill (SECCOMP_RET_KILL_PROCESS)",
	"an allow-list of liburing's calls, SIGSYS for the rest",
};

static void child(enum filter filter)
{
	void (*line)(const char *, ...);
	struct io_uring ring;
	int ret, fd;

	alarm(10);
	/* A kill or SIGSYS writes no core file. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (filter == F_LIST) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = trapped;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSYS, &sa, NULL);
		ret = allow_list();
	} else {
		static const unsigned action[] = {
			SECCOMP_RET_ERRNO | EPERM,
			SECCOMP_RET_TRAP,
			SECCOMP_RET_KILL_PROCESS,
		};
		ret = deny_register(action[filter]);
	}
	if (ret < 0) {
		say("!! the filter could not be installed: %s", rstr(ret, 0));
		_exit(1);
	}
	/* Under the allow-list the opt-in registration may differ (a call
	 * liburing does not make): its lines are not critical. */
	line = filter == F_LIST ? say : crit;
	ret = io_uring_queue_init(8, &ring, 0);
	line("child: io_uring_queue_init = %s", rstr(ret, 0));
	if (ret < 0)
		_exit(0);
	line("child: %s", nop_roundtrip(&ring, 0x1));
	line("child: second %s", nop_roundtrip(&ring, 0x2));
	if (filter != F_LIST) {
		crit("child: io_uring_register_files (the program's own register call)");
		crit("child: io_uring_register_files = %s",
		     rstr(io_uring_register_files(&ring, &fd, 1), 0));
	}
	io_uring_queue_exit(&ring);
	line("child: ring exited");
	_exit(0);
}

static void run_filters(enum filter first, enum filter last)
{
	enum filter filter;

	for (filter = first; filter <= last; filter++) {
		pid_t pid;

		STEP(filter_name[filter]);
		say("-- filter: %s", filter_name[filter]);
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0)
			child(filter);
		track_child(pid);
		if (filter == F_LIST)
			say("parent: child %s", reap_child(pid, 10000));
		else
			crit("parent: child %s", reap_child(pid, 10000));
	}
}

void sec_seccomp(void)
{
	run_filters(F_ERRNO, F_KILL);
}

void sec_seccomp_allowlist(void)
{
	run_filters(F_LIST, F_LIST);
}
