#!/usr/bin/env bash
# t4020-compare-errors.sh - `testflame compare` refuses bad input with one
# clear line naming the file or flag, the right exit status (2 usage, 1
# error), no crash and no report written.
. "$(dirname "$0")/lib.sh"

MKPPROF="python3 $TOP/tests/e2e/mkpprof.py"
printf 'main;a 100\n' > a.folded
printf 'T 100 main@m.c:1\n' | $MKPPROF cpu.pb.gz --meta event=cpu-clock
printf 'T 100 main@m.c:1\n' | $MKPPROF ins.pb.gz --type instructions/count --period 1000000 --meta event=instructions
printf 'T 100 main@m.c:1\n' | $MKPPROF wall.pb.gz --meta event=wall

# one line on stderr, starting "testflame: ", plus at most the usage hint
one_error() { # FILE TEXT
	expect_contains "$1" "$2" &&
	test "$(grep -vc '^usage: ' "$1")" = 1 &&
	! test -e testflame-report
}

test_expect_code 2 "an unknown flag is a usage error" '
	"$TF" compare --bogus a.folded a.folded 2> err.txt; rc=$?
	one_error err.txt "testflame: unknown option '\''--bogus'\''" && exit $rc
'

test_expect_code 2 "one operand is a usage error" '
	"$TF" compare a.folded 2> err.txt; rc=$?
	one_error err.txt "missing HEAD" && exit $rc
'

test_expect_code 2 "three operands are a usage error" '
	"$TF" compare a.folded a.folded a.folded 2> err.txt; rc=$?
	one_error err.txt "too many arguments: '\''a.folded'\''" && exit $rc
'

test_expect_code 2 "no operands at all" '
	"$TF" compare 2> err.txt; rc=$?
	one_error err.txt "nothing to compare" && exit $rc
'

test_expect_code 2 "--base without --head" '
	"$TF" compare --base a.folded 2> err.txt; rc=$?
	one_error err.txt "nothing to compare" && exit $rc
'

test_expect_code 2 "a threshold that is not a number" '
	"$TF" compare --threshold lots a.folded a.folded 2> err.txt; rc=$?
	one_error err.txt "--threshold must be a percentage from 0 to below 1000, such as 5 or 2.5%, not '\''lots'\''" && exit $rc
'

test_expect_code 2 "a negative threshold" '
	"$TF" compare --threshold -5 a.folded a.folded 2> err.txt; rc=$?
	one_error err.txt "--threshold must be a percentage from 0 to below 1000" && exit $rc
'

test_expect_code 2 "a least change that is no duration" '
	"$TF" compare --min-delta 1hour a.folded a.folded 2> err.txt; rc=$?
	one_error err.txt "--min-delta must be a duration such as 1ms, 500us or 0, not '\''1hour'\''" && exit $rc
'

test_expect_code 2 "alpha out of range" '
	"$TF" compare --alpha 2 a.folded a.folded 2> err.txt; rc=$?
	one_error err.txt "--alpha must be a number above 0 and at most 0.5, such as 0.05, not '\''2'\''" && exit $rc
'

test_expect_code 1 "a missing file" '
	"$TF" compare a.folded nope.pb.gz 2> err.txt; rc=$?
	one_error err.txt "testflame: cannot open '\''nope.pb.gz'\'': No such file or directory" && exit $rc
'

test_expect_code 1 "a missing --head run" '
	"$TF" compare --base a.folded --head a.folded --head gone.pb.gz 2> err.txt; rc=$?
	one_error err.txt "'\''gone.pb.gz'\''" && exit $rc
'

test_expect_code 1 "an empty file" '
	: > empty.pb.gz
	"$TF" compare a.folded empty.pb.gz 2> err.txt; rc=$?
	one_error err.txt "'\''empty.pb.gz'\'' is empty" && exit $rc
'

test_expect_code 1 "a corrupt pprof" '
	head -c 300 /dev/urandom > junk.pb.gz; printf "\0" >> junk.pb.gz
	"$TF" compare junk.pb.gz a.folded 2> err.txt; rc=$?
	one_error err.txt "junk.pb.gz" && exit $rc
'

test_expect_code 1 "a truncated gzip pprof" '
	head -c 60 cpu.pb.gz > cut.pb.gz
	"$TF" compare cut.pb.gz cpu.pb.gz 2> err.txt; rc=$?
	one_error err.txt "cut.pb.gz" && exit $rc
'

test_expect_code 1 "a folded file with a bad line names the line" '
	printf "main;a 10\nmain;b ten\n" > bad.folded
	"$TF" compare a.folded bad.folded 2> err.txt; rc=$?
	one_error err.txt "bad.folded:2:" && exit $rc
'

test_expect_code 1 "different events: cpu-clock vs instructions, both named" '
	"$TF" compare cpu.pb.gz ins.pb.gz 2> err.txt; rc=$?
	one_error err.txt "cannot compare '\''cpu/nanoseconds'\'' in '\''cpu.pb.gz'\'' with '\''instructions/count'\'' in '\''ins.pb.gz'\''" && exit $rc
'

test_expect_code 1 "the same column, different events in the metadata" '
	"$TF" compare cpu.pb.gz wall.pb.gz 2> err.txt; rc=$?
	one_error err.txt "cannot compare event '\''cpu-clock'\'' in '\''cpu.pb.gz'\'' with event '\''wall'\'' in '\''wall.pb.gz'\''" && exit $rc
'

test_expect_code 1 "folded samples vs a cpu profile" '
	"$TF" compare a.folded cpu.pb.gz 2> err.txt; rc=$?
	one_error err.txt "'\''samples/count'\'' in '\''a.folded'\''" && exit $rc
'

test_expect_success "... which --value samples makes comparable" '
	"$TF" compare --value samples a.folded cpu.pb.gz > out.txt 2> err.txt || test $? = 3
'

test_expect_code 1 "--value naming a type the profile lacks lists what it has" '
	"$TF" compare --value alloc_space cpu.pb.gz cpu.pb.gz 2> err.txt; rc=$?
	one_error err.txt "'\''cpu.pb.gz'\'' has no sample type '\''alloc_space'\'' (it has: samples/count, cpu/nanoseconds)" && exit $rc
'

test_expect_code 1 "--test naming no test" '
	"$TF" compare --test TestNope cpu.pb.gz cpu.pb.gz 2> err.txt; rc=$?
	one_error err.txt "no test '\''TestNope'\'' in the base or the head" && exit $rc
'

test_expect_code 1 "an unwritable report directory" '
	: > file
	"$TF" compare --report file/sub a.folded a.folded > out.txt 2> err.txt; rc=$?
	expect_contains err.txt "file/sub" && test "$(wc -l < err.txt)" = 1 && exit $rc
'

test_expect_success "no temporary file is left next to report.json" '
	"$TF" compare --report r a.folded a.folded > /dev/null 2>&1 &&
	expect_eq "$(ls -A r | tr "\n" " ")" "base.pb.gz codequality.json head.pb.gz index.html junit.xml report.json report.md "
'

test_expect_success "help lists the options" '
	"$TF" help compare > help.txt &&
	expect_contains help.txt "usage: testflame compare [options] BASE HEAD" &&
	expect_contains help.txt "--threshold PCT" &&
	expect_contains help.txt "--base FILE"
'

test_done
