#!/usr/bin/env bash
# run.sh - testflame's test runner: every cmocka unit test binary, then every
# end-to-end script in tests/e2e (TAP output). Prints each failure, and as its
# last line "N passed, N failed". Exit status 1 if anything failed.
#
#   tests/run.sh BUILD_DIR [unit|e2e|all] [PATTERN]
set -u
build=${1:-build}
what=${2:-all}
pattern=${3:-}
top=$(cd "$(dirname "$0")/.." && pwd)
# The suite describes its own CI context: a CI runner's variables (CI=true,
# GITHUB_*, GITLAB_CI, CI_*, CIRCLE*, TESTFLAME_*) must not leak into it.
for v in $(compgen -e); do
	case "$v" in
	CI|CI_*|GITHUB_*|GITLAB_*|CIRCLE*|TESTFLAME_*|BUILDKITE*|JENKINS_*|TRAVIS*) unset "$v";;
	esac
done
build=$(cd "$build" && pwd)
export TESTFLAME_BUILD="$build" TESTFLAME_TOP="$top"
export PATH="$build:$PATH"
# the interpreter behind python3, for tests/e2e/lib.sh (a shim costs a
# second a call)
TF_TEST_PYTHON3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && export TF_TEST_PYTHON3

passed=0 failed=0 skipped=0
failures=()
log=$(mktemp -d /tmp/testflame-run.XXXXXX)
trap 'rm -rf "$log"' EXIT
# one symbol cache for the whole suite, not the user's
export TESTFLAME_CACHE_DIR="$log/cache"
# and one Go build cache for the scripts that build Go (tests/e2e/lib.sh)
export TF_TEST_GOCACHE="$log/gocache"

# Count TAP lines of one test program's output.
tally() { # name file
	local name=$1 file=$2 line
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# skip"*|"ok "*"# SKIP"*) skipped=$((skipped + 1)); echo "  skip: $name: ${line#*# }";;
		"ok "*) passed=$((passed + 1));;
		"not ok "*) failed=$((failed + 1)); failures+=("$name: ${line#not ok }");;
		esac
	done < "$file"
}

run_one() { # name cmd...
	local name=$1; shift
	local out="$log/$(echo "$name" | tr '/ ' '__').out"
	local start=$(date +%s)
	"$@" > "$out" 2>&1
	local rc=$?
	local failed_before=$failed
	tally "$name" "$out"
	# a program that exits non-zero failed, even if every line it printed
	# said ok (a sanitizer's leak report, a crash after the last test)
	if [ $rc -ne 0 ] && [ $failed -eq $failed_before ]; then
		failed=$((failed + 1)); failures+=("$name: exited $rc")
	fi
	if grep -q '^not ok' "$out" || { [ $rc -ne 0 ] && ! grep -q '^ok' "$out"; }; then
		echo "--- $name (exit $rc)"; grep -v '^ok' "$out" | tail -n 40
	fi
	printf '%-40s %3ds\n' "$name" $(( $(date +%s) - start ))
}

if [ "$what" = all ] || [ "$what" = unit ]; then
	for t in "$build"/tests/test_*; do
		[ -x "$t" ] || continue
		case "$t" in *.d|*.o) continue;; esac
		[ -n "$pattern" ] && [[ "$t" != *$pattern* ]] && continue
		CMOCKA_MESSAGE_OUTPUT=TAP run_one "unit/$(basename "$t")" "$t"
	done
fi
# One headless Chromium for the end-to-end scripts that open pages
# (tests/node/chromium.mjs): each opens a new context in it, not a browser
# of its own, whose launch costs 2-3 s. Without it they launch their own.
chromium_pid=
start_chromium() {
	local i
	command -v node >/dev/null 2>&1 && [ -x /usr/bin/chromium ] &&
		[ -d "$top/tests/node/node_modules/playwright-core" ] || return 0
	node "$top/tests/node/chromium-server.mjs" "$log/chromium.ws" >"$log/chromium.log" 2>&1 &
	chromium_pid=$!
	for i in $(seq 300); do
		[ -s "$log/chromium.ws" ] && break
		kill -0 "$chromium_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -s "$log/chromium.ws" ]; then
		export TF_CHROMIUM_WS=$(cat "$log/chromium.ws")
	else
		echo "(no shared Chromium, each test launches its own: $(tail -n 3 "$log/chromium.log"))"
	fi
}
stop_chromium() {
	[ -n "$chromium_pid" ] || return 0
	kill "$chromium_pid" 2>/dev/null && wait "$chromium_pid" 2>/dev/null
	chromium_pid=
}
trap 'stop_chromium; rm -rf "$log"' EXIT

if [ "$what" = all ] || [ "$what" = e2e ]; then
	start_chromium
	for t in "$top"/tests/e2e/t[0-9]*.sh; do
		[ -f "$t" ] || continue
		[ -n "$pattern" ] && [[ "$t" != *$pattern* ]] && continue
		run_one "e2e/$(basename "$t")" bash "$t"
	done
	stop_chromium
fi

for f in "${failures[@]+"${failures[@]}"}"; do echo "FAILED: $f"; done
[ $skipped -gt 0 ] && echo "($skipped skipped, reasons above)"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
