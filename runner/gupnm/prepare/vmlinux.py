"""Uncompressed vmlinux from a bzImage, so QEMU can boot it via PVH.

Under TCG the emulated decompressor of a bzImage costs seconds on every
boot. A vmlinux with a PVH entry note (CONFIG_PVH=y, as Debian's kernels
have) boots directly. The payload is found by its compression magic and
decompressed once into the cache, keyed by the image's content (Debian 7.x
names every image "vmlinuz": a name says nothing about the kernel);
anything unexpected falls back to the bzImage.
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from ..host import UsageError, cache_dir, locked, owner_tag, progress
from . import cache

# magic -> decompressor command; tried in order of the kernel's preferences.
MAGICS = [
    (b"\x28\xb5\x2f\xfd", ["zstd", "-dcq"]),
    (b"\xfd7zXZ\x00", ["xz", "-dcq"]),
    (b"\x1f\x8b\x08", ["gzip", "-dcq"]),
]
PVH_NOTE_TYPE = 18          # XEN_ELFNOTE_PHYS32_ENTRY


def _has_pvh_note(data: bytes) -> bool:
    """True when the ELF64 image has a Xen PHYS32_ENTRY (PVH) note; False
    for anything else, a truncated image included."""
    if data[:5] != b"\x7fELF\x02":
        return False
    try:
        return _pvh_note(data)
    except struct.error:            # headers point past the end: cut short
        return False


def _pvh_note(data: bytes) -> bool:
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


def content_key(path: Path) -> str:
    """sha256 of a file's bytes, the key of everything cached for it."""
    return cache.sha256(path)


def check_kernel(image: Path) -> str:
    """'bzImage' or 'elf' for a bootable x86 kernel; UsageError otherwise.

    A bzImage carries "HdrS" at offset 0x202 (the boot protocol header);
    an x86-64 ELF vmlinux has e_machine 62. QEMU's own complaint about
    anything else comes only after a boot was attempted.
    """
    try:
        with open(image, "rb") as fh:
            head = fh.read(1 << 16)         # setup header or ELF headers
        size = image.stat().st_size
    except OSError as err:
        raise UsageError(f"cannot read kernel image {image}: {err.strerror}") from None
    kind = None
    if len(head) >= 0x206 and head[0x202:0x206] == b"HdrS":
        kind, want = "bzImage", bzimage_size(head)
    elif head[:4] == b"\x7fELF" and len(head) >= 20 and \
            struct.unpack_from("<H", head, 18)[0] == 62:
        kind, want = "elf", elf_size(head)
    if kind and want is not None and size < want:
        raise UsageError(f"{image} is cut short: {size} bytes, its {kind} headers "
                         f"say {want}; copy the image again")
    if kind:
        return kind
    raise UsageError(f"{image} is not an x86 kernel image (no bzImage boot "
                     "header, not an x86-64 ELF vmlinux): name a vmlinuz, "
                     "bzImage or vmlinux")


def bzimage_size(head: bytes) -> int | None:
    """The size a bzImage's setup header promises: setup sectors plus the
    protected-mode payload (syssize, in 16-byte units)."""
    if len(head) < 0x1f8:
        return None
    setup_sects = head[0x1f1] or 4
    syssize, = struct.unpack_from("<I", head, 0x1f4)
    return (setup_sects + 1) * 512 + syssize * 16


def elf_size(head: bytes) -> int | None:
    """The size an ELF64's program headers need (the end of the furthest
    segment's file data), from the first bytes of the file; None when the
    headers are not in @head."""
    try:
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        end = phoff + phentsize * phnum
        for i in range(phnum):
            base = phoff + i * phentsize
            offset, = struct.unpack_from("<Q", head, base + 8)
            filesz, = struct.unpack_from("<Q", head, base + 32)
            end = max(end, offset + filesz)
    except struct.error:
        return None
    return end


def uncompressed(image: Path) -> Path | None:
    """A cached vmlinux for @image, or None when it cannot be had."""
    key = content_key(image)
    store = cache_dir() / "vmlinux"
    out = store / key[:20] / "vmlinux"
    if out.exists() and cache.check(out.parent) is None:
        return out
    with locked(cache_dir() / "locks" / f"vmlinux-{key[:20]}.lock"):
        why = cache.check(out.parent) if out.parent.exists() else None
        if out.exists() and why is None:
            return out
        if why:
            cache.discard(out.parent, why)
        data = _extract(image.read_bytes())
        if data is None:
            return None
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".vmlinux-{owner_tag()}-", dir=out.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, out)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)          # a full disk: no half file left
        (out.parent / "source").write_text(f"{image}\n")
        cache.record(out.parent, [out.name])
        cache.verify_filled(out.parent, "kernels")
    progress(f"extracted vmlinux from {image.name} (boots without "
             "the emulated decompressor)")
    return out


def _extract(blob: bytes) -> bytes | None:
    """The PVH-bootable ELF inside a bzImage, or None."""
    for magic, cmd in MAGICS:
        if not shutil.which(cmd[0]):
            continue
        start = blob.find(magic)
        while start >= 0:
            proc = subprocess.run(cmd, input=blob[start:], capture_output=True)
            data = proc.stdout
            if data[:4] == b"\x7fELF" and len(data) > 1 << 20:
                # A payload cut short decompresses to a cut ELF: boot the
                # bzImage, whose own checks then speak. (The decompressor's
                # status says nothing: the bytes after the payload are not
                # compressed data, and it complains of them.)
                whole = len(data) >= (elf_size(data) or 0)
                return data if whole and _has_pvh_note(data) else None
            start = blob.find(magic, start + 1)
    return None
