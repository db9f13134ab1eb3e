"""pytest_testflame - test markers for pytest suites.

testflame loads it by itself into every pytest it runs (its Python
loader adds it to the plugins pytest reads from PYTEST_PLUGINS, without
setting that variable), so a suite needs nothing. It can also be loaded by hand
(``pytest -p pytest_testflame`` with this directory on PYTHONPATH) or its
hook imported from a conftest.py:

    from pytest_testflame import pytest_runtest_protocol  # noqa: F401

Each test's setup, call and teardown are marked with the test's node id,
for this process and everything it starts, with the process's CPU clock,
which gives testflame the test's exact CPU time. Does nothing unless the
suite runs under testflame (TESTFLAME_MARKERS is set), and prints nothing.

When testflame confirms a slowdown it re-runs only the tests that looked
slower: their node ids, one a line, in TESTFLAME_PYTEST_SELECT. The
others are then deselected, as -k would, whatever selected the suite.
"""
import os

import pytest

from testflame_markers import mark as _mark


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _mark("begin", item.nodeid)
    try:
        yield
    finally:
        _mark("end", item.nodeid)


def pytest_collection_modifyitems(config, items):
    only = os.environ.get("TESTFLAME_PYTEST_SELECT")
    if not only or not os.environ.get("TESTFLAME_MARKERS"):
        return
    keep = set(only.split("\n"))
    deselected = [i for i in items if i.nodeid not in keep]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [i for i in items if i.nodeid in keep]
