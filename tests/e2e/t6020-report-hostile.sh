#!/usr/bin/env bash
# t6020-report-hostile.sh - test, function, file and suite names that come
# from the profiled code and try to break out: <script>, quotes, pipes,
# backticks, @mentions, Markdown links and autolinks, newlines, workflow
# commands, "]]>", bidi overrides, bytes that are not UTF-8, 10 kB names.
# Every format of the report directory is read by a real client (Chromium
# for the page, GitHub-flavoured Markdown rendered and loaded in Chromium
# for the comment, xmllint and Python's XML parser for SVG and JUnit, a
# JUnit reader from npm, Python's JSON for Code Quality, FlameGraph's line
# rule for the folded diffs) and must show the names as text: no script
# runs, no table cell splits, nobody is mentioned, no file escapes.
. "$(dirname "$0")/lib.sh"

NODE_DIR=$TOP/tests/node
if ! need node xmllint perl || [ ! -x /usr/bin/chromium ] || [ ! -d "$NODE_DIR/node_modules/playwright-core" ]; then
	test_skip "hostile names" "needs node, chromium, xmllint, perl and tests/node (make deps)"
	test_done
	exit 0
fi

# The names, as Python literals (surrogates \udcXX are raw bytes).
cat > names.py <<'EOF'
BIG = "big_" + "A" * 5000 + "<script>window.__pwned=7</script>" + "B" * 5000
TESTS = [
    "<script>window.__pwned=1</script>",
    "\"><img src=x onerror=\"window.__pwned=2\">",
    "</script><script>window.__pwned=3</script>",
    "pipe|name|`tick` ``` @someone [x](http://evil.example) www.evil.example :smile: *em* _u_ # h",
    "line1\nline2\r\n::error::injected %0A::warning::x",
    "cdata]]><![CDATA[ & &amp; <!-- c --> 'q' \"dq\"",
    BIG,
    "bad\udcff\udcfebytes\u202eevil\u0007bell\u001b[31mred",
]
FUNCS = [t.replace("window.__pwned=", "window.__pwned=1") + "_fn" for t in TESTS]
FILES = ["src/<b>x.c", "src/a\"b'c.c", "src/pipe|`x`.c", "src/@team.c", "src/new\nline.c",
         "src/]]>.c", "src/" + "d" * 3000 + ".c", "src/\udcffbad.c"]
EOF
cat > spec.py <<'EOF'
import json, sys
sys.path.insert(0, ".")
from names import TESTS, FUNCS, FILES
head = sys.argv[1] == "head"
samples = []
for i, (t, f, fl) in enumerate(zip(TESTS, FUNCS, FILES)):
    stack = [["main", "src/main.c", 1], ["runner", "src/runner.c", 5], [f, fl, 10 + i]]
    samples.append({"test": t, "count": 2000 if head else 1000, "stack": stack})
    samples.append({"test": t, "count": 500, "stack": stack[:2] + [["steady", "src/steady.c", 3]]})
samples.append({"test": "plain", "count": 800, "stack": [["main", "src/main.c", 1], ["p", "src/p.c", 2]]})
meta = {"event": "cpu-clock", "commit": ("2222" if head else "1111") * 10, "ci": "github",
        "repository": "acme/widgets", "suite": "evil --> <b>@team</b>|x"}
json.dump({"meta": meta, "samples": samples}, open(sys.argv[2], "w"))
EOF
# clean(s, max): what every report does to a name (report_int.h: rp_clean)
cat > clean.py <<'EOF'
def clean(s, maxcp=0):
    b = s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    out = []
    for ch in b:
        c = ord(ch)
        bad = c < 0x20 or c == 0x7f or 0x80 <= c <= 0x9f or 0x202a <= c <= 0x202e or \
            0x2066 <= c <= 0x2069 or c == 0xfeff
        out.append("\ufffd" if bad else ch)
    if maxcp and len(out) > maxcp:
        head = (maxcp - 1) // 3
        tail = maxcp - 1 - head
        out = out[:head] + ["\u2026"] + out[len(out) - tail:]
    return "".join(out)
EOF

test_expect_code 3 "compare writes the report of eight hostile regressed tests" '
	python3 spec.py base base.json && python3 spec.py head head.json &&
	python3 $TOP/tests/e2e/mkprofile.py base.pb.gz --json base.json &&
	python3 $TOP/tests/e2e/mkprofile.py head.pb.gz --json head.json &&
	"$TF" compare --color never --report r base.pb.gz head.pb.gz > out.txt 2> err.txt
'

test_expect_success "the terminal table carries no control character from a name" '
	expect_contains out.txt "8 regressed" &&
	! grep -q "$(printf "\033")" out.txt &&
	! grep -q "$(printf "\007")" out.txt
'

test_expect_success "report.json keeps every name exactly (invalid bytes as U+FFFD)" '
	python3 -c "
import json, sys
sys.path.insert(0, \".\")
from names import TESTS
d = json.load(open(\"r/report.json\"))
names = {t[\"name\"] for t in d[\"tests\"]}
for t in TESTS:
    want = t.encode(\"utf-8\", \"surrogateescape\").decode(\"utf-8\", \"replace\")
    assert want in names, repr(want[:80])
"
'

test_expect_success "index.html: the names are data, never markup" '
	test "$(grep -o "<script" r/index.html | wc -l)" = 2 &&
	! grep -q "<img" r/index.html &&
	! grep -q "window.__pwned=1</script>" r/index.html &&
	expect_contains r/index.html "\\u003cscript\\u003ewindow.__pwned=1"
'

test_expect_success "index.html in Chromium: rows equal report.json, no script runs, no error" '
	node "$NODE_DIR/report-check.mjs" r/index.html --json r/report.json --row 1 \
		--sandwich-row 1 --search "pwned" --screenshot hostile.png > page.txt 2> page.err ||
		{ cat page.err; false; } &&
	expect_contains page.txt "rows match report.json: 9" &&
	expect_contains page.txt "functions match report.json:" &&
	expect_contains page.txt "pwned no" &&
	expect_contains page.txt "script elements 2" &&
	expect_contains page.txt "foreign elements 0" &&
	expect_contains page.txt "sandwich Sandwich:" &&
	grep -q "^search [1-9][0-9]* matching frame" page.txt
'

test_expect_success "the page shows the 10 kB name shortened in the middle, both ends kept" '
	grep "^row " page.txt | grep -q "big_AAAA.*…BBBB"
'

test_expect_success "SVG files: one per changed test, safe file names, well-formed, no script" '
	ls r/*.svg > svgs.txt &&
	test "$(wc -l < svgs.txt)" = 8 &&
	for f in r/*.svg r/*.folded; do
		b=$(basename "$f");
		printf "%s" "$b" | grep -Eq "^[A-Za-z0-9._-]+$" || { echo "unsafe name: $b"; exit 1; }
	done &&
	xmllint --noout r/*.svg &&
	python3 -c "
import glob, sys, xml.etree.ElementTree as ET
sys.path.insert(0, \".\")
from names import TESTS
from clean import clean
ns = \"{http://www.w3.org/2000/svg}\"
titles = set()
for f in glob.glob(\"r/*.svg\"):
    root = ET.parse(f).getroot()
    for e in root.iter():
        tag = e.tag.replace(ns, \"\")
        assert tag in (\"svg\", \"g\", \"rect\", \"text\", \"title\"), (f, tag)
        for a in e.attrib:
            assert not a.lower().startswith(\"on\"), (f, a)
        if tag == \"title\":
            titles.add(e.text.split(\"\\n\")[0])
for t in TESTS:
    assert clean(t, 500) in titles, repr(clean(t, 500)[:60])
"
'

test_expect_success "report.md as GitHub renders it: no markup, mention, script or stray link from a name" '
	node "$NODE_DIR/md-check.mjs" r/report.md > md.txt 2> md.err || { cat md.err; false; } &&
	expect_contains md.txt "bad elements none" &&
	expect_contains md.txt "mentions 0" &&
	expect_contains md.txt "pwned no" &&
	expect_contains md.txt "table 0 rows=8 cells=6" &&
	! grep "^link" md.txt | grep -v " https://github.com/acme/widgets/" &&
	test "$(grep -c "^link" md.txt)" -gt 2 &&
	grep -q "^marker [A-Za-z0-9._/~%]*$" md.txt &&
	expect_contains md.txt "marker evil%20%2D%2D%3E%20%3Cb%3E%40team%3C/b%3E%7Cx" &&
	test "$(wc -c < r/report.md)" -lt 65536 &&
	awk "/^\\|/ && !/\\|\$/ { bad = 1 } END { exit bad }" r/report.md
'

test_expect_success "report.md shows each test name as code, the long one shortened" '
	python3 -c "
import sys
sys.path.insert(0, \".\")
from names import TESTS
from clean import clean
codes = {l[5:].strip() for l in open(\"md.txt\") if l.startswith(\"code \")}
import json
codes = {json.loads(c) for c in codes}
for t in TESTS:
    assert clean(t, 120) in codes, repr(clean(t, 120)[:60])
"
'

test_expect_success "junit.xml: well-formed, read by a JUnit reader with every name intact" '
	xmllint --noout r/junit.xml &&
	node "$NODE_DIR/junit-check.mjs" r/junit.xml > junit.txt &&
	expect_contains junit.txt "failed 8" &&
	test "$(grep -c "^case " junit.txt)" = 9 &&
	python3 -c "
import json, sys
sys.path.insert(0, \".\")
from names import TESTS
from clean import clean
cases = [json.loads(l[5:]) for l in open(\"junit.txt\") if l.startswith(\"case \")]
got = {c[\"name\"] for c in cases}
assert sum(c[\"status\"] == \"FAIL\" and c[\"failure\"].startswith(\"regressed +\") for c in cases) == 8
for t in TESTS:
    assert clean(t, 1000) in got, repr(clean(t, 1000)[:60])
"
'

test_expect_success "codequality.json: valid, one issue per grown function, stable fingerprints" '
	python3 -c "
import json, re
d = json.load(open(\"r/codequality.json\"))
assert len(d) == 8, len(d)
fps = set()
for i in d:
    assert set(i) >= {\"description\", \"check_name\", \"fingerprint\", \"severity\", \"location\"}
    assert re.fullmatch(\"[0-9a-f]{32}\", i[\"fingerprint\"])
    assert not any(ord(c) < 32 for c in i[\"description\"] + i[\"location\"][\"path\"])
    assert i[\"location\"][\"lines\"][\"begin\"] > 0
    fps.add(i[\"fingerprint\"])
assert len(fps) == 8
json.dump(sorted(fps), open(\"fps1.json\", \"w\"))
"
'

# FlameGraph's rule for a line of folded stacks (flamegraph.pl): the count
# is the last number; a differential line has two, base then head.
cat > folded-rule.pl <<'EOF'
chomp;
my ($stack, $head) = /^(.*)\s+?(\d+(?:\.\d*)?)$/ or die "no count: $_\n";
my ($frames, $base) = $stack =~ /^(.*)\s+?(\d+(?:\.\d*)?)$/ or die "one column only: $_\n";
$lines++;
END { die "no stacks\n" unless $lines }
EOF

test_expect_success "folded diffs: every line is STACK BASE HEAD by the rule of flamegraph.pl" '
	for f in r/*.folded; do
		perl -n folded-rule.pl "$f" || exit 1
	done &&
	test "$(cat r/*.folded | wc -l)" = 16
'

test_expect_success "the run copies load again with the names intact" '
	"$TF" view --format folded r/head.pb.gz > head.folded &&
	grep -q "window.__pwned=11</script>_fn" head.folded
'

test_done
