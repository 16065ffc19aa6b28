/* SPDX-License-Identifier: MIT */
/*
 * Registered files and buffers, with tags and updates. A tag's CQE is
 * posted when the kernel drops the resource it was given with.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <sys/uio.h>

#define DATA_OFF 100

/*
 * "Allocate a free slot" for io_uring_prep_openat_direct. liburing 2.3's
 * helper stores file_index + 1 without special-casing
 * IORING_FILE_INDEX_ALLOC (later headers do), so the value that reaches
 * the kernel as IORING_FILE_INDEX_ALLOC is one less.
 */
#define ALLOC_INDEX (IORING_FILE_INDEX_ALLOC - 1)

static void queue_fixed_read(struct io_uring *ring, int index, void *buf,
			     unsigned len, __u64 ud)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_read(sqe, index, buf, len, DATA_OFF);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, ud);
}

static int data_ok(const unsigned char *buf, size_t len, size_t off)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern_at(off + i))
			return 0;
	return 1;
}

/*
 * A read of fixed file `index` into the cleared buf, submitted (as what)
 * and reaped; then whether the data is the file's.
 */
static void show_fixed_read(struct io_uring *ring, int index,
			    unsigned char *buf, unsigned len, __u64 ud,
			    const char *what)
{
	memset(buf, 0, len);
	queue_fixed_read(ring, index, buf, len, ud);
	submit_show(ring, what, 1);
	say("data ok = %d", data_ok(buf, len, DATA_OFF));
}

void sec_registered_files(void)
{
	unsigned char buf[16];
	struct io_uring ring;
	__u64 tags[2] = { 0x51, 0x52 }, tag = 0x53;
	int fd, p[2], files[2], none = -1;

	fd = make_pattern_file(8192);
	make_pipe(p);
	need(init_ring(&ring, 16, 0, "init 16"), "init");

	STEP("register_files_tags");
	say("-- register_files_tags [file, pipe], fixed read of slot 0");
	files[0] = fd;
	files[1] = p[0];
	show_ret("register_files_tags",
		 io_uring_register_files_tags(&ring, files, tags, 2));
	show_fixed_read(&ring, 0, buf, sizeof(buf), 0x11, "submit");

	STEP("updates");
	say("-- files_update_tag slot 0, files_update slot 1, out of range");
	show_ret("register_files_update_tag(0)",
		 io_uring_register_files_update_tag(&ring, 0, &p[1], &tag, 1));
	show_cqes(&ring, 1, 1000, NULL);
	show_ret("register_files_update(1)",
		 io_uring_register_files_update(&ring, 1, &fd, 1));
	show_cqes(&ring, 1, 1000, NULL);
	show_fixed_read(&ring, 1, buf, sizeof(buf), 0x12, "submit fixed read of slot 1");
	show_ret("register_files_update(5), 2 slots",
		 io_uring_register_files_update(&ring, 5, &fd, 1));
	show_ret("register_files_update(0, -1)",
		 io_uring_register_files_update(&ring, 0, &none, 1));
	show_cqes(&ring, 1, 1000, NULL);
	queue_fixed_read(&ring, 0, buf, sizeof(buf), 0x13);
	submit_show(&ring, "submit fixed read of the empty slot 0", 1);

	STEP("unregister_files");
	say("-- unregister_files");
	show_ret("unregister_files", io_uring_unregister_files(&ring));
	show_cqes(&ring, 0, 0, NULL);
	show_ret("unregister_files again", io_uring_unregister_files(&ring));
	show_ret("register_files_update without a table",
		 io_uring_register_files_update(&ring, 0, &fd, 1));

	STEP("sparse table, alloc range, direct open");
	say("-- register_files_sparse(4), alloc range, openat_direct");
	show_ret("register_files_sparse(4)",
		 io_uring_register_files_sparse(&ring, 4));
	show_ret("register_files_update(2)",
		 io_uring_register_files_update(&ring, 2, &fd, 1));
	show_fixed_read(&ring, 2, buf, sizeof(buf), 0x21, "submit fixed read of slot 2");
	show_ret("register_file_alloc_range(1, 2)",
		 io_uring_register_file_alloc_range(&ring, 1, 2));
	queue_op(&ring, 0x22, io_uring_prep_openat_direct, AT_FDCWD,
		 "/dev/null",
		 O_RDONLY, 0, ALLOC_INDEX);
	queue_op(&ring, 0x23, io_uring_prep_openat_direct, AT_FDCWD,
		 "/dev/null",
		 O_RDONLY, 0, ALLOC_INDEX);
	submit_show(&ring, "submit 2 openat_direct(ALLOC), range [1, 3) with 2 taken", 2);
	queue_op(&ring, 0x24, io_uring_prep_close_direct, 1);
	submit_show(&ring, "submit close_direct(1)", 1);
	show_ret("unregister_files", io_uring_unregister_files(&ring));

	io_uring_queue_exit(&ring);
	close(fd);
	close(p[0]);
	close(p[1]);
}

static void queue_rw_fixed(struct io_uring *ring, int write, int fd,
			   void *buf, unsigned len, int index, __u64 ud)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	if (write)
		io_uring_prep_write_fixed(sqe, fd, buf, len, 0, index);
	else
		io_uring_prep_read_fixed(sqe, fd, buf, len, DATA_OFF, index);
	io_uring_sqe_set_data64(sqe, ud);
}

void sec_registered_buffers(void)
{
	static unsigned char mem[3][4096] __attribute__((aligned(4096)));
	struct iovec iov[2] = {
		{ .iov_base = mem[0], .iov_len = sizeof(mem[0]) },
		{ .iov_base = mem[1], .iov_len = sizeof(mem[1]) },
	};
	struct iovec fresh = { .iov_base = mem[2], .iov_len = sizeof(mem[2]) };
	__u64 tags[2] = { 0x61, 0x62 }, tag63 = 0x63, tag64 = 0x64;
	unsigned char check[64];
	struct io_uring ring;
	int in, out;
	size_t i;

	in = make_pattern_file(8192);
	out = make_pattern_file(4096);
	need(init_ring(&ring, 16, 0, "init 16"), "init");

	STEP("register_buffers_tags");
	say("-- register_buffers_tags (2), read_fixed, write_fixed");
	show_ret("register_buffers_tags",
		 io_uring_register_buffers_tags(&ring, iov, tags, 2));
	queue_rw_fixed(&ring, 0, in, mem[0], 64, 0, 0x11);
	for (i = 0; i < 64; i++)
		mem[1][i] = (unsigned char)(0xa0 + i);
	queue_rw_fixed(&ring, 1, out, mem[1], 64, 1, 0x12);
	submit_show(&ring, "submit", 2);
	say("read data ok = %d", data_ok(mem[0], 64, DATA_OFF));
	say("written data ok = %d",
	    pread(out, check, 64, 0) == 64 && memcmp(check, mem[1], 64) == 0);

	STEP("bad fixed buffers");
	say("-- read_fixed with index 5, and outside the buffer");
	queue_rw_fixed(&ring, 0, in, mem[0], 64, 5, 0x13);
	queue_rw_fixed(&ring, 0, in, mem[0] + 4090, 64, 0, 0x14);
	submit_show(&ring, "submit", 2);

	STEP("buffers_update_tag, unregister");
	say("-- register_buffers_update_tag slot 1, unregister_buffers");
	show_ret("register_buffers_update_tag(1)",
		 io_uring_register_buffers_update_tag(&ring, 1, &fresh, &tag63,
						      1));
	show_cqes(&ring, 1, 1000, NULL);
	show_ret("unregister_buffers", io_uring_unregister_buffers(&ring));
	show_cqes(&ring, 2, 1000, NULL);
	show_ret("unregister_buffers again", io_uring_unregister_buffers(&ring));

	STEP("untagged and sparse");
	say("-- register_buffers (untagged), register_buffers_sparse(4)");
	show_ret("register_buffers", io_uring_register_buffers(&ring, iov, 2));
	show_ret("register_buffers while registered",
		 io_uring_register_buffers(&ring, iov, 2));
	show_ret("unregister_buffers", io_uring_unregister_buffers(&ring));
	show_ret("register_buffers_sparse(4)",
		 io_uring_register_buffers_sparse(&ring, 4));
	show_ret("register_buffers_update_tag(0)",
		 io_uring_register_buffers_update_tag(&ring, 0, &fresh, &tag64,
						      1));
	memset(mem[2], 0, 64);
	queue_rw_fixed(&ring, 0, in, mem[2], 64, 0, 0x21);
	queue_rw_fixed(&ring, 0, in, mem[2], 64, 1, 0x22);
	submit_show(&ring, "submit read_fixed slots 0 and 1 (empty)", 2);
	say("read data ok = %d", data_ok(mem[2], 64, DATA_OFF));
	show_ret("unregister_buffers", io_uring_unregister_buffers(&ring));
	show_cqes(&ring, 1, 1000, NULL);

	io_uring_queue_exit(&ring);
	close(in);
	close(out);
}
