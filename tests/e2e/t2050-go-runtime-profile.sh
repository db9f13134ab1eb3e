#!/usr/bin/env bash
# t2050-go-runtime-profile.sh - testflame reads profiles written by Go's
# runtime: a tiny Go package whose test burns CPU in two functions of known
# weights (3:1), profiled with `go test -cpuprofile` (asynchronous
# preemption off: on a loaded machine its signal handler collects samples of
# its own). `view` must put the hot function on top with the share
# `go tool pprof -top` gives it (within one point) and `show` must count the
# same samples and time as go does.
. "$(dirname "$0")/lib.sh"

if ! need go; then
	test_skip "testflame reads Go runtime profiles" "go is not installed (make deps installs golang-go)"
	test_done
	exit
fi
export HOME="$SCRATCH/home" PPROF_TMPDIR="$SCRATCH/pprof"
export GOCACHE="$GO_CACHE" GOPATH="$SCRATCH/gopath"
export GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on GOTOOLCHAIN=local
mkdir -p "$HOME" gopkg

cat > gopkg/go.mod <<'EOF'
module example.com/burn

go 1.19
EOF
cat > gopkg/burn.go <<'EOF'
package burn

//go:noinline
func mix(x uint64) uint64 {
	x = x*6364136223846793005 + 1442695040888963407
	return x ^ x>>29
}

// Heavy does three units of work per call to Light's one.
//
//go:noinline
func Heavy(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < 3*n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 17
	}
	return x
}

//go:noinline
func Light(n int) uint64 {
	var x uint64 = 7
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 17
	}
	return mix(x)
}
EOF
cat > gopkg/burn_test.go <<'EOF'
package burn

import "testing"

var sink uint64

func TestBurn(t *testing.T) {
	for i := 0; i < 40; i++ {
		sink += Heavy(4000000)
		sink += Light(4000000)
	}
}
EOF

# flat% of FUNCTION in a `go tool pprof -top` table (0 if absent).
go_flat() { awk -v f="$2" '$6 == f { sub("%", "", $2); print $2; found = 1; exit } END { if (!found) print 0 }' "$1"; }

test_expect_success 'go test -cpuprofile writes a profile' '
	(cd gopkg && GODEBUG=asyncpreemptoff=1 go test -count=1 -cpuprofile "$SCRATCH/cpu.out" . \
		> "$SCRATCH/gotest.log" 2>&1) ||
		{ cat gotest.log; false; } &&
	test -s cpu.out &&
	go tool pprof -top -symbolize=none cpu.out > go-top.txt 2> go-err.txt &&
	cat go-top.txt &&
	test "$(go_flat go-top.txt example.com/burn.Heavy)" != 0
'

test_expect_success 'view: the hot function on top, share within 1 point of go' '
	$TF view --format text cpu.out > top.txt &&
	cat top.txt &&
	expect_contains top.txt "Type: cpu (nanoseconds)" &&
	expect_eq "$(awk "NR == 5 { print \$NF }" top.txt)" example.com/burn.Heavy "top row" &&
	ours=$(flat_share top.txt example.com/burn.Heavy) &&
	theirs=$(go_flat go-top.txt example.com/burn.Heavy) &&
	expect_near "$ours" "$theirs" 1 "Heavy flat%: ours vs go" &&
	expect_near "$(flat_share top.txt example.com/burn.Light)" "$(go_flat go-top.txt example.com/burn.Light)" 1 \
		"Light flat%: ours vs go" &&
	heavy=$(awk "\$NF == \"example.com/burn.Heavy\" { sub(\"%\", \"\", \$5); print \$5 }" top.txt) &&
	expect_near "$heavy" 75 15 "Heavy cum% vs its 3/4 of the work"
'

test_expect_success 'view: every row equals go -top (flat and cum)' '
	top_rows go-top.txt > go.rows &&
	$TF view --top 0 cpu.out | top_rows > our.rows &&
	diff -u go.rows our.rows
'

test_expect_success 'show: same samples and cpu time as go counts' '
	go tool pprof -raw -symbolize=none cpu.out > raw.txt 2>/dev/null &&
	awk "/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ +[0-9]+:/ { n += \$1; t += \$2 } END { print n, t }" raw.txt > go.sums &&
	$TF show --json cpu.out > show.json &&
	node -e "const d = JSON.parse(require(\"fs\").readFileSync(\"show.json\", \"utf8\"));
		 console.log(d.totals.samples, d.totals.value, d.default_sample_type, d.period_type.type)" > our.sums &&
	expect_eq "$(cat our.sums)" "$(cat go.sums) cpu cpu" &&
	$TF show cpu.out > show.txt &&
	expect_contains show.txt "Sample types: samples/count, cpu/nanoseconds (default)" &&
	expect_contains show.txt "Period: 10ms of cpu" &&
	expect_contains show.txt "Tests: none"
'

test_expect_success 'convert Go profile -> pprof: go reads it back the same' '
	$TF view --format pprof -o again.pb.gz cpu.out &&
	go tool pprof -top -symbolize=none again.pb.gz > again-top.txt 2>/dev/null &&
	top_rows again-top.txt > again.rows &&
	diff -u go.rows again.rows
'

test_done
