#!/usr/bin/env bash
# t0280-harness-losses.sh - frames without a symbol and stacks cut short
# are counted apart for the tests and for the harness around them: a
# stripped driver (a shell, as ctest is in Debian) that burns CPU of its own
# before running a test program built with -g gets no advice to rebuild
# anything, only a note that its own losses change no test's profile; the
# same test program stripped gets the warning, naming it. The run file
# keeps both counts.
. "$(dirname "$0")/lib.sh"

mkdir bin && cp "$(command -v dash || command -v sh)" bin/sh && strip bin/sh 2>/dev/null
# a test program with no symbols anywhere (never run unstripped, so no
# cache knows its build id)
cat >spin.c <<\C
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void stripped_spin(long n) { for (long i = 0; i < n; i++) sink += i * i; }
int main(int argc, char **argv) { stripped_spin((argc > 1 ? atol(argv[1]) : 1) * 20000000L); return 0; }
C
cc -O1 -g -fno-omit-frame-pointer -o split-stripped spin.c && strip split-stripped
# the driver's own work (a loop in the stripped shell), then the test
driver() { echo 'i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; "$0" 3' ; }

test_expect_success 'a stripped driver around a -g test: a note on the harness, no advice' '
	"$TF" record --freq 999 -o run.pb.gz -- bin/sh -c "$(driver)" "$FIX/split7030" >out 2>err ||
		{ cat err; exit 1; }
	cat err &&
	grep -q "the work outside the tests (the harness, build steps): [0-9]* of its [0-9]* frames have no symbol" err &&
	expect_not_contains err "build them with -g" &&
	expect_not_contains err "dbgsym" &&
	"$TF" show --json run.pb.gz | python3 -c "
import json, sys
m = json.load(sys.stdin)[\"metadata\"]
assert int(m[\"unresolved_outside\"]) > 0 and int(m[\"samples_outside\"]) > 0, m
assert int(m[\"unresolved\"]) >= int(m[\"unresolved_outside\"]), m
"
'

test_expect_success 'the same test stripped: the warning counts the tests frames and names the program' '
	"$TF" record --freq 999 -o run2.pb.gz -- bin/sh -c "$(driver)" "$SCRATCH/split-stripped" >out2 2>err2 ||
		{ cat err2; exit 1; }
	cat err2 &&
	grep -Eq "warning: [0-9]+ of the tests. [0-9]+ frames have no symbol, most in .split-stripped.[,:].* build them with -g" err2
'

# A test program of no time at all, run 100 times: its samples are its
# start (exec, ld.so, _start), whose stacks end at the entry point: whole
# stacks, though no unwind rule says where they end. They were counted as
# cut short (80% of the tests' stacks), with advice no rebuild would meet.
test_expect_success 'stacks that end at the program or thread entry are not cut short' '
	printf "int main(void) { return 0; }\n" >tiny.c && cc -O1 -g -fno-omit-frame-pointer -o tiny tiny.c &&
	"$TF" record -q --freq 4999 -o tiny.pb.gz -- bin/sh -c "for i in \$(seq 100); do ./tiny; done" &&
	"$TF" show --json tiny.pb.gz | python3 -c "
import json, sys
m = json.load(sys.stdin)[\"metadata\"]
samples = int(m[\"samples\"]) - int(m[\"samples_outside\"])
cut = int(m[\"truncated\"]) - int(m[\"truncated_outside\"])
print(\"tests: %d of %d stacks cut short\" % (cut, samples))
assert samples > 100 and cut * 2 < samples, (cut, samples)
"
'

test_expect_success 'a command that mostly waits: the stacks it waits with count where it runs, and a warning names its program' '
	"$TF" record -o w.pb.gz -- sh -c "i=0; while [ \$i -lt 100 ]; do sleep 0.002; i=\$((i + 1)); done" 2>err &&
	! grep -q "most in :" err &&
	if grep -q "frames have no symbol, most in" err; then
		grep -Eq "most in .[^ ]+." err
	fi
'

test_done
