#!/usr/bin/env bash
# t0291-confirm-alone-runners.sh - t0290's confirmation by the suspect
# tests alone, with the filters the other runners read from the
# environment, whatever starts them: one suite (`sh -c`) of a go test
# package (GOFLAGS' -run), a pytest file (node ids, kept by testflame's
# plugin) and a python -m unittest module (ids, kept by testflame's
# loader), three tests each. A branch makes one test of each a third
# slower: the build fails on both, each ran alone, alternately with the
# merge-base, until decided, and a test that raised no suspicion ran
# again only inside a program that did (go test's package, run whole). (GoogleTest's GTEST_FILTER is left to test_attribute: its
# tests are timed by the clock on the wall, which a busy machine moves
# more than a few rounds can settle, and compiling it would double this
# script's time.)
. "$(dirname "$0")/lib.sh"

if ! need go || ! /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
	test_skip 'go test and pytest tests alone' 'go or python3-pytest is missing'
	test_done
	exit
fi
GC='git -c user.email=t@e -c user.name=t'
export SPIN_LOG=$SCRATCH/ran.log GOCACHE=$GO_CACHE GOPATH=$SCRATCH/gopath GOFLAGS=-mod=mod

mkdir repo && cd repo
cat >spin_test.go <<\EOF
package spin

import (
	"os"
	"syscall"
	"testing"
)

func cpu() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func spin(name string, ms int64) {
	f, _ := os.OpenFile(os.Getenv("SPIN_LOG"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(name + "\n")
	f.Close()
	end := cpu() + ms*1000000
	for cpu() < end {
	}
}

func TestA(t *testing.T)    { spin("TestA", 40) }
func TestSlow(t *testing.T) { spin("TestSlow", 60) }
func TestB(t *testing.T)    { spin("TestB", 40) }
EOF
printf 'module spin\n\ngo 1.19\n' >go.mod
cat >test_spin.py <<\EOF
import os, time
def spin(name, ms):
    with open(os.environ["SPIN_LOG"], "a") as f:
        f.write(name + "\n")
    end = time.process_time() + ms / 1000
    while time.process_time() < end:
        pass
def test_a(): spin("test_a", 40)
def test_slow(): spin("test_slow", 60)
def test_b(): spin("test_b", 40)
EOF
cat >ut_spin.py <<\EOF
import unittest
from test_spin import spin
class T(unittest.TestCase):
    def test_c(self): spin("test_c", 40)
    def test_slow2(self): spin("test_slow2", 60)
    def test_d(self): spin("test_d", 40)
EOF
cat >.testflame.yml <<\EOF
command: "go test -count=1 . && /usr/bin/python3 -m pytest -q -p no:cacheprovider && /usr/bin/python3 -m unittest -q ut_spin"
build: "true"
freq: 999
gate:
  confirm_budget: 60s
EOF
printf 'testflame-report/\n__pycache__/\n' >.gitignore
git init -q -b main . && git add -A && $GC commit -qm suite &&
go test -count=1 -run '^$' . >/dev/null || exit 1
cd "$SCRATCH"

test_expect_success 'main: the baseline' '
	cd repo && "$TF" run --save >out 2>err && expect_contains out "no baseline yet"
'

test_expect_code 3 'the slow tests alone, each by its own runner'\''s filter, until decided' '
	cd repo && git checkout -q -b slow &&
	sed -i "s/(\"TestSlow\", 60)/(\"TestSlow\", 85)/" spin_test.go &&
	sed -i "s/(\"test_slow\", 60)/(\"test_slow\", 85)/" test_spin.py &&
	sed -i "s/(\"test_slow2\", 60)/(\"test_slow2\", 85)/" ut_spin.py &&
	$GC commit -qam slower &&
	: >"$SPIN_LOG" && "$TF" run >out 2>err; rc=$?
	grep "duet round 1:" err | grep -F "GOFLAGS=-mod=mod -run=^(" | grep -F "TestSlow" |
		grep -F "pytest'\''s" | grep -qF "unittest'\''s 1 id" &&
	python3 - <<-\EOF || exit 1
	import collections, json, os
	r = json.load(open("testflame-report/report.json"))
	t = {x["name"]: x for x in r["tests"] if not x["outside"]}
	ran = collections.Counter(open(os.environ["SPIN_LOG"]).read().split())
	for n in ("TestSlow", "test_spin.py::test_slow", "ut_spin.T.test_slow2"):
	    s = t[n]
	    assert s["verdict"] == "regressed" and 3 <= s["confirm_runs"] <= 20, s
	rounds = max(x["confirm_runs"] for x in t.values())
	for n, x in t.items():
	    # a test ran again twice a round while it was undecided, or
	    # inside a program that was (the go package, run whole); and
	    # once no test of its runner is left undecided, that runner gets
	    # no filter and runs whole (filters only narrow), up to the
	    # last round of the duet
	    short = n.split("::")[-1].split(".")[-1]
	    p = t.get(x["parent"]) if x["parent"] else None
	    if short in ran:
	        again = x["confirm_runs"] or (p and p["confirm_runs"]) or 0
	        assert 1 + 2 * again <= ran[short] <= 1 + 2 * rounds, (n, ran[short], x["confirm_runs"], rounds)
	    assert x["verdict"] != "regressed" or x["confirm_runs"], x
	# pytest and unittest ran their slow tests alone: the others only in
	# rounds after the slow test of their runner was decided
	py, ut = t["test_spin.py::test_slow"]["confirm_runs"], t["ut_spin.T.test_slow2"]["confirm_runs"]
	assert ran["test_a"] == ran["test_b"] == 1 + 2 * (ran["test_slow"] - 1 - 2 * py) // 2, (ran, py)
	assert ran["test_c"] == ran["test_d"] == 1 + 2 * (ran["test_slow2"] - 1 - 2 * ut) // 2, (ran, ut)
	for n in ("TestA", "test_spin.py::test_a", "ut_spin.T.test_c"):
	    assert t[n]["verdict"] != "regressed", t[n]
	EOF
	exit $rc
'

test_done
