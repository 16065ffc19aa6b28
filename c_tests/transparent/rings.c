/* SPDX-License-Identifier: MIT */
/*
 * Three plain-setup rings as the process is, each checked for the expected
 * mode and used for reads with data checked (use_rings of rsuring_test.h).
 * The driver runs it as root, as nobody (setpriv), as a setuid binary
 * (AT_SECURE), under taskset -c 0, with or without RSURING_SQPOLL=1, and
 * counts the library's notes on stderr.
 *
 *   rings <plain|transparent>
 *
 * Prints uid=<r>/<e>/<s> at_secure=<0|1> cpus=<CPUs the process may use>.
 */
#ifndef SQ_DEBIAN
#include <rsuring.h>
#endif
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#include <sched.h>

int main(int argc, char **argv)
{
	int transparent = expect_transparent(argc, argv);
	cpu_set_t set;
	uid_t r, e, s;

	CHECK(getresuid(&r, &e, &s) == 0);
	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	printf("uid=%d/%d/%d at_secure=%lu cpus=%d\n", (int)r, (int)e, (int)s,
	       getauxval(AT_SECURE), CPU_COUNT(&set));
	if (transparent)
		check_unprivileged();
	use_rings(transparent);
	printf("rings: ok\n");
	return 0;
}
