#!/usr/bin/env bash
# t0240-first-hour.sh - what a newcomer reads in their first session
# (issue 15): the first run of a new repository says in plain words why
# there is nothing to compare with; the suite keeps its name, and so its
# baselines, when a flag of the command changes; every message about a
# baseline names the suite; with no baseline of the suite, the suites that
# are stored are listed with the way to pick one; -q prints no warnings.
. "$(dirname "$0")/lib.sh"

mkdir repo && cd repo &&
	git init -q -b main && git config user.email t@example.com && git config user.name t &&
	printf 'testflame-report/\n' >.gitignore && git add -A && git commit -qm first && cd ..

test_expect_success 'first commit: plain words, not git'\''s, and the baseline named by its suite' '
	cd repo && "$TF" run --freq 499 -- "$FIX/split7030" 3 >out 2>err &&
	cat out err &&
	expect_contains err "this is the repository'\''s first commit: nothing before it to compare with" &&
	expect_not_contains err "parent 0" && expect_not_contains err "unknown revision" &&
	expect_contains err "saved the baseline of '\''split7030'\'' for $(git rev-parse --short=12 HEAD)" &&
	expect_contains out "no baseline yet" &&
	expect_contains testflame-report/report.md "first commit"
'

test_expect_success 'another way to start it keeps the suite: the baseline is found, and named' '
	cd repo && git commit -q --allow-empty -m second &&
	"$TF" run --freq 499 --no-save --no-fail -- env LC_ALL=C "$FIX/split7030" 3 >out 2>err &&
	cat out err &&
	expect_contains out "baseline: $(git rev-parse --short=12 HEAD~1) (first), 1 commit before HEAD; suite '\''split7030'\''"
'

test_expect_success 'no baseline of this suite: the stored ones are listed, with how to pick one' '
	cd repo && "$TF" run --freq 499 --no-save --suite unit -- "$FIX/split7030" 3 >out 2>err &&
	cat out err &&
	expect_contains err "no baseline of the suite '\''unit'\''" &&
	expect_contains err "holds the suite '\''split7030'\'', not '\''unit'\''" &&
	expect_contains err "run with --suite '\''split7030'\'' or set '\''suite: split7030'\'' in .testflame.yml" &&
	expect_contains testflame-report/report.md "run with --suite"
'

test_expect_success 'the suite stored under another runner kind: the event and sampler are named' '
	cd repo && "$TF" run --freq 499 --no-save --sampler ptrace -- "$FIX/split7030" 3 >out 2>err &&
	cat out err &&
	expect_contains err "holds '\''split7030'\'' recorded as cpu-clock-perf-" &&
	expect_contains err "run with the same --event and --sampler"
'

test_expect_success '-q is only errors: a warning is not printed' '
	cd repo && CI=true "$TF" run --freq 499 --no-save --no-fail -- "$FIX/split7030" 3 >out 2>err &&
	expect_contains err "warning: " &&
	CI=true "$TF" run -q --freq 499 --no-save --no-fail -- "$FIX/split7030" 3 >out 2>err &&
	cat err && test ! -s err
'

test_expect_success 'outside a repository: one warning that says what it means and the way out' '
	mkdir -p norepo && cd norepo &&
	"$TF" run --freq 499 -- "$FIX/split7030" 2 >out 2>err &&
	cat err &&
	test "$(grep -c "^testflame: warning: " err)" = 1 &&
	expect_contains err "/norepo'\'' is not in a git repository: the run carries no commit" &&
	expect_contains err "--store dir:PATH" &&
	expect_contains out "no baseline yet"
'

test_done
