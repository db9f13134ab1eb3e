#!/usr/bin/env bash
# t0270-quiet.sh - what -q means for the gate: `run -q` prints errors and,
# when a test got slower, one line per regressed test and the verdict's
# line; on an unchanged branch nothing at all (no "baseline:" line, no
# table) and exit 0. `record -q` prints only errors; `publish -q` keeps
# its warnings (what could not be posted) and drops its notes (what was).
# --help, the manual page and the README say the same words.
. "$(dirname "$0")/lib.sh"

HELP="only errors, and the regressed tests when a test got slower"
test_expect_success 'run --help, testflame-run(1) and the README say what -q does' '
	"$TF" run --help | grep -qF -- "-q, --quiet                $HELP" &&
	"$TF" merge --help | grep -qF -- "$HELP" &&
	"$TF" help --man run | grep -qF "$HELP" &&
	grep -qF "\`-q\` prints $HELP" "$TOP/README.md" &&
	"$TF" record --help | grep -qF -- "-q, --quiet                only errors" &&
	"$TF" publish --help | grep -qF -- "-q, --quiet                only warnings and errors"
'

git init -q repo && cd repo && git config user.email t@example.com && git config user.name t &&
	echo 3 >units && printf "suite: spin\nfreq: 999\n" >.testflame.yml && git add -A && git commit -qm one && cd ..
spin() { echo "\"$FIX/split7030\" \$(cat units)"; }

test_expect_success 'run -q on an unchanged commit: nothing on stdout, exit 0' '
	cd repo && "$TF" run -q --confirm none -- sh -c "$(spin)" >../first.out 2>../first.err &&
	git commit -q --allow-empty -m two &&
	"$TF" run -q --no-save --confirm none -- sh -c "$(spin)" >../same.out 2>../same.err || { cat ../same.err; exit 1; }
	expect_eq "$(cat ../same.out)" "" "stdout" && expect_eq "$(cat ../first.out)" "" "stdout of the first" &&
	"$TF" run --no-save --confirm none -- sh -c "$(spin)" >../loud.out 2>&1 || :
	expect_contains ../loud.out "baseline: "
'

test_expect_code 3 'run -q with a slower test: the regressed test and the verdict, exit 3' '
	cd repo && echo 6 >units && git commit -qam slower &&
	"$TF" run -q --no-save --confirm none -- sh -c "$(spin)" >../slow.out 2>../slow.err; rc=$?
	cat ../slow.out
	grep -Eq "^regressed: split7030 \+[0-9.]+% \(" ../slow.out &&
	grep -q "^REGRESSION: 1 test slower by at least 5%; report: testflame-report/index.html$" ../slow.out &&
	expect_eq "$(wc -l <../slow.out)" 2 "lines" && exit $rc
'

test_expect_success 'publish -q: its warnings, not its notes' '
	cp -r repo/testflame-report rep && cp -r rep nomd && rm nomd/report.md &&
	"$TF" publish rep >loud.out 2>loud.err && expect_contains loud.err "nothing posted: " &&
	"$TF" publish -q rep >q.out 2>q.err && expect_eq "$(cat q.out q.err)" "" "publish -q" &&
	"$TF" publish -q nomd >q2.out 2>q2.err &&
	expect_eq "$(cat q2.err)" "testflame: warning: no comment: '"'"'nomd/report.md'"'"' is missing or empty" "publish -q"
'

test_done
