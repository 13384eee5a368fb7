// SPDX-License-Identifier: GPL-2.0
/*
 * GUP-fast on order-0 folios whose ->mapping is NULL, as drivers map with
 * vm_insert_page() and as gup_test's mapping gives ("shadow" pages): GUP-fast
 * must take them except for FOLL_PIN|FOLL_LONGTERM|FOLL_WRITE pins, and must
 * keep refusing secretmem. Each backing (anon, memfd, shadow, memfd_secret)
 * is crossed with read and write (GUP_FAST_VERDICT, per page; for shadow
 * "write", a FOLL_PIN|FOLL_WRITE pin_user_pages_fast() too) and
 * longterm_write (pin_user_pages_fast() through PIN_LONGTERM_TEST_START).
 *
 * Which path a pin_user_pages_fast() took: the fallback adds FOLL_TOUCH and
 * follow_page_pte() marks a clean page dirty on a write pin; GUP-fast does
 * not. Shadow pages start clean and are only read here, so KPF_DIRTY tells,
 * once proven: get_user_pages() must dirty every page of a fresh buffer.
 *
 * Every buffer proves what it claims before its verdict counts: its pages
 * are order-0 (a THP control says nothing about order-0 folios), anon or
 * not, on an LRU or not (kpageflags). Controls refused for reasons unrelated
 * to the bug (NUMA hinting, migration) are touched and asked again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <mm/gup_test.h>
#include "kselftest.h"
#include "vm_util.h"

#define MSG_BUG		"GUP-fast rejects NULL-mapping order-0 folios"
#define MSG_WRONGFIX	"FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios went through GUP-fast"
#define MSG_SECRETMEM	"secretmem exposure: GUP-fast reached memfd_secret pages"
#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"
#define NR_PAGES	512
#define BUF_LEN		(NR_PAGES * psize())
#define MAX_TRIES	10
#define FOLL_WRITE	0x01	/* as in include/linux/mm_types.h */
/* include/uapi/linux/kernel-page-flags.h */
#define KPF_DIRTY	BIT_ULL(4)
#define KPF_LRU		BIT_ULL(5)
#define KPF_ANON	BIT_ULL(12)
#define KPF_LARGE	(KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL | KPF_THP)
#ifndef __NR_memfd_secret
#define __NR_memfd_secret	-1	/* not on this architecture: ENOSYS */
#endif

enum backing { ANON, MEMFD, SHADOW, SECRETMEM, NR_BACKINGS };
static const char * const backing_names[] = { "anon", "memfd", "shadow", "secretmem" };
/* What a wrong read or write verdict means, per backing. */
static const char * const verdict_msgs[] = { [SHADOW] = MSG_BUG, [SECRETMEM] = MSG_SECRETMEM };

enum test_case { READ, WRITE, LONGTERM_WRITE, NR_CASES };
static const char * const case_names[] = { "read", "write", "longterm_write" };

static int gup_fd = -1, pagemap_fd = -1, kpageflags_fd = -1;
/* Why a backing or the dirty witness cannot be used, or NULL. */
static const char *no_backing[NR_BACKINGS], *no_witness;

struct buf {
	char *addr;
	int fd;
	enum backing kind;
};

static void buf_destroy(struct buf *b)
{
	munmap(b->addr, BUF_LEN);
	if (b->fd >= 0)
		close(b->fd);
}

/* Fault page @i in: written, except shadow pages, whose PTEs stay clean. */
static void touch(struct buf *b, unsigned long i)
{
	char *p = b->addr + i * psize();

	if (b->kind == SHADOW)
		FORCE_READ(*p);
	else
		*p = (char)i;
}

/*
 * Map NR_PAGES of @kind, and touch them unless @populate is false; 0, or -1
 * with errno set and *@what naming the step that failed.
 */
static int buf_create(struct buf *b, enum backing kind, bool populate,
		      const char **what)
{
	int flags = kind == ANON ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED;
	unsigned long i;

	*b = (struct buf){ .fd = -1, .kind = kind };
	*what = kind == SECRETMEM ? "memfd_secret()" : "open()";
	if (kind == SHADOW)
		b->fd = open(GUP_TEST_FILE, O_RDWR);
	else if (kind == MEMFD)
		b->fd = memfd_create("gup_null_mapping", 0);
	else if (kind == SECRETMEM)
		b->fd = syscall(__NR_memfd_secret, 0);
	if (kind != ANON && b->fd < 0)
		return -1;
	*what = "ftruncate()";
	if (kind != ANON && kind != SHADOW && ftruncate(b->fd, BUF_LEN))
		goto fail;
	*what = "mmap()";
	b->addr = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, flags, b->fd, 0);
	if (b->addr == MAP_FAILED)
		goto fail;
	/* Order-0, as shadow pages are; premise() checks that it worked. */
	if (kind == ANON || kind == MEMFD)
		madvise(b->addr, BUF_LEN, MADV_NOHUGEPAGE);
	for (i = 0; populate && i < NR_PAGES; i++)
		touch(b, i);
	return 0;
fail:
	if (b->fd >= 0)
		close(b->fd);
	return -1;
}

/* OR of the kpageflags of @b's pages, in *@all; NULL, or why it failed. */
static const char *buf_flags(struct buf *b, uint64_t *all, long *nr_dirty)
{
	unsigned long i, pfn = -1UL;
	int tries;
	uint64_t flags;

	if (kpageflags_fd < 0)
		return "no /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)";
	*all = 0;
	*nr_dirty = 0;
	for (i = 0; i < NR_PAGES; i++) {
		/* A page under migration (NUMA balancing) is away for a moment. */
		for (tries = 0; tries < MAX_TRIES; tries++, usleep(1000)) {
			pfn = pagemap_get_pfn(pagemap_fd, b->addr + i * psize());
			if (pfn != -1UL)
				break;
			touch(b, i);
		}
		if (pfn == -1UL)
			return "a page is not present in /proc/self/pagemap";
		if (pageflags_get(pfn, kpageflags_fd, &flags))
			return "reading /proc/kpageflags failed";
		*all |= flags;
		*nr_dirty += !!(flags & KPF_DIRTY);
	}
	return NULL;
}

/*
 * Is @b what its verdict assumes? Order-0 pages; anon ones for anon; for
 * the others, no anon page; for shadow, none on an LRU either (page cache
 * and shmem are: a driver page with a NULL ->mapping is not). NULL, or why.
 */
static const char *premise(struct buf *b)
{
	static char why[128];
	const char *err;
	uint64_t all;
	long dirty;

	/* Without kpageflags, controls skip and shadow trusts gup_test. */
	err = buf_flags(b, &all, &dirty);
	if (err)
		return b->kind == SHADOW && kpageflags_fd < 0 ? NULL : err;
	if (all & KPF_LARGE)
		err = "not all order-0: THP or compound pages (THP settings)";
	else if ((b->kind == ANON) != !!(all & KPF_ANON))
		err = b->kind == ANON ? "not all anonymous" : "anonymous pages";
	else if (b->kind == SHADOW && (all & KPF_LRU))
		err = "pages on an LRU, not driver pages";
	if (!err)
		return NULL;
	snprintf(why, sizeof(why), "%s pages: %s", backing_names[b->kind], err);
	return why;
}

/*
 * How many pages of @b GUP-fast takes. Pages of a control it refused are
 * touched and asked about again, up to MAX_TRIES times in all, while fewer
 * than @want were ever taken. Returns the count, or -1 with errno set.
 */
static long verdict(struct buf *b, __u32 flags, long want)
{
	unsigned char v[NR_PAGES], ever[NR_PAGES] = { 0 };
	struct gup_fast_verdict args = {
		.addr = (unsigned long)b->addr, .size = BUF_LEN,
		.verdicts = (unsigned long)v, .flags = flags,
	};
	int tries = b->kind == SHADOW ? 1 : MAX_TRIES;
	long i, fast = 0;

	while (tries--) {
		if (ioctl(gup_fd, GUP_FAST_VERDICT, &args))
			return -1;
		for (i = 0, fast = 0; i < NR_PAGES; i++)
			fast += ever[i] |= v[i];
		if (fast >= want || !tries)
			break;
		for (i = 0; i < NR_PAGES; i++)
			if (!ever[i])
				touch(b, i);
		usleep(1000);
	}
	return fast;
}

/*
 * Pin and unpin all of @b for writing: pin_user_pages_fast() with
 * FOLL_LONGTERM for PIN_LONGTERM_TEST_START, without for PIN_FAST_BENCHMARK;
 * get_user_pages() for GUP_BASIC_TEST. -1 with errno set.
 */
static int pin(struct buf *b, unsigned long cmd)
{
	struct pin_longterm_test lt = {
		.addr = (unsigned long)b->addr, .size = BUF_LEN,
		.flags = PIN_LONGTERM_TEST_FLAG_USE_FAST |
			 PIN_LONGTERM_TEST_FLAG_USE_WRITE,
	};
	struct gup_test gup = {
		.addr = lt.addr, .size = lt.size, .nr_pages_per_call = NR_PAGES,
		.gup_flags = FOLL_WRITE,
	};

	if (cmd == PIN_LONGTERM_TEST_START)
		return ioctl(gup_fd, cmd, &lt) ?: ioctl(gup_fd, PIN_LONGTERM_TEST_STOP);
	if (ioctl(gup_fd, cmd, &gup))
		return -1;
	errno = EFAULT;		/* .size: how much was pinned */
	return gup.size == lt.size ? 0 : -1;
}

/* The verdict line: pages through GUP-fast, the goal, and @why if missed. */
static int expect(enum backing kind, const char *access, long fast, long want,
		  const char *why)
{
	ksft_print_msg("verdict %s %s: %ld/%d pages via GUP-fast (expected %ld)\n",
		       backing_names[kind], access, fast, NR_PAGES, want);
	if (fast == want)
		return KSFT_PASS;
	if (why)
		ksft_print_msg("FAIL: %s\n", why);
	return KSFT_FAIL;
}

/*
 * A write pin of a fresh shadow buffer (clean pages, clean PTEs): all pages
 * through GUP-fast leave them clean, the slow path dirties them.
 */
static int shadow_pin(enum test_case tc)
{
	unsigned long cmd = tc == WRITE ? PIN_FAST_BENCHMARK : PIN_LONGTERM_TEST_START;
	const char *what, *err;
	int ret = KSFT_FAIL;
	long dirty = 0;
	uint64_t all;
	struct buf b;

	if (buf_create(&b, SHADOW, true, &what)) {
		ksft_print_msg("shadow pin: %s: %s\n", what, strerror(errno));
		return KSFT_FAIL;
	}
	err = buf_flags(&b, &all, &dirty);
	if (!err && dirty)
		err = "pages dirty before the pin";
	if (!err && pin(&b, cmd))
		err = strerror(errno);
	if (!err)
		err = buf_flags(&b, &all, &dirty);
	if (!err && tc == WRITE)
		ret = expect(SHADOW, "pin_write", NR_PAGES - dirty, NR_PAGES, MSG_BUG);
	else if (!err)
		ret = expect(SHADOW, case_names[tc], NR_PAGES - dirty, 0, MSG_WRONGFIX);
	if (err)
		ksft_print_msg("shadow pin: %s\n", err);
	buf_destroy(&b);
	return ret;
}

static int run_case(struct buf *b, enum test_case tc)
{
	long want = b->kind == SECRETMEM ? 0 : NR_PAGES, fast;
	int ret;

	if (tc == LONGTERM_WRITE && b->kind != SHADOW) {
		/* No witness needed: the pin must work, and fail on secretmem. */
		ret = pin(b, PIN_LONGTERM_TEST_START);
		ksft_print_msg("long-term pin: %s\n", ret ? strerror(errno) : "pinned");
		return !ret == (b->kind != SECRETMEM) ? KSFT_PASS : KSFT_FAIL;
	}
	if (tc != LONGTERM_WRITE) {
		fast = verdict(b, tc == WRITE ? GUP_FAST_VERDICT_FLAG_WRITE : 0, want);
		if (fast < 0) {
			ksft_print_msg("GUP_FAST_VERDICT: %s\n", strerror(errno));
			return KSFT_FAIL;
		}
		ret = expect(b->kind, case_names[tc], fast, want, verdict_msgs[b->kind]);
		if (ret || b->kind != SHADOW || tc == READ)
			return ret;
	}
	if (no_witness) {
		ksft_print_msg("no dirty witness: %s\n", no_witness);
		return KSFT_SKIP;
	}
	return shadow_pin(tc);
}

static void run_test(enum backing kind, enum test_case tc)
{
	const char *what, *why = no_backing[kind];
	int result = KSFT_FAIL;
	char name[64];
	struct buf b;

	snprintf(name, sizeof(name), "verdict_%s_%s", backing_names[kind], case_names[tc]);
	ksft_print_msg("[RUN] %s\n", name);
	if (!why && buf_create(&b, kind, true, &what)) {
		ksft_print_msg("%s: %s\n", what, strerror(errno));
	} else if (!why) {
		why = premise(&b);
		/* gup_test's own pages must be what it promises: else FAIL. */
		if (why && kind == SHADOW)
			ksft_print_msg("FAIL: %s\n", why);
		else if (!why)
			result = run_case(&b, tc);
		buf_destroy(&b);
	}
	if (why && kind != SHADOW)
		ksft_test_result_code(KSFT_SKIP, name, "%s", why);
	else
		ksft_test_result_code(result, name, NULL);
}

/*
 * Does gup_test have what this test needs? Skips the whole test where it
 * does not: GUP_FAST_VERDICT (EINVAL or ENOTTY from a well-formed call:
 * a gup_test without it), GUP-fast itself, and its mapping (ENODEV).
 */
static void check_gup_test(void)
{
	struct gup_fast_verdict args = { .size = psize() };
	const char *what;
	struct buf b;

	if (buf_create(&b, ANON, true, &what))
		ksft_exit_fail_msg("anon buffer: %s: %s\n", what, strerror(errno));
	args.addr = (unsigned long)b.addr;
	if (ioctl(gup_fd, GUP_FAST_VERDICT, &args)) {
		if (errno == EINVAL || errno == ENOTTY)
			ksft_exit_skip("gup_test lacks GUP_FAST_VERDICT (%s)\n",
				       strerror(errno));
		if (errno == EOPNOTSUPP)
			ksft_exit_skip("no GUP-fast here (CONFIG_HAVE_GUP_FAST)\n");
		ksft_exit_fail_msg("GUP_FAST_VERDICT: %s\n", strerror(errno));
	}
	buf_destroy(&b);
	if (buf_create(&b, SHADOW, false, &what)) {
		if (errno == ENODEV)
			ksft_exit_skip("gup_test cannot be mapped: a kernel without its pages\n");
		ksft_exit_fail_msg("gup_test mapping: %s: %s\n", what, strerror(errno));
	}
	buf_destroy(&b);
}

/*
 * Is the dirty witness usable here? A fresh shadow buffer faulted in for
 * writing by get_user_pages() (GUP_BASIC_TEST: the slow path, FOLL_TOUCH)
 * must come out with every page dirty. Not pin_user_pages(): no FOLL_TOUCH.
 */
static void check_witness(void)
{
	static char why[128];
	const char *what;
	long dirty = 0;
	uint64_t all;
	struct buf b;

	if (buf_create(&b, SHADOW, false, &what))
		ksft_exit_fail_msg("shadow buffer: %s: %s\n", what, strerror(errno));
	no_witness = pin(&b, GUP_BASIC_TEST) ? strerror(errno) : buf_flags(&b, &all, &dirty);
	if (!no_witness && dirty != NR_PAGES) {
		snprintf(why, sizeof(why), "the slow path dirtied %ld/%d pages of a fresh buffer",
			 dirty, NR_PAGES);
		no_witness = why;
	}
	buf_destroy(&b);
	ksft_print_msg("dirty witness: %s\n", no_witness ?: "proven");
}

/* Which backings cannot be used at all here, and why. */
static void check_backings(void)
{
	rlim_t need = BUF_LEN + psize();
	struct rlimit rl;

	/* secretmem pages count against RLIMIT_MEMLOCK: over it, a fault is SIGBUS. */
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < need) {
		rl.rlim_cur = need;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
			rl.rlim_max = need;
		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			no_backing[SECRETMEM] = "RLIMIT_MEMLOCK too low and cannot be raised";
	}
}

int main(void)
{
	enum backing kind;
	enum test_case tc;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root: gup_test, /proc/kpageflags\n");
	gup_fd = open(GUP_TEST_FILE, O_RDWR);
	if (gup_fd < 0)
		ksft_exit_skip("%s: %s (CONFIG_GUP_TEST; modprobe gup_test)\n",
			       GUP_TEST_FILE, strerror(errno));
	/* Order-0 anon and shmem pages, with or without madvise(). */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		ksft_exit_skip("/proc/self/pagemap: %s\n", strerror(errno));
	kpageflags_fd = open("/proc/kpageflags", O_RDONLY);
	check_gup_test();
	check_backings();
	ksft_print_msg("page size %u, %d pages per buffer\n", psize(), NR_PAGES);

	ksft_set_plan(NR_BACKINGS * NR_CASES);
	check_witness();
	for (kind = 0; kind < NR_BACKINGS; kind++)
		for (tc = 0; tc < NR_CASES; tc++)
			run_test(kind, tc);
	/* Cases that could not be judged skip; only failures fail. */
	if (ksft_get_fail_cnt())
		ksft_exit_fail();
	if (!ksft_get_pass_cnt())
		ksft_exit_skip("no case could be judged here\n");
	ksft_exit_pass();
}
