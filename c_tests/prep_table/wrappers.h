/* SPDX-License-Identifier: MIT */
/* Prototypes of wrappers.c, for one WRAP_PREFIX. */
void *W(validate)(void *buf, int len, struct msghdr *m);
void *W(firsthdr)(void *o, struct msghdr *m);
void *W(nexthdr)(void *o, struct msghdr *m, void *cmsg);
void *W(payload)(void *o, struct msghdr *m);
unsigned W(payload_length)(void *o, int len, struct msghdr *m);
int W(opcode_supported)(void *probe, int op);
int W(eventfd_toggle)(struct io_uring *ring, bool enabled);
int W(eventfd_enabled)(struct io_uring *ring);
void *W(get_sqe)(struct io_uring *ring);
void *W(get_sqe128)(struct io_uring *ring);
unsigned W(sq_state)(struct io_uring *ring);
int W(peek)(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned *nr);
void W(cqe_seen)(struct io_uring *ring, struct io_uring_cqe *cqe);
unsigned W(cq_ready)(struct io_uring *ring);
void W(for_each)(struct io_uring *ring, unsigned out[3]);
void W(iterate)(struct io_uring *ring, unsigned out[2]);
void W(buf_ring_add)(struct io_uring_buf_ring *br, void *addr, unsigned len,
		     unsigned short bid, int mask, int offset, int count);
