#!/usr/bin/env bash
# postprocess.sh - the cost of getting a symbolized profile once the suite
# has run: testflame (replay, unwind, symbolize with file:line and inlined
# frames, attribute, encode, as timed by `record -v`, plus `view --format
# folded`) versus perf (`perf script` over perf.data plus folding its stacks
# with awk, the job of FlameGraph's stackcollapse-perf.pl; and the same with
# `-F +srcline`, which gives the file:line testflame's profile carries).
# Same workload (the example suite REPEAT times), frequency, frame pointers.
# testflame's own CPU while the suite ran is printed too. Both wall and CPU
# time (user + system, children included) are shown; on a shared machine
# the CPU ratio is the one to read.
#
# testflame keeps this boot's kernel symbols and uncompressed copies of
# compressed debug info in its user cache, as perf keeps kallsyms and
# binaries in ~/.debug: the rounds run with a warm cache (a fresh one in
# the work directory), and one first run with it empty is shown apart.
#
#   bench/postprocess.sh [ROUNDS] [FREQ] [REPEAT]     (NOSRCLINE=1: skip the srcline variant)
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-5}
FREQ=${2:-999}
REPEAT=${3:-1}
bench_build
printf 'for i in $(seq %s); do make -s -C "%s" check || exit 1; done\n' "$REPEAT" "$TOP/examples" >"$WORK/suite.sh"
SUITE=(sh "$WORK/suite.sh")

# perf script's output folded: frames of each sample, root first, ';'-joined
cat >"$WORK/fold.awk" <<'EOF'
/^\S/ { if (stack != "") c[stack]++; stack = ""; next }
/^\s+[0-9a-f]+ / { $1 = ""; sub(/^ /, ""); sub(/\+0x[0-9a-f]+ .*$/, ""); sub(/ \(.*\)$/, "");
                   stack = stack == "" ? $0 : $0 ";" stack; next }
END { if (stack != "") c[stack]++; for (s in c) print s, c[s] }
EOF

: >"$WORK/tf.times"; : >"$WORK/perf.times"; : >"$WORK/perfsl.times"; : >"$WORK/tfrun.times"
export TESTFLAME_CACHE_DIR="$WORK/cache"
rm -rf "$TESTFLAME_CACHE_DIR"
# post-processing time of one `record -v` log plus a view: build + write +
# view, as "WALL CPU"
tf_post() { # LOG
	local build_ms build_cpu write_ms write_cpu view
	build_ms=$(sed -n 's/.*built the profile in \([0-9.]*\) ms.*/\1/p' "$1")
	build_cpu=$(sed -n 's/.*built the profile in [0-9.]* ms, \([0-9.]*\) ms of CPU.*/\1/p' "$1")
	write_ms=$(sed -n 's/.*wrote the run file in \([0-9.]*\) ms.*/\1/p' "$1")
	write_cpu=$(sed -n 's/.*wrote the run file in [0-9.]* ms, \([0-9.]*\) ms of CPU.*/\1/p' "$1")
	view=$(time_cpu "$TF" view --format folded -o "$WORK/run.folded" "$WORK/run.pb.gz")
	echo "$view" | awk -v b="$build_ms" -v c="$build_cpu" -v w="$write_ms" -v x="$write_cpu" \
		'{ printf "%.4f %.4f\n", b / 1000 + w / 1000 + $1, c / 1000 + x / 1000 + $2 }'
}
# "WALL CPU" of a command (CPU: user + system, its children included, to
# the millisecond: GNU time's centiseconds would round a view to nothing)
time_cpu() {
	local TIMEFORMAT='%3R %3U %3S'
	{ time "$@" >/dev/null 2>&1; } 2>"$WORK/time" || true
	awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }' "$WORK/time"
}
"$TF" record -v --freq "$FREQ" --call-graph fp -o "$WORK/run.pb.gz" -- "${SUITE[@]}" >/dev/null 2>"$WORK/tf.log"
cold=$(tf_post "$WORK/tf.log")
for r in $(seq "$ROUNDS"); do
	"$TF" record -v --freq "$FREQ" --call-graph fp -o "$WORK/run.pb.gz" -- "${SUITE[@]}" >/dev/null 2>"$WORK/tf.log"
	sed -n 's/.*own CPU while recording: \([0-9.]*\) ms user, \([0-9.]*\) ms system.*/\1 \2/p' "$WORK/tf.log" |
		awk '{ printf "%.4f\n", ($1 + $2) / 1000 }' >>"$WORK/tfrun.times"
	tf_post "$WORK/tf.log" >>"$WORK/tf.times"

	perf record -q -F "$FREQ" -g -o "$WORK/perf.data" -- "${SUITE[@]}" >/dev/null 2>&1
	time_cpu sh -c "perf script -i '$WORK/perf.data' 2>/dev/null | awk -f '$WORK/fold.awk' >'$WORK/perf.folded'" >>"$WORK/perf.times"
	if [ -z "${NOSRCLINE:-}" ]; then
		time_cpu sh -c "perf script -F +srcline -i '$WORK/perf.data' 2>/dev/null | awk -f '$WORK/fold.awk' >'$WORK/perfsl.folded'" >>"$WORK/perfsl.times"
	else
		echo "0 0" >>"$WORK/perfsl.times"
	fi
done

machine
echo "workload: make -C examples check x$REPEAT at $FREQ Hz, frame pointers; $ROUNDS rounds"
echo "samples: testflame $(sed -n "s/.*wrote '[^']*': \([0-9]*\) samples.*/\1/p" "$WORK/tf.log"), perf $(perf script -i "$WORK/perf.data" -F period 2>/dev/null | wc -l) samples"
col() { awk -v c="$1" '{ print $c }' "$2" | median; }
tf=$(col 1 "$WORK/tf.times"); pf=$(col 1 "$WORK/perf.times"); ps=$(col 1 "$WORK/perfsl.times")
tfc=$(col 2 "$WORK/tf.times"); pfc=$(col 2 "$WORK/perf.times"); psc=$(col 2 "$WORK/perfsl.times")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }
echo "medians                                                            wall       CPU   perf / testflame (wall, CPU)"
printf 'testflame post-processing (profile build + write + view folded): %8.3f s %8.3f s\n' "$tf" "$tfc"
printf '  (the first run, with the cache empty: %.3f s wall, %.3f s CPU)\n' $cold
printf '  (testflame'"'"'s own CPU while the suite ran, recording: %.3f s)\n' "$(median <"$WORK/tfrun.times")"
printf 'perf script + folding (symbols only):                           %8.3f s %8.3f s   %s %s\n' \
	"$pf" "$pfc" "$(ratio "$pf" "$tf")" "$(ratio "$pfc" "$tfc")"
printf 'perf script -F +srcline + folding (file:line, as testflame):   %8.3f s %8.3f s   %s %s\n' \
	"$ps" "$psc" "$(ratio "$ps" "$tf")" "$(ratio "$psc" "$tfc")"
