#!/usr/bin/env bash
# ptrace-overhead.sh - what the ptrace sampler costs a test. A
# single-threaded CPU-bound test (split7030) and an 8-thread one (threads8)
# run bare and under `testflame record --sampler ptrace` at FREQ,
# alternating, ROUNDS times; then the cost per sample as the thread count
# grows (threads8 with 1, 2, 4, 8 threads).
#
# Columns (medians):
#   wall÷bare   the test's own wall time under the sampler (measured by
#               /usr/bin/time inside the recorded tree) over its bare time:
#               what a test feels
#   cpu÷bare    the test's own CPU time (user+sys) over its bare CPU time:
#               the stops and traps it pays for; immune to a busy machine
#   +tracer     the same with testflame's tracer CPU added: all CPU spent
#   total÷bare  `testflame record` start to end (adds symbolization and the
#               run file, paid once per suite: see postprocess.sh)
# Per sample: the tracer's CPU (from record -v) and the test's extra CPU.
#
#   bench/ptrace-overhead.sh [ROUNDS] [FREQ]
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-10}
FREQ=${2:-99}
bench_build
FIXB=$TOP/build/fixtures
TIME=/usr/bin/time
[ -x $TIME ] || { echo "ptrace-overhead.sh needs GNU time (apt-get install time)" >&2; exit 1; }

# bare NAME CMD...: append "wall cpu"
bare() {
	local name=$1
	shift
	$TIME -f "%e %U %S" -o "$WORK/t" "$@" >/dev/null 2>&1 || true
	awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$WORK/t" >>"$WORK/$name.bare"
}

# tf NAME CMD...: append "wall cpu total samples tracer_us_per_sample"
tf() {
	local name=$1 t0 t1
	shift
	t0=$(now_ns)
	"$TF" record -v --sampler ptrace --freq "$FREQ" -o "$WORK/r.pb.gz" -- \
		$TIME -f "%e %U %S" -o "$WORK/t" "$@" >/dev/null 2>"$WORK/log" || true
	t1=$(now_ns)
	awk -v a="$t0" -v b="$t1" -v t="$(cat "$WORK/t")" '
		/ptrace: [0-9]+ samples/ { s = $3; for (i = 1; i <= NF; i++) if ($i == "us") us = $(i - 1) }
		END { split(t, v, " "); printf "%s %.3f %.4f %s %s\n", v[1], v[2] + v[3], (b - a) / 1e9, s, us }' \
		"$WORK/log" >>"$WORK/$name.tf"
}

col() { awk -v c="$3" '{ print $c }' "$WORK/$1.$2" | median; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

ONE=("$FIXB/split7030" 12)
EIGHT=("$FIXB/threads8" 8 160)
"${ONE[@]}" # warm up
for r in $(seq "$ROUNDS"); do
	bare one "${ONE[@]}"
	tf one "${ONE[@]}"
	bare eight "${EIGHT[@]}"
	tf eight "${EIGHT[@]}"
done

machine
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (wall ratios need an idle machine; cpu ratios less so)"
echo "ptrace sampler at $FREQ Hz, $ROUNDS alternating rounds, medians"
printf '%-22s %7s %9s %8s %8s %10s %8s\n' test "bare s" "wall÷bare" "cpu÷bare" "+tracer" \
	"total÷bare" samples
for w in one eight; do
	bw=$(col $w bare 1)
	bc=$(col $w bare 2)
	s=$(col $w tf 4)
	tracer=$(awk -v s="$s" -v us="$(col $w tf 5)" 'BEGIN { print s * us / 1e6 }')
	label=$([ $w = one ] && echo "1 thread (split7030)" || echo "8 threads (threads8)")
	printf '%-22s %7.3f %9s %8s %8s %10s %8.0f\n' "$label" "$bw" "$(div "$(col $w tf 1)" "$bw")" \
		"$(div "$(col $w tf 2)" "$bc")" \
		"$(div "$(awk -v c="$(col $w tf 2)" -v t="$tracer" 'BEGIN { print c + t }')" "$bc")" \
		"$(div "$(col $w tf 3)" "$bw")" "$s"
done

n_rounds=$(( (ROUNDS + 1) / 2 ))
echo
echo "cost per sample as threads grow (threads8 N 160, $n_rounds rounds)"
printf '%-8s %8s %9s %8s %15s %16s %14s\n' threads "bare s" "wall÷bare" samples \
	"tracer us/smp" "test cpu us/smp" "total us/smp"
for n in 1 2 4 8; do
	for r in $(seq $n_rounds); do
		bare "t$n" "$FIXB/threads8" $n 160
		tf "t$n" "$FIXB/threads8" $n 160
	done
	s=$(col "t$n" tf 4)
	us=$(col "t$n" tf 5)
	test_us=$(awk -v c="$(col "t$n" tf 2)" -v b="$(col "t$n" bare 2)" -v s="$s" \
		'BEGIN { print s ? (c - b) * 1e6 / s : 0 }')
	printf '%-8s %8.3f %9s %8.0f %15.1f %16.1f %14.1f\n' $n "$(col "t$n" bare 1)" \
		"$(div "$(col "t$n" tf 1)" "$(col "t$n" bare 1)")" "$s" "$us" "$test_us" \
		"$(awk -v a="$us" -v b="$test_us" 'BEGIN { print a + b }')"
done
