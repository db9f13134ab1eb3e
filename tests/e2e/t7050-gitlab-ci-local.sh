#!/usr/bin/env bash
# t7050-gitlab-ci-local.sh - the GitLab template end to end with
# gitlab-ci-local (which validates the pipeline against GitLab's schema and
# runs the job with the shell executor, isolated in its own copy of the
# repository), on the example project and its .gitlab-ci.yml: a pipeline of
# the default branch in an image without testflame builds it from source
# (the fallback), records the baseline and pushes it; the MR pipelines run
# as in testflame's image, the default (TESTFLAME_IMAGE): testflame
# installed, nothing built, no TESTFLAME_REPO; an unchanged MR passes and
# gets a note; an MR with a slower test fails with exit status 3; the
# artifacts (JUnit, Code Quality, the report directory) are where GitLab
# picks them up. The notes API is the loopback stand-in that checks
# requests against GitLab's documentation.
#
# make test runs no container engine: gitlab-ci-local runs every job with
# the shell executor (--force-shell-executor skips `image:`), and "the
# image" is a root whose usr/bin, on PATH, has the built testflame. The
# image itself, built from the package and run by gitlab-ci-local's docker
# executor with podman, is tests/package/image.sh's (by hand).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

GCL=$NODE_DIR/node_modules/.bin/gitlab-ci-local
need_node_modules 'the GitLab template with gitlab-ci-local'
if ! need rsync; then
	test_skip 'the GitLab template with gitlab-ci-local' 'rsync is missing (make deps)'
	test_done
	exit 0
fi

TOKEN=glpat-t7050TemplateToken01234
# the jobs' PATH without testflame (tests/run.sh puts the build on it): an
# image has it in usr/bin (mr), or the job builds it or says what to set
PATH=$(printf '%s\n' "$PATH" | tr : '\n' | while read -r d; do [ -x "$d/testflame" ] || printf '%s:' "$d"; done)
export PATH=${PATH%:}
copy_testflame testflame
# testflame on PATH, as the image has it installed (t0260 checks the
# installed layout, tests/package/ the package)
mkdir -p image/usr/bin && cp "$TF" image/usr/bin/
mkdir project && cp -r "$TOP/examples/." project/ && rm -rf project/build project/testflame-report
# GitLab resolves `include: project:` from the server; here the template
# is the file of this tree
mkdir project/gitlab && cp "$TOP/gitlab/testflame.gitlab-ci.yml" project/gitlab/ &&
python3 - project/.gitlab-ci.yml <<\PY
import sys, yaml
p = sys.argv[1]
doc = yaml.safe_load(open(p))
assert doc["include"][0]["file"] == "gitlab/testflame.gitlab-ci.yml", doc["include"]
doc["include"] = [{"local": "gitlab/testflame.gitlab-ci.yml"}]
yaml.safe_dump(doc, open(p, "w"), sort_keys=False)
PY
(cd project && git init -q -b main && git config user.email dev@example.com && git config user.name dev &&
	git add -A && git commit -qm "libmini with testflame") >/dev/null
git clone -q --bare project origin.git
(cd project && git remote add origin "$SCRATCH/origin.git" && git fetch -q origin &&
	git remote set-head origin main && git branch -q -u origin/main &&
	git remote add gcl-origin https://gitlab.example/acme/libmini.git)
MAIN=$(git -C project rev-parse main)

python3 - >"$SCRATCH/state.json" <<PY
import json
print(json.dumps({"token": "$TOKEN", "next_id": 9000, "projects": {"acme/libmini": {"id": 42, "path": "acme/libmini",
    "merge_requests": {"3": {"notes": []}, "4": {"notes": []}}}}}))
PY
start_api gitlab "$SCRATCH/state.json" || exit 1

# gitlab-ci-local says GITLAB_CI=false so jobs can tell a local run; these
# runs stand for GitLab's own
gcl() { # variables... -- the job runs in its own copy of project/
	(cd project && "$GCL" --force-shell-executor --shell-isolation --no-artifacts-to-source --variable "TESTFLAME_SRC=$SCRATCH/testflame" \
		--variable GITLAB_CI=true --variable "CI_PROJECT_ID=42" --variable "CI_API_V4_URL=$API/api/v4" \
		--variable "CI_SERVER_URL=https://gitlab.example" "$@" testflame)
}
mr() { # iid branch [variables...]: in testflame's image
	local iid=$1 branch=$2
	shift 2
	PATH="$SCRATCH/image/usr/bin:$PATH" gcl --variable CI_PIPELINE_SOURCE=merge_request_event --variable "CI_MERGE_REQUEST_IID=$iid" \
		--variable "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=$branch" --variable CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main \
		--variable "CI_MERGE_REQUEST_DIFF_BASE_SHA=$MAIN" --variable "TESTFLAME_GITLAB_TOKEN=$TOKEN" "$@"
}
notes() { # iid -> number of our notes, edits
	api_state | python3 -c '
import json, sys
n = json.load(sys.stdin)["projects"]["acme/libmini"]["merge_requests"][sys.argv[1]]["notes"]
print(len(n), sum(x.get("edits", 0) for x in n))' "$1"
}
ART=project/.gitlab-ci-local/artifacts/testflame

test_expect_success 'the default branch: testflame is built, the baseline recorded and pushed' '
	gcl --variable CI_PIPELINE_SOURCE=push >main.log 2>&1 || { tail -n 60 main.log; exit 1; }
	expect_contains main.log "testflame 0." &&
	expect_contains main.log "no baseline yet" &&
	git --git-dir=origin.git rev-parse -q --verify "refs/testflame/runs/$MAIN" >/dev/null &&
	test -s "$ART/testflame-report/head.pb.gz"
'

# Runs minutes apart on this shared machine differ by up to ~60% per test,
# so the unchanged MR is compared the robust way: its base built beside and
# run interleaved, three times each (TESTFLAME_ARGS). The MR's job runs a
# quick suite of two tests (TESTFLAME_COMMAND; the suite's six are run by
# the MR of test 3): each round costs a third, and a test more that is
# undecided under a neighbour adds rounds.
test_expect_success 'an unchanged MR: the job passes and the MR gets a note' '
	(cd project && git checkout -q -b same && echo "/* same */" >>src/hash.c && git commit -qam same) &&
	mr 3 same --variable "TESTFLAME_ARGS=--against $MAIN --repeat 3" \
		--variable "TESTFLAME_COMMAND=./build/test_matrix && ./build/test_sort" >same.log 2>&1 ||
		{ tail -n 60 same.log; exit 1; }
	expect_contains same.log "against $(git -C project rev-parse --short=12 main)" &&
	expect_contains same.log "posted the comment on merge request !3" &&
	expect_contains same.log "testflame $("$SCRATCH/image/usr/bin/testflame" --version | sed "s/^testflame //")" &&
	expect_not_contains same.log "PROTOC" && expect_not_contains same.log "TESTFLAME_REPO" &&
	expect_not_contains same.log "REGRESSION" &&
	expect_eq "$(notes 3)" "1 0" "notes, edits" &&
	test -s "$ART/testflame-report/junit.xml" && test -s "$ART/testflame-report/codequality.json" &&
	api_conforms
'

test_expect_success 'an MR that slows a test: the job fails with exit status 3, the artifacts say where' '
	(cd project && git checkout -q main && git checkout -q -b slow && slow_down_matrix &&
	 git commit -qam "matrix: a second pass") &&
	! mr 4 slow >slow.log 2>&1 &&
	expect_contains slow.log "baseline: $(git -C project rev-parse --short=12 main)" &&
	grep -q "regressed.*test_matrix" slow.log &&
	grep -Eq "FAIL[^0-9]*3" slow.log &&
	expect_eq "$(notes 4)" "1 0" "notes, edits" &&
	python3 - "$ART/testflame-report" <<-\PY &&
	import json, sys, xml.etree.ElementTree as ET
	d = sys.argv[1]
	q = json.load(open(d + "/codequality.json"))
	assert any(i["location"]["path"] == "src/matrix.c" and "matrix_multiply" in i["description"] for i in q), q
	t = ET.parse(d + "/junit.xml").getroot()
	failed = [c.get("name") for c in t.iter("testcase") if c.find("failure") is not None]
	assert "test_matrix" in failed, failed
	assert not [c for c in t.iter("testcase") if c.get("name") == "[build]"], "the build is profiled"
	PY
	test -s "$ART/testflame-report/index.html" && api_conforms
'

# (confirmed in the pipeline before: this one is run once, TESTFLAME_ARGS)
test_expect_code 1 'the next pipeline of that MR edits its note' '
	mr 4 slow --variable "TESTFLAME_ARGS=--confirm none" >slow2.log 2>&1; rc=$?
	expect_contains slow2.log "updated the comment on merge request !4" &&
	expect_eq "$(notes 4)" "1 1" "notes, edits" && exit $rc
'

test_expect_success 'the token never reached a log' '
	! grep -F "$TOKEN" main.log same.log slow.log slow2.log
'

test_expect_success 'an image without testflame and no way to get it: one line says what to set' '
	(cd project && git checkout -q main && "$GCL" --force-shell-executor --shell-isolation --no-artifacts-to-source \
		--variable CI_PIPELINE_SOURCE=push --variable TESTFLAME_IMAGE=debian:12 \
		--variable TESTFLAME_SRC=/nonexistent testflame) >other.log 2>&1 && exit 1
	expect_contains other.log "not in the image '"'"'debian:12'"'"': set TESTFLAME_DEB"
'

test_done
