#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The runner's own view of Debian's archive: an apt configuration in the
# cache that lists every suite (bookworm, its -updates, -security and
# -backports, trixie and the same, sid) for amd64 and arm64, with its own
# package lists. The host's apt configuration and state are never touched.
#
#   runner/debian-apt.sh [--update|--refresh] [--suite SUITE]
#
# Prints the path of the configuration file; use it as
#   APT_CONFIG=$(runner/debian-apt.sh) apt-cache policy linux-source-7.3
# The lists are fetched when missing, or older than GUPNM_APT_MAX_AGE
# minutes (default 360); --update fetches them now if they are older than a
# minute, --refresh always. A frozen archive whose Release files have expired
# still works (Acquire::Check-Valid-Until "false"). When the archive cannot
# be reached, the lists of the last whole update are used (a warning says
# from when); with none, the error names the archive and nothing is kept.
#
# --suite SUITE: one suite's lists only, in a state of its own
# ($GUPNM_CACHE/apt/suite-SUITE): a kernel named by its suite
# (debian:bookworm-security, make run's default) needs no other, and one
# suite's lists are a few MB where every suite's are about 650 MB.
#
# Environment: GUPNM_CACHE (default ~/.cache/gupnm), GUPNM_DEBIAN_MIRROR
# (default http://deb.debian.org), GUPNM_APT_MAX_AGE.
set -euo pipefail

cache=${GUPNM_CACHE:-$HOME/.cache/gupnm}
mirror=${GUPNM_DEBIAN_MIRROR:-http://deb.debian.org}
max_age=${GUPNM_APT_MAX_AGE:-360}
dir=$cache/apt
conf=$dir/apt.conf

die() { echo "debian-apt: error: $*" >&2; exit 1; }

usage() { echo "usage: $0 [--update|--refresh] [--suite SUITE]" >&2; exit 2; }
ALL_SUITES="bookworm bookworm-updates bookworm-backports bookworm-security"
ALL_SUITES="$ALL_SUITES trixie trixie-updates trixie-backports trixie-security sid"
suites=$ALL_SUITES
while [ $# -gt 0 ]; do
	case $1 in
	--update) max_age=1 ;;
	--refresh) max_age=0 ;;
	--suite)
		[ $# -ge 2 ] || usage
		case " $ALL_SUITES " in
		*" $2 "*) ;;
		*) die "no suite '$2': use one of $ALL_SUITES" ;;
		esac
		suites=$2
		dir=$cache/apt/suite-$2
		conf=$dir/apt.conf
		shift ;;
	*) usage ;;
	esac
	shift
done

command -v apt-get >/dev/null || die "apt-get not found: this needs a Debian host."
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "$keyring missing: apt-get install debian-archive-keyring"

mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/empty"
exec 9>"$dir/.lock"
flock 9

sources=$dir/sources.list.new
{
	opts="[arch=amd64,arm64 signed-by=$keyring]"
	for suite in $suites; do
		case $suite in
		*-security) echo "deb $opts $mirror/debian-security $suite main" ;;
		*) echo "deb $opts $mirror/debian $suite main" ;;
		esac
	done
} >"$sources"
mv "$sources" "$dir/sources.list"
: >>"$dir/status"

cat >"$conf.new" <<EOF
Dir::Etc::SourceList "$dir/sources.list";
Dir::Etc::SourceParts "$dir/empty";
Dir::Etc::Parts "$dir/empty";
Dir::Etc::main "/dev/null";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$dir/empty";
Dir::State::Lists "$dir/lists";
Dir::State::status "$dir/status";
Dir::Cache "$dir/cache";
APT::Architecture "amd64";
APT::Architectures { "amd64"; "arm64"; };
APT::Sandbox::User "root";
Acquire::Check-Valid-Until "false";
Acquire::Languages "none";
Acquire::http::Timeout "30";
EOF
mv "$conf.new" "$conf"

stamp=$dir/lists/.gupnm-updated
have_lists() { compgen -G "$dir/lists/*_Packages*" >/dev/null; }
# Lists that hold no Packages file are no lists (a failed first update).
if [ -f "$stamp" ] && ! have_lists; then rm -f "$stamp"; fi
if [ ! -f "$stamp" ] || [ "$max_age" -eq 0 ] ||
   [ -n "$(find "$stamp" -mmin +"$max_age")" ]; then
	what="every Debian suite"
	[ "$suites" = "$ALL_SUITES" ] || what=$suites
	echo "debian-apt: fetching package lists of $what into $dir" >&2
	# --error-on=any: a list that cannot be fetched is a failure (apt
	# exits 0 on network errors otherwise, leaving empty lists behind), so
	# the stamp says "fresh" only when every list is.
	if ! APT_CONFIG=$conf apt-get update -q --error-on=any >"$dir/update.log" 2>&1; then
		why=$(grep -m1 -E '^(E|W): Failed to fetch' "$dir/update.log" |
		      sed -E 's/^(E|W): Failed to fetch [^ ]+ +//') || true
		if [ -f "$stamp" ] && have_lists; then
			# The archive is away: the lists of the last update stay.
			echo "debian-apt: warning: Debian's archive ($mirror) cannot be" \
			     "reached (${why:-see $dir/update.log}); using the package lists" \
			     "of $(date -r "$stamp" '+%F %R')" >&2
			echo "$conf"
			exit 0
		fi
		die "Debian's archive ($mirror) cannot be reached: apt-get update" \
		    "failed (${why:-see $dir/update.log}); check the network or" \
		    "GUPNM_DEBIAN_MIRROR, then run again (log: $dir/update.log)"
	fi
	touch "$stamp"
fi
echo "$conf"
