/* SPDX-License-Identifier: MIT */
/*
 * The differential program (the C files of c_tests/differential/): one
 * scripted sequence of liburing calls that prints every return value and
 * every CQE. Built once against Debian's liburing 2.3 header;
 * tests/differential.rs runs the binary on Debian's liburing and on
 * rsuring and requires the same stdout.
 *
 * What is printed is chosen to be the same on every run of one library:
 * see NOTES.md for the fields left out and why. Every section runs in a
 * fork()ed child with a watchdog, so a library bug that hangs one section
 * shows up as a line in the output (and so in the diff) while the other
 * sections still run. Waits for CQEs that may not come have timeouts. The
 * printing helpers are rsuring_test.h's ("printed differentials"); this
 * file is the runner.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>

/* A section that takes longer than this is reported as stuck. */
#define SECTION_WATCHDOG_SECS 20

/* The sections (the other files of this program), in the order they run. */
void sec_setup_matrix(void);
void sec_setup_other(void);
void sec_submit_wait(void);
void sec_mid_batch_failure(void);
void sec_task_work(void);
void sec_links_drain(void);
void sec_timeouts(void);
void sec_cancel(void);
void sec_multishot_poll(void);
void sec_net(void);
void sec_buffers_provided(void);
void sec_registered_files(void);
void sec_registered_buffers(void);
void sec_register_misc(void);
void sec_probe(void);
void sec_ring_fds(void);
void sec_overflow(void);
void sec_sqpoll(void);
void sec_untimed_wait_after_bad_sqe(void);

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
	size_t i;

	/* Lines reach the pipe as they are printed: a section killed by its
	 * watchdog loses nothing it printed. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	report_library();

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
			start_section_watchdog(sections[i].name,
					       sections[i].watchdog_secs ?
					       sections[i].watchdog_secs :
					       SECTION_WATCHDOG_SECS);
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
