#!/usr/bin/env bash
# t0932-test-children.sh - a test that runs a program (subprocess.run of a
# Python child, as tests of command-line tools do), under runners that
# mark their tests (testflame's unittest loader, its pytest plugin): the
# child's work is the test's, its exact CPU time included, and the child
# is no test of its own.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

cat >test_kids.py <<\PY
import subprocess, sys, unittest

class T(unittest.TestCase):
    def test_child(self):
        subprocess.run([sys.executable, "-c", "x = 0\nfor i in range(4000000): x += i"], check=True)

    def test_piped(self):
        subprocess.run([sys.executable, "-c", "x = 0\nfor i in range(4000000): x += i\nprint(x)"],
                       check=True, capture_output=True)

    def test_self(self):
        x = 0
        for i in range(200000):
            x += i
PY

# meta KEY=VALUE of the run file's test NAME
meta() { # FILE NAME KEY
	go tool pprof -comments "$1" 2>/dev/null | sed -n "s/^testflame\.test\.$2=.* $3=\([0-9.]*\).*/\1/p"
}

check() { # FILE ID
	local cpu samples
	cpu=$(meta "$1" "$2" cpu_ns) && samples=$(meta "$1" "$2" value) &&
	echo "$2: cpu_ns=$cpu sampled=$samples" &&
	# the child's 4,000,000 turns are in it: far above its own thread's
	# few milliseconds, and within sampling of what the samples say
	awk -v c="$cpu" -v s="$samples" 'BEGIN { exit !(c > 50e6 && c > s * 0.6 && c < s * 1.6 + 20e6) }' &&
	! go tool pprof -comments "$1" 2>/dev/null | grep -q "^testflame\.test\.python3[.0-9]*="
}

test_expect_success 'unittest: a test that runs a Python child has its CPU time, and the child is no test' '
	"$TF" record -q -o ut.pb.gz -- $PY -m unittest test_kids >out 2>&1 &&
	check ut.pb.gz "test_kids\.T\.test_child"
'

test_expect_success 'unittest: the test polls the pipes of its child: its waiting is not the child'"'"'s time again' '
	cpu=$(meta ut.pb.gz "test_kids\.T\.test_piped" cpu_ns) &&
	off=$(meta ut.pb.gz "test_kids\.T\.test_piped" offcpu_ns) &&
	echo "cpu_ns=$cpu offcpu_ns=$off" &&
	awk -v c="$cpu" -v o="$off" "BEGIN { exit !(c > 50e6 && o < c / 4) }"
'

if $PY -c 'import pytest' 2>/dev/null; then
	test_expect_success 'pytest: the same, by the plugin'"'"'s markers' '
		"$TF" record -q -o pt.pb.gz -- $PY -m pytest -q -p no:cacheprovider test_kids.py >out 2>&1 &&
		check pt.pb.gz "test_kids\.py::T::test_child"
	'
else
	test_skip 'pytest: the same' 'python3-pytest is not installed'
fi

# Above --off-cpu-max most switch-outs have no stack: a marked test's
# wait that none was recorded for is still the test's, by its markers.
test_expect_success 'a marked test'"'"'s wait no stack was recorded for is the test'"'"'s, by its markers' '
	cat >napper.py <<-\PY &&
	import os, time
	def line(text):
	    fd = os.open(os.environ["TESTFLAME_MARKERS"], os.O_WRONLY | os.O_APPEND)
	    os.write(fd, text.encode())
	    os.close(fd)
	for i in range(20):
	    time.sleep(0.001)
	line("begin napper @pid=%d @t=%d\n" % (os.getpid(), time.monotonic_ns()))
	time.sleep(0.05)
	line("end napper @pid=%d @t=%d\n" % (os.getpid(), time.monotonic_ns()))
	time.sleep(0.2)
	PY
	for i in 1 2 3; do
		"$TF" record -q --off-cpu-max 10 -o nap.pb.gz -- $PY napper.py &&
		off=$(meta nap.pb.gz napper offcpu_ns) && echo "offcpu_ns=$off" &&
		awk -v o="$off" "BEGIN { exit !(o > 45e6 && o < 150e6) }" || exit 1
	done
'

test_done
