#!/usr/bin/env bash
# t0923-python-forms.sh - a Python suite run every way users run it
# (tests/fixtures/suites/pyforms: a package its tests import from the
# project's root, unittest classes, doctests through load_tests). Under
# testflame each form prints the same bytes and exits the same as without
# it (timings masked), and names every test of the runner's own list, with
# its exact CPU time, where testflame's loader is reachable: `env
# PYTHONPATH=. python3 -m pytest` (the command replaces PYTHONPATH),
# pytest by path and -k, -n 2, a virtualenv, python -m unittest discover
# (doctests by their ids), through pyenv's kind of shim. Where it is not
# (an isolated virtualenv whose PYTHONPATH the command replaced, -p
# no:pytest_testflame) the suite is untouched, the run's notes say so,
# and frames name what they saw. A sitecustomize of the user's still runs; a failing test's
# status passes through.
. "$(dirname "$0")/lib.sh"
PYFORMS=$TOP/tests/fixtures/suites/pyforms
PY=/usr/bin/python3
# pytest's own script, run by its #! line (python3 /usr/bin/pytest ARGS)
PYTEST="$PY -m pytest"
[ -x /usr/bin/pytest ] && PYTEST=/usr/bin/pytest

if ! $PY -c 'import pytest' 2>/dev/null; then
	test_skip 'Python suites run every way' 'python3-pytest is not installed'
	test_done
	exit
fi
cp -r "$PYFORMS" proj

PYTEST_IDS='tests/test_forms.py::More::test_a tests/test_forms.py::More::test_b
tests/test_forms.py::Quick::test_double tests/test_forms.py::Quick::test_skipped
tests/test_forms.py::Quick::test_spin_large tests/test_forms.py::Quick::test_spin_small
tests/test_forms.py::Quick::test_sub'
UNITTEST_IDS='pkg pkg.double tests.test_forms.More.test_a tests.test_forms.More.test_b
tests.test_forms.Quick.test_double tests.test_forms.Quick.test_skipped
tests.test_forms.Quick.test_spin_large tests.test_forms.Quick.test_spin_small
tests.test_forms.Quick.test_sub'

# same NAME CMD: the command alone, then under testflame record (run file
# ../NAME.pb.gz); stdout, stderr and exit status must match, timings masked
# (and what sed expression $MASK says: the order pytest -n reports in)
same() {
	local name=$1 cmd=$2 rc1 rc2
	(cd proj && sh -c "$cmd" >"../$name.out1" 2>"../$name.err1"); rc1=$?
	(cd proj && "$TF" record -q -o "../$name.pb.gz" -- sh -c "$cmd" \
		>"../$name.out2" 2>"../$name.err2"); rc2=$?
	for f in "$name".out1 "$name".out2 "$name".err1 "$name".err2; do
		sed -E -e 's/[0-9]+\.[0-9]+ ?s/Ns/g' -e "${MASK:-}" "$f" >"$f.m"
	done
	if [ $rc1 != $rc2 ] || ! cmp -s "$name.out1.m" "$name.out2.m" ||
	   ! cmp -s "$name.err1.m" "$name.err2.m"; then
		echo "$name: exit $rc1 alone, $rc2 under testflame"
		diff "$name.out1.m" "$name.out2.m"; diff "$name.err1.m" "$name.err2.m"
		return 1
	fi
	"$TF" show --json "$name.pb.gz" >"$name.json"
}
# tests NAME IDS: every id is a test measured by its markers, and no other
# test is there but [outside tests]
tests() {
	python3 - "$1.json" "$2" <<-\EOF
	import json, sys
	t = {x["name"]: x for x in json.load(open(sys.argv[1]))["tests"]}
	want = set(sys.argv[2].split())
	missing = sorted(want - set(t))
	assert not missing, ("missing", missing, sorted(t))
	extra = sorted(set(t) - want - {"[outside tests]"})
	assert not extra, ("extra", extra)
	bad = [(n, t[n]["source"], t[n]["cpu_ns"]) for n in want
	       if t[n]["source"] != "markers" or t[n]["cpu_ns"] is None]
	assert not bad, bad
	EOF
}
# framed NAME IDS: the tests frames named are of the list (which of them
# depends on the samples, none in some runs), and the runner's own work is
# outside them whether or not a sample landed in one
framed() {
	python3 - "$1.json" "$2" <<-\EOF
	import json, sys
	t = {x["name"]: x["source"] for x in json.load(open(sys.argv[1]))["tests"]}
	assert not set(t) - set(sys.argv[2].split()) - {"[outside tests]"}, t
	assert t.get("[outside tests]") == "outside", t
	assert all(s == "frames" for n, s in t.items() if n != "[outside tests]"), t
	EOF
}
# notes NAME: the run's notes, one a line
notes() {
	python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["metadata"]
for k in sorted(m):
    print(m[k]) if k.startswith("note.") else None' "$1.json"
}

test_expect_success 'env PYTHONPATH=. python3 -m pytest: untouched, every node id' '
	same override "env PYTHONPATH=. $PY -m pytest tests" &&
	tests override "$PYTEST_IDS" && test -z "$(notes override)"
'

if $PY -c 'import xdist' 2>/dev/null; then
	test_expect_success 'pytest -n 2: every node id, no worker taken for a test' '
		MASK="s/^[.s]+ /progress /" same xdist "env PYTHONPATH=. $PY -m pytest -q -p no:cacheprovider -n 2 tests" &&
		tests xdist "$PYTEST_IDS"
	'
else
	test_skip 'pytest -n 2' 'python3-pytest-xdist is not installed'
fi

test_expect_success 'python -m unittest discover: every test of its list, doctests by id' '
	same discover "env PYTHONPATH=. $PY -m unittest discover -s tests -t ." &&
	tests discover "$UNITTEST_IDS"
'

test_expect_success "through a shim (pyenv's: scripts run by env bash): the suite's tests only" '
	mkdir shim && printf "#!/usr/bin/env bash\n\"\$(dirname \"\$0\")/helper-which\" >/dev/null\nexec $PY \"\$@\"\n" >shim/python3 &&
	printf "#!/usr/bin/env bash\necho $PY\n" >shim/helper-which && chmod +x shim/* &&
	same shim "PATH=$SCRATCH/shim:\$PATH PYTHONPATH=. python3 -m unittest" &&
	tests shim "$UNITTEST_IDS"
'

test_expect_success 'a virtualenv: every node id, with PYTHONPATH replaced too' '
	$PY -m venv --system-site-packages --without-pip venv &&
	same venv "env PYTHONPATH=. ../venv/bin/python -m pytest -q -p no:cacheprovider tests" &&
	tests venv "$PYTEST_IDS"
'

test_expect_success 'where the loader cannot be found or the plugin is refused: untouched, and noted' '
	$PY -m venv --without-pip iso &&
	same iso "env PYTHONPATH=. ../iso/bin/python -m unittest" &&
	same isopath "env PYTHONPATH=. ../iso/bin/python -c \"import sys; print(sys.path)\"" &&
	mkdir -p "home/.local/lib/$($PY -c "import sys; print(\"python%d.%d\" % sys.version_info[:2])")/site-packages" &&
	same isohome "HOME=$SCRATCH/home ../iso/bin/python -c \"import sys; print([p for p in sys.path if \\\"testflame-runners\\\" not in p])\"" &&
	notes iso | grep "1 Python test run (pytest, python -m unittest) found neither" &&
	framed iso "$UNITTEST_IDS" &&
	same refused "env PYTHONPATH=. $PY -m pytest -q -p no:pytest_testflame tests" &&
	notes refused | grep "1 Python test run" && framed refused "$PYTEST_IDS" &&
	same refusedk "env PYTHONPATH=. $PYTEST -q -p no:pytest_testflame -p no:cacheprovider -k \"not spin\" tests" &&
	notes refusedk | grep "1 Python test run" && framed refusedk "$PYTEST_IDS"
'

test_expect_success "the run's notes are in report.json, report.md and the page; none with inject: false" '
	"$TF" compare -q --report rep override.pb.gz iso.pb.gz >/dev/null; test $? -le 3 &&
	python3 -c "import json; n = json.load(open(\"rep/report.json\"))[\"notes\"]
assert [x[\"side\"] for x in n] == [\"head\"] and \"found neither\" in n[0][\"text\"], n" &&
	grep "^_Note (head): 1 Python test run" rep/report.md &&
	grep -q "\"notes\":\[\[\"head\",\"1 Python test run" rep/index.html &&
	printf "attribution:\n  inject: false\n" >noinject.yml &&
	(cd proj && "$TF" record -q --config ../noinject.yml -o ../noinject.pb.gz -- \
		env PYTHONPATH=. $PY -m pytest -q -p no:cacheprovider tests >/dev/null 2>&1) &&
	"$TF" show --json noinject.pb.gz >noinject.json && test -z "$(notes noinject)"
'

test_expect_success "by path and -k; the user's sitecustomize still runs; a failure's status passes through" '
	mkdir site && printf "import sys\nsys.stderr.write(\"user site\\\\n\")\n" >site/sitecustomize.py &&
	same chained "PYTHONPATH=../site:. FAIL_ONE=1 $PY -m pytest -q -p no:cacheprovider tests/test_forms.py -k \"spin or test_b\"" &&
	grep -q "user site" chained.err1 && grep -q "1 failed" chained.out1 &&
	tests chained "tests/test_forms.py::More::test_b tests/test_forms.py::Quick::test_spin_large tests/test_forms.py::Quick::test_spin_small"
'

test_done
