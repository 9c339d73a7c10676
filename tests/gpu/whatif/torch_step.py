#!/usr/bin/env python3
"""A PyTorch training step with an optional torch.cuda.synchronize(), for
gpufl whatif's validation on a GPU (tests/gpu/test_whatif.py).

Each step (NVTX range "step"): forward, [--sync: torch.cuda.synchronize()],
HOST_WORK_S of host work (with the sync it waits for the forward pass,
without it overlaps it), backward, optimizer step, loss.item(). 3 warm-up
steps in an NVTX range "warmup" come first.

usage: torch_step.py [--steps N] [--sync]
"""
import argparse
import time

import torch

HOST_WORK_S = 0.002


def host_work():
    end = time.perf_counter() + HOST_WORK_S
    while time.perf_counter() < end:
        pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--sync", action="store_true")
    a = p.parse_args()
    torch.manual_seed(0)
    net = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(4096, 4096), torch.nn.ReLU())]).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=1e-4)
    x = torch.randn(512, 4096, device="cuda")

    def step():
        loss = net(x).square().mean()
        if a.sync:
            torch.cuda.synchronize()
        host_work()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        return loss.item()

    for _ in range(3):
        torch.cuda.nvtx.range_push("warmup")
        step()
        torch.cuda.nvtx.range_pop()
    for _ in range(a.steps):
        torch.cuda.nvtx.range_push("step")
        step()
        torch.cuda.nvtx.range_pop()
    print(f"{a.steps} steps")


if __name__ == "__main__":
    main()
