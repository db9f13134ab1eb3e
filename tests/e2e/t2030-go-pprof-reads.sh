#!/usr/bin/env bash
# t2030-go-pprof-reads.sh - Go's own pprof tool reads what testflame
# writes: a folded file with known counts converted by `view --format pprof`
# gives the same flat and cum figures in `go tool pprof -top` as in our top
# table, and `-raw` lists the same samples; a run-shaped file keeps its
# labels, comments and sample types through our re-encoding.
. "$(dirname "$0")/lib.sh"

if ! need go; then
	test_skip "go tool pprof reads our pprof" "go is not installed (make deps installs golang-go)"
	test_done
	exit
fi
export HOME="$SCRATCH/home" PPROF_TMPDIR="$SCRATCH/pprof"
mkdir -p "$HOME"

# Stacks whose flat and cum differ, with recursion (cum counts a function
# once per sample) and a function that is only ever a caller.
cat > known.folded <<'EOF'
main;parse;lex 300
main;parse 100
main;eval;hot 500
main;eval;rec;rec;rec 70
main;eval 30
main;eval;helper;hot 11
other;hot 9
EOF
$TF view --format pprof -o known.pb.gz known.folded || exit 1


test_expect_success 'go tool pprof -top: same flat and cum for every function' '
	go tool pprof -top -symbolize=none known.pb.gz > go-top.txt 2> go-err.txt &&
	$TF view --top 0 known.pb.gz > our-top.txt &&
	top_rows go-top.txt > go.rows && top_rows our-top.txt > our.rows &&
	test -s go.rows &&
	diff -u go.rows our.rows &&
	expect_contains go.rows "hot 520 520" &&
	expect_contains go.rows "rec 70 70" &&
	expect_contains go.rows "main 0 1011" &&
	expect_contains go-top.txt "of 1020 total"
'

test_expect_success 'go tool pprof -top: same order as ours' '
	awk "/^ *flat  *flat%/ { on = 1; next } on { print \$NF }" go-top.txt > go.order &&
	awk "/^ *flat  *flat%/ { on = 1; next } on { print \$NF }" our-top.txt > our.order &&
	diff -u go.order our.order
'

test_expect_success 'go tool pprof -raw: the samples we wrote' '
	go tool pprof -raw -symbolize=none known.pb.gz > raw.txt 2> raw-err.txt &&
	expect_contains raw.txt "samples/count" &&
	awk "/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+:/ { sub(\":\", \"\", \$1); n++; t += \$1 } END { print n, t }" raw.txt > sums &&
	expect_eq "$(cat sums)" "7 1020" "records and total in -raw" &&
	for f in main parse lex eval hot rec helper other; do
		grep -Eq "^ +[0-9]+: 0x0 .*\b$f :0" raw.txt || { echo "no location for $f" >&2; exit 1; }
	done
'

test_expect_success 'run file: go reads labels, comments and the default sample type' '
	"$TOP/tests/node/install.sh" &&
	node "$TOP/tests/node/pprof-tool.mjs" make-run run.pb.gz &&
	$TF view --format pprof -o ours.pb.gz run.pb.gz &&
	go tool pprof -tags ours.pb.gz > tags.txt 2> tags-err.txt &&
	grep -Eq "^ +606\.1ms \(60\.00%\): test_alpha$" tags.txt &&
	grep -Eq "^ +303\.0ms \(30\.00%\): test_beta$" tags.txt &&
	grep -Eq "^ +909\.1ms \(90\.00%\): app$" tags.txt &&
	grep -Eq "^ +202\.0ms \(20\.00%\): 101$" tags.txt &&
	go tool pprof -comments ours.pb.gz > comments.txt 2>&1 &&
	expect_contains comments.txt "testflame.unwinder=auto fp=120 dwarf=30" &&
	expect_contains comments.txt "testflame.test.test_alpha=samples=60 value=606060600" &&
	go tool pprof -top ours.pb.gz > run-top.txt 2>&1 &&
	expect_contains run-top.txt "Type: cpu" &&
	grep -Eq "^ +555\.56ms 55\.00% 55\.00% +555\.56ms 55\.00%  hot_a$" run-top.txt
'

test_expect_success 'run file: go -top per test equals ours per test' '
	go tool pprof -top -tagfocus=test=test_beta ours.pb.gz > go-beta.txt 2>&1 &&
	$TF view --test test_beta ours.pb.gz > our-beta.txt &&
	top_rows go-beta.txt > go-beta.rows && top_rows our-beta.txt > our-beta.rows &&
	test -s go-beta.rows && diff -u go-beta.rows our-beta.rows
'

test_done
