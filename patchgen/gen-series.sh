#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate the patch series in patches/ from the repository.
#
#   patchgen/gen-series.sh [-o OUTDIR] [-b BASE_TREE]
#
# Each patch is a commit built in a scratch index on top of a pristine kernel
# git tree (default: Debian's linux-source-6.12, runner/linux-source-base.sh):
# the new files are copied from their kernel-tree paths in this repository,
# the edits to existing upstream files are applied from patchgen/edits/,
# and the commit message comes from patchgen/messages/. Author and dates
# are fixed, so the output depends on the repository alone: make check
# regenerates it and fails when patches/ is stale.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gen=$repo/patchgen
out=$repo/patches
base=

die() { echo "gen-series: error: $*" >&2; exit 1; }

while getopts "o:b:h" opt; do
	case $opt in
	o) out=$OPTARG ;;
	b) base=$OPTARG ;;
	*) echo "usage: $0 [-o OUTDIR] [-b BASE_TREE]" >&2; exit 2 ;;
	esac
done

[ -n "$base" ] || base=$("$repo/runner/linux-source-base.sh" 6.12)
git -C "$base" rev-parse --verify -q HEAD >/dev/null ||
	die "$base is not a git tree with a commit; see runner/linux-source-base.sh."

# Patch N: message file, edits file, new files (repository paths).
steps=(
	"01-lib-test-gup-fast|lib/test_gup_fast.c lib/test_gup_fast_uapi.h"
	"02-selftests-mm-gup-null-mapping|tools/testing/selftests/mm/gup_null_mapping.c"
	"03-mm-gup-fix|"
)

author=$(head -n1 "$gen/author")
export GIT_AUTHOR_NAME=${author% <*}
export GIT_AUTHOR_EMAIL=${author##*<}
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME
export GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE="2026-11-30T12:00:00+0000"
export GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE

# Build the commits in a scratch index: no checkout of the base tree.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gen-series.XXXXXX")
export GIT_INDEX_FILE=$scratch/index
trap 'rm -rf "$scratch"' EXIT
git -C "$base" read-tree HEAD
start=$(git -C "$base" rev-parse HEAD)
head=$start

for step in "${steps[@]}"; do
	name=${step%%|*}
	files=${step#*|}
	for f in $files; do
		[ -f "$repo/$f" ] || die "$f is missing from the repository."
		blob=$(git -C "$base" hash-object -w "$repo/$f")
		git -C "$base" update-index --add --cacheinfo "100644,$blob,$f"
	done
	edits=$gen/edits/$name.diff
	if [ -f "$edits" ]; then
		git -C "$base" apply --cached --whitespace=error "$edits" ||
			die "patchgen/edits/$name.diff does not apply to $base."
	fi
	msg=$scratch/msg
	{ cat "$gen/messages/$name.txt"; echo; echo "Signed-off-by: $author"; } >"$msg"
	tree=$(git -C "$base" write-tree)
	head=$(git -C "$base" commit-tree "$tree" -p "$head" -F "$msg")
done

tmp_out=$(mktemp -d)
git -C "$base" -c core.abbrev=12 format-patch -q --cover-letter --no-signature --zero-commit \
	--no-binary -o "$tmp_out" "$start..$head"

cover=$tmp_out/0000-cover-letter.patch
subject=$(head -n1 "$gen/messages/cover-letter.txt")
python3 - "$cover" "$subject" "$gen/messages/cover-letter.txt" <<'PY'
import sys
path, subject, blurb_file = sys.argv[1:4]
blurb = open(blurb_file).read().split("\n", 1)[1].strip("\n")
text = open(path).read()
assert "*** SUBJECT HERE ***" in text and "*** BLURB HERE ***" in text
text = text.replace("*** SUBJECT HERE ***", subject)
text = text.replace("*** BLURB HERE ***", blurb)
open(path, "w").write(text)
PY

find "$tmp_out" -name '[0-9][0-9][0-9][1-9]-*.patch' -printf '%f\n' |
	LC_ALL=C sort >"$tmp_out/series"
mkdir -p "$out"
rm -f "$out"/*.patch "$out/series"
cp "$tmp_out"/* "$out/"
rm -rf "$tmp_out"
echo "gen-series: wrote $(wc -l <"$out/series") patches and a cover letter to $out"
