/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What lib/test_gup_fast.c needs from kernels older than the one it was
 * written for, when built out of tree (oot/build-module.sh). The upstream
 * file stays free of version conditionals; they all live here.
 */
#ifndef _TEST_GUP_FAST_COMPAT_H
#define _TEST_GUP_FAST_COMPAT_H

/*
 * Force-included before the source: only <linux/version.h> here, so that
 * the source's own pr_fmt and includes come first.
 */
#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
/* vm_flags became read-only behind vm_flags_set() in 6.3. */
#define vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#endif

#endif /* _TEST_GUP_FAST_COMPAT_H */
