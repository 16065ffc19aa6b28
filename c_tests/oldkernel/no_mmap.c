/*
 * io_uring_queue_init_mem (IORING_SETUP_NO_MMAP, Linux 6.5): prints what it
 * returns and, on success, a NOP's result, one "key=value" per line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

int main(void)
{
	static char buf[64 * 1024] __attribute__((aligned(4096)));
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int ret;

	memset(&p, 0, sizeof(p));
	ret = io_uring_queue_init_mem(8, &ring, &p, buf, sizeof(buf));
	printf("init_mem=%d\n", ret < 0 ? ret : 0);
	if (ret < 0)
		return 0;
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	ret = io_uring_submit_and_wait(&ring, 1);
	if (ret == 1)
		ret = io_uring_peek_cqe(&ring, &cqe);
	printf("nop=%d\n", ret == 0 ? cqe->res : -EIO);
	io_uring_queue_exit(&ring);
	return 0;
}
