/* SPDX-License-Identifier: MIT */
/*
 * The engine's fio options: the names of fio's own io_uring engine
 * options (so job files carry over), rsuring's extensions, and strict
 * parsing. Numbers are taken as text (FIO_OPT_STR_STORE) and parsed here:
 * fio's integer types accept size suffixes and split values at '-', so
 * "reap_batch=-3" would end up as 3. A refused value makes fio stop
 * parsing the job; rse_init also fails any job whose bad_value is set.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "optgroup.h"

static void rse_refuse(struct rse_options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reports a refused value now and keeps the first one for rse_init. */
static void rse_refuse(struct rse_options *o, const char *fmt, ...)
{
	char msg[RSE_BAD_VALUE_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("rsuring: %s\n", msg);
	if (!o->bad_value[0])
		snprintf(o->bad_value, sizeof(o->bad_value), "%s", msg);
}

/* A whole decimal number in [lo, hi], nothing before or after it. */
static int rse_parse_number(void *data, const char *name, const char *text,
			    long long lo, long long hi, int *out)
{
	struct rse_options *o = data;
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < lo || v > hi) {
		rse_refuse(o, "%s=%s: expected a whole number from %lld to %lld",
			   name, text, lo, hi);
		return 1;
	}
	*out = (int) v;
	return 0;
}

/* Options given bare ("hipri") or with 0/1 (FIO_OPT_STR_SET). */
static int rse_check_flag(void *data, const char *name, int v, int *out)
{
	if (v != 0 && v != 1) {
		rse_refuse(data, "%s=%d: expected 0 or 1 (or the name alone)",
			   name, v);
		return 1;
	}
	*out = v;
	return 0;
}

#define RSE_NUMBER_OPTION(field, name, lo, hi)				\
static int rse_set_##field(void *data, const char *text)		\
{									\
	return rse_parse_number(data, name, text, lo, hi,		\
				&((struct rse_options *) data)->field);	\
}

#define RSE_FLAG_OPTION(field, name)					\
static int rse_set_##field(void *data, int *v)				\
{									\
	return rse_check_flag(data, name, *v,				\
			      &((struct rse_options *) data)->field);	\
}

RSE_FLAG_OPTION(hipri, "hipri")
RSE_FLAG_OPTION(fixedbufs, "fixedbufs")
RSE_FLAG_OPTION(registerfiles, "registerfiles")
RSE_FLAG_OPTION(sqpoll, "sqthread_poll")
RSE_NUMBER_OPTION(nonvectored, "nonvectored", -1, 1)
RSE_NUMBER_OPTION(uncached, "uncached", 0, 1)
RSE_NUMBER_OPTION(nowait, "nowait", 0, 1)
RSE_NUMBER_OPTION(force_async, "force_async", 0, INT_MAX)
RSE_NUMBER_OPTION(sqpoll_percpu, "sqthread_poll_percpu", 0, 1)
RSE_NUMBER_OPTION(reap_batch, "reap_batch", 0, RSE_MAX_REAP_BATCH)
RSE_NUMBER_OPTION(defer_taskrun, "defer_taskrun", -1, 1)
RSE_NUMBER_OPTION(ring_stats, "ring_stats", 0, 1)
RSE_NUMBER_OPTION(submit_and_wait, "submit_and_wait", 0, 1)

static int rse_set_sqpoll_cpu(void *data, const char *text)
{
	struct rse_options *o = data;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < 0 ||
	    v >= (ncpus > 0 ? ncpus : INT_MAX)) {
		rse_refuse(o, "sqthread_poll_cpu=%s: no such CPU (this machine"
			   " has CPUs 0 to %ld)", text, ncpus - 1);
		return 1;
	}
	o->sqpoll_cpu = (int) v;
	o->sqpoll_cpu_set = 1;
	return 0;
}

/*
 * "R" (reads and writes) or "R,W"; an empty side keeps its value: the
 * form of fio's read/write option pairs. Each number in [lo, hi].
 */
static int rse_parse_pair(void *data, const char *name, const char *text,
			  long long lo, long long hi, unsigned int out[2])
{
	struct rse_options *o = data;
	const char *comma = strchr(text, ',');
	char part[2][32];
	int i, v;

	if (!comma) {
		if (rse_parse_number(data, name, text, lo, hi, &v))
			return 1;
		out[0] = out[1] = (unsigned int) v;
		return 0;
	}
	if ((size_t) (comma - text) >= sizeof(part[0]) ||
	    strlen(comma + 1) >= sizeof(part[1]) || strchr(comma + 1, ',')) {
		rse_refuse(o, "%s=%s: expected N or READ,WRITE, each from"
			   " %lld to %lld", name, text, lo, hi);
		return 1;
	}
	snprintf(part[0], sizeof(part[0]), "%.*s", (int) (comma - text), text);
	snprintf(part[1], sizeof(part[1]), "%s", comma + 1);
	for (i = 0; i < 2; i++) {
		if (!part[i][0])
			continue;
		if (rse_parse_number(data, name, part[i], lo, hi, &v))
			return 1;
		out[i] = (unsigned int) v;
	}
	return 0;
}

#define RSE_PAIR_OPTION(field, name, lo, hi)				\
static int rse_set_##field(void *data, const char *text)		\
{									\
	struct rse_options *o = data;					\
									\
	return rse_parse_pair(data, name, text, lo, hi,			\
			      o->cmdprio_options.field);		\
}

RSE_PAIR_OPTION(percentage, "cmdprio_percentage", 0, 100)
/* Class 0 (none) is no class to give a request: 1 RT, 2 BE, 3 idle. */
RSE_PAIR_OPTION(class, "cmdprio_class", IOPRIO_MIN_PRIO_CLASS + 1,
		IOPRIO_MAX_PRIO_CLASS)
RSE_PAIR_OPTION(level, "cmdprio", IOPRIO_MIN_PRIO, IOPRIO_MAX_PRIO)
#if RSE_HAVE_CMDPRIO_HINT
RSE_PAIR_OPTION(hint, "cmdprio_hint", IOPRIO_MIN_PRIO_HINT,
		IOPRIO_MAX_PRIO_HINT)
#endif

/* One number of a cmdprio_bssplit entry, whole and in [lo, hi]. */
static int rse_bssplit_number(const char *text, size_t len, long long lo,
			      long long hi)
{
	char buf[24], *end;
	long long v;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, text, len);
	buf[len] = 0;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || *end || v < lo || v > hi)
		return -1;
	return 0;
}

/* A block size: a whole number, optionally k, m or g (powers of 1024). */
static int rse_bssplit_size(const char *text, size_t len)
{
	size_t digits = 0;

	while (digits < len && text[digits] >= '0' && text[digits] <= '9')
		digits++;
	if (!digits || digits > 12)
		return -1;
	if (digits == len)
		return 0;
	return digits + 1 == len && strchr("kKmMgG", text[digits]) ? 0 : -1;
}

/*
 * cmdprio_bssplit: fio's own parser clamps what is out of range and
 * skips what it cannot read, so check the text strictly first:
 * READS[,WRITES], each a ':'-separated list of BS/PERCENT or
 * BS/PERCENT/CLASS/LEVEL (with cmdprio_hint: also .../HINT) entries.
 * fio stores the text (off1) and fio_cmdprio_init parses it.
 */
static int rse_set_bssplit(void *data, const char *text)
{
	struct rse_options *o = data;
	const char *p = text;
	int parts = 1, entries = 0;
	const int max_fields = RSE_HAVE_CMDPRIO_HINT ? 5 : 4;
	const char *why = NULL;

	for (;;) {
		size_t len = strcspn(p, ":,");
		const char *field = p, *end = p + len;
		int n = 0;

		if (!len) {
			why = "an empty entry";
			break;
		}
		if (++entries > BSSPLIT_MAX) {
			why = "too many entries";
			break;
		}
		while (field <= end && !why) {
			size_t flen = strcspn(field, "/:,");
			static const long long lo[] = { 0, 0, IOPRIO_MIN_PRIO_CLASS + 1,
							IOPRIO_MIN_PRIO, 0 };
			long long hi[] = { 0, 100, IOPRIO_MAX_PRIO_CLASS,
					   IOPRIO_MAX_PRIO, 0 };

#if RSE_HAVE_CMDPRIO_HINT
			hi[4] = IOPRIO_MAX_PRIO_HINT;
#endif
			if (n >= max_fields)
				why = "too many fields in an entry";
			else if (n == 0 ? rse_bssplit_size(field, flen) :
				 rse_bssplit_number(field, flen, lo[n], hi[n]))
				why = n == 0 ? "a block size that is not a size" :
				      n == 1 ? "a percentage not from 0 to 100" :
				      n == 2 ? "a class not from 1 to 3" :
				      n == 3 ? "a level not from 0 to 7" :
				      "a hint out of range";
			n++;
			field += flen + 1;
		}
		if (!why && n != 2 && n != 4 && n != 5)
			why = RSE_HAVE_CMDPRIO_HINT ?
			      "an entry that is not BS/PERCENT, BS/PERCENT/CLASS/LEVEL or BS/PERCENT/CLASS/LEVEL/HINT" :
			      "an entry that is not BS/PERCENT or BS/PERCENT/CLASS/LEVEL";
		if (why)
			break;
		if (!*end)
			break;
		if (*end == ',' && ++parts > 2) {
			why = "a third (trim) part: priorities apply to reads and writes";
			break;
		}
		p = end + 1;
	}
	if (why) {
		rse_refuse(o, "cmdprio_bssplit=%s: %s", text, why);
		return 1;
	}
	return 0;
}

/*
 * The NVMe passthrough options of fio's io_uring engines. They only act
 * in io_uring_cmd (NVMe commands on a /dev/ngXnY generic char device),
 * which this engine does not implement: its requests are reads and
 * writes. A value that would change what fio's engine sends is refused;
 * the default value changes nothing and is accepted, so a job file that
 * spells out the defaults still runs.
 */
static int rse_refuse_nvme(void *data, const char *name, const char *text,
			   const char *what)
{
	rse_refuse(data, "%s=%s: %s needs NVMe passthrough (fio's"
		   " ioengine=io_uring_cmd on an NVMe generic char device);"
		   " this engine sends plain reads and writes and cannot do it",
		   name, text, what);
	return 1;
}

/* A 0/1 NVMe option: only its default is accepted. */
#define RSE_NVME_FLAG_OPTION(field, name, def, what)			\
static int rse_set_##field(void *data, int *v)				\
{									\
	char text[16];							\
									\
	if (rse_check_flag(data, name, *v, &(int){ 0 }))		\
		return 1;						\
	if (*v == (def))						\
		return 0;						\
	snprintf(text, sizeof(text), "%d", *v);				\
	return rse_refuse_nvme(data, name, text, what);			\
}

/* A numeric NVMe option (decimal or 0x hex): only its default is accepted. */
#define RSE_NVME_NUMBER_OPTION(field, name, def, what)			\
static int rse_set_##field(void *data, const char *text)		\
{									\
	char *end;							\
	unsigned long long v;						\
									\
	errno = 0;							\
	v = strtoull(text, &end, 0);					\
	if (errno || end == text || *end || text[0] == '-') {		\
		rse_refuse(data, "%s=%s: expected a number", name,	\
			   text);					\
		return 1;						\
	}								\
	if (v == (def))							\
		return 0;						\
	return rse_refuse_nvme(data, name, text, what);			\
}

/*
 * cmd_type selects the kind of uring_cmd fio's io_uring_cmd engine sends
 * ("nvme", the only one). Naming it at all asks for passthrough.
 */
static int rse_set_cmd_type(void *data, const char *text)
{
	if (strcmp(text, "nvme")) {
		rse_refuse(data, "cmd_type=%s: not a value fio knows for"
			   " cmd_type (nvme)", text);
		return 1;
	}
	return rse_refuse_nvme(data, "cmd_type", text, "a uring_cmd type");
}

#if RSE_HAVE_PI_OPTIONS
RSE_NVME_NUMBER_OPTION(md_per_io_size, "md_per_io_size", 0,
		       "a separate metadata buffer")
RSE_NVME_FLAG_OPTION(pi_act, "pi_act", 1, "the protection information action bit")
RSE_NVME_NUMBER_OPTION(apptag, "apptag", 0x1234, "an application tag")
RSE_NVME_NUMBER_OPTION(apptag_mask, "apptag_mask", 0xffff,
		       "an application tag mask")

/* No default: any check asked for is refused. */
static int rse_set_pi_chk(void *data, const char *text)
{
	return rse_refuse_nvme(data, "pi_chk", text,
			       "protection information checking");
}
#endif

#if RSE_HAVE_FUA_OPTIONS
/* A choice among names; only the first (fio's default) is accepted. */
static int rse_nvme_choice(void *data, const char *name, const char *text,
			   const char *const *names, const char *what)
{
	unsigned int i;

	for (i = 0; names[i]; i++) {
		if (strcmp(text, names[i]))
			continue;
		if (i == 0)
			return 0;
		return rse_refuse_nvme(data, name, text, what);
	}
	rse_refuse(data, "%s=%s: not a value fio knows for %s", name, text,
		   name);
	return 1;
}

RSE_NVME_FLAG_OPTION(readfua, "readfua", 0, "forced unit access")
RSE_NVME_FLAG_OPTION(writefua, "writefua", 0, "forced unit access")

static int rse_set_write_mode(void *data, const char *text)
{
	static const char *const names[] = {
		"write", "uncor", "zeroes", "verify", NULL
	};

	return rse_nvme_choice(data, "write_mode", text, names,
			       "an NVMe write command other than Write");
}

static int rse_set_verify_mode(void *data, const char *text)
{
	static const char *const names[] = { "read", "compare", NULL };

	return rse_nvme_choice(data, "verify_mode", text, names,
			       "the NVMe Compare command");
}
#endif

#if RSE_HAVE_DEAC
RSE_NVME_FLAG_OPTION(deac, "deac", 0, "the deallocate bit of Write Zeroes")
#endif

#define RSE_OPTION(opt_name, opt_type, setter, default_value, long_name,	\
		   help_text)						\
	{								\
		.name		= opt_name,				\
		.lname		= long_name,				\
		.type		= opt_type,				\
		.cb		= setter,				\
		.def		= default_value,			\
		.help		= help_text,				\
		.category	= FIO_OPT_C_ENGINE,			\
		.group		= FIO_OPT_G_IOURING,			\
	}

/*
 * An NVMe passthrough option (its setter rse_set_<field> refuses what is
 * not its default): `what` it is, and `rule`, the values it accepts.
 */
#define RSE_NVME_OPTION(field, opt_type, what, rule)			\
	RSE_OPTION(#field, opt_type, rse_set_##field, NULL,		\
		   what " (refused)", "NVMe passthrough only: " rule)

struct fio_option rse_options_table[] = {
	/* The option names of fio's io_uring engine. */
	RSE_OPTION("hipri", FIO_OPT_STR_SET, rse_set_hipri, NULL,
		"Polled completions (IOPOLL)",
		"Set up the ring with IORING_SETUP_IOPOLL: the job spins on"
		" the device for completions instead of sleeping until an"
		" interrupt (O_DIRECT on a device with poll queues)"),
	RSE_OPTION("fixedbufs", FIO_OPT_STR_SET, rse_set_fixedbufs, NULL,
		"Registered I/O buffers",
		"Register the job's I/O buffers with the ring once and send"
		" READ_FIXED/WRITE_FIXED, so pages are not pinned again for"
		" every request"),
	RSE_OPTION("registerfiles", FIO_OPT_STR_SET, rse_set_registerfiles, NULL,
		"Registered files",
		"Keep the job's open files in the ring's file table and name"
		" them by slot, saving a file lookup per request"),
	RSE_OPTION("sqthread_poll", FIO_OPT_STR_SET, rse_set_sqpoll, NULL,
		"Kernel submission thread (SQPOLL)",
		"Set up the ring with IORING_SETUP_SQPOLL: a kernel thread"
		" picks requests off the ring, so queueing I/O rarely needs a"
		" system call. Turns on registerfiles"),
	RSE_OPTION("sqthread_poll_cpu", FIO_OPT_STR_STORE, rse_set_sqpoll_cpu, NULL,
		"CPU of the submission thread",
		"Pin the sqthread_poll kernel thread to this CPU"
		" (IORING_SETUP_SQ_AFF)"),
	RSE_OPTION("nonvectored", FIO_OPT_STR_STORE, rse_set_nonvectored, "-1",
		"Single-buffer opcodes",
		"1: READ/WRITE with one buffer; 0: READV/WRITEV with a"
		" one-entry iovec; -1 (default): READ/WRITE if this kernel"
		" knows them"),
	RSE_OPTION("uncached", FIO_OPT_STR_STORE, rse_set_uncached, "0",
		"Drop pages after buffered I/O",
		"1: buffered reads and writes carry RWF_DONTCACHE, so their"
		" pages leave the page cache when the I/O is done (Linux"
		" 6.14+; no effect with direct=1)"),
	RSE_OPTION("nowait", FIO_OPT_STR_STORE, rse_set_nowait, "0",
		"Fail instead of blocking",
		"1: reads and writes carry RWF_NOWAIT; one that would have to"
		" wait fails with EAGAIN"),
	RSE_OPTION("force_async", FIO_OPT_STR_STORE, rse_set_force_async, "0",
		"Punt every Nth request",
		"N > 0: every Nth request gets IOSQE_ASYNC and goes straight"
		" to a kernel worker thread instead of being tried inline;"
		" 0 (default): none"),
	RSE_OPTION("cmdprio_percentage", FIO_OPT_STR_STORE, rse_set_percentage,
		NULL, "Share of requests with cmdprio",
		"P or READ,WRITE (0 to 100): that percentage of requests,"
		" drawn at random, carry the priority of cmdprio_class and"
		" cmdprio in the request itself (sqe->ioprio); the others keep"
		" the job's prio/prioclass. Exclusive with cmdprio_bssplit"),
	RSE_OPTION("cmdprio_class", FIO_OPT_STR_STORE, rse_set_class, NULL,
		"Class of cmdprio requests",
		"C or READ,WRITE: the I/O priority class of the requests that"
		" cmdprio_percentage or cmdprio_bssplit picks: 1 realtime,"
		" 2 best effort, 3 idle (default 1)"),
	RSE_OPTION("cmdprio", FIO_OPT_STR_STORE, rse_set_level, NULL,
		"Level of cmdprio requests",
		"L or READ,WRITE (0 highest to 7 lowest): the level within"
		" cmdprio_class of the requests that cmdprio_percentage or"
		" cmdprio_bssplit picks (default 0)"),
#if RSE_HAVE_CMDPRIO_HINT
	RSE_OPTION("cmdprio_hint", FIO_OPT_STR_STORE, rse_set_hint, NULL,
		"Hint of cmdprio requests",
		"H or READ,WRITE: the I/O priority hint (for devices with"
		" command duration limits) carried by the requests that"
		" cmdprio_percentage or cmdprio_bssplit picks (default 0,"
		" none)"),
#endif
	{
		.name		= "cmdprio_bssplit",
		.lname		= "Priority share by block size",
		.type		= FIO_OPT_STR_STORE,
		.off1		= offsetof(struct rse_options,
					   cmdprio_options.bssplit_str),
		.cb		= rse_set_bssplit,
		.help		= "Per block size, which share of requests get"
				  " which priority: BS/P[/CLASS/LEVEL[/HINT]]"
				  " entries joined by ':' (READS,WRITES to"
				  " differ), e.g. 4k/30/1/0:64k/10; without"
				  " CLASS/LEVEL, cmdprio_class and cmdprio."
				  " Exclusive with cmdprio_percentage",
		.category	= FIO_OPT_C_ENGINE,
		.group		= FIO_OPT_G_IOURING,
	},
	/* fio's NVMe passthrough options: refused unless at their default. */
	RSE_OPTION("cmd_type", FIO_OPT_STR_STORE, rse_set_cmd_type, NULL,
		"Passthrough command type (refused)",
		"Kind of uring_cmd for passthrough I/O. This engine sends"
		" reads and writes, not NVMe commands: any value stops the"
		" job (use fio's ioengine=io_uring_cmd)"),
#if RSE_HAVE_FUA_OPTIONS
	RSE_NVME_OPTION(readfua, FIO_OPT_STR_SET, "FUA on NVMe reads",
		"0 (default) is accepted, 1 stops the job"),
	RSE_NVME_OPTION(writefua, FIO_OPT_STR_SET, "FUA on NVMe writes",
		"0 (default) is accepted, 1 stops the job"),
	RSE_NVME_OPTION(write_mode, FIO_OPT_STR_STORE, "NVMe write command",
		"write (default) is accepted; uncor, zeroes or verify stop"
		" the job"),
	RSE_NVME_OPTION(verify_mode, FIO_OPT_STR_STORE, "NVMe verify command",
		"read (default) is accepted; compare stops the job"),
#endif
#if RSE_HAVE_PI_OPTIONS
	RSE_NVME_OPTION(md_per_io_size, FIO_OPT_STR_STORE, "NVMe metadata buffer",
		"0 (default) is accepted, a size stops the job"),
	RSE_NVME_OPTION(pi_act, FIO_OPT_STR_SET, "NVMe PI action",
		"1 (default) is accepted, 0 stops the job"),
	RSE_NVME_OPTION(pi_chk, FIO_OPT_STR_STORE, "NVMe PI checks",
		"any value stops the job"),
	RSE_NVME_OPTION(apptag, FIO_OPT_STR_STORE, "NVMe application tag",
		"0x1234 (default) is accepted, another value stops the job"),
	RSE_NVME_OPTION(apptag_mask, FIO_OPT_STR_STORE, "NVMe application tag mask",
		"0xffff (default) is accepted, another value stops the job"),
#endif
#if RSE_HAVE_DEAC
	RSE_NVME_OPTION(deac, FIO_OPT_STR_SET, "NVMe deallocate bit",
		"0 (default) is accepted, 1 stops the job"),
#endif
	/* rsuring's extensions. */
	RSE_OPTION("sqthread_poll_percpu", FIO_OPT_STR_STORE,
		rse_set_sqpoll_percpu, "0",
		"One submission thread per CPU",
		"1: like sqthread_poll, but the rings of all jobs whose"
		" thread would run on the same CPU (sqthread_poll_cpu, or"
		" none) share ONE kernel thread (IORING_SETUP_SQPOLL_PERCPU)."
		" The kernel shares these threads only inside one process:"
		" use thread=1"),
	RSE_OPTION("reap_batch", FIO_OPT_STR_STORE, rse_set_reap_batch, "0",
		"Completions per blocking reap",
		"N > 0: a reap that has to wait waits for N completions"
		" (fewer if fewer are in flight) and may take that many even"
		" above iodepth_batch_complete_max; 0 (default): fio's"
		" iodepth_batch_complete_min/max decide"),
	RSE_OPTION("defer_taskrun", FIO_OPT_STR_STORE, rse_set_defer_taskrun, "-1",
		"Deferred completion work",
		"1: ring with IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN, so"
		" completion work runs in one go when the job reaps; 0: a"
		" plain ring; -1 (default): 1 unless sqthread_poll, which it"
		" cannot be combined with"),
	RSE_OPTION("submit_and_wait", FIO_OPT_STR_STORE, rse_set_submit_and_wait,
		"0", "Wait in the submit call",
		"1: once every io_u is in flight, submit and wait for the next"
		" completion in one io_uring_enter (one system call per I/O"
		" instead of up to two). fio then counts the submission in clat"
		" rather than slat; lat is unchanged. 0 (default): like fio's"
		" io_uring engine"),
	RSE_OPTION("ring_stats", FIO_OPT_STR_STORE, rse_set_ring_stats, "0",
		"Print ring statistics",
		"1: when the job ends, print its ring's counters (SQEs, CQEs,"
		" io_uring_enter calls, reap batches) to stderr;"
		" RSURING_STATS=1 does the same for every job"),
	{
		.name	= NULL,
	},
};
