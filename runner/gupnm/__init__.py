"""The gup_null_mapping QEMU runner: prepare/ a kernel, boot it in a guest/,
parse/ what it said, report/ the verdict; ci/ the ways CI runs the test,
check/ make check; cli.py the front door (docs/architecture.md)."""
