/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probe's files, each using only those above it in this list:
 *   ktap.c         KTAP output and its counts
 *   mapping.c      a mapping under test: options, page size, regions and
 *                  fds, PFNs, kpageflags, VmFlags, the FUTEX_WAKE trigger,
 *                  af_packet's TX ring
 *   table.c        the GUP-fast table (-t)
 *   gupnm_probe.c  main(): the verdict from in-kernel producers
 * runner/tests/test_probe_layers.py checks that order with nm.
 */
#ifndef GUPNM_PROBE_H
#define GUPNM_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define KPF_REFERENCED		2
#define KPF_DIRTY		4
#define KPF_SLAB		7
#define KPF_ANON		12
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16
#define KPF_HUGE		17
#define KPF_THP			22
#define KPF(flags, bit)	(((flags) >> (bit)) & 1)

#define DEF_PAGES	16
#define DEF_ROUNDS	21
#define MAX_PAGES	64
#define MAX_REGIONS	8
#define MAX_FDS		8
#define MAX_TRIES	3
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ktap.c: KTAP lines; the results so far, by kind. */
extern unsigned int test_nr, nr_pass, nr_fail, nr_skip;
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void result(int code, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* mapping.c: the options main() sets, the page size, a mapping under test. */
struct options {
	unsigned int pages;
	unsigned int rounds;
	unsigned int uring_entries;	/* 0: one page of SQEs */
	bool verbose;
	bool table;			/* -t: the GUP-fast table too */
};

extern struct options opt;
extern long page_size;

/* A mapping under test: its regions, its fds, the pages to trigger on. */
struct mapping {
	void *region[MAX_REGIONS];
	size_t region_len[MAX_REGIONS];
	unsigned int nr_regions;
	int fd[MAX_FDS];
	unsigned int nr_fds;
	volatile uint32_t *page[MAX_PAGES];
	unsigned int nr_pages;
	bool control;		/* shmem: order-0 too, need not be mixedmap */
};

int kpageflags_open(void);
int pagemap_open(void);
int futex_wake(volatile uint32_t *uaddr);
int page_pfn(volatile void *addr, uint64_t *pfn);
int kpageflags(uint64_t pfn, uint64_t *flags);
int vma_flags(volatile void *addr, char *buf, size_t len);
bool has_vmflag(const char *flags, const char *flag);
void unmap_all(struct mapping *m);
int add_region(struct mapping *m, void *addr, size_t len, unsigned int first,
	       unsigned int nr);
int add_fd(struct mapping *m, int fd);
int map_packet(struct mapping *m, char *why, size_t len);

/* table.c: its number of KTAP results, and running them. */
unsigned int table_cases(void);
void table_run(void);

#endif
