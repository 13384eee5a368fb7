#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot a kernel image under QEMU TCG with a busybox initramfs that runs
# gupnm_probe, print the probe's output and exit with its status.
#
#   probe/boot-probe.sh VMLINUZ [PROBE_ARGS...]
#   GUPNM_PROBE_REPEAT=N probe/boot-probe.sh ...   N runs in one boot
#
# Needs busybox-static, cpio, qemu-system-x86_64 and a static probe/gupnm_probe
# (make -C probe). The kernel must have CONFIG_PACKET, CONFIG_PROC_PAGE_MONITOR
# and a serial console built in (Debian's amd64 images do). Exit: the probe's
# status (0 pass, 1 fail, 4 skip); 3 when the guest died or timed out before
# the probe reported one; 2 on bad input.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
probe=$here/gupnm_probe
timeout_s=${GUPNM_PROBE_TIMEOUT:-120}
repeat=${GUPNM_PROBE_REPEAT:-1}
case $repeat in
''|*[!0-9]*) echo "GUPNM_PROBE_REPEAT=$repeat is not a number" >&2; exit 2 ;;
esac

if [ $# -lt 1 ] || [ ! -f "$1" ]; then
	echo "usage: $0 VMLINUZ [PROBE_ARGS...] (no kernel image at '${1:-}')" >&2
	exit 2
fi
kernel=$1
shift
if [ ! -x "$probe" ]; then
	echo "$probe missing: run make -C $here first" >&2
	exit 2
fi
busybox=$(command -v busybox || echo /bin/busybox)
if ! file -L "$busybox" | grep -q 'statically linked'; then
	echo "$busybox is not static: apt-get install busybox-static" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gupnm-probe.XXXXXX")
trap '[ -n "${GUPNM_PROBE_KEEP:-}" ] || rm -rf "$work"' EXIT INT TERM
root=$work/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev"
cp "$busybox" "$root/bin/busybox"
for applet in sh mount cat echo reboot uname grep; do
	ln -s busybox "$root/bin/$applet"
done
cp "$probe" "$root/bin/gupnm_probe"
# The probe's arguments, quoted for the guest's shell.
args=
for a in "$@"; do
	args="$args '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"
done
cat >"$root/init" <<EOF
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

echo "GUPNM-PROBE-BEGIN"
echo "# kernel: \$(uname -r)"
/bin/gupnm_probe$args
rc=\$?
# GUPNM_PROBE_REPEAT=N: N-1 more runs, one line each (flakiness check).
i=1
while [ "\$i" -lt $repeat ]; do
	i=\$((i + 1))
	/bin/gupnm_probe$args >/tmp.out 2>&1
	echo "GUPNM-PROBE-RUN: \$i exit \$? \$(grep -c '^not ok' /tmp.out) not ok"
done
echo "GUPNM-PROBE-EXIT: \$rc"
reboot -f
EOF
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet) >"$work/initramfs.cpio"

log=$work/console.log
start=$(date +%s)
timeout "$timeout_s" qemu-system-x86_64 -accel tcg -m 512 -smp 1 \
	-kernel "$kernel" -initrd "$work/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 oops=panic quiet" \
	-nographic -no-reboot -monitor none -serial stdio </dev/null >"$log" 2>&1 || true
end=$(date +%s)
tr -d '\r' <"$log" | sed -n '/GUPNM-PROBE-BEGIN/,/^GUPNM-PROBE-EXIT/{ /GUPNM-PROBE-BEGIN/d; p; }'
rc=$(tr -d '\r' <"$log" | sed -n 's/^GUPNM-PROBE-EXIT: \([0-9]*\)$/\1/p' | tail -n 1)
echo "# boot-probe: $((end - start)) s from QEMU start to power-off"
if [ -z "$rc" ]; then
	echo "boot-probe: the guest reported no probe status (died or timed out after ${timeout_s}s); console tail:" >&2
	tr -d '\r' <"$log" | tail -n 30 >&2
	exit 3
fi
exit "$rc"
