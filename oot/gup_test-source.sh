#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write mm/gup_test.c and mm/gup_test.h as the upstream series leaves them
# into OUTDIR: the files of the series' base tree (patchgen/upstream/base,
# Debian's linux-source-7.3, fetched into the cache on first use) with the
# series' own hunks applied in order. This is the one source of the module
# that oot/build-module.sh builds for shipped kernels. Beside them, what
# the test builds with from the same tree: selftests/kselftest.h,
# selftests/mm/vm_util.[ch], and uapi/linux/fs.h (vm_util.h needs a newer
# <linux/fs.h> than older distributions' headers have).
#
#   oot/gup_test-source.sh OUTDIR
#
# Environment: GUPNM_UPSTREAM_BASE, a git tree of the base to use instead
# of the cached one.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gen=$repo/patchgen

base=${GUPNM_UPSTREAM_BASE:-}
if [ -z "$base" ]; then
	read -r pkg version <"$gen/upstream/base"
	top=$(git -C "$repo" rev-parse --show-toplevel 2>/dev/null || echo "$repo")
	base=$("$top/runner/linux-source-base.sh" "${pkg#linux-source-}" "$version")
fi

mkdir -p "$out/mm"
for f in mm/gup_test.c mm/gup_test.h; do
	git -C "$base" show "HEAD:$f" >"$out/$f" || {
		echo "gup_test-source: $base has no $f at HEAD" >&2
		exit 1
	}
done
while IFS='|' read -r message edits _; do
	case $message in '#'* | '') continue ;; esac
	[ -n "$edits" ] || continue
	(cd "$out" && git apply --include='mm/gup_test.[ch]' "$gen/$edits") || {
		echo "gup_test-source: patchgen/$edits does not apply to $base's mm/gup_test.[ch]" >&2
		exit 1
	}
done <"$gen/upstream/steps"
mv "$out/mm/gup_test.c" "$out/mm/gup_test.h" "$out/"
rmdir "$out/mm"
mkdir -p "$out/selftests/mm" "$out/uapi/linux"
for f in tools/testing/selftests/kselftest.h:selftests/kselftest.h \
	 tools/testing/selftests/mm/vm_util.h:selftests/mm/vm_util.h \
	 tools/testing/selftests/mm/vm_util.c:selftests/mm/vm_util.c \
	 include/uapi/linux/fs.h:uapi/linux/fs.h; do
	git -C "$base" show "HEAD:${f%%:*}" >"$out/${f#*:}" || {
		echo "gup_test-source: $base has no ${f%%:*} at HEAD" >&2
		exit 1
	}
done
