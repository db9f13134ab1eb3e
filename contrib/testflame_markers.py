"""testflame_markers - test markers from Python.

    from testflame_markers import mark
    mark("begin", "my test"); ...; mark("end", "my test")

Each line is scoped to this process and everything it starts (@pid), with
the time on the samples' clock and the process's CPU clock, which gives
testflame the test's exact CPU time. Does nothing unless the code runs
under testflame (TESTFLAME_MARKERS is set) and never raises: markers are
best effort, a test never fails for them. The pytest plugin beside it and
testflame's own Python loader write theirs with it.
"""
import os
import time


def mark(kind, name, runner=None):
    """runner: the runner that runs the test, one word ("unittest"), which
    tells testflame how to run it alone."""
    path = os.environ.get("TESTFLAME_MARKERS")
    if not path:
        return
    name = name.replace("\n", " ").replace("\r", " ")
    line = "%s %s @pid=%d @t=%d @cpu=%d%s\n" % (
        kind, name, os.getpid(), time.monotonic_ns(), time.process_time_ns(),
        " @runner=" + runner if runner and kind == "begin" else "")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass
