#!/usr/bin/env bash
# t9100-fault-kill.sh - testflame killed with SIGKILL at each stage of its
# work: while the suite runs (a real kill once the suite says it started),
# and, under gdb, the moment it builds the profile, renames the run file
# into place, writes the report, saves the baseline (the ref's lock held)
# and pushes it (bytes on the wire). Each time: no partial run file, report
# or ref, no temporary file or lock left behind, the suite's processes
# gone, and the next run works.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-store.sh"

if ! need gdb; then
	test_skip "kill testflame at each stage" "gdb is missing (make deps installs it)"
	test_done
	exit 0
fi

export TMPDIR=$SCRATCH/tmp
mkdir -p "$TMPDIR"
new_repo proj 2
# the suite: a tenth of a second of CPU (what is killed is testflame, at its
# breakpoints after the suite; the first test's suite runs long, UNITS=300)
printf '#!/bin/sh\necho $$ > "%s/suite.pid"\n: > "%s/suite.started"\nexec "%s/split7030" ${UNITS:-1}\n' \
	"$SCRATCH" "$SCRATCH" "$FIX" > proj/suite.sh
chmod +x proj/suite.sh
printf 'testflame-out/\ntestflame-report/\n' > proj/.gitignore
git -C proj add suite.sh .gitignore && git -C proj commit -q -m suite
git init -q --bare remote.git
git -C proj remote add origin "$SCRATCH/remote.git"

# under_gdb GDB-COMMANDS -- TESTFLAME-ARGS...: run testflame in proj under
# gdb, which runs the commands (breakpoints, continues), kills it and quits.
under_gdb() {
	local cmds=$1
	shift 2
	printf '%s\n' "set pagination off" "set confirm off" "set breakpoint pending on" \
		"handle SIGCHLD SIGUSR1 SIGPIPE SIGALRM nostop noprint pass" "$cmds" \
		"info breakpoints" "kill" "quit" > "$SCRATCH/gdb.cmds"
	(cd proj && timeout 120 gdb -q -batch -x "$SCRATCH/gdb.cmds" --args "$TF" "$@") \
		> gdb.out 2>&1
	# every breakpoint was reached before the kill
	if [ "$(grep -cE '^[0-9]+ +breakpoint' gdb.out)" != "$(grep -c 'breakpoint already hit' gdb.out)" ]; then
		cat gdb.out
		fail "a breakpoint was never reached"
		return 1
	fi
	sleep 0.3 # the guard takes the suite down
}

# Nothing half-written: no temporary file or lock anywhere, nothing of
# testflame's in TMPDIR, the suite's processes gone, a run file or report
# only whole, every baseline readable. With STAGED=1, the directory a report
# was being written into may be there (beside the report, which is whole):
# the next report removes it.
nothing_half_written() {
	local left r f
	left=$(find proj remote.git \( -name '*.tmp*' -o -name '*.lock' \) -print)
	[ -z "${STAGED:-}" ] || left=$(echo "$left" | grep -v '^proj/testflame-report\.tmp\.[0-9]*\(/.*\)\?$')
	[ -z "$left" ] || { fail "left behind: $left"; return 1; }
	[ -z "$(ls -A "$TMPDIR")" ] || { fail "left in TMPDIR: $(ls -A "$TMPDIR")"; return 1; }
	if [ -s "$SCRATCH/suite.pid" ] && kill -0 "$(cat "$SCRATCH/suite.pid")" 2>/dev/null; then
		fail "the suite still runs"
		return 1
	fi
	for f in proj/testflame-out/run.pb.gz proj/testflame-report/head.pb.gz; do
		[ ! -e "$f" ] || "$TF" show "$f" >/dev/null || { fail "'$f' is not whole"; return 1; }
	done
	# a report: the comparison's files, or, without a baseline, the
	# comment saying so beside the run
	if [ -e proj/testflame-report/index.html ]; then
		for f in report.md report.json junit.xml head.pb.gz base.pb.gz; do
			[ -s "proj/testflame-report/$f" ] ||
				{ fail "the report lacks $f: $(ls proj/testflame-report)"; return 1; }
		done
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
			proj/testflame-report/report.json || { fail "report.json does not parse"; return 1; }
	elif [ -e proj/testflame-report ]; then
		for f in report.md head.pb.gz; do
			[ -s "proj/testflame-report/$f" ] ||
				{ fail "the report lacks $f: $(ls proj/testflame-report)"; return 1; }
		done
	fi
	if git -C proj fsck --no-progress 2>&1 | grep -v '^dangling' | grep .; then
		fail "git fsck"
		return 1
	fi
	for r in $(git -C proj for-each-ref --format='%(refname)' refs/testflame); do
		(cd proj && "$TF" baseline show "${r#refs/testflame/runs/}") >/dev/null ||
			{ fail "baseline $r does not read"; return 1; }
	done
}

# A new commit (the next runs compare with the baseline of the one before).
commit() { git -C proj commit -q --allow-empty -m "${1:-next}"; }

# The next run works: one that saves its baseline, then, a commit later,
# one that compares with it and writes the whole report.
next_run_works() {
	(cd proj && "$TF" run -q --save --no-publish -- ./suite.sh) > next.out 2>&1 ||
		{ cat next.out; fail "the next run failed"; return 1; }
	git -C proj rev-parse -q --verify "refs/testflame/runs/$(git -C proj rev-parse HEAD)" \
		>/dev/null || { fail "no baseline saved"; return 1; }
	commit &&
	(cd proj && "$TF" run -q --no-save --no-publish -- ./suite.sh) > next2.out 2>&1
	rc=$?
	[ $rc = 0 ] || [ $rc = 3 ] || { cat next2.out; fail "the run after that exited $rc"; return 1; }
	[ -s proj/testflame-report/report.json ] || { fail "no report"; return 1; }
	nothing_half_written
}

# Start again: no outputs, no baselines, the suite not started.
reset() {
	rm -rf proj/testflame-out proj/testflame-report "$SCRATCH/suite.pid" "$SCRATCH/suite.started"
	git -C proj for-each-ref --format='delete %(refname)' refs/testflame |
		git -C proj update-ref --stdin
	rm -rf remote.git && git init -q --bare remote.git
}

test_expect_success 'killed while the suite runs: the suite dies with it, nothing written' '
	reset &&
	cd proj &&
	{ UNITS=300 "$TF" record -o testflame-out/run.pb.gz -- ./suite.sh >../rec.out 2>&1 & } &&
	tf=$! && cd .. &&
	for i in $(seq 100); do [ -e "$SCRATCH/suite.started" ] && break; sleep 0.1; done &&
	[ -e "$SCRATCH/suite.started" ] && sleep 0.5 &&
	kill -KILL $tf && { wait $tf; true; } &&
	sleep 0.5 &&
	[ ! -e proj/testflame-out/run.pb.gz ] &&
	nothing_half_written && next_run_works
'

test_expect_success 'killed while it builds the profile: no run file' '
	reset &&
	under_gdb "break tf_attribute_build
run" -- record -o testflame-out/run.pb.gz -- ./suite.sh &&
	[ -e "$SCRATCH/suite.started" ] && [ ! -e proj/testflame-out/run.pb.gz ] &&
	nothing_half_written && next_run_works
'

test_expect_success 'killed as it writes the run file: no run file, no temporary' '
	reset &&
	under_gdb "break tf_pprof_write
run
break linkat
continue" -- record -o testflame-out/run.pb.gz -- ./suite.sh &&
	[ ! -e proj/testflame-out/run.pb.gz ] &&
	nothing_half_written && next_run_works
'

test_expect_success 'killed between naming the run file and renaming it: the next write removes the temporary' '
	reset &&
	under_gdb "break tf_pprof_write
run
break rename
continue" -- record -o testflame-out/run.pb.gz -- ./suite.sh &&
	[ ! -e proj/testflame-out/run.pb.gz ] &&
	ls proj/testflame-out/run.pb.gz.tmp.* &&
	(cd proj && "$TF" record -q -o testflame-out/run.pb.gz -- ./suite.sh) &&
	expect_eq "$(ls proj/testflame-out)" run.pb.gz "files" &&
	nothing_half_written && next_run_works
'

test_expect_success 'killed while it writes the report: no report, the next one removes what was staged' '
	reset &&
	(cd proj && "$TF" run -q --save --no-publish -- ./suite.sh) &&
	commit && rm -rf proj/testflame-report &&
	under_gdb "break tf_report_write
run
break rename
continue
continue
continue" -- run --no-save --no-publish -- ./suite.sh &&
	[ ! -e proj/testflame-report ] &&
	ls -d proj/testflame-report.tmp.* &&
	STAGED=1 nothing_half_written && next_run_works
'

test_expect_success 'killed while it rewrites a report: the old one stays whole, the next one replaces it' '
	(cd proj && "$TF" run -q --save --no-publish -- ./suite.sh) && commit &&
	(cd proj && "$TF" run -q --no-save --no-publish -- ./suite.sh); rc=$?
	{ [ $rc = 0 ] || [ $rc = 3 ]; } &&
	old=$(md5sum < proj/testflame-report/report.json) &&
	under_gdb "break tf_report_write
run
break rename
continue
continue
continue" -- run --no-save --no-publish -- ./suite.sh &&
	expect_eq "$(md5sum < proj/testflame-report/report.json)" "$old" "report.json" &&
	STAGED=1 nothing_half_written && next_run_works
'

test_expect_success 'killed while it saves the baseline, the ref locked: no ref; once the lock is stale, the next save works' '
	reset &&
	under_gdb "break tf_store_save
run
break git_reference_create_matching
continue
break link
continue" -- run --save --no-publish -- ./suite.sh &&
	r=refs/testflame/runs/$(git -C proj rev-parse HEAD) &&
	! git -C proj rev-parse -q --verify $r &&
	ls proj/.git/$r.lock &&
	# a minute later (writers hold a ref lock for microseconds)
	touch -d "-1 minute" proj/.git/$r.lock &&
	next_run_works
'

test_expect_success 'killed in the middle of a push to a remote on this file system: no ref there or a whole one' '
	reset &&
	(cd proj && "$TF" run -q --save --no-publish -- ./suite.sh) &&
	r=refs/testflame/runs/$(git -C proj rev-parse HEAD) &&
	under_gdb "break tf_store_push
run
break git_reference_create_matching
continue
break link
continue" -- baseline push &&
	git -C remote.git fsck --no-progress &&
	! git -C remote.git rev-parse -q --verify $r &&
	ls remote.git/$r.lock &&
	touch -d "-1 minute" remote.git/$r.lock &&
	(cd proj && "$TF" baseline push) &&
	expect_eq "$(git -C remote.git rev-parse $r)" "$(git -C proj rev-parse $r)" "remote ref" &&
	nothing_half_written
'

if need lighttpd openssl curl && http_start; then
	git init -q --bare srv/proj.git 2>/dev/null || { mkdir -p srv && git init -q --bare srv/proj.git; }
	git -C proj remote add http "$HTTP_URL/proj.git"
	test_expect_success 'killed in the middle of a push over HTTP: the remote has no ref or a whole one' '
		reset &&
		(cd proj && "$TF" run -q --save --no-publish -- ./suite.sh) &&
		r=refs/testflame/runs/$(git -C proj rev-parse HEAD) &&
		TESTFLAME_TOKEN=$HTTP_TOKEN under_gdb "break tf_store_push
run
break git_remote_push
continue
break send
continue
continue" -- baseline push --remote http &&
		git -C srv/proj.git fsck --no-progress &&
		{ ! git -C srv/proj.git rev-parse -q --verify $r >/dev/null ||
		  expect_eq "$(git -C srv/proj.git rev-parse $r)" "$(git -C proj rev-parse $r)" "remote ref"; } &&
		nothing_half_written &&
		(cd proj && TESTFLAME_TOKEN=$HTTP_TOKEN "$TF" baseline push --remote http) &&
		expect_eq "$(git -C srv/proj.git rev-parse $r)" "$(git -C proj rev-parse $r)" "remote ref" &&
		git -C srv/proj.git fsck --no-progress
	'
	http_stop
else
	test_skip "killed in the middle of a push over HTTP" "lighttpd, openssl or curl missing, or lighttpd did not start"
fi

test_done
