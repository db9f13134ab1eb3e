#!/usr/bin/env bash
# t9110-fault-disk-full.sh - the disk fills up under testflame, on a small
# tmpfs: while it spools the recording (TMPDIR there), while it writes the
# run file, and while it writes the report. Each time the error is one
# clear line, the suite still runs to its end and its exit status comes
# through, and nothing half-written is left on the full file system. Also
# the spool's own limit (TESTFLAME_SPOOL_MAX).
. "$(dirname "$0")/lib.sh"

FULL=$SCRATCH/full
mkdir -p "$FULL"
if ! mount -t tmpfs -o size=1m tmpfs "$FULL" 2>/dev/null; then
	test_skip "a full disk" "mounting a tmpfs was refused (it needs root)"
	test_done
	exit 0
fi
trap 'umount "$FULL" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$SCRATCH"' EXIT

# fill LEAVE_KB: the tmpfs full but for LEAVE_KB kilobytes
fill() {
	rm -f "$FULL/filler"
	head -c $(( $(df -k --output=avail "$FULL" | tail -n 1) * 1024 - $1 * 1024 )) /dev/zero \
		> "$FULL/filler"
}

# A suite of two programs that leaves a mark when it has run to its end.
printf '#!/bin/sh\n"%s/split7030" ${UNITS:-10}\n"%s/threads8" 2 2\n: > "%s/suite.done"\nexit ${STATUS:-0}\n' \
	"$FIX" "$FIX" "$SCRATCH" > suite.sh
chmod +x suite.sh

# one_line FILE: FILE holds exactly one line, an error of testflame's
one_line() {
	expect_eq "$(wc -l < "$1")" 1 "lines of output" &&
	expect_contains "$1" "testflame: "
}

test_expect_success 'the spool fills the disk: one line, the suite runs on, its status comes through' '
	rm -f suite.done && fill 0 &&
	# at 999 Hz the spool passes its 1 MB buffer while the suite runs
	{ TMPDIR=$FULL STATUS=5 "$TF" record --freq 999 -o out/run.pb.gz -- ./suite.sh > err 2>&1; rc=$?; true; } &&
	cat err &&
	expect_eq "$rc" 5 "exit status" &&
	one_line err &&
	expect_contains err "cannot write the spool file in '"'"'$FULL'"'"' (TMPDIR): No space left on device" &&
	expect_contains err "recording stopped, the command ran on to its end (exit status 5)" &&
	[ -e suite.done ] &&
	[ ! -e out/run.pb.gz ] &&
	expect_eq "$(ls -A "$FULL")" filler "left on the full disk"
'

test_expect_success 'the same at the end of a short suite that passes: testflame'"'"'s own error, exit 1' '
	rm -f suite.done && fill 0 &&
	{ TMPDIR=$FULL "$TF" record -o out/run.pb.gz -- ./suite.sh > err 2>&1; rc=$?; true; } &&
	expect_eq "$rc" 1 "exit status" &&
	one_line err && [ -e suite.done ] && [ ! -e out/run.pb.gz ] &&
	expect_eq "$(ls -A "$FULL")" filler "left on the full disk"
'

test_expect_success 'run: the spool fills the disk, the suite fails: its status, and no report' '
	rm -f suite.done && fill 0 &&
	{ TMPDIR=$FULL STATUS=7 "$TF" run --no-save --no-publish --report rep -- ./suite.sh > err 2>&1; rc=$?; true; } &&
	cat err &&
	expect_eq "$rc" 7 "exit status" &&
	expect_contains err "No space left on device" &&
	[ -e suite.done ] && [ ! -e rep ] &&
	expect_eq "$(ls -A "$FULL")" filler "left on the full disk"
'

test_expect_success 'the run file does not fit: one line, the suite status, no file' '
	rm -f "$FULL/filler" && "$TF" record -q -o run.pb.gz -- ./suite.sh &&
	size=$(stat -c %s run.pb.gz) &&
	fill $(( size / 1024 / 2 )) &&
	{ STATUS=4 "$TF" record -o "$FULL/run.pb.gz" -- ./suite.sh > err 2>&1; rc=$?; true; } &&
	cat err &&
	expect_eq "$rc" 4 "exit status" &&
	one_line err &&
	expect_contains err "No space left on device" &&
	expect_eq "$(ls -A "$FULL")" filler "left on the full disk"
'

test_expect_success 'the report does not fit: one line, exit 1, no report' '
	rm -f "$FULL/filler" &&
	"$TF" compare run.pb.gz run.pb.gz --report big >/dev/null 2>&1 &&
	fill $(( $(du -sk big | cut -f1) / 3 )) &&
	{ "$TF" compare run.pb.gz run.pb.gz --report "$FULL/rep" > err 2>&1; rc=$?; true; } &&
	cat err &&
	expect_eq "$rc" 1 "exit status" &&
	one_line err &&
	expect_contains err "No space left on device" &&
	expect_eq "$(ls -A "$FULL")" filler "left on the full disk"
'

test_expect_success 'a report that does not fit over an old one: the old one stays whole' '
	rm -f "$FULL/filler" &&
	"$TF" compare run.pb.gz run.pb.gz --report "$FULL/rep" >/dev/null 2>&1 &&
	old=$(cd "$FULL/rep" && md5sum *) &&
	fill $(( $(du -sk big | cut -f1) / 3 )) &&
	{ "$TF" compare run.pb.gz run.pb.gz --report "$FULL/rep" > err 2>&1; rc=$?; true; } &&
	expect_eq "$rc" 1 "exit status" && one_line err &&
	expect_eq "$(cd "$FULL/rep" && md5sum *)" "$old" "the old report" &&
	expect_eq "$(ls -A "$FULL" | tr "\n" " ")" "filler rep " "left on the full disk"
'

test_expect_success 'the spool reaches TESTFLAME_SPOOL_MAX: one line naming it, the suite runs on' '
	rm -f suite.done "$FULL/filler" &&
	{ TESTFLAME_SPOOL_MAX=1M STATUS=6 UNITS=30 "$TF" record --call-graph dwarf -o out/run.pb.gz -- ./suite.sh \
		> err 2>&1; rc=$?; true; } &&
	cat err &&
	expect_eq "$rc" 6 "exit status" &&
	one_line err &&
	expect_contains err "the recording reached the spool'"'"'s limit, 1 MiB (TESTFLAME_SPOOL_MAX)" &&
	[ -e suite.done ] && [ ! -e out/run.pb.gz ]
'

test_expect_code 2 'a TESTFLAME_SPOOL_MAX that is not a size is a usage error' '
	TESTFLAME_SPOOL_MAX=lots "$TF" record -o out/run.pb.gz -- ./suite.sh > err 2>&1; rc=$?
	cat err && one_line err &&
	expect_contains err "TESTFLAME_SPOOL_MAX=" && exit $rc
'

# The allocation sampler's files (about 1 MiB a process, kept until the
# suite ends) fill a small TMPDIR: the processes that found no room are
# not counted, and the run's notes say so; the suite runs on.
test_expect_success 'the allocation sampler fills TMPDIR: said in the notes, the suite runs on, its status comes through' '
	rm -f suite.done "$FULL/filler" && umount "$FULL" &&
	mount -t tmpfs -o size=6m tmpfs "$FULL" &&
	ln -sf "$FIX/memsuite" steady1 &&
	printf "#!/bin/sh\ni=0\nwhile [ \$i -lt 12 ]; do \"%s/steady1\" base >/dev/null || exit 1; i=\$((i+1)); done\n: > \"%s/suite.done\"\nexit 7\n" \
		"$SCRATCH" "$SCRATCH" > memloop.sh && chmod +x memloop.sh &&
	{ TMPDIR=$FULL "$TF" record -q --memory -o out/mem.pb.gz -- ./memloop.sh > err 2>&1; rc=$?; true; } &&
	cat err && expect_eq "$rc" 7 "exit status" && [ -e suite.done ] &&
	"$TF" show out/mem.pb.gz > mem.txt &&
	expect_contains mem.txt "TMPDIR ('"'"'$FULL'"'"') ran out of room for the allocation sampler'"'"'s files" &&
	[ -z "$(ls -A "$FULL")" ]
'

test_done
