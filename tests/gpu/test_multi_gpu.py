#!/usr/bin/env python3
"""Issue 16 item 4: one process on two GPUs under `gpufl run --engine trace`
stays right. The program (this file with --child) runs a small kernel on
GPU 1, then a 50 ms spin on GPU 0 while GPU 1 waits, then a peer copy of
64 MiB from GPU 0 to GPU 1 and a small kernel on GPU 1 again. The report
must list both devices in `session.devices`, give each device its own idle
row, with GPU 1 idle at least 40 ms between its first and last work and
GPU 0 busy at least 45 ms, and show the 64 MiB as a copy from device 0
(PtoP, or DtoD when the driver routes it so), never as host traffic.

Exits 77 (skipped) without torch or 2 GPUs.

usage: test_multi_gpu.py GPUFL_CLI
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
MIB64 = 64 << 20


def child():
    import torch
    a = torch.ones(1024, device="cuda:1")
    a.mul_(2)
    torch.cuda.synchronize(1)
    torch.cuda.set_device(0)
    torch.cuda._sleep(100_000_000)  # about 50 ms at H100 clocks
    torch.cuda.synchronize(0)
    x = torch.empty(MIB64 // 4, dtype=torch.float32, device="cuda:0").fill_(1)
    torch.cuda.synchronize(0)
    y = x.to("cuda:1")
    y.mul_(3)
    torch.cuda.synchronize(1)
    print(json.dumps({"sum": float(y[:4].sum())}))


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--child":
        child()
        return 0
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        import torch
    except ImportError as e:
        print(f"skipped: torch is not importable ({e})")
        return 77
    if torch.cuda.device_count() < 2:
        print(f"skipped: {torch.cuda.device_count()} CUDA device(s): the test needs 2")
        return 77
    cli = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="gpufl-2gpu-") as logs:
        p = subprocess.run([cli, "run", "--engine", "trace", "--log-path", logs, "--", sys.executable,
                            os.path.abspath(__file__), "--child"], capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            sys.exit(f"FAIL: gpufl run exited {p.returncode}\n{p.stderr[-3000:]}")
        sessions = [os.path.join(logs, d) for d in os.listdir(logs) if os.path.isdir(os.path.join(logs, d))]
        if len(sessions) != 1:
            sys.exit(f"FAIL: {len(sessions)} sessions in {logs}")
        r = subprocess.run([cli, "report", sessions[0], "--format", "json"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"FAIL: gpufl report exited {r.returncode}: {r.stderr}")
        rep = json.loads(r.stdout)
    failures = []
    devices = sorted(d["index"] for d in rep["session"]["devices"])
    print("devices", devices)
    if devices[:2] != [0, 1]:
        failures.append(f"session.devices {devices}, expected 0 and 1")
    idle = {row["device"]: row for row in rep["idle"] if row["stream"] is None}
    for d in (0, 1):
        row = idle.get(d)
        if row is None:
            failures.append(f"no idle row for device {d}")
            continue
        print(f"device {d}: busy {row['busy_ns'] / 1e6:.2f} ms, idle {row['idle_ns'] / 1e6:.2f} ms, {row['ops']} ops")
    if 1 in idle and idle[1]["idle_ns"] < 40e6:
        failures.append(f"device 1 idle {idle[1]['idle_ns'] / 1e6:.2f} ms while device 0 spun 50 ms: expected >= 40")
    if 0 in idle and idle[0]["busy_ns"] < 45e6:
        failures.append(f"device 0 busy {idle[0]['busy_ns'] / 1e6:.2f} ms: its 50 ms spin is missing")
    copies = rep["copies"]["rows"]
    for c in copies:
        print(f"copy device {c['device']} {c['kind']}: {c['count']} x, {c['bytes']} bytes")
    peer = [c for c in copies if c["kind"] in ("PtoP", "DtoD") and c["bytes"] >= MIB64]
    if not peer or peer[0]["device"] != 0:
        failures.append(f"no 64 MiB device-to-device copy from device 0: {copies}")
    if any(c["kind"] in ("HtoD", "DtoH") and c["bytes"] >= MIB64 for c in copies):
        failures.append("the peer copy went through the host")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
