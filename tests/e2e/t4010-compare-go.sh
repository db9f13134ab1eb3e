#!/usr/bin/env bash
# t4010-compare-go.sh - `testflame compare` on real Go CPU profiles
# (`go test -cpuprofile`): a small package built twice, the second time with
# one function four times slower, one test removed and one added. Plain
# profiles are one test ("all"); with pprof.Do labels ("test") the tests
# are told apart. Checks the verdicts, the function that grew with its
# file:line, that repeated runs use the per-run test, and that unchanged
# code does not false-alarm.
. "$(dirname "$0")/lib.sh"

. "$TOP/tests/e2e/lib-go.sh"

test_expect_success "build version 1 and version 2 (Encode 4x slower, TestOld -> TestFresh)" '
	go_pkg v1 1 Old && go_pkg v2 4 Fresh &&
	(cd v1 && go test -c -o ../v1.test) &&
	(cd v2 && go test -c -o ../v2.test)
'

# plain runs: TestEncode only (the code that changed, 4x); labelled: all tests
profile() { # BINARY OUT [labels]
	if [ -n "${3:-}" ]; then
		TF_LABELS=1 "./$1" -test.count=1 -test.cpuprofile="$SCRATCH/$2" > /dev/null
	else
		"./$1" -test.count=1 -test.run "^TestEncode\$" -test.cpuprofile="$SCRATCH/$2" > /dev/null
	fi
}

test_expect_success "profile: plain and labelled runs of both versions" '
	profile v1.test v1-a.pb.gz && profile v1.test v1-b.pb.gz && profile v1.test v1-c.pb.gz &&
	profile v2.test v2-a.pb.gz && profile v2.test v2-b.pb.gz && profile v2.test v2-c.pb.gz &&
	profile v1.test v1-lab.pb.gz 1 && profile v2.test v2-lab.pb.gz 1 &&
	go tool pprof -top v2-a.pb.gz > top.txt 2>&1 &&
	expect_contains top.txt "work.Encode"
'

test_expect_code 3 "plain Go profiles: the slower version regresses (exit 3)" '
	"$TF" compare --report plain v1-a.pb.gz v2-a.pb.gz > out.txt
'

test_expect_success "... as one test, with Encode at its loop in work.go on top" '
	cat out.txt &&
	expect_eq "$(jget plain/report.json "d[\"tests\"][0][\"name\"]")" all &&
	expect_eq "$(jget plain/report.json "d[\"tests\"][0][\"verdict\"]")" regressed &&
	expect_eq "$(jget plain/report.json "d[\"event\"]")" cpu &&
	expect_eq "$(jget plain/report.json "d[\"unit\"]")" nanoseconds &&
	expect_eq "$(jget plain/report.json "d[\"tests\"][0][\"functions\"][0][\"name\"]")" example.com/tfwork.Encode &&
	f=$(jget plain/report.json "d[\"tests\"][0][\"functions\"][0][\"file\"]") &&
	expect_eq "$f" "$SCRATCH/v2/work.go" &&
	line=$(jget plain/report.json "d[\"tests\"][0][\"functions\"][0][\"line\"]") &&
	test "$line" -ge 8 && test "$line" -le 11 &&
	grep -E "example.com/tfwork.Encode  work.go:$line\$" out.txt
'

test_expect_success "... and Encode grew by about 3x its base cost (4x the work; a noisy machine, few samples)" '
	d=$(jget plain/report.json "d[\"tests\"][0][\"functions\"][0][\"delta_self\"] / d[\"tests\"][0][\"functions\"][0][\"base_self\"]") &&
	expect_near "$d" 3.5 2.5 "Encode self growth"
'

test_expect_success "two runs of the same binary: no regression" '
	"$TF" compare --report same v1-a.pb.gz v1-b.pb.gz > out.txt &&
	expect_contains out.txt "no regression"
'

# (--threshold 10: "unchanged" needs 100/threshold samples per test, and a
# fast machine may take fewer than 20 samples of a test here; the samples
# outside every pprof.Do, the runtime's and the harness's, may be a fourth
# test when there are enough of them)
test_expect_success "a Go profile against itself: every test unchanged" '
	"$TF" compare --threshold 10 --report self v1-lab.pb.gz v1-lab.pb.gz > out.txt &&
	python3 -c "
import json
r = json.load(open(\"self/report.json\"))
named = sorted(t[\"name\"] for t in r[\"tests\"] if t[\"name\"].startswith(\"Test\"))
assert named == [\"TestEncode\", \"TestOld\", \"TestParse\"], named
assert len(r[\"tests\"]) <= 4, [t[\"name\"] for t in r[\"tests\"]]
v = [(t[\"name\"], t[\"verdict\"]) for t in r[\"tests\"]]
assert all(x == \"unchanged\" for n, x in v if n.startswith(\"Test\")), v
assert not [x for n, x in v if x in (\"regressed\", \"improved\")], v
"
'

test_expect_code 3 "labelled Go profiles: per-test verdicts" '
	"$TF" compare --report lab v1-lab.pb.gz v2-lab.pb.gz > out.txt
'

test_expect_success "... TestEncode regressed, TestParse did not, TestOld gone, TestFresh new" '
	cat out.txt &&
	expect_eq "$(verdict lab/report.json TestEncode)" regressed &&
	test "$(verdict lab/report.json TestParse)" != regressed &&
	expect_eq "$(verdict lab/report.json TestOld)" gone &&
	expect_eq "$(verdict lab/report.json TestFresh)" new &&
	expect_eq "$(jget lab/report.json "d[\"summary\"][\"regressed\"]")" 1
'

test_expect_code 3 "three runs per side: Welch on the per-run costs" '
	"$TF" compare --report runs --base v1-a.pb.gz --base v1-b.pb.gz --base v1-c.pb.gz \
		--head v2-a.pb.gz --head v2-b.pb.gz --head v2-c.pb.gz > out.txt
'

test_expect_success "... regressed, with runs and method in report.json" '
	expect_eq "$(jget runs/report.json "d[\"tests\"][0][\"method\"]")" welch &&
	expect_eq "$(jget runs/report.json "d[\"base\"][\"runs\"]")" 3 &&
	expect_eq "$(jget runs/report.json "d[\"tests\"][0][\"head\"][\"runs\"]")" 3 &&
	expect_eq "$(jget runs/report.json "d[\"tests\"][0][\"verdict\"]")" regressed &&
	expect_contains out.txt "3 base runs vs 3 head runs"
'

test_expect_success "three runs of the same binary per side: no regression" '
	"$TF" compare --report runs-same --base v1-a.pb.gz --base v1-b.pb.gz --base v1-c.pb.gz \
		--head v1-c.pb.gz --head v1-a.pb.gz --head v1-b.pb.gz > out.txt &&
	expect_contains out.txt "no regression"
'

test_expect_success "go tool pprof agrees on the direction" '
	go tool pprof -top -diff_base=v1-a.pb.gz v2-a.pb.gz > diff.txt 2>&1 &&
	grep -E "^ +[0-9.]+m?s .*example.com/tfwork.Encode" diff.txt
'

test_done
