/*
 * supervise — run a command under an older kernel's io_uring.
 *
 *   supervise [--kernel 5.15|6.1|6.6|N.M] [--disabled 1|2]
 *             [--sqpoll-error ERRNO] [--hide-fdinfo] [--log FILE] [--tables]
 *             -- COMMAND...
 *
 * The real kernel keeps doing the work; this program makes its answers
 * those of the emulated kernel (tables: SINCE below):
 *  - io_uring_setup with a flag that kernel does not know, io_uring_enter
 *    with an unknown flag, io_uring_register with an unknown opcode (or the
 *    USE_REGISTERED_RING bit before 6.3) fail with -EINVAL without reaching
 *    the kernel;
 *  - a successful io_uring_setup reports only that kernel's params.features
 *    (and, before 6.5, zero sq_off/cq_off.user_addr, which were reserved);
 *  - IORING_REGISTER_PROBE reports only that kernel's opcodes (last_op,
 *    ops_len, and no entry past its last opcode).
 * --disabled emulates kernel.io_uring_disabled: 2 makes every io_uring_setup
 * fail with -ENOSYS, 1 with -EPERM (a process outside io_uring_group).
 * --sqpoll-error makes every SQPOLL setup fail with -ERRNO (e.g. 12: what a
 * kernel short of memory for the poller answers).
 * --hide-fdinfo makes every open of /proc/self/fdinfo/... fail with -ENOENT
 * (a kernel that shows no ring details there; slow: every openat stops).
 * --log appends one line per decision (setup, refusal, probe) to FILE.
 * --tables prints the emulated kernel's masks and exits.
 *
 * Mechanism: the command runs under a seccomp filter that lets every other
 * system call, every io_uring_enter with known flags and every known
 * register opcode but the probe through at full speed, and stops the rest
 * for this program (SECCOMP_RET_TRACE), which traces the command and all its
 * threads and children (ptrace). A refused call is skipped with the error
 * set; a setup or probe that the kernel ran is rewritten at its exit.
 * Exit status: the command's (128 + signal when it was killed), 125 when
 * the supervisor itself could not start it.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define T_NO_WATCHDOG /* it supervises; the driver times it out */
#include "../rsuring_test.h"

/* ---- the table ---------------------------------------------------------- */

/*
 * The io_uring interface by kernel version: which setup flag, feature bit,
 * io_uring_enter flag, io_uring_register opcode and SQE opcode each kernel
 * release introduced. The one table this supervisor emulates older kernels
 * from (and docs/compatibility.md quotes).
 *
 * Versions are written MAJOR * 100 + MINOR (515 = 5.15). Sources: the
 * kernel's include/uapi/linux/io_uring.h history and liburing's man pages
 * io_uring_setup(2), io_uring_enter(2), io_uring_register(2), which give
 * "available since" for each name. The values are the uapi's.
 */
enum since_kind { SETUP_FLAG, FEATURE, ENTER_FLAG, REGISTER_OP, SQE_OP };

struct since {
	enum since_kind kind;
	const char *name;
	unsigned value;	/* a bit for flags and features, the number for ops */
	unsigned since;	/* first kernel version that knows it */
};

#define B(n) (1U << (n))

static const struct since SINCE[] = {
	/* io_uring_setup(2) flags */
	{ SETUP_FLAG, "IOPOLL", B(0), 501 },
	{ SETUP_FLAG, "SQPOLL", B(1), 501 },
	{ SETUP_FLAG, "SQ_AFF", B(2), 501 },
	{ SETUP_FLAG, "CQSIZE", B(3), 505 },
	{ SETUP_FLAG, "CLAMP", B(4), 506 },
	{ SETUP_FLAG, "ATTACH_WQ", B(5), 506 },
	{ SETUP_FLAG, "R_DISABLED", B(6), 510 },
	{ SETUP_FLAG, "SUBMIT_ALL", B(7), 518 },
	{ SETUP_FLAG, "COOP_TASKRUN", B(8), 519 },
	{ SETUP_FLAG, "TASKRUN_FLAG", B(9), 519 },
	{ SETUP_FLAG, "SQE128", B(10), 519 },
	{ SETUP_FLAG, "CQE32", B(11), 519 },
	{ SETUP_FLAG, "SINGLE_ISSUER", B(12), 600 },
	{ SETUP_FLAG, "DEFER_TASKRUN", B(13), 601 },
	{ SETUP_FLAG, "NO_MMAP", B(14), 605 },
	{ SETUP_FLAG, "REGISTERED_FD_ONLY", B(15), 605 },
	{ SETUP_FLAG, "NO_SQARRAY", B(16), 606 },
	{ SETUP_FLAG, "HYBRID_IOPOLL", B(17), 613 },
	{ SETUP_FLAG, "CQE_MIXED", B(18), 618 },

	/* params.features */
	{ FEATURE, "SINGLE_MMAP", B(0), 504 },
	{ FEATURE, "NODROP", B(1), 505 },
	{ FEATURE, "SUBMIT_STABLE", B(2), 505 },
	{ FEATURE, "RW_CUR_POS", B(3), 506 },
	{ FEATURE, "CUR_PERSONALITY", B(4), 506 },
	{ FEATURE, "FAST_POLL", B(5), 507 },
	{ FEATURE, "POLL_32BITS", B(6), 509 },
	{ FEATURE, "SQPOLL_NONFIXED", B(7), 511 },
	{ FEATURE, "EXT_ARG", B(8), 511 },
	{ FEATURE, "NATIVE_WORKERS", B(9), 512 },
	{ FEATURE, "RSRC_TAGS", B(10), 513 },
	{ FEATURE, "CQE_SKIP", B(11), 517 },
	{ FEATURE, "LINKED_FILE", B(12), 517 },
	{ FEATURE, "REG_REG_RING", B(13), 603 },
	{ FEATURE, "RECVSEND_BUNDLE", B(14), 610 },
	{ FEATURE, "MIN_TIMEOUT", B(15), 612 },
	{ FEATURE, "RW_ATTR", B(16), 614 },
	{ FEATURE, "NO_IOWAIT", B(17), 615 },

	/* io_uring_enter(2) flags */
	{ ENTER_FLAG, "GETEVENTS", B(0), 501 },
	{ ENTER_FLAG, "SQ_WAKEUP", B(1), 501 },
	{ ENTER_FLAG, "SQ_WAIT", B(2), 510 },
	{ ENTER_FLAG, "EXT_ARG", B(3), 511 },
	{ ENTER_FLAG, "REGISTERED_RING", B(4), 518 },
	{ ENTER_FLAG, "ABS_TIMER", B(5), 612 },
	{ ENTER_FLAG, "EXT_ARG_REG", B(6), 613 },
	{ ENTER_FLAG, "NO_IOWAIT", B(7), 615 },

	/* io_uring_register(2) opcodes; the USE_REGISTERED_RING bit (1 << 31)
	 * of the opcode is accepted from 6.3, with REG_REG_RING. */
	{ REGISTER_OP, "REGISTER_BUFFERS", 0, 501 },
	{ REGISTER_OP, "UNREGISTER_BUFFERS", 1, 501 },
	{ REGISTER_OP, "REGISTER_FILES", 2, 501 },
	{ REGISTER_OP, "UNREGISTER_FILES", 3, 501 },
	{ REGISTER_OP, "REGISTER_EVENTFD", 4, 502 },
	{ REGISTER_OP, "UNREGISTER_EVENTFD", 5, 502 },
	{ REGISTER_OP, "REGISTER_FILES_UPDATE", 6, 505 },
	{ REGISTER_OP, "REGISTER_EVENTFD_ASYNC", 7, 506 },
	{ REGISTER_OP, "REGISTER_PROBE", 8, 506 },
	{ REGISTER_OP, "REGISTER_PERSONALITY", 9, 506 },
	{ REGISTER_OP, "UNREGISTER_PERSONALITY", 10, 506 },
	{ REGISTER_OP, "REGISTER_RESTRICTIONS", 11, 510 },
	{ REGISTER_OP, "REGISTER_ENABLE_RINGS", 12, 510 },
	{ REGISTER_OP, "REGISTER_FILES2", 13, 513 },
	{ REGISTER_OP, "REGISTER_FILES_UPDATE2", 14, 513 },
	{ REGISTER_OP, "REGISTER_BUFFERS2", 15, 513 },
	{ REGISTER_OP, "REGISTER_BUFFERS_UPDATE", 16, 513 },
	{ REGISTER_OP, "REGISTER_IOWQ_AFF", 17, 514 },
	{ REGISTER_OP, "UNREGISTER_IOWQ_AFF", 18, 514 },
	{ REGISTER_OP, "REGISTER_IOWQ_MAX_WORKERS", 19, 515 },
	{ REGISTER_OP, "REGISTER_RING_FDS", 20, 518 },
	{ REGISTER_OP, "UNREGISTER_RING_FDS", 21, 518 },
	{ REGISTER_OP, "REGISTER_PBUF_RING", 22, 519 },
	{ REGISTER_OP, "UNREGISTER_PBUF_RING", 23, 519 },
	{ REGISTER_OP, "REGISTER_SYNC_CANCEL", 24, 600 },
	{ REGISTER_OP, "REGISTER_FILE_ALLOC_RANGE", 25, 600 },
	{ REGISTER_OP, "REGISTER_PBUF_STATUS", 26, 608 },
	{ REGISTER_OP, "REGISTER_NAPI", 27, 609 },
	{ REGISTER_OP, "UNREGISTER_NAPI", 28, 609 },
	{ REGISTER_OP, "REGISTER_CLOCK", 29, 612 },
	{ REGISTER_OP, "REGISTER_CLONE_BUFFERS", 30, 612 },
	{ REGISTER_OP, "REGISTER_SEND_MSG_RING", 31, 613 },
	{ REGISTER_OP, "REGISTER_ZCRX_IFQ", 32, 615 },
	{ REGISTER_OP, "REGISTER_RESIZE_RINGS", 33, 613 },
	{ REGISTER_OP, "REGISTER_MEM_REGION", 34, 613 },

	/* SQE opcodes: the last one each kernel knows is what its
	 * IORING_REGISTER_PROBE reports as last_op. */
	{ SQE_OP, "LINKAT", 39, 515 },
	{ SQE_OP, "MSG_RING", 40, 518 },
	{ SQE_OP, "URING_CMD", 46, 519 },
	{ SQE_OP, "SEND_ZC", 47, 600 },
	{ SQE_OP, "SENDMSG_ZC", 48, 601 },
	{ SQE_OP, "FUTEX_WAITV", 53, 607 },
	{ SQE_OP, "FIXED_FD_INSTALL", 54, 608 },
	{ SQE_OP, "FTRUNCATE", 55, 609 },
	{ SQE_OP, "LISTEN", 57, 611 },
	{ SQE_OP, "WRITEV_FIXED", 61, 615 },
};

#undef B

#define REG_REG_RING_SINCE 603
#define USE_REGISTERED_RING_BIT (1U << 31)

#if !defined(__x86_64__)
#error "supervise.c handles x86_64 registers only"
#endif
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the seccomp filter reads the low 32 bits of arguments little-endian"
#endif

#define PARAMS_SIZE 120		/* struct io_uring_params */
#define P_FLAGS 8
#define P_FEATURES 20
#define P_SQ_USER_ADDR 72
#define P_CQ_USER_ADDR 112
#define SETUP_SQPOLL (1U << 1)
#define REGISTER_PROBE 8
#define PROBE_HEADER 16		/* struct io_uring_probe before ops[] */
#define PROBE_OP 8		/* struct io_uring_probe_op */
#define MAX_PROBE_OPS 256
#define SUPPORTED 1		/* IO_URING_OP_SUPPORTED */

struct emulation {
	unsigned version;
	unsigned setup_flags, features, enter_flags;
	unsigned register_ops;	/* opcodes 0 .. register_ops - 1 */
	int reg_reg_ring;
	unsigned last_op;
	int disabled;
	int sqpoll_error;
	int hide_fdinfo;
};

static struct emulation emu;
static FILE *logf;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	if (!logf)
		return;
	va_start(ap, fmt);
	vfprintf(logf, fmt, ap);
	va_end(ap);
	fputc('\n', logf);
	fflush(logf);
}

static int parse_version(const char *s, unsigned *v)
{
	unsigned major, minor;
	char tail;

	if (sscanf(s, "%u.%u%c", &major, &minor, &tail) != 2 || minor > 99)
		return -1;
	*v = major * 100 + minor;
	return 0;
}

/* The masks of version v from the table; -1 when the table cannot say. */
static int build_emulation(unsigned v)
{
	size_t i;
	unsigned known_ops = 0;
	int have_last = 0;

	/* Register opcodes stay contiguous and last_op is listed up to 6.12. */
	if (v < 515 || v > 612)
		return -1;
	memset(&emu, 0, sizeof(emu));
	emu.version = v;
	for (i = 0; i < sizeof(SINCE) / sizeof(SINCE[0]); i++) {
		const struct since *s = &SINCE[i];

		if (s->since > v)
			continue;
		switch (s->kind) {
		case SETUP_FLAG:
			emu.setup_flags |= s->value;
			break;
		case FEATURE:
			emu.features |= s->value;
			break;
		case ENTER_FLAG:
			emu.enter_flags |= s->value;
			break;
		case REGISTER_OP:
			if (s->value + 1 > emu.register_ops)
				emu.register_ops = s->value + 1;
			known_ops++;
			break;
		case SQE_OP:
			if (!have_last || s->value > emu.last_op)
				emu.last_op = s->value;
			have_last = 1;
			break;
		}
	}
	if (known_ops != emu.register_ops || !have_last)
		return -1;
	emu.reg_reg_ring = v >= REG_REG_RING_SINCE;
	return 0;
}

/* ---- the seccomp filter ---- */

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(n) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
			   offsetof(struct seccomp_data, args) + 8 * (n))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))

static int install_filter(void)
{
	struct sock_filter f[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			       offsetof(struct seccomp_data, arch)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		/* 2 */ RET(SECCOMP_RET_ALLOW),
		/* 3 */ LD_NR,
		/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 5, 0),
		/* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 5, 0),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 8, 0),
		/* 7: openat only with --hide-fdinfo */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 emu.hide_fdinfo ? __NR_openat : (unsigned)-1, 0, 1),
		RET(SECCOMP_RET_TRACE),
		RET(SECCOMP_RET_ALLOW),
		/* 10: setup */ RET(SECCOMP_RET_TRACE),
		/* 11: enter: flags are argument 3 */ LD_ARG(3),
		/* 12 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ~emu.enter_flags, 0, 1),
		/* 13 */ RET(SECCOMP_RET_TRACE),
		/* 14 */ RET(SECCOMP_RET_ALLOW),
		/* 15: register: opcode is argument 1 */ LD_ARG(1),
		/* 16 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K,
				  emu.reg_reg_ring ? ~USE_REGISTERED_RING_BIT : ~0U),
		/* 17 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, emu.register_ops, 1, 0),
		/* 18 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, REGISTER_PROBE, 0, 1),
		/* 19 */ RET(SECCOMP_RET_TRACE),
		/* 20 */ RET(SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (geteuid() != 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* ---- the tracees ---- */

enum pending { NONE, SETUP_EXIT, PROBE_EXIT };

struct tracee {
	pid_t tid;
	pid_t pid;		/* its process (thread group), 0 until needed */
	enum pending pending;
	uint64_t addr;
	unsigned nargs, flags;
};

#define MAX_TRACEES 4096
static struct tracee tracees[MAX_TRACEES];

static struct tracee *find(pid_t tid, int create)
{
	struct tracee *free_slot = NULL;
	int i;

	for (i = 0; i < MAX_TRACEES; i++) {
		if (tracees[i].tid == tid)
			return &tracees[i];
		if (!tracees[i].tid && !free_slot)
			free_slot = &tracees[i];
	}
	if (create && free_slot) {
		memset(free_slot, 0, sizeof(*free_slot));
		free_slot->tid = tid;
		return free_slot;
	}
	return NULL;
}

/* The process a thread belongs to, for the log. */
static pid_t pid_of(struct tracee *t)
{
	char path[64], line[256];
	FILE *f;

	if (t->pid)
		return t->pid;
	snprintf(path, sizeof(path), "/proc/%d/status", t->tid);
	f = fopen(path, "re");
	if (!f)
		return t->tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &t->pid) == 1)
			break;
	fclose(f);
	return t->pid ? t->pid : t->tid;
}

static int peek(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int poke(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)addr, len };

	return process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* Skips the system call the tracee is stopped in; it returns -err. */
static void refuse(pid_t tid, struct user_regs_struct *regs, int err)
{
	regs->orig_rax = (unsigned long long)-1;
	regs->rax = (unsigned long long)(long long)-err;
	if (ptrace(PTRACE_SETREGS, tid, 0, regs) < 0)
		note("tid %d: PTRACE_SETREGS: %s", tid, strerror(errno));
}

static void read_u32(const unsigned char *p, size_t off, unsigned *v)
{
	memcpy(v, p + off, sizeof(*v));
}

/* At the seccomp stop. Returns the ptrace request to resume with. */
static int on_seccomp(struct tracee *t)
{
	struct user_regs_struct regs;
	unsigned char params[PARAMS_SIZE];
	unsigned flags;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return PTRACE_CONT;
	switch (regs.orig_rax) {
	case __NR_io_uring_setup:
		if (emu.disabled) {
			int err = emu.disabled == 2 ? ENOSYS : EPERM;

			note("pid %d setup refused: io_uring_disabled=%d: -%d", pid_of(t), emu.disabled, err);
			refuse(t->tid, &regs, err);
			return PTRACE_CONT;
		}
		if (peek(t->tid, regs.rsi, params, sizeof(params)) < 0)
			return PTRACE_CONT;	/* the kernel says -EFAULT */
		read_u32(params, P_FLAGS, &flags);
		if (flags & ~emu.setup_flags) {
			note("pid %d setup refused: flags %#x unknown to %u.%u: -EINVAL",
			     pid_of(t), flags & ~emu.setup_flags, emu.version / 100,
			     emu.version % 100);
			refuse(t->tid, &regs, EINVAL);
			return PTRACE_CONT;
		}
		if (emu.sqpoll_error && (flags & SETUP_SQPOLL)) {
			note("pid %d setup refused: SQPOLL: -%d", pid_of(t), emu.sqpoll_error);
			refuse(t->tid, &regs, emu.sqpoll_error);
			return PTRACE_CONT;
		}
		t->pending = SETUP_EXIT;
		t->addr = regs.rsi;
		t->flags = flags;
		return PTRACE_SYSCALL;
	case __NR_openat: {
		static const char fdinfo[] = "/proc/self/fdinfo/";
		char path[sizeof(fdinfo)];

		if (peek(t->tid, regs.rsi, path, sizeof(path) - 1) == 0 &&
		    !memcmp(path, fdinfo, sizeof(path) - 1)) {
			note("pid %d fdinfo hidden: -ENOENT", pid_of(t));
			refuse(t->tid, &regs, ENOENT);
		}
		return PTRACE_CONT;
	}
	case __NR_io_uring_enter:
		note("pid %d enter refused: flags %#llx: -EINVAL", pid_of(t),
		     (unsigned long long)(regs.r10 & ~(unsigned long long)emu.enter_flags));
		refuse(t->tid, &regs, EINVAL);
		return PTRACE_CONT;
	case __NR_io_uring_register: {
		unsigned op = (unsigned)regs.rsi;

		if (emu.reg_reg_ring)
			op &= ~USE_REGISTERED_RING_BIT;
		if (op == REGISTER_PROBE) {
			t->pending = PROBE_EXIT;
			t->addr = regs.rdx;
			t->nargs = (unsigned)regs.r10;
			return PTRACE_SYSCALL;
		}
		note("pid %d register refused: opcode %#x: -EINVAL", pid_of(t),
		     (unsigned)regs.rsi);
		refuse(t->tid, &regs, EINVAL);
		return PTRACE_CONT;
	}
	}
	return PTRACE_CONT;
}

static void setup_exit(struct tracee *t, long ret)
{
	unsigned char params[PARAMS_SIZE];
	unsigned features;

	note("pid %d setup flags=%#x ret=%ld", pid_of(t), t->flags, ret);
	if (ret < 0 || peek(t->tid, t->addr, params, sizeof(params)) < 0)
		return;
	read_u32(params, P_FEATURES, &features);
	features &= emu.features;
	memcpy(params + P_FEATURES, &features, sizeof(features));
	if (emu.version < 605) {
		memset(params + P_SQ_USER_ADDR, 0, 8);
		memset(params + P_CQ_USER_ADDR, 0, 8);
	}
	if (poke(t->tid, t->addr, params, sizeof(params)) < 0)
		note("tid %d: cannot rewrite params: %s", t->tid, strerror(errno));
}

static void probe_exit(struct tracee *t, long ret)
{
	static unsigned char probe[PROBE_HEADER + PROBE_OP * MAX_PROBE_OPS];
	unsigned n = t->nargs > MAX_PROBE_OPS ? MAX_PROBE_OPS : t->nargs, i;
	size_t len = PROBE_HEADER + (size_t)PROBE_OP * n;

	if (ret < 0 || peek(t->tid, t->addr, probe, len) < 0)
		return;
	if (probe[0] > emu.last_op)
		probe[0] = (unsigned char)emu.last_op;
	if (probe[1] > emu.last_op + 1)
		probe[1] = (unsigned char)(emu.last_op + 1);
	for (i = emu.last_op + 1; i < n; i++)
		memset(probe + PROBE_HEADER + PROBE_OP * i, 0, PROBE_OP);
	note("pid %d probe last_op=%u ops_len=%u", pid_of(t), probe[0], probe[1]);
	if (poke(t->tid, t->addr, probe, len) < 0)
		note("tid %d: cannot rewrite the probe: %s", t->tid, strerror(errno));
}

static void on_syscall_exit(struct tracee *t)
{
	struct user_regs_struct regs;
	enum pending what = t->pending;

	t->pending = NONE;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return;
	if (what == SETUP_EXIT)
		setup_exit(t, (long)regs.rax);
	else if (what == PROBE_EXIT)
		probe_exit(t, (long)regs.rax);
}

static int supervise(pid_t child)
{
	int status, main_status = 0;
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD |
		    PTRACE_O_EXITKILL;

	if (waitpid(child, &status, 0) < 0 || !WIFSTOPPED(status)) {
		perror("supervise: the command did not stop");
		return 125;
	}
	if (ptrace(PTRACE_SETOPTIONS, child, 0, opts) < 0) {
		perror("supervise: PTRACE_SETOPTIONS");
		kill(child, SIGKILL);
		return 125;
	}
	find(child, 1);
	ptrace(PTRACE_CONT, child, 0, 0);
	for (;;) {
		pid_t tid = waitpid(-1, &status, __WALL);
		struct tracee *t;
		int sig, event, req = PTRACE_CONT;
		long inject = 0;

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;	/* ECHILD: every tracee is gone */
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t = find(tid, 0);
			if (t)
				t->tid = 0;
			if (tid == child)
				main_status = WIFEXITED(status) ? WEXITSTATUS(status)
								: 128 + WTERMSIG(status);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		event = status >> 16;
		t = find(tid, 0);
		if (!t) {
			/* A new thread or child: its first stop is the attach SIGSTOP. */
			t = find(tid, 1);
			if (sig == SIGSTOP) {
				ptrace(PTRACE_CONT, tid, 0, 0);
				continue;
			}
		}
		if (sig == SIGTRAP && event == PTRACE_EVENT_SECCOMP) {
			if (t)
				req = on_seccomp(t);
		} else if (sig == (SIGTRAP | 0x80)) {
			if (t)
				on_syscall_exit(t);
		} else if (sig == SIGTRAP && event == PTRACE_EVENT_EXEC && t) {
			/* A new program: a new process for the log's counts. */
			t->pid = 0;
			note("pid %d exec", pid_of(t));
		} else if (sig == SIGTRAP && event) {
			/* fork, vfork, clone: the child stops on its own */
		} else {
			siginfo_t si;

			/* A group stop has no siginfo: resume without a signal. */
			if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0)
				inject = sig;
		}
		ptrace(req, tid, 0, inject);
	}
	return main_status;
}

static void usage(void)
{
	fprintf(stderr, "usage: supervise [--kernel 5.15|6.1|6.6|N.M] [--disabled 1|2] "
			"[--sqpoll-error ERRNO] [--hide-fdinfo] [--log FILE] [--tables] -- COMMAND...\n");
	exit(125);
}

int main(int argc, char **argv)
{
	unsigned version = 601;
	int disabled = 0, sqpoll_error = 0, hide_fdinfo = 0, tables = 0, i;
	const char *log_path = NULL;
	pid_t child;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
			if (parse_version(argv[++i], &version) < 0)
				usage();
		} else if (!strcmp(argv[i], "--disabled") && i + 1 < argc) {
			disabled = atoi(argv[++i]);
			if (disabled != 1 && disabled != 2)
				usage();
		} else if (!strcmp(argv[i], "--sqpoll-error") && i + 1 < argc) {
			sqpoll_error = atoi(argv[++i]);
			if (sqpoll_error <= 0 || sqpoll_error > 4095)
				usage();
		} else if (!strcmp(argv[i], "--hide-fdinfo")) {
			hide_fdinfo = 1;
		} else if (!strcmp(argv[i], "--log") && i + 1 < argc) {
			log_path = argv[++i];
		} else if (!strcmp(argv[i], "--tables")) {
			tables = 1;
		} else {
			usage();
		}
	}
	if (build_emulation(version) < 0) {
		fprintf(stderr, "supervise: the table cannot describe %u.%u (5.15 .. 6.12)\n",
			version / 100, version % 100);
		return 125;
	}
	emu.disabled = disabled;
	emu.sqpoll_error = sqpoll_error;
	emu.hide_fdinfo = hide_fdinfo;
	if (tables) {
		printf("kernel=%u.%u setup_flags=%#x features=%#x enter_flags=%#x "
		       "register_ops=%u reg_reg_ring=%d last_op=%u\n",
		       version / 100, version % 100, emu.setup_flags, emu.features,
		       emu.enter_flags, emu.register_ops, emu.reg_reg_ring, emu.last_op);
		return 0;
	}
	if (i >= argc)
		usage();
	if (log_path) {
		logf = fopen(log_path, "ae");
		if (!logf) {
			perror(log_path);
			return 125;
		}
		setvbuf(logf, NULL, _IOLBF, 0);
	}
	child = fork();
	if (child < 0) {
		perror("supervise: fork");
		return 125;
	}
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 || raise(SIGSTOP) < 0) {
			perror("supervise: PTRACE_TRACEME");
			_exit(125);
		}
		if (install_filter() < 0) {
			perror("supervise: seccomp");
			_exit(125);
		}
		execvp(argv[i], argv + i);
		perror(argv[i]);
		_exit(127);
	}
	return supervise(child);
}
