#!/usr/bin/env bash
# report.sh - what the report costs on a big comparison: a synthetic suite
# of 1,000,000 samples in 100,000 distinct stacks per run (100 tests; the
# same stacks over 1000 tests; and stacks that share little, a tree of
# about a million frames), base against head with one test
# regressed and one improved. Times `testflame compare --report` (the
# report's own wall and CPU time as `compare -v` reports them, and the
# whole command's CPU), the size of index.html and of the directory, and,
# when Chromium is installed, how long the page takes to open and draw.
#
#   bench/report.sh [ROUNDS]
set -eu
ROUNDS=${1:-3}
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TF=$TOP/build/testflame
WORK=$(mktemp -d /tmp/testflame-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
make -s -C "$TOP" all >/dev/null

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); $ROUNDS rounds, medians"
echo

for shape in "100" "1000" "100 --diverse"; do
	set -- $shape
	tests=$1
	gen="python3 $TOP/tests/e2e/mkprofile.py"
	$gen "$WORK/base.pb.gz" --synthetic --stacks 100000 --samples 1000000 --tests "$@"
	$gen "$WORK/head.pb.gz" --synthetic --stacks 100000 --samples 1000000 --tests "$@" --head
	: >"$WORK/wall"; : >"$WORK/cpu"; : >"$WORK/all"
	for r in $(seq "$ROUNDS"); do
		rm -rf "$WORK/out"
		/usr/bin/time -f "%U %S" -o "$WORK/time" "$TF" compare -v --report "$WORK/out" \
			"$WORK/base.pb.gz" "$WORK/head.pb.gz" >/dev/null 2>"$WORK/log" || true
		sed -n 's/.*report written in \([0-9.]*\) ms (\([0-9.]*\) ms of CPU).*/\1/p' "$WORK/log" >>"$WORK/wall"
		sed -n 's/.*report written in \([0-9.]*\) ms (\([0-9.]*\) ms of CPU).*/\2/p' "$WORK/log" >>"$WORK/cpu"
		tail -n 1 "$WORK/time" | awk '{ printf "%.1f\n", ($1 + $2) * 1000 }' >>"$WORK/all"
	done
	frames=$(grep -o '"pruned":{"frames":[0-9]*,"kept":[0-9]*,"others":[0-9]*' "$WORK/out/index.html" |
		sed 's/"pruned":{"frames":\([0-9]*\),"kept":\([0-9]*\),"others":\([0-9]*\)/\1 frames, \2 kept + \3 "(other)"/')
	echo "== $tests tests${2:+ ($2)}, 100000 stacks per run, 1000000 samples per run ($frames in the page)"
	echo "report (compare -v): wall $(median <"$WORK/wall") ms, CPU $(median <"$WORK/cpu") ms"
	echo "whole compare --report (load, compare, report): CPU $(median <"$WORK/all") ms"
	echo "index.html: $(wc -c <"$WORK/out/index.html") bytes; report.md: $(wc -c <"$WORK/out/report.md") bytes"
	echo "all outputs: $(du -sb "$WORK/out" | cut -f1) bytes in $(ls "$WORK/out" | wc -l) files" \
		"(of which base.pb.gz + head.pb.gz: $(($(wc -c <"$WORK/out/base.pb.gz") + $(wc -c <"$WORK/out/head.pb.gz"))) bytes)"
	if [ -x /usr/bin/chromium ] && [ -d "$TOP/tests/node/node_modules/playwright-core" ]; then
		: >"$WORK/load"; : >"$WORK/pick"; : >"$WORK/zoom"; : >"$WORK/search"
		for r in $(seq "$ROUNDS"); do
			node "$TOP/tests/node/report-check.mjs" "$WORK/out/index.html" --test suite/Test_0001 \
				--zoom run_test_1 --search func_1 >"$WORK/page" 2>&1 || { cat "$WORK/page"; exit 1; }
			sed -n 's/^loaded \([0-9]*\) ms$/\1/p' "$WORK/page" >>"$WORK/load"
			sed -n 's/^picked in \([0-9]*\) ms$/\1/p' "$WORK/page" >>"$WORK/pick"
			sed -n 's/^zoomed in \([0-9]*\) ms$/\1/p' "$WORK/page" >>"$WORK/zoom"
			sed -n 's/^searched in \([0-9]*\) ms.*/\1/p' "$WORK/page" >>"$WORK/search"
		done
		echo "Chromium: opened and drawn in $(median <"$WORK/load") ms (file:// load to the first graph);" \
			"pick a test $(median <"$WORK/pick") ms, zoom $(median <"$WORK/zoom") ms," \
			"search $(median <"$WORK/search") ms (incl. 120 ms typing delay), Playwright's round trips included"
	fi
	echo
done
