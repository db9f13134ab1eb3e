#!/usr/bin/env bash
# bench/compare.sh - how fast `testflame compare` diffs two large profiles,
# against `go tool pprof -top -diff_base` on the same files.
#
# Generates a base and a head run file of NSTACKS (default 120000) distinct
# stacks each (bench/genprofile.c), then times each tool RUNS times (default
# 3, after one warm-up run) and prints the medians and their ratios.
#
#   bench/compare.sh [NSTACKS] [RUNS]        (BUILD=dir to use another build)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
nstacks=${1:-120000}
runs=${2:-3}

command -v go > /dev/null || { echo "compare.sh: needs go (golang-go) for go tool pprof" >&2; exit 1; }
make -C "$top" --no-print-directory -s BUILD="$build" all
tmp=$(mktemp -d /tmp/testflame-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

pkgs="libgit2 libdw libelf libprotobuf-c zlib libcurl yaml-0.1 jansson"
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -I"$top/include" -I"$top/src" -I"$build/gen" \
	-o "$tmp/genprofile" "$top/bench/genprofile.c" "$build/libtestflame.a" \
	$(pkg-config --libs $pkgs) -liberty -lpthread -lm
"$tmp/genprofile" "$tmp/base.pb.gz" "$tmp/head.pb.gz" "$nstacks" 1
ls -l "$tmp"/*.pb.gz | awk '{ printf "  %s: %.1f MB\n", $NF, $5 / 1e6 }' | sed "s|$tmp/||"

# "WALL CPU": medians over $runs runs (after a warm-up) of the wall time and
# of the CPU time (user + system), in seconds. CPU time is the steadier
# figure on a shared machine.
measure() {
	local out=$tmp/times.$$ i
	: > "$out"
	"$@" > /dev/null 2>&1 || true
	for ((i = 0; i < runs; i++)); do
		{ TIMEFORMAT='%R %U %S'; time "$@" > /dev/null 2>&1 || true; } 2>> "$out"
	done
	mid() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }'; }
	echo "$(awk '{ print $1 }' "$out" | mid) $(awk '{ print $2 + $3 }' "$out" | mid)"
}

cd "$tmp"
read -r tf_wall tf_cpu < <(measure "$build/testflame" compare -q --report "$tmp/report" base.pb.gz head.pb.gz)
read -r pp_wall pp_cpu < <(measure go tool pprof -top -diff_base=base.pb.gz head.pb.gz)
"$build/testflame" compare -q --report "$tmp/report" base.pb.gz head.pb.gz | head -n 8 || true
echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3)"
echo "median of $runs runs, $nstacks stacks per profile:      wall        cpu"
printf '  testflame compare                   %8.3f s %8.3f s\n' "$tf_wall" "$tf_cpu"
printf '  go tool pprof -top -diff_base       %8.3f s %8.3f s\n' "$pp_wall" "$pp_cpu"
awk -v a="$tf_wall" -v b="$pp_wall" -v c="$tf_cpu" -v d="$pp_cpu" \
	'BEGIN { printf "  ratio (pprof / testflame)           %8.1fx  %8.1fx\n", b / a, d / c }'
