#!/usr/bin/env bash
# record-overhead.sh - what recording costs the measured suite: the wall
# time of the example project's test suite (`make -C examples check`:
# CPU-bound, several processes, a multi-threaded test, forked helpers),
# measured by the suite's own wrapper so that only the time the suite runs
# counts (not the profiler's start-up or its work after the suite ends,
# which bench/postprocess.sh measures). Variants: bare, `testflame record`
# (frame pointers, DWARF, auto), `perf record` (-g, --call-graph dwarf) and
# the floor, `perf record -g -a` (perf_a: one event per CPU, never switched
# or inherited), all at the same frequency. Runs alternate, ROUNDS times; medians and the
# paired ratios to bare (median and interquartile range) come from this one
# run.
#
#   bench/record-overhead.sh [ROUNDS] [FREQ]
#
# SUITE_DIR=DIR SUITE_CMD=CMD measures another suite built in DIR (e.g.
# jansson's, from bench/realworld.sh: SUITE_DIR=WORK/jansson/build
# SUITE_CMD=ctest; or SUITE_DIR=bench SUITE_CMD="./many-processes.sh 500",
# 500 processes of a millisecond, where following a process is all that
# costs). OLD_TF=PATH adds an older testflame build (frame
# pointers) as the variant tf_old, to measure a change of the recorder
# side by side. VARIANTS="bare tf_fp ..." picks the variants; perf_a_cg is
# the floor filtered to a cgroup the suite moves into (`perf record -g -a
# -G`, the way testflame follows by default; root and cgroup2), and
# perf_a_cg_sw the same with --switch-events, as testflame records them. Besides the
# median and IQR, the mean paired ratio is printed with its 95% interval:
# on a VM whose runs wander by 10%, the interval says which differences
# the rounds resolved.
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-15}
FREQ=${2:-99}
bench_build
SUITE_DIR=${SUITE_DIR:-$TOP/examples}
case $SUITE_DIR in /*) ;; *) SUITE_DIR=$PWD/$SUITE_DIR ;; esac
SUITE_CMD=${SUITE_CMD:-make -s check}

# perf_a_cg's cgroup, when one can be made
CGMNT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CGNAME=tf-record-overhead-$$
if [ -n "$CGMNT" ] && mkdir "$CGMNT/$CGNAME" 2>/dev/null; then
	trap 'rmdir "$CGMNT/$CGNAME" 2>/dev/null; rm -rf "$WORK"' EXIT
else
	CGNAME=
fi

# the suite, timing itself into $OUT (in SUITE_CG's cgroup when given):
# its wall time, and into $OUT.cpu the CPU time of its processes (user +
# system of the children bash waited for, by its `time`), which counts
# what the kernel does for a profiler in their time (samples, side-band
# records, following) and not the profiler's own reader
cat >"$WORK/suite.sh" <<EOF
#!/usr/bin/env bash
[ -z "\${SUITE_CG:-}" ] || echo \$\$ >"\$SUITE_CG/cgroup.procs" || exit 1
cd "$SUITE_DIR" || exit 1
TIMEFORMAT='%3U %3S'
now=/dev/null
[ "\$OUT" = /dev/null ] || now=\$OUT.cpu.now
s=\$(date +%s%N)
{ time $SUITE_CMD >/dev/null 2>&3; } 3>&2 2>"\$now"
e=\$(date +%s%N)
echo \$(( (e - s) / 1000 )) >>"\$OUT"
[ "\$now" = /dev/null ] || awk '{ printf "%d\\n", (\$1 + \$2) * 1e6 }' "\$now" >>"\$OUT.cpu"
EOF
chmod +x "$WORK/suite.sh"

declare -A cmd
cmd[bare]=""
# bare once more, for VARIANTS=: where it runs after a profiler's work
# (its symbolization, its files written), the null check of the method
cmd[bare_again]=""
cmd[tf_fp]="$TF record -q --freq $FREQ --call-graph fp -o $WORK/fp.pb.gz --"
cmd[tf_dwarf]="$TF record -q --freq $FREQ --call-graph dwarf -o $WORK/dw.pb.gz --"
cmd[tf_auto]="$TF record -q --freq $FREQ -o $WORK/auto.pb.gz --"
# the events copied into every process, as perf record does, instead of
# following the command's cgroup (the default where allowed)
cmd[tf_inherit]="$TF record -q --freq $FREQ --follow inherit -o $WORK/inh.pb.gz --"
# the CPU profile alone, without the time threads wait (--off-cpu off), and
# the off-CPU recording's competitors: every sched_switch with its call
# chain, as off-CPU flame graphs are made with perf, and perf sched's
# scheduler trace (switches, wake-ups, migrations; no call chains)
cmd[tf_nooff]="$TF record -q --freq $FREQ --off-cpu off -o $WORK/nooff.pb.gz --"
# ... and with frame pointers alone (no user registers and stack copied
# with each sample, as perf record -g samples)
cmd[tf_fpnooff]="$TF record -q --freq $FREQ --call-graph fp --off-cpu off -o $WORK/fpnooff.pb.gz --"
# ... and without holding each exec'd program from its exec (fanotify
# refused, as without CAP_SYS_ADMIN): what that costs a suite's processes
cmd[tf_nofan]="setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin $TF record -q --freq $FREQ --off-cpu off -o $WORK/nofan.pb.gz --"
# ... and with its reader at the suite's priority (raising it refused, as
# without CAP_SYS_NICE)
cmd[tf_nonice]="setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice $TF record -q --freq $FREQ --off-cpu off -o $WORK/nonice.pb.gz --"
cmd[perf_switch]="perf record -q -e sched:sched_switch -g -o $WORK/switch.data --"
cmd[perf_sched]="perf sched record -q -o $WORK/sched.data --"
cmd[perf_fp]="perf record -q -F $FREQ -g -o $WORK/perf.data --"
cmd[perf_dwarf]="perf record -q -F $FREQ --call-graph dwarf -o $WORK/perfdw.data --"
# the floor of following a process tree, for VARIANTS=: an inherited
# counter and no record at all (perf_count), the side-band records alone
# (perf_side: exec, mmap, fork, exit), samples without call chains
# (perf_flat)
cmd[perf_count]="perf stat -e task-clock -x, -o $WORK/stat.txt --"
cmd[perf_side]="perf record -q -e dummy -o $WORK/side.data --"
cmd[perf_flat]="perf record -q -F $FREQ -o $WORK/flat.data --"
# the floor: perf's cheapest way to see the suite, every CPU's samples
cmd[perf_a]="perf record -q -e cpu-clock -F $FREQ -g -a -o $WORK/perfa.data --"
[ -z "$CGNAME" ] ||
	cmd[perf_a_cg]="env SUITE_CG=$CGMNT/$CGNAME perf record -q -e cpu-clock -F $FREQ -g -a -G $CGNAME -o $WORK/perfacg.data --"
# ... with the records testflame also asks for: every switch of the
# suite's threads on and off a CPU (its exact CPU time per thread)
[ -z "$CGNAME" ] ||
	cmd[perf_a_cg_sw]="env SUITE_CG=$CGMNT/$CGNAME perf record -q -e cpu-clock -F $FREQ -g -a -G $CGNAME --switch-events -o $WORK/perfacgsw.data --"
order=(bare tf_fp perf_fp tf_dwarf perf_dwarf tf_auto perf_a)
if [ -n "${OLD_TF:-}" ]; then
	cmd[tf_old]="$OLD_TF record -q --freq $FREQ --call-graph fp -o $WORK/old.pb.gz --"
	order+=(tf_old)
fi
if [ -n "${VARIANTS:-}" ]; then
	read -r -a order <<<"$VARIANTS"
fi
for v in "${order[@]}"; do
	[ -n "${cmd[$v]+set}" ] || { echo "record-overhead.sh: no variant '$v' here (perf_a_cg needs root and cgroup2)" >&2; exit 2; }
done

alternate_rounds

machine
echo "workload: $SUITE_CMD in $SUITE_DIR, timed from inside; $ROUNDS alternating rounds at $FREQ Hz"
echo "ratio: each run divided by the bare run of its own round (pairs cancel the machine's drift)"
# the paired ratios of a variant's runs to bare's, summarised
ratios() { # VARIANT FILE-SUFFIX
	local v=$1 x=$2 m
	m=$(median <"$WORK/$v.$x")
	paste "$WORK/$v.$x" "$WORK/bare.$x" | awk '{ print $1 / $2 }' | sort -g >"$WORK/$v.$x.ratios"
	awk -v name="$v" -v m="$m" '
		{ r[NR] = $1; s += $1; ss += $1 * $1 }
		END {
			med = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
			q1 = r[int((NR + 3) / 4)]; q3 = r[int((3 * NR + 1) / 4)]
			mean = s / NR; sd = NR > 1 ? sqrt((ss - NR * mean * mean) / (NR - 1)) : 0
			half = NR > 1 ? 2 * sd / sqrt(NR) : 0
			printf "%-12s %12.1f %10.3f %9.3f-%-8.3f %10.3f (%.3f-%.3f)\n", name, m / 1000, med, q1, q3, mean, mean - half, mean + half
		}' "$WORK/$v.$x.ratios"
}
echo "wall time of the suite"
printf '%-12s %12s %10s %18s %24s\n' variant "median ms" "÷ bare" "ratio IQR" "mean ÷ bare (95% CI)"
for v in "${order[@]}"; do
	ratios "$v" times
done
echo "CPU time of the suite's processes (user + system; the profiler's reader apart)"
printf '%-12s %12s %10s %18s %24s\n' variant "median ms" "÷ bare" "ratio IQR" "mean ÷ bare (95% CI)"
for v in "${order[@]}"; do
	ratios "$v" times.cpu
done
