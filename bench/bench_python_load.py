#!/usr/bin/env python3
"""Loading a 10 M-event session into pandas with gpufl.analyzer, next to
the C reader alone in the same run.

The session is the synthetic Trace-engine session of the reader
benchmarks (bench/trace_gen.c on bench/data/kernel_mix.json: 87 % kernels,
NVTX ranges, scopes, copies, memsets, syncs, allocations, GPU and host
samples), written once as .gflt by bench_write_gflt into $BENCH_DIR
(default /tmp) and kept there for later runs.

Every measurement runs in a fresh Python process (so that resident memory
and its peak belong to that measurement alone), after numpy and pandas are
imported; figures are the process's wall seconds and its resident memory
above what it held before opening (now and at its peak, VmHWM):

  C reader   gpufl_trace_open() alone, through the package's ctypes binding
             (gpufl._trace.Trace): the baseline;
  kernels    GpuFlightSession(path).kernels: open + the kernels DataFrame,
             the figure the targets are for (<= 4 s, <= 2 x the C reader's
             peak memory);
  lean       GpuFlightSession(path).frame("kernels", [start_ns, dur_ns,
             name, device, stream]): only the columns asked for;
  all        GpuFlightSession(path) and every DataFrame (kernels, memcpy,
             memsets, syncs, memory, scopes, scope_events, ops,
             device_metrics, host_metrics), with each one's seconds.

C reader, kernels and lean alternate, RUNS times each (median, [min-max]); "all"
runs once at the end. A last figure is what this machine charges for
memory touched for the first time: seconds to fill 1 GiB of fresh pages,
for reading the others (building a DataFrame writes hundreds of MB).

  GPUFL_LIBRARY=build/libgpufl.so PYTHONPATH=python python3 bench/bench_python_load.py \\
      [--events N] [--runs R] [--writer build/bench/bench_write_gflt]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
import numpy as np
import pandas as pd

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024

mode, path = sys.argv[1], sys.argv[2]
from gpufl import _trace
from gpufl.analyzer import GpuFlightSession
out = {}
base = status("VmRSS")
t0 = time.perf_counter()
if mode == "c":
    t = _trace.Trace(path)
    out["open_s"] = time.perf_counter() - t0
    out["trace_bytes"] = t.memory_bytes()
    out["kernels"] = t.table("kernels").n
elif mode == "kernels":
    s = GpuFlightSession(path)
    t1 = time.perf_counter()
    k = s.kernels
    out["open_s"], out["frame_s"] = t1 - t0, time.perf_counter() - t1
    out["kernels"] = len(k)
    out["trace_bytes"] = s.trace.memory_bytes()
elif mode == "lean":
    s = GpuFlightSession(path)
    t1 = time.perf_counter()
    k = s.frame("kernels", ["start_ns", "dur_ns", "name", "device", "stream"])
    out["open_s"], out["frame_s"] = t1 - t0, time.perf_counter() - t1
    out["kernels"] = len(k)
elif mode == "all":
    s = GpuFlightSession(path)
    out["open_s"] = time.perf_counter() - t0
    out["frames"] = {}
    for name in ("kernels", "memcpy", "memsets", "syncs", "memory", "scopes", "scope_events", "ops",
                 "device_metrics", "host_metrics"):
        t1 = time.perf_counter()
        f = getattr(s, name)
        out["frames"][name] = [len(f), time.perf_counter() - t1]
elif mode == "touch":
    a = np.ones(1 << 30, np.uint8)
    out["touch_s"] = time.perf_counter() - t0
out["total_s"] = time.perf_counter() - t0
out["rss"] = status("VmRSS") - base
out["peak"] = status("VmHWM") - base
print(json.dumps(out))
"""


def child(mode, path):
    r = subprocess.run([sys.executable, "-c", CHILD, mode, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode != 0:
        sys.exit("bench_python_load: the %s run failed:\n%s" % (mode, r.stderr))
    return json.loads(r.stdout.strip().splitlines()[-1])


def med(values, fmt):
    return "%s [%s-%s]" % (fmt % statistics.median(values), fmt % min(values), fmt % max(values))


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return "%s, %d CPUs, Linux %s, Python %s" % (model, os.cpu_count() or 0, platform.release(),
                                                 platform.python_version())


def session_file(events, writer):
    root = os.path.join(os.environ.get("BENCH_DIR") or "/tmp", "gpufl-bench-python")
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, "synthetic-%d.gflt" % events)
    if not os.path.isfile(path):
        if not writer or not os.access(writer, os.X_OK):
            sys.exit("bench_python_load: %s is missing and no bench_write_gflt to write it (--writer)" % path)
        t = time.perf_counter()
        subprocess.run([writer, path + ".tmp", str(events)], check=True)
        os.replace(path + ".tmp", path)
        print("  wrote %s (%.1f MB) in %.1f s" % (path, os.path.getsize(path) / 1e6, time.perf_counter() - t))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=5)
    lib = os.environ.get("GPUFL_LIBRARY", "")
    ap.add_argument("--writer", default=os.path.join(os.path.dirname(lib), "bench", "bench_write_gflt") if lib
                    else None)
    args = ap.parse_args()
    print("bench_python_load (%s)" % machine())
    path = session_file(args.events, args.writer)
    c, k, lean = [], [], []
    for _ in range(args.runs):
        c.append(child("c", path))
        k.append(child("kernels", path))
        lean.append(child("lean", path))
    every = child("all", path)
    touch = [child("touch", path)["touch_s"] for _ in range(3)]
    mib = 1 << 20
    n = k[0]["kernels"]
    print("  session: %s, %d events, %d kernels; C trace %.1f MiB (%.1f bytes/event)" % (
        path, args.events, n, c[0]["trace_bytes"] / mib, c[0]["trace_bytes"] / args.events))
    print("  C reader (gpufl_trace_open)   %s s; memory %s MiB, peak %s MiB" % (
        med([r["total_s"] for r in c], "%.2f"), med([r["rss"] / mib for r in c], "%.0f"),
        med([r["peak"] / mib for r in c], "%.0f")))
    print("  kernels DataFrame             %s s (open %s + frame %s); memory %s MiB, peak %s MiB" % (
        med([r["total_s"] for r in k], "%.2f"), med([r["open_s"] for r in k], "%.2f"),
        med([r["frame_s"] for r in k], "%.2f"), med([r["rss"] / mib for r in k], "%.0f"),
        med([r["peak"] / mib for r in k], "%.0f")))
    ratios = [kr["peak"] / cr["peak"] for kr, cr in zip(k, c)]
    frame = [(kr["rss"] - cr["rss"]) / n for kr, cr in zip(k, c)]
    print("    peak memory / C reader's    %s x (target <= 2); the frame alone %s bytes/kernel" % (
        med(ratios, "%.2f"), med(frame, "%.0f")))
    print("    time target <= 4 s: %s; memory target <= 2 x: %s" % (
        "met" if statistics.median([r["total_s"] for r in k]) <= 4 else "MISSED",
        "met" if statistics.median(ratios) <= 2 else "MISSED"))
    print("  lean kernels frame (5 cols)   %s s (open %s + frame %s); memory %s MiB, peak %s MiB = %s x" % (
        med([r["total_s"] for r in lean], "%.2f"), med([r["open_s"] for r in lean], "%.2f"),
        med([r["frame_s"] for r in lean], "%.2f"), med([r["rss"] / mib for r in lean], "%.0f"),
        med([r["peak"] / mib for r in lean], "%.0f"), med([lr["peak"] / cr["peak"] for lr, cr in zip(lean, c)],
                                                          "%.2f")))
    print("  every DataFrame (one run)     %.2f s, open %.2f; memory %.0f MiB, peak %.0f MiB" % (
        every["total_s"], every["open_s"], every["rss"] / mib, every["peak"] / mib))
    for name, (rows, secs) in every["frames"].items():
        print("    %-14s %9d rows  %.2f s" % (name, rows, secs))
    print("  baseline: filling 1 GiB of fresh memory  %s s" % med(touch, "%.2f"))


if __name__ == "__main__":
    main()
