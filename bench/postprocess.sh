#!/usr/bin/env bash
# postprocess.sh - the cost of getting a symbolized profile once the suite
# has run: testflame (replay, unwind, symbolize with file:line and inlined
# frames, attribute, encode, as timed by `record -v`, plus `view --format
# folded`) versus perf (`perf script` over perf.data plus folding its stacks
# with awk, the job of FlameGraph's stackcollapse-perf.pl; and the same with
# `-F +srcline`, which gives the file:line testflame's profile carries).
# Same workload (the example suite REPEAT times), frequency, frame pointers.
# testflame's own CPU while the suite ran is printed too.
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
fold_perf() {
	awk '/^\S/ { if (stack != "") c[stack]++; stack = ""; next }
	     /^\s+[0-9a-f]+ / { $1 = ""; sub(/^ /, ""); sub(/\+0x[0-9a-f]+ .*$/, ""); sub(/ \(.*\)$/, "");
	                        stack = stack == "" ? $0 : $0 ";" stack; next }
	     END { if (stack != "") c[stack]++; for (s in c) print s, c[s] }'
}

: >"$WORK/tf.times"; : >"$WORK/perf.times"; : >"$WORK/perfsl.times"; : >"$WORK/tfrun.times"
export TESTFLAME_CACHE_DIR="$WORK/cache"
rm -rf "$TESTFLAME_CACHE_DIR"
# post-processing time of one `record -v` log plus a view: build + write + view
tf_post() { # LOG
	local build_ms write_ms view_s
	build_ms=$(sed -n 's/.*built the profile in \([0-9.]*\) ms.*/\1/p' "$1")
	write_ms=$(sed -n 's/.*wrote the run file in \([0-9.]*\) ms.*/\1/p' "$1")
	view_s=$(time_once "$TF" view --format folded -o "$WORK/run.folded" "$WORK/run.pb.gz")
	awk -v b="$build_ms" -v w="$write_ms" -v v="$view_s" 'BEGIN { printf "%.4f\n", b / 1000 + w / 1000 + v }'
}
"$TF" record -v --freq "$FREQ" --call-graph fp -o "$WORK/run.pb.gz" -- "${SUITE[@]}" >/dev/null 2>"$WORK/tf.log"
cold=$(tf_post "$WORK/tf.log")
for r in $(seq "$ROUNDS"); do
	"$TF" record -v --freq "$FREQ" --call-graph fp -o "$WORK/run.pb.gz" -- "${SUITE[@]}" >/dev/null 2>"$WORK/tf.log"
	sed -n 's/.*own CPU while recording: \([0-9.]*\) ms user, \([0-9.]*\) ms system.*/\1 \2/p' "$WORK/tf.log" |
		awk '{ printf "%.4f\n", ($1 + $2) / 1000 }' >>"$WORK/tfrun.times"
	tf_post "$WORK/tf.log" >>"$WORK/tf.times"

	perf record -q -F "$FREQ" -g -o "$WORK/perf.data" -- "${SUITE[@]}" >/dev/null 2>&1
	t0=$(now_ns)
	perf script -i "$WORK/perf.data" 2>/dev/null | fold_perf >"$WORK/perf.folded"
	t1=$(now_ns)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >>"$WORK/perf.times"
	if [ -z "${NOSRCLINE:-}" ]; then
		t0=$(now_ns)
		perf script -F +srcline -i "$WORK/perf.data" 2>/dev/null | fold_perf >"$WORK/perfsl.folded"
		t1=$(now_ns)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >>"$WORK/perfsl.times"
	else
		echo 0 >>"$WORK/perfsl.times"
	fi
done

machine
echo "workload: make -C examples check x$REPEAT at $FREQ Hz, frame pointers; $ROUNDS rounds"
echo "samples: testflame $(sed -n "s/.*wrote '[^']*': \([0-9]*\) samples.*/\1/p" "$WORK/tf.log"), perf $(perf script -i "$WORK/perf.data" -F period 2>/dev/null | wc -l) samples"
tf=$(median <"$WORK/tf.times"); pf=$(median <"$WORK/perf.times"); ps=$(median <"$WORK/perfsl.times")
printf 'testflame post-processing (profile build + write + view folded): %8.3f s\n' "$tf"
printf '  (the first run, with the cache empty: %.3f s)\n' "$cold"
printf '  (testflame'"'"'s own CPU while the suite ran, recording: %.3f s)\n' "$(median <"$WORK/tfrun.times")"
printf 'perf script + folding (symbols only):                           %8.3f s   perf / testflame %.1fx\n' \
	"$pf" "$(awk -v a="$pf" -v b="$tf" 'BEGIN { print a / b }')"
printf 'perf script -F +srcline + folding (file:line, as testflame):   %8.3f s   perf / testflame %.1fx\n' \
	"$ps" "$(awk -v a="$ps" -v b="$tf" 'BEGIN { print a / b }')"
