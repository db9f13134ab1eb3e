#!/usr/bin/env bash
# memory-overhead.sh - what measuring memory costs the measured programs:
# the wall time of the same test commands bare, with testflame's
# allocation sampler preloaded (its default rate; "sampler": each process
# makes its own file, as without testflame; "pooled": it takes one of the
# files testflame keeps made ahead, made before the run, not timed),
# under heaptrack and
# under valgrind's massif (what a user would pick instead, each on every
# process of a test), and under `testflame record --memory` beside
# `testflame record` (the whole tool, CPU sampling included). Workloads:
#
#   examples  the example project's six test programs (make -C examples)
#   jansson   jansson's 213 ctest commands, built as bench/realworld.sh
#             builds them, in WORK/memory/jansson from realworld.sh's
#             sources in WORK/src (WORK=/work/rw by default)
#   micro     build/bench/mallocbench: 5,000,000 allocations and frees
#             of 16 B to 1 KiB, nothing else (the sampler's worst case)
#
# Each workload is one shell script running its commands one after the
# other, every command prefixed by the variant's wrapper (heaptrack and
# massif follow no child process a test starts: they are given every one
# the same way). It times itself: its wall time, and the CPU time of all
# it ran (heaptrack's own work after a test included; testflame's own
# recording not: the suite's cost is what is measured). Runs alternate,
# ROUNDS times; the medians and the paired ratios to bare (each run over
# the bare run of its round) come from this one run. CPU is the steadier
# figure on a shared machine.
#
#   bench/memory-overhead.sh [ROUNDS] [WORKLOAD...]   (default 5; all three)
#
# VARIANTS="bare sampler ..." picks the variants (default: bare sampler
# pooled heaptrack massif tf_cpu tf_memory); massif takes minutes a round
# on jansson.
RW=${WORK:-/work/rw} # realworld.sh's (common.sh's WORK is a temporary one)
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-5}
shift || true
WORKLOADS=${*:-examples jansson micro}
bench_build
need() { command -v "$1" >/dev/null || { echo "memory-overhead.sh: needs $1 (apt-get install $2)" >&2; exit 2; }; }
need heaptrack heaptrack
need valgrind valgrind

# jansson, built as realworld.sh builds it, in a directory of its own
jansson_dir() {
	local dir=$RW/memory/jansson src
	if [ ! -x "$dir/build/bin/json_process" ]; then
		src=$(ls -d "$RW"/src/jansson-*/ 2>/dev/null | head -n 1)
		[ -n "$src" ] || { echo "memory-overhead.sh: no jansson source in $RW/src (run WORK=$RW bench/realworld.sh jansson once)" >&2; exit 2; }
		mkdir -p "$RW/memory"
		rm -rf "$dir.tmp" && cp -a "$src" "$dir.tmp" && rm -rf "$dir.tmp/build" && mv "$dir.tmp" "$dir"
		(cd "$dir" && cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
			make -s -C build -j2 >/dev/null 2>&1)
	fi
	echo "$dir"
}

# the commands of a workload, one a line: "DIR<TAB>PROGRAM ARGS..."
commands() {
	case $1 in
	examples)
		for t in test_matrix test_primes test_sort test_hash test_threads test_spawn; do
			printf '%s\t./build/%s\n' "$TOP/examples" "$t"
		done ;;
	jansson)
		(cd "$(jansson_dir)/build" && ctest --show-only=json-v1) | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin)["tests"]:
    wd = [p["value"] for p in t.get("properties", []) if p["name"] == "WORKING_DIRECTORY"]
    print(wd[0] if wd else ".", " ".join(shlex.quote(a) for a in t["command"]), sep="\t")' ;;
	micro)
		printf '%s\t./mallocbench 5000000\n' "$TOP/build/bench" ;;
	esac
}

# the workload as a script that runs every command under $WRAP and times
# itself into $OUT
script() { # WORKLOAD
	local f=$WORK/$1.sh
	{
		echo '#!/bin/sh'
		echo 's=$(date +%s%N)'
		# the sampler goes in by the environment, as testflame puts it
		# there: no process more a command than bare (an `env` wrapper
		# was one exec more, about as much as the sampler itself)
		echo '[ -z "$PRELOAD" ] || export LD_PRELOAD="$PRELOAD" TESTFLAME_ALLOC_DIR="$ALLOC_DIR"'
		commands "$1" | while IFS="$(printf '\t')" read -r dir cmd; do
			printf 'cd %s && $WRAP %s >/dev/null 2>&1\n' "$dir" "$cmd"
		done
		echo 'unset LD_PRELOAD TESTFLAME_ALLOC_DIR'
		echo 'e=$(date +%s%N)'
		# the CPU of all it ran, from the shell's times (minutes and seconds)
		echo 'times >"$OUT.times"'
		echo 'c=$(sed -n 2p "$OUT.times" | tr -d s | awk "{ split(\$1, u, \"m\"); split(\$2, y, \"m\"); printf \"%.0f\", (u[1] * 60 + u[2] + y[1] * 60 + y[2]) * 1e6 }")'
		echo 'echo $(( (e - s) / 1000 )) $c >>"$OUT"'
	} >"$f"
	chmod +x "$f"
	echo "$f"
}

declare -A wrap
wrap[bare]=""
wrap[sampler]="" # PRELOAD below
wrap[heaptrack]="heaptrack -o $WORK/ht"
wrap[massif]="valgrind -q --tool=massif --massif-out-file=$WORK/massif.%p"
order=(${VARIANTS:-bare sampler pooled heaptrack massif tf_cpu tf_memory})
mkdir -p "$WORK/alloc"

machine
echo "rounds: $ROUNDS, alternating; ratio: each run over the bare run of its round"
for w in $WORKLOADS; do
	s=$(script "$w")
	n=$(commands "$w" | wc -l)
	OUT=/dev/null WRAP= "$s" # warm the page cache
	for r in $(seq "$ROUNDS"); do
		for v in "${order[@]}"; do
			case $v in
			tf_cpu) OUT="$WORK/$w.$v" WRAP= "$TF" record -q -o "$WORK/cpu.pb.gz" -- "$s" >/dev/null 2>&1 ;;
			tf_memory) OUT="$WORK/$w.$v" WRAP= "$TF" record -q --memory -o "$WORK/mem.pb.gz" -- "$s" >/dev/null 2>&1 ;;
			sampler) OUT="$WORK/$w.$v" WRAP= PRELOAD="$TOP/build/libtestflame-alloc.so" \
					ALLOC_DIR="$WORK/alloc" "$s" >/dev/null 2>&1 ;;
			pooled)
				# the pool as testflame keeps it (format.h): a file
				# ready for every process, made before the timing
				: >"$WORK/alloc/ctl"
				for k in $(seq 0 $((n + 15))); do
					fallocate -l $((4096 + 1023 * 64 + 1048576)) "$WORK/alloc/p.$k"
				done
				OUT="$WORK/$w.$v" WRAP= PRELOAD="$TOP/build/libtestflame-alloc.so" \
					ALLOC_DIR="$WORK/alloc" "$s" >/dev/null 2>&1 ;;
			*) OUT="$WORK/$w.$v" WRAP="${wrap[$v]}" "$s" >/dev/null 2>&1 ;;
			esac
			rm -rf "$WORK"/alloc/* "$WORK"/ht* "$WORK"/massif.*
		done
	done
	echo
	echo "workload: $w ($n command$([ "$n" = 1 ] || echo s))"
	printf '%-12s %10s %10s %14s %10s %10s %14s\n' variant "wall ms" "÷ bare" "IQR" "CPU ms" "÷ bare" "IQR"
	for v in "${order[@]}"; do
		line=$(printf '%-12s' "$v")
		for k in 1 2; do
			m=$(cut -d' ' -f$k "$WORK/$w.$v" | median)
			paste -d' ' <(cut -d' ' -f$k "$WORK/$w.$v") <(cut -d' ' -f$k "$WORK/$w.bare") |
				awk '{ printf "%.4f\n", ($2 > 0 ? $1 / $2 : 0) }' >"$WORK/$w.$v.ratio$k"
			r=$(median <"$WORK/$w.$v.ratio$k")
			iqr=$(sort -g "$WORK/$w.$v.ratio$k" | awk '{ v[NR] = $1 } END { printf "%.3f-%.3f", v[int((NR + 3) / 4)], v[int((3 * NR + 3) / 4)] }')
			line="$line$(printf ' %10.1f %10.3f %14s' "$(awk -v m="$m" 'BEGIN { print m / 1000 }')" "$r" "$iqr")"
		done
		echo "$line"
	done
	# heaptrack's added time over the sampler's, where the sampler's is
	# above the noise (its ratio's IQR clear of 1)
	for k in 1 2; do
		[ -s "$WORK/$w.heaptrack.ratio$k" ] && [ -s "$WORK/$w.sampler.ratio$k" ] || continue
		h=$(median <"$WORK/$w.heaptrack.ratio$k")
		sm=$(median <"$WORK/$w.sampler.ratio$k")
		low=$(sort -g "$WORK/$w.sampler.ratio$k" | awk '{ v[NR] = $1 } END { print v[int((NR + 3) / 4)] }')
		what=$([ "$k" = 1 ] && echo wall || echo CPU)
		awk -v h="$h" -v s="$sm" -v lo="$low" -v what="$what" 'BEGIN {
			if (lo > 1) printf "%s: heaptrack adds %.1f%%, the sampler %.1f%%: %.0fx less\n", what, (h - 1) * 100, (s - 1) * 100, (h - 1) / (s - 1)
			else printf "%s: heaptrack adds %.1f%%, the sampler %.1f%%, within the noise\n", what, (h - 1) * 100, (s - 1) * 100 }'
	done
done
echo
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
