# swe-harvest's line counter (pipeline/swt/tracer.py), installed as `sitecustomize`
# for the test runs of `validate --coverage` and `evaluate --mode swt`.
#
# It does nothing unless SWE_HARVEST_TRACE_FILES names files (one path per line,
# relative to SWE_HARVEST_TRACE_ROOT, /testbed by default). Then it counts how often
# each line of those files runs, in every thread of this process, and at exit writes
# {"counts": {"path": {"line": count}}, "tracer_replaced": bool} to
# SWE_HARVEST_TRACE_OUT.<pid>.json. Counts, not a set of covered lines: SWT-Bench's
# change coverage compares execution counts.
#
# Only frames of the named files get a line tracer, so other code pays for one call
# event per function call. A forked child starts from zero counts (its parent writes
# its own). Code that installs its own tracer (pytest-cov, debuggers) replaces this
# one; `tracer_replaced` then says that the counts are incomplete.
import os

_FILES = os.environ.get("SWE_HARVEST_TRACE_FILES", "")
_OUT = os.environ.get("SWE_HARVEST_TRACE_OUT", "")

if _FILES.strip() and _OUT:
    import atexit
    import json
    import sys
    import threading

    _root = os.path.realpath(os.environ.get("SWE_HARVEST_TRACE_ROOT", "/testbed"))
    _wanted = {line.strip() for line in _FILES.splitlines() if line.strip()}
    _counts = {}
    _paths = {}

    def _relative(filename):
        try:
            return _paths[filename]
        except KeyError:
            pass
        relative = None
        if filename and not filename.startswith("<"):
            path = os.path.realpath(filename)
            if path.startswith(_root + os.sep):
                candidate = os.path.relpath(path, _root).replace(os.sep, "/")
                if candidate in _wanted:
                    relative = candidate
        _paths[filename] = relative
        return relative

    def _global_tracer(frame, event, arg):
        if event != "call":
            return None
        relative = _relative(frame.f_code.co_filename)
        if relative is None:
            return None
        lines = _counts.setdefault(relative, {})

        def _line_tracer(frame, event, arg):
            if event == "line":
                number = frame.f_lineno
                lines[number] = lines.get(number, 0) + 1
            return _line_tracer

        # The call event itself is not a line; the first line event follows.
        return _line_tracer

    def _write():
        replaced = sys.gettrace() is not _global_tracer
        sys.settrace(None)
        counts = {path: {str(line): hits for line, hits in lines.items()} for path, lines in _counts.items()}
        try:
            with open("%s.%d.json" % (_OUT, os.getpid()), "w") as out:
                json.dump({"counts": counts, "tracer_replaced": replaced}, out)
        except OSError:
            pass

    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_counts.clear)
    atexit.register(_write)
    threading.settrace(_global_tracer)
    sys.settrace(_global_tracer)
