#!/usr/bin/env bash
# t0170-python-frames.sh - a pytest suite with a known hot Python function
# in a module only some tests use, recorded on every CPython this machine
# has (Debian's python3, and pyenv's 3.7 to 3.13 where installed): the
# function, its file and the line of its loop come from the interpreter's
# own frames, in the tests that call it, under both samplers; pytest's
# tests are named the same by the plugin's markers and by the frames.
#
# Debian's pytest is pure Python: pyenv's interpreters run it from a
# directory of links to it and its dependencies (python3-exceptiongroup and
# python3-tomli for 3.8-3.10). 3.7 lacks importlib_metadata for it and
# runs the same tests under unittest. 3.6, whose layout testflame does not
# know, must be said so, in a warning and in the run's counts.
. "$(dirname "$0")/lib.sh"

if ! need go || ! need /usr/bin/python3 || ! /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
	test_skip 'python frames' 'needs go (pprof) and python3 with pytest'
	test_done
	exit 0
fi

mkdir -p suite/pkg suite/tests
: >suite/pkg/__init__.py
cat >suite/pkg/hot.py <<\PY
def hot(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def cold(n):
    return n + 1
PY
cat >suite/tests/test_hot.py <<\PY
import unittest

from pkg.hot import hot, cold


def test_hot():
    assert hot(2500000) > 0


def test_cold():
    assert cold(1) == 2


class TestGroup(unittest.TestCase):
    def test_method_hot(self):
        self.assertGreater(hot(1500000), 0)
PY
: >suite/tests/__init__.py

# Debian's pytest, for other interpreters
mkdir -p pylib
for m in pytest _pytest pluggy iniconfig packaging attr py py.py exceptiongroup tomli; do
	[ -e /usr/lib/python3/dist-packages/$m ] && ln -s /usr/lib/python3/dist-packages/$m pylib/$m
done

# Bytecode of the interpreters' own pytest goes there, not beside it (and
# is kept: compiling pytest is most of a first run).
export PYTHONPYCACHEPREFIX=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/testflame-tests/pycache

# check_run RUNFILE [TEST]: the hot function (of TEST's samples), with its
# own time (the interpreter's C functions it runs are its self time), at
# its loop's lines
check_run() {
	local run=$1 share
	if [ -n "${2:-}" ]; then
		"$TF" view --test "$2" --top 0 "$run" >"$run.top"
	else
		go tool pprof -top -nodecount=500 "$run" 2>/dev/null >"$run.top"
	fi &&
	share=$(flat_share "$run.top" pkg.hot.hot) &&
	awk -v s="$share" 'BEGIN { exit !(s >= 60) }' ||
		{ echo "pkg.hot.hot has $share% self:" >&2; head -12 "$run.top" >&2; return 1; }
	go tool pprof -lines -top -nodecount=500 "$run" 2>/dev/null >"$run.lines" &&
	grep -E "pkg\.hot\.hot .*suite/pkg/hot\.py:[34]( |$)" "$run.lines" >/dev/null ||
		{ echo "no pkg.hot.hot at hot.py:3 or 4:" >&2; head -15 "$run.lines" >&2; return 1; }
}

versions=/usr/bin/python3
for v in /root/.pyenv/versions/3.*/bin/python3; do
	[ -x "$v" ] && versions="$versions $v"
done

for py in $versions; do
	ver=$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	case $ver in
	3.[0-6])
		test_expect_success "python $ver: an interpreter testflame cannot read is said so, and counted" "
			(cd suite && \"\$TF\" record --freq 499 -o ../r-$ver.pb.gz -- \
				$py -m unittest -q tests.test_hot >out 2>err) &&
			grep \"python: '.*python3.*' is CPython $ver, whose layout testflame does not know\" suite/err &&
			\"\$TF\" show r-$ver.pb.gz >r-$ver.show &&
			grep -E '^  python +$ver \\(unknown layout\\)' r-$ver.show &&
			awk '\$1 == \"python_unread\" && \$2 > 20 { ok = 1 } END { exit !ok }' r-$ver.show
		"
		continue;;
	esac
	pp=
	[ "$py" = /usr/bin/python3 ] || pp=$PWD/pylib
	if (cd suite && PYTHONPATH=$pp $py -c 'import pytest' 2>/dev/null); then
		cmd="$py -m pytest -q -p no:cacheprovider tests"
		hot=tests/test_hot.py::test_hot
		cold=tests/test_hot.py::test_cold
		meth=tests/test_hot.py::TestGroup::test_method_hot
	else
		cmd="$py -m unittest -q tests.test_hot"
		hot= cold= meth=
	fi
	run=$PWD/r-$ver.pb.gz
	test_expect_success "python $ver: the hot Python function and its line, from the interpreter's frames" "
		(cd suite && PYTHONPATH=$pp \"\$TF\" record -q --freq 499 -o $run -- $cmd >out 2>&1) &&
		\"\$TF\" show $run >$run.show &&
		grep -E '^  python +$ver' $run.show >/dev/null &&
		check_run $run $hot
	"
	[ -n "$hot" ] || continue
	test_expect_success "python $ver: the hot function's time is in the tests that call it" "
		[ \$(test_samples $run $hot) -gt 20 ] && [ \$(test_samples $run $meth) -gt 12 ] &&
		[ \$(test_samples $run $cold) -lt 3 ]
	"
done

test_expect_success 'pytest tests named by the frames as by the plugin (node ids, classes)' '
	(cd suite && "$TF" record -q --freq 499 --split frames -o ../frames.pb.gz -- \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider tests >out 2>&1) &&
	[ $(test_samples frames.pb.gz tests/test_hot.py::test_hot) -gt 20 ] &&
	[ $(test_samples frames.pb.gz tests/test_hot.py::TestGroup::test_method_hot) -gt 12 ] &&
	"$TF" show frames.pb.gz >frames.show &&
	grep "tests/test_hot.py::test_hot .* frames$" frames.show &&
	grep "tests/test_hot.py::TestGroup::test_method_hot .* frames$" frames.show
'

test_expect_success 'the ptrace sampler reads the frames of the stopped thread' '
	(cd suite && "$TF" record -q --sampler ptrace --freq 499 -o ../ptrace.pb.gz -- \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider tests >out 2>&1) &&
	check_run "$PWD/ptrace.pb.gz" tests/test_hot.py::test_hot &&
	"$TF" show ptrace.pb.gz | grep -E "^  sampler +ptrace"
'

test_expect_success 'the run counts the stacks read, and cut native stacks they completed' '
	"$TF" show --json r-$(/usr/bin/python3 -c "import sys; print(\"%d.%d\" % sys.version_info[:2])").pb.gz >show.json &&
	/usr/bin/python3 - show.json <<\PY
import json, sys
meta = json.load(open(sys.argv[1]))["metadata"]
stacks, samples = int(meta["python_stacks"]), int(meta["samples"])
assert stacks > samples * 0.8, (stacks, samples)
assert int(meta["truncated"]) < samples * 0.1, meta["truncated"]
PY
'

test_expect_success '--no-python-frames keeps the interpreter'"'"'s C frames' '
	(cd suite && "$TF" record -q --no-python-frames --freq 499 -o ../native.pb.gz -- \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider tests >out 2>&1) &&
	go tool pprof -top native.pb.gz 2>/dev/null >native.top &&
	! grep -q "pkg\.hot\.hot" native.top && grep -q _PyEval_EvalFrameDefault native.top
'

test_done
