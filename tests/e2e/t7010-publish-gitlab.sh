#!/usr/bin/env bash
# t7010-publish-gitlab.sh - publishing to a GitLab merge request, against the
# loopback API that checks every request with GitLab's documented notes API:
# the note posted with PRIVATE-TOKEN, found again across pages (X-Next-Page)
# and edited with PUT, system notes never taken for ours, the project by id
# or by URL-encoded path, CI_JOB_TOKEN refused up front with the fix, a bad
# token named by its status; Code Quality and JUnit files in the report.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'publishing to GitLab'

TOKEN=glpat-t7010SecretToken0123456
setup_pr_repo || exit 1

# 130 notes first; one system note that happens to start like ours.
python3 - >"$SCRATCH/state.json" <<\PY
import json
notes = [{"id": 100 + i, "body": "note %d" % i, "user": "dev", "user_id": 5,
          "created_at": "2026-01-01T00:00:%02dZ" % (i % 60), "updated_at": "2026-01-01T00:00:00Z"} for i in range(130)]
notes[3].update(body="<!-- testflame:report suite=examples -->\nadded 1 commit", system=True)
print(json.dumps({"token": "glpat-t7010SecretToken0123456", "next_id": 7000,
                  "projects": {"acme/libmini": {"id": 42, "path": "acme/libmini",
                                                "merge_requests": {"3": {"notes": notes}}}}}))
PY
start_api gitlab "$SCRATCH/state.json" || exit 1

mr() { # the environment of a GitLab merge request pipeline
	(cd "$SCRATCH/repo" && env GITLAB_CI=true CI=true CI_PIPELINE_SOURCE=merge_request_event \
		CI_COMMIT_SHA="$(git -C "$SCRATCH/repo" rev-parse HEAD)" CI_COMMIT_REF_NAME=slow \
		CI_DEFAULT_BRANCH=main CI_PROJECT_PATH=acme/libmini CI_PROJECT_ID=${PROJECT_ID-42} \
		CI_PROJECT_URL=https://gitlab.example/acme/libmini CI_SERVER_URL=https://gitlab.example \
		CI_API_V4_URL="$API/api/v4" CI_PIPELINE_URL=https://gitlab.example/acme/libmini/-/pipelines/9 \
		CI_JOB_URL=https://gitlab.example/acme/libmini/-/jobs/99 CI_MERGE_REQUEST_IID=3 \
		CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=slow CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main \
		CI_MERGE_REQUEST_DIFF_BASE_SHA="$BASE" CI_JOB_TOKEN=job-token-not-for-notes \
		TESTFLAME_GITLAB_TOKEN="${T-$TOKEN}" "$@")
}
ours() {
	api_state | python3 -c '
import json, sys
n = json.load(sys.stdin)["projects"]["acme/libmini"]["merge_requests"]["3"]["notes"]
mine = [x for x in n if x["user"] == "project_7_bot"]
print(len(mine), sum(x.get("edits", 0) for x in mine), len(n))'
}

test_expect_code 3 'an MR pipeline: exit 3, one note with the regression, the report files' '
	mr "$TF" run >out 2>err; rc=$?
	expect_contains err "posted the comment on merge request !3" &&
	expect_eq "$(ours)" "1 0 131" "our notes, edits, all notes" &&
	api_state | python3 -c "
import json, sys
n = json.load(sys.stdin)[\"projects\"][\"acme/libmini\"][\"merge_requests\"][\"3\"][\"notes\"][-1][\"body\"]
assert n.startswith(\"<!-- testflame:report suite=examples -->\"), n[:60]
assert \"test_matrix\" in n and \"matrix_multiply\" in n
assert \"https://gitlab.example/acme/libmini/-/blob/\" in n, \"source links to the project\"
" &&
	test -s repo/testflame-report/junit.xml && test -s repo/testflame-report/codequality.json &&
	python3 -c "
import json
q = json.load(open(\"repo/testflame-report/codequality.json\"))
assert any(i[\"location\"][\"path\"] == \"src/matrix.c\" for i in q), q
" && grep -q "PRIVATE-TOKEN" api.log && api_conforms && exit $rc
'

test_expect_code 3 'the next pipeline edits the same note (PUT), found on page 2' '
	mr "$TF" run --confirm none >out 2>err; rc=$?
	expect_contains err "updated the comment on merge request !3" &&
	expect_eq "$(ours)" "1 1 131" "our notes, edits, all notes" &&
	api_requests >reqs && grep -q "^PUT /projects/42/merge_requests/3/notes/7000 200" reqs &&
	[ "$(grep -c "^GET /projects/42/merge_requests/3/notes 200" reqs)" = 4 ] &&
	api_conforms && exit $rc
'

test_expect_success 'the project by its URL-encoded path when there is no id' '
	PROJECT_ID= mr "$TF" publish -v testflame-report >out 2>err &&
	expect_contains err "GET /projects/acme%2Flibmini/merge_requests/3/notes?sort=asc&order_by=created_at&per_page=100 -> 200" &&
	expect_contains err "is up to date" && api_conforms
'

test_expect_success 'only CI_JOB_TOKEN: nothing is sent, the line says what to set' '
	n=$(wc -l <api.log) &&
	T= mr "$TF" publish testflame-report >out 2>err &&
	expect_contains err "CI_JOB_TOKEN cannot post merge request notes" &&
	expect_contains err "TESTFLAME_GITLAB_TOKEN" &&
	expect_eq "$(wc -l <api.log)" "$n" "requests sent"
'

test_expect_code 1 'a wrong token: 401 named, the token in no output' '
	T=glpat-wrong-wrong-wrong mr "$TF" publish -v testflame-report >out 2>err; rc=$?
	expect_contains err "GitLab API: GET /projects/42/merge_requests/3/notes?sort=asc&order_by=created_at&per_page=100: 401 Unauthorized: 401 Unauthorized" &&
	! grep -F glpat- out err && exit $rc
'

test_expect_code 1 'an unknown merge request: 404 named' '
	mr env CI_MERGE_REQUEST_IID=99 "$TF" publish testflame-report >out 2>err; rc=$?
	expect_contains err "404 Not Found: 404 Not found" && expect_contains err "merge request !99" && exit $rc
'

test_done
