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
. "$TOP/tests/e2e/lib-go.sh"
have_browser() { need node && [ -x /usr/bin/chromium ] && [ -d "$NODE_DIR/node_modules/playwright-core" ]; }
GO_ROUNDS=150000000

test_expect_success "build both versions and profile their tests" '
	go_pkg v1 1 && go_pkg v2 3 &&
	(cd v1 && go test -c -o ../v1.test) && (cd v2 && go test -c -o ../v2.test) &&
	TF_LABELS=1 ./v1.test -test.count=1 -test.cpuprofile="$SCRATCH/v1.pb.gz" > /dev/null &&
	TF_LABELS=1 ./v2.test -test.count=1 -test.cpuprofile="$SCRATCH/v2.pb.gz" > /dev/null
'

test_expect_code 3 "compare --report on the Go profiles: TestEncode regressed" '
	"$TF" compare --suite tfwork --report r v1.pb.gz v2.pb.gz > table.txt
'

test_expect_success "report.md: Encode on top, at its line in work.go" '
	cat table.txt &&
	expect_eq "$(jget r/report.json "[t[\"verdict\"] for t in d[\"tests\"] if t[\"name\"] == \"TestEncode\"][0]")" regressed &&
	line=$(jget r/report.json "[t for t in d[\"tests\"] if t[\"name\"] == \"TestEncode\"][0][\"functions\"][0][\"line\"]") &&
	test "$line" -ge 6 && test "$line" -le 11 &&
	expect_contains r/report.md "<code>TestEncode</code>" &&
	grep -F "| <code>example.com/tfwork.Encode</code> | +" r/report.md | grep -qF "<code>work.go:$line</code>"
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
