#!/usr/bin/env bash
# t0160-valgrind.sh - the main commands under valgrind's memcheck: record
# (sampling a real process tree, symbolizing, writing the run file, the
# messages after it), then show, view and compare of what it wrote. Any
# invalid read or write, use of uninitialised memory or definite leak
# fails the test. (ASan covers the unit tests; these are the paths only
# the command line takes, such as the last message of `record`, which
# once read a string freed with the recording.)
. "$(dirname "$0")/lib.sh"

if ! need valgrind; then
	test_skip "commands under valgrind" "valgrind is not installed"
	test_done
	exit 0
fi
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite)
export TESTFLAME_CACHE_DIR="$SCRATCH/cache"

test_expect_success 'record: a process tree, under memcheck, no error and no leak' '
	"${VG[@]}" "$TF" record -v -o run.pb.gz -- sh -c "\"$FIX/split7030\" 1 & \"$FIX/split7030\" 1; wait" \
		>out 2>err || { cat err; exit 1; }
	expect_contains err "wrote '\''run.pb.gz'\''" &&
	expect_contains err "perf " &&
	! grep -q "^==[0-9]*==" err
'

test_expect_success 'show, view and compare of the run file: no error and no leak' '
	"${VG[@]}" "$TF" show --json run.pb.gz >show.json 2>err1 || { cat err1; exit 1; }
	"${VG[@]}" "$TF" view --format folded -o run.folded run.pb.gz 2>err2 || { cat err2; exit 1; }
	"${VG[@]}" "$TF" compare --report r run.pb.gz run.pb.gz >cmp.txt 2>err3 || { cat err3; exit 1; }
	test -s run.folded && test -s r/report.json &&
	! grep -q "^==[0-9]*==" err1 err2 err3
'

test_done
