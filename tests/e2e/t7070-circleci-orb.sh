#!/usr/bin/env bash
# t7070-circleci-orb.sh - the orb's job run end to end on a stand-in for
# CircleCI's machine executor (tests/node/circleci-run.mjs: the job expanded
# from the packed orb.yml with its parameters, as CircleCI compiles it, and
# its steps run with CircleCI's environment), on the example project and
# its .circleci/config.yml: a build of main builds testflame from its
# source (a vendored copy, this tree's objects in it) and saves it in the
# project's cache, records the baseline and pushes it with git; a PR
# build, on a fresh machine (its home empty), restores testflame from the
# cache in seconds, fetches the baseline, comments on the GitHub PR named by CIRCLE_PULL_REQUEST (the
# loopback API, checked against GitHub's OpenAPI description), stores the
# report and JUnit results, and fails at its last step with exit status 3.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'the CircleCI orb end to end'

TOKEN=ghp_t7070OrbToken0123456789
# the jobs' PATH without testflame (tests/run.sh puts the build on it):
# the orb's install puts it there
PATH=$(printf '%s\n' "$PATH" | tr : '\n' | while read -r d; do [ -x "$d/testflame" ] || printf '%s:' "$d"; done)
export PATH=${PATH%:}
# testflame's source, vendored (its repository, tagged v1, beside it)
ORB_SOURCE=$SCRATCH/testflame orb_project "libmini with testflame" config.yml || exit 1

circle() { # name branch sha [env...]
	local name=$1 branch=$2 sha=$3
	shift 3
	local envs=()
	for e in "$@"; do envs+=(--env "$e"); done
	# each job on a fresh machine: an empty home
	rm -rf "$SCRATCH/home" && mkdir "$SCRATCH/home"
	node "$NODE_DIR/circleci-run.mjs" --config project/.circleci/config.yml --orb "$TOP/circleci/orb.yml" \
		--job testflame/profile --origin "$SCRATCH/origin.git" --workdir "$SCRATCH/ws-$name" \
		--out "$SCRATCH/out-$name" --result "$SCRATCH/$name.json" \
		--cache "$SCRATCH/circle-cache" --env "HOME=$SCRATCH/home" \
		--env "CIRCLE_SHA1=$sha" --env "CIRCLE_BRANCH=$branch" --env CIRCLE_PROJECT_USERNAME=acme \
		--env CIRCLE_PROJECT_REPONAME=libmini --env CIRCLE_BUILD_URL=https://circleci.example/gh/acme/libmini/77 \
		--env "TESTFLAME_REPO=file://$SCRATCH/testflame" "${envs[@]}"
}
# the set-up's wall time: its steps, from the sources' digest to the cache
setup_seconds() { # result
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("%.2f" % sum(x.get("seconds", 0) for x in r["steps"] if any(k in x["label"] for k in
      ("testflame\x27s sources", "from the cache", "Install testflame", "in the cache"))))' "$1"
}
start_github_api 5 || exit 1

test_expect_success 'a build of main: testflame built and cached, the baseline pushed' '
	circle main main "$MAIN" >main.log 2>&1 || { tail -n 60 main.log; exit 1; }
	expect_eq "$(job_step main.json "Install testflame")" "success 0" &&
	expect_contains main.log "LINK    build/testflame" &&
	echo "# set-up on a cache miss: $(setup_seconds main.json) s" >&3 &&
	expect_contains main.log "saved $SCRATCH/home/.cache/testflame-bin under testflame-v1-arch1-linux-" &&
	# what a restored copy runs with: the libraries beside the binary,
	# libgit2 among them (opened, not linked), no C library
	ls "$SCRATCH/home/.cache/testflame-bin/lib" | grep -q "^libgit2\.so\." &&
	! ls "$SCRATCH/home/.cache/testflame-bin/lib" | grep -q "^libc\.so" &&
	expect_eq "$(job_step main.json "Push the baseline")" "success 0" &&
	git --git-dir=origin.git rev-parse -q --verify "refs/testflame/runs/$MAIN" >/dev/null &&
	test -s out-main/artifacts/testflame-report/head.pb.gz
' 3>&1

test_expect_success 'a PR build: the GitHub PR gets the comment, the report is stored, the job fails with 3' '
	push_slow_branch 5 &&
	! circle pr slow "$HEAD_SHA" CIRCLE_PULL_REQUEST=https://github.com/acme/libmini/pull/5 \
		"GITHUB_TOKEN=$TOKEN" "TESTFLAME_GITHUB_API_URL=$API" >pr.log 2>&1 &&
	expect_eq "$(job_step pr.json "Fail on regression")" "failure 3" &&
	# a restored copy: nothing built, the set-up in seconds
	expect_contains pr.log "testflame: restored from the cache" && expect_not_contains pr.log "deps-build" &&
	hit=$(setup_seconds pr.json) && echo "# set-up on a cache hit: $hit s" >&3 &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 5 else 1)" "$hit" &&
	expect_eq "$(job_step pr.json "Profile and compare")" "success 0" &&
	expect_contains pr.log "baseline: $(git -C origin.git rev-parse --short=12 main)" &&
	expect_contains pr.log "posted the comment on pull request #5" &&
	test -s out-pr/artifacts/testflame-report/index.html && test -s out-pr/test-results/testflame-report/junit.xml &&
	api_state | python3 -c "
import json, sys
pr = json.load(sys.stdin)[\"repos\"][\"acme/libmini\"][\"pulls\"][\"5\"]
assert len(pr[\"comments\"]) == 1 and \"matrix_multiply\" in pr[\"comments\"][0][\"body\"]
assert [r[\"path\"] for r in pr[\"review_comments\"]] == [\"src/matrix.c\"], pr[\"review_comments\"]
" && api_conforms && ! grep -F "$TOKEN" pr.log
' 3>&1

test_done
