/* SPDX-License-Identifier: MIT */
/*
 * rsuring: the liburing API level this header set implements.
 */
#ifndef LIBURING_VERSION_H
#define LIBURING_VERSION_H

#define IO_URING_VERSION_MAJOR 2
#define IO_URING_VERSION_MINOR 15

/*
 * Compile-time check, usable in #if: true when the headers are OLDER than
 * major.minor, i.e. "the check fails".  Typical use:
 *
 *   #if IO_URING_CHECK_VERSION(2, 4)
 *   ... fallback for headers before 2.4 ...
 *   #endif
 *
 * io_uring_check_version() does the same test at run time against the
 * library actually loaded.
 */
#ifndef IO_URING_CHECK_VERSION
#define IO_URING_CHECK_VERSION(major, minor)				\
	((major) > IO_URING_VERSION_MAJOR ||				\
	 ((major) == IO_URING_VERSION_MAJOR &&				\
	  (minor) > IO_URING_VERSION_MINOR))
#endif

#endif /* LIBURING_VERSION_H */
