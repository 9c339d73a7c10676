#!/usr/bin/env python3
"""torch.profiler started inside a program that `gpufl run` traces, with no
hand-over: what the user is told.

The program (this file, --child) runs ADD_OPS x.add_ with no profiler, then
MUL_OPS x.mul_ inside torch.profiler (CUDA activities), and prints how many
kernels torch.profiler saw. gpufl must record every kernel (ADD_OPS + MUL_OPS
+ the tensor's set-up) and drop none. Then, by what CUPTI allowed:
  - torch.profiler saw all MUL_OPS (a CUPTI that lets both subscribe, 13.2
    and later): nothing more to say;
  - it saw none: the program's stderr holds the guard's notice once
    ("another CUPTI client (...) was refused because gpufl holds CUPTI"),
    and the session's system.log counts the refusals and names the client;
  - anything else fails.
Exits 77 (skipped) without torch or a CUDA device.

usage: test_torch_refused.py GPUFL_CLI
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_session import lines, skip_reason  # noqa: E402

ADD_OPS, MUL_OPS = 300, 200
NOTICE = "was refused because gpufl holds CUPTI"


def child():
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    x = torch.zeros(16, device="cuda")
    for _ in range(ADD_OPS):
        x.add_(1)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(MUL_OPS):
            x.mul_(1.0)
        torch.cuda.synchronize()
    seen = sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA
               and not e.name.startswith(("Memcpy", "Memset")))
    print(json.dumps({"profiler_kernels": seen}))
    return 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--child":
        return child()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    why = skip_reason()
    if why:
        print(f"SKIP: {why}")
        return 77
    logs = tempfile.mkdtemp(prefix="gpufl-refused-")
    # --no-torch-ops: with gpufl.torch attached, torch.profiler would be handed
    # CUPTI (test_torch_ops.py checks that); here the guard's refusal is tested
    cmd = [sys.argv[1], "run", "--engine", "trace", "--no-torch-ops", "--log-path", logs, "--app-name", "refused", "--",
           sys.executable, os.path.abspath(__file__), "--child"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    failures = []
    if proc.returncode != 0:
        print(proc.stderr[-4000:])
        print(f"FAIL: the traced program exited {proc.returncode}")
        return 1
    seen = json.loads([l for l in proc.stdout.splitlines() if l.startswith("{")][-1])["profiler_kernels"]
    sessions = [d for d in glob.glob(os.path.join(logs, "*")) if os.path.isdir(d)]
    if len(sessions) != 1:
        print(f"FAIL: expected one session in {logs}, found {len(sessions)}")
        return 1
    s = sessions[0]
    kernels = [e for e in lines(s, "device") if e.get("type") == "kernel"]
    adds = sum(1 for k in kernels if "add" in k.get("name", "").lower())
    muls = sum(1 for k in kernels if "mul" in k.get("name", "").lower())
    dropped = sum(e.get("count", 0) for ch in ("device", "scope", "system") for e in lines(s, ch)
                  if e.get("type") == "dropped")
    messages = [e.get("message", "") for e in lines(s, "system") if e.get("type") == "log"]
    logged = [m for m in messages if "another CUPTI client" in m]
    notices = proc.stderr.count(NOTICE)
    print(f"torch.profiler kernels: {seen} (of {MUL_OPS}); gpufl: {adds} add, {muls} mul kernels, "
          f"{dropped} dropped; notices on stderr: {notices}")
    for m in logged:
        print(f"gpufl log: {m}")
    if adds != ADD_OPS or muls != MUL_OPS or dropped:
        failures.append(f"gpufl recorded {adds} add and {muls} mul kernels ({dropped} dropped), "
                        f"expected {ADD_OPS} and {MUL_OPS}")
    if seen == 0:
        if notices != 1:
            failures.append(f"the notice appears {notices} times on stderr, expected once")
        if not any("was refused" in m and "because gpufl held CUPTI" in m for m in logged):
            failures.append("system.log does not say that a CUPTI client was refused")
    elif seen != MUL_OPS:
        failures.append(f"torch.profiler saw {seen} kernels: neither all {MUL_OPS} nor none")
    elif notices:
        failures.append("torch.profiler got its kernels, yet the refusal notice was printed")
    shutil.rmtree(logs, ignore_errors=True)
    for f in failures:
        print(f"FAIL: {f}")
    if failures:
        print(proc.stderr[-4000:])
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
