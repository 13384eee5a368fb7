// SPDX-License-Identifier: GPL-2.0
/*
 * gupnm_stress: the project's own hardening of lib/test_gup_fast.c, outside
 * the upstream series. It holds what an mm reviewer need not read but what
 * keeps the driver honest:
 *   abi_<name>   malformed requests to every ioctl and to mmap() fail with
 *                their documented errno;
 *   race_<name>  munmap(), mprotect(), fork(), close() and SIGKILL racing
 *                with the ioctls (-R iterations each).
 * Leaked page references are found outside: the runner boots debug kernels
 * with page_owner=on and counts the pages this program's processes left
 * allocated after they exited (runner/guest/init).
 *
 * Usage: gupnm_stress [-p PAGES] [-R RACE_ITERS]; run as root with
 * test_gup_fast loaded and debugfs mounted. TAP output, exit 0/1/4.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <lib/test_gup_fast_uapi.h>
#include "kselftest.h"

#ifndef __NR_memfd_secret
#define __NR_memfd_secret	447
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define DEBUGFS_DIR		"/sys/kernel/debug"
#define SHADOW_PATH		DEBUGFS_DIR "/test_gup_fast/shadow"
#define MAX_PAGES_PARAM		"/sys/module/test_gup_fast/parameters/max_pages"

#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL

/* Command line defaults and bounds. */
#define DEF_PAGES		512
#define DEF_RACE_ITERS		20
#define MAX_RACE_ITERS		100000

/* The abi_* cases work on small buffers of their own. */
#define ABI_PAGES		8
#define ABI_HOLE_FIRST		2
#define ABI_HOLE_PAGES		2

/* race_* cases. */
#define RACE_BENCH_ITERS	2
#define RACE_TIMEOUT_NS		(5 * NSEC_PER_SEC)
#define KILL_BENCH_ITERS	1024
#define KILL_DELAY_NS		NSEC_PER_MSEC

/* leak_* cases: 128M (32768 pages of 4K, 2048 of 64K). */
#define LEAK_BYTES		(128UL << 20)
#define LEAK_WAIT_NS		(2 * NSEC_PER_SEC)
#define LEAK_POLL_NS		(20 * NSEC_PER_MSEC)

/*
 * A kernel address on every architecture with a split address space: the
 * top of it, where no user mapping can live.
 */
#define KERNEL_ADDR		(0 - 16 * (__u64)pagesize)
/*
 * Above the largest user address space of any 64-bit architecture (57 bits
 * on x86-64 with 5-level paging, 52 on arm64), below the kernel half; arm64
 * ignores the top byte only for tasks that opt into the tagged address ABI.
 */
#define BEYOND_TASK_SIZE	0x1000000000000000ULL

#define MSG_ABI_MISMATCH	"%s: got %s, expected %s\n"

#define load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

static struct {
	unsigned long pages;
	unsigned long race_iters;
} opt = {
	.pages = DEF_PAGES,
	.race_iters = DEF_RACE_ITERS,
};

static size_t pagesize;
static int gup_fd = -1;

/* ------------------------------------------------------------------------ */
/* Helpers */

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_ns(unsigned long long ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		continue;
}

static const char *errno_name(int err, char *buf, size_t len)
{
	switch (err) {
	case 0:
		return "success (ret 0)";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case EINTR:
		return "EINTR";
	case EIO:
		return "EIO";
	case ENXIO:
		return "ENXIO";
	case E2BIG:
		return "E2BIG";
	case EBADF:
		return "EBADF";
	case EAGAIN:
		return "EAGAIN";
	case ENOMEM:
		return "ENOMEM";
	case EACCES:
		return "EACCES";
	case EFAULT:
		return "EFAULT";
	case EBUSY:
		return "EBUSY";
	case EEXIST:
		return "EEXIST";
	case ENODEV:
		return "ENODEV";
	case EINVAL:
		return "EINVAL";
	case ENOTTY:
		return "ENOTTY";
	case ENOSPC:
		return "ENOSPC";
	case ERANGE:
		return "ERANGE";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	}
	snprintf(buf, len, "errno %d (%s)", err, strerror(err));
	return buf;
}

static void describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "wait status 0x%x", status);
}

static int wait_child(pid_t pid, int *status)
{
	pid_t ret;

	do {
		ret = waitpid(pid, status, 0);
	} while (ret < 0 && errno == EINTR);

	return ret == pid ? 0 : -errno;
}

/* Read a file holding one decimal number. Returns 0 or -errno. */
static int read_ulong_file(const char *path, unsigned long *val)
{
	char buf[64], *end;
	ssize_t len;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	err = errno;
	close(fd);
	if (len < 0)
		return -err;
	buf[len] = '\0';
	if (!isdigit((unsigned char)buf[0]))
		return -EINVAL;
	errno = 0;
	*val = strtoul(buf, &end, 10);
	if (errno || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

static void report(bool ok, const char *name)
{
	if (ok)
		ksft_test_result_pass("%s\n", name);
	else
		ksft_test_result_fail("%s\n", name);
}

static void report_skip(const char *name, const char *reason)
{
	ksft_test_result_code(KSFT_SKIP, name, "%s", reason);
}

static unsigned long pages_per_call(unsigned long nr_pages)
{
	return nr_pages < GUP_FAST_MAX_PAGES_PER_CALL ?
		nr_pages : GUP_FAST_MAX_PAGES_PER_CALL;
}

static int do_verdict(void *addr, unsigned long nr_pages, __u32 flags,
		      unsigned char *verdicts, unsigned long *nr_fast)
{
	struct gup_fast_verdict v = {
		.addr = (unsigned long)addr,
		.nr_pages = nr_pages,
		.flags = flags,
		.verdicts = (unsigned long)verdicts,
	};

	if (ioctl(gup_fd, GUP_FAST_IOCTL_VERDICT, &v))
		return -errno;
	*nr_fast = v.nr_fast;
	return 0;
}

static int do_bench(void *addr, unsigned long nr_pages, unsigned long iters,
		    __u32 flags, struct gup_fast_bench_sample *samples)
{
	struct gup_fast_bench b = {
		.addr = (unsigned long)addr,
		.nr_pages = nr_pages,
		.pages_per_call = pages_per_call(nr_pages),
		.iterations = iters,
		.flags = flags,
		.samples = (unsigned long)samples,
	};

	if (ioctl(gup_fd, GUP_FAST_IOCTL_BENCH, &b))
		return -errno;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Buffers */

enum backing {
	BACKING_SHADOW,
	BACKING_ANON,
	BACKING_MEMFD,
	BACKING_SECRETMEM,
};

struct buf {
	char *addr;
	size_t len;
	int fd;
};

static void buf_init(struct buf *b)
{
	b->addr = NULL;
	b->len = 0;
	b->fd = -1;
}

static void buf_destroy(struct buf *b)
{
	if (b->addr)
		munmap(b->addr, b->len);
	if (b->fd >= 0)
		close(b->fd);
	buf_init(b);
}

/* Write every page, so that every PTE is present, writable and dirty. */
static void buf_touch(const struct buf *b)
{
	size_t off;

	for (off = 0; off < b->len; off += pagesize)
		b->addr[off] = (char)(off / pagesize + 1);
}

static int shadow_open(void)
{
	return open(SHADOW_PATH, O_RDWR | O_CLOEXEC);
}

/*
 * Map @nr_pages pages of @kind (not yet touched). Returns 0, or -errno
 * with *@what naming the step that failed; nothing is left behind on error.
 */
static int buf_create(struct buf *b, enum backing kind,
		      unsigned long nr_pages, const char **what)
{
	int flags = MAP_SHARED;
	int fd = -1, err;
	void *addr;

	buf_init(b);
	switch (kind) {
	case BACKING_SHADOW:
		*what = "open(" SHADOW_PATH ")";
		fd = shadow_open();
		break;
	case BACKING_ANON:
		flags = MAP_PRIVATE | MAP_ANONYMOUS;
		break;
	case BACKING_MEMFD:
		*what = "memfd_create()";
		fd = memfd_create("gup_null_mapping", MFD_CLOEXEC);
		break;
	case BACKING_SECRETMEM:
		*what = "memfd_secret()";
		fd = syscall(__NR_memfd_secret, 0);
		break;
	}
	if (kind != BACKING_ANON && fd < 0)
		return -errno;

	if ((kind == BACKING_MEMFD || kind == BACKING_SECRETMEM) &&
	    ftruncate(fd, nr_pages * pagesize)) {
		err = errno;
		*what = "ftruncate()";
		close(fd);
		return -err;
	}

	*what = "mmap()";
	addr = mmap(NULL, nr_pages * pagesize, PROT_READ | PROT_WRITE, flags,
		    fd, 0);
	if (addr == MAP_FAILED) {
		err = errno;
		if (fd >= 0)
			close(fd);
		return -err;
	}
	/* Keep the anon control order-0, as the shadow pages are. */
	if (kind == BACKING_ANON)
		madvise(addr, nr_pages * pagesize, MADV_NOHUGEPAGE);

	b->addr = addr;
	b->len = nr_pages * pagesize;
	b->fd = fd;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* abi_<name>: malformed requests */

/* Returned by abi_case::run instead of an errno. */
#define ABI_SKIP	(-1)	/* abi_note: the reason */
#define ABI_ERROR	(-2)	/* abi_note: what went wrong */

enum abi_kind {
	ABI_VERDICT,	/* GUP_FAST_IOCTL_VERDICT, valid request + ->verdict() */
	ABI_BENCH,	/* GUP_FAST_IOCTL_BENCH, valid request + ->bench() */
	ABI_OTHER,	/* ->run() does it all */
};

struct abi_case {
	const char *name;
	const char *desc;
	enum abi_kind kind;
	void (*verdict)(struct gup_fast_verdict *v);
	void (*bench)(struct gup_fast_bench *b);
	int (*run)(void);
	/* Called after a successful ioctl, for cases expecting success. */
	bool (*check)(const struct gup_fast_verdict *v);
	int expect;
};

static struct {
	bool ready;
	struct buf shadow;		/* ABI_PAGES present shadow pages */
	struct buf ro_shadow;		/* same, then mprotect(PROT_READ) */
	struct buf hole;		/* ABI_PAGES anon pages with a hole */
	unsigned char *verdicts;	/* ABI_PAGES bytes */
	unsigned char *ro_verdicts;	/* one read-only page */
	char *straddle_map;		/* two pages, the second unmapped */
	unsigned char *straddle;	/* ABI_PAGES bytes across both */
	struct gup_fast_bench_sample *samples;
	size_t samples_len;
	char note[160];
} abi;

static char abi_note[160];

static void abi_teardown(void)
{
	buf_destroy(&abi.shadow);
	buf_destroy(&abi.ro_shadow);
	buf_destroy(&abi.hole);
	free(abi.verdicts);
	abi.verdicts = NULL;
	if (abi.ro_verdicts)
		munmap(abi.ro_verdicts, pagesize);
	abi.ro_verdicts = NULL;
	if (abi.straddle_map)
		munmap(abi.straddle_map, pagesize);
	abi.straddle_map = NULL;
	if (abi.samples)
		munmap(abi.samples, abi.samples_len);
	abi.samples = NULL;
	abi.ready = false;
}

static void *anon_map(size_t len, int prot)
{
	void *addr = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return addr == MAP_FAILED ? NULL : addr;
}

static bool abi_setup(void)
{
	const char *what = "malloc()";
	int ret;

	buf_init(&abi.shadow);
	buf_init(&abi.ro_shadow);
	buf_init(&abi.hole);

	ret = buf_create(&abi.shadow, BACKING_SHADOW, ABI_PAGES, &what);
	if (ret)
		goto fail;
	buf_touch(&abi.shadow);

	ret = buf_create(&abi.ro_shadow, BACKING_SHADOW, ABI_PAGES, &what);
	if (ret)
		goto fail;
	buf_touch(&abi.ro_shadow);
	what = "mprotect(PROT_READ)";
	if (mprotect(abi.ro_shadow.addr, abi.ro_shadow.len, PROT_READ))
		goto fail_errno;

	ret = buf_create(&abi.hole, BACKING_ANON, ABI_PAGES, &what);
	if (ret)
		goto fail;
	buf_touch(&abi.hole);
	what = "munmap() of the hole";
	if (munmap(abi.hole.addr + ABI_HOLE_FIRST * pagesize,
		   ABI_HOLE_PAGES * pagesize))
		goto fail_errno;

	what = "malloc()";
	abi.verdicts = malloc(ABI_PAGES);
	if (!abi.verdicts)
		goto fail_errno;

	what = "mmap(PROT_READ)";
	abi.ro_verdicts = anon_map(pagesize, PROT_READ);
	if (!abi.ro_verdicts)
		goto fail_errno;

	what = "mmap() of the straddling buffer";
	abi.straddle_map = anon_map(2 * pagesize, PROT_READ | PROT_WRITE);
	if (!abi.straddle_map)
		goto fail_errno;
	if (munmap(abi.straddle_map + pagesize, pagesize)) {
		ret = -errno;
		munmap(abi.straddle_map, 2 * pagesize);
		abi.straddle_map = NULL;
		goto fail;
	}
	memset(abi.straddle_map, 0, pagesize);
	abi.straddle = (unsigned char *)abi.straddle_map + pagesize -
		       ABI_PAGES / 2;

	/* Room for every sample even if a bogus count were accepted. */
	what = "mmap() of the samples";
	abi.samples_len = (GUP_FAST_MAX_ITERATIONS + 1UL) *
			  sizeof(*abi.samples);
	abi.samples = anon_map(abi.samples_len, PROT_READ | PROT_WRITE);
	if (!abi.samples)
		goto fail_errno;

	abi.ready = true;
	return true;

fail_errno:
	ret = -errno;
fail:
	snprintf(abi.note, sizeof(abi.note), "setup: %s failed: %s", what,
		 strerror(-ret));
	abi_teardown();
	return false;
}

/* Mutations of a valid GUP_FAST_IOCTL_VERDICT request. */
static void v_unaligned(struct gup_fast_verdict *v)
{
	v->addr += 1;
}

static void v_zero_pages(struct gup_fast_verdict *v)
{
	v->nr_pages = 0;
}

static void v_too_many_pages(struct gup_fast_verdict *v)
{
	v->nr_pages = GUP_FAST_MAX_PAGES + 1;
	v->verdicts = 0;
}

static void v_wrap(struct gup_fast_verdict *v)
{
	v->addr = ~(__u64)(pagesize - 1);
	v->nr_pages = 2;
	v->verdicts = 0;
}

static void v_kernel_addr(struct gup_fast_verdict *v)
{
	v->addr = KERNEL_ADDR;
	v->nr_pages = 1;
	v->verdicts = 0;
}

static void v_noncanonical_addr(struct gup_fast_verdict *v)
{
	v->addr = BEYOND_TASK_SIZE;
	v->nr_pages = 1;
	v->verdicts = 0;
}

static void v_unknown_flag(struct gup_fast_verdict *v)
{
	v->flags |= 1U << 31;
}

static void v_longterm_flag(struct gup_fast_verdict *v)
{
	v->flags |= GUP_FAST_FLAG_LONGTERM;
}

static void v_reserved(struct gup_fast_verdict *v)
{
	v->reserved = 1;
}

static void v_bad_verdicts(struct gup_fast_verdict *v)
{
	v->verdicts = 8;
}

static void v_ro_verdicts(struct gup_fast_verdict *v)
{
	v->verdicts = (unsigned long)abi.ro_verdicts;
}

static void v_straddle(struct gup_fast_verdict *v)
{
	v->verdicts = (unsigned long)abi.straddle;
}

static void v_hole(struct gup_fast_verdict *v)
{
	v->addr = (unsigned long)abi.hole.addr;
}

static bool check_hole(const struct gup_fast_verdict *v)
{
	unsigned long i, ones = 0;
	unsigned char want;
	bool ok = true;

	for (i = 0; i < ABI_PAGES; i++) {
		want = i >= ABI_HOLE_FIRST &&
		       i < ABI_HOLE_FIRST + ABI_HOLE_PAGES ? 0 : 1;
		if (abi.verdicts[i] == 1)
			ones++;
		if (abi.verdicts[i] != want && ok) {
			ksft_print_msg("abi_verdict_hole: page %lu: verdict byte %u, expected %u\n",
				       i, abi.verdicts[i], want);
			ok = false;
		}
	}
	if (v->nr_fast != ABI_PAGES - ABI_HOLE_PAGES || v->nr_fast != ones) {
		ksft_print_msg("abi_verdict_hole: nr_fast %llu, %lu bytes set, expected %d\n",
			       (unsigned long long)v->nr_fast, ones,
			       ABI_PAGES - ABI_HOLE_PAGES);
		ok = false;
	}
	return ok;
}

/* Mutations of a valid GUP_FAST_IOCTL_BENCH request. */
static void b_zero_pages(struct gup_fast_bench *b)
{
	b->nr_pages = 0;
}

static void b_zero_per_call(struct gup_fast_bench *b)
{
	b->pages_per_call = 0;
}

static void b_per_call_too_big(struct gup_fast_bench *b)
{
	b->pages_per_call = GUP_FAST_MAX_PAGES_PER_CALL + 1;
}

static void b_zero_iterations(struct gup_fast_bench *b)
{
	b->iterations = 0;
}

static void b_too_many_iterations(struct gup_fast_bench *b)
{
	b->iterations = GUP_FAST_MAX_ITERATIONS + 1;
}

static void b_unknown_flag(struct gup_fast_bench *b)
{
	b->flags |= 1U << 31;
}

static void b_null_samples(struct gup_fast_bench *b)
{
	b->samples = 0;
}

static void b_hole(struct gup_fast_bench *b)
{
	b->addr = (unsigned long)abi.hole.addr;
}

static void b_write_readonly(struct gup_fast_bench *b)
{
	b->addr = (unsigned long)abi.ro_shadow.addr;
	b->flags = GUP_FAST_FLAG_WRITE;
}

/* Other requests. */
static int ioctl_errno(unsigned long cmd, void *arg)
{
	return ioctl(gup_fd, cmd, arg) ? errno : 0;
}

/* GUP_FAST_IOCTL_PIN of the ABI shadow buffer, with @flags, changed by @fn. */
static int pin_errno(void (*fn)(struct gup_fast_pin *p))
{
	struct gup_fast_pin p = {
		.addr = (unsigned long)abi.shadow.addr,
		.nr_pages = ABI_PAGES,
		.flags = GUP_FAST_FLAG_WRITE,
	};

	if (!abi.ready) {
		snprintf(abi_note, sizeof(abi_note), "%s", abi.note);
		return ABI_ERROR;
	}
	fn(&p);
	return ioctl_errno(GUP_FAST_IOCTL_PIN, &p);
}

static void p_unaligned(struct gup_fast_pin *p)
{
	p->addr += 1;
}

static void p_too_many_pages(struct gup_fast_pin *p)
{
	p->nr_pages = GUP_FAST_MAX_PAGES + 1;
}

static void p_unknown_flag(struct gup_fast_pin *p)
{
	p->flags |= 1U << 31;
}

static void p_reserved(struct gup_fast_pin *p)
{
	p->reserved = 1;
}

static void p_hole(struct gup_fast_pin *p)
{
	p->addr = (unsigned long)abi.hole.addr;
}

static void p_write_readonly(struct gup_fast_pin *p)
{
	p->addr = (unsigned long)abi.ro_shadow.addr;
	p->flags |= GUP_FAST_FLAG_LONGTERM;
}

static int run_pin_unaligned(void)
{
	return pin_errno(p_unaligned);
}

static int run_pin_too_many_pages(void)
{
	return pin_errno(p_too_many_pages);
}

static int run_pin_unknown_flag(void)
{
	return pin_errno(p_unknown_flag);
}

static int run_pin_reserved(void)
{
	return pin_errno(p_reserved);
}

static int run_pin_hole(void)
{
	return pin_errno(p_hole);
}

static int run_pin_write_readonly(void)
{
	return pin_errno(p_write_readonly);
}

static int run_unknown_cmd(void)
{
	struct gup_fast_verdict v = {
		.addr = (unsigned long)abi.shadow.addr,
		.nr_pages = ABI_PAGES,
	};

	return ioctl_errno(_IOWR('G', 0x6f, struct gup_fast_verdict), &v);
}

static int run_wrong_size_cmd(void)
{
	char arg[64];

	memset(arg, 0, sizeof(arg));
	return ioctl_errno(_IOWR('G', 0x60, char[24]), arg);
}

/* mmap() the shadow file; returns the errno, 0 (and unmaps) on success. */
static int shadow_mmap_errno(size_t len, int flags, off_t off)
{
	void *addr;
	int fd, err;

	fd = shadow_open();
	if (fd < 0) {
		snprintf(abi_note, sizeof(abi_note), "open(%s) failed: %s",
			 SHADOW_PATH, strerror(errno));
		return ABI_ERROR;
	}
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);
	err = addr == MAP_FAILED ? errno : 0;
	if (addr != MAP_FAILED)
		munmap(addr, len);
	close(fd);
	return err;
}

static int run_mmap_private(void)
{
	return shadow_mmap_errno(ABI_PAGES * pagesize, MAP_PRIVATE, 0);
}

static int run_mmap_offset(void)
{
	return shadow_mmap_errno(ABI_PAGES * pagesize, MAP_SHARED, pagesize);
}

static int run_mmap_too_big(void)
{
	unsigned long max_pages = 0;
	int ret;

	ret = read_ulong_file(MAX_PAGES_PARAM, &max_pages);
	if (ret) {
		snprintf(abi_note, sizeof(abi_note), "cannot read %s: %s",
			 MAX_PAGES_PARAM, strerror(-ret));
		return ABI_SKIP;
	}
	if (max_pages >= (~0UL) / pagesize - 1) {
		snprintf(abi_note, sizeof(abi_note),
			 "max_pages %lu + 1 pages do not fit in a mapping",
			 max_pages);
		return ABI_SKIP;
	}
	return shadow_mmap_errno((max_pages + 1) * pagesize, MAP_SHARED, 0);
}

static int run_mremap_grow(void)
{
	size_t len = ABI_PAGES * pagesize;
	const char *what;
	struct buf b;
	void *addr;
	int ret;

	ret = buf_create(&b, BACKING_SHADOW, ABI_PAGES, &what);
	if (ret) {
		snprintf(abi_note, sizeof(abi_note), "%s failed: %s", what,
			 strerror(-ret));
		return ABI_ERROR;
	}
	buf_touch(&b);
	addr = mremap(b.addr, len, len + pagesize, MREMAP_MAYMOVE);
	if (addr == MAP_FAILED) {
		ret = errno;
	} else {
		b.addr = addr;
		b.len = len + pagesize;
		ret = 0;
	}
	buf_destroy(&b);
	return ret;
}

/* Exit codes of the child of abi_fork_child_verdict. */
#define FORK_CHILD_OK		0
#define FORK_CHILD_IOCTL	1
#define FORK_CHILD_BAD_COUNT	2
#define FORK_CHILD_NOT_MAPPED	3

static int run_fork_child_verdict(void)
{
	unsigned char vec[ABI_PAGES];
	unsigned long nr_fast = 0;
	char desc[64];
	const char *what;
	struct buf b;
	int ret, status;
	pid_t pid;

	ret = buf_create(&b, BACKING_SHADOW, ABI_PAGES, &what);
	if (ret) {
		snprintf(abi_note, sizeof(abi_note), "%s failed: %s", what,
			 strerror(-ret));
		return ABI_ERROR;
	}
	buf_touch(&b);

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(abi_note, sizeof(abi_note), "fork() failed: %s",
			 strerror(errno));
		buf_destroy(&b);
		return ABI_ERROR;
	}
	if (!pid) {
		/* The driver may keep its mappings out of children. */
		if (mincore(b.addr, b.len, vec))
			_exit(FORK_CHILD_NOT_MAPPED);
		buf_touch(&b);
		if (do_verdict(b.addr, ABI_PAGES, GUP_FAST_FLAG_WRITE, NULL,
			       &nr_fast))
			_exit(FORK_CHILD_IOCTL);
		_exit(nr_fast <= ABI_PAGES ? FORK_CHILD_OK :
		      FORK_CHILD_BAD_COUNT);
	}

	ret = wait_child(pid, &status);
	buf_destroy(&b);
	if (ret) {
		snprintf(abi_note, sizeof(abi_note), "waitpid() failed: %s",
			 strerror(-ret));
		return ABI_ERROR;
	}
	if (WIFEXITED(status) &&
	    WEXITSTATUS(status) == FORK_CHILD_NOT_MAPPED) {
		ksft_print_msg("abi_fork_child_verdict: the child did not inherit the mapping\n");
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == FORK_CHILD_OK)
		return 0;

	describe_status(status, desc, sizeof(desc));
	snprintf(abi_note, sizeof(abi_note), "got child %s%s, expected success",
		 desc,
		 !WIFEXITED(status) ? "" :
		 WEXITSTATUS(status) == FORK_CHILD_IOCTL ?
		 " (GUP_FAST_IOCTL_VERDICT failed)" :
		 WEXITSTATUS(status) == FORK_CHILD_BAD_COUNT ?
		 " (nr_fast above nr_pages)" : "");
	return ABI_ERROR;
}

static const struct abi_case abi_cases[] = {
	{ .name = "verdict_unaligned", .kind = ABI_VERDICT,
	  .desc = "VERDICT, addr not page aligned",
	  .verdict = v_unaligned, .expect = EINVAL },
	{ .name = "verdict_zero_pages", .kind = ABI_VERDICT,
	  .desc = "VERDICT, nr_pages 0",
	  .verdict = v_zero_pages, .expect = EINVAL },
	{ .name = "verdict_too_many_pages", .kind = ABI_VERDICT,
	  .desc = "VERDICT, nr_pages GUP_FAST_MAX_PAGES + 1",
	  .verdict = v_too_many_pages, .expect = E2BIG },
	{ .name = "verdict_wrap", .kind = ABI_VERDICT,
	  .desc = "VERDICT, range wrapping past ~0",
	  .verdict = v_wrap, .expect = EINVAL },
	{ .name = "verdict_kernel_addr", .kind = ABI_VERDICT,
	  .desc = "VERDICT, kernel address",
	  .verdict = v_kernel_addr, .expect = EFAULT },
	{ .name = "verdict_noncanonical_addr", .kind = ABI_VERDICT,
	  .desc = "VERDICT, non-canonical address above TASK_SIZE",
	  .verdict = v_noncanonical_addr, .expect = EFAULT },
	{ .name = "verdict_unknown_flag", .kind = ABI_VERDICT,
	  .desc = "VERDICT, unknown flag 1 << 31",
	  .verdict = v_unknown_flag, .expect = EINVAL },
	{ .name = "verdict_longterm_flag", .kind = ABI_VERDICT,
	  .desc = "VERDICT, GUP_FAST_FLAG_LONGTERM",
	  .verdict = v_longterm_flag, .expect = EINVAL },
	{ .name = "verdict_reserved", .kind = ABI_VERDICT,
	  .desc = "VERDICT, reserved not 0",
	  .verdict = v_reserved, .expect = EINVAL },
	{ .name = "verdict_bad_verdicts_ptr", .kind = ABI_VERDICT,
	  .desc = "VERDICT, verdicts pointer 8",
	  .verdict = v_bad_verdicts, .expect = EFAULT },
	{ .name = "verdict_ro_verdicts", .kind = ABI_VERDICT,
	  .desc = "VERDICT, read-only verdicts buffer",
	  .verdict = v_ro_verdicts, .expect = EFAULT },
	{ .name = "verdict_straddling_verdicts", .kind = ABI_VERDICT,
	  .desc = "VERDICT, verdicts buffer running into an unmapped page",
	  .verdict = v_straddle, .expect = EFAULT },
	{ .name = "verdict_hole", .kind = ABI_VERDICT,
	  .desc = "VERDICT, range with an unmapped hole: hole pages refused",
	  .verdict = v_hole, .check = check_hole, .expect = 0 },
	{ .name = "bench_zero_pages", .kind = ABI_BENCH,
	  .desc = "BENCH, nr_pages 0",
	  .bench = b_zero_pages, .expect = EINVAL },
	{ .name = "bench_zero_per_call", .kind = ABI_BENCH,
	  .desc = "BENCH, pages_per_call 0",
	  .bench = b_zero_per_call, .expect = EINVAL },
	{ .name = "bench_per_call_too_big", .kind = ABI_BENCH,
	  .desc = "BENCH, pages_per_call GUP_FAST_MAX_PAGES_PER_CALL + 1",
	  .bench = b_per_call_too_big, .expect = E2BIG },
	{ .name = "bench_zero_iterations", .kind = ABI_BENCH,
	  .desc = "BENCH, iterations 0",
	  .bench = b_zero_iterations, .expect = EINVAL },
	{ .name = "bench_too_many_iterations", .kind = ABI_BENCH,
	  .desc = "BENCH, iterations GUP_FAST_MAX_ITERATIONS + 1",
	  .bench = b_too_many_iterations, .expect = E2BIG },
	{ .name = "bench_unknown_flag", .kind = ABI_BENCH,
	  .desc = "BENCH, unknown flag 1 << 31",
	  .bench = b_unknown_flag, .expect = EINVAL },
	{ .name = "bench_null_samples", .kind = ABI_BENCH,
	  .desc = "BENCH, samples NULL",
	  .bench = b_null_samples, .expect = EFAULT },
	{ .name = "bench_hole", .kind = ABI_BENCH,
	  .desc = "BENCH, range with an unmapped hole",
	  .bench = b_hole, .expect = EFAULT },
	{ .name = "bench_write_readonly", .kind = ABI_BENCH,
	  .desc = "BENCH, write pin of a read-only shadow mapping",
	  .bench = b_write_readonly, .expect = EFAULT },
	{ .name = "pin_unaligned", .kind = ABI_OTHER,
	  .desc = "PIN, addr not page aligned",
	  .run = run_pin_unaligned, .expect = EINVAL },
	{ .name = "pin_too_many_pages", .kind = ABI_OTHER,
	  .desc = "PIN, nr_pages GUP_FAST_MAX_PAGES + 1",
	  .run = run_pin_too_many_pages, .expect = E2BIG },
	{ .name = "pin_unknown_flag", .kind = ABI_OTHER,
	  .desc = "PIN, unknown flag 1 << 31",
	  .run = run_pin_unknown_flag, .expect = EINVAL },
	{ .name = "pin_reserved", .kind = ABI_OTHER,
	  .desc = "PIN, reserved not 0",
	  .run = run_pin_reserved, .expect = EINVAL },
	{ .name = "pin_hole", .kind = ABI_OTHER,
	  .desc = "PIN, range with an unmapped hole",
	  .run = run_pin_hole, .expect = EFAULT },
	{ .name = "pin_longterm_write_readonly", .kind = ABI_OTHER,
	  .desc = "PIN, long-term write pin of a read-only shadow mapping",
	  .run = run_pin_write_readonly, .expect = EFAULT },
	{ .name = "unknown_cmd", .kind = ABI_OTHER,
	  .desc = "unknown ioctl command",
	  .run = run_unknown_cmd, .expect = ENOTTY },
	{ .name = "wrong_size_cmd", .kind = ABI_OTHER,
	  .desc = "VERDICT command number with a 24-byte size",
	  .run = run_wrong_size_cmd, .expect = ENOTTY },
	{ .name = "mmap_private", .kind = ABI_OTHER,
	  .desc = "mmap(MAP_PRIVATE) of the shadow file",
	  .run = run_mmap_private, .expect = EINVAL },
	{ .name = "mmap_offset", .kind = ABI_OTHER,
	  .desc = "mmap() of the shadow file at offset one page",
	  .run = run_mmap_offset, .expect = EINVAL },
	{ .name = "mmap_too_big", .kind = ABI_OTHER,
	  .desc = "mmap() of max_pages + 1 shadow pages",
	  .run = run_mmap_too_big, .expect = E2BIG },
	{ .name = "mremap_grow", .kind = ABI_OTHER,
	  .desc = "mremap() growing a shadow buffer",
	  .run = run_mremap_grow, .expect = EFAULT },
	{ .name = "fork_child_verdict", .kind = ABI_OTHER,
	  .desc = "forked child touches and asks about an inherited shadow buffer",
	  .run = run_fork_child_verdict, .expect = 0 },
};

static int abi_run_verdict(const struct abi_case *c,
			   struct gup_fast_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->addr = (unsigned long)abi.shadow.addr;
	v->nr_pages = ABI_PAGES;
	v->flags = GUP_FAST_FLAG_WRITE;
	v->verdicts = (unsigned long)abi.verdicts;
	memset(abi.verdicts, 0xaa, ABI_PAGES);
	c->verdict(v);
	return ioctl_errno(GUP_FAST_IOCTL_VERDICT, v);
}

static int abi_run_bench(const struct abi_case *c)
{
	struct gup_fast_bench b = {
		.addr = (unsigned long)abi.shadow.addr,
		.nr_pages = ABI_PAGES,
		.pages_per_call = ABI_PAGES,
		.iterations = 1,
		.flags = GUP_FAST_FLAG_WRITE,
		.samples = (unsigned long)abi.samples,
	};

	c->bench(&b);
	return ioctl_errno(GUP_FAST_IOCTL_BENCH, &b);
}

static void run_abi_case(const struct abi_case *c)
{
	struct gup_fast_verdict v;
	char name[64], gbuf[64], ebuf[64];
	int got;

	snprintf(name, sizeof(name), "abi_%s", c->name);
	abi_note[0] = '\0';
	memset(&v, 0, sizeof(v));

	if (c->kind != ABI_OTHER && !abi.ready) {
		ksft_print_msg("%s: %s\n", name, abi.note);
		report(false, name);
		return;
	}
	switch (c->kind) {
	case ABI_VERDICT:
		got = abi_run_verdict(c, &v);
		break;
	case ABI_BENCH:
		got = abi_run_bench(c);
		break;
	default:
		got = c->run();
		break;
	}

	if (got == ABI_SKIP) {
		report_skip(name, abi_note);
		return;
	}
	if (got == ABI_ERROR) {
		ksft_print_msg("%s: %s\n", name, c->desc);
		ksft_print_msg("%s: %s\n", name, abi_note);
		report(false, name);
		return;
	}
	if (got != c->expect) {
		ksft_print_msg("%s: %s\n", name, c->desc);
		ksft_print_msg(MSG_ABI_MISMATCH, name,
			       errno_name(got, gbuf, sizeof(gbuf)),
			       c->expect ? errno_name(c->expect, ebuf,
						      sizeof(ebuf)) :
			       "success");
		report(false, name);
		return;
	}
	if (!got && c->check && !c->check(&v)) {
		report(false, name);
		return;
	}
	report(true, name);
}

static void run_abi_cases(void)
{
	unsigned int i;

	abi_setup();
	for (i = 0; i < ARRAY_SIZE(abi_cases); i++)
		run_abi_case(&abi_cases[i]);
	abi_teardown();
}

/* ------------------------------------------------------------------------ */
/* race_<name> */

static unsigned long race_pages(void)
{
	return opt.pages < 2 ? 2 : opt.pages;
}

/* A thread calling GUP_FAST_IOCTL_BENCH in a loop. */
struct pin_loop {
	pthread_t thread;
	pthread_barrier_t *start;	/* waited on first, unless NULL */
	char *addr;
	unsigned long nr_pages;
	__u32 flags;
	unsigned int max_calls;		/* 0: until ->stop */
	bool accept_efault;
	int stop;			/* atomic, set by the racer */
	int done;			/* atomic, set when the loop ends */
	unsigned int calls;
	unsigned int nr_efault;
	int bad_err;			/* first errno not accepted, or 0 */
	struct gup_fast_bench_sample samples[RACE_BENCH_ITERS];
};

static void *pin_loop_fn(void *arg)
{
	struct pin_loop *pl = arg;
	int ret;

	if (pl->start)
		pthread_barrier_wait(pl->start);
	while (!load_acquire(&pl->stop) &&
	       (!pl->max_calls || pl->calls < pl->max_calls)) {
		ret = do_bench(pl->addr, pl->nr_pages, RACE_BENCH_ITERS,
			       pl->flags, pl->samples);
		store_release(&pl->calls, pl->calls + 1);
		if (ret == -EFAULT && pl->accept_efault) {
			pl->nr_efault++;
		} else if (ret) {
			pl->bad_err = -ret;
			break;
		}
	}
	store_release(&pl->done, 1);
	return NULL;
}

static void pin_loop_init(struct pin_loop *pl, const struct buf *b,
			  pthread_barrier_t *start)
{
	memset(pl, 0, sizeof(*pl));
	pl->start = start;
	pl->addr = b->addr;
	pl->nr_pages = b->len / pagesize;
	pl->flags = GUP_FAST_FLAG_WRITE;
}

/* A shadow buffer of race_pages(), every page touched. */
static bool race_buf(const char *name, struct buf *b)
{
	const char *what;
	int ret;

	ret = buf_create(b, BACKING_SHADOW, race_pages(), &what);
	if (ret) {
		ksft_print_msg("%s: %s failed: %s\n", name, what,
			       strerror(-ret));
		return false;
	}
	buf_touch(b);
	return true;
}

static bool thread_create(const char *name, pthread_t *thread,
			  void *(*fn)(void *), void *arg)
{
	int ret = pthread_create(thread, NULL, fn, arg);

	if (ret)
		ksft_print_msg("%s: pthread_create() failed: %s\n", name,
			       strerror(ret));
	return !ret;
}

/* A thread calling GUP_FAST_IOCTL_VERDICT in a loop. */
struct verdict_loop {
	pthread_t thread;
	unsigned long addr;		/* atomic, moved by the racer */
	unsigned long nr_pages;
	unsigned char *verdicts;
	int stop;			/* atomic */
	int done;			/* atomic */
	unsigned long calls;		/* atomic */
	unsigned long nr_efault;
	int bad_err;			/* first errno not accepted, or 0 */
	unsigned long bad_nr_fast;	/* nr_fast above nr_pages, or 0 */
};

/*
 * Start @pl's pinning thread and wait until it runs; on failure @b is
 * destroyed and false returned.
 */
static bool pin_loop_start(const char *name, struct pin_loop *pl,
			   struct buf *b, pthread_barrier_t *start)
{
	pthread_barrier_init(start, NULL, 2);
	if (!thread_create(name, &pl->thread, pin_loop_fn, pl)) {
		pthread_barrier_destroy(start);
		buf_destroy(b);
		return false;
	}
	pthread_barrier_wait(start);
	return true;
}

/*
 * Wait for @pl's thread, first telling it to stop when @interrupt (else a
 * bounded loop makes all its calls), and destroy @b; false (with the reason
 * printed) when a BENCH call returned an errno the case does not accept.
 */
static bool pin_loop_stop(const char *name, struct pin_loop *pl,
			  struct buf *b, pthread_barrier_t *start,
			  bool interrupt)
{
	char ebuf[64];

	if (interrupt)
		store_release(&pl->stop, 1);
	pthread_join(pl->thread, NULL);
	pthread_barrier_destroy(start);
	buf_destroy(b);
	if (!pl->bad_err)
		return true;
	ksft_print_msg("%s: BENCH call %u returned %s, expected success%s\n",
		       name, pl->calls,
		       errno_name(pl->bad_err, ebuf, sizeof(ebuf)),
		       pl->accept_efault ? " or EFAULT" : "");
	return false;
}

static void *verdict_loop_fn(void *arg)
{
	struct verdict_loop *vl = arg;
	struct gup_fast_verdict v;
	int err;

	while (!load_acquire(&vl->stop)) {
		memset(&v, 0, sizeof(v));
		v.addr = load_acquire(&vl->addr);
		v.nr_pages = vl->nr_pages;
		v.verdicts = (unsigned long)vl->verdicts;
		err = ioctl_errno(GUP_FAST_IOCTL_VERDICT, &v);
		store_release(&vl->calls, vl->calls + 1);
		/* 0 or a documented errno: a hole is not an error. */
		if (err == EFAULT)
			vl->nr_efault++;
		if (err && err != EFAULT && err != EINTR) {
			vl->bad_err = err;
			break;
		}
		if (!err && v.nr_fast > vl->nr_pages) {
			vl->bad_nr_fast = v.nr_fast;
			break;
		}
	}
	store_release(&vl->done, 1);
	return NULL;
}

/* Wait for the VERDICT loop to complete one more call. */
static bool verdict_loop_progress(struct verdict_loop *vl)
{
	unsigned long long deadline = now_ns() + RACE_TIMEOUT_NS;
	unsigned long target = load_acquire(&vl->calls) + 1;

	while (load_acquire(&vl->calls) < target) {
		if (load_acquire(&vl->done) || now_ns() > deadline)
			return false;
		sched_yield();
	}
	return true;
}

static bool race_munmap_verdict(const char *name)
{
	struct verdict_loop vl;
	char ebuf[64];
	unsigned int i;
	struct buf b;
	bool ok = true;
	void *addr;

	if (!race_buf(name, &b))
		return false;
	memset(&vl, 0, sizeof(vl));
	vl.addr = (unsigned long)b.addr;
	vl.nr_pages = b.len / pagesize;
	vl.verdicts = malloc(vl.nr_pages);
	if (!vl.verdicts) {
		ksft_print_msg("%s: malloc() failed\n", name);
		buf_destroy(&b);
		return false;
	}
	if (!thread_create(name, &vl.thread, verdict_loop_fn, &vl)) {
		free(vl.verdicts);
		buf_destroy(&b);
		return false;
	}

	for (i = 0; i < opt.race_iters; i++) {
		if (!verdict_loop_progress(&vl)) {
			if (!load_acquire(&vl.done))
				ksft_print_msg("%s: iteration %u: VERDICT stuck for %llu s\n",
					       name, i,
					       RACE_TIMEOUT_NS / NSEC_PER_SEC);
			ok = false;
			break;
		}
		if (munmap(b.addr, b.len)) {
			ksft_print_msg("%s: iteration %u: munmap() failed: %s\n",
				       name, i, strerror(errno));
			ok = false;
			break;
		}
		addr = mmap(b.addr, b.len, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_FIXED_NOREPLACE, b.fd, 0);
		if (addr == MAP_FAILED && errno == EEXIST)
			addr = mmap(NULL, b.len, PROT_READ | PROT_WRITE,
				    MAP_SHARED, b.fd, 0);
		if (addr == MAP_FAILED) {
			ksft_print_msg("%s: iteration %u: mmap() failed: %s\n",
				       name, i, strerror(errno));
			b.addr = NULL;
			ok = false;
			break;
		}
		b.addr = addr;
		buf_touch(&b);
		store_release(&vl.addr, (unsigned long)addr);
	}

	store_release(&vl.stop, 1);
	pthread_join(vl.thread, NULL);
	if (vl.bad_err) {
		ksft_print_msg("%s: VERDICT returned %s, expected success, EFAULT or EINTR\n",
			       name, errno_name(vl.bad_err, ebuf, sizeof(ebuf)));
		ok = false;
	}
	if (vl.bad_nr_fast) {
		ksft_print_msg("%s: VERDICT reported nr_fast %lu of %lu pages\n",
			       name, vl.bad_nr_fast, vl.nr_pages);
		ok = false;
	}
	if (ok)
		ksft_print_msg("%s: %lu remaps, %lu VERDICT calls, %lu EFAULT\n",
			       name, opt.race_iters, vl.calls, vl.nr_efault);
	free(vl.verdicts);
	buf_destroy(&b);
	return ok;
}

static bool race_partial_munmap_bench(const char *name)
{
	unsigned int i, nr_efault = 0;
	pthread_barrier_t start;
	struct pin_loop pl;
	size_t half;
	struct buf b;
	bool ok = true;

	for (i = 0; ok && i < opt.race_iters; i++) {
		if (!race_buf(name, &b))
			return false;
		half = (b.len / pagesize / 2) * pagesize;
		pin_loop_init(&pl, &b, &start);
		pl.max_calls = 1;
		pl.accept_efault = true;
		if (!pin_loop_start(name, &pl, &b, &start))
			return false;
		if (munmap(b.addr + half, b.len - half)) {
			ksft_print_msg("%s: iteration %u: munmap() failed: %s\n",
				       name, i, strerror(errno));
			ok = false;
		} else {
			b.len = half;
		}
		if (!pin_loop_stop(name, &pl, &b, &start, false))
			ok = false;
		nr_efault += pl.nr_efault;
	}
	if (ok)
		ksft_print_msg("%s: %lu iterations, %u BENCH calls hit EFAULT\n",
			       name, opt.race_iters, nr_efault);
	return ok;
}

static bool race_mprotect_bench(const char *name)
{
	unsigned long long deadline;
	unsigned long toggles = 0;
	pthread_barrier_t start;
	struct pin_loop pl;
	struct buf b;
	bool ok = true;

	if (!race_buf(name, &b))
		return false;
	pin_loop_init(&pl, &b, &start);
	pl.max_calls = opt.race_iters;
	pl.accept_efault = true;
	if (!pin_loop_start(name, &pl, &b, &start))
		return false;

	deadline = now_ns() + RACE_TIMEOUT_NS;
	while (!load_acquire(&pl.done)) {
		if (mprotect(b.addr, b.len, PROT_READ)) {
			ksft_print_msg("%s: mprotect(PROT_READ) failed: %s\n",
				       name, strerror(errno));
			ok = false;
			break;
		}
		sched_yield();
		if (mprotect(b.addr, b.len, PROT_READ | PROT_WRITE)) {
			ksft_print_msg("%s: mprotect(PROT_READ | PROT_WRITE) failed: %s\n",
				       name, strerror(errno));
			ok = false;
			break;
		}
		toggles++;
		if (now_ns() > deadline) {
			ksft_print_msg("%s: %u BENCH calls did not finish within %llu s\n",
				       name, pl.max_calls,
				       RACE_TIMEOUT_NS / NSEC_PER_SEC);
			ok = false;
			break;
		}
	}
	if (!pin_loop_stop(name, &pl, &b, &start, true))
		ok = false;
	if (ok)
		ksft_print_msg("%s: %u BENCH calls (%u EFAULT), %lu mprotect() toggles\n",
			       name, pl.calls, pl.nr_efault, toggles);
	return ok;
}

static bool race_fork_bench(const char *name)
{
	pthread_barrier_t start;
	struct pin_loop pl;
	char desc[64];
	unsigned int i;
	int ret, status;
	struct buf b;
	bool ok = true;
	pid_t pid;

	if (!race_buf(name, &b))
		return false;
	pin_loop_init(&pl, &b, &start);
	if (!pin_loop_start(name, &pl, &b, &start))
		return false;

	for (i = 0; ok && i < opt.race_iters; i++) {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			ksft_print_msg("%s: iteration %u: fork() failed: %s\n",
				       name, i, strerror(errno));
			ok = false;
			break;
		}
		if (!pid)
			_exit(0);
		ret = wait_child(pid, &status);
		if (ret) {
			ksft_print_msg("%s: iteration %u: waitpid() failed: %s\n",
				       name, i, strerror(-ret));
			ok = false;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			describe_status(status, desc, sizeof(desc));
			ksft_print_msg("%s: iteration %u: child %s\n", name, i,
				       desc);
			ok = false;
		}
	}
	if (!pin_loop_stop(name, &pl, &b, &start, true))
		ok = false;
	if (ok)
		ksft_print_msg("%s: %lu forks, %u BENCH calls\n", name,
			       opt.race_iters, pl.calls);
	return ok;
}

static bool race_close_mapped(const char *name)
{
	unsigned long nr = race_pages(), nr_fast = 0;
	size_t len = nr * pagesize;
	struct buf b;
	unsigned int i;
	void *addr;
	int fd, ret;

	for (i = 0; i < opt.race_iters; i++) {
		fd = shadow_open();
		if (fd < 0) {
			ksft_print_msg("%s: open(%s) failed: %s\n", name,
				       SHADOW_PATH, strerror(errno));
			return false;
		}
		addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			    0);
		ret = addr == MAP_FAILED ? -errno : 0;
		close(fd);
		if (ret) {
			ksft_print_msg("%s: mmap() failed: %s\n", name,
				       strerror(-ret));
			return false;
		}
		/* The file is closed; the mapping must keep working. */
		b.addr = addr;
		b.len = len;
		b.fd = -1;
		buf_touch(&b);
		ret = do_verdict(b.addr, nr, GUP_FAST_FLAG_WRITE, NULL,
				 &nr_fast);
		buf_destroy(&b);
		if (ret) {
			ksft_print_msg("%s: iteration %u: VERDICT failed: %s\n",
				       name, i, strerror(-ret));
			return false;
		}
	}
	ksft_print_msg("%s: last VERDICT after close(): %lu/%lu pages via GUP-fast\n",
		       name, nr_fast, nr);
	return true;
}

static void __noreturn kill_bench_child(int ready_fd)
{
	struct gup_fast_bench_sample *samples;
	const char *what;
	struct buf b;
	int ret;

	if (buf_create(&b, BACKING_SHADOW, opt.pages, &what))
		_exit(2);
	buf_touch(&b);
	samples = anon_map(KILL_BENCH_ITERS * sizeof(*samples),
			   PROT_READ | PROT_WRITE);
	if (!samples)
		_exit(2);
	if (write(ready_fd, "r", 1) != 1)
		_exit(2);
	ret = do_bench(b.addr, opt.pages, KILL_BENCH_ITERS,
		       GUP_FAST_FLAG_WRITE, samples);
	_exit(ret ? 3 : 0);
}

static bool race_kill_bench(const char *name)
{
	unsigned long long t0, lat, max_lat = 0;
	unsigned int i, killed = 0, finished = 0;
	int pfd[2], ret, status;
	char desc[64], c;
	bool ok = true;
	ssize_t n;
	pid_t pid;

	for (i = 0; ok && i < opt.race_iters; i++) {
		if (pipe2(pfd, O_CLOEXEC)) {
			ksft_print_msg("%s: pipe2() failed: %s\n", name,
				       strerror(errno));
			return false;
		}
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			ksft_print_msg("%s: iteration %u: fork() failed: %s\n",
				       name, i, strerror(errno));
			close(pfd[0]);
			close(pfd[1]);
			return false;
		}
		if (!pid) {
			close(pfd[0]);
			kill_bench_child(pfd[1]);
		}
		close(pfd[1]);
		do {
			n = read(pfd[0], &c, 1);
		} while (n < 0 && errno == EINTR);
		close(pfd[0]);

		/* Let the child enter the ioctl, then kill it there. */
		if (n == 1)
			sleep_ns(KILL_DELAY_NS);
		t0 = now_ns();
		kill(pid, SIGKILL);
		ret = wait_child(pid, &status);
		lat = now_ns() - t0;
		if (ret) {
			ksft_print_msg("%s: iteration %u: waitpid() failed: %s\n",
				       name, i, strerror(-ret));
			return false;
		}
		if (lat > max_lat)
			max_lat = lat;

		describe_status(status, desc, sizeof(desc));
		if (n != 1) {
			ksft_print_msg("%s: iteration %u: child failed before BENCH: %s\n",
				       name, i, desc);
			ok = false;
		} else if (WIFSIGNALED(status) &&
			   WTERMSIG(status) == SIGKILL) {
			killed++;
		} else if (WIFEXITED(status) && !WEXITSTATUS(status)) {
			finished++;
		} else {
			ksft_print_msg("%s: iteration %u: child %s\n", name, i,
				       desc);
			ok = false;
		}
	}
	if (ok)
		ksft_print_msg("%s: %u killed, %u finished first, max kill-to-reap %.1f ms\n",
			       name, killed, finished,
			       (double)max_lat / NSEC_PER_MSEC);
	return ok;
}

/* ------------------------------------------------------------------------ */
/* leak_<backing>: every ioctl over a large buffer, then all of it freed */

/* Free memory in kB: MemFree plus the per-CPU page lists; -1 on error. */
static long memfree_kb(void)
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
	/* Freed pages wait on the per-CPU lists, not counted in MemFree. */
	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return kb;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &n) == 1)
			pages += n;
	fclose(f);
	return kb < 0 ? kb : kb + pages * (long)(pagesize / 1024);
}

/*
 * A reference leaked by any ioctl keeps its page allocated after the buffer
 * is unmapped: LEAK_BYTES of pages asked about, pinned and benchmarked
 * must come back to free memory (at least half of them, within LEAK_WAIT_NS;
 * other activity moves it by far less).
 */
static bool leak_case(const char *name, enum backing kind)
{
	struct gup_fast_bench_sample sample;
	unsigned long long deadline;
	struct gup_fast_pin pin;
	unsigned long nr = LEAK_BYTES / pagesize, nr_fast;
	long before, after = -1;
	const char *what;
	struct buf b;
	long want_kb;
	int ret;

	before = memfree_kb();
	ret = buf_create(&b, kind, nr, &what);
	if (ret) {
		ksft_print_msg("%s: %s failed: %s\n", name, what, strerror(-ret));
		return false;
	}
	buf_touch(&b);
	memset(&pin, 0, sizeof(pin));
	pin.addr = (unsigned long)b.addr;
	pin.nr_pages = nr;
	pin.flags = GUP_FAST_FLAG_WRITE;
	ret = do_verdict(b.addr, nr, GUP_FAST_FLAG_WRITE, NULL, &nr_fast);
	if (!ret && ioctl(gup_fd, GUP_FAST_IOCTL_PIN, &pin))
		ret = -errno;
	if (!ret)
		ret = do_bench(b.addr, nr, 1, GUP_FAST_FLAG_WRITE, &sample);
	buf_destroy(&b);
	if (ret) {
		ksft_print_msg("%s: ioctl failed: %s\n", name, strerror(-ret));
		return false;
	}
	want_kb = before - (long)(LEAK_BYTES / 1024 / 2);
	deadline = now_ns() + LEAK_WAIT_NS;
	do {
		after = memfree_kb();
		if (after >= want_kb)
			break;
		sleep_ns(LEAK_POLL_NS);
	} while (now_ns() < deadline);
	ksft_print_msg("%s: free memory %ld kB before, %ld kB after %lu pages\n",
		       name, before, after, nr);
	if (before < 0 || after < want_kb) {
		ksft_print_msg("%s: %ld kB not freed: page references leaked\n",
			       name, before - after);
		return false;
	}
	return true;
}

static bool leak_anon(const char *name)
{
	return leak_case(name, BACKING_ANON);
}

static bool leak_shadow(const char *name)
{
	return leak_case(name, BACKING_SHADOW);
}

struct race_case {
	const char *name;
	bool (*fn)(const char *name);
};

static const struct race_case race_cases[] = {
	{ "race_munmap_verdict", race_munmap_verdict },
	{ "race_partial_munmap_bench", race_partial_munmap_bench },
	{ "race_mprotect_bench", race_mprotect_bench },
	{ "race_fork_bench", race_fork_bench },
	{ "race_close_mapped", race_close_mapped },
	{ "race_kill_bench", race_kill_bench },
	{ "leak_anon", leak_anon },
	{ "leak_shadow", leak_shadow },
};

static void print_help(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: %s [-p PAGES] [-R RACE_ITERS] [-h]\n"
		"  -p PAGES   pages per race buffer, 1..%u (default %d)\n"
		"  -R ITERS   iterations of each race case, 1..%d (default %d)\n",
		program_invocation_short_name, GUP_FAST_MAX_PAGES_PER_CALL,
		DEF_PAGES, MAX_RACE_ITERS, DEF_RACE_ITERS);
	exit(status);
}

static unsigned long parse_ulong(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!isdigit((unsigned char)*s) || errno || *end || !v || v > max) {
		fprintf(stderr, "gupnm_stress: '%s': expected 1..%lu\n", s, max);
		print_help(KSFT_FAIL);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned int i;
	int c;

	while ((c = getopt(argc, argv, "p:R:h")) != -1) {
		if (c == 'p')
			opt.pages = parse_ulong(optarg, GUP_FAST_MAX_PAGES_PER_CALL);
		else if (c == 'R')
			opt.race_iters = parse_ulong(optarg, MAX_RACE_ITERS);
		else
			print_help(c == 'h' ? KSFT_PASS : KSFT_FAIL);
	}
	if (optind != argc)
		print_help(KSFT_FAIL);
	pagesize = sysconf(_SC_PAGESIZE);

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("must be run as root\n");
	gup_fd = shadow_open();
	if (gup_fd < 0)
		ksft_exit_skip("%s: %s: load test_gup_fast with debugfs mounted\n",
			       SHADOW_PATH, strerror(errno));
	ksft_set_plan(ARRAY_SIZE(abi_cases) + ARRAY_SIZE(race_cases));
	run_abi_cases();
	for (i = 0; i < ARRAY_SIZE(race_cases); i++)
		report(race_cases[i].fn(race_cases[i].name),
		       race_cases[i].name);
	close(gup_fd);
	ksft_finished();
}
