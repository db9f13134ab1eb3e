# testflame.sh - test markers for shell suites. Source it, then wrap tests:
#
#     . contrib/testflame.sh
#     testflame_begin "parser: empty input"
#     ./parser-test empty.txt
#     testflame_end "parser: empty input"
#
# The marker covers this shell and everything it runs (@pid=$$). Does
# nothing unless the suite runs under testflame. POSIX sh.

# The marker's own cost must stay out of the test it ends, so the usual
# name is written with builtins only; a name with a line break pays for tr.
_tf_cr=$(printf '\r')
_tf_nl='
'

testflame_mark() { # begin|end NAME...
	[ -n "${TESTFLAME_MARKERS:-}" ] || return 0
	_tf_kind=$1
	shift
	_tf_name=$*
	case $_tf_name in
	*"$_tf_nl"* | *"$_tf_cr"*) _tf_name=$(printf '%s' "$_tf_name" | tr '\n\r' '  ') ;;
	esac
	printf '%s %s @pid=%s\n' "$_tf_kind" "$_tf_name" "$$" >> "$TESTFLAME_MARKERS" 2>/dev/null
	return 0
}

testflame_begin() { testflame_mark begin "$@"; }
testflame_end() { testflame_mark end "$@"; }
