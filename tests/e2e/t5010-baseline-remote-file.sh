#!/usr/bin/env bash
# t5010-baseline-remote-file.sh - `testflame baseline push/fetch` against a
# bare repository on the file system (file:// and plain path): only the
# baseline refs move, pushes are never forced, a push that finds another
# job's baseline merges both, and many concurrent pushes lose nothing.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-store.sh"

git init -q --bare origin.git
new_repo a 6
git -C a remote add origin "file://$SCRATCH/origin.git"
git -C a push -q origin main
git clone -q "file://$SCRATCH/origin.git" b
git clone -q "$SCRATCH/origin.git" c  # a plain path remote
folded x.folded x 10
folded y.folded y 20
folded z.folded z 30

test_expect_success 'push creates the remote ref' '
	(cd a && "$TF" baseline save -q --suite unit --kind k1 ../x.folded &&
	 "$TF" baseline push) 2>err &&
	expect_contains err "created" &&
	head=$(git -C a rev-parse HEAD) &&
	expect_eq "$(git -C origin.git ls-tree -r --name-only refs/testflame/runs/$head)" "unit/k1.pb.gz"
'

test_expect_success 'list --remote shows what the remote has and whether it is here' '
	(cd b && "$TF" baseline list --remote origin) > rl &&
	expect_contains rl "$(git -C a rev-parse HEAD)" &&
	expect_contains rl "absent here"
'

test_expect_success 'fetch brings only that baseline ref' '
	(cd b && "$TF" baseline fetch) 2>err &&
	expect_contains err "created" &&
	expect_eq "$(git -C b for-each-ref --format="%(refname)" refs/testflame)" \
		"refs/testflame/runs/$(git -C a rev-parse HEAD)" &&
	expect_eq "$(baseline_files b HEAD)" "unit/k1.pb.gz" &&
	(cd b && "$TF" baseline list --remote origin) > rl && expect_contains rl "same here"
'

test_expect_success 'a second kind fast-forwards the remote; fetch follows' '
	(cd b && "$TF" baseline save -q --suite unit --kind k2 ../y.folded && "$TF" baseline push) 2>err &&
	expect_contains err "updated" &&
	(cd a && "$TF" baseline fetch HEAD) 2>err && expect_contains err "updated" &&
	expect_eq "$(baseline_files a HEAD | tr "\n" " ")" "unit/k1.pb.gz unit/k2.pb.gz "
'

test_expect_success 'two clones that both saved: the second push merges, both files stay' '
	(cd a && "$TF" baseline save -q --commit HEAD~1 --suite unit --kind ka ../x.folded) &&
	(cd c && "$TF" baseline save -q --commit HEAD~1 --suite unit --kind kc ../y.folded) &&
	(cd a && "$TF" baseline push HEAD~1) 2>err && expect_contains err "created" &&
	(cd c && "$TF" baseline push HEAD~1) 2>err && expect_contains err "merged" &&
	ref=refs/testflame/runs/$(git -C a rev-parse HEAD~1) &&
	expect_eq "$(git -C origin.git ls-tree -r --name-only $ref | tr "\n" " ")" "unit/ka.pb.gz unit/kc.pb.gz " &&
	expect_eq "$(git -C origin.git rev-list --parents -1 $ref | wc -w)" 3 "merge commit + 2 parents"
'

test_expect_success 'same suite and kind on both sides: push keeps the remote'"'"'s, fetch keeps the local one' '
	(cd a && "$TF" baseline save -q --commit HEAD~2 --suite unit --kind k ../x.folded && "$TF" baseline push HEAD~2) &&
	(cd c && "$TF" baseline save -q --commit HEAD~2 --suite unit --kind k ../y.folded && "$TF" baseline push HEAD~2) 2>err &&
	expect_contains err "kept the remote" &&
	ref=refs/testflame/runs/$(git -C a rev-parse HEAD~2) &&
	expect_eq "$(git -C origin.git rev-parse $ref:unit/k.pb.gz)" "$(git -C a rev-parse $ref:unit/k.pb.gz)" &&
	(cd a && "$TF" baseline save -q --commit HEAD~2 --suite unit --kind k ../z.folded) &&
	mine=$(git -C a rev-parse $ref:unit/k.pb.gz) &&
	(cd a && "$TF" baseline fetch HEAD~2) 2>err &&
	expect_contains err "kept the local one" &&
	expect_eq "$(git -C a rev-parse $ref:unit/k.pb.gz)" "$mine"
'

test_expect_success 'several revisions in one push' '
	(cd a && for r in HEAD~3 HEAD~4; do "$TF" baseline save -q --commit $r --suite s --kind k ../x.folded || exit 1; done &&
	 "$TF" baseline push HEAD~3 HEAD~4 HEAD~3) 2>err &&
	expect_eq "$(grep -c created err)" 2 "created lines" &&
	expect_eq "$(git -C origin.git for-each-ref refs/testflame | wc -l)" 5 "remote refs"
'

test_expect_success 'a remote given as a URL, and a plain path remote' '
	git init -q --bare other.git &&
	(cd a && "$TF" baseline push --remote "file://$SCRATCH/other.git" HEAD) 2>err &&
	expect_contains err "created" &&
	(cd c && "$TF" baseline fetch HEAD~3) 2>err && expect_contains err "created"
'

test_expect_success 'a remote with its own push URL: push goes there, listing included' '
	git init -q --bare fetchside.git && git init -q --bare pushside.git &&
	git -C a remote add split "file://$SCRATCH/fetchside.git" &&
	git -C a remote set-url --push split "file://$SCRATCH/pushside.git" &&
	(cd a && "$TF" baseline push --remote split) 2>err && expect_contains err "created" &&
	expect_eq "$(git -C pushside.git for-each-ref refs/testflame | wc -l)" 1 "refs at the push URL" &&
	expect_eq "$(git -C fetchside.git for-each-ref refs/testflame | wc -l)" 0 "refs at the fetch URL" &&
	(cd a && "$TF" baseline push --remote split) 2>err && expect_contains err "up to date"
'

test_expect_code 1 'fetching what the remote does not have is an error naming it' '
	(cd b && "$TF" baseline fetch HEAD~5) 2>err; rc=$?
	expect_contains err "has no baseline for $(git -C b rev-parse --short=12 HEAD~5)" && exit $rc
'

test_expect_code 1 'pushing without a local baseline is an error' '
	(cd b && "$TF" baseline push HEAD~5) 2>err; rc=$?
	expect_contains err "no local baseline" && exit $rc
'

test_expect_code 1 'an unknown remote name' '
	(cd b && "$TF" baseline fetch --remote nope) 2>err; rc=$?
	expect_contains err "no remote named '\''nope'\''" && exit $rc
'

test_expect_code 1 'an unreachable remote path' '
	(cd b && "$TF" baseline fetch --remote "file://$SCRATCH/missing.git") 2>err; rc=$?
	expect_contains err "missing.git" && expect_eq "$(wc -l < err)" 1 "lines" && exit $rc
'

# Each job clones, saves its own kind and pushes once, all at the same
# time, like CI jobs of one commit: a push that overwrote another would
# lose that job's file for good (libgit2's own local transport does that;
# this test fails against it).
test_expect_success 'six concurrent jobs pushing the same commit: all six files survive' '
	git init -q --bare race.git &&
	new_repo src 4 &&
	git -C src push -q "$SCRATCH/race.git" main &&
	for j in 1 2 3 4 5 6; do git clone -q "file://$SCRATCH/race.git" j$j || exit 1; done &&
	for i in 0 1 2 3; do
		pids= &&
		for j in 1 2 3 4 5 6; do
			(cd j$j && "$TF" baseline save -q --commit HEAD~$i --suite unit --kind k$j ../x.folded &&
			 "$TF" baseline push -q HEAD~$i) > out.$i.$j 2>&1 &
			pids="$pids $!"
		done
		for p in $pids; do wait $p || { cat out.$i.*; exit 1; }; done
		n=$(git -C race.git ls-tree -r --name-only refs/testflame/runs/$(git -C src rev-parse HEAD~$i) | wc -l)
		expect_eq "$n" 6 "files for HEAD~$i" || exit 1
	done
'

test_expect_success 'two clones pushing alternately to one commit: every kind survives' '
	push_same() { # CLONE PREFIX
		local i
		for i in 1 2 3 4 5 6 7 8; do
			(cd "$1" && "$TF" baseline save -q --suite unit --kind "$2-$i" ../x.folded &&
			 "$TF" baseline push -q) || return 1
		done
	}
	push_same j1 one > o1 2>&1 & p1=$!
	push_same j2 two > o2 2>&1 & p2=$!
	wait $p1 && wait $p2 || { cat o1 o2; exit 1; }
	n=$(git -C race.git ls-tree -r --name-only refs/testflame/runs/$(git -C src rev-parse HEAD) | wc -l) &&
	expect_eq "$n" 22 "files (6 + 16)"
'

test_done
