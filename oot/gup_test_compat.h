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

#ifdef CONFIG_CMA
/*
 * folio_is_longterm_pinnable() reads the page block's migratetype where
 * CONFIG_CMA is set, through a function no module can call. Out of tree,
 * PIN_LONGTERM_BENCHMARK's sanity check keeps the function's other checks
 * (zero page, device-coherent memory, ZONE_MOVABLE) and leaves the CMA one
 * out; the test does not use it.
 */
static inline bool gup_test_oot_longterm_pinnable(struct folio *folio)
{
	if (is_zero_pfn(folio_pfn(folio)))
		return true;
	return !folio_is_device_coherent(folio) && folio_zonenum(folio) != ZONE_MOVABLE;
}
#define folio_is_longterm_pinnable(folio)	gup_test_oot_longterm_pinnable(folio)
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

#ifndef vma_desc_set_flags
/*
 * Before the VMA flag bits (7.x), vm_area_desc carried vm_flags, as the
 * stand-in below does.
 */
#define VMA_MAYSHARE_BIT		VM_MAYSHARE
#define VMA_MIXEDMAP_BIT		VM_MIXEDMAP
#define vma_desc_test(desc, flag)	((desc)->vm_flags & (flag))
#define vma_desc_set_flags(desc, flag)	((desc)->vm_flags |= (flag))
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 16, 0)
/*
 * ->mmap_prepare and struct vm_area_desc came with 6.16. Before, an ->mmap
 * wrapper runs the source's handler on a stand-in descriptor: the wrapper
 * takes gup_test_mmap_prepare's name (that is what the file operations
 * name), the handler is renamed, and .mmap_prepare becomes .mmap.
 */
struct vm_area_desc {
	struct file *file;
	vm_flags_t vm_flags;
	const struct vm_operations_struct *vm_ops;
};

static int gup_test_mmap_prepare_desc(struct vm_area_desc *desc);

static int gup_test_mmap_prepare(struct file *file, struct vm_area_struct *vma)
{
	struct vm_area_desc desc = { .file = file, .vm_flags = vma->vm_flags };
	int ret = gup_test_mmap_prepare_desc(&desc);

	if (!ret) {
		vm_flags_set(vma, desc.vm_flags & ~vma->vm_flags);
		vma->vm_ops = desc.vm_ops;
	}
	return ret;
}

#define gup_test_mmap_prepare(desc)	gup_test_mmap_prepare_desc(desc)
#define mmap_prepare			mmap
#endif

#endif /* _GUP_TEST_COMPAT_H */
