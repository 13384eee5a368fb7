/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Out of tree, the #include "internal.h" of the series' mm/gup_test.c finds
 * this file: mm/internal.h is not in a kernel's headers. It supplies, from
 * exported API only, what gup_test.c takes from mm's internals, and what a
 * module needs that a built-in gup_test does not (an exit, a license, a
 * file_operations owner). Nothing here is part of the series.
 *
 * pin_user_pages_fast_only(): in tree, mm/gup.c runs GUP-fast alone with
 * FOLL_PIN (FOLL_PIN and FOLL_FAST_ONLY are internal flags a module cannot
 * pass). Kernels before 6.3 still export a pin_user_pages_fast_only() of
 * their own, which is used as it is. Elsewhere the one here calls
 * pin_user_pages_fast() for the one page asked while a probe on the
 * mmap_lock_start_locking tracepoint watches the calling task: GUP-fast
 * never takes the mmap_lock and the slow path always does, so a page pinned
 * with no lock taken went through GUP-fast; a page the slow path pinned is
 * unpinned and reported as not taken. Where it differs from the in-tree
 * helper:
 *  - the slow path runs where GUP-fast refuses: it may fault the page in,
 *    mark it dirty or accessed, or migrate it for FOLL_LONGTERM;
 *  - it needs CONFIG_TRACING: without it, -EOPNOTSUPP (the test names the
 *    cells it cannot judge);
 *  - the probe stays registered from the first pin until the module is
 *    unloaded (registering patches kernel text), and fires on every
 *    mmap_lock acquisition of the system meanwhile;
 *  - a kernel whose slow path stops taking the mmap_lock (per-VMA locks)
 *    would read as GUP-fast: the test's check that untouched pages read
 *    slow catches that.
 */
#ifndef _GUP_TEST_OOT_INTERNAL_H
#define _GUP_TEST_OOT_INTERNAL_H

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <trace/events/mmap_lock.h>

#ifdef GUP_TEST_HAVE_PIN_FAST_ONLY
/* This kernel still exports its own (Kbuild tells from its header). */
static void gup_test_oot_unregister(void)
{
}
#else
static struct task_struct *gup_test_oot_task;	/* the task pinning, or NULL */
static bool gup_test_oot_locked;		/* it took the mmap_lock */
static bool gup_test_oot_registered;
static DEFINE_MUTEX(gup_test_oot_mutex);	/* one pin at a time */

#ifdef GUP_TEST_MMAP_LOCK_MEMCG_PATH
/* 6.1 and 6.12 pass the memcg path too (Kbuild tells from the header). */
static void gup_test_oot_locking(void *data, struct mm_struct *mm,
				 const char *memcg_path, bool write)
#else
static void gup_test_oot_locking(void *data, struct mm_struct *mm, bool write)
#endif
{
	if (current == READ_ONCE(gup_test_oot_task))
		WRITE_ONCE(gup_test_oot_locked, true);
}

static int pin_user_pages_fast_only(unsigned long start, int nr_pages,
				    unsigned int gup_flags, struct page **pages)
{
	bool locked;
	int ret = 0;

	if (!IS_ENABLED(CONFIG_TRACING))
		return -EOPNOTSUPP;
	if (nr_pages != 1)	/* gup_test asks one page at a time */
		return -EINVAL;
	if (mutex_lock_killable(&gup_test_oot_mutex))
		return -EINTR;
	if (!gup_test_oot_registered)
		ret = register_trace_mmap_lock_start_locking(gup_test_oot_locking, NULL);
	if (ret)
		goto out;
	gup_test_oot_registered = true;
	WRITE_ONCE(gup_test_oot_locked, false);
	WRITE_ONCE(gup_test_oot_task, current);
	ret = pin_user_pages_fast(start, 1, gup_flags, pages);
	WRITE_ONCE(gup_test_oot_task, NULL);
	locked = READ_ONCE(gup_test_oot_locked);
	if (ret == 1 && locked)
		unpin_user_page(pages[0]);
	/* What the slow path pinned or failed, GUP-fast did not take. */
	if (locked)
		ret = 0;
out:
	mutex_unlock(&gup_test_oot_mutex);
	return ret;
}

static void gup_test_oot_unregister(void)
{
	if (!gup_test_oot_registered)
		return;
	unregister_trace_mmap_lock_start_locking(gup_test_oot_locking, NULL);
	/* No probe may still run when the module's text goes. */
	tracepoint_synchronize_unregister();
}
#endif /* GUP_TEST_HAVE_PIN_FAST_ONLY */

static void __exit gup_test_oot_exit(void)
{
	debugfs_lookup_and_remove("gup_test", NULL);
	gup_test_oot_unregister();
}
module_exit(gup_test_oot_exit);

MODULE_DESCRIPTION("gup_test built out of tree (the gup_null_mapping project)");
MODULE_LICENSE("GPL");
MODULE_INFO(test, "Y");

/*
 * A module's file_operations need an owner, so that the module stays while
 * the gup_test file is open or mapped; the series' fops (built in) have
 * none. This rewrites the one ".compat_ioctl = ..." initializer of
 * gup_test.c, which follows, to set it too.
 */
#define compat_ioctl	owner = THIS_MODULE, .compat_ioctl

#endif /* _GUP_TEST_OOT_INTERNAL_H */
