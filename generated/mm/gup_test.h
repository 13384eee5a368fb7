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

/**
 * struct gup_fast_verdict - ask GUP-fast alone about each page of a range
 * @addr: start of the range in the caller's address space, page aligned
 * @size: length of the range in bytes, a non-zero multiple of the page size
 * @verdicts: user pointer to one byte per page, or 0; byte i is set to 1 if
 *	GUP-fast took page i and to 0 if it refused it
 * @nr_fast: out: the number of pages GUP-fast took
 * @flags: GUP_FAST_VERDICT_FLAG_WRITE to ask for write access, or 0
 * @reserved: must be 0
 *
 * GUP_FAST_VERDICT calls get_user_pages_fast_only() page by page and drops
 * each reference at once. Nothing falls back to the slow path, so a page
 * that is not present, not writable for GUP_FAST_VERDICT_FLAG_WRITE, or
 * rejected by gup_fast_folio_allowed() counts as refused. Without
 * CONFIG_HAVE_GUP_FAST the command fails with EOPNOTSUPP.
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
