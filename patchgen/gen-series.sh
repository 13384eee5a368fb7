#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Generate a patch series from the repository.
#
#   patchgen/gen-series.sh [-o OUTDIR] [-b BASE_TREE] [-g] SERIES
#
# SERIES is a directory of patchgen/: "upstream" (the test, for the current
# upstream tree: Debian's linux-source-7.3) or "stable-6.12" (the fix as a
# backport of the upstream commit, then the test, for linux-source-6.12).
# It holds:
#   base              "linux-source-<series> <version>": the tree it applies to
#   steps             one patch a line: message|edits|new files|author
#   cover-letter.txt  subject line, blank line, blurb
#   subject-prefix    optional: "PATCH 6.12" for a stable series
#   edits/            hunks for existing upstream files
# Each patch is a commit built in a scratch index on top of a pristine git
# tree of the base (runner/linux-source-base.sh): new files are copied
# from their kernel-tree paths in this repository, edits applied, and the
# message taken from patchgen/. Dates are fixed, so the output depends on
# the repository alone: make check regenerates it and fails when patches/
# is stale.
#
# Identity: the committed patches/ carry the project identity of
# patchgen/author; -g uses `git config user.name` / `user.email` instead,
# for the copy you send (make patches-to-send). A step with an author of
# its own (the backported fix) keeps that author; our Signed-off-by follows
# its trailers.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gen=$repo/patchgen
out=
base=
git_identity=

die() { echo "gen-series: error: $*" >&2; exit 1; }
usage() { echo "usage: $0 [-o OUTDIR] [-b BASE_TREE] [-g] upstream|stable-6.12" >&2; exit 2; }

while getopts "o:b:gh" opt; do
	case $opt in
	o) out=$OPTARG ;;
	b) base=$OPTARG ;;
	g) git_identity=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
series=$1
sdir=$gen/$series
if [ ! -f "$sdir/steps" ] || [ ! -f "$sdir/base" ]; then
	die "no series '$series' in patchgen/: use upstream or stable-6.12."
fi
out=${out:-$repo/patches/$series}

read -r pkg version <"$sdir/base"
[ -n "$base" ] || base=$("$repo/runner/linux-source-base.sh" "${pkg#linux-source-}" "$version")
git -C "$base" rev-parse --verify -q HEAD >/dev/null ||
	die "$base is not a git tree with a commit; see runner/linux-source-base.sh."

if [ -n "$git_identity" ]; then
	name=$(git -C "$repo" config user.name || true)
	email=$(git -C "$repo" config user.email || true)
	if [ -z "$name" ] || [ -z "$email" ]; then
		die "-g needs git config user.name and user.email (set them, then run again)."
	fi
	ident="$name <$email>"
else
	ident=$(head -n1 "$gen/author")
fi

export GIT_COMMITTER_NAME=${ident% <*}
export GIT_COMMITTER_EMAIL=${ident##*<}
GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}
export GIT_AUTHOR_DATE="2026-11-30T12:00:00+0000"
export GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE

# Build the commits in a scratch index: no checkout of the base tree.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gen-series.XXXXXX")
export GIT_INDEX_FILE=$scratch/index
trap 'rm -rf "$scratch"' EXIT
git -C "$base" read-tree HEAD
start=$(git -C "$base" rev-parse HEAD)
head=$start

while IFS='|' read -r message edits files author; do
	case $message in '#'* | '') continue ;; esac
	for f in $files; do
		[ -f "$repo/$f" ] || die "$f is missing from the repository."
		mode=100644
		[ -x "$repo/$f" ] && mode=100755
		blob=$(git -C "$base" hash-object -w "$repo/$f")
		git -C "$base" update-index --add --cacheinfo "$mode,$blob,$f"
	done
	if [ -n "$edits" ]; then
		git -C "$base" apply --cached --whitespace=error "$gen/$edits" ||
			die "patchgen/$edits does not apply to $base."
	fi
	author=${author:-$ident}
	msg=$scratch/msg
	cp "$gen/$message" "$msg"
	# The sender's Signed-off-by (-g) joins the message's trailer block, or
	# starts one; the committed drafts carry none (no DCO without a person).
	if [ -n "$git_identity" ]; then
		tail -n1 "$msg" | grep -q '^[A-Za-z-]*: ' || echo >>"$msg"
		echo "Signed-off-by: $ident" >>"$msg"
	fi
	tree=$(git -C "$base" write-tree)
	head=$(GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=$(echo "${author##*<}" | tr -d '>') \
		git -C "$base" commit-tree "$tree" -p "$head" -F "$msg")
done <"$sdir/steps"

prefix=PATCH
[ -f "$sdir/subject-prefix" ] && prefix=$(head -n1 "$sdir/subject-prefix")
tmp_out=$(mktemp -d)
cover_opt=--no-cover-letter
[ -f "$sdir/cover-letter.txt" ] && cover_opt=--cover-letter
git -C "$base" -c core.abbrev=12 format-patch -q "$cover_opt" --no-signature \
	--zero-commit --no-binary --from="$ident" --subject-prefix="$prefix" \
	-o "$tmp_out" "$start..$head"

cover=$tmp_out/0000-cover-letter.patch
[ ! -f "$sdir/cover-letter.txt" ] || python3 - "$cover" "$sdir/cover-letter.txt" <<'PY'
import sys
path, blurb_file = sys.argv[1:3]
subject, _, blurb = open(blurb_file).read().partition("\n")
text = open(path).read()
assert "*** SUBJECT HERE ***" in text and "*** BLURB HERE ***" in text
text = text.replace("*** SUBJECT HERE ***", subject.strip())
text = text.replace("*** BLURB HERE ***", blurb.strip("\n"))
open(path, "w").write(text)
PY

find "$tmp_out" -name '[0-9][0-9][0-9][1-9]-*.patch' -printf '%f\n' |
	LC_ALL=C sort >"$tmp_out/series"
mkdir -p "$out"
rm -f "$out"/*.patch "$out/series"
cp "$tmp_out"/* "$out/"
rm -rf "$tmp_out"
what="$(wc -l <"$out/series") patches"
[ -f "$sdir/cover-letter.txt" ] && what="$what and a cover letter"
echo "gen-series: wrote $what ($series, base $pkg $version) to $out"
