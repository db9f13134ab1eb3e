#!/usr/bin/env bash
# t0110-record-tree.sh - every process and thread of the tree is sampled:
# fork/exec chains of short-lived processes, 8 threads, a suite under make
# (the cases every sampler passes: lib-record.sh, as t8010 runs them under
# ptrace).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-record.sh"

SAMPLER=perf WITH= N=0
record_tree_cases 4999

test_done
