#!/usr/bin/env bash
# t0924-go-forms.sh - `go test ./...` as everyone runs it
# (tests/fixtures/suites/goforms: two packages, one whose tests link cgo
# through os/user). go test builds each package's test binary in a
# temporary directory and deletes it when it exits; the cgo one is
# dynamically linked, with a handful of .dynsym symbols and no symbol
# table. Every top-level test and example of `go test -list` is named,
# each inside its package's binary, the one no sample saw too, a t.Run
# closure's samples count for its test, hot.Spin is named in TestSpin,
# -run selects, and the output and exit status are go test's own. A
# result go test replays from its cache ran no test: the run says so and
# is no baseline. A package binary that ended and was deleted before
# testflame read a record of it is named all the same.
. "$(dirname "$0")/lib.sh"
GOFORMS=$TOP/tests/fixtures/suites/goforms

if ! need go; then
	test_skip 'go test ./...' 'go is not installed'
	test_done
	exit
fi
export GOCACHE=$GO_CACHE GOFLAGS=-mod=mod
cp -r "$GOFORMS" mod

test_expect_success 'go test ./...: every test of the list, in its package, symbols of deleted binaries' '
	(cd mod && go test -count=1 ./... >../plain.out 2>&1; echo $? >../plain.rc) &&
	(cd mod && "$TF" record -q -o ../all.pb.gz -- go test -count=1 ./... >../tf.out 2>&1; echo $? >../tf.rc) &&
	cmp plain.rc tf.rc &&
	sed -E "s/[0-9.]+s$/Ns/" plain.out >plain.m && sed -E "s/[0-9.]+s$/Ns/" tf.out >tf.m && cmp plain.m tf.m &&
	(cd mod && go test -list ".*" ./... | grep -E "^(Test|Example)" | sort) >list &&
	test "$(wc -l <list)" = 6 &&
	"$TF" show --json all.pb.gz >all.json && "$TF" view --format folded all.pb.gz >all.folded &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("all.json"))["tests"]}
	for n in open("list").read().split():
	    assert n in t, (n, sorted(t))
	    assert t[n]["parent"] == ("usr.test" if n in ("TestCurrent", "TestQuick") else "hot.test"), t[n]
	assert not [n for n in t if ".func" in n or n.startswith("TestTable/")], sorted(t)
	assert t["TestSpin"]["samples"] >= 5, t["TestSpin"]
	folded = open("all.folded").read()
	assert "hot.TestSpin;goforms/hot.Spin" in folded, folded[:2000]
	assert ".test+0x" not in folded, [l for l in folded.split("\n") if ".test+0x" in l][:3]
	EOF
'

test_expect_success 'go test -run: the tests it selected' '
	(cd mod && "$TF" record -q -o ../run.pb.gz -- go test -count=1 -run "Spin|Quick" ./... >/dev/null 2>&1) &&
	"$TF" show --json run.pb.gz >run.json &&
	python3 - <<-\EOF
	import json
	t = {x["name"] for x in json.load(open("run.json"))["tests"]}
	got = {n for n in t if n.startswith(("Test", "Example"))}
	assert got == {"TestSpin", "TestQuick", "ExampleSpin"}, sorted(got)
	EOF
'

# The reader late by a whole package's run, deterministically: go test's
# -exec wrapper stops testflame (the guard's parent) before the package
# binary starts and lets it go once go test has deleted it. By then the
# binary has ended and its arguments can no longer be read: the file held
# from its exec and the go command's -run still name its test.
test_expect_success 'go test: a binary gone before testflame read a record of it' '
	cat >stop.sh <<-\EOF &&
	kill -STOP $TFPID
	(i=0; while [ -e "$1" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
	 kill -CONT $TFPID) </dev/null >/dev/null 2>&1 &
	"$@"
	EOF
	cat >late.sh <<-\EOF &&
	TFPID=$(ps -o ppid= -p $PPID) && export TFPID
	exec go test -count=1 -run Quick -exec "sh $PWD/../stop.sh" ./usr
	EOF
	(cd mod && "$TF" record -q -o ../late.pb.gz -- sh ../late.sh >../late.out 2>&1) &&
	grep "^ok" late.out &&
	"$TF" show --json late.pb.gz >late.json &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("late.json"))["tests"]}
	assert "TestQuick" in t and t["TestQuick"]["parent"] == "usr.test", sorted(t)
	assert "TestCurrent" not in t, sorted(t)
	EOF
'

test_expect_success 'a result from go test'"'"'s cache: no test ran, said so, no baseline saved' '
	cd mod && printf "testflame-report/\n" >.gitignore && git init -q -b main . && git add -A &&
	git -c user.email=t@e -c user.name=t commit -qm go &&
	go test ./... >/dev/null && go test ./... | grep -q "(cached)" &&
	"$TF" run --no-publish -- go test ./... >../cached.out 2>../cached.err &&
	grep "go test ran no test binary" ../cached.err &&
	grep "not saving a baseline" ../cached.err &&
	test -z "$(git for-each-ref refs/testflame)"
'

test_done
