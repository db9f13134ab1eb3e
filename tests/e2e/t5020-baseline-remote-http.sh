#!/usr/bin/env bash
# t5020-baseline-remote-http.sh - baselines pushed to and fetched from a
# real smart-HTTP git server (lighttpd + git http-backend, basic auth) with
# tokens from TESTFLAME_TOKEN, GITHUB_TOKEN and GITLAB_TOKEN; wrong or
# missing tokens fail with one clear line; no token ever shows up in any
# output, even with -v; two jobs racing for the same ref both survive.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-store.sh"

if ! need lighttpd openssl curl; then
	test_skip "smart HTTP remotes" "lighttpd, openssl or curl missing (make deps installs them)"
	test_done
	exit 0
fi
if ! http_start; then
	test_expect_success 'lighttpd serves git http-backend' 'false'
	test_done
	exit 1
fi

mkdir -p srv
git init -q --bare srv/proj.git
new_repo a 3
git -C a remote add origin "$HTTP_URL/proj.git"
folded x.folded x 10
folded y.folded y 20
ALL_OUT=$SCRATCH/all-output
: > "$ALL_OUT"
# run CMD... : run in clone $IN (default a), keep stdout+stderr in $ALL_OUT
# as well, and in ./out for the test to look at
run() {
	(cd "${IN:-a}" && "$TF" "$@") > out 2>&1
	local rc=$?
	cat out >> "$ALL_OUT"
	return $rc
}

test_expect_success 'the server refuses anonymous access' '
	expect_eq "$(curl -s -o /dev/null -w "%{http_code}" "$HTTP_URL/proj.git/info/refs?service=git-upload-pack")" 401
'

test_expect_code 1 'no token: the server asks, one clear line says what to set' '
	(cd a && "$TF" baseline save -q --suite unit --kind k1 ../x.folded) &&
	run baseline push -v; rc=$?
	expect_contains out "asks for credentials" &&
	expect_contains out "TESTFLAME_TOKEN" && exit $rc
'

test_expect_code 1 'a wrong token fails cleanly, once, and is not printed' '
	TESTFLAME_TOKEN=wrong-token-value-42 run baseline push -v; rc=$?
	expect_contains out "was refused (credentials from TESTFLAME_TOKEN)" &&
	expect_not_contains out "wrong-token-value-42" &&
	expect_eq "$(grep -c "password doesn" "$SCRATCH/http/error.log")" 1 "refused attempts at the server" &&
	exit $rc
'

test_expect_success 'push with TESTFLAME_TOKEN' '
	TESTFLAME_TOKEN=$HTTP_TOKEN run baseline push -v &&
	expect_contains out "created" &&
	expect_eq "$(git -C srv/proj.git ls-tree -r --name-only refs/testflame/runs/$(git -C a rev-parse HEAD))" "unit/k1.pb.gz"
'

test_expect_success 'list the remote and fetch into another clone with GITHUB_TOKEN' '
	git clone -q a b && git -C b remote set-url origin "$HTTP_URL/proj.git" &&
	GITHUB_TOKEN=$HTTP_TOKEN IN=b run baseline list --remote origin -v &&
	expect_contains out "$(git -C a rev-parse HEAD)" &&
	GITHUB_TOKEN=$HTTP_TOKEN IN=b run baseline fetch -v &&
	expect_contains out "fetched" &&
	expect_eq "$(baseline_files b HEAD)" "unit/k1.pb.gz"
'

test_expect_success 'push and fetch with GITLAB_TOKEN (user oauth2)' '
	(cd b && "$TF" baseline save -q --suite unit --kind k2 ../y.folded) &&
	GITLAB_TOKEN=$HTTP_GL_TOKEN IN=b run baseline push &&
	expect_contains out "updated" &&
	GITLAB_TOKEN=$HTTP_GL_TOKEN run baseline fetch &&
	expect_eq "$(baseline_files a HEAD | wc -l)" 2 "files"
'

test_expect_code 1 'GITHUB_TOKEN with a wrong value: refused, not printed' '
	GITHUB_TOKEN=ghp_notTheRightOne123 run baseline fetch -v; rc=$?
	expect_contains out "credentials from GITHUB_TOKEN" &&
	expect_not_contains out "ghp_notTheRightOne123" && exit $rc
'

test_expect_code 1 'a token written into the remote URL never shows up in messages' '
	git -C a remote add inurl "http://x-access-token:$HTTP_TOKEN@127.0.0.1:$HTTP_PORT/git/missing.git" &&
	run baseline fetch --remote inurl -v; rc=$?
	expect_contains out "http://***@127.0.0.1:$HTTP_PORT/git/missing.git" &&
	expect_not_contains out "$HTTP_TOKEN" && exit $rc
'

test_expect_code 1 'refused credentials in the remote URL are reported as such' '
	run baseline fetch --remote "http://x-access-token:badUrlSecret99@127.0.0.1:$HTTP_PORT/git/proj.git"; rc=$?
	expect_contains out "credentials from the URL" &&
	expect_not_contains out "badUrlSecret99" && exit $rc
'

test_expect_success 'two jobs racing for the same ref over HTTP: both files survive' '
	git init -q --bare srv/race.git &&
	barrier_hook srv/race.git &&
	for c in r1 r2; do
		git clone -q a $c && git -C $c remote set-url origin "$HTTP_URL/race.git" || exit 1
	done &&
	(cd r1 && "$TF" baseline save -q --suite unit --kind job-one ../x.folded) &&
	(cd r2 && "$TF" baseline save -q --suite unit --kind job-two ../y.folded) &&
	(TESTFLAME_TOKEN=$HTTP_TOKEN; export TESTFLAME_TOKEN
	 (cd r1 && "$TF" baseline push -v) > race1 2>&1 & p1=$!
	 (cd r2 && "$TF" baseline push -v) > race2 2>&1 & p2=$!
	 wait $p1 && wait $p2) ; rc=$?
	cat race1 race2 >> "$ALL_OUT"; cat race1 race2
	[ $rc = 0 ] &&
	# the hook saw both first pushes and the loser'"'"'s second one
	expect_eq "$(ls srv/race.git/barrier | wc -l)" 3 "pushes that reached the server" &&
	cat race1 race2 > race && expect_contains race "after retrying" &&
	expect_eq "$(git -C srv/race.git ls-tree -r --name-only refs/testflame/runs/$(git -C a rev-parse HEAD) | tr "\n" " ")" \
		"unit/job-one.pb.gz unit/job-two.pb.gz "
'

test_expect_success 'four concurrent jobs over HTTP: all four files survive' '
	git init -q --bare srv/race4.git &&
	for j in 1 2 3 4; do
		git clone -q a q$j && git -C q$j remote set-url origin "$HTTP_URL/race4.git" &&
		(cd q$j && "$TF" baseline save -q --suite unit --kind q$j ../x.folded) || exit 1
	done &&
	pids= &&
	for j in 1 2 3 4; do
		(cd q$j && TESTFLAME_TOKEN=$HTTP_TOKEN "$TF" baseline push -v) > q.$j 2>&1 &
		pids="$pids $!"
	done &&
	for p in $pids; do wait $p || { cat q.*; exit 1; }; done &&
	cat q.* >> "$ALL_OUT" &&
	expect_eq "$(git -C srv/race4.git ls-tree -r --name-only refs/testflame/runs/$(git -C a rev-parse HEAD) | wc -l)" 4 "files"
'

test_expect_success 'no token appeared in any output of this script' '
	[ -s "$ALL_OUT" ] &&
	expect_not_contains "$ALL_OUT" "$HTTP_TOKEN" &&
	expect_not_contains "$ALL_OUT" "$HTTP_GL_TOKEN"
'

http_stop
test_done
