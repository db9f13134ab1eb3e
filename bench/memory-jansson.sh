#!/usr/bin/env bash
# memory-jansson.sh - gate.memory on a real suite nobody here wrote:
# jansson's 213 ctest tests (Debian's source package, built as
# bench/realworld.sh builds it), in a fresh git repository of its source
# with `gate: {memory: true}`:
#
#   main     the suite is built and `testflame run` keeps the baseline
#   readme   a branch that edits only the README: must exit 0, and no
#            test may allocate more
#   memslow  a branch where json_object_set_new allocates (and frees) an
#            extra 4 KiB buffer a call: must exit 3, naming as allocating
#            more exactly the tests that call it, and json_object_set_new
#            at the line of the new allocation, in the terminal, report.md
#            and the page's allocation diff (index.html#memory)
#
# Which tests call it is found without testflame: each test is run plainly
# on main and on memslow under a small LD_PRELOAD counter of allocations,
# and a test calls it when it allocates more there. The suite's own result
# under testflame (each test passed or failed, the exit status) must be
# the plain one's.
#
#   WORK=/work/rw bench/memory-jansson.sh    (sources in WORK/src, as
#                                             realworld.sh fetches them)
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
TF=$TOP/build/testflame
WORK=${WORK:-/work/rw}
D=$WORK/memory/jansson-gate
export TESTFLAME_NO_PROGRESS=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
say() { printf '%s\n' "$*" >&2; }
fail() { say "FAILED: $*"; failed=1; }
failed=0

src=$(ls -d "$WORK"/src/jansson-*/ 2>/dev/null | head -n 1)
[ -n "$src" ] || { say "no jansson source in $WORK/src (WORK=$WORK bench/realworld.sh jansson fetches it)"; exit 2; }
make -s -C "$TOP" all >/dev/null

rm -rf "$D" && mkdir -p "$(dirname "$D")" && cp -a "$src" "$D" && cd "$D"
rm -rf .git build
printf 'build/\ntestflame-report/\n' > .gitignore
printf 'gate:\n  memory: true\n' > .testflame.yml
git init -q -b main . && git add -A >/dev/null && git commit -qm "the package's source"
build() { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && make -s -C build -j2 >/dev/null 2>&1; }

# the independent count: allocations per test, each test run plainly
cat > "$WORK/memory/counter.c" <<\C
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void *(*m)(size_t), *(*c)(size_t, size_t), *(*r)(void *, size_t);
static unsigned long allocs;
static char boot[4096];
static size_t used;
static int busy;
static void init(void) { busy = 1; m = dlsym(RTLD_NEXT, "malloc"); c = dlsym(RTLD_NEXT, "calloc"); r = dlsym(RTLD_NEXT, "realloc"); busy = 0; }
void *malloc(size_t n) { if (!m) { if (busy) { void *p = boot + used; used += (n + 15) & ~15UL; return p; } init(); } void *p = m(n); allocs += p != 0; return p; }
void *calloc(size_t k, size_t n) { if (!c) { if (busy) return malloc(k * n); init(); } void *p = c(k, n); allocs += p != 0; return p; }
void *realloc(void *q, size_t n) { if (!r) init(); void *p = r(q, n); allocs += p && n; return p; }
__attribute__((destructor)) static void done(void) { unsigned long a = allocs; FILE *o = fopen(getenv("COUNT_OUT"), "a"); if (o) { fprintf(o, "%s %lu\n", getenv("COUNT_TEST"), a); fclose(o); } }
C
cc -shared -fPIC -O1 -o "$WORK/memory/counter.so" "$WORK/memory/counter.c" -ldl
counts() { # OUT: "test allocations" per test, each run plainly under the counter
	rm -f "$1"
	(cd build && ctest --show-only=json-v1) | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin)["tests"]:
    wd = [p["value"] for p in t.get("properties", []) if p["name"] == "WORKING_DIRECTORY"]
    print(t["name"], wd[0] if wd else ".", " ".join(shlex.quote(a) for a in t["command"]), sep="\t")' |
	while IFS="$(printf '\t')" read -r name dir cmd; do
		(cd "$dir" && COUNT_OUT=$1 COUNT_TEST=$name LD_PRELOAD=$WORK/memory/counter.so sh -c "$cmd" >/dev/null 2>&1) || true
	done
}
# a ctest run's per-test results, times left out, and its exit status
results() { sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) [. ]*\([A-Za-z*]*\).*/\1 \2/p' "$1"; }

say "main: build, plain run, counts, baseline"
build
(cd build && ctest >"$WORK/memory/plain.out" 2>&1; echo $? >"$WORK/memory/plain.rc")
counts "$WORK/memory/main.counts"
"$TF" run --no-publish -- sh -c 'cd build && ctest' >"$WORK/memory/main.tf" 2>&1 || fail "main: exit $?"
results "$WORK/memory/plain.out" >"$WORK/memory/plain.results"
results "$WORK/memory/main.tf" >"$WORK/memory/tf.results"
cmp -s "$WORK/memory/plain.results" "$WORK/memory/tf.results" ||
	fail "the suite's results differ under testflame (plain.results, tf.results)"

say "readme: must pass"
git checkout -q -b readme && echo "one more line" >> README.rst && git commit -qam "README"
rc=0; "$TF" run --no-publish -- sh -c 'cd build && ctest' >"$WORK/memory/readme.tf" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "readme: exit $rc"
grep -q "no memory regression" "$WORK/memory/readme.tf" || fail "readme: a memory regression"

say "memslow: json_object_set_new allocates 4 KiB more a call"
git checkout -q main && git checkout -q -b memslow
sed -i 's|^int json_object_set_new(json_t \*json, const char \*key, json_t \*value) {$|&\n    void *scratch = jsonp_malloc(4096); /* an extra 4 KiB buffer a call */\n    jsonp_free(scratch);|' src/value.c
git commit -qam "value: a scratch buffer"
line=$(grep -n "void \*scratch = jsonp_malloc(4096);" src/value.c | cut -d: -f1)
build
counts "$WORK/memory/slow.counts"
rc=0; "$TF" run --no-publish -- sh -c 'cd build && ctest' >"$WORK/memory/slow.tf" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "memslow: exit $rc, not 3"

# the truth: the tests that allocate more, counted apart
python3 - "$WORK/memory/main.counts" "$WORK/memory/slow.counts" >"$WORK/memory/callers" <<\PY
import sys
def read(f): return {l.split()[0]: int(l.split()[1]) for l in open(f) if l.strip()}
a, b = read(sys.argv[1]), read(sys.argv[2])
for t in sorted(b):
    if b[t] > a.get(t, b[t]):
        print(t)
PY
python3 - "$D/testflame-report/report.json" "$WORK/memory/callers" "$line" <<\PY || failed=1
import json, sys
r = json.load(open(sys.argv[1]))
callers = [l.strip() for l in open(sys.argv[2]) if l.strip()]
m = r["memory"]
named = sorted(t["name"] for t in m["tests"] if t["verdict"] == "regressed")
print("tests that call json_object_set_new (counted apart): %d: %s" % (len(callers), " ".join(callers)))
print("tests testflame names as allocating more: %d: %s" % (len(named), " ".join(named)))
ok = named == sorted(callers)
for t in m["tests"]:
    if t["verdict"] != "regressed":
        continue
    f = t["functions"][0] if t["functions"] else None
    where = "%s %s:%s" % (f["name"], f["file"].rsplit("/", 1)[-1], f["line"]) if f else "(none)"
    print("  %-14s %+7.1f%%  %s" % (t["name"], t["delta_pct"], where))
    ok = ok and f and f["name"] == "json_object_set_new" and f["line"] == int(sys.argv[3])
print("named, each with json_object_set_new value.c:%s: %s" % (sys.argv[3], "yes" if ok else "NO"))
sys.exit(0 if ok else 1)
PY
grep -q "json_object_set_new  value.c:$line" "$WORK/memory/slow.tf" || fail "the terminal does not name json_object_set_new value.c:$line"
grep -q "<code>json_object_set_new</code> | +" testflame-report/report.md || fail "report.md does not name json_object_set_new"
if command -v node >/dev/null && [ -d "$TOP/tests/node/node_modules/playwright-core" ]; then
	t=$(head -n 1 "$WORK/memory/callers")
	node "$TOP/tests/node/report-check.mjs" "testflame-report/index.html#memory" --test "$t" \
		>"$WORK/memory/page.txt" 2>&1 || fail "the page: $(tail -n 3 "$WORK/memory/page.txt")"
	grep -q "^func json_object_set_new | .*value.c:$line | " "$WORK/memory/page.txt" ||
		fail "the page's allocation diff of $t does not name json_object_set_new value.c:$line"
	grep "^graph\|^func json_object_set_new" "$WORK/memory/page.txt"
fi
echo "main exit 0, readme exit 0, memslow exit $rc; the suite's results the same under testflame: $(cmp -s "$WORK/memory/plain.results" "$WORK/memory/tf.results" && echo yes || echo NO)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
