# lib-publish.sh - what the publishing tests (t7000-t7999) share, sourced
# after lib.sh: the example project as a git repository with a baseline on
# main and a PR that slows matrix_multiply, the loopback GitHub/GitLab API
# (tests/node/api-server.mjs, which checks every request against the API's
# own description), and the environment GitHub Actions gives a job.

NODE_DIR=$TOP/tests/node

# Stop the API servers this script started (by their pids, which test
# bodies running in subshells leave in a file) on exit, then do what
# lib.sh's trap does.
stop_apis() {
	local p
	[ -f "$SCRATCH/.api-pids" ] || return 0
	while read -r p; do kill "$p" 2>/dev/null; done <"$SCRATCH/.api-pids"
	rm -f "$SCRATCH/.api-pids"
}
trap 'stop_apis; [ -n "${KEEP:-}" ] || rm -rf "$SCRATCH"' EXIT

have_node_modules() {
	local m
	need node || return 1
	for m in @octokit/openapi ajv yaml @actions/workflow-parser @actions/expressions \
		@circleci/circleci-config-parser gitlab-ci-local; do
		[ -d "$NODE_DIR/node_modules/$m" ] || return 1
	done
}

# Skip the whole script (saying what) when tests/node is not installed.
need_node_modules() { # what
	have_node_modules && return 0
	test_skip "$1" 'tests/node is not installed (make deps)'
	test_done
	exit 0
}

# start_api KIND STATE_FILE NAME: the server's URL in $API (and $NAME_URL)
start_api() { # kind state name
	local kind=$1 state=$2 name=${3:-api} i
	rm -f "$SCRATCH/$name.port"
	node "$NODE_DIR/api-server.mjs" --kind "$kind" --state "$state" \
		--port-file "$SCRATCH/$name.port" --log "$SCRATCH/$name.log" \
		>"$SCRATCH/$name.out" 2>&1 &
	echo $! >>"$SCRATCH/.api-pids"
	for i in $(seq 150); do
		[ -s "$SCRATCH/$name.port" ] && break
		sleep 0.1
	done
	[ -s "$SCRATCH/$name.port" ] || { cat "$SCRATCH/$name.out" >&2; return 1; }
	API="http://127.0.0.1:$(cat "$SCRATCH/$name.port")"
}

api_state() { curl -sf "$API/_test/state"; }
api_faults() { curl -sf -X POST -H 'Content-Type: application/json' --data "$1" "$API/_test/faults" >/dev/null; }
api_patch() { curl -sf -X POST -H 'Content-Type: application/json' --data "$1" "$API/_test/patch" >/dev/null; }

# Every request the server saw conformed to the API description, and so
# did every reply it played.
api_conforms() { # name
	python3 - "$SCRATCH/${1:-api}.log" <<\PY
import json, sys
bad = 0
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    n += 1
    for v in e["violations"] + e.get("reply_violations", []):
        print("%s %s%s: %s" % (e["method"], e["path"], e["query"], v), file=sys.stderr)
        bad += 1
if n == 0:
    print("the server saw no request", file=sys.stderr)
    bad += 1
sys.exit(1 if bad else 0)
PY
}

# The requests seen, one "METHOD PATH STATUS" line each.
api_requests() { # name
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    print(e["method"], e["path"], e["status"])' "$SCRATCH/${1:-api}.log"
}

# This tree of testflame as its repository holds it (tracked and new files,
# no node_modules), in $SCRATCH/$1: what an action, template or orb builds
# testflame from.
copy_testflame() { # dir
	mkdir "$SCRATCH/$1" && (cd "$TOP" && git ls-files -co --exclude-standard -z |
		grep -zv '^tests/node/node_modules/' | xargs -0 tar cf - 2>/dev/null) | tar xf - -C "$SCRATCH/$1" &&
	# with this tree's objects, newer than its sources: the CI job's `make`
	# finds testflame built (CI's own build is the one from nothing), and
	# each of these tests is 15 s shorter
	if [ "$BUILD" = "$TOP/build" ] && [ -x "$BUILD/testflame" ]; then
		(cd "$TOP" && tar cf - build/src build/gen build/libtestflame.a build/testflame) |
			tar xf - -C "$SCRATCH/$1"
	fi
}

# A new user's repository as the CI tests start from it: examples/ copied
# into $SCRATCH/project (after EDIT, run there, when given), committed on
# main, with a bare clone origin.git; main's commit in $MAIN.
example_project() { # message [edit]
	mkdir "$SCRATCH/project" && cp -r "$TOP/examples/." "$SCRATCH/project/" &&
	rm -rf "$SCRATCH/project/build" "$SCRATCH/project/testflame-report" &&
	(cd "$SCRATCH/project" && eval "${2:-:}" && git init -q -b main &&
		git config user.email dev@example.com && git config user.name dev &&
		git add -A && git commit -qm "$1") >/dev/null &&
	git clone -q --bare "$SCRATCH/project" "$SCRATCH/origin.git" &&
	MAIN=$(git -C "$SCRATCH/origin.git" rev-parse main)
}

# The CircleCI tests' start: testflame's repository tagged v1 in
# $SCRATCH/testflame, as the orb clones it, and example_project with
# examples/.circleci/CONFIG as its config.yml, each job of it building
# testflame in $SCRATCH/tf-src (inside the test, not in /tmp).
orb_project() { # message config
	copy_testflame testflame &&
	(cd "$SCRATCH/testflame" && git init -q -b main && git add -A &&
		git -c user.email=t@e -c user.name=t commit -qm testflame && git tag v1) >/dev/null &&
	example_project "$1" "orb_config $2"
}
orb_config() { # config: run in the project; the orb's source: $ORB_SOURCE
	[ "$1" = config.yml ] || mv ".circleci/$1" .circleci/config.yml
	python3 - .circleci/config.yml "${ORB_SOURCE:-$SCRATCH/tf-src}" <<-\PY
	import sys, yaml
	p, src = sys.argv[1:3]
	doc = yaml.safe_load(open(p))
	for j in doc["workflows"]["perf"]["jobs"]:
	    list(j.values())[0]["source"] = src
	yaml.safe_dump(doc, open(p, "w"), sort_keys=False)
	PY
}

# gate.confirm of the example project's .testflame.yml (in the current
# directory) set to HOW: a test whose subject is not the confirmation
# runs the suite once (none), or a few times (a number), not in rounds
# against the merge-base, which go on while any test is undecided.
gate_confirm() { # how
	sed -i "s/^gate:\$/gate:\n  confirm: $1/" .testflame.yml && grep -q "^  confirm: $1\$" .testflame.yml
}

# A developer's branch `slow`, whose commit slows matrix_multiply (and
# makes EDIT), pushed to origin.git; its commit in $HEAD_SHA, the head of
# the API's pull request NUMBER from now on.
push_slow_branch() { # number [edit]
	git clone -q "$SCRATCH/origin.git" "$SCRATCH/dev" &&
	(cd "$SCRATCH/dev" && git config user.email dev@example.com && git config user.name dev &&
		git checkout -q -b slow && slow_down_matrix && eval "${2:-:}" && git commit -qam "matrix: slower" &&
		git push -q origin slow) &&
	HEAD_SHA=$(git -C "$SCRATCH/origin.git" rev-parse slow) &&
	api_patch "{\"repos\":{\"acme/libmini\":{\"pulls\":{\"$1\":{\"head_sha\":\"$HEAD_SHA\"}}}}}"
}

# The loopback GitHub API holding pull request NUMBER of acme/libmini, whose
# base is $MAIN and whose diff is read from origin.git; its URL in $API.
start_github_api() { # number
	printf '{"token":"%s","repos":{"acme/libmini":{"pulls":{"%s":{"head_sha":"0","base_sha":"%s","diff_repo":"%s"}}}}}\n' \
		"$TOKEN" "$1" "$MAIN" "$SCRATCH/origin.git" >"$SCRATCH/state.json" &&
	start_api github "$SCRATCH/state.json"
}

# "outcome exit_code" of the last step of a CI job's result file (gha-run,
# circleci-run) whose label contains LABEL; exit_code empty when skipped.
job_step() { # result label
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
s = [s for s in r["steps"] if sys.argv[2] in s["label"]][-1]
print(s["outcome"], s.get("exit_code", ""))' "$1" "$2"
}

# The example project in $SCRATCH/$1, committed on main, built.
make_example_repo() { # dir
	mkdir "$1" && cp -r "$TOP/examples/." "$1/" && rm -rf "$1/build" "$1/.github" "$1/.gitlab-ci.yml" "$1/.circleci"
	(
		cd "$1" && git init -q -b main && git config user.email t@example.com &&
		git config user.name t &&
		cat >.testflame.yml <<\YML &&
suite: examples
command: "make -s check"
build: "make -s all"
freq: 999
gate:
  confirm: 2
YML
		printf 'build/\ntestflame-report/\n' >>.gitignore &&
		git add -A && git commit -qm "libmini" && make -s all >/dev/null
	)
}

# The example project in $SCRATCH/repo with a bare origin: the baseline of
# main recorded and pushed (and dropped here, so a PR job fetches it as in
# CI), and branch `slow` that slows matrix_multiply, committed and built.
# Sets BASE (main) and HEAD_SHA (slow). A run that looks slower is
# confirmed by two more runs of this tree (`confirm: 2`): the building and
# running of the merge-base that `build:` allows is t0200's to test.
setup_pr_repo() {
	make_example_repo repo && git init -q --bare origin.git && (
		cd repo && git remote add origin "$SCRATCH/origin.git" && git push -q origin main &&
		"$TF" run -q --push >/dev/null 2>&1 &&
		git update-ref -d "refs/testflame/runs/$(git rev-parse HEAD)" &&
		git checkout -q -b slow && slow_down_matrix && git commit -qam "matrix: a second pass" &&
		make -s all >/dev/null
	) || { echo "setting up the repository failed" >&2; return 1; }
	BASE=$(git -C repo rev-parse main)
	HEAD_SHA=$(git -C repo rev-parse slow)
}

# A pull_request event payload as GitHub writes it to GITHUB_EVENT_PATH.
github_pr_event() { # file number head_sha head_ref base_sha base_ref repo [fork_repo]
	cat >"$1" <<EOF
{"action":"synchronize","number":$2,
 "pull_request":{"number":$2,"state":"open",
  "head":{"sha":"$3","ref":"$4","repo":{"full_name":"${8:-$7}","fork":$([ -n "${8:-}" ] && echo true || echo false)}},
  "base":{"sha":"$5","ref":"$6","repo":{"full_name":"$7","fork":false}}},
 "repository":{"full_name":"$7","default_branch":"main"}}
EOF
}

# Run a command with the environment of a GitHub Actions pull_request job
# (checkout of refs/pull/N/merge, so HEAD is the merge commit).
github_pr_env() { # event_file number head_ref token -- cmd...
	local event=$1 n=$2 ref=$3 token=$4
	shift 5
	env GITHUB_ACTIONS=true CI=true GITHUB_EVENT_NAME=pull_request \
		GITHUB_EVENT_PATH="$event" GITHUB_SHA="$(git rev-parse HEAD)" \
		GITHUB_REF="refs/pull/$n/merge" GITHUB_REF_NAME="$n/merge" GITHUB_REF_TYPE=branch \
		GITHUB_HEAD_REF="$ref" GITHUB_BASE_REF=main GITHUB_REPOSITORY=acme/libmini \
		GITHUB_REPOSITORY_OWNER=acme GITHUB_SERVER_URL=https://github.com GITHUB_API_URL="$API" \
		GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT=1 GITHUB_WORKFLOW=testflame GITHUB_JOB=perf \
		GITHUB_OUTPUT="$SCRATCH/github_output" GITHUB_STEP_SUMMARY="$SCRATCH/step_summary" \
		GITHUB_TOKEN="$token" RUNNER_OS=Linux RUNNER_TEMP="$SCRATCH" "$@"
}
