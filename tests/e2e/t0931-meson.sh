#!/usr/bin/env bash
# t0931-meson.sh - a meson project's suite run by `meson test`: each test
# is named as meson prints it ("PROJECT / NAME", "PROJECT:SUITE / NAME"),
# tests sharing a program apart by their arguments, with meson's own
# durations; what meson runs for itself (dpkg-architecture) is no test; a
# branch that slows one test fails the build with that test named, after
# running it alone (`meson test PROJECT:NAME`) alternately with the
# merge-base; the suite's output and exit status are its own.
. "$(dirname "$0")/lib.sh"

if ! need meson ninja cc; then
	test_skip 'a meson suite' 'meson or ninja is not installed (make deps)'
	test_done
	exit
fi
GC='git -c user.email=t@e -c user.name=t'

mkdir repo && cd repo
cat >meson.build <<\EOF2
project('spinner', 'c')
spin = executable('spin', 'spin.c')
test('quick', spin, args: ['quick', '5'])
test('steady a', spin, args: ['steady_a', '40'])
test('steady b', spin, args: ['steady_b', '40'])
test('slow', spin, args: ['slow', '60'], suite: 'heavy')
EOF2
cat >spin.c <<\EOF2
/* spin NAME MS: burn about MS milliseconds of CPU in a function of its own */
#include <stdlib.h>
#include <time.h>
#define FACTOR 1
static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
__attribute__((noinline)) static double burn(double ms)
{
	double end = cpu_ms() + ms, now;
	do
		now = cpu_ms();
	while (now < end);
	return now;
}
int main(int argc, char **argv)
{
	double ms = argc > 2 ? atof(argv[2]) : 1;
	if (argv[1][0] == 's' && argv[1][1] == 'l')
		ms *= FACTOR;
	return burn(ms) < 0;
}
EOF2
cat >.testflame.yml <<\EOF2
command: "meson test -C build"
build: "meson setup build >/dev/null && meson compile -C build >/dev/null"
freq: 499
EOF2
printf 'build/\ntestflame-report/\n' >.gitignore
git init -q -b main . && git add -A && $GC commit -qm spinner &&
meson setup build >/dev/null && meson compile -C build >/dev/null || exit 1
cd "$SCRATCH"

test_expect_success 'meson test: every test under its meson name, with its time; the output its own' '
	cd repo &&
	meson test -C build >../plain.out 2>&1; rc1=$? &&
	"$TF" record -q -o ../m.pb.gz -- meson test -C build >../tf.out 2>&1; rc2=$?
	[ $rc1 = 0 ] && [ $rc2 = 0 ] &&
	grep " / " ../plain.out | sed -E "s/[0-9.]+s\$//; s/^ *[0-9]+\/[0-9]+ //" | sort >../plain.names &&
	grep " / " ../tf.out | sed -E "s/[0-9.]+s\$//; s/^ *[0-9]+\/[0-9]+ //" | sort >../tf.names &&
	diff -u ../plain.names ../tf.names &&
	"$TF" show --json ../m.pb.gz >../m.json &&
	python3 - ../m.json <<-\PY
	import json, sys
	t = {x["name"]: x for x in json.load(open(sys.argv[1]))["tests"]}
	want = {"spinner / quick", "spinner / steady a", "spinner / steady b", "spinner:heavy / slow"}
	assert set(t) - {"[outside tests]"} == want, sorted(t)
	for n in want:
	    assert t[n]["runner_ns"] and t[n]["source"] == "process", t[n]
	assert t["spinner:heavy / slow"]["samples"] > t["spinner / quick"]["samples"], t
	PY
'

test_expect_success 'main: the baseline' '
	cd repo && "$TF" run --save >out 2>err && expect_contains out "no baseline yet"
'

test_expect_code 3 'a branch slowing one test: it regressed, run alone by meson test PROJECT:NAME' '
	cd repo && git checkout -q -b slow &&
	sed -i "s/FACTOR 1/FACTOR 2/" spin.c && $GC commit -qam slower &&
	meson compile -C build >/dev/null &&
	"$TF" run >out 2>err; rc=$?
	grep -q "duet round 1: .*meson test .*spinner:slow" err &&
	python3 - <<-\PY || { sed "s/^/#   /" out err; exit 1; }
	import json
	r = json.load(open("testflame-report/report.json"))
	t = {x["name"]: x for x in r["tests"]}
	s = t["spinner:heavy / slow"]
	assert s["verdict"] == "regressed" and 3 <= s["confirm_runs"] <= 20, s
	for n in ("spinner / steady a", "spinner / steady b", "spinner / quick"):
	    assert t[n]["verdict"] != "regressed", t[n]
	PY
	[ $? -eq 0 ] && exit $rc
'

test_done
