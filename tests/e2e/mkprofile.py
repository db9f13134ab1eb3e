#!/usr/bin/env python3
# mkprofile.py - write gzip pprof run files that mkpprof.py's one-line spec
# cannot describe: names with any characters at all (spaces, newlines,
# quotes, markup, bytes that are not UTF-8), and big synthetic profiles
# (hundreds of thousands of distinct stacks) for the report's scale tests
# and benchmarks.
#
#   mkprofile.py OUT --json SPEC.json
#   mkprofile.py OUT --synthetic [--seed N] [--stacks N] [--samples N]
#                [--tests N] [--funcs N] [--head] [--diverse] [--meta KEY=VALUE]...
#
# SPEC: {"type": "cpu/nanoseconds", "period": 10000000, "meta": {K: V},
#        "samples": [{"test": NAME, "count": N, "stack": [[FUNC, FILE, LINE],
#        ...root first]}]}. A name's lone surrogates \udc80-\udcff stand for
# raw bytes (Python's surrogateescape), so a spec can hold invalid UTF-8.
#
# --synthetic draws a deterministic suite (--seed): --tests tests, each with
# its share of --stacks distinct stacks (walks through a random call graph
# of --funcs functions that share their upper frames and differ near the
# leaf, as real stacks do), --samples samples spread over them with a heavy
# tail; --diverse walks a new path for every stack (a tree with far more
# frames, the hard case for the report). --head makes
# the head run of the same suite: test 0 regressed (the leaf function of its
# hottest stack three times as costly), test 1 improved (30% faster), the rest unchanged.
import gzip
import json
import random
import sys

from mkpprof import msg, packed, vint


class Writer:
    def __init__(self, vtype, period):
        self.strings, self.index = [""], {"": 0}
        self.funcs, self.locs = {}, {}
        self.body = bytearray()
        self.vtype, self.period = vtype, period
        t, u = vtype.split("/")
        self.body += msg(1, vint(1, self.s("samples")) + vint(2, self.s("count")))
        self.body += msg(1, vint(1, self.s(t)) + vint(2, self.s(u)))

    def s(self, x):
        if x not in self.index:
            self.index[x] = len(self.strings)
            self.strings.append(x)
        return self.index[x]

    def loc(self, name, fname, line):
        key = (name, fname)
        if key not in self.funcs:
            self.funcs[key] = len(self.funcs) + 1
        lkey = (key, line)
        if lkey not in self.locs:
            self.locs[lkey] = len(self.locs) + 1
        return self.locs[lkey]

    def sample(self, test, count, stack):
        ids = [self.loc(*f) for f in reversed(stack)]  # leaf first
        sample = packed(1, ids) + packed(2, [count, count * self.period])
        if test is not None:
            sample += msg(3, vint(1, self.s("test")) + vint(2, self.s(test)))
        self.body += msg(2, sample)

    def write(self, out, meta):
        body = self.body
        for (key, lineno), lid in self.locs.items():
            body += msg(4, vint(1, lid) + msg(4, vint(1, self.funcs[key]) + vint(2, lineno)))
        for (name, fname), fid in self.funcs.items():
            body += msg(5, vint(1, fid) + vint(2, self.s(name)) + vint(3, self.s(name)) +
                        vint(4, self.s(fname)) + vint(5, 1))
        comments = [self.s("testflame.%s=%s" % kv) for kv in meta]
        t, u = self.vtype.split("/")
        body += msg(11, vint(1, self.s(t)) + vint(2, self.s(u)))
        body += vint(12, self.period)
        for c in comments:
            body += vint(13, c)
        for x in self.strings:
            body += msg(6, x.encode("utf-8", "surrogateescape"))
        with gzip.open(out, "wb", compresslevel=1) as f:
            f.write(bytes(body))


def from_json(out, path, meta):
    spec = json.load(open(path))
    w = Writer(spec.get("type", "cpu/nanoseconds"), spec.get("period", 10000000))
    for smp in spec["samples"]:
        w.sample(smp.get("test"), smp["count"], [tuple(f) for f in smp["stack"]])
    w.write(out, list(spec.get("meta", {}).items()) + meta)


def synthetic(out, seed, nstacks, nsamples, ntests, nfuncs, head, meta, diverse=False):
    rnd = random.Random(seed)
    funcs = [("pkg%d::mod%d::func_%d" % (i % 40, i % 7, i), "src/pkg%d/file%d.c" % (i % 40, i % 300),
              10 + (i * 7) % 900) for i in range(nfuncs)]
    # a call graph: every function calls a few others
    callees = [[rnd.randrange(nfuncs) for _ in range(4)] for _ in range(nfuncs)]
    w = Writer("cpu/nanoseconds", 10000000)
    per_test = max(1, nstacks // ntests)
    # a heavy tail: a few stacks hold most samples, as in real profiles
    weights = [1.0 / (r + 1) ** 1.1 for r in range(per_test)]
    wsum = sum(weights)
    for t in range(ntests):
        test = "suite/Test_%04d" % t
        root = [("main", "src/main.c", 1), ("run_test_%d" % t, "src/tests/t%d.c" % (t % 50), 5)]
        entry = rnd.randrange(nfuncs)
        # real stacks differ mostly near the leaf: a test walks a few dozen
        # paths through the call graph (spines), and leaves vary below them
        spines = []
        for _ in range(per_test if diverse else max(1, per_test // 25)):
            f, sp = entry, [entry]
            for _ in range(rnd.randrange(6, 24)):
                f = callees[f][rnd.randrange(4)]
                sp.append(f)
            spines.append(sp)
        seen, stacks = set(), []
        while len(stacks) < per_test:
            sp = spines[rnd.randrange(len(spines))]
            st = sp[:rnd.randrange(2, len(sp) + 1)]
            for _ in range(rnd.randrange(1, 4)):
                st.append(callees[st[-1]][rnd.randrange(4)] if rnd.random() < 0.7 else rnd.randrange(nfuncs))
            key = tuple(st)
            if key in seen:
                continue
            seen.add(key)
            stacks.append(st)
        hot = stacks[0][-1]
        total = nsamples // ntests
        for k, st in enumerate(stacks):
            n = max(1, int(round(total * weights[k] / wsum)))
            if head and t == 0 and st[-1] == hot:
                n = int(n * 3)
            if head and t == 1:
                n = max(1, int(n * 0.7))
            w.sample(test, n, root + [funcs[f] for f in st])
    w.write(out, meta)


def main():
    args = sys.argv[1:]
    out = args.pop(0)
    mode, spec, meta = None, None, []
    o = {"seed": 1, "stacks": 100000, "samples": 1000000, "tests": 100, "funcs": 5000}
    head = diverse = False
    while args:
        a = args.pop(0)
        if a == "--json":
            mode, spec = "json", args.pop(0)
        elif a == "--synthetic":
            mode = "synthetic"
        elif a == "--head":
            head = True
        elif a == "--diverse":
            diverse = True
        elif a == "--meta":
            k, _, v = args.pop(0).partition("=")
            meta.append((k, v))
        elif a[2:] in o:
            o[a[2:]] = int(args.pop(0))
        else:
            sys.exit("mkprofile: unknown argument " + a)
    if mode == "json":
        from_json(out, spec, meta)
    elif mode == "synthetic":
        synthetic(out, o["seed"], o["stacks"], o["samples"], o["tests"], o["funcs"], head, meta,
                  diverse)
    else:
        sys.exit("mkprofile: --json SPEC or --synthetic")


main()
