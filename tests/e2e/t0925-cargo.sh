#!/usr/bin/env bash
# t0925-cargo.sh - `cargo test` named per test (tests/fixtures/suites/crab:
# unit tests in a module, one whose name the kernel cuts at 15
# characters, one no sample sees, two whose first 15 characters are the
# same with an ignored one between, two integration test files with a
# test of the same name, two doc-tests). libtest runs each test in a
# thread named after it: every test of `cargo test -- --list` that runs
# has its row under libtest's name, with its thread's CPU time, inside its
# binary named without cargo's hash (the same name in two binaries is two
# tests, BINARY::NAME); the doc-tests by their names, each its program's
# exact cost; the compilers and linkers (rustc, rustdoc, rust-lld) and
# the crate's build script are the build; a filter selects; cargo's output
# and exit status are its own. `show` says which rows hold tests (their
# measured cost is the whole binary's).
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
	(cd crab && cargo test -- --list 2>/dev/null | sed -n "s/: test$//p" | sort) >list &&
	(cd crab && cargo test -- --list --ignored 2>/dev/null | sed -n "s/: test$//p" | sort) >ignored &&
	test "$(wc -l <list)" = 11 && test "$(cat ignored)" = tests::jaro_winkler_ab &&
	(cd crab && cargo test >../plain.out 2>&1; echo $? >../plain.rc) &&
	(cd crab && "$TF" record -q -o ../all.pb.gz -- cargo test >../tf.out 2>&1; echo $? >../tf.rc) &&
	cmp plain.rc tf.rc &&
	sed -E "s/[0-9]+\.[0-9]+ ?s/Ns/g" plain.out | sort >plain.m && sed -E "s/[0-9]+\.[0-9]+ ?s/Ns/g" tf.out | sort >tf.m &&
	cmp plain.m tf.m &&
	"$TF" show --json all.pb.gz >all.json &&
	"$TF" show all.pb.gz >all.txt &&
	python3 - <<-\EOF
	import json, re
	# the binaries hold their tests: the text says their measure is whole
	held = [l for l in open("all.txt") if l.startswith("Holding tests")]
	assert len(held) == 1 and sorted(held[0].split("): ", 1)[1].strip().split(", ")) == ["crab", "inner", "outer"], held
	t = {x["name"]: x for x in json.load(open("all.json"))["tests"]}
	want = set(open("list").read().split("\n")) - set(open("ignored").read().split("\n")) - {"", "same"}
	want |= {"outer::same", "inner::same"}
	for n in want:
	    assert n in t, (n, sorted(t))
	    if " - " in n:  # a doc-test: its program
	        assert t[n]["count"] is not None and t[n]["source"] == "process", t[n]
	        continue
	    assert t[n]["cpu_ns"] is not None and t[n]["source"] == "markers", t[n]
	    parent = "crab" if n.startswith("tests::") else "inner" if n.startswith("inner") else "outer"
	    assert t[n]["parent"] == parent, t[n]
	extra = set(t) - want - {"crab", "outer", "inner", "[outside tests]"}
	assert not extra, sorted(extra)
	assert t["tests::spins_a_long_while_in_a_module"]["samples"] > 5
	# the two of one cut name: the one that spins is the one sampled
	assert t["tests::jaro_winkler_b"]["samples"] > 5 >= t["tests::jaro_winkler_a"]["samples"], t
	assert t["outer::same"]["samples"] > t["inner::same"]["samples"], t
	bad = [n for n in t if re.search("-[0-9a-f]{16}$", n) or n in ("rustc", "rustdoc", "rust-lld", "cc", "ld")]
	assert not bad, bad
	EOF
'

test_expect_success 'cargo test FILTER: the tests it selected; a build script it reruns is the build' '
	touch crab/build.rs &&
	(cd crab && "$TF" record -q -o ../tiny.pb.gz -- cargo test tiny >/dev/null 2>&1) &&
	"$TF" show --json tiny.pb.gz >tiny.json &&
	python3 - <<-\EOF
	import json
	t = {x["name"] for x in json.load(open("tiny.json"))["tests"]}
	assert "tests::tiny" in t and not {"outer_quick", "outer_spin", "tests::spins_a_long_while_in_a_module"} & t, sorted(t)
	assert not [n for n in t if " - " in n], sorted(t)  # no doc-test matched
	assert not [n for n in t if n.startswith("build-script") or n in ("rustc", "crab-build")], sorted(t)
	EOF
'

test_done
