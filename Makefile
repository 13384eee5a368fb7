# SPDX-License-Identifier: GPL-2.0
# gup_null_mapping: a selftest, a test driver and a fix for GUP-fast on
# NULL-mapping order-0 folios, with a runner that boots real kernels.
#
#   make run        boot bookworm-security's newest kernel (a 6.12) in QEMU and run the test
#                   (KERNEL=debian:6.1, source:debian-6.12:nofix, ... ; see
#                   runner/gupnm-run run --help)
#   make compare    the benchmark on two kernels, side by side, with a plot
#                   (A=SPEC B=SPEC REPEAT=N COMMAND="gup_test -a ..." ARCH=arm64)
#   make bench-fix  the benchmark, 6.12 source without vs with the fix, 5 runs
#                   each, 1 to 8 threads on 2 vCPUs (issue 12; TREE=debian-7.3
#                   for the upstream series' base)
#   make bench-debian  the same, Debian 6.12 vs 7.3 (bookworm-security, 7.3)
#   make bench-64k  the same on 64K-page arm64 kernels (issue 13)
#   make bench-knobs  pages per call 1/32/512, FOLL_LONGTERM on and off
#   make repro-longterm  "optimize longterm pin_user_pages() for large folio":
#                   gup_test -HL and -LT, 6.12 vs 7.3 (hugetlb scaled)
#   make repro-ksm  "mm/ksm: break_ksm() cleanups and fixes": ksm_tests -D,
#                   Debian 6.1 vs 6.12
#   make repro-gup-fast  "mm, x86/mm: Fix performance regression in
#                   get_user_pages_fast()": 1 GiB one page per call, 20 repeats
#   make check      everything that proves the test right (docs/checks.md)
#   make check-quick  the same without the fresh-machine check (warm iteration)
#   make check-full   make check and the debug kernels
#   make check-debug  only the debug-kernel runs (KASAN, lockdep, kmemleak, ...)
#   make check-prefixes  build every prefix of both series (real builds)
#   make check-numa  200 runs on two NUMA nodes under numa_balancing and
#                   memory pressure, 0 false verdicts (make check: 20)
#   make check-revision  a kernel carrying series v3 (linux-source-7.3 + v3's
#                      patches from this repository's history, one kernel
#                      build): today's test skips naming the command it
#                      asked, v3's own test passes (issue 46)
#   make check-notrace  the source kernels built without CONFIG_TRACING: 7.3's
#                   negative controls and mutants, 6.12 via the runner's module
#   make check-mutants  each decision of gup_fast_folio_allowed() flipped in
#                   linux-source-7.3: the test must catch every one (make
#                   check runs it too)
#   make patches    regenerate patches/ (upstream, stable-6.12) and generated/
#                   from the repository
#   make patches-to-send  the same with your git identity, into out/patches
#                   (MAINLINE=tree UPSTREAM_TREE=mm-new STABLE_TREES="6.18=tree")
#   make survey     a verdict on every amd64 and arm64 Debian kernel (module or probe)
#   make kernels    every Debian kernel debian: reaches
#   make unit       the runner's unit tests only
#   make check-kselftest  run_tests, install and gen_tar in guests (source kernels)
#   make check-lava  the LAVA jobs with lava-run (Debian 6.12/7.3, source kernels)
#   make check-arm64  arm64 kernels in qemu-system-aarch64: Debian's (4K, 16K
#                   pages) and 64K-page 6.12 source kernels without/with the fix
#   make check-docs every command of README.md and docs/ run as written from a
#                   fresh clone (DOCS=all: the long targets too)
#   make check-docs-short  every command of README.md and docs/ that boots a
#                   kernel, once in a short form (make check: those on its kernels)
#   make check-host --kernel host's module and probe paths, in Debian kernels
#                   booted by virtme-ng on this machine's own root
#   make check-kernelci-arm64  KernelCI's kselftest-mm job, its gup part, on arm64:
#                   run_kselftest.sh -t mm:ksft_gup_test.sh, secretmem.enable,
#                   boot to result within 600 s (Debian 7.3 fix, 6.12 no fix)

PYTHON ?= python3
GUPNM := $(PYTHON) runner/gupnm-run
KERNEL ?= debian:bookworm-security
RUN_ARGS ?=
A ?= source:debian-6.12:nofix
B ?= source:debian-6.12:all

.PHONY: run compare bench-fix bench-debian bench-64k bench-knobs repro-longterm repro-ksm repro-gup-fast check check-full check-quick check-debug check-prefixes check-numa check-mutants check-notrace check-revision patches patches-to-send survey kernels unit help check-kselftest check-lava check-arm64 check-docs check-docs-short check-host check-kernelci-arm64

help:
	@awk 'NR > 1 && !/^#/ { exit } NR > 1' Makefile | sed 's/^# \{0,1\}//'

# make itself exits 2 whenever a recipe fails: the runner's own exit code
# (README: Exit status) is printed, and pipelines call runner/gupnm-run.
run:
	@$(GUPNM) run --kernel $(KERNEL) $(RUN_ARGS) || { rc=$$?; \
	  echo "make run: runner/gupnm-run exited $$rc (make exits 2; for the runner's code call runner/gupnm-run run directly)" >&2; \
	  exit $$rc; }

REPEAT ?= 1
COMMAND ?=
ARCH ?= amd64
compare:
	$(GUPNM) compare --a $(A) --b $(B) --repeat $(REPEAT) --arch $(ARCH) \
	  $(if $(COMMAND),--command "$(COMMAND)") $(RUN_ARGS)

# Benchmarks and the published measurements (docs/benchmark.md).
# Threads beyond the 2 vCPUs are oversubscribed on purpose.
BENCH_THREADS ?= 1 2 4 8
# 100 samples per cell, shadow and anon alternating at every sample (-i 1):
# the host's speed drifts within seconds, and with the test's default (3
# repetitions of 10) one cell in eight of bench-fix had its five ratios
# spread beyond +-15 % (docs/benchmark.md).
BENCH_SAMPLING ?= -r 100 -i 1
# --config selftests: CONFIG_GUP_TEST, so every run also cross-checks the
# anon control against gup_test -a.
# TREE=debian-7.3: the same on the upstream series' base.
TREE ?= debian-6.12
bench-fix:
	$(GUPNM) compare --a source:$(TREE):nofix --b source:$(TREE):all \
	  --config selftests --repeat 5 --test-args '$(BENCH_SAMPLING) $(BENCH_THREADS)' \
	  $(RUN_ARGS)

bench-debian:
	$(GUPNM) compare --a debian:bookworm-security --b debian:7.3 \
	  --repeat 5 --test-args '$(BENCH_SAMPLING) $(BENCH_THREADS)' $(RUN_ARGS)

bench-64k:
	$(GUPNM) compare --arch arm64 --a source:debian-6.12:nofix \
	  --b source:debian-6.12:all --repeat 3 --vcpus 4 --timeout 1800 \
	  --test-args '$(BENCH_SAMPLING) $(BENCH_THREADS)' $(RUN_ARGS)

bench-knobs:
	for args in '-c 1 1 2' '-c 32 1 2' '-c 512 1 2' '-L 1 2'; do \
	  $(GUPNM) compare --a source:debian-6.12:nofix --b source:debian-6.12:all \
	    --config selftests --test-args "$$args" $(RUN_ARGS) || exit; done

repro-longterm:
	$(GUPNM) compare --a source:debian-6.12 --b source:debian-7.3 --repeat 5 \
	  --memory 1536 --command 'gup_test -HL -m 512 -n 512 -r 5' $(RUN_ARGS)
	$(GUPNM) compare --a source:debian-6.12 --b source:debian-7.3 --repeat 5 \
	  --memory 1536 --command 'gup_test -LT -m 512 -n 512 -r 5' $(RUN_ARGS)

repro-ksm:
	$(GUPNM) compare --a debian:6.1 --b debian:bookworm-security --repeat 3 \
	  --timeout 900 --command 'ksm_tests -D -s 256' $(RUN_ARGS)

repro-gup-fast:
	$(GUPNM) compare --a source:debian-6.12 --b source:debian-7.3 --repeat 3 \
	  --memory 2048 --command 'gup_test -u -m 1024 -n 1 -r 20' $(RUN_ARGS)

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

# Not in make check (docs/arm64.md: times); the arm64 rows.
check-arm64:
	$(PYTHON) runner/gupnm-check --arm64 $(CHECK_ARGS)

# Source kernels without tracing: 7.3's negative controls and mutants, and
# 6.12 through the runner's module, whose pin cells are unjudged there.
check-notrace:
	$(PYTHON) runner/gupnm-check --notrace $(CHECK_ARGS)

check-revision:
	$(PYTHON) runner/gupnm-check --revision $(CHECK_ARGS)

# Each decision of gup_fast_folio_allowed() flipped (make check runs it too).
check-mutants:
	$(PYTHON) runner/gupnm-check --mutants $(CHECK_ARGS)

NUMA_RUNS ?= 200
check-numa:
	$(PYTHON) runner/gupnm-check --numa $(NUMA_RUNS) $(CHECK_ARGS)

patches:
	patchgen/gen-series.sh upstream
	patchgen/gen-series.sh stable-6.12
	patchgen/gen-request.sh stable-pick
	patchgen/gen-generated.sh

# The copy to send (docs/series.md): From:/Signed-off-by: from your git
# identity. MAINLINE, your mainline git tree, gives the 6.12 backport
# upstream's changelog; UPSTREAM_TREE (mm-new or mainline; default
# MAINLINE) is the tree the upstream series is generated on, with
# base-commit:, To:/Cc: and checkpatch there; STABLE_TREES ("6.18=DIR
# 7.2=DIR"), stable trees where the request's cherry-pick is tried.
OUT ?= out/patches
MAINLINE ?=
UPSTREAM_TREE ?= $(MAINLINE)
STABLE_TREES ?=
patches-to-send:
	patchgen/gen-series.sh -g $(if $(UPSTREAM_TREE),-s -b $(UPSTREAM_TREE)) \
	  -o $(OUT)/upstream upstream
	patchgen/gen-series.sh -g $(if $(MAINLINE),-m $(MAINLINE)) -o $(OUT)/stable-6.12 stable-6.12
	patchgen/gen-request.sh -g $(if $(STABLE_TREES),-m $(MAINLINE) $(addprefix -t ,$(STABLE_TREES))) \
	  -o $(OUT)/stable-pick stable-pick

# Both arches, each to its end; the worse exit code of the two (3 > 1 > 0).
SURVEY_ARCHES ?= amd64 arm64
survey:
	@rc=0; for a in $(SURVEY_ARCHES); do \
	  $(GUPNM) survey --arch $$a $(RUN_ARGS); r=$$?; \
	  echo "make survey: runner/gupnm-run survey --arch $$a exited $$r" >&2; \
	  if [ $$r -eq 3 ] || { [ $$r -ne 0 ] && [ $$rc -ne 3 ]; }; then rc=$$r; fi; \
	done; exit $$rc

kernels:
	$(GUPNM) kernels $(RUN_ARGS)

unit:
	$(PYTHON) runner/tests/run_unit_tests.py

# The ways pipelines run selftests (also part of make check).
check-kselftest:
	cd runner && $(PYTHON) -m gupnm.check.kselftest_checks --paths

check-lava:
	cd runner && $(PYTHON) -m gupnm.check.kselftest_checks --lava

# Not in make check: it runs make run, make compare, the arm64 runs ...
# (docs/checks.md: times).
check-host:
	cd runner && $(PYTHON) -m gupnm.check.host_mode

DOCS ?= quick
check-docs:
	cd runner && $(PYTHON) -m gupnm.check.docs_commands $(if $(filter all,$(DOCS)),--all)

# The short forms (fewer repeats, sizes <= 32 MiB) of every command of the
# documents that boots a kernel; make check runs those on its own kernels
# (docs/checks.md: the budget). ONLY=REGEX picks some.
ONLY ?=
check-docs-short:
	cd runner && $(PYTHON) -m gupnm.check.docs_short $(if $(ONLY),--only '$(ONLY)')

# KernelCI's 10-minute kselftest-mm job on arm64 (docs/ci.md): not in make
# check, like check-arm64 (the Debian arm64 kernels and the arm64 tarball).
check-kernelci-arm64:
	cd runner && $(PYTHON) -m gupnm.check.kernelci_checks
