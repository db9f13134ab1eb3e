#!/usr/bin/env bash
# t7000-publish-github.sh - publishing to a GitHub pull request, against the
# loopback API that checks every request with GitHub's OpenAPI description:
# the sticky comment found again by its marker across pages and edited,
# review comments on the changed lines, annotations, the step summary and
# outputs; no token, a fork, a read-only token, a line outside the diff
# (422), rate limits with Retry-After, 5xx retried and given up on, 404 and
# 401 with the status and GitHub's message; the token in no output.
# Runs minutes apart on this shared machine can flag other tests too; the
# assertions are about the injected slowdown and the changed lines.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'publishing to GitHub'

TOKEN=ghs_t7000SecretToken0123456789
setup_pr_repo || exit 1
(cd repo && git checkout -q --detach main && git merge -q --no-ff slow -m "Merge $HEAD_SHA into $BASE" &&
	make -s all >/dev/null) || exit 1
github_pr_event "$SCRATCH/event.json" 7 "$HEAD_SHA" slow "$BASE" main acme/libmini

# 130 comments by people first, one of them quoting an old testflame
# comment: ours lands on the second page, and the quote is not ours.
python3 - "$HEAD_SHA" "$BASE" "$SCRATCH/repo" >"$SCRATCH/state.json" <<\PY
import json, sys
head, base, repo = sys.argv[1:4]
comments = [{"id": 100 + i, "body": "comment %d" % i, "user": "octocat", "user_id": 583231,
             "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"} for i in range(130)]
comments[5]["body"] = "> <!-- testflame:report suite=examples -->\n> earlier numbers"
print(json.dumps({"token": "ghs_t7000SecretToken0123456789", "next_id": 5000,
                  "repos": {"acme/libmini": {"pulls": {"7": {
                      "head_sha": head, "base_sha": base, "diff_repo": repo, "comments": comments}}}}}))
PY
start_api github "$SCRATCH/state.json" || exit 1

pr() { (cd "$SCRATCH/repo" && github_pr_env "$SCRATCH/event.json" 7 slow "${T-$TOKEN}" -- "$@"); }
ours() { # how many comments of the bot, and their edits
	api_state | python3 -c '
import json, sys
pr = json.load(sys.stdin)["repos"]["acme/libmini"]["pulls"]["7"]
mine = [c for c in pr["comments"] if c["user"] == "github-actions[bot]"]
print(len(mine), sum(c.get("edits", 0) for c in mine), len(pr["comments"]), len(pr.get("review_comments", [])))'
}

test_expect_code 3 'run on the PR: exit 3, annotations on the changed line, one comment, one review comment' '
	pr "$TF" run -v >out 2>err; rc=$?
	grep -Eq "^::error title=testflame%3A [0-9]+ tests? regressed::.*test_matrix" out &&
	grep -q "^::warning file=src/matrix.c,line=1[12],title=testflame%3A matrix_multiply grew" out &&
	expect_contains err "posted the comment on pull request #7" &&
	expect_eq "$(ours)" "1 0 131 1" "bot comments, edits, all comments, review comments" &&
	api_state >state && python3 - "$HEAD_SHA" <<\PY &&
import json, sys
pr = json.load(open("state"))["repos"]["acme/libmini"]["pulls"]["7"]
c = [c for c in pr["comments"] if c["user"] == "github-actions[bot]"][0]["body"]
assert c.startswith("<!-- testflame:report suite=examples -->"), c[:80]
assert "test_matrix" in c and "matrix_multiply" in c, c
r = pr["review_comments"][0]
assert (r["path"], r.get("start_line"), r["line"]) == ("src/matrix.c", 11, 12), r
assert r["commit_id"] == sys.argv[1], r["commit_id"]
assert r["body"].startswith("<!-- testflame:review suite=examples key=")
assert "matrix_multiply" in r["body"] and "test_matrix" in r["body"]
PY
	api_conforms && exit $rc
'

test_expect_success 'outputs and the step summary' '
	grep -q "^regressions=[1-9]" github_output &&
	expect_contains github_output "baseline=$BASE" &&
	expect_contains github_output "report=testflame-report" &&
	grep -q "^comment-url=https://" github_output &&
	grep -Eq "[0-9]+ of [67] tests? regressed" step_summary && expect_contains step_summary "test_matrix" &&
	expect_not_contains step_summary "testflame:report"
'

test_expect_success 'the comment was found on the second page by its marker, not the quote' '
	api_requests >reqs && grep -c "GET /repos/acme/libmini/issues/7/comments 200" reqs >n &&
	expect_eq "$(cat n)" 2 "pages listed"
'

test_expect_code 3 'a second push: the same comment is edited, not a new one' '
	(cd repo && git checkout -q slow && echo "/* tidy */" >>src/sort.c && git commit -qam tidy &&
	 git checkout -q --detach main && git merge -q --no-ff slow -m merge2 && make -s all >/dev/null) &&
	NEW_HEAD=$(git -C repo rev-parse slow) &&
	github_pr_event "$SCRATCH/event.json" 7 "$NEW_HEAD" slow "$BASE" main acme/libmini &&
	api_patch "{\"repos\":{\"acme/libmini\":{\"pulls\":{\"7\":{\"head_sha\":\"$NEW_HEAD\"}}}}}" &&
	pr "$TF" run --confirm none >out 2>err; rc=$?
	expect_contains err "updated the comment on pull request #7" &&
	set -- $(ours) && expect_eq "$1 $3" "1 131" "bot comments, all comments" && expect_eq "$2" 1 "edits" &&
	api_conforms && exit $rc
'

test_expect_success 'the token is in no output, even with -v' '
	pr "$TF" publish -v testflame-report >out 2>err; cd repo &&
	! grep -rF "$TOKEN" "$SCRATCH/out" "$SCRATCH/err" "$SCRATCH/github_output" "$SCRATCH/step_summary" testflame-report
'

test_expect_success 'publish again: nothing changed, nothing edited' '
	before=$(ours) && (cd repo && github_pr_env "$SCRATCH/event.json" 7 slow "$TOKEN" -- "$TF" publish testflame-report) >out 2>err &&
	expect_contains err "is up to date" && expect_contains err "1 unchanged" &&
	expect_eq "$(ours)" "$before"
'

test_expect_code 3 'no token: the report and summary are written, one line says why, exit 3' '
	: >step_summary && T= pr "$TF" run --confirm none >out 2>err; rc=$?
	expect_contains err "nothing posted: no GitHub token" &&
	[ "$(grep -c "nothing posted" err)" = 1 ] && test -s step_summary && test -s repo/testflame-report/index.html &&
	exit $rc
'

test_expect_success 'a fork PR: nothing is sent, one line says why' '
	github_pr_event "$SCRATCH/fork.json" 7 "$(git -C repo rev-parse slow)" slow "$BASE" main acme/libmini someone/libmini &&
	n=$(wc -l <api.log) &&
	(cd repo && github_pr_env "$SCRATCH/fork.json" 7 slow "$TOKEN" -- "$TF" publish testflame-report) >out 2>err &&
	expect_contains err "pull request from the fork '\''someone/libmini'\''" &&
	expect_eq "$(wc -l <api.log)" "$n" "requests sent"
'

# The failures below each on a pull request of their own (8 to 11, no
# comment yet) on the one server, their requests cut from api.log into
# NAME.log: a server each costs its start.
fresh_pr() { # number [more fields]: branch slow's pull request, with nothing posted
	api_patch "{\"repos\":{\"acme/libmini\":{\"pulls\":{\"$1\":{\"head_sha\":\"$(git -C repo rev-parse slow)\",
		\"base_sha\":\"$BASE\",\"diff_repo\":\"$SCRATCH/repo\"${2:+,$2}}}}}}"
}
publish_pr() { # number name [publish options]: the requests in NAME.log
	local n=$1 name=$2 seen
	shift 2
	seen=$(wc -l <"$SCRATCH/api.log")
	(cd repo && TESTFLAME_PR=$n github_pr_env "$SCRATCH/event.json" 7 slow "$TOKEN" -- "$TF" publish "$@" testflame-report) \
		>out 2>err
	local rc=$?
	tail -n +$((seen + 1)) "$SCRATCH/api.log" >"$SCRATCH/$name.log"
	return $rc
}

test_expect_success 'a read-only token (403): a warning, publish still exits 0' '
	fresh_pr 8 && api_patch "{\"readonly\":true}" &&
	publish_pr 8 ro; rc=$?
	api_patch "{\"readonly\":false}" && [ $rc = 0 ] &&
	expect_contains err "403 Forbidden: Resource not accessible by integration" &&
	expect_contains err "read-only token"
'

test_expect_success 'a line outside the diff: 422 is a note, the function stays in the comment' '
	fresh_pr 9 "\"exclude\":{\"src/matrix.c\":[[1,100]]}" &&
	publish_pr 9 narrow &&
	expect_contains err "1 refused" &&
	expect_contains err "no review comment on src/matrix.c:12 (kept in the main comment)" &&
	expect_contains err "422 Unprocessable Entity: Validation Failed (pull_request_review_thread.line must be part of the diff)" &&
	expect_contains err "posted the comment on pull request #9" && api_conforms narrow
'

test_expect_success 'a rate limit (403, Retry-After: 1): waited for and retried' '
	fresh_pr 10 &&
	api_faults "[{\"method\":\"GET\",\"path\":\"/issues/10/comments\$\",\"status\":403,\"times\":1,
		\"headers\":{\"retry-after\":\"1\",\"x-ratelimit-remaining\":\"0\",\"x-ratelimit-reset\":\"$(( $(date +%s) + 1 ))\"},
		\"body\":{\"message\":\"You have exceeded a secondary rate limit.\"}}]" &&
	publish_pr 10 rl -v &&
	expect_contains err "retrying in 1.0 s (attempt 2 of 5)" && expect_contains err "posted the comment" &&
	python3 -c "
import json
e = [json.loads(l) for l in open(\"rl.log\")]
assert e[0][\"status\"] == 403 and e[1][\"status\"] == 200, [x[\"status\"] for x in e]
assert e[1][\"t\"] - e[0][\"t\"] >= 1000, e[1][\"t\"] - e[0][\"t\"]
" && api_conforms rl
'

test_expect_success '5xx: retried with backoff, then the comment is posted' '
	fresh_pr 11 &&
	api_faults "[{\"method\":\"POST\",\"path\":\"/issues/11/comments\$\",\"status\":502,\"times\":2,\"body\":{\"message\":\"Server Error\"}}]" &&
	publish_pr 11 flaky -v &&
	expect_contains err "-> 502" && expect_contains err "retrying in 1.0 s (attempt 2 of 5)" &&
	expect_contains err "retrying in 2.0 s (attempt 3 of 5)" && expect_contains err "posted the comment"
'

test_expect_code 1 'a 5xx that does not go away: bounded attempts, status and message, exit 1' '
	fresh_pr 12 &&
	api_faults "[{\"method\":\"GET\",\"path\":\"/issues/12/comments\$\",\"status\":503,\"times\":100,
		\"headers\":{\"retry-after\":\"0\"},\"body\":{\"message\":\"Service unavailable, try later\"}}]" &&
	publish_pr 12 down; rc=$?
	expect_contains err "GitHub API: GET /repos/acme/libmini/issues/12/comments?per_page=100: 503 Service Unavailable: Service unavailable, try later" &&
	expect_eq "$(grep -c . down.log)" 5 "attempts" && exit $rc
'

test_expect_code 3 'run: a publishing failure is a warning, the exit status stays 3' '
	T=wrong-token pr "$TF" run --confirm none >out 2>err; rc=$?
	expect_contains err "warning: could not publish: GitHub API: GET /repos/acme/libmini/issues/7/comments?per_page=100: 401 Unauthorized: Bad credentials" &&
	! grep -F wrong-token err && exit $rc
'

test_expect_code 1 'an unknown pull request: 404 named' '
	(cd repo && TESTFLAME_PR=99 github_pr_env "$SCRATCH/event.json" 7 slow "$TOKEN" -- "$TF" publish testflame-report) >out 2>err; rc=$?
	expect_contains err "404 Not Found: Not Found" && expect_contains err "pull request #99 of '\''acme/libmini'\''" && exit $rc
'

test_expect_code 1 'no token over plain http to another host' '
	(cd repo && github_pr_env "$SCRATCH/event.json" 7 slow "$TOKEN" -- env TESTFLAME_GITHUB_API_URL=http://example.com/api "$TF" publish testflame-report) >out 2>err; rc=$?
	expect_contains err "refusing to send a token to '\''http://example.com/api'\''" && exit $rc
'

test_expect_code 1 'publish: not a report directory' '
	"$TF" publish "$SCRATCH/nothing-here" 2>err; rc=$?
	expect_contains err "is not a report directory" && exit $rc
'

test_expect_code 2 'publish: usage' '
	"$TF" publish 2>err; rc=$?
	expect_contains err "no report directory given" && exit $rc
'

test_done
