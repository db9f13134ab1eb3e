#!/usr/bin/env bash
# t0900-attribute.sh - per-test attribution on real suites: six tests where
# test k burns k units of CPU in its own function must each be found, named
# as the framework names them, and hold k/21 of the samples (±3 points):
# by processes (ctest), frames (Go testing, GoogleTest, cmocka, Check,
# Criterion) and
# markers (pytest with the contrib plugin, C header, shell helper).
. "$(dirname "$0")/lib.sh"
SUITES=$TOP/tests/fixtures/suites
SIX="1 2 3 4 5 6"

test_expect_shares 'processes: a ctest suite, tests named by ctest' '
	cmake -S "$SUITES" -B ct -DCMAKE_BUILD_TYPE=Debug >/dev/null &&
	cmake --build ct >/dev/null &&
	(cd ct && "$TF" record -q --freq 4999 -o ../ctest.pb.gz -- ctest >/dev/null) &&
	expect_shares ctest.pb.gz 3 burn_1:1 burn_2:2 burn_3:3 burn_4:4 burn_5:5 burn_6:6
'

test_expect_success 'processes: a script is named by its arguments, a short program by its executable' '
	printf "x = 0\nfor i in range(300000):\n    x += i\n" >first_script.py &&
	cp first_script.py second_script.py &&
	printf "int main(void) { return 0; }\n" >p.c &&
	cc -o a_program_with_a_long_name p.c &&
	printf "python3 first_script.py\n./a_program_with_a_long_name\npython3 second_script.py\n" >scripts.sh &&
	"$TF" record -q -o scripts.pb.gz -- sh scripts.sh &&
	"$TF" show scripts.pb.gz | sed -n "/^Tests/,/^\$/p" >scripts.txt &&
	grep -q "^  first_script.py " scripts.txt &&
	grep -q "^  second_script.py " scripts.txt &&
	grep -q "^  a_program_with_a_long_name " scripts.txt &&
	! grep -q "^  python3 " scripts.txt
'

test_expect_success 'processes: the build is reported apart, never a test' '
	rm -rf ct2 && cmake -S "$SUITES" -B ct2 >/dev/null &&
	"$TF" record -q --freq 999 -o build.pb.gz -- cmake --build ct2 >/dev/null &&
	test "$(test_samples build.pb.gz "[build]")" -gt 0 &&
	go tool pprof -comments build.pb.gz 2>/dev/null | grep "testflame.test\." >tests.txt &&
	! grep -v "testflame.test.\[build\]=" tests.txt | grep -qv "source=command"
'

if need go; then
test_expect_shares 'frames: go test (no symbols: Go'\''s pclntab), tests named by the function testing.tRunner calls, a subtest'\''s closure by its test' '
	mkdir -p gomod && cp "$SUITES/burn_test.go" gomod/ &&
	(cd gomod && printf "module burn\n\ngo 1.19\n" >go.mod &&
	 GOCACHE=$GO_CACHE GOPATH=$SCRATCH/gopath GOFLAGS=-mod=mod \
		"$TF" record -q --freq 4999 -o ../go.pb.gz -- go test -count=1 . >/dev/null) &&
	expect_shares go.pb.gz 3 TestBurn1:1 TestBurn2:2 TestBurn3:3 TestBurn4:4 TestBurn5:5 TestBurn6:6 &&
	test "$(test_samples go.pb.gz TestSub)" -gt 0 &&
	test "$(test_samples go.pb.gz TestSub.func1)" = 0 &&
	test "$(test_samples go.pb.gz TestSub/func1)" = 0 &&
	test "$(test_samples go.pb.gz runTests.func1)" = 0 &&
	test "$(test_samples go.pb.gz "[build]")" -gt 0
'
else
test_skip 'frames: go test' 'go is not installed'
fi

test_expect_shares 'frames: GoogleTest, tests named Suite.Name' '
	g++ -O1 -g -fno-omit-frame-pointer -I"$SUITES" -o gt "$SUITES/gtest_burn.cc" \
		-lgtest -lgtest_main -pthread &&
	"$TF" record -q --freq 4999 -o gtest.pb.gz -- ./gt >/dev/null &&
	expect_shares gtest.pb.gz 3 Burn.One:1 Burn.Two:2 Burn.Three:3 Burn.Four:4 Burn.Five:5 Burn.Six:6
'

test_expect_shares 'frames: cmocka, tests named by their function' '
	cc -O1 -g -fno-omit-frame-pointer -I"$SUITES" -o cm "$SUITES/cmocka_burn.c" -lcmocka &&
	"$TF" record -q --freq 4999 -o cmocka.pb.gz -- ./cm >/dev/null 2>&1 &&
	expect_shares cmocka.pb.gz 4 test_burn_1:1 test_burn_2:2 test_burn_3:3
'

test_expect_shares 'frames: Check (a process per test), tests named by START_TEST' '
	cc -O1 -g -fno-omit-frame-pointer -I"$SUITES" -o ck "$SUITES/check_burn.c" \
		$(pkg-config --cflags --libs check) &&
	"$TF" record -q --freq 4999 -o check.pb.gz -- ./ck &&
	expect_shares check.pb.gz 4 burn_one:1 burn_two:2 burn_three:3
'

test_expect_shares 'frames: Criterion (worker processes), tests named by Test(suite, name)' '
	cat >crit.c <<-\EOF &&
	#include <criterion/criterion.h>
	#include "burn.h"
	Test(burn, one) { burn_units(1); }
	Test(burn, two) { burn_units(2); }
	Test(burn, three) { burn_units(3); }
	EOF
	cc -O1 -g -fno-omit-frame-pointer -I"$SUITES" -o crit crit.c -lcriterion &&
	"$TF" record -q --freq 4999 -o crit.pb.gz -- ./crit >/dev/null 2>&1 &&
	expect_shares crit.pb.gz 4 burn_one:1 burn_two:2 burn_three:3
'

if /usr/bin/python3 -c "import pytest" 2>/dev/null; then
# Python's loop speed on this VM wanders by up to 30% between tests a few
# tenths of a second apart (the same unit of work measured 400 to 640 ms of
# CPU), and a runner's wall times move with the machine's load too, so each
# test's share is checked against the CPU time its own work took (measured
# in the test, BURN_CPU): what is tested is that every sample lands in its
# own test.
test_expect_shares 'markers: pytest with the contrib plugin, tests named by node id' '
	cp "$SUITES/test_burn.py" . && rm -f burn-cpu &&
	BURN_CPU=$PWD/burn-cpu PYTHONPATH="$TOP/contrib" "$TF" record -q --freq 4999 -o py.pb.gz -- \
		/usr/bin/python3 -m pytest -q -p pytest_testflame -p no:cacheprovider test_burn.py >/dev/null &&
	set -- $(awk "{ print \"test_burn.py::test_burn_\" \$1 \":\" \$2 }" burn-cpu) && test $# = 6 &&
	expect_shares py.pb.gz 4 "$@"
'
else
test_skip 'markers: pytest' 'python3-pytest is not installed'
fi

test_expect_shares 'markers: the C header, per thread, over other sources' '
	cat >mk.c <<-\EOF &&
	#include "testflame.h"
	#include "burn.h"
	int main(void) {
		TESTFLAME_BEGIN("alpha"); burn_units(1); TESTFLAME_END("alpha");
		TESTFLAME_BEGIN("beta with spaces"); burn_units(3); TESTFLAME_END("beta with spaces");
		return 0;
	}
	EOF
	cc -O1 -g -I"$TOP/contrib" -I"$SUITES" -o mk mk.c &&
	"$TF" record -q --freq 4999 -o mk.pb.gz -- ./mk &&
	expect_shares mk.pb.gz 4 alpha:1 "beta with spaces:3"
'

test_expect_shares 'markers: the shell helper covers the commands a shell runs' '
	cc -O1 -g -I"$SUITES" -o bk "$SUITES/burnk.c" &&
	cat >suite.sh <<-EOF &&
	. "$TOP/contrib/testflame.sh"
	testflame_begin small; ./bk 1; testflame_end small
	testflame_begin large; ./bk 2; testflame_end large
	EOF
	"$TF" record -q --freq 4999 -o sh.pb.gz -- sh suite.sh &&
	expect_shares sh.pb.gz 4 small:1 large:2
'

test_expect_success '--split processes ignores markers; --split none gives one test' '
	"$TF" record -q --freq 999 --split processes -o sp.pb.gz -- sh suite.sh &&
	test "$(test_samples sp.pb.gz bk)" -gt 0 && test "$(test_samples sp.pb.gz small)" = 0 &&
	"$TF" record -q --freq 999 --split none --test whole -o sn.pb.gz -- sh suite.sh &&
	test "$(test_samples sn.pb.gz whole)" -gt 0 && test "$(test_samples sn.pb.gz bk)" = 0
'

test_expect_code 2 'an unknown --split source is a usage error' '
	"$TF" record --split bogus -- true
'

test_done
