#!/usr/bin/env bash
# t6040-report-go.sh - the report of real profiles: a Go package built
# twice (the second time with Encode three times slower), its tests run
# with `go test -cpuprofile` and pprof labels naming each test, compared
# with `testflame compare --report`. The comment names the function at its
# line in work.go, the page in Chromium agrees with report.json and shows
# the Go call chain above Encode in the sandwich view, the SVG and JUnit
# files are read by xmllint and a JUnit reader.
. "$(dirname "$0")/lib.sh"

NODE_DIR=$TOP/tests/node
if ! need go; then
	test_skip "report of Go profiles" "go is not installed (golang-go)"
	test_done
	exit 0
fi
have_browser() { need node && [ -x /usr/bin/chromium ] && [ -d "$NODE_DIR/node_modules/playwright-core" ]; }
export GOCACHE="$SCRATCH/gocache" GOPATH="$SCRATCH/gopath" GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on
jget() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$1" "$2"; }

make_pkg() { # DIR ENCODE_FACTOR
	mkdir -p "$1" && printf 'module example.com/tfwork\n\ngo 1.19\n' > "$1/go.mod"
	cat > "$1/work.go" <<-EOF
	package work

	//go:noinline
	func Encode(n int) uint64 {
		x := uint64(88172645463325252)
		for i := 0; i < n*$2; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		return x
	}

	//go:noinline
	func Parse(n int) uint64 {
		x := uint64(2463534242)
		for i := 0; i < n; i++ {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
		}
		return x
	}
	EOF
	cat > "$1/work_test.go" <<-'EOF'
	package work

	import (
		"context"
		"runtime/pprof"
		"testing"
	)

	const rounds = 150000000

	var sink uint64

	func run(t *testing.T, f func()) {
		pprof.Do(context.Background(), pprof.Labels("test", t.Name()), func(context.Context) { f() })
	}

	func TestEncode(t *testing.T) { run(t, func() { sink += Encode(rounds) }) }
	func TestParse(t *testing.T)  { run(t, func() { sink += Parse(rounds) }) }
	EOF
}

test_expect_success "build both versions and profile their tests" '
	make_pkg v1 1 && make_pkg v2 3 &&
	(cd v1 && go test -c -o ../v1.test) && (cd v2 && go test -c -o ../v2.test) &&
	./v1.test -test.count=1 -test.cpuprofile="$SCRATCH/v1.pb.gz" > /dev/null &&
	./v2.test -test.count=1 -test.cpuprofile="$SCRATCH/v2.pb.gz" > /dev/null
'

test_expect_code 3 "compare --report on the Go profiles: TestEncode regressed" '
	"$TF" compare --suite tfwork --report r v1.pb.gz v2.pb.gz > table.txt
'

test_expect_success "report.md: Encode on top, at its line in work.go" '
	cat table.txt &&
	expect_eq "$(jget r/report.json "[t[\"verdict\"] for t in d[\"tests\"] if t[\"name\"] == \"TestEncode\"][0]")" regressed &&
	line=$(jget r/report.json "[t for t in d[\"tests\"] if t[\"name\"] == \"TestEncode\"][0][\"functions\"][0][\"line\"]") &&
	test "$line" -ge 4 && test "$line" -le 9 &&
	expect_contains r/report.md "<code>TestEncode</code>" &&
	grep -F "| <code>example&#46;com/tfwork&#46;Encode</code> | +" r/report.md | grep -qF "<code>work&#46;go&#58;$line</code>"
'

test_expect_success "the page in Chromium: rows equal report.json; Encode sandwiched under the Go test runner" '
	if ! have_browser; then echo "skipped: no node/chromium"; exit 0; fi
	node "$NODE_DIR/report-check.mjs" r/index.html --json r/report.json --test TestEncode \
		--hover example.com/tfwork.Encode --sandwich example.com/tfwork.Encode --screenshot go.png \
		> page.txt 2> page.err || { cat page.err; false; } &&
	# Unlabelled samples of the Go runtime (GC, scheduler) may form an
	# [unattributed] row in either profile; every row must still match.
	ntests=$(jget r/report.json "len(d[\"tests\"])") &&
	test "$ntests" -ge 2 &&
	expect_contains page.txt "rows match report.json: $ntests" &&
	expect_contains page.txt "functions match report.json:" &&
	grep "^callers " page.txt | grep -q "testing.tRunner" &&
	grep "^callers " page.txt | grep -q "example.com/tfwork.TestEncode" &&
	grep -q "^tip example.com/tfwork.Encode / .*/v2/work.go\(:[0-9]*\)\? / head " page.txt
'

test_expect_success "SVG, JUnit and Code Quality of real profiles" '
	xmllint --noout r/TestEncode.svg r/junit.xml &&
	expect_contains r/TestEncode.svg "example.com/tfwork.Encode" &&
	expect_eq "$(jget r/codequality.json "d[0][\"location\"][\"path\"].endswith(\"v2/work.go\")")" True &&
	if need node && [ -d "$NODE_DIR/node_modules/test-results-parser" ]; then
		node "$NODE_DIR/junit-check.mjs" r/junit.xml > junit.txt &&
		expect_contains junit.txt "\"status\":\"FAIL\",\"name\":\"TestEncode\""
	fi
'

test_done
