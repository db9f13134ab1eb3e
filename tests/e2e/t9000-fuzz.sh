#!/usr/bin/env bash
# t9000-fuzz.sh - the fuzz targets (tests/fuzz/NAME.c, built by make
# fuzz-build into $BUILD/fuzz, see tests/fuzz/README.md): for each, its
# seeds and the inputs of the crashes found and fixed (tests/fuzz/NAME/)
# replay clean under ASan and UBSan (the API targets both in the process
# and over HTTP on loopback), and a short run of fuzzing from them
# finds nothing. The long runs are by hand (make fuzz; BENCHMARKS.md).
. "$(dirname "$0")/lib.sh"

FUZZ=$BUILD/fuzz
SECS=${TESTFLAME_FUZZ_SECONDS:-1}

# The short runs first, two at a time (a run takes a core, and a second
# longer than asked for its start); each leaves its log and exit status.
fuzz_one() { # name
	local name=$1 dict=()
	[ -f "$TOP/tests/fuzz/$name.dict" ] && dict=(-dict="$TOP/tests/fuzz/$name.dict")
	mkdir -p "corpus-$name"
	"$FUZZ/$name" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$SCRATCH/$name-" "${dict[@]+"${dict[@]}"}" \
		"corpus-$name" "$TOP/tests/fuzz/$name" >fuzz-$name.log 2>&1
	echo $? >fuzz-$name.rc
}
running=0
for src in "$TOP"/tests/fuzz/*.c; do
	name=$(basename "$src" .c)
	[ -x "$FUZZ/$name" ] || continue
	if [ $running -ge 2 ]; then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "$name" &
	running=$((running + 1))
done
wait

for src in "$TOP"/tests/fuzz/*.c; do
	name=$(basename "$src" .c)
	bin=$FUZZ/$name
	if [ ! -x "$bin" ] && ! need clang; then
		test_skip "fuzz $name" 'clang is not installed (make deps installs it)'
		continue
	fi
	test_expect_success "fuzz $name: its seeds and crash inputs replay clean" '
		[ -x "$bin" ] || fail "$bin is not built (make fuzz-build)" &&
		n=$(ls "$TOP/tests/fuzz/$name" | wc -l) &&
		[ "$n" -gt 0 ] || fail "no seeds in tests/fuzz/$name" &&
		"$bin" "$TOP/tests/fuzz/$name"/* >replay-$name.log 2>&1 &&
		FUZZ_API_HTTP=1 "$bin" "$TOP/tests/fuzz/$name"/* >>replay-$name.log 2>&1 ||
			{ tail -n 40 replay-$name.log; false; } &&
		expect_eq "$(grep -c "^Executed " replay-$name.log)" "$((2 * n))" "inputs run"
	'
	test_expect_success "fuzz $name: ${SECS}s of fuzzing find nothing" '
		[ -f fuzz-$name.rc ] || fail "$name was not fuzzed" &&
		{ [ "$(cat fuzz-$name.rc)" = 0 ] || { grep -v "^#" fuzz-$name.log | tail -n 40; false; }; } &&
		grep -q "^Done [0-9]* runs" fuzz-$name.log
	'
done

test_done
