#!/usr/bin/env bash
# t5030-baseline-concurrent-save.sh - local saves from several processes at
# once (parallel test jobs, matrix builds on one runner): every suite and
# kind saved survives, the ref always points at a whole baseline, a stale
# lock gives up with a message that says what to remove, packed refs work.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-store.sh"

new_repo repo 2
folded x.folded x 10
folded y.folded y 20

save_many() { # PREFIX COUNT [REV]
	local i
	for i in $(seq 1 "$2"); do
		(cd repo && "$TF" baseline save -q --commit "${3:-HEAD}" --suite unit --kind "$1-$i" ../x.folded) || return 1
	done
}

test_expect_success 'two processes saving 20 kinds each into one commit: all 40 stay' '
	save_many one 20 > o1 2>&1 & p1=$!
	save_many two 20 > o2 2>&1 & p2=$!
	wait $p1 && wait $p2 || { cat o1 o2; exit 1; }
	expect_eq "$(baseline_files repo HEAD | wc -l)" 40 "files" &&
	git -C repo fsck --no-dangling 2>&1 | tee fsck && [ ! -s fsck ]
'

test_expect_success 'four processes, same commit, one kind each' '
	pids= &&
	for j in 1 2 3 4; do
		(cd repo && "$TF" baseline save -q --commit HEAD~1 --suite s --kind k$j ../x.folded) & pids="$pids $!"
	done &&
	for p in $pids; do wait $p || exit 1; done &&
	expect_eq "$(baseline_files repo HEAD~1 | wc -l)" 4 "files"
'

test_expect_success 'the same suite and kind from two processes: one whole file wins' '
	(cd repo && "$TF" baseline save -q --suite same --kind k ../x.folded) & p1=$!
	(cd repo && "$TF" baseline save -q --suite same --kind k ../y.folded) & p2=$!
	wait $p1 && wait $p2 &&
	(cd repo && "$TF" baseline show) > show &&
	expect_contains show "same" &&
	got=$(git -C repo rev-parse "refs/testflame/runs/$(git -C repo rev-parse HEAD):same/k.pb.gz") &&
	x=$(cd repo && "$TF" baseline save -q --store dir:../tmpx --suite s --kind k ../x.folded && git hash-object ../tmpx/*/s/k.pb.gz) &&
	y=$(cd repo && "$TF" baseline save -q --store dir:../tmpy --suite s --kind k ../y.folded && git hash-object ../tmpy/*/s/k.pb.gz) &&
	{ [ "$got" = "$x" ] || [ "$got" = "$y" ]; }
'

test_expect_success 'saving works on packed refs too' '
	git -C repo pack-refs --all &&
	[ ! -e "repo/.git/refs/testflame/runs/$(git -C repo rev-parse HEAD)" ] &&
	(cd repo && "$TF" baseline save -q --suite packed --kind k ../x.folded) &&
	expect_eq "$(baseline_files repo HEAD | grep -c .)" 42 "files"
'

test_expect_code 1 'a stale lock: gives up with a message naming it, changes nothing' '
	head=$(git -C repo rev-parse HEAD) &&
	before=$(git -C repo rev-parse refs/testflame/runs/$head) &&
	: > "repo/.git/refs/testflame/runs/$head.lock" &&
	start=$(date +%s) &&
	(cd repo && "$TF" baseline save --suite locked --kind k ../x.folded) 2>err; rc=$?
	expect_contains err ".lock" &&
	expect_eq "$(wc -l < err)" 1 "lines" &&
	[ $(( $(date +%s) - start )) -lt 20 ] &&
	expect_eq "$(git -C repo rev-parse refs/testflame/runs/$head)" "$before" &&
	rm "repo/.git/refs/testflame/runs/$head.lock" &&
	(cd repo && "$TF" baseline save -q --suite locked --kind k ../x.folded) && exit $rc
'

test_expect_success 'dir store: two processes saving into one commit' '
	dsave() { local i; for i in $(seq 1 15); do
		(cd repo && "$TF" baseline save -q --store dir:../cache --suite unit --kind "$1-$i" ../x.folded) || return 1
	done; }
	dsave one & p1=$!
	dsave two & p2=$!
	wait $p1 && wait $p2 &&
	expect_eq "$(find cache -name "*.pb.gz" | wc -l)" 30 "files" &&
	expect_eq "$(find cache -name "*.tmp.*" | wc -l)" 0 "temporary files"
'

test_done
