/* SPDX-License-Identifier: MIT */
/*
 * 20 single 4 KiB reads, 50 ms apart, one io_uring_submit + one wait each.
 * With RSURING_SQPOLL_IDLE_MS=10 the SQ thread is asleep before every
 * submit, so each submit needs one wake-up: the driver counts, under
 * strace, the io_uring_enter calls with IORING_ENTER_SQ_WAKEUP (at most one
 * per submit call, 20 in all).
 *
 *   wakeups <plain|transparent>
 *
 * Under RSURING_SQPOLL=1 run it as an unprivileged user. Prints submits=20.
 */
#ifndef SQ_DEBIAN
#include <rsuring.h>
#endif
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define READS 20
#define GAP_MS 50

int main(int argc, char **argv)
{
	int transparent = expect_transparent(argc, argv);
	unsigned char buf[T_CHUNK];
	struct io_uring ring;
	int data_fd, i, ret;

	if (transparent)
		check_unprivileged();
	data_fd = t_data_file();
	CONTRACT_RING(&ring, 8, transparent);
	for (i = 0; i < READS; i++) {
		struct io_uring_cqe *cqe;
		size_t off = (size_t)i * T_CHUNK;

		T_STEP("read %d", i);
		t_msleep(GAP_MS);
		memset(buf, 0, sizeof(buf));
		queue_read(&ring, data_fd, buf, T_CHUNK, off, (unsigned long long)i);
		ret = io_uring_submit(&ring);
		CHECK_MSG(ret == 1, "read %d: io_uring_submit = %d (%s)", i, ret,
			  ret < 0 ? strerror(-ret) : "");
		cqe = wait_one(&ring);
		CHECK_EQ(cqe->user_data, i);
		CHECK_EQ(cqe->res, T_CHUNK);
		io_uring_cqe_seen(&ring, cqe);
		t_check_data(buf, T_CHUNK, off, "spaced read");
	}
	io_uring_queue_exit(&ring);
	close(data_fd);
	printf("submits=%d\n", READS);
	return 0;
}
