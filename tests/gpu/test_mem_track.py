#!/usr/bin/env python3
"""`gpufl mem track` on real PyTorch programs, unmodified but for a gpufl
scope per step: the verdict CI gates on.

(a) a loop that keeps one more 1 MiB tensor every step: exit 1, and the
    analysis of the session (`gpufl mem analyze --format json`) finds a leak
    in scope "step" whose slope is 1 MiB a step within 10 %, with the
    leaking line among the grown allocations' Python frames;
(b) the same loop without the kept tensor: exit 0, no leak;
(c) a program that asks for more memory than the GPU has after holding a
    few large tensors: exit 1, "OUT OF MEMORY" said, and the session's OOM
    dump holds an oom.json with the bytes asked for.

Exits 77 (skipped) without torch or a CUDA device.

usage: test_mem_track.py GPUFL_CLI
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_session import skip_reason  # noqa: E402

MIB = 1 << 20
STEPS = 40

LOOP = r'''
import sys, torch, gpufl
leak = sys.argv[1] == "leak"
kept = []
x = torch.randn(512, 512, device="cuda")
for step in range(%d):
    with gpufl.Scope("step"):
        y = (x @ x).relu()
        z = y.sum()
        if leak:
            kept.append(torch.empty(%d, dtype=torch.uint8, device="cuda"))  # LEAK-LINE
        del y, z
torch.cuda.synchronize()
''' % (STEPS, MIB)

OOM = r'''
import torch
held = [torch.empty(256 << 20, dtype=torch.uint8, device="cuda") for _ in range(4)]
total = torch.cuda.get_device_properties(0).total_memory
torch.empty(total * 2, dtype=torch.uint8, device="cuda")
'''


def track(cli, logs, script, *args, oom=False):
    cmd = [cli, "mem", "track", "--log-path", logs]
    if oom:
        cmd.append("--oom-flight-recorder")
    cmd += ["--", sys.executable, script, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    sessions = sorted(glob.glob(os.path.join(logs, "*", "session.json")))
    return p, [os.path.dirname(s) for s in sessions]


def analyze(cli, session):
    p = subprocess.run([cli, "mem", "analyze", session, "--format", "json"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode in (0, 1), "mem analyze failed (%d): %s" % (p.returncode, p.stderr)
    return json.loads(p.stdout), p.returncode


def step_leak(result):
    for leak in result.get("leaks", {}).get("rows", []):
        if leak.get("scope") == "step":
            return leak
    raise AssertionError("no leak analysis of scope 'step' in %s" % json.dumps(result)[:2000])


def main():
    why = skip_reason()
    if why:
        print("skipped:", why)
        return 77
    cli = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        loop = os.path.join(tmp, "loop.py")
        with open(loop, "w") as f:
            f.write(LOOP)
        leak_line = next(i + 1 for i, l in enumerate(LOOP.splitlines()) if "LEAK-LINE" in l)

        # (a) the leak
        p, sessions = track(cli, os.path.join(tmp, "leak"), loop, "leak")
        print(p.stdout[-3000:], p.stderr[-2000:])
        if p.returncode != 1:
            failures.append("leak: exit %d, not 1" % p.returncode)
        if sessions:
            result, rc = analyze(cli, sessions[-1])
            leak = step_leak(result)
            print("leak verdict:", json.dumps({k: v for k, v in leak.items() if k != "grew"}))
            slope = leak.get("slope_bytes_per_step", 0)
            if not leak.get("detected"):
                failures.append("leak: not detected")
            if abs(slope - MIB) > 0.1 * MIB:
                failures.append("leak: slope %.0f B/step, not 1 MiB within 10 %%" % slope)
            frames = json.dumps(leak.get("grew", {}))
            if "loop.py:%d" % leak_line not in frames:
                failures.append("leak: the grown allocations do not name loop.py:%d: %s" % (leak_line, frames[:600]))
        else:
            failures.append("leak: no session recorded")

        # (b) no leak
        p, sessions = track(cli, os.path.join(tmp, "clean"), loop, "clean")
        print(p.stdout[-1500:], p.stderr[-1000:])
        if p.returncode != 0:
            failures.append("clean: exit %d, not 0" % p.returncode)
        if sessions:
            result, rc = analyze(cli, sessions[-1])
            if step_leak(result).get("detected"):
                failures.append("clean: a leak was reported")

        # (c) out of memory
        oom = os.path.join(tmp, "oom.py")
        with open(oom, "w") as f:
            f.write(OOM)
        p, sessions = track(cli, os.path.join(tmp, "oom"), oom, oom=True)
        print(p.stdout[-1500:], p.stderr[-1500:])
        if p.returncode != 1 or "OUT OF MEMORY" not in p.stdout:
            failures.append("oom: exit %d and no OUT OF MEMORY line" % p.returncode)
        found = glob.glob(os.path.join(tmp, "oom", "*", "dumps", "*", "oom.json"))
        if not found:
            failures.append("oom: no dump with an oom.json")
        else:
            with open(found[0]) as f:
                doc = json.load(f)
            print("oom.json:", json.dumps({k: doc.get(k) for k in ("requested_bytes", "classification")}))
            if not doc.get("requested_bytes") or doc["requested_bytes"] < (1 << 30):
                failures.append("oom: requested_bytes %r" % doc.get("requested_bytes"))
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
