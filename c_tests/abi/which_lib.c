/* SPDX-License-Identifier: MIT */
/*
 * Built against Debian's liburing header and linked to Debian's liburing:
 * does real I/O through the ring, then prints the file that served
 * io_uring_submit and io_uring_queue_init, so the ABI test can tell whether
 * LD_PRELOAD / LD_LIBRARY_PATH substituted rsuring.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

static const char *owner(void *fn)
{
	Dl_info info;

	if (!dladdr(fn, &info) || !info.dli_fname)
		return "?";
	return info.dli_fname;
}

int main(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	char buf[16] = { 0 };
	int fds[2], ret;

	if (pipe(fds) || write(fds[1], "rsuring-abi", 11) != 11)
		return 1;
	ret = io_uring_queue_init(4, &ring, 0);
	if (ret) {
		fprintf(stderr, "queue_init: %d\n", ret);
		return 1;
	}
	io_uring_prep_read(io_uring_get_sqe(&ring), fds[0], buf, 11, 0);
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe) ||
	    cqe->res != 11 || memcmp(buf, "rsuring-abi", 11)) {
		fprintf(stderr, "read through the ring failed\n");
		return 1;
	}
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	printf("submit=%s\ninit=%s\n", owner((void *)io_uring_submit),
	       owner((void *)io_uring_queue_init));
	return 0;
}
