// SPDX-License-Identifier: GPL-2.0
/*
 * gupnm_probe -t: gup_null_mapping's GUP-fast table without a module.
 *
 * Rows: the test's backings (anon order-0, THP, hugetlb, memfd, a ramfs
 * file, a vm_insert_page() page from af_packet's TX ring, secretmem).
 * Columns: in-kernel GUP users with the test's FOLL flags, one page a call:
 *   read            vmsplice() into a pipe: get_user_pages_fast(0)
 *   write           non-private FUTEX_WAKE: get_user_pages_fast(FOLL_WRITE)
 *   longterm_write  io_uring buffer registration:
 *                   pin_user_pages_fast(FOLL_WRITE | FOLL_LONGTERM)
 * Witness: the mmap_lock_start_locking tracepoint, through a tracefs
 * instance of our own that records only this task. GUP-fast never takes the
 * mmap_lock and the slow path always does, which is what GUP_FAST_VERDICT
 * asks the same tracepoint inside the kernel.
 *
 * Premises, proven before a cell counts: never-touched anon pages must read
 * slow (else the witness is blind and every cell fails); each row's pages
 * are what the row says (kpageflags, VmFlags, statfs); and each column's
 * anon cell, which every rule lets through GUP-fast, must come out fast, or
 * the column's trigger takes the mmap_lock itself (io_uring pinned under it
 * before 6.5) and the column is skipped, saying so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "probe.h"

#ifndef __NR_memfd_secret
#define __NR_memfd_secret	447
#endif

enum { READ, WRITE, LONGTERM, NR_COLS };
static const char *const col_name[NR_COLS] = { "read", "write", "longterm_write" };

struct row {
	const char *name;
	int (*map)(struct mapping *m, char *why, size_t len);
	unsigned int slow;	/* columns the rules send to the slow path */
};

static struct {
	char dir[300];		/* our tracefs instance */
	char root[64];		/* tracefs, mounted by us when root[0] */
	int pipe[2];
	int ring;
} tr = { .pipe = { -1, -1 }, .ring = -1 };

static int write_file(const char *dir, const char *file, const char *text)
{
	char path[400];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* mmap_lock_start_locking events recorded since the last call (-errno). */
static int lock_events(void)
{
	char path[400], buf[4096];
	int fd, n = 0, bol = 1;
	ssize_t got, i;

	snprintf(path, sizeof(path), "%s/trace", tr.dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < got; i++) {
			n += bol && buf[i] != '#' && buf[i] != '\n';
			bol = buf[i] == '\n';
		}
	close(fd);
	if (got < 0)
		return -errno;
	return write_file(tr.dir, "trace", "") ?: n;
}

static int tracer_start(char *why, size_t len)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	const char *root = NULL;
	char pid[32], path[400];
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(roots) && !root; i++) {
		snprintf(path, sizeof(path), "%s/instances", roots[i]);
		if (!access(path, F_OK))
			root = roots[i];
	}
	if (!root) {
		if (mount("tracefs", roots[0], "tracefs", 0, NULL)) {
			snprintf(why, len, "no tracefs (mount on %s: %s; CONFIG_TRACING off?)",
				 roots[0], strerror(errno));
			return KSFT_SKIP;
		}
		root = roots[0];
		snprintf(tr.root, sizeof(tr.root), "%s", root);
	}
	snprintf(tr.dir, sizeof(tr.dir), "%s/instances/gupnm_probe_%d", root,
		 (int)getpid());
	if (mkdir(tr.dir, 0700)) {
		snprintf(why, len, "mkdir %s: %s", tr.dir, strerror(errno));
		tr.dir[0] = '\0';
		return -EIO;
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	ret = write_file(tr.dir, "set_event_pid", pid);
	if (!ret)
		ret = write_file(tr.dir, "events/mmap_lock/mmap_lock_start_locking/enable", "1");
	if (ret == -ENOENT) {
		snprintf(why, len, "no mmap_lock tracepoint in %s (before 5.10?)", root);
		return KSFT_SKIP;
	}
	if (ret) {
		snprintf(why, len, "tracefs instance %s: %s", tr.dir, strerror(-ret));
		return -EIO;
	}
	return lock_events() < 0 ? -EIO : 0;
}

static void tracer_stop(void)
{
	if (tr.dir[0] && rmdir(tr.dir))
		msg("table: rmdir %s: %s\n", tr.dir, strerror(errno));
	if (tr.root[0])
		umount(tr.root);
}

/* One page through a column's GUP user; 0 or -errno. */
static int trigger(int col, volatile uint32_t *page)
{
	struct iovec iov = { (void *)page, page_size };
	static char buf[65536];
	ssize_t n;
	int ret;

	switch (col) {
	case READ:
		n = vmsplice(tr.pipe[1], &iov, 1, 0);
		if (n < 0)
			return -errno;
		while (n > 0) {
			ret = read(tr.pipe[0], buf, sizeof(buf));
			if (ret <= 0)
				return ret ? -errno : -EIO;
			n -= ret;
		}
		return 0;
	case WRITE:
		return futex_wake(page);
	default:
		if (syscall(__NR_io_uring_register, tr.ring, IORING_REGISTER_BUFFERS, &iov, 1))
			return -errno;
		syscall(__NR_io_uring_register, tr.ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
		return 0;
	}
}

/*
 * Each page of @m through @col's trigger; into @fast, how many took no
 * mmap_lock. A trigger that failed without taking it never reached GUP, so
 * it is an error (a NULL-mapping page's FUTEX_WAKE fails after its GUP).
 */
static int cell(struct mapping *m, int col, unsigned int *fast, char *why, size_t len)
{
	unsigned int i;
	int ret, events;

	*fast = 0;
	for (i = 0; i < m->nr_pages; i++) {
		events = lock_events();
		if (events >= 0) {
			ret = trigger(col, m->page[i]);
			events = lock_events();
		}
		if (events < 0) {
			snprintf(why, len, "reading %s/trace: %s", tr.dir, strerror(-events));
			return -EIO;
		}
		if (!events && ret && !(ret == -EFAULT && col == WRITE)) {
			snprintf(why, len, "page %u: the %s trigger failed without taking the mmap_lock: %s",
				 i, col_name[col], strerror(-ret));
			return -EIO;
		}
		*fast += !events;
	}
	return 0;
}

/* The number after @key in @file (/proc/meminfo, sysfs), 0 if none. */
static unsigned long read_num(const char *file, const char *key)
{
	char line[256];
	unsigned long v = 0;
	FILE *f = fopen(file, "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtoul(line + strlen(key), NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static void *map_len(struct mapping *m, size_t size, int flags, int fd)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, fd, 0);

	return add_region(m, p, size, 0, opt.pages) ? NULL : p;
}

/* Write-touched: present, with writable PTEs, as the write cells need. */
static int touched(struct mapping *m, void *p, const char *what, char *why, size_t len)
{
	unsigned int i;

	if (!p) {
		snprintf(why, len, "mmap(%s): %s", what, strerror(errno));
		return -EIO;
	}
	for (i = 0; i < m->nr_pages; i++)
		m->page[i][0] = 1;
	return 0;
}

/* Every page's kpageflags have all of @set and none of @clear. */
static int kpf_premise(struct mapping *m, uint64_t set, uint64_t clear,
		       const char *what, char *why, size_t len)
{
	uint64_t pfn, f;
	unsigned int i;

	for (i = 0; i < m->nr_pages; i++) {
		if (page_pfn(m->page[i], &pfn) || kpageflags(pfn, &f)) {
			snprintf(why, len, "page %u: no PFN or kpageflags", i);
			return -EIO;
		}
		if ((f & set) != set || (f & clear)) {
			snprintf(why, len, "page %u is not %s (kpageflags %#llx)", i, what,
				 (unsigned long long)f);
			return KSFT_SKIP;
		}
	}
	return 0;
}

#define BIT(n)		(1ULL << (n))
#define NOT_ORDER0	(BIT(KPF_COMPOUND_HEAD) | BIT(KPF_COMPOUND_TAIL) | BIT(KPF_THP) | BIT(KPF_HUGE))

static int map_anon(struct mapping *m, char *why, size_t len)
{
	void *p = map_len(m, opt.pages * page_size, MAP_PRIVATE | MAP_ANONYMOUS, -1);

	if (p)
		madvise(p, opt.pages * page_size, MADV_NOHUGEPAGE);
	return touched(m, p, "anon", why, len) ?:
	       kpf_premise(m, BIT(KPF_ANON), NOT_ORDER0, "order-0 anon", why, len);
}

static int map_thp(struct mapping *m, char *why, size_t len)
{
	size_t pmd = read_num("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "");
	char *p, *a;
	unsigned int i;

	if (!pmd || pmd > (64UL << 20)) {
		snprintf(why, len, pmd ? "THP of %zu MiB: too large for the probe" :
			 "no THP (no hpage_pmd_size)", pmd >> 20);
		return KSFT_SKIP;
	}
	p = mmap(NULL, 2 * pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (add_region(m, p, 2 * pmd, 0, 0))
		return touched(m, NULL, "anon, 2 PMDs", why, len);
	a = (char *)(((uintptr_t)p + pmd - 1) & ~(pmd - 1));
	for (i = 0; i < opt.pages; i++)
		m->page[m->nr_pages++] = (uint32_t *)(a + i * page_size);
	/* The producers' control kept THP away from the whole process. */
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	if (madvise(a, pmd, MADV_HUGEPAGE)) {
		snprintf(why, len, "madvise(MADV_HUGEPAGE): %s (no THP)", strerror(errno));
		return KSFT_SKIP;
	}
	return touched(m, a, "anon THP", why, len) ?:
	       kpf_premise(m, BIT(KPF_ANON) | BIT(KPF_THP), 0, "an anon THP", why, len);
}

static int map_hugetlb(struct mapping *m, char *why, size_t len)
{
	size_t size = read_num("/proc/meminfo", "Hugepagesize:") << 10;
	void *p = size ? map_len(m, size, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1) :
			 NULL;

	if (!p) {
		snprintf(why, len, "mmap(MAP_HUGETLB, %zu KiB): %s (no free huge page: boot with hugepages=1)",
			 size >> 10, size ? strerror(errno) : "no hugetlb");
		return KSFT_SKIP;
	}
	return touched(m, p, "hugetlb", why, len) ?:
	       kpf_premise(m, BIT(KPF_HUGE), 0, "hugetlb", why, len);
}

static int map_fd(struct mapping *m, int fd, const char *what, char *why, size_t len)
{
	if (add_fd(m, fd) || ftruncate(fd, opt.pages * page_size)) {
		snprintf(why, len, "%s: %s", what, strerror(errno));
		return errno == ENOSYS ? KSFT_SKIP : -EIO;
	}
	return touched(m, map_len(m, opt.pages * page_size, MAP_SHARED, fd), what, why, len);
}

static int map_memfd(struct mapping *m, char *why, size_t len)
{
	return map_fd(m, memfd_create("gupnm_table", MFD_CLOEXEC), "memfd", why, len) ?:
	       kpf_premise(m, 0, BIT(KPF_ANON) | BIT(KPF_HUGE), "shmem", why, len);
}

/* A file on a detached ramfs mount: page cache that is not shmem, no disk. */
static int map_file(struct mapping *m, char *why, size_t len)
{
	int fs = syscall(__NR_fsopen, "ramfs", FSOPEN_CLOEXEC), mnt = -1, ret;
	struct statfs st;

	if (fs >= 0 && !syscall(__NR_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		mnt = syscall(__NR_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	if (fs >= 0)
		close(fs);
	if (mnt < 0) {
		snprintf(why, len, "a ramfs mount (fsopen/fsmount): %s", strerror(errno));
		return KSFT_SKIP;
	}
	add_fd(m, mnt);
	ret = map_fd(m, openat(mnt, "f", O_RDWR | O_CREAT | O_CLOEXEC, 0600),
		     "a ramfs file", why, len);
	if (ret)
		return ret;
	if (fstatfs(m->fd[1], &st) || (unsigned int)st.f_type != RAMFS_MAGIC) {
		snprintf(why, len, "the file is not on ramfs");
		return KSFT_SKIP;
	}
	return kpf_premise(m, 0, BIT(KPF_ANON) | NOT_ORDER0, "order-0 page cache", why, len);
}

static int map_shadow(struct mapping *m, char *why, size_t len)
{
	char vmf[256];
	int ret = map_packet(m, why, len);

	if (ret)
		return ret;
	if (vma_flags(m->page[0], vmf, sizeof(vmf)) || !has_vmflag(vmf, "mm")) {
		snprintf(why, len, "af_packet's TX ring is no vm_insert_page() mapping here (VmFlags:%s)",
			 vmf);
		return KSFT_SKIP;
	}
	return kpf_premise(m, 0, BIT(KPF_ANON) | BIT(KPF_SLAB) | NOT_ORDER0,
			   "an order-0 driver page", why, len);
}

static int map_secretmem(struct mapping *m, char *why, size_t len)
{
	int fd = syscall(__NR_memfd_secret, O_CLOEXEC);

	if (fd < 0) {
		snprintf(why, len, "memfd_secret: %s (CONFIG_SECRETMEM off, or secretmem.enable=0)",
			 strerror(errno));
		return KSFT_SKIP;
	}
	return map_fd(m, fd, "memfd_secret", why, len);
}

#define ALL	((1U << READ) | (1U << WRITE) | (1U << LONGTERM))

static const struct row rows[] = {
	{ "anon", map_anon, 0 },
	{ "thp", map_thp, 0 },
	{ "hugetlb", map_hugetlb, 0 },
	{ "memfd", map_memfd, 0 },
	{ "file", map_file, 1U << LONGTERM },
	{ "shadow", map_shadow, 1U << LONGTERM },
	{ "secretmem", map_secretmem, ALL },
};

unsigned int table_cases(void)
{
	return 1 + ARRAY_SIZE(rows) * NR_COLS;
}

static void skip_row(const struct row *r, const char *fmt, const char *why)
{
	char name[64];
	int c;

	for (c = 0; c < NR_COLS; c++) {
		snprintf(name, sizeof(name), "table_%s_%s", r->name, col_name[c]);
		result(KSFT_SKIP, name, fmt, why);
	}
}

/* Never-touched anon pages fault in on the slow path: it must be seen. */
static int witness(char *why, size_t len)
{
	struct mapping m = { 0 };
	unsigned int fast;
	int ret;

	if (!map_len(&m, opt.pages * page_size, MAP_PRIVATE | MAP_ANONYMOUS, -1)) {
		snprintf(why, len, "mmap: %s", strerror(errno));
		return -EIO;
	}
	ret = cell(&m, READ, &fast, why, len);
	unmap_all(&m);
	if (ret)
		return ret;
	msg("table witness: %u/%u never-touched anon pages read via the slow path\n",
	    opt.pages - fast, opt.pages);
	if (!fast)
		return 0;
	snprintf(why, len, "the mmap_lock tracepoint saw no slow path for %u/%u never-touched anon pages: the witness is blind",
		 fast, opt.pages);
	return -EIO;
}

static char skip_buf[NR_COLS][400];

static void run_row(const struct row *r, char *skip_col[NR_COLS])
{
	char why[400] = "", name[64];
	struct mapping m = { 0 };
	unsigned int fast, want, tries;
	int c, ret = r->map(&m, why, sizeof(why));

	if (ret) {
		skip_row(r, ret == KSFT_SKIP ? "%s" : "cannot map: %s", why);
		if (ret != KSFT_SKIP)
			msg("table %s: %s\n", r->name, why);
		unmap_all(&m);
		return;
	}
	for (c = 0; c < NR_COLS; c++) {
		snprintf(name, sizeof(name), "table_%s_%s", r->name, col_name[c]);
		if (skip_col[c]) {
			result(KSFT_SKIP, name, "%s", skip_col[c]);
			continue;
		}
		want = (r->slow >> c) & 1 ? 0 : m.nr_pages;
		for (tries = 1, ret = 0; !ret && tries <= MAX_TRIES; tries++) {
			ret = cell(&m, c, &fast, why, sizeof(why));
			if (fast == want)
				break;
		}
		if (ret) {
			msg("table %s %s: %s\n", r->name, col_name[c], why);
			result(KSFT_FAIL, name, NULL);
			continue;
		}
		/* The anon cell is its column's control: see the top comment. */
		if (r == rows && fast != want) {
			skip_col[c] = skip_buf[c];
			snprintf(skip_col[c], sizeof(skip_buf[c]),
				 "the %s trigger took the mmap_lock for %u/%u anon pages, which every rule lets through GUP-fast: it cannot tell the paths apart here",
				 col_name[c], m.nr_pages - fast, m.nr_pages);
			result(KSFT_SKIP, name, "%s", skip_col[c]);
			continue;
		}
		msg("table %s %s: %u/%u pages via GUP-fast (expected %u, %u %s)\n",
		    r->name, col_name[c], fast, m.nr_pages, want,
		    tries > MAX_TRIES ? MAX_TRIES : tries, tries > 1 ? "tries" : "try");
		result(fast == want ? KSFT_PASS : KSFT_FAIL, name, NULL);
	}
	unmap_all(&m);
}

void table_run(void)
{
	char *skip_col[NR_COLS] = { NULL }, why[400] = "";
	struct io_uring_params p = { 0 };
	unsigned int i;
	int ret;

	msg("table: the GUP-fast table through the mmap_lock tracepoint (vmsplice, FUTEX_WAKE, io_uring buffer registration)\n");
	ret = tracer_start(why, sizeof(why));
	if (!ret && pipe2(tr.pipe, O_CLOEXEC))
		ret = -errno;
	if (!ret)
		ret = witness(why, sizeof(why));
	result(ret == KSFT_SKIP ? KSFT_SKIP : ret ? KSFT_FAIL : KSFT_PASS,
	       "table_witness", "%s", why);
	if (ret) {
		msg("table: %s\n", why);
		for (i = 0; i < ARRAY_SIZE(rows); i++)
			skip_row(&rows[i], "no witness: %s", why);
		goto out;
	}
	tr.ring = syscall(__NR_io_uring_setup, 1, &p);
	if (tr.ring < 0) {
		skip_col[LONGTERM] = skip_buf[LONGTERM];
		snprintf(skip_col[LONGTERM], sizeof(skip_buf[0]),
			 "io_uring_setup: %s (CONFIG_IO_URING off or kernel.io_uring_disabled set)",
			 strerror(errno));
	}
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		run_row(&rows[i], skip_col);
out:
	if (tr.ring >= 0)
		close(tr.ring);
	tracer_stop();
}
