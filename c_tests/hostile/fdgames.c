/* SPDX-License-Identifier: MIT */
/*
 * The application plays with the ring's fd behind the library's back:
 * close() it and submit, dup2() another file or another ring over it,
 * close() the ring instead of exiting it while a read is pending, keep a
 * dup() of it past io_uring_queue_exit. With liburing the ring fd in the
 * struct is what every enter goes through, so the kernel's file table
 * decides.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

/* "submit = <ret>" for one NOP (user_data 0x1) on @ring. */
static void submit_nop(struct io_uring *ring)
{
	queue_nop(ring, 0x1, 0);
	say("submit = %s", rstr(io_uring_submit(ring), 0));
}

/* A read of 5 bytes of @fd into @buf, submitted (the pipe is empty). */
static int pending_read(struct io_uring *ring, int fd, char *buf)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		die("io_uring_get_sqe returned NULL");
	io_uring_prep_read(sqe, fd, buf, 5, 0);
	io_uring_sqe_set_data64(sqe, 0x1);
	return io_uring_submit(ring);
}

void sec_fd_games(void)
{
	struct io_uring ring, other;
	struct io_uring_params p;
	char buf[16];
	int pfd[2], ret, null, d;

	STEP("close then submit");
	say("-- close(ring.ring_fd), then io_uring_submit of a NOP");
	init_or_die(&ring);
	say("close = %d", close(ring.ring_fd));
	submit_nop(&ring);
	io_uring_queue_exit(&ring);

	STEP("close, reopen, submit");
	say("-- close(ring.ring_fd), open /dev/null (the same number), submit");
	init_or_die(&ring);
	close(ring.ring_fd);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	say("the new fd has the ring's number: %s",
	    null == ring.ring_fd ? "yes" : "no");
	submit_nop(&ring);
	io_uring_queue_exit(&ring); /* closes /dev/null */

	STEP("dup2 /dev/null");
	say("-- dup2(/dev/null, ring.ring_fd), then submit");
	init_or_die(&ring);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0)
		die("open /dev/null: %s", strerror(errno));
	say("dup2 = %s", dup2(null, ring.ring_fd) == ring.ring_fd ? "ok" : "failed");
	close(null);
	submit_nop(&ring);
	io_uring_queue_exit(&ring);

	STEP("dup2 another ring");
	say("-- dup2(other.ring_fd, ring.ring_fd), then submit on ring");
	init_or_die(&ring);
	init_or_die(&other);
	say("dup2 = %s", dup2(other.ring_fd, ring.ring_fd) == ring.ring_fd ?
				 "ok" : "failed");
	submit_nop(&ring);
	/* With liburing the enter reached the other ring, which has no SQE to
	 * take; which ring a submit reaches once the application moved the fd
	 * is the fd table's business, so only "other got nothing" must hold. */
	say("ring's CQ: %s", cqe_str(&ring, 200));
	crit("other's CQ: %s", cqe_str(&other, 200));
	io_uring_queue_exit(&ring); /* closes the dup of other */
	crit("other: %s", nop_roundtrip(&other, 0x2));
	io_uring_queue_exit(&other);

	STEP("close instead of exit");
	say("-- close(ring.ring_fd) instead of io_uring_queue_exit, a read pending, the pipe's write end a registered file");
	init_or_die(&ring);
	make_pipe(pfd);
	say("register_files = %s",
	    rstr(io_uring_register_files(&ring, &pfd[1], 1), 0));
	say("pending read submit = %s", rstr(pending_read(&ring, pfd[0], buf), 0));
	close(ring.ring_fd);
	close(pfd[1]);
	/* The ring's mappings still hold its file. */
	say("after close(ring_fd) and close(write end): %s",
	    eof_within(pfd[0], 500));
	io_uring_queue_exit(&ring);
	say("after io_uring_queue_exit too: %s", eof_within(pfd[0], 2000));
	close(pfd[0]);

	STEP("dup outlives exit");
	say("-- a dup() of the ring fd outlives io_uring_queue_exit; the ring is mapped again through it");
	init_params_or_die(&ring, &p, 0);
	make_pipe(pfd);
	say("register_files = %s",
	    rstr(io_uring_register_files(&ring, &pfd[0], 1), 0));
	say("pending read submit = %s", rstr(pending_read(&ring, pfd[0], buf), 0));
	d = dup(ring.ring_fd);
	if (d < 0)
		die("dup: %s", strerror(errno));
	io_uring_queue_exit(&ring);
	memset(&other, 0, sizeof(other));
	ret = io_uring_queue_mmap(d, &p, &other);
	say("io_uring_queue_mmap(dup) = %s", rstr(ret, 0));
	if (ret == 0) {
		__u64 ud = 0;
		int res = 0;

		if (write(pfd[1], "hello", 5) != 5)
			die("write: %s", strerror(errno));
		ret = wait_one_within(&other, 2000, &ud, &res);
		if (ret < 0)
			crit("the pending read: no cqe (%s)", rstr(ret, 0));
		else
			crit("the pending read: cqe ud=0x%llx res=%s data=%s",
			     (unsigned long long)ud, rstr(res, 0),
			     res == 5 && !memcmp(buf, "hello", 5) ? "ok" :
								  "bad");
		say("unregister_files = %s",
		    rstr(io_uring_unregister_files(&other), 0));
		io_uring_queue_exit(&other); /* closes d */
	} else {
		close(d);
	}
	close(pfd[0]);
	close(pfd[1]);
}
