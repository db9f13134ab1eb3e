#!/usr/bin/env bash
# t2060-speedscope.sh - `view --format speedscope` output validated against
# the file format schema shipped in speedscope's own npm package (with ajv),
# plus the checks a schema cannot make (tests/node/speedscope-check.mjs):
# one profile per test, weights that add up, frames with file and line,
# hostile names that stay valid JSON, and Go runtime profiles (Go 1.19 writes
# no function start lines, so their frames carry a file only). Then the real
# client: speedscope's own app in headless Chromium imports our files.
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

# The real thing: speedscope's own app (from its npm package) in headless
# Chromium, served over loopback, loading our file with its own importer.
if need chromium python3; then
	mkdir app && cp -r "$TOP/tests/node/node_modules/speedscope/dist/release/." app/ &&
	cp run.json odd.json app/
	# in a process group of its own: a pyenv shim runs python3 as its
	# grandchild, which a kill of $! alone leaves serving after the test
	setsid python3 -u -m http.server 0 --bind 127.0.0.1 --directory app > http.log 2>&1 &
	srv=$!
	trap 'kill -- -$srv 2> /dev/null; rm -rf "$SCRATCH"' EXIT
	for _ in $(seq 50); do grep -q "port [0-9]" http.log && break; sleep 0.1; done
	port=$(sed -n 's/.* port \([0-9]*\).*/\1/p' http.log | head -n 1)
	# dump the page once speedscope has fetched and imported FILE
	speedscope_dom() { # FILE
		timeout 120 chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
			--user-data-dir="$SCRATCH/chromium" --virtual-time-budget=20000 --dump-dom \
			"http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/$1" 2> /dev/null
	}
	test_expect_success 'speedscope itself imports the file: one profile per test' '
		test -n "$port" &&
		speedscope_dom run.json > run.html &&
		expect_contains run.html "<title>run.pb.gz - speedscope</title>" &&
		grep -q "test_alpha <span[^>]*>(1/3)</span>" run.html &&
		grep -q "<span>test_beta</span></td><td[^>]*>303.03ms</td>" run.html &&
		grep -q "<span>weird \"test\" &lt;x&gt;</span></td><td[^>]*>101.01ms</td>" run.html &&
		expect_not_contains run.html "Something went wrong"
	'
	test_expect_success 'speedscope itself imports hostile names' '
		speedscope_dom odd.json > odd.html &&
		expect_contains odd.html "<title>odd.folded - speedscope</title>" &&
		expect_contains odd.html "Left Heavy" &&
		expect_not_contains odd.html "Something went wrong"
	'
	kill -- -$srv 2> /dev/null
else
	test_skip "speedscope itself imports the file" "chromium or python3 is missing (make deps)"
fi

if need go; then
	export HOME="$SCRATCH/home" GOCACHE="$GO_CACHE" GOPATH="$SCRATCH/gopath"
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
