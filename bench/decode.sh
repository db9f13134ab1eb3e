#!/usr/bin/env bash
# decode.sh - how fast testflame reads a large pprof, against Go's pprof on
# the same file. Builds testflame and bench/genprof, generates the file once
# (build/bench/big.pb.gz: 100,000 distinct stacks, 1,000,000 samples, about
# 115 MB of protobuf, 60 MB gzipped), then times, best of RUNS (default 3):
#
#   testflame show FILE                       decode + per-test/process tables
#   go tool pprof -raw -symbolize=none FILE   decode + print the samples
#   goparse FILE                              decode only: profile.Parse, the
#                                             decoder inside go tool pprof
#                                             (Go's vendored copy, built here)
#
# and prints them (wall clock and CPU = user + sys) and the ratios. Wall
# clock is what a user waits; CPU time is steadier on a shared machine.
#
#   bench/decode.sh [FILE]        RUNS=N to change the number of runs
set -euo pipefail
. "$(dirname "$0")/common.sh"
top=$TOP
build=${BUILD:-$top/build}
runs=${RUNS:-3}
export HOME=${HOME:-/tmp} PPROF_TMPDIR=${PPROF_TMPDIR:-/tmp}

make -C "$top" --no-print-directory BUILD="$build" bench > /dev/null
file=${1:-$build/bench/big.pb.gz}
if [ ! -f "$file" ]; then
	mkdir -p "$(dirname "$file")"
	"$build/bench/genprof" -o "$file"
fi
command -v go > /dev/null || { echo "decode.sh: go is not installed (make deps)" >&2; exit 1; }

# goparse: Go's pprof decoder alone, from the copy vendored in GOROOT, so
# the comparison with pprof's decoding (without -raw's printing) is fair.
goparse=$build/bench/goparse/goparse
if [ ! -x "$goparse" ]; then
	src=$(go env GOROOT)/src/cmd/vendor/github.com/google/pprof/profile
	dir=$build/bench/goparse
	mkdir -p "$dir/profile"
	cp "$src"/*.go "$dir/profile/"
	printf 'module goparse\n\ngo 1.19\n' > "$dir/go.mod"
	cat > "$dir/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"

	"goparse/profile"
)

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	p, err := profile.Parse(f)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(p.Sample), "samples")
}
EOF
	(cd "$dir" && GOFLAGS=-mod=mod GOPROXY=off go build -o goparse .)
fi

# best_of CMD...: "WALL CPU" in seconds, the run with the least wall time.
best_of() {
	local best_wall="" best_cpu="" out
	for _ in $(seq "$runs"); do
		out=$( { TIMEFORMAT='%R %U %S'; time "$@" > /dev/null 2>&1; } 2>&1 )
		read -r wall user sys <<< "$out"
		cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')
		if [ -z "$best_wall" ] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
			best_wall=$wall best_cpu=$cpu
		fi
	done
	echo "$best_wall $best_cpu"
}

size=$(stat -c %s "$file")
raw=$(gzip -dc "$file" 2> /dev/null | wc -c || stat -c %s "$file")
echo "file: $file ($((size / 1048576)) MB on disk, $((raw / 1048576)) MB of protobuf)"
machine
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "best of $runs runs, seconds (wall / cpu):"
read -r ours_wall ours_cpu <<< "$(best_of "$build/testflame" show "$file")"
printf '  %-44s %8s / %s\n' "testflame show" "$ours_wall" "$ours_cpu"
read -r go_wall go_cpu <<< "$(best_of go tool pprof -raw -symbolize=none "$file")"
printf '  %-44s %8s / %s\n' "go tool pprof -raw -symbolize=none" "$go_wall" "$go_cpu"
read -r gp_wall gp_cpu <<< "$(best_of "$goparse" "$file")"
printf '  %-44s %8s / %s\n' "goparse (Go's profile.Parse only)" "$gp_wall" "$gp_cpu"
awk -v gw="$go_wall" -v ow="$ours_wall" -v gc="$go_cpu" -v oc="$ours_cpu" \
    -v pw="$gp_wall" -v pc="$gp_cpu" 'BEGIN {
	printf "ratio go tool pprof -raw / testflame show: %.1fx wall, %.1fx cpu\n", gw / ow, gc / oc
	printf "ratio profile.Parse / testflame show:      %.1fx wall, %.1fx cpu\n", pw / ow, pc / oc
}'
