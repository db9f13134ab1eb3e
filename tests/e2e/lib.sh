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
set -u
TOP=${TESTFLAME_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${TESTFLAME_BUILD:-$TOP/build}
TF=$BUILD/testflame
FIX=$BUILD/fixtures
SCRATCH=$(mktemp -d "/tmp/testflame-e2e.XXXXXX")
export TESTFLAME_NO_PROGRESS=1
trap '[ -n "${KEEP:-}" ] || rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH" || exit 1

test_count=0
test_failed=0

test_expect_code() { # CODE DESC BODY
	local want=$1 desc=$2 body=$3 rc
	test_count=$((test_count + 1))
	( cd "$SCRATCH" && eval "$body" ) > "$SCRATCH/.out.$test_count" 2>&1
	rc=$?
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

test_skip() { # DESC REASON
	test_count=$((test_count + 1))
	echo "ok $test_count # skip $1: $2"
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" = 0 ]
}

need() {
	local c
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || return 1; done
}

# Assertions that say what they expected.
fail() { echo "FAIL: $*" >&2; return 1; }
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
# Share (percent) of FUNCTION in `testflame view --format text` output FILE:
# the flat column of its row.
flat_share() { # FILE FUNCTION
	awk -v f="$2" '$NF == f && $2 ~ /%$/ { sub("%", "", $2); print $2; found = 1; exit } END { if (!found) print "0" }' "$1"
}
