#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write the mail asking the stable team to cherry-pick an upstream commit
# into a stable tree (stable-kernel-rules.rst, option 2): for a tree where
# the mainline commit applies as it is, so no backport is sent.
#
#   patchgen/gen-request.sh [-o OUTDIR] [-g] [-m MAINLINE -t STABLE_TREE] NAME
#
# NAME is a directory of patchgen/ holding base ("SERIES COMMIT": the
# stable series and the mainline commit) and request.txt (Subject: line,
# blank line, body; its "@applies@" line says whether the commit applies).
# Without a tree to try, the draft says so. With -m and -t, the commit's
# diff from MAINLINE is checked against STABLE_TREE's HEAD (git apply
# --check) and the mail names the tree it applies to; where it does not
# apply, nothing is written: that tree needs a backport.
# -g: From: your git identity (not an example.* address), as gen-series.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=
git_identity=
mainline=
tree=

die() { echo "gen-request: error: $*" >&2; exit 1; }
# shellcheck source=patchgen/identity.sh
. "$repo/patchgen/identity.sh"
usage() { echo "usage: $0 [-o OUTDIR] [-g] [-m MAINLINE -t STABLE_TREE] NAME" >&2; exit 2; }

while getopts "o:gm:t:h" opt; do
	case $opt in
	o) out=$OPTARG ;;
	g) git_identity=1 ;;
	m) mainline=$OPTARG ;;
	t) tree=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
sdir=$repo/patchgen/$1
if [ ! -f "$sdir/base" ] || [ ! -f "$sdir/request.txt" ]; then
	die "no request '$1' in patchgen/ (base and request.txt)."
fi
if [ -n "$mainline$tree" ] && { [ -z "$mainline" ] || [ -z "$tree" ]; }; then
	die "-m and -t go together."
fi
out=${out:-$repo/patches/$1}
read -r series commit <"$sdir/base"

ident=$(ident_of "$repo" "$git_identity")

if [ -n "$tree" ]; then
	git -C "$mainline" cat-file -e "$commit^{commit}" 2>/dev/null ||
		die "$mainline has no commit $commit: fetch mainline there, then run again."
	at=$(git -C "$tree" describe --tags --always HEAD)
	git -C "$mainline" show --format= "$commit" | git -C "$tree" apply --check --cached 2>&1 ||
		die "${commit:0:12} does not apply to $tree ($at): $series.y needs a backport, not this request."
	applies="It applies to $series.y as it is: checked on $at with git apply --check."
else
	applies="Not tried here on a $series.y tree (none was at hand); NVIDIA's backport of it
(NV-Kernels PR 533) applies cleanly on 6.18.40."
fi

mkdir -p "$out"
{
	echo "From: $ident"
	echo "To: stable@vger.kernel.org"
	echo "Date: Mon, 30 Nov 2026 12:00:00 +0000"
	head -n1 "$sdir/request.txt"
	tail -n +2 "$sdir/request.txt" | awk -v a="$applies" '$0 == "@applies@" { print a; next } { print }'
} >"$out/request.txt"
echo "gen-request: wrote $out/request.txt (stable $series.y, ${commit:0:12})"
