"""Prepare a kernel: fetch Debian's or build one from source, and its module.

A spec becomes a kernel image, its headers or build tree, gup_test.ko
built with the compiler the kernel names (none where a source kernel has
the series' gup_test built in), and the test binaries.
"""
