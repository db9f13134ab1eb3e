#!/usr/bin/env bash
# t0110-record-tree.sh - every process and thread of the tree is sampled:
# fork/exec chains of short-lived processes, 8 threads, a suite under make
# (the cases every sampler passes: lib-record.sh, as t8010 runs them under
# ptrace).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-record.sh"

SAMPLER=perf WITH= N=0
record_tree_cases 4999

# The kernel wakes whoever polls a perf descriptor at every exit of a
# thread it follows; a reader that polled them was scheduled once per
# process, onto a CPU the suite wanted (perf.c). It is woken by its timer
# and by half-full rings instead, whatever the number of processes.
test_expect_success 'processes of a millisecond do not wake the reader one by one' '
	"$TF" record -v --freq 249 -o short.pb.gz -- \
		sh -c "i=0; while [ \$i -lt 400 ]; do /bin/true; i=\$((i+1)); done" 2>err &&
	grep -q "wrote .*401 processes" err &&
	woken=$(sed -n "s/.*own CPU while recording: .*, woken \([0-9]*\) times$/\1/p" err) &&
	[ -n "$woken" ] && [ "$woken" -lt 200 ] || { cat err >&2; false; }
'

test_done
