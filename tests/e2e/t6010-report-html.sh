#!/usr/bin/env bash
# t6010-report-html.sh - index.html in real headless Chromium (Debian's
# chromium driven by playwright-core), offline: the test table equals
# report.json, a test is picked, a frame's tooltip shows base, head and
# delta in the event's unit, a click zooms and the breadcrumb zooms out,
# the search highlights and sums the matches, the sandwich view shows a
# function's callers and callees, icicle, the colour-blind palette, width
# from the base (where a removed function shows), and the single-profile
# page of `testflame view --format html`. Any console error, page error,
# dialog or network request fails the test.
. "$(dirname "$0")/lib.sh"

MKPPROF="python3 $TOP/tests/e2e/mkpprof.py"
NODE_DIR=$TOP/tests/node
if ! need node || [ ! -x /usr/bin/chromium ] || [ ! -d "$NODE_DIR/node_modules/playwright-core" ]; then
	test_skip "the page in Chromium" "needs node, chromium and tests/node (make deps)"
	test_done
	exit 0
fi
check() { node "$NODE_DIR/report-check.mjs" "$@" 2> check.err || { cat check.err >&2; return 1; }; }

# loop is called from encode and from helper; old is only in the base
cat > base.spec <<'EOF'
TestEncode 1000 main@main.c:1;run@run.c:1;encode@enc.c:30;loop@loop.c:44
TestEncode 1000 main@main.c:1;run@run.c:1;encode@enc.c:30;copy@enc.c:50
TestEncode 500 main@main.c:1;run@run.c:1;helper@help.c:3;loop@loop.c:44
TestEncode 300 main@main.c:1;run@run.c:1;old@old.c:9
TestParse 2000 main@main.c:1;run@run.c:1;parse@parse.c:20
TestSlim 1000 main@main.c:1;run@run.c:1;slim@slim.c:2
EOF
cat > head.spec <<'EOF'
TestEncode 2000 main@main.c:1;run@run.c:1;encode@enc.c:30;loop@loop.c:45
TestEncode 1000 main@main.c:1;run@run.c:1;encode@enc.c:30;copy@enc.c:50
TestEncode 500 main@main.c:1;run@run.c:1;helper@help.c:3;loop@loop.c:44
TestParse 2000 main@main.c:1;run@run.c:1;parse@parse.c:20
TestSlim 500 main@main.c:1;run@run.c:1;slim@slim.c:2
EOF

test_expect_code 3 "the report of a regression" '
	$MKPPROF base.pb.gz --meta event=cpu-clock < base.spec &&
	$MKPPROF head.pb.gz --meta event=cpu-clock < head.spec &&
	"$TF" compare --report r base.pb.gz head.pb.gz > /dev/null 2>&1
'

test_expect_success "the page is one file: no external reference, a CSP that allows only itself" '
	! grep -Eq "(src|href)=\"(https?:)?//" r/index.html &&
	expect_contains r/index.html "default-src '"'"'none'"'"'; script-src '"'"'sha256-" &&
	test "$(wc -c < r/index.html)" -lt 100000
'

test_expect_success "Chromium: the table equals report.json; tooltip, zoom, search, sandwich, icicle, palette" '
	check r/index.html --json r/report.json --test TestEncode --hover encode --zoom encode \
		--search "^lo+p$" --icicle --colorblind --esc --screenshot page.png > page.txt &&
	expect_contains page.txt "rows match report.json: 3" &&
	expect_contains page.txt "summary 1 regressed, 1 improved, 1 unchanged of 3 tests" &&
	expect_contains page.txt "row regressed | TestEncode | 28.0 s | 35.0 s | +25.0% |" &&
	expect_contains page.txt "row improved | TestSlim | 10.0 s | 5.00 s | -50.0% |" &&
	expect_contains page.txt "graph Diff flame graph: TestEncode" &&
	expect_contains page.txt "functions match report.json:" &&
	expect_contains page.txt "func loop | loop.c:45 | 15.0 s | 25.0 s | +10.0 s | 15.0 s | 25.0 s | +10.0 s" &&
	expect_contains page.txt "tip encode / enc.c:1 / head 30.0 s (85.7%), base 20.0 s (71.4%) / delta +10.0 s (+50.0%) / self: head 0, base 0, delta 0" &&
	expect_contains page.txt "zoomed crumbs TestEncode > main > run > encode" &&
	expect_contains page.txt "zoomed frames 6" &&
	expect_contains page.txt "search 1 matching frame in view: head 20.0 s (66.7% of the view), base 10.0 s (50.0%), delta +10.0 s (+100.0%)" &&
	expect_contains page.txt "highlighted 1" &&
	expect_contains page.txt "icicle top row TestEncode" &&
	expect_contains page.txt "after escape crumbs TestEncode" &&
	expect_contains page.txt "pwned no"
'

test_expect_success "colours: the page and the SVG agree (encode +50%: red; orange for colour-blind readers)" '
	expect_contains page.txt "colour rgb(234, 86, 76)" &&
	expect_contains page.txt "colorblind colour rgb(238, 141, 45)" &&
	python3 -c "
import xml.etree.ElementTree as ET
ns = \"{http://www.w3.org/2000/svg}\"
for g in ET.parse(\"r/TestEncode.svg\").getroot().iter(ns + \"g\"):
    if g.find(ns + \"title\").text.startswith(\"encode \"):
        print(g.find(ns + \"rect\").get(\"fill\"))
" > fill.txt &&
	expect_eq "$(cat fill.txt)" "#ea564c"
'

test_expect_success "the sandwich view of a function called from two places" '
	check r/index.html --test TestEncode --sandwich loop > sw.txt &&
	expect_contains sw.txt "sandwich Sandwich: loop" &&
	expect_contains sw.txt "callers main / main / run / run / encode / helper / loop" &&
	expect_contains sw.txt "callees loop" &&
	expect_contains sw.txt "sandwich tip loop / loop.c:1 / head 25.0 s (100.0%), base 15.0 s (100.0%) / delta +10.0 s (+66.7%)"
'

test_expect_success "width from the base shows what the head lost" '
	check r/index.html --test TestEncode --wbase > wb.txt &&
	expect_contains wb.txt "width from base: TestEncode,copy,encode,helper,loop,loop,main,old,run" &&
	check r/index.html --test TestEncode > wh.txt &&
	! grep -q "^width from base" wh.txt
'

test_expect_success "the URL names the test: a link opens the page at it" '
	cp r/index.html "r/index copy.html" &&
	node -e "
import(\"$NODE_DIR/chromium.mjs\").then(async ({ openChromium }) => {
  const { page: p, close } = await openChromium({ problems: [] });
  await p.goto(\"file://$SCRATCH/r/index.html#test=TestSlim\");
  await p.waitForSelector(\"body[data-ready=\\\"1\\\"]\");
  console.log(await p.textContent(\"#graph-title\"));
  await close();
});
" > url.txt &&
	expect_contains url.txt "Diff flame graph: TestSlim"
'

test_expect_success "view --format html: the single-profile page" '
	"$TF" view --format html -o single.html head.pb.gz &&
	check single.html --test TestEncode --hover encode --sandwich loop --screenshot single.png > one.txt &&
	expect_contains one.txt "title head.pb.gz" &&
	expect_contains one.txt "summary 3 tests, 60.0 s of cpu-clock in 6000 samples" &&
	expect_contains one.txt "row TestEncode | 35.0 s | 58.3% | 3500" &&
	expect_contains one.txt "tip encode / enc.c:1 / 30.0 s (85.7%), self 0" &&
	expect_contains one.txt "func loop | loop.c:1 | 25.0 s | 71.4% | 25.0 s | 71.4%" &&
	expect_contains one.txt "callers main / main / run / run / encode / helper / loop"
'

test_expect_success "view --format html --test: one test only" '
	"$TF" view --format html --test TestParse -o parse.html head.pb.gz &&
	check parse.html > p.txt &&
	expect_contains p.txt "rows 1" &&
	expect_contains p.txt "graph Flame graph: TestParse"
'

test_expect_success "what a run lost: one small note naming the program without symbols, and the fix" '
	objcopy --strip-all "$FIX/split7030" stripped &&
	# a cache of its own: the stripped copy keeps the build-id, and the
	# cache of the suite holds the symbols of the unstripped one under it
	TESTFLAME_CACHE_DIR="$SCRATCH/cache-stripped" \
		"$TF" record -q --freq 499 -o s.pb.gz -- ./stripped 2 &&
	{ "$TF" compare --report s s.pb.gz s.pb.gz > /dev/null 2>&1 || :; } &&
	check s/index.html > s.txt &&
	# (a sample may also land where the loader has no symbol: listed after)
	{ grep -E "^note Both runs: [0-9]+ frames of the tests without a symbol, most in stripped \([0-9]+\)(, [^ ]+ \([0-9]+\))* \(build with -g, or install the -dbg/-dbgsym package" s.txt &&
	  test "$(grep -c "^note " s.txt)" = 1 ||
	  { echo "notes on the page:"; grep "^note " s.txt; false; }; }
'

test_done
