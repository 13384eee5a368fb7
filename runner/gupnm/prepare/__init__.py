"""Prepare a kernel: fetch Debian's or build one from source, and its module.

A spec becomes a kernel image, its headers or build tree, gup_test.ko
built with the compiler the kernel names, and the test binaries.
"""
