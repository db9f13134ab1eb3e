#!/usr/bin/env bash
# symbolize.sh - what it costs to symbolize a few samples of a big binary:
# testflame's profile build (record -v's "built the profile ... ms of CPU":
# replay, symbolize with file:line and inlined frames, attribute, encode)
# against `perf script` and `perf script -F +srcline` over a `perf record
# -g` of the same command at the same frequency, all as CPU time (user +
# system), the variants alternating in every round.
#
# Binaries: a generated C++ project (bench/gencxx.py: NTU units of
# templates and functions, tens of thousands of functions and about a
# hundred megabytes of DWARF with the defaults; built once into
# build/bench/gencxx-NTU) and, when YAMLCPP_BUILD names a yaml-cpp build
# directory, its GoogleTest binary run by ctest (Debian's yaml-cpp 0.7.0
# source, built with -g: test/yaml-cpp-tests, 71 MB).
#
# testflame is measured three ways: "cold", the binary never seen (its
# kept answers removed from the symbol cache, the machine's own entries,
# this boot's kernel symbols and the system libraries' debug copies, left
# in place, as any earlier run leaves them); "warm", run again; and
# "empty", the whole cache emptied first (one run).
#
#   bench/symbolize.sh [ROUNDS] [NTU]     (defaults 5, 32; NOSRCLINE=1 skips
#                                          the srcline variant, FREQ=249)
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-5}
NTU=${2:-32}
FREQ=${FREQ:-249}
bench_build

gen=$TOP/build/bench/gencxx-$NTU
if [ ! -x "$gen/bigtests" ]; then
	echo "generating and building $gen (once; minutes)..." >&2
	python3 "$TOP/bench/gencxx.py" "$gen" "$NTU" 400 16 200
	nice make -s -C "$gen" -j"$(nproc)" bigtests >&2
fi

# cpu seconds (user + sys) of a command
cpu_of() { # CMD...
	local TIMEFORMAT='%3U %3S'
	{ time "$@" >/dev/null 2>&1; } 2>"$WORK/t" || true
	awk '{ printf "%.4f\n", $1 + $2 }' "$WORK/t"
}
# the profile build's CPU from a record -v log, in seconds
tf_cpu() { sed -n 's/.*built the profile in [0-9.]* ms, \([0-9.]*\) ms of CPU.*/\1/p' "$1" | awk '{ printf "%.4f\n", $1 / 1000 }'; }

export TESTFLAME_CACHE_DIR="$WORK/cache"
results=()
measure() { # NAME DIR CMD...
	local name=$1 dir=$2
	shift 2
	local bin bid
	bin=$1
	[ -x "$bin" ] || bin=$(command -v "$bin")
	: >"$WORK/cold"; : >"$WORK/warm"; : >"$WORK/perf"; : >"$WORK/perfsl"
	(cd "$dir" && "$TF" record -q --freq "$FREQ" --call-graph fp -o "$WORK/run.pb.gz" -- "$@") >/dev/null 2>&1 || true
	rm -rf "$TESTFLAME_CACHE_DIR"
	(cd "$dir" && "$TF" record -v --freq "$FREQ" --call-graph fp -o "$WORK/run.pb.gz" -- "$@") >/dev/null 2>"$WORK/log" || true
	local empty samples
	empty=$(tf_cpu "$WORK/log")
	for r in $(seq "$ROUNDS"); do
		# cold: the binaries' kept answers gone, the machine's entries kept
		rm -rf "$TESTFLAME_CACHE_DIR/sym"
		(cd "$dir" && "$TF" record -v --freq "$FREQ" --call-graph fp -o "$WORK/run.pb.gz" -- "$@") >/dev/null 2>"$WORK/log" || true
		tf_cpu "$WORK/log" >>"$WORK/cold"
		(cd "$dir" && "$TF" record -v --freq "$FREQ" --call-graph fp -o "$WORK/run.pb.gz" -- "$@") >/dev/null 2>"$WORK/log" || true
		tf_cpu "$WORK/log" >>"$WORK/warm"
		samples=$(sed -n "s/.*built the profile.*(\([0-9]*\) samples.*/\1/p" "$WORK/log")
		(cd "$dir" && perf record -q -F "$FREQ" -g -o "$WORK/perf.data" -- "$@") >/dev/null 2>&1 || true
		cpu_of perf script -i "$WORK/perf.data" >>"$WORK/perf"
		if [ -z "${NOSRCLINE:-}" ] && [ "$r" = 1 ]; then
			cpu_of perf script -F +srcline -i "$WORK/perf.data" >>"$WORK/perfsl"
		fi
	done
	local c w p s
	c=$(median <"$WORK/cold"); w=$(median <"$WORK/warm"); p=$(median <"$WORK/perf")
	s=$( [ -s "$WORK/perfsl" ] && median <"$WORK/perfsl" || echo 0)
	local size
	size=$(stat -c %s "${SIZE_OF:-$bin}" | awk '{ printf "%.0f MB", $1 / 1e6 }')
	results+=("$(printf '%-22s %7s %6s samples   tf cold %7.1f ms  warm %6.1f ms  empty cache %7.1f ms   perf script %7.1f ms (%.1fx cold, %.1fx warm)   +srcline %s' \
		"$name" "$size" "$samples" "$(awk -v v="$c" 'BEGIN { print v * 1000 }')" \
		"$(awk -v v="$w" 'BEGIN { print v * 1000 }')" "$(awk -v v="$empty" 'BEGIN { print v * 1000 }')" \
		"$(awk -v v="$p" 'BEGIN { print v * 1000 }')" \
		"$(awk -v a="$p" -v b="$c" 'BEGIN { print a / b }')" "$(awk -v a="$p" -v b="$w" 'BEGIN { print a / b }')" \
		"$(awk -v v="$s" -v b="$c" 'BEGIN { if (v > 0) printf "%.1f ms (%.0fx cold)", v * 1000, v / b; else print "-" }')")")
}

measure "generated ($NTU units)" "$gen" "$gen/bigtests" "" 30
if [ -n "${YAMLCPP_BUILD:-}" ] && [ -x "$YAMLCPP_BUILD/test/yaml-cpp-tests" ]; then
	SIZE_OF=$YAMLCPP_BUILD/test/yaml-cpp-tests measure "yaml-cpp tests (ctest)" "$YAMLCPP_BUILD" ctest
else
	echo "(YAMLCPP_BUILD not set: yaml-cpp's tests skipped)" >&2
fi

machine
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds at $FREQ Hz, frame pointers; medians of CPU time (user + system)"
printf '%s\n' "${results[@]}"
