/*
 * A ring under RSURING_SQPOLL=1 whose SQPOLL setup the kernel refuses
 * (supervise --sqpoll-error): it must come up as the plain ring the
 * application asked for and work. Prints "flags=... nops=..." per ring.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

static int nops(struct io_uring *ring, int n)
{
	struct io_uring_cqe *cqe;
	int i, done = 0;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe)
			return -EBUSY;
		io_uring_prep_nop(sqe);
		sqe->user_data = (unsigned)i + 1;
	}
	if (io_uring_submit(ring) != n)
		return -EIO;
	for (i = 0; i < n; i++) {
		if (io_uring_wait_cqe(ring, &cqe) < 0)
			return -EIO;
		done += cqe->res == 0;
		io_uring_cqe_seen(ring, cqe);
	}
	return done;
}

int main(void)
{
	struct io_uring ring;
	int i, ret;

	for (i = 0; i < 2; i++) {
		ret = io_uring_queue_init(8, &ring, 0);
		if (ret < 0) {
			printf("ring%d=%d\n", i, ret);
			return 1;
		}
		printf("ring%d_flags=%#x\nring%d_nops=%d\n", i, ring.flags, i, nops(&ring, 4));
		io_uring_queue_exit(&ring);
	}
	return 0;
}
