#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Issue 21: our boot-to-verdict against virtme-ng's boot-to-`true`, on the
# same cached Debian kernel under TCG (2 vCPUs, 1 GiB), in turn, ROUNDS
# times each; prints one line per run and the ratio of the medians.
#
#   runner/bench/vng-side-by-side.sh [ROUNDS]
#
# virtme-ng is not in bookworm: its Debian package (trixie, sid; an
# Architecture: all Python package) is fetched through the runner's own apt
# view (runner/debian-apt.sh, the host's apt untouched) and unpacked, never
# installed. Without virtme-ng-init (not in that package) vng boots with its
# shell init, as a Debian user of the package gets. The kernel is
# debian:bookworm-security, warm in the runner's cache.
set -euo pipefail

rounds=${1:-2}
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${GUPNM_CACHE:-$HOME/.cache/gupnm}
work=$(mktemp -d "${TMPDIR:-/tmp}/vng-side-XXXXXX")
trap 'rm -rf "$work"' EXIT

conf=$("$repo/runner/debian-apt.sh")
(cd "$work" && APT_CONFIG=$conf apt-get download -q virtme-ng >/dev/null)
dpkg-deb -x "$work"/virtme-ng_*.deb "$work/vng"
vng_version=$(dpkg-deb -f "$work"/virtme-ng_*.deb Version)

python3 "$repo/runner/gupnm-run" run --kernel debian:bookworm-security \
	--results "$work/warm" >/dev/null 2>&1 || true    # warm the cache
image=$(find "$cache"/debian/ -path '*/boot/vmlinuz-6.12.*+deb12-amd64' | sort | tail -n 1)

now() { date +%s.%N; }
ours=() theirs=()
for i in $(seq "$rounds"); do
	t0=$(now)
	python3 "$repo/runner/gupnm-run" run --kernel debian:bookworm-security \
		--results "$work/ours-$i" >/dev/null 2>&1 || true
	t1=$(now)
	env PYTHONPATH="$work/vng/usr/lib/python3/dist-packages" \
		PATH="$work/vng/usr/bin:$PATH" /usr/bin/python3 "$work/vng/usr/bin/vng" \
		--run "$image" --disable-kvm --cpus 2 --memory 1G --exec true \
		>/dev/null 2>&1
	t2=$(now)
	a=$(echo "$t1 - $t0" | bc) b=$(echo "$t2 - $t1" | bc)
	ours+=("$a") theirs+=("$b")
	echo "round $i: ours (boot to verdict, exit $(jq -r .exit_code "$work/ours-$i/summary.json")) ${a}s; vng $vng_version (boot to true) ${b}s; load $(cut -d' ' -f1 /proc/loadavg)"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
mo=$(median "${ours[@]}") mv=$(median "${theirs[@]}")
echo "median: ours ${mo}s, vng ${mv}s, ours/vng $(echo "scale=2; $mo / $mv" | bc)"
