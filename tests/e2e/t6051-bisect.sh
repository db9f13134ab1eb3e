#!/usr/bin/env bash
# t6051-bisect.sh - `testflame bisect TEST GOOD BAD` on a real repository
# (lib-history.sh's suite): eight commits of main, victim_work() 50%
# slower from commit 6, commit 4's suite failing (the first commit the
# halving tries). Only commits 1, 2, 7 and
# 8 have stored runs, so the stored runs alone cannot name the commit: the
# commits between are checked out beside, built with `build:`, run
# alternately with GOOD, the failing one skipped and named; the answer is
# commit 6 with victim_work's time named. The user's checkout is left as
# it was. GOOD not an ancestor of BAD, an unknown test and a range with no
# difference each get one line and exit 1.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-history.sh"

history_repo repo || exit 1
for i in $(seq 1 8); do
	slow=0; fail=0; store=
	[ "$i" -ge 6 ] && slow=50
	[ "$i" = 4 ] && fail=1
	case $i in 1|2|7|8) store=store;; esac
	history_commit "$i" "$slow" "$fail" $store || exit 1
	[ "$i" = 1 ] && git rev-parse HEAD >good
	[ "$i" = 3 ] && git rev-parse HEAD >before
	[ "$i" = 6 ] && git rev-parse HEAD >step
	[ "$i" = 4 ] && git rev-parse HEAD >failing
done
git checkout -q -b side HEAD~3 && git commit -q --allow-empty -m "a side commit" &&
	git rev-parse HEAD >side && git checkout -q main || exit 1
git status --porcelain >../status.before && git rev-parse HEAD >../head.before
cd "$SCRATCH"

test_expect_success 'half the range unstored: built and run here, the step named, the failing commit skipped' '
	cd repo && "$TF" bisect --rounds 1 victim "$(cat good)" main >../out 2>../err ||
		{ cat ../out ../err; exit 1; }
	cd .. && cat out &&
	expect_contains out "first slower commit: $(cat repo/step) commit 6: slowdown 50" &&
	expect_contains out "skipped: $(cut -c1-10 repo/failing) its suite failed (exit status 1)" &&
	grep -E "victim \+[0-9.]+% \[" out &&
	grep -E "functions: (spin|victim_work) " out &&
	expect_contains err "4 with a stored run" &&
	expect_contains err "building" &&
	cd repo && git status --porcelain >../status.after && cmp ../status.before ../status.after &&
	[ "$(git rev-parse HEAD)" = "$(cat ../head.before)" ] &&
	[ "$(git rev-parse --abbrev-ref HEAD)" = main ]
'

test_expect_code 1 'GOOD not an ancestor of BAD: one line, exit 1' '
	cd repo && "$TF" bisect victim "$(cat side)" main >out 2>err; rc=$?
	cat err; expect_eq "$(wc -l <err)" 1 "lines" &&
	expect_contains err "is not an ancestor of" && exit $rc
'

test_expect_code 1 'an unknown test: one line, exit 1' '
	cd repo && "$TF" bisect --rounds 1 nosuch "$(cat good)" main >out 2>err; rc=$?
	cat err; expect_contains err "unknown test '\''nosuch'\''" &&
	expect_eq "$(grep -c "^testflame: error\|unknown test" err)" 1 "error lines" && exit $rc
'

test_expect_code 1 'no difference in the range: one line, exit 1' '
	cd repo && "$TF" bisect --rounds 2 victim "$(cat good)" "$(cat before)" >out 2>err; rc=$?
	cat err; expect_contains err "no difference beyond noise" && exit $rc
'

test_done
