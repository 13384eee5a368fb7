// SPDX-License-Identifier: GPL-2.0
/*
 * A mapping under test, for the producers (gupnm_probe.c) and the table
 * (table.c): the options and page size it is built with; building it up
 * (regions, fds) and tearing it down; what /proc says of its pages (PFN,
 * kpageflags) and of its VMA (VmFlags); the FUTEX_WAKE trigger; and
 * af_packet's TX ring, which is both a producer and the table's driver row.
 * Below table.c and gupnm_probe.c: it may use ktap.c, never them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <linux/if_packet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "probe.h"

#define PM_PRESENT		(1ULL << 63)
#define PM_PFN_MASK		((1ULL << 55) - 1)

struct options opt = { DEF_PAGES, DEF_ROUNDS, 0, false, false };
long page_size;
static int kpf_fd = -1, pagemap_fd = -1;

/* Open /proc/kpageflags for kpageflags(): 0 or -errno. */
int kpageflags_open(void)
{
	kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	return kpf_fd < 0 ? -errno : 0;
}

/* Open /proc/self/pagemap for page_pfn(): 0 or -errno. */
int pagemap_open(void)
{
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	return pagemap_fd < 0 ? -errno : 0;
}

int futex_wake(volatile uint32_t *uaddr)
{
	/* Not FUTEX_PRIVATE_FLAG: a shared futex looks the page up by GUP. */
	return syscall(SYS_futex, uaddr, FUTEX_WAKE, 1, NULL, NULL, 0) < 0 ?
	       -errno : 0;
}

static int read_u64(int fd, uint64_t index, uint64_t *val)
{
	ssize_t ret = pread(fd, val, sizeof(*val), index * sizeof(*val));

	if (ret == sizeof(*val))
		return 0;
	return ret < 0 ? -errno : -EIO;
}

int page_pfn(volatile void *addr, uint64_t *pfn)
{
	uint64_t ent;
	int ret;

	ret = read_u64(pagemap_fd, (uintptr_t)addr / page_size, &ent);
	if (ret)
		return ret;
	if (!(ent & PM_PRESENT))
		return -ENOENT;
	*pfn = ent & PM_PFN_MASK;
	return *pfn ? 0 : -EPERM;	/* PFNs hidden without CAP_SYS_ADMIN */
}

int kpageflags(uint64_t pfn, uint64_t *flags)
{
	return read_u64(kpf_fd, pfn, flags);
}

/* The VmFlags line of the VMA holding @addr, into @buf ("" if none). */
int vma_flags(volatile void *addr, char *buf, size_t len)
{
	uintptr_t a = (uintptr_t)addr, start = 0, end = 0;
	bool inside = false;
	char line[256];
	FILE *f;

	buf[0] = '\0';
	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char perm[5];

		/* A VMA's first line: "start-end perms offset dev inode path" */
		if (sscanf(line, "%lx-%lx %4s ", &s, &e, perm) == 3) {
			start = s;
			end = e;
			inside = a >= start && a < end;
		} else if (inside && !strncmp(line, "VmFlags:", 8)) {
			snprintf(buf, len, "%.200s", line + 8);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
	return 0;
}

bool has_vmflag(const char *flags, const char *flag)
{
	const char *p = flags;
	size_t n = strlen(flag);

	while ((p = strstr(p, flag))) {
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

void unmap_all(struct mapping *m)
{
	unsigned int i;

	for (i = 0; i < m->nr_regions; i++)
		munmap(m->region[i], m->region_len[i]);
	for (i = 0; i < m->nr_fds; i++)
		close(m->fd[i]);
	memset(m, 0, sizeof(*m));
}

int add_region(struct mapping *m, void *addr, size_t len,
		      unsigned int first, unsigned int nr)
{
	unsigned int i;

	if (addr == MAP_FAILED)
		return -errno;
	m->region[m->nr_regions] = addr;
	m->region_len[m->nr_regions++] = len;
	for (i = first; i < first + nr && m->nr_pages < opt.pages; i++)
		m->page[m->nr_pages++] = (uint32_t *)((char *)addr + i * page_size);
	return 0;
}

int add_fd(struct mapping *m, int fd)
{
	if (fd < 0)
		return -errno;
	m->fd[m->nr_fds++] = fd;
	return 0;
}

/*
 * af_packet's TX ring, one page a block. 0: mapped; -errno: what failed, in
 * @why; KSFT_SKIP: af_packet is missing, the reason in @why.
 */
int map_packet(struct mapping *m, char *why, size_t len)
{
	struct tpacket_req req = {
		.tp_block_size = page_size,
		.tp_block_nr = opt.pages,
		.tp_frame_size = page_size,
		.tp_frame_nr = opt.pages,
	};
	int ver = TPACKET_V2, ret;
	void *p;

	/*
	 * af_packet present, built in or already loaded: /proc/net/packet. A
	 * socket() without it would make the kernel load af_packet.ko, and
	 * the probe loads no module.
	 */
	if (access("/proc/net/packet", F_OK)) {
		snprintf(why, len, "no /proc/net/packet: af_packet is neither built in nor loaded (CONFIG_PACKET off, or =m: the probe loads no module; modprobe af_packet first)");
		return KSFT_SKIP;
	}
	/* Protocol 0: the socket receives nothing, nothing writes the ring. */
	ret = add_fd(m, socket(AF_PACKET, SOCK_RAW, 0));
	if (ret == -EAFNOSUPPORT || ret == -ENOSYS) {
		snprintf(why, len, "socket(AF_PACKET): %s: %s",
			 strerror(-ret), ret == -ENOSYS ?
			 "no networking (CONFIG_NET off)" :
			 "no CONFIG_PACKET (or =m and af_packet.ko not loadable: modprobe af_packet)");
		return KSFT_SKIP;
	}
	if (ret == -EPERM || ret == -EACCES) {
		snprintf(why, len, "socket(AF_PACKET): %s: needs CAP_NET_RAW",
			 strerror(-ret));
		return KSFT_SKIP;
	}
	snprintf(why, len, "socket(AF_PACKET, SOCK_RAW, 0)");
	if (ret)
		return ret;
	snprintf(why, len, "setsockopt(PACKET_VERSION, TPACKET_V2)");
	if (setsockopt(m->fd[0], SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver)))
		return -errno;
	snprintf(why, len, "setsockopt(PACKET_TX_RING, %u blocks of %ld)",
		 opt.pages, page_size);
	if (setsockopt(m->fd[0], SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)))
		return -errno;
	snprintf(why, len, "mmap(packet TX ring)");
	p = mmap(NULL, opt.pages * page_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, m->fd[0], 0);
	return add_region(m, p, opt.pages * page_size, 0, opt.pages);
}
