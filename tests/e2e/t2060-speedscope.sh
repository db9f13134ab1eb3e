#!/usr/bin/env bash
# t2060-speedscope.sh - `view --format speedscope` output validated against
# the file format schema shipped in speedscope's own npm package (with ajv),
# plus the checks a schema cannot make (tests/node/speedscope-check.mjs):
# one profile per test, weights that add up, frames with file and line,
# hostile names that stay valid JSON, and Go runtime profiles (Go 1.19 writes
# no function start lines, so their frames carry a file only).
. "$(dirname "$0")/lib.sh"

"$TOP/tests/node/install.sh" || exit 1
check="$TOP/tests/node/speedscope-check.mjs"
node "$TOP/tests/node/pprof-tool.mjs" make-run run.pb.gz || exit 1

cat > known.folded <<'EOF'
main;parse;lex 30
main;parse 10
main;eval;hot 50
main;eval;rec;rec;rec 7
EOF

test_expect_success 'folded: one profile, weights and leaf totals as counted' '
	$TF view --format speedscope known.folded > known.json &&
	node "$check" known.json > facts &&
	expect_contains facts "profiles 1" &&
	expect_contains facts "profile known.folded unit=none total=97 stacks=4" &&
	expect_contains facts "flat known.folded hot 50" &&
	expect_contains facts "flat known.folded rec 7" &&
	expect_contains facts "frames 6"
'

test_expect_success 'run file: one sampled profile per test, biggest first, in ns' '
	$TF view --format speedscope -o run.json run.pb.gz &&
	node "$check" run.json > facts &&
	expect_contains facts "profiles 3" &&
	sed -n "s/^profile //p" facts > profiles &&
	cat > want <<-\EOF &&
	test_alpha unit=nanoseconds total=606060600 stacks=2
	test_beta unit=nanoseconds total=303030300 stacks=1
	weird "test" <x> unit=nanoseconds total=101010100 stacks=1
	EOF
	diff -u want profiles &&
	expect_contains facts "frame hot_a file=a.c line=5" &&
	expect_contains facts "frame weird \"name\" <tag> & \\ naïve_λ file=w.c line=9"
'

test_expect_success '--test and --value: one profile, of sample counts' '
	$TF view --format speedscope --test test_beta --value samples run.pb.gz > beta.json &&
	node "$check" beta.json > facts &&
	expect_contains facts "profiles 1" &&
	expect_contains facts "profile test_beta unit=none total=30 stacks=1" &&
	expect_contains facts "flat test_beta hot_b 30"
'

printf 'main;odd"quote\\back\tslash 5\nmain;bad\377\376utf8 3\nmain;ctl\001\037x 2\nmain;</script> 1\n' > odd.folded

test_expect_success 'hostile names: valid JSON, valid UTF-8, schema-valid' '
	$TF view --format speedscope odd.folded > odd.json &&
	iconv -f UTF-8 -t UTF-8 odd.json > /dev/null &&
	node "$check" odd.json > facts &&
	expect_contains facts "frame odd\"quote\\back	slash" &&
	expect_contains facts "frame bad��utf8" &&
	expect_contains facts "frame </script>" &&
	expect_contains facts "profile odd.folded unit=none total=11 stacks=4"
'

test_expect_success 'a corrupt speedscope file is caught by the checker' '
	sed "s/\"weights\":\[/\"weights\":[-1,/" known.json > broken.json &&
	! node "$check" broken.json 2> err
'

if need go; then
	export HOME="$SCRATCH/home" GOCACHE="${GOCACHE:-$BUILD/go-cache}" GOPATH="$SCRATCH/gopath"
	export GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on
	mkdir -p "$HOME" gopkg
	printf 'module example.com/spin\n\ngo 1.19\n' > gopkg/go.mod
	cat > gopkg/spin_test.go <<'EOF'
package spin

import "testing"

var sink uint64

//go:noinline
func spin(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func TestSpin(t *testing.T) { sink = spin(300000000) }
EOF
	test_expect_success 'a Go runtime profile converts with files and lines' '
		(cd gopkg && go test -count=1 -cpuprofile "$SCRATCH/cpu.out" . > "$SCRATCH/gotest.log" 2>&1) &&
		$TF view --format speedscope cpu.out > go.json &&
		node "$check" go.json > facts &&
		expect_contains facts "profile cpu.out unit=nanoseconds" &&
		grep -Eq "^frame example.com/spin.spin file=.*/spin_test.go( line=8)?$" facts &&
		grep -q "^flat cpu.out example.com/spin.spin [1-9]" facts
	'
else
	test_skip "Go runtime profile to speedscope" "go is not installed"
fi

test_done
