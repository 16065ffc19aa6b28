/* SPDX-License-Identifier: MIT */
/*
 * Bad input: fd numbers that are not rings (a pipe, a closed number) where
 * the library expects a ring, and RLIMIT_NOFILE at its floor. Each failure
 * must be liburing's -errno, and nothing may reach a ring the caller did
 * not name.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <dirent.h>
#include <sys/resource.h>

void sec_bad_input(void)
{
	struct io_uring_params p;
	struct io_uring ring, fake;
	unsigned got;
	int pfd[2];

	STEP("not a ring");
	say("-- a pipe where a ring fd belongs");
	init_params_or_die(&ring, &p, 0);
	make_pipe(pfd);
	say("raw register of the pipe as a ring fd = %s",
	    rstr(raw_register_ring(pfd[0], -1U, &got), 0));
	{
		struct io_uring_rsrc_update upd = { .offset = -1U,
						    .data = (__u64)pfd[0] };

		say("raw register of the pipe through a ring = %s",
		    rstr(sys_register(ring.ring_fd, IORING_REGISTER_RING_FDS,
				      &upd, 1),
			 0));
	}
	say("io_uring_enter(pipe) = %s",
	    rstr(io_uring_enter((unsigned)pfd[0], 0, 0, 0, NULL), 0));
	say("io_uring_enter(pipe, GETEVENTS) = %s",
	    rstr(io_uring_enter((unsigned)pfd[0], 0, 1, IORING_ENTER_GETEVENTS,
				NULL),
		 0));

	fake = ring;
	fake.ring_fd = pfd[0];
	fake.enter_ring_fd = pfd[0];
	say("a copy of the struct with the pipe's fd:");
	say("  io_uring_register_files = %s",
	    rstr(io_uring_register_files(&fake, &pfd[1], 1), 0));
	say("  io_uring_register_ring_fd = %s",
	    rstr(io_uring_register_ring_fd(&fake), 0));
	say("  io_uring_register_eventfd = %s",
	    rstr(io_uring_register_eventfd(&fake, pfd[1]), 0));
	queue_nop(&fake, 0x1, 0);
	say("  io_uring_submit = %s", rstr(io_uring_submit(&fake), 0));
	/* The real ring was not named: it has no CQE. */
	crit("the real ring's CQ: %s", cqe_str(&ring, 200));

	fake = ring;
	fake.ring_fd = 1000;
	fake.enter_ring_fd = 1000;
	say("a copy of the struct with a closed fd number:");
	say("  io_uring_register_files = %s",
	    rstr(io_uring_register_files(&fake, &pfd[1], 1), 0));
	say("  io_uring_register_ring_fd = %s",
	    rstr(io_uring_register_ring_fd(&fake), 0));
	queue_nop(&fake, 0x2, 0);
	say("  io_uring_submit = %s", rstr(io_uring_submit(&fake), 0));
	crit("the real ring's CQ: %s", cqe_str(&ring, 200));
	io_uring_queue_exit(&ring);
	close(pfd[0]);
	close(pfd[1]);
}

void sec_mmap_not_a_ring(void)
{
	struct io_uring_params p;
	struct io_uring ring, mapped;
	int pfd[2];

	STEP("io_uring_queue_mmap of a pipe");
	say("-- io_uring_queue_mmap of a pipe, with a real ring's params");
	init_params_or_die(&ring, &p, 0);
	make_pipe(pfd);
	memset(&mapped, 0, sizeof(mapped));
	say("io_uring_queue_mmap(the pipe's read end) = %s",
	    rstr(io_uring_queue_mmap(pfd[0], &p, &mapped), 0));
	say("io_uring_queue_mmap(the pipe's write end) = %s",
	    rstr(io_uring_queue_mmap(pfd[1], &p, &mapped), 0));
	say("io_uring_queue_mmap(a closed fd number) = %s",
	    rstr(io_uring_queue_mmap(1000, &p, &mapped), 0));
	crit("the ring: %s", nop_roundtrip(&ring, 0x1));
	io_uring_queue_exit(&ring);
	close(pfd[0]);
	close(pfd[1]);
}

/* The highest fd number open here. */
static int highest_fd(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	int max = -1, self;

	if (!dir)
		die("opendir /proc/self/fd: %s", strerror(errno));
	self = dirfd(dir);
	while ((de = readdir(dir))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] != '.' && fd != self && fd > max)
			max = fd;
	}
	closedir(dir);
	return max;
}

static int set_nofile(rlim_t soft)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	rl.rlim_cur = soft;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

void sec_nofile(void)
{
	struct rlimit saved;
	struct io_uring ring, second;
	int floor, i, filled[64], nfill = 0;

	STEP("nofile");
	say("-- RLIMIT_NOFILE at its floor: no fd number left");
	if (getrlimit(RLIMIT_NOFILE, &saved))
		die("getrlimit: %s", strerror(errno));
	floor = highest_fd() + 1;
	/* No free number below the floor either (stdin may be closed). */
	for (i = 0; i < floor && nfill < 64; i++)
		if (fcntl(i, F_GETFD) < 0 && errno == EBADF)
			filled[nfill++] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (set_nofile((rlim_t)floor))
		die("setrlimit: %s", strerror(errno));
	crit("io_uring_queue_init = %s",
	     rstr(io_uring_queue_init(8, &ring, 0), 0));

	say("-- one fd number left");
	if (set_nofile((rlim_t)floor + 1))
		die("setrlimit: %s", strerror(errno));
	init_shown(&ring, 1);
	crit("%s", nop_roundtrip(&ring, 0x1));
	crit("a second io_uring_queue_init = %s",
	     rstr(io_uring_queue_init(8, &second, 0), 0));
	say("io_uring_register_ring_fd = %s",
	    rstr(io_uring_register_ring_fd(&ring), 0));
	crit("%s", nop_roundtrip(&ring, 0x2));
	say("io_uring_unregister_ring_fd = %s",
	    rstr(io_uring_unregister_ring_fd(&ring), 0));
	crit("%s", nop_roundtrip(&ring, 0x3));
	io_uring_queue_exit(&ring);
	crit("after its exit, io_uring_queue_init = %s",
	     rstr(io_uring_queue_init(8, &ring, 0), 0));
	io_uring_queue_exit(&ring);
	if (setrlimit(RLIMIT_NOFILE, &saved))
		die("setrlimit: %s", strerror(errno));
	for (i = 0; i < nfill; i++)
		close(filled[i]);
}
