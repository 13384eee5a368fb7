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
#define GUP_FAST_VERDICT	_IOWR('g', 11, struct gup_fast_verdict)

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

#define GUP_FAST_VERDICT_FLAG_WRITE	1	/* FOLL_WRITE */
#define GUP_FAST_VERDICT_FLAG_PIN	2	/* FOLL_PIN, else FOLL_GET */
#define GUP_FAST_VERDICT_FLAG_LONGTERM	4	/* FOLL_LONGTERM, with _PIN */

/**
 * struct gup_fast_verdict - which pages of a range GUP-fast takes
 * @addr: start of the range, page aligned
 * @size: length of the range in bytes, a non-zero multiple of the page size
 * @verdicts: user pointer to one byte per page, or 0: byte i is set to 1
 *	if GUP-fast took page i, else to 0
 * @nr_fast: out: how many pages GUP-fast took
 * @flags: GUP_FAST_VERDICT_FLAG_*: the FOLL_* flags of the question
 * @reserved: must be 0
 *
 * GUP_FAST_VERDICT asks GUP-fast alone, one page at a time, and drops each
 * reference or pin at once: nothing falls back to the slow path, so a page
 * that is not present, not writable for a write, or refused by
 * gup_fast_folio_allowed() reads 0. It fails with EOPNOTSUPP where the
 * kernel has no GUP-fast, and with EFAULT beyond the user address space.
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
