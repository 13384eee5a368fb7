"""Uncompressed vmlinux from a bzImage, so QEMU can boot it via PVH.

Under TCG the emulated decompressor of a bzImage costs seconds on every
boot. A vmlinux with a PVH entry note (CONFIG_PVH=y, as Debian's kernels
have) boots directly. The payload is found by its compression magic and
decompressed once into the cache; anything unexpected falls back to the
bzImage.
"""
from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

from .host import cache_dir, progress

# magic -> decompressor command; tried in order of the kernel's preferences.
MAGICS = [
    (b"\x28\xb5\x2f\xfd", ["zstd", "-dcq"]),
    (b"\xfd7zXZ\x00", ["xz", "-dcq"]),
    (b"\x1f\x8b\x08", ["gzip", "-dcq"]),
]
PVH_NOTE_TYPE = 18          # XEN_ELFNOTE_PHYS32_ENTRY


def _has_pvh_note(data: bytes) -> bool:
    """True when the ELF64 image has a Xen PHYS32_ENTRY (PVH) note."""
    if data[:5] != b"\x7fELF\x02":
        return False
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        ptype, = struct.unpack_from("<I", data, phoff + i * phentsize)
        if ptype != 4:                      # PT_NOTE
            continue
        offset, = struct.unpack_from("<Q", data, phoff + i * phentsize + 8)
        size, = struct.unpack_from("<Q", data, phoff + i * phentsize + 32)
        pos, end = offset, offset + size
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name = data[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and ntype == PVH_NOTE_TYPE:
                return True
            pos += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def uncompressed(image: Path) -> Path | None:
    """A cached vmlinux for @image, or None when it cannot be had."""
    out = cache_dir() / "vmlinux" / (image.name + ".vmlinux")
    if out.exists() and out.stat().st_mtime >= image.stat().st_mtime:
        return out
    blob = image.read_bytes()
    for magic, cmd in MAGICS:
        if not shutil.which(cmd[0]):
            continue
        start = blob.find(magic)
        while start >= 0:
            proc = subprocess.run(cmd, input=blob[start:], capture_output=True)
            data = proc.stdout
            if data[:4] == b"\x7fELF" and len(data) > 1 << 20:
                if not _has_pvh_note(data):
                    return None
                out.parent.mkdir(parents=True, exist_ok=True)
                tmp = out.with_name(out.name + ".tmp")
                tmp.write_bytes(data)
                tmp.rename(out)
                progress(f"extracted vmlinux from {image.name} (boots without "
                         "the emulated decompressor)")
                return out
            start = blob.find(magic, start + 1)
    return None
