#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the path of a pristine git tree of Debian's linux-source-<series>
# (default 6.12) at VERSION (default: the newest Debian offers), creating it
# in the cache on first use: the package is downloaded with apt-get download
# through the runner's own apt lists (runner/debian-apt.sh, every suite) and
# unpacked there, never installed.
#
#   runner/linux-source-base.sh [SERIES [VERSION]]
#
# Environment: GUPNM_CACHE (default ~/.cache/gupnm).
set -euo pipefail

series=${1:-6.12}
want=${2:-}
cache=${GUPNM_CACHE:-$HOME/.cache/gupnm}
pkg=linux-source-$series
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

log() { echo "gupnm: $*" >&2; }
die() { echo "gupnm: error: $*" >&2; exit 1; }

if [ -n "$want" ] && [ -f "$cache/src/$pkg-$want/.gupnm-base-ready" ]; then
	echo "$cache/src/$pkg-$want"
	exit 0
fi
APT_CONFIG=$("$here/debian-apt.sh")
export APT_CONFIG
if [ -n "$want" ]; then
	version=$want
	apt-cache madison "$pkg" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' |
		grep -qxF -- "$version" ||
		die "Debian's archive no longer offers $pkg $version: pick one of
       $(apt-cache madison "$pkg" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -u | tr '\n' ' ')"
else
	version=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
	if [ -z "$version" ] || [ "$version" = "(none)" ]; then
		die "Debian offers no $pkg (see runner/debian-apt.sh --refresh)."
	fi
fi

base=$cache/src/$pkg-$version
mkdir -p "$cache/locks"
exec 9>"$cache/locks/$pkg.lock"
flock 9
if [ -f "$base/.gupnm-base-ready" ]; then
	echo "$base"
	exit 0
fi

# A signal ends the script through its EXIT trap: no half left behind.
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$cache/debs" "$cache/src"
deb=$(ls "$cache/debs/${pkg}_${version}_all.deb" 2>/dev/null || true)
if [ -z "$deb" ]; then
	log "downloading $pkg $version"
	# Into a scratch folder, moved into place whole: apt-get download
	# writes the final name as it goes, and a cut download must never be
	# taken for the package by the next run.
	dl=$(mktemp -d "$cache/debs/.dl-base.XXXXXX")
	trap 'rm -rf "$dl"' EXIT
	(cd "$dl" && apt-get download -q "$pkg=$version" >&2) ||
		die "apt-get download $pkg=$version failed (network? apt lists?)."
	mv "$dl/${pkg}_${version}_all.deb" "$cache/debs/"
	deb=$cache/debs/${pkg}_${version}_all.deb
fi

tmp=$(mktemp -d "$cache/src/.unpack.XXXXXX")
trap 'rm -rf "$tmp" ${dl:+"$dl"}' EXIT
log "unpacking $pkg $version (about a minute)"
dpkg-deb --fsys-tarfile "$deb" | tar -C "$tmp" -x --wildcards '*.tar.xz'
tarball=$(find "$tmp" -name "linux-source-$series.tar.xz" | head -n1)
[ -n "$tarball" ] || die "$deb holds no linux-source-$series.tar.xz"
tar -C "$tmp" -xf "$tarball"
rm -f "$tarball"
src=$tmp/linux-source-$series
[ -f "$src/Makefile" ] || die "unexpected layout in $deb: no $src/Makefile"

log "making a git base of $pkg $version"
# Debian's tree ignores everything ("/*" in .gitignore): add with -f.
git -C "$src" init -q
git -C "$src" add -A -f
git -C "$src" -c user.name=gupnm -c user.email=gupnm@localhost \
	commit -q -m "$pkg $version (Debian)"
rm -rf "$base"
mv "$src" "$base"
touch "$base/.gupnm-base-ready"
echo "$base"
