#!/usr/bin/env python3
"""What the Trace engine costs a real training loop: torchvision's ResNet-50
(random weights), synthetic batch of 64 at 224x224, SGD with momentum,
float32 as PyTorch defaults it. Warm-up iterations, then M measured ones
(by default enough for about 20 s, from a short calibration run), with no
tracer and under `gpufl run --engine trace`, alternating, 3 runs of each,
each a fresh process. Reports ms per iteration (medians) and the overhead.
Skips, saying so, without torch, torchvision or a CUDA device.

With --engines E1,E2,... the variants are no tracer and `gpufl run
--engine E` for each E (e.g. trace,pc_sampling: what PC sampling adds
next to Trace), without op attribution. An engine may carry options,
ENGINE@NAME=VALUE[@NAME=VALUE...], set through their GPUFL_NAME variables
(e.g. pc_sampling@pc_sampling_period=19, trace@pm_sampling_metrics=default).
Each run also reports the main thread's CPU time per iteration: a tracer
that slows the launching thread shows there, one that slows the GPU does
not. With --scopes each iteration is a
gpufl scope "step" holding "forward", "backward" and "optimizer" (under
gpufl only; the no-tracer runs are the same loop without them): what the
range_profiler engine measures, one range per scope.

With --run-timeout T a run still going after T seconds is killed and
reported with the iterations it finished (each child then synchronizes
after every iteration and says so on stderr): for engines that may take
minutes an iteration, e.g. sass_metrics and deep, which instrument every
kernel.

usage: bench_resnet50.py GPUFL_CLI [--runs R] [--warmup W] [--iters M] [--seconds S] [--engines E,...] [--scopes]
                         [--run-timeout T]
       bench_resnet50.py --child --warmup W --iters M [--scopes] [--progress]        (one run)
"""
import argparse
import json
import os
import shutil
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpufl_session  # noqa: E402

BATCH = 64


class _NoScope:
    def __init__(self, name):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def scope_class(wanted):
    """gpufl.Scope when --scopes and the run is under gpufl (which sets
    GPUFL_LIBRARY, the library its session runs in), else a no-op."""
    if not wanted or not os.environ.get("GPUFL_LIBRARY"):
        return _NoScope
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import gpufl
    return gpufl.Scope


PROGRESS = "bench_resnet50 progress: "


def child(warmup, iters, scopes=False, progress=False):
    Scope = scope_class(scopes)
    import torch
    import torchvision
    try:
        model = torchvision.models.resnet50(weights=None)
    except TypeError:  # torchvision before 0.13
        model = torchvision.models.resnet50(pretrained=False)
    dev = torch.device("cuda")
    model = model.to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    torch.manual_seed(0)
    x = torch.randn(BATCH, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (BATCH,), device=dev)

    def step():
        with Scope("step"):
            opt.zero_grad(set_to_none=True)
            with Scope("forward"):
                loss = loss_fn(model(x), y)
            with Scope("backward"):
                loss.backward()
            with Scope("optimizer"):
                opt.step()

    started = time.perf_counter()

    def done(i):  # with --progress: the iteration's work is finished
        if progress:
            torch.cuda.synchronize()
            print(f"{PROGRESS}{i} {time.perf_counter() - started:.3f}", file=sys.stderr, flush=True)

    for i in range(warmup):
        step()
        done(i + 1)
    torch.cuda.synchronize()
    t0, c0 = time.perf_counter(), time.thread_time()
    for i in range(iters):
        step()
        done(warmup + i + 1)
    torch.cuda.synchronize()
    print(json.dumps({"ms_per_iter": (time.perf_counter() - t0) * 1000.0 / iters,
                      "cpu_ms_per_iter": (time.thread_time() - c0) * 1000.0 / iters}))
    return 0


def one_run(variant, cli, warmup, iters, scopes=False, timeout=None):
    me = [sys.executable, os.path.abspath(__file__), "--child", "--warmup", str(warmup), "--iters", str(iters)]
    if scopes:
        me.append("--scopes")
    if timeout:
        me.append("--progress")
    if variant in ("gpufl", "gpufl_ops"):
        options = () if variant == "gpufl_ops" else ("--no-torch-ops",)
        proc, logs = gpufl_session.run(cli, me, "resnet50", options=options, timeout=timeout)
    elif variant.startswith("engine:"):
        engine, *settings = variant[7:].split("@")
        env = dict(os.environ)
        for s in settings:
            name, _, value = s.partition("=")
            env["GPUFL_" + name.upper()] = value
        proc, logs = gpufl_session.run(cli, me, "resnet50", engine=engine, options=("--no-torch-ops",), env=env,
                                       timeout=timeout)
    else:
        proc, logs = gpufl_session.run_program(me, timeout=timeout), None
    if proc.timed_out:
        if logs:
            shutil.rmtree(logs, ignore_errors=True)
        marks = [line[len(PROGRESS):].split() for line in proc.stderr.splitlines() if line.startswith(PROGRESS)]
        return {"timed_out": True, "finished": int(marks[-1][0]) if marks else 0,
                "at_s": float(marks[-1][1]) if marks else 0.0, "ms_per_iter": None,
                "warnings": gpufl_session.warnings(proc.stderr)}
    if proc.returncode != 0:
        raise SystemExit(f"bench_resnet50: the {variant} run exited {proc.returncode}: {(proc.stderr or '')[-2000:]}")
    res = gpufl_session.last_json_line(proc.stdout)
    res["warnings"] = gpufl_session.warnings(proc.stderr or "")
    if logs:
        res["kernels"], res["dropped"] = gpufl_session.counts(logs)
        shutil.rmtree(logs, ignore_errors=True)
    return res


def measure(variants, args, cli, iters, torch, torchvision):
    """Runs of each variant, alternating; prints the header. Returns the
    runs' results and each variant's median ms per iteration."""
    res = {v: [] for v in variants}
    for r in range(args.runs):
        for v in (variants if r % 2 == 0 else tuple(reversed(variants))):  # drifts hit all alike
            x = one_run(v, cli, args.warmup, iters, args.scopes, args.run_timeout or None)
            res[v].append(x)
            if x.get("timed_out"):
                print(f"  run {r + 1} {v}: killed after {args.run_timeout:g} s, {x['finished']} of {args.warmup} + "
                      f"{iters} iterations finished (the last at {x['at_s']:.1f} s)", flush=True)
            else:
                print(f"  run {r + 1} {v}: {x['ms_per_iter']:.2f} ms/iter", flush=True)  # a cut-short bench keeps these
            for w in x["warnings"]:
                print(f"    {w[:300]}", flush=True)
    # a variant with a run that did not finish has no median
    med = {v: None if any(x.get("timed_out") for x in res[v]) else
           gpufl_session.median([x["ms_per_iter"] for x in res[v]]) for v in res}
    print(f"bench_resnet50 ({torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"torchvision {torchvision.__version__})")
    print(f"  ResNet-50 training, batch {BATCH}x3x224x224, SGD, float32; {args.warmup} warm-up + {iters} "
          f"measured iterations; {args.runs} runs of each, each a fresh process, alternating")
    return res, med


def compare_engines(args, cli, iters, torch, torchvision):
    variants = ("none",) + tuple("engine:" + e for e in args.engines.split(","))
    res, med = measure(variants, args, cli, iters, torch, torchvision)
    for v in variants:
        if med[v] is None or med["none"] is None:
            ends = ", ".join(f"{x['finished']} in {args.run_timeout:g} s" if x.get("timed_out")
                             else f"all in {x['ms_per_iter']:.2f} ms/iter" for x in res[v])
            print(f"    {v[7:] if v != 'none' else 'none':14s} did not finish every run: iterations finished per run: "
                  f"{ends}")
            continue
        vals = " ".join(f"{x['ms_per_iter']:8.2f}" for x in res[v])
        spread = (max(x["ms_per_iter"] for x in res[v]) - min(x["ms_per_iter"] for x in res[v])) / med[v] * 100
        ratio = med[v] / med["none"]
        cpu = gpufl_session.median([x["cpu_ms_per_iter"] for x in res[v]])
        print(f"    {v[7:] if v != 'none' else 'none':14s} ms/iter {vals}   median {med[v]:8.2f}  "
              f"x{ratio:.3f} of none (spread {spread:.1f} %); main thread CPU {cpu:.2f} ms/iter")
    for v in variants[1:]:
        print(f"  {v[7:]} kernel records per run: {' '.join(str(x.get('kernels', '-')) for x in res[v])}; "
              f"dropped: {' '.join(str(x.get('dropped', '-')) for x in res[v])}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli", nargs="?")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=15)
    ap.add_argument("--iters", type=int, default=0, help="measured iterations; 0: enough for --seconds")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--engines", default="", help="comma-separated engines to compare with no tracer")
    ap.add_argument("--scopes", action="store_true", help="scopes step/forward/backward/optimizer under gpufl")
    ap.add_argument("--run-timeout", type=float, default=0,
                    help="seconds after which a run is killed and reported with the iterations it finished")
    ap.add_argument("--progress", action="store_true", help="(child) synchronize and report after each iteration")
    args = ap.parse_args()
    if args.child:
        return child(args.warmup, args.iters, args.scopes, args.progress)
    if args.run_timeout < 0:
        ap.error("--run-timeout must be 0 (none) or more")
    if not args.cli:
        ap.error("GPUFL_CLI is required")
    try:
        import torch
        import torchvision
    except ImportError as e:
        print(f"bench_resnet50: SKIP: {e.name or 'torch or torchvision'} is not installed ({e})")
        return 0
    if not torch.cuda.is_available():
        print("bench_resnet50: SKIP: torch sees no CUDA device")
        return 0
    cli = os.path.abspath(args.cli)
    iters = args.iters
    if iters <= 0:
        probe = one_run("none", cli, args.warmup, 20)["ms_per_iter"]  # no timeout: the baseline must finish
        iters = max(20, round(args.seconds * 1000.0 / probe))
    if args.engines:
        return compare_engines(args, cli, iters, torch, torchvision)
    res, med = measure(("none", "gpufl", "gpufl_ops"), args, cli, iters, torch, torchvision)
    if None in med.values():
        print("  a run did not finish within --run-timeout: no overhead to compare")
        return 1
    for v, label in (("none", "no tracing  "), ("gpufl", "gpufl trace "), ("gpufl_ops", "gpufl + ops ")):
        vals = " ".join(f"{x['ms_per_iter']:8.2f}" for x in res[v])
        print(f"    {label} ms/iter {vals}   median {med[v]:8.2f}")
    print(f"  overhead: gpufl trace {(med['gpufl'] / med['none'] - 1) * 100:+.2f} %, gpufl + ops "
          f"{(med['gpufl_ops'] / med['none'] - 1) * 100:+.2f} %; op attribution alone "
          f"{(med['gpufl_ops'] / med['gpufl'] - 1) * 100:+.2f} %")
    for v in ("gpufl", "gpufl_ops"):
        print(f"  {v} kernel records per run: {' '.join(str(x['kernels']) for x in res[v])}; "
              f"dropped: {' '.join(str(x['dropped']) for x in res[v])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
