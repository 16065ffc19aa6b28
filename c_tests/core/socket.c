/* SPDX-License-Identifier: MIT */
/*
 * Loopback TCP through io_uring: listen on 127.0.0.1 port 0, an accept that
 * is pending before the connect, io_uring connect, send/recv in both
 * directions with a large payload (looping over short transfers) and content
 * checks, sendmsg/recvmsg, shutdown, recv returning 0 after the peer closed.
 */
#include "../rsuring_test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define BIG (256 * 1024)

static void xfer(struct io_uring *ring, int from, int to, size_t len,
		 unsigned seed)
{
	unsigned char *sbuf = malloc(len), *rbuf = malloc(len);
	size_t sent = 0, rcvd = 0;
	int send_inflight = 0, recv_inflight = 0;

	CHECK(sbuf && rbuf);
	t_fill(sbuf, len, 0, seed);
	memset(rbuf, 0, len);
	while (rcvd < len) {
		struct t_cqe c;
		int n = 0;

		if (!send_inflight && sent < len) {
			t_queue(ring, 1, io_uring_prep_send, from, sbuf + sent, len - sent, 0);
			send_inflight = 1;
			n++;
		}
		if (!recv_inflight) {
			t_queue(ring, 2, io_uring_prep_recv, to, rbuf + rcvd, len - rcvd, 0);
			recv_inflight = 1;
			n++;
		}
		if (n)
			t_submit_expect(ring, n);
		c = t_reap(ring);
		if (c.user_data == 1) {
			CHECK_MSG(c.res > 0, "send res=%d", c.res);
			sent += (size_t)c.res;
			send_inflight = 0;
		} else if (c.user_data == 2) {
			CHECK_MSG(c.res > 0, "recv res=%d", c.res);
			rcvd += (size_t)c.res;
			recv_inflight = 0;
		} else {
			T_FAIL("unexpected user_data %llu", (unsigned long long)c.user_data);
		}
	}
	/* the last send CQE may be reaped after the recv that finished */
	while (send_inflight) {
		struct t_cqe c = t_reap(ring);

		CHECK_EQ(c.user_data, 1);
		CHECK(c.res > 0);
		sent += (size_t)c.res;
		send_inflight = 0;
	}
	CHECK_EQ(sent, len);
	CHECK_EQ(rcvd, len);
	CHECK_EQ(t_verify(rbuf, len, 0, seed), -1);
	free(sbuf);
	free(rbuf);
}

int main(void)
{
	struct io_uring ring;
	struct sockaddr_in addr, peer;
	socklen_t alen = sizeof(addr);
	struct t_cqe c, got[2];
	int lfd, cfd, afd = -1, i, one = 1;

	t_queue_init(&ring, 32, 0);

	T_STEP("listen on 127.0.0.1:0");
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK_SYS(lfd);
	CHECK_SYS(setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = 0;
	CHECK_SYS(bind(lfd, (struct sockaddr *)&addr, sizeof(addr)));
	CHECK_SYS(listen(lfd, 8));
	CHECK_SYS(getsockname(lfd, (struct sockaddr *)&addr, &alen));
	CHECK(addr.sin_port != 0);

	T_STEP("accept pending before connect");
	memset(&peer, 0, sizeof(peer));
	alen = sizeof(peer);
	t_submit1(&ring, 100, io_uring_prep_accept, lfd, (struct sockaddr *)&peer, &alen, SOCK_CLOEXEC);
	t_msleep(5);
	t_expect_no_cqe(&ring);

	T_STEP("io_uring connect");
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK_SYS(cfd);
	t_submit1(&ring, 101, io_uring_prep_connect, cfd, (struct sockaddr *)&addr, sizeof(addr));
	t_reap_each(&ring, got, { 100, T_ANY_RES }, { 101, 0 });
	CHECK_MSG(got[0].res >= 0, "accept res=%d", got[0].res);
	afd = got[0].res;
	CHECK_EQ(peer.sin_family, AF_INET);
	CHECK_EQ(ntohl(peer.sin_addr.s_addr), INADDR_LOOPBACK);
	CHECK_EQ(alen, sizeof(peer));
	CHECK(fcntl(afd, F_GETFD) & FD_CLOEXEC);
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	T_STEP("small send/recv client->server");
	{
		char buf[64];

		t_submit1(&ring, 1, io_uring_prep_send, cfd, "ping", 4, 0);
		c = t_reap(&ring);
		CHECK_EQ(c.res, 4);
		t_submit1(&ring, 2, io_uring_prep_recv, afd, buf, sizeof(buf), 0);
		c = t_reap_expect(&ring, 2, 4);
		CHECK(memcmp(buf, "ping", 4) == 0);
	}

	T_STEP("large transfer client->server");
	xfer(&ring, cfd, afd, BIG, 1);
	T_STEP("large transfer server->client");
	xfer(&ring, afd, cfd, BIG, 2);

	T_STEP("sendmsg/recvmsg");
	{
		char a[] = "hello ", b[] = "world", r1[4], r2[32];
		struct iovec siov[2] = { { a, 6 }, { b, 5 } };
		struct iovec riov[2] = { { r1, sizeof(r1) }, { r2, sizeof(r2) } };
		struct msghdr smsg, rmsg;

		memset(&smsg, 0, sizeof(smsg));
		memset(&rmsg, 0, sizeof(rmsg));
		smsg.msg_iov = siov;
		smsg.msg_iovlen = 2;
		rmsg.msg_iov = riov;
		rmsg.msg_iovlen = 2;
		t_queue(&ring, 31, io_uring_prep_recvmsg, cfd, &rmsg, 0);
		t_queue(&ring, 30, io_uring_prep_sendmsg, afd, &smsg, 0);
		t_submit_expect(&ring, 2);
		for (i = 0; i < 2; i++) {
			c = t_reap(&ring);
			CHECK_MSG(c.res == 11, "user_data %llu res=%d",
				  (unsigned long long)c.user_data, c.res);
		}
		CHECK(memcmp(r1, "hell", 4) == 0);
		CHECK(memcmp(r2, "o world", 7) == 0);
	}

	T_STEP("shutdown(SHUT_WR) -> peer recv returns 0");
	{
		char buf[16];

		t_submit1(&ring, 40, io_uring_prep_shutdown, cfd, SHUT_WR);
		c = t_reap(&ring);
		if (c.res != -EINVAL)	/* shutdown opcode needs 5.11 */
			CHECK_EQ(c.res, 0);
		else
			CHECK_SYS(shutdown(cfd, SHUT_WR));
		t_submit1(&ring, 41, io_uring_prep_recv, afd, buf, sizeof(buf), 0);
		c = t_reap_expect(&ring, 41, 0);
	}

	T_STEP("recv after peer close returns 0");
	{
		char buf[16];

		t_submit1(&ring, 50, io_uring_prep_recv, cfd, buf, sizeof(buf), 0);
		t_msleep(5);
		t_expect_no_cqe(&ring);
		close(afd);
		c = t_reap_expect(&ring, 50, 0);
	}

	close(cfd);
	close(lfd);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
