#!/usr/bin/env bash
# ci-setup.sh - the GitHub Action's set-up time, on a cache miss (testflame
# built from its sources, as a new version's first job does) and on a hit
# (restored from the Actions cache), in the local runner
# (tests/node/gha-run.mjs): t7040's jobs (a push to main, then pull
# request builds), but with a tree that has no build objects, so the miss
# is the build a CI job pays. Minutes; by hand.
#
#   nice -n 10 bench/ci-setup.sh
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
# a BUILD that is not the tree's own: copy_testflame then copies no objects
TESTFLAME_BUILD=$TOP/build/ci-setup-none bash "$TOP/tests/e2e/t7040-action-github.sh" |
	grep -E '^# set-up|^(not )?ok'
uptime
