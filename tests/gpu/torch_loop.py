#!/usr/bin/env python3
"""A small deterministic PyTorch training loop, run twice by
test_torch_vs_profiler.py: once under `gpufl run`, once under torch.profiler.

Both runs must launch the same kernels, so everything that could make them
differ is pinned: a fixed seed, cuDNN autotuning off and deterministic
algorithms on (cuBLAS needs CUBLAS_WORKSPACE_CONFIG before its first use),
and the same warm-up steps, which absorb the lazy set-up work (cuBLAS and
cuDNN handles, workspaces) before anything is measured.

The measured steps sit between two fences: torch.cuda._sleep(), a kernel
named spin_kernel that both recorders see, with a device sync on each side.
The steps' kernels are then exactly those that start between the two fence
kernels, in either record, whatever else the process launched.

usage: torch_loop.py [--steps N] [--warmup N] [--profile TRACE_JSON]

With --profile, torch.profiler (CUDA activities only) runs from just before
the first fence to just after the second, and its Chrome trace is written to
TRACE_JSON. Prints one JSON line: the final loss, and with --profile the
kernel count and time between the fences as torch.profiler's events() see
them (a cross-check of the trace).
"""
import argparse
import json
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before torch loads cuBLAS

import torch  # noqa: E402
from torch import nn  # noqa: E402

FENCE_CYCLES = 100000  # a few tens of microseconds


def model():
    # Strided convolutions instead of pooling: every op here has a
    # deterministic CUDA implementation (adaptive pooling's backward has not).
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.Flatten(),
        nn.Linear(64 * 8 * 8, 512), nn.ReLU(),
        nn.Linear(512, 10),
    )


def fence():
    torch.cuda.synchronize()
    torch.cuda._sleep(FENCE_CYCLES)
    torch.cuda.synchronize()


def events_between_fences(prof):
    """Kernel count and total µs between the fences, from prof.events()."""
    from torch.autograd import DeviceType
    gpu = [e for e in prof.events() if e.device_type == DeviceType.CUDA]
    kernels = sorted((e for e in gpu if not e.name.startswith(("Memcpy", "Memset"))),
                     key=lambda e: e.time_range.start)
    fences = [e for e in kernels if "spin_kernel" in e.name]
    if len(fences) != 2:
        return None, None
    lo, hi = fences[0].time_range.end, fences[1].time_range.start
    inside = [e for e in kernels if lo <= e.time_range.start < hi]
    return len(inside), sum(e.time_range.elapsed_us() for e in inside)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--profile", metavar="TRACE_JSON")
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
    dev = torch.device("cuda")
    net = model().to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 3, 32, 32, device=dev)
    y = torch.randn(64, 10, device=dev)
    loss_fn = nn.MSELoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(args.warmup):
        step()
    out = {}
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fence()
            for _ in range(args.steps):
                loss = step()
            fence()
        prof.export_chrome_trace(args.profile)
        out["events_kernels"], out["events_kernel_us"] = events_between_fences(prof)
    else:
        fence()
        for _ in range(args.steps):
            loss = step()
        fence()
    out["loss"] = loss.item()
    out["steps"] = args.steps
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
