/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ABI of the GUP-fast test driver (lib/test_gup_fast.c), shared with the
 * kselftest tools/testing/selftests/mm/gup_null_mapping.c.
 *
 * The driver exposes one debugfs file, <debugfs>/test_gup_fast/shadow
 * (root only). Mapping it with mmap(MAP_SHARED) gives a "shadow buffer":
 * order-0 pages from alloc_page() inserted with vm_insert_pages(), whose
 * ->mapping is NULL, as drivers such as nvidia-fs do. The ioctls below work
 * on any user range of the calling process, so anonymous, shmem, file and
 * secretmem memory can serve as controls.
 *
 * The pages start clean (neither the pages nor their PTEs are dirty) and stay
 * so until written through the mapping or dirtied by the kernel.
 *
 * mmap() errors: -EINVAL for MAP_PRIVATE or a non-zero offset, -E2BIG for a
 * length above the module parameter max_pages (default 65536 pages), -ENOMEM
 * when the pages cannot be allocated. The mapping cannot grow (mremap fails
 * with -EFAULT) and holds no fault handler: pages zapped by MADV_DONTNEED are
 * gone (SIGBUS on access) until the buffer is mapped again.
 */
#ifndef _LIB_TEST_GUP_FAST_UAPI_H
#define _LIB_TEST_GUP_FAST_UAPI_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Request FOLL_WRITE. */
#define GUP_FAST_FLAG_WRITE		_BITUL(0)
/* Request FOLL_LONGTERM (GUP_FAST_IOCTL_PIN and GUP_FAST_IOCTL_BENCH). */
#define GUP_FAST_FLAG_LONGTERM		_BITUL(1)
/* Pin with pin_user_pages_unlocked(), never GUP-fast (GUP_FAST_IOCTL_PIN). */
#define GUP_FAST_FLAG_SLOW_PATH		_BITUL(2)

/* Upper bound of @nr_pages in every ioctl (1 GiB of 4 KiB pages). */
#define GUP_FAST_MAX_PAGES		262144U
/* Upper bound of @pages_per_call in GUP_FAST_IOCTL_BENCH. */
#define GUP_FAST_MAX_PAGES_PER_CALL	4096U
/* Upper bound of @iterations in GUP_FAST_IOCTL_BENCH. */
#define GUP_FAST_MAX_ITERATIONS		65536U

/**
 * struct gup_fast_verdict - ask GUP-fast about every page of a range
 * @addr: start of the range; page aligned, user address of the caller.
 * @nr_pages: number of pages, 1 to %GUP_FAST_MAX_PAGES.
 * @flags: 0 (read) or %GUP_FAST_FLAG_WRITE; nothing else.
 * @reserved: must be 0.
 * @verdicts: user pointer to @nr_pages bytes or 0. When set, byte i is
 *	set to 1 if GUP-fast accepted page i, 0 if it refused it.
 * @nr_fast: out: how many pages GUP-fast accepted.
 *
 * The driver calls get_user_pages_fast_only() once per page and drops the
 * reference at once; GUP-fast never falls back to the slow path here, so a
 * refused page (not present, not writable for a write, or rejected by
 * gup_fast_folio_allowed()) counts 0. An unmapped hole is not an error: its
 * pages are refused.
 *
 * Errors: -EINVAL for an unaligned @addr, @nr_pages of 0, a range that
 * wraps, unknown @flags or non-zero @reserved; -E2BIG for @nr_pages above
 * %GUP_FAST_MAX_PAGES; -EFAULT for a range outside the user address space or
 * an unwritable @verdicts buffer (bytes before the fault may be written);
 * -EINTR when a fatal signal arrives.
 */
struct gup_fast_verdict {
	__u64 addr;
	__u64 nr_pages;
	__u32 flags;
	__u32 reserved;
	__u64 verdicts;
	__u64 nr_fast;
};

/**
 * struct gup_fast_pin - pin a range once and count the pages it dirtied
 * @addr: start of the range; page aligned, user address of the caller.
 * @nr_pages: number of pages, 1 to %GUP_FAST_MAX_PAGES.
 * @flags: any of %GUP_FAST_FLAG_WRITE, %GUP_FAST_FLAG_LONGTERM and
 *	%GUP_FAST_FLAG_SLOW_PATH.
 * @reserved: must be 0.
 * @nr_dirty: out: how many of the pinned pages were dirty (PG_dirty) while
 *	pinned.
 *
 * Pins the range with pin_user_pages_fast() (pin_user_pages_unlocked() with
 * %GUP_FAST_FLAG_SLOW_PATH) and unpins it with unpin_user_pages(), which
 * dirties nothing. The slow path touches the pages it returns (FOLL_TOUCH):
 * a write pin marks a clean page dirty. GUP-fast never does. A write pin of
 * clean shadow pages that leaves them clean therefore went through GUP-fast;
 * one that dirties them went through the slow path.
 *
 * Errors: as for &struct gup_fast_verdict; -EFAULT (or the errno of the pin)
 * when a page cannot be pinned; -ENOMEM when the page array cannot be
 * allocated.
 */
struct gup_fast_pin {
	__u64 addr;
	__u64 nr_pages;
	__u32 flags;
	__u32 reserved;
	__u64 nr_dirty;
};

/**
 * struct gup_fast_bench_sample - one timed iteration
 * @pin_ns: time spent in pin_user_pages_fast() over the whole range.
 * @unpin_ns: time spent in unpin_user_pages() over the whole range.
 */
struct gup_fast_bench_sample {
	__u64 pin_ns;
	__u64 unpin_ns;
};

/**
 * struct gup_fast_bench - time pin_user_pages_fast() and unpin_user_pages()
 * @addr: start of the range; page aligned, user address of the caller.
 * @nr_pages: number of pages, 1 to %GUP_FAST_MAX_PAGES.
 * @pages_per_call: pages passed to one pin_user_pages_fast() call, 1 to
 *	%GUP_FAST_MAX_PAGES_PER_CALL; the last call of an iteration may
 *	pass fewer.
 * @iterations: timed passes over the range, 1 to %GUP_FAST_MAX_ITERATIONS.
 * @flags: any of %GUP_FAST_FLAG_WRITE and %GUP_FAST_FLAG_LONGTERM.
 * @reserved: must be 0.
 * @samples: user pointer to @iterations &struct gup_fast_bench_sample,
 *	filled in iteration order.
 *
 * Every page pinned is unpinned before the ioctl returns, on success and on
 * error.
 *
 * Errors: as for &struct gup_fast_verdict, plus -E2BIG for @pages_per_call
 * or @iterations above their bounds; -EFAULT (or the errno of
 * pin_user_pages_fast()) when a page of the range cannot be pinned, for
 * example an unmapped hole or a write pin of a read-only mapping; -ENOMEM
 * when the page array cannot be allocated.
 */
struct gup_fast_bench {
	__u64 addr;
	__u64 nr_pages;
	__u32 pages_per_call;
	__u32 iterations;
	__u32 flags;
	__u32 reserved;
	__u64 samples;
};

#define GUP_FAST_IOCTL_VERDICT	_IOWR('G', 0x60, struct gup_fast_verdict)
#define GUP_FAST_IOCTL_BENCH	_IOW('G', 0x61, struct gup_fast_bench)
#define GUP_FAST_IOCTL_PIN	_IOWR('G', 0x62, struct gup_fast_pin)

#endif /* _LIB_TEST_GUP_FAST_UAPI_H */
