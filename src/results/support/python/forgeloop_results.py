# forgeloop (issue 57): the writer of test results shared by the unittest recorder (here) and
# the pytest plugin (forgeloop_results_pytest). The record format is documented in
# src/results/mod.rs: one JSON object a line, written at once with os.write on an O_APPEND
# descriptor to $FORGELOOP_RESULTS/py-<pid>.jsonl, so a process that ends abruptly leaves every
# event it recorded. Nothing here changes what a test run does: every wrapper calls the
# original with the same arguments and returns what it returns, and its own errors are
# swallowed.

import os
import sys

VERSION = 1
_state = {"fd": None, "pid": None, "json": None}


def enabled():
    """Whether this process records: a results directory is named and no recorded test runs."""
    return bool(os.environ.get("FORGELOOP_RESULTS")) and not os.environ.get("FORGELOOP_RESULTS_IN_TEST")


_ENABLED = enabled()


def emit(runner, record):
    """Writes one record; never raises."""
    if not _ENABLED:
        return
    try:
        pid = os.getpid()
        if _state["fd"] is None or _state["pid"] != pid:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            path = os.path.join(os.environ["FORGELOOP_RESULTS"], "py-%d.jsonl" % pid)
            _state["fd"] = os.open(path, flags, 0o644)
            _state["pid"] = pid
        if _state["json"] is None:
            import json

            _state["json"] = json
        record["v"] = VERSION
        record["r"] = runner
        data = (_state["json"].dumps(record) + "\n").encode("ascii")
        while data:
            data = data[os.write(_state["fd"], data) :]
    except Exception:
        pass


def text(value):
    """A str that encodes as UTF-8 (a lone surrogate becomes U+FFFD)."""
    try:
        return str(value).encode("utf-8", "replace").decode("utf-8")
    except Exception:
        return "?"


def in_test(on):
    """Marks, for the processes a test starts, that a recorded test is running."""
    try:
        if on:
            os.environ["FORGELOOP_RESULTS_IN_TEST"] = "1"
        else:
            os.environ.pop("FORGELOOP_RESULTS_IN_TEST", None)
    except Exception:
        pass


# --- unittest ------------------------------------------------------------------------------

_unittest = {"run": None, "test": None}


def _test_id(test):
    try:
        return text(test.id())
    except Exception:
        return text(test)


def _mine(result):
    # Only the outermost run counts: a test may run a suite of its own (a test of a test
    # framework), whose results are not the command's.
    key = id(result)
    if _unittest["test"] is not None:
        return _unittest["test"] == key
    return _unittest["run"] is None or _unittest["run"] == key


def _start_run(result):
    if _unittest["run"] is None and _unittest["test"] is None:
        _unittest["run"] = id(result)
        emit("unittest", {"k": "begin", "pid": os.getpid()})


def _stop_run(result):
    if _unittest["run"] != id(result):
        return
    _unittest["run"] = None

    def count(name):
        return len(getattr(result, name, ()) or ())

    emit(
        "unittest",
        {
            "k": "end",
            "ok": bool(result.wasSuccessful()),
            "stopped": "failfast" if getattr(result, "shouldStop", False) else None,
            "tests": int(getattr(result, "testsRun", 0) or 0),
            "failed": count("failures") + count("errors") + count("unexpectedSuccesses"),
            "skipped": count("skipped"),
        },
    )


def _start_test(result, test):
    if _mine(result) and _unittest["test"] is None:
        _unittest["test"] = id(result)
        in_test(True)
        emit("unittest", {"k": "start", "id": _test_id(test)})


def _stop_test(result, test):
    if _unittest["test"] == id(result):
        _unittest["test"] = None
        in_test(False)


def _outcome(name):
    def record(result, test, *rest):
        if _mine(result):
            emit("unittest", {"k": "result", "id": _test_id(test), "o": name})

    return record


def _sub_test(result, test, subtest, err):
    # A failing subtest fails its test (unittest then never calls addSuccess for it).
    if err is None or not _mine(result):
        return
    failure = getattr(test, "failureException", AssertionError)
    failed = isinstance(err, tuple) and isinstance(err[0], type) and issubclass(err[0], failure)
    emit("unittest", {"k": "result", "id": _test_id(test), "o": "failed" if failed else "error"})


_HOOKS = {
    "startTestRun": _start_run,
    "stopTestRun": _stop_run,
    "startTest": _start_test,
    "stopTest": _stop_test,
    "addSuccess": _outcome("passed"),
    "addFailure": _outcome("failed"),
    "addError": _outcome("error"),
    "addSkip": _outcome("skipped"),
    "addExpectedFailure": _outcome("xfailed"),
    "addUnexpectedSuccess": _outcome("xpassed"),
    "addSubTest": _sub_test,
}


def _wrap(original, hook):
    def wrapper(self, *args, **kwargs):
        try:
            hook(self, *args)
        except Exception:
            pass
        return original(self, *args, **kwargs)

    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(wrapper, attribute, getattr(original, attribute))
        except Exception:
            pass
    wrapper.__wrapped__ = original
    return wrapper


def patch_unittest(module):
    """Wraps unittest.result.TestResult's event methods (once per class)."""
    cls = getattr(module, "TestResult", None)
    if cls is None or cls.__dict__.get("_forgeloop_recorded"):
        return
    for name, hook in _HOOKS.items():
        original = cls.__dict__.get(name)
        if original is not None:
            setattr(cls, name, _wrap(original, hook))
    cls._forgeloop_recorded = True


def unittest_spec(name, path, target):
    """The spec the rest of the import system finds for unittest.result, its loader made to
    patch the module once it has run."""
    spec = None
    for finder in list(sys.meta_path):
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        spec = find(name, path, target)
        if spec is not None:
            break
    loader = getattr(spec, "loader", None)
    original = getattr(loader, "exec_module", None)
    if original is None:
        return spec

    def exec_module(module):
        original(module)
        try:
            patch_unittest(module)
        except Exception:
            pass

    try:
        loader.exec_module = exec_module
    except Exception:
        pass
    return spec
