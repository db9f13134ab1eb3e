"""pytest_testflame - test markers for pytest suites.

testflame loads it by itself into every pytest it runs (through
PYTEST_PLUGINS), so a suite needs nothing. It can also be loaded by hand
(``pytest -p pytest_testflame`` with this directory on PYTHONPATH) or its
hook imported from a conftest.py:

    from pytest_testflame import pytest_runtest_protocol  # noqa: F401

Each test's setup, call and teardown are marked with the test's node id,
for this process and everything it starts, with the process's CPU clock,
which gives testflame the test's exact CPU time. Does nothing unless the
suite runs under testflame (TESTFLAME_MARKERS is set), and prints nothing.
"""
import os
import time

import pytest


def _mark(kind, name):
    path = os.environ.get("TESTFLAME_MARKERS")
    if not path:
        return
    name = name.replace("\n", " ").replace("\r", " ")
    line = "%s %s @pid=%d @t=%d @cpu=%d\n" % (
        kind, name, os.getpid(), time.monotonic_ns(), time.process_time_ns())
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass  # markers are best effort: never fail a test for them


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _mark("begin", item.nodeid)
    try:
        yield
    finally:
        _mark("end", item.nodeid)
