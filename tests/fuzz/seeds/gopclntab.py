#!/usr/bin/env python3
"""gopclntab.py - small seeds for the gopclntab fuzz target, cut from the
.gopclntab of a real Go binary (Go 1.18+ layout): K of its functions with
their names, pc-to-file, pc-to-line and pc-to-sp programs, and the whole
file tables, re-laid out as one consistent table a few KB long. A whole
table (hundreds of KB) would make every mutation slow.

    objcopy -O binary --only-section=.gopclntab BINARY pcln.bin
    tests/fuzz/seeds/gopclntab.py pcln.bin OUT K [MAGIC]
"""
import struct
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if not c & 0x80:
            return v, i


def program(pctab, off):
    """The bytes of the pc-value program at off (up to its 0 terminator)."""
    if off == 0:
        return b""
    i, first = off, True
    while True:
        uv, i = varint(pctab, i)
        if uv == 0 and not first:
            return pctab[off:i]
        first = False
        _, i = varint(pctab, i)


def main():
    src, out, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    d = open(src, "rb").read()
    magic = int(sys.argv[4], 16) if len(sys.argv) > 4 else struct.unpack_from("<I", d, 0)[0]
    nfunc, nfiles, text, fn_off, cu_off, file_off, pc_off, ft_off = struct.unpack_from("<8Q", d, 8)
    funcnames = d[fn_off:cu_off]
    cutab = d[cu_off:file_off]
    filetab = d[file_off:pc_off]
    pctab = d[pc_off:ft_off]
    functab = d[ft_off:]
    # functions with a line program, spread over the table, main.* first
    picks = []
    for i in range(nfunc):
        entry, foff = struct.unpack_from("<II", functab, i * 8)
        name_off = struct.unpack_from("<i", functab, foff + 4)[0]
        name = funcnames[name_off:funcnames.index(b"\0", name_off)]
        if name.startswith(b"main."):
            picks.append(i)
    step = max(1, nfunc // k)
    for i in range(0, nfunc, step):
        if len(picks) >= k:
            break
        if i not in picks:
            picks.append(i)
    picks = sorted(picks[:k])

    names, pcs, recs = bytearray(b"\0"), bytearray(b"\0"), []
    for i in picks:
        entry, foff = struct.unpack_from("<II", functab, i * 8)
        end = struct.unpack_from("<I", functab, (i + 1) * 8)[0]
        f = bytearray(functab[foff:foff + 44])
        name_off = struct.unpack_from("<i", f, 4)[0]
        name = funcnames[name_off:funcnames.index(b"\0", name_off)]
        struct.pack_into("<i", f, 4, len(names))
        names += name + b"\0"
        for field in (16, 20, 24):  # pcsp, pcfile, pcln
            p = program(pctab, struct.unpack_from("<I", f, field)[0])
            struct.pack_into("<I", f, field, len(pcs) if p else 0)
            pcs += p
        struct.pack_into("<I", f, 28, 0)   # npcdata
        f[43] = 0                          # nfuncdata
        recs.append((entry, end, bytes(f) + b"\0" * 4))
    # functab: entries, the end entry, then the records
    n = len(recs)
    ft = bytearray()
    rec_base = (n + 1) * 8
    for j, (entry, _, rec) in enumerate(recs):
        ft += struct.pack("<II", entry, rec_base + j * len(rec))
    ft += struct.pack("<II", recs[-1][1], 0)
    for _, _, rec in recs:
        ft += rec
    hdr_len = 8 + 8 * 8
    offs = [hdr_len]
    for part in (names, cutab, filetab, pcs):
        offs.append(offs[-1] + len(part))
    hdr = struct.pack("<IBBBB", magic, 0, 0, d[6], d[7])
    hdr += struct.pack("<8Q", n, nfiles, text, *offs)
    open(out, "wb").write(hdr + names + cutab + filetab + pcs + ft)


main()
