#!/usr/bin/env bash
# t2070-large-run-vs-go.sh - a run-shaped profile of realistic breadth
# (bench/genprof: thousands of functions, deep stacks, 400 tests, labels)
# read by testflame and by Go's pprof: every row of the top table, every
# per-test total and the sample count must agree. This is the benchmark's
# file at a smaller scale, so the benchmark measures a decoder shown right.
. "$(dirname "$0")/lib.sh"

GENPROF=$BUILD/bench/genprof
if [ ! -x "$GENPROF" ]; then
	echo "not ok 1 - $GENPROF is missing (make bench, or make test, builds it)"
	exit 1
fi
if ! need go; then
	test_skip "large run file vs go tool pprof" "go is not installed (make deps installs golang-go)"
	test_done
	exit
fi
export HOME="$SCRATCH/home" PPROF_TMPDIR="$SCRATCH/pprof"
mkdir -p "$HOME"

test_expect_success 'genprof writes a run-shaped file' '
	"$GENPROF" -o run.pb.gz --stacks 20000 --samples 60000 --functions 3000 2> gen.log &&
	expect_contains gen.log "60000 samples, 12000 locations, 3000 functions"
'

test_expect_success 'every function: flat and cum equal go tool pprof -top' '
	go tool pprof -top -nodefraction=0 -symbolize=none run.pb.gz > go.txt 2> go.err &&
	$TF view --top 0 run.pb.gz > ours.txt &&
	top_rows go.txt > go.rows && top_rows ours.txt > ours.rows &&
	expect_eq "$(wc -l < go.rows)" 3000 "functions in go -top" &&
	diff -u go.rows ours.rows
'

test_expect_success 'per-test totals equal the sums of go tool pprof -raw' '
	$TF show --json run.pb.gz > show.json &&
	node -e "const d = JSON.parse(require(\"fs\").readFileSync(\"show.json\", \"utf8\"));
		 for (const t of d.tests) console.log(t.name, t.value)" | sort > ours.tests &&
	expect_eq "$(wc -l < ours.tests)" 400 "tests" &&
	expect_eq "$(node -e "const d = JSON.parse(require(\"fs\").readFileSync(\"show.json\", \"utf8\")); console.log(d.totals.samples)")" 60000 &&
	go tool pprof -raw -symbolize=none run.pb.gz > raw.txt 2>/dev/null &&
	awk "/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
	     on && /^ *[0-9]+ +[0-9]+:/ { v = \$2 } on && /test:\[/ { match(\$0, /test:\[[^]]*\]/); t = substr(\$0, RSTART + 6, RLENGTH - 7); sum[t] += v }
	     END { for (t in sum) printf \"%s %.0f\\n\", t, sum[t] }" raw.txt | sort > go.tests &&
	diff -u go.tests ours.tests
'

test_done
