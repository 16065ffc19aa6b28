/* SPDX-License-Identifier: MIT */
/*
 * Loopback TCP: multishot accept, multishot recv from a provided-buffer
 * ring; and provided buffers for reads (buffer ring and the older
 * PROVIDE_BUFFERS request), running out of them.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>

#define BGID_RECV 7
#define BGID_READ 8
#define BGID_LEGACY 9
#define BUF_LEN 64

/* A listening socket on 127.0.0.1, port chosen by the kernel. */
static int listen_loopback(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		say("!! socket: %s", strerror(errno));
		exit(1);
	}
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) < 0 ||
	    listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *)addr, &len) < 0) {
		say("!! bind/listen: %s", strerror(errno));
		exit(1);
	}
	return fd;
}

static int connect_loopback(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)addr,
			      sizeof(*addr)) < 0) {
		say("!! connect: %s", strerror(errno));
		exit(1);
	}
	return fd;
}

/* A buffer ring of @entries buffers of BUF_LEN bytes, registered as @bgid. */
static struct io_uring_buf_ring *buf_ring(struct io_uring *ring,
					  unsigned entries, int bgid,
					  char *bufs)
{
	struct io_uring_buf_reg reg;
	struct io_uring_buf_ring *br;
	unsigned i;
	int ret;

	br = mmap(NULL, entries * sizeof(struct io_uring_buf), PROT_READ |
		  PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (br == MAP_FAILED) {
		say("!! mmap: %s", strerror(errno));
		exit(1);
	}
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)br;
	reg.ring_entries = entries;
	reg.bgid = (__u16)bgid;
	ret = io_uring_register_buf_ring(ring, &reg, 0);
	show_ret("register_buf_ring", ret);
	need(ret, "register_buf_ring");
	io_uring_buf_ring_init(br);
	for (i = 0; i < entries; i++)
		io_uring_buf_ring_add(br, bufs + i * BUF_LEN, BUF_LEN,
				      (unsigned short)i,
				      io_uring_buf_ring_mask(entries), (int)i);
	io_uring_buf_ring_advance(br, (int)entries);
	return br;
}

static void send_str(int fd, const char *s)
{
	if (send(fd, s, strlen(s), 0) != (ssize_t)strlen(s))
		say("!! send: %s", strerror(errno));
}

void sec_net(void)
{
	static char bufs[4 * BUF_LEN];
	struct sockaddr_in addr;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int lfd, c1, c2, conns[16] = { -1, -1 };
	unsigned n;

	lfd = listen_loopback(&addr);
	need(init_ring(&ring, 16, 0, "init 16"), "init");

	STEP("multishot accept");
	say("-- multishot accept, two connections, then cancel");
	queue_op(&ring, UD_FD | 0x11, io_uring_prep_multishot_accept, lfd, NULL,
		 NULL, SOCK_CLOEXEC);
	show_ret("submit", io_uring_submit(&ring));
	say("cq_ready before connecting = %u", io_uring_cq_ready(&ring));
	c1 = connect_loopback(&addr);
	n = show_cqes(&ring, 1, 2000, conns);
	c2 = connect_loopback(&addr);
	show_cqes(&ring, 1, 2000, n ? conns + 1 : conns);
	queue_op(&ring, 0x12, io_uring_prep_cancel64, UD_FD | 0x11, 0);
	submit_show(&ring, "submit cancel", 2);
	if (conns[0] < 0 || conns[1] < 0) {
		say("!! accepted fewer than 2 connections, section ends");
		exit(1);
	}

	STEP("multishot recv");
	say("-- multishot recv into a 4-buffer ring, 2 sends, then EOF");
	buf_ring(&ring, 4, BGID_RECV, bufs);
	sqe = sqe_of(&ring);
	io_uring_prep_recv_multishot(sqe, conns[0], NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID_RECV;
	io_uring_sqe_set_data64(sqe, 0x21);
	show_ret("submit", io_uring_submit(&ring));
	send_str(c1, "hello");
	show_cqes(&ring, 1, 2000, NULL);
	send_str(c1, "world!");
	show_cqes(&ring, 1, 2000, NULL);
	say("buffers: \"%.5s\" \"%.6s\"", bufs, bufs + BUF_LEN);
	close(c1);
	show_cqes(&ring, 1, 2000, NULL);
	show_ret_twice("unregister_buf_ring",
		       io_uring_unregister_buf_ring(&ring, BGID_RECV));

	STEP("recv on the second connection");
	say("-- one-shot recv, no buffer select");
	queue_op(&ring, 0x31, io_uring_prep_recv, conns[1], bufs, BUF_LEN, 0);
	show_ret("submit", io_uring_submit(&ring));
	send_str(c2, "abc");
	show_cqes(&ring, 1, 2000, NULL);
	close(c2);

	io_uring_queue_exit(&ring);
	close(conns[0]);
	close(conns[1]);
	close(lfd);
}

static void queue_select_read(struct io_uring *ring, int fd, int bgid,
			      __u64 ud)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_read(sqe, fd, NULL, BUF_LEN, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = (__u16)bgid;
	io_uring_sqe_set_data64(sqe, ud);
}

void sec_buffers_provided(void)
{
	static char bufs[4 * BUF_LEN], legacy[2 * BUF_LEN];
	struct io_uring_buf_ring *br;
	struct io_uring ring;
	int p[2];

	make_pipe(p);
	need(init_ring(&ring, 16, 0, "init 16"), "init");

	STEP("buffer ring for reads");
	say("-- a 1-buffer ring: two reads, the second finds none");
	br = buf_ring(&ring, 1, BGID_READ, bufs);
	if (write(p[1], "0123456789", 10) != 10)
		say("!! write to the pipe failed");
	queue_select_read(&ring, p[0], BGID_READ, 0x11);
	submit_show(&ring, "submit", 1);
	say("buffer 0: \"%.10s\"", bufs);
	queue_select_read(&ring, p[0], BGID_READ, 0x12);
	submit_show(&ring, "submit", 1);
	say("-- the buffer given back, a third read");
	io_uring_buf_ring_add(br, bufs, BUF_LEN, 0, io_uring_buf_ring_mask(1),
			      0);
	io_uring_buf_ring_advance(br, 1);
	if (write(p[1], "abc", 3) != 3)
		say("!! write to the pipe failed");
	queue_select_read(&ring, p[0], BGID_READ, 0x13);
	submit_show(&ring, "submit", 1);
	show_ret("unregister_buf_ring", io_uring_unregister_buf_ring(&ring,
								      BGID_READ));
	show_ret("register_buf_ring with 3 entries (not a power of 2)",
		 io_uring_register_buf_ring(&ring,
					    &(struct io_uring_buf_reg){
						    .ring_addr =
							    (unsigned long)br,
						    .ring_entries = 3,
						    .bgid = BGID_READ },
					    0));

	STEP("PROVIDE_BUFFERS");
	say("-- PROVIDE_BUFFERS (2), reads, REMOVE_BUFFERS");
	queue_op(&ring, 0x21, io_uring_prep_provide_buffers, legacy, BUF_LEN, 2,
		 BGID_LEGACY, 0);
	submit_show(&ring, "submit provide", 1);
	if (write(p[1], "xyz", 3) != 3)
		say("!! write to the pipe failed");
	queue_select_read(&ring, p[0], BGID_LEGACY, 0x22);
	submit_show(&ring, "submit", 1);
	queue_op(&ring, 0x23, io_uring_prep_remove_buffers, 8, BGID_LEGACY);
	submit_show(&ring, "submit remove", 1);
	queue_op(&ring, 0x24, io_uring_prep_remove_buffers, 1, BGID_LEGACY);
	submit_show(&ring, "submit remove (none left)", 1);

	io_uring_queue_exit(&ring);
	munmap(br, sizeof(struct io_uring_buf));
	close(p[0]);
	close(p[1]);
}
