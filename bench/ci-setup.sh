#!/usr/bin/env bash
# ci-setup.sh - the GitHub Action's and the CircleCI orb's set-up time, on
# a cache miss (testflame built from its sources, as a new version's first
# job does) and on a hit (restored from the cache), in the local runners
# (tests/node/gha-run.mjs, circleci-run.mjs): t7040's and t7070's jobs (a
# push to main, then pull request builds), but with a tree that has no
# build objects, so the miss is the build a CI job pays. Minutes; by hand.
#
#   nice -n 10 bench/ci-setup.sh
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
# a BUILD that is not the tree's own: copy_testflame then copies no objects
for t in t7040-action-github t7070-circleci-orb; do
	echo "$t"
	TESTFLAME_BUILD=$TOP/build/ci-setup-none bash "$TOP/tests/e2e/$t.sh" |
		grep -E '^# set-up|^(not )?ok'
done
uptime
