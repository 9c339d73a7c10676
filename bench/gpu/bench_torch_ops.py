#!/usr/bin/env python3
"""What tracing costs a stream of tiny PyTorch ops: 100 000 `x.add_(1)` on a
16-float CUDA tensor (one kernel each, far shorter than its launch), timed
with no tracer, under `gpufl run --engine trace --no-torch-ops`, under
`gpufl run --engine trace` (which names each kernel's op: gpufl.torch),
and under torch.profiler
with CUDA activities; each run a fresh process, runs alternating in order,
medians reported. The target: gpufl cheaper than torch.profiler. gpufl must
record exactly ops + warm-up kernels and drop none, or the benchmark fails.

The loop time is measured inside the process (ops plus a final
synchronize); the process wall time, measured outside, adds Python and torch
start-up and the tracer's start and stop (torch.profiler builds its event
list when it stops; gpufl writes its last records).

usage: bench_torch_ops.py GPUFL_CLI [--ops N] [--runs R]
       bench_torch_ops.py --child plain|profiler --ops N     (one run)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpufl_session  # noqa: E402

WARMUP = 1000
VARIANTS = ("none", "gpufl", "gpufl_ops", "profiler")
LABELS = {"none": "no tracing    ", "gpufl": "gpufl trace   ", "gpufl_ops": "gpufl + ops   ",
          "profiler": "torch.profiler"}
TRACED = ("gpufl", "gpufl_ops")


def child(mode, ops):
    import torch
    x = torch.empty(16, device="cuda")  # no kernel: only add_ launches any

    def loop():
        for _ in range(WARMUP):
            x.add_(1)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(ops):
            x.add_(1)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    out = {}
    if mode == "profiler":
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            out["loop_s"] = loop()
            t1 = time.perf_counter()
        out["stop_s"] = time.perf_counter() - t1
        out["kernels"] = sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA
                             and not e.name.startswith(("Memcpy", "Memset")))
    else:
        out["loop_s"] = loop()
    print(json.dumps(out))
    return 0


def one_run(variant, cli, ops):
    me = [sys.executable, os.path.abspath(__file__), "--child", "profiler" if variant == "profiler" else "plain",
          "--ops", str(ops)]
    t0 = time.perf_counter()
    if variant in TRACED:
        options = () if variant == "gpufl_ops" else ("--no-torch-ops",)
        proc, logs = gpufl_session.run(cli, me, "torch_ops", options=options)
    else:
        proc, logs = subprocess.run(me, stdout=subprocess.PIPE, text=True), None
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"bench_torch_ops: the {variant} run exited {proc.returncode}: {(proc.stderr or '')[-2000:]}")
    res = gpufl_session.last_json_line(proc.stdout)
    res["wall_s"] = wall
    if logs:
        res["kernels"], res["dropped"] = gpufl_session.counts(logs)
        shutil.rmtree(logs, ignore_errors=True)
    return res


def row(label, values, fmt="{:8.3f}"):
    print(f"    {label} " + " ".join(fmt.format(v) for v in values) +
          f"   median {fmt.format(gpufl_session.median(values))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli", nargs="?")
    ap.add_argument("--child", choices=("plain", "profiler"))
    ap.add_argument("--ops", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.ops)
    if not args.cli:
        ap.error("GPUFL_CLI is required")
    try:
        import torch
    except ImportError as e:
        print(f"bench_torch_ops: SKIP: torch is not importable ({e})")
        return 0
    if not torch.cuda.is_available():
        print("bench_torch_ops: SKIP: torch sees no CUDA device")
        return 0
    cli = os.path.abspath(args.cli)
    res = {v: [] for v in VARIANTS}
    for r in range(args.runs):
        order = VARIANTS if r % 2 == 0 else tuple(reversed(VARIANTS))  # drifts hit all alike
        for v in order:
            res[v].append(one_run(v, cli, args.ops))

    loop = {v: gpufl_session.median([x["loop_s"] for x in res[v]]) for v in VARIANTS}
    print(f"bench_torch_ops ({torch.cuda.get_device_name(0)}, torch {torch.__version__})")
    print(f"  {args.ops} x.add_(1) on a 16-float CUDA tensor after {WARMUP} warm-up ops; {args.runs} runs of "
          "each, each a fresh process, order alternating")
    print("  loop seconds (ops + final synchronize):")
    for v in VARIANTS:
        row(LABELS[v], [x["loop_s"] for x in res[v]])
    print("  process wall seconds (start-up, tracer start and stop included):")
    for v in VARIANTS:
        row(LABELS[v], [x["wall_s"] for x in res[v]])
    print(f"  per op: none {loop['none'] / args.ops * 1e6:.2f} us, gpufl {loop['gpufl'] / args.ops * 1e6:.2f} us, "
          f"gpufl + ops {loop['gpufl_ops'] / args.ops * 1e6:.2f} us, "
          f"torch.profiler {loop['profiler'] / args.ops * 1e6:.2f} us")
    ops_rounds = [o["loop_s"] / g["loop_s"] for o, g in zip(res["gpufl_ops"], res["gpufl"])]
    print(f"  op attribution: gpufl + ops / gpufl per round: median {gpufl_session.median(ops_rounds):.3f}, "
          f"min {min(ops_rounds):.3f}, max {max(ops_rounds):.3f}; "
          f"{(loop['gpufl_ops'] - loop['gpufl']) / args.ops * 1e6:+.2f} us per op")
    print(f"  ratio gpufl / none: {loop['gpufl'] / loop['none']:.3f}   torch.profiler / none: "
          f"{loop['profiler'] / loop['none']:.3f}")
    ratio = loop["gpufl"] / loop["profiler"]
    print(f"  ratio gpufl / torch.profiler: {ratio:.3f} (target < 1: {'met' if ratio < 1 else 'NOT met'})")
    # each round runs every variant once, back to back: its ratio sees one drift
    rounds = [g["loop_s"] / p["loop_s"] for g, p in zip(res["gpufl"], res["profiler"])]
    print(f"    per round: median {gpufl_session.median(rounds):.3f}, min {min(rounds):.3f}, "
          f"max {max(rounds):.3f} over {len(rounds)} rounds")
    want = args.ops + WARMUP
    for v in TRACED:
        print(f"  {v} kernel records per run: {' '.join(str(x['kernels']) for x in res[v])} "
              f"(expected {want}); dropped: {' '.join(str(x['dropped']) for x in res[v])}")
    print(f"  torch.profiler kernel events per run: {' '.join(str(x['kernels']) for x in res['profiler'])}")
    ok = all(x["kernels"] == want and x["dropped"] == 0 for v in TRACED for x in res[v])
    if not ok:
        print(f"  FAILED: every gpufl run must record {want} kernels and drop none")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
