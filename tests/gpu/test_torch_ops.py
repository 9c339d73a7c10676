#!/usr/bin/env python3
"""gpufl.torch's op attribution against torch.profiler's, on one loop.

A deterministic training loop (a small CNN, forward, loss, backward, SGD
step; each step an NVTX range "step N") runs twice, each in a fresh process:

(a) under `gpufl run --engine trace`, which attaches gpufl.torch: every
    kernel carries the innermost NVTX range open on its launching thread,
    which is its PyTorch op (backward kernels on autograd's thread too);
(b) under torch.profiler (CPU and CUDA activities), whose events give each
    op the kernels it launched.

Over the measured steps, each kernel name's launches are paired in launch
order and their ops compared: at least 99 % must agree (the issue's
target), with the same number of kernels. Every backward op range with a
sequence number must find the forward op of the same number (the link from
backward kernels to their forward op and module), and module ranges must be
recorded.

(c) torch.profiler started inside the gpufl-run program gets CUPTI (gpufl
    hands it over and takes it back): the profiler sees the kernels of its
    steps, gpufl those before and after, none inside, and no refusal.

Exits 77 (skipped) without torch or a CUDA device.

usage: test_torch_ops.py GPUFL_CLI
"""
import collections
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_session import lines, skip_reason  # noqa: E402

STEPS, FIRST, LAST = 12, 6, 10  # measured: steps FIRST..LAST


def child(mode):
    import time

    import torch

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(4),
        torch.nn.Flatten(), torch.nn.Linear(32 * 16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")

    def step(i):
        torch.cuda.nvtx.range_push(f"step {i}")
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()

    out = {}
    if mode == "profiler":
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
        for i in range(FIRST):
            step(i)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for i in range(FIRST, LAST + 1):
                step(i)
        for i in range(LAST + 1, STEPS):
            step(i)
        pairs = []
        for e in sorted(prof.events(), key=lambda e: e.time_range.start):
            if e.device_type != DeviceType.CPU or e.name.startswith(("cuda", "cu")) or not e.kernels:
                continue
            pairs += [(k.name, e.name) for k in e.kernels if not k.name.startswith(("Memcpy", "Memset"))]
        out["pairs"] = pairs
    elif mode == "handover":
        for i in range(4):
            step(i)
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
        import warnings
        out["pause_from"] = time.monotonic_ns()
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for i in range(4, 6):
                    step(i)
        out["pause_to"] = time.monotonic_ns()
        out["warnings"] = [str(w.message) for w in said if "gpufl" in str(w.message)]
        import gpufl._lib
        out["library"] = gpufl._lib.tried[-1]
        out["profiler_kernels"] = sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA)
        for i in range(6, 8):
            step(i)
    else:
        for i in range(STEPS):
            step(i)
    print(json.dumps(out))
    return 0


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def gpufl_run(cli, mode, logs):
    cmd = [cli, "run", "--engine", "trace", "--log-path", logs, "--app-name", "torch_ops", "--",
           sys.executable, os.path.abspath(__file__), "--child", mode]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout[-2000:])
        print(run.stderr.split("\ngpufl run: ")[0][-4000:])  # the program's own, before the summaries
        raise SystemExit(f"FAIL: the gpufl run of {mode} exited {run.returncode}")
    sessions = [d for d in glob.glob(os.path.join(logs, "*")) if os.path.isdir(d)]
    if len(sessions) != 1:
        raise SystemExit(f"FAIL: expected one session in {logs}, found {sessions}")
    out = logs.rstrip("/") + "-csv"  # beside the logs, which then hold the session alone
    exp = subprocess.run([cli, "export", sessions[0], "-f", "csv", "-o", out], capture_output=True, text=True)
    if exp.returncode != 0:
        raise SystemExit(f"FAIL: gpufl export: {exp.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1]), read_csv(os.path.join(out, "kernels.csv")), \
        read_csv(os.path.join(out, "nvtx.csv")), run.stderr


def attribution(cli, failures):
    logs = tempfile.mkdtemp(prefix="gpufl-torch-ops-")
    _, kernels, nvtx, _ = gpufl_run(cli, "loop", logs)
    steps = {r["name"]: r for r in nvtx if r["name"].startswith("step ")}
    lo, hi = int(steps[f"step {FIRST}"]["begin_ns"]), int(steps[f"step {LAST}"]["end_ns"])
    mine = [(k["name"], k["nvtx_range"]) for k in sorted(kernels, key=lambda k: int(k["api_start_ns"] or 0))
            if k["api_start_ns"] and lo <= int(k["api_start_ns"]) <= hi]

    prof = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "profiler"],
                          capture_output=True, text=True)
    if prof.returncode != 0:
        print(prof.stderr[-3000:])
        raise SystemExit("FAIL: the torch.profiler run failed")
    theirs = [tuple(p) for p in json.loads(prof.stdout.strip().splitlines()[-1])["pairs"]]

    by_name = collections.defaultdict(lambda: ([], []))
    for name, op in mine:
        by_name[name][0].append(op)
    for name, op in theirs:
        by_name[name][1].append(op)
    agree = sum(sum(1 for a, b in zip(m, t) if a == b) for m, t in by_name.values())
    total = max(len(mine), len(theirs))
    share = agree / total if total else 0.0
    print(f"kernels in steps {FIRST}..{LAST}: gpufl {len(mine)}, torch.profiler {len(theirs)}; "
          f"same op for {agree} ({100 * share:.2f} %)")
    ops = collections.Counter(op for _, op in mine)
    print("gpufl's ops by kernels: " + ", ".join(f"{op or '(none)'} {n}" for op, n in ops.most_common(8)))
    for name, (m, t) in by_name.items():
        bad = [(a, b) for a, b in zip(m, t) if a != b]
        if bad:
            print(f"  {name[:70]}: gpufl {bad[0][0]!r}, torch.profiler {bad[0][1]!r} ({len(bad)} of {len(m)})")
    # torch.profiler's window may hold a kernel more or less at its edges
    if abs(len(mine) - len(theirs)) > 0.01 * total or len(mine) < 100:
        failures.append(f"kernel counts differ by more than 1 % or too few: gpufl {len(mine)}, "
                        f"torch.profiler {len(theirs)}")
    if share < 0.99:
        failures.append(f"only {100 * share:.2f} % of kernels have torch.profiler's op (target 99 %)")

    # backward ops find their forward op by sequence number
    forward = {r["seq"] for r in nvtx if r["seq"] and not r["name"].endswith(tuple(f"Backward{d}" for d in "0123"))}
    backward = [r for r in nvtx if r["seq"] and r["name"].endswith(tuple(f"Backward{d}" for d in "0123"))]
    linked = sum(1 for r in backward if r["seq"] in forward)
    print(f"backward op ranges with a sequence number: {len(backward)}, with their forward op: {linked}")
    if not backward or linked < 0.99 * len(backward):
        failures.append(f"backward ops linked to a forward op: {linked} of {len(backward)}")
    modules = {r["name"] for r in nvtx if r["name"].startswith("nn.Module: ")}
    print(f"module ranges: {len(modules)} distinct, e.g. {sorted(modules)[:3]}")
    if not any(m.startswith("nn.Module: Sequential.") for m in modules):
        failures.append("no module ranges named nn.Module: Sequential.<child>")
    texts = [r["name"] for r in nvtx if ", seq = " in r["name"] or ", op_id = " in r["name"]]
    if texts:
        failures.append(f"{len(texts)} NVTX names keep PyTorch's per-call numbers, e.g. {texts[0]!r}")

    # the C report gives backward GPU time to the forward op (and module) it belongs to
    session = [d for d in glob.glob(os.path.join(logs, "*")) if os.path.isdir(d)][0]
    rep = subprocess.run([cli, "report", "--format", "json", session], capture_output=True, text=True)
    if rep.returncode != 0:
        failures.append(f"gpufl report --format json failed: {rep.stderr[-500:]}")
        return
    ops = json.loads(rep.stdout)["ops"]
    bwd = sum(o["backward_ns"] for o in ops["ops"])
    linked = sum(o["backward_ns"] for o in ops["ops"] if not o["backward_only"])
    in_module = sum(o["backward_ns"] for m in ops["modules"] if m["module"] for o in m["ops"])
    top = ", ".join(f"{o['name']} {o['forward_ns'] / 1e6:.2f}+{o['backward_ns'] / 1e6:.2f} ms" for o in ops["ops"][:4])
    print(f"report ops: backward GPU time {bwd / 1e6:.2f} ms, {100 * linked / max(bwd, 1):.1f} % on its forward op, "
          f"{100 * in_module / max(bwd, 1):.1f} % in a module; top ops (forward+backward): {top}")
    if bwd == 0 or linked < 0.8 * bwd:
        failures.append(f"the report gave {linked} of {bwd} ns of backward GPU time to a forward op (want >= 80 %)")


def handover(cli, failures):
    logs = tempfile.mkdtemp(prefix="gpufl-torch-handover-")
    out, kernels, _, stderr = gpufl_run(cli, "handover", logs)
    lo, hi = out["pause_from"], out["pause_to"]
    starts = [int(k["start_ns"]) for k in kernels]
    inside = sum(1 for s in starts if lo < s < hi)
    after = sum(1 for s in starts if s > hi)
    print(f"torch.profiler inside gpufl run: {out['profiler_kernels']} kernels; gpufl: {inside} inside the "
          f"profiler's window, {after} after it, {len(starts)} in all")
    print(f"the program's libgpufl: {out['library']}; its warnings: {out['warnings']}")
    if out["profiler_kernels"] == 0:
        failures.append("torch.profiler recorded no kernels inside the gpufl-run program")
    if inside:
        failures.append(f"gpufl recorded {inside} kernels while torch.profiler held CUPTI")
    session = [d for d in glob.glob(os.path.join(logs, "*")) if os.path.isdir(d)][0]
    messages = [e.get("message", "") for e in lines(session, "system") if e.get("type") == "log"]
    kept = any("ended with the trace paused" in m for m in messages)
    for m in messages:
        if "pause" in m or "resume" in m or "CUPTI" in m:
            print(f"gpufl log: {m[:300]}")
    if after == 0 and kept and not any("still paused" in w for w in out["warnings"]):
        failures.append("the trace stayed paused and the program was not warned")
    elif after == 0 and kept:
        print("torch.profiler kept CUPTI after it stopped (CUPTI before 13.2): the trace stayed paused, "
              "and the program and the session say so")
    elif after == 0:
        failures.append("gpufl recorded nothing after torch.profiler stopped, and the session does not say why")
    if "was refused" in stderr:
        failures.append("a CUPTI client was refused: " + stderr[-500:])


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    why = skip_reason()
    if why:
        print(f"SKIP: {why}")
        return 77
    cli = os.path.abspath(sys.argv[1])
    failures = []
    attribution(cli, failures)
    handover(cli, failures)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
