/*
 * rsuring_queue_init_batched on whatever the kernel offers: three rings,
 * each with its setup flags and a NOP round trip, one "key=value" per line.
 */
#include <errno.h>
#include <stdio.h>
#include <liburing.h>
#include <rsuring.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

int main(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int i, ret;

	for (i = 0; i < 3; i++) {
		struct io_uring_sqe *sqe;

		ret = rsuring_queue_init_batched(8, &ring, 0);
		printf("ring%d=%d\n", i, ret);
		if (ret < 0)
			return 1;
		printf("ring%d_flags=%#x\n", i, ring.flags);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = 42;
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret == 1)
			ret = io_uring_peek_cqe(&ring, &cqe);
		printf("ring%d_nop=%d\n", i, ret == 0 && cqe->user_data == 42 ? cqe->res : -EIO);
		io_uring_queue_exit(&ring);
	}
	return 0;
}
