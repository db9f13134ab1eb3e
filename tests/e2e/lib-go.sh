# lib-go.sh - the Go workload the compare and report tests profile with
# `go test -cpuprofile` (t4010, t6040): a package built in two versions
# that differ only in how much work Encode does. Sourcing it skips the
# whole script when go is missing.
#
#   go_pkg DIR FACTOR [NAME]   the package in DIR: Encode loops FACTOR times
#                              as long as Parse; tests TestEncode, TestParse
#                              and, with NAME, TestNAME (Parse again). The
#                              tests label their samples with pprof.Do
#                              ("test" = the test's name) when TF_LABELS is
#                              set, as a suite using testflame's Go helper
#                              would; GO_ROUNDS (200000000) sizes them.
if ! need go; then
	test_skip "Go profiles" "go is not installed (golang-go)"
	test_done
	exit 0
fi
export GOCACHE="$GO_CACHE" GOPATH="$SCRATCH/gopath" GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on

go_pkg() { # DIR FACTOR [NAME]
	mkdir -p "$1" && printf 'module example.com/tfwork\n\ngo 1.19\n' > "$1/go.mod"
	cat > "$1/work.go" <<-EOF
	package work

	// Encode and Parse burn CPU in their own loops, so each is the leaf
	// frame of its samples.
	//go:noinline
	func Encode(n int) uint64 {
		x := uint64(88172645463325252)
		for i := 0; i < n*$2; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		return x
	}

	//go:noinline
	func Parse(n int) uint64 {
		x := uint64(2463534242)
		for i := 0; i < n; i++ {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
		}
		return x
	}
	EOF
	cat > "$1/work_test.go" <<-EOF
	package work

	import (
		"context"
		"os"
		"runtime/pprof"
		"testing"
	)

	const rounds = ${GO_ROUNDS:-200000000}

	var sink uint64

	func run(t *testing.T, f func()) {
		if os.Getenv("TF_LABELS") == "" {
			f()
			return
		}
		pprof.Do(context.Background(), pprof.Labels("test", t.Name()), func(context.Context) { f() })
	}

	func TestEncode(t *testing.T) { run(t, func() { sink += Encode(rounds) }) }
	func TestParse(t *testing.T)  { run(t, func() { sink += Parse(rounds) }) }
	EOF
	if [ -n "${3:-}" ]; then
		printf 'func Test%s(t *testing.T) { run(t, func() { sink += Parse(rounds) }) }\n' "$3" >> "$1/work_test.go"
	fi
}
