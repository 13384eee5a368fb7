// SPDX-License-Identifier: GPL-2.0
/*
 * gup_fast_bench: the cost of pin_user_pages_fast() on order-0 folios whose
 * ->mapping is NULL, against anonymous pages. A project-only program, in
 * no patch series: the selftest (gup_null_mapping) gives verdicts only.
 *
 * Each thread maps its own "shadow" buffer (MAP_SHARED of the gup_test
 * debugfs file: alloc_page() pages inserted with vm_insert_pages()) and
 * its own anonymous buffer (PR_SET_THP_DISABLE and MADV_NOHUGEPAGE:
 * order-0 too, and checked: a cell whose buffers hold a THP or compound
 * page, or whose order cannot be read from /proc/kpageflags, gets no
 * shadow/anon ratio, only a "bench control" line saying why), and times
 * gup_test's PIN_FAST_BENCHMARK over each: pin_user_pages_fast() over the
 * buffer, PER_CALL pages a call, then unpin_user_pages(). After one
 * untimed warm-up pass per buffer, shadow and anon repetitions alternate,
 * all threads in step (a barrier before each), so that drift over the run
 * hits both alike; thread t is pinned to the (t % N)-th of the N CPUs it
 * may use. Each cell (threads x backing) is described by min, median, p90
 * and max of its samples in ns/page and by their CV, flagged noisy above
 * -V; "bench ratio" is the shadow/anon ratio of the medians, bounded by -t.
 *
 * The time is gup_test's get_delta_usec: ktime_get() around the pin loop
 * alone, in whole microseconds (truncated). Timing the ioctl from user
 * space would be finer but would add the syscall, the kvcalloc() of the
 * page array, verify_dma_pinned() and the unpin, the same for both
 * backings: that dilutes the shadow/anon ratio, the figure that matters.
 * One microsecond is 1000/PAGES ns/page of one sample (1.95 at 512
 * pages): under TCG here a pass of 512 pages took 70 (anon, 7.3) to 260
 * us (shadow, 6.12), 0.4 to 1.5 %; on hardware (about 30 ns/page) use a
 * larger -p to keep it small.
 *
 * FOLL_LONGTERM (-L) is not part of gup_test's ABI: its raw value is the
 * running kernel's (0x10000 from 5.2 to 6.2, 1 << 8 since 6.3, see
 * include/linux/mm_types.h); -L is refused on a kernel not covered.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>

#include <mm/gup_test.h>
#include "../kselftest.h"

#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"
#define FOLL_WRITE	0x01	/* include/linux/mm_types.h */
#define DEF_PAGES	512
#define DEF_REPS	3
#define DEF_ITERS	10
#define MAX_PAGES	65536	/* 256 MiB of 4K pages a buffer, as the old driver */
#define MAX_PAGES_PER_CALL	4096
#define MAX_ITERS	65536
#define MAX_REPS	1000
#define MAX_THREADS	1024
#define MAX_THREAD_COUNTS	32
#define MAX_BENCH_SAMPLES	(16UL * 1024 * 1024)
#define MAX_RATIO	1000000.0
#define DEF_MAX_CV	25
/* include/uapi/linux/kernel-page-flags.h: not order-0 */
#define KPF_LARGE	((1ULL << 15) | (1ULL << 16) | (1ULL << 22))
#define MAX_CV		1000

enum backing { SHADOW, ANON, NR_BACKINGS };
static const char * const backing_names[] = { "shadow", "anon" };

static struct {
	unsigned long pages, reps, iters, threads[MAX_THREAD_COUNTS];
	unsigned long per_call, max_cv;
	unsigned int nr_threads;
	double max_ratio;
	bool no_bench, longterm;
} opt = { .pages = DEF_PAGES, .reps = DEF_REPS, .iters = DEF_ITERS,
	  .max_cv = DEF_MAX_CV };

static size_t pagesize;
static unsigned int gup_flags = FOLL_WRITE;
static pthread_barrier_t barrier;
static double *samples;		/* [thread][backing][reps * iters] ns/page */
static int cpus[CPU_SETSIZE], nr_cpus;
/* Of the current cell: pages not order-0 per backing, -1 if not known. */
static long nr_large[NR_BACKINGS];

struct buf {
	char *addr;
	int fd;			/* the thread's gup_test file: ioctls go here */
};

/* The raw FOLL_LONGTERM of the running kernel; 0 when not known. */
static unsigned int foll_longterm(const char *release)
{
	unsigned int major, minor;

	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		return 0;
	if (major > 6 || (major == 6 && minor >= 3))
		return 1 << 8;
	if (major == 6 || (major == 5 && minor >= 2))
		return 0x10000;
	return 0;
}

static int buf_create(struct buf *b, int fd, enum backing kind)
{
	size_t len = opt.pages * pagesize, i;
	int flags = kind == SHADOW ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;

	b->fd = fd;
	b->addr = mmap(NULL, len, PROT_READ | PROT_WRITE, flags,
		       kind == SHADOW ? fd : -1, 0);
	if (b->addr == MAP_FAILED)
		return -errno;
	if (kind == ANON)	/* order-0, as the shadow pages are */
		madvise(b->addr, len, MADV_NOHUGEPAGE);
	/* Fault every page in: shadow pages are only read, as elsewhere. */
	for (i = 0; i < opt.pages; i++) {
		if (kind == SHADOW)
			(void)__atomic_load_n(b->addr + i * pagesize, __ATOMIC_RELAXED);
		else
			b->addr[i * pagesize] = (char)i;
	}
	return 0;
}

/* Pages of @b that are not order-0 (kpageflags); -1 if that cannot be read. */
static long large_pages(struct buf *b)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kpf = open("/proc/kpageflags", O_RDONLY);
	unsigned long long ent, fl;
	long n = pm < 0 || kpf < 0 ? -1 : 0;
	size_t i, vpn = (uintptr_t)b->addr / pagesize;

	for (i = 0; n >= 0 && i < opt.pages; i++) {
		if (pread(pm, &ent, 8, (vpn + i) * 8) != 8 || !(ent >> 63) ||
		    pread(kpf, &fl, 8, (ent & ((1ULL << 55) - 1)) * 8) != 8)
			n = -1;
		else
			n += !!(fl & KPF_LARGE);
	}
	if (pm >= 0)
		close(pm);
	if (kpf >= 0)
		close(kpf);
	return n;
}

/* @iters timed passes over @b; ns/page of each into @ns (NULL: untimed). */
static long bench_pass(struct buf *b, unsigned long iters, double *ns)
{
	struct gup_test gup;
	unsigned long k;

	for (k = 0; k < iters; k++) {
		gup = (struct gup_test){
			.addr = (unsigned long)b->addr,
			.size = opt.pages * pagesize,
			.nr_pages_per_call = opt.per_call,
			.gup_flags = gup_flags,
		};
		if (ioctl(b->fd, PIN_FAST_BENCHMARK, &gup))
			return -errno;
		if (gup.size != opt.pages * pagesize)	/* a short pin */
			return -EFAULT;
		if (ns)
			ns[k] = gup.get_delta_usec * 1000.0 / opt.pages;
	}
	return 0;
}

static void *bench_thread_fn(void *arg)
{
	unsigned long t = (unsigned long)arg, n = opt.reps * opt.iters, r;
	struct buf b[NR_BACKINGS] = { { MAP_FAILED, -1 }, { MAP_FAILED, -1 } };
	long err = 0;
	cpu_set_t cpu;
	int fd, i;

	CPU_ZERO(&cpu);
	CPU_SET(cpus[t % nr_cpus], &cpu);
	err = -pthread_setaffinity_np(pthread_self(), sizeof(cpu), &cpu);
	/* Its own file: threads do not share a struct file's refcount. */
	fd = open(GUP_TEST_FILE, O_RDWR);
	if (!err && fd < 0)
		err = -errno;
	for (i = 0; i < NR_BACKINGS && !err; i++)
		err = buf_create(&b[i], fd, i);
	for (i = 0; i < NR_BACKINGS && !err; i++) {
		long n = large_pages(&b[i]);

		if (n < 0 || __atomic_load_n(&nr_large[i], __ATOMIC_RELAXED) < 0)
			__atomic_store_n(&nr_large[i], -1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&nr_large[i], n, __ATOMIC_RELAXED);
		err = bench_pass(&b[i], 1, NULL);
	}
	/*
	 * A shadow repetition, then an anon one, all threads in step. A thread
	 * that failed keeps meeting the barrier: the others must not wait.
	 */
	for (r = 0; r < opt.reps; r++) {
		for (i = 0; i < NR_BACKINGS; i++) {
			pthread_barrier_wait(&barrier);
			if (!err)
				err = bench_pass(&b[i], opt.iters,
						 &samples[(t * 2 + i) * n + r * opt.iters]);
		}
	}
	for (i = 0; i < NR_BACKINGS; i++)
		if (b[i].addr != MAP_FAILED)
			munmap(b[i].addr, opt.pages * pagesize);
	if (fd >= 0)
		close(fd);
	return (void *)err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct cell {
	double min, median, p90, max, cv;	/* cv: stddev / mean, in % */
};

/* Sort @v (@n > 0 values) and describe it. */
static void describe(double *v, size_t n, struct cell *c)
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
	struct cell c[NR_BACKINGS];
	bool ok = true;
	void *err;
	int i;

	nr_large[SHADOW] = nr_large[ANON] = 0;
	samples = calloc(NR_BACKINGS * all, sizeof(double));
	if (!v || !th || !samples || pthread_barrier_init(&barrier, NULL, nr))
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
	for (i = 0; ok && i < NR_BACKINGS; i++) {
		for (t = 0; t < nr; t++)
			for (j = 0; j < n; j++)
				v[t * n + j] = samples[(t * 2 + i) * n + j];
		describe(v, all, &c[i]);
		ksft_print_msg("bench %7lu  %7s %8.1f %8.1f %8.1f %8.1f %5.1f%%%s\n",
			       nr, backing_names[i], c[i].min, c[i].median,
			       c[i].p90, c[i].max, c[i].cv,
			       c[i].cv > opt.max_cv ? " noisy" : "");
	}
	pthread_barrier_destroy(&barrier);
	free(samples);
	free(th);
	free(v);
	*ratio = ok && c[ANON].median > 0 ? c[SHADOW].median / c[ANON].median : 0;
	return ok;
}

/* The CPUs this process may run on: the workers are pinned to them. */
static void find_cpus(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		ksft_exit_fail_msg("sched_getaffinity(): %s\n", strerror(errno));
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[nr_cpus++] = cpu;
	if (!nr_cpus)
		ksft_exit_fail_msg("sched_getaffinity(): no CPU\n");
}

static bool run_bench(void)
{
	double ratio;
	unsigned int t;
	bool ok = true;

	find_cpus();
	ksft_print_msg("bench: pin_user_pages_fast(%s), %lu pages/thread, %lu pages/call\n",
		       opt.longterm ? "FOLL_LONGTERM|FOLL_WRITE" : "FOLL_WRITE",
		       opt.pages, opt.per_call);
	ksft_print_msg("bench: %lu reps x %lu iters after 1 warm-up pass; shadow, anon alternate\n",
		       opt.reps, opt.iters);
	ksft_print_msg("bench: %d usable CPUs, thread t pinned to the (t %% %d)-th\n",
		       nr_cpus, nr_cpus);
	ksft_print_msg("bench: timed by gup_test PIN_FAST_BENCHMARK get_delta_usec: 1 us resolution, %.2f ns/page per sample\n",
		       1000.0 / opt.pages);
	ksft_print_msg("bench: ns/page; cv: stddev/mean of a cell's samples, noisy above %lu%%\n",
		       opt.max_cv);
	ksft_print_msg("bench %7s  %7s %8s %8s %8s %8s %6s\n", "threads",
		       "backing", "min", "median", "p90", "max", "cv");
	for (t = 0; t < opt.nr_threads; t++) {
		if (!bench_one(opt.threads[t], &ratio)) {
			ok = false;
			continue;
		}
		/* A control of another order says nothing about order-0 folios. */
		if (nr_large[SHADOW] || nr_large[ANON]) {
			ksft_print_msg("bench control threads=%lu: not order-0: shadow %ld, anon %ld of %lu pages%s: no shadow/anon ratio\n",
				       opt.threads[t], nr_large[SHADOW], nr_large[ANON],
				       opt.threads[t] * opt.pages,
				       nr_large[SHADOW] < 0 || nr_large[ANON] < 0 ?
				       " (-1: /proc/kpageflags unreadable)" : "");
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
	return ok;
}

static void __noreturn print_help(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: gup_fast_bench [-p PAGES] [-r REPS] [-i ITERS] [-c PER_CALL] [-L]\n"
		"                      [-t MAX_RATIO] [-V MAX_CV] [-B] [THREADS...]\n"
		"  -p PAGES      pages per buffer, 1..%d (default %d)\n"
		"  -r, -i        repetitions (1..%d, default %d) of ITERS timed passes\n"
		"                (1..%d, default %d) per thread and backing\n"
		"  -c PER_CALL   pages per pin_user_pages_fast() call, 1..%d, capped at\n"
		"                PAGES (default: PAGES, at most %d)\n"
		"  -L            FOLL_LONGTERM|FOLL_WRITE pins (shadow pages take the\n"
		"                slow path then, even with the fix)\n"
		"  -t MAX_RATIO  fail when shadow/anon median ns/page > MAX_RATIO (..%.0f)\n"
		"  -V MAX_CV     call a cell noisy when stddev/mean of its samples is above\n"
		"                MAX_CV %% (1..%d, default %d)\n"
		"  -B            skip the benchmark\n"
		"  THREADS       thread counts, 1..%d each (default: 1 2 4 ... below the\n"
		"                CPU count, then the CPU count); thread t is pinned to\n"
		"                the (t %% CPUs)-th usable CPU\n",
		MAX_PAGES, DEF_PAGES, MAX_REPS, DEF_REPS, MAX_ITERS, DEF_ITERS,
		MAX_PAGES_PER_CALL, MAX_PAGES_PER_CALL, MAX_RATIO, MAX_CV,
		DEF_MAX_CV, MAX_THREADS);
	exit(status);
}

static unsigned long parse_ulong(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!isdigit((unsigned char)*s) || errno || *end || !v || v > max) {
		fprintf(stderr, "gup_fast_bench: '%s': expected 1..%lu\n", s, max);
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
			opt.pages = parse_ulong(optarg, MAX_PAGES);
		} else if (c == 'r') {
			opt.reps = parse_ulong(optarg, MAX_REPS);
		} else if (c == 'i') {
			opt.iters = parse_ulong(optarg, MAX_ITERS);
		} else if (c == 'c') {
			opt.per_call = parse_ulong(optarg, MAX_PAGES_PER_CALL);
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
		opt.per_call = opt.pages < MAX_PAGES_PER_CALL ?
			       opt.pages : MAX_PAGES_PER_CALL;
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
	struct utsname uts;
	unsigned int lt;
	int fd;

	parse_args(argc, argv);
	pagesize = getpagesize();
	/* Order-0 anonymous pages, with or without madvise(): checked per cell. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	ksft_print_header();
	if (opt.no_bench)
		ksft_exit_skip("disabled with -B\n");
	if (geteuid())
		ksft_exit_skip("needs root: gup_test\n");
	fd = open(GUP_TEST_FILE, O_RDWR);
	if (fd < 0)
		ksft_exit_skip("%s: %s (CONFIG_GUP_TEST; modprobe gup_test)\n",
			       GUP_TEST_FILE, strerror(errno));
	close(fd);
	if (uname(&uts))
		ksft_exit_fail_msg("uname(): %s\n", strerror(errno));
	if (opt.longterm) {
		lt = foll_longterm(uts.release);
		if (!lt)
			ksft_exit_skip("-L: FOLL_LONGTERM's value on kernel %s is not known here\n",
				       uts.release);
		gup_flags |= lt;
	}
	ksft_print_msg("kernel %s, page size %zu, gup_flags 0x%x\n",
		       uts.release, pagesize, gup_flags);
	ksft_set_plan(1);
	ksft_test_result(run_bench(), "bench\n");
	ksft_finished();
}
