#!/usr/bin/env bash
# t0290-confirm-alone.sh - a slowdown confirmed by running only the tests
# that looked slower (SPEC §9b), on a real ctest suite in a real git
# repository: three tests, one of which a branch makes a third slower.
# The build fails (exit 3) on that test alone; the confirmation built the
# merge-base and ran `ctest -R '^(spin_slow)$'` there and here in turn
# (each run appends its test's name to a log: the others never ran
# again), and the report says how many alternating runs decided it. An
# unchanged branch runs again only a test that looked slower by chance.
. "$(dirname "$0")/lib.sh"

if ! need cmake ctest cc; then
	test_skip 'confirmation by the suspect tests alone' 'cmake is not installed'
	test_done
	exit
fi
GC='git -c user.email=t@e -c user.name=t'
export SPIN_LOG=$SCRATCH/ran.log

mkdir repo && cd repo
cat >spin.c <<\EOF
/* spin NAME MS: burn about MS milliseconds of CPU, logging NAME */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv)
{
	const char *log = getenv("SPIN_LOG");
	FILE *f = log ? fopen(log, "a") : NULL;
	if (f) { fprintf(f, "%s\n", argv[1]); fclose(f); }
	struct timespec t;
	double end, now;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	end = t.tv_sec + t.tv_nsec / 1e9 + atof(argv[2]) / 1e3;
	do {
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		now = t.tv_sec + t.tv_nsec / 1e9;
	} while (now < end);
	return 0;
}
EOF
cat >CMakeLists.txt <<\EOF
cmake_minimum_required(VERSION 3.13)
project(spin C)
add_executable(spin spin.c)
enable_testing()
add_test(NAME spin_a COMMAND spin spin_a 60)
add_test(NAME spin_slow COMMAND spin spin_slow 90)
add_test(NAME spin_b COMMAND spin spin_b 60)
EOF
cat >.testflame.yml <<\EOF
command: "ctest --test-dir build"
build: "cmake -S . -B build >/dev/null && cmake --build build >/dev/null"
EOF
printf 'build/\ntestflame-report/\n' >.gitignore
git init -q -b main . && git add -A && $GC commit -qm spin
cmake -S . -B build >/dev/null && cmake --build build >/dev/null
cd "$SCRATCH"

test_expect_success 'main: the baseline' '
	cd repo && "$TF" run --save >out 2>err && expect_contains out "no baseline yet"
'

# what the duet runs: spin_slow, and beside it an unchanged test only when
# that one looked slower by chance (ctest's -R, the names in order)
ALONE="'\\^\\((spin_a\\|)?(spin_b\\|)?spin_slow\\)\\\$'"
test_expect_code 3 'a branch slowing spin_slow: confirmed by it alone, alternately with the merge-base' '
	cd repo && git checkout -q -b slow &&
	sed -i "s/spin_slow 90/spin_slow 125/" CMakeLists.txt && $GC commit -qam slower &&
	cmake --build build >/dev/null && : >"$SPIN_LOG" &&
	"$TF" run >out 2>err; rc=$?
	grep -Eq "duet round 1: [123] tests? alone \(ctest -R $ALONE\), the merge-base" err &&
	expect_contains out "confirmed: against the stored baseline, spin_slow looks" &&
	grep -Eq "[123] tests? run alone \(ctest -R $ALONE\).* s \(gate.confirm_budget [0-9.]+ s\), after [0-9.]+ s building the merge-base" out &&
	expect_contains out "run alone " &&
	python3 - <<-\EOF || { sed "s/^/#   /" out err; exit 1; }
	import json, os
	r = json.load(open("testflame-report/report.json"))
	t = {x["name"]: x for x in r["tests"]}
	s = t["spin_slow"]
	assert s["verdict"] == "regressed", s
	assert 3 <= s["confirm_runs"] <= 20, s
	# single-threaded tests on a machine of two CPUs or more: both sides
	# of a round at once (confirm.c at_once), in pairs
	import os as _os
	together = _os.cpu_count() >= 2
	how = "each at the same time as" if together else "alternately with"
	assert s["reason"].startswith("run alone %d times, %s the merge-base" % (s["confirm_runs"], how)), s
	assert s["method"] == ("paired" if together else "welch"), s
	ran = open(os.environ["SPIN_LOG"]).read().split()
	# the first run ran each once, the duet each test it confirms alone,
	# twice a round: spin_slow, and an unchanged one only when it looked
	# slower by chance (one run against one baseline, as below)
	for n in ("spin_a", "spin_b"):
	    assert t[n]["verdict"] != "regressed", t[n]
	    assert ran.count(n) == 1 + 2 * t[n]["confirm_runs"], (n, ran.count(n), t[n])
	assert ran.count("spin_slow") == 1 + 2 * s["confirm_runs"], (ran.count("spin_slow"), s)
	EOF
	grep -q "spin_slow.*regressed\|regressed.*spin_slow" testflame-report/report.md &&
	expect_contains testflame-report/report.md "Confirmed by running each alone"; ok=$?
	[ $ok -eq 0 ] || sed "s/^/#   /" out err
	[ $ok -eq 0 ] && exit $rc
'

# An unchanged branch looks slower by chance about one time in five (one
# run against one baseline): then only what looked slower runs again,
# and is cleared.
test_expect_success 'an unchanged branch: exit 0, no test run again but one that looked slower' '
	cd repo && git checkout -q main && git checkout -q -b same &&
	echo "# same" >>CMakeLists.txt && $GC commit -qam same &&
	cmake --build build >/dev/null && : >"$SPIN_LOG" &&
	"$TF" run >out 2>err &&
	python3 - <<-\EOF
	import collections, json, os
	r = json.load(open("testflame-report/report.json"))
	t = {x["name"]: x for x in r["tests"] if not x["outside"]}
	ran = collections.Counter(open(os.environ["SPIN_LOG"]).read().split())
	for n in ("spin_a", "spin_slow", "spin_b"):
	    assert t[n]["verdict"] != "regressed", t[n]
	    assert ran[n] == 1 + 2 * t[n]["confirm_runs"], (n, ran[n], t[n]["confirm_runs"])
	EOF
'

test_done
