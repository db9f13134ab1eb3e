#!/usr/bin/env bash
# t2040-pprof-format.sh - a second, independent pprof implementation reads
# what testflame writes: Datadog's pprof-format (npm), a pure JavaScript
# decoder, on `view --format pprof` output from folded stacks and from a
# run-shaped file, checking counts, flat values per function, function
# names and files, labels and comments.
. "$(dirname "$0")/lib.sh"

"$TOP/tests/node/install.sh" || exit 1
tool="$TOP/tests/node/pprof-tool.mjs"

cat > known.folded <<'EOF'
main;parse;lex 300
main;parse 100
main;eval;hot 500
main;eval;rec;rec;rec 70
other;hot 9
EOF

test_expect_success 'folded -> pprof: pprof-format decodes counts and names' '
	$TF view --format pprof -o known.pb.gz known.folded &&
	node "$tool" decode known.pb.gz > decoded &&
	expect_contains decoded "sample_types samples/count" &&
	expect_contains decoded "records 5" &&
	expect_contains decoded "total samples 979" &&
	expect_contains decoded "flat hot 509" &&
	expect_contains decoded "flat lex 300" &&
	expect_contains decoded "flat parse 100" &&
	expect_contains decoded "flat rec 70" &&
	for f in main parse lex eval hot rec other; do
		expect_contains decoded "function $f file= start=0" || exit 1
	done
'

test_expect_success 'flat values agree with our top table' '
	$TF view --top 0 known.pb.gz | awk "/^ *flat  *flat%/ { on = 1; next } on && \$1 > 0 { print \"flat\", \$NF, \$1 }" | sort > ours &&
	grep "^flat " decoded | sort > theirs &&
	diff -u theirs ours
'

test_expect_success 'run file re-encoded: labels, comments, files, mapping survive' '
	node "$tool" make-run run.pb.gz &&
	$TF view --format pprof -o ours.pb.gz run.pb.gz &&
	node "$tool" decode run.pb.gz > before &&
	node "$tool" decode ours.pb.gz > after &&
	diff -u <(sort before) <(sort after) &&
	expect_contains after "function hot_a file=a.c start=5" &&
	expect_contains after "label tid=302" &&
	expect_contains after "label test=weird \"test\" <x>" &&
	expect_contains after "comment testflame.test.test_gamma=samples=0 value=0" &&
	expect_contains after "default_sample_type cpu" &&
	expect_contains after "period cpu/nanoseconds 10101010" &&
	expect_contains after "mapping /usr/bin/app build_id=0123456789abcdef"
'

test_expect_success 'one test selected: only its samples, functions and strings' '
	$TF view --format pprof --test test_alpha -o alpha.pb.gz run.pb.gz &&
	node "$tool" decode alpha.pb.gz > alpha &&
	expect_contains alpha "records 3" &&
	expect_contains alpha "total samples 60" &&
	expect_contains alpha "total cpu 606060600" &&
	expect_not_contains alpha "function hot_b" &&
	expect_not_contains alpha "label test=test_beta" &&
	expect_contains alpha "label tid=101"
'

test_done
