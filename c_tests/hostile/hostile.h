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
 */
#ifndef HOSTILE_H
#define HOSTILE_H

#include <liburing.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* Where the section is, for the watchdog's message. */
extern const char *volatile h_step;
#define STEP(s) (h_step = (s))

/* One output line. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One output line that must hold under the opt-in too ("* " prefix). */
void crit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Ends the program with a "!!" line (a failure of the test itself). */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* "<n>" or "<n> (ENAME)" for a negative value, in a static buffer of
 * @slot (0..3), so that up to four fit in one line. */
const char *rstr(long long ret, int slot);

/* A blocking pipe (O_CLOEXEC), or die. */
void make_pipe(int fds[2]);
/* An unlinked temporary file of 4096 bytes 'a'..'z' repeated, or die. */
int make_file(void);

/* Queues one NOP with @ud (dies if the SQ is full). */
void queue_nop(struct io_uring *ring, __u64 ud);
/*
 * Waits at most @ms for one CQE; on success stores it, marks it seen and
 * returns 0, else the wait's result (-ETIME when none came).
 */
int wait_one(struct io_uring *ring, int ms, __u64 *ud, int *res);
/* "cqe ud=0x.. res=.." or "no cqe (<why>)" for a wait_one of @ms. */
const char *cqe_str(struct io_uring *ring, int ms);
/* Queues a NOP (@ud), submits it and waits 1 s for its CQE: a line. */
const char *nop_roundtrip(struct io_uring *ring, __u64 ud);

/*
 * Whether the pipe's read end @rfd reaches end of file within @ms (data
 * still in it is read and dropped): "eof" or "no-eof".
 */
const char *eof_within(int rfd, int ms);
/* Threads of this process whose name starts with "iou-sqp-". */
int sq_threads(void);

/* Children: remembered so that the watchdog can kill them. */
void track_child(pid_t pid);
/*
 * Waits at most @ms for @pid; then kills it. Returns "exit N",
 * "signal N (NAME)" or "hung (killed)".
 */
const char *reap_child(pid_t pid, int ms);

/* Raw system calls, as an application that bypasses the library makes
 * them. */
long sys_register(int fd, unsigned op, const void *arg, unsigned nr);
long sys_enter(int fd, unsigned to_submit, unsigned min, unsigned flags);
/* Registers ring fd @ring_fd at @offset (-1U: the kernel chooses); the
 * call's result, and the offset the kernel used in *@got. */
long raw_register_ring(int ring_fd, unsigned offset, unsigned *got);
/* Unregisters slot @offset of the calling task's table (@any_ring_fd: any
 * io_uring fd, the call needs one). */
long raw_unregister_ring(int any_ring_fd, unsigned offset);

/* The sections. */
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

#endif /* HOSTILE_H */
