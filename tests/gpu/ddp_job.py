#!/usr/bin/env python3
"""A small DDP training job for the multi-rank GPU test (test_ddp_job.py),
one process per GPU under torchrun. Every step is a gpufl scope "step"
when the job runs under `gpufl run`; rank --straggler sleeps --sleep-ms
before every --every-th step (1-based, counting the warm-up steps),
outside the step, so it reaches that step's first all-reduce late (each
step ends by reading its loss, so no rank's host runs ahead of its GPU
into the next step, and the sleep is not hidden behind queued work). The
measured steps lie between two fence kernels (torch.cuda._sleep), as in
torch_loop.py, so kernel counts compare with torch.profiler's exactly.

With --profile DIR each rank runs under torch.profiler (CUDA activities)
and writes DIR/rank-R.json: the kernels between the fences, by count and
by name. Either way rank R prints one JSON line with its loss and its
gradients' bytes (what DDP all-reduces every step, bucket by bucket).
"""
import argparse
import collections
import json
import os
import sys
import time

sys.dont_write_bytecode = True
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402

FENCE_CYCLES = 20_000_000


def step_scope():
    """gpufl.Scope under `gpufl run` (which sets GPUFL_LIBRARY), else a no-op."""
    if not os.environ.get("GPUFL_LIBRARY"):
        return lambda name: _NoScope()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "python"))
    import gpufl
    return gpufl.Scope


class _NoScope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def fence():
    torch.cuda.synchronize()
    torch.cuda._sleep(FENCE_CYCLES)
    torch.cuda.synchronize()


def kernels_between_fences(prof):
    from torch.autograd import DeviceType
    gpu = [e for e in prof.events() if e.device_type == DeviceType.CUDA]
    kernels = sorted((e for e in gpu if not e.name.startswith(("Memcpy", "Memset"))),
                     key=lambda e: e.time_range.start)
    fences = [e for e in kernels if "spin_kernel" in e.name]
    if len(fences) != 2:
        return None
    lo, hi = fences[0].time_range.end, fences[1].time_range.start
    return [e.name for e in kernels if lo <= e.time_range.start < hi]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--straggler", type=int, default=1)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--sleep-ms", type=float, default=20.0)
    ap.add_argument("--profile", metavar="DIR")
    args = ap.parse_args()

    rank = int(os.environ["RANK"])
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    dev = torch.device("cuda", local)
    net = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                        nn.Linear(4096, 1024)).to(dev)
    ddp = nn.parallel.DistributedDataParallel(net, device_ids=[local], bucket_cap_mb=8)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(256, 1024, device=dev)
    y = torch.randn(256, 1024, device=dev)
    scope = step_scope()
    n = 0

    def step():
        nonlocal n
        n += 1
        if rank == args.straggler and n % args.every == 0:
            time.sleep(args.sleep_ms / 1000)
        with scope("step"):
            opt.zero_grad(set_to_none=True)
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            opt.step()
            loss.item()  # the step ends on the host when its GPU work has: as a loop that logs its loss
        return loss

    for _ in range(args.warmup):
        step()
    out = {"rank": rank, "grad_bytes": sum(p.numel() * p.element_size() for p in net.parameters()
                                           if p.requires_grad)}
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fence()
            for _ in range(args.steps):
                loss = step()
            fence()
        names = kernels_between_fences(prof)
        with open(os.path.join(args.profile, f"rank-{rank}.json"), "w") as f:
            json.dump({"kernels": None if names is None else len(names),
                       "by_name": collections.Counter(names or [])}, f)
    else:
        fence()
        for _ in range(args.steps):
            loss = step()
        fence()
    out["loss"] = loss.item()
    print(json.dumps(out), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
