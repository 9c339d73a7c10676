#!/usr/bin/env python3
"""Step trace windows on a real GPU: CUPTI switched on for exactly the
steps trace_every_steps / trace_steps name, and off in between.

A deterministic PyTorch loop of STEPS steps, each inside gpufl scope
"step" (the gpufl package's Scope), runs twice, each in a fresh process
(a session per process):

(a) baseline: the Trace engine all the time; every step's kernel count;
(b) windows: trace_every_steps=EVERY, trace_steps=TRACED: device kernels
    must be recorded only for steps 0-1, 10-11, 20-21, 30-31: each
    kernel's start lies in one of those steps' spans (plus SLACK_NS for the
    GPU running behind the host: a step's last kernels finish after its
    scope ends, which the window's end waits for), every traced step has
    the baseline's kernel count for that step (none lost at a window's
    edge, none twice), and the session marks each window with a
    trace_window event of reason "steps" covering those steps.

Exits 77 (skipped) without torch or a CUDA device.

usage: test_trace_steps.py LIBGPUFL CUPTI_PLUGIN PYTHON_PACKAGE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_session import lines, skip_reason  # noqa: E402

STEPS, EVERY, TRACED = 40, 10, 2
SLACK_NS = 50_000_000  # a kernel may start this long after its step's scope ended


def traced_steps():
    return [s for s in range(STEPS) if s % EVERY < TRACED]


def child(mode, logs):
    """Runs the loop in this process; mode "full" or "windows"."""
    import torch

    import gpufl

    options = dict(app_name=f"steps-{mode}", log_path=logs, profiling_engine="trace", log_format="ndjson")
    if mode == "windows":
        options.update(trace_every_steps=EVERY, trace_steps=TRACED, trace_step_scope="step")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    # warm-up outside the session: lazy module loading and allocator growth
    # would make step 0 launch kernels no other step does
    for _ in range(3):
        opt.zero_grad(set_to_none=False)
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    torch.cuda.synchronize()
    if not gpufl.init(**options):
        print(f"FAIL: gpufl.init: {gpufl.last_error()}")
        return 1
    for _ in range(STEPS):
        with gpufl.Scope("step"):
            opt.zero_grad(set_to_none=False)
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
    torch.cuda.synchronize()
    gpufl.shutdown()
    return 0


def read_session(logs):
    (session,) = [os.path.join(logs, d) for d in os.listdir(logs)]
    steps = sorted(((ln["begin_ns"], ln["ts_ns"]) for ln in lines(session, "scope")
                    if ln.get("type") == "scope_end" and ln.get("name") == "step"))
    kernels = [ln["start_ns"] for ln in lines(session, "device") if ln.get("type") == "kernel"]
    windows = [ln for ln in lines(session, "system") if ln.get("type") == "trace_window" and "end_ns" in ln]
    return steps, kernels, windows


def per_step(steps, kernels, failures, label):
    """Kernels per step; a kernel in no step (with slack) is a failure."""
    counts = [0] * len(steps)
    for start in kernels:
        for i, (b, e) in enumerate(steps):
            if b <= start <= e + SLACK_NS and (i + 1 == len(steps) or start < steps[i + 1][0]):
                counts[i] += 1
                break
        else:
            failures.append(f"{label}: a kernel at {start} ns starts in no step")
    return counts


def run_child(mode, logs, argv):
    env = dict(os.environ, GPUFL_LIBRARY=argv[1], GPUFL_DEVICE_PLUGIN=argv[2],
               PYTHONPATH=argv[3] + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("GPUFL_DISABLED", None)
    return subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode, logs], env=env).returncode


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    why = skip_reason()
    if why:
        print(f"SKIP: {why}")
        return 77
    failures = []
    results = {}
    for mode in ("full", "windows"):
        logs = tempfile.mkdtemp(prefix=f"gpufl-steps-{mode}-")
        rc = run_child(mode, logs, sys.argv)
        if rc != 0:
            print(f"FAIL: the {mode} run exited {rc}")
            return 1
        results[mode] = read_session(logs)
    steps, kernels, _ = results["full"]
    if len(steps) != STEPS:
        failures.append(f"full: {len(steps)} step scopes, want {STEPS}")
    base = per_step(steps, kernels, failures, "full")
    steps, kernels, windows = results["windows"]
    if len(steps) != STEPS:
        failures.append(f"windows: {len(steps)} step scopes, want {STEPS}")
    got = per_step(steps, kernels, failures, "windows")
    for s in range(min(STEPS, len(got), len(base))):
        want = base[s] if s in traced_steps() else 0
        if got[s] != want:
            failures.append(f"step {s}: {got[s]} kernels, want {want}")
    firsts = list(range(0, STEPS, EVERY))
    if len(windows) != len(firsts):
        failures.append(f"{len(windows)} closed trace windows, want {len(firsts)}")
    for w, k in zip(windows, firsts):
        last = k + TRACED - 1
        if w.get("reason") != "steps" or w.get("detail") != f"steps {k}-{last} of `step`":
            failures.append(f"window {w.get('index')}: {json.dumps(w)}")
        elif not (w["ts_ns"] <= steps[k][0] and w["end_ns"] >= steps[last][1]):
            failures.append(f"window {w.get('index')} does not cover steps {k}-{last}")
        elif last + 1 < len(steps) and w["end_ns"] > steps[last + 1][0]:
            failures.append(f"window {w.get('index')} runs into step {last + 1}")
    print(f"baseline kernels per step: {base[:3]}...; traced steps {traced_steps()}")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
