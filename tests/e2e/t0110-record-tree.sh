#!/usr/bin/env bash
# t0110-record-tree.sh - every process and thread of the tree is sampled:
# fork/exec chains of short-lived processes, and 8 threads.
. "$(dirname "$0")/lib.sh"

test_expect_success 'a fork/exec tree of 15 short processes: every one is present' '
	"$TF" record -q --freq 4999 -o tree.pb.gz -- "$FIX/forktree" 3 2 &&
	go tool pprof -raw tree.pb.gz 2>/dev/null >raw.txt &&
	grep -o "pid:\[[0-9]*\]" raw.txt | sort -u >pids &&
	expect_eq "$(wc -l <pids)" 15 "distinct pids with samples" &&
	go tool pprof -top tree.pb.gz 2>/dev/null >top.txt &&
	expect_contains top.txt leaf_work
'

test_expect_success 'processes of a few milliseconds are recorded with their mappings' '
	go tool pprof -traces tree.pb.gz 2>/dev/null >traces.txt &&
	grep -q "leaf_work" traces.txt && grep -q "main" traces.txt &&
	! grep -q "^ *0x" traces.txt
'

test_expect_success '8 threads: every worker function and thread is sampled' '
	"$TF" record -q --freq 999 -o thr.pb.gz -- "$FIX/threads8" 8 20 &&
	go tool pprof -top thr.pb.gz 2>/dev/null >top.txt &&
	for i in 0 1 2 3 4 5 6 7; do expect_contains top.txt "worker_$i" || exit 1; done &&
	go tool pprof -raw thr.pb.gz 2>/dev/null | grep -o "tid:\[[0-9]*\]" | sort -u >tids &&
	test "$(wc -l <tids)" -ge 8
'

test_expect_success 'the example suite under make: all its test programs appear' '
	cp -r "$TOP/examples" ex && make -s -C ex all >/dev/null &&
	"$TF" record -q -o ex.pb.gz -- make -s -C ex check >out &&
	expect_contains out "test_spawn: ok" &&
	go tool pprof -raw ex.pb.gz 2>/dev/null >raw.txt &&
	for p in test_matrix test_primes test_sort test_threads rle_helper; do
		grep -q "process:\[$p\]" raw.txt || { echo "missing process $p"; exit 1; }
	done &&
	go tool pprof -top ex.pb.gz 2>/dev/null >top.txt &&
	for f in matrix_multiply primes_sieve sort_merge hash_fnv1a rle_compress; do
		expect_contains top.txt $f || exit 1
	done
'

test_done
