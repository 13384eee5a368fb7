// SPDX-License-Identifier: GPL-2.0
/*
 * gupnm_probe: does GUP-fast take NULL-mapping order-0 folios on the running
 * kernel? No test module needed; root, /proc/kpageflags and one in-kernel
 * vm_insert_page() user are enough.
 *
 * Since v6.10 (f002882ca369) gup_fast_folio_allowed() sends every order-0
 * folio with a NULL ->mapping to the slow path when CONFIG_SECRETMEM=y; the
 * fix (c494788faffe) lets GUP-fast take them again unless the pin is
 * FOLL_LONGTERM|FOLL_WRITE.
 *
 * Producers: kernel code that hands user space alloc_page() pages through
 * vm_insert_page(), remap_vmalloc_range() or vm_insert_pages(): af_packet's
 * TX ring (the verdict), io_uring's SQE array and SQ ring, the BPF ring
 * buffer's consumer page, an mmapable BPF array, kcov's area.
 *
 * Trigger: a non-private FUTEX_WAKE does get_user_pages_fast(FOLL_WRITE) on
 * the futex word's page (and then fails with EFAULT on a NULL-mapping page).
 * Witness: when GUP-fast refuses the page, the slow path's FOLL_TOUCH marks
 * a clean page dirty (follow_page_pte(): FOLL_WRITE, PTE and page clean);
 * GUP-fast does not. Both paths mark the page referenced, which shows that
 * the GUP reached it at all. /proc/self/pagemap gives the PFN, /proc/kpageflags
 * the page's flags before and after. The witness is checked on each kernel
 * first: MADV_POPULATE_WRITE (always the slow path, same follow_page_pte())
 * must dirty every clean page of a fresh mapping of the producer.
 *
 * Control: MAP_SHARED anonymous (shmem) pages, read-faulted (writable, clean
 * PTE) and checked clean, through the same trigger: GUP-fast takes them on
 * every kernel, so they must stay clean or no verdict counts.
 *
 * Cost: FUTEX_WAKE on the producer's pages vs the control's, repetitions
 * alternating, median and spread.
 *
 * Cannot see: FOLL_LONGTERM|FOLL_WRITE pins (the other half of the fix). A
 * futex GUP is neither FOLL_PIN nor FOLL_LONGTERM.
 *
 * Output is KTAP; exit 0 pass, 1 fail, 4 skip (kselftest codes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/kcov.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "probe.h"

#define MAX_ROUNDS	1001
#define CALLS_PER_PAGE	4

#define MSG_BUG	"GUP-fast rejects NULL-mapping order-0 folios"

/* What the trigger did to a mapping's pages. */
struct outcome {
	unsigned int nr;	/* pages triggered */
	unsigned int dirtied;	/* clean -> dirty: slow path */
	unsigned int reached;	/* unreferenced -> referenced */
	unsigned int unref;	/* unreferenced before the trigger */
	unsigned int efault;	/* FUTEX_WAKE returned EFAULT */
};

/*
 * A producer maps pages into @m. 0: mapped; -errno: what failed, in @why;
 * KSFT_SKIP: the facility is missing, the reason in @why.
 */
typedef int (*map_fn)(struct mapping *m, char *why, size_t len);

static int map_control(struct mapping *m, char *why, size_t len)
{
	void *p = mmap(NULL, opt.pages * page_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	m->control = true;
	/* Order-0 shmem, with or without madvise(); map_check() checks it. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	snprintf(why, len, "mmap(MAP_SHARED|MAP_ANONYMOUS)");
	return add_region(m, p, opt.pages * page_size, 0, opt.pages);
}

static int io_uring_map(struct mapping *m, char *why, size_t len, bool sqes)
{
	unsigned int entries = opt.uring_entries;
	struct io_uring_params p;
	size_t size;
	void *addr;
	int ret;

	/*
	 * By default one page of SQEs and a one-page ring: order-0 allocations
	 * on every kernel. Larger rings (-u) are allocated as one compound
	 * page on 6.12 and 7.x, which GUP-fast never refused.
	 */
	if (!entries)
		entries = page_size / sizeof(struct io_uring_sqe);
	memset(&p, 0, sizeof(p));
	ret = add_fd(m, syscall(__NR_io_uring_setup, entries, &p));
	if (ret == -ENOSYS || ret == -EPERM) {
		snprintf(why, len, "io_uring_setup: %s (CONFIG_IO_URING off or kernel.io_uring_disabled set)",
			 strerror(-ret));
		return KSFT_SKIP;
	}
	snprintf(why, len, "io_uring_setup(%u)", entries);
	if (ret)
		return ret;
	if (sqes) {
		size = p.sq_entries * sizeof(struct io_uring_sqe);
		snprintf(why, len, "mmap(IORING_OFF_SQES, %zu)", size);
		addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    m->fd[0], IORING_OFF_SQES);
	} else {
		size = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
		/* One mapping holds both rings: map all of it. */
		if ((p.features & IORING_FEAT_SINGLE_MMAP) &&
		    p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe) > size)
			size = p.cq_off.cqes +
			       p.cq_entries * sizeof(struct io_uring_cqe);
		snprintf(why, len, "mmap(IORING_OFF_SQ_RING, %zu)", size);
		addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    m->fd[0], IORING_OFF_SQ_RING);
	}
	return add_region(m, addr, size, 0, (size + page_size - 1) / page_size);
}

static int map_io_uring_sqes(struct mapping *m, char *why, size_t len)
{
	return io_uring_map(m, why, len, true);
}

static int map_io_uring_sq_ring(struct mapping *m, char *why, size_t len)
{
	return io_uring_map(m, why, len, false);
}

static int bpf_map_create(uint32_t type, uint32_t key_size, uint32_t value_size,
			  uint32_t max_entries, uint32_t flags)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = type;
	attr.key_size = key_size;
	attr.value_size = value_size;
	attr.max_entries = max_entries;
	attr.map_flags = flags;
	return syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
}

static bool bpf_missing(int ret, char *why, size_t len, const char *what)
{
	if (ret != -ENOSYS && ret != -EPERM && ret != -EINVAL)
		return false;
	snprintf(why, len, "bpf(BPF_MAP_CREATE, %s): %s (CONFIG_BPF_SYSCALL off, no CAP_BPF, or map type unknown to this kernel)",
		 what, strerror(-ret));
	return true;
}

/* The consumer page of BPF ring buffers: the only page mapped writable. */
static int map_bpf_ringbuf(struct mapping *m, char *why, size_t len)
{
	unsigned int i, nr = opt.pages < 4 ? opt.pages : 4;
	int ret;

	for (i = 0; i < nr; i++) {
		ret = add_fd(m, bpf_map_create(BPF_MAP_TYPE_RINGBUF, 0, 0,
					       page_size, 0));
		if (bpf_missing(ret, why, len, "BPF_MAP_TYPE_RINGBUF"))
			return KSFT_SKIP;
		snprintf(why, len, "bpf(BPF_MAP_CREATE, BPF_MAP_TYPE_RINGBUF)");
		if (ret)
			return ret;
		snprintf(why, len, "mmap(ring buffer consumer page)");
		ret = add_region(m, mmap(NULL, page_size, PROT_READ | PROT_WRITE,
					 MAP_SHARED, m->fd[i], 0),
				 page_size, 0, 1);
		if (ret)
			return ret;
	}
	return 0;
}

static int map_bpf_array(struct mapping *m, char *why, size_t len)
{
	size_t size = opt.pages * page_size;
	int ret;

	ret = add_fd(m, bpf_map_create(BPF_MAP_TYPE_ARRAY, 4, 8, size / 8,
				       BPF_F_MMAPABLE));
	if (bpf_missing(ret, why, len, "BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE"))
		return KSFT_SKIP;
	snprintf(why, len, "bpf(BPF_MAP_CREATE, BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE)");
	if (ret)
		return ret;
	snprintf(why, len, "mmap(mmapable BPF array)");
	return add_region(m, mmap(NULL, size, PROT_READ | PROT_WRITE,
				  MAP_SHARED, m->fd[0], 0),
			  size, 0, opt.pages);
}

static int map_kcov(struct mapping *m, char *why, size_t len)
{
	size_t words = opt.pages * page_size / sizeof(unsigned long);
	int ret;

	/* The probe mounts nothing: debugfs must already be there. */
	ret = add_fd(m, open("/sys/kernel/debug/kcov", O_RDWR | O_CLOEXEC));
	if (ret == -ENOENT || ret == -EACCES || ret == -EPERM) {
		snprintf(why, len, "/sys/kernel/debug/kcov: %s (CONFIG_KCOV off or debugfs not mounted; the probe mounts nothing)",
			 strerror(-ret));
		return KSFT_SKIP;
	}
	snprintf(why, len, "open(/sys/kernel/debug/kcov)");
	if (ret)
		return ret;
	snprintf(why, len, "ioctl(KCOV_INIT_TRACE, %zu)", words);
	if (ioctl(m->fd[0], KCOV_INIT_TRACE, words))
		return -errno;
	snprintf(why, len, "mmap(kcov area)");
	return add_region(m, mmap(NULL, words * sizeof(unsigned long),
				  PROT_READ | PROT_WRITE, MAP_SHARED,
				  m->fd[0], 0),
			  words * sizeof(unsigned long), 0, opt.pages);
}

/*
 * Check that @m's pages can carry the witness: present, clean, and for a
 * producer order-0, not anon, in a VM_MIXEDMAP VMA (vm_insert_page()).
 * Returns 0 or KSFT_SKIP (why says which page and why).
 */
static int check_pages(struct mapping *m, uint64_t *pfn, uint64_t *before,
		       char *why, size_t len)
{
	char vmf[256];
	unsigned int i;
	int ret;

	ret = vma_flags(m->page[0], vmf, sizeof(vmf));
	if (ret) {
		snprintf(why, len, "/proc/self/smaps: %s", strerror(-ret));
		return -EIO;
	}
	if (!m->control && (!has_vmflag(vmf, "mm") || has_vmflag(vmf, "pf"))) {
		snprintf(why, len, "not a vm_insert_page() mapping on this kernel (VmFlags:%s): %s",
			 vmf, has_vmflag(vmf, "pf") ?
			 "VM_PFNMAP, which GUP refuses on both paths" :
			 "no VM_MIXEDMAP");
		return KSFT_SKIP;
	}
	for (i = 0; i < m->nr_pages; i++) {
		uint64_t f;

		(void)m->page[i][0];	/* read-touch only: the PTE stays clean */
		ret = page_pfn(m->page[i], &pfn[i]);
		if (ret) {
			snprintf(why, len, "/proc/self/pagemap, page %u: %s",
				 i, ret == -EPERM ? "PFN hidden (needs CAP_SYS_ADMIN)" :
				 ret == -ENOENT ? "not present after a read" :
				 strerror(-ret));
			return ret == -EPERM ? KSFT_SKIP : ret;
		}
		ret = kpageflags(pfn[i], &f);
		if (ret) {
			snprintf(why, len, "/proc/kpageflags, pfn %#llx: %s",
				 (unsigned long long)pfn[i], strerror(-ret));
			return ret;
		}
		before[i] = f;
		if (KPF(f, KPF_DIRTY)) {
			snprintf(why, len, "page %u is dirty before the trigger (kpageflags %#llx): the witness cannot work on it",
				 i, (unsigned long long)f);
			return KSFT_SKIP;
		}
		/* The control must be order-0 too: a shmem THP says nothing of them. */
		if (m->control && (KPF(f, KPF_COMPOUND_HEAD) || KPF(f, KPF_COMPOUND_TAIL) ||
				   KPF(f, KPF_THP))) {
			snprintf(why, len, "control: shmem page %u is not order-0 (kpageflags %#llx: shmem THP, see shmem_enabled): no order-0 control, no verdict",
				 i, (unsigned long long)f);
			return KSFT_SKIP;
		}
		if (m->control)
			continue;
		if (KPF(f, KPF_COMPOUND_HEAD) || KPF(f, KPF_COMPOUND_TAIL) ||
		    KPF(f, KPF_HUGE) || KPF(f, KPF_THP) || KPF(f, KPF_ANON) ||
		    KPF(f, KPF_SLAB)) {
			snprintf(why, len, "page %u is not an order-0 non-anon page on this kernel (kpageflags %#llx%s): GUP-fast never refused it",
				 i, (unsigned long long)f,
				 KPF(f, KPF_COMPOUND_HEAD) || KPF(f, KPF_COMPOUND_TAIL) ?
				 ", compound" : "");
			return KSFT_SKIP;
		}
	}
	return 0;
}

/*
 * Trigger every page of @m once; what its flags say afterwards into @o.
 * @populate: MADV_POPULATE_WRITE instead of FUTEX_WAKE (the witness check).
 */
static int trigger(struct mapping *m, struct outcome *o, bool populate,
		   char *why, size_t len)
{
	uint64_t pfn[MAX_PAGES], before[MAX_PAGES], after;
	unsigned int i;
	int ret;

	memset(o, 0, sizeof(*o));
	ret = check_pages(m, pfn, before, why, len);
	if (ret)
		return ret;
	for (i = 0; i < m->nr_pages; i++) {
		if (populate) {
			ret = madvise((void *)m->page[i], page_size,
				      MADV_POPULATE_WRITE) ? -errno : 0;
			if (ret == -EINVAL || ret == -ENOSYS) {
				snprintf(why, len, "MADV_POPULATE_WRITE: %s (%s): the witness cannot be checked",
					 strerror(-ret), ret == -ENOSYS ?
					 "no madvise(): CONFIG_ADVISE_SYSCALLS off" :
					 "before 5.14");
				return KSFT_SKIP;
			}
			if (ret) {
				snprintf(why, len, "MADV_POPULATE_WRITE on page %u: %s",
					 i, strerror(-ret));
				return ret;
			}
			continue;
		}
		ret = futex_wake(m->page[i]);
		if (ret == -EFAULT) {
			o->efault++;
		} else if (ret < 0) {
			snprintf(why, len, "FUTEX_WAKE on page %u: %s", i,
				 strerror(-ret));
			return ret;
		}
	}
	for (i = 0; i < m->nr_pages; i++) {
		ret = kpageflags(pfn[i], &after);
		if (ret) {
			snprintf(why, len, "/proc/kpageflags after the trigger: %s",
				 strerror(-ret));
			return ret;
		}
		o->nr++;
		o->dirtied += KPF(after, KPF_DIRTY);
		if (!KPF(before[i], KPF_REFERENCED)) {
			o->unref++;
			o->reached += KPF(after, KPF_REFERENCED);
		}
		if (opt.verbose)
			msg("  page %2u pfn %#llx kpageflags %#llx -> %#llx\n",
			    i, (unsigned long long)pfn[i],
			    (unsigned long long)before[i],
			    (unsigned long long)after);
	}
	return 0;
}

static void print_outcome(const char *name, const struct outcome *o)
{
	msg("%s: %u/%u pages dirtied by the trigger (slow path), %u/%u unreferenced pages referenced after it, FUTEX_WAKE EFAULT on %u\n",
	    name, o->dirtied, o->nr, o->reached, o->unref, o->efault);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per FUTEX_WAKE over @m's pages, CALLS_PER_PAGE passes. */
static double time_wakes(struct mapping *m)
{
	unsigned int i, k;
	double t0 = now_ns();

	for (k = 0; k < CALLS_PER_PAGE; k++)
		for (i = 0; i < m->nr_pages; i++)
			futex_wake(m->page[i]);
	return (now_ns() - t0) / (CALLS_PER_PAGE * m->nr_pages);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The cost figure: ns per FUTEX_WAKE on @m vs @ctl, one repetition of each
 * per round, the order alternating round by round so that drift of the
 * machine's speed hits both alike. Spread: the per-round ratios' quartiles.
 */
static void cost(const char *name, struct mapping *m, struct mapping *ctl)
{
	static double a[MAX_ROUNDS], b[MAX_ROUNDS], r[MAX_ROUNDS];
	unsigned int i, n = opt.rounds;
	double ma, mb;

	if (!n)
		return;
	time_wakes(m);		/* warm-up */
	time_wakes(ctl);
	for (i = 0; i < n; i++) {
		if (i % 2) {
			b[i] = time_wakes(ctl);
			a[i] = time_wakes(m);
		} else {
			a[i] = time_wakes(m);
			b[i] = time_wakes(ctl);
		}
		r[i] = a[i] / b[i];
	}
	ma = median(a, n);
	mb = median(b, n);
	median(r, n);
	msg("cost %s: FUTEX_WAKE %.0f ns/call vs control %.0f ns/call: ratio %.2f (median of %u alternating rounds of %u calls each; per-round ratio min %.2f, quartiles %.2f-%.2f, max %.2f)\n",
	    name, ma, mb, ma / mb, n, CALLS_PER_PAGE * m->nr_pages,
	    r[0], r[n / 4], r[(3 * n) / 4], r[n - 1]);
}

/* The control: shmem pages GUP-fast takes on every kernel. */
static int control(struct mapping *ctl, char *why, size_t len)
{
	struct outcome o;
	int ret;

	ret = map_control(ctl, why, len);
	if (!ret)
		ret = trigger(ctl, &o, false, why, len);
	if (ret)
		return ret;
	print_outcome("control (MAP_SHARED anon)", &o);
	if (o.dirtied) {
		snprintf(why, len, "control: %u/%u shmem pages dirtied by FUTEX_WAKE: GUP-fast refused them (no CONFIG_HAVE_GUP_FAST, NUMA hinting, ...): no verdict can count",
			 o.dirtied, o.nr);
		return KSFT_SKIP;
	}
	if (o.unref && !o.reached) {
		snprintf(why, len, "control: FUTEX_WAKE reached none of %u pages (none referenced after it): the trigger does not work here",
			 o.unref);
		return -EIO;
	}
	return 0;
}

struct producer;
static int check_witness(const struct producer *p, char *why, size_t len);

struct producer {
	const char *name;
	const char *what;
	map_fn map;
	bool cost;
};

static const struct producer producers[] = {
	{ "packet_tx_ring", "af_packet TX ring (TPACKET_V2)", map_packet, true },
	{ "io_uring_sqes", "io_uring SQE array", map_io_uring_sqes, false },
	{ "io_uring_sq_ring", "io_uring SQ ring", map_io_uring_sq_ring, false },
	{ "bpf_ringbuf", "BPF ring buffer consumer pages", map_bpf_ringbuf, false },
	{ "bpf_array_mmap", "mmapable BPF array", map_bpf_array, false },
	{ "kcov_area", "kcov trace area", map_kcov, false },
};

/*
 * Does the witness hold on this kernel? MADV_POPULATE_WRITE always takes the
 * slow path (GUP with FOLL_WRITE|FOLL_TOUCH, never GUP-fast), and with the
 * PTEs present and writable it faults nothing in: on a fresh mapping of the
 * producer every clean page must come out dirty, or pages left clean by
 * FUTEX_WAKE would prove nothing here.
 */
static int check_witness(const struct producer *p, char *why, size_t len)
{
	struct mapping w = { 0 };
	struct outcome o;
	int ret;

	ret = p->map(&w, why, len);
	if (!ret)
		ret = trigger(&w, &o, true, why, len);
	unmap_all(&w);
	if (ret)
		return ret;
	msg("%s witness: MADV_POPULATE_WRITE (slow path) dirtied %u/%u clean pages\n",
	    p->name, o.dirtied, o.nr);
	if (o.dirtied == o.nr)
		return 0;
	snprintf(why, len, "the witness does not hold on this kernel: the slow path (MADV_POPULATE_WRITE) dirtied %u/%u clean pages, so pages FUTEX_WAKE leaves clean prove nothing",
		 o.dirtied, o.nr);
	return KSFT_SKIP;
}

/*
 * One producer: control, then the producer's pages, through the trigger; a
 * result that is neither "all fast" nor "all slow", or a control that did not
 * come out fast, is tried again on fresh mappings, up to MAX_TRIES times.
 */
static int run_producer(const struct producer *p, bool *counted)
{
	struct mapping m = { 0 }, ctl = { 0 };
	unsigned int tries;
	char why[400] = "";
	double t0;
	struct outcome o;
	int ret = 0;

	msg("[RUN] %s: %s\n", p->name, p->what);
	t0 = now_ns();
	*counted = false;
	ret = check_witness(p, why, sizeof(why));
	for (tries = 1; !ret && tries <= MAX_TRIES; tries++) {
		unmap_all(&m);
		unmap_all(&ctl);
		ret = control(&ctl, why, sizeof(why));
		if (ret == KSFT_SKIP && tries < MAX_TRIES)
			continue;
		if (ret)
			break;
		ret = p->map(&m, why, sizeof(why));
		if (!ret)
			ret = trigger(&m, &o, false, why, sizeof(why));
		if (ret)
			break;
		print_outcome(p->name, &o);
		if (o.dirtied == 0 || o.dirtied == o.nr)
			break;
		msg("%s: mixed result, try %u of %u\n", p->name, tries,
		    MAX_TRIES);
	}
	if (ret < 0) {
		result(KSFT_FAIL, p->name, NULL);
		msg("%s: %s failed: %s\n", p->name, why, strerror(-ret));
		goto out;
	}
	if (ret == KSFT_SKIP) {
		result(KSFT_SKIP, p->name, "%s", why);
		goto out;
	}
	if (o.unref && o.reached < o.unref && o.dirtied < o.nr) {
		result(KSFT_FAIL, p->name, NULL);
		msg("%s: FUTEX_WAKE reached only %u/%u unreferenced pages: the trigger did not work, no verdict\n",
		    p->name, o.reached, o.unref);
		goto out;
	}
	if (!o.unref)
		msg("%s: every page was referenced before the trigger: whether FUTEX_WAKE reached them is not checked\n",
		    p->name);
	*counted = true;
	if (p->cost)
		cost(p->name, &m, &ctl);
	if (o.dirtied) {
		msg("verdict %s: %u/%u pages via the slow path: FAIL: %s%s\n",
		    p->name, o.dirtied, o.nr, MSG_BUG,
		    o.dirtied < o.nr ? " (mixed: not every page)" : "");
		result(KSFT_FAIL, p->name, NULL);
	} else {
		msg("verdict %s: 0/%u pages via the slow path: GUP-fast takes them\n",
		    p->name, o.nr);
		result(KSFT_PASS, p->name, NULL);
	}
out:
	unmap_all(&m);
	unmap_all(&ctl);
	msg("%s: %.0f ms\n", p->name, (now_ns() - t0) / 1e6);
	return ret;
}

static void usage(const char *prog)
{
	printf("usage: %s [-n PAGES] [-r ROUNDS] [-u ENTRIES] [-t] [-v]\n"
	       "  -n PAGES   pages per producer, 1-%d (default %d)\n"
	       "  -r ROUNDS  cost rounds, 0-%d, 0: no cost figure (default %d)\n"
	       "  -u ENTRIES io_uring SQ entries, 1-4096 (default: one page of SQEs)\n"
	       "  -t         the GUP-fast table too (table.c): mounts tracefs where it is\n"
	       "             not, a detached ramfs, uses io_uring and one free huge page\n"
	       "  -v         every page's kpageflags before and after\n"
	       "Needs root. Exit: 0 pass, 1 fail (the bug, or the probe broke), 4 skip.\n",
	       prog, MAX_PAGES, DEF_PAGES, MAX_ROUNDS, DEF_ROUNDS);
}

static unsigned int parse_uint(const char *s, unsigned int min,
			       unsigned int max, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "%s: '%s' is not a number in %u-%u\n", what, s,
			min, max);
		exit(KSFT_FAIL);
	}
	return v;
}

static int skip_all(const char *fmt, const char *arg)
{
	unsigned int i, n = ARRAY_SIZE(producers) + 1;

	for (i = 0; i < n; i++) {
		test_nr++;
		printf("ok %u %s # SKIP ", test_nr,
		       i < n - 1 ? producers[i].name : "longterm_write_pin");
		printf(fmt, arg);
		putchar('\n');
	}
	printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:%u error:0\n", n);
	return KSFT_SKIP;
}

int main(int argc, char **argv)
{
	unsigned int i, nr = ARRAY_SIZE(producers);
	unsigned int counted = 0;
	double t0 = now_ns();
	int c, ret;

	while ((c = getopt(argc, argv, "n:r:u:tvh")) != -1) {
		switch (c) {
		case 'n':
			opt.pages = parse_uint(optarg, 1, MAX_PAGES, "-n");
			break;
		case 'r':
			opt.rounds = parse_uint(optarg, 0, MAX_ROUNDS, "-r");
			break;
		case 'u':
			opt.uring_entries = parse_uint(optarg, 1, 4096, "-u");
			break;
		case 't':
			opt.table = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			usage(argv[0]);
			return KSFT_FAIL;
		}
	}
	page_size = sysconf(_SC_PAGESIZE);
	printf("TAP version 13\n1..%u\n", nr + 1 + (opt.table ? table_cases() : 0));
	msg("gupnm_probe: GUP-fast on NULL-mapping order-0 folios, seen through FUTEX_WAKE and /proc/kpageflags\n");
	if (geteuid())
		return skip_all("%s", "not root: /proc/kpageflags and PFNs in /proc/self/pagemap need CAP_SYS_ADMIN");
	ret = kpageflags_open();
	if (ret)
		return skip_all("/proc/kpageflags: %s (CONFIG_PROC_PAGE_MONITOR off?)",
				strerror(-ret));
	ret = pagemap_open();
	if (ret)
		return skip_all("/proc/self/pagemap: %s", strerror(-ret));

	for (i = 0; i < nr; i++) {
		bool ok;

		run_producer(&producers[i], &ok);
		counted += ok;
	}
	result(KSFT_SKIP, "longterm_write_pin", "%s", opt.table ?
	       "a futex GUP is neither FOLL_PIN nor FOLL_LONGTERM: see table_shadow_longterm_write" :
	       "cannot be seen without the test module or -t: a futex GUP is neither FOLL_PIN nor FOLL_LONGTERM, so the FOLL_LONGTERM|FOLL_WRITE half of the fix (slow path kept) is not tested");
	if (opt.table)
		table_run();
	msg("%u producer(s) gave a verdict; %.0f ms\n", counted,
	    (now_ns() - t0) / 1e6);
	printf("# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:%u error:0\n",
	       nr_pass, nr_fail, nr_skip);
	if (nr_fail)
		return KSFT_FAIL;
	return counted ? KSFT_PASS : KSFT_SKIP;
}
