# testflame.sh - test markers for shell suites. Source it, then wrap tests:
#
#     . contrib/testflame.sh
#     testflame_begin "parser: empty input"
#     ./parser-test empty.txt
#     testflame_end "parser: empty input"
#
# The marker covers this shell and everything it runs (@pid=$$). Does
# nothing unless the suite runs under testflame. POSIX sh.

testflame_mark() { # begin|end NAME...
	[ -n "${TESTFLAME_MARKERS:-}" ] || return 0
	_tf_kind=$1
	shift
	printf '%s %s @pid=%s\n' "$_tf_kind" "$(printf '%s' "$*" | tr '\n\r' '  ')" "$$" \
		>> "$TESTFLAME_MARKERS" 2>/dev/null
	return 0
}

testflame_begin() { testflame_mark begin "$@"; }
testflame_end() { testflame_mark end "$@"; }
