/* SPDX-License-Identifier: MIT */
/*
 * Threads and teardown: a ring set up on one thread, used on another and
 * exited on a third is torn down for real once nothing holds it. The probe
 * is a pipe whose write end is a registered file of the ring: when the
 * ring is freed, and the program has closed its own write end, the reader
 * sees end of file. An SQPOLL ring exited on a thread that did not set it
 * up loses its SQ thread. And rings churned by many threads at once.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <pthread.h>
#include <semaphore.h>

/* A thread running @fn(@arg), or die. */
static pthread_t start_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg))
		die("pthread_create");
	return t;
}

/* sem_wait, again when a signal interrupts it. */
static void sem_wait_intr(sem_t *sem)
{
	while (sem_wait(sem) && errno == EINTR)
		;
}

/* The byte 'x' a thread wrote to the pipe's write end is at @rfd. */
static void check_x_arrived(int rfd)
{
	char c;

	if (read(rfd, &c, 1) != 1 || c != 'x')
		say("main: the write did not arrive");
}

/* ---- set up on A, used on B, exited on main -------------------------- */

enum b_mode {
	B_STAYS,	  /* B stays alive while main exits the ring */
	B_REGISTERS_EXITS, /* B registers the ring fd itself, then ends */
	B_REGISTERS_STAYS, /* B registers the ring fd itself, stays alive */
};

struct tcase {
	struct io_uring ring;
	unsigned setup_flags;
	int pipe[2];
	enum b_mode mode;
	sem_t b_done, release;
	char line_a[160], line_b[320];
};

static void *thread_a(void *arg)
{
	struct tcase *T = arg;
	struct io_uring_params p;
	int ret, rf = 0;

	memset(&p, 0, sizeof(p));
	p.flags = T->setup_flags;
	ret = io_uring_queue_init_params(8, &T->ring, &p);
	if (ret == 0)
		rf = io_uring_register_files(&T->ring, &T->pipe[1], 1);
	snprintf(T->line_a, sizeof(T->line_a),
		 "A: init=%s register_files=%s", rstr(ret, 0), rstr(rf, 1));
	return NULL;
}

/* A write of "x" through registered file 0 and its CQE. */
static const char *fixed_write(struct io_uring *ring, __u64 ud)
{
	static __thread char buf[200];
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		die("io_uring_get_sqe returned NULL");
	io_uring_prep_write(sqe, 0, "x", 1, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, ud);
	ret = io_uring_submit(ring);
	snprintf(buf, sizeof(buf), "write submit=%s %s", rstr(ret, 0),
		 cqe_str(ring, 1000));
	return buf;
}

static void *thread_b(void *arg)
{
	struct tcase *T = arg;
	int reg = 0;

	if (T->mode != B_STAYS)
		reg = io_uring_register_ring_fd(&T->ring);
	snprintf(T->line_b, sizeof(T->line_b), "B: %s%s%s",
		 T->mode != B_STAYS ? "register_ring_fd=" : "",
		 T->mode != B_STAYS ? rstr(reg, 2) : "",
		 T->mode != B_STAYS ? ", " : "");
	strncat(T->line_b, fixed_write(&T->ring, 0x10),
		sizeof(T->line_b) - strlen(T->line_b) - 1);
	sem_post(&T->b_done);
	if (T->mode != B_REGISTERS_EXITS)
		sem_wait_intr(&T->release);
	return NULL;
}

static void a_b_main(enum b_mode mode, const char *what)
{
	struct tcase T;
	pthread_t a, b;

	STEP(what);
	say("-- %s", what);
	memset(&T, 0, sizeof(T));
	T.mode = mode;
	make_pipe(T.pipe);
	sem_init(&T.b_done, 0, 0);
	sem_init(&T.release, 0, 0);
	a = start_thread(thread_a, &T);
	pthread_join(a, NULL);
	say("%s", T.line_a);
	b = start_thread(thread_b, &T);
	sem_wait_intr(&T.b_done);
	say("%s", T.line_b);
	check_x_arrived(T.pipe[0]);
	if (mode == B_REGISTERS_EXITS)
		pthread_join(b, NULL);
	io_uring_queue_exit(&T.ring);
	close(T.pipe[1]);
	if (mode == B_REGISTERS_STAYS) {
		/* B's own registration holds the ring, as the kernel says. */
		say("main: after exit and close, B alive: %s",
		    eof_within(T.pipe[0], 500));
		sem_post(&T.release);
		pthread_join(b, NULL);
		say("main: after B ended: %s", eof_within(T.pipe[0], 2000));
	} else {
		say("main: after exit and close: %s",
		    eof_within(T.pipe[0], 2000));
		if (mode == B_STAYS) {
			sem_post(&T.release);
			pthread_join(b, NULL);
		}
	}
	close(T.pipe[0]);
	sem_destroy(&T.b_done);
	sem_destroy(&T.release);
}

/* ---- SINGLE_ISSUER | R_DISABLED | DEFER_TASKRUN, enabled by a worker ---- */

struct dcase {
	struct io_uring *ring;
	sem_t done, release;
	char line[320];
};

static void *worker(void *arg)
{
	struct dcase *D = arg;
	long en = sys_register(D->ring->ring_fd, IORING_REGISTER_ENABLE_RINGS,
			       NULL, 0);

	snprintf(D->line, sizeof(D->line), "worker: enable=%s %s",
		 rstr(en, 0), fixed_write(D->ring, 0x20));
	sem_post(&D->done);
	sem_wait_intr(&D->release);
	return NULL;
}

static void defer_taskrun_worker(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct dcase D;
	pthread_t w;
	int pfd[2];

	STEP("defer_taskrun");
	say("-- SINGLE_ISSUER|R_DISABLED|DEFER_TASKRUN set up on main, enabled and used by a worker, exited by main");
	init_params_or_die(&ring, &p,
			   IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_R_DISABLED |
			   IORING_SETUP_DEFER_TASKRUN);
	make_pipe(pfd);
	say("main: register_files=%s",
	    rstr(io_uring_register_files(&ring, &pfd[1], 1), 0));
	memset(&D, 0, sizeof(D));
	D.ring = &ring;
	sem_init(&D.done, 0, 0);
	sem_init(&D.release, 0, 0);
	w = start_thread(worker, &D);
	sem_wait_intr(&D.done);
	say("%s", D.line);
	io_uring_queue_exit(&ring);
	close(pfd[1]);
	say("main: after exit and close, worker alive: %s",
	    eof_within(pfd[0], 2000));
	sem_post(&D.release);
	pthread_join(w, NULL);
	close(pfd[0]);
	sem_destroy(&D.done);
	sem_destroy(&D.release);
}

void sec_threads(void)
{
	a_b_main(B_STAYS, "set up on thread A (ended), used on B (alive), exited on main");
	a_b_main(B_REGISTERS_EXITS,
		 "set up on A, B registers the ring fd, uses it and ends, main exits");
	a_b_main(B_REGISTERS_STAYS,
		 "set up on A, B registers the ring fd, uses it and stays, main exits");
	defer_taskrun_worker();
}

/* ---- an SQPOLL ring exited on a thread that did not set it up ---------- */

struct scase {
	struct io_uring ring;
	int pipe[2];
	sem_t ready, release, exit_now, exited;
	char line[320];
	int exit_on_thread;
};

static void *sq_creator(void *arg)
{
	struct scase *S = arg;
	struct io_uring_params p;
	int ret, rf = 0;
	char w[200] = "";

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 50;
	ret = io_uring_queue_init_params(8, &S->ring, &p);
	if (ret == 0) {
		rf = io_uring_register_files(&S->ring, &S->pipe[1], 1);
		snprintf(w, sizeof(w), "%s", fixed_write(&S->ring, 0x30));
	}
	snprintf(S->line, sizeof(S->line),
		 "creator: init=%s register_files=%s %s", rstr(ret, 0),
		 rstr(rf, 1), w);
	sem_post(&S->ready);
	sem_wait_intr(&S->release);
	return NULL;
}

static void *sq_exiter(void *arg)
{
	struct scase *S = arg;

	sem_wait_intr(&S->exit_now);
	io_uring_queue_exit(&S->ring);
	sem_post(&S->exited);
	return NULL;
}

static void sqpoll_case(int exit_on_thread)
{
	struct scase S;
	pthread_t c, x;
	int n, waited;

	STEP("sqpoll exit");
	say("-- SQPOLL ring set up on thread C (alive), exited on %s",
	    exit_on_thread ? "thread X" : "main");
	memset(&S, 0, sizeof(S));
	make_pipe(S.pipe);
	sem_init(&S.ready, 0, 0);
	sem_init(&S.release, 0, 0);
	sem_init(&S.exit_now, 0, 0);
	sem_init(&S.exited, 0, 0);
	c = start_thread(sq_creator, &S);
	sem_wait_intr(&S.ready);
	say("%s", S.line);
	check_x_arrived(S.pipe[0]);
	say("main: SQ threads before exit: %d", sq_threads());
	if (exit_on_thread) {
		x = start_thread(sq_exiter, &S);
		sem_post(&S.exit_now);
		sem_wait_intr(&S.exited);
		pthread_join(x, NULL);
	} else {
		io_uring_queue_exit(&S.ring);
	}
	close(S.pipe[1]);
	say("main: after exit and close: %s", eof_within(S.pipe[0], 2000));
	for (waited = 0; (n = sq_threads()) > 0 && waited < 200; waited++)
		usleep(10000);
	if (n == 0)
		say("main: SQ threads after exit: 0");
	else
		say("main: SQ threads after exit: %d after 2 s", n);
	sem_post(&S.release);
	pthread_join(c, NULL);
	close(S.pipe[0]);
}

void sec_sqpoll_exit(void)
{
	sqpoll_case(0);
	sqpoll_case(1);
}

/* ---- churn ------------------------------------------------------------- */

#define CHURN_THREADS 1000
#define CHURN_ROUNDS 5

static pthread_mutex_t churn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t churn_start;
static int churn_inits, churn_nops, churn_regs;
static char churn_first_failure[200];

static void churn_fail(const char *fmt, long long ret, int round)
{
	pthread_mutex_lock(&churn_lock);
	if (!churn_first_failure[0])
		snprintf(churn_first_failure, sizeof(churn_first_failure),
			 "%s = %s (round %d)", fmt, rstr(ret, 0), round);
	pthread_mutex_unlock(&churn_lock);
}

static void *churner(void *arg)
{
	int round, inits = 0, nops = 0, regs = 0;

	(void)arg;
	pthread_barrier_wait(&churn_start);
	for (round = 0; round < CHURN_ROUNDS; round++) {
		struct io_uring ring;
		__u64 ud = 0;
		int res = 0, ret;

		ret = io_uring_queue_init(4, &ring, 0);
		if (ret < 0) {
			churn_fail("io_uring_queue_init", ret, round);
			continue;
		}
		inits++;
		if (round & 1) {
			ret = io_uring_register_ring_fd(&ring);
			if (ret == 1)
				regs++;
		}
		queue_nop(&ring, (__u64)round + 1, 0);
		ret = io_uring_submit(&ring);
		if (ret != 1)
			churn_fail("io_uring_submit", ret, round);
		ret = wait_one_within(&ring, 5000, &ud, &res);
		if (ret == 0 && ud == (__u64)round + 1 && res == 0)
			nops++;
		else
			churn_fail("the NOP's wait", ret ? ret : res, round);
		io_uring_queue_exit(&ring);
	}
	pthread_mutex_lock(&churn_lock);
	churn_inits += inits;
	churn_nops += nops;
	churn_regs += regs;
	pthread_mutex_unlock(&churn_lock);
	return NULL;
}

void sec_churn(void)
{
	pthread_t t[CHURN_THREADS];
	pthread_attr_t attr;
	int i;

	STEP("churn");
	say("-- %d threads, each sets up, uses and exits %d rings at once",
	    CHURN_THREADS, CHURN_ROUNDS);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_barrier_init(&churn_start, NULL, CHURN_THREADS);
	for (i = 0; i < CHURN_THREADS; i++)
		if (pthread_create(&t[i], &attr, churner, NULL))
			die("pthread_create %d", i);
	for (i = 0; i < CHURN_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&churn_start);
	pthread_attr_destroy(&attr);
	crit("churn: %d rings set up, %d NOPs completed", churn_inits,
	     churn_nops);
	say("churn: io_uring_register_ring_fd returned 1 %d times", churn_regs);
	crit("churn: first failure: %s",
	     churn_first_failure[0] ? churn_first_failure : "none");
	say("churn: SQ threads left: %d", sq_threads());
}
