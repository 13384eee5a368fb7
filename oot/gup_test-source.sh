#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write mm/gup_test.c and mm/gup_test.h as the upstream series leaves them
# into OUTDIR: the copies in generated/mm (written by
# patchgen/gen-generated.sh from the series' base tree and its hunks; make
# check fails when they are stale). This is the one source of the module
# that oot/build-module.sh builds for shipped kernels; it needs no kernel
# source tree.
#
#   oot/gup_test-source.sh OUTDIR
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

mkdir -p "$out"
for f in gup_test.c gup_test.h; do
	cp "$repo/generated/mm/$f" "$out/$f" || {
		echo "gup_test-source: generated/mm/$f missing: run make patches" >&2
		exit 1
	}
done
