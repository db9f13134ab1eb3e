#!/usr/bin/env bash
# t5040-baseline-corrupt.sh - broken baselines (a ref file full of garbage,
# a missing or damaged object, a ref to something that is not a commit) are
# reported in one clear line naming the baseline, never skipped silently,
# never overwritten by a save, and prune can clear them away.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-store.sh"

new_repo repo 5
for i in 0 1 2 3 4; do
	folded f$i.folded "fn$i" $((i + 1))
	(cd repo && "$TF" baseline save -q --commit HEAD~$i --suite unit --kind k ../f$i.folded)
done
ref() { echo "refs/testflame/runs/$(git -C repo rev-parse "$1")"; }
obj() { local id; id=$(git -C repo rev-parse "$1"); echo "repo/.git/objects/${id:0:2}/${id:2}"; }

test_expect_success 'setup: five readable baselines' '
	(cd repo && "$TF" baseline list) > list && expect_eq "$(wc -l < list)" 5 "lines"
'

test_expect_code 1 'a ref file full of garbage: list names it, lists the rest, exits 1' '
	echo "this is not an object id" > "repo/.git/$(ref HEAD~1)" &&
	(cd repo && "$TF" baseline list) > list 2>err; rc=$?
	expect_eq "$(wc -l < list)" 4 "readable lines" &&
	expect_contains err "$(git -C repo rev-parse HEAD~1)" &&
	expect_contains err "unreadable" &&
	expect_eq "$(wc -l < err)" 1 "error lines" && exit $rc
'

test_expect_code 1 'show of the garbage ref: one clear line' '
	(cd repo && "$TF" baseline show HEAD~1) 2>err; rc=$?
	expect_contains err "refs/testflame/runs/$(git -C repo rev-parse HEAD~1)" &&
	expect_eq "$(wc -l < err)" 1 "lines" && exit $rc
'

test_expect_code 1 'save does not overwrite a ref it cannot read' '
	(cd repo && "$TF" baseline save --commit HEAD~1 --suite unit --kind k2 ../f0.folded) 2>err; rc=$?
	expect_contains err "cannot read ref" &&
	expect_eq "$(cat "repo/.git/$(ref HEAD~1)")" "this is not an object id" && exit $rc
'

test_expect_code 1 'a run file whose object is gone' '
	rm -f "$(obj "$(ref HEAD~2):unit/k.pb.gz")" &&
	(cd repo && "$TF" baseline show HEAD~2) 2>err; rc=$?
	expect_contains err "baseline of $(git -C repo rev-parse --short=12 HEAD~2)" &&
	expect_contains err "unit/k.pb.gz" && exit $rc
'

test_expect_code 1 'a baseline commit object that is damaged' '
	o=$(obj "$(ref HEAD~3)") && chmod u+w "$o" && printf "garbage" > "$o" &&
	(cd repo && "$TF" baseline show HEAD~3) 2>err; rc=$?
	expect_contains err "baseline of $(git -C repo rev-parse --short=12 HEAD~3)" &&
	expect_eq "$(wc -l < err)" 1 "lines" && exit $rc
'

test_expect_code 1 'a ref that points at a blob' '
	git -C repo update-ref "$(ref HEAD~4)" "$(git -C repo rev-parse "$(ref HEAD):unit/k.pb.gz")" &&
	(cd repo && "$TF" baseline show HEAD~4) 2>err; rc=$?
	expect_contains err "cannot read baseline commit" && exit $rc
'

test_expect_code 1 'list reports all four broken ones and still lists the good one' '
	(cd repo && "$TF" baseline list) > list 2>err; rc=$?
	expect_eq "$(wc -l < list)" 1 "readable lines" &&
	expect_eq "$(wc -l < err)" 4 "error lines" && exit $rc
'

test_expect_success 'prune --keep 1 clears the broken ones away' '
	(cd repo && "$TF" baseline prune --keep 1) 2>err &&
	expect_contains err "removed 4 baselines" &&
	(cd repo && "$TF" baseline list) > list 2>err &&
	[ ! -s err ] && expect_eq "$(wc -l < list)" 1 "lines" &&
	expect_eq "$(git -C repo for-each-ref refs/testflame | wc -l)" 1 "refs"
'

test_done
