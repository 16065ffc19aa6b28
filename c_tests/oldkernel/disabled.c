/*
 * Every way to set up a ring, on a kernel whose io_uring is disabled
 * (kernel.io_uring_disabled, emulated by supervise --disabled): prints what
 * each call returns, one "key=value" per line. tests/oldkernel.rs runs it
 * linked to rsuring and to Debian's liburing 2.3 and wants the same lines
 * (and the same number of io_uring_setup calls).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

int main(void)
{
	struct io_uring_params p;
	struct io_uring_probe *probe;
	struct io_uring ring;
	long ret;

	printf("queue_init=%d\n", io_uring_queue_init(8, &ring, 0));
	printf("queue_init_sqpoll=%d\n", io_uring_queue_init(8, &ring, IORING_SETUP_SQPOLL));
	printf("queue_init_single_issuer=%d\n",
	       io_uring_queue_init(8, &ring, IORING_SETUP_SINGLE_ISSUER));
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 64;
	printf("queue_init_params=%d\n", io_uring_queue_init_params(8, &ring, &p));
	memset(&p, 0, sizeof(p));
	printf("io_uring_setup=%d\n", io_uring_setup(8, &p));
	ret = syscall(__NR_io_uring_setup, 8, &p);
	printf("raw_setup=%ld errno=%d\n", ret, ret < 0 ? errno : 0);
	probe = io_uring_get_probe();
	printf("get_probe=%s\n", probe ? "probe" : "NULL");
	if (probe)
		io_uring_free_probe(probe);
	printf("mlock_size=%zd\n", io_uring_mlock_size(8, 0));
	return 0;
}
