#!/usr/bin/env bash
# realworld.sh - testflame on real test suites nobody here wrote, each run
# the way its users run it, at default settings (no config, no --freq):
#
#   suite              run as                                    runner
#   jansson            ctest --test-dir build                    ctest, a program per test
#   cjson              sh -c 'cd build && ctest'                 ctest, Unity programs
#   yaml-cpp           sh -c 'cd build && ctest'                 GoogleTest under ctest
#   spdlog             build/tests/spdlog-utests '~async periodic flush'  Catch2, one binary
#   toolz              python3 -m pytest toolz                   pytest, Debian's python3
#   sortedcontainers   env PYTHONPATH=. python3 -m pytest tests  pytest, Debian's python3
#   sortedcontainers-3.13  the same in a CPython 3.13 virtualenv pytest, pyenv's 3.13
#   mpmath             pytest -n 2 mpmath/tests/...              pytest-xdist, 2 workers
#   simplejson         python3 -m unittest discover              unittest, Debian's python3
#   simplejson-3.12    the same in a CPython 3.12 virtualenv     unittest, pyenv's 3.12
#   go-cmp             go test ./...                             go test, subtests
#   gorilla-mux        go test ./...                             go test, subtests
#   semver             cargo test                                cargo, libtest and doc-tests
#   strsim             cargo test                                cargo, libtest and doc-tests
#
# Sources: Debian's source packages (jansson, cJSON, yaml-cpp, spdlog, toolz,
# sortedcontainers), Debian's binary packages where they ship a project's
# tests with its code (mpmath, simplejson), Go modules from Debian's
# golang-*-dev packages (/usr/share/gocode) and crates from librust-*-dev
# (/usr/share/cargo/registry, built offline against that registry). Each
# suite gets a fresh git repository of its source:
#
#   main    the suite is built and `testflame run` keeps the baseline
#   readme  a branch that edits only the README: must exit 0
#   slow    a branch with a busy loop injected into one library function
#           that only some tests call: every test it slowed must be
#           "regressed", naming that function
#
# Which tests the slowdown really slowed is measured without testflame: the
# suite is run three times on main and on the slow branch with the runner's
# own per-test times (ctest's LastTest.log, GoogleTest's XML, Catch2's
# durations, pytest's JUnit, unittest's runner, go test -json, libtest's
# JSON), and a test counts as slowed when its fastest time on the slow
# branch is at least three times and 20 ms more than its slowest on main.
# A regressed test below that bar whose growth names the injected function
# (in its first three) is counted apart ("smaller"), not as false. The
# runner's own list of tests (ctest -N, --gtest_list_tests, Catch2's
# --list-test-names-only, pytest --collect-only, unittest's discovery,
# go test -list, cargo test -- --list) is what "found" counts against, on
# the base side and on both heads, each head against its own branch's list
# (a line added above a doc-test renames it: `src/lib.rs - f (line 386)`).
# On main and on the README branch the command is also run without
# testflame: its output (times masked, lines in any order) and exit status
# must be the same under testflame.
#
#   bench/realworld.sh [SUITE...]      (default: all of the above)
#
# Progress and each suite's details go to stderr; the table (Markdown) to
# stdout. Exit 0 when every row meets issue 28's Done-when, 1 when one does
# not, 2 on a usage error. WORK=DIR keeps the sources and builds there (they
# are reused); without it a temporary directory is used and removed. Needs
# Debian's archive (apt-get) the first time. Go suites run with
# GOFLAGS=-count=1 (a warm test cache runs no test: see BENCHMARKS.md).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
TF=$TOP/build/testflame
RW=$TOP/bench/realworld.py
ALL="jansson cjson yaml-cpp spdlog toolz sortedcontainers sortedcontainers-3.13 mpmath simplejson simplejson-3.12 go-cmp gorilla-mux semver strsim"
SUITES=${*:-$ALL}
for s in $SUITES; do
	case " $ALL " in *" $s "*) ;; *) echo "realworld.sh: unknown suite '$s' ($ALL)" >&2; exit 2;; esac
done
if [ -n "${WORK:-}" ]; then
	mkdir -p "$WORK"
	WORK=$(cd "$WORK" && pwd)
else
	WORK=$(mktemp -d /tmp/testflame-realworld.XXXXXX)
	trap 'rm -rf "$WORK"' EXIT
fi
PY=/usr/bin/python3 # the bench's own reading; the suites' interpreters are below
export TESTFLAME_NO_PROGRESS=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
export GOPROXY=off GOFLAGS="-mod=mod -count=1" GOTOOLCHAIN=local
START=$(date +%s)

say() { printf '%s\n' "$*" >&2; }

# Debian packages the suites need, installed when missing
need() {
	local p missing=
	for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
	[ -z "$missing" ] && return 0
	say "   installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null; }
}

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

# A binary package that ships a project's code with its tests: its Python
# modules, unpacked once into $WORK/src/<pkg>-<version>.
fetch_deb() { # PKG -> prints the directory holding the modules
	local pkg=$1 dir
	mkdir -p "$WORK/src"
	dir=$(ls -d "$WORK/src/$pkg"-*/ 2>/dev/null | head -n 1)
	if [ -z "$dir" ]; then
		(cd "$WORK/src" && apt-get download -qq "$pkg" >/dev/null 2>&1 ||
			{ apt-get update -qq >/dev/null 2>&1; apt-get download -qq "$pkg" >/dev/null; })
		local deb v
		deb=$(ls "$WORK/src/${pkg}_"*.deb | head -n 1)
		v=$(dpkg-deb -f "$deb" Version)
		dpkg -x "$deb" "$WORK/src/$pkg-$v.x"
		mv "$WORK/src/$pkg-$v.x/usr/lib/python3/dist-packages" "$WORK/src/$pkg-$v"
		rm -rf "$WORK/src/$pkg-$v.x" "$WORK/src/$pkg-$v/"*.egg-info "$WORK/src/$pkg-$v/"*.dist-info
		dir=$WORK/src/$pkg-$v
	fi
	echo "${dir%/}"
}

# A Go module from /usr/share/gocode, a crate from /usr/share/cargo/registry
fetch_go() { need "$1"; echo "/usr/share/gocode/src/$2"; }
fetch_crate() {
	need "$1"
	ls -d /usr/share/cargo/registry/"$2"-[0-9]* | head -n 1
	# crates build offline against Debian's registry: a cargo config above
	# the repositories, none in them
	mkdir -p "$WORK/.cargo"
	printf '[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n\n[net]\noffline = true\n' > "$WORK/.cargo/config.toml"
}

# A fresh repository of the source at $WORK/<suite>, committed on main.
new_repo() { # SUITE SRC
	rm -rf "${WORK:?}/$1"
	cp -aL "$2" "$WORK/$1"
	cd "$WORK/$1"
	rm -rf .git
	chmod -R u+w .
	printf 'build/\ntarget/\nCargo.lock\n__pycache__/\n.pytest_cache/\ntestflame-report/\ntestflame-out/\n*.egg-info/\nlogs/\n' > .gitignore
	ls README* >/dev/null 2>&1 || echo "$1, as Debian ships it" > README
	git init -q -b main .
	git add -A >/dev/null
	git commit -qm "the package's source"
}

# The Python a suite runs under, first on PATH as `python3`: Debian's, or
# pyenv's CPython X.Y in a virtualenv that sees Debian's pure-Python pytest
pybin() { # debian | X.Y -> prints the directory to put first on PATH
	local v=$1 d
	if [ "$v" = debian ]; then
		d=$WORK/py-debian/bin
		mkdir -p "$d"
		ln -sf /usr/bin/python3 "$d/python3"
		ln -sf /usr/bin/python3 "$d/python"
		ln -sf /usr/bin/pytest "$d/pytest"
		need python3-pytest python3-pytest-xdist
		echo "$d"
		return
	fi
	local root=${PYENV_ROOT:-$HOME/.pyenv} exe
	exe=$(ls -d "$root/versions/$v".*/bin/python3 2>/dev/null | sort -V | tail -n 1)
	[ -n "$exe" ] || return 1
	d=$WORK/venv-$v
	if [ ! -x "$d/bin/python3" ]; then
		need python3-pytest python3-pytest-xdist
		"$exe" -m venv --without-pip "$d"
		mkdir -p "$WORK/pytest-pure"
		local m
		for m in _pytest pytest pluggy iniconfig py py.py packaging attr exceptiongroup tomli execnet xdist; do
			[ -e "/usr/lib/python3/dist-packages/$m" ] && ln -sfn "/usr/lib/python3/dist-packages/$m" "$WORK/pytest-pure/$m"
		done
		echo "$WORK/pytest-pure" > "$(echo "$d"/lib/python3*/site-packages)/debian-pytest.pth"
	fi
	echo "$d/bin"
}

# Per suite: the source, build, the test command, the runner's list of
# tests, the runner's own per-test times ("name seconds" lines, for the
# truth), the slowdown, and the function it is in ("NAME[|NAME] FILE").
# C and C++ builds go through ccache: each run of the bench starts from a
# fresh copy of the source, and only what a branch changed is compiled again
cmake_cfg() { need ccache cmake; CCACHE_DIR=$WORK/ccache cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "$@"; }
cmake_make() { CCACHE_DIR=$WORK/ccache make -s -C build -j2; }
SPIN_C='{ volatile unsigned long spin; for (spin = 0; spin < 20000000; spin++) ; }'

ctest_list() { ctest --test-dir "$1" -N | sed -n 's/^ *Test *#[0-9]*: //p'; }
# ctest's own times: "name seconds" from LastTest.log
ctest_times() {
	awk '/^[0-9]+\/[0-9]+ Testing: / { sub(/^[0-9]+\/[0-9]+ Testing: /, ""); n = $0 }
	     /^Test time = / { print n, $4 }' "$1/Testing/Temporary/LastTest.log"
}

jansson_src() { fetch jansson; }
jansson_build() { cmake_cfg -DJANSSON_BUILD_DOCS=OFF && cmake_make; }
jansson_cmd() { echo "ctest --test-dir build"; }
jansson_list() { ctest_list build; }
jansson_times() { ctest --test-dir build >/dev/null 2>&1 || true; ctest_times build; }
jansson_slow() { sed -i "s|^    jsonp_error_init(error, NULL);\$|&\n    $SPIN_C|" src/pack_unpack.c; }
jansson_fn() { echo "json_vpack_ex|json_vunpack_ex pack_unpack.c"; }

cjson_src() { fetch cjson; }
cjson_build() { cmake_cfg -DENABLE_CJSON_TEST=On -DENABLE_CJSON_UTILS=On && cmake_make; }
cjson_cmd() { echo "sh -c 'cd build && ctest'"; }
cjson_list() { ctest_list build; }
cjson_times() { (cd build && ctest >/dev/null 2>&1 || true); ctest_times build; }
cjson_slow() { sed -i '/^static cJSON_bool parse_number(cJSON \* const item, parse_buffer \* const input_buffer)$/,/^    cJSON_bool has_decimal_point = false;$/{s|^    cJSON_bool has_decimal_point = false;$|&\n    volatile unsigned long spin;\n    for (spin = 0; spin < 20000000; spin++) ;|}' cJSON.c; }
cjson_fn() { echo "parse_number cJSON.c"; }

yaml_cpp_src() { fetch yaml-cpp; }
yaml_cpp_build() { need libgtest-dev libgmock-dev; cmake_cfg -DYAML_CPP_BUILD_TESTS=ON && cmake_make; }
yaml_cpp_cmd() { echo "sh -c 'cd build && ctest'"; }
yaml_cpp_list() { build/test/yaml-cpp-tests --gtest_list_tests | awk '/^[^ ]/ { s = $1; next } { print s $1 }'; }
yaml_cpp_times() {
	rm -rf "$WORK/gtest-xml" && mkdir -p "$WORK/gtest-xml"
	GTEST_OUTPUT=xml:"$WORK/gtest-xml/" build/test/yaml-cpp-tests >/dev/null 2>&1 || true
	$PY "$RW" times-gtest "$WORK/gtest-xml"/*.xml
}
yaml_cpp_slow() { sed -i "s|^bool WriteAlias(ostream_wrapper& out, const std::string& str) {\$|&\n  { volatile unsigned long spin; for (spin = 0; spin < 60000000; spin++) ; }|" src/emitterutils.cpp; }
yaml_cpp_fn() { echo "YAML::Utils::WriteAlias emitterutils.cpp"; }

spdlog_src() { fetch spdlog; }
spdlog_build() { need libfmt-dev; cmake_cfg -DSPDLOG_BUILD_TESTS=ON -DSPDLOG_FMT_EXTERNAL=ON -DSPDLOG_BUILD_EXAMPLE=OFF && cmake_make; }
# "async periodic flush" sleeps 1.7 s and wants exactly one flush of a
# 1 s timer: on a loaded machine it sees two, with or without a profiler
SPDLOG_SPEC="'~async periodic flush'"
spdlog_cmd() { echo "build/tests/spdlog-utests $SPDLOG_SPEC"; }
spdlog_list() { eval "build/tests/spdlog-utests --list-test-names-only $SPDLOG_SPEC" | sed '/^$/d'; }
spdlog_times() { eval "build/tests/spdlog-utests --durations yes $SPDLOG_SPEC" 2>/dev/null | sed -n 's/^\([0-9.]*\) s: \(.*\)$/\2 \1/p' || true; }
# 100,000,000 turns, 30-50 ms of CPU a call. 20,000,000 (6-10 ms) left the
# three tests that call it once under the truth's 20 ms in CPU time, and
# over it in wall time only when the machine was loaded (Catch2's
# durations: 24-49 ms at a load of 6, under 20 ms at 4): the load decided
# which side of the bar they fell on. Catch2's tests, in one process, are
# measured by their samples alone: 10 ms is 2 or 3 samples a run at 249 Hz
SPDLOG_SPIN=${SPIN_C/20000000/100000000}
spdlog_slow() { sed -i "/^SPDLOG_INLINE std::tuple<filename_t, filename_t> file_helper::split_by_extension(/{n;s|^{\$|{\n    $SPDLOG_SPIN|}" include/spdlog/details/file_helper-inl.h; }
spdlog_fn() { echo "spdlog::details::file_helper::split_by_extension file_helper-inl.h"; }

pytest_list() { # ARGS... : pytest's collection, as node ids
	python3 -m pytest -q -p no:cacheprovider --collect-only "$@" 2>/dev/null | grep '::'
}
pytest_times() { # ARGS...
	python3 -m pytest -q -p no:cacheprovider --junitxml="$WORK/junit.xml" "$@" >/dev/null 2>&1 || true
	$PY "$RW" times-junit "$WORK/junit.xml"
}
# a busy loop as the first statement of FILE's function NAME (before its
# docstring, which then documents nothing and changes no behaviour)
py_spin() { $PY "$RW" py-spin "$@"; }

toolz_src() { fetch toolz; }
toolz_py() { echo debian; }
toolz_build() { :; }
toolz_cmd() { echo "python3 -m pytest toolz"; }
toolz_list() { pytest_list toolz; }
toolz_times() { pytest_times toolz; }
toolz_slow() { py_spin toolz/itertoolz.py frequencies; }
toolz_fn() { echo "frequencies itertoolz.py"; }

sortedcontainers_src() { fetch sortedcontainers; }
sortedcontainers_py() { echo debian; }
sortedcontainers_build() { :; }
sortedcontainers_cmd() { echo "env PYTHONPATH=. python3 -m pytest tests"; }
sortedcontainers_list() { PYTHONPATH=. pytest_list tests; }
sortedcontainers_times() { PYTHONPATH=. pytest_times tests; }
# irange_key runs thousands of times in some tests: 100,000 turns (~3 ms)
# a call; the default ~90 ms made each run of the slow branch take 12 minutes
sortedcontainers_slow() { py_spin sortedcontainers/sortedlist.py irange_key 100000; }
sortedcontainers_fn() { echo "irange_key sortedlist.py"; }
for f in src build cmd list times slow fn; do eval "sortedcontainers_3_13_$f() { sortedcontainers_$f; }"; done
sortedcontainers_3_13_py() { echo 3.13; }

# mpmath's suite takes minutes: 22 of its 31 files, without the special
# functions, quadrature, calculus, elliptic and zeta functions
MPMATH_TESTS=$(printf 'mpmath/tests/test_%s.py ' basic_ops bitwise compatibility convert diff division eigen fp functions identify interval linalg matrices mpmath ode pickle power rootfinding special str summation trig)
mpmath_src() { fetch_deb python3-mpmath; }
mpmath_py() { echo debian; }
mpmath_build() { :; }
mpmath_cmd() { echo "pytest -n 2 $MPMATH_TESTS"; }
mpmath_form() { echo "pytest -n 2 mpmath/tests/test_{basic_ops,...}.py (22 of 31 files)"; }
mpmath_list() { pytest_list $MPMATH_TESTS; }
mpmath_times() { pytest_times $MPMATH_TESTS; }
mpmath_slow() { py_spin mpmath/identification.py identify; }
mpmath_fn() { echo "identify identification.py"; }

unittest_list() { python3 "$TOP/bench/realworld-unittest.py" list "$@"; }
unittest_times() { python3 "$TOP/bench/realworld-unittest.py" times "$WORK/unittest.times" "$@" >/dev/null 2>&1 || true; cat "$WORK/unittest.times"; }

simplejson_src() { fetch_deb python3-simplejson; }
simplejson_py() { echo debian; }
simplejson_build() { :; }
simplejson_cmd() { echo "python3 -m unittest discover"; }
simplejson_list() { unittest_list; }
simplejson_times() { unittest_times; }
simplejson_slow() { py_spin simplejson/encoder.py _make_iterencode; }
simplejson_fn() { echo "_make_iterencode encoder.py"; }
for f in src build cmd list times slow fn; do eval "simplejson_3_12_$f() { simplejson_$f; }"; done
simplejson_3_12_py() { echo 3.12; }

gospin() { printf '\\tfor spin := 0; spin < %d; spin++ {\\n\\t}' "$1"; }
go_list() { go test -list '.*' ./... 2>/dev/null | $PY "$RW" list-go | grep -v '	Benchmark'; }
go_times() { go test -json ./... 2>/dev/null | $PY "$RW" times-go || true; }

go_cmp_src() { fetch_go golang-github-google-go-cmp-dev github.com/google/go-cmp; }
go_cmp_slow() { sed -i "s|^func EquateApprox(fraction, margin float64) cmp.Option {\$|&\n$(gospin 30000000)|" cmp/cmpopts/equate.go; }
go_cmp_fn() { echo "EquateApprox equate.go"; }

gorilla_mux_src() { fetch_go golang-github-gorilla-mux-dev github.com/gorilla/mux; }
gorilla_mux_slow() { sed -i "s|^func (r \*Route) Queries(pairs ...string) \*Route {\$|&\n$(gospin 5000000)|" route.go; }
gorilla_mux_fn() { echo "(*Route).Queries route.go"; }

for m in go_cmp gorilla_mux; do
	eval "${m}_build() { go test -run '^\$' ./...; }"
	eval "${m}_cmd() { echo 'go test ./...'; }"
	eval "${m}_list() { go_list; }"
	eval "${m}_times() { go_times; }"
done

# 25,000,000 turns, 30-40 ms of CPU a call in cargo's debug build: at
# 5,000,000 (6-8 ms) a test that calls the function once was under the
# truth's 20 ms bar in CPU and over it in wall time only on a loaded
# machine (semver's test_pre: 23-53 ms at a load of 8), as spdlog's were
RSSPIN='    { let mut spin: u64 = 0; while spin < 25_000_000 { spin = std::hint::black_box(spin + 1); } }'
cargo_list() { cargo test -- --list 2>&1 | $PY "$RW" list-cargo; }
cargo_times() { RUSTC_BOOTSTRAP=1 cargo test -- -Z unstable-options --format json --report-time 2>&1 | $PY "$RW" times-cargo || true; }

# cargo resolves every optional dependency of a crate, serde's too
semver_src() { need librust-semver+serde-dev; fetch_crate librust-semver-dev semver; }
semver_slow() { sed -i "/^impl VersionReq {\$/,/^}\$/{s|^    pub fn matches(&self, version: &Version) -> bool {\$|&\n$RSSPIN|}" src/lib.rs; }
semver_fn() { echo "semver::VersionReq::matches lib.rs"; }

strsim_src() { fetch_crate librust-strsim-dev strsim; }
strsim_slow() { sed -i "s|^pub fn osa_distance(a: &str, b: &str) -> usize {\$|&\n$RSSPIN|" src/lib.rs; }
strsim_fn() { echo "strsim::osa_distance lib.rs"; }

for c in semver strsim; do
	eval "${c}_build() { cargo test --no-run; }"
	eval "${c}_cmd() { echo 'cargo test'; }"
	eval "${c}_list() { cargo_list; }"
	eval "${c}_times() { cargo_times; }"
done

# The command run plainly: its output and status kept for the comparison
run_plain() { # OUT
	local rc=0
	eval "$($CMD)" >"$1.out" 2>"$1.err" </dev/null || rc=$?
	echo "$rc" > "$1.rc"
}

run_tf() { # OUT (the report directory is OUT's step without ".tf")
	local rc=0
	eval "$TF run --no-publish --report '${1%.tf}' -- $($CMD)" >"$1.out" 2>"$1.err" </dev/null || rc=$?
	echo "$rc" > "$1.rc"
	echo "$rc"
}

elapsed() { echo $(( $(date +%s) - $1 ))s; }

make -s -C "$TOP" all >/dev/null
mkdir -p "$WORK/rows"
rows=
for suite in $SUITES; do
	fn=${suite//[-.]/_}
	t0=$(date +%s)
	say "== $suite ($(elapsed "$START") in)"
	form=$(${fn}_cmd)
	if declare -F "${fn}_form" >/dev/null; then form=$(${fn}_form); fi
	path_saved=$PATH
	if declare -F "${fn}_py" >/dev/null; then
		if ! bin=$(pybin "$(${fn}_py)"); then
			say "   skipped: no CPython $(${fn}_py) under ${PYENV_ROOT:-$HOME/.pyenv}"
			printf '{"suite": "%s", "form": "%s", "skipped": "no CPython %s here"}\n' "$suite" "$form" "$(${fn}_py)" > "$WORK/rows/$suite.json"
			rows="$rows $WORK/rows/$suite.json"
			continue
		fi
		export PATH=$bin:$PATH
		form="$form ($(python3 -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'))"
	fi
	B=$WORK/$suite
	src=$(${fn}_src)
	new_repo "$suite" "$src"
	CMD=${fn}_cmd
	${fn}_fn > "$B.fn"
	say "   build"
	if ! "${fn}_build" > "$B.build.log" 2>&1; then
		say "   FAIL the build (main): $B.build.log"
		printf '{"suite": "%s", "form": "%s", "broken": "the build failed: %s"}\n' "$suite" "$form" "$B.build.log" > "$WORK/rows/$suite.json"
		rows="$rows $WORK/rows/$suite.json"
		PATH=$path_saved
		cd "$TOP"
		continue
	fi
	"${fn}_list" > "$B.list"
	say "   $(wc -l < "$B.list") tests in the runner's list; the plain runs"
	{ "${fn}_times"; "${fn}_times"; "${fn}_times"; } > "$B.main.times"
	run_plain "$B.main.plain"
	say "   main under testflame"
	run_tf "$B.main.tf" >/dev/null
	git checkout -q -b readme
	echo "a line about nothing" >> "$(ls README* | head -n 1)"
	git commit -qam "readme only"
	"${fn}_build" >> "$B.build.log" 2>&1 # what a README makes a build tool redo is not the suite's
	"${fn}_list" > "$B.readme.list"
	run_plain "$B.readme.plain"
	say "   README branch under testflame"
	readme_rc=$(run_tf "$B.readme.tf")
	git checkout -q main
	git checkout -q -b slow
	"${fn}_slow"
	if git diff --quiet; then say "   the slowdown did not apply"; fi
	git commit -qam "a slowdown in one function" || true
	say "   slow branch: build and the plain runs"
	"${fn}_build" >> "$B.build.log" 2>&1 || say "   the slow branch did not build: $B.build.log"
	"${fn}_list" > "$B.slow.list"
	{ "${fn}_times"; "${fn}_times"; "${fn}_times"; } > "$B.slow.times"
	run_plain "$B.slow.plain"
	say "   slow branch under testflame"
	slow_rc=$(run_tf "$B.slow.tf")
	$PY "$RW" row "$suite" "$form" "$WORK" > "$WORK/rows/$suite.json"
	rows="$rows $WORK/rows/$suite.json"
	$PY - "$WORK/rows/$suite.json" <<'EOF' >&2
import json, sys
r = json.load(open(sys.argv[1]))
f = r["found"]
print("   found %s/%s/%s of %d (base/README/slow), slowed %d, caught %d, named %d (%s:%s), +%d smaller, false: README %d, slow %d; exits: README %s, slow %s; measured %s"
      % (f.get("base"), f.get("readme"), f.get("slow"), r["listed"], r["slowed"], r["caught"], r["named"], r["fn"], r["line"],
         r["smaller"], len(r["false_readme"]), r["false_slow"], r["rc"]["readme.tf"], r["rc"]["slow.tf"], r["measured"]))
for x in r["fail"]:
    print("   FAIL " + x)
if r["false_slow_names"]:
    print("   regressed, not slowed: " + ", ".join(r["false_slow_names"]))
EOF
	say "   $(elapsed "$t0")"
	PATH=$path_saved
	cd "$TOP"
done
say "== all in $(elapsed "$START")"
rc=0
$PY "$RW" table $rows || rc=1
exit $rc
