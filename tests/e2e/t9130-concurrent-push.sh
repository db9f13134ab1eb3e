#!/usr/bin/env bash
# t9130-concurrent-push.sh - ten CI jobs, each in its own clone, push
# baselines to one smart-HTTP remote (lighttpd, git http-backend) at once:
# five of them of the same commit (each its own runner kind), five of five
# other commits. Every baseline must be on the remote once, with the bytes
# its job saved, and the remote repository intact.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-store.sh"

if ! need lighttpd openssl curl; then
	test_skip "ten concurrent pushers" "lighttpd, openssl or curl missing (make deps installs them)"
	test_done
	exit 0
fi
if ! http_start; then
	test_expect_success 'lighttpd serves git http-backend' 'false'
	test_done
	exit 1
fi
export TESTFLAME_TOKEN=$HTTP_TOKEN

mkdir -p srv
git init -q --bare srv/proj.git
# the first ten pushes wait at the server until all ten have arrived, so
# that they all listed the remote before any updated it: a real race
cat > srv/proj.git/hooks/pre-receive <<-'EOF'
	#!/bin/sh
	cat >/dev/null
	d="$GIT_DIR/barrier"
	mkdir -p "$d"
	n=$(ls "$d" | wc -l)
	touch "$d/$$"
	if [ "$n" -lt 10 ]; then
		i=0
		while [ "$(ls "$d" | wc -l)" -lt 10 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	fi
	exit 0
	EOF
chmod +x srv/proj.git/hooks/pre-receive
new_repo a 6
git -C a remote add origin "$HTTP_URL/proj.git"
git -C a push -q origin main 2>/dev/null

# job J: a clone; jobs 1-5 save HEAD's baseline (kind kJ), jobs 6-10 the
# baseline of HEAD~(J-5) (kind kJ); each a profile of its own.
for j in $(seq 1 10); do
	git clone -q a c$j
	git -C c$j remote set-url origin "$HTTP_URL/proj.git"
	if [ $j -le 5 ]; then rev[$j]=$(git -C a rev-parse HEAD); else rev[$j]=$(git -C a rev-parse HEAD~$((j - 5))); fi
	folded f$j.folded "job_$j" $((j * 10))
done

test_expect_success 'ten jobs save their baselines' '
	for j in $(seq 1 10); do
		(cd c$j && "$TF" baseline save -q --commit ${rev[$j]} --suite unit --kind k$j ../f$j.folded) || exit 1
	done
'

test_expect_success 'ten jobs push at once: all succeed' '
	pids= &&
	for j in $(seq 1 10); do
		(cd c$j && "$TF" baseline push ${rev[$j]}) > push.$j 2>&1 &
		pids="$pids $!"
	done &&
	failed=0 &&
	for p in $pids; do wait $p || failed=$((failed + 1)); done &&
	cat push.* &&
	expect_eq "$failed" 0 "failed pushes" &&
	# the five of one commit raced for one ref: four lost and merged
	expect_eq "$(cat push.1 push.2 push.3 push.4 push.5 | grep -c "after retrying")" 4 "retried pushes"
'

test_expect_success 'every baseline is on the remote once, with the bytes its job saved' '
	same=refs/testflame/runs/$(git -C a rev-parse HEAD) &&
	expect_eq "$(git -C srv/proj.git ls-tree -r --name-only $same | tr "\n" " ")" \
		"unit/k1.pb.gz unit/k2.pb.gz unit/k3.pb.gz unit/k4.pb.gz unit/k5.pb.gz " &&
	for j in $(seq 1 10); do
		ref=refs/testflame/runs/${rev[$j]} &&
		want=$(git -C c$j rev-parse "$ref:unit/k$j.pb.gz") &&
		expect_eq "$(git -C srv/proj.git rev-parse "$ref:unit/k$j.pb.gz")" "$want" "job $j" || exit 1
		if [ $j -gt 5 ]; then
			expect_eq "$(git -C srv/proj.git ls-tree -r --name-only $ref)" "unit/k$j.pb.gz" "files of job $j" || exit 1
		fi
	done &&
	expect_eq "$(git -C srv/proj.git for-each-ref refs/testflame/runs | wc -l)" 6 "baseline refs"
'

test_expect_success 'the remote repository is intact and the files read back' '
	git -C srv/proj.git fsck --no-progress --strict &&
	git clone -q a check && git -C check remote set-url origin "$HTTP_URL/proj.git" &&
	(cd check && "$TF" baseline fetch $(git -C ../a rev-parse HEAD)) &&
	for j in 1 2 3 4 5; do
		(cd check && "$TF" compare --suite unit --kind k$j HEAD HEAD) >cmp.$j 2>&1 ||
			{ cat cmp.$j; exit 1; }
	done
'

http_stop
test_done
