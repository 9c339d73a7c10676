#!/usr/bin/env python3
"""gpufl's NVML readings against nvidia-smi taken at the same moment (issue 3).

While gpu_load holds 4 GiB and keeps the GPU busy, three times over: run
`gpufl devices --json` and `nvidia-smi --query-gpu` back to back and require
memory used and total to agree within 1% of the device's memory, and GPU
utilization within 10 points. Exits 77 (skipped) without nvidia-smi or a GPU.

usage: test_nvml_vs_smi.py GPUFL_CLI GPU_LOAD
"""
import json
import shutil
import subprocess
import sys
import time

MIB = 1 << 20


def smi():
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=index,memory.used,memory.total,utilization.gpu",
         "--format=csv,noheader,nounits"], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.strip().splitlines():
        index, used, total, util = (x.strip() for x in line.split(","))
        rows[int(index)] = {"used": int(used) * MIB, "total": int(total) * MIB, "util": int(util)}
    return rows


def gpufl(cli):
    out = subprocess.run([cli, "devices", "--json"], capture_output=True, text=True)
    if out.returncode == 3:
        return None
    doc = json.loads(out.stdout)
    return {d["device"]: d["state"] for d in doc["devices"]}


def main():
    cli, load = sys.argv[1], sys.argv[2]
    if not shutil.which("nvidia-smi"):
        print("SKIP: nvidia-smi not found")
        return 77
    if gpufl(cli) is None:
        print("SKIP: gpufl finds no NVIDIA driver")
        return 77
    worker = subprocess.Popen([load, "4096", "8"])
    try:
        time.sleep(2.0)  # memory held, kernels running, utilization settled
        for trial in range(3):
            g, s = gpufl(cli), smi()
            for index, ref in s.items():
                mine = g[index]
                tol = 0.01 * ref["total"]
                print(f"trial {trial} gpu {index}: used gpufl {mine['mem_used_bytes'] / MIB:.0f} MiB, "
                      f"nvidia-smi {ref['used'] / MIB:.0f} MiB; total {mine['mem_total_bytes'] / MIB:.0f} / "
                      f"{ref['total'] / MIB:.0f} MiB; util {mine['gpu_util_pct']}% / {ref['util']}%")
                assert abs(mine["mem_total_bytes"] - ref["total"]) <= tol, "memory total differs by more than 1%"
                assert abs(mine["mem_used_bytes"] - ref["used"]) <= tol, "memory used differs by more than 1%"
                assert mine["mem_used_bytes"] >= 4096 * MIB, "the load's 4 GiB are not seen"
                assert abs(mine["gpu_util_pct"] - ref["util"]) <= 10, "utilization differs by more than 10 points"
            time.sleep(0.5)
    finally:
        worker.wait()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
