/* SPDX-License-Identifier: MIT */
/*
 * The kernel's per-task table of registered ring fds (16 slots), managed
 * by the application itself with raw io_uring_register calls: explicit
 * offsets, a slot given to another ring, a table filled before the first
 * ring and after it. With liburing every slot is the application's, and a
 * ring's submit always reaches that ring.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <pthread.h>

#define NRINGS 8

void sec_raw_slots(void)
{
	struct io_uring R[NRINGS], B;
	char line[256];
	unsigned got;
	long ret;
	int i;

	STEP("raw offsets");
	say("-- %d rings; the application registers ring i at offset i itself",
	    NRINGS);
	for (i = 0; i < NRINGS; i++)
		init_or_die(&R[i]);
	init_or_die(&B);
	for (i = 0; i < NRINGS; i++) {
		ret = raw_register_ring(R[i].ring_fd, (unsigned)i, &got);
		say("raw register ring %d at offset %d = %s%s", i, i,
		    rstr(ret, 0), ret == 1 && got != (unsigned)i ?
		    " (another offset)" : "");
	}

	STEP("slot 0 to ring B");
	say("-- slot 0 unregistered, ring B registered there; then io_uring_submit(&A)");
	say("raw unregister offset 0 = %s",
	    rstr(raw_unregister_ring(R[1].ring_fd, 0), 0));
	ret = raw_register_ring(B.ring_fd, 0, &got);
	say("raw register ring B at offset 0 = %s", rstr(ret, 0));
	queue_nop(&R[0], 0xA, 0);
	crit("submit(&A) = %s", rstr(io_uring_submit(&R[0]), 0));
	crit("A's CQ: %s", cqe_str(&R[0], 1000));
	crit("B's CQ: %s", cqe_str(&B, 200));

	STEP("library registrations on top");
	say("-- io_uring_register_ring_fd on every ring, then a NOP on each");
	for (i = 0; i < NRINGS; i++) {
		ret = io_uring_register_ring_fd(&R[i]);
		say("ring %d: io_uring_register_ring_fd = %s%s", i,
		    rstr(ret, 0),
		    ret == 1 && R[i].enter_ring_fd >= 8 &&
				    R[i].enter_ring_fd < 16 ?
			    " (a slot in 8..15)" :
			    "");
	}
	say("ring B: io_uring_register_ring_fd = %s",
	    rstr(io_uring_register_ring_fd(&B), 0));
	for (i = 0; i < NRINGS; i++)
		crit("ring %d: %s", i, nop_roundtrip(&R[i], 0x100 + (__u64)i));
	crit("ring B: %s", nop_roundtrip(&B, 0x1B));
	for (i = 0; i < NRINGS; i++)
		say("ring %d: io_uring_unregister_ring_fd = %s", i,
		    rstr(io_uring_unregister_ring_fd(&R[i]), 0));
	line[0] = '\0';
	for (i = 0; i < NRINGS; i++) {
		size_t len = strlen(line);

		snprintf(line + len, sizeof(line) - len, " %s",
			 rstr(raw_unregister_ring(B.ring_fd, (unsigned)i), 0));
	}
	say("raw unregister offsets 0..7:%s", line);
	for (i = 0; i < NRINGS; i++)
		crit("ring %d after: %s", i, nop_roundtrip(&R[i], 0x200 + (__u64)i));
	for (i = 0; i < NRINGS; i++)
		io_uring_queue_exit(&R[i]);
	io_uring_queue_exit(&B);
}

static void *other_thread(void *arg)
{
	struct io_uring *ring = arg;

	crit("another thread: %s", nop_roundtrip(ring, 0x77));
	return NULL;
}

/* Registers @fd at 16 offsets (explicit when @explicit, else the kernel's
 * choice) and says what happened, in one line. */
static void fill_table(int fd, int explicit, const char *what)
{
	char line[512] = "";
	unsigned got;
	int i;

	for (i = 0; i < 17; i++) {
		size_t len = strlen(line);
		long ret = raw_register_ring(fd, explicit ? (unsigned)i : -1U,
					     &got);

		if (explicit && i == 16)
			break;
		snprintf(line + len, sizeof(line) - len, " %s", rstr(ret, 0));
	}
	say("%s:%s", what, line);
}

static void empty_table(int fd)
{
	int i;

	for (i = 0; i < 16; i++)
		raw_unregister_ring(fd, (unsigned)i);
}

void sec_full_table(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	pthread_t t;
	long ret;
	int raw;

	STEP("table full before the first ring");
	say("-- the application fills all 16 slots before the first ring");
	memset(&p, 0, sizeof(p));
	raw = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (raw < 0)
		die("io_uring_setup: %s", strerror(errno));
	fill_table(raw, 1, "raw register offsets 0..15");
	init_shown(&ring, 0);
	crit("main: %s", nop_roundtrip(&ring, 0x1));
	say("io_uring_register_ring_fd = %s",
	    rstr(io_uring_register_ring_fd(&ring), 0));
	say("raw unregister offset 5 = %s",
	    rstr(raw_unregister_ring(raw, 5), 0));
	ret = io_uring_register_ring_fd(&ring);
	say("io_uring_register_ring_fd = %s%s", rstr(ret, 0),
	    ret == 1 && ring.enter_ring_fd == 5 ? " (slot 5)" : "");
	crit("main: %s", nop_roundtrip(&ring, 0x2));
	if (pthread_create(&t, NULL, other_thread, &ring))
		die("pthread_create");
	pthread_join(t, NULL);
	say("io_uring_unregister_ring_fd = %s",
	    rstr(io_uring_unregister_ring_fd(&ring), 0));
	crit("main: %s", nop_roundtrip(&ring, 0x3));
	io_uring_queue_exit(&ring);
	empty_table(raw);

	STEP("table filled after the first ring");
	say("-- the application fills the table after its first ring (the kernel picks the slots)");
	init_or_die(&ring);
	crit("main: %s", nop_roundtrip(&ring, 0x4));
	fill_table(raw, 0, "raw register 17 times at any offset");
	crit("main: %s", nop_roundtrip(&ring, 0x5));
	if (pthread_create(&t, NULL, other_thread, &ring))
		die("pthread_create");
	pthread_join(t, NULL);
	io_uring_queue_exit(&ring);
	empty_table(raw);
	fill_table(raw, 1, "after the ring's exit, raw register offsets 0..15");
	empty_table(raw);
	close(raw);
}
