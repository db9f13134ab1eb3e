#!/bin/sh
# many-processes.sh - a suite made of nothing but process start-up: N
# (default 500) runs of /bin/true, one after another, from one shell. What
# a profiler costs each process it follows (inherited events, side-band
# records, whatever it reads of a new program) is all this suite measures:
#
#   SUITE_DIR=bench SUITE_CMD="./many-processes.sh 500" \
#       bench/record-overhead.sh 100 249
n=${1:-500}
i=0
while [ "$i" -lt "$n" ]; do
	/bin/true
	i=$((i + 1))
done
