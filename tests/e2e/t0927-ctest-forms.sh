#!/usr/bin/env bash
# t0927-ctest-forms.sh - one inventory however ctest is started
# (tests/fixtures/suites/ctforms: five tests of one program): with
# --test-dir twice in the same build directory (its log and cost data
# from the run before are there), through `cmake --build --target test`
# (make test), with -j 2 and --output-junit, each run names the five
# tests as ctest lists them (t0920 runs it from the build directory).
. "$(dirname "$0")/lib.sh"
CTFORMS=$TOP/tests/fixtures/suites/ctforms

if ! need cmake ctest; then
	test_skip 'ctest run every way' 'cmake is not installed'
	test_done
	exit
fi
cp -r "$CTFORMS" proj &&
(cd proj && cmake -S . -B build >/dev/null && make -s -C build >/dev/null 2>&1) || exit 1

# five NAME: the run file NAME.pb.gz names step_1..step_5, each by its process
five() {
	"$TF" show --json "$1.pb.gz" >"$1.json" &&
	python3 - "$1.json" <<-\EOF
	import json, sys
	t = {x["name"]: x for x in json.load(open(sys.argv[1]))["tests"]}
	want = {"step_%d" % i for i in range(1, 6)}
	assert want <= set(t), sorted(t)
	assert not set(t) - want - {"[outside tests]"}, sorted(t)
	assert all(t[n]["count"] for n in want), [t[n] for n in want]
	EOF
}
rec() { # NAME CMD...
	local name=$1; shift
	(cd proj && "$TF" record -q -o "../$name.pb.gz" -- "$@" >/dev/null 2>&1) && five "$name"
}

test_expect_success 'ctest --test-dir build, twice in the same build directory' '
	rec first ctest --test-dir build && rec second ctest --test-dir build
'
test_expect_success 'cmake --build --target test' '
	rec target cmake --build build --target test
'
test_expect_success 'ctest -j 2 --output-junit' '
	rec junit ctest --test-dir build -j 2 --output-junit junit.xml
'
test_done
