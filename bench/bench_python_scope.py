#!/usr/bin/env python3
"""Cost of a gpufl scope from Python, next to a baseline in the same run.

Figures, ns per iteration (median of 7 runs, [min-max] over the runs):
  - ``with s:`` on a kept gpufl.Scope, against the same with-statement on an
    empty context manager (a class with __slots__ whose __enter__ and
    __exit__ do nothing): the Scope's enter+exit, target <= 1 us;
  - ``with gpufl.Scope("step"):`` creating the Scope each time, against
    creating the empty context manager each time;
  - a call of an @gpufl.scope function against a call of the same plain
    function;
  - the two C calls alone through the package's ctypes bindings
    (gpufl._lib.scope_begin/scope_end), for where the time goes;
  - ``with s:`` while gpufl is off (init(enabled=False)).

As bench/bench_scope.c does for C: every variant runs in bursts of 2048
scopes (4096 events, half of a thread's ring), the collector draining
between bursts (a pause that is not timed), so what is measured is really
recording, never dropping; the run fails if the session counted a ring
drop. The variants alternate within each of the 7 runs. The session's
disk cap is the smallest there is (1 MiB): events past it are counted by
the collector after the producer's work is done, so the figure does not
depend on the disk. Logs go to $BENCH_DIR (default: a temporary directory).

  GPUFL_LIBRARY=build/libgpufl.so PYTHONPATH=python python3 bench/bench_python_scope.py
"""

import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

import gpufl
from gpufl import _lib

BURST = 2048
BURSTS = 50
RUNS = 7
DRAIN_S = 0.012  # longer than the collector's longest sleep (10 ms)


class Empty:
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False


def timed(loop):
    """ns per iteration of loop(n), over BURSTS bursts with a drain pause."""
    total = 0
    for _ in range(BURSTS):
        t0 = time.perf_counter_ns()
        loop(BURST)
        total += time.perf_counter_ns() - t0
        time.sleep(DRAIN_S)
    return total / (BURSTS * BURST)


def kept(cm):
    def loop(n):
        for _ in range(n):
            with cm:
                pass
    return loop


def fresh(factory):
    def loop(n):
        for _ in range(n):
            with factory("step"):
                pass
    return loop


def calls(fn):
    def loop(n):
        for _ in range(n):
            fn()
    return loop


def c_pair(n, begin=_lib.scope_begin, end=_lib.scope_end, name=b"step"):
    for _ in range(n):
        end(begin(name))


def plain():
    pass


decorated = gpufl.scope("step")(plain)


def fmt(xs):
    return "%7.1f [%.1f-%.1f]" % (statistics.median(xs), min(xs), max(xs))


def measure(variants):
    results = {name: [] for name, _ in variants}
    for _ in range(RUNS):
        for name, loop in variants:
            results[name].append(timed(loop))
    return results


def main():
    base = os.environ.get("BENCH_DIR") or None
    logs = tempfile.mkdtemp(prefix="bench_python_scope-", dir=base)
    try:
        if not gpufl.init(app_name="bench_python_scope", log_path=logs, session_max_bytes="1MiB",
                          backend=gpufl.BackendKind.None_):
            sys.exit("bench_python_scope: gpufl.init failed: " + gpufl.last_error())
        on = measure([
            ("empty context manager, kept", kept(Empty())),
            ("gpufl.Scope, kept", kept(gpufl.Scope("step"))),
            ("empty context manager, created each time", fresh(lambda name: Empty())),
            ("gpufl.Scope, created each time", fresh(gpufl.Scope)),
            ("plain function call", calls(plain)),
            ("@gpufl.scope function call", calls(decorated)),
            ("C begin+end through ctypes alone", c_pair),
        ])
        gpufl.shutdown()
        with open(os.path.join(gpufl.session_dir(), "session.json")) as f:
            ring_full = json.load(f)["summary"]["dropped"].get("ring_full", 0)
        if ring_full:
            sys.exit("bench_python_scope: %d events dropped on a full ring: the figures are not "
                     "of recording" % ring_full)
        gpufl.init(enabled=False)
        off = measure([("gpufl.Scope, kept, gpufl off (enabled=False)", kept(gpufl.Scope("step")))])
    finally:
        shutdown_and_clean(logs)

    print("bench_python_scope: %s %s, libgpufl %s (%s), %d runs of %d x %d scopes" %
          (platform.python_implementation(), platform.python_version(), gpufl.version(), _lib.path,
           RUNS, BURSTS, BURST))
    print("  ns per iteration, median [min-max] of the runs; nothing dropped")
    for name, xs in list(on.items()) + list(off.items()):
        print("  %-48s %s" % (name, fmt(xs)))
    pairs = [("Scope enter+exit above the empty context manager", "gpufl.Scope, kept",
              "empty context manager, kept"),
             ("Scope created, entered, left, above the empty one", "gpufl.Scope, created each time",
              "empty context manager, created each time"),
             ("@gpufl.scope above the plain call", "@gpufl.scope function call", "plain function call")]
    for label, a, b in pairs:
        diffs = [x - y for x, y in zip(on[a], on[b])]
        print("  %-48s %s" % (label, fmt(diffs)))
    scope = statistics.median(on["gpufl.Scope, kept"])
    print("  target: Scope enter+exit <= 1000 ns: %s" % ("met" if scope <= 1000 else "NOT met"))


def shutdown_and_clean(logs):
    gpufl.shutdown()
    shutil.rmtree(logs, ignore_errors=True)


if __name__ == "__main__":
    main()
