# lib-pyroscope.sh - what the Pyroscope tests (t5050, t5051) share, sourced
# after lib.sh: the loopback Pyroscope (tests/pyroscope/server.go, built by
# `make fixtures` as $BUILD/tools/pyroscope-server), its state and knobs,
# and a tiny project whose suite runs in a second: two programs, `steady`
# and `burner`, each a test, with a branch `slow` that doubles `burner`.

PYRO_SERVER=$BUILD/tools/pyroscope-server

# Stop the servers this script started (pids kept in a file, since test
# bodies run in subshells), then do what lib.sh's trap does.
stop_pyroscopes() {
	local p
	[ -f "$SCRATCH/.pyro-pids" ] || return 0
	while read -r p; do kill "$p" 2>/dev/null; done <"$SCRATCH/.pyro-pids"
	rm -f "$SCRATCH/.pyro-pids"
}
trap 'stop_pyroscopes; [ -n "${KEEP:-}" ] || rm -rf "$SCRATCH"' EXIT

# Skip the whole script (saying why) without the server.
need_pyroscope() { # what
	[ -x "$PYRO_SERVER" ] && return 0
	test_skip "$1" "no loopback Pyroscope: $PYRO_SERVER is built by make fixtures with protobuf-compiler, golang-google-protobuf-dev and golang-github-google-pprof-dev (make deps)"
	test_done
	exit 0
}

# start_pyroscope NAME: a fresh server; its URL in $PYRO.
start_pyroscope() { # name
	local name=${1:-pyro} i
	rm -f "$SCRATCH/$name.port"
	"$PYRO_SERVER" --port-file "$SCRATCH/$name.port" --log "$SCRATCH/$name.log" \
		>"$SCRATCH/$name.out" 2>&1 &
	echo $! >>"$SCRATCH/.pyro-pids"
	for i in $(seq 100); do
		[ -s "$SCRATCH/$name.port" ] && break
		sleep 0.05
	done
	[ -s "$SCRATCH/$name.port" ] || { cat "$SCRATCH/$name.out" >&2; return 1; }
	PYRO="http://127.0.0.1:$(cat "$SCRATCH/$name.port")"
}

pyro_state() { curl -sf "$PYRO/_test/state"; }
pyro_config() { curl -sf -X POST --data "$1" "$PYRO/_test/config" >/dev/null; }
pyro_faults() { curl -sf -X POST --data "$1" "$PYRO/_test/faults" >/dev/null; }
# The requests seen, one "PATH STATUS" line each.
pyro_requests() { # name
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    print(e["path"], e["status"])' "$SCRATCH/${1:-pyro}.log"
}
# No pushed profile broke a limit, and every call was Connect (proto).
pyro_clean() {
	pyro_state | python3 -c '
import json, sys
s = json.load(sys.stdin)
for v in s["violations"]:
    print("violation:", v, file=sys.stderr)
sys.exit(1 if s["violations"] else 0)'
}

# The project in $SCRATCH/$1, committed on main and built: `make check`
# runs ./steady then ./burner; branch `slow` doubles burner's work.
make_burn_repo() { # dir
	mkdir "$1" && (
		cd "$1" && git init -q -b main && git config user.email t@example.com &&
		git config user.name t &&
		cat >burn.c <<\C &&
#include <stdio.h>
#include <stdlib.h>
#ifndef ROUNDS
#define ROUNDS 1
#endif
static volatile double sink;
static void __attribute__((noinline)) spin(long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)i * 0.5;
	sink = s;
}
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 250000000;
	for (int r = 0; r < ROUNDS; r++)
		spin(n);
	return 0;
}
C
		cat >Makefile <<\MK &&
all: steady burner
steady: burn.c
	$(CC) -O1 -g -fno-omit-frame-pointer -o $@ burn.c
burner: burn.c rounds.h
	$(CC) -O1 -g -fno-omit-frame-pointer -DROUNDS=$$(cat rounds.h) -o $@ burn.c
check: all
	./steady && ./burner
MK
		echo 1 >rounds.h &&
		cat >.testflame.yml <<\YML &&
suite: burn
command: "make -s check"
freq: 499
YML
		printf 'steady\nburner\ntestflame-report/\n' >.gitignore &&
		git add -A && git commit -qm "burn" && make -s all >/dev/null
	) || { echo "setting up the project failed" >&2; return 1; }
}

# Branch `slow` of the repository in $1: burner does two rounds.
slow_down_burner() { # dir
	(cd "$1" && git checkout -q -b slow && echo 2 >rounds.h && git commit -qam "burner: two rounds" &&
	 make -s all >/dev/null)
}

# The pushed totals of `commit` per test ("TEST SAMPLES CPU_NS" lines,
# sorted), from the newest push of each test, read from the server's
# state (which read every profile with the pprof library).
pushed_totals() { # commit
	pyro_state | python3 -c '
import json, sys
commit = sys.argv[1]
ps = [p for p in json.load(sys.stdin)["profiles"] if p["labels"].get("service_git_ref") == commit]
newest = {}
for p in ps:
    t = p["labels"]["test"]
    newest[t] = max(newest.get(t, -1), p["time_ms"])
tot = {}
for p in ps:
    t = p["labels"]["test"]
    if p["time_ms"] == newest[t]:
        a = tot.setdefault(t, [0, 0])
        a[0] += p["totals"].get("samples/count", 0)
        a[1] += p["totals"].get("cpu/nanoseconds", 0)
for t in sorted(tot):
    print(t, tot[t][0], tot[t][1])' "$1"
}

# The same totals from a run file, as `testflame show --json` reads them.
run_totals() { # run.pb.gz
	"$TF" show --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in sorted(d["tests"], key=lambda t: t["name"]):
    if t["samples"]:
        print(t["name"], t["samples"], t["value"])'
}
