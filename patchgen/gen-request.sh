#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write the mail asking the stable team to cherry-pick an upstream commit
# into stable trees (stable-kernel-rules.rst, option 2): for the trees
# where the mainline commit applies as it is, so no backport is sent.
#
#   patchgen/gen-request.sh [-o OUTDIR] [-g] [-m MAINLINE -t SERIES=TREE ...] NAME
#
# NAME is a directory of patchgen/ holding base (the mainline commit),
# trees ("SERIES|what was tried here", newest first), recipients (To:/Cc:
# lines) and request.txt (Subject: line, blank line, body; @series@ and
# @trees@ name the trees, an "@applies@" line says what was tried where).
# With -m and -t, the commit's diff from MAINLINE is checked against each
# TREE's HEAD (git apply --check) and the mail names the tree and commit it
# was checked on; where it does not apply, nothing is written: that tree
# needs a backport. A tree without -t keeps what trees says was tried.
# -g: From: your git identity (not an example.* address), as gen-series.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=
git_identity=
mainline=
declare -A tried=()

die() { echo "gen-request: error: $*" >&2; exit 1; }
# shellcheck source=patchgen/identity.sh
. "$repo/patchgen/identity.sh"
usage() { echo "usage: $0 [-o OUTDIR] [-g] [-m MAINLINE -t SERIES=TREE ...] NAME" >&2; exit 2; }

while getopts "o:gm:t:h" opt; do
	case $opt in
	o) out=$OPTARG ;;
	g) git_identity=1 ;;
	m) mainline=$OPTARG ;;
	t) [[ $OPTARG == ?*=?* ]] || die "-t takes SERIES=TREE (6.18=~/linux-6.18.y), not '$OPTARG'."
	   tried[${OPTARG%%=*}]=${OPTARG#*=} ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
sdir=$repo/patchgen/$1
for f in base trees request.txt; do
	[ -f "$sdir/$f" ] || die "no request '$1' in patchgen/ (base, trees and request.txt)."
done
if [ ${#tried[@]} -gt 0 ] && [ -z "$mainline" ]; then
	die "-t needs -m MAINLINE, the tree the commit is taken from."
fi
out=${out:-$repo/patches/$1}
read -r commit <"$sdir/base"
ident=$(ident_of "$repo" "$git_identity")

series=()
applies=
while IFS='|' read -r s what; do
	case $s in '#'* | '') continue ;; esac
	series+=("$s")
	if [ -n "${tried[$s]:-}" ]; then
		tree=${tried[$s]}
		git -C "$mainline" cat-file -e "$commit^{commit}" 2>/dev/null ||
			die "$mainline has no commit $commit: fetch mainline there, then run again."
		at=$(git -C "$tree" describe --tags --always HEAD)
		git -C "$mainline" show --format= "$commit" | git -C "$tree" apply --check --cached 2>&1 ||
			die "${commit:0:12} does not apply to $tree ($at): $s.y needs a backport, not this request."
		what="It applies to $s.y as it is: checked on $at with git apply --check."
		unset "tried[$s]"
	fi
	applies+="$s.y: $what"$'\n'
done <"$sdir/trees"
[ ${#tried[@]} -eq 0 ] || die "-t ${!tried[*]}: not a tree patchgen/$1/trees asks for."
names=$(printf '%s.y, ' "${series[@]}")
names=${names%, }

mkdir -p "$out"
{
	echo "From: $ident"
	grep -e '^To: ' -e '^Cc: ' "$sdir/recipients" 2>/dev/null || true
	echo "Date: Mon, 30 Nov 2026 12:00:00 +0000"
	head -n1 "$sdir/request.txt" | sed "s/@trees@/$names/"
	# the body at 72 columns; the headers whole
	tail -n +2 "$sdir/request.txt" | sed "s/@trees@/$names/" |
		awk -v a="${applies%$'\n'}" '$0 == "@applies@" { print a; next } { print }' |
		fold -s -w 72 | sed 's/ *$//'
} >"$out/request.txt"
echo "gen-request: wrote $out/request.txt (stable $names, ${commit:0:12})"
