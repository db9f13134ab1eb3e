#!/usr/bin/env bash
# t0150-symbol-cache.sh - the user cache of symbols: this boot's kallsyms,
# uncompressed copies of compressed debug info (libc6-dbg's) and the answers
# kept by build-id are made by the first run, used by the next, give the
# same symbols, live where XDG says, and can be turned off; a cache that
# cannot be written costs nothing else.
. "$(dirname "$0")/lib.sh"

# a run that spends its time in libc (read, write) and in the kernel, long
# enough (a second of CPU, ~1000 samples) that vfs_read, a few percent of it
# by itself, has samples of its own in every run. What a 4k read and write
# cost differs tenfold from machine to machine and from hour to hour (2
# million took half a second, or five seconds on a VM where other
# profilers ran), so dd stops at a second of CPU (RLIMIT_CPU) if it has
# not read its 2 million blocks by then.
workload() { # OUT LOG [env...]
	local out=$1 log=$2; shift 2
	env "$@" "$TF" record -v --freq 999 -o "$out" -- \
		sh -c 'ulimit -t 1 && dd if=/dev/zero of=/dev/null bs=4k count=2000000; true' 2>"$log" >/dev/null
}

test_expect_success 'the first run makes the cache under XDG_CACHE_HOME' '
	workload one.pb.gz one.log -u TESTFLAME_CACHE_DIR XDG_CACHE_HOME="$PWD/xdg" &&
	expect_contains one.log "kernel symbols read from /proc/kallsyms" &&
	test -s xdg/testflame/kallsyms &&
	ls xdg/testflame/debug/*.debug >debugs &&
	test "$(stat -c %a xdg/testflame/debug)" = 700 &&
	! ls xdg/testflame/*.tmp.* xdg/testflame/debug/*.tmp.* 2>/dev/null
'

# the kernel's and libc's functions of a run, with libc's file:line
symbols() { # PROFILE OUT
	{ go tool pprof -lines -top "$1" 2>/dev/null | grep -o -E " (__read|write) [^ ]*:[0-9]+" |
		sed "s/^ //" &&
	  "$TF" view --format text "$1" | grep -o -w -E "vfs_read|vfs_write|read_zero"
	} | sort -u >"$2"
}

# The lines of OTHER whose function SYMS has too, at another file: the
# same function must come from the same file in both runs. Which of its
# lines a run of a hundred samples happens to hit varies (write.c:26 in
# one run, :26 and :27 in the next), so lines are not compared.
differ() { # SYMS OTHER
	awk '{ k = $0; sub(/:[0-9]+$/, "", k) }
	     NR == FNR { seen[k]; fn[$1]; next }
	     ($1 in fn) && !(k in seen)' "$1" "$2"
}

# libc'"'"'s addresses come from its cached debug copy, or from the answers
# kept by build-id (then its DWARF is not opened at all); no copy made by
# the first run is made again
test_expect_success 'the second run uses it and gives the same symbols' '
	stat -c "%n %i %Y" $(cat debugs) >debugs.before &&
	workload two.pb.gz two.log -u TESTFLAME_CACHE_DIR XDG_CACHE_HOME="$PWD/xdg" &&
	expect_contains two.log "kernel symbols from the cache" &&
	{ grep -q "[1-9][0-9]* debug file(s) from the cache" two.log ||
	  grep -q "answered by the kept symbols of [1-9]" two.log; } &&
	stat -c "%n %i %Y" $(cat debugs) >debugs.after &&
	cmp debugs.before debugs.after &&
	symbols one.pb.gz one.sym && symbols two.pb.gz two.sym &&
	expect_contains two.sym "vfs_read" &&
	expect_contains two.sym "read_zero" &&
	expect_contains two.sym "__read ../sysdeps/unix/sysv/linux/read.c:" &&
	expect_contains two.sym "write ../sysdeps/unix/sysv/linux/write.c:" &&
	expect_contains one.sym "__read ../sysdeps/unix/sysv/linux/read.c:" &&
	{ differ one.sym two.sym && differ two.sym one.sym; } >diff.sym &&
	{ test ! -s diff.sym || { cat diff.sym >&2; false; }; }
'

test_expect_success 'TESTFLAME_CACHE_DIR=off writes nothing' '
	mkdir home &&
	workload off.pb.gz off.log -u XDG_CACHE_HOME TESTFLAME_CACHE_DIR=off HOME="$PWD/home" &&
	expect_contains off.log "kernel symbols read from /proc/kallsyms" &&
	test -z "$(ls -A home)"
'

test_expect_success 'without XDG_CACHE_HOME the cache is ~/.cache/testflame' '
	mkdir home2 &&
	workload h.pb.gz h.log -u TESTFLAME_CACHE_DIR -u XDG_CACHE_HOME HOME="$PWD/home2" &&
	test -s home2/.cache/testflame/kallsyms
'

test_expect_success 'a cache that cannot be written is no error' '
	touch afile &&
	workload ro.pb.gz ro.log TESTFLAME_CACHE_DIR="$PWD/afile/cache" &&
	test -s ro.pb.gz &&
	expect_contains ro.log "kernel symbols read from /proc/kallsyms" &&
	expect_not_contains ro.log "error"
'

test_done
