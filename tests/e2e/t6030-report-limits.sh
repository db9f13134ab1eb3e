#!/usr/bin/env bash
# t6030-report-limits.sh - the report at scale. Thousands of tests, half of
# them regressed with long names: report.md stays under the 65,536
# characters code hosts accept, keeps the most important rows, and says
# what it left out; the page and the JUnit file still hold every test. A
# profile of tens of thousands of distinct stacks: index.html prunes tiny
# frames into "(other)", says so, stays small, and Chromium still zooms and
# searches it.
. "$(dirname "$0")/lib.sh"

NODE_DIR=$TOP/tests/node
MKPROFILE="python3 $TOP/tests/e2e/mkprofile.py"
have_browser() { need node && [ -x /usr/bin/chromium ] && [ -d "$NODE_DIR/node_modules/playwright-core" ]; }

cat > many.py <<'EOF'
import json, sys
head = sys.argv[1] == "head"
samples = []
for i in range(3000):
    name = "suite/%s/Test_%04d" % ("very_long_package_name_" * 4, i)
    grows = head and i % 2 == 0
    for k in range(12):
        stack = [["main", "src/main.c", 1], ["run_%d" % i, "src/run.c", 2],
                 ["pkg::module::function_number_%d_of_a_long_namespace" % k, "src/lib/f%d.c" % k, 10 + k]]
        samples.append({"test": name, "count": (200 + 20 * k) * (2 if grows and k < 6 else 1), "stack": stack})
json.dump({"meta": {"event": "cpu-clock", "suite": "big"}, "samples": samples}, open(sys.argv[2], "w"))
EOF

test_expect_code 3 "3000 tests, 1500 regressed" '
	python3 many.py base base.json && python3 many.py head head.json &&
	$MKPROFILE base.pb.gz --json base.json && $MKPROFILE head.pb.gz --json head.json &&
	"$TF" compare --report many base.pb.gz head.pb.gz > table.txt 2> err.txt
'

test_expect_success "report.md: under 65,536 characters, most important rows kept, the rest announced" '
	expect_eq "$(jget many/report.json "d[\"summary\"][\"regressed\"]")" 1500 &&
	test "$(wc -c < many/report.md)" -le 65000 &&
	expect_contains many/report.md "**🔺 1500 of 3000 tests regressed**" &&
	expect_contains many/report.md "_Left out to keep this short: " &&
	grep -q "changed tests* and the functions of [0-9]* regressed tests*; the full report has everything._" many/report.md &&
	test "$(grep -c "^| 🔺 regressed |" many/report.md)" -ge 10 &&
	expect_eq "$(head -n 1 many/report.md)" "<!-- testflame:report suite=big -->" &&
	tail -n 1 many/report.md | grep -q "^<sub>testflame"
'

test_expect_success "the trimmed comment renders whole: tables intact, details closed" '
	if ! have_browser; then echo "skipped: no node/chromium"; exit 0; fi
	node "$NODE_DIR/md-check.mjs" many/report.md > md.txt &&
	grep -q "^chars [0-9]*$" md.txt &&
	test "$(sed -n "s/^chars //p" md.txt)" -lt 65536 &&
	expect_contains md.txt "cells=6" &&
	! grep "^table " md.txt | grep -v "cells=[56]$" &&
	expect_contains md.txt "bad elements none"
'

test_expect_success "every test is still in junit.xml and report.json" '
	expect_eq "$(grep -c "<testcase " many/junit.xml)" 3000 &&
	expect_eq "$(grep -c "<failure " many/junit.xml)" 1500 &&
	expect_eq "$(jget many/report.json "len(d[\"tests\"])")" 3000
'

test_expect_success "SVG files: capped at 100, most changed first" '
	expect_eq "$(ls many/*.svg | wc -l)" 100
'

test_expect_success "the page lists all 3000 tests" '
	if ! have_browser; then echo "skipped: no node/chromium"; exit 0; fi
	node "$NODE_DIR/report-check.mjs" many/index.html --json many/report.json > page.txt 2> page.err ||
		{ cat page.err; false; } &&
	expect_contains page.txt "rows match report.json: 3000"
'

test_expect_success "a profile of 40,000 distinct stacks: pruned page, under 5 MB, says so" '
	$MKPROFILE big-base.pb.gz --synthetic --stacks 40000 --samples 400000 --tests 40 &&
	$MKPROFILE big-head.pb.gz --synthetic --stacks 40000 --samples 400000 --tests 40 --head &&
	{ "$TF" compare --report big big-base.pb.gz big-head.pb.gz > /dev/null 2>&1; test $? = 3; } &&
	test "$(wc -c < big/index.html)" -lt 5000000 &&
	grep -o "\"pruned\":{[^}]*}" big/index.html > pruned.txt &&
	python3 -c "
import json
p = json.loads(open(\"pruned.txt\").read()[9:])
assert p[\"frames\"] > 60000 and p[\"kept\"] + p[\"others\"] <= 60000, p
"
'

test_expect_success "Chromium opens it, zooms and searches, and the note is shown" '
	if ! have_browser; then echo "skipped: no node/chromium"; exit 0; fi
	node "$NODE_DIR/report-check.mjs" big/index.html --json big/report.json --test suite/Test_0000 \
		--zoom run_test_0 --search "func_1" --screenshot big.png > big.txt 2> big.err ||
		{ cat big.err; false; } &&
	expect_contains big.txt "rows match report.json: 40" &&
	grep -q "^note To keep this page fast, [0-9]* of [0-9]* frames" big.txt &&
	expect_contains big.txt "zoomed crumbs suite/Test_0000 > main > run_test_0" &&
	grep -q "^search [1-9][0-9]* matching frames in view" big.txt &&
	loaded=$(sed -n "s/^loaded \([0-9]*\) ms$/\1/p" big.txt) &&
	test "$loaded" -lt 15000
'

test_done
