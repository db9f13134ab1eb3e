#!/usr/bin/env bash
# t7030-hook.sh - the pre-push hook with real `git push`es to a local bare
# repository: an unchanged branch goes through, a branch that slows
# matrix_multiply is refused (and says how to bypass), --no-verify pushes
# anyway; with no stored baseline the merge-base is built beside; an
# existing hook is refused or chained (run first, its failure still stops
# the push) and put back on uninstall; core.hooksPath is honoured.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

export PATH="$BUILD:$PATH"
make_example_repo repo
git init -q --bare origin.git
cd repo
git remote add origin "$SCRATCH/origin.git" && git push -q origin main
cd "$SCRATCH"

remote_has() { git --git-dir="$SCRATCH/origin.git" rev-parse -q --verify "refs/heads/$1" >/dev/null; }

test_expect_success 'install: an executable pre-push hook in the repository' '
	cd repo && "$TF" hook install >out 2>err &&
	expect_contains out "installed the pre-push hook in .git/hooks/pre-push" &&
	test -x .git/hooks/pre-push && grep -q "^# testflame-hook: pre-push$" .git/hooks/pre-push &&
	expect_contains out "git push --no-verify"
'

# Runs minutes apart on this shared machine differ by up to ~60% per test,
# so the unchanged push is judged the robust way, with nothing stored: the
# merge-base built beside and run interleaved (3 runs each side; what looks
# slower there must be slower again in the rounds that confirm it). The
# branch's hook runs a quick suite of two tests (the suite's six are run by
# the hook of test 3): each of its rounds costs half, and a test more that
# is undecided under a neighbour adds rounds.
test_expect_success 'no baseline stored: an unchanged branch, compared with the merge-base built beside, is pushed' '
	cd repo && git checkout -q -b same && echo "/* nothing */" >>src/hash.c &&
	printf "hook:\n  command: [sh, -c, \"./build/test_matrix && ./build/test_sort\"]\n" >>.testflame.yml &&
	git commit -qam same &&
	make -s all >/dev/null && { git push origin same >all 2>&1 || { tail -n 25 all >&2; false; }; } &&
	expect_contains all "profiling the quick suite before pushing" &&
	expect_contains all "no stored baseline of '\''quick'\''" &&
	expect_contains all "against $(git rev-parse --short=12 main)" &&
	remote_has same
'

test_expect_success 'with a stored baseline on main: a branch that slows a test is refused, with the way around' '
	cd repo && git checkout -q main && "$TF" run -q >/dev/null 2>&1 && "$TF" baseline list | grep -q examples &&
	git checkout -q -b slow && slow_down_matrix &&
	git commit -qam "matrix: a second pass" && make -s all >/dev/null &&
	! git push origin slow >all 2>&1 &&
	expect_contains all "baseline: $(git rev-parse --short=12 main)" &&
	grep -q "regressed.*test_matrix" all &&
	expect_contains all "push refused: a test got slower" &&
	expect_contains all "git push --no-verify" &&
	! remote_has slow
'

test_expect_success '--no-verify pushes anyway' '
	cd repo && git push -q --no-verify origin slow 2>err && remote_has slow
'

test_expect_success 'pushing a ref that is not checked out: nothing to profile' '
	cd repo && git checkout -q main && git branch -q other slow &&
	git push origin other >out 2>err && expect_contains err "not profiling refs/heads/other" &&
	remote_has other
'

# (the regression confirmed or not is test 3's: here no reruns)
test_expect_success 'a fresh clone fetches the baseline CI pushed for the merge-base' '
	cd repo && git checkout -q main && "$TF" baseline push "$(git rev-parse main)" >/dev/null 2>&1 &&
	cd "$SCRATCH" && git clone -q -b main origin.git clone2 && cd clone2 &&
	git config user.email t@example.com && git config user.name t && make -s all >/dev/null &&
	"$TF" hook install >/dev/null && git checkout -q -b slow3 && slow_down_matrix &&
	sed -i "s/confirm: 2/confirm: none/" .testflame.yml &&
	git commit -qam "matrix: slower" && make -s all >/dev/null &&
	! git push origin slow3 >all 2>&1 &&
	expect_contains all "fetched the baseline of $(git rev-parse --short=12 main)" &&
	expect_contains all "baseline: $(git rev-parse --short=12 main)" &&
	expect_contains all "push refused: a test got slower"
'

test_expect_success 'an existing hook is not clobbered: install refuses and says how to chain' '
	cd repo && "$TF" hook uninstall >out && ! test -e .git/hooks/pre-push &&
	printf "#!/bin/sh\necho mine \"\$1\" >>\"%s/mine.log\"\ncat >>\"%s/mine.log\"\nexit \${MINE_FAILS:-0}\n" "$SCRATCH" "$SCRATCH" >.git/hooks/pre-push &&
	chmod +x .git/hooks/pre-push && cp .git/hooks/pre-push "$SCRATCH/mine.orig" &&
	! "$TF" hook install >out 2>err && expect_contains err "a pre-push hook is already there" &&
	expect_contains err "--chain" && cmp .git/hooks/pre-push "$SCRATCH/mine.orig"
'

test_expect_success 'with no stored baseline, --chain: both hooks run, the merge-base is built beside' '
	cd repo && for r in $(git for-each-ref --format="%(refname)" refs/testflame/); do git update-ref -d $r; done &&
	cat >>.testflame.yml <<-\YML &&
	hook:
	  command: [sh, -c, "./build/test_matrix && ./build/test_sort"]
	  repeat: 2
	YML
	git commit -qam "quick suite" && git push -q --no-verify origin main &&
	"$TF" hook install --chain >out 2>err && expect_contains out "the hook that was there runs first" &&
	test -x .git/hooks/pre-push.testflame-chained &&
	git checkout -q -b slow2 && slow_down_matrix && git commit -qam "matrix: again" && make -s all >/dev/null &&
	! git push origin slow2 >all 2>&1 &&
	expect_contains all "no stored baseline of '\''quick'\''" &&
	expect_contains all "against $(git rev-parse --short=12 main)" &&
	grep -q "regressed.*test_matrix" all && expect_contains all "push refused" &&
	grep -q "^mine origin" "$SCRATCH/mine.log" && grep -q "refs/heads/slow2 $(git rev-parse HEAD) refs/heads/slow2 0000000" "$SCRATCH/mine.log" &&
	! remote_has slow2
'

test_expect_success 'a chained hook that fails stops the push before testflame runs' '
	cd repo && MINE_FAILS=1 git push origin slow2 >out 2>err; rc=$?
	[ $rc != 0 ] && expect_not_contains err "profiling the quick suite" && ! remote_has slow2
'

test_expect_success 'uninstall puts the chained hook back' '
	cd repo && "$TF" hook uninstall >out && expect_contains out "is the pre-push hook again" &&
	cmp .git/hooks/pre-push "$SCRATCH/mine.orig" && ! test -e .git/hooks/pre-push.testflame-chained
'

test_expect_success 'uninstall leaves a foreign hook alone' '
	cd repo && ! "$TF" hook uninstall 2>err && expect_contains err "is not testflame'\''s; left alone" &&
	cmp .git/hooks/pre-push "$SCRATCH/mine.orig"
'

test_expect_success 'core.hooksPath is honoured' '
	cd repo && git config core.hooksPath .githooks && "$TF" hook install >out &&
	test -x .githooks/pre-push && expect_contains out ".githooks/pre-push" &&
	"$TF" hook uninstall >/dev/null && ! test -e .githooks/pre-push && git config --unset core.hooksPath
'

test_expect_code 2 'hook: usage' '
	"$TF" hook frobnicate 2>err; rc=$?
	expect_contains err "unknown hook command" && exit $rc
'

test_done
