#!/usr/bin/env bash
# install.sh - install the npm packages the end-to-end tests use as real
# clients of testflame's outputs (pprof-format, playwright-core, ...), from
# package.json and the committed lock file. Quiet unless something fails.
set -eu
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
	echo "tests/node: npm is missing (make deps installs it)" >&2
	exit 1
fi
stamp=node_modules/.testflame-stamp
if [ -f "$stamp" ] && [ "$stamp" -nt package.json ] && [ "$stamp" -nt package-lock.json ]; then
	exit 0
fi
if [ -f package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error >/dev/null
else
	npm install --no-audit --no-fund --loglevel=error >/dev/null
fi
touch "$stamp"
