// SPDX-License-Identifier: GPL-2.0
/*
 * Which folios GUP-fast takes: gup_fast_folio_allowed()'s table, a row per
 * backing (anon order-0 and THP, hugetlb, memfd, a ramfs file, gup_test's
 * pages, whose ->mapping is NULL as drivers map with vm_insert_page(), and
 * memfd_secret) crossed with FOLL_PIN read, write and long-term write pins.
 * GUP-fast takes every cell but secretmem's, and a long-term writable pin
 * of a folio that may need dirty tracking (not shmem: a file, NULL mapping).
 *
 * gup_test's GUP_FAST_VERDICT answers per page for the cell's flags (a pin
 * taken without the mmap_lock went through GUP-fast) once its witness and
 * each buffer prove their claims (untouched pages read slow; kpageflags).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include <mm/gup_test.h>
#include "kselftest.h"
#include "vm_util.h"
#include "hugepage_settings.h"

#define MSG_BUG		"GUP-fast rejects NULL-mapping order-0 folios"
#define MSG_WRONGFIX	"FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios went through GUP-fast"
#define MSG_SECRETMEM	"secretmem exposure: GUP-fast reached memfd_secret pages"
#define MSG_FILE	"FOLL_LONGTERM|FOLL_WRITE pin of page cache needing dirty tracking went through GUP-fast"
#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"
#define NR_PAGES	512
#define MAX_LEN		(32UL << 20)
#define MAX_TRIES	10
/* include/uapi/linux/kernel-page-flags.h */
#define KPF_LRU		BIT_ULL(5)
#define KPF_ANON	BIT_ULL(12)
#define KPF_HUGE	BIT_ULL(17)
#define KPF_LARGE	(KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL | KPF_THP)
#ifndef __NR_memfd_secret
#define __NR_memfd_secret	-1	/* not on this architecture: ENOSYS */
#endif
#define PIN		GUP_FAST_VERDICT_FLAG_PIN
#define WRITE		GUP_FAST_VERDICT_FLAG_WRITE

enum backing { ANON, THP, HUGETLB, MEMFD, FILE_RAMFS, SHADOW, SECRETMEM, NR_BACKINGS };

/* What each row's pages must be (kpageflags), and what its failure means. */
static const struct row {
	const char *name;
	uint64_t all, none;	/* flags every page has, flags no page has */
	const char *wrong, *longterm;	/* a wrong verdict, a long-term pin taken */
} rows[] = {
	[ANON] = { "anon", KPF_ANON, KPF_LARGE },
	[THP] = { "thp", KPF_ANON | KPF_THP, 0 },
	[HUGETLB] = { "hugetlb", KPF_HUGE, 0 },
	[MEMFD] = { "memfd", 0, KPF_ANON },
	[FILE_RAMFS] = { "file", 0, KPF_ANON, NULL, MSG_FILE },
	[SHADOW] = { "shadow", 0, KPF_ANON | KPF_LRU | KPF_LARGE, MSG_BUG, MSG_WRONGFIX },
	[SECRETMEM] = { "secretmem", 0, KPF_ANON | KPF_LARGE, MSG_SECRETMEM },
};

enum test_case { READ, WRITE_PIN, LONGTERM_WRITE, NR_CASES };
static const char * const case_names[] = { "read", "write", "longterm_write" };
static const __u32 case_flags[] = { PIN, PIN | WRITE,
				    PIN | WRITE | GUP_FAST_VERDICT_FLAG_LONGTERM };

static int gup_fd = -1, pagemap_fd = -1, kpageflags_fd = -1;
static unsigned long thp_size, hpage_size;
/* Why a backing cannot be used here, or NULL; whether pins can be asked. */
static const char *no_backing[NR_BACKINGS];
static bool can_pin = true;
static int asks;	/* how often the last verdict() asked */

struct buf {
	char *addr, *map;
	size_t len, map_len;
	unsigned long nr;	/* pages */
	int fd;
	enum backing kind;
};

/* gup_fast_folio_allowed(): does GUP-fast take @kind's folios for @tc? */
static bool allowed(enum backing kind, enum test_case tc)
{
	if (kind == SECRETMEM)
		return false;
	return tc != LONGTERM_WRITE || (kind != FILE_RAMFS && kind != SHADOW);
}

static void buf_destroy(struct buf *b)
{
	munmap(b->map, b->map_len);
	if (b->fd >= 0)
		close(b->fd);
}

static void touch(struct buf *b, unsigned long i)
{
	b->addr[i * psize()] = (char)i;
}

/* A ramfs file: fsopen() and a detached mount, no directory needed. */
static int ramfs_file(void)
{
	int fs = syscall(__NR_fsopen, "ramfs", 0), mnt = -1, fd = -1;
	struct statfs sf;

	if (fs >= 0 && !syscall(__NR_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		mnt = syscall(__NR_fsmount, fs, 0, 0);
	if (mnt >= 0)
		fd = openat(mnt, "f", O_RDWR | O_CREAT, 0600);
	if (fd >= 0 && (fstatfs(fd, &sf) || (unsigned int)sf.f_type != RAMFS_MAGIC)) {
		close(fd);
		fd = -1;
		errno = EXDEV;
	}
	if (mnt >= 0)
		close(mnt);
	if (fs >= 0)
		close(fs);
	return fd;
}

/*
 * Map @kind (NR_PAGES; one THP or huge page), touch every page
 * for writing unless @populate is false; 0, or -1 with errno set and
 * *@what naming the step that failed.
 */
static int buf_create(struct buf *b, enum backing kind, bool populate,
		      const char **what)
{
	int flags = kind <= HUGETLB ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED;
	unsigned long i;

	*b = (struct buf){ .fd = -1, .kind = kind };
	b->len = kind == THP ? thp_size : kind == HUGETLB ? hpage_size : NR_PAGES * psize();
	b->map_len = b->len * (kind == THP ? 2 : 1);
	b->nr = b->len / psize();
	*what = kind == SECRETMEM ? "memfd_secret()" :
		kind == FILE_RAMFS ? "a ramfs file (fsopen(), fsmount())" : "open()";
	b->fd = kind == MEMFD ? memfd_create("gup_null_mapping", 0) :
		kind == FILE_RAMFS ? ramfs_file() :
		kind == SHADOW ? open(GUP_TEST_FILE, O_RDWR) :
		kind == SECRETMEM ? syscall(__NR_memfd_secret, 0) : -2;
	if (b->fd == -1)
		return -1;
	*what = "ftruncate()";
	if (kind >= MEMFD && kind != SHADOW && ftruncate(b->fd, b->len))
		goto fail;
	if (kind == HUGETLB)
		flags |= MAP_HUGETLB | __builtin_ctzl(hpage_size) << MAP_HUGE_SHIFT;
	*what = "mmap()";
	b->map = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, flags, b->fd, 0);
	if (b->map == MAP_FAILED)
		goto fail;
	/* THP: one naturally aligned folio; order-0 elsewhere. premise() checks both. */
	b->addr = kind == THP ? (char *)(((uintptr_t)b->map + thp_size - 1) & ~(thp_size - 1))
			      : b->map;
	prctl(PR_SET_THP_DISABLE, kind != THP, 0, 0, 0);
	if (kind == ANON || kind == THP || kind == MEMFD)
		madvise(b->addr, b->len, kind == THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	for (i = 0; populate && i < b->nr; i++)
		touch(b, i);
	return 0;
fail:
	if (b->fd >= 0)
		close(b->fd);
	return -1;
}

/* AND and OR of the kpageflags of @b's pages; NULL, or why it failed. */
static const char *buf_flags(struct buf *b, uint64_t *and, uint64_t *or)
{
	unsigned long i, pfn = -1UL;
	uint64_t flags;
	int tries;

	if (kpageflags_fd < 0)
		return "no /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)";
	*and = -1ULL;
	*or = 0;
	for (i = 0; i < b->nr; i++) {
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
		*and &= flags;
		*or |= flags;
	}
	return NULL;
}

/* Is @b what its row is about (rows[].all, .none)? NULL, or why not. */
static const char *premise(struct buf *b)
{
	const struct row *r = &rows[b->kind];
	static char why[128];
	uint64_t and, or;
	const char *err;

	/* Without kpageflags, controls skip and shadow trusts gup_test. */
	err = buf_flags(b, &and, &or);
	if (err)
		return b->kind == SHADOW && kpageflags_fd < 0 ? NULL : err;
	if ((and & r->all) == r->all && !(or & r->none))
		return NULL;
	snprintf(why, sizeof(why), "%s pages not as needed: kpageflags lack %#llx, have %#llx",
		 r->name, (unsigned long long)(r->all & ~and), (unsigned long long)(or & r->none));
	return why;
}

/*
 * How many pages of @b GUP-fast takes for @flags. Pages of a control it
 * refused are touched and asked about again, up to MAX_TRIES times in all,
 * while fewer than @want were ever taken. The count, or -1 with errno set.
 * Without pins, FOLL_GET asks the same of read and write (not long-term).
 */
static long verdict(struct buf *b, __u32 flags, long want)
{
	unsigned char *v = calloc(2, b->nr), *ever = v + b->nr;
	struct gup_fast_verdict args = {
		.addr = (unsigned long)b->addr, .size = b->len,
		.verdicts = (unsigned long)v, .flags = can_pin ? flags : flags & ~PIN,
	};
	int tries = b->kind == SHADOW ? 1 : MAX_TRIES;
	unsigned long i;
	long fast = -1;

	for (asks = 1; v; asks++) {
		if (ioctl(gup_fd, GUP_FAST_VERDICT, &args)) {
			fast = -1;
			break;
		}
		for (i = 0, fast = 0; i < b->nr; i++)
			fast += ever[i] |= v[i];
		if (fast >= want || asks == tries)
			break;
		for (i = 0; i < b->nr; i++)
			if (!ever[i])
				touch(b, i);
		usleep(1000);
	}
	free(v);
	return fast;
}

static int run_case(struct buf *b, enum test_case tc)
{
	const struct row *r = &rows[b->kind];
	long want = allowed(b->kind, tc) ? b->nr : 0;
	long fast = verdict(b, case_flags[tc], want);
	const char *tries = asks > 1 ? "tries" : "try";

	if (fast < 0) {
		ksft_print_msg("GUP_FAST_VERDICT: %s\n", strerror(errno));
		return KSFT_FAIL;
	}
	ksft_print_msg("verdict %s %s: %ld/%lu pages via GUP-fast (expected %ld, %d %s)\n",
		       r->name, case_names[tc], fast, b->nr, want, asks, tries);
	if (fast == want)
		return KSFT_PASS;
	if (fast > want && tc == LONGTERM_WRITE && r->longterm)
		ksft_print_msg("FAIL: %s\n", r->longterm);
	else if (r->wrong)
		ksft_print_msg("FAIL: %s\n", r->wrong);
	else
		ksft_print_msg("FAIL: GUP-fast refused %s pages (%s): %s\n", r->name,
			       case_names[tc], "gup_fast_folio_allowed() regressed");
	return KSFT_FAIL;
}

static void run_test(enum backing kind, enum test_case tc)
{
	const char *what, *why = no_backing[kind];
	int result = KSFT_FAIL;
	bool broken = false;	/* gup_test's own pages not what it promises */
	char name[64];
	struct buf b;

	snprintf(name, sizeof(name), "verdict_%s_%s", rows[kind].name, case_names[tc]);
	ksft_print_msg("[RUN] %s\n", name);
	if (!why && !can_pin && tc == LONGTERM_WRITE)
		why = "gup_test cannot tell a pin's path here (CONFIG_TRACING off)";
	if (!why && buf_create(&b, kind, true, &what)) {
		ksft_print_msg("%s: %s\n", what, strerror(errno));
	} else if (!why) {
		why = premise(&b);
		/* gup_test's own pages must be what it promises: else FAIL. */
		broken = why && kind == SHADOW;
		if (broken)
			ksft_print_msg("FAIL: %s\n", why);
		else if (!why)
			result = run_case(&b, tc);
		buf_destroy(&b);
	}
	if (why && !broken)
		ksft_test_result_code(KSFT_SKIP, name, "%s", why);
	else
		ksft_test_result_code(result, name, NULL);
}

/*
 * Does gup_test have what this test needs? Skips the whole test where it
 * lacks GUP_FAST_VERDICT (EINVAL or ENOTTY), GUP-fast or its mapping
 * (ENODEV). One that cannot ask about pins (older; no tracing) still
 * answers read and write through FOLL_GET.
 */
static void check_gup_test(void)
{
	struct gup_fast_verdict args = { .size = psize(), .flags = PIN };
	const char *what;
	struct buf b;

	if (buf_create(&b, ANON, true, &what))
		ksft_exit_fail_msg("anon buffer: %s: %s\n", what, strerror(errno));
	args.addr = (unsigned long)b.addr;
	if (ioctl(gup_fd, GUP_FAST_VERDICT, &args)) {
		ksft_print_msg("GUP_FAST_VERDICT with FOLL_PIN: %s: FOLL_GET only\n",
			       strerror(errno));
		can_pin = false;
		args.flags = 0;
	}
	if (!can_pin && ioctl(gup_fd, GUP_FAST_VERDICT, &args)) {
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
 * The witness proves itself: pages never touched are not there for
 * GUP-fast, so a pin of each must take the slow path and read slow.
 */
static void check_witness(void)
{
	const char *what;
	struct buf b;
	long fast;

	if (!can_pin)
		return;
	if (buf_create(&b, ANON, false, &what))
		ksft_exit_fail_msg("anon buffer: %s: %s\n", what, strerror(errno));
	fast = verdict(&b, PIN, 0);
	buf_destroy(&b);
	if (fast)
		ksft_exit_fail_msg("witness: %ld/%d pages never touched read as GUP-fast (%s)\n",
				   fast, NR_PAGES, fast < 0 ? strerror(errno) : "broken");
	ksft_print_msg("witness: proven (%d pages never touched read slow)\n", NR_PAGES);
}

/*
 * The anon THP the thp row maps: a PMD where it maps at most MAX_LEN, else
 * the largest smaller THP size (mTHP; a 64K-page PMD is 512 MiB), enabled
 * for MADV_HUGEPAGE until exit. NULL, or why there is none.
 */
static const char *thp_setup(void)
{
	unsigned long orders = thp_supported_orders();
	struct thp_settings settings;
	int order;

	thp_size = read_pmd_pagesize();
	if (!thp_size)
		return "no THP here (CONFIG_TRANSPARENT_HUGEPAGE)";
	if (thp_size <= MAX_LEN)
		return NULL;
	for (order = NR_ORDERS - 1; order > 0; order--)
		if ((orders & (1UL << order)) && (psize() << order) <= MAX_LEN)
			break;
	if (!order)
		return "a PMD maps more than 32 MiB here, and no smaller THP size (mTHP) exists";
	thp_size = psize() << order;
	thp_save_settings();
	thp_read_settings(&settings);
	settings.hugepages[order].enabled = THP_MADVISE;
	thp_push_settings(&settings);
	return NULL;
}

/*
 * The hugetlb page the hugetlb row maps: the default size where it maps at
 * most MAX_LEN, else the largest size that does (a 64K-page kernel's
 * default is a 512 MiB PMD, its contiguous-PTE 2 MiB fits); one is reserved
 * until exit. NULL, or why there is none.
 */
static const char *hugetlb_setup_one(void)
{
	unsigned long sizes[16];
	int i, nr;

	hugetlb_save_settings();
	hpage_size = default_huge_page_size();
	if (!hpage_size)
		return "no hugetlb here (CONFIG_HUGETLBFS)";
	if (hpage_size > MAX_LEN) {
		nr = detect_hugetlb_page_sizes(sizes, ARRAY_SIZE(sizes));
		for (i = 0, hpage_size = 0; i < nr; i++)
			if (sizes[i] <= MAX_LEN && sizes[i] > hpage_size)
				hpage_size = sizes[i];
	}
	if (!hpage_size)
		return "every huge page maps more than 32 MiB here";
	if (!hugetlb_free_pages(hpage_size))
		hugetlb_set_nr_pages(hpage_size, hugetlb_nr_pages(hpage_size) + 1);
	if (!hugetlb_free_pages(hpage_size))
		return "no free huge page, none could be reserved";
	return NULL;
}

/* Which backings cannot be used at all here, and why. */
static void check_backings(void)
{
	rlim_t need = NR_PAGES * psize() + psize();
	static char why[NR_BACKINGS][96];
	enum backing kind;
	const char *what;
	struct rlimit rl;
	struct buf b;

	/* secretmem pages count against RLIMIT_MEMLOCK: over it, a fault is SIGBUS. */
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < need) {
		rl.rlim_cur = need;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
			rl.rlim_max = need;
		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			no_backing[SECRETMEM] = "RLIMIT_MEMLOCK too low and cannot be raised";
	}
	no_backing[THP] = thp_setup();
	no_backing[HUGETLB] = hugetlb_setup_one();
	for (kind = 0; kind < NR_BACKINGS; kind++) {
		if (kind == SHADOW || no_backing[kind])
			continue;
		if (!buf_create(&b, kind, false, &what)) {
			buf_destroy(&b);
			continue;
		}
		snprintf(why[kind], sizeof(why[kind]), "%s: %s", what, strerror(errno));
		no_backing[kind] = why[kind];
	}
}

int main(void)
{
	enum backing kind;
	enum test_case tc;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root: gup_test, /proc/kpageflags, ramfs\n");
	gup_fd = open(GUP_TEST_FILE, O_RDWR);
	if (gup_fd < 0)
		ksft_exit_skip("%s: %s (CONFIG_GUP_TEST; modprobe gup_test)\n",
			       GUP_TEST_FILE, strerror(errno));
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		ksft_exit_skip("/proc/self/pagemap: %s\n", strerror(errno));
	kpageflags_fd = open("/proc/kpageflags", O_RDONLY);
	check_gup_test();
	check_backings();
	ksft_print_msg("page size %u, THP %lu KiB, huge page %lu KiB, %d-page buffers\n",
		       psize(), thp_size >> 10, hpage_size >> 10, NR_PAGES);

	ksft_set_plan(NR_BACKINGS * NR_CASES);
	check_witness();
	for (kind = 0; kind < NR_BACKINGS; kind++)
		for (tc = 0; tc < NR_CASES; tc++)
			run_test(kind, tc);
	if (ksft_get_fail_cnt())
		ksft_exit_fail();
	if (!ksft_get_pass_cnt())
		ksft_exit_skip("no case could be judged here\n");
	ksft_exit_pass();
}
