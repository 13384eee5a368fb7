"""The guest: the initramfs, QEMU, and one run followed from boot to report."""
