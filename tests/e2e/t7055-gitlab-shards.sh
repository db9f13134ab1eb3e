#!/usr/bin/env bash
# t7055-gitlab-shards.sh - the sharded form of the GitLab template end to
# end with gitlab-ci-local (GitLab's schema, `parallel: 3` expanded into
# three jobs with CI_NODE_INDEX and CI_NODE_TOTAL, artifacts handed to the
# .post stage), on the example project and its .gitlab-ci.sharded.yml as
# .gitlab-ci.yml: each shard job records its part of the suite and keeps
# only its run file; the merge job judges the whole suite once. On the
# default branch the merged run is the baseline, pushed once; an unchanged
# MR split the same way passes with one note. testflame is the one built
# for this tree, on PATH (the template then builds nothing); the notes API
# is the loopback stand-in of t7050.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

GCL=$NODE_DIR/node_modules/.bin/gitlab-ci-local
need_node_modules 'the sharded GitLab template with gitlab-ci-local'
if ! need rsync; then
	test_skip 'the sharded GitLab template with gitlab-ci-local' 'rsync is missing (make deps)'
	test_done
	exit 0
fi

TOKEN=glpat-t7055ShardedToken01234
mkdir project && cp -r "$TOP/examples/." project/ && rm -rf project/build project/testflame-report
mkdir project/gitlab && cp "$TOP/gitlab/testflame.gitlab-ci.yml" project/gitlab/ &&
python3 - "$TOP/examples/.gitlab-ci.sharded.yml" project/.gitlab-ci.yml <<\PY
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert doc["include"][0]["file"] == "gitlab/testflame.gitlab-ci.yml", doc["include"]
assert doc["testflame-shard"]["parallel"] == 3, doc
doc["include"] = [{"local": "gitlab/testflame.gitlab-ci.yml"}]
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
PY
(cd project && git init -q -b main && git config user.email dev@example.com && git config user.name dev &&
	git add -A && git commit -qm "libmini with testflame, sharded") >/dev/null
git clone -q --bare project origin.git
(cd project && git remote add origin "$SCRATCH/origin.git" && git fetch -q origin &&
	git remote set-head origin main && git branch -q -u origin/main &&
	git remote add gcl-origin https://gitlab.example/acme/libmini.git)
MAIN=$(git -C project rev-parse main)

python3 - >"$SCRATCH/state.json" <<PY
import json
print(json.dumps({"token": "$TOKEN", "next_id": 9000, "projects": {"acme/libmini": {"id": 42, "path": "acme/libmini",
    "merge_requests": {"3": {"notes": []}}}}}))
PY
start_api gitlab "$SCRATCH/state.json" || exit 1

# the whole pipeline: three shard jobs, then the merge; one job at a time,
# as this 2-core machine would otherwise time three shards racing each other
pipeline() { # variables...
	(cd project && PATH="$TOP/build:$PATH" "$GCL" --force-shell-executor --shell-isolation --no-artifacts-to-source --concurrency 1 \
		--variable GITLAB_CI=true --variable "CI_PROJECT_ID=42" --variable "CI_API_V4_URL=$API/api/v4" \
		--variable "CI_SERVER_URL=https://gitlab.example" --variable TESTFLAME_REPO= "$@")
}
notes() { # iid -> number of our notes
	api_state | python3 -c '
import json, sys
print(len(json.load(sys.stdin)["projects"]["acme/libmini"]["merge_requests"][sys.argv[1]]["notes"]))' "$1"
}
ART=project/.gitlab-ci-local/artifacts

test_expect_success 'the default branch: three shards recorded, merged, the baseline pushed once' '
	pipeline --variable CI_PIPELINE_SOURCE=push >main.log 2>&1 || { tail -n 80 main.log; exit 1; }
	for k in 1 2 3; do expect_contains main.log "shard $k/3 of '\''examples'\''" || exit 1; done &&
	expect_contains main.log "job 2 of 3 that gitlab runs in parallel: recording shard 2/3" &&
	expect_contains main.log "merged 3 shards of '\''examples'\''" &&
	expect_contains main.log "no baseline yet" &&
	expect_eq "$(grep -c "pushed the baseline of" main.log)" 1 "pushes" &&
	git --git-dir=origin.git rev-parse -q --verify "refs/testflame/runs/$MAIN" >/dev/null &&
	ref=refs/testflame/runs/$MAIN &&
	git --git-dir=origin.git cat-file blob "$ref:$(git --git-dir=origin.git ls-tree -r --name-only "$ref" | head -1)" >stored &&
	"$TF" show --json stored | python3 -c "
import json, sys
s = json.load(sys.stdin)
assert s[\"metadata\"][\"shards\"] == \"3\", s[\"metadata\"]
names = sorted(t[\"name\"] for t in s[\"tests\"] if t[\"name\"].startswith(\"test_\"))
assert names == sorted(\"test_matrix test_primes test_sort test_hash test_threads test_spawn\".split()), names
"
'

# One run per shard, minutes apart from the baseline's on this shared
# machine, can differ by a third: the verdicts of shards are t0230's (with
# repeats); here the pipeline's shape is checked, with the gate off.
test_expect_success 'an unchanged MR: the shards pass, the merge posts one note and passes' '
	(cd project && git checkout -q -b same && echo "/* same */" >>src/hash.c && git commit -qam same) &&
	pipeline --variable CI_PIPELINE_SOURCE=merge_request_event --variable CI_MERGE_REQUEST_IID=3 \
		--variable "TESTFLAME_ARGS=--no-fail --confirm none" \
		--variable CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=same --variable CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main \
		--variable "CI_MERGE_REQUEST_DIFF_BASE_SHA=$MAIN" --variable "TESTFLAME_GITLAB_TOKEN=$TOKEN" \
		>same.log 2>&1 || { tail -n 80 same.log; exit 1; }
	expect_contains same.log "baseline: $(git -C project rev-parse --short=12 main)" &&
	expect_contains same.log "head: merged from 3 shards" &&
	expect_contains same.log "posted the comment on merge request !3" &&
	expect_eq "$(grep -c "posted the comment" same.log)" 1 "comments" &&
	expect_eq "$(notes 3)" 1 "notes" &&
	test -s "$ART/testflame/testflame-report/junit.xml" && api_conforms
'

test_expect_success 'the token never reached a log' '
	! grep -F "$TOKEN" main.log same.log
'

test_done
