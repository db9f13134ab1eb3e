#!/usr/bin/env bash
# t0925-cargo.sh - `cargo test` named per test (tests/fixtures/suites/crab:
# unit tests in a module, one whose name the kernel cuts at 15
# characters, one no sample sees, an integration test file, a doc-test).
# libtest runs each test in a thread named after it: every test of
# `cargo test -- --list` has its row under libtest's name, with its
# thread's CPU time, inside its binary named without cargo's hash; the
# compilers and linkers (rustc, rustdoc, rust-lld) are the build, the
# doc-tests are the crate's (one row for them all: rustdoc names them in
# threads cut at 15 characters that no symbol completes); a filter
# selects; cargo's output and exit
# status are its own.
. "$(dirname "$0")/lib.sh"
CRAB=$TOP/tests/fixtures/suites/crab

if ! need cargo; then
	test_skip 'cargo test per test' 'cargo is not installed'
	test_done
	exit
fi
export CARGO_TARGET_DIR=$SCRATCH/target
cp -r "$CRAB" crab

test_expect_success 'cargo test: every test of its list, by name, with its CPU time' '
	(cd crab && cargo build -q --tests 2>/dev/null) &&
	(cd crab && cargo test -- --list 2>/dev/null | sed -n "s/: test$//p" | grep -v " - " | sort) >list &&
	test "$(wc -l <list)" = 4 &&
	(cd crab && cargo test >../plain.out 2>&1; echo $? >../plain.rc) &&
	(cd crab && "$TF" record -q -o ../all.pb.gz -- cargo test >../tf.out 2>&1; echo $? >../tf.rc) &&
	cmp plain.rc tf.rc &&
	sed -E "s/[0-9]+\.[0-9]+ ?s/Ns/g" plain.out >plain.m && sed -E "s/[0-9]+\.[0-9]+ ?s/Ns/g" tf.out >tf.m &&
	cmp plain.m tf.m &&
	"$TF" show --json all.pb.gz >all.json &&
	python3 - <<-\EOF
	import json, re
	t = {x["name"]: x for x in json.load(open("all.json"))["tests"]}
	for n in open("list").read().split("\n"):
	    if not n:
	        continue
	    assert n in t, (n, sorted(t))
	    assert t[n]["cpu_ns"] is not None and t[n]["source"] == "markers", t[n]
	    assert t[n]["parent"] == ("outer" if n.startswith("outer") else "crab"), t[n]
	assert t["tests::spins_a_long_while_in_a_module"]["samples"] > 5
	assert "Doc-tests crab" in t, sorted(t)
	bad = [n for n in t if re.search("-[0-9a-f]{16}$", n) or n in ("rustc", "rustdoc", "rust-lld", "cc", "ld")]
	assert not bad, bad
	EOF
'

test_expect_success 'cargo test FILTER: the tests it selected' '
	(cd crab && "$TF" record -q -o ../tiny.pb.gz -- cargo test tiny >/dev/null 2>&1) &&
	"$TF" show --json tiny.pb.gz >tiny.json &&
	python3 - <<-\EOF
	import json
	t = {x["name"] for x in json.load(open("tiny.json"))["tests"]}
	assert "tests::tiny" in t and not {"outer_quick", "outer_spin", "tests::spins_a_long_while_in_a_module"} & t, sorted(t)
	EOF
'

test_done
