"""A pytest plugin of agent-tools: records which of the project's functions each test runs.

Loaded with ``-p agent_tools_reach`` by the ``test`` tool when it runs pytest. For every test
(setup, call and teardown) it notes each function, method, lambda or comprehension of the
project that started, never the standard library's or an installed package's. At the end of
the session it writes one JSON file, ``$AGENT_TOOLS_REACH_OUT-<worker>.json``:

    {"files": {"pkg/mod.py": "<sha256 of its bytes>"},
     "functions": [["pkg/mod.py", first_line, last_line, "name"]],
     "tests": [{"id": "tests/test_x.py::test_y", "file": "tests/test_x.py", "line": 3,
                "functions": [0, 4]}]}

Paths are relative to ``$AGENT_TOOLS_REACH_ROOT`` (the project's folder), with ``/``;
parametrized tests are merged under their function's id. Python 3.12 and later are watched
through ``sys.monitoring`` (each function reported once per test); older ones through a
profile function. The plugin changes no test's outcome: a failure of its own is printed
and the run goes on.
"""

import hashlib
import json
import os
import sys
import threading

import pytest

_OUT = os.environ.get("AGENT_TOOLS_REACH_OUT")
_ROOT = os.path.realpath(os.environ.get("AGENT_TOOLS_REACH_ROOT") or os.getcwd())
# A function's code has its own namespace; a module's or a class body's does not, and runs
# once at import, under whichever test happened to import it.
_CO_NEWLOCALS = 0x02
# Installed code inside the project's folder (a virtual environment) is not the project's.
_INSTALLED = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


class _Recorder:
    def __init__(self):
        self.index_of = {}
        self.functions = []
        self.files = set()
        self.current = None
        self.tests = {}

    def index(self, code):
        try:
            return self.index_of[code]
        except KeyError:
            pass
        found = None
        if code.co_flags & _CO_NEWLOCALS and code.co_filename:
            path = os.path.realpath(code.co_filename)
            if path.startswith(_ROOT + os.sep) and not any(p in path for p in _INSTALLED):
                if hasattr(code, "co_lines"):
                    lines = [line for _, _, line in code.co_lines() if line is not None]
                else:
                    import dis

                    lines = [line for _, line in dis.findlinestarts(code)]
                first = code.co_firstlineno
                last = max(lines + [first])
                rel = os.path.relpath(path, _ROOT).replace(os.sep, "/")
                self.functions.append([rel, first, last, code.co_name])
                self.files.add(rel)
                found = len(self.functions) - 1
        self.index_of[code] = found
        return found

    def saw(self, code):
        current = self.current
        if current is not None:
            i = self.index(code)
            if i is not None:
                current.add(i)

    def begin(self):
        self.current = set()

    def end(self, item):
        ran, self.current = self.current, None
        if ran is None:
            return
        path = str(getattr(item, "path", None) or item.fspath)
        rel = os.path.relpath(os.path.realpath(path), _ROOT).replace(os.sep, "/")
        parts = item.nodeid.split("::")[1:]
        if parts:
            parts[-1] = parts[-1].split("[", 1)[0]
        test_id = "::".join([rel] + parts)
        line = item.location[1] + 1 if item.location[1] is not None else 1
        entry = self.tests.setdefault(test_id, {"id": test_id, "file": rel, "line": line, "functions": set()})
        entry["functions"] |= ran

    def write(self):
        files = {}
        for rel in sorted(self.files):
            try:
                with open(os.path.join(_ROOT, rel), "rb") as f:
                    files[rel] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                pass
        tests = [dict(t, functions=sorted(t["functions"])) for t in self.tests.values()]
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        out = "{}-{}.json".format(_OUT, worker)
        with open(out + ".part", "w", encoding="utf-8") as f:
            json.dump({"files": files, "functions": self.functions, "tests": tests}, f)
        os.replace(out + ".part", out)


_REC = _Recorder()


def _watch_by_monitoring():
    mon = sys.monitoring
    tool = next((i for i in range(6) if mon.get_tool(i) is None), None)
    if tool is None:
        return False
    mon.use_tool_id(tool, "agent-tools")

    def started(code, offset):
        if _REC.current is None:
            return None
        _REC.saw(code)
        # Once per test: the next test re-enables it (`restart_events`).
        return mon.DISABLE

    mon.register_callback(tool, mon.events.PY_START, started)
    mon.set_events(tool, mon.events.PY_START)
    return True


def _watch_by_profile():
    # Called for every call and return, of C functions too: kept to the fewest steps.
    known = _REC.index_of

    def profile(frame, event, arg):
        if event != "call":
            return
        current = _REC.current
        if current is None:
            return
        code = frame.f_code
        i = known.get(code, -1)
        if i == -1:
            i = _REC.index(code)
        if i is not None:
            current.add(i)

    sys.setprofile(profile)
    threading.setprofile(profile)


_MONITORED = False


def pytest_configure(config):
    global _MONITORED
    if not _OUT:
        return
    _MONITORED = hasattr(sys, "monitoring") and _watch_by_monitoring()
    if not _MONITORED:
        _watch_by_profile()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _OUT:
        yield
        return
    if _MONITORED:
        sys.monitoring.restart_events()
    _REC.begin()
    yield
    try:
        _REC.end(item)
    except Exception as e:  # never the test's fault
        sys.stderr.write("agent-tools: not recorded for {}: {}\n".format(item.nodeid, e))


def pytest_sessionfinish(session, exitstatus):
    if not _OUT or not _REC.tests:
        return
    if not _MONITORED:
        sys.setprofile(None)
        threading.setprofile(None)
    try:
        _REC.write()
    except Exception as e:
        sys.stderr.write("agent-tools: what the tests ran was not written: {}\n".format(e))
