#!/usr/bin/env bash
# t0130-record-config.sh - `record` with .testflame.yml (command, suite,
# freq, attribution) under command-line flags, and the git context tags.
. "$(dirname "$0")/lib.sh"

git init -q repo && cd repo && git config user.email t@example.com && git config user.name t &&
	git commit -q --allow-empty -m first && cd ..

test_expect_success 'the config supplies command, suite and frequency' '
	cd repo && cat >.testflame.yml <<-EOF &&
	suite: demo-suite
	command: ["$FIX/split7030", "2"]
	freq: 499
	EOF
	"$TF" record -q -o r.pb.gz &&
	go tool pprof -comments r.pb.gz 2>/dev/null >c.txt &&
	expect_contains c.txt "testflame.suite=demo-suite" &&
	expect_contains c.txt "testflame.freq=499" &&
	expect_contains c.txt "testflame.command=$FIX/split7030 2"
'

test_expect_success 'flags win over the config' '
	cd repo && "$TF" record -q --freq 199 --suite other -o r2.pb.gz -- "$FIX/split7030" 1 &&
	go tool pprof -comments r2.pb.gz 2>/dev/null >c.txt &&
	expect_contains c.txt "testflame.suite=other" &&
	expect_contains c.txt "testflame.freq=199"
'

test_expect_success 'a string command runs with sh -c' '
	cd repo && printf "command: \"exit 5\"\n" >.testflame.yml &&
	{ "$TF" record -q -o r3.pb.gz; test $? = 5; }
'

test_expect_success 'the run file carries the git context' '
	cd repo && "$TF" record -q -o r4.pb.gz -- true &&
	go tool pprof -comments r4.pb.gz 2>/dev/null >c.txt &&
	expect_contains c.txt "testflame.commit=$(git rev-parse HEAD)" &&
	expect_contains c.txt "testflame.branch=$(git symbolic-ref --short HEAD)" &&
	expect_contains c.txt "testflame.ci=local"
'

test_expect_code 2 'a malformed config: one line with file:line:column, exit 2' '
	cd repo && printf "suite: x\nfreq: [1\n" >.testflame.yml &&
	"$TF" record -o r5.pb.gz -- true 2>err; rc=$?
	test $(wc -l <err) = 1 && grep -q "^testflame: .testflame.yml:[0-9]*:[0-9]*: " err &&
	test ! -e r5.pb.gz && exit $rc
'

test_expect_code 2 'an unknown key names the key and its position' '
	cd repo && printf "suite: x\nfrq: 3\n" >.testflame.yml &&
	"$TF" record -- true 2>err; rc=$?
	expect_contains err ".testflame.yml:2:1: unknown key '\''frq'\''" && exit $rc
'

test_expect_code 2 'no command anywhere is a usage error' '
	cd repo && rm -f .testflame.yml && "$TF" record 2>err; rc=$?
	expect_contains err "no command" && exit $rc
'

cat >patterns.yml <<\EOF
attribution:
  patterns:
    - regex: '^(hot|cold)_(seventy|thirty)$'
      name: 'split \1'
EOF

test_expect_success 'a custom frame pattern from the config names tests' '
	cd repo && cp ../patterns.yml .testflame.yml &&
	"$TF" record -q --freq 999 -o r6.pb.gz -- "$FIX/split7030" 4 &&
	test "$(test_samples r6.pb.gz "split hot")" -gt 0 &&
	test "$(test_samples r6.pb.gz "split cold")" -gt 0
'

test_done
