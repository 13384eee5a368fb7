// SPDX-License-Identifier: GPL-2.0
/*
 * GUP-fast on order-0 folios whose ->mapping is NULL.
 *
 * Since v6.10 (commit f002882ca369), gup_fast_folio_allowed() refuses every
 * order-0 folio with a NULL ->mapping when CONFIG_SECRETMEM=y, such as the
 * alloc_page() pages drivers insert with vm_insert_page(). GUP-fast must take
 * them, except for FOLL_LONGTERM|FOLL_WRITE pins (slow path since v6.5 unless
 * the folio is anon or shmem), and must keep refusing secretmem.
 *
 * lib/test_gup_fast.c (CONFIG_TEST_GUP_FAST=m) maps such "shadow" pages
 * through <debugfs>/test_gup_fast/shadow; lib/test_gup_fast_uapi.h has its
 * ioctls. Each backing (anon, memfd, shadow, memfd_secret) is crossed with
 * each of test_cases[]:
 *   read, write     get_user_pages_fast_only() per page. For shadow "write",
 *                   a FOLL_PIN|FOLL_WRITE pin must also leave clean pages
 *                   clean (below).
 *   longterm_write  FOLL_PIN|FOLL_LONGTERM|FOLL_WRITE. The witness: the slow
 *                   path touches what it pins (FOLL_TOUCH dirties a clean
 *                   page on a write), GUP-fast does not, so a pin that
 *                   dirties clean shadow pages went through the slow path.
 * The anon control gates the rest (no anon page via GUP-fast: all skipped).
 * Pages briefly unavailable to GUP-fast (NUMA hinting, migration, reclaim) are
 * touched and asked again, up to MAX_TRIES times. "bench" times
 * pin_user_pages_fast(FOLL_WRITE), with FOLL_LONGTERM too under -L, shadow
 * against anon (-t: a bound): after a warm-up pass, shadow and anon
 * repetitions alternate, all threads in step, each thread on its own CPU.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include <lib/test_gup_fast_uapi.h>
#include "../kselftest.h"

#define SHADOW_PATH	"/sys/kernel/debug/test_gup_fast/shadow"
#define MAX_TRIES	10
#define DEF_PAGES	512
#define DEF_REPS	3
#define DEF_ITERS	10
#define MAX_REPS	1000
#define MAX_THREADS	1024
#define MAX_THREAD_COUNTS	32
#define MAX_BENCH_SAMPLES	(16UL * 1024 * 1024)
#define MAX_RATIO	1000000.0
#define DEF_MAX_CV	25
#define MAX_CV		1000

#define MSG_BUG		"GUP-fast rejects NULL-mapping order-0 folios"
#define MSG_WRONGFIX	"FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios went through GUP-fast"
#define MSG_SECRETMEM	"secretmem exposure: GUP-fast reached memfd_secret pages"

enum backing { ANON, MEMFD, SHADOW, SECRETMEM, NR_BACKINGS };
static const char * const backing_names[] = { "anon", "memfd", "shadow", "secretmem" };

struct test_case {
	const char *name;
	__u32 flags;		/* GUP_FAST_FLAG_* */
};

static const struct test_case test_cases[] = {
	{ "read", 0 },
	{ "write", GUP_FAST_FLAG_WRITE },
	{ "longterm_write", GUP_FAST_FLAG_WRITE | GUP_FAST_FLAG_LONGTERM },
};

static struct {
	unsigned long pages, reps, iters, threads[MAX_THREAD_COUNTS];
	unsigned long per_call, max_cv;
	unsigned int nr_threads;
	double max_ratio;
	bool no_bench, longterm;
} opt = { .pages = DEF_PAGES, .reps = DEF_REPS, .iters = DEF_ITERS,
	  .max_cv = DEF_MAX_CV };

static size_t pagesize;
static int gup_fd = -1;
static const char *gate_skip;	/* why GUP-fast verdicts cannot count */
static bool longterm_checked;	/* GUP-fast refuses LT|W pins of such folios */
static char witness_why[160];	/* set when the dirty-bit witness fails */
static int witness_state;	/* 0: not checked yet, 1: holds, -1: fails */

struct buf {
	char *addr;
	size_t len;
	int fd;
	enum backing kind;
};

static void buf_destroy(struct buf *b)
{
	if (b->addr && b->addr != MAP_FAILED)
		munmap(b->addr, b->len);
	if (b->fd >= 0)
		close(b->fd);
}

/* Fault page @i in: written, except shadow pages, whose PTEs stay clean. */
static void touch(struct buf *b, unsigned long i)
{
	char *p = b->addr + i * pagesize;

	if (b->kind == SHADOW)
		(void)__atomic_load_n(p, __ATOMIC_RELAXED);
	else
		*p = (char)i;
}

/*
 * secretmem pages count against RLIMIT_MEMLOCK, at mmap() or at fault
 * depending on the kernel, and a fault over the limit is SIGBUS. 512 pages
 * of 64K are 32M, four times the default limit: raise it to cover @len.
 */
static int memlock_cover(size_t len)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= len)
		return 0;
	rl.rlim_cur = len;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < len)
		rl.rlim_max = len;
	return setrlimit(RLIMIT_MEMLOCK, &rl) ? -errno : 0;
}

/* Map @nr pages of @kind and touch them; -errno, *@what names the step. */
static int buf_create(struct buf *b, enum backing kind, unsigned long nr,
		      const char **what)
{
	int flags = MAP_SHARED, err;
	unsigned long i;

	*b = (struct buf){ .len = nr * pagesize, .fd = -1, .kind = kind };
	if (kind == SECRETMEM) {
		*what = "setrlimit(RLIMIT_MEMLOCK)";
		err = memlock_cover(b->len);
		if (err)
			return err;
	}
	*what = kind == SECRETMEM ? "memfd_secret()" : "open()";
	if (kind == SHADOW)
		b->fd = open(SHADOW_PATH, O_RDWR | O_CLOEXEC);
	else if (kind == MEMFD)
		b->fd = memfd_create("gup_null_mapping", MFD_CLOEXEC);
	else if (kind == SECRETMEM)
		b->fd = syscall(__NR_memfd_secret, 0);
	else
		flags = MAP_PRIVATE | MAP_ANONYMOUS;
	if (kind != ANON && b->fd < 0)
		return -errno;
	*what = "ftruncate()";
	if ((kind == MEMFD || kind == SECRETMEM) && ftruncate(b->fd, b->len))
		goto fail;
	*what = "mmap()";
	b->addr = mmap(NULL, b->len, PROT_READ | PROT_WRITE, flags, b->fd, 0);
	if (b->addr == MAP_FAILED)
		goto fail;
	/* Order-0 anon pages, as the shadow pages are. */
	if (kind == ANON)
		madvise(b->addr, b->len, MADV_NOHUGEPAGE);
	for (i = 0; i < nr; i++)
		touch(b, i);
	return 0;
fail:
	err = -errno;
	buf_destroy(b);
	return err;
}

/*
 * How many pages of @b GUP-fast takes: a refused page is touched and asked
 * about again while fewer than @want pages were ever taken, up to MAX_TRIES
 * asks in all (*@tries). Returns the number of pages taken, or -errno.
 */
static long verdict(struct buf *b, __u32 flags, unsigned long want,
		    unsigned int *tries)
{
	unsigned long nr = b->len / pagesize, i;
	unsigned char *v = malloc(nr), *ever = calloc(nr, 1);
	struct gup_fast_verdict arg = {
		.addr = (unsigned long)b->addr, .nr_pages = nr,
		.flags = flags, .verdicts = (unsigned long)v,
	};
	long ret = -ENOMEM;

	for (*tries = 1; v && ever; ++*tries) {
		if (ioctl(gup_fd, GUP_FAST_IOCTL_VERDICT, &arg)) {
			ret = -errno;
			break;
		}
		for (i = 0, ret = 0; i < nr; i++)
			ret += ever[i] |= v[i];
		if (ret >= (long)want || *tries == MAX_TRIES)
			break;
		for (i = 0; i < nr; i++)
			if (!ever[i])
				touch(b, i);
		usleep(1000);
	}
	free(ever);
	free(v);
	return ret;
}

/* Pin all of @b with @flags; the number of pages it dirtied, or -errno. */
static long pin(struct buf *b, __u32 flags)
{
	struct gup_fast_pin arg = {
		.addr = (unsigned long)b->addr,
		.nr_pages = b->len / pagesize,
		.flags = flags,
	};

	return ioctl(gup_fd, GUP_FAST_IOCTL_PIN, &arg) ? -errno : (long)arg.nr_dirty;
}

/*
 * Pin fresh, clean shadow buffers with @flags until @want pages stayed clean
 * (went through GUP-fast), at most MAX_TRIES times; the last count, or -errno.
 */
static long witness(__u32 flags, long want, unsigned int *tries)
{
	const char *what;
	struct buf b;
	long ret;

	for (*tries = 1;; ++*tries) {
		ret = buf_create(&b, SHADOW, opt.pages, &what);
		if (!ret) {
			ret = pin(&b, flags);
			buf_destroy(&b);
		}
		if (ret >= 0)
			ret = opt.pages - ret;
		if (ret < 0 || ret == want || *tries == MAX_TRIES)
			return ret;
	}
}

/* Does a slow-path write pin dirty every clean shadow page, a read none? */
static bool witness_holds(void)
{
	unsigned int tries;
	long w, r;

	if (!witness_state) {
		w = witness(GUP_FAST_FLAG_WRITE | GUP_FAST_FLAG_SLOW_PATH, 0, &tries);
		r = witness(GUP_FAST_FLAG_SLOW_PATH, opt.pages, &tries);
		witness_state = !w && r == (long)opt.pages ? 1 : -1;
		snprintf(witness_why, sizeof(witness_why),
			 "dirty-bit witness does not hold here: slow-path pins left %ld (write) and %ld (read) of %lu clean shadow pages clean",
			 w, r, opt.pages);
	}
	if (witness_state < 0)
		ksft_print_msg("%s\n", witness_why);
	return witness_state > 0;
}

/* Print the verdict line; the reason of a failure (NULL: none). */
static const char *judge(enum backing kind, const char *access, long fast,
			 unsigned long want, unsigned int tries)
{
	const char *why = NULL;

	ksft_print_msg("verdict %s %s: %ld/%lu pages via GUP-fast (expected %lu, %u %s)\n",
		       backing_names[kind], access, fast, opt.pages, want,
		       tries, tries == 1 ? "try" : "tries");
	if (fast == (long)want)
		return NULL;
	if (kind == SECRETMEM)
		why = MSG_SECRETMEM;
	else if (kind != SHADOW)
		why = "control refused by GUP-fast";
	else if (strcmp(access, "longterm_write"))
		why = MSG_BUG;
	else
		why = longterm_checked ? MSG_WRONGFIX :
		      "FOLL_LONGTERM|FOLL_WRITE pin went to the slow path before 6.5";
	ksft_print_msg("FAIL: %s: %ld/%lu %s pages via GUP-fast (%s)\n", why,
		       fast, opt.pages, backing_names[kind], access);
	return why;
}

static int run_longterm(struct buf *b, const struct test_case *tc)
{
	unsigned long want = longterm_checked ? 0 : opt.pages;
	unsigned int tries;
	long ret;

	if (b->kind != SHADOW) {
		/* No witness: the pin must work, and fail on secretmem. */
		ret = pin(b, tc->flags);
		ksft_print_msg("pin %s %s: %s\n", backing_names[b->kind],
			       tc->name, ret < 0 ? strerror(-ret) : "pinned");
		if (ret < 0 ? b->kind == SECRETMEM : b->kind != SECRETMEM)
			return KSFT_PASS;
		if (b->kind == SECRETMEM)
			ksft_print_msg("FAIL: %s: a long-term pin succeeded\n",
				       MSG_SECRETMEM);
		return KSFT_FAIL;
	}
	if (!witness_holds())
		return KSFT_SKIP;
	ret = witness(tc->flags, want, &tries);
	if (ret < 0)
		ksft_print_msg("GUP_FAST_IOCTL_PIN: %s\n", strerror(-ret));
	return ret < 0 || judge(SHADOW, tc->name, ret, want, tries) ?
	       KSFT_FAIL : KSFT_PASS;
}

static int run_verdict(struct buf *b, const struct test_case *tc)
{
	unsigned long want = b->kind == SECRETMEM ? 0 : opt.pages;
	unsigned int tries;
	long fast;

	fast = verdict(b, tc->flags, want, &tries);
	if (fast < 0)
		ksft_print_msg("GUP_FAST_IOCTL_VERDICT: %s\n", strerror(-fast));
	if (fast < 0 || judge(b->kind, tc->name, fast, want, tries))
		return KSFT_FAIL;
	if (b->kind != SHADOW || !(tc->flags & GUP_FAST_FLAG_WRITE) ||
	    !witness_holds())
		return KSFT_PASS;
	/* A plain FOLL_PIN|FOLL_WRITE pin must go fast too: pages stay clean. */
	fast = witness(tc->flags, opt.pages, &tries);
	return fast < 0 || judge(SHADOW, "pin_write", fast, opt.pages, tries) ?
	       KSFT_FAIL : KSFT_PASS;
}

static void run_case(enum backing kind, const struct test_case *tc)
{
	int result = KSFT_FAIL;
	const char *what;
	char name[64];
	struct buf b;
	int ret;

	snprintf(name, sizeof(name), "verdict_%s_%s", backing_names[kind],
		 tc->name);
	ksft_print_msg("[RUN] %s\n", name);
	if (gate_skip && (kind != ANON || !strncmp(gate_skip, "GUP-fast", 8))) {
		ksft_test_result_code(KSFT_SKIP, name, "%s", gate_skip);
		return;
	}
	ret = buf_create(&b, kind, opt.pages, &what);
	/* No secretmem on this kernel, or not enough RLIMIT_MEMLOCK for it. */
	if (ret && kind == SECRETMEM && (!strcmp(what, "memfd_secret()") ||
					 !strncmp(what, "setrlimit", 9))) {
		ksft_test_result_code(KSFT_SKIP, name, "%s: %s", what,
				      strerror(-ret));
		return;
	}
	if (ret)
		ksft_print_msg("%s failed: %s\n", what, strerror(-ret));
	else if (tc->flags & GUP_FAST_FLAG_LONGTERM)
		result = run_longterm(&b, tc);
	else
		result = run_verdict(&b, tc);
	if (!ret)
		buf_destroy(&b);
	ksft_test_result_code(result, name, result == KSFT_SKIP ? "%s" : NULL,
			      witness_why);
}

/* The anon control: does GUP-fast work on this kernel at all? */
static void check_gate(void)
{
	static char reason[200];
	unsigned int tries;
	const char *what;
	struct buf b;
	long fast;

	if (buf_create(&b, ANON, opt.pages, &what))
		ksft_exit_fail_msg("anon control: %s failed\n", what);
	fast = verdict(&b, GUP_FAST_FLAG_WRITE, opt.pages, &tries);
	buf_destroy(&b);
	if (fast == (long)opt.pages)
		return;
	if (fast <= 0)
		snprintf(reason, sizeof(reason),
			 "GUP-fast unavailable on this kernel: it took %ld/%lu anon pages (no CONFIG_HAVE_GUP_FAST, or no pte_special)",
			 fast, opt.pages);
	else
		snprintf(reason, sizeof(reason),
			 "anon control: only %ld/%lu pages via GUP-fast after every try: no verdict can count",
			 fast, opt.pages);
	ksft_print_msg("%s\n", reason);
	gate_skip = reason;
}

static pthread_barrier_t bench_barrier;
static double *bench_ns;	/* [thread][shadow, anon][reps * iters] ns/page */
static int bench_cpus[CPU_SETSIZE], nr_bench_cpus;

/* One GUP_FAST_IOCTL_BENCH call over @b; ns/page of each pass into @ns. */
static long bench_pass(struct buf *b, unsigned long iters,
		       struct gup_fast_bench_sample *s, double *ns)
{
	struct gup_fast_bench arg = {
		.addr = (unsigned long)b->addr,
		.nr_pages = opt.pages,
		.pages_per_call = opt.per_call,
		.iterations = iters,
		.flags = GUP_FAST_FLAG_WRITE |
			 (opt.longterm ? GUP_FAST_FLAG_LONGTERM : 0),
		.samples = (unsigned long)s,
	};
	unsigned long k;

	if (ioctl(gup_fd, GUP_FAST_IOCTL_BENCH, &arg))
		return -errno;
	for (k = 0; ns && k < iters; k++)
		ns[k] = (double)s[k].pin_ns / opt.pages;
	return 0;
}

static void *bench_thread_fn(void *arg)
{
	unsigned long t = (unsigned long)arg, n = opt.reps * opt.iters, r;
	struct gup_fast_bench_sample *s = calloc(opt.iters, sizeof(*s));
	struct buf b[2] = { { .fd = -1 }, { .fd = -1 } };
	long err = s ? 0 : -ENOMEM;
	const char *what;
	cpu_set_t cpu;
	int i;

	CPU_ZERO(&cpu);
	CPU_SET(bench_cpus[t % nr_bench_cpus], &cpu);
	if (!err)
		err = -pthread_setaffinity_np(pthread_self(), sizeof(cpu), &cpu);
	for (i = 0; i < 2 && !err; i++)
		err = buf_create(&b[i], i ? ANON : SHADOW, opt.pages, &what);
	/* Warm-up: one untimed pass per buffer. */
	for (i = 0; i < 2 && !err; i++)
		err = bench_pass(&b[i], 1, s, NULL);
	/*
	 * A shadow repetition, then an anon one, all threads in step: drift
	 * over the run hits both alike. A thread that failed keeps meeting
	 * the barrier so that the others are not left waiting.
	 */
	for (r = 0; r < opt.reps; r++) {
		for (i = 0; i < 2; i++) {
			pthread_barrier_wait(&bench_barrier);
			if (!err)
				err = bench_pass(&b[i], opt.iters, s,
						 &bench_ns[(t * 2 + i) * n + r * opt.iters]);
		}
	}
	buf_destroy(&b[0]);
	buf_destroy(&b[1]);
	free(s);
	return (void *)err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench_cell {
	double min, median, p90, max, cv;	/* cv: stddev / mean, in % */
};

/* Sort @v (@n > 0 values) and describe it. */
static void bench_describe(double *v, size_t n, struct bench_cell *c)
{
	double mean = 0, var = 0;
	size_t j;

	qsort(v, n, sizeof(*v), cmp_double);
	for (j = 0; j < n; j++)
		mean += v[j] / n;
	for (j = 0; n > 1 && j < n; j++)
		var += (v[j] - mean) * (v[j] - mean) / (n - 1);
	c->min = v[0];
	c->max = v[n - 1];
	c->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	c->p90 = v[(9 * n + 9) / 10 - 1];	/* nearest rank */
	c->cv = mean > 0 ? 100 * sqrt(var) / mean : 0;
}

/* Run with @nr threads, print one row per backing; false on error. */
static bool bench_one(unsigned long nr, double *ratio)
{
	size_t n = opt.reps * opt.iters, t, j, all = nr * n;
	double *v = calloc(all, sizeof(double));
	pthread_t *th = calloc(nr, sizeof(*th));
	struct bench_cell c[2];
	bool ok = v && th;
	void *err;
	int i;

	bench_ns = calloc(2 * all, sizeof(double));
	if (!ok || !bench_ns || pthread_barrier_init(&bench_barrier, NULL, nr))
		ksft_exit_fail_msg("bench: out of memory\n");
	for (t = 0; t < nr; t++)
		if (pthread_create(&th[t], NULL, bench_thread_fn, (void *)t))
			ksft_exit_fail_msg("bench: pthread_create() failed\n");
	for (t = 0; t < nr; t++) {
		pthread_join(th[t], &err);
		if (err) {
			ksft_print_msg("bench: threads=%lu: %s\n", nr,
				       strerror(-(long)err));
			ok = false;
		}
	}
	for (i = 0; ok && i < 2; i++) {
		for (t = 0; t < nr; t++)
			for (j = 0; j < n; j++)
				v[t * n + j] = bench_ns[(t * 2 + i) * n + j];
		bench_describe(v, all, &c[i]);
		ksft_print_msg("bench %7lu  %7s %8.1f %8.1f %8.1f %8.1f %5.1f%%%s\n",
			       nr, backing_names[i ? ANON : SHADOW], c[i].min,
			       c[i].median, c[i].p90, c[i].max, c[i].cv,
			       c[i].cv > opt.max_cv ? " noisy" : "");
	}
	pthread_barrier_destroy(&bench_barrier);
	free(bench_ns);
	free(th);
	free(v);
	*ratio = ok && c[1].median > 0 ? c[0].median / c[1].median : 0;
	return ok;
}

/* The CPUs this process may run on: the workers are pinned to them. */
static void bench_find_cpus(void)
{
	cpu_set_t set;
	int cpu;

	nr_bench_cpus = 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		ksft_exit_fail_msg("sched_getaffinity(): %s\n", strerror(errno));
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			bench_cpus[nr_bench_cpus++] = cpu;
	if (!nr_bench_cpus)
		ksft_exit_fail_msg("sched_getaffinity(): no CPU\n");
}

static void run_bench(void)
{
	bool ok = true;
	unsigned int t;
	double ratio;

	if (opt.no_bench || gate_skip) {
		ksft_test_result_code(KSFT_SKIP, "bench", "%s",
				      gate_skip ? gate_skip : "disabled with -B");
		return;
	}
	bench_find_cpus();
	ksft_print_msg("bench: pin_user_pages_fast(%s), %lu pages/thread, %lu pages/call\n",
		       opt.longterm ? "FOLL_LONGTERM|FOLL_WRITE" : "FOLL_WRITE",
		       opt.pages, opt.per_call);
	ksft_print_msg("bench: %lu reps x %lu iters after 1 warm-up pass; shadow, anon alternate\n",
		       opt.reps, opt.iters);
	ksft_print_msg("bench: %d usable CPUs, thread t pinned to the (t %% %d)-th\n",
		       nr_bench_cpus, nr_bench_cpus);
	ksft_print_msg("bench: ns/page; cv: stddev/mean of a cell's samples, noisy above %lu%%\n",
		       opt.max_cv);
	ksft_print_msg("bench %7s  %7s %8s %8s %8s %8s %6s\n", "threads",
		       "backing", "min", "median", "p90", "max", "cv");
	for (t = 0; t < opt.nr_threads; t++) {
		if (!bench_one(opt.threads[t], &ratio)) {
			ok = false;
			continue;
		}
		ksft_print_msg("bench ratio threads=%lu shadow/anon=%.2f\n",
			       opt.threads[t], ratio);
		if (opt.max_ratio > 0 && ratio > opt.max_ratio) {
			ksft_print_msg("bench: threads=%lu: shadow/anon %.2f > %.2f (-t)\n",
				       opt.threads[t], ratio, opt.max_ratio);
			ok = false;
		}
	}
	ksft_test_result(ok, "bench\n");
}

static void __noreturn print_help(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: gup_null_mapping [-p PAGES] [-r REPS] [-i ITERS] [-c PER_CALL] [-L]\n"
		"                        [-t MAX_RATIO] [-V MAX_CV] [-B] [THREADS...]\n"
		"  -p PAGES      pages per buffer, 1..%u (default %d)\n"
		"  -r, -i        benchmark repetitions (1..%d, default %d) of ITERS timed\n"
		"                passes (1..%u, default %d) per thread and backing\n"
		"  -c PER_CALL   pages per pin_user_pages_fast() call in the benchmark,\n"
		"                1..%u, capped at PAGES (default: PAGES, at most %u)\n"
		"  -L            benchmark FOLL_LONGTERM|FOLL_WRITE pins (shadow pages take\n"
		"                the slow path then, even with the fix)\n"
		"  -t MAX_RATIO  fail when shadow/anon median ns/page > MAX_RATIO (..%.0f)\n"
		"  -V MAX_CV     call a cell noisy when stddev/mean of its samples is above\n"
		"                MAX_CV %% (1..%d, default %d)\n"
		"  -B            skip the benchmark\n"
		"  THREADS       benchmark thread counts, 1..%d each (default: 1 2 4 ...\n"
		"                below the CPU count, then the CPU count); thread t is\n"
		"                pinned to the (t %% CPUs)-th usable CPU\n",
		GUP_FAST_MAX_PAGES, DEF_PAGES, MAX_REPS, DEF_REPS,
		GUP_FAST_MAX_ITERATIONS, DEF_ITERS, GUP_FAST_MAX_PAGES_PER_CALL,
		GUP_FAST_MAX_PAGES_PER_CALL, MAX_RATIO, MAX_CV, DEF_MAX_CV,
		MAX_THREADS);
	exit(status);
}

static unsigned long parse_ulong(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!isdigit((unsigned char)*s) || errno || *end || !v || v > max) {
		fprintf(stderr, "gup_null_mapping: '%s': expected 1..%lu\n", s, max);
		print_help(KSFT_FAIL);
	}
	return v;
}

static void parse_args(int argc, char **argv)
{
	long t, ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	char *end;
	int c;

	while ((c = getopt(argc, argv, "p:r:i:c:t:V:LBh")) != -1) {
		if (c == 'p') {
			opt.pages = parse_ulong(optarg, GUP_FAST_MAX_PAGES);
		} else if (c == 'r') {
			opt.reps = parse_ulong(optarg, MAX_REPS);
		} else if (c == 'i') {
			opt.iters = parse_ulong(optarg, GUP_FAST_MAX_ITERATIONS);
		} else if (c == 'c') {
			opt.per_call = parse_ulong(optarg, GUP_FAST_MAX_PAGES_PER_CALL);
		} else if (c == 'V') {
			opt.max_cv = parse_ulong(optarg, MAX_CV);
		} else if (c == 'L') {
			opt.longterm = true;
		} else if (c == 't') {
			opt.max_ratio = strtod(optarg, &end);
			if (*end || !(opt.max_ratio > 0 && opt.max_ratio <= MAX_RATIO))
				print_help(KSFT_FAIL);
		} else if (c == 'B') {
			opt.no_bench = true;
		} else {
			print_help(c == 'h' ? KSFT_PASS : KSFT_FAIL);
		}
	}
	for (; optind < argc; optind++) {
		if (opt.nr_threads == MAX_THREAD_COUNTS)
			print_help(KSFT_FAIL);
		opt.threads[opt.nr_threads++] = parse_ulong(argv[optind], MAX_THREADS);
	}
	/* No call passes more than PAGES: the output says what was used. */
	if (!opt.per_call || opt.per_call > opt.pages)
		opt.per_call = opt.pages < GUP_FAST_MAX_PAGES_PER_CALL ?
			       opt.pages : GUP_FAST_MAX_PAGES_PER_CALL;
	ncpus = ncpus < 1 ? 1 : ncpus > MAX_THREADS ? MAX_THREADS : ncpus;
	if (!opt.nr_threads) {
		for (t = 1; t < ncpus; t *= 2)
			opt.threads[opt.nr_threads++] = t;
		opt.threads[opt.nr_threads++] = ncpus;
	}
	for (c = 0; c < (int)opt.nr_threads; c++)
		if (opt.reps * opt.iters > MAX_BENCH_SAMPLES / opt.threads[c])
			print_help(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	unsigned int major = 0, minor = 0, i;
	enum backing kind;
	struct utsname uts;

	parse_args(argc, argv);
	pagesize = sysconf(_SC_PAGESIZE);
	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("must be run as root\n");
	gup_fd = open(SHADOW_PATH, O_RDWR | O_CLOEXEC);
	if (gup_fd < 0)
		ksft_exit_skip("%s: %s: load test_gup_fast, mount debugfs\n",
			       SHADOW_PATH, strerror(errno));
	/* GUP-fast refuses long-term writable pins of such folios since 6.5. */
	if (uname(&uts) || sscanf(uts.release, "%u.%u", &major, &minor) != 2)
		ksft_exit_fail_msg("cannot read the kernel version\n");
	longterm_checked = major > 6 || (major == 6 && minor >= 5);
	ksft_print_msg("kernel %s, page size %zu, %lu pages per buffer\n",
		       uts.release, pagesize, opt.pages);
	ksft_print_msg("FOLL_LONGTERM|FOLL_WRITE pins of shadow pages: %s\n",
		       longterm_checked ? "slow path expected (kernel 6.5 or later)" :
		       "GUP-fast expected (kernel before 6.5)");

	ksft_set_plan(NR_BACKINGS * ARRAY_SIZE(test_cases) + 1);
	check_gate();
	for (kind = 0; kind < NR_BACKINGS; kind++)
		for (i = 0; i < ARRAY_SIZE(test_cases); i++)
			run_case(kind, &test_cases[i]);
	run_bench();
	close(gup_fd);
	if (!ksft_get_pass_cnt() && !ksft_get_fail_cnt()) {
		ksft_print_cnts();
		exit(KSFT_SKIP);
	}
	ksft_finished();
}
