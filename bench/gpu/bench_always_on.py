#!/usr/bin/env python3
"""What leaving gpufl on costs (issue 13): a workload run for S seconds with
no gpufl, and with the always-on setting (Monitor sampling every second, a
60 s flight window, the compact logs, and Trace only in a window of 1 s
every 60 s), each a fresh process, alternating. Reports iterations per
second of each and their ratio, over the whole run and per 30 s slice
(median [min-max]: the slices that hold a trace window cost more).

Workloads (launch-bound ones are the worst case, ResNet-50 a real job):
  empty   empty CUDA kernels launched from CuPy (a RawKernel <<<1,1>>>)
  tiny    x.add_(1) on a 16-float CUDA tensor (PyTorch)
  resnet  ResNet-50 training steps, batch 64, 224x224, SGD (torchvision)

--dump-at T (gpufl runs only): at T seconds the process sends itself the
dump signal, and the report gives the dump's time (from the session's log)
and the longest iteration within 2 s after it against the median.

usage: bench_always_on.py WORKLOAD [--seconds S] [--runs R] [--dump-at T]
       bench_always_on.py --child WORKLOAD --seconds S [--gpufl LOGS] [--dump-at T]
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

SLICE_S = 30.0


def setup(workload):
    if workload == "empty":
        import cupy
        kernel = cupy.RawKernel(r'extern "C" __global__ void k() {}', "k")
        kernel((1,), (1,), ())
        cupy.cuda.Device().synchronize()
        return lambda: kernel((1,), (1,), ()), cupy.cuda.Device().synchronize
    import torch
    if workload == "tiny":
        x = torch.zeros(16, device="cuda")
        return lambda: x.add_(1), torch.cuda.synchronize
    import torchvision
    model = torchvision.models.resnet50().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(64, 3, 224, 224, device="cuda")
    target = torch.randint(0, 1000, (64,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(data), target).backward()
        opt.step()
        torch.cuda.synchronize()  # a step is a step: its time is the GPU's too
    for _ in range(5):
        step()
    return step, torch.cuda.synchronize


def child(args):
    step, sync = setup(args.child)
    if args.gpufl:
        import gpufl
        engine = "monitor" if args.setting == "monitor" else "trace"
        ok = gpufl.init(app_name="always-on", log_path=args.gpufl, profiling_engine=engine,
                        flight_window_s=60, trace_every_s=60, trace_for_s=1,
                        system_sample_rate_ms=1000, continuous_system_sampling=True)
        if not ok:
            sys.exit(f"gpufl.init failed: {gpufl.last_error()}")
    # iterations per slice; for a dump, each iteration's time around it
    batch = 1 if args.child == "resnet" else 200
    slices = [0] * (int(args.seconds // SLICE_S) + 1)
    times = []  # (t, seconds of the batch) for the dump's neighbourhood
    dumped = None
    t0 = time.perf_counter()
    now = t0
    while now - t0 < args.seconds:
        b0 = time.perf_counter()
        for _ in range(batch):
            step()
        now = time.perf_counter()
        slices[int((now - t0) // SLICE_S)] += batch
        if args.dump_at:
            times.append((now - t0, now - b0))
            if dumped is None and now - t0 >= args.dump_at:
                dumped = now - t0
                os.kill(os.getpid(), signal.SIGUSR2)
    sync()
    elapsed = time.perf_counter() - t0
    if args.gpufl:
        import gpufl
        gpufl.shutdown()
    result = {"iterations": sum(slices), "seconds": elapsed, "slices": slices[:int(elapsed // SLICE_S)]}
    if dumped is not None:
        near = [d for t, d in times if dumped <= t <= dumped + 2.0]
        result["dump"] = {"at": dumped, "median_iteration_s": statistics.median(d for _, d in times),
                          "longest_after_s": max(near) if near else None, "iterations_after": len(near)}
    print(json.dumps(result))


def run_child(workload, seconds, logs, dump_at, setting="on"):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", workload, "--seconds", str(seconds)]
    if logs:
        cmd += ["--gpufl", logs, "--setting", setting]
    if dump_at:
        cmd += ["--dump-at", str(dump_at)]
    env = dict(os.environ)
    if setting == "attached":  # CUPTI left attached between windows, for comparison
        env["GPUFL_CUPTI_FINALIZE"] = "0"
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def dump_log(logs):
    """The 'flight window dumped' log line of the session under logs."""
    for root, _, files in os.walk(logs):
        for f in files:
            if f.startswith("system") and f.endswith(".log"):
                for line in open(os.path.join(root, f)):
                    if "flight window dumped" in line:
                        return json.loads(line)["message"]
    return None


def compare(args):
    """Each setting beside none, args.runs rounds, order rotating: rates and ratios."""
    names = ["none"] + args.compare.split(",")
    rates = {n: [] for n in names}
    for r in range(args.runs):
        for n in names[r % len(names):] + names[:r % len(names)]:
            logs = tempfile.mkdtemp(prefix="gpufl-always-on-") if n != "none" else None
            got = run_child(args.workload, args.seconds, logs, None, n)
            rates[n].append(got["iterations"] / got["seconds"])
            if logs:
                shutil.rmtree(logs, ignore_errors=True)
    base = statistics.median(rates["none"])
    for n in names:
        ratios = [b / x for b, x in zip(rates["none"], rates[n])]
        print(f"{args.workload} {n:9s}: {statistics.median(rates[n]):10.1f}/s  time ratio "
              f"{base / statistics.median(rates[n]):.4f} [{min(ratios):.4f}-{max(ratios):.4f}]")
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("workload", nargs="?", choices=("empty", "tiny", "resnet"))
    p.add_argument("--child", choices=("empty", "tiny", "resnet"))
    p.add_argument("--seconds", type=float, default=300)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--gpufl")
    p.add_argument("--dump-at", type=float)
    p.add_argument("--setting", default="on", choices=("on", "monitor", "attached"),
                   help="gpufl runs: the always-on setting; monitor: no Trace windows; attached: CUPTI kept "
                        "attached between windows")
    p.add_argument("--compare", help="comma-separated settings to time beside none (a quick comparison)")
    args = p.parse_args()
    if args.child:
        return child(args)
    try:
        if args.workload == "empty":
            import cupy  # noqa: F401
        else:
            import torch
            if not torch.cuda.is_available():
                raise ImportError("no CUDA device")
    except ImportError as e:
        print(f"SKIP: {e}")
        return 0
    if args.compare:
        return compare(args)
    rates = {"none": [], "gpufl": []}
    slice_ratios = []
    for r in range(args.runs):
        order = ("none", "gpufl") if r % 2 == 0 else ("gpufl", "none")
        got = {}
        for v in order:
            logs = tempfile.mkdtemp(prefix="gpufl-always-on-") if v == "gpufl" else None
            got[v] = run_child(args.workload, args.seconds, logs, args.dump_at if v == "gpufl" else None)
            rates[v].append(got[v]["iterations"] / got[v]["seconds"])
            if logs:
                if args.dump_at:
                    print("  dump:", json.dumps(got[v].get("dump")), "|", dump_log(logs))
                size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(logs) for f in fs)
                print(f"  gpufl run {r}: {size / 1e6:.1f} MB on disk")
                shutil.rmtree(logs, ignore_errors=True)
        n = min(len(got["none"]["slices"]), len(got["gpufl"]["slices"]))
        slice_ratios += [got["none"]["slices"][i] / got["gpufl"]["slices"][i] for i in range(n)]
        print(f"  run {r}: none {rates['none'][-1]:.1f}/s, gpufl {rates['gpufl'][-1]:.1f}/s, "
              f"ratio {rates['none'][-1] / rates['gpufl'][-1]:.4f}")
    ratio = statistics.median(rates["none"]) / statistics.median(rates["gpufl"])
    print(f"{args.workload}: {args.seconds:.0f} s each, {args.runs} runs of each: time ratio gpufl/none "
          f"{ratio:.4f}; per {SLICE_S:.0f} s slice {statistics.median(slice_ratios):.4f} "
          f"[{min(slice_ratios):.4f}-{max(slice_ratios):.4f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
