#!/usr/bin/env bash
# t0293-confirm-changed-code.sh - a test whose code a branch changed, and
# that its one run against the stored baseline can neither clear nor
# convict, is confirmed by the duet (SPEC §9b) even when it does not look
# slower: on a real ctest suite in a real git repository, spin_slow runs
# its own function. A branch that edits that function (no slowdown) has
# spin_slow alone run again beside the merge-base and cleared, exit 0; a
# branch that changes no code runs nothing again for it; and with the
# default gate.confirm_budget (the suite's own time), a test whose three
# rounds alone would cost more than that (spin_slow is two thirds of the
# suite) is not run again.
. "$(dirname "$0")/lib.sh"

if ! need cmake ctest cc; then
	test_skip 'confirmation of the tests that ran changed code' 'cmake is not installed'
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
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void work(double ms)
{
	double end = cpu_now() + ms / 1e3;
	while (cpu_now() < end)
		;
}

__attribute__((noinline)) static void work_slow(double ms)
{
	/* spin_slow's own work */
	double end = cpu_now() + ms / 1e3;
	while (cpu_now() < end)
		;
}

int main(int argc, char **argv)
{
	const char *log = getenv("SPIN_LOG");
	FILE *f = log ? fopen(log, "a") : NULL;
	if (argc < 3)
		return 2;
	if (f) {
		fprintf(f, "%s\n", argv[1]);
		fclose(f);
	}
	if (!strcmp(argv[1], "spin_slow"))
		work_slow(atof(argv[2]));
	else
		work(atof(argv[2]));
	return 0;
}
EOF
cat >CMakeLists.txt <<\EOF
cmake_minimum_required(VERSION 3.13)
project(spin C)
set(CMAKE_C_FLAGS "-O1 -g -fno-omit-frame-pointer")
add_executable(spin spin.c)
enable_testing()
add_test(NAME spin_a COMMAND spin spin_a 40)
add_test(NAME spin_b COMMAND spin spin_b 40)
add_test(NAME spin_c COMMAND spin spin_c 40)
add_test(NAME spin_slow COMMAND spin spin_slow 250)
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

# checks.py BRANCH: what ran again, against the report's verdicts
cat >checks.py <<\EOF
import collections, json, os, sys
branch = sys.argv[1]
r = json.load(open("testflame-report/report.json"))
t = {x["name"]: x for x in r["tests"] if not x["outside"]}
ran = collections.Counter(open(os.environ["SPIN_LOG"]).read().split())
err = open("err").read()
for n in ("spin_a", "spin_b", "spin_c", "spin_slow"):
    assert t[n]["verdict"] != "regressed", t[n]
    # the first run, then two runs a round of each test the duet ran
    assert ran[n] == 1 + 2 * t[n]["confirm_runs"], (n, ran[n], t[n]["confirm_runs"])
    assert t[n]["ran_changed"] == (branch == "edit" and n == "spin_slow"), (n, t[n])
s = t["spin_slow"]
if branch == "edit":
    # not faster by half the threshold in its first run (its first run's
    # move, kept as raw_delta_pct): confirmed alone, and cleared
    if s["raw_delta_pct"] > -2.5:
        assert "spin_slow ran changed code and one run cannot rule out a 5% slowdown" in err, err
        assert s["confirm_runs"] >= 3, s
        assert s["reason"].startswith("run alone %d times" % s["confirm_runs"]), s
        assert r["confirmation"].startswith("against the stored baseline, spin_slow ran changed code"), r["confirmation"]
else:
    assert "ran changed code" not in err, err
EOF

test_expect_success 'a branch editing the code spin_slow runs: spin_slow alone is run again beside the merge-base and cleared' '
	cd repo && git checkout -q -b edit main &&
	sed -i "s|/\* spin_slow.s own work \*/|/* spin_slow: its own work */|" spin.c &&
	$GC commit -qam "edit spin_slow" && git diff HEAD~ --stat | grep -q spin.c &&
	printf "gate:\n  confirm_budget: 600%%\n" >>.testflame.yml && $GC commit -qam budget &&
	cmake --build build >/dev/null && : >"$SPIN_LOG" &&
	"$TF" run >out 2>err &&
	python3 ../checks.py edit || { sed "s/^/#   /" out err; exit 1; }
'

test_expect_success 'the same edit under the default budget: three rounds of spin_slow alone cost more than the suite, so it is not run again for it' '
	cd repo && git checkout -q -b edit-default edit~1 &&
	cmake --build build >/dev/null && : >"$SPIN_LOG" &&
	"$TF" run >out 2>err &&
	expect_not_contains err "ran changed code"
'

test_expect_success 'a branch changing no code: nothing is run again for it' '
	cd repo && git checkout -q -b readme main &&
	echo "the suite" >README && git add README && $GC commit -qm readme &&
	: >"$SPIN_LOG" &&
	"$TF" run >out 2>err &&
	python3 ../checks.py readme || { sed "s/^/#   /" out err; exit 1; }
'

test_done
