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
# and by half-full rings instead, whatever the number of processes. While
# processes start its timer paces it at 10 ms (to read their arguments in
# time), so on a machine loaded enough to stretch the loop past 2 s that
# pace, not the processes, sets the count: the bound is the larger.
test_expect_success 'processes of a millisecond do not wake the reader one by one' '
	start=$(date +%s%N) &&
	"$TF" record -v --freq 249 -o short.pb.gz -- \
		sh -c "i=0; while [ \$i -lt 400 ]; do /bin/true; i=\$((i+1)); done" 2>err &&
	ms=$(( ($(date +%s%N) - start) / 1000000 )) &&
	grep -q "wrote .*401 processes" err &&
	woken=$(sed -n "s/.*own CPU while recording: .*, woken \([0-9]*\) times$/\1/p" err) &&
	bound=$(( ms / 10 > 200 ? ms / 10 + 20 : 200 )) &&
	[ -n "$woken" ] && [ "$woken" -lt "$bound" ] || { echo "$ms ms, bound $bound" >&2; cat err >&2; false; }
'

# Where the command can have a cgroup of its own (root, a writable
# cgroup2, CPU-wide events allowed), the events follow it instead of being
# copied into every process (perf.c); --follow inherit copies them, as
# perf record does. Either way every process is there, each one's CPU time
# is exact, and the cgroup is gone afterwards, even when the suite leaves
# a process running or testflame is killed.
cg_of() { sed -n "s/.*events follow the command.s cgroup .\(.*\)., not inherited$/\1/p" "$1"; }
if "$TF" record -v -o probe.pb.gz -- true 2>probe.err && [ -n "$(cg_of probe.err)" ]; then
	printf '#!/bin/sh\ntf=$1 sub=$2; shift 2; exec "$tf" "$sub" --follow inherit "$@"\n' >inherit.sh
	chmod +x inherit.sh
	SAMPLER=perf WITH=$PWD/inherit.sh N=1 LABEL="perf, inherited"
	record_tree_cases 4999
	SAMPLER=perf WITH= N=0 LABEL=

	test_expect_success 'the tree followed by its cgroup: every process, and the cgroup gone after' '
		"$TF" record -v --freq 4999 -o cg.pb.gz -- "$FIX/forktree" 3 2 2>err &&
		cg=$(cg_of err) && [ -n "$cg" ] && case $cg in */testflame-[0-9]*) ;; *) false ;; esac &&
		! test -e "$cg" &&
		go tool pprof -comments cg.pb.gz 2>/dev/null | grep -q "testflame.follow=cgroup" &&
		go tool pprof -raw cg.pb.gz 2>/dev/null | grep -o "pid:\[[0-9]*\]" | sort -u >pids &&
		expect_eq "$(wc -l <pids)" 15 "distinct pids with samples"
	'

	# A CPU's switch records also see a thread leave it after its exit;
	# counted from its start, that last one doubled every process. Each
	# run is held to its own wall time, and the inherited run to the
	# cgroup's only loosely: two runs of the same program differ by up
	# to 50% of CPU time on a VM whose host takes time. Under load a
	# program waits for a core, so its wall time is no floor for its CPU
	# time there: within a fifth of the inherited count will do (a CI run
	# at a load of 5.5: 214 ms by cgroup, 236 ms inherited, 271 ms wall).
	test_expect_success 'by cgroup and inherited, each test program measures its own CPU time' '
		cp -r "$TOP/examples" ex2 && make -s -C ex2 all >/dev/null &&
		for how in cgroup inherit; do
			"$TF" record -q --follow $how -o $how.pb.gz -- make -s -C ex2 check >/dev/null &&
			"$TF" show --json $how.pb.gz >$how.json || exit 1
		done &&
		for t in test_primes test_sort test_matrix; do
			q=".tests[] | select(.name == \$t) | \"\\(.count) \\(.wall_ns)\"" &&
			set -- $(jq -r --arg t $t "$q" cgroup.json) $(jq -r --arg t $t "$q" inherit.json) &&
			echo "$t: cgroup $1 of wall $2, inherited $3 of wall $4" &&
			awk -v c=$1 -v w=$2 -v i=$3 -v iw=$4 "BEGIN { exit !((c > 0.8 * w || c > 0.8 * i) && c < 1.1 * w && i < 1.1 * iw && i > 0.5 * c) }" ||
				{ echo "$t: measured $1 by cgroup (wall $2), $3 inherited (wall $4)"; exit 1; }
		done
	'

	# An inherited event starts each new process on a fresh period, so a
	# program shorter than one (20 ms at 49 Hz) is never sampled; a CPU's
	# event runs on across processes, and samples them as their time says.
	# 61 programs of a few ms of CPU each, the exec and page faults
	# included (3-6 ms on a 2-core VM; a runner slower by 3x still keeps
	# them under a period): about 14 are sampled by cgroup, none inherited.
	test_expect_success 'programs of a millisecond get their share of samples only by cgroup' '
		"$TF" record -v --freq 49 -o short-cg.pb.gz -- "$FIX/forktree" 60 1 300000 2>err-cg &&
		"$TF" record -v --freq 49 --follow inherit -o short-in.pb.gz -- "$FIX/forktree" 60 1 300000 2>err-in &&
		go tool pprof -raw short-cg.pb.gz 2>/dev/null | grep -o "pid:\[[0-9]*\]" | sort -u | wc -l >n-cg &&
		go tool pprof -raw short-in.pb.gz 2>/dev/null | grep -o "pid:\[[0-9]*\]" | sort -u | wc -l >n-in &&
		echo "processes with samples: cgroup $(cat n-cg), inherited $(cat n-in)" &&
		[ "$(cat n-cg)" -ge $(( $(cat n-in) + 3 )) ]
	'

	test_expect_success '--follow cgroup where there can be none: a one-line error, exit 1' '
		out=$(mktemp -u) &&
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$TF" record -q --follow cgroup -o "$out" -- true 2>err; rc=$?
		cat err && expect_eq $rc 1 "exit status" &&
		expect_eq "$(wc -l <err)" 1 "lines" &&
		grep -q "^testflame: --follow cgroup: cannot make the cgroup .*: Permission denied$" err &&
		! test -e "$out"
	'

	# no event follows the cgroup when perf is refused (ptrace samples):
	# the command leaves it before it runs, and it is gone after
	test_expect_success 'perf refused, ptrace instead: no cgroup for the command, none left' '
		base=$(grep -m1 " cgroup2 " /proc/mounts | cut -d" " -f2)$(sed -n "s/^0:://p" /proc/self/cgroup) &&
		{ "$FIX/noperf" "$TF" record -q -o np.pb.gz -- sh -c "cat /proc/self/cgroup >np.cg" & } &&
		pid=$! && wait $pid &&
		! test -e "$base/testflame-$pid" && test -s np.cg && ! grep testflame- np.cg
	'

	test_expect_success 'a process the suite leaves running goes back to the parent cgroup' '
		"$TF" record -v -o left.pb.gz -- sh -c "sleep 7.71 & exit 0" 2>err &&
		cg=$(cg_of err) && ! test -e "$cg" &&
		pid=$(pgrep -f "^sleep 7.71") && [ -n "$pid" ] &&
		! grep -q "testflame-" /proc/$pid/cgroup; rc=$?
		pkill -f "^sleep 7.71"; exit $rc
	'

	# (the cgroup read from the command's process: testflame names it on
	# stderr only as it finishes, and without it the kill was never sent)
	test_expect_success 'a killed testflame leaves no cgroup behind' '
		"$TF" record -v -o killed.pb.gz -- sleep 9.71 2>err &
		tf=$!
		wait_for_proc "^sleep 9.71" && pid=$(pgrep -f "^sleep 9.71") &&
		cg=$(grep -m1 " cgroup2 " /proc/mounts | cut -d" " -f2)$(sed -n "s/^0:://p" /proc/$pid/cgroup) &&
		case $cg in */testflame-$tf) test -d "$cg";; *) false;; esac ||
			{ kill $tf; fail "sleep 9.71 is in the cgroup $cg, not testflame-$tf"; exit 1; }
		kill -KILL $tf; wait $tf 2>/dev/null
		for i in $(seq 50); do test -e "$cg" || break; sleep 0.1; done
		! test -e "$cg" && ! pgrep -f "^sleep 9.71"
	'
else
	test_skip 'the tree followed by its cgroup' "no cgroup here: $(grep -i cgroup probe.err)"
fi

test_done
