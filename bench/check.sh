#!/usr/bin/env bash
# check.sh - the benchmarks that keep watch (`make bench-check`): reruns
# the quick form of each benchmark in bench/, reads its CPU-time figures
# (the steadier ones on a shared machine) and fails when one falls short
# of its goal in BENCHMARKS.md. Run it by hand before a change to a hot
# path is submitted, and copy its table into BENCHMARKS.md.
#
#   bench/check.sh [NAME...]    (postprocess, symbolize, compare, decode;
#                                default all; YAMLCPP_BUILD=dir adds
#                                yaml-cpp's tests to symbolize)
#
# Each check prints "name: figure (goal) ok|SHORT", under a line that names
# the machine (CPU model, cores, memory, transparent huge pages), the code
# and the load average, and over one with the load at the end: a figure is
# only comparable with one from the same CPU model. The exit status is 1
# when any figure misses its goal, 2 when a benchmark could not run.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LOG=$(mktemp -d /tmp/testflame-check.XXXXXX)
trap 'rm -rf "$LOG"' EXIT
short=0
broken=0

# verdict NAME FIGURE OP GOAL UNIT: FIGURE OP GOAL ("ge" or "le")
verdict() {
	local name=$1 fig=$2 op=$3 goal=$4 unit=$5 ok
	if [ -z "$fig" ]; then
		printf '%-46s %10s  (goal %s %s%s)  NO FIGURE\n' "$name" "-" "$([ "$op" = ge ] && echo '>=' || echo '<=')" "$goal" "$unit"
		broken=1
		return
	fi
	ok=$(awk -v f="$fig" -v g="$goal" -v op="$op" 'BEGIN { print (op == "ge" ? f >= g : f <= g) ? "ok" : "SHORT" }')
	[ "$ok" = ok ] || short=1
	printf '%-46s %10s  (goal %s %s%s)  %s\n' "$name" "$fig$unit" "$([ "$op" = ge ] && echo '>=' || echo '<=')" "$goal" "$unit" "$ok"
}

# the CPU ratio ("... Nx Mx": the last) of a postprocess.sh line
pp_ratio() { sed -n "s/^perf script + folding.* \([0-9.]*\)x$/\1/p" "$1"; }

run_postprocess() {
	# the smallest and a large profile of the example suite
	NOSRCLINE=1 "$TOP/bench/postprocess.sh" 3 999 1 >"$LOG/pp1" 2>&1 || { cat "$LOG/pp1"; broken=1; }
	local n1 n2
	n1=$(sed -n 's/^samples: testflame \([0-9]*\).*/\1/p' "$LOG/pp1")
	verdict "post-processing vs perf script, ${n1:-?} samples" "$(pp_ratio "$LOG/pp1")" ge 5 x
	NOSRCLINE=1 "$TOP/bench/postprocess.sh" 3 4999 4 >"$LOG/pp2" 2>&1 || { cat "$LOG/pp2"; broken=1; }
	n2=$(sed -n 's/^samples: testflame \([0-9]*\).*/\1/p' "$LOG/pp2")
	verdict "post-processing vs perf script, ${n2:-?} samples" "$(pp_ratio "$LOG/pp2")" ge 5 x
}

run_symbolize() {
	NOSRCLINE=1 "$TOP/bench/symbolize.sh" 3 >"$LOG/sym" 2>&1 || { cat "$LOG/sym"; broken=1; }
	local line name
	while IFS= read -r line; do
		name=$(echo "$line" | sed 's/ *[0-9]* MB .*//')
		verdict "symbolize $name: cold" "$(echo "$line" | sed -n 's/.*tf cold *\([0-9.]*\) ms.*/\1/p')" le 100 " ms"
		verdict "symbolize $name: warm" "$(echo "$line" | sed -n 's/.*warm *\([0-9.]*\) ms.*/\1/p')" le 20 " ms"
		verdict "symbolize $name: perf script / cold" "$(echo "$line" | sed -n 's/.*perf script *[0-9.]* ms (\([0-9.]*\)x cold.*/\1/p')" ge 1 x
	done < <(grep 'tf cold' "$LOG/sym")
	grep -q 'tf cold' "$LOG/sym" || { cat "$LOG/sym"; broken=1; }
}

run_compare() {
	"$TOP/bench/compare.sh" 120000 1 >"$LOG/cmp" 2>&1 || { cat "$LOG/cmp"; broken=1; }
	verdict "compare vs pprof -diff_base (CPU)" \
		"$(sed -n 's/.*ratio (pprof \/ testflame) *[0-9.]*x *\([0-9.]*\)x.*/\1/p' "$LOG/cmp")" ge 20 x
}

run_decode() {
	RUNS=1 "$TOP/bench/decode.sh" >"$LOG/dec" 2>&1 || { cat "$LOG/dec"; broken=1; }
	verdict "decode vs go tool pprof -raw (CPU)" \
		"$(sed -n 's/^ratio go tool pprof -raw .* \([0-9.]*\)x cpu$/\1/p' "$LOG/dec")" ge 3 x
}

checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=(postprocess symbolize compare decode)
# "AMD EPYC, 2 cores, 24 GiB, THP madvise"
machine() {
	local model thp
	model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
	thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
	printf '%s, %s cores, %s GiB, THP %s' "${model:-unknown CPU}" "$(nproc)" \
		"$(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)" "${thp:-none}"
}
echo "bench-check: $(date -u +%Y-%m-%dT%H:%MZ), $(machine)"
echo "code $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${checks[@]}"; do
	case $c in
	postprocess | symbolize | compare | decode) "run_$c" ;;
	*) echo "check.sh: no benchmark '$c' (postprocess, symbolize, compare, decode)" >&2; exit 2 ;;
	esac
done
echo "bench-check: done $(date -u +%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$broken" = 0 ] || exit 2
exit "$short"
