// SPDX-License-Identifier: GPL-2.0
/*
 * gup_fast_folio_allowed()'s table: anonymous order-0 and THP, hugetlb, memfd,
 * ramfs, gup_test's driver pages (vm_insert_page(), NULL ->mapping) and
 * memfd_secret, each asked of GUP-fast alone (GUP_FAST_VERDICT) for a FOLL_PIN
 * read, write and long-term write. GUP-fast takes all but secretmem and
 * long-term writable pins of folios that may need dirty tracking (not shmem
 * files, NULL mappings): the driver pages' is what it decides today, no promise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/mount.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <mm/gup_test.h>
#include "kselftest.h"
#include "vm_util.h"
#include "hugepage_settings.h"

#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"
#define NR_PAGES	512
#define MAX_LEN		(32UL << 20)	/* the largest buffer */
#define MAX_TRIES	10
#define KPF_LARGE	(KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL | KPF_THP)
#ifndef __NR_memfd_secret
#define __NR_memfd_secret	-1	/* not on this architecture */
#endif
#define LONGTERM_FAST(what) "FOLL_LONGTERM|FOLL_WRITE pin of " what " went through GUP-fast"

enum { ANON, THP, HUGETLB, MEMFD, FILE_RAMFS, DRIVER, SECRETMEM, NR_BACKINGS };

static int gup_fd, pagemap_fd, kpageflags_fd;
/* Set up once by main(): the sizes used, and why a backing cannot be had. */
static size_t thp_size, hpage_size;
static const char *unavailable[NR_BACKINGS];

static const struct backing {
	const char *name;
	size_t *size;		/* one folio of this size, or NR_PAGES pages */
	int mmap_flags;		/* MAP_SHARED: a file (backing_open()) */
	uint64_t all, none;	/* kpageflags every page has, no page has */
	bool secret;		/* GUP-fast must never take it */
	bool dirty_tracked;	/* nor long-term writable pins of it */
	bool driver;		/* gup_test's own pages: one try, no SKIP */
	const char *refused, *longterm;	/* what a wrong verdict means */
} backings[] = {
	[ANON] = { "anon", NULL, MAP_PRIVATE, KPF_ANON, KPF_LARGE },
	[THP] = { "thp", &thp_size, MAP_PRIVATE, KPF_ANON | KPF_THP },
	[HUGETLB] = { "hugetlb", &hpage_size, MAP_PRIVATE | MAP_HUGETLB, KPF_HUGE },
	[MEMFD] = { "memfd", NULL, MAP_SHARED, 0, KPF_ANON | KPF_LARGE },
	[FILE_RAMFS] = { "file", NULL, MAP_SHARED, 0, KPF_ANON | KPF_LARGE, .dirty_tracked = true,
		.longterm = LONGTERM_FAST("page cache needing dirty tracking") },
	[DRIVER] = { "driver", NULL, MAP_SHARED, 0, KPF_ANON | KPF_LRU | KPF_LARGE,
		.dirty_tracked = true, .driver = true,
		.refused = "GUP-fast rejects NULL-mapping order-0 folios",
		.longterm = LONGTERM_FAST("NULL-mapping folios") },
	[SECRETMEM] = { "secretmem", NULL, MAP_SHARED, 0, KPF_ANON | KPF_LARGE, .secret = true,
		.longterm = "secretmem exposure: GUP-fast reached memfd_secret pages" },
};

static const char * const pin_names[] = { "read", "write", "longterm_write" };
#define PIN_WRITE	(GUP_FAST_VERDICT_FLAG_PIN | GUP_FAST_VERDICT_FLAG_WRITE)
static const __u32 pin_flags[] = { GUP_FAST_VERDICT_FLAG_PIN, PIN_WRITE,
				   PIN_WRITE | GUP_FAST_VERDICT_FLAG_LONGTERM };

struct buf {
	char *map, *addr;
	size_t map_len, len;
	int fd;
};

/* The file @kind maps: a new one, or -1 with errno set. */
static int backing_open(int kind)
{
	int fs, mnt = -1, fd = -1;

	switch (kind) {
	case MEMFD:
		return memfd_create("gup_null_mapping", 0);
	case DRIVER:
		return open(GUP_TEST_FILE, O_RDWR);
	case SECRETMEM:
		return syscall(__NR_memfd_secret, 0);
	}
	/* FILE_RAMFS: on a detached mount (fsopen(), fsmount()), no directory */
	fs = syscall(__NR_fsopen, "ramfs", 0);
	if (fs >= 0 && !syscall(__NR_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		mnt = syscall(__NR_fsmount, fs, 0, 0);
	if (mnt >= 0) {
		fd = openat(mnt, "f", O_RDWR | O_CREAT, 0600);
		close(mnt);
	}
	if (fs >= 0)
		close(fs);
	return fd;
}

/* Map @kind's buffer, touch its first or all pages: 0, or -1 with errno set. */
static int buf_create(struct buf *b, int kind, bool populate)
{
	const struct backing *bk = &backings[kind];
	int flags = bk->mmap_flags;
	size_t i;

	*b = (struct buf){ .map = MAP_FAILED, .fd = -1,
			   .len = bk->size ? *bk->size : NR_PAGES * psize() };
	/* A THP: the naturally aligned folio inside a mapping twice as long. */
	b->map_len = bk->size == &thp_size ? 2 * b->len : b->len;
	if (flags & MAP_HUGETLB)
		flags |= __builtin_ctzl(b->len) << MAP_HUGE_SHIFT;
	if (flags & MAP_SHARED) {
		b->fd = backing_open(kind);
		if (b->fd < 0 || (!bk->driver && ftruncate(b->fd, b->len)))
			return -1;
	} else {
		flags |= MAP_ANONYMOUS;
	}
	b->map = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, flags, b->fd, 0);
	if (b->map == MAP_FAILED)
		return -1;
	b->addr = b->map;
	if (bk->size == &thp_size) {
		b->addr = (char *)(((uintptr_t)b->map + b->len - 1) & ~(b->len - 1));
		if (madvise(b->addr, b->len, MADV_HUGEPAGE))
			return -1;
	}
	for (i = 0; i < (populate ? b->len / psize() : 1); i++)
		b->addr[i * psize()] = 1;
	return 0;
}

static void buf_destroy(struct buf *b)
{
	if (b->map != MAP_FAILED)
		munmap(b->map, b->map_len);
	if (b->fd >= 0)
		close(b->fd);
}

/* Is @b what @bk is about (kpageflags)? NULL, or why not. */
static const char *premise(const struct backing *bk, struct buf *b)
{
	uint64_t flags, and = -1ULL, or = 0;
	unsigned long i, pfn;
	static char why[128];
	int tries;

	if (kpageflags_fd < 0)
		return "no /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)";
	for (i = 0; i < b->len / psize(); i++) {
		/* A page under migration (NUMA balancing) is away, or moves: again. */
		for (tries = 0; tries < MAX_TRIES; tries++, usleep(1000)) {
			pfn = pagemap_get_pfn(pagemap_fd, b->addr + i * psize());
			if (pfn != -1UL && !pageflags_get(pfn, kpageflags_fd, &flags) &&
			    pfn == pagemap_get_pfn(pagemap_fd, b->addr + i * psize()))
				break;
		}
		if (tries == MAX_TRIES)
			return "a page is not in /proc/self/pagemap or /proc/kpageflags";
		and &= flags;
		or |= flags;
	}
	if ((and & bk->all) == bk->all && !(or & bk->none))
		return NULL;
	snprintf(why, sizeof(why), "%s pages not as needed: kpageflags lack %#llx, have %#llx",
		 bk->name, (unsigned long long)(bk->all & ~and),
		 (unsigned long long)(or & bk->none));
	return why;
}

/*
 * GUP-fast's count of @b's pages for @flags, or -1 with errno set; refused pages are
 * touched and asked again (@tries asks in all, in *@asks) while fewer than @want.
 */
static long verdict(struct buf *b, __u32 flags, long want, int tries, int *asks)
{
	unsigned long i, nr = b->len / psize();
	unsigned char *v = calloc(2, nr), *ever = v + nr;
	struct gup_fast_verdict args = {
		.addr = (uintptr_t)b->addr, .size = b->len,
		.verdicts = (uintptr_t)v, .flags = flags,
	};
	long fast = -1;

	for (*asks = 1; v; (*asks)++, usleep(1000)) {
		fast = -1;
		if (ioctl(gup_fd, GUP_FAST_VERDICT, &args))
			break;
		for (i = 0, fast = 0; i < nr; i++)
			fast += ever[i] |= v[i];
		if (fast >= want || *asks == tries)
			break;
		for (i = 0; i < nr; i++)
			if (!ever[i])
				b->addr[i * psize()] = 1;
	}
	free(v);
	return fast;
}

/* KSFT_PASS or KSFT_FAIL, saying why; KSFT_SKIP where gup_test cannot ask. */
static int judge(const struct backing *bk, int tc, struct buf *b)
{
	bool longterm = pin_flags[tc] & GUP_FAST_VERDICT_FLAG_LONGTERM;
	long nr = b->len / psize(), want = bk->secret || (longterm && bk->dirty_tracked) ? 0 : nr;
	int asks;
	long fast = verdict(b, pin_flags[tc], want, bk->driver ? 1 : MAX_TRIES, &asks);

	if (fast < 0 && errno != EOPNOTSUPP)
		ksft_print_msg("GUP_FAST_VERDICT: %s\n", strerror(errno));
	if (fast < 0)
		return errno == EOPNOTSUPP ? KSFT_SKIP : KSFT_FAIL;
	ksft_print_msg("verdict %s %s: %ld/%ld pages via GUP-fast (expected %ld, %d %s)\n",
		       bk->name, pin_names[tc], fast, nr, want, asks, asks > 1 ? "tries" : "try");
	if (fast == want)
		return KSFT_PASS;
	ksft_print_msg("FAIL: %s\n", fast > want ? bk->longterm : bk->refused ?:
		       "GUP-fast refused these pages: gup_fast_folio_allowed() regressed");
	return KSFT_FAIL;
}

static void run_cell(int kind, int tc)
{
	const struct backing *bk = &backings[kind];
	const char *why = unavailable[kind];
	struct buf b = { .map = MAP_FAILED, .fd = -1 };
	int result = KSFT_SKIP;
	char name[64];

	snprintf(name, sizeof(name), "verdict_%s_%s", bk->name, pin_names[tc]);
	ksft_print_msg("[RUN] %s\n", name);
	if (!why && buf_create(&b, kind, true)) {
		ksft_print_msg("%s buffer: %s\n", bk->name, strerror(errno));
		result = KSFT_FAIL;
	} else if (!why) {
		why = premise(bk, &b);
		if (why && bk->driver && kpageflags_fd >= 0) {
			/* gup_test's own pages must be what it promises. */
			ksft_print_msg("FAIL: gup_test's pages: %s\n", why);
			result = KSFT_FAIL;
			why = NULL;
		} else if (!why || bk->driver) {
			result = judge(bk, tc, &b);
			why = result == KSFT_SKIP ? "GUP_FAST_VERDICT: EOPNOTSUPP" : NULL;
		}
	}
	buf_destroy(&b);
	ksft_test_result_code(result, name, why ? "%s" : NULL, why);
}

/* Only the thp row's may be a THP: a PMD, else (64K pages) the smallest mTHP; restored at exit. */
static const char *thp_setup(void)
{
	unsigned long orders = thp_supported_orders();
	size_t pmd_size = read_pmd_pagesize();
	bool madv = !madvise(NULL, 0, MADV_NORMAL);
	struct thp_settings s;
	int i;

	if (!thp_available() || !pmd_size)
		return "no THP here (CONFIG_TRANSPARENT_HUGEPAGE)";
	thp_size = pmd_size <= MAX_LEN ? pmd_size : orders ? psize() << (ffsl(orders) - 1) : 0;
	thp_save_settings();
	thp_read_settings(&s);
	s.thp_enabled = madv && thp_size == pmd_size ? THP_MADVISE : THP_NEVER;
	s.shmem_enabled = SHMEM_NEVER;
	for (i = 0; i < NR_ORDERS; i++) {
		s.hugepages[i].enabled = madv && thp_size == psize() << i ? THP_MADVISE : THP_NEVER;
		s.shmem_hugepages[i].enabled = SHMEM_NEVER;
	}
	thp_push_settings(&s);
	return !madv ? "no madvise() here (CONFIG_ADVISE_SYSCALLS)" :
	       thp_size ? NULL : "a PMD maps more than 32 MiB, and there is no mTHP";
}

/* One huge page of the default size, else of the largest that fits. */
static const char *hugetlb_reserve(void)
{
	unsigned long sizes[8];
	int i, nr;

	hpage_size = default_huge_page_size();
	if (!hpage_size)
		return "no hugetlb here (CONFIG_HUGETLBFS)";
	if (hpage_size <= MAX_LEN)
		return hugetlb_setup_default(1) ? NULL : "no free huge page could be reserved";
	nr = hugetlb_setup(1, sizes, ARRAY_SIZE(sizes));
	for (i = 0, hpage_size = 0; i < nr; i++)
		if (sizes[i] <= MAX_LEN && sizes[i] > hpage_size)
			hpage_size = sizes[i];
	return hpage_size ? NULL : "no huge page of 32 MiB or less could be reserved";
}

int main(void)
{
	struct buf b;
	size_t i, j;
	int asks, fd;
	long fast;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root: gup_test, /proc/kpageflags, ramfs\n");
	gup_fd = open(GUP_TEST_FILE, O_RDWR);
	if (gup_fd < 0)
		ksft_exit_skip("%s: %s (CONFIG_GUP_TEST)\n", GUP_TEST_FILE, strerror(errno));
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	kpageflags_fd = pagemap_fd < 0 ? -1 : open("/proc/kpageflags", O_RDONLY);

	unavailable[THP] = thp_setup();
	/* Is the command here, and can it say no to pages never touched? */
	if (buf_create(&b, ANON, false))
		ksft_exit_fail_msg("anonymous buffer: %s\n", strerror(errno));
	fast = verdict(&b, PIN_WRITE, 0, 1, &asks);
	if (fast < 0 && errno == EOPNOTSUPP)	/* no pins here: ask the rest */
		fast = verdict(&b, 0, 0, 1, &asks);
	if (fast < 0 && (errno == ENOTTY || errno == EINVAL))
		ksft_exit_skip("gup_test lacks GUP_FAST_VERDICT (%#lx): %s\n",
			       (unsigned long)GUP_FAST_VERDICT, strerror(errno));
	if (fast < 0 && errno == EOPNOTSUPP)
		ksft_exit_skip("GUP_FAST_VERDICT: EOPNOTSUPP (no GUP-fast here)\n");
	if (fast < 0 || fast > 1)
		ksft_exit_fail_msg("GUP_FAST_VERDICT took %ld of %d pages, 1 present: %s\n",
				   fast, NR_PAGES, fast < 0 ? strerror(errno) : "it cannot say no");
	buf_destroy(&b);

	/* secretmem pages count against RLIMIT_MEMLOCK: over it, a fault is SIGBUS. */
	setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ RLIM_INFINITY, RLIM_INFINITY });
	unavailable[HUGETLB] = hugetlb_reserve();
	fd = syscall(__NR_memfd_secret, 0);
	if (fd < 0)
		ksft_print_msg("memfd_secret(): %s\n", strerror(errno));
	unavailable[SECRETMEM] = fd < 0 ? "memfd_secret() is not available here" : NULL;
	close(fd);
	ksft_print_msg("page size %u, THP %zu KiB, huge page %zu KiB, %d-page buffers\n",
		       psize(), thp_size >> 10, hpage_size >> 10, NR_PAGES);
	ksft_set_plan(ARRAY_SIZE(backings) * ARRAY_SIZE(pin_flags));
	for (i = 0; i < ARRAY_SIZE(backings); i++)
		for (j = 0; j < ARRAY_SIZE(pin_flags); j++)
			run_cell(i, j);
	ksft_finished();
}
