# testflame's sitecustomize (see src/attribute/inject.c and testflame_loader.py
# beside it): found first on the PYTHONPATH testflame gives the suite, it
# runs the sitecustomize the interpreter would have run without it, then
# testflame's loader. The syntax is Python 2's too.
import sys


def _chain():
    # the next sitecustomize on the path, run as the module "sitecustomize"
    # as site.py would have run it; its own failure goes on to site.py,
    # which reports it as it would have without us
    import os
    # this directory under every name it has here: on PYTHONPATH and as
    # the user's site-packages (a link to it)
    here = os.path.dirname(os.path.realpath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]
    try:
        if sys.version_info[0] >= 3:
            from importlib.machinery import PathFinder
            if PathFinder.find_spec("sitecustomize", sys.path) is None:
                return
        else:
            import imp
            try:
                found = imp.find_module("sitecustomize", sys.path)
            except ImportError:
                return
            if found[0]:
                found[0].close()
        del sys.modules["sitecustomize"]
        __import__("sitecustomize")
    finally:
        sys.path[:] = saved


try:
    _chain()
finally:
    try:
        import testflame_loader  # noqa: F401
    except Exception:
        pass
