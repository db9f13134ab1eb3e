#!/usr/bin/env bash
# memory-floor.sh - what the allocation sampler costs one short process,
# taken apart: the CPU time (user + system, the kernel's own count for
# the child) of the same program started bare, with a library preloaded
# that does nothing (the dynamic loader's price of one more library: the
# floor of any LD_PRELOAD tool, heaptrack's included), with the sampler
# preloaded but not asked to sample (its wrappers only), with the sampler
# making its own file (as without testflame), and with the sampler taking
# a file from the pool testflame keeps made ahead (the script keeps it
# filled between runs, as testflame does, untimed).
#
# The variants alternate run by run, ROUNDS times, each run a process of
# its own started by posix_spawn; medians and first quartiles, and each
# one's difference to bare in microseconds, and the page faults.
#
#   WORK=/work/rw bench/memory-floor.sh [ROUNDS] [PROGRAM ARGS...]
#
# Without a program: jansson's test_array and json_process over one of its
# test cases, built by bench/memory-overhead.sh in WORK/memory/jansson.
RW=${WORK:-/work/rw}
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-400}
shift || true
bench_build

cc -O2 -shared -fPIC -o "$WORK/empty.so" -x c - <<\C
void tf_bench_nothing(void) {}
C

progs=()
if [ $# -gt 0 ]; then
	progs+=("$*")
else
	j=$RW/memory/jansson
	[ -x "$j/build/bin/test_array" ] || {
		echo "memory-floor.sh: no jansson build in $j (run WORK=$RW bench/memory-overhead.sh 1 jansson once)" >&2
		exit 2
	}
	progs+=("$j/build/bin/test_array")
	progs+=("$j/build/bin/json_process --strip $j/test/suites/valid/simple-int-123")
fi

machine
printf '%s\n' "${progs[@]}" | LIB="$TOP/build/libtestflame-alloc.so" EMPTY="$WORK/empty.so" \
	DIR="$WORK" ROUNDS="$ROUNDS" python3 -c '
import os, shlex, shutil, statistics, sys

lib, empty, work, rounds = os.environ["LIB"], os.environ["EMPTY"], os.environ["DIR"], int(os.environ["ROUNDS"])
progs = [shlex.split(l) for l in sys.stdin.read().splitlines() if l.strip()]
own, pool = work + "/own", work + "/pool"
# the sizes of format.h: the header, 1023 slots of 64 bytes, 1 MiB of records
POOL_SIZE = 4096 + 1023 * 64 + (1 << 20)
base = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TESTFLAME_ALLOC_DIR")}
variants = [
    ("bare", {}),
    ("empty library", {"LD_PRELOAD": empty}),
    ("sampler, not asked", {"LD_PRELOAD": lib}),
    ("sampler, own file", {"LD_PRELOAD": lib, "TESTFLAME_ALLOC_DIR": own}),
    ("sampler, pooled", {"LD_PRELOAD": lib, "TESTFLAME_ALLOC_DIR": pool}),
]
made = 0

def fresh():
    global made
    for d in (own, pool):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    open(pool + "/ctl", "wb").close()
    made = 0
    refill()

def refill():
    # as testflame: files past the claims, each named once complete
    global made
    made = max(made, os.stat(pool + "/ctl").st_size)
    while made < os.stat(pool + "/ctl").st_size + 4:
        fd = os.open("%s/t.%d" % (pool, made), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.posix_fallocate(fd, 0, POOL_SIZE)
        os.close(fd)
        os.rename("%s/t.%d" % (pool, made), "%s/p.%d" % (pool, made))
        made += 1

cpu = {(p, v): [] for p in range(len(progs)) for v, _ in variants}
flt = {(p, v): [] for p in range(len(progs)) for v, _ in variants}
for r in range(rounds):
    if r % 50 == 0:
        fresh() # a directory of a few hundred files, as a suite leaves it
    for p, argv in enumerate(progs):
        for name, extra in variants:
            env = dict(base, **extra)
            pid = os.posix_spawn(argv[0], argv, env, file_actions=[
                (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0), (os.POSIX_SPAWN_DUP2, 1, 2)])
            _, status, ru = os.wait4(pid, 0)
            if status:
                sys.exit("memory-floor.sh: %s failed under %s (status %d)" % (argv[0], name, status))
            cpu[(p, name)].append((ru.ru_utime + ru.ru_stime) * 1e6)
            flt[(p, name)].append(ru.ru_minflt + ru.ru_majflt)
            refill()
print("rounds: %d, alternating; CPU of each process, microseconds" % rounds)
for p, argv in enumerate(progs):
    print()
    print("program: %s" % " ".join(os.path.basename(a) if a.startswith("/") else a for a in argv))
    print("%-20s %10s %8s %10s %8s %7s" % ("variant", "median", "+ bare", "1st qu.", "+ bare", "faults"))
    q = lambda v: statistics.quantiles(v, n=4)[0]
    bm, bq = statistics.median(cpu[(p, "bare")]), q(cpu[(p, "bare")])
    for name, _ in variants:
        m, lo = statistics.median(cpu[(p, name)]), q(cpu[(p, name)])
        print("%-20s %10.0f %8.0f %10.0f %8.0f %7.0f" % (name, m, m - bm, lo, lo - bq,
                                                        statistics.median(flt[(p, name)])))
'
echo
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
