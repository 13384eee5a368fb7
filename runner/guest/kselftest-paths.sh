#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run in the guest by init as its test command (runner/gupnm/ci/kselftest_paths.py):
# the gup_test category (with gup_null_mapping) the three ways the kernel community runs selftests.
#   run_tests  make -C <tree>/tools/testing/selftests TARGETS=mm run_tests
#   install    <install>/run_kselftest.sh -t <collection:test>
#   tarball    the gen_tar tarball unpacked in /tmp, run the same way
#   kernelci   the same with VM_SELFTEST_ITEMS unset, as KernelCI's jobs run it
#   linaro     the tarball unpacked in KSELFTEST_PATH, run by Linaro's
#              kselftest.sh (test-definitions, unmodified, at KST_LINARO_DIR)
#              as kselftest.yaml's run step calls it; result.txt printed
#              between LINARO-RESULT-BEGIN and LINARO-RESULT-END
# Each path is framed for the host:
#   KSFT-PATH-BEGIN: <path>
#   KSFT-PATH-END: <path> <exit status> <seconds>
# /opt/gupnm-kst/env sets KST_TREE, KST_INSTALL, KST_TARBALL, KST_WRAPPER,
# KST_RUN_TESTS_ARGS, KST_PATHS (which paths, in order) and KST_MODPROBE; for linaro
# KST_LINARO_DIR and KST_LINARO_<kselftest.yaml parameter> (runner/gupnm/linaro.py).
# shellcheck source=/dev/null
. /opt/gupnm-kst/env
export VM_SELFTEST_ITEMS=gup_test
export PATH=/usr/bin:/usr/sbin:/bin:/sbin

# udev makes these on a real system; devtmpfs does not. run_kselftest.sh
# writes each test's output to $logfile, /dev/stdout by default: without the
# link the nested TAP silently vanishes.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr

# gup_test is built into the kernel (the series' v4 on a source tree:
# kselftest_paths.prepared refuses anything else): init loads no module,
# run_vmtests.sh loads none, /sys/kernel/debug/gup_test is there for every
# path. A lab's own kernel (kselftest --kernel --modules) may have it as a
# module instead: KST_MODPROBE names it, loaded when the file is missing.
if [ -n "${KST_MODPROBE:-}" ] && [ ! -e /sys/kernel/debug/gup_test ]; then
	if modprobe "$KST_MODPROBE"; then
		echo "# loaded $KST_MODPROBE from the lab's modules"
	else
		echo "# modprobe $KST_MODPROBE failed"
	fi
fi

uptime_s() { cut -d' ' -f1 /proc/uptime; }

path() {
	name=$1
	shift
	echo "KSFT-PATH-BEGIN: $name"
	t0=$(uptime_s)
	"$@"
	rc=$?
	echo "KSFT-PATH-END: $name $rc $(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')"
}

compilers() {
	# run_tests must find everything built: the guest has no compiler.
	for cc in gcc cc clang; do
		command -v "$cc" >/dev/null && echo "# guest has a compiler: $cc"
	done
	# shellcheck disable=SC2086 # KST_RUN_TESTS_ARGS is a word list.
	make -C "$KST_TREE/tools/testing/selftests" TARGETS=mm $KST_RUN_TESTS_ARGS run_tests
}

installed() {
	cd "$1" && ./run_kselftest.sh -t "$KST_WRAPPER"
}

tarball() {
	mkdir -p /tmp/kselftest && tar -xzf "$KST_TARBALL" -C /tmp/kselftest &&
		installed /tmp/kselftest
}

# As a KernelCI kselftest job runs the tarball: VM_SELFTEST_ITEMS as its
# job leaves it (KernelCI's kselftest jobs set no ENV: unset).
kernelci() {
	mkdir -p /tmp/kselftest && tar -xzf "$KST_TARBALL" -C /tmp/kselftest &&
		(unset VM_SELFTEST_ITEMS; installed /tmp/kselftest)
}

# kselftest.yaml's run step, with its parameters; VM_SELFTEST_ITEMS only as
# the job's ENV sets it (LKFT sets none).
linaro() {
	mkdir -p "$KST_LINARO_KSELFTEST_PATH" &&
		tar -xzf "$KST_TARBALL" -C "$KST_LINARO_KSELFTEST_PATH" || return
	(
		unset VM_SELFTEST_ITEMS
		cd "$KST_LINARO_DIR/automated/linux/kselftest/" || exit
		./kselftest.sh -c "${KST_LINARO_TST_CMDFILES}" -T "${KST_LINARO_TST_CASENAME}" \
			-t "${KST_LINARO_TESTPROG}" -s "${KST_LINARO_SKIP_INSTALL}" \
			-u "${KST_LINARO_TESTPROG_URL}" -L "${KST_LINARO_SKIPLIST}" \
			-S "${KST_LINARO_SKIPFILE}" -b "${KST_LINARO_BOARD}" \
			-g "${KST_LINARO_BRANCH}" -e "${KST_LINARO_ENVIRONMENT}" \
			-p "${KST_LINARO_KSELFTEST_PATH}" -n "${KST_LINARO_SHARD_NUMBER}" \
			-i "${KST_LINARO_SHARD_INDEX}" -E "${KST_LINARO_ENV}"
	)
	rc=$?
	result=$KST_LINARO_DIR/automated/linux/kselftest/output/result.txt
	if [ -f "$result" ]; then
		echo "LINARO-RESULT-BEGIN"
		cat "$result"
		echo "LINARO-RESULT-END"
	fi
	return "$rc"
}

for p in ${KST_PATHS:-run_tests install tarball}; do
	case $p in
	run_tests) path run_tests compilers ;;
	install) path install installed "$KST_INSTALL" ;;
	tarball) path tarball tarball ;;
	kernelci) path kernelci kernelci ;;
	linaro) path linaro linaro ;;
	*) echo "KSFT-PATH-BEGIN: $p"; echo "unknown path $p"; echo "KSFT-PATH-END: $p 2 0" ;;
	esac
done
