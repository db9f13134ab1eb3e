#!/usr/bin/env bash
# t3003-config.sh - .testflame.yml at the work tree's root: read from any
# subdirectory, every mistake one "FILE:LINE:COLUMN: ..." line and exit 2,
# command-line flags over the file.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/context-lib.sh"

test_expect_success 'a repository with a config at its root' '
	git init -q -b main proj && mkdir -p proj/src/deep &&
	cat > proj/.testflame.yml <<-\EOF &&
	# perf gate for the unit tests
	suite: unit
	command: [make, check]
	freq: 199
	target_branch: develop
	attribution:
	  frames: [cmocka]
	  patterns:
	    - regex: "^bench_(.*)$"
	      name: bench/\1
	gate:
	  threshold: 3%
	  confidence: 0.99
	store: dir:.testflame-store
	publish:
	  comment: false
	EOF
	(cd proj/src/deep && clean "$TFC" config) > cfg.txt &&
	expect_contains cfg.txt "path=../../.testflame.yml" &&
	expect_contains cfg.txt "suite=unit" &&
	expect_contains cfg.txt "command=make,check" &&
	expect_contains cfg.txt "command.shell=false" &&
	expect_contains cfg.txt "freq=199" &&
	expect_contains cfg.txt "attribution.frames=cmocka" &&
	expect_contains cfg.txt "attribution.patterns=^bench_(.*)$ -> bench/\\1" &&
	expect_contains cfg.txt "gate.threshold=3" &&
	expect_contains cfg.txt "gate.alpha=0.01" &&
	expect_contains cfg.txt "store=dir:.testflame-store" &&
	expect_contains cfg.txt "publish.comment=false"
'

test_expect_success 'flags win over the file; what they do not set stays' '
	(cd proj && clean "$TFC" config --freq 997 --target-branch main --command "make quick") > f.txt &&
	expect_contains f.txt "freq=997" &&
	expect_contains f.txt "target_branch=main" &&
	expect_contains f.txt "command=make quick" &&
	expect_contains f.txt "command.shell=true" &&
	expect_contains f.txt "suite=unit" &&
	expect_contains f.txt "gate.threshold=3"
'

test_expect_success 'the config target branch is what the context compares with' '
	(cd proj && git commit -q --allow-empty -m a && git branch develop &&
	 clean "$TFC" context) > ctx.json 2>/dev/null &&
	expect_eq "$(jfield ctx.json base_branch)" develop
'

# bad CONTENT WANT: exit 2 and exactly the one line WANT on stderr
bad() {
	printf "%b" "$1" > proj/.testflame.yml &&
	(cd proj && clean "$TFC" config) > out 2> err
	rc=$?
	cat err >&2
	test $rc = 2 || { echo "exit $rc, expected 2" >&2; return 1; }
	test "$(wc -l < err)" = 1 || { echo "expected one line" >&2; return 1; }
	expect_eq "$(cat err)" "$2" message && test ! -s out
}

test_expect_success 'YAML syntax error: libyaml'"'"'s position' '
	bad "suite: unit\n  freq: 3\n" \
	    "testflame: .testflame.yml:2:7: mapping values are not allowed in this context"
'

test_expect_success 'unclosed quote' '
	bad "suite: \"unit\nfreq: 3\n" \
	    "testflame: .testflame.yml:3:1: found unexpected end of stream (while scanning a quoted scalar at line 1, column 8)"
'

test_expect_success 'unknown key, with a suggestion' '
	bad "suite: unit\ngate:\n  treshold: 5\n" \
	    "testflame: .testflame.yml:3:3: unknown key '"'"'treshold'"'"' in '"'"'gate'"'"' (did you mean '"'"'threshold'"'"'?)"
'

test_expect_success 'bad value: freq out of range' '
	bad "freq: 50000\n" \
	    "testflame: .testflame.yml:1:7: '"'"'freq'"'"' must be a whole number between 1 and 10000"
'

test_expect_success 'gate.threshold out of range: refused when the file is read, by run and compare alike' '
	msg="testflame: .testflame.yml:2:14: '"'"'gate.threshold'"'"' must be a percentage from 0 to below 1000, such as 5 or 2.5%, not '"'"'2000'"'"'" &&
	bad "gate:\n  threshold: 2000\n" "$msg" &&
	printf "main;a 100\n" > proj/a.folded &&
	(cd proj && clean "$TF" run -- true) > out 2> err; test $? = 2 &&
	expect_eq "$(cat err)" "$msg" run &&
	(cd proj && clean "$TF" compare a.folded a.folded) > out 2> err; test $? = 2 &&
	expect_eq "$(cat err)" "$msg" compare && test ! -e proj/testflame-report
'

test_expect_success 'bad regex names its position' '
	bad "attribution:\n  patterns:\n    - \"^test_([a-z\"\n" \
	    "testflame: .testflame.yml:3:7: bad regex '"'"'^test_([a-z'"'"' in '"'"'attribution.patterns'"'"': Unmatched [, [^, [:, [., or [="
'

test_expect_success 'wrong type' '
	bad "publish:\n  comment: [yes]\n" \
	    "testflame: .testflame.yml:2:12: '"'"'publish.comment'"'"' must be true or false"
'

test_expect_success 'the file name is relative to where testflame runs' '
	printf "suite: [x]\n" > proj/.testflame.yml &&
	(cd proj/src && clean "$TFC" config) 2> err; test $? = 2 &&
	expect_eq "$(cat err)" "testflame: ../.testflame.yml:1:8: '"'"'suite'"'"' must be a string, not a list" &&
	(cd proj && clean "$TFC" config --config "$SCRATCH/nope.yml") 2> err2; test $? = 2 &&
	expect_contains err2 "nope.yml'"'"': No such file or directory"
'

test_done
