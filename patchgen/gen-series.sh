#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Generate a patch series from the repository.
#
#   patchgen/gen-series.sh [-o OUTDIR] [-b BASE_TREE] [-g] [-m MAINLINE] [-s] SERIES
#
# SERIES is a directory of patchgen/: "upstream" (the test, for the current
# upstream tree: Debian's linux-source-7.3) or "stable-6.12" (the fix as a
# backport of the upstream commit, then the test, for linux-source-6.12).
# It holds:
#   base              "linux-source-<series> <version>": the tree it applies to
#   steps             one patch a line: message|edits|new files|author
#   cover-letter.txt  subject line, blank line, blurb
#   subject-prefix    optional: "PATCH 6.12" for a stable series
#   recipients        optional: "To: ..." and "Cc: ..." lines every copy
#                     carries (a stable series: stable@, the fix's author
#                     and linux-mm); -s adds get_maintainer.pl's
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
# for the copy you send (make patches-to-send), and refuses an example.*
# address. A step with an author of its own (the backported fix) keeps that
# author; our Signed-off-by follows its trailers.
#
# Upstream's words: a message holding an "@upstream COMMIT@" line (the
# stable backport) stands for that commit's changelog, which is not
# reachable offline: the committed draft says so in its place, and -m
# MAINLINE (a mainline git tree) puts the changelog there verbatim, as
# `git show -s --format=%B COMMIT` gives it, with its author. The copy
# you send needs -m.
#
# -s (send): the series is generated on BASE_TREE's HEAD (a mainline or
# mm-new tree with its history), with a base-commit: line, To:/Cc: from
# its get_maintainer.pl, and checkpatch.pl --strict run in that tree.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gen=$repo/patchgen
out=
base=
git_identity=
mainline=
send=

die() { echo "gen-series: error: $*" >&2; exit 1; }
# shellcheck source=patchgen/identity.sh
. "$gen/identity.sh"
usage() { echo "usage: $0 [-o OUTDIR] [-b BASE_TREE] [-g] [-m MAINLINE] [-s] upstream|stable-6.12" >&2; exit 2; }

while getopts "o:b:gm:sh" opt; do
	case $opt in
	o) out=$OPTARG ;;
	b) base=$OPTARG ;;
	g) git_identity=1 ;;
	m) mainline=$OPTARG ;;
	s) send=1 ;;
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
[ -z "$send" ] || [ -n "$base" ] || die "-s needs -b MAINLINE_TREE, the tree to send against."
[ -z "$mainline" ] || git -C "$mainline" rev-parse --verify -q HEAD >/dev/null ||
	die "-m $mainline is not a git tree with a commit."
[ -n "$base" ] || base=$("$repo/runner/linux-source-base.sh" "${pkg#linux-source-}" "$version")
git -C "$base" rev-parse --verify -q HEAD >/dev/null ||
	die "$base is not a git tree with a commit; see runner/linux-source-base.sh."

ident=$(ident_of "$repo" "$git_identity")

export GIT_COMMITTER_NAME=${ident% <*}
export GIT_COMMITTER_EMAIL=${ident##*<}
GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}
export GIT_AUTHOR_DATE="2026-11-30T12:00:00+0000"
export GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE

# Copy message @1 to @2, its "@upstream COMMIT@" line replaced: by that
# commit's changelog from -m MAINLINE (and $author set to its author), or
# in a draft by a note saying what stands there in the copy to send.
upstream_words() {
	local line commit
	line=$(grep -m1 -n '^@upstream [0-9a-f]\{12,40\}@$' "$1" || true)
	if [ -z "$line" ]; then
		cp "$1" "$2"
		return
	fi
	commit=${line#*@upstream }
	commit=${commit%@}
	if [ -n "$mainline" ]; then
		git -C "$mainline" cat-file -e "$commit^{commit}" 2>/dev/null ||
			die "$mainline has no commit $commit: fetch mainline there, then run again."
		[ "$(git -C "$mainline" show -s --format=%s "$commit")" = "$(head -n1 "$1")" ] ||
			die "$commit in $mainline is not \"$(head -n1 "$1")\"."
		author=$(git -C "$mainline" show -s --format='%an <%ae>' "$commit")
		{ sed -n "1,$((${line%%:*} - 1))p" "$1"
		  git -C "$mainline" show -s --format=%B "$commit" | sed -e '1,/^$/d' -e '${/^$/d}'
		  sed -n "$((${line%%:*} + 1)),\$p" "$1"; } >"$2"
		return
	fi
	[ -z "$git_identity" ] ||
		die "$series carries upstream's changelog of $commit: give your mainline tree (-m, make patches-to-send MAINLINE=...)."
	sed "${line%%:*}s/.*/[ Upstream's changelog of ${commit:0:12}, verbatim with its trailers, stands\n  here in the copy that is sent (make patches-to-send MAINLINE=...); this\n  draft was made offline and does not reproduce it. ]/" "$1" >"$2"
}

# format-patch options for sending @2..@3 from tree @1: --base (the
# base-commit: line), --to the maintainers and --cc everyone else
# get_maintainer.pl names.
recipients() {
	local who
	echo "--base=$2"
	git -C "$1" diff "$2" "$3" >"$scratch/all.diff"
	(cd "$1" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
		"$scratch/all.diff") >"$scratch/who" ||
		die "get_maintainer.pl failed in $1."
	while IFS= read -r who; do
		case $who in
		*'(maintainer'*) echo "--to=${who%% (*}" ;;
		*) echo "--cc=${who%% (*}" ;;
		esac
	done <"$scratch/who"
}

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
	upstream_words "$gen/$message" "$msg"
	# The sender's Signed-off-by (-g) joins the message's trailer block, or
	# starts one; the committed drafts carry none (no DCO without a person).
	if [ -n "$git_identity" ]; then
		# (a backporter's "[ note ]" stands right above it, as stable has it)
		tail -n1 "$msg" | grep -q -e '^[A-Za-z-]*: ' -e ']$' || echo >>"$msg"
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
send_opts=()
[ -z "$send" ] || mapfile -t send_opts < <(recipients "$base" "$start" "$head")
if [ -f "$sdir/recipients" ]; then
	while IFS= read -r who; do
		case $who in
		'To: '*) send_opts+=("--to=${who#To: }") ;;
		'Cc: '*) send_opts+=("--cc=${who#Cc: }") ;;
		'#'* | '') ;;
		*) die "patchgen/$series/recipients: '$who' is neither a To: nor a Cc: line." ;;
		esac
	done <"$sdir/recipients"
fi
git -C "$base" -c core.abbrev=12 format-patch -q "$cover_opt" --no-signature \
	--zero-commit --no-binary --from="$ident" --subject-prefix="$prefix" \
	"${send_opts[@]}" -o "$tmp_out" "$start..$head"

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
if [ -n "$send" ]; then
	what="$what on $(git -C "$base" describe --tags --always "$start")"
else
	what="$what ($series, base $pkg $version)"
fi
echo "gen-series: wrote $what to $out"
# Sending: checkpatch in the tree, whose history looks up every commit id.
[ -z "$send" ] || for p in "$out"/[0-9][0-9][0-9][1-9]-*.patch; do
	(cd "$base" && perl scripts/checkpatch.pl --strict -q "$p") >&2 ||
		die "checkpatch.pl --strict in $base: $(basename "$p") is not clean (above): fix it before sending."
done
