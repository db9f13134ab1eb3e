#!/usr/bin/env python3
# mkpprof.py - write a gzip pprof profile from a small text description, for
# end-to-end tests that need exact counts, test labels, run metadata or a
# given event (the real producers are covered by tests that run them).
#
#   mkpprof.py OUT [--type TYPE/UNIT] [--period N] [--meta KEY=VALUE]... < SPEC
#
# SPEC lines: "TEST COUNT root;...;leaf" (TEST "-" for no label); a frame is
# "name" or "name@file:line". Sample types: samples/count, then TYPE/UNIT
# (default cpu/nanoseconds) with COUNT * period (default 10000000).
# Metadata goes into the comments as "testflame.KEY=VALUE".
import gzip
import sys


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    return varint(num << 3 | wire) + payload


def vint(num, n):
    return field(num, 0, varint(n))


def msg(num, body):
    return field(num, 2, varint(len(body)) + body)


def packed(num, values):
    return msg(num, b"".join(varint(v) for v in values))


def main():
    args = sys.argv[1:]
    out = args.pop(0)
    vtype, period, meta = "cpu/nanoseconds", 10000000, []
    while args:
        a = args.pop(0)
        if a == "--type":
            vtype = args.pop(0)
        elif a == "--period":
            period = int(args.pop(0))
        elif a == "--meta":
            meta.append(args.pop(0))
        else:
            sys.exit("mkpprof: unknown argument " + a)

    strings = [""]
    index = {"": 0}

    def s(x):
        if x not in index:
            index[x] = len(strings)
            strings.append(x)
        return index[x]

    funcs, locs, body = {}, {}, bytearray()
    t, u = vtype.split("/")
    body += msg(1, vint(1, s("samples")) + vint(2, s("count")))
    body += msg(1, vint(1, s(t)) + vint(2, s(u)))
    for line in sys.stdin:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        test, count, stack = line.split(None, 2)
        ids = []
        for frame in reversed(stack.split(";")):  # leaf first
            name, _, where = frame.partition("@")
            fname, _, lineno = where.partition(":")
            key = (name, fname)
            if key not in funcs:
                funcs[key] = len(funcs) + 1
            lkey = (key, int(lineno or 0))
            if lkey not in locs:
                locs[lkey] = len(locs) + 1
            ids.append(locs[lkey])
        n = int(count)
        sample = packed(1, ids) + packed(2, [n, n * period])
        if test != "-":
            sample += msg(3, vint(1, s("test")) + vint(2, s(test)))
        body += msg(2, sample)
    for (key, lineno), lid in locs.items():
        body += msg(4, vint(1, lid) + msg(4, vint(1, funcs[key]) + vint(2, lineno)))
    for (name, fname), fid in funcs.items():
        body += msg(5, vint(1, fid) + vint(2, s(name)) + vint(3, s(name)) +
                    vint(4, s(fname)) + vint(5, 1))
    comments = [s("testflame." + m) for m in meta]
    body += msg(11, vint(1, s(t)) + vint(2, s(u)))
    body += vint(12, period)
    for c in comments:
        body += vint(13, c)
    for x in strings:
        body += msg(6, x.encode())
    with gzip.open(out, "wb") as f:
        f.write(bytes(body))


if __name__ == "__main__":
    main()
