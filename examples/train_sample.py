#!/usr/bin/env python3
"""A small, real training job to record with gpufl: a GPT-style language
model (4 layers, d=512, 8 heads) trained on random tokens for a few dozen
steps, with what real jobs have: batches copied from pinned host memory
without blocking, NVTX ranges for the phases of a step (torch.cuda.nvtx:
they appear next to gpufl scopes), a loss read back every step (a sync), an
evaluation pass every 20 steps, and a checkpoint-like copy of the weights to
the host at the end.

    gpufl run --stack-trace -- python3 examples/train_sample.py [--steps N]

samples/ holds a session of it recorded on an H200 (samples/README.md).
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=8192, d=512, heads=8, layers=4, ctx=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, ctx, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((ctx, ctx), -math.inf), 1))

    def forward(self, idx):
        x = self.tok(idx) + self.pos[:, : idx.shape[1]]
        for b in self.blocks:
            x = b(x, self.mask[: idx.shape[1], : idx.shape[1]])
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = TinyGPT().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    vocab, ctx = 8192, 256
    # the "dataset": pinned host batches, copied without blocking
    host_batches = [torch.randint(0, vocab, (args.batch, ctx + 1)).pin_memory() for _ in range(8)]
    nvtx = torch.cuda.nvtx
    for step in range(args.steps):
        nvtx.range_push("step")
        nvtx.range_push("data")
        batch = host_batches[step % len(host_batches)].to(dev, non_blocking=True)
        x, y = batch[:, :-1], batch[:, 1:]
        nvtx.range_pop()
        nvtx.range_push("forward")
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        nvtx.range_pop()
        nvtx.range_push("backward")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        nvtx.range_pop()
        value = loss.item()  # the host waits for the step: a sync
        nvtx.range_pop()
        if step % 20 == 19:
            nvtx.range_push("eval")
            with torch.no_grad():
                model.eval()
                ev = model(host_batches[0][:, :-1].to(dev)).float().mean().item()
                model.train()
            nvtx.range_pop()
            print(f"step {step + 1}: loss {value:.3f}, eval {ev:.4f}", flush=True)
    nvtx.range_push("checkpoint")
    state = {k: v.detach().to("cpu") for k, v in model.state_dict().items()}
    nvtx.range_pop()
    print(f"done: {len(state)} tensors saved", flush=True)


if __name__ == "__main__":
    main()
