/* SPDX-License-Identifier: MIT */
/*
 * The differential program (the C files of c_tests/differential/): one scripted sequence
 * of liburing calls that prints every return value and every CQE. Built
 * once against Debian's liburing 2.3 header; tests/differential.rs runs the
 * binary on Debian's liburing and on rsuring and requires the same stdout.
 *
 * What is printed is chosen to be the same on every run of one library:
 * see NOTES.md for the fields left out and why. Every section runs in a
 * fork()ed child with a watchdog, so a library bug that hangs one section
 * shows up as a line in the output (and so in the diff) while the other
 * sections still run. Waits for CQEs that may not come have timeouts.
 */
#ifndef DIFF_H
#define DIFF_H

#include <liburing.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* user_data bit: the CQE's res is a new fd, printed as "fd". */
#define UD_FD (1ULL << 62)

/*
 * ring.flags as printed: without IORING_SETUP_NO_SQARRAY, which rsuring adds
 * to every ring where the kernel has it, as liburing 2.6+ does, and Debian's
 * 2.3 does not (NOTES.md). The bit's value is the kernel's (1U << 16); the
 * 2.3 header has no name for it.
 */
#define DIFF_RING_FLAGS(flags) ((unsigned)(flags) & ~(1U << 16))

/* Where the section is, for the watchdog's message. */
extern const char *volatile diff_step;
#define STEP(s) (diff_step = (s))

/* One output line. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<what> = <ret>", with the errno name when negative. */
void show_ret(const char *what, long long ret);
/* A count the kernel may legitimately report lower on an SQPOLL ring (the
 * poll thread took SQEs before the library looked): in range or not. */
void show_ret_in(const char *what, long long ret, long long lo, long long hi);

/*
 * Collects CQEs until @expected have arrived or @timeout_ms have passed,
 * then any that are already posted besides; prints them sorted by
 * user_data (a request's own CQEs keep their order), one a line.
 * Returns the number collected. res values of UD_FD requests that are
 * >= 0 are stored in @fds (when not NULL, up to 16) in arrival order.
 */
unsigned show_cqes(struct io_uring *ring, unsigned expected, long timeout_ms,
		   int *fds);
/*
 * On an SQPOLL ring, waits (2 s at most) until the SQ thread has published
 * its SQ head for every SQE it took: it may do so after posting their
 * CQEs, with any library, so output that depends on the head (counts of
 * pending SQEs, what a submit call reports) waits for it first.
 */
void wait_sq_head(struct io_uring *ring);
/*
 * show_ret of io_uring_submit (as @what), then show_cqes of @expected CQEs
 * within 1 s.
 */
void submit_show(struct io_uring *ring, const char *what, unsigned expected);
/* Prints one CQE pointer a wait returned (NULL allowed). */
void show_cqe(const char *what, const struct io_uring_cqe *cqe);

/* A relative timeout. */
struct __kernel_timespec ms_ts(long ms);

/* The next SQE; ends the section with a line if the SQ is full. */
struct io_uring_sqe *sqe_of(struct io_uring *ring);
void queue_nop(struct io_uring *ring, __u64 ud, unsigned sqe_flags);
/* An SQE the kernel rejects when it is submitted (unknown opcode). */
void queue_bad(struct io_uring *ring, __u64 ud, unsigned sqe_flags);

/* io_uring_queue_init_params with @flags; prints the result and what the
 * kernel and the library report about the ring. Returns the result. */
int init_ring(struct io_uring *ring, unsigned entries, unsigned flags,
	      const char *what);
/* Ends the section (with a line) when @ret < 0. */
void need(int ret, const char *what);

/* A pipe (blocking: a read of an empty pipe waits in the kernel). */
void make_pipe(int fds[2]);
/* An unlinked temporary file holding @size bytes of a fixed pattern. */
int make_file(size_t size);
/* A byte of that pattern. */
unsigned char pattern_at(size_t off);

/* The sections, in the order they run. */
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

#endif /* DIFF_H */
