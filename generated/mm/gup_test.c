// SPDX-License-Identifier: GPL-2.0
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/ktime.h>
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include "internal.h"
#include "gup_test.h"

struct gup_test_data {
	struct mutex longterm_mutex;
	struct page **longterm_pages;
	unsigned long longterm_nr_pages;
};

static void put_back_pages(unsigned int cmd, struct page **pages,
			   unsigned long nr_pages, unsigned int gup_test_flags)
{
	unsigned long i;

	switch (cmd) {
	case GUP_FAST_BENCHMARK:
	case GUP_BASIC_TEST:
		for (i = 0; i < nr_pages; i++)
			put_page(pages[i]);
		break;

	case PIN_FAST_BENCHMARK:
	case PIN_BASIC_TEST:
	case PIN_LONGTERM_BENCHMARK:
		unpin_user_pages(pages, nr_pages);
		break;
	case DUMP_USER_PAGES_TEST:
		if (gup_test_flags & GUP_TEST_FLAG_DUMP_PAGES_USE_PIN) {
			unpin_user_pages(pages, nr_pages);
		} else {
			for (i = 0; i < nr_pages; i++)
				put_page(pages[i]);

		}
		break;
	}
}

static void verify_dma_pinned(unsigned int cmd, struct page **pages,
			      unsigned long nr_pages)
{
	unsigned long i;
	struct folio *folio;

	switch (cmd) {
	case PIN_FAST_BENCHMARK:
	case PIN_BASIC_TEST:
	case PIN_LONGTERM_BENCHMARK:
		for (i = 0; i < nr_pages; i++) {
			folio = page_folio(pages[i]);

			if (WARN(!folio_maybe_dma_pinned(folio),
				 "pages[%lu] is NOT dma-pinned\n", i)) {

				dump_page(&folio->page, "gup_test failure");
				break;
			} else if (cmd == PIN_LONGTERM_BENCHMARK &&
				WARN(!folio_is_longterm_pinnable(folio),
				     "pages[%lu] is NOT pinnable but pinned\n",
				     i)) {
				dump_page(&folio->page, "gup_test failure");
				break;
			}
		}
		break;
	}
}

static void dump_pages_test(struct gup_test *gup, struct page **pages,
			    unsigned long nr_pages)
{
	unsigned int index_to_dump;
	unsigned int i;

	/*
	 * Zero out any user-supplied page index that is out of range. Remember:
	 * .which_pages[] contains a 1-based set of page indices.
	 */
	for (i = 0; i < GUP_TEST_MAX_PAGES_TO_DUMP; i++) {
		if (gup->which_pages[i] > nr_pages) {
			pr_warn("ZEROING due to out of range: .which_pages[%u]: %u\n",
				i, gup->which_pages[i]);
			gup->which_pages[i] = 0;
		}
	}

	for (i = 0; i < GUP_TEST_MAX_PAGES_TO_DUMP; i++) {
		index_to_dump = gup->which_pages[i];

		if (index_to_dump) {
			index_to_dump--; // Decode from 1-based, to 0-based
			pr_info("---- page #%u, starting from user virt addr: 0x%llx\n",
				index_to_dump, gup->addr);
			dump_page(pages[index_to_dump],
				  "gup_test: dump_pages() test");
		}
	}
}

static int __gup_test_ioctl(unsigned int cmd,
		struct gup_test *gup)
{
	ktime_t start_time, end_time;
	unsigned long i, nr_pages, addr, next;
	long nr;
	struct page **pages;
	unsigned long end;
	int ret = 0;
	bool needs_mmap_lock =
		cmd != GUP_FAST_BENCHMARK && cmd != PIN_FAST_BENCHMARK;

	if (gup->addr > ULONG_MAX || gup->size > ULONG_MAX)
		return -EINVAL;
	if (check_add_overflow((unsigned long)gup->addr,
			       (unsigned long)gup->size, &end))
		return -EINVAL;

	nr_pages = gup->size / PAGE_SIZE;
	pages = kvcalloc(nr_pages, sizeof(void *), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;

	if (needs_mmap_lock && mmap_read_lock_killable(current->mm)) {
		ret = -EINTR;
		goto free_pages;
	}

	i = 0;
	nr = gup->nr_pages_per_call;
	start_time = ktime_get();
	for (addr = gup->addr; addr < end; addr = next) {
		if (nr != gup->nr_pages_per_call)
			break;

		next = addr + nr * PAGE_SIZE;
		if (next > end) {
			next = end;
			nr = (next - addr) / PAGE_SIZE;
		}

		switch (cmd) {
		case GUP_FAST_BENCHMARK:
			nr = get_user_pages_fast(addr, nr, gup->gup_flags,
						 pages + i);
			break;
		case GUP_BASIC_TEST:
			nr = get_user_pages(addr, nr, gup->gup_flags, pages + i);
			break;
		case PIN_FAST_BENCHMARK:
			nr = pin_user_pages_fast(addr, nr, gup->gup_flags,
						 pages + i);
			break;
		case PIN_BASIC_TEST:
			nr = pin_user_pages(addr, nr, gup->gup_flags, pages + i);
			break;
		case PIN_LONGTERM_BENCHMARK:
			nr = pin_user_pages(addr, nr,
					    gup->gup_flags | FOLL_LONGTERM,
					    pages + i);
			break;
		case DUMP_USER_PAGES_TEST:
			if (gup->test_flags & GUP_TEST_FLAG_DUMP_PAGES_USE_PIN)
				nr = pin_user_pages(addr, nr, gup->gup_flags,
						    pages + i);
			else
				nr = get_user_pages(addr, nr, gup->gup_flags,
						    pages + i);
			break;
		default:
			ret = -EINVAL;
			goto unlock;
		}

		if (nr <= 0)
			break;
		i += nr;
	}
	end_time = ktime_get();

	/* Shifting the meaning of nr_pages: now it is actual number pinned: */
	nr_pages = i;

	gup->get_delta_usec = ktime_us_delta(end_time, start_time);
	gup->size = addr - gup->addr;

	/*
	 * Take an un-benchmark-timed moment to verify DMA pinned
	 * state: print a warning if any non-dma-pinned pages are found:
	 */
	verify_dma_pinned(cmd, pages, nr_pages);

	if (cmd == DUMP_USER_PAGES_TEST)
		dump_pages_test(gup, pages, nr_pages);

	start_time = ktime_get();

	put_back_pages(cmd, pages, nr_pages, gup->test_flags);

	end_time = ktime_get();
	gup->put_delta_usec = ktime_us_delta(end_time, start_time);

unlock:
	if (needs_mmap_lock)
		mmap_read_unlock(current->mm);
free_pages:
	kvfree(pages);
	return ret;
}

static inline void pin_longterm_test_stop(struct gup_test_data *data)
{
	if (data->longterm_pages) {
		if (data->longterm_nr_pages)
			unpin_user_pages(data->longterm_pages,
					 data->longterm_nr_pages);
		kvfree(data->longterm_pages);
		data->longterm_pages = NULL;
		data->longterm_nr_pages = 0;
	}
}

static inline int pin_longterm_test_start(struct gup_test_data *data,
		unsigned long arg)
{
	long nr_pages, cur_pages, addr, remaining_pages;
	int gup_flags = FOLL_LONGTERM;
	struct pin_longterm_test args;
	struct page **pages;
	int ret = 0;
	bool fast;

	if (data->longterm_pages)
		return -EINVAL;

	if (copy_from_user(&args, (void __user *)arg, sizeof(args)))
		return -EFAULT;

	if (args.flags &
	    ~(PIN_LONGTERM_TEST_FLAG_USE_WRITE|PIN_LONGTERM_TEST_FLAG_USE_FAST))
		return -EINVAL;
	if (!IS_ALIGNED(args.addr | args.size, PAGE_SIZE))
		return -EINVAL;
	if (args.size > LONG_MAX)
		return -EINVAL;
	nr_pages = args.size / PAGE_SIZE;
	if (!nr_pages)
		return -EINVAL;

	pages = kvcalloc(nr_pages, sizeof(void *), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;

	if (args.flags & PIN_LONGTERM_TEST_FLAG_USE_WRITE)
		gup_flags |= FOLL_WRITE;
	fast = !!(args.flags & PIN_LONGTERM_TEST_FLAG_USE_FAST);

	if (!fast && mmap_read_lock_killable(current->mm)) {
		kvfree(pages);
		return -EINTR;
	}

	data->longterm_pages = pages;
	data->longterm_nr_pages = 0;

	while (nr_pages - data->longterm_nr_pages) {
		remaining_pages = nr_pages - data->longterm_nr_pages;
		addr = args.addr + data->longterm_nr_pages * PAGE_SIZE;

		if (fast)
			cur_pages = pin_user_pages_fast(addr, remaining_pages,
							gup_flags, pages);
		else
			cur_pages = pin_user_pages(addr, remaining_pages,
						   gup_flags, pages);
		if (cur_pages < 0) {
			pin_longterm_test_stop(data);
			ret = cur_pages;
			break;
		}
		data->longterm_nr_pages += cur_pages;
		pages += cur_pages;
	}

	if (!fast)
		mmap_read_unlock(current->mm);
	return ret;
}

static inline int pin_longterm_test_read(struct gup_test_data *data,
		unsigned long arg)
{
	__u64 user_addr;
	unsigned long i;

	if (!data->longterm_pages)
		return -EINVAL;

	if (copy_from_user(&user_addr, (void __user *)arg, sizeof(user_addr)))
		return -EFAULT;

	for (i = 0; i < data->longterm_nr_pages; i++) {
		void *addr = kmap_local_page(data->longterm_pages[i]);
		unsigned long ret;

		ret = copy_to_user((void __user *)(unsigned long)user_addr, addr,
				   PAGE_SIZE);
		kunmap_local(addr);
		if (ret)
			return -EFAULT;
		user_addr += PAGE_SIZE;
	}
	return 0;
}

static long pin_longterm_test_ioctl(struct file *filep, unsigned int cmd,
				    unsigned long arg)
{
	struct gup_test_data *data = filep->private_data;
	int ret = -EINVAL;

	if (mutex_lock_killable(&data->longterm_mutex))
		return -EINTR;

	switch (cmd) {
	case PIN_LONGTERM_TEST_START:
		ret = pin_longterm_test_start(data, arg);
		break;
	case PIN_LONGTERM_TEST_STOP:
		pin_longterm_test_stop(data);
		ret = 0;
		break;
	case PIN_LONGTERM_TEST_READ:
		ret = pin_longterm_test_read(data, arg);
		break;
	}

	mutex_unlock(&data->longterm_mutex);
	return ret;
}

/* 1 if GUP-fast alone takes the page at @addr for @gup_flags, 0 if not. */
static int gup_fast_takes(unsigned long addr, unsigned int gup_flags, bool pin)
{
	struct page *page;
	int ret = pin ? pin_user_pages_fast_only(addr, 1, gup_flags, &page) :
			get_user_pages_fast_only(addr, 1, gup_flags, &page);

	if (ret == 1 && pin)
		unpin_user_page(page);
	else if (ret == 1)
		put_page(page);
	return ret;
}

static int gup_fast_verdict(struct gup_fast_verdict __user *uarg)
{
	struct gup_fast_verdict args;
	unsigned int gup_flags;
	unsigned long i, end;
	bool pin;
	int ret;

	if (!IS_ENABLED(CONFIG_HAVE_GUP_FAST))
		return -EOPNOTSUPP;
	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	pin = args.flags & GUP_FAST_VERDICT_FLAG_PIN;
	if (args.flags & ~(GUP_FAST_VERDICT_FLAG_WRITE |
			   GUP_FAST_VERDICT_FLAG_PIN |
			   GUP_FAST_VERDICT_FLAG_LONGTERM) || args.reserved ||
	    (args.flags & GUP_FAST_VERDICT_FLAG_LONGTERM && !pin) ||
	    !args.size || !IS_ALIGNED(args.addr | args.size, PAGE_SIZE) ||
	    args.addr > ULONG_MAX || args.size > ULONG_MAX ||
	    args.verdicts > ULONG_MAX ||
	    check_add_overflow((unsigned long)args.addr,
			       (unsigned long)args.size, &end))
		return -EINVAL;
	gup_flags = (args.flags & GUP_FAST_VERDICT_FLAG_WRITE ? FOLL_WRITE : 0) |
		    (args.flags & GUP_FAST_VERDICT_FLAG_LONGTERM ? FOLL_LONGTERM : 0);

	args.nr_fast = 0;
	for (i = 0; i < args.size / PAGE_SIZE; i++) {
		/* One page at a time: a refusal must not hide the rest. */
		ret = gup_fast_takes(args.addr + i * PAGE_SIZE, gup_flags, pin);
		if (ret < 0)
			return ret;
		args.nr_fast += ret;
		if (args.verdicts &&
		    put_user((u8)ret, (u8 __user *)u64_to_user_ptr(args.verdicts) + i))
			return -EFAULT;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	if (copy_to_user(uarg, &args, sizeof(args)))
		return -EFAULT;
	return 0;
}

static long gup_test_ioctl(struct file *filep, unsigned int cmd,
		unsigned long arg)
{
	struct gup_test gup;
	int ret;

	switch (cmd) {
	case GUP_FAST_BENCHMARK:
	case PIN_FAST_BENCHMARK:
	case PIN_LONGTERM_BENCHMARK:
	case GUP_BASIC_TEST:
	case PIN_BASIC_TEST:
	case DUMP_USER_PAGES_TEST:
		break;
	case PIN_LONGTERM_TEST_START:
	case PIN_LONGTERM_TEST_STOP:
	case PIN_LONGTERM_TEST_READ:
		return pin_longterm_test_ioctl(filep, cmd, arg);
	case GUP_FAST_VERDICT:
		return gup_fast_verdict((void __user *)arg);
	default:
		return -ENOTTY;
	}

	if (copy_from_user(&gup, (void __user *)arg, sizeof(gup)))
		return -EFAULT;

	ret = __gup_test_ioctl(cmd, &gup);
	if (ret)
		return ret;

	if (copy_to_user((void __user *)arg, &gup, sizeof(gup)))
		return -EFAULT;

	return 0;
}

static int gup_test_open(struct inode *inode, struct file *file)
{
	struct gup_test_data *data;
	int ret;

	data = kzalloc_obj(*data);
	if (!data)
		return -ENOMEM;

	ret = nonseekable_open(inode, file);
	if (ret) {
		kfree(data);
		return ret;
	}

	mutex_init(&data->longterm_mutex);
	file->private_data = data;
	return 0;
}

static int gup_test_release(struct inode *inode, struct file *file)
{
	struct gup_test_data *data = file->private_data;

	pin_longterm_test_stop(data);
	mutex_destroy(&data->longterm_mutex);
	kfree(data);
	file->private_data = NULL;

	return 0;
}

/*
 * Pages as drivers map their buffers: order-0 pages from alloc_page(),
 * inserted with vm_insert_page(), whose ->mapping stays NULL. Each PTE
 * holds the only reference to its page, so a page goes with its last
 * mapping and its last pin, and nothing is kept per file or per mapping.
 */
static vm_fault_t gup_test_fault(struct vm_fault *vmf)
{
	struct page *page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	vm_fault_t ret;

	if (!page)
		return VM_FAULT_OOM;
	/* A racing fault that inserted first wins: this page is dropped. */
	ret = vmf_insert_page(vmf->vma, vmf->address, page);
	put_page(page);
	return ret;
}

static const struct vm_operations_struct gup_test_vm_ops = {
	.fault = gup_test_fault,
};

static int gup_test_mmap_prepare(struct vm_area_desc *desc)
{
	/* A private mapping would copy the pages on write. */
	if (!vma_desc_test(desc, VMA_MAYSHARE_BIT))
		return -EINVAL;
	/* vm_insert_page() at fault time needs VM_MIXEDMAP set up front. */
	vma_desc_set_flags(desc, VMA_MIXEDMAP_BIT);
	desc->vm_ops = &gup_test_vm_ops;
	return 0;
}

static const struct file_operations gup_test_fops = {
	.open = gup_test_open,
	.unlocked_ioctl = gup_test_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap_prepare = gup_test_mmap_prepare,
	.release = gup_test_release,
};

static int __init gup_test_init(void)
{
	debugfs_create_file_unsafe("gup_test", 0600, NULL, NULL,
				   &gup_test_fops);

	return 0;
}

late_initcall(gup_test_init);
