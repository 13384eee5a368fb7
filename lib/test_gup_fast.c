// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver for GUP-fast on driver-allocated pages.
 *
 * Drivers such as nvidia-fs map "shadow buffers" into user space: order-0
 * pages from alloc_page(), inserted with vm_insert_page(). Such a folio has
 * no ->mapping, and GUP-fast must still take it unless a long-term writable
 * pin asks for the slow path. This driver builds exactly that kind of buffer
 * when its debugfs file is mapped, asks get_user_pages_fast_only() about any
 * user range of the caller, and times pin_user_pages_fast(); see
 * lib/test_gup_fast_uapi.h for the ABI and
 * tools/testing/selftests/mm/gup_null_mapping.c for the test.
 *
 * Page lifetime: a shadow buffer owns one reference on each of its pages and
 * is shared, reference counted, by every VMA that maps it (a split, mremap
 * or fork opens one more). When the last VMA closes, the buffer moves to a
 * drain list and drops each page once nobody else holds a reference, so a
 * reference leaked anywhere on these pages keeps live_pages above zero
 * instead of going unnoticed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
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

/* Pages this driver holds a reference on, mapped or draining. */
static atomic_long_t live_pages = ATOMIC_LONG_INIT(0);

/* Buffers no longer mapped whose pages are still referenced elsewhere. */
static LIST_HEAD(drain_list);
static DEFINE_MUTEX(drain_lock);

static struct dentry *gup_fast_dir;

struct shadow_buf {
	struct kref ref;
	struct list_head drain;
	unsigned long nr_pages;
	struct page *pages[];
};

/* Drop the pages nobody else references; true when none is left. */
static bool shadow_buf_drain(struct shadow_buf *buf)
{
	bool empty = true;
	unsigned long i;

	for (i = 0; i < buf->nr_pages; i++) {
		struct page *page = buf->pages[i];

		if (!page)
			continue;
		if (page_count(page) != 1) {
			empty = false;
			continue;
		}
		put_page(page);
		buf->pages[i] = NULL;
		atomic_long_dec(&live_pages);
	}
	return empty;
}

static void drain_all(void)
{
	struct shadow_buf *buf, *next;

	mutex_lock(&drain_lock);
	list_for_each_entry_safe(buf, next, &drain_list, drain) {
		if (shadow_buf_drain(buf)) {
			list_del(&buf->drain);
			kvfree(buf);
		}
	}
	mutex_unlock(&drain_lock);
}

static void shadow_buf_release(struct kref *ref)
{
	struct shadow_buf *buf = container_of(ref, struct shadow_buf, ref);

	mutex_lock(&drain_lock);
	list_add_tail(&buf->drain, &drain_list);
	mutex_unlock(&drain_lock);
	drain_all();
}

static void shadow_vm_open(struct vm_area_struct *vma)
{
	struct shadow_buf *buf = vma->vm_private_data;

	kref_get(&buf->ref);
}

static void shadow_vm_close(struct vm_area_struct *vma)
{
	struct shadow_buf *buf = vma->vm_private_data;

	kref_put(&buf->ref, shadow_buf_release);
}

static const struct vm_operations_struct shadow_vm_ops = {
	.open = shadow_vm_open,
	.close = shadow_vm_close,
};

static int shadow_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long nr_pages = vma_pages(vma);
	struct shadow_buf *buf;
	unsigned long i, num;
	int ret;

	if (!(vma->vm_flags & VM_SHARED) || vma->vm_pgoff)
		return -EINVAL;
	if (nr_pages > READ_ONCE(max_pages))
		return -E2BIG;

	buf = kvzalloc(struct_size(buf, pages, nr_pages), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	kref_init(&buf->ref);
	INIT_LIST_HEAD(&buf->drain);
	buf->nr_pages = nr_pages;

	for (i = 0; i < nr_pages; i++) {
		buf->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!buf->pages[i]) {
			ret = -ENOMEM;
			goto out_put;
		}
		atomic_long_inc(&live_pages);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out_put;
		}
		cond_resched();
	}

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/*
	 * On failure the caller zaps whatever was inserted; our own
	 * references go with the buffer below.
	 */
	num = nr_pages;
	ret = vm_insert_pages(vma, vma->vm_start, buf->pages, &num);
	if (ret)
		goto out_put;

	vma->vm_private_data = buf;
	vma->vm_ops = &shadow_vm_ops;
	return 0;

out_put:
	kref_put(&buf->ref, shadow_buf_release);
	return ret;
}

/* Validate a page range of the caller; 0 or a negative errno. */
static int check_user_range(u64 addr, u64 nr_pages)
{
	u64 end;

	if (!nr_pages || !PAGE_ALIGNED(addr))
		return -EINVAL;
	if (nr_pages > GUP_FAST_MAX_PAGES)
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
	ret = check_user_range(arg.addr, arg.nr_pages);
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
	unsigned int gup_flags = 0;
	struct gup_fast_bench arg;
	struct page **pages;
	u32 it;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~(GUP_FAST_FLAG_WRITE | GUP_FAST_FLAG_LONGTERM)) ||
	    arg.reserved)
		return -EINVAL;
	ret = check_user_range(arg.addr, arg.nr_pages);
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

	if (arg.flags & GUP_FAST_FLAG_WRITE)
		gup_flags |= FOLL_WRITE;
	if (arg.flags & GUP_FAST_FLAG_LONGTERM)
		gup_flags |= FOLL_LONGTERM;

	arg.pages_per_call = min_t(u64, arg.pages_per_call, arg.nr_pages);
	pages = kvmalloc_array(arg.pages_per_call, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;

	for (it = 0; it < arg.iterations; it++) {
		struct gup_fast_bench_sample sample = { };

		ret = bench_one_pass(&arg, gup_flags, pages, &sample);
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

static int live_pages_get(void *data, u64 *val)
{
	drain_all();
	*val = atomic_long_read(&live_pages);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(live_pages_fops, live_pages_get, NULL, "%llu\n");

static int __init test_gup_fast_init(void)
{
	gup_fast_dir = debugfs_create_dir("test_gup_fast", NULL);
	if (IS_ERR(gup_fast_dir))
		return PTR_ERR(gup_fast_dir);

	/*
	 * The _unsafe variants: the plain ones do not forward ->mmap. The
	 * module cannot go away under an open file or a mapping, both of
	 * which pin it through ->owner.
	 */
	debugfs_create_file_unsafe("shadow", 0600, gup_fast_dir, NULL,
				   &shadow_fops);
	debugfs_create_file_unsafe("live_pages", 0400, gup_fast_dir, NULL,
				   &live_pages_fops);
	return 0;
}

static void __exit test_gup_fast_exit(void)
{
	struct shadow_buf *buf, *next;
	unsigned long i, leaked = 0;

	debugfs_remove_recursive(gup_fast_dir);

	drain_all();
	list_for_each_entry_safe(buf, next, &drain_list, drain) {
		for (i = 0; i < buf->nr_pages; i++) {
			if (!buf->pages[i])
				continue;
			leaked++;
			put_page(buf->pages[i]);
			atomic_long_dec(&live_pages);
		}
		list_del(&buf->drain);
		kvfree(buf);
	}
	if (leaked)
		pr_err("%lu pages still referenced at unload: reference leak\n",
		       leaked);
}

module_init(test_gup_fast_init);
module_exit(test_gup_fast_exit);

MODULE_DESCRIPTION("Test driver for GUP-fast on vm_insert_page() buffers");
MODULE_LICENSE("GPL");
MODULE_INFO(test, "Y");
