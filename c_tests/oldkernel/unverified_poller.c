/*
 * Two SQPOLL rings that would share one poller (RSURING_SQPOLL_PERCPU=1,
 * SQ_AFF on CPU 0). Prints how many SQ threads the process has and each
 * ring's NOP result, one "key=value" per line. Where the kernel's fdinfo
 * does not show the poller (supervise --hide-fdinfo), sharing cannot be
 * verified and each ring must get its own.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

static int nop(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int ret;

	io_uring_prep_nop(io_uring_get_sqe(ring));
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = io_uring_peek_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

int main(void)
{
	struct io_uring rings[2];
	struct io_uring_params p;
	int i, ret;

	for (i = 0; i < 2; i++) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = 0;
		ret = io_uring_queue_init_params(8, &rings[i], &p);
		if (ret < 0) {
			printf("ring%d=%d\n", i, ret);
			return 1;
		}
	}
	usleep(10000);
	printf("sq_threads=%d\n", sq_threads());
	for (i = 0; i < 2; i++) {
		printf("ring%d_nop=%d\n", i, nop(&rings[i]));
		io_uring_queue_exit(&rings[i]);
	}
	return 0;
}
