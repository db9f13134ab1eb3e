#!/usr/bin/env bash
# t0928-cxx-frameworks.sh - C++ frameworks that run every test case in
# one process (tests/fixtures/suites/cxxforms): Catch2 v2 (two
# translation units whose first test functions share one anonymous name),
# doctest (a suite, a skipped test), Boost.Test (a suite, a disabled case).
# Each binary's own list names every test that ran, sampled or not, under
# the framework's name for it, inside the binary's test; the hot test's
# samples are its own by its frames; filters (Catch2's tags and ctest's
# one-test-a-process spelling, doctest's -tc=) select; the suite's output
# and exit status are its own. A binary whose list cannot be read is named
# as before, and the run's notes say why.
. "$(dirname "$0")/lib.sh"
# The binaries are fixtures (the Makefile builds those whose framework is
# installed: catch2, doctest-dev, libboost-test-dev); copies run here.
mkdir src && { cp "$FIX"/cxxforms/*_tests src/ 2>/dev/null || true; }
have_catch2=false have_doctest=false have_boost=false
[ -x src/catch2_tests ] && have_catch2=true
[ -x src/doctest_tests ] && have_doctest=true
[ -x src/boost_tests ] && have_boost=true

# same NAME CMD: the command alone, then under testflame record (NAME.pb.gz,
# NAME.json); output and exit status must match, timings masked
same() {
	local name=$1 cmd=$2 rc1 rc2
	(cd src && sh -c "$cmd" >"../$name.out1" 2>&1); rc1=$?
	(cd src && "$TF" record -q -o "../$name.pb.gz" -- sh -c "$cmd" >"../$name.out2" 2>&1); rc2=$?
	for f in "$name.out1" "$name.out2"; do
		sed -E 's/[0-9]+(\.[0-9]+)? ?(s|us|ms)\b/N/g; s/time="[0-9.]+"/N/g' "$f" >"$f.m"
	done
	[ $rc1 = $rc2 ] && cmp "$name.out1.m" "$name.out2.m" || { echo "exit $rc1 vs $rc2"; return 1; }
	"$TF" show --json "$name.pb.gz" >"$name.json"
}
# tests NAME PARENT HOT WANT...: exactly the WANT tests (and the binary's
# own, and [outside tests]), each inside PARENT; HOT (when not -) sampled
# by its frames, with most of the samples
tests() {
	python3 - "$@" <<-\EOF
	import json, sys
	name, parent, hot, want = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4:])
	t = {x["name"]: x for x in json.load(open(name + ".json"))["tests"]}
	assert set(t) - {parent, "[outside tests]"} == want, sorted(t)
	bad = [(n, t[n]["parent"]) for n in want if t[n]["parent"] != parent]
	assert not bad, bad
	if hot != "-":
	    total = sum(x["samples"] for x in t.values())
	    assert t[hot]["source"] == "frames" and t[hot]["samples"] > total / 3, (t[hot], total)
	EOF
}

if $have_catch2; then
	test_expect_success 'Catch2: every test case of its list, named by its line' '
		same c2 ./catch2_tests &&
		tests c2 catch2_tests - "hot in a" "hot in b" "a comma, in its name" sections &&
		python3 -c "import json; t = {x[\"name\"]: x for x in json.load(open(\"c2.json\"))[\"tests\"]}
total = sum(x[\"samples\"] for x in t.values())
for h in (\"hot in a\", \"hot in b\"):  # two equal halves: each well over a quarter
    assert t[h][\"source\"] == \"frames\" and t[h][\"samples\"] > total / 4, (t[h], total)"
	'
	test_expect_success 'Catch2: a tag and a hidden test, and one test a process as ctest runs them' '
		same c2tag "./catch2_tests [comma],hidden" &&
		tests c2tag catch2_tests - "a comma, in its name" hidden &&
		same c2one "./catch2_tests \"a comma\\, in its name\"" &&
		tests c2one catch2_tests - "a comma, in its name"
	'
	test_expect_success 'Catch2: a binary gone before its list is read: no test named, a note' '
		same c2gone "cp catch2_tests gone_tests && ./gone_tests [hot]; rc=\$?; rm gone_tests; exit \$rc" &&
		tests c2gone gone_tests - &&
		python3 -c "import json; m = json.load(open(\"c2gone.json\"))[\"metadata\"]
n = [m[k] for k in m if k.startswith(\"note.\")]
assert any(\"gone_tests: the catch2 tests it ran are not known (the binary is gone)\" in x for x in n), n"
	'
else
	test_skip 'Catch2 test cases' 'catch2 is not installed (make deps)'
fi

if $have_doctest; then
	test_expect_success 'doctest: every test case that ran, a skipped one not; -tc= selects' '
		same dt ./doctest_tests &&
		tests dt doctest_tests "hot doctest" "hot doctest" "quick doctest" "in a suite" &&
		same dtone "./doctest_tests -tc=\"in a suite\"" &&
		tests dtone doctest_tests - "in a suite"
	'
else
	test_skip 'doctest test cases' 'doctest-dev is not installed (make deps)'
fi

if $have_boost; then
	test_expect_success 'Boost.Test: every enabled case, Suite/Case as Boost names it' '
		same bt ./boost_tests &&
		tests bt boost_tests hot_boost hot_boost suite/quick_boost
	'
else
	test_skip 'Boost.Test cases' 'libboost-test-dev is not installed (make deps)'
fi

test_done
