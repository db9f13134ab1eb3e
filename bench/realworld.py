#!/usr/bin/env python3
"""realworld.py - the reading half of bench/realworld.sh.

realworld.sh runs the suites; this file reads what they left: the runners'
own reports (times per test, for the truth), the runner's list of tests,
the two outputs of a command run with and without testflame, and the
report.json files, and prints one suite's row and the final table.

    realworld.py times-junit FILE          pytest's JUnit XML -> "id seconds"
    realworld.py times-gtest FILE...       GoogleTest's XML -> "Suite.Test seconds"
    realworld.py times-go                  go test -json on stdin -> "pkg Test seconds"
    realworld.py times-cargo               cargo test's libtest JSON on stdin -> "bin name seconds"
    realworld.py list-go                   go test -list output on stdin -> "pkg Test"
    realworld.py list-cargo                cargo test -- --list output on stdin -> "bin name"
    realworld.py py-spin FILE NAME [N]     a busy loop of N turns (3,000,000) as the first statement of NAME
    realworld.py same-output PLAIN TF      PLAIN.out/.err/.rc against TF's: "same" or why not
    realworld.py row SUITE FORM WORKDIR    the suite's figures as one JSON line
    realworld.py table ROW...              the Markdown table of those rows

Names are compared as the runner gives them; where a runner qualifies a
name (a Go package, a cargo test binary) a report name counts when it is
the bare name (unique in the list) or the qualifier and the name joined by
one of "/", "::", ".", " ".
"""
import json
import re
import sys
import xml.etree.ElementTree as ET


def times_junit(path):
    for tc in ET.parse(path).iter("testcase"):
        parts = (tc.get("classname") or "").split(".")
        cls = [parts.pop()] if parts and parts[-1][:1].isupper() else []
        print("::".join(["/".join(parts) + ".py"] + cls + [tc.get("name")]), tc.get("time"))


def times_gtest(paths):
    for f in paths:
        for tc in ET.parse(f).iter("testcase"):
            print("%s.%s %s" % (tc.get("classname"), tc.get("name"), tc.get("time")))


def times_go():
    for line in sys.stdin:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        t = ev.get("Test")
        if t and "/" not in t and ev.get("Action") in ("pass", "fail"):
            print("%s\t%s %s" % (ev["Package"], t, ev.get("Elapsed", 0)))


def cargo_binary(line):
    """the test binary a cargo progress line starts, or None"""
    m = re.match(r"\s*Running (?:unittests )?(\S+) \((?:.*/)?([^/]+?)-[0-9a-f]{16}\)", line)
    if m:
        src = m.group(1)
        # unit tests are named after the crate target, integration tests after their file
        return m.group(2) if not src.startswith("tests/") else src[6:-3] if src.endswith(".rs") else m.group(2)
    m = re.match(r"\s*Doc-tests (\S+)", line)
    if m:
        return "doc"
    return None


def cargo_lines():
    """cargo test's output on stdin: (the test binary it is in, line)"""
    binary = None
    for line in sys.stdin:
        b = cargo_binary(line)
        if b:
            binary = b
        elif binary:
            yield binary, line


def list_cargo():
    for binary, line in cargo_lines():
        m = re.match(r"(.+): test$", line.rstrip("\n"))
        if m:
            print("%s\t%s" % (binary, m.group(1)))


def times_cargo():
    for binary, line in cargo_lines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("type") == "test" and ev.get("event") in ("ok", "failed"):
            print("%s\t%s %s" % (binary, ev["name"], ev.get("exec_time", 0)))


def list_go():
    names = []
    for line in sys.stdin:
        line = line.rstrip("\n")
        m = re.match(r"(ok|FAIL)\s+(\S+)", line)
        if m:
            print("".join("%s\t%s\n" % (m.group(2), n) for n in names), end="")
            names = []
        elif re.match(r"(Test|Example|Fuzz)\w*$", line):
            names.append(line)


def py_spin(path, name, turns="3000000"):
    """a busy loop of TURNS turns as the first statement of PATH's function NAME"""
    with open(path) as f:
        lines = f.read().split("\n")
    i = next(i for i, l in enumerate(lines) if re.match(r"\s*def %s\(" % re.escape(name), l))
    ind = re.match(r"\s*", lines[i]).group(0) + "    "
    j = next(j for j in range(i, len(lines)) if re.search(r"\)(\s*->[^:]*)?:\s*(#.*)?$", lines[j]))
    lines[j + 1:j + 1] = [ind + "for _ in range(%d):" % int(turns), ind + "    pass"]
    with open(path, "w") as f:
        f.write("\n".join(lines))


# --- the suite's output with and without testflame -------------------------

TIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?"  # a date and time (a log line's)
                  # a duration, right-aligned or not, and pytest's "(0:01:40)" after one over a minute
                  r"|\s*\d+(?:\.\d+)?(?:e-?\d+)?\s*(?:s|sec|secs|seconds|ms|us|µs|ns|m)\b(?:\s*\(\d+:\d\d:\d\d\))?")


RULE = re.compile(r"([=_-])\1{2,}")  # a rule's length follows its centred text's (pytest)
# cargo replays cached warnings in no fixed order, and which target's count
# it calls "duplicates" follows that order
DUPLICATES = re.compile(r" \(\d+ duplicates?\)$")


def masked(text):
    return [DUPLICATES.sub("", RULE.sub(r"\1\1\1", TIME.sub("T", l.rstrip()))) for l in text.splitlines()]


# pytest's progress lines: a character a test, in the order tests ended,
# which under -n differs from run to run with or without testflame
PROGRESS = re.compile(r"^([.sSxXFEfe]+)\s*\[\s*\d+%\]$")


def same_lines(a, b):
    """a and b hold the same lines in any order, the progress lines'
    characters counted together"""
    def apart(lines):
        marks = [m.group(1) for m in map(PROGRESS.match, lines) if m]
        return sorted("".join(marks)), sorted(l for l in lines if not PROGRESS.match(l))
    return apart(a) == apart(b)


def same_output(plain, tf):
    """'same' when the suite printed the same lines (times masked, in any
    order: runners that run tests in parallel order them by completion) on
    both streams with the same status; testflame's own lines ("testflame:"
    on stderr, its summary after the suite's output on stdout) set apart"""
    def rd(p, ext):
        with open(p + ext, encoding="utf-8", errors="replace") as f:
            return f.read()
    why = []
    po, to = masked(rd(plain, ".out")), masked(rd(tf, ".out"))
    pe = masked(rd(plain, ".err"))
    te = [l for l in masked(rd(tf, ".err")) if not l.startswith("testflame: ")]
    suite_part, rest = to[:len(po)], to[len(po):]
    if not same_lines(suite_part, po):
        d = sorted(set(po) ^ set(suite_part))
        why.append("stdout differs: %s" % (d[0] if d else "line counts")[:160])
    reprinted = 0
    if po and not why:  # confirmation reruns print the suite's output again
        while rest[:len(po)] and same_lines(rest[:len(po)], po):
            reprinted += 1
            rest = rest[len(po):]
    elif not po and pe and not why:  # a suite that prints on stderr only (unittest)
        reprinted = next((k for k in range(1, 9) if sorted(pe * (k + 1)) == sorted(te)), 0)
    if sorted(pe) != sorted(te) and not (reprinted and sorted(pe * (reprinted + 1)) == sorted(te)):
        d = sorted(set(pe) ^ set(te))
        why.append("stderr differs: %s" % (d[0] if d else "line counts")[:160])
    if why:
        return "; ".join(why)
    return "same" if not reprinted else "same, then %d rerun%s printed it again" % (reprinted, "s" * (reprinted > 1))


# --- one suite's row --------------------------------------------------------

def key_of(line):
    """a list or times line: (qualifier, name); tab separates a qualifier"""
    q, _, n = line.partition("\t")
    return (q, n) if n else ("", q)


def read_list(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return [key_of(l.rstrip("\n")) for l in f if l.strip()]


def read_times(path):
    t = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for l in f:
            p = l.rstrip("\n").rsplit(" ", 1)
            if len(p) == 2:
                try:
                    t.setdefault(key_of(p[0]), []).append(float(p[1]))
                except ValueError:
                    pass
    return t


def unittest_forms(name):
    """a unittest id 'pkg.mod.Class.test' and the names its runner prints"""
    if "." not in name:
        return {name}
    head, meth = name.rsplit(".", 1)
    return {name, "%s (%s)" % (meth, head), "%s (%s)" % (meth, name)}


class Matcher:
    """which report.json test (its name) a runner's (qualifier, name) is"""

    def __init__(self, keys, tests):
        # a nested test (a cargo test inside its binary, a GoogleTest test
        # inside its ctest test) also answers to its parent's name joined to its own
        self.report = {}
        for t in tests:
            self.report.setdefault(t["name"], t["name"])
            if t.get("parent"):
                self.report.setdefault("%s/%s" % (t["parent"], t["name"]), t["name"])
        self.bare = {}
        for q, n in keys:
            self.bare[n] = self.bare.get(n, 0) + 1

    def find(self, key):
        q, n = key
        for form in unittest_forms(n) if re.match(r"^[\w.]+\.test\w*$", n) else {n}:
            if form in self.report and (not q or self.bare.get(n, 0) == 1):
                return self.report[form]
        if q:
            short = q.rsplit("/", 1)[-1]
            for sep in ("/", "::", ".", " "):
                for qq in (q, short):
                    if qq + sep + n in self.report:
                        return self.report[qq + sep + n]
            for r in self.report:  # a qualifier spelled as the end of q
                if r.endswith(n) and len(r) > len(n) and r[-len(n) - 1] in "/:. ":
                    pre = r[:-len(n) - 1].rstrip(":")
                    if pre and (q.endswith("/" + pre) or q.endswith(":" + pre) or pre.endswith(q)):
                        return self.report[r]
        return None


def row(suite, form, work):
    base = "%s/%s" % (work, suite)
    keys = read_list(base + ".list")
    res = {"suite": suite, "form": form, "listed": len(keys), "fail": []}
    with open(base + ".fn") as f:
        fspec = f.read().split()
    fnames, ffile = fspec[0].split("|"), fspec[1]

    def is_fn(f):
        return any(f["name"] == n or f["name"].startswith(n + "(") or f["name"].endswith("." + n)
                   or f["name"].endswith("::" + n) or f["name"].startswith(n + "<")
                   or f["name"] == n.rsplit("::", 1)[-1] for n in fnames) and (f.get("file") or "").endswith(ffile)

    reports = {}
    for side in ("readme", "slow"):
        try:
            with open("%s.%s/report.json" % (base, side)) as f:
                reports[side] = json.load(f)
        except (OSError, ValueError) as e:
            res["fail"].append("no report.json on the %s branch (%s)" % (side, e.__class__.__name__))
    # each branch's own list for its head (a head's edit may rename a test:
    # a line added above a doc-test moves the line in its name)
    side_keys = {}
    for side in ("readme", "slow"):
        try:
            side_keys[side] = read_list("%s.%s.list" % (base, side))
        except OSError:
            side_keys[side] = keys
    found = {}
    missing = {}
    for side in ("readme", "slow"):
        rep = reports.get(side)
        for who in ("base", "head"):
            label = "base" if who == "base" else side
            want = keys if who == "base" else side_keys[side]
            if rep is None:
                found[label] = 0
                continue
            m = Matcher(want, [t for t in rep["tests"] if t.get(who, {}).get("ran", True)])
            miss = [k for k in want if m.find(k) is None]
            if who == "base" and side == "readme" or who == "head":
                found[label] = len(want) - len(miss)
                missing[label] = miss
    res["found"] = found
    truth = set()
    tb, ts = read_times(base + ".main.times"), read_times(base + ".slow.times")
    for k in ts:
        if k in tb and min(ts[k]) - max(tb[k]) >= 0.020 and min(ts[k]) >= 3 * max(tb[k]):
            truth.add(k)
    res["slowed"] = len(truth)
    rep = reports.get("slow")
    caught = named = 0
    line = None
    missed, small, false = [], [], []
    if rep is not None:
        tests = {t["name"]: t for t in rep["tests"]}
        m = Matcher(side_keys["slow"], rep["tests"])
        regressed = {t["name"] for t in rep["tests"] if t["verdict"] == "regressed" and not t.get("outside")}
        truth_names = set()
        for k in sorted(truth):
            r = m.find(k)
            if r is None or r not in regressed:
                missed.append("%s (%s)" % (k[1], tests[r]["verdict"] if r else "absent"))
                continue
            truth_names.add(r)
            caught += 1
            fs = tests[r].get("functions") or []
            if fs and is_fn(fs[0]):
                named += 1
                line = line or fs[0].get("line")
            else:
                missed.append("%s (regressed, grew first in %s)" % (k[1], fs[0]["name"] if fs else "nothing named"))
        for r in sorted(regressed - truth_names):
            fs = tests[r].get("functions") or []
            (small if any(is_fn(f) for f in fs[:3]) else false).append(r)
    res.update(caught=caught, named=named, line=line, fn=fnames[0], missed=missed,
               smaller=len(small), false_slow=len(false), false_slow_names=false[:5])
    rr = reports.get("readme")
    res["false_readme"] = [t["name"] for t in rr["tests"] if t["verdict"] == "regressed" and not t.get("outside")] if rr else []
    rcs = {}
    for step in ("main", "readme", "slow"):
        for who in ("plain", "tf"):
            try:
                with open("%s.%s.%s.rc" % (base, step, who)) as f:
                    rcs["%s.%s" % (step, who)] = int(f.read().strip())
            except (OSError, ValueError):
                rcs["%s.%s" % (step, who)] = None
    res["rc"] = rcs
    outs = {}
    for step in ("main", "readme"):
        try:
            outs[step] = same_output("%s.%s.plain" % (base, step), "%s.%s.tf" % (base, step))
        except OSError as e:
            outs[step] = "not compared (%s)" % e.__class__.__name__
    res["output"] = outs
    measured = (rep or {}).get("summary", {}).get("measured_by", {})
    res["measured"] = ",".join("%s=%d" % kv for kv in measured.items() if kv[1])

    # the Done-when, row by row
    if rcs["main.plain"] or rcs["readme.plain"]:
        res["fail"].append("the suite fails without testflame too (exit %s on main, %s on the README branch): "
                           "the bench's command, not testflame's" % (rcs["main.plain"], rcs["readme.plain"]))
    for label, n in found.items():
        miss = missing.get(label, [])
        if miss or label not in missing:
            ex = ", ".join((q + " " if q else "") + x for q, x in miss[:4])
            total = n + len(miss) if label in missing else len(keys)
            res["fail"].append("%d of %d tests not in report.json (%s side): %s" % (total - n, total, label, ex))
    if not truth:
        res["fail"].append("the slowdown slowed no test by the truth's bar: the row measures nothing")
    if missed:
        res["fail"].append("slowed, not regressed naming %s: %s" % (fnames[0], "; ".join(missed[:4])))
    if rcs["readme.tf"] != 0:
        res["fail"].append("README branch exit %s" % rcs["readme.tf"])
    for step in ("main", "readme"):
        gate = rcs["%s.plain" % step] == 0 and rcs["%s.tf" % step] == 3 and step == "readme" and rr and rr.get("regressed")
        if rcs["%s.tf" % step] != rcs["%s.plain" % step] and not gate:
            res["fail"].append("%s: exit %s under testflame, %s without" % (step, rcs["%s.tf" % step], rcs["%s.plain" % step]))
        if not outs[step].startswith("same"):
            res["fail"].append("%s: %s" % (step, outs[step]))
    want = rcs["slow.plain"] if rcs["slow.plain"] else (3 if rep and rep.get("regressed") else 0)
    if rcs["slow.tf"] != want:
        res["fail"].append("slow branch: exit %s under testflame, expected %s (the suite's own %s)" % (rcs["slow.tf"], want, rcs["slow.plain"]))
    print(json.dumps(res))


def table(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows.append(json.load(f))
    print("| suite | run as | found base / README / slow | slowed | caught | named (function:line) | smaller | false: README, slow | README exit | output, status | Done-when |")
    print("|---|---|---:|---:|---:|---|---:|---|---|---|---|")
    bad = 0
    for r in rows:
        if r.get("skipped") or r.get("broken"):
            bad += bool(r.get("broken"))
            print("| %s | `%s` | | | | | | | | | %s |" % (r["suite"], r["form"], "skipped: " + r["skipped"] if r.get("skipped") else "**no**: " + r["broken"]))
            continue
        n = r["listed"]
        f = r["found"]
        same = all(v.startswith("same") for v in r["output"].values())
        again = [v[len("same, then "):].split(" printed")[0] for v in r["output"].values() if v.startswith("same, then")]
        status_ok = not any("exit" in x for x in r["fail"] if not x.startswith("README"))
        ok = not r["fail"]
        bad += not ok
        cmd, _, py = r["form"].partition(" (Python")
        form = "`%s`%s" % (cmd.replace("|", "\\|"), " (Python" + py if py else "")
        print("| %s | %s | %s / %s / %s of %d | %d | %d | %d (%s%s) | %d | %d, %d | %s | %s, %s | %s |" % (
            r["suite"], form, f.get("base", 0), f.get("readme", 0), f.get("slow", 0), n,
            r["slowed"], r["caught"], r["named"], r["fn"], ":%s" % r["line"] if r["line"] else "",
            r["smaller"], len(r["false_readme"]), r["false_slow"], r["rc"]["readme.tf"],
            ("same" + (" (%s printed it again)" % " and ".join(again) if again else "")) if same else "**differs**",
            "same" if status_ok else "**differs**",
            "yes" if ok else "**no**"))
    return bad


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "times-junit":
        times_junit(args[0])
    elif cmd == "times-gtest":
        times_gtest(args)
    elif cmd == "times-go":
        times_go()
    elif cmd == "times-cargo":
        times_cargo()
    elif cmd == "list-go":
        list_go()
    elif cmd == "list-cargo":
        list_cargo()
    elif cmd == "py-spin":
        py_spin(*args)
    elif cmd == "same-output":
        print(same_output(args[0], args[1]))
    elif cmd == "row":
        row(*args)
    elif cmd == "table":
        sys.exit(1 if table(args) else 0)
    else:
        sys.exit("realworld.py: unknown command '%s'" % cmd)


if __name__ == "__main__":
    main()
