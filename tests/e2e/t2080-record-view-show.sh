#!/usr/bin/env bash
# t2080-record-view-show.sh - `view` and `show` on real run files written by
# `testflame record`: a 70/30 workload (tests/fixtures/split7030) and the
# example project's suite (several test programs): the shares `view` gives
# equal go tool pprof's on the same file, `show`'s totals and tests agree
# with the run's own metadata, and conversions keep what the file says.
. "$(dirname "$0")/lib.sh"

"$TOP/tests/node/install.sh" || exit 1
export HOME="$SCRATCH/home" PPROF_TMPDIR="$SCRATCH/pprof"
mkdir -p "$HOME"

test_expect_success 'record a 70/30 workload' '
	$TF record -q --freq 999 --test burn -o run.pb.gz -- "$FIX/split7030" 12 &&
	test -s run.pb.gz
'

test_expect_success 'view: the same table as go tool pprof -top; 70/30 by cum' '
	$TF view --top 0 run.pb.gz > top.txt &&
	go tool pprof -top -nodefraction=0 run.pb.gz > go-top.txt 2> /dev/null &&
	top_rows go-top.txt > go.rows && top_rows top.txt > our.rows &&
	diff -u go.rows our.rows &&
	expect_near "$(cum_share top.txt hot_seventy)" 70 5 "hot_seventy cum%" &&
	expect_near "$(cum_share top.txt cold_thirty)" 30 5 "cold_thirty cum%"
'

test_expect_success 'show: totals and the one test agree with the metadata' '
	$TF show --json run.pb.gz > show.json &&
	expect_eq "$(json show.json d.totals.samples)" "$(json show.json d.metadata.samples)" "samples" &&
	expect_eq "$(json show.json d.totals.lost)" 0 &&
	expect_eq "$(json show.json d.metadata.event)" cpu-clock &&
	expect_eq "$(json show.json "d.tests.map(t => t.name).join()")" burn &&
	expect_eq "$(json show.json "d.tests[0].samples")" "$(json show.json d.totals.samples)" &&
	expect_eq "$(json show.json "d.tests[0].source")" command &&
	expect_eq "$(json show.json "d.processes[0].name")" split7030 &&
	expect_eq "$(json show.json "d.processes[0].pids")" 1 &&
	$TF show run.pb.gz > show.txt &&
	expect_contains show.txt "Sample types: samples/count, cpu/nanoseconds (default)" &&
	grep -Eq "^  sampler +perf$" show.txt
'

test_expect_success 'the example suite: one row per test program, as recorded' '
	make -s -C "$TOP/examples" all > /dev/null 2>&1 &&
	$TF record -q -o suite.pb.gz -- make -s -C "$TOP/examples" check > /dev/null &&
	$TF show --json suite.pb.gz > suite.json &&
	go tool pprof -comments suite.pb.gz 2> /dev/null | sed -n "s/^testflame\.test\.\(test_[a-z]*\)=samples=\([0-9]*\) .*/\1 \2/p" | sort > meta.tests &&
	test -s meta.tests &&
	json suite.json "d.tests.filter(t => t.name.startsWith(\"test_\")).map(t => t.name + \" \" + t.samples).join(\"\\n\")" | sort > our.tests &&
	diff -u meta.tests our.tests &&
	$TF view --format speedscope -o suite.json.ss suite.pb.gz &&
	node "$TOP/tests/node/speedscope-check.mjs" suite.json.ss > facts &&
	expect_contains facts "profile test_primes unit=nanoseconds"
'

# Counts, not times: under -tagfocus pprof scales its table by the whole
# profile's total, we by the selected test's, so time units may differ.
test_expect_success 'per test, view equals go -tagfocus (sample counts)' '
	$TF view --top 0 --value samples --test test_primes suite.pb.gz > primes.txt &&
	go tool pprof -top -nodefraction=0 -sample_index=samples -tagfocus=test=test_primes \
		suite.pb.gz > go-primes.txt 2> /dev/null &&
	top_rows go-primes.txt > go-primes.rows && top_rows primes.txt > our-primes.rows &&
	diff -u go-primes.rows our-primes.rows &&
	expect_eq "$(awk "/^ *flat  *flat%/ { getline; print \$NF; exit }" primes.txt)" primes_sieve \
		"top function of test_primes"
'

test_expect_success 'pprof re-encoding keeps what show reports' '
	$TF view --format pprof -o again.pb.gz suite.pb.gz &&
	$TF show again.pb.gz | sed 1d > again.txt &&
	$TF show suite.pb.gz | sed 1d > orig.txt &&
	diff -u orig.txt again.txt
'

test_done
