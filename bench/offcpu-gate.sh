#!/usr/bin/env bash
# offcpu-gate.sh - which gate.measure catches a test that starts to wait
# without failing builds that changed nothing: cpu (CPU time alone), wall
# (CPU and waiting as one time) and both (CPU time as cpu does, and the
# waiting judged on its own). Each suite is recorded RUNS times as it is
# and RUNS times with each change, the runs of all versions alternating
# (so the machine's moments fall on all alike); then every pair of runs is
# compared under each measure, as `run` judges one run against a stored
# baseline before it confirms:
#
#   false   unchanged against unchanged (all ordered pairs): the share of
#           comparisons that call any test regressed
#   caught  unchanged against each change (run i against run i): the share
#           in which the changed test is regressed
#   extra   in those, the share that call another test regressed too
#
# and with three runs a side (the confirmation's, --against's), the runs
# taken in threes. Suites: the example project (a 50 ms sleep in
# test_hash, a lock held across test_threads' hashing, an fsync of
# test_hash's input) and the waits fixture's three tests (a sleep, a
# contended mutex, an fsync, a poll on a pipe fed late, a waitpid on a
# slow child). NEIGHBOUR=1 burns a CPU throughout, as a noisy runner does.
#
#   bench/offcpu-gate.sh [RUNS] [SUITE...]      examples waits (default RUNS 6)
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
TF=$TOP/build/testflame
RUNS=${1:-6}
shift || true
SUITES=${*:-examples waits}
MEASURES="cpu wall both"
make -s -C "$TOP" all fixtures >/dev/null
W=$(mktemp -d /tmp/testflame-gate.XXXXXX)
trap 'rm -rf "$W"; [ -n "${NB:-}" ] && kill $NB 2>/dev/null' EXIT
export TESTFLAME_NO_PROGRESS=1
if [ -n "${NEIGHBOUR:-}" ]; then
	sh -c 'while :; do :; done' &
	NB=$!
fi

# ---- the example project and its changes ----
ex_patch() { # VARIANT DIR
	python3 - "$1" "$2" <<'PY'
import sys
v, d = sys.argv[1], sys.argv[2]
def edit(f, pairs):
    p = d + "/tests/" + f
    s = open(p).read()
    for a, b in pairs:
        assert a in s, (f, a)
        s = s.replace(a, b, 1)
    open(p, "w").write(s)
if v == "sleep":
    edit("test_hash.c", [("#include <string.h>\n", "#include <string.h>\n#include <unistd.h>\n"),
                         ("\tuint32_t c = 0;\n", "\tuint32_t c = 0;\n\tusleep(50000);\n")])
elif v == "lock":
    edit("test_threads.c", [("static uint64_t result[WORKERS];\n",
                             "static uint64_t result[WORKERS];\nstatic pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;\n"),
                            ("\tuint64_t h = 0;\n\tfor", "\tuint64_t h = 0;\n\tpthread_mutex_lock(&lock);\n\tfor"),
                            ("\tresult[w] = h;\n", "\tpthread_mutex_unlock(&lock);\n\tresult[w] = h;\n")])
elif v == "fsync":
    edit("test_hash.c", [("#include <string.h>\n", "#include <string.h>\n#include <fcntl.h>\n#include <unistd.h>\n"),
                         ("\tuint32_t c = 0;\n", "\tuint32_t c = 0;\n\tint fd = open(\"hash.in\", O_WRONLY | O_CREAT | O_TRUNC, 0644);\n"
                          "\tCHECK(fd >= 0 && write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) && fsync(fd) == 0);\n\tclose(fd);\n")])
PY
}

setup_examples() {
	for v in main sleep lock fsync; do
		mkdir -p "$W/ex-$v" && cp -r "$TOP/examples/." "$W/ex-$v/" && rm -rf "$W/ex-$v/build"
		[ $v = main ] || ex_patch $v "$W/ex-$v"
		make -s -C "$W/ex-$v" all >/dev/null
	done
	VERSIONS="main sleep lock fsync"
	declare -gA TARGET=([sleep]=test_hash [lock]=test_threads [fsync]=test_hash)
}
rec_examples() { # VERSION OUT
	(cd "$W/ex-$1" && "$TF" record -q -o "$2" -- make -s check >/dev/null 2>&1)
}

# ---- the waits fixture: three tests, the middle one changes ----
setup_waits() {
	mkdir -p "$W/wt"
	for t in test_a test_b test_c; do ln -sf "$TOP/build/fixtures/waits" "$W/wt/$t"; done
	VERSIONS="none sleep mutex fsync poll waitpid"
	declare -gA TARGET=([sleep]=test_b [mutex]=test_b [fsync]=test_b [poll]=test_b [waitpid]=test_b)
}
rec_waits() { # VERSION OUT
	(cd "$W/wt" && "$TF" record -q -o "$2" -- sh -c \
		"./test_a none 30 40 && ./test_b $1 30 60 && ./test_c none 30 40" >/dev/null 2>&1)
}

# regressed tests of a comparison, one per line
regressed() { # MEASURE BASES HEADS (comma-separated files)
	local args=() f
	IFS=, read -r -a b <<<"$2"
	IFS=, read -r -a h <<<"$3"
	for f in "${b[@]}"; do args+=(--base "$f"); done
	for f in "${h[@]}"; do args+=(--head "$f"); done
	"$TF" compare --json --measure "$1" --report "$W/r" "${args[@]}" 2>/dev/null |
		jq -r '.tests[] | select(.verdict == "regressed" and .gated) | .name'
}

machine() {
	echo "machine: $(nproc) cores, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)${NEIGHBOUR:+, a CPU neighbour throughout}"
}

machine
for s in $SUITES; do
	setup_$s
	base=${VERSIONS%% *}
	for r in $(seq "$RUNS"); do
		for v in $VERSIONS; do rec_$s $v "$W/$s-$v-$r.pb.gz"; done
	done
	echo "== $s: $RUNS runs of each of $VERSIONS (load $(cut -d' ' -f1 /proc/loadavg))"
	printf '%-8s %-10s %10s %10s %10s\n' measure change "caught" "extra" "false"
	for m in $MEASURES; do
		# unchanged against unchanged: every ordered pair of single runs
		fp=0 np=0
		for i in $(seq "$RUNS"); do for j in $(seq "$RUNS"); do
			[ $i = $j ] && continue
			n=$(regressed $m "$W/$s-$base-$i.pb.gz" "$W/$s-$base-$j.pb.gz" | wc -l)
			np=$((np + 1)); [ "$n" -gt 0 ] && fp=$((fp + 1))
		done; done
		for v in ${VERSIONS#* }; do
			c=0 e=0
			for i in $(seq "$RUNS"); do
				regressed $m "$W/$s-$base-$i.pb.gz" "$W/$s-$v-$i.pb.gz" >"$W/reg"
				grep -qx "${TARGET[$v]}" "$W/reg" && c=$((c + 1))
				grep -vqx "${TARGET[$v]}" "$W/reg" && e=$((e + 1))
			done
			printf '%-8s %-10s %7d/%-2d %7d/%-2d %7d/%-2d\n' $m $v $c "$RUNS" $e "$RUNS" $fp $np
		done
		# three runs a side
		if [ "$RUNS" -ge 6 ]; then
			b3="$W/$s-$base-1.pb.gz,$W/$s-$base-2.pb.gz,$W/$s-$base-3.pb.gz"
			h3="$W/$s-$base-4.pb.gz,$W/$s-$base-5.pb.gz,$W/$s-$base-6.pb.gz"
			n=$(regressed $m "$b3" "$h3" | wc -l)
			line="$m 3v3: unchanged $n regressed;"
			for v in ${VERSIONS#* }; do
				v3="$W/$s-$v-4.pb.gz,$W/$s-$v-5.pb.gz,$W/$s-$v-6.pb.gz"
				regressed $m "$b3" "$v3" >"$W/reg"
				line="$line $v $(grep -qx "${TARGET[$v]}" "$W/reg" && echo caught || echo missed)$(grep -vqx "${TARGET[$v]}" "$W/reg" && echo +extra || true)"
			done
			echo "$line"
		fi
	done
done
