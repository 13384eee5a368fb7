# SPDX-License-Identifier: GPL-2.0
# gup_null_mapping: a selftest, a test driver and a fix for GUP-fast on
# NULL-mapping order-0 folios, with a runner that boots real kernels.
#
#   make run        boot Debian's newest 6.12 kernel in QEMU and run the test
#                   (KERNEL=debian:6.1, source:debian-6.12:nofix, ... ; see
#                   runner/gupnm-run run --help)
#   make compare    the benchmark on two kernels, side by side, with a plot
#   make check      everything that proves the test right (README)
#   make check-quick  the same without the fresh-machine check (warm iteration)
#   make check-full   make check and the debug kernels
#   make check-debug  only the debug-kernel runs (KASAN, lockdep, kmemleak, ...)
#   make check-prefixes  build every prefix of both series (real builds)
#   make check-numa  200 runs on two NUMA nodes under numa_balancing and
#                   memory pressure, 0 false verdicts (make check: 20)
#   make patches    regenerate patches/ (upstream, stable-6.12) from the repository
#   make patches-to-send  the same with your git identity, into out/patches
#   make survey     the verdict on the newest Debian kernel of every series
#   make kernels    every Debian kernel debian: reaches
#   make unit       the runner's unit tests only
#   make check-kselftest  run_tests, install and gen_tar in guests (source kernels)
#   make check-lava  the LAVA jobs with lava-run (Debian 6.12/7.3, source kernels)
#   make check-arm64  Debian arm64 kernels (4K, 16K pages) in qemu-system-aarch64

PYTHON ?= python3
GUPNM := $(PYTHON) runner/gupnm-run
KERNEL ?= debian:bookworm-security
RUN_ARGS ?=
A ?= source:debian-6.12:nofix
B ?= source:debian-6.12:all

.PHONY: run compare check check-full check-quick check-debug check-prefixes check-numa patches patches-to-send survey kernels unit help check-kselftest check-lava check-arm64

help:
	@sed -n '2,24p' Makefile | sed 's/^# \{0,1\}//'

# make itself exits 2 whenever a recipe fails: the runner's own exit code
# (README: Exit status) is printed, and pipelines call runner/gupnm-run.
run:
	@$(GUPNM) run --kernel $(KERNEL) $(RUN_ARGS) || { rc=$$?; \
	  echo "make run: runner/gupnm-run exited $$rc (make exits 2; for the runner's code call runner/gupnm-run run directly)" >&2; \
	  exit $$rc; }

compare:
	$(GUPNM) compare --a $(A) --b $(B) $(RUN_ARGS)

# The debug-kernel matrix (two KASAN builds, about 15 min cold) is a named
# target, like the NUMA soak and arm64, to keep a cold make check in budget.
check:
	$(PYTHON) runner/gupnm-check --no-debug $(CHECK_ARGS)

check-full:
	$(PYTHON) runner/gupnm-check $(CHECK_ARGS)

check-quick:
	$(PYTHON) runner/gupnm-check --no-debug --no-fresh $(CHECK_ARGS)

check-debug:
	$(PYTHON) runner/gupnm-check --debug $(CHECK_ARGS)

check-prefixes:
	$(PYTHON) runner/gupnm-check --prefixes $(CHECK_ARGS)

# Issue 13: not in make check (README: times); the three arm64 rows.
check-arm64:
	$(PYTHON) runner/gupnm-check --arm64 $(CHECK_ARGS)

NUMA_RUNS ?= 200
check-numa:
	$(PYTHON) runner/gupnm-check --numa $(NUMA_RUNS) $(CHECK_ARGS)

patches:
	patchgen/gen-series.sh upstream
	patchgen/gen-series.sh stable-6.12

# The copy to send: From:/Signed-off-by: from your git identity.
OUT ?= out/patches
patches-to-send:
	patchgen/gen-series.sh -g -o $(OUT)/upstream upstream
	patchgen/gen-series.sh -g -o $(OUT)/stable-6.12 stable-6.12

survey:
	$(GUPNM) survey $(RUN_ARGS)

kernels:
	$(GUPNM) kernels $(RUN_ARGS)

unit:
	$(PYTHON) runner/tests/run_unit_tests.py

# Issue 11: the ways pipelines run selftests (also part of make check).
check-kselftest:
	cd runner && $(PYTHON) -m gupnm.kselftest_checks --paths

check-lava:
	cd runner && $(PYTHON) -m gupnm.kselftest_checks --lava
