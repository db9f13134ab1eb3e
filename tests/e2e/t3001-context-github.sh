#!/usr/bin/env bash
# t3001-context-github.sh - a GitHub Actions pull_request run: GITHUB_SHA is
# the merge commit of refs/pull/N/merge, checked out the way actions/checkout
# does it (detached, depth 1 by default, or fetch-depth: 0). The PR number,
# head SHA, base branch and merge-base must come out right in both, and in
# the run file; the shallow one says how to fetch what is missing.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/context-lib.sh"

# checkout DIR DEPTH: what actions/checkout runs for a pull_request event
checkout() {
	git init -q "$1" &&
	git -C "$1" remote add origin "file://$SCRATCH/up" &&
	if [ "$2" = 0 ]; then
		git -C "$1" -c protocol.version=2 fetch -q --prune --no-recurse-submodules origin \
			"+refs/heads/*:refs/remotes/origin/*" "+refs/tags/*:refs/tags/*"
	fi &&
	git -C "$1" -c protocol.version=2 fetch -q --no-tags --prune --no-recurse-submodules \
		$([ "$2" = 0 ] || echo --depth="$2") origin "+$MERGE:refs/remotes/pull/7/merge" &&
	git -C "$1" checkout -q --force refs/remotes/pull/7/merge
}

# The environment GitHub sets for a pull_request run (variables reference).
gh_env() {
	clean CI=true GITHUB_ACTIONS=true GITHUB_EVENT_NAME=pull_request \
		GITHUB_EVENT_PATH="$SCRATCH/event.json" GITHUB_SHA="$MERGE" \
		GITHUB_REF=refs/pull/7/merge GITHUB_REF_NAME=7/merge GITHUB_REF_TYPE=branch \
		GITHUB_HEAD_REF=feature GITHUB_BASE_REF=main GITHUB_REPOSITORY=acme/widget \
		GITHUB_REPOSITORY_OWNER=acme GITHUB_SERVER_URL=https://github.com \
		GITHUB_API_URL=https://api.github.com GITHUB_RUN_ID=8123456789 \
		GITHUB_RUN_ATTEMPT=1 GITHUB_WORKFLOW=perf GITHUB_JOB=testflame \
		RUNNER_OS=Linux "$@"
}

test_expect_success 'upstream with a PR and its merge ref' '
	make_upstream &&
	git -C up config uploadpack.allowReachableSHA1InWant true &&
	git -C up checkout -q --detach main &&
	git -C up merge -q --no-ff -m "Merge feature into main" feature &&
	git -C up update-ref refs/pull/7/merge HEAD &&
	git -C up update-ref refs/pull/7/head feature &&
	git -C up checkout -q main &&
	git -C up rev-parse refs/pull/7/merge > merge.sha &&
	git -C up rev-parse feature > head.sha &&
	git -C up rev-parse main > base.sha
'
MERGE=$(cat merge.sha 2>/dev/null)
HEAD_SHA=$(cat head.sha 2>/dev/null)
BASE_SHA=$(cat base.sha 2>/dev/null)

test_expect_success 'the event payload, shaped as the webhook documents it' '
	python3 - "$TOP/tests/fixtures/ci/github-pull_request.json" event.json "$HEAD_SHA" "$BASE_SHA" <<-\PY
	import json, sys
	ev = json.load(open(sys.argv[1]))
	ev["number"] = ev["pull_request"]["number"] = 7
	ev["after"] = ev["pull_request"]["head"]["sha"] = sys.argv[3]
	ev["pull_request"]["head"]["ref"] = "feature"
	ev["pull_request"]["base"]["sha"] = sys.argv[4]
	ev["pull_request"]["base"]["ref"] = "main"
	json.dump(ev, open(sys.argv[2], "w"), indent=2)
	PY
'

test_expect_success 'fetch-depth: 0 checkout: PR, head SHA, base branch, merge-base' '
	checkout full 0 &&
	(cd full && gh_env "$TFC" context -o "$SCRATCH/full.pb.gz") > full.json 2> full.err &&
	expect_eq "$(jfield full.json ci)" github &&
	expect_eq "$(jfield full.json pr)" 7 &&
	expect_eq "$(jfield full.json commit)" "$MERGE" commit &&
	expect_eq "$(jfield full.json head_sha)" "$HEAD_SHA" head_sha &&
	expect_eq "$(jfield full.json base_branch)" main &&
	expect_eq "$(jfield full.json branch)" feature &&
	expect_eq "$(jfield full.json merge_base)" "$(git -C full merge-base HEAD origin/main)" merge_base &&
	expect_eq "$(jfield full.json merge_base)" "$BASE_SHA" merge_base &&
	expect_eq "$(jfield full.json default_branch)" main &&
	expect_eq "$(jfield full.json repository)" acme/widget &&
	expect_eq "$(jfield full.json run_url)" https://github.com/acme/widget/actions/runs/8123456789 &&
	expect_eq "$(jfield full.json shallow)" false &&
	expect_not_contains full.err warning &&
	expect_contains full.err on_default_branch=false
'

test_expect_success 'testflame record in that environment: show --json gives the PR context' '
	(cd full && gh_env "$TF" record -q -o "$SCRATCH/rec.pb.gz" -- true) &&
	"$TF" show --json rec.pb.gz >show.json &&
	python3 - show.json "$HEAD_SHA" "$BASE_SHA" "$MERGE" <<-\PY
	import json, sys
	c = json.load(open(sys.argv[1]))["context"]
	assert c["ci"] == "github", c["ci"]
	assert c["pr"] == 7, c["pr"]
	assert c["head_sha"] == sys.argv[2], c["head_sha"]
	assert c["base_branch"] == "main", c["base_branch"]
	assert c["merge_base"] == sys.argv[3], c["merge_base"]
	assert c["commit"] == sys.argv[4], c["commit"]
	assert c["repository"] == "acme/widget", c["repository"]
	PY
'

test_expect_success 'fetch-depth: 0: the changed lines are the PR'"'"'s, as merged' '
	python3 -c "import json,sys; print(sorted(f[\"path\"] for f in json.load(open(sys.argv[1]))[\"changes\"]))" full.json > paths &&
	expect_contains paths "['"'"'lib.c'"'"', '"'"'moved.c'"'"', '"'"'new.c'"'"']"
'

test_expect_success 'default depth-1 checkout: same answers, no crash, the fix named' '
	checkout shallow 1 &&
	test -f shallow/.git/shallow &&
	(cd shallow && gh_env "$TFC" context) > sh.json 2> sh.err &&
	expect_eq "$(jfield sh.json pr)" 7 &&
	expect_eq "$(jfield sh.json commit)" "$MERGE" &&
	expect_eq "$(jfield sh.json head_sha)" "$HEAD_SHA" &&
	expect_eq "$(jfield sh.json base_branch)" main &&
	expect_eq "$(jfield sh.json merge_base)" "$BASE_SHA" &&
	expect_eq "$(jfield sh.json shallow)" true &&
	expect_eq "$(jfield sh.json changes)" null &&
	test "$(grep -c "^testflame: warning: " sh.err)" = 1 &&
	expect_contains sh.err "shallow clone" &&
	expect_contains sh.err "fetch-depth: 0" &&
	expect_contains sh.err "git fetch --unshallow origin +refs/heads/main:refs/remotes/origin/main"
'

test_expect_success 'the fix from the warning, run verbatim, brings the changed lines' '
	cmd=$(sed -n "s/.*run '"'"'\(git fetch --unshallow[^'"'"']*\)'"'"'.*/\1/p" sh.err) &&
	test -n "$cmd" &&
	(cd shallow && $cmd -q) &&
	(cd shallow && gh_env "$TFC" context) > fixed.json 2> fixed.err &&
	expect_eq "$(jfield fixed.json merge_base)" "$BASE_SHA" &&
	expect_eq "$(jfield fixed.json changes)" "$(jfield full.json changes)" &&
	expect_not_contains fixed.err warning
'

test_expect_success 'the run file carries it all' '
	(cd full && gh_env "$TFC" context -o "$SCRATCH/run2.pb.gz") > back.json 2>/dev/null &&
	for k in ci pr commit head_sha base_branch merge_base branch repository run_url; do
		expect_eq "$(jfield back.json $k)" "$(jfield full.json $k)" $k || return 1
	done
'

test_expect_success 'a push to the default branch: no PR, a baseline build' '
	git clone -q "file://$SCRATCH/up" pushed &&
	(cd pushed && clean CI=true GITHUB_ACTIONS=true GITHUB_EVENT_NAME=push \
		GITHUB_SHA="$(git rev-parse HEAD)" GITHUB_REF=refs/heads/main GITHUB_REF_NAME=main \
		GITHUB_REF_TYPE=branch GITHUB_HEAD_REF= GITHUB_BASE_REF= \
		GITHUB_EVENT_PATH="$TOP/tests/fixtures/ci/github-push.json" \
		GITHUB_REPOSITORY=acme/widget GITHUB_SERVER_URL=https://github.com GITHUB_RUN_ID=1 \
		"$TFC" context) > push.json 2> push.err &&
	expect_eq "$(jfield push.json pr)" null &&
	expect_eq "$(jfield push.json head_sha)" null &&
	expect_eq "$(jfield push.json branch)" main &&
	expect_contains push.err on_default_branch=true
'

test_done
