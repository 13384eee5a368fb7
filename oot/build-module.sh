#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build gup_test.ko, the upstream series' mm/gup_test.c, out of tree against
# a kernel build directory (an installed /lib/modules/<release>/build,
# unpacked Debian headers, or a configured kernel build tree), without
# touching that kernel.
#
#   oot/build-module.sh KDIR OUTDIR [extra kbuild arguments, e.g. W=1 C=1]
#
# OUTDIR receives the sources (oot/gup_test-source.sh writes gup_test.c and
# gup_test.h there unless they are there already) and the build products;
# the module is OUTDIR/gup_test.ko.
set -euo pipefail

usage() {
	echo "usage: $0 KDIR OUTDIR [kbuild arguments...]" >&2
	exit 2
}

[ $# -ge 2 ] || usage
kdir=$1
outdir=$2
shift 2

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ ! -f "$kdir/Makefile" ]; then
	echo "error: $kdir has no Makefile: not a kernel build directory." >&2
	echo "       Point KDIR at /lib/modules/<release>/build, unpacked" >&2
	echo "       linux-headers, or a configured kernel build tree." >&2
	exit 1
fi

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
if [ ! -f "$outdir/gup_test.c" ] || [ ! -f "$outdir/gup_test.h" ]; then
	"$here/gup_test-source.sh" "$outdir"
fi
for f in Kbuild gup_test_compat.h internal.h; do
	ln -sfn "$here/$f" "$outdir/$f"
done

jobs=$(nproc 2>/dev/null || echo 1)
exec make -C "$kdir" M="$outdir" -j"$jobs" "$@" modules
