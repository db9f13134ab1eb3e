"""realworld-unittest.py - unittest's own list and times of a suite, for
bench/realworld.sh, run by the suite's interpreter from the suite's root:

    python3 realworld-unittest.py list [START]        the ids discovery finds
    python3 realworld-unittest.py times OUT [START]   each test run, "id seconds" into OUT

unittest has no list or report of its own; this is `python -m unittest
discover` with its loader and its runner's hooks (startTest/stopTest), so
the list is what discovery loads and the times are unittest's own calls.
"""
import sys
import time
import unittest

sys.path.insert(0, ".")


def flat(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flat(t)
        else:
            yield t


class Timed(unittest.TestResult):
    def __init__(self, out):
        super().__init__()
        self.out = out

    def startTest(self, test):
        self.t0 = time.perf_counter()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.out.write("%s %.6f\n" % (test.id(), time.perf_counter() - self.t0))


if __name__ == "__main__":
    what = sys.argv[1]
    start = sys.argv[3] if what == "times" and len(sys.argv) > 3 else sys.argv[2] if what == "list" and len(sys.argv) > 2 else "."
    suite = unittest.defaultTestLoader.discover(start)
    if what == "list":
        for t in flat(suite):
            print(t.id())
    else:
        with open(sys.argv[2], "w") as out:
            suite.run(Timed(out))
