#!/usr/bin/env bash
# t4000-compare-folded.sh - `testflame compare` on folded stacks and pprof
# files with known counts: the delta and the verdict are exact, a profile
# against itself is unchanged, report.json is written atomically and says
# the same as the table, per-test verdicts of labelled run files.
. "$(dirname "$0")/lib.sh"

MKPPROF="python3 $TOP/tests/e2e/mkpprof.py"
# jget FILE EXPR: a value of a JSON file, d being the document

printf 'main;parse 1000\nmain;encode 1000\n' > base.folded
printf 'main;parse 1500\nmain;encode 1000\n' > head.folded

test_expect_code 3 "25% more samples: regressed, exit 3" '
	"$TF" compare base.folded head.folded > out.txt 2> err.txt
'

test_expect_success "the table shows the exact delta and the function that grew" '
	expect_contains out.txt "regressed" &&
	expect_contains out.txt "+25.0%" &&
	expect_contains out.txt "2000" &&
	expect_contains out.txt "2500" &&
	grep -E "^ +\+500 +\+500 +parse$" out.txt &&
	expect_contains out.txt "REGRESSION: 1 test slower by at least 5%" &&
	expect_contains err.txt "wrote testflame-report/report.json"
'

test_expect_success "report.json agrees with the table" '
	f=testflame-report/report.json &&
	expect_eq "$(jget $f "d[\"schema\"]")" testflame-report/1 &&
	expect_eq "$(jget $f "d[\"regressed\"]")" True &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"name\"]")" all &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"verdict\"]")" regressed &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"delta_pct\"]")" 25.0 &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"base\"][\"samples\"]")" 2000 &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"functions\"][0][\"name\"]")" parse &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"functions\"][0][\"delta_self\"]")" 500.0 &&
	expect_eq "$(jget $f "d[\"base\"][\"files\"][0]")" base.folded &&
	test -f testflame-report/index.html && test -f testflame-report/report.md
'

test_expect_success "p-value of the Poisson model for folded stacks, no history: twice the floor (norm.sf(log(1.25)/sqrt(1/2000+1/2500+2*.03**2)), one-sided)" '
	expect_near "$(jget testflame-report/report.json "d[\"tests\"][0][\"p_value\"]")" 8.75833452456756e-06 1e-12
'

test_expect_success "the reverse is an improvement, exit 0" '
	"$TF" compare --report rev head.folded base.folded > out.txt &&
	expect_contains out.txt "improved" &&
	expect_contains out.txt "-20.0%" &&
	expect_contains out.txt "no regression"
'

test_expect_success "a profile against itself: unchanged, exit 0" '
	"$TF" compare --report self base.folded base.folded > out.txt &&
	expect_contains out.txt "1 unchanged" &&
	expect_eq "$(jget self/report.json "d[\"tests\"][0][\"verdict\"]")" unchanged &&
	expect_eq "$(jget self/report.json "d[\"tests\"][0][\"delta_pct\"]")" 0.0
'

test_expect_code 3 "a higher threshold: the same 25% may reach 30% (its CI does): still regressed" '
	"$TF" compare --threshold 30 --report t30 base.folded head.folded > out.txt; rc=$?
	expect_eq "$(jget t30/report.json "d[\"tests\"][0][\"verdict\"]")" regressed &&
	expect_eq "$(jget t30/report.json "d[\"threshold_pct\"]")" 30.0 && exit $rc
'

test_expect_success "a threshold the whole CI stays below: a significant 25% is unchanged" '
	"$TF" compare --threshold 60 --report t60 base.folded head.folded > out.txt &&
	expect_eq "$(jget t60/report.json "d[\"tests\"][0][\"verdict\"]")" unchanged &&
	expect_contains t60/report.json "surely below the 60% threshold"
'

test_expect_success ".testflame.yml's gate judges as its flag would (the gate run judges with); report.dir is where the report goes" '
	mkdir cfg && cp base.folded head.folded cfg/ &&
	printf "gate:\n  threshold: 60\nreport:\n  dir: from-config\n" > cfg/.testflame.yml &&
	(cd cfg && "$TF" compare base.folded head.folded > out.txt) &&
	expect_eq "$(jget cfg/from-config/report.json "d[\"threshold_pct\"]")" 60.0 &&
	expect_eq "$(jget cfg/from-config/report.json "d[\"tests\"][0][\"verdict\"]")" unchanged
'

test_expect_code 3 "a flag over the config" '
	(cd cfg && "$TF" compare --threshold 30 --report flag base.folded head.folded > out.txt); rc=$?
	expect_eq "$(jget cfg/flag/report.json "d[\"threshold_pct\"]")" 30.0 &&
	expect_eq "$(jget cfg/flag/report.json "d[\"tests\"][0][\"verdict\"]")" regressed && exit $rc
'

test_expect_success "gate.fail_on_regression: false: the regression reported, exit 0, as run does" '
	printf "gate:\n  fail_on_regression: false\n" > cfg/.testflame.yml &&
	(cd cfg && "$TF" compare --report nofail base.folded head.folded > out.txt) &&
	expect_eq "$(jget cfg/nofail/report.json "d[\"tests\"][0][\"verdict\"]")" regressed &&
	expect_contains cfg/out.txt "1 regressed"
'

test_expect_success "--json prints the report on stdout; gzip-compressed folded files load" '
	gzip -c base.folded > base.folded.gz &&
	{ "$TF" compare --json -q --report j base.folded.gz head.folded > out.json; test $? = 3; } &&
	python3 -c "import json; d = json.load(open(\"out.json\")); assert d[\"tests\"][0][\"verdict\"] == \"regressed\"" &&
	cmp out.json j/report.json
'

test_expect_success "--color always colours the verdict; the default (a pipe) does not" '
	{ "$TF" compare --color always --report c base.folded head.folded > colour.txt; test $? = 3; } &&
	grep -q "$(printf "\033")\[1;31mregressed" colour.txt &&
	{ "$TF" compare --report c base.folded head.folded > plain.txt; test $? = 3; } &&
	! grep -q "$(printf "\033")" plain.txt
'

test_expect_success "on a terminal the verdict is coloured, unless NO_COLOR is set" '
	on_tty "$TF" compare -q --report tty base.folded head.folded > tty.txt; test $? = 3 &&
	grep -q "$(printf "\033")\[1;31mregressed" tty.txt &&
	{ NO_COLOR=1 on_tty "$TF" compare -q --report tty base.folded head.folded > tty2.txt; test $? = 3; } &&
	! grep -q "$(printf "\033")" tty2.txt
'

# Run files with test labels: per-test verdicts, exact deltas.
labelled_specs

test_expect_success "labelled run files: one verdict per test" '
	$MKPPROF base.pb.gz --meta event=cpu-clock --meta commit=1111111111111111 < base.spec &&
	$MKPPROF head.pb.gz --meta event=cpu-clock --meta commit=2222222222222222 < head.spec &&
	{ "$TF" compare --report lab base.pb.gz head.pb.gz > out.txt; test $? = 3; } &&
	f=lab/report.json &&
	expect_eq "$(jget $f "[t[\"verdict\"] for t in d[\"tests\"] if t[\"name\"] == \"TestEncode\"][0]")" regressed &&
	expect_eq "$(jget $f "[t[\"delta_pct\"] for t in d[\"tests\"] if t[\"name\"] == \"TestEncode\"][0]")" 50.0 &&
	expect_eq "$(jget $f "[t[\"verdict\"] for t in d[\"tests\"] if t[\"name\"] == \"TestParse\"][0]")" unchanged &&
	expect_eq "$(jget $f "[t[\"verdict\"] for t in d[\"tests\"] if t[\"name\"] == \"TestOld\"][0]")" gone &&
	expect_eq "$(jget $f "[t[\"verdict\"] for t in d[\"tests\"] if t[\"name\"] == \"TestFresh\"][0]")" new &&
	expect_eq "$(jget $f "d[\"head\"][\"meta\"][\"commit\"]")" 2222222222222222 &&
	expect_eq "$(jget $f "d[\"summary\"][\"regressed\"]")" 1
'

test_expect_success "the table: cost in time units, the grown function at the line that grew, the commits" '
	! grep -q 1111111111111111 out.txt &&
	expect_contains out.txt "111111111111 -> 222222222222" &&
	expect_contains out.txt "20.0 s" &&
	expect_contains out.txt "30.0 s" &&
	grep -E "^ +\+10\.0 s +\+10\.0 s +loop  enc\.go:45$" out.txt &&
	expect_contains out.txt "TestEncode (+50.0%): functions that grew most"
'

test_expect_success "--test compares one test only" '
	"$TF" compare --test TestParse --report one base.pb.gz head.pb.gz > out.txt &&
	expect_eq "$(jget one/report.json "len(d[\"tests\"])")" 1 &&
	expect_eq "$(jget one/report.json "d[\"tests\"][0][\"name\"]")" TestParse
'

test_expect_success "--value samples compares sample counts" '
	{ "$TF" compare --value samples --report v base.pb.gz head.pb.gz > out.txt; test $? = 3; } &&
	expect_eq "$(jget v/report.json "d[\"unit\"]")" count &&
	expect_contains out.txt "3000"
'

test_expect_success "names from the profile are escaped in report.json" '
	printf "%s\n" "a\"b<c>\\d 2000 main" > evil.spec &&
	$MKPPROF evil.pb.gz < evil.spec &&
	"$TF" compare --report e evil.pb.gz evil.pb.gz > out.txt &&
	expect_eq "$(jget e/report.json "d[\"tests\"][0][\"name\"]")" "a\"b<c>\\d"
'

test_done
