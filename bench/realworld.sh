#!/usr/bin/env bash
# realworld.sh - testflame on real test suites nobody here wrote, at default
# settings, as a new user would run it (no config, no --freq): Debian's
# source packages of jansson (ctest, a program per test), yaml-cpp
# (GoogleTest under ctest), toolz (pytest) and cJSON (Unity programs under
# ctest). Per suite, in a fresh git repository of the package's source:
#
#   main    the suite is built and `testflame run` keeps the baseline
#   readme  a branch that edits only the README: must exit 0
#   slow    a branch with a busy loop injected into one library function
#           that only some tests call: every test it slowed must be
#           "regressed", naming that function, and nothing else may be
#
# Which tests the slowdown really slowed is measured without testflame: the
# suite is run plainly, twice, on main and on the slow branch with the
# runner's own report (ctest's LastTest.log, GoogleTest's XML, pytest's
# JUnit), and a test counts as slowed when its fastest time on the slow
# branch is at least three times and 20 ms more than its slowest on main.
# The runner's own list of tests (ctest -N, --gtest_list_tests, pytest
# --collect-only) is what "found" counts against.
#
#   bench/realworld.sh [SUITE...]      jansson yaml-cpp toolz cjson (default: all)
#
# PY=PYTHON runs toolz under another interpreter (with pytest importable).
# WORK=DIR keeps the sources and builds there (they are reused); without it
# a temporary directory is used and removed. Needs network access to
# Debian's source archive (apt-get source) the first time.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
TF=$TOP/build/testflame
SUITES=${*:-jansson yaml-cpp toolz cjson}
if [ -n "${WORK:-}" ]; then
	mkdir -p "$WORK"
else
	WORK=$(mktemp -d /tmp/testflame-realworld.XXXXXX)
	trap 'rm -rf "$WORK"' EXIT
fi
PY=${PY:-/usr/bin/python3}
export TESTFLAME_NO_PROGRESS=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

say() { printf '%s\n' "$*" >&2; }

# The source package, unpacked once into $WORK/src/<pkg>-<version>.
fetch() { # PKG -> prints the source directory
	local pkg=$1 dir
	mkdir -p "$WORK/src"
	dir=$(ls -d "$WORK/src/$pkg"-*/ 2>/dev/null | head -n 1)
	if [ -z "$dir" ]; then
		local list=/etc/apt/sources.list.d/testflame-bench-src.sources
		if ! ls "$WORK/src/${pkg}_"*.dsc >/dev/null 2>&1; then
			sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$list"
			apt-get update -qq >/dev/null 2>&1 || true
			(cd "$WORK/src" && apt-get source -qq --download-only "$pkg" >/dev/null 2>&1) || true
			rm -f "$list"
			apt-get update -qq >/dev/null 2>&1 || true
		fi
		(cd "$WORK/src" && dpkg-source -q -x --no-check "${pkg}_"*.dsc >/dev/null 2>&1)
		dir=$(ls -d "$WORK/src/$pkg"-*/ | head -n 1)
	fi
	echo "${dir%/}"
}

# A fresh repository of the source at $WORK/<suite>, committed on main.
new_repo() { # SUITE SRC
	rm -rf "${WORK:?}/$1"
	cp -a "$2" "$WORK/$1"
	cd "$WORK/$1"
	rm -rf .git
	printf 'build/\n__pycache__/\n.pytest_cache/\ntestflame-report/\n*.egg-info/\n' > .gitignore
	git init -q -b main .
	git add -A >/dev/null
	git commit -qm "the package's source"
}

# Per suite: build, the test command, the runner's list of tests, the
# runner's own per-test times ("name seconds" lines, for the truth), the
# slowdown, and the function it is in.

jansson_build() { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && make -s -C build -j2 >/dev/null 2>&1; }
jansson_cmd() { echo "sh -c 'cd build && ctest'"; }
jansson_list() { (cd build && ctest -N) | sed -n 's/^ *Test *#[0-9]*: //p'; }
jansson_times() { (cd build && ctest >/dev/null 2>&1 || true); ctest_times build; }
jansson_slow() { sed -i 's|^    jsonp_error_init(error, NULL);$|&\n    { volatile unsigned long spin; for (spin = 0; spin < 20000000; spin++) ; }|' src/pack_unpack.c; }
jansson_fn() { echo "json_vpack_ex pack_unpack.c"; }

yaml_cpp_build() { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DYAML_CPP_BUILD_TESTS=ON >/dev/null && make -s -C build -j2 >/dev/null 2>&1; }
yaml_cpp_cmd() { echo "sh -c 'cd build && ctest'"; }
yaml_cpp_list() {
	build/test/yaml-cpp-tests --gtest_list_tests | awk '/^[^ ]/ { s = $1; next } { print s $1 }'
}
yaml_cpp_times() {
	rm -rf "$WORK/gtest-xml" && mkdir -p "$WORK/gtest-xml"
	GTEST_OUTPUT=xml:"$WORK/gtest-xml/" build/test/yaml-cpp-tests >/dev/null 2>&1 || true
	$PY - "$WORK/gtest-xml"/*.xml <<'EOF'
import sys, xml.etree.ElementTree as ET
for f in sys.argv[1:]:
    for tc in ET.parse(f).iter("testcase"):
        print("%s.%s %s" % (tc.get("classname"), tc.get("name"), tc.get("time")))
EOF
}
yaml_cpp_slow() { sed -i 's|^bool WriteAlias(ostream_wrapper& out, const std::string& str) {$|&\n  { volatile unsigned long spin; for (spin = 0; spin < 20000000; spin++) ; }|' src/emitterutils.cpp; }
yaml_cpp_fn() { echo "YAML::Utils::WriteAlias emitterutils.cpp"; }

toolz_build() { :; }
toolz_cmd() { echo "$PY -m pytest -q -p no:cacheprovider toolz"; }
toolz_list() { $PY -m pytest -q -p no:cacheprovider --collect-only toolz 2>/dev/null | grep '::'; }
toolz_times() {
	$PY -m pytest -q -p no:cacheprovider --junitxml="$WORK/toolz.xml" toolz >/dev/null 2>&1 || true
	$PY - "$WORK/toolz.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
for tc in ET.parse(sys.argv[1]).iter("testcase"):
    parts = tc.get("classname").split(".")
    cls = [parts.pop()] if parts and parts[-1][:1].isupper() else []
    print("::".join(["/".join(parts) + ".py"] + cls + [tc.get("name")]), tc.get("time"))
EOF
}
toolz_slow() { sed -i 's|^    d = collections.defaultdict(int)$|    for _ in range(300000):\n        pass\n&|' toolz/itertoolz.py; }
toolz_fn() { echo "frequencies itertoolz.py"; }

cjson_build() { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DENABLE_CJSON_TEST=On -DENABLE_CJSON_UTILS=On >/dev/null && make -s -C build -j2 >/dev/null 2>&1; }
cjson_cmd() { echo "sh -c 'cd build && ctest'"; }
cjson_list() { (cd build && ctest -N) | sed -n 's/^ *Test *#[0-9]*: //p'; }
cjson_times() { (cd build && ctest >/dev/null 2>&1 || true); ctest_times build; }
cjson_slow() { sed -i '/^static cJSON_bool parse_number(cJSON \* const item, parse_buffer \* const input_buffer)$/,/^    cJSON_bool has_decimal_point = false;$/{s|^    cJSON_bool has_decimal_point = false;$|&\n    volatile unsigned long spin;\n    for (spin = 0; spin < 20000000; spin++) ;|}' cJSON.c; }
cjson_fn() { echo "parse_number cJSON.c"; }

# ctest's own times: "name seconds" from LastTest.log
ctest_times() {
	awk '/^[0-9]+\/[0-9]+ Testing: / { sub(/^[0-9]+\/[0-9]+ Testing: /, ""); n = $0 }
	     /^Test time = / { print n, $4 }' "$1/Testing/Temporary/LastTest.log"
}

run_tf() { # OUTDIR: testflame run at default settings, its report kept
	local out=$1 rc=0
	eval "$TF run --no-publish --report '$out' -- $($CMD)" >"$out.log" 2>&1 || rc=$?
	echo "$rc"
}

result() { # SUITE: the figures of one suite, from the files of its steps
	$PY - "$@" <<'EOF'
import json, sys
suite, listf, mainf, slowf, reportf, readmef, readme_rc, slow_rc, fn = sys.argv[1:]
names = [l.strip() for l in open(listf) if l.strip()]
def times(f):
    t = {}
    for l in open(f):
        p = l.rsplit(" ", 1)
        if len(p) == 2:
            try: t.setdefault(p[0], []).append(float(p[1]))
            except ValueError: pass
    return t
base, slow = times(mainf), times(slowf)
truth = {n for n in slow if n in base and min(slow[n]) - max(base[n]) >= 0.020
         and min(slow[n]) >= 3 * max(base[n])}
rep = json.load(open(reportf))
tests = {t["name"]: t for t in rep["tests"]}
found = [n for n in names if n in tests]
gated = [t for t in rep["tests"] if not t.get("outside")]
regressed = {t["name"] for t in gated if t["verdict"] == "regressed"}
caught = truth & regressed
fname, ffile = fn.split()
named = [n for n in caught if tests[n]["functions"] and (tests[n]["functions"][0]["name"].startswith(fname) or tests[n]["functions"][0]["name"].endswith("." + fname))
         and tests[n]["functions"][0]["file"].endswith(ffile)]
line = next((tests[n]["functions"][0]["line"] for n in named), 0)
rr = json.load(open(readmef))
rr_flagged = [t["name"] for t in rr["tests"] if t["verdict"] == "regressed" and not t.get("outside")]
measured = rep["summary"].get("measured_by", {})
print("%-9s found %4d/%-4d  slowed %3d  caught %3d  named %3d (%s:%s)  false: slow %d, readme %d (exit %s)  slow exit %s  measured %s" % (
    suite, len(found), len(names), len(truth), len(caught), len(named), fname, line,
    len(regressed - truth), len(rr_flagged), readme_rc, slow_rc,
    ",".join("%s=%d" % kv for kv in measured.items() if kv[1])))
missing = [n for n in names if n not in tests][:5]
if missing: print("          not found, e.g.: %s" % ", ".join(missing))
missed = sorted(truth - regressed)[:5]
if missed: print("          slowed, not regressed: %s" % ", ".join("%s (%s)" % (n, tests[n]["verdict"] if n in tests else "absent") for n in missed))
extra = sorted(regressed - truth)[:5]
if extra: print("          regressed, not slowed: %s" % ", ".join(extra))
EOF
}

make -s -C "$TOP" all >/dev/null
for suite in $SUITES; do
	fn=${suite//-/_}
	case $suite in
	jansson|yaml-cpp|toolz|cjson) ;;
	*) say "realworld.sh: unknown suite '$suite' (jansson, yaml-cpp, toolz, cjson)"; exit 2;;
	esac
	say "== $suite"
	src=$(fetch "$suite")
	new_repo "$suite" "$src"
	CMD=${fn}_cmd
	"${fn}_build"
	"${fn}_list" > "$WORK/$suite.list"
	{ "${fn}_times"; "${fn}_times"; } > "$WORK/$suite.main.times"
	run_tf "$WORK/$suite.main" >/dev/null
	git checkout -q -b readme
	echo "a line about nothing" >> README*
	git commit -qam "readme only"
	readme_rc=$(run_tf "$WORK/$suite.readme")
	git checkout -q main
	git checkout -q -b slow
	"${fn}_slow"
	git commit -qam "a slowdown in one function"
	"${fn}_build"
	{ "${fn}_times"; "${fn}_times"; } > "$WORK/$suite.slow.times"
	slow_rc=$(run_tf "$WORK/$suite.slow")
	result "$suite" "$WORK/$suite.list" "$WORK/$suite.main.times" "$WORK/$suite.slow.times" \
		"$WORK/$suite.slow/report.json" "$WORK/$suite.readme/report.json" "$readme_rc" "$slow_rc" \
		"$(${fn}_fn)"
	cd "$TOP"
done
