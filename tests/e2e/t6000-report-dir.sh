#!/usr/bin/env bash
# t6000-report-dir.sh - `testflame compare --report DIR` writes the report
# directory of SPEC §6 from run files with known counts, and every file
# says the same as report.json: the comment's headline, table, functions
# and links (GitHub and GitLab layouts, from the runs' metadata), the
# marker; JUnit read by a JUnit reader; Code Quality with fingerprints
# that survive a rerun with other numbers; the SVG tooltips; the folded
# diffs' exact values; the copies of the runs. A run without changes still
# gets a comment that says so.
. "$(dirname "$0")/lib.sh"

MKPPROF="python3 $TOP/tests/e2e/mkpprof.py"
NODE_DIR=$TOP/tests/node
have_node() { need node && [ -d "$NODE_DIR/node_modules/test-results-parser" ]; }

labelled_specs
B=1111111111111111111111111111111111111111
H=2222222222222222222222222222222222222222

test_expect_code 3 "compare --report writes the directory and exits 3 on the regression" '
	$MKPPROF base.pb.gz --meta event=cpu-clock --meta commit=$B < base.spec &&
	$MKPPROF head.pb.gz --meta event=cpu-clock --meta commit=$H --meta ci=github \
		--meta repository=acme/widgets --meta suite=unit < head.spec &&
	"$TF" compare --report out base.pb.gz head.pb.gz > table.txt 2> err.txt
'

test_expect_success "the directory holds the files of SPEC §6, and nothing half-written" '
	expect_eq "$(ls out | tr "\n" " ")" "TestEncode.folded TestEncode.svg TestFresh.folded TestFresh.svg TestOld.folded TestOld.svg base.pb.gz codequality.json head.pb.gz index.html junit.xml report.json report.md " &&
	expect_contains err.txt "wrote out/report.json and the report" &&
	expect_contains table.txt "report: out/index.html"
'

test_expect_success "report.md: marker first, headline, the changed tests, the grown functions" '
	f=out/report.md &&
	expect_eq "$(head -n 1 $f)" "<!-- testflame:report suite=unit -->" &&
	expect_contains $f "**🔺 1 of 4 tests regressed** · 1 new · 1 gone · 1 unchanged" &&
	expect_contains $f "Baseline [<code>111111111111</code>](https://github.com/acme/widgets/commit/$B)" &&
	expect_contains $f "head [<code>222222222222</code>](https://github.com/acme/widgets/commit/$H)" &&
	expect_contains $f "| 🔺 regressed | <code>TestEncode</code> | 20.0 s | 30.0 s | **+50.0%** |" &&
	expect_contains $f "| 🆕 new | <code>TestFresh</code> | - | 3.00 s | - | - |" &&
	expect_contains $f "| ➖ gone | <code>TestOld</code> | 5.00 s | - | - | - |" &&
	expect_not_contains $f "TestParse" &&
	expect_contains $f "<details open><summary>🔺 <code>TestEncode</code> +50.0% (20.0 s → 30.0 s)" &&
	expect_contains $f "| <code>loop</code> | +10.0 s | +10.0 s | 10.0 s → 20.0 s | [<code>enc.go:45</code>](https://github.com/acme/widgets/blob/$H/enc.go#L45) |"
'

test_expect_success "report.md rendered as GitHub does: two tables, the links, nothing else" '
	if ! have_node || [ ! -x /usr/bin/chromium ]; then echo "skipped: no node/chromium"; exit 0; fi
	node "$NODE_DIR/md-check.mjs" out/report.md > md.txt &&
	expect_contains md.txt "marker unit" &&
	expect_contains md.txt "table 0 rows=3 cells=6" &&
	expect_contains md.txt "table 1 rows=1 cells=5" && # loop alone: encode and main only pass it on
	expect_contains md.txt "link \"enc.go:45\" https://github.com/acme/widgets/blob/$H/enc.go#L45" &&
	expect_contains md.txt "bad elements none"
'

test_expect_success "GitLab runs link in the GitLab layout; --suite names the marker" '
	$MKPPROF glhead.pb.gz --meta event=cpu-clock --meta commit=$H --meta ci=gitlab \
		--meta repository=group/sub/proj < head.spec &&
	{ "$TF" compare --suite "my suite" --report gl base.pb.gz glhead.pb.gz > /dev/null 2>&1; test $? = 3; } &&
	expect_eq "$(head -n 1 gl/report.md)" "<!-- testflame:report suite=my%20suite -->" &&
	expect_contains gl/report.md "(https://gitlab.com/group/sub/proj/-/blob/$H/enc.go#L45)" &&
	expect_contains gl/report.md "(https://gitlab.com/group/sub/proj/-/commit/$B)"
'

test_expect_success "without a repository: no links, the run files named instead of commits" '
	$MKPPROF plainb.pb.gz < base.spec && $MKPPROF plainh.pb.gz < head.spec &&
	{ "$TF" compare --report pl plainb.pb.gz plainh.pb.gz > /dev/null 2>&1; test $? = 3; } &&
	expect_not_contains pl/report.md "](http" &&
	expect_contains pl/report.md "Baseline <code>plainb.pb.gz</code>" &&
	expect_eq "$(head -n 1 pl/report.md)" "<!-- testflame:report suite=tests -->"
'

test_expect_success "junit.xml: one testcase per test with its time, the regression a failure" '
	xmllint --noout out/junit.xml &&
	expect_contains out/junit.xml "<testsuite name=\"unit\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\"" &&
	expect_contains out/junit.xml "<testcase name=\"TestEncode\" classname=\"unit\" time=\"30.000\">" &&
	expect_contains out/junit.xml "<failure type=\"performance-regression\" message=\"regressed +50.0% cpu-clock: 20.0 s -&gt; 30.0 s" &&
	expect_contains out/junit.xml "loop: self +10.0 s, total +10.0 s at enc.go:45" &&
	if have_node; then
		node "$NODE_DIR/junit-check.mjs" out/junit.xml > junit.txt &&
		expect_contains junit.txt "failed 1" &&
		expect_contains junit.txt "skipped 1" &&
		expect_contains junit.txt "\"status\":\"FAIL\",\"name\":\"TestEncode\",\"duration\":30000" &&
		expect_contains junit.txt "\"status\":\"SKIP\",\"name\":\"TestOld\"" &&
		expect_contains junit.txt "\"status\":\"PASS\",\"name\":\"TestParse\",\"duration\":20000"
	fi
'

test_expect_success "codequality.json: the function whose own cost grew, at its line" '
	expect_eq "$(jget out/codequality.json "len(d)")" 1 &&
	expect_eq "$(jget out/codequality.json "d[0][\"location\"][\"path\"]")" enc.go &&
	expect_eq "$(jget out/codequality.json "d[0][\"location\"][\"lines\"][\"begin\"]")" 45 &&
	expect_eq "$(jget out/codequality.json "d[0][\"severity\"]")" critical &&
	expect_eq "$(jget out/codequality.json "d[0][\"check_name\"]")" testflame-regression &&
	expect_contains out/codequality.json "Test TestEncode regressed +50.0%; loop grew by +10.0 s self, +10.0 s total"
'

test_expect_success "fingerprints stay when only the numbers change, differ per suite" '
	sed "s/^TestEncode 2000/TestEncode 1500/" head.spec > head2.spec &&
	$MKPPROF head2.pb.gz --meta event=cpu-clock --meta suite=unit < head2.spec &&
	{ "$TF" compare --report again base.pb.gz head2.pb.gz > /dev/null 2>&1; test $? = 3; } &&
	expect_eq "$(jget again/codequality.json "d[0][\"fingerprint\"]")" "$(jget out/codequality.json "d[0][\"fingerprint\"]")" &&
	expect_eq "$(jget again/codequality.json "d[0][\"severity\"]")" major &&
	test "$(jget gl/codequality.json "d[0][\"fingerprint\"]")" != "$(jget out/codequality.json "d[0][\"fingerprint\"]")"
'

test_expect_success "the SVG of the regressed test: well-formed, its tooltips carry base, head and delta" '
	xmllint --noout out/*.svg &&
	expect_contains out/TestEncode.svg "Diff flame graph: TestEncode" &&
	expect_contains out/TestEncode.svg "base 20.0 s, head 30.0 s (+50.0%)" &&
	expect_contains out/TestEncode.svg "<title>loop (enc.go:1)
head 20.0 s (66.67%), base 10.0 s (50.00%)
delta +10.0 s (+100.0%)" &&
	expect_contains out/TestOld.svg "No samples in the head"
'

test_expect_success "folded diffs: exact base and head per stack of the test" '
	expect_eq "$(cat out/TestEncode.folded)" "main;encode;copy 10000000000 10000000000
main;encode;loop 10000000000 20000000000" &&
	expect_eq "$(cat out/TestFresh.folded)" "main;fresh 0 3000000000"
'

test_expect_success "base.pb.gz and head.pb.gz hold the runs compared" '
	"$TF" view --format folded base.pb.gz > a.txt && "$TF" view --format folded out/base.pb.gz > b.txt &&
	cmp a.txt b.txt &&
	"$TF" view --format folded head.pb.gz > a.txt && "$TF" view --format folded out/head.pb.gz > b.txt &&
	cmp a.txt b.txt &&
	"$TF" show out/head.pb.gz > show.txt && expect_contains show.txt "$H"
'

test_expect_success "no change: the comment still comes, and says so" '
	"$TF" compare --report same base.pb.gz base.pb.gz > /dev/null 2>&1 &&
	expect_contains same/report.md "**✅ No regressions in 3 tests** · 3 unchanged" &&
	expect_not_contains same/report.md "<table" &&
	expect_not_contains same/report.md "<details" &&
	expect_eq "$(ls same/*.svg 2>/dev/null | wc -l)" 0 &&
	expect_eq "$(jget same/codequality.json "len(d)")" 0 &&
	expect_contains same/junit.xml "failures=\"0\""
'

test_expect_success "--colorblind reaches the page" '
	{ "$TF" compare --colorblind --report cb base.pb.gz head.pb.gz > /dev/null 2>&1; test $? = 3; } &&
	expect_contains cb/index.html "\"colorblind\":true" &&
	expect_contains out/index.html "\"colorblind\":false"
'

test_expect_success "an unwritable report directory: one clear line, exit 1, the table is not printed" '
	mkdir ro && touch ro/file &&
	{ "$TF" compare --report ro/file/sub base.pb.gz head.pb.gz > o.txt 2> e.txt; test $? = 1; } &&
	test "$(wc -l < e.txt)" = 1 &&
	expect_contains e.txt "ro/file" &&
	test ! -s o.txt
'

test_expect_success "a report directory is replaced whole: an older report's files go, no staging left" '
	{ "$TF" compare --report whole base.pb.gz head.pb.gz > /dev/null 2>&1; test $? = 3; } &&
	touch whole/TestGone.svg whole/TestGone.folded &&
	"$TF" compare --report whole base.pb.gz base.pb.gz > /dev/null 2>&1 &&
	test ! -e whole/TestGone.svg && test ! -e whole/TestGone.folded &&
	expect_contains whole/report.md "No regressions" &&
	expect_eq "$(ls -d whole* | tr "\n" " ")" "whole " "directories"
'

test_expect_success "a report into a directory holding other files: they stay, the report goes beside them" '
	mkdir mine && echo keep > mine/notes.txt && mkdir mine/sub && echo old > mine/report.md &&
	{ "$TF" compare --report mine base.pb.gz head.pb.gz > /dev/null 2>&1; test $? = 3; } &&
	expect_eq "$(cat mine/notes.txt)" keep && test -d mine/sub &&
	expect_contains mine/report.md "testflame:report" && test -s mine/index.html &&
	expect_eq "$(ls -d mine* | tr "\n" " ")" "mine " "directories"
'

test_done
