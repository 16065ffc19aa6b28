/* SPDX-License-Identifier: MIT */
/*
 * Credentials and transparent SQPOLL. An SQ thread runs requests with the
 * credentials of the task that created it, so a process that can change its
 * credentials must not get one behind its back (RSURING_SQPOLL=1 refuses
 * it: plain ring, one note on stderr per process).
 *
 *   cred <plain|transparent> <scenario>
 *
 * scenarios (the expected ring mode is argv[1]); "rings" is use_rings() of
 * rsuring_test.h (3 rings, mode checked, each reads the data file correctly;
 * the rings program runs the same as the process is):
 *   keepcaps          root keeps its permitted capabilities over
 *                     setresuid(65534) (PR_SET_KEEPCAPS), then rings
 *   saved-id          uids 65534/65534/1000, no capabilities (it could
 *                     still switch to uid 1000), then rings
 *   unpriv-fork       the parent (root) never touches io_uring; a child
 *                     drops to nobody for good, then rings
 *   drop-after-setup  a child creates its ring as root, writes a root-only
 *                     0600 file, drops to nobody, and opens that file
 *                     through the ring: -EACCES, as with a plain ring; a
 *                     0644 file opens and reads correctly through the ring.
 *                     The parent (root, no ring) removes the files.
 * Prints uid=<r>/<e>/<s> caps_prm=<hex> at_secure=<0|1>.
 */
#ifndef SQ_DEBIAN
#include <rsuring.h>
#endif
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#include <sys/wait.h>

#define SECRET "root-only secret\n"
#define PUBLIC "world-readable\n"

static void print_identity(void)
{
	uid_t r, e, s;

	CHECK(getresuid(&r, &e, &s) == 0);
	printf("uid=%d/%d/%d caps_prm=%llx at_secure=%lu\n", (int)r, (int)e, (int)s,
	       status_field("CapPrm", 16), getauxval(AT_SECURE));
}

static int wait_child(pid_t pid)
{
	int status;

	CHECK(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);

	CHECK_MSG(fd >= 0, "create %s: %s", path, strerror(errno));
	CHECK(fchmod(fd, mode) == 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	CHECK(close(fd) == 0);
}

/* openat through the ring; returns the CQE's res. */
static int ring_openat(struct io_uring *ring, const char *path)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret, res;

	CHECK(sqe != NULL);
	io_uring_prep_openat(sqe, AT_FDCWD, path, O_RDONLY, 0);
	io_uring_sqe_set_data64(sqe, 7);
	ret = io_uring_submit(ring);
	CHECK_SUBMITTED(ret, 1, "openat");
	cqe = wait_one(ring);
	CHECK_EQ(cqe->user_data, 7);
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

static void drop_after_setup_child(int transparent, const char *dir)
{
	char secret[300], public[300], buf[64];
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret, fd;

	T_STEP("root: ring");
	ret = io_uring_queue_init(8, &ring, 0);
	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "setup = %d (%s)", ret, strerror(-ret));
	/* The process is root: it can change credentials, so its ring stays
	 * plain (the check runs before the drop, while it is still root). */
	CHECK_RING_MODE(&ring, transparent);
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	snprintf(public, sizeof(public), "%s/public", dir);
	write_file(secret, SECRET, 0600);
	write_file(public, PUBLIC, 0644);

	T_STEP("drop to nobody");
	become_nobody();
	print_identity();
	CHECK_MSG(open(secret, O_RDONLY) < 0 && errno == EACCES,
		  "nobody can open the 0600 root file directly: the test set-up is wrong");

	T_STEP("openat of the root-only file through the ring");
	ret = ring_openat(&ring, secret);
	if (ret >= 0) {
		ssize_t n = pread(ret, buf, sizeof(buf) - 1, 0);

		buf[n > 0 ? n : 0] = '\0';
		T_FAIL("after dropping to nobody an io_uring openat of the root-only 0600 file "
		     "succeeded (fd %d, read \"%.20s\"): requests ran with root's credentials",
		     ret, buf);
	}
	CHECK_MSG(ret == -EACCES, "openat of the root-only file: res %d (%s), want -EACCES",
		  ret, strerror(-ret));

	T_STEP("openat + read of the 0644 file through the ring");
	fd = ring_openat(&ring, public);
	CHECK_MSG(fd >= 0, "openat of the 0644 file: res %d (%s)", fd, strerror(-fd));
	memset(buf, 0, sizeof(buf));
	sqe = io_uring_get_sqe(&ring);
	CHECK(sqe != NULL);
	io_uring_prep_read(sqe, fd, buf, sizeof(buf) - 1, 0);
	io_uring_sqe_set_data64(sqe, 8);
	ret = io_uring_submit(&ring);
	CHECK_SUBMITTED(ret, 1, "read");
	cqe = wait_one(&ring);
	CHECK_EQ(cqe->res, (int)strlen(PUBLIC));
	io_uring_cqe_seen(&ring, cqe);
	CHECK_MSG(!strcmp(buf, PUBLIC), "read \"%s\"", buf);
	close(fd);
	io_uring_queue_exit(&ring);
}

static void drop_after_setup(int transparent)
{
	char dir[] = "/tmp/rsuring-cred-XXXXXX";
	char path[300];
	pid_t pid;
	int code;

	CHECK_MSG(getuid() == 0, "drop-after-setup runs as root");
	CHECK_MSG(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
	/* Searchable by nobody: the 0600 mode of the file itself is what must
	 * refuse the open. */
	CHECK(chmod(dir, 0755) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		t_arm_watchdog();
		drop_after_setup_child(transparent, dir);
		_exit(0);
	}
	code = wait_child(pid);
	snprintf(path, sizeof(path), "%s/secret", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/public", dir);
	unlink(path);
	CHECK(rmdir(dir) == 0);
	if (code != 0)
		exit(code);
}

int main(int argc, char **argv)
{
	int transparent = expect_transparent(argc, argv);
	const char *scenario = argc > 2 ? argv[2] : "";

	if (!strcmp(scenario, "keepcaps")) {
		CHECK_MSG(getuid() == 0, "keepcaps runs as root");
		CHECK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0);
		CHECK(setgroups(0, NULL) == 0);
		CHECK(setresgid(NOBODY_ID, NOBODY_ID, NOBODY_ID) == 0);
		CHECK(setresuid(NOBODY_ID, NOBODY_ID, NOBODY_ID) == 0);
		CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
		CHECK_MSG(status_field("CapPrm", 16) != 0,
			  "PR_SET_KEEPCAPS kept no permitted capability");
		CHECK(status_field("CapEff", 16) == 0);
		print_identity();
		use_rings(transparent);
	} else if (!strcmp(scenario, "saved-id")) {
		CHECK_MSG(getuid() == 0, "saved-id runs as root");
		CHECK(setgroups(0, NULL) == 0);
		CHECK(setresgid(NOBODY_ID, NOBODY_ID, NOBODY_ID) == 0);
		CHECK(setresuid(NOBODY_ID, NOBODY_ID, 1000) == 0);
		CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
		CHECK_MSG(has_no_capabilities(), "capabilities left with uids 65534/65534/1000");
		print_identity();
		use_rings(transparent);
	} else if (!strcmp(scenario, "unpriv-fork")) {
		pid_t pid;
		int code;

		CHECK_MSG(getuid() == 0, "unpriv-fork runs as root");
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			t_arm_watchdog();
			become_nobody();
			check_unprivileged();
			print_identity();
			use_rings(transparent);
			_exit(0);
		}
		code = wait_child(pid);
		if (code != 0)
			exit(code);
	} else if (!strcmp(scenario, "drop-after-setup")) {
		drop_after_setup(transparent);
	} else {
		fprintf(stderr, "unknown scenario \"%s\"\n", scenario);
		return 2;
	}
	printf("cred %s: ok\n", scenario);
	return 0;
}
