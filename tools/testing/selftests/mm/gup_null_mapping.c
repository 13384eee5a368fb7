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
 * Which path a pin_user_pages_fast() took: when GUP-fast refuses, the
 * fallback adds FOLL_TOUCH and follow_page_pte() marks a clean page dirty on
 * a write pin; GUP-fast does not. Shadow pages start clean and are only read
 * here, so KPF_DIRTY tells. gup_test's slow-path commands use
 * pin_user_pages(), without FOLL_TOUCH, so the witness cannot be checked
 * beforehand: a fallback that stopped dirtying would fail, never pass.
 * Controls may be refused for a while for unrelated reasons (NUMA hinting,
 * migration): they are touched and asked again. Shadow pages get one ask.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <mm/gup_test.h>
#include "../kselftest.h"

#define MSG_BUG		"GUP-fast rejects NULL-mapping order-0 folios"
#define MSG_WRONGFIX	"FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios went through GUP-fast"
#define MSG_SECRETMEM	"secretmem exposure: GUP-fast reached memfd_secret pages"
#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"
#define NR_PAGES	512
#define MAX_TRIES	10
#define FOLL_WRITE	0x01	/* as in include/linux/mm_types.h */
#define KPF_DIRTY_BIT	4	/* include/uapi/linux/kernel-page-flags.h */
#ifndef __NR_memfd_secret
#define __NR_memfd_secret	-1	/* not on this architecture: ENOSYS */
#endif

enum backing { ANON, MEMFD, SHADOW, SECRETMEM, NR_BACKINGS };
static const char * const backing_names[] = { "anon", "memfd", "shadow", "secretmem" };
/* What a wrong read or write verdict means, per backing. */
static const char * const verdict_msgs[] = { [SHADOW] = MSG_BUG, [SECRETMEM] = MSG_SECRETMEM };

enum test_case { READ, WRITE, LONGTERM_WRITE, NR_CASES };
static const char * const case_names[] = { "read", "write", "longterm_write" };

/* What the anon control says about GUP-fast on this kernel. */
static enum { GATE_OK, GATE_NO_GUP_FAST, GATE_CONTROL_REFUSED } gate;
static size_t pagesize;
static int gup_fd = -1, pagemap_fd = -1, kpageflags_fd = -1;

struct buf {
	char *addr;
	int fd;
	enum backing kind;
};

static void buf_destroy(struct buf *b)
{
	munmap(b->addr, NR_PAGES * pagesize);
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

/* Map and touch NR_PAGES of @kind; 0, or -1 with *@what naming the step. */
static int buf_create(struct buf *b, enum backing kind, const char **what)
{
	size_t len = NR_PAGES * pagesize;
	int flags = MAP_SHARED;
	unsigned long i;

	*b = (struct buf){ .fd = -1, .kind = kind };
	*what = "open()";
	if (kind == ANON) {
		flags = MAP_PRIVATE | MAP_ANONYMOUS;
	} else if (kind == SHADOW) {
		b->fd = open(GUP_TEST_FILE, O_RDWR);
	} else if (kind == MEMFD) {
		b->fd = memfd_create("gup_null_mapping", 0);
	} else {
		*what = "memfd_secret()";
		b->fd = syscall(__NR_memfd_secret, 0);
	}
	if (kind != ANON && b->fd < 0)
		return -1;
	*what = "ftruncate()";
	if (kind != ANON && kind != SHADOW && ftruncate(b->fd, len))
		goto fail;
	*what = "mmap()";
	b->addr = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, b->fd, 0);
	if (b->addr == MAP_FAILED)
		goto fail;
	if (kind == ANON)	/* order-0, as the shadow pages are */
		madvise(b->addr, len, MADV_NOHUGEPAGE);
	for (i = 0; i < NR_PAGES; i++)
		touch(b, i);
	return 0;
fail:
	if (b->fd >= 0)
		close(b->fd);
	return -1;
}

/*
 * How many pages of @b GUP-fast takes. Pages of a control it refused are
 * touched and asked about again, up to MAX_TRIES times in all, while fewer
 * than @want were ever taken. Returns the count, or -1 with errno set.
 */
static long verdict(struct buf *b, __u32 gup_flags, long want)
{
	unsigned char v[NR_PAGES], ever[NR_PAGES] = { 0 };
	struct gup_fast_verdict args = {
		.addr = (unsigned long)b->addr, .size = NR_PAGES * pagesize,
		.verdicts = (unsigned long)v, .gup_flags = gup_flags,
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

/* How many pages of @b are dirty (KPF_DIRTY); -1 with errno set. */
static long nr_dirty(struct buf *b)
{
	uint64_t entry, flags;
	long i, dirty = 0;

	for (i = 0; i < NR_PAGES; i++) {
		unsigned long vpn = (unsigned long)b->addr / pagesize + i;

		errno = EIO;	/* a short read, or a page not present */
		if (pread(pagemap_fd, &entry, 8, vpn * 8) != 8 ||
		    !(entry & (1ULL << 63)) ||
		    pread(kpageflags_fd, &flags, 8,
			  (entry & ((1ULL << 55) - 1)) * 8) != 8)
			return -1;
		dirty += (flags >> KPF_DIRTY_BIT) & 1;
	}
	return dirty;
}

/*
 * Pin and unpin all of @b for writing with pin_user_pages_fast(): with
 * FOLL_LONGTERM for PIN_LONGTERM_TEST_START, without for PIN_FAST_BENCHMARK;
 * -1 with errno set.
 */
static int pin(struct buf *b, unsigned long cmd)
{
	struct pin_longterm_test lt = {
		.addr = (unsigned long)b->addr, .size = NR_PAGES * pagesize,
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

/* Pages of a fresh shadow buffer a pin dirtied: NR_PAGES on the slow path. */
static long pin_dirtied(unsigned long cmd)
{
	const char *what;
	struct buf b;
	long ret;

	if (buf_create(&b, SHADOW, &what))
		return -1;
	ret = nr_dirty(&b);
	if (ret > 0) {		/* not clean to begin with: no witness */
		errno = ENOTRECOVERABLE;
		ret = -1;
	} else if (!ret) {
		ret = pin(&b, cmd) ? -1 : nr_dirty(&b);
	}
	buf_destroy(&b);
	return ret;
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
		fast = verdict(b, tc == WRITE ? FOLL_WRITE : 0, want);
		if (fast < 0)
			ksft_print_msg("GUP_FAST_VERDICT: %s\n", strerror(errno));
		ret = expect(b->kind, case_names[tc], fast, want, verdict_msgs[b->kind]);
		if (ret || b->kind != SHADOW || tc == READ)
			return ret;
	}
	/* Shadow pins: dirtied, through the slow path; clean, through GUP-fast. */
	fast = NR_PAGES - pin_dirtied(tc == WRITE ? PIN_FAST_BENCHMARK :
				      PIN_LONGTERM_TEST_START);
	if (fast > NR_PAGES) {
		ksft_print_msg("pin: %s\n", strerror(errno));
		return KSFT_FAIL;
	}
	return tc == WRITE ? expect(SHADOW, "pin_write", fast, NR_PAGES, MSG_BUG) :
	       expect(SHADOW, case_names[tc], fast, 0, MSG_WRONGFIX);
}

static void run_test(enum backing kind, enum test_case tc)
{
	int result = KSFT_FAIL;
	const char *what;
	char name[64];
	struct buf b;

	snprintf(name, sizeof(name), "verdict_%s_%s", backing_names[kind],
		 case_names[tc]);
	ksft_print_msg("[RUN] %s\n", name);
	if (gate == GATE_NO_GUP_FAST || (gate && kind != ANON)) {
		ksft_test_result_code(KSFT_SKIP, name, "%s", gate == GATE_NO_GUP_FAST ?
				      "no GUP-fast in this kernel" :
				      "the anon control was refused");
		return;
	}
	if (buf_create(&b, kind, &what)) {
		/* No secretmem here (CONFIG_SECRETMEM, secretmem.enable). */
		if (kind == SECRETMEM) {
			ksft_test_result_code(KSFT_SKIP, name, "%s: %s", what,
					      strerror(errno));
			return;
		}
		ksft_print_msg("%s: %s\n", what, strerror(errno));
	} else {
		result = run_case(&b, tc);
		buf_destroy(&b);
	}
	ksft_test_result_code(result, name, NULL);
}

/* The anon control: does GUP-fast work on this kernel at all? */
static void check_gate(void)
{
	const char *what;
	struct buf b;
	long fast;

	if (buf_create(&b, ANON, &what))
		ksft_exit_fail_msg("anon control: %s: %s\n", what, strerror(errno));
	fast = verdict(&b, FOLL_WRITE, NR_PAGES);
	buf_destroy(&b);
	if (fast == NR_PAGES)
		return;
	if (fast < 0 && errno == EOPNOTSUPP) {
		gate = GATE_NO_GUP_FAST;
		ksft_print_msg("GUP_FAST_VERDICT: no CONFIG_HAVE_GUP_FAST here\n");
		return;
	}
	gate = GATE_CONTROL_REFUSED;
	ksft_print_msg("anon control refused: %ld/%d pages via GUP-fast\n",
		       fast, NR_PAGES);
}

int main(void)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	enum backing kind;
	enum test_case tc;

	pagesize = getpagesize();
	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root: gup_test, /proc/kpageflags\n");
	gup_fd = open(GUP_TEST_FILE, O_RDWR);
	if (gup_fd < 0)
		ksft_exit_skip("%s: %s (CONFIG_GUP_TEST; modprobe gup_test)\n",
			       GUP_TEST_FILE, strerror(errno));
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	kpageflags_fd = pagemap_fd < 0 ? -1 : open("/proc/kpageflags", O_RDONLY);
	if (kpageflags_fd < 0)
		ksft_exit_skip("/proc/kpageflags: %s (CONFIG_PROC_PAGE_MONITOR)\n",
			       strerror(errno));
	/*
	 * secretmem pages count against RLIMIT_MEMLOCK and a fault over it is
	 * SIGBUS: 512 pages of 64K are four times the default limit.
	 */
	if (setrlimit(RLIMIT_MEMLOCK, &unlimited))
		ksft_exit_fail_msg("setrlimit(RLIMIT_MEMLOCK): %s\n", strerror(errno));
	ksft_print_msg("page size %zu, %d pages per buffer\n", pagesize, NR_PAGES);

	ksft_set_plan(NR_BACKINGS * NR_CASES);
	check_gate();
	for (kind = 0; kind < NR_BACKINGS; kind++)
		for (tc = 0; tc < NR_CASES; tc++)
			run_test(kind, tc);
	ksft_finished();
}
