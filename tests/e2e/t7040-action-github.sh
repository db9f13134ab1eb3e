#!/usr/bin/env bash
# t7040-action-github.sh - the acceptance test of the GitHub integration: a
# new user copies examples/ (its .testflame.yml and
# .github/workflows/testflame.yml, as README's GitHub section says) into a
# repository; the workflow's jobs run as a hosted runner would run them
# (tests/node/gha-run.mjs: GitHub's own workflow parser and expression
# engine, the runner's environment, event payloads and file commands,
# actions/checkout's shallow fetch), with testflame's composite action
# built from a copy of this tree and the GitHub API played on loopback,
# checked against GitHub's OpenAPI description.
#
#   push to main        testflame built and saved in the Actions cache; the
#                       baseline is recorded and pushed to origin
#   every later job     testflame restored from the cache, nothing built
#   PR slowing a test   one comment naming the test and the function, one
#                       annotation on the changed line, a review comment,
#                       the step fails with exit 3, the report is uploaded
#   a second push       the same comment is edited, not a new one
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'the GitHub Action end to end'

TOKEN=ghs_t7040ActionToken0123456789
# testflame as the action's repository holds it: the tracked and new files
# of this tree, without its build
copy_testflame testflame
# the new user's repository: the example project with its workflow
example_project "libmini with testflame" || exit 1

# each job on a fresh runner of one image (an empty tool cache), with the
# repository's Actions cache shared (actions/cache over a local store)
gha() { # event sha ref payload workspace name
	rm -rf "$SCRATCH/toolcache"
	node "$NODE_DIR/gha-run.mjs" --workflow "$SCRATCH/project/.github/workflows/testflame.yml" --job perf \
		--event "$1" --sha "$2" --ref "$3" --payload "$4" --origin "$SCRATCH/origin.git" \
		--workspace "$SCRATCH/$5" --testflame "$SCRATCH/testflame" --artifacts "$SCRATCH/artifacts-$6" \
		--result "$SCRATCH/$6.json" --api-url "$API" --token "$TOKEN" --temp "$(mktemp -d "$SCRATCH/runner.XXXXXX")" \
		--cache "$SCRATCH/cache" --env "ImageOS=ubuntu24,ImageVersion=20261201.1,RUNNER_TOOL_CACHE=$SCRATCH/toolcache"
}
# the set-up's wall time: its steps, from the hash of the sources to PATH
setup_seconds() { # result
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("%.2f" % sum(x.get("seconds", 0) for x in r["steps"] if any(k in x["label"] for k in
      ("Set up testflame", "from the cache", "Build testflame", "in the cache", "testflame on PATH"))))' "$1"
}
ours() {
	api_state | python3 -c '
import json, sys
pr = json.load(sys.stdin)["repos"]["acme/libmini"]["pulls"]["7"]
mine = [c for c in pr.get("comments", []) if c["user"] == "github-actions[bot]"]
print(len(mine), sum(c.get("edits", 0) for c in mine), len(pr.get("review_comments", [])))'
}

start_github_api 7 || exit 1

test_expect_success 'GitHub parses the action and the example workflow' '
	(cd "$NODE_DIR" && node -e "
import(\"node:module\").then(async (m) => {
	m.register(\"./json-hooks.mjs\", \"file://$NODE_DIR/\");
	const wp = await import(\"@actions/workflow-parser\");
	const wpa = await import(\"@actions/workflow-parser/actions/index\");
	const fs = await import(\"node:fs\");
	for (const [kind, f] of [[\"action\", \"$TOP/actions/action.yml\"], [\"workflow\", \"$TOP/examples/.github/workflows/testflame.yml\"]]) {
		const content = fs.readFileSync(f, \"utf8\");
		const r = (kind === \"action\" ? wpa.parseAction : wp.parseWorkflow)({ name: f, content }, new wp.NoOperationTraceWriter());
		const errs = r.context.errors.getErrors();
		if (errs.length || !r.value) { console.error(f, errs.map((e) => e.message)); process.exit(1); }
	}
});")
'

test_expect_success 'a push to main: the action builds testflame, records the baseline and pushes it' '
	cat >event-main.json <<-EOF &&
	{"ref":"refs/heads/main","before":"0000000000000000000000000000000000000000","after":"$MAIN",
	 "repository":{"full_name":"acme/libmini","default_branch":"main"},"pusher":{"name":"dev"}}
	EOF
	gha push "$MAIN" refs/heads/main event-main.json ws-main main >main.log 2>&1 ||
		{ tail -n 60 main.log; exit 1; }
	expect_eq "$(job_step main.json "Build testflame")" "success 0" &&
	expect_contains main.log "cache saved with key: testflame-0." &&
	dir=$(ls -d toolcache/testflame/*) &&
	readelf -d "$dir/bin/testflame" | grep -q "R.*PATH.*\$ORIGIN/../lib" &&
	ls "$dir/lib" | grep -q "^libgit2" && ! ls "$dir/lib" | grep -q "^libc\.so" &&
	echo "# set-up on a cache miss (this tree'"'"'s objects copied): $(setup_seconds main.json) s" >&3 &&
	expect_eq "$(job_step main.json "Push the baseline")" "success 0" &&
	expect_eq "$(job_step main.json "Fail on regression")" "skipped " &&
	git --git-dir=origin.git rev-parse -q --verify "refs/testflame/runs/$MAIN" >/dev/null &&
	expect_contains main.log "nothing posted: not a pull request build"
' 3>&1

# The developer's PR: a branch that slows matrix_multiply; GitHub makes
# refs/pull/7/merge, the merge the pull_request run checks out.
pr_push() { # clone start-point edit
	git clone -q origin.git "$1" && (cd "$1" && git config user.email dev@example.com && git config user.name dev &&
		git checkout -q -B slow "$2" && eval "$3" && git commit -qam "$1" && git push -q -f origin slow &&
		git checkout -q --detach origin/main &&
		git merge -q --no-ff slow -m "Merge $(git rev-parse slow) into $(git rev-parse origin/main)" &&
		git push -q -f origin HEAD:refs/pull/7/merge slow:refs/pull/7/head)
}
# A push to the PR and the pull_request run of its merge: the job's log in
# NAME.log, its result in NAME.json; the job must fail, at the last step.
pr_run() { # name start-point edit
	pr_push "dev-$1" "$2" "$3" &&
	HEAD_SHA=$(git -C origin.git rev-parse slow) && MERGE=$(git -C origin.git rev-parse refs/pull/7/merge) &&
	api_patch "{\"repos\":{\"acme/libmini\":{\"pulls\":{\"7\":{\"head_sha\":\"$HEAD_SHA\"}}}}}" &&
	github_pr_event "event-$1.json" 7 "$HEAD_SHA" slow "$MAIN" main acme/libmini || return 1
	gha pull_request "$MERGE" refs/pull/7/merge "event-$1.json" "ws-$1" "$1" >"$1.log" 2>&1
	[ $? = 1 ] || { tail -n 80 "$1.log"; return 1; }
	expect_eq "$(job_step "$1.json" "Fail on regression")" "failure 3"
}

test_expect_code 3 'a PR that slows a test: one comment, one annotation on the changed line, the step fails with 3' '
	pr_run pr origin/main slow_down_matrix &&
	# testflame from the cache: nothing built, the set-up in seconds
	expect_eq "$(job_step pr.json "Build testflame")" "skipped " &&
	expect_contains pr.log "cache restored from key: testflame-0." &&
	hit=$(setup_seconds pr.json) && echo "# set-up on a cache hit: $hit s" >&3 &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 5 else 1)" "$hit" &&
	expect_eq "$(job_step pr.json "Profile and compare")" "success 0" &&
	expect_eq "$(ours)" "1 0 1" "comments, edits, review comments" &&
	api_state | python3 -c "
import json, sys
c = [c for c in json.load(sys.stdin)[\"repos\"][\"acme/libmini\"][\"pulls\"][\"7\"][\"comments\"]][0][\"body\"]
assert \"test_matrix\" in c and \"matrix_multiply\" in c, c
" &&
	python3 - <<-\PY &&
	import json
	r = json.load(open("pr.json"))
	# runs on this shared machine are noisy: other tests may be flagged too,
	# but the changed line gets exactly one annotation
	w = [a for a in r["annotations"] if a["level"] == "warning" and a.get("file") == "src/matrix.c"]
	assert len(w) == 1, w
	assert w[0]["file"] == "src/matrix.c" and w[0]["line"] in (11, 12), w[0]
	assert "matrix_multiply" in w[0]["title"] and "test_matrix" in w[0]["title"], w[0]
	e = [a for a in r["annotations"] if a["level"] == "error"]
	assert e and "regressed" in e[0]["title"] and "test_matrix" in e[0]["message"], e
	assert "test_matrix" in r["summary"], r["summary"][:300]
	outs = [s for s in r["steps"] if "Profile and compare" in s["label"]][0]["outputs"]
	assert int(outs["regressions"]) >= 1 and outs["status"] == "3", outs
	PY
	test -s artifacts-pr/testflame-report-perf/index.html &&
	test -s artifacts-pr/testflame-report-perf/report.md &&
	api_conforms && exit 3
' 3>&1

# the push's config confirms nothing (test 3 confirmed against the
# merge-base): one run of the suite
test_expect_code 3 'a second push to the PR: the same comment is edited, not a new one' '
	pr_run pr2 origin/slow "echo \"/* tidy */\" >>src/sort.c && gate_confirm none" &&
	set -- $(ours) && expect_eq "$1" 1 "bot comments" && expect_eq "$2" 1 "edits" &&
	expect_contains pr2.log "updated the comment on pull request #7" &&
	api_conforms && exit 3
'

test_expect_success 'the token never reached a log' '
	! grep -F "$TOKEN" main.log pr.log pr2.log
'

test_done
