#!/usr/bin/env bash
# t2000-view.sh - `testflame view` on folded stacks with known counts: the
# top table's numbers, every output format, conversion round trips, -o
# (atomic), --top, --cum, --value and --test.
. "$(dirname "$0")/lib.sh"

cat > known.folded <<'EOF'
main;parse;lex 30
main;parse 10
main;eval;hot 50
main;eval;rec;rec;rec 7
main;eval 3
EOF

test_expect_success 'text: flat and cum of every function, pprof -top order' '
	$TF view known.folded > top.txt &&
	expect_contains top.txt "Type: samples" &&
	expect_contains top.txt "Total: 100" &&
	expect_contains top.txt "Showing all 6 functions" &&
	awk "NR > 4 { print \$1, \$2, \$4, \$5, \$6 }" top.txt > rows &&
	cat > want <<-EOF &&
	50 50.00% 50 50.00% hot
	30 30.00% 30 30.00% lex
	10 10.00% 40 40.00% parse
	7 7.00% 7 7.00% rec
	3 3.00% 60 60.00% eval
	0 0.00% 100 100.00% main
	EOF
	diff -u want rows &&
	expect_eq "$(flat_share top.txt hot)" 50.00 "flat share of hot"
'

test_expect_success 'text: sum% accumulates flat%' '
	$TF view known.folded | awk "NR > 4 { print \$3 }" | tr "\n" " " > sums &&
	expect_eq "$(cat sums)" "50.00% 80.00% 90.00% 97.00% 100.00% 100.00% "
'

test_expect_success 'text: --top limits the rows and says so; --cum sorts by cum' '
	$TF view --top 2 known.folded > top2.txt &&
	expect_contains top2.txt "Showing top 2 of 6 functions, 80.00% of the total" &&
	expect_eq "$(awk "NR > 4" top2.txt | wc -l)" 2 "rows" &&
	$TF view --cum known.folded | awk "NR == 5 { print \$NF }" > first &&
	expect_eq "$(cat first)" main "first row by cum"
'

test_expect_success 'folded: writes back what it read' '
	$TF view --format folded known.folded > back.folded &&
	diff -u <(sort known.folded) <(sort back.folded)
'

test_expect_success 'pprof: folded -> pprof -> folded is lossless, and is gzip' '
	$TF view --format pprof -o known.pb.gz known.folded &&
	expect_eq "$(head -c 2 known.pb.gz | od -An -tx1 | tr -d " ")" 1f8b "gzip magic" &&
	$TF view --format folded known.pb.gz > again.folded &&
	diff -u <(sort known.folded) <(sort again.folded) &&
	$TF view known.pb.gz > top-pb.txt &&
	diff -u <($TF view known.folded) top-pb.txt
'

test_expect_success 'pprof to a pipe works without -o, and -o - means stdout' '
	$TF view --format pprof known.folded | gzip -dc > raw.pb &&
	test -s raw.pb &&
	$TF view --format pprof -o - known.folded > piped.pb.gz &&
	$TF view piped.pb.gz > /dev/null
'

test_expect_success 'pprof is not written to a terminal' '
	on_tty "$TF" view --format pprof known.folded > tty.out; rc=$?
	expect_eq "$rc" 1 "exit status" &&
	expect_contains tty.out "refusing to write binary pprof to a terminal; use -o FILE" &&
	on_tty "$TF" view --format pprof -o tty.pb.gz known.folded &&
	$TF view tty.pb.gz > /dev/null
'

test_expect_success 'an uncompressed pprof reads the same' '
	$TF view raw.pb > raw.txt &&
	diff -u <($TF view known.folded) raw.txt
'

test_expect_success '-o writes atomically: replaces the file, leaves no temp file' '
	echo old > out.txt &&
	$TF view -o out.txt known.folded &&
	expect_contains out.txt "Total: 100" &&
	expect_not_contains out.txt old &&
	expect_eq "$(ls | grep -c "\.tmp\.")" 0 "temp files left"
'

test_expect_success '-o into a missing directory fails cleanly' '
	test_must_fail_msg() { ! "$@" 2> err && cat err && expect_eq "$(wc -l < err)" 1 "error lines"; } &&
	test_must_fail_msg $TF view -o no/such/dir/out.txt known.folded &&
	expect_contains err "no/such/dir/out.txt" &&
	test ! -e no
'

# A two-column (difffolded) file has two sample types: base and head.
cat > diff.folded <<'EOF'
main;a 10 30
main;b 20 5
EOF

test_expect_success '--value picks the column; default is the last (pprof rule)' '
	$TF view diff.folded > head.txt &&
	expect_contains head.txt "Type: head" &&
	expect_contains head.txt "Total: 35" &&
	$TF view --value base diff.folded > base.txt &&
	expect_contains base.txt "Type: base" &&
	expect_contains base.txt "Total: 30" &&
	$TF view --value 0 --format folded diff.folded > base.folded &&
	expect_contains base.folded "main;b 20" &&
	$TF view --value base/count diff.folded > base2.txt &&
	diff -u base.txt base2.txt
'

test_expect_success 'run file: --test keeps one test in every format' '
	"$TOP/tests/node/install.sh" &&
	node "$TOP/tests/node/pprof-tool.mjs" make-run run.pb.gz &&
	$TF view --test test_beta run.pb.gz > beta.txt &&
	expect_contains beta.txt "Selection: test '\''test_beta'\''" &&
	expect_contains beta.txt "Total: 303.03ms in 30 samples" &&
	expect_eq "$(flat_share beta.txt hot_b)" 100.00 "hot_b share in test_beta" &&
	expect_not_contains beta.txt hot_a &&
	$TF view --test test_beta --format folded --value samples run.pb.gz > beta.folded &&
	expect_eq "$(cat beta.folded)" "main;run_test;hot_b 30" &&
	$TF view --test test_beta --format pprof -o beta.pb.gz run.pb.gz &&
	$TF show beta.pb.gz > beta-show.txt &&
	expect_contains beta-show.txt "samples        30" &&
	node "$TOP/tests/node/pprof-tool.mjs" decode beta.pb.gz > beta.decoded &&
	expect_contains beta.decoded "label test=test_beta" &&
	expect_not_contains beta.decoded "label test=test_alpha" &&
	expect_not_contains beta.decoded "function hot_a" &&
	expect_contains beta.decoded "comment testflame.event=cpu-clock"
'

test_expect_success 'run file: the text table in time units, all tests' '
	$TF view run.pb.gz > run.txt &&
	expect_contains run.txt "Type: cpu (nanoseconds)" &&
	expect_contains run.txt "Total: 1010.10ms in 100 samples" &&
	expect_eq "$(flat_share run.txt hot_a)" 55.00 "hot_a share" &&
	grep -q "^  555.56ms  55.00%  55.00%   555.56ms  55.00%  hot_a$" run.txt
'

test_expect_success 'a test that ran without samples is known, and empty' '
	$TF view --test test_gamma run.pb.gz > gamma.txt &&
	expect_contains gamma.txt "Total: 0"
'

test_expect_success 'html and svg write a page and a flame graph (the report module)' '
	$TF view --format html known.folded > page.html &&
	expect_contains page.html "<!DOCTYPE html>" &&
	expect_contains page.html "\"mode\":\"single\"" &&
	$TF view --format svg -o x.svg known.folded &&
	expect_contains x.svg "<svg" &&
	xmllint --noout x.svg
'

test_expect_success 'help lists the options' '
	$TF view --help > help &&
	expect_contains help "--format" && expect_contains help "--test NAME" &&
	expect_contains help "--value TYPE" && expect_contains help "--top N" &&
	$TF help view > help2 && diff -u help help2
'

test_done
