#!/usr/bin/env bash
# t5051-pyroscope-errors.sh - Pyroscope answering badly never costs the
# verdict or the report: a wrong token (401) is one warning and stops at
# once; a request too large (413) is split and everything still arrives; a
# rate limit (429, Retry-After) and a 5xx are retried; a server that stays
# down, answers 5xx every time or is too slow (TESTFLAME_PYROSCOPE_TIMEOUT)
# is given up on within bounds, with one warning; and looking for a
# baseline in a server that is down leaves the run as it is without one.
# Secrets stay out of every output.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-pyroscope.sh"

need_pyroscope 'Pyroscope error answers'
start_pyroscope || exit 1
make_burn_repo repo || exit 1
MAIN=$(git -C repo rev-parse main)
TOKEN=pyro_t5051_token_0123456789

# run [ARGS...]: `testflame run` on main against $PYRO, not saving, one
# run; the exit status in rc, the outputs in out and err.
run() {
	(cd repo && "$TF" run --confirm 0 --no-save --store "pyroscope:$PYRO" "$@") >out 2>err
}
warnings() { grep -c "warning: could not push the profiles to Pyroscope" err; }

test_expect_success 'a wrong token: one warning with the status, no retry, the report is written, exit 0' '
	pyro_config "{\"token\":\"right-token-xyz\"}" && : >pyro.log &&
	TESTFLAME_PYROSCOPE_TOKEN=$TOKEN run -v &&
	expect_eq "$(warnings)" 1 "warnings" &&
	expect_contains err "(the verdict stands): Pyroscope: POST /push.v1.PusherService/Push: 401 Unauthorized: missing or wrong credentials" &&
	[ "$(pyro_requests | grep -c " 401$")" = 1 ] &&
	test -s repo/testflame-report/head.pb.gz && test -s repo/testflame-report/report.md &&
	! grep -rF "$TOKEN" out err repo/testflame-report &&
	pyro_config "{}"
'

test_expect_success 'too large (413): the request is split, every profile arrives' '
	pyro_faults "[{\"path\":\"Push\",\"status\":413,\"count\":1}]" && : >pyro.log &&
	run && ! grep -q warning err &&
	run_totals repo/testflame-report/head.pb.gz >want && n=$(wc -l <want) &&
	expect_contains err "pushed $n tests (1 run, $n profiles)" &&
	pyro_requests >reqs && grep -q "^/push.v1.PusherService/Push 413" reqs &&
	[ "$(grep -c "^/push.v1.PusherService/Push 200" reqs)" -ge 2 ] &&
	pushed_totals "$MAIN" >got && diff want got
'

test_expect_success 'a profile refused as too large on its own: counted in one warning' '
	pyro_faults "[{\"path\":\"Push\",\"status\":413,\"count\":100}]" &&
	run && expect_eq "$(warnings)" 1 "warnings" &&
	grep -Eq "Pyroscope refused ([0-9]+) of \1 profiles" err
'

test_expect_success 'a rate limit (429, Retry-After: 1) is waited out and retried' '
	pyro_faults "[{\"path\":\"Push\",\"status\":429,\"count\":1,\"retry_after\":\"1\"}]" && : >pyro.log &&
	run -v && ! grep -q warning err &&
	expect_contains err "retrying in 1.0 s" &&
	pyro_requests >reqs && grep -q "^/push.v1.PusherService/Push 429" reqs &&
	grep -q "^/push.v1.PusherService/Push 200" reqs
'

test_expect_success 'a 503 is retried' '
	pyro_faults "[{\"path\":\"Push\",\"status\":503,\"count\":1}]" && : >pyro.log &&
	run && ! grep -q warning err && expect_contains err "pushed" &&
	[ "$(pyro_requests | grep -c "^/push.v1.PusherService/Push 503")" = 1 ]
'

test_expect_success '5xx every time: three attempts, one warning, exit 0' '
	pyro_faults "[{\"path\":\"Push\",\"status\":502,\"count\":100}]" && : >pyro.log &&
	run && expect_eq "$(warnings)" 1 "warnings" &&
	expect_contains err "502 Bad Gateway" &&
	[ "$(pyro_requests | grep -c "^/push.v1.PusherService/Push 502")" = 3 ]
'

test_expect_success 'too slow: each request times out, given up after three, one warning' '
	pyro_faults "[{\"path\":\"Push\",\"delay_ms\":2500,\"count\":3}]" &&
	start=$(date +%s) &&
	TESTFLAME_PYROSCOPE_TIMEOUT=0.5 run && took=$(( $(date +%s) - start )) &&
	expect_eq "$(warnings)" 1 "warnings" &&
	grep -qi "timed out\|timeout" err &&
	[ "$took" -lt 20 ] || { echo "took $took s" >&2; false; }
'

test_expect_code 3 'a regression is a regression whatever Pyroscope says' '
	pyro_faults "[]" &&
	git clone -q repo clone && (cd clone && "$TF" run --confirm 0 --store "pyroscope:$PYRO") >/dev/null 2>&1 &&
	slow_down_burner clone && pyro_faults "[{\"path\":\"Push\",\"status\":500,\"count\":100}]" &&
	git -C clone update-ref -d "refs/testflame/runs/$MAIN" 2>/dev/null;
	(cd clone && "$TF" run --confirm 0 --store "pyroscope:$PYRO") >out 2>err; rc=$?
	expect_contains out "from Pyroscope" && expect_eq "$(warnings)" 1 "warnings" &&
	test -s clone/testflame-report/report.md && exit $rc
'

test_expect_success 'a server that is down: one warning for the push, exit 0, the report is there' '
	PYRO=http://127.0.0.1:1 run &&
	expect_eq "$(warnings)" 1 "warnings" &&
	test -s repo/testflame-report/head.pb.gz
'

test_expect_success 'looking for a baseline in a server that is down: a warning, then no baseline' '
	(cd clone && "$TF" run --confirm 0 --no-save --store pyroscope:http://127.0.0.1:1) >out 2>err; rc=$?
	expect_eq "$rc" 0 "exit status" &&
	expect_contains err "warning: cannot look for a baseline in Pyroscope" &&
	expect_contains err "no baseline of the suite '\''burn'\''" &&
	expect_contains out "no baseline yet"
'

test_expect_success 'the token reached no output in any of this' '
	! grep -rF "$TOKEN" "$SCRATCH"/out "$SCRATCH"/err repo/testflame-report clone/testflame-report
'

test_done
