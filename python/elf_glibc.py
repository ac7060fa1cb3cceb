"""Read which glibc symbol versions an ELF shared library needs (stdlib only).

The wheel build tags each wheel manylinux_2_N_<arch> from this: N is the
highest GLIBC_2.N version in the library's version-needs section
(.gnu.version_r), read from the file itself, never guessed.

    python3 python/elf_glibc.py libtoolselect.so   # prints: x86_64 2.34 (GLIBC_2.34: pthread_..., ...)
"""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path
from typing import Dict, List, Tuple

SHT_GNU_VERNEED = 0x6FFFFFFE
SHT_GNU_VERSYM = 0x6FFFFFFF
SHT_DYNSYM = 11
MACHINES = {62: "x86_64", 183: "aarch64"}


def _sections(b: bytes) -> Tuple[str, List[Tuple[int, int, int, int, int]]]:
    if b[:4] != b"\x7fELF" or b[4] != 2:
        raise ValueError("not a 64-bit ELF file")
    end = "<" if b[5] == 1 else ">"
    machine = struct.unpack_from(end + "H", b, 18)[0]
    shoff = struct.unpack_from(end + "Q", b, 0x28)[0]
    shentsize, shnum = struct.unpack_from(end + "HH", b, 0x3A)
    secs = []
    for i in range(shnum):
        off = shoff + i * shentsize
        _name, stype, _flags, _addr, soff, size, link, _info, _align, entsize = struct.unpack_from(end + "IIQQQQIIQQ", b, off)
        secs.append((stype, soff, size, link, entsize))
    return end + str(machine), secs


def glibc_needs(path: str) -> Tuple[str, Dict[str, List[str]]]:
    """The ELF's architecture and, per GLIBC_x.y version it needs, the
    symbols bound to it."""
    b = Path(path).read_bytes()
    tag, secs = _sections(b)
    end, machine = tag[0], int(tag[1:])
    arch = MACHINES.get(machine, f"machine{machine}")

    def cstr(off: int) -> str:
        return b[off:b.index(b"\0", off)].decode()

    versions: Dict[int, str] = {}  # vna_other index -> version name
    for stype, off, size, link, _ in secs:
        if stype != SHT_GNU_VERNEED:
            continue
        strtab = secs[link][1]
        pos = off
        while True:
            _ver, cnt, _file, aux, nxt = struct.unpack_from(end + "HHIII", b, pos)
            apos = pos + aux
            for _ in range(cnt):
                _hash, _flags, other, name, anext = struct.unpack_from(end + "IHHII", b, apos)
                versions[other] = cstr(strtab + name)
                apos += anext
            if not nxt:
                break
            pos += nxt
    needs: Dict[str, List[str]] = {v: [] for v in versions.values() if v.startswith("GLIBC_")}
    dynsym = next((s for s in secs if s[0] == SHT_DYNSYM), None)
    versym = next((s for s in secs if s[0] == SHT_GNU_VERSYM), None)
    if dynsym and versym:
        strtab = secs[dynsym[3]][1]
        n = dynsym[2] // dynsym[4]
        for i in range(n):
            name_off, _info, _other, shndx, _value, _size = struct.unpack_from(end + "IBBHQQ", b, dynsym[1] + i * dynsym[4])
            idx = struct.unpack_from(end + "H", b, versym[1] + 2 * i)[0] & 0x7FFF
            v = versions.get(idx)
            if v in needs and shndx == 0:  # an undefined symbol the library needs
                needs[v].append(cstr(strtab + name_off))
    return arch, needs


def _key(v: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def max_glibc(needs: Dict[str, List[str]]) -> Tuple[int, int]:
    """The highest GLIBC_x.y needed, as (x, y); (2, 17) when none (manylinux2014's floor)."""
    best = max((_key(v) for v in needs), default=(2, 17))
    return best[0], best[1]


def main() -> None:
    for path in sys.argv[1:]:
        arch, needs = glibc_needs(path)
        major, minor = max_glibc(needs)
        top = f"GLIBC_{major}.{minor}"
        print(f"{arch} {major}.{minor} ({top}: {', '.join(sorted(needs.get(top, []))) or 'none'})")


if __name__ == "__main__":
    main()
