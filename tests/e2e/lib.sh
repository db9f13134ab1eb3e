# lib.sh - the end-to-end test library, after git's t/test-lib.sh.
#
# A script sources this, then calls test_expect_success "what" 'commands'
# (the commands run in a subshell, in the script's scratch directory, with
# `set -e` semantics by && chains) and ends with test_done. Output is TAP.
#
#   test_expect_success DESC BODY   passes when BODY exits 0
#   test_expect_code N DESC BODY    passes when BODY exits N
#   test_skip DESC REASON           reports a skip, with the reason
#   need CMD...                     true when the commands exist
#
# Useful in bodies: $TF (the binary), $FIX (built fixtures), $TOP (source
# tree), $SCRATCH (this script's temp dir), and the helpers below.
# KEEP=1 in the environment keeps $SCRATCH after the script, for a look.
# TF_TEST_TIMES=1 prints the seconds of each test and of the set-up between.
set -u
# The suite describes its own CI context: a CI runner's variables (CI=true,
# GITHUB_*, GITLAB_CI, CI_*, CIRCLE*, TESTFLAME_*) must not leak into it.
# run.sh's symbol cache stays: the suite's own, never the user's, which
# other builds of testflame (and other runs) leave as they like.
for v in $(compgen -e); do
	case "$v" in
	TESTFLAME_TOP|TESTFLAME_BUILD|TESTFLAME_CACHE_DIR) ;;
	CI|CI_*|GITHUB_*|GITLAB_*|CIRCLE*|TESTFLAME_*|BUILDKITE*|JENKINS_*|TRAVIS*) unset "$v";;
	esac
done
# python3 as a version manager's shim (pyenv's is a bash script running
# pyenv) costs about a second a call on a busy machine: test bodies call the
# interpreter it resolves to, found once per suite by run.sh (or here).
: "${TF_TEST_PYTHON3:=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)}"
[ -x "$TF_TEST_PYTHON3" ] && python3() { "$TF_TEST_PYTHON3" "$@"; }
TOP=${TESTFLAME_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${TESTFLAME_BUILD:-$TOP/build}
TF=$BUILD/testflame
FIX=$BUILD/fixtures
SCRATCH=$(mktemp -d "/tmp/testflame-e2e.XXXXXX")
export TESTFLAME_NO_PROGRESS=1
# One Go build cache for the suite's scripts (run.sh's, or this script's):
# the standard library that `go test` builds into a cold cache costs 5 s of
# CPU, 9 s under the profiler, in every script that would start with one.
GO_CACHE=${TF_TEST_GOCACHE:-$SCRATCH/gocache}
trap '[ -n "${KEEP:-}" ] || rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH" || exit 1

test_count=0
test_failed=0

# TF_TEST_TIMES=1: a TAP comment with the seconds each test took and those
# spent between tests (set-up), to see where a script's time goes.
test_mark=$EPOCHREALTIME
test_time() { # what
	[ -n "${TF_TEST_TIMES:-}" ] || return 0
	local now=$EPOCHREALTIME
	awk -v a="$test_mark" -v b="$now" -v w="$1" 'BEGIN { printf "# time %6.2f s  %s\n", b - a, w }'
	test_mark=$now
}

test_expect_code() { # CODE DESC BODY
	local want=$1 desc=$2 body=$3 rc
	test_count=$((test_count + 1))
	test_time "(before $test_count)"
	( cd "$SCRATCH" && eval "$body" ) > "$SCRATCH/.out.$test_count" 2>&1
	rc=$?
	test_time "$test_count - $desc"
	if [ "$rc" = "$want" ]; then
		echo "ok $test_count - $desc"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $desc (exit $rc, expected $want)"
		sed 's/^/#   /' "$SCRATCH/.out.$test_count" | tail -n 30
	fi
}

test_expect_success() { # DESC BODY
	test_expect_code 0 "$1" "$2"
}

# A test of shares of CPU time measured on this machine: a VM's host
# takes time from whichever test runs at that moment (cpu-clock counts the
# stolen time too), which moves a share by several points now and then.
# The body runs once more when it fails; a wrong attribution fails both.
test_expect_shares() { # DESC BODY
	local desc=$1 body=$2 rc
	test_count=$((test_count + 1))
	test_time "(before $test_count)"
	( cd "$SCRATCH" && eval "$body" ) > "$SCRATCH/.out.$test_count" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		( cd "$SCRATCH" && eval "$body" ) > "$SCRATCH/.out2.$test_count" 2>&1
		rc=$?
		[ "$rc" = 0 ] && sed 's/^/#   first try: /' "$SCRATCH/.out.$test_count" | tail -n 3
		cat "$SCRATCH/.out2.$test_count" > "$SCRATCH/.out.$test_count"
	fi
	test_time "$test_count - $desc"
	if [ "$rc" = 0 ]; then
		echo "ok $test_count - $desc"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $desc (exit $rc, twice)"
		sed 's/^/#   /' "$SCRATCH/.out.$test_count" | tail -n 30
	fi
}

test_skip() { # DESC REASON
	test_count=$((test_count + 1))
	echo "ok $test_count # skip $1: $2"
}

test_done() {
	test_time "(after $test_count)"
	echo "1..$test_count"
	[ "$test_failed" = 0 ]
}

need() {
	local c
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || return 1; done
}

# on_tty CMD...: CMD with a terminal for its output (a pseudo-terminal:
# all it wrote, read to the end, on stdout; its exit status). script(1)
# can lose the output of a command that ends at once, or hang when its
# own input is closed.
on_tty() {
	python3 - "$@" <<-\EOF
	import os, pty, sys
	pid, fd = pty.fork()
	if pid == 0:
	    os.execvp(sys.argv[1], sys.argv[1:])
	out = b""
	while True:
	    try:
	        b = os.read(fd, 65536)
	    except OSError:  # EIO: the terminal's other side is closed and drained
	        break
	    if not b:
	        break
	    out += b
	_, status = os.waitpid(pid, 0)
	sys.stdout.buffer.write(out)
	sys.exit(os.waitstatus_to_exitcode(status))
	EOF
}

# Assertions that say what they expected.
fail() { echo "FAIL: $*" >&2; return 1; }
# Whether perf records off-CPU time here (the context-switch event).
offcpu_works() {
	"$TF" record -q -o "$SCRATCH/.offcpu-probe.pb.gz" -- true 2>/dev/null &&
		go tool pprof -comments "$SCRATCH/.offcpu-probe.pb.gz" 2>/dev/null |
		grep -q "testflame.offcpu=switches"
}
expect_contains() { # FILE TEXT
	grep -qF -- "$2" "$1" || { echo "expected '$1' to contain: $2" >&2; echo "--- $1:" >&2; head -c 3000 "$1" >&2; return 1; }
}
expect_not_contains() { # FILE TEXT
	! grep -qF -- "$2" "$1" || { echo "expected '$1' not to contain: $2" >&2; return 1; }
}
expect_eq() { # GOT WANT [WHAT]
	[ "$1" = "$2" ] || { echo "${3:-value}: got '$1', expected '$2'" >&2; return 1; }
}
# expect_near GOT WANT TOLERANCE WHAT  (floating point, absolute)
expect_near() {
	awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }' ||
		{ echo "${4:-value}: got $1, expected $2 ± $3" >&2; return 1; }
}
# A value of a JSON file: EXPR is a Python expression over d, the parsed
# file (report.json: "d[\"tests\"][0][\"verdict\"]"); printed as Python
# prints it.
jget() { # FILE EXPR
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$1" "$2"
}
# The verdict of TEST in a report.json.
verdict() { # REPORT_JSON TEST
	jget "$1" "[t[\"verdict\"] for t in d[\"tests\"] if t[\"name\"] == \"$2\"][0]"
}
# The same with a JavaScript expression (d.tests[0].name), non-strings
# printed as JSON: for outputs whose JSON types matter (show --json).
json() { # FILE EXPR
	node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		 const v = eval(process.argv[2]); console.log(typeof v === "string" ? v : JSON.stringify(v))' "$1" "$2"
}
# Share (percent) of FUNCTION in `testflame view --format text` output FILE:
# the flat column of its row.
flat_share() { # FILE FUNCTION
	awk -v f="$2" '$NF == f && $2 ~ /%$/ { sub("%", "", $2); print $2; found = 1; exit } END { if (!found) print "0" }' "$1"
}
# The rows of a top table (`testflame view --format text` or
# `go tool pprof -top`) as "NAME FLAT CUM", sorted by name: the two tools'
# tables compare with diff. Reads FILE, or stdin without one.
top_rows() { # [FILE]
	awk '/^ *flat  *flat%/ { on = 1; next } on && NF >= 6 { print $6, $1, $4 }' "${1:--}" | sort
}
# The cum% (5th column) of FUNCTION in `go tool pprof -top` or
# `testflame view --format text` output FILE; 0 if absent.
cum_share() { # FILE FUNCTION
	awk -v f="$2" '$NF == f && $5 ~ /%$/ { sub("%", "", $5); print $5; found = 1; exit } END { if (!found) print "0" }' "$1"
}
# Slow down the example project's matrix_multiply (a second pass over
# each row and column), in src/matrix.c of the current directory.
slow_down_matrix() {
	python3 - <<\PY
p = 'src/matrix.c'
s = open(p).read()
s = s.replace("""				s += a[i * n + k] * b[k * n + j];
""", """				s += a[i * n + k] * b[k * n + j];
			for (int r = 0; r < 4; r++) for (int k = 0; k < n; k++) /* extra passes */
				s += 0.0 * a[i * n + k] * b[k * n + j];
""")
open(p, 'w').write(s)
PY
}
# base.spec and head.spec, mkpprof.py's input for a labelled suite of
# Go-like tests: TestEncode's loop (enc.go:44, then :45) doubles, TestParse
# stays, TestOld goes and TestFresh comes.
labelled_specs() {
	cat > base.spec <<-\EOF
	TestParse 2000 main@main.go:10;parse@parse.go:20
	TestEncode 1000 main@main.go:10;encode@enc.go:30;loop@enc.go:44
	TestEncode 1000 main@main.go:10;encode@enc.go:30;copy@enc.go:50
	TestOld 500 main@main.go:10;old@old.go:5
	EOF
	cat > head.spec <<-\EOF
	TestParse 2000 main@main.go:10;parse@parse.go:20
	TestEncode 2000 main@main.go:10;encode@enc.go:30;loop@enc.go:45
	TestEncode 1000 main@main.go:10;encode@enc.go:30;copy@enc.go:50
	TestFresh 300 main@main.go:10;fresh@fresh.go:7
	EOF
}
# Run a command in the background, print its pid.
# Wait until a process whose command line contains TEXT exists (max 10 s).
wait_for_proc() { # TEXT
	local i
	for i in $(seq 100); do pgrep -f -- "$1" >/dev/null && return 0; sleep 0.1; done
	echo "no process matching '$1' appeared" >&2; return 1
}
# Samples of TEST in a run file's metadata (testflame.test.NAME=samples=N ...).
test_samples() { # RUNFILE TEST
	go tool pprof -comments "$1" 2>/dev/null |
		awk -v t="testflame.test.$2=" 'index($0, t) == 1 { sub(/.*samples=/, ""); sub(/ .*/, ""); print; found = 1 } END { if (!found) print 0 }'
}
# Check that tests NAME_1..NAME_K (given as "name:k" pairs) have sample
# shares within TOL points of k/sum(k).
expect_shares() { # RUNFILE TOL name:k...
	local run=$1 tol=$2 total=0 ksum=0 pair name k n
	shift 2
	for pair in "$@"; do
		name=${pair%:*} k=${pair##*:}
		n=$(test_samples "$run" "$name")
		[ "$n" -gt 0 ] || { echo "test '$name' has no samples" >&2; go tool pprof -comments "$run" 2>/dev/null | grep 'testflame.test\.' >&2; return 1; }
		total=$((total + n)) ksum=$((ksum + k))
	done
	for pair in "$@"; do
		name=${pair%:*} k=${pair##*:}
		n=$(test_samples "$run" "$name")
		expect_near "$(awk -v n=$n -v t=$total 'BEGIN { printf "%.2f", 100 * n / t }')" \
			"$(awk -v k=$k -v s=$ksum 'BEGIN { printf "%.2f", 100 * k / s }')" "$tol" \
			"share of $name ($n of $total samples)" || return 1
	done
}
