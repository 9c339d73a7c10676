#!/usr/bin/env python3
"""What the SASS metrics engine costs a real training loop, next to the
Trace engine and no tracer: bench_resnet50.py's ResNet-50 step (batch 64,
SGD, float32), W warm-up steps (under sass_metrics they include patching
every kernel at its first launch) then M measured ones, each variant R
times in fresh processes, alternating. Prints ms per step per run, the
median and the ratios to none with their spread (min-max over runs
paired by position). Skips without torch, torchvision or a CUDA device.

usage: bench_sass_metrics.py GPUFL_CLI [--runs R] [--warmup W] [--iters M]
"""
import argparse
import datetime
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import gpufl_session  # noqa: E402


def one_run(variant, cli, warmup, iters):
    me = [sys.executable, os.path.join(here, "bench_resnet50.py"), "--child", "--warmup", str(warmup), "--iters",
          str(iters)]
    if variant == "none":
        proc, logs = subprocess.run(me, stdout=subprocess.PIPE, text=True), None
    else:
        proc, logs = gpufl_session.run(cli, me, "resnet50_" + variant, engine=variant, options=("--no-torch-ops",))
    if proc.returncode != 0:
        raise SystemExit(f"bench_sass_metrics: the {variant} run exited {proc.returncode}")
    res = gpufl_session.last_json_line(proc.stdout)
    if logs:
        res["kernels"], res["dropped"] = gpufl_session.counts(logs)
        shutil.rmtree(logs, ignore_errors=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    args = ap.parse_args()
    try:
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f"bench_sass_metrics: SKIP: {e}")
        return 0
    if not torch.cuda.is_available():
        print("bench_sass_metrics: SKIP: torch sees no CUDA device")
        return 0
    cli = os.path.abspath(args.cli)
    variants = ("none", "trace", "sass_metrics")
    res = {v: [] for v in variants}
    for r in range(args.runs):
        for v in (variants if r % 2 == 0 else tuple(reversed(variants))):
            res[v].append(one_run(v, cli, args.warmup, args.iters))
    med = {v: gpufl_session.median([x["ms_per_iter"] for x in res[v]]) for v in variants}
    print(f"bench_sass_metrics ({torch.cuda.get_device_name(0)}, {datetime.date.today()}, torch {torch.__version__})")
    print(f"  ResNet-50 training, batch 64, {args.warmup} warm-up + {args.iters} measured steps, {args.runs} runs each")
    for v in variants:
        vals = " ".join(f"{x['ms_per_iter']:9.2f}" for x in res[v])
        print(f"    {v:13s} ms/step {vals}   median {med[v]:9.2f}")
    for v in ("trace", "sass_metrics"):
        ratios = [a["ms_per_iter"] / b["ms_per_iter"] for a, b in zip(res[v], res["none"])]
        print(f"  {v}: {med[v] / med['none']:.3f}x none [{min(ratios):.3f}-{max(ratios):.3f}]; kernels "
              f"{' '.join(str(x.get('kernels')) for x in res[v])}; dropped "
              f"{' '.join(str(x.get('dropped')) for x in res[v])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
