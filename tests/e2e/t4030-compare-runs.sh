#!/usr/bin/env bash
# t4030-compare-runs.sh - several runs per side (--base/--head): per-run
# totals, Welch's test from three runs per side with the exact p-value,
# degrees of freedom and interval computed by scipy, the modelled test
# below three runs, and tests present in only some runs.
. "$(dirname "$0")/lib.sh"

MKPPROF="python3 $TOP/tests/e2e/mkpprof.py"

for n in 1000 1020 990; do printf 'main;work %s\n' $n > b$n.folded; done
for n in 1200 1190 1215; do printf 'main;work %s\n' $n > h$n.folded; done

test_expect_code 3 "three runs per side, 20% slower: regressed" '
	"$TF" compare --report r3 --base b1000.folded --base b1020.folded --base b990.folded \
		--head h1200.folded --head h1190.folded --head h1215.folded > out.txt
'

# b, h = [1000, 1020, 990], [1200, 1190, 1215]
# ttest_ind(log(h), log(b), equal_var=False, alternative="greater").pvalue
#   = 0.00015976341685268125 / 2 (p is one-sided, in the direction of the change)
# Welch-Satterthwaite df = 3.548790944888316
# 95% CI: exp(log(mean(h)/mean(b)) -+ t.isf(.025, df) * se) - 1 = +16.0991%, +23.5517%
test_expect_success "Welch on the per-run log costs, as scipy computes it" '
	f=r3/report.json &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"method\"]")" welch &&
	expect_near "$(jget $f "d[\"tests\"][0][\"p_value\"]")" 0.00007988170842634063 1e-10 p &&
	expect_near "$(jget $f "d[\"tests\"][0][\"df\"]")" 3.548790944888316 1e-8 df &&
	expect_near "$(jget $f "d[\"tests\"][0][\"ci_pct\"][0]")" 16.09912009593635 1e-6 ci_low &&
	expect_near "$(jget $f "d[\"tests\"][0][\"ci_pct\"][1]")" 23.55166962460007 1e-6 ci_high &&
	expect_near "$(jget $f "d[\"tests\"][0][\"delta_pct\"]")" 19.76744186046513 1e-9 delta &&
	expect_near "$(jget $f "d[\"tests\"][0][\"base\"][\"cost\"]")" 1003.3333333333 1e-6 base_cost &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"base\"][\"samples\"]")" 3010 &&
	expect_eq "$(jget $f "d[\"tests\"][0][\"head\"][\"runs\"]")" 3 &&
	expect_eq "$(jget $f "d[\"base\"][\"files\"]")" "['\''b1000.folded'\'', '\''b1020.folded'\'', '\''b990.folded'\'']" &&
	expect_contains out.txt "3 base runs vs 3 head runs"
'

test_expect_success "BASE HEAD operands and --base/--head add up to the same runs" '
	{ "$TF" compare --report mixed b1000.folded h1200.folded --base b1020.folded --base b990.folded \
		--head h1190.folded --head h1215.folded > /dev/null; test $? = 3; } &&
	cmp r3/report.json mixed/report.json
'

test_expect_success "two runs per side: the modelled Poisson test" '
	{ "$TF" compare --report r2 --base b1000.folded --base b1020.folded \
		--head h1200.folded --head h1190.folded > /dev/null; test $? = 3; } &&
	expect_eq "$(jget r2/report.json "d[\"tests\"][0][\"method\"]")" poisson
'

test_expect_success "the same runs on both sides: unchanged, a one-sided p of 1/2" '
	"$TF" compare --report same --base b1000.folded --base b1020.folded --base b990.folded \
		--head b990.folded --head b1000.folded --head b1020.folded > out.txt &&
	expect_eq "$(jget same/report.json "d[\"tests\"][0][\"verdict\"]")" unchanged &&
	expect_near "$(jget same/report.json "d[\"tests\"][0][\"p_value\"]")" 0.5 1e-12 p
'

test_expect_success "a test in some runs only: its runs are counted, its cost is per run of the side" '
	printf "A 1000 main;a\nB 100 main;b\n" | $MKPPROF r1.pb.gz &&
	printf "A 1000 main;a\nB 100 main;b\n" | $MKPPROF r2.pb.gz &&
	printf "A 1000 main;a\n" | $MKPPROF r3.pb.gz &&
	"$TF" compare --report part --base r1.pb.gz --base r2.pb.gz --base r3.pb.gz \
		--head r1.pb.gz --head r2.pb.gz --head r3.pb.gz > out.txt &&
	f=part/report.json &&
	expect_eq "$(jget $f "[t[\"base\"][\"runs\"] for t in d[\"tests\"] if t[\"name\"] == \"B\"][0]")" 2 &&
	expect_near "$(jget $f "[t[\"base\"][\"cost\"] for t in d[\"tests\"] if t[\"name\"] == \"B\"][0]")" 666666666.667 1e-3 cost
'

test_done
