#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the path of a pristine git tree of Debian's linux-source-<series>
# (default 6.12), creating it in the cache on first use: the package is
# downloaded with apt-get download and unpacked there, never installed.
#
#   runner/linux-source-base.sh [SERIES]
#
# Environment: GUPNM_CACHE (default ~/.cache/gupnm).
set -euo pipefail

series=${1:-6.12}
cache=${GUPNM_CACHE:-$HOME/.cache/gupnm}
pkg=linux-source-$series

log() { echo "gupnm: $*" >&2; }
die() { echo "gupnm: error: $*" >&2; exit 1; }

command -v apt-cache >/dev/null || die "apt-cache not found: this needs a Debian host."
version=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
	die "no candidate for $pkg: run 'apt-get update' (as root) and check that the
       Debian security suite is in the apt sources."
fi

base=$cache/src/$pkg-$version
mkdir -p "$cache/locks"
exec 9>"$cache/locks/$pkg.lock"
flock 9
if [ -f "$base/.gupnm-base-ready" ]; then
	echo "$base"
	exit 0
fi

mkdir -p "$cache/debs" "$cache/src"
deb=$(ls "$cache/debs/${pkg}_${version}_all.deb" 2>/dev/null || true)
if [ -z "$deb" ]; then
	log "downloading $pkg $version"
	(cd "$cache/debs" && apt-get download -q "$pkg=$version" >&2) ||
		die "apt-get download $pkg=$version failed (network? apt lists?)."
	deb=$cache/debs/${pkg}_${version}_all.deb
fi

tmp=$(mktemp -d "$cache/src/.unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
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
