/* SPDX-License-Identifier: MIT */
/*
 * rsuring: the kernel types liburing's header needs beyond the io_uring
 * uapi, with fallbacks for C libraries and kernel headers that lack them.
 *
 * liburing generates this file at configure time; here it is fixed and
 * decides with __has_include where the compiler offers it.  Included
 * first by <liburing.h>; programs may include it on their own too.
 */
#ifndef LIBURING_COMPAT_H
#define LIBURING_COMPAT_H

#include <stdint.h>
#include <linux/ioctl.h>

/*
 * struct __kernel_timespec.  Once it is settled here, the uapi header is
 * told (with the skip macro) not to include <linux/time_types.h> again.
 */
#if defined(__has_include)
#if __has_include("linux/time_types.h")
#include <linux/time_types.h>
#else
struct __kernel_timespec {
	int64_t		tv_sec;
	long long	tv_nsec;
};
#endif
#else
#include <linux/time_types.h>
#endif
#ifndef UAPI_LINUX_IO_URING_H_SKIP_LINUX_TIME_TYPES_H
#define UAPI_LINUX_IO_URING_H_SKIP_LINUX_TIME_TYPES_H 1
#endif

/* struct open_how, the argument of io_uring_prep_openat2() */
#if defined(__has_include)
#if __has_include("linux/openat2.h")
#include <linux/openat2.h>
#define RSURING_HAVE_OPEN_HOW 1
#endif
#else
#include <linux/openat2.h>
#define RSURING_HAVE_OPEN_HOW 1
#endif
#ifndef RSURING_HAVE_OPEN_HOW
struct open_how {
	uint64_t	flags;
	uint64_t	mode;
	uint64_t	resolve;
};
#endif

/*
 * Block-device uring_cmd opcodes (<linux/blkdev.h> on kernels that have
 * them); defined here so io_uring_prep_cmd_discard() and
 * io_uring_prep_cmd_zone_reset_all() build everywhere.
 */
#ifndef BLOCK_URING_CMD_DISCARD
#define BLOCK_URING_CMD_DISCARD		_IO(0x12, 0)
#endif
#ifndef BLOCK_URING_CMD_ZONE_RESET_ALL
#define BLOCK_URING_CMD_ZONE_RESET_ALL	_IO(0x12, 1)
#endif

#endif /* LIBURING_COMPAT_H */
