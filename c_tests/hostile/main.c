/* SPDX-License-Identifier: MIT */
/*
 * The hostile differential program (issue 34): what liburing's own suites
 * never try, printed so that two libraries can be compared line by line.
 * Built once against Debian's liburing 2.3 header; tests/hostile.rs runs
 * each section as its own process on Debian's liburing.so.2 and on rsuring
 * (LD_LIBRARY_PATH and LD_PRELOAD) and compares stdout. See NOTES.md.
 *
 * Output rules: only what is the same on every run of one library (return
 * values with their errno names, CQE user_data/res, "eof"/"no-eof", exit
 * statuses), never fd numbers, addresses or times. A line that starts with
 * "* " (crit()) is one that must also hold with RSURING_REGISTER_RING_FD=1:
 * a forked child never harms its parent, no seccomp death, no submit that
 * reaches another ring. A line that starts with "!!" is a failure of the
 * program itself (a hang caught by the watchdog, a helper that could not
 * run) and fails every run.
 *
 * The helpers are rsuring_test.h's ("printed differentials"); this file
 * is the runner:
 *
 *   hostile SECTION   runs one section in this process (what the driver does:
 *                     every section starts in a fresh process, with no ring,
 *                     thread or fork handler left by another);
 *   hostile all       runs every section that way, one after the other;
 *   hostile list      prints the section names.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <dirent.h>
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>

/* A section still running after this long is reported as stuck. */
#define WATCHDOG_SECS 60

/* ---- the runner -------------------------------------------------------- */

/* The sections (the other files of this program). */
void sec_fork(void);
void sec_fork_atfork(void);
void sec_fork_outlive(void);
void sec_threads(void);
void sec_sqpoll_exit(void);
void sec_churn(void);
void sec_raw_slots(void);
void sec_full_table(void);
void sec_fd_games(void);
void sec_seccomp(void);
void sec_seccomp_allowlist(void);
void sec_fields(void);
void sec_bad_input(void);
void sec_mmap_not_a_ring(void);
void sec_nofile(void);

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
	report_library();
	if (!strcmp(argv[1], "all"))
		return run_all();
	for (i = 0; i < NSECTIONS; i++) {
		if (strcmp(argv[1], sections[i].name))
			continue;
		say("== %s", sections[i].name);
		start_section_watchdog(sections[i].name, WATCHDOG_SECS);
		sections[i].run();
		kill_children();
		return 0;
	}
	fprintf(stderr, "no section %s\n", argv[1]);
	return 2;
}
