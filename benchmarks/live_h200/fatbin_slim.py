#!/usr/bin/env python3
"""Keep only the sm_90a cubins of a CUDA shared object's fatbins (SGLang's FA3 for the H200).

    python3 benchmarks/live_h200/fatbin_slim.py flash_ops.abi3.so flash_ops.sm90a.so

sglang-kernel 0.4.5's ``flash_ops.abi3.so`` (1,122,607,032 bytes) holds 372 fatbins in
``.nv_fatbin``, each with uncompressed ELF cubins for sm_90a, sm_80 and sm_86 in that order and no
PTX; an SM90 GPU only ever loads the sm_90a one. Each fatbin header's size is cut to its first
entry and the other entries' bytes are zeroed, so no offset moves and the host code's pointers
into the section stay valid; ``xz -9`` then packs the file to 123,249,560 bytes instead of
133,485,140 (where the cut was tried by hand and FA3 ran on the H200 from it).
The file must start every fatbin with an sm_90a ELF; anything else stops the cut with a message.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

FATBIN_MAGIC = 0xBA55ED50
ELF_KIND = 2
SM90 = 90


def section(path: Path, name: str = ".nv_fatbin") -> tuple[int, int]:
    """File offset and size of an ELF section, read with ``readelf -S -W``."""
    out = subprocess.check_output(["readelf", "-S", "-W", str(path)], text=True)
    for line in out.splitlines():
        match = re.search(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if match and match.group(1) == name:
            return int(match.group(3), 16), int(match.group(4), 16)
    raise SystemExit(f"fatbin_slim: {path} has no {name} section")


def entries(buf: bytearray, start: int, stop: int) -> list[tuple[int, int, int, int, int]]:
    """``(offset, kind, header size, payload size, arch)`` of each entry of one fatbin's body."""
    found, pos = [], start
    while pos < stop:
        kind, _unused, header, size = struct.unpack_from("<HHIQ", buf, pos)
        arch = struct.unpack_from("<I", buf, pos + 28)[0]
        found.append((pos, kind, header, size, arch))
        pos += header + size
    return found


def slim(buf: bytearray, offset: int, size: int) -> tuple[int, int]:
    """Cut every fatbin in ``buf[offset:offset+size]`` to its leading sm_90a ELF, in place.

    Returns:
        (fatbins cut, bytes zeroed).
    """
    pos, end, count, zeroed = offset, offset + size, 0, 0
    while pos < end:
        magic, _version, header, fat_size = struct.unpack_from("<IHHQ", buf, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # padding between fatbins
            continue
        body, stop = pos + header, pos + header + fat_size
        found = entries(buf, body, stop)
        if not found or found[0][1] != ELF_KIND or found[0][4] != SM90:
            arches = [(kind, arch) for _, kind, _, _, arch in found]
            raise SystemExit(f"fatbin_slim: fatbin at {pos:#x} does not lead with sm_90a: {arches}")
        keep = found[0][2] + found[0][3]
        struct.pack_into("<Q", buf, pos + 8, keep)
        buf[body + keep : stop] = bytes(stop - body - keep)
        zeroed += stop - body - keep
        count += 1
        pos = stop
    return count, zeroed


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    src, dst = Path(args[0]), Path(args[1])
    offset, size = section(src)
    buf = bytearray(src.read_bytes())
    count, zeroed = slim(buf, offset, size)
    dst.write_bytes(buf)
    print(f"fatbin_slim: {count} fatbins cut to sm_90a, {zeroed:,} bytes zeroed; wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
