#!/usr/bin/env bash
# t5052-pyroscope-limits.sh - profiles past Pyroscope's documented limits
# are split, not refused: a test of 40,000 distinct stacks goes as three
# profiles of at most 16,000 samples, one whose names make it larger than
# 4 MiB as several smaller ones, a sample type spelled with '-' goes as
# '_', and every profile is timestamped inside the ingestion window. The
# loopback server reads each with Go's pprof library and refuses (400)
# whatever breaks a limit, as Pyroscope does; the totals that arrive are
# the file's.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-pyroscope.sh"

need_pyroscope 'Pyroscope limits'
start_pyroscope || exit 1
MKPPROF="python3 $TOP/tests/e2e/mkpprof.py"
PUSH=$BUILD/tools/tf-pyroscope
COMMIT=1234567890abcdef1234567890abcdef12345678

python3 - >spec <<\PY
# big: 40,000 distinct stacks; wide: 1,500 samples whose leaf names are
# 3,000 bytes each (about 4.6 MB uncompressed); small: two stacks.
for i in range(40000):
    print("big 1 main;run_big;f%d@big.c:%d" % (i, i % 500 + 1))
for i in range(1500):
    print("wide 2 main;w%04d%s@wide.c:7" % (i, "x" * 2995))
print("small 3 main;a@s.c:1")
print("small 4 main;b@s.c:2")
PY

test_expect_success 'a run file past the limits is pushed whole, in profiles within them' '
	$MKPPROF big.pb.gz --type cpu-clock/nanoseconds --meta suite=limits <spec &&
	"$PUSH" push "$PYRO" big.pb.gz acme/limits $COMMIT limits cpu-clock-perf-x86_64 >out 2>err &&
	expect_contains out "tests=3 series=3 profiles=" && expect_contains out "refused=0 ingest=0" &&
	pyro_clean
'

test_expect_success 'each profile within 16,000 samples and 4 MiB; totals are the file'\''s' '
	pyro_state | python3 -c "
import json, sys
ps = json.load(sys.stdin)[\"profiles\"]
by = {}
for p in ps:
    t = p[\"labels\"][\"test\"]
    assert p[\"samples\"] <= 16000, (t, p[\"samples\"])
    assert p[\"uncompressed_bytes\"] <= 4 << 20, (t, p[\"uncompressed_bytes\"])
    assert \"cpu-clock/nanoseconds\" not in p[\"totals\"], p[\"totals\"]
    a = by.setdefault(t, [0, 0, 0])
    a[0] += 1
    a[1] += p[\"totals\"][\"samples/count\"]
    a[2] += p[\"totals\"][\"cpu_clock/nanoseconds\"]
assert by[\"big\"][0] == 3, by
assert by[\"wide\"][0] >= 2, by
assert by[\"small\"][0] == 1, by
assert by[\"big\"][1] == 40000 and by[\"big\"][2] == 40000 * 10000000, by
assert by[\"wide\"][1] == 3000 and by[\"small\"][1] == 7, by
"
'

test_expect_success 'the profiles are timestamped now, not when the file was recorded' '
	$MKPPROF old.pb.gz <<-\SPEC &&
	t 5 main;x
	SPEC
	"$PUSH" push "$PYRO" old.pb.gz acme/limits ffff limits cpu-clock-perf-x86_64 >out &&
	pyro_clean &&
	pyro_state | python3 -c "
import json, sys, time
ps = [p for p in json.load(sys.stdin)[\"profiles\"] if p[\"labels\"][\"service_git_ref\"] == \"ffff\"]
assert len(ps) == 1 and abs(ps[0][\"time_ms\"] / 1000 - time.time()) < 60, ps
"
'

test_expect_success 'the server refuses what breaks a limit (so the checks above can fail)' '
	gunzip -c big.pb.gz >big.pb &&
	code=$(curl -s -o resp -w "%{http_code}" --data-binary @big.pb \
		"$PYRO/ingest?name=acme%7Bsuite%3Dlimits%7D&format=pprof") &&
	expect_eq "$code" 400 "status" && expect_contains resp "exceeds the size limit (4194304)" &&
	! pyro_clean 2>/dev/null &&
	head -n 40000 spec | $MKPPROF many.pb.gz --meta suite=limits && gunzip -c many.pb.gz >many.pb &&
	code=$(curl -s -o resp -w "%{http_code}" --data-binary @many.pb \
		"$PYRO/ingest?name=acme%7Bsuite%3Dlimits%7D&format=pprof") &&
	expect_eq "$code" 400 "status" && expect_contains resp "has 40000 samples, limit 16000"
'

test_done
