# testflame's loader for Python (see src/attribute/inject.c), run at the
# start of every Python of the suite that finds it: by the sitecustomize
# beside it (testflame's directory first on PYTHONPATH) or by the .pth file
# beside it (the same directory as the user's site-packages, through
# PYTHONUSERBASE, which a command that replaces PYTHONPATH keeps). Then it
# waits to be needed:
#
#  - pytest: when pytest reads PYTEST_PLUGINS, the plugin beside this file
#    (pytest_testflame) is loaded too, unless pytest was told not to
#    (-p no:pytest_testflame);
#  - unittest (python -m unittest, discover, load_tests' doctests, any
#    runner built on unittest.TestResult): each test the runner starts and
#    stops is marked with its id, unless pytest runs it (its plugin does);
#    when testflame runs only some tests again (TESTFLAME_UNITTEST_SELECT,
#    their ids), the others are left out as if not loaded.
#
# No environment variable names a module that must import: a Python that
# finds neither file (a virtualenv whose PYTHONPATH was replaced, python
# -I) runs as it would have. Whatever fails here steps aside: a line in
# the notes file beside this directory says why; nothing is printed, no
# exception leaves. The syntax is Python 2's too.
import sys


def _user_site(here):
    # loaded as the user's site-packages: the user's own come back, as
    # site.py would have added them, and site's variables name them
    import os
    import site
    if not getattr(site, "ENABLE_USER_SITE", False) or \
            os.path.realpath(getattr(site, "USER_SITE", None) or "/") != os.path.realpath(here):
        return  # not the user's site (a virtualenv has none): nothing to add
    try:
        with open(os.path.join(here, "userbase")) as f:
            base = f.read().strip()
    except (IOError, OSError):
        base = ""
    base = base or os.path.join(os.path.expanduser("~"), ".local")
    user_site = os.path.join(base, "lib", "python%d.%d" % sys.version_info[:2],
                             "site-packages")
    site.USER_BASE, site.USER_SITE = base, user_site
    if os.path.isdir(user_site):
        site.addsitedir(user_site)


def _note(here, text):
    import os
    try:
        fd = os.open(os.path.join(os.path.dirname(os.path.realpath(here)), "notes"),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT, 438)
        try:
            os.write(fd, ("%d %s\n" % (os.getpid(), text)).encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def _load_pytest_plugin(here, pm):
    import os
    if not os.environ.get("TESTFLAME_MARKERS"):
        return
    name = "pytest_testflame"
    try:
        if pm.is_blocked(name) or pm.get_plugin(name) is not None:
            return
        pm.import_plugin(name)
    except Exception as e:
        _note(here, "pytest: testflame's plugin was not loaded (%s: %s); its tests are "
              "named from frames" % (type(e).__name__, str(e).split("\n")[0]))


def _patch_pytest(here, module):
    pm_class = getattr(module, "PytestPluginManager", None)
    orig = getattr(pm_class, "consider_env", None)
    if orig is None:
        _note(here, "pytest: no PytestPluginManager.consider_env in this pytest; "
              "its tests are named from frames")
        return

    def consider_env(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        _load_pytest_plugin(here, self)
        return result
    consider_env.__doc__ = orig.__doc__
    consider_env.__name__ = orig.__name__
    pm_class.consider_env = consider_env


def _patch_unittest(here, module):
    cls = getattr(module, "TestResult", None)
    start, stop = getattr(cls, "startTest", None), getattr(cls, "stopTest", None)
    if start is None or stop is None:
        return
    state = {"failed": False}

    def marked(kind, test):
        # pytest's plugin names its tests; a unittest runner inside a
        # pytest test is part of that test
        if state["failed"] or "pytest_testflame" in sys.modules:
            return
        try:
            from testflame_markers import mark
            mark(kind, test.id(), "unittest")
        except Exception as e:
            state["failed"] = True
            _note(here, "unittest: tests not marked (%s: %s); they are named from "
                  "frames" % (type(e).__name__, e))

    def startTest(self, test):
        marked("begin", test)
        return start(self, test)

    def stopTest(self, test):
        try:
            return stop(self, test)
        finally:
            marked("end", test)
    startTest.__doc__, stopTest.__doc__ = start.__doc__, stop.__doc__
    cls.startTest, cls.stopTest = startTest, stopTest


def _patch_unittest_case(here, module):
    import os
    keep = set(os.environ.get("TESTFLAME_UNITTEST_SELECT", "").split("\n"))
    cls = getattr(module, "TestCase", None)
    orig = getattr(cls, "__call__", None)
    if orig is None:
        _note(here, "unittest: no TestCase.__call__; every test runs")
        return

    def __call__(self, *args, **kwds):
        # under pytest its own selection holds, by node id
        if "_pytest" not in sys.modules:
            try:
                if self.id() not in keep:
                    return None
            except Exception:
                pass
        return orig(self, *args, **kwds)
    __call__.__doc__ = orig.__doc__
    cls.__call__ = __call__


class _Finder(object):
    """Patches a module the moment it is first imported, then leaves."""

    def __init__(self, here, patches):
        self.here = here
        self.patches = patches

    def find_spec(self, name, path=None, target=None):
        patch = self.patches.get(name)
        if patch is None:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        loader = getattr(spec, "loader", None)
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None or isinstance(loader, type):
            return spec  # a loader shared by its modules stays as it is
        here, patches = self.here, self.patches

        def exec_and_patch(module):
            exec_module(module)
            if patches.pop(name, None) is None:
                return
            if not patches and self in sys.meta_path:
                sys.meta_path.remove(self)
            try:
                patch(here, module)
            except Exception as e:
                _note(here, "%s: not patched (%s: %s)" % (name, type(e).__name__, e))
        loader.exec_module = exec_and_patch
        return spec


def _install():
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        _user_site(here)
    except Exception:
        pass
    try:
        if sys.version_info >= (3, 7) and os.environ.get("TESTFLAME_MARKERS"):
            patches = {"_pytest.config": _patch_pytest,
                       "unittest.result": _patch_unittest}
            if os.environ.get("TESTFLAME_UNITTEST_SELECT"):
                patches["unittest.case"] = _patch_unittest_case
            for name in list(patches):
                if name in sys.modules:
                    patches.pop(name)(here, sys.modules[name])
            if patches:
                sys.meta_path.insert(0, _Finder(here, patches))
    except Exception:
        pass


_install()
