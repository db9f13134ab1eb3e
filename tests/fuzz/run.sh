#!/usr/bin/env bash
# run.sh - run the fuzz targets built into FUZZ_DIR (make fuzz-build), each
# for SECONDS, from its seeds (tests/fuzz/NAME/) and the inputs earlier
# runs kept (FUZZ_DIR/corpus/NAME/), with its dictionary when it has one.
# One line per target: executions, coverage, and where a crash was saved.
# Exit status 1 when any target found something.
#
#   tests/fuzz/run.sh FUZZ_DIR SECONDS [NAME...]
#
# Long runs: nice -n 19 tests/fuzz/run.sh build/fuzz 3600 pprof
# Extra libFuzzer flags (e.g. -jobs=2 -workers=2) in FUZZ_FLAGS.
set -u
dir=${1:?usage: run.sh FUZZ_DIR SECONDS [NAME...]}
seconds=${2:?usage: run.sh FUZZ_DIR SECONDS [NAME...]}
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -eq 0 ]; then
	set -- $(cd "$top/tests/fuzz" && ls *.c | sed 's/\.c$//')
fi
status=0
for name in "$@"; do
	bin=$dir/$name
	if [ ! -x "$bin" ]; then
		echo "$name: $bin is not built (make fuzz-build)"
		status=1
		continue
	fi
	mkdir -p "$dir/corpus/$name" "$dir/crashes/$name" "$dir/logs"
	log=$dir/logs/$name.log
	dict=()
	[ -f "$top/tests/fuzz/$name.dict" ] && dict=(-dict="$top/tests/fuzz/$name.dict")
	# the work corpus first: libFuzzer adds what it finds to the first
	# directory, and the seeds in the source tree stay as they are
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$dir/crashes/$name/" "${dict[@]+"${dict[@]}"}" ${FUZZ_FLAGS:-} \
		"$dir/corpus/$name" "$top/tests/fuzz/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1)
	corp=$(grep -o 'corp: [0-9]*' "$log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		printf '%-12s ok    %10s execs  %s  %s  %s\n' "$name" "${execs:-?}" "$cov" "$ft" "$corp"
	else
		status=1
		art=$(grep -o "Test unit written to .*" "$log" | tail -n 1)
		printf '%-12s FAIL  %10s execs  %s  (exit %d) %s\n' "$name" "${execs:-?}" "$cov" $rc "${art:-see $log}"
		grep -E 'ERROR: |runtime error|fuzz check failed|SUMMARY' "$log" | head -n 5 | sed 's/^/    /'
	fi
done
exit $status
