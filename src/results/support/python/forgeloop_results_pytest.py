# forgeloop (issue 57): a pytest plugin, loaded through PYTEST_PLUGINS, that records what pytest
# itself reports: the collection, each test's start and its reports (a setup error, the call's
# outcome, xfail and xpass, pytest-rerunfailures' reruns, a teardown error), and the session's
# end with its exit status and whether it stopped early (-x, --maxfail). It only observes: its
# hooks return nothing and swallow their own errors. Records go through forgeloop_results.

import os

import forgeloop_results


def _emit(record):
    forgeloop_results.emit("pytest", record)


def pytest_sessionstart(session):
    _emit({"k": "begin", "pid": os.getpid()})


def pytest_collection_finish(session):
    try:
        _emit({"k": "collected", "n": len(session.items)})
    except Exception:
        pass


def pytest_runtest_logstart(nodeid, location):
    forgeloop_results.in_test(True)
    _emit({"k": "start", "id": forgeloop_results.text(nodeid)})


def pytest_runtest_logfinish(nodeid, location):
    forgeloop_results.in_test(False)


def _outcome(report):
    outcome = report.outcome
    xfail = hasattr(report, "wasxfail")
    if outcome == "rerun":
        return "rerun"
    if report.when == "setup":
        if outcome == "failed":
            return "error"
        if outcome == "skipped":
            return "xfailed" if xfail else "skipped"
        return None
    if report.when == "call":
        if outcome == "passed":
            return "xpassed" if xfail else "passed"
        if outcome == "skipped":
            return "xfailed" if xfail else "skipped"
        return "failed"
    # teardown: only an error adds to what the call said.
    return "error" if outcome == "failed" else None


def pytest_runtest_logreport(report):
    try:
        outcome = _outcome(report)
        if outcome is not None:
            _emit({"k": "result", "id": forgeloop_results.text(report.nodeid), "o": outcome})
    except Exception:
        pass


def pytest_sessionfinish(session, exitstatus):
    try:
        stopped = session.shouldfail or session.shouldstop
        _emit(
            {
                "k": "end",
                "exit": int(exitstatus),
                "stopped": forgeloop_results.text(stopped) if stopped else None,
                "tests": int(getattr(session, "testscollected", 0) or 0),
                "failed": int(getattr(session, "testsfailed", 0) or 0),
            }
        )
    except Exception:
        pass
