/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What mm/gup_test.c, as the upstream series leaves it, needs from kernels
 * older than the series' base when built out of tree (oot/build-module.sh).
 * The series stays free of version conditionals; they all live here.
 */
#ifndef _GUP_TEST_COMPAT_H
#define _GUP_TEST_COMPAT_H

/*
 * Force-included before the source: the headers whose declarations the
 * wrappers below must follow come first.
 */
#include <linux/version.h>
#include <linux/mm.h>
#include <linux/slab.h>

#ifndef kzalloc_obj
/* kzalloc_obj() came with 7.0 (and some stable updates). */
#define kzalloc_obj(p)	kzalloc(sizeof(p), GFP_KERNEL)
#endif

/*
 * folio_is_longterm_pinnable() reaches page-block helpers that shipped
 * kernels do not export where CMA is built in (get_pfnblock_flags_mask() on
 * Debian's 6.1 and 6.12 arm64) and on 7.x (get_pfnblock_migratetype(), seen
 * on 7.3; upstream, the tristate patch exports it to gup_test): out of tree,
 * PIN_LONGTERM_BENCHMARK's sanity check loses its CMA half.
 */
#if IS_ENABLED(CONFIG_CMA) || LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define folio_is_longterm_pinnable(folio)	((void)(folio), true)
#endif

#if !defined(CONFIG_HAVE_GUP_FAST) && defined(CONFIG_HAVE_FAST_GUP)
/* HAVE_FAST_GUP became HAVE_GUP_FAST in 6.10. */
#define CONFIG_HAVE_GUP_FAST 1
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
/* The vmas argument of get_user_pages() and pin_user_pages() left in 6.5. */
#define get_user_pages(start, nr, flags, pages) \
	get_user_pages(start, nr, flags, pages, NULL)
#define pin_user_pages(start, nr, flags, pages) \
	pin_user_pages(start, nr, flags, pages, NULL)
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
/* vm_flags became read-only behind vm_flags_set() in 6.3. */
#define vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#endif

#endif /* _GUP_TEST_COMPAT_H */
