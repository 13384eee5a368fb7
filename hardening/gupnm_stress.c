// SPDX-License-Identifier: GPL-2.0
/*
 * gupnm_stress: the project's own hardening of gup_test's shadow mapping and
 * GUP_FAST_VERDICT (mm/gup_test.c as the upstream series leaves it), kept
 * outside the series:
 *   abi_<name>   malformed requests fail with their errno; edge cases (holes,
 *                read-only mappings, kernel addresses) get the right verdict;
 *                fresh shadow pages are zeroed order-0 driver pages, shared
 *                with a forked child, and pinnable past their munmap();
 *   race_<name>  munmap(), mprotect(), fork(), close() and SIGKILL racing
 *                with GUP_FAST_VERDICT, PIN_FAST_BENCHMARK, long-term pins
 *                (PIN_LONGTERM_TEST_START) and mmap() itself;
 *   leak_<name>  128 MiB of anon or shadow memory through every command,
 *                then unmapped: a leaked page reference keeps free memory
 *                from coming back.
 * Outside, the runner compares free memory before modprobe and after rmmod
 * and, on debug kernels, counts pages left allocated (page_owner=on).
 *
 * Usage: gupnm_stress [-p PAGES] [-R ITERS]; as root, with gup_test loaded
 * and debugfs mounted. TAP output, exit 0/1/4.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <mm/gup_test.h>
#include "kselftest.h"

#define GUP_TEST_FILE		"/sys/kernel/debug/gup_test"
#define FOLL_WRITE		0x01	/* include/linux/mm_types.h */
#define FOLL_LONGTERM		0x100
#define LT_FLAGS		(PIN_LONGTERM_TEST_FLAG_USE_FAST | \
				 PIN_LONGTERM_TEST_FLAG_USE_WRITE)

#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL
#define RACE_TIMEOUT_NS		(5 * NSEC_PER_SEC)
#define KILL_DELAY_NS		NSEC_PER_MSEC
#define KILL_FAULT_ITERS	20	/* at most: each child faults LEAK_BYTES */
#define MAX_PAGES		65536
#define MAX_ITERS		100000

/* abi_* buffers: ABI_PAGES pages, a verdict mask has a bit per page. */
#define ABI_PAGES		8
#define HOLE_MASK		0xf3	/* pages 2 and 3 of abi.hole unmapped */
#define ALL_MASK		0xff

/* 128M in any page size: 32768 pages of 4K, 2048 of 64K. */
#define LEAK_BYTES		(128UL << 20)
#define LEAK_WAIT_NS		(2 * NSEC_PER_SEC)

/* The top of the address space, where no user mapping can live. */
#define KERNEL_ADDR		(0 - 16 * (__u64)pagesize)
/* Above any 64-bit user address space (57 bits on x86-64, 52 on arm64). */
#define BEYOND_TASK_SIZE	0x1000000000000000ULL

/*
 * /proc/kpageflags bits no driver page has (kernel-page-flags.h): LRU 5,
 * ANON 12, SWAPBACKED 14, COMPOUND_HEAD 15, COMPOUND_TAIL 16, THP 22.
 */
#define KPF_NOT_DRIVER		0x41d020ULL
#define PFN_MASK		((1ULL << 55) - 1)

#define load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* A case's run() returns an errno, 0, or CASE_FAIL (reason printed). */
#define CASE_FAIL		(-1)

static unsigned long opt_pages = 512, opt_iters = 20;
static size_t pagesize;
static int gup_fd = -1;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_ns(unsigned long long ns)
{
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int gup_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/* GUP_FAST_VERDICT over @nr pages; 0 or errno, *@nr_fast pages taken. */
static int verdict(const void *addr, unsigned long nr, __u32 flags,
		   __u64 *nr_fast)
{
	struct gup_fast_verdict v = {
		.addr = (uintptr_t)addr, .size = nr * pagesize,
		.flags = flags,
	};
	int err = gup_ioctl(gup_fd, GUP_FAST_VERDICT, &v);

	*nr_fast = v.nr_fast;
	return err;
}

/* PIN_FAST_BENCHMARK(FOLL_WRITE): pin and unpin; *@nr_done pages covered. */
static int pin_fast(const void *addr, unsigned long nr, __u64 *nr_done)
{
	struct gup_test g = {
		.addr = (uintptr_t)addr, .size = nr * pagesize,
		.nr_pages_per_call = 64, .gup_flags = FOLL_WRITE,
	};
	int err = gup_ioctl(gup_fd, PIN_FAST_BENCHMARK, &g);

	*nr_done = g.size / pagesize;
	return err;
}

/* A long-term write pin on @fd's file, held until STOP or its release. */
static int longterm_start(int fd, const void *addr, unsigned long nr)
{
	struct pin_longterm_test lt = {
		.addr = (uintptr_t)addr, .size = nr * pagesize,
		.flags = LT_FLAGS,
	};

	return gup_ioctl(fd, PIN_LONGTERM_TEST_START, &lt);
}

/* mmap() the gup_test file, closed again: the mapping holds it. */
static int shadow_mmap(char **addr, size_t len, int flags, off_t off)
{
	int fd = open(GUP_TEST_FILE, O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	*addr = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);
	if (*addr == MAP_FAILED)
		err = errno;
	close(fd);
	return err;
}

/* @nr pages of shadow or anon memory, page i's first byte set to i + 1. */
static char *buf_map(bool shadow, unsigned long nr)
{
	size_t i, len = nr * pagesize;
	char *addr;

	if (!shadow) {
		addr = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		/* order-0, as the shadow pages are */
		if (addr != MAP_FAILED)
			madvise(addr, len, MADV_NOHUGEPAGE);
	} else if (shadow_mmap(&addr, len, MAP_SHARED, 0)) {
		addr = MAP_FAILED;
	}
	if (addr == MAP_FAILED) {
		ksft_print_msg("mmap() of %lu %s pages: %s\n", nr,
			       shadow ? "shadow" : "anon", strerror(errno));
		return NULL;
	}
	for (i = 0; i < nr; i++)
		addr[i * pagesize] = (char)(i + 1);
	return addr;
}

/* Free memory in kB: MemFree plus the per-CPU lists' freed pages. */
static long free_kb(void)
{
	long kb = -1, pages = 0, n;
	char line[128];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemFree: %ld kB", &kb) == 1)
			break;
	fclose(f);
	f = fopen("/proc/zoneinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, " count: %ld", &n) == 1)
				pages += n;
		fclose(f);
	}
	return kb < 0 ? kb : kb + pages * (long)(pagesize / 1024);
}

/*
 * Free memory back to at least @before minus half of LEAK_BYTES within
 * LEAK_WAIT_NS: other activity moves it by far less than a leak does.
 */
static bool memory_back(const char *name, long before)
{
	unsigned long long deadline = now_ns() + LEAK_WAIT_NS;
	long want = before - (long)(LEAK_BYTES / 2048), after;

	while ((after = free_kb()) < want && now_ns() < deadline)
		sleep_ns(20 * NSEC_PER_MSEC);
	ksft_print_msg("%s: free memory %ld kB before, %ld kB after\n", name,
		       before, after);
	if (before >= 0 && after >= want)
		return true;
	ksft_print_msg("%s: %ld kB not freed: page references leaked\n", name,
		       before - after);
	return false;
}

static bool wait_child(const char *name, pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			ksft_print_msg("%s: waitpid(): %s\n", name,
				       strerror(errno));
			return false;
		}
	}
	return true;
}

/* ---------------------------------------------------------------------- */
/* abi_<name> */

static struct {
	char *shadow;		/* ABI_PAGES shadow pages */
	char *hole;		/* ABI_PAGES anon pages, a hole: HOLE_MASK */
	char *ro;		/* ABI_PAGES anon pages, read-only */
	char *ro_page;		/* a read-only page */
	char *straddle;		/* ABI_PAGES / 2 bytes before an unmapped page */
	unsigned char vec[ABI_PAGES];
} abi;

static bool abi_setup(void)
{
	char *two;

	abi.shadow = buf_map(true, ABI_PAGES);
	abi.hole = buf_map(false, ABI_PAGES);
	abi.ro = buf_map(false, ABI_PAGES);
	abi.ro_page = buf_map(false, 1);
	two = buf_map(false, 2);
	if (!abi.shadow || !abi.hole || !abi.ro || !abi.ro_page || !two ||
	    munmap(abi.hole + 2 * pagesize, 2 * pagesize) ||
	    mprotect(abi.ro, ABI_PAGES * pagesize, PROT_READ) ||
	    mprotect(abi.ro_page, pagesize, PROT_READ) ||
	    munmap(two + pagesize, pagesize))
		return false;
	abi.straddle = two + pagesize - ABI_PAGES / 2;
	return true;
}

/* Mutations of a valid request: a write verdict on abi.shadow, into abi.vec. */
static void v_unaligned_addr(struct gup_fast_verdict *v) { v->addr += 1; }
static void v_unaligned_size(struct gup_fast_verdict *v) { v->size += 1; }
static void v_wrap(struct gup_fast_verdict *v) { v->addr = -(__u64)pagesize; }
static void v_foll_longterm(struct gup_fast_verdict *v) { v->flags |= FOLL_LONGTERM; }
static void v_longterm_no_pin(struct gup_fast_verdict *v)
{
	v->flags |= GUP_FAST_VERDICT_FLAG_LONGTERM;
}
static void v_unknown_flag(struct gup_fast_verdict *v) { v->flags |= 1U << 31; }
static void v_reserved(struct gup_fast_verdict *v) { v->reserved = 1; }
static void v_bad_vec(struct gup_fast_verdict *v) { v->verdicts = 8; }
static void v_ro_vec(struct gup_fast_verdict *v) { v->verdicts = (uintptr_t)abi.ro_page; }
static void v_straddle(struct gup_fast_verdict *v) { v->verdicts = (uintptr_t)abi.straddle; }
static void v_kernel(struct gup_fast_verdict *v) { v->addr = KERNEL_ADDR; }
static void v_beyond(struct gup_fast_verdict *v) { v->addr = BEYOND_TASK_SIZE; }
static void v_hole(struct gup_fast_verdict *v) { v->addr = (uintptr_t)abi.hole; }
static void v_ro_write(struct gup_fast_verdict *v) { v->addr = (uintptr_t)abi.ro; }

static void v_zero_size(struct gup_fast_verdict *v)
{
	v->size = 0;
}

static void v_ro_read(struct gup_fast_verdict *v)
{
	v->addr = (uintptr_t)abi.ro;
	v->flags = 0;
}

/* The dispatcher matches whole commands: VERDICT's number, 24 bytes. */
static int run_wrong_size_cmd(void)
{
	char arg[24] = "";

	return gup_ioctl(gup_fd, _IOWR('g', _IOC_NR(GUP_FAST_VERDICT), char[24]), arg);
}

static int run_bad_arg(void)
{
	return gup_ioctl(gup_fd, GUP_FAST_VERDICT, (void *)8);
}

static int mmap_errno(int flags, off_t off)
{
	char *addr;
	int err = shadow_mmap(&addr, ABI_PAGES * pagesize, flags, off);

	if (!err)
		munmap(addr, ABI_PAGES * pagesize);
	return err;
}

static int run_mmap_private(void) { return mmap_errno(MAP_PRIVATE, 0); }
static int run_mmap_offset(void) { return mmap_errno(MAP_SHARED, pagesize); }

static int run_mremap_grow(void)
{
	size_t len = ABI_PAGES * pagesize;
	char *addr = buf_map(true, ABI_PAGES), *grown;
	int err = 0;

	if (!addr)
		return CASE_FAIL;
	grown = mremap(addr, len, len + pagesize, MREMAP_MAYMOVE);
	if (grown == MAP_FAILED)
		err = errno;
	else
		addr = grown, len += pagesize;
	munmap(addr, len);
	return err;
}

static int pread_u64(const char *path, off_t index, __u64 *val)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, val, sizeof(*val), index * sizeof(*val));
	close(fd);
	return n == sizeof(*val) ? 0 : -1;
}

/* Fresh shadow pages: zeroed, order-0, not anon/LRU/shmem, mapped once. */
static int run_mmap_pages(void)
{
	__u64 ent, flags, count;
	char *addr = NULL;
	int i, ret = 0;
	size_t off;

	ret = shadow_mmap(&addr, ABI_PAGES * pagesize, MAP_SHARED, 0);
	if (ret)
		return ret;
	for (i = 0; i < ABI_PAGES && !ret; i++) {
		for (off = 0; off < pagesize; off++)
			if (addr[i * pagesize + off])
				break;
		if (pread_u64("/proc/self/pagemap",
			      (uintptr_t)addr / pagesize + i, &ent) ||
		    !(ent >> 63) ||
		    pread_u64("/proc/kpageflags", ent & PFN_MASK,
			      &flags) ||
		    pread_u64("/proc/kpagecount", ent & PFN_MASK,
			      &count)) {
			ksft_print_msg("page %d: no PFN (pagemap 0x%llx): %s\n",
				       i, (unsigned long long)ent,
				       strerror(errno));
			ret = CASE_FAIL;
		} else if (off < pagesize || flags & KPF_NOT_DRIVER ||
			   count != 1) {
			ksft_print_msg("page %d: %s, kpageflags 0x%llx (bad 0x%llx), mapped %llu\n",
				       i, off < pagesize ? "not zeroed" : "zeroed",
				       (unsigned long long)flags,
				       (unsigned long long)(flags & KPF_NOT_DRIVER),
				       (unsigned long long)count);
			ret = CASE_FAIL;
		}
	}
	munmap(addr, ABI_PAGES * pagesize);
	return ret;
}

/* A forked child shares the pages: it sees ours, we see its write. */
static int run_fork_shares(void)
{
	char *addr = buf_map(true, ABI_PAGES);
	int i, status = 0, ret = CASE_FAIL;
	__u64 nr_fast;
	pid_t pid;

	if (!addr)
		return CASE_FAIL;
	fflush(NULL);
	pid = fork();
	if (!pid) {
		for (i = 0; i < ABI_PAGES; i++)
			if (addr[i * pagesize] != (char)(i + 1))
				_exit(1);
		addr[1] = 0x55;
		_exit(verdict(addr, ABI_PAGES, GUP_FAST_VERDICT_FLAG_WRITE, &nr_fast) ||
		      nr_fast > ABI_PAGES ? 2 : 0);
	}
	if (pid > 0 && wait_child("abi_fork_shares", pid, &status)) {
		if (status || addr[1] != 0x55)
			ksft_print_msg("child status 0x%x, its write %sseen\n",
				       status, addr[1] == 0x55 ? "" : "not ");
		else
			ret = 0;
	}
	munmap(addr, ABI_PAGES * pagesize);
	return ret;
}

static int run_pin_fast_write_ro(void)
{
	char *addr = buf_map(true, ABI_PAGES);
	__u64 nr_done = 0;
	int err;

	if (!addr)
		return CASE_FAIL;
	mprotect(addr, ABI_PAGES * pagesize, PROT_READ);
	err = pin_fast(addr, ABI_PAGES, &nr_done);
	munmap(addr, ABI_PAGES * pagesize);
	if (!err && nr_done) {
		ksft_print_msg("%llu read-only pages pinned for write\n",
			       (unsigned long long)nr_done);
		return CASE_FAIL;
	}
	return err;
}

static int run_longterm_write_ro(void)
{
	char *addr = buf_map(true, ABI_PAGES);
	int err;

	if (!addr)
		return CASE_FAIL;
	mprotect(addr, ABI_PAGES * pagesize, PROT_READ);
	err = longterm_start(gup_fd, addr, ABI_PAGES);
	ioctl(gup_fd, PIN_LONGTERM_TEST_STOP);
	munmap(addr, ABI_PAGES * pagesize);
	return err;
}

/* A long-term pin keeps the pages, with their data, after munmap(). */
static int run_longterm_outlives_munmap(void)
{
	char *addr = buf_map(true, ABI_PAGES), *copy = malloc(ABI_PAGES * pagesize);
	__u64 dst = (uintptr_t)copy;
	int i, err = CASE_FAIL;

	if (addr && copy) {
		err = longterm_start(gup_fd, addr, ABI_PAGES);
		munmap(addr, ABI_PAGES * pagesize);
		if (!err)
			err = gup_ioctl(gup_fd, PIN_LONGTERM_TEST_READ, &dst);
		ioctl(gup_fd, PIN_LONGTERM_TEST_STOP);
		for (i = 0; !err && i < ABI_PAGES; i++) {
			if (copy[i * pagesize] != (char)(i + 1)) {
				ksft_print_msg("page %d reads %d, wrote %d\n",
					       i, copy[i * pagesize], i + 1);
				err = CASE_FAIL;
			}
		}
	}
	free(copy);
	return err;
}

struct abi_case {
	const char *name;
	int expect;		/* errno, or 0 */
	void (*mutate)(struct gup_fast_verdict *v);	/* a VERDICT case */
	int want;		/* its verdicts if it succeeds, bit i page i */
	int (*run)(void);	/* any other case */
	/*
	 * Or success with every page refused: kernels before 6.3 report the
	 * errors of their _fast_only() calls as no page taken.
	 */
	bool or_none;
};

#define VERDICT(n, e, m, w) { .name = n, .expect = e, .mutate = m, .want = w }
#define OTHER(n, e, r) { .name = n, .expect = e, .run = r }
#define VERDICT_OR_NONE(n, e, m) { .name = n, .expect = e, .mutate = m, .or_none = true }

static const struct abi_case abi_cases[] = {
	VERDICT("verdict_unaligned_addr", EINVAL, v_unaligned_addr, 0),
	VERDICT("verdict_unaligned_size", EINVAL, v_unaligned_size, 0),
	VERDICT("verdict_zero_size", EINVAL, v_zero_size, 0),
	VERDICT("verdict_wrap", EINVAL, v_wrap, 0),
	VERDICT("verdict_foll_longterm_value", EINVAL, v_foll_longterm, 0),
	VERDICT("verdict_longterm_without_pin", EINVAL, v_longterm_no_pin, 0),
	VERDICT("verdict_unknown_flag", EINVAL, v_unknown_flag, 0),
	VERDICT("verdict_reserved", EINVAL, v_reserved, 0),
	VERDICT("verdict_bad_verdicts_ptr", EFAULT, v_bad_vec, 0),
	VERDICT("verdict_ro_verdicts", EFAULT, v_ro_vec, 0),
	VERDICT("verdict_straddling_verdicts", EFAULT, v_straddle, 0),
	VERDICT_OR_NONE("verdict_kernel_addr", EFAULT, v_kernel),
	VERDICT_OR_NONE("verdict_beyond_task_size", EFAULT, v_beyond),
	VERDICT("verdict_hole", 0, v_hole, HOLE_MASK),
	VERDICT("verdict_write_readonly", 0, v_ro_write, 0),
	VERDICT("verdict_read_readonly", 0, v_ro_read, ALL_MASK),
	OTHER("verdict_bad_arg_ptr", EFAULT, run_bad_arg),
	OTHER("wrong_size_cmd", ENOTTY, run_wrong_size_cmd),
	OTHER("mmap_private", EINVAL, run_mmap_private),
	OTHER("mmap_offset", 0, run_mmap_offset),
	OTHER("mremap_grow", 0, run_mremap_grow),
	OTHER("mmap_pages", 0, run_mmap_pages),
	OTHER("fork_shares", 0, run_fork_shares),
	OTHER("pin_fast_write_readonly", 0, run_pin_fast_write_ro),
	OTHER("longterm_write_readonly", EFAULT, run_longterm_write_ro),
	OTHER("longterm_outlives_munmap", 0, run_longterm_outlives_munmap),
};

static int abi_verdict(const struct abi_case *c)
{
	struct gup_fast_verdict v = {
		.addr = (uintptr_t)abi.shadow, .size = ABI_PAGES * pagesize,
		.flags = GUP_FAST_VERDICT_FLAG_WRITE, .verdicts = (uintptr_t)abi.vec,
	};
	int i, err, got = 0;

	memset(abi.vec, 0xaa, sizeof(abi.vec));
	c->mutate(&v);
	err = gup_ioctl(gup_fd, GUP_FAST_VERDICT, &v);
	if (err)
		return err;
	for (i = 0; i < ABI_PAGES; i++)
		got |= (abi.vec[i] == 1) << i;
	if (got == c->want && v.nr_fast == (__u64)__builtin_popcount(got) &&
	    !memchr(abi.vec, 0xaa, sizeof(abi.vec)))
		return 0;
	ksft_print_msg("%s: verdict mask 0x%02x, nr_fast %llu, expected 0x%02x\n",
		       c->name, got, (unsigned long long)v.nr_fast, c->want);
	return CASE_FAIL;
}

static void run_abi_cases(void)
{
	bool ready = abi_setup();
	const struct abi_case *c;
	int got;

	if (!ready)
		ksft_print_msg("abi setup failed: %s\n", strerror(errno));
	for (c = abi_cases; c < abi_cases + ARRAY_SIZE(abi_cases); c++) {
		got = c->run ? c->run() : ready ? abi_verdict(c) : CASE_FAIL;
		if (c->or_none && !got) {
			ksft_print_msg("abi_%s: every page refused (a kernel before 6.3)\n",
				       c->name);
			got = c->expect;
		}
		if (got != c->expect && got != CASE_FAIL)
			ksft_print_msg("abi_%s: got %s, expected %s\n", c->name,
				       got ? strerror(got) : "success",
				       c->expect ? strerror(c->expect) : "success");
		ksft_test_result(got == c->expect, "abi_%s\n", c->name);
	}
}

/* ---------------------------------------------------------------------- */
/* race_<name>: a thread asks or pins in a loop while the main one races */

struct loop {
	pthread_t thread;
	char *addr;		/* atomic: the racer moves the buffer */
	bool pin;		/* PIN_FAST_BENCHMARK, else GUP_FAST_VERDICT */
	int stop;		/* atomic */
	unsigned long calls;	/* atomic */
	int err;		/* the first failed call's errno */
	__u64 bad;		/* a page count above opt_pages */
};

static void *loop_fn(void *arg)
{
	struct loop *l = arg;
	__u64 n = 0;

	while (!load_acquire(&l->stop) && !l->err && !l->bad) {
		char *addr = load_acquire(&l->addr);

		l->err = l->pin ? pin_fast(addr, opt_pages, &n) :
			 verdict(addr, opt_pages, GUP_FAST_VERDICT_FLAG_WRITE, &n);
		if (n > opt_pages)
			l->bad = n;
		store_release(&l->calls, l->calls + 1);
	}
	return NULL;
}

/* Let the loop finish one more call; false if it stopped or hangs. */
static bool loop_wait(struct loop *l)
{
	unsigned long long deadline = now_ns() + RACE_TIMEOUT_NS;
	unsigned long target = load_acquire(&l->calls) + 1;

	while (load_acquire(&l->calls) < target) {
		if (l->err || l->bad || now_ns() > deadline)
			return false;
		sched_yield();
	}
	return true;
}

/* munmap() (half first with @partial), map again; the loop follows. */
static bool racer_remap(struct loop *l, bool partial)
{
	size_t len = opt_pages * pagesize, half = opt_pages / 2 * pagesize;
	char *old = l->addr, *addr;

	if (partial && (munmap(old + half, len - half) || !loop_wait(l)))
		return false;
	munmap(old, partial ? half : len);
	addr = buf_map(true, opt_pages);
	if (!addr)
		return false;
	store_release(&l->addr, addr);
	return true;
}

static bool racer_munmap(struct loop *l) { return racer_remap(l, false); }
static bool racer_partial_munmap(struct loop *l) { return racer_remap(l, true); }

static bool racer_mprotect(struct loop *l)
{
	size_t len = opt_pages * pagesize;

	return !mprotect(l->addr, len, PROT_READ) && loop_wait(l) &&
	       !mprotect(l->addr, len, PROT_READ | PROT_WRITE);
}

/* A child writes the shared pages and asks about them, then exits. */
static bool racer_fork(struct loop *l)
{
	int status = 0;
	__u64 nr_fast;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid) {
		memset(l->addr, 0x5a, opt_pages * pagesize);
		_exit(verdict(l->addr, opt_pages, GUP_FAST_VERDICT_FLAG_WRITE, &nr_fast) ? 1 : 0);
	}
	if (pid < 0 || !wait_child("race_fork", pid, &status) || status) {
		ksft_print_msg("child: fork() %s, status 0x%x\n",
			       pid < 0 ? strerror(errno) : "ok", status);
		return false;
	}
	return true;
}

static bool race_loop(const char *name, bool pin, bool (*racer)(struct loop *))
{
	struct loop l = { .pin = pin };
	unsigned long i;
	bool ok = true;

	l.addr = buf_map(true, opt_pages);
	if (!l.addr || pthread_create(&l.thread, NULL, loop_fn, &l))
		return false;
	for (i = 0; ok && i < opt_iters; i++)
		ok = loop_wait(&l) && racer(&l);
	store_release(&l.stop, 1);
	pthread_join(l.thread, NULL);
	munmap(l.addr, opt_pages * pagesize);
	if (l.err || l.bad || !ok)
		ksft_print_msg("%s: iteration %lu of %lu, call %lu: %s, %llu pages reported\n",
			       name, i, opt_iters, l.calls,
			       l.err ? strerror(l.err) : "no error",
			       (unsigned long long)l.bad);
	else
		ksft_print_msg("%s: %lu iterations, %lu %s calls\n", name, i,
			       l.calls, pin ? "PIN_FAST_BENCHMARK" : "VERDICT");
	return ok && !l.err && !l.bad;
}

static bool race_munmap_verdict(const char *name)
{
	return race_loop(name, false, racer_munmap);
}

static bool race_partial_munmap_pin(const char *name)
{
	return race_loop(name, true, racer_partial_munmap);
}

static bool race_mprotect_pin(const char *name)
{
	return race_loop(name, true, racer_mprotect);
}

static bool race_fork_pin(const char *name)
{
	return race_loop(name, true, racer_fork);
}

/*
 * Releasing a file that holds a long-term pin of unmapped pages while a
 * thread is in a VERDICT through it: each dup2() puts a new pinned file
 * behind gup_fd, which the loop thread keeps calling, and closes the last.
 */
static bool race_close_pinned(const char *name)
{
	struct loop l = { .pin = false };
	unsigned long i;
	bool ok = true;
	char *addr;
	int fd;

	l.addr = buf_map(true, opt_pages);
	if (!l.addr || pthread_create(&l.thread, NULL, loop_fn, &l))
		return false;
	for (i = 0; ok && i < opt_iters; i++) {
		fd = open(GUP_TEST_FILE, O_RDWR | O_CLOEXEC);
		addr = buf_map(true, opt_pages);
		ok = fd >= 0 && addr && !longterm_start(fd, addr, opt_pages);
		if (addr)
			munmap(addr, opt_pages * pagesize);
		ok = ok && loop_wait(&l) && dup2(fd, gup_fd) == gup_fd;
		if (fd >= 0)
			close(fd);
	}
	store_release(&l.stop, 1);
	pthread_join(l.thread, NULL);
	ioctl(gup_fd, PIN_LONGTERM_TEST_STOP);
	munmap(l.addr, opt_pages * pagesize);
	ksft_print_msg("%s: %lu pinned files closed under %lu VERDICT calls%s\n",
		       name, i, l.calls, ok && !l.err ? "" : ": failed");
	return ok && !l.err && !l.bad;
}

/* Children for race_kill(): each tells @ready_fd, then works until killed. */
static void kill_verdict_child(int ready_fd)
{
	int fd = open(GUP_TEST_FILE, O_RDWR | O_CLOEXEC);
	char *pinned = buf_map(true, opt_pages), *addr = buf_map(true, opt_pages);
	__u64 nr_fast;

	/* A long-term pin of unmapped pages, left to the exit to drop. */
	if (fd < 0 || !pinned || !addr || longterm_start(fd, pinned, opt_pages) ||
	    munmap(pinned, opt_pages * pagesize) || write(ready_fd, "r", 1) != 1)
		_exit(2);
	while (!verdict(addr, opt_pages, GUP_FAST_VERDICT_FLAG_WRITE, &nr_fast))
		;
	_exit(3);
}

/*
 * Fault in LEAK_BYTES of shadow pages, again and again: each fault allocates
 * and inserts a page. Killed there, the child's exit must free them all.
 */
static void kill_fault_child(int ready_fd)
{
	size_t off;
	char *addr;

	if (write(ready_fd, "r", 1) != 1)
		_exit(2);
	while (!shadow_mmap(&addr, LEAK_BYTES, MAP_SHARED, 0)) {
		for (off = 0; off < LEAK_BYTES; off += pagesize)
			addr[off] = 1;
		munmap(addr, LEAK_BYTES);
	}
	_exit(3);
}

/*
 * Kill a child of @child at work, @opt_iters times. With @in_fault, once
 * free memory shows it holding a quarter of LEAK_BYTES of shadow pages
 * (else the kill proves nothing: a failure): any page its teardown fails
 * to free then shows as a leak.
 */
static bool race_kill(const char *name, void (*child)(int ready_fd),
		      bool in_fault)
{
	unsigned long iters = in_fault && opt_iters > KILL_FAULT_ITERS ?
			      KILL_FAULT_ITERS : opt_iters;
	long start, floor = free_kb() - (long)(LEAK_BYTES / 2048);
	unsigned long long deadline;
	unsigned long i, killed = 0;
	int pfd[2], status;
	bool ok = true;
	char c;
	pid_t pid;

	/* A leaking teardown is left to the caller before memory runs out. */
	for (i = 0; ok && i < iters && (!in_fault || free_kb() > floor); i++) {
		if (pipe2(pfd, O_CLOEXEC))
			return false;
		fflush(NULL);
		pid = fork();
		if (!pid) {
			close(pfd[0]);
			child(pfd[1]);
		}
		close(pfd[1]);
		ok = pid > 0 && read(pfd[0], &c, 1) == 1;
		close(pfd[0]);
		if (pid < 0)
			break;
		start = free_kb();
		deadline = now_ns() + RACE_TIMEOUT_NS;
		if (!in_fault)
			sleep_ns(KILL_DELAY_NS);	/* into the ioctl */
		while (in_fault && free_kb() > start - (long)(LEAK_BYTES / 4096))
			if (now_ns() > deadline) {
				ksft_print_msg("%s: iteration %lu: the child never held %lu MiB\n",
					       name, i, LEAK_BYTES >> 22);
				ok = false;
				break;
			}
		kill(pid, SIGKILL);
		if (!wait_child(name, pid, &status))
			return false;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			killed++;
		else
			ok = false;
		if (!ok)
			ksft_print_msg("%s: iteration %lu: child status 0x%x\n",
				       name, i, status);
	}
	if (ok)
		ksft_print_msg("%s: %lu children killed at work\n", name,
			       killed);
	return ok;
}

static bool race_kill_verdict(const char *name)
{
	return race_kill(name, kill_verdict_child, false);
}

static bool race_kill_fault(const char *name)
{
	long before = free_kb();

	return race_kill(name, kill_fault_child, true) &&
	       memory_back(name, before);
}

/* ---------------------------------------------------------------------- */
/* leak_<backing>: every command over LEAK_BYTES, then all of it unmapped */

static bool leak_case(const char *name, bool shadow)
{
	unsigned long nr = LEAK_BYTES / pagesize;
	long before = free_kb();
	int fd, err = ENOMEM;
	__u64 n;
	char *addr;

	addr = buf_map(shadow, nr);
	fd = open(GUP_TEST_FILE, O_RDWR | O_CLOEXEC);
	if (addr && fd >= 0) {
		err = verdict(addr, nr, GUP_FAST_VERDICT_FLAG_WRITE, &n) ?:
		      pin_fast(addr, nr, &n) ?:
		      longterm_start(fd, addr, nr);
	}
	/* The long-term pin outlives the mapping until the file's release. */
	if (addr)
		munmap(addr, LEAK_BYTES);
	if (fd >= 0)
		close(fd);
	if (err) {
		ksft_print_msg("%s: %s\n", name, strerror(err));
		return false;
	}
	return memory_back(name, before);
}

static bool leak_anon(const char *name) { return leak_case(name, false); }
static bool leak_shadow(const char *name) { return leak_case(name, true); }

static const struct {
	const char *name;
	bool (*fn)(const char *name);
} cases[] = {
	{ "race_munmap_verdict", race_munmap_verdict },
	{ "race_partial_munmap_pin", race_partial_munmap_pin },
	{ "race_mprotect_pin", race_mprotect_pin },
	{ "race_fork_pin", race_fork_pin },
	{ "race_close_pinned", race_close_pinned },
	{ "race_kill_verdict", race_kill_verdict },
	{ "race_kill_fault", race_kill_fault },
	{ "leak_anon", leak_anon },
	{ "leak_shadow", leak_shadow },
};

static unsigned long parse_ulong(const char *s, unsigned long min,
				 unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s < '0' || *s > '9' || *end || v < min || v > max) {
		fprintf(stderr, "usage: gupnm_stress [-p PAGES] [-R ITERS]: '%s' not in %lu..%lu\n",
			s, min, max);
		exit(KSFT_FAIL);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long t0;
	__u64 nr_fast;
	unsigned int i;
	char *probe;
	int c, err;
	bool ok;

	while ((c = getopt(argc, argv, "p:R:")) != -1) {
		if (c == 'p')
			opt_pages = parse_ulong(optarg, 2, MAX_PAGES);
		else if (c == 'R')
			opt_iters = parse_ulong(optarg, 1, MAX_ITERS);
		else
			return KSFT_FAIL;
	}
	if (optind != argc)
		return KSFT_FAIL;
	pagesize = sysconf(_SC_PAGESIZE);

	ksft_print_header();
	gup_fd = open(GUP_TEST_FILE, O_RDWR | O_CLOEXEC);
	if (gup_fd < 0)
		ksft_exit_skip("%s: %s (modprobe gup_test, as root)\n",
			       GUP_TEST_FILE, strerror(errno));
	/* A gup_test without the series knows no GUP_FAST_VERDICT. */
	probe = buf_map(false, 1);
	err = probe ? verdict(probe, 1, 0, &nr_fast) : errno;
	if (err == EINVAL || err == ENOTTY || err == EOPNOTSUPP)
		ksft_exit_skip("GUP_FAST_VERDICT: %s\n", err == EOPNOTSUPP ?
			       "no CONFIG_HAVE_GUP_FAST" :
			       "unknown: not the series' gup_test");
	ksft_set_plan(ARRAY_SIZE(abi_cases) + ARRAY_SIZE(cases));
	t0 = now_ns();
	run_abi_cases();
	ksft_print_msg("abi cases: %llu ms\n", (now_ns() - t0) / NSEC_PER_MSEC);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		t0 = now_ns();
		ok = cases[i].fn(cases[i].name);
		ksft_print_msg("%s: %llu ms\n", cases[i].name, (now_ns() - t0) / NSEC_PER_MSEC);
		ksft_test_result(ok, "%s\n", cases[i].name);
	}
	ksft_finished();
}
