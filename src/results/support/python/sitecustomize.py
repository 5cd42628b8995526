# forgeloop (issue 57): for a test command, forgeloop puts this file's directory first on
# PYTHONPATH, so Python imports it at startup instead of the sitecustomize it shadows, which it
# then runs as Python would have. When $FORGELOOP_RESULTS names a directory (and no recorded
# test is running: FORGELOOP_RESULTS_IN_TEST), a meta-path hook waits for unittest.result to be
# imported and has forgeloop_results record what unittest's TestResult sees. Nothing else is
# imported or done here, so a Python that never imports unittest pays next to nothing.

import os as _forgeloop_os
import sys as _forgeloop_sys


class _ForgeloopUnittestHook(object):
    """Hands the import of unittest.result to forgeloop_results, once."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "unittest.result":
            return None
        try:
            _forgeloop_sys.meta_path.remove(cls)
        except ValueError:
            pass
        try:
            import forgeloop_results

            return forgeloop_results.unittest_spec(name, path, target)
        except Exception:
            return None


def _forgeloop_chain():
    """Runs the sitecustomize this file shadows, as Python would have run it."""
    here = _forgeloop_os.path.dirname(_forgeloop_os.path.abspath(__file__))
    rest = []
    for entry in _forgeloop_sys.path:
        try:
            if _forgeloop_os.path.abspath(entry or _forgeloop_os.curdir) == here:
                continue
        except Exception:
            pass
        rest.append(entry)
    # The import system's own classes, already loaded at startup (importlib.util would import
    # a dozen modules first).
    try:
        from _frozen_importlib import module_from_spec
        from _frozen_importlib_external import PathFinder
    except ImportError:
        from importlib.machinery import PathFinder
        from importlib.util import module_from_spec
    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    spec.loader.exec_module(module_from_spec(spec))


if _forgeloop_os.environ.get("FORGELOOP_RESULTS") and not _forgeloop_os.environ.get("FORGELOOP_RESULTS_IN_TEST"):
    if "unittest.result" in _forgeloop_sys.modules:
        try:
            import forgeloop_results

            forgeloop_results.patch_unittest(_forgeloop_sys.modules["unittest.result"])
        except Exception:
            pass
    else:
        _forgeloop_sys.meta_path.insert(0, _ForgeloopUnittestHook)
_forgeloop_chain()
