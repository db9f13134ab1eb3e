#!/usr/bin/env bash
# t0120-record-unwind.sh - call chains: frame pointers, DWARF unwinding of
# code built without them, and --call-graph auto choosing per binary.
. "$(dirname "$0")/lib.sh"

chain='main;level_one;level_two;level_three;burn'

test_expect_success 'DWARF unwinding recovers the full chain of -fomit-frame-pointer code' '
	"$TF" record -q --freq 999 --call-graph dwarf -o dw.pb.gz -- "$FIX/deep_nofp" 10 &&
	go tool pprof -traces dw.pb.gz 2>/dev/null >tr.txt &&
	go tool pprof -top dw.pb.gz 2>/dev/null >top.txt &&
	lt=$(cum_share top.txt level_three) && m=$(cum_share top.txt main) &&
	expect_near "$lt" 100 10 "level_three cum%" &&
	expect_near "$m" 100 10 "main cum%"
'

test_expect_success 'auto picks DWARF for that binary and says so' '
	"$TF" record -q --freq 999 -o auto.pb.gz -- "$FIX/deep_nofp" 10 &&
	go tool pprof -top auto.pb.gz 2>/dev/null >top.txt &&
	expect_near "$(cum_share top.txt level_three)" 100 10 "level_three cum%" &&
	go tool pprof -comments auto.pb.gz 2>/dev/null >c.txt &&
	grep -Eq "testflame.unwinder=auto fp=[0-9]+ dwarf=[1-9]" c.txt
'

test_expect_success 'frame pointers alone lose callers of such code (what auto fixes)' '
	"$TF" record -q --freq 999 --call-graph fp -o fp.pb.gz -- "$FIX/deep_nofp" 10 &&
	go tool pprof -top fp.pb.gz 2>/dev/null >top.txt &&
	lt=$(cum_share top.txt level_two) &&
	awk -v x="$lt" "BEGIN { exit !(x < 50) }"
'

test_expect_success 'frame-pointer code keeps full stacks with --call-graph fp' '
	"$TF" record -q --freq 999 --call-graph fp -o fp2.pb.gz -- "$FIX/split7030" 5 &&
	go tool pprof -top fp2.pb.gz 2>/dev/null >top.txt &&
	expect_near "$(cum_share top.txt main)" 100 5 "main cum%"
'

test_done
