#!/usr/bin/env bash
# follow-floor.sh - what following a process tree costs the kernel alone,
# with `perf` doing the following, by the two ways a profiler can: events
# inherited into every new process (`perf record -- CMD`, testflame's
# --follow inherit), or events that follow a cgroup holding the suite
# (`perf record -a -G`, testflame's default where allowed); and `perf
# record -a`, one event per CPU that is never switched at all. Each
# variant is timed from inside the suite, every run in the same cgroup;
# variants alternate, ROUNDS times, and each is divided by the mean of the
# round's two bare runs (the first and the last of the round).
#
#   bench/follow-floor.sh [ROUNDS] [FREQ]
#
# SUITE_DIR=DIR SUITE_CMD=CMD as for record-overhead.sh (default: the 500
# processes of many-processes.sh). Needs root and a cgroup2 hierarchy.
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-30}
FREQ=${2:-249}
SUITE_DIR=${SUITE_DIR:-$TOP/bench}
case $SUITE_DIR in /*) ;; *) SUITE_DIR=$PWD/$SUITE_DIR ;; esac
SUITE_CMD=${SUITE_CMD:-./many-processes.sh 500}

mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$mnt" ] || { echo "follow-floor.sh: no cgroup2 hierarchy is mounted" >&2; exit 1; }
CGNAME=tf-follow-floor-$$
CG=$mnt/$CGNAME
mkdir "$CG" || { echo "follow-floor.sh: cannot make the cgroup $CG (root?)" >&2; exit 1; }
trap 'rmdir "$CG" 2>/dev/null; rm -rf "$WORK"' EXIT

# the suite, moving itself into the cgroup, timing itself into $OUT
cat >"$WORK/suite.sh" <<EOF
#!/bin/sh
echo \$\$ >"$CG/cgroup.procs" || exit 1
cd "$SUITE_DIR" || exit 1
s=\$(date +%s%N)
$SUITE_CMD >/dev/null 2>&1
e=\$(date +%s%N)
echo \$(( (e - s) / 1000 )) >>"\$OUT"
EOF
chmod +x "$WORK/suite.sh"

P="perf record -q -B --no-buildid-cache"
declare -A cmd=(
	[bare]=""
	[count_inherit]="perf stat -e task-clock -x, -o $WORK/s1.txt --"
	[count_cgroup]="perf stat -e task-clock -a -G $CGNAME -x, -o $WORK/s2.txt --"
	[side_inherit]="$P -e dummy -o $WORK/d1.data --"
	[side_cgroup]="$P -e dummy -a -G $CGNAME -o $WORK/d2.data --"
	[record_inherit]="$P -e cpu-clock -F $FREQ -g -o $WORK/r1.data --"
	[record_cgroup]="$P -e cpu-clock -F $FREQ -g -a -G $CGNAME -o $WORK/r2.data --"
	[record_all]="$P -e cpu-clock -F $FREQ -g -a -o $WORK/r3.data --"
	[bare_again]=""
)
order=(bare count_inherit count_cgroup side_inherit side_cgroup record_inherit record_cgroup
       record_all bare_again)

alternate_rounds

machine
echo "workload: $SUITE_CMD in $SUITE_DIR, in a cgroup of its own, timed from inside;" \
	"$ROUNDS alternating rounds at $FREQ Hz"
echo "ratio: each run divided by the mean of its round's two bare runs"
paste "$WORK/bare.times" "$WORK/bare_again.times" | awk '{ print ($1 + $2) / 2 }' >"$WORK/base"
printf '%-16s %12s %24s\n' variant "median ms" "mean ÷ bare (95% CI)"
for v in "${order[@]}"; do
	m=$(median <"$WORK/$v.times")
	paste "$WORK/$v.times" "$WORK/base" | awk -v name="$v" -v m="$m" '
		{ r = $1 / $2; s += r; ss += r * r; n++ }
		END {
			mean = s / n; sd = n > 1 ? sqrt((ss - n * mean * mean) / (n - 1)) : 0
			half = n > 1 ? 2 * sd / sqrt(n) : 0
			printf "%-16s %12.1f %10.3f (%.3f-%.3f)\n", name, m / 1000, mean, mean - half, mean + half
		}'
done
