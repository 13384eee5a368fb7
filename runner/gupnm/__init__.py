"""Host-side helpers of the gup_null_mapping QEMU runner: TAP, console, stats, results."""
