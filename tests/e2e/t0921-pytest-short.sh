#!/usr/bin/env bash
# t0921-pytest-short.sh - a pytest suite of short tests
# (tests/fixtures/suites/pyshort: forty tests of about a millisecond, with
# parameters whose ids hold spaces, '=' and '::'), run as a user would:
# `python3 -m pytest`, no plugin named. testflame loads its plugin by
# itself: every node id pytest collects has its row, judged by the CPU
# time its markers measured; a README-only branch passes; a slowdown of
# shortlib.rare() fails the four tests that call it and no other.
. "$(dirname "$0")/lib.sh"
PYSHORT=$TOP/tests/fixtures/suites/pyshort
PY=/usr/bin/python3

if ! $PY -c 'import pytest' 2>/dev/null; then
	test_skip 'a pytest suite of short tests' 'python3-pytest is not installed'
	test_done
	exit
fi
GC='git -c user.email=t@e -c user.name=t'
tfrun() { # NAME
	"$TF" run --no-publish -- $PY -m pytest -q -p no:cacheprovider >"../$1.out" 2>"../$1.err"
}

test_expect_success 'main: every node id pytest collects, measured by its CPU time' '
	mkdir repo && cp "$PYSHORT"/*.py repo/ && cd repo &&
	printf "__pycache__/\ntestflame-report/\n" >.gitignore &&
	git init -q -b main . && git add -A && $GC commit -qm pyshort &&
	$PY -m pytest -q -p no:cacheprovider --collect-only 2>/dev/null | grep "::" >../ids &&
	test "$(wc -l <../ids)" = 40 &&
	tfrun main && "$TF" show --json testflame-report/head.pb.gz >../show.json &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("../show.json"))["tests"]}
	ids = open("../ids").read().split("\n")
	missing = [i for i in ids if i and i not in t]
	assert not missing, missing[:5]
	unmeasured = [i for i in ids if i and not t[i]["cpu_ns"]]
	assert not unmeasured, unmeasured[:5]
	assert t["test_short.py::TestGrouped::test_names[e::f]"]["source"] == "markers"
	EOF
'

test_expect_success 'a README-only branch: exit 0' '
	cd repo && git checkout -q -b readme && echo notes >README && git add -A &&
	$GC commit -qm readme && tfrun readme
'

test_expect_code 3 'shortlib.rare() slowed: the four tests that call it regressed, no other' '
	cd repo && git checkout -q main && git checkout -q -b slow &&
	sed -i "s/^RARE = 1$/RARE = 200/" shortlib.py && $GC commit -qam slower &&
	tfrun slow; rc=$?
	python3 - <<-\EOF || exit 1
	import json
	r = json.load(open("testflame-report/report.json"))
	reg = {t["name"] for t in r["tests"] if t["verdict"] == "regressed" and not t["outside"]}
	want = {"test_short.py::test_rare_one", "test_short.py::test_rare_two",
	        "test_short.py::test_rare_three", "test_short.py::TestGrouped::test_rare"}
	assert reg == want, (sorted(reg - want), sorted(want - reg))
	assert all(t["measure"] == "cpu" for t in r["tests"] if t["name"] in want)
	EOF
	exit $rc
'

test_done
