#!/usr/bin/env bash
# python-overhead.sh - what reading Python frames costs: a pytest suite run
# bare, under `testflame record --no-python-frames` (the interpreter's C
# frames only) and under `testflame record` (every sample of the Python
# process gets its Python stack read from the interpreter's memory),
# alternating, ROUNDS times; with a 3.12+ interpreter also bare with
# PYTHONPERFSUPPORT=1, what perf-map trampolines cost the suite itself.
#
# Columns (medians):
#   suite cpu   the suite's own CPU time (user+sys, measured by GNU time
#               inside the recorded tree): what the sampler costs the tests
#   tf cpu      testflame's own CPU while recording (record -v)
#   samples, py stacks   samples, and those given a Python stack
# The reader's cost per Python stack is (tf cpu with frames - tf cpu
# without) / py stacks; its cost to the suite, the suite cpu ratio.
#
#   bench/python-overhead.sh [ROUNDS] DIR     (DIR: the suite, e.g. toolz's
#                                              source as realworld.sh unpacks it)
#   PY=python3.12 (with pytest importable) runs it under another interpreter.
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-5}
DIR=${2:?usage: bench/python-overhead.sh [ROUNDS] DIR}
PY=${PY:-/usr/bin/python3}
TIME=/usr/bin/time
[ -x $TIME ] || { echo "python-overhead.sh needs GNU time (apt-get install time)" >&2; exit 1; }
make -s -C "$TOP" all >/dev/null
CMD=("$PY" -m pytest -q -p no:cacheprovider)
cd "$DIR"

# bare NAME [ENV...]: append "wall cpu"
bare() {
	local name=$1
	shift
	env "$@" $TIME -f "%e %U %S" -o "$WORK/t" "${CMD[@]}" >/dev/null 2>&1 || true
	# GNU time puts "Command exited with non-zero status N" first when the
	# suite fails (toolz's does under 3.12+): the figures are the last line
	tail -n 1 "$WORK/t" | awk '{ printf "%s %.3f\n", $1, $2 + $3 }' >>"$WORK/$name"
}

# tf NAME [FLAGS...]: append "wall cpu tf_cpu samples stacks"
tf() {
	local name=$1
	shift
	"$TF" record -v "$@" -o "$WORK/r.pb.gz" -- $TIME -f "%e %U %S" -o "$WORK/t" "${CMD[@]}" \
		>/dev/null 2>"$WORK/log" || true
	"$TF" show "$WORK/r.pb.gz" >"$WORK/show"
	awk -v t="$(tail -n 1 "$WORK/t")" '
		FNR == NR && /own CPU while recording/ {
			for (i = 1; i < NF; i++) if ($(i + 1) == "ms") tf += $i
		}
		FNR != NR && $1 == "samples" && !s { s = $2 }
		FNR != NR && $1 == "python_stacks" { p = $2 }
		END { split(t, v, " "); printf "%s %.3f %.1f %d %d\n", v[1], v[2] + v[3], tf, s, p }' \
		"$WORK/log" "$WORK/show" >>"$WORK/$name"
}

col() { awk -v c="$2" '{ print $c }' "$WORK/$1" | median; }

minor=$("$PY" -c 'import sys; print(sys.version_info[1])')
"${CMD[@]}" >/dev/null 2>&1 || true # warm the bytecode caches
for r in $(seq "$ROUNDS"); do
	bare bare
	tf native --no-python-frames
	tf frames
	[ "$minor" -ge 12 ] && bare perfmaps PYTHONPERFSUPPORT=1
done

machine
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (cpu columns hold on a busy machine, wall ones less)"
echo "suite: ${CMD[*]} in $DIR ($("$PY" -V 2>&1)), $ROUNDS alternating rounds, medians"
printf '%-34s %7s %9s %8s %8s %9s %9s\n' variant "wall s" "suite cpu" "÷bare" "tf cpu" samples \
	"py stacks"
bc=$(col bare 2)
row() { # LABEL NAME
	local f=$2
	if [ "$(awk '{ print NF; exit }' "$WORK/$f")" -ge 5 ]; then
		printf '%-34s %7.2f %9.2f %8.3f %6.0f ms %9.0f %9.0f\n' "$1" "$(col $f 1)" "$(col $f 2)" \
			"$(awk -v a="$(col $f 2)" -v b="$bc" 'BEGIN { print a / b }')" "$(col $f 3)" \
			"$(col $f 4)" "$(col $f 5)"
	else
		printf '%-34s %7.2f %9.2f %8.3f\n' "$1" "$(col $f 1)" "$(col $f 2)" \
			"$(awk -v a="$(col $f 2)" -v b="$bc" 'BEGIN { print a / b }')"
	fi
}
row "bare" bare
row "record --no-python-frames" native
row "record (Python frames)" frames
[ "$minor" -ge 12 ] && row "bare, PYTHONPERFSUPPORT=1" perfmaps
awk -v a="$(col frames 3)" -v b="$(col native 3)" -v n="$(col frames 5)" \
	'BEGIN { if (n > 0) printf "reading Python stacks: %.0f us of testflame CPU per stack\n", (a - b) * 1000 / n }'
