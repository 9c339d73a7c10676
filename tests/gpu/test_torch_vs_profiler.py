#!/usr/bin/env python3
"""gpufl's Trace engine against torch.profiler on the same PyTorch loop.

torch_loop.py (a deterministic 20-step training loop) runs twice, each in a
fresh process: (a) under `gpufl run --engine trace`, (b) under
torch.profiler with CUDA activities. In both records the measured steps are
the kernels that start between the loop's two fence kernels (spin_kernel,
from torch.cuda._sleep). Requires: the same number of kernels, total kernel
time within 5%, exactly two fences in each, and no dropped records in
gpufl's session. Exits 77 (skipped) without torch or a CUDA device.

usage: test_torch_vs_profiler.py GPUFL_CLI
"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "torch_loop.py")
STEPS = ["--steps", "20", "--warmup", "3"]
TIME_TOLERANCE = 0.05


def skip_reason():
    try:
        import torch
    except ImportError as e:
        return f"torch is not importable ({e})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


def read_ndjson(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n"):  # a torn last line is not a record
                yield json.loads(line)


def channel_lines(session, channel):
    """<channel>.N.log parts, oldest first, then <channel>.log."""
    parts = glob.glob(os.path.join(session, f"{channel}.*.log"))
    parts.sort(key=lambda p: int(p.rsplit(".", 2)[-2]))
    for p in parts + [os.path.join(session, f"{channel}.log")]:
        yield from read_ndjson(p)


def between_fences(kernels, start, end, name):
    """kernels: (start, end, name) tuples. Returns the fences and what lies between."""
    kernels = sorted(kernels, key=start)
    fences = [k for k in kernels if "spin_kernel" in name(k)]
    if len(fences) != 2:
        return fences, []
    lo, hi = end(fences[0]), start(fences[1])
    return fences, [k for k in kernels if lo <= start(k) < hi]


def under_gpufl(cli, tmp):
    logs = os.path.join(tmp, "gpufl-logs")
    os.mkdir(logs)
    cmd = [cli, "run", "--engine", "trace", "--log-path", logs, "--app-name", "torch_loop", "--",
           sys.executable, LOOP] + STEPS
    run = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(run.stderr)
    assert run.returncode == 0, f"gpufl run exited {run.returncode}"
    result = json.loads(run.stdout.strip().splitlines()[-1])
    # The session with the fences: a process the program started could have
    # made a session of its own, without them.
    sessions = [d for d in glob.glob(os.path.join(logs, "*")) if os.path.isdir(d)]
    assert sessions, f"no session directory under {logs}"
    best = None
    for s in sessions:
        kernels = [k for k in channel_lines(s, "device") if k["type"] == "kernel"]
        if any("spin_kernel" in k["name"] for k in kernels):
            best = (s, kernels)
    assert best, f"no session under {logs} recorded the fence kernels"
    session, kernels = best
    dropped = [d for ch in ("device", "scope", "system") for d in channel_lines(session, ch)
               if d["type"] == "dropped"]
    assert not dropped, f"gpufl dropped records: {dropped}"
    fences, inside = between_fences(kernels, lambda k: k["start_ns"], lambda k: k["end_ns"],
                                    lambda k: k["name"])
    assert len(fences) == 2, f"gpufl recorded {len(fences)} fence kernels, 2 were launched"
    print(f"gpufl session {session}: {len(kernels)} kernels in all")
    return result, [k["name"] for k in inside], sum(k["dur_ns"] for k in inside)


def under_profiler(tmp):
    trace = os.path.join(tmp, "profiler.json")
    run = subprocess.run([sys.executable, LOOP, "--profile", trace] + STEPS, capture_output=True, text=True)
    sys.stderr.write(run.stderr)
    assert run.returncode == 0, f"torch_loop.py --profile exited {run.returncode}"
    result = json.loads(run.stdout.strip().splitlines()[-1])
    with open(trace, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    # Kineto files CUPTI's kernel records under "kernel"; copies and memsets
    # are "gpu_memcpy" and "gpu_memset".
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    fences, inside = between_fences(kernels, lambda e: float(e["ts"]),
                                    lambda e: float(e["ts"]) + float(e["dur"]), lambda e: e["name"])
    assert len(fences) == 2, f"torch.profiler recorded {len(fences)} fence kernels, 2 were launched"
    return result, [e["name"] for e in inside], sum(float(e["dur"]) for e in inside) * 1000.0


def show_differences(mine, theirs):
    a, b = collections.Counter(mine), collections.Counter(theirs)
    for name in sorted(set(a) | set(b)):
        if a[name] != b[name]:
            print(f"  {a[name]:5d} gpufl  {b[name]:5d} torch.profiler  {name[:150]}")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    reason = skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        return 77
    cli = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="gpufl-torch-") as tmp:
        g_result, g_names, g_ns = under_gpufl(cli, tmp)
        p_result, p_names, p_ns = under_profiler(tmp)
    print(f"kernels between the fences: gpufl {len(g_names)}, torch.profiler {len(p_names)} "
          f"(profiler events(): {p_result.get('events_kernels')})")
    print(f"kernel time between the fences: gpufl {g_ns / 1e6:.3f} ms, torch.profiler {p_ns / 1e6:.3f} ms "
          f"(events(): {(p_result.get('events_kernel_us') or 0) / 1e3:.3f} ms)")
    print(f"final loss: under gpufl {g_result['loss']!r}, under torch.profiler {p_result['loss']!r}"
          f"{'' if g_result['loss'] == p_result['loss'] else ' (the runs differ: the loop is not deterministic here)'}")
    if len(g_names) != len(p_names):
        print("kernel names whose counts differ:")
        show_differences(g_names, p_names)
    assert len(g_names) > 0, "no kernels between the fences"
    assert len(g_names) == len(p_names), "kernel counts differ"
    diff = abs(g_ns - p_ns) / p_ns
    assert diff <= TIME_TOLERANCE, f"kernel time differs by {diff:.1%} (> {TIME_TOLERANCE:.0%})"
    print(f"PASS (kernel time differs by {diff:.2%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
