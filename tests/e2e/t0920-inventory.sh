#!/usr/bin/env bash
# t0920-inventory.sh - a suite of short tests as real suites have them
# (tests/fixtures/suites/short): 200 ctest tests of about a millisecond, a
# GoogleTest program with namespaced, underscored, typed and parameterized
# tests and a cmocka program whose tests tail-call their helpers, each run
# by ctest as one test. At default settings (most of these tests get
# no sample at all): every test the runners list has its row under the
# runner's name, nested in its ctest test, with an exact cost where the
# system gives one; a README-only branch passes; a slowdown of lib_rare()
# fails the tests that call it and no other, naming lib_rare at its line;
# the GoogleTest program is judged through its tests.
. "$(dirname "$0")/lib.sh"
SHORT=$TOP/tests/fixtures/suites/short

if ! need cmake ctest; then
	test_skip 'the inventory of a ctest suite' 'cmake is not installed'
	test_done
	exit
fi

git_repo() {
	mkdir -p repo && cp "$SHORT"/* repo/ && cd repo &&
	git init -q -b main . && printf 'build/\ntestflame-report/\n' >.gitignore &&
	git add -A && git -c user.email=t@e -c user.name=t commit -qm short &&
	cmake -S . -B build >/dev/null && make -s -C build -j2 >/dev/null 2>&1
}
tfrun() { # NAME: outputs kept as ../NAME.out, ../NAME.err
	"$TF" run --no-publish -- sh -c 'cd build && ctest' >"../$1.out" 2>"../$1.err"
}
GC='git -c user.email=t@e -c user.name=t'

test_expect_success 'main: every test the runners list, each under its name, most measured exactly' '
	git_repo && tfrun main &&
	"$TF" show --json testflame-report/head.pb.gz >show.json &&
	build/gshort --gtest_list_tests | awk "/^[^ ]/ { s = \$1; next } { print s \$1 }" >gtest.list &&
	test "$(wc -l <gtest.list)" = 9 &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("show.json"))["tests"]}
	cases = ["case_%03d" % i for i in range(200)]
	missing = [n for n in cases if n not in t]
	assert not missing, missing[:5]
	# a ctest test: its processes counted exactly by the kernel
	assert all(t[n]["count"] and t[n]["source"] == "process" for n in cases), [t[n] for n in cases if not t[n]["count"]][:3]
	for n in open("gtest.list").read().split():
	    assert n in t, (n, sorted(t)[:20])
	    assert t[n]["parent"] == "gshort", t[n]
	    assert t[n]["runner_ns"] is not None, t[n]
	for n in ("test_rare", "test_common", "test_plain"):
	    assert t[n]["parent"] == "ctail", t[n]
	assert t["gshort"]["count"] and t["ctail"]["count"]
	# GoogleTest names every test its frames run: no unnamed work in gshort
	assert "gshort [unnamed tests]" not in t, t["gshort [unnamed tests]"]
	assert "[outside tests]" in t
	# names a stack alone gets wrong are not there
	assert not [n for n in t if n.startswith("ParserTest_CVE") or n.endswith("5950") and "." not in n]
	EOF
'

test_expect_success 'a README-only branch: no regression, exit 0' '
	cd repo && git checkout -q -b readme && echo "more words" >>README.md &&
	git add -A && $GC commit -qm readme && tfrun readme
'

test_expect_code 3 'lib_rare slowed: the tests that call it regressed, no other, exit 3' '
	cd repo && git checkout -q main && git checkout -q -b slow &&
	sed -i "s/RARE_SPIN 1/RARE_SPIN 60/" rare.h && $GC commit -qam slower &&
	make -s -C build -j2 >/dev/null 2>&1 && tfrun slow; rc=$?
	python3 - <<-\EOF || exit 1
	import json
	r = json.load(open("testflame-report/report.json"))
	v = {t["name"]: t for t in r["tests"]}
	reg = {n for n, t in v.items() if t["verdict"] == "regressed" and not t["outside"]}
	# gshort and ctail hold the tests their runners list, which carry the
	# verdicts: their own work is outside them, not gated, in every run.
	# ctail'"'"'s cmocka tests tail-call check_rare, which calls lib_rare:
	# no listed test'"'"'s frame names that work, inside a test all the
	# same: "ctail [unnamed tests]", gated
	assert v["gshort"]["outside"] and v["gshort"]["nested"] == 9, v["gshort"]
	assert v["ctail"]["outside"] and v["ctail"]["nested"] == 3, v["ctail"]
	u = v["ctail [unnamed tests]"]
	assert "gshort [unnamed tests]" not in v, v["gshort [unnamed tests]"]
	assert u["parent"] == "ctail" and not u["outside"] and u["measure"] == "samples", u
	assert u["functions"][0]["name"] == "lib_rare", u["functions"][:3]
	want = {"case_000", "case_050", "case_100", "case_150", "Rare_Suite.Uses_Rare",
	        "Inst/Params.Pick/1", "ctail [unnamed tests]"}
	assert want <= reg, ("missed", sorted(want - reg), [(n, v[n]["verdict"], v[n]["reason"]) for n in want - reg])
	cases = {n for n in reg if n.startswith("case_")}
	assert cases == {"case_000", "case_050", "case_100", "case_150"}, sorted(cases)
	assert not reg & {"Inst/Params.Pick/0", "Inst/Params.Pick/2", "Plain.Common"}, sorted(reg)
	for n in ("case_000", "case_050"):
	    assert v[n]["measure"] == "count", v[n]
	    f = v[n]["functions"][0]
	    assert f["name"] == "lib_rare" and f["file"].endswith("lib.c") and f["line"] > 0, f
	EOF
	exit $rc
'

test_done
