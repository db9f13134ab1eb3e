#!/usr/bin/env bash
# t5050-pyroscope.sh - `--store pyroscope:URL` against the loopback
# Pyroscope (Connect protocol, requests decoded with pyroscope.proto's
# messages, profiles read with Go's pprof library): every run's per-test
# series pushed with their labels and totals equal to the run file's; a
# fresh clone with no git baselines gets the merge-base's from Pyroscope
# and gates on it, saying how old it is; the PR comment links each
# regressed test to Grafana's comparison of the two commits; bearer,
# basic and tenant credentials from the environment and the config reach
# the server and no output; a server with only /ingest still gets them.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-pyroscope.sh"

need_pyroscope 'the Pyroscope store'
start_pyroscope || exit 1
make_burn_repo repo || exit 1
MAIN=$(git -C repo rev-parse main)

test_expect_success 'a run on main pushes one series per test, totals equal to the run file' '
	(cd repo && "$TF" run --confirm 0 --store "pyroscope:$PYRO") >out 2>err &&
	run_totals repo/testflame-report/head.pb.gz >want &&
	n=$(wc -l <want) && grep -q "^steady " want && grep -q "^burner " want &&
	expect_contains err "pushed $n tests (1 run, $n profiles) to Pyroscope at '\''$PYRO'\''" &&
	pyro_clean &&
	pushed_totals "$MAIN" >got &&
	diff want got &&
	pyro_requests | sort | uniq -c >reqs && grep -q "1 /push.v1.PusherService/Push 200" reqs
'

test_expect_success 'the series carry the labels a team queries by' '
	pyro_state | python3 -c "
import json, sys
ps = json.load(sys.stdin)[\"profiles\"]
assert len(ps) >= 2, ps
for p in ps:
    l = p[\"labels\"]
    assert l[\"__name__\"] == \"process_cpu\", l
    assert l[\"service_name\"] == \"repo\", l
    assert l[\"service_git_ref\"] == \"$MAIN\", l
    assert l[\"branch\"] == \"main\" and l[\"ci\"] == \"local\" and l[\"suite\"] == \"burn\", l
    assert l[\"test\"] in (\"steady\", \"burner\", \"burn\", \"[outside tests]\"), l
    assert l[\"runner\"].startswith(\"cpu-clock-\") or l[\"runner\"].startswith(\"instructions-\"), l
    assert \"pr\" not in l and \"shard\" not in l, l
    assert p[\"via\"] == \"push\" and p[\"samples\"] > 0, p
"
'

test_expect_code 3 'a fresh clone with no git baselines gets the baseline from Pyroscope and gates on it' '
	git clone -q repo clone && slow_down_burner clone &&
	[ -z "$(git -C clone for-each-ref refs/testflame)" ] &&
	cat >>clone/.testflame.yml <<-YML &&
	pyroscope:
	  grafana_url: https://grafana.example.com/
	  grafana_datasource: pyro-uid
	YML
	(cd clone && TESTFLAME_PR=12 "$TF" run --store "pyroscope:$PYRO") >pr.out 2>pr.err; rc=$?
	cat pr.out pr.err &&
	grep -Eq "^baseline: ${MAIN:0:12}, the merge-base, from Pyroscope, pushed [0-9]+ seconds? ago; suite '\''burn'\''" pr.out &&
	grep -Eq "regressed +\+[0-9.]+%.* burner" pr.out &&
	expect_contains clone/testflame-report/report.md "burner" &&
	pyro_clean && exit $rc
'

HEAD_SHA=$(git -C clone rev-parse slow 2>/dev/null)

test_expect_success 'the PR run was pushed too, labelled with its PR' '
	pyro_state | python3 -c "
import json, sys
ps = [p for p in json.load(sys.stdin)[\"profiles\"] if p[\"labels\"][\"service_git_ref\"] == \"$HEAD_SHA\"]
assert ps, \"nothing pushed for the PR head\"
for p in ps:
    assert p[\"labels\"][\"pr\"] == \"12\" and p[\"labels\"][\"branch\"] == \"slow\", p[\"labels\"]
# the two runs that confirmed it and were judged, a second apart
assert len({p[\"time_ms\"] for p in ps}) == 2, sorted({p[\"time_ms\"] for p in ps})
"
'

test_expect_success 'history in the clone reads from Pyroscope the commits git holds no run of' '
	(cd clone && "$TF" history --store "pyroscope:$PYRO" --json --no-report --no-functions) \
		>h.json 2>h.err &&
	python3 -c "
import json, sys
h = json.load(open(\"h.json\"))
got = [c[\"commit\"] for c in h[\"commits\"]]
assert got == [\"$MAIN\", \"$HEAD_SHA\"], got
names = {t[\"name\"] for t in h[\"tests\"]}
assert {\"steady\", \"burner\"} <= names, names
" &&
	(cd clone && "$TF" history --store "pyroscope:$PYRO" --service other --json --no-report) \
		>h2.json 2>h2.err; rc=$? &&
	test $rc != 0 && [ -z "$(cat h2.json)" ]
'

test_expect_success 'report.md links the regressed test to Grafana'\''s comparison of the two commits' '
	grep -o "\[compare in Grafana\]([^)]*)" clone/testflame-report/report.md >links &&
	[ "$(wc -l <links)" = 1 ] &&
	python3 - "$MAIN" "$HEAD_SHA" <<\PY
import sys, urllib.parse
base, head = sys.argv[1:3]
link = open("links").read().strip()
url = link[len("[compare in Grafana]("):-1]
u = urllib.parse.urlsplit(url)
assert (u.scheme, u.netloc, u.path) == ("https", "grafana.example.com", "/a/grafana-pyroscope-app/explore"), u
q = urllib.parse.parse_qs(u.query)
assert q["explorationType"] == ["diff-flame-graph"], q
assert q["var-dataSource"] == ["pyro-uid"] and q["var-serviceName"] == ["repo"], q
assert q["var-profileMetricId"][0].endswith(":cpu:nanoseconds:cpu:nanoseconds") or q["var-profileMetricId"][0].startswith("instructions:"), q
assert q["var-filtersBaseline"] == ["service_git_ref|=|" + base, "suite|=|burn", "test|=|burner"], q
assert q["var-filtersComparison"] == ["service_git_ref|=|" + head, "suite|=|burn", "test|=|burner"], q
for k in ("from", "to", "diffFrom", "diffTo", "diffFrom-2", "diffTo-2"):
    int(q[k][0])
assert int(q["diffFrom"][0]) < int(q["diffTo"][0]) <= int(q["to"][0])
PY
'

test_expect_success 'the link renders as a link in the comment' '
	if ! need node || [ ! -d "$TOP/tests/node/node_modules/micromark" ] || [ ! -x /usr/bin/chromium ]; then
		echo "skipped: no node modules or chromium"; exit 0; fi
	node "$TOP/tests/node/md-check.mjs" clone/testflame-report/report.md >md.txt &&
	grep -q "^link \"compare in Grafana\" https://grafana.example.com/a/grafana-pyroscope-app/explore?explorationType=diff-flame-graph&" md.txt &&
	expect_contains md.txt "bad elements none"
'

TOKEN=pyro_t5050_token_0123456789
PASSWORD=pyro_t5050_password_987
TENANT=tenant-t5050-acme

test_expect_success 'a bearer token and a tenant from the environment reach the server, and no output' '
	pyro_config "{\"token\":\"$TOKEN\",\"tenant\":\"$TENANT\"}" &&
	(cd repo && TESTFLAME_PYROSCOPE_TOKEN=$TOKEN TESTFLAME_PYROSCOPE_TENANT=$TENANT \
		"$TF" run -v --confirm 0 --no-save --store "pyroscope:$PYRO") >out 2>err &&
	grep -Eq "pushed [23] tests" err &&
	! grep -rF -e "$TOKEN" -e "$TENANT" out err repo/testflame-report &&
	tail -n 1 pyro.log | grep -q "\"auth\":\"Bearer\".*\"tenant\":true"
'

test_expect_success 'basic auth from the config, under the environment'\''s' '
	pyro_config "{\"user\":\"1234\",\"password\":\"$PASSWORD\"}" &&
	cp repo/.testflame.yml cfg.yml && cat >>repo/.testflame.yml <<-YML &&
	pyroscope:
	  user: "1234"
	  password: $PASSWORD
	YML
	(cd repo && "$TF" run -v --confirm 0 --no-save --store "pyroscope:$PYRO") >out 2>err;
	cp cfg.yml repo/.testflame.yml &&
	grep -Eq "pushed [23] tests" err &&
	! grep -rF "$PASSWORD" out err repo/testflame-report &&
	tail -n 1 pyro.log | grep -q "\"auth\":\"Basic\"" &&
	pyro_config "{}"
'

test_expect_success 'user:password in the store URL is basic auth, never shown' '
	pyro_config "{\"user\":\"u5050\",\"password\":\"$PASSWORD\"}" &&
	URL=$(echo "$PYRO" | sed "s|http://|http://u5050:$PASSWORD@|") &&
	(cd repo && "$TF" run -v --confirm 0 --no-save --store "pyroscope:$URL") >out 2>err &&
	grep -Eq "pushed [23] tests \(1 run, [23] profiles\) to Pyroscope at '\''$PYRO'\''" err &&
	! grep -rF "$PASSWORD" out err repo/testflame-report &&
	pyro_config "{}"
'

test_expect_success 'a server without Push gets the profiles through /ingest' '
	start_pyroscope ingest && pyro_config "{\"ingest_only\":true}" &&
	(cd repo && "$TF" run --confirm 0 --no-save --store "pyroscope:$PYRO") >out 2>err &&
	run_totals repo/testflame-report/head.pb.gz >want && n=$(wc -l <want) &&
	expect_contains err "pushed $n tests (1 run, $n profiles) to Pyroscope at '\''$PYRO'\'' through /ingest" &&
	pyro_clean &&
	pyro_requests ingest >reqs && grep -q "^/push.v1.PusherService/Push 404" reqs &&
	[ "$(grep -c "^/ingest 200" reqs)" = "$n" ] &&
	pushed_totals "$MAIN" >got && diff want got &&
	pyro_state | python3 -c "
import json, sys
for p in json.load(sys.stdin)[\"profiles\"]:
    l = p[\"labels\"]
    assert p[\"via\"] == \"ingest\" and l[\"service_name\"] == \"repo\" and l[\"suite\"] == \"burn\", l
"
'

# The verdict is not what this looks at: one run against one, of a change
# to the Makefile (no control group), gates on whatever the runner did
# between them, and a CI runner slowed by a neighbour failed it once.
test_expect_success 'a commit pushed many times: the baseline is its newest run, not their sum' '
	[ "$(pyro_state | python3 -c "
import json, sys
print(len({p[\"time_ms\"] for p in json.load(sys.stdin)[\"profiles\"] if p[\"labels\"][\"service_git_ref\"] == \"$MAIN\"}))")" -ge 4 ] &&
	git clone -q repo again && (cd again && git checkout -q -b tidy && echo "# tidy" >>Makefile &&
		git commit -qam tidy && make -s all >/dev/null &&
		"$TF" run --confirm 0 --no-fail --store "pyroscope:$PYRO") >again.out 2>again.err &&
	expect_contains again.out "from Pyroscope" &&
	python3 - again/testflame-report/report.json <<\PY
import json, sys
d = json.load(open(sys.argv[1]))
t = [t for t in d["tests"] if t["name"] == "steady"][0]
assert t["base"]["samples"] > 0 and t["base"]["runs"] == 1, t
r = t["base"]["cost"] / t["head"]["cost"]
assert 0.5 < r < 1.5, ("base/head cost of an unchanged test", r, t)
PY
'

test_done
