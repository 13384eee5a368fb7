// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver for GUP-fast on driver-allocated pages.
 *
 * Drivers such as nvidia-fs map "shadow buffers" into user space: order-0
 * pages from alloc_page(), inserted with vm_insert_page(). Such a folio has
 * no ->mapping, and GUP-fast must still take it unless a long-term writable
 * pin asks for the slow path. This driver builds exactly that kind of buffer
 * when its debugfs file is mapped, asks get_user_pages_fast_only() about any
 * user range of the caller, pins a range and reports how many of its pages
 * the pin dirtied, and times pin_user_pages_fast(); see
 * lib/test_gup_fast_uapi.h for the ABI and
 * tools/testing/selftests/mm/gup_null_mapping.c for the test.
 *
 * The page tables own the pages: vm_insert_pages() takes a reference for
 * each PTE and the driver drops its own once they are mapped, so a page is
 * freed when its last mapping and its last pin are gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "test_gup_fast_uapi.h"

/* Verdict bytes are handed to user space in chunks of this size. */
#define VERDICT_CHUNK	64

static unsigned long max_pages = 65536;
module_param(max_pages, ulong, 0644);
MODULE_PARM_DESC(max_pages, "Largest shadow buffer one mmap() may create, in pages (default 65536)");

static struct dentry *gup_fast_dir;

static int shadow_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long i, num, nr_pages = vma_pages(vma);
	struct page **pages;
	int ret = 0;

	if (!(vma->vm_flags & VM_SHARED) || vma->vm_pgoff)
		return -EINVAL;
	if (nr_pages > READ_ONCE(max_pages))
		return -E2BIG;

	pages = kvcalloc(nr_pages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < nr_pages; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[i]) {
			ret = -ENOMEM;
			break;
		}
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/* On failure the caller zaps whatever was inserted. */
	num = nr_pages;
	if (!ret)
		ret = vm_insert_pages(vma, vma->vm_start, pages, &num);

	/* Each PTE holds its own reference now; drop the allocation's. */
	for (i = 0; i < nr_pages && pages[i]; i++)
		put_page(pages[i]);
	kvfree(pages);
	return ret;
}

/* Validate a page range of the caller; 0 or a negative errno. */
static int check_user_range(u64 addr, u64 nr_pages, u64 limit)
{
	u64 end;

	if (!nr_pages || !PAGE_ALIGNED(addr))
		return -EINVAL;
	if (nr_pages > limit)
		return -E2BIG;
	if (check_add_overflow(addr, nr_pages << PAGE_SHIFT, &end))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(addr), nr_pages << PAGE_SHIFT))
		return -EFAULT;
	return 0;
}

static long gup_fast_verdict(struct gup_fast_verdict __user *uarg)
{
	unsigned int gup_flags = 0;
	struct gup_fast_verdict arg;
	u8 chunk[VERDICT_CHUNK];
	u8 __user *verdicts;
	u64 i, nr_fast = 0;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~GUP_FAST_FLAG_WRITE) || arg.reserved)
		return -EINVAL;
	ret = check_user_range(arg.addr, arg.nr_pages, GUP_FAST_MAX_PAGES);
	if (ret)
		return ret;
	verdicts = u64_to_user_ptr(arg.verdicts);
	if (verdicts && !access_ok(verdicts, arg.nr_pages))
		return -EFAULT;
	if (arg.flags & GUP_FAST_FLAG_WRITE)
		gup_flags |= FOLL_WRITE;

	for (i = 0; i < arg.nr_pages; i++) {
		unsigned long addr = arg.addr + (i << PAGE_SHIFT);
		unsigned int slot = i % VERDICT_CHUNK;
		struct page *page;

		/* One page at a time: a refusal must not hide the rest. */
		chunk[slot] = get_user_pages_fast_only(addr, 1, gup_flags,
						       &page) == 1;
		if (chunk[slot]) {
			put_page(page);
			nr_fast++;
		}
		if (slot != VERDICT_CHUNK - 1 && i != arg.nr_pages - 1)
			continue;
		if (verdicts && copy_to_user(verdicts + i - slot, chunk,
					     slot + 1))
			return -EFAULT;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}

	if (put_user(nr_fast, &uarg->nr_fast))
		return -EFAULT;
	return 0;
}

static unsigned int foll_flags(u32 flags)
{
	return (flags & GUP_FAST_FLAG_WRITE ? FOLL_WRITE : 0) |
	       (flags & GUP_FAST_FLAG_LONGTERM ? FOLL_LONGTERM : 0);
}

static long gup_fast_pin(struct gup_fast_pin __user *uarg)
{
	const u32 known = GUP_FAST_FLAG_WRITE | GUP_FAST_FLAG_LONGTERM |
			  GUP_FAST_FLAG_SLOW_PATH;
	unsigned int gup_flags;
	struct gup_fast_pin arg;
	struct page **pages;
	long i, nr;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~known) || arg.reserved)
		return -EINVAL;
	ret = check_user_range(arg.addr, arg.nr_pages, GUP_FAST_MAX_PAGES);
	if (ret)
		return ret;
	gup_flags = foll_flags(arg.flags);

	pages = kvmalloc_array(arg.nr_pages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	if (arg.flags & GUP_FAST_FLAG_SLOW_PATH)
		nr = pin_user_pages_unlocked(arg.addr, arg.nr_pages, pages,
					     gup_flags);
	else
		nr = pin_user_pages_fast(arg.addr, arg.nr_pages, gup_flags,
					 pages);
	if (nr <= 0) {
		ret = nr ? nr : -EFAULT;
		goto out;
	}

	arg.nr_dirty = 0;
	for (i = 0; i < nr; i++)
		arg.nr_dirty += folio_test_dirty(page_folio(pages[i]));
	/* Not the _dirty_lock variant: the unpin must not dirty them. */
	unpin_user_pages(pages, nr);
	if (nr != arg.nr_pages)
		ret = -EFAULT;
	else if (put_user(arg.nr_dirty, &uarg->nr_dirty))
		ret = -EFAULT;
out:
	kvfree(pages);
	return ret;
}

/* Pin and unpin [addr, addr + nr_pages) once; returns 0 or an errno. */
static int bench_one_pass(struct gup_fast_bench *arg, unsigned int gup_flags,
			  struct page **pages,
			  struct gup_fast_bench_sample *sample)
{
	u64 done, t0, t1;
	int nr, ret;

	for (done = 0; done < arg->nr_pages; done += nr) {
		nr = min_t(u64, arg->pages_per_call, arg->nr_pages - done);

		t0 = ktime_get_ns();
		ret = pin_user_pages_fast(arg->addr + (done << PAGE_SHIFT), nr,
					  gup_flags, pages);
		t1 = ktime_get_ns();
		sample->pin_ns += t1 - t0;
		if (ret != nr) {
			if (ret > 0)
				unpin_user_pages(pages, ret);
			return ret < 0 ? ret : -EFAULT;
		}
		unpin_user_pages(pages, nr);
		sample->unpin_ns += ktime_get_ns() - t1;

		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

static long gup_fast_bench(struct gup_fast_bench __user *uarg)
{
	struct gup_fast_bench_sample __user *samples;
	struct gup_fast_bench arg;
	struct page **pages;
	u32 it;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~(GUP_FAST_FLAG_WRITE | GUP_FAST_FLAG_LONGTERM)) ||
	    arg.reserved)
		return -EINVAL;
	ret = check_user_range(arg.addr, arg.nr_pages, GUP_FAST_MAX_PAGES);
	if (ret)
		return ret;
	if (!arg.pages_per_call || !arg.iterations)
		return -EINVAL;
	if (arg.pages_per_call > GUP_FAST_MAX_PAGES_PER_CALL ||
	    arg.iterations > GUP_FAST_MAX_ITERATIONS)
		return -E2BIG;
	samples = u64_to_user_ptr(arg.samples);
	if (!samples || !access_ok(samples, array_size(arg.iterations,
						       sizeof(*samples))))
		return -EFAULT;

	arg.pages_per_call = min_t(u64, arg.pages_per_call, arg.nr_pages);
	pages = kvmalloc_array(arg.pages_per_call, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;

	for (it = 0; it < arg.iterations; it++) {
		struct gup_fast_bench_sample sample = { };

		ret = bench_one_pass(&arg, foll_flags(arg.flags), pages,
				     &sample);
		if (ret)
			break;
		if (copy_to_user(&samples[it], &sample, sizeof(sample))) {
			ret = -EFAULT;
			break;
		}
		cond_resched();
	}

	kvfree(pages);
	return ret;
}

static long shadow_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	switch (cmd) {
	case GUP_FAST_IOCTL_VERDICT:
		return gup_fast_verdict((void __user *)arg);
	case GUP_FAST_IOCTL_PIN:
		return gup_fast_pin((void __user *)arg);
	case GUP_FAST_IOCTL_BENCH:
		return gup_fast_bench((void __user *)arg);
	}
	return -ENOTTY;
}

static const struct file_operations shadow_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.mmap = shadow_mmap,
	.unlocked_ioctl = shadow_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static int __init test_gup_fast_init(void)
{
	gup_fast_dir = debugfs_create_dir("test_gup_fast", NULL);
	if (IS_ERR(gup_fast_dir))
		return PTR_ERR(gup_fast_dir);

	/* The _unsafe variant: the plain one does not forward ->mmap. */
	debugfs_create_file_unsafe("shadow", 0600, gup_fast_dir, NULL,
				   &shadow_fops);
	return 0;
}

static void __exit test_gup_fast_exit(void)
{
	debugfs_remove_recursive(gup_fast_dir);
}

module_init(test_gup_fast_init);
module_exit(test_gup_fast_exit);

MODULE_DESCRIPTION("Test driver for GUP-fast on vm_insert_page() buffers");
MODULE_LICENSE("GPL");
MODULE_INFO(test, "Y");
