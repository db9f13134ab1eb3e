#!/usr/bin/env bash
# t9120-fault-remote.sh - the store's remote fails in the middle of a push:
# the connection is reset halfway through the pack, the server answers 500,
# or it stops answering. A real smart-HTTP server (lighttpd, git
# http-backend) behind faultproxy.py, which breaks only the push's
# git-receive-pack request. Each time: one clear line, exit 1, no ref on
# the remote (nothing half-pushed, the remote repository intact), the local
# baseline untouched, and the next push works.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-store.sh"

if ! need lighttpd openssl curl python3; then
	test_skip "faults of the remote" "lighttpd, openssl, curl or python3 missing (make deps installs them)"
	test_done
	exit 0
fi
if ! http_start; then
	test_expect_success 'lighttpd serves git http-backend' 'false'
	test_done
	exit 1
fi
# the interpreter itself, not lib.sh's python3 function: a function in
# the background is a subshell, and killing it (the trap) would leave the
# proxy running after the script
"${TF_TEST_PYTHON3:-python3}" "$TOP/tests/e2e/faultproxy.py" "$HTTP_PORT" "$SCRATCH/proxy.port" "$SCRATCH/fault" \
	"$SCRATCH/proxy.log" 2>"$SCRATCH/proxy.err" &
PROXY_PID=$!
trap 'kill $PROXY_PID 2>/dev/null; http_stop; [ -n "${KEEP:-}" ] || rm -rf "$SCRATCH"' EXIT
for _ in $(seq 50); do [ -s "$SCRATCH/proxy.port" ] && break; sleep 0.1; done
PROXY_URL=http://127.0.0.1:$(cat "$SCRATCH/proxy.port")/git
export TESTFLAME_TOKEN=$HTTP_TOKEN

mkdir -p srv
git init -q --bare srv/proj.git
new_repo a 3
git -C a remote add origin "$PROXY_URL/proj.git"
folded x.folded x 10
(cd a && "$TF" baseline save -q --suite unit --kind k1 ../x.folded)
REF=refs/testflame/runs/$(git -C a rev-parse HEAD)
LOCAL=$(git -C a rev-parse "$REF")

# push_fails MODE: the push with the fault in place fails cleanly.
push_fails() {
	echo "$1" > "$SCRATCH/fault"
	: > "$SCRATCH/proxy.log"
	(cd a && timeout 120 "$TF" baseline push) > out 2>&1
	rc=$?
	cat out
	expect_eq "$rc" 1 "exit status" &&
	expect_eq "$(wc -l < out)" 1 "lines of output" &&
	expect_contains out "testflame: " &&
	expect_contains out "$PROXY_URL/proj.git" &&
	expect_not_contains out "$HTTP_TOKEN" || return 1
	if ! grep -q "git-receive-pack -> " "$SCRATCH/proxy.log"; then
		fail "the push never reached git-receive-pack: $(cat "$SCRATCH/proxy.log")"
		return 1
	fi
	if git -C srv/proj.git rev-parse -q --verify "$REF" >/dev/null; then
		fail "the remote has the ref after a failed push"
		return 1
	fi
	git -C srv/proj.git fsck --no-progress &&
	expect_eq "$(git -C a rev-parse "$REF")" "$LOCAL" "local baseline"
}

test_expect_success 'the proxy forwards: the remote is listed through it' '
	echo pass > "$SCRATCH/fault" &&
	(cd a && "$TF" baseline list --remote origin) &&
	grep -q "info/refs" "$SCRATCH/proxy.log"
'

test_expect_success 'the connection is reset halfway through the push: one line, nothing pushed' '
	push_fails drop
'

test_expect_success 'the server answers 500 to the push: one line, nothing pushed' '
	push_fails 500 &&
	expect_contains out "500"
'

test_expect_success 'the server stops answering: the push gives up after TESTFLAME_NET_TIMEOUT' '
	start=$(date +%s) &&
	TESTFLAME_NET_TIMEOUT=3 push_fails stall &&
	took=$(( $(date +%s) - start )) &&
	{ [ "$took" -lt 30 ] || fail "gave up after $took s"; } &&
	expect_contains out "no answer for 3 s"
'

test_expect_success 'the next push works, and the remote has the baseline intact' '
	echo pass > "$SCRATCH/fault" &&
	(cd a && "$TF" baseline push) &&
	expect_eq "$(git -C srv/proj.git rev-parse "$REF")" "$LOCAL" "remote baseline" &&
	git -C srv/proj.git fsck --no-progress &&
	expect_eq "$(git -C srv/proj.git ls-tree -r --name-only "$REF")" "unit/k1.pb.gz"
'

test_done
