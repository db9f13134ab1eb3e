#!/usr/bin/env bash
# t0250-version.sh - which testflame this is: `--version` and `version`
# name the release and the commit the binary was built from (and "dirty"),
# every run file records it with its measure version, `show` says it, and a
# comparison of runs whose measure versions differ warns in the table,
# report.md and report.json, while one of the same measure does not.
. "$(dirname "$0")/lib.sh"

test_expect_success '--version and version name the release and the commit of the tree' '
	"$TF" --version >v1 && "$TF" version >v2 && cmp v1 v2 &&
	if commit=$(git -C "$TOP" rev-parse HEAD 2>/dev/null); then
		grep -Eq "^testflame [0-9]+\.[0-9]+\.[0-9]+ \(commit ${commit:0:12}(, dirty)?\)$" v1 ||
			{ cat v1; exit 1; }
	else
		grep -Eq "^testflame [0-9]+\.[0-9]+\.[0-9]+" v1
	fi
'

test_expect_success 'a run file records the version and the measure; show says them' '
	"$TF" record -q -o run.pb.gz --test split -- "$FIX/split7030" 1 &&
	"$TF" show run.pb.gz >show.txt &&
	grep -qxF "Made by: $("$TF" --version), measure 1" show.txt || { head -5 show.txt; exit 1; }
	"$TF" show --json run.pb.gz | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j[\"made_by\"].startswith(\"testflame \"), j[\"made_by\"]
assert j[\"measure\"] == 1 and j[\"metadata\"][\"measure\"] == \"1\", j[\"measure\"]
"
'

spec() { printf "t1 100 main;work\nt2 100 main;other\n"; }
test_expect_success 'runs of two measure versions: the comparison warns, everywhere it is read' '
	spec | python3 "$TOP/tests/e2e/mkpprof.py" old.pb.gz --meta version=0.0.9 \
		--meta build=0123456789abcdef0123456789abcdef01234567 &&
	spec | python3 "$TOP/tests/e2e/mkpprof.py" new.pb.gz --meta version=0.1.0 --meta measure=7 &&
	"$TF" compare --report rep old.pb.gz new.pb.gz >table.txt 2>&1 || { cat table.txt; exit 1; }
	expect_contains table.txt "warning: the base was measured by testflame 0.0.9 (commit 0123456789ab) (measure 1) and the head by testflame 0.1.0 (measure 7)" &&
	expect_contains rep/report.md "which count differently" &&
	expect_contains rep/report.md "head measured by testflame 0.1.0, base by testflame 0.0.9 (commit 0123456789ab)" &&
	python3 -c "
import json
j = json.load(open(\"rep/report.json\"))
assert \"count differently\" in j[\"versions_differ\"], j[\"versions_differ\"]
assert j[\"head_made_by\"] == \"testflame 0.1.0\" and j[\"base_made_by\"].startswith(\"testflame 0.0.9\")
"
'

test_expect_success 'runs of one measure version: no warning' '
	spec | python3 "$TOP/tests/e2e/mkpprof.py" a.pb.gz --meta version=0.1.0 --meta measure=1 &&
	spec | python3 "$TOP/tests/e2e/mkpprof.py" b.pb.gz --meta version=0.1.1 &&
	"$TF" compare --report rep2 a.pb.gz b.pb.gz >same.txt 2>&1 &&
	expect_not_contains same.txt "count differently" &&
	python3 -c "
import json
assert json.load(open(\"rep2/report.json\"))[\"versions_differ\"] is None"
'

test_done
