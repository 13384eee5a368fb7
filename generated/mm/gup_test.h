/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef __GUP_TEST_H
#define __GUP_TEST_H

#include <linux/types.h>

#define GUP_FAST_BENCHMARK	_IOWR('g', 1, struct gup_test)
#define PIN_FAST_BENCHMARK	_IOWR('g', 2, struct gup_test)
#define PIN_LONGTERM_BENCHMARK	_IOWR('g', 3, struct gup_test)
#define GUP_BASIC_TEST		_IOWR('g', 4, struct gup_test)
#define PIN_BASIC_TEST		_IOWR('g', 5, struct gup_test)
#define DUMP_USER_PAGES_TEST	_IOWR('g', 6, struct gup_test)
#define PIN_LONGTERM_TEST_START	_IOW('g', 7, struct pin_longterm_test)
#define PIN_LONGTERM_TEST_STOP	_IO('g', 8)
#define PIN_LONGTERM_TEST_READ	_IOW('g', 9, __u64)
#define GUP_FAST_VERDICT	_IOWR('g', 10, struct gup_fast_verdict)

#define GUP_TEST_MAX_PAGES_TO_DUMP		8

#define GUP_TEST_FLAG_DUMP_PAGES_USE_PIN	0x1

struct gup_test {
	__u64 get_delta_usec;
	__u64 put_delta_usec;
	__u64 addr;
	__u64 size;
	__u32 nr_pages_per_call;
	__u32 gup_flags;
	__u32 test_flags;
	/*
	 * Each non-zero entry is the number of the page (1-based: first page is
	 * page 1, so that zero entries mean "do nothing") from the .addr base.
	 */
	__u32 which_pages[GUP_TEST_MAX_PAGES_TO_DUMP];
};

#define PIN_LONGTERM_TEST_FLAG_USE_WRITE	1
#define PIN_LONGTERM_TEST_FLAG_USE_FAST		2

struct pin_longterm_test {
	__u64 addr;
	__u64 size;
	__u32 flags;
};

#define GUP_FAST_VERDICT_FLAG_WRITE	1
#define GUP_FAST_VERDICT_FLAG_PIN	2
#define GUP_FAST_VERDICT_FLAG_LONGTERM	4
#define GUP_FAST_VERDICT_FLAGS		(GUP_FAST_VERDICT_FLAG_WRITE | \
					 GUP_FAST_VERDICT_FLAG_PIN | \
					 GUP_FAST_VERDICT_FLAG_LONGTERM)

/**
 * struct gup_fast_verdict - ask which pages of a range GUP-fast takes
 * @addr: start of the range in the caller's address space, page aligned
 * @size: length of the range in bytes, a non-zero multiple of the page size
 * @verdicts: user pointer to one byte per page, or 0; byte i is set to 1 if
 *	GUP-fast took page i and to 0 if it did not
 * @nr_fast: out: the number of pages GUP-fast took
 * @flags: GUP_FAST_VERDICT_FLAG_* (above), or 0
 * @reserved: must be 0
 *
 * GUP_FAST_VERDICT asks page by page and drops each reference or pin at
 * once. Its flags are the FOLL_* flags of the question:
 *
 * - GUP_FAST_VERDICT_FLAG_WRITE: FOLL_WRITE.
 * - GUP_FAST_VERDICT_FLAG_PIN: FOLL_PIN, through pin_user_pages_fast();
 *   without it, FOLL_GET through get_user_pages_fast_only().
 * - GUP_FAST_VERDICT_FLAG_LONGTERM: FOLL_LONGTERM; needs the PIN flag.
 *
 * Without GUP_FAST_VERDICT_FLAG_PIN nothing falls back to the slow path:
 * a page that is not present, not writable for a write, or rejected by
 * gup_fast_folio_allowed() counts as not taken. With it, a page GUP-fast
 * refuses goes to the slow path as for any pin_user_pages_fast() caller,
 * which may fault it in; the page counts as taken only if the call pinned
 * it without taking the mmap_lock, which GUP-fast never takes (the
 * mmap_lock_start_locking tracepoint tells). The command fails with
 * EOPNOTSUPP without CONFIG_HAVE_GUP_FAST, and for GUP_FAST_VERDICT_FLAG_PIN
 * without CONFIG_TRACING.
 *
 * A MAP_SHARED mapping of the gup_test file gives pages to ask about: on
 * its first touch, each page is an order-0 page from alloc_page() inserted
 * with vm_insert_page(), whose ->mapping is NULL, as drivers map their
 * buffers.
 */
struct gup_fast_verdict {
	__u64 addr;
	__u64 size;
	__u64 verdicts;
	__u64 nr_fast;
	__u32 flags;
	__u32 reserved;
};

#endif	/* __GUP_TEST_H */
