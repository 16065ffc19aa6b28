/* SPDX-License-Identifier: MIT */
/*
 * Library version API (liburing >= 2.4): io_uring_major_version() == 2 and
 * equal to IO_URING_VERSION_MAJOR; the loaded minor is at least the minor
 * compiled against; io_uring_check_version() returns false for versions the
 * loaded library satisfies and true for newer ones; IO_URING_CHECK_VERSION
 * likewise at compile time.
 */
#include "../rsuring_test.h"

int main(void)
{
	int major = io_uring_major_version();
	int minor = io_uring_minor_version();

	T_STEP("major/minor");
	CHECK_EQ(major, 2);
	CHECK_EQ(major, IO_URING_VERSION_MAJOR);
	CHECK_GE(minor, IO_URING_VERSION_MINOR);
	CHECK_GE(minor, 4);	/* the version API itself is 2.4 */

	T_STEP("io_uring_check_version");
	CHECK(!io_uring_check_version(2, 0));
	CHECK(!io_uring_check_version(2, 4));
	CHECK(!io_uring_check_version(2, minor));
	CHECK(!io_uring_check_version(1, 99));
	CHECK(io_uring_check_version(2, minor + 1));
	CHECK(io_uring_check_version(3, 0));
	CHECK(io_uring_check_version(99, 0));

	T_STEP("IO_URING_CHECK_VERSION");
	CHECK(!IO_URING_CHECK_VERSION(2, 0));
	CHECK(!IO_URING_CHECK_VERSION(IO_URING_VERSION_MAJOR, IO_URING_VERSION_MINOR));
	CHECK(IO_URING_CHECK_VERSION(IO_URING_VERSION_MAJOR, IO_URING_VERSION_MINOR + 1));
	CHECK(IO_URING_CHECK_VERSION(3, 0));
	return T_EXIT_PASS;
}
