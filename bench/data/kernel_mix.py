#!/usr/bin/env python3
"""Derives bench/data/kernel_mix.json (the kernel mix of bench/trace_gen.c)
from a real session's kernels:

    gpufl export SESSION -f csv -o DIR
    bench/data/kernel_mix.py DIR/kernels.csv SESSION_NAME > bench/data/kernel_mix.json

Per demangled kernel name: its share of launches (weight), the percentiles
of its duration that trace_gen.c interpolates between (nearest-rank p0, p10,
p50, p90, p99, p100), and its distinct launch configurations with their
share. Kernels whose name says NCCL go to the communication streams; the
stream ids themselves are a fixed layout (three compute streams and one for
communication), since a one-stream sample would not exercise the readers'
stream table.
"""
import csv
import json
import math
import sys
from collections import defaultdict

PERCENTILES = (0, 10, 50, 90, 99, 100)
CONFIG_FIELDS = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers",
                 "static_smem_bytes", "dynamic_smem_bytes", "local_mem_bytes", "occupancy",
                 "occupancy_limiter")


def nearest_rank(sorted_values, p):
    rank = math.ceil(p * len(sorted_values) / 100)
    return sorted_values[max(rank, 1) - 1]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: kernel_mix.py KERNELS_CSV SESSION_NAME")
    path, session = sys.argv[1], sys.argv[2]
    durations = defaultdict(list)
    configs = defaultdict(lambda: defaultdict(int))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            name = row["name"]
            durations[name].append(int(row["duration_ns"]))
            configs[name][tuple(row[k] for k in CONFIG_FIELDS)] += 1
    if not durations:
        sys.exit(f"{path}: no kernels")
    kernels = []
    for name in sorted(durations, key=lambda n: (-len(durations[n]), n)):
        d = sorted(durations[name])
        entry = {
            "name": name,
            "weight": len(d),
            "stream": "comm" if "nccl" in name.lower() else "compute",
            "duration_ns": {f"p{p}": nearest_rank(d, p) for p in PERCENTILES},
            "configs": [],
        }
        for cfg, count in sorted(configs[name].items(), key=lambda kv: (-kv[1], kv[0])):
            gx, gy, gz, bx, by, bz, regs, ssm, dsm, lm, occ, lim = cfg
            entry["configs"].append({
                "weight": count,
                "grid": [int(gx), int(gy), int(gz)],
                "block": [int(bx), int(by), int(bz)],
                "registers": int(regs),
                "static_smem": int(ssm),
                "dynamic_smem": int(dsm),
                "local_mem": int(lm),
                "occupancy": float(occ) if occ else 0.0,
                "limiter": lim or "unknown",
            })
        kernels.append(entry)
    mix = {
        "about": (f"Kernel mix of the synthetic trace benchmark (bench/trace_gen.c), derived by "
                  f"bench/data/kernel_mix.py from the kernels of {session} (samples/, a PyTorch "
                  f"training run recorded on an H200): weight = launches of that name in the "
                  f"session; duration_ns = nearest-rank percentiles of its durations (p0 and p100 "
                  f"bound it; trace_gen.c draws log-uniformly between two percentiles); configs = "
                  f"its launch configurations with their launch counts; stream = 'compute' or "
                  f"'comm' (NCCL kernels)."),
        "streams": {"compute": [7, 9, 11], "comm": [13]},
        "kernels": kernels,
    }
    json.dump(mix, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
