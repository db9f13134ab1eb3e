#!/usr/bin/env bash
# t0251-run-waits.sh - `testflame run` at default settings on the example
# project, where one test comes to wait: a 50 ms back-off sleep in
# test_hash, a lock its workers hold across their hashing in test_threads,
# test_hash reading its input from a pipe that a thread of its own fills
# 40 ms late. Each fails the build (exit 3) naming the test, "waiting", and
# the blocking call with its caller in the terminal, report.md and the
# page's off-CPU diff (the sleep's: the others' are drawn by the same code
# from the same report.json, and each page's check starts a browser, 7 s
# at a load of 5); a branch that changes nothing passes beside a
# neighbour that burns a CPU. No .testflame.yml: every setting is the
# default, and a slowdown against the stored baseline is confirmed by
# running this tree again. Two of the project's tests stand for its suite
# here, to keep the script's runs (and those reruns) short. Each wait's
# length is the test's own (no disk's or machine's speed in it): an fsync
# waits as long as the disk makes it, and is t0930's.
. "$(dirname "$0")/lib.sh"

if ! offcpu_works; then
	test_skip "waiting, at default settings" "perf refuses the context-switch event here (see testflame doctor)"
	test_done
	exit 0
fi
CHECK=
if need node && [ -x /usr/bin/chromium ] && [ -d "$TOP/tests/node/node_modules/playwright-core" ]; then
	CHECK="node $TOP/tests/node/report-check.mjs"
fi

SUITE='./build/test_hash && ./build/test_threads'
PROGS='build/test_hash build/test_threads'
mkdir repo && cp -r "$TOP/examples/." repo/ && rm -rf repo/build repo/.testflame.yml
cd repo
git init -q -b main && git config user.email t@example.com && git config user.name t
printf 'build/\ntestflame-report/\n' >>.gitignore
git add -A && git commit -qm "libmini" && make -s $PROGS >/dev/null
cd "$SCRATCH"

branch() { # NAME PYTHON: a branch off main, the edit made by PYTHON, built
	cd "$SCRATCH/repo" && git checkout -q main && git checkout -q -b "$1" &&
	python3 -c "$2" && git commit -qam "$1" && make -s $PROGS >/dev/null
}

test_expect_success 'main: the baseline' '
	cd repo && "$TF" run -- sh -c "$SUITE" >out 2>err && expect_contains out "no baseline yet"
'

# the run, the terminal, report.md (and with `page`, the page): TEST,
# "waiting", CALL <- CALLER (CALL within the call's name: a libc may name
# its read __read, its lock pthread_mutex_lock@@GLIBC_2.2.5)
expect_waiting() { # TEST CALL CALLER [page]
	{ "$TF" run -- sh -c "$SUITE" >out 2>err; rc=$?; } ; test $rc = 3 || { cat out err; return 1; }
	expect_contains out "$1 (waiting)" && expect_contains out "REGRESSION" &&
	expect_contains out "$1: waiting +" && expect_contains out "$2" && expect_contains out "<- $3" &&
	md=testflame-report/report.md && expect_contains $md "<code>$1</code> (waiting)" &&
	expect_contains $md "where it waited more" && { grep -qE "<code>[^<]*$2" $md || fail "no $2 in report.md"; } &&
	expect_contains $md "<code>$3</code>" && test -s "testflame-report/$1.offcpu.svg" &&
	grep -q "Off-CPU diff flame graph, where it waited more: $1" "testflame-report/$1.offcpu.svg" ||
		return 1
	[ -z "$CHECK" ] || [ "${4:-}" != page ] && return 0
	$CHECK testflame-report/index.html --json testflame-report/report.json --test "$1 (waiting)" \
		>page.txt 2>page.err || { cat page.err; return 1; }
	expect_contains page.txt "waits Where it waited more: $1 (off-CPU diff flame graph)" &&
	grep "^wait " page.txt | head -n 1 >first && expect_contains first "$2" && expect_contains first "$3" &&
	grep "^waits drawn " page.txt | grep -q "$3"
}

test_expect_success 'a 50 ms sleep in test_hash: exit 3, waiting in usleep called from main' '
	branch sleep "
p = \"tests/test_hash.c\"; s = open(p).read()
s = s.replace(\"#include <string.h>\n\", \"#include <string.h>\n#include <unistd.h>\n\")
s = s.replace(\"\tuint32_t c = 0;\n\", \"\tuint32_t c = 0;\n\tusleep(50000);\n\")
open(p, \"w\").write(s)" && expect_waiting test_hash usleep main page
'

test_expect_success 'a lock held across the workers'"'"' hashing: exit 3, waiting in pthread_mutex_lock from worker' '
	branch lock "
p = \"tests/test_threads.c\"; s = open(p).read()
s = s.replace(\"static uint64_t result[WORKERS];\n\", \"static uint64_t result[WORKERS];\nstatic pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;\n\")
s = s.replace(\"\tuint64_t h = 0;\n\tfor\", \"\tuint64_t h = 0;\n\tpthread_mutex_lock(&lock);\n\tfor\", 1)
s = s.replace(\"\tresult[w] = h;\n\", \"\tpthread_mutex_unlock(&lock);\n\tresult[w] = h;\n\")
open(p, \"w\").write(s)" && expect_waiting test_threads pthread_mutex_lock worker
'

# A wait whose length the test sets, on something other than a sleep or a
# lock: test_hash reads its input from a pipe that a thread of its own
# fills 40 ms late. Its main thread waits at least those 40 ms in read
# (the feeder's sleep meanwhile is off the test's path, apart), so the
# test waits 40 ms more a run by construction, plus what a busy machine
# adds to the two wake-ups (the feeder's, then main's: the read took
# 146 ms at a load of 11), which the test says on stderr; and no more CPU
# than a thread's start, which a busy machine's one run a side may still
# call regressed beside it. Its numbers are switch-outs timed, not
# samples: checked within the wake-ups' error, its site (read from main,
# on the pipe) as the bulk of the growth.
test_expect_success 'test_hash reads its input from a pipe fed 40 ms late: exit 3, waiting in read from main, 40 ms more' '
	branch pipe "
p = \"tests/test_hash.c\"; s = open(p).read()
s = s.replace(\"#include <string.h>\n\", \"#include <string.h>\n#include <pthread.h>\n#include <time.h>\n#include <unistd.h>\n\n\"
	\"static int feed[2];\n\n\"
	\"static void *feeder(void *arg)\n{\n\t(void)arg;\n\tusleep(40000);\n\tCHECK(write(feed[1], \\\"x\\\", 1) == 1);\n\treturn NULL;\n}\n\")
s = s.replace(\"\tuint32_t c = 0;\n\", \"\tuint32_t c = 0;\n\tpthread_t t;\n\tchar in;\n\"
	\"\tCHECK(pipe(feed) == 0 && pthread_create(&t, NULL, feeder, NULL) == 0);\n\"
	\"\tstruct timespec r0, r1;\n\tclock_gettime(CLOCK_MONOTONIC, &r0);\n\"
	\"\tCHECK(read(feed[0], &in, 1) == 1 && pthread_join(t, NULL) == 0);\n\"
	\"\tclock_gettime(CLOCK_MONOTONIC, &r1);\n\"
	\"\tfprintf(stderr, \\\"test_hash: read %lld ns\\\\n\\\", (long long)((r1.tv_sec - r0.tv_sec) * 1000000000LL + r1.tv_nsec - r0.tv_nsec));\n\")
open(p, \"w\").write(s)" && expect_waiting test_hash read main &&
	j=testflame-report/report.json &&
	jq -e ".tests[] | select(.name == \"test_hash\")" $j >hash.json &&
	expect_eq "$(jq -r .decided_by hash.json)" waiting "what test_hash regressed by" &&
	jq -r ".grew[]" hash.json >grew && expect_contains grew waiting &&
	waited=$(jq -r ".waits.delta_ns | floor" hash.json) &&
	read=$(sed -n "s/^test_hash: read \([0-9]*\) ns$/\1/p" err | sort -n | tail -n 1) &&
	{ { test "$waited" -ge 36000000 && test "$waited" -le $((read + 10000000)); } ||
		fail "test_hash waited $waited ns more a run, not 40 ms (36 ms to its read, ${read:-?} ns, and 10 ms)"; } &&
	jq -r ".waits.sites[] | select(.caller == \"main\" and .reason == \"pipe\" and (.call | test(\"read\"))) | .delta_ns | floor" \
		hash.json >site &&
	site=$(awk "{ s += \$1 } END { printf \"%d\", s }" site) &&
	{ test "$site" -ge $((waited * 9 / 10)) || fail "read from main on the pipe: $site ns of $waited"; } &&
	grep -E "(^|;)main;[^ ]*read[^ ]* " testflame-report/test_hash.offcpu.folded >stacks &&
	{ test -s stacks || fail "no main;read stack in test_hash.offcpu.folded"; }
'

test_expect_success 'a branch that changes nothing passes beside a neighbour that burns a CPU' '
	cd repo && git checkout -q main && git checkout -q -b same && git commit -q --allow-empty -m nothing &&
	make -s $PROGS >/dev/null &&
	{ sh -c "while :; do :; done" & nb=$!; } &&
	{ "$TF" run -- sh -c "$SUITE" >out 2>err; rc=$?; kill $nb; } &&
	test $rc = 0 || { cat out; exit 1; }
	expect_not_contains out "REGRESSION" && expect_contains out "and time waited"
'

test_done
