#!/usr/bin/env bash
# t7042-action-cache.sh - the GitHub Action's set-up from the Actions cache
# (tests/node/gha-run.mjs, actions/cache's restore and save over a local
# store): the first job of a runner image builds testflame, with its
# libraries beside it and a RUNPATH to them, and saves it under a key of
# testflame's version and sources, the image and the architecture; the
# next job restores it and builds nothing. The set-up's wall time of
# each is printed (BENCHMARKS.md has the figures, bench/ci-setup.sh).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'the GitHub Action from the cache'

copy_testflame testflame
mkdir -p project/.github/workflows && cd project && git init -q -b main &&
	git config user.email dev@example.com && git config user.name dev &&
	cat >.github/workflows/perf.yml <<\YML &&
name: perf
on: push
jobs:
  perf:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - uses: acme/testflame/actions@v1
        with:
          command: "true"
          comment: "false"
YML
	git add -A && git commit -qm perf && cd .. && git clone -q --bare project origin.git
SHA=$(git -C origin.git rev-parse main)
printf '{"ref":"refs/heads/main","repository":{"full_name":"acme/app","default_branch":"main"}}\n' >event.json

job() { # name image: on a fresh runner (an empty tool cache)
	rm -rf "$SCRATCH/toolcache"
	node "$NODE_DIR/gha-run.mjs" --workflow project/.github/workflows/perf.yml --job perf \
		--event push --sha "$SHA" --ref refs/heads/main --payload event.json --origin "$SCRATCH/origin.git" \
		--workspace "$SCRATCH/ws-$1" --testflame "$SCRATCH/testflame" --artifacts "$SCRATCH/art-$1" \
		--result "$SCRATCH/$1.json" --temp "$(mktemp -d "$SCRATCH/runner.XXXXXX")" --cache "$SCRATCH/cache" \
		--env "ImageOS=$2,ImageVersion=20261201.1,RUNNER_TOOL_CACHE=$SCRATCH/toolcache" >"$1.log" 2>&1 ||
		{ tail -n 40 "$1.log"; return 1; }
}
# the set-up's steps: "seconds build-outcome"
setup_time() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
s = [x for x in r["steps"] if any(k in x["label"] for k in ("Set up testflame", "from the cache", "Build testflame", "in the cache", "testflame on PATH"))]
b = [x for x in s if "Build testflame" in x["label"]][0]
print("%.2f %s" % (sum(x.get("seconds", 0) for x in s), b["outcome"]))' "$1.json"
}

test_expect_success 'a miss: testflame is built, with its libraries and a RUNPATH to them, and saved' '
	job miss ubuntu24 &&
	set -- $(setup_time miss) && echo "# set-up on a miss: $1 s" >&3 &&
	expect_eq "$2" success "the build" &&
	expect_contains miss.log "cache not found" && expect_contains miss.log "cache saved with key: testflame-" &&
	dir=$(ls -d toolcache/testflame/*) &&
	readelf -d "$dir/bin/testflame" | grep -q "R.*PATH.*\$ORIGIN/../lib" &&
	ls "$dir/lib" | grep -q "^libgit2" && ! ls "$dir/lib" | grep -q "^libc\.so" &&
	test -s "$dir/share/man/man1/testflame-run.1" &&
	expect_eq "$(job_step miss.json "Profile and compare")" "success 0"
' 3>&1

test_expect_success 'a hit on the same image: restored, nothing built, the job runs it' '
	job hit ubuntu24 &&
	set -- $(setup_time hit) && echo "# set-up on a hit: $1 s" >&3 &&
	expect_eq "$2" skipped "the build" &&
	expect_contains hit.log "cache restored from key: testflame-" &&
	expect_eq "$(job_step hit.json "Save testflame in the cache")" "skipped " &&
	expect_eq "$(job_step hit.json "Profile and compare")" "success 0" &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 5 else 1)" "$1"
' 3>&1

test_expect_success 'the key: testflame version and sources, the runner image and the architecture' '
	python3 -c "
import json, sys
s = [x for x in json.load(open(\"hit.json\"))[\"steps\"] if \"Set up testflame\" in x[\"label\"]][0]
k = s[\"outputs\"][\"key\"]
assert k.startswith(\"testflame-0.\") and k.endswith(\"-ubuntu24-20261201.1-X64\"), k
" &&
	# another image, or other sources: other keys, so a build; that is
	# the miss above, whose key is not this one
	! grep -q "ubuntu22" hit.log
'

test_done
