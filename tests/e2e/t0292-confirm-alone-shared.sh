#!/usr/bin/env bash
# t0292-confirm-alone-shared.sh - t0290's confirmation by the suspect
# tests alone when one change slows several of them: a ctest suite of
# twenty tests, five of which call a function that a branch makes three times
# as slow by a constant in its header (no test ever has a frame in the
# changed file, as on a suite built without debug information). Only
# the five look slower, so only the five run alone; none of them is a
# control for the others, and the build fails on each (exit 3), where
# taking their median move out of each as the runner's left them all
# unchanged.
. "$(dirname "$0")/lib.sh"

if ! need ctest cc; then
	test_skip 'a shared slowdown confirmed by the suspect tests alone' 'ctest is not installed'
	test_done
	exit
fi
GC='git -c user.email=t@e -c user.name=t'

mkdir repo && cd repo
cat >shared.h <<\EOF
#define SHARED_ROUNDS 1
double shared_work(double ms);
EOF
cat >shared.c <<\EOF
#include <time.h>
#include "shared.h"
static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
/* burn about ms milliseconds of CPU, SHARED_ROUNDS times */
double shared_work(double ms)
{
	double end = cpu_ms() + ms * SHARED_ROUNDS, now;
	do
		now = cpu_ms();
	while (now < end);
	return now;
}
EOF
cat >spin.c <<\EOF
/* spin NAME MS: burn about MS milliseconds of CPU, in the shared
 * function when NAME starts with "shared", else in its own loop */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "shared.h"
int main(int argc, char **argv)
{
	double ms = atof(argv[2]), end;
	struct timespec t;
	if (!strncmp(argv[1], "shared", 6))
		return shared_work(ms) < 0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	end = t.tv_sec * 1e3 + t.tv_nsec / 1e6 + ms;
	do
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	while (t.tv_sec * 1e3 + t.tv_nsec / 1e6 < end);
	return 0;
}
EOF
# the file cmake writes for add_test(): ctest reads it as it is
{
	for i in 1 2 3 4 5; do echo "add_test(shared_$i \"spin\" \"shared_$i\" \"15\")"; done
	for i in $(seq 15); do echo "add_test(own_$i \"spin\" \"own_$i\" \"15\")"; done
} >CTestTestfile.cmake
cat >.testflame.yml <<\EOF
command: "ctest --test-dir build"
build: "mkdir -p build && cc -O2 -o build/spin spin.c shared.c && cp CTestTestfile.cmake build/"
EOF
printf 'build/\ntestflame-report/\n' >.gitignore
git init -q -b main . && git add -A && $GC commit -qm spin
mkdir build && cc -O2 -o build/spin spin.c shared.c && cp CTestTestfile.cmake build/
cd "$SCRATCH"

test_expect_success 'main: the baseline' '
	cd repo && "$TF" run --save >out 2>err && expect_contains out "no baseline yet"
'

test_expect_code 3 'a branch slowing the shared function: each test that calls it regressed, run alone' '
	cd repo && git checkout -q -b slow &&
	sed -i "s/SHARED_ROUNDS 1/SHARED_ROUNDS 3/" shared.h && $GC commit -qam slower &&
	cc -O2 -o build/spin spin.c shared.c &&
	"$TF" run >out 2>err; rc=$?
	grep -Eq "duet round 1: ([5-9]|1[0-9]|20) tests alone \(ctest -R " err &&
	python3 - <<-\EOF || { sed "s/^/#   /" out err; exit 1; }
	import json
	r = json.load(open("testflame-report/report.json"))
	t = {x["name"]: x for x in r["tests"]}
	for i in range(1, 6):
	    s = t["shared_%d" % i]
	    assert s["verdict"] == "regressed", s
	    assert 3 <= s["confirm_runs"] <= 20, s
	    assert 50 < s["delta_pct"] < 400, s
	for i in range(1, 16):
	    assert t["own_%d" % i]["verdict"] != "regressed", t["own_%d" % i]
	EOF
	[ $? -eq 0 ] && exit $rc
'

test_done
