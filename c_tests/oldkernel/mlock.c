/*
 * io_uring_mlock_size as a user whose locked memory is used up.
 *
 * Run as an unprivileged user (the kernel charges that user's rings to
 * RLIMIT_MEMLOCK): sets up raw rings of 4096 entries until the kernel says
 * -ENOMEM, then prints what the sizing functions return, one "key=value"
 * per line. tests/oldkernel.rs runs it linked to rsuring and to Debian's
 * liburing 2.3 and wants the same lines. Exit 1 when the limit could not
 * be reached (the check would prove nothing), 0 otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

#define MAX_RINGS 4096

static int raw_setup(unsigned entries)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	return (int)syscall(__NR_io_uring_setup, entries, &p);
}

int main(void)
{
	static int fds[MAX_RINGS];
	struct io_uring_params p;
	struct io_uring ring;
	int n = 0, err = 0, ret;

	if (geteuid() == 0) {
		fprintf(stderr, "run me as an unprivileged user\n");
		return 1;
	}
	while (n < MAX_RINGS) {
		int fd = raw_setup(4096);

		if (fd < 0) {
			err = errno;
			break;
		}
		fds[n++] = fd;
	}
	if (err != ENOMEM) {
		fprintf(stderr, "%d rings set up, then %s: memlock not used up\n",
			n, strerror(err));
		return 1;
	}
	/*
	 * Smaller rings may still fit: fill the rest. The kernel frees the
	 * rings of this user's earlier processes (the run just before this
	 * one) asynchronously, so their memory can come back after the first
	 * ENOMEM: keep filling until no ring has fitted for half a second.
	 */
	for (int quiet = 0; quiet < 10 && n < MAX_RINGS;) {
		int fd = raw_setup(1);

		if (fd >= 0) {
			fds[n++] = fd;
			quiet = 0;
			continue;
		}
		quiet++;
		usleep(50 * 1000);
	}
	printf("probe_errno=%d\n", raw_setup(1) < 0 ? errno : 0);
	printf("mlock_size_4096=%zd\n", io_uring_mlock_size(4096, 0));
	printf("mlock_size_1=%zd\n", io_uring_mlock_size(1, 0));
	printf("mlock_size_3000=%zd\n", io_uring_mlock_size(3000, 0));
	printf("mlock_size_cqe32=%zd\n", io_uring_mlock_size(64, IORING_SETUP_CQE32));
	printf("mlock_size_0=%zd\n", io_uring_mlock_size(0, 0));
	printf("mlock_size_big=%zd\n", io_uring_mlock_size(1U << 20, 0));
	printf("mlock_size_big_clamp=%zd\n",
	       io_uring_mlock_size(1U << 20, IORING_SETUP_CLAMP));
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 1024;
	printf("mlock_size_params_cqsize=%zd\n", io_uring_mlock_size_params(8, &p));
	p.cq_entries = 4;
	printf("mlock_size_params_cq_small=%zd\n", io_uring_mlock_size_params(8, &p));
	p.cq_entries = 0;
	printf("mlock_size_params_cq_0=%zd\n", io_uring_mlock_size_params(8, &p));
	ret = io_uring_queue_init(8, &ring, 0);
	printf("queue_init=%d\n", ret);
	if (ret == 0)
		io_uring_queue_exit(&ring);
	while (n > 0)
		close(fds[--n]);
	return 0;
}
