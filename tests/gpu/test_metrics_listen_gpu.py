#!/usr/bin/env python3
"""metrics_listen on a real GPU (issue 17): the recorded program's DCGM series
against nvidia-smi.

While gpu_load holds 4 GiB and keeps the GPU busy, tests/metrics_target
records its scopes with GPUFL_METRICS_LISTEN on a free port (system sampling
off: the sampler runs once a second for the endpoint alone). A scrape must
have one DCGM_FI_DEV_FB_USED series per GPU nvidia-smi lists, labelled with
its index, UUID and name, whose MiB agree with nvidia-smi's memory.used within
1% of the GPU's memory and see the load's 4 GiB; the power, temperature and
SM clock series must be there for every GPU; and
gpufl_scope_duration_seconds_count of `step` must equal the steps recorded.
Exits 77 (skipped) without nvidia-smi or a GPU.

usage: test_metrics_listen_gpu.py METRICS_TARGET GPU_LOAD
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

STEPS = 500
SERIES = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def smi():
    out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,name,memory.used,memory.total",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.strip().splitlines():
        index, uuid, name, used, total = (x.strip() for x in line.split(","))
        rows[int(index)] = {"uuid": uuid, "name": name, "used": int(used), "total": int(total)}
    return rows


def scrape(target):
    with urllib.request.urlopen("http://%s/metrics" % target, timeout=5) as r:
        text = r.read().decode()
    samples = []
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
            samples.append((m.group(1), labels, float(m.group(3))))
    return samples


def main():
    target_exe, load = sys.argv[1], sys.argv[2]
    if not shutil.which("nvidia-smi"):
        print("SKIP: nvidia-smi not found")
        return 77
    try:
        gpus = smi()
    except subprocess.CalledProcessError as e:
        print("SKIP: nvidia-smi failed: %s" % e)
        return 77
    tmp = tempfile.mkdtemp(prefix="gpufl-mlisten-gpu-")
    target = "127.0.0.1:%d" % free_port()
    env = dict(os.environ, GPUFL_METRICS_LISTEN=target, GPUFL_LOG_PATH=tmp, GPUFL_SYSTEM_SAMPLE_RATE_MS="0")
    worker = subprocess.Popen([load, "4096", "12"])
    program = subprocess.Popen([target_exe, str(STEPS)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    try:
        assert program.stdout.readline().strip() == "ready", "metrics_target did not start"
        time.sleep(3.0)  # memory held, a few readings taken
        for trial in range(3):
            s, ref = scrape(target), smi()
            fb = {int(l["gpu"]): (l, v) for n, l, v in s if n == "DCGM_FI_DEV_FB_USED"}
            assert sorted(fb) == sorted(ref), "series for GPUs %s, nvidia-smi lists %s" % (sorted(fb), sorted(ref))
            for i, r in ref.items():
                labels, mib = fb[i]
                print("trial %d gpu %d: FB_USED %.0f MiB, nvidia-smi %d MiB; %s %s" %
                      (trial, i, mib, r["used"], labels["UUID"], labels["modelName"]))
                assert labels["UUID"] == r["uuid"], labels
                assert labels["modelName"] == r["name"], labels
                assert labels["device"] == "nvidia%d" % i, labels
                assert abs(mib - r["used"]) <= 0.01 * r["total"], "memory used differs by more than 1%"
            assert max(v for _, v in fb.values()) >= 4096, "the load's 4 GiB are not seen"
            for name in ("DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK",
                         "DCGM_FI_DEV_GPU_UTIL"):
                got = sorted(int(l["gpu"]) for n, l, _ in s if n == name)
                assert got == sorted(ref), "%s for GPUs %s" % (name, got)
            steps = [v for n, l, v in s if n == "gpufl_scope_duration_seconds_count" and l.get("scope") == "step"]
            assert steps == [STEPS], steps
            time.sleep(1.0)
        program.stdin.close()
        assert program.wait(timeout=30) == 0, "metrics_target exited %d" % program.returncode
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()
        worker.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
