#!/usr/bin/env bash
# t0926-node.sh - `node --test` and `npm test` (tests/fixtures/suites/
# nodeforms: two test files). testflame turns Node's perf maps on by
# itself (NODE_OPTIONS), so the JavaScript function that costs is named,
# not [unknown]; each test file is a test (node --test, run by a shell,
# is their runner, not a test); the /tmp/perf-PID.map files it
# caused are gone afterwards, while a user who asked for them keeps
# theirs; the output and exit status are the suite's own.
. "$(dirname "$0")/lib.sh"
NODEFORMS=$TOP/tests/fixtures/suites/nodeforms

if ! need node; then
	test_skip 'node --test' 'node is not installed'
	test_done
	exit
fi
cp -r "$NODEFORMS" proj
maps() { ls /tmp/perf-*.map 2>/dev/null | sort; }

test_expect_success 'node --test: functions named, a test per file, no map left, output untouched' '
	maps >before &&
	(cd proj && node --test >../plain.out 2>../plain.err; echo $? >../plain.rc) &&
	(cd proj && "$TF" record -q -o ../n.pb.gz -- sh -c "node --test" >../tf.out 2>../tf.err; echo $? >../tf.rc) &&
	maps >after && cmp before after &&
	cmp plain.rc tf.rc &&
	sed -E "s/[0-9]+\.[0-9]+/N/g" plain.out >plain.m && sed -E "s/[0-9]+\.[0-9]+/N/g" tf.out >tf.m &&
	cmp plain.m tf.m && cmp plain.err tf.err &&
	"$TF" show --json n.pb.gz >n.json && "$TF" view --format folded n.pb.gz >n.folded &&
	grep -q "burnHot" n.folded &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("n.json"))["tests"]}
	assert {"burn.test.js", "other.test.js"} <= set(t), sorted(t)
	EOF
'

test_expect_success "npm test; a user's own NODE_OPTIONS perf maps stay theirs" '
	printf "{\"name\": \"nodeforms\", \"scripts\": {\"test\": \"node --test\"}}\n" >proj/package.json &&
	maps >before &&
	(cd proj && NODE_OPTIONS=--perf-basic-prof "$TF" record -q -o ../u.pb.gz -- npm test >/dev/null 2>&1) &&
	maps >after && comm -13 before after >theirs &&
	test "$(wc -l <theirs)" -ge 3 && xargs rm -f <theirs &&
	"$TF" view --format folded u.pb.gz | grep -q "burnHot"
'

test_done
