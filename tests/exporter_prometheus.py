#!/usr/bin/env python3
"""Debian's Prometheus scrapes `gpufl exporter` (issue 17, item 4).

Starts `gpufl exporter` on the fake NVML (8 GPUs) and /usr/bin/prometheus
on 127.0.0.1 with a temporary config and storage, scraping every second;
then asks Prometheus' HTTP API (PromQL) for the DCGM metrics and checks
values and labels against the fake's formulas (tests/fake_nvml/fake_nvml.c).
Both processes are stopped and the directory removed whatever happens.
Exit 77 (skip) only when prometheus is not installed or cannot run at all.

Usage: exporter_prometheus.py GPUFL_CLI FAKE_NVML_LIBRARY
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from prometheus_run import query, skip_reason, start, stop, wait_for

GPUS = 8


def main():
    cli, fake_nvml = sys.argv[1], sys.argv[2]
    why = skip_reason()
    if why:
        print("SKIP: " + why)
        return 77

    tmp = tempfile.mkdtemp(prefix="gpufl-prom-")
    exporter = prom = None
    try:
        env = dict(os.environ, GPUFL_NVML_LIBRARY=fake_nvml, FAKE_NVML="devices=%d" % GPUS)
        exporter = subprocess.Popen([cli, "exporter", "--listen", "127.0.0.1:0", "--interval", "200"],
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        banner = exporter.stderr.readline()
        print(banner.strip())
        if "serving http://" not in banner:
            raise AssertionError("gpufl exporter did not start: %s" % banner)
        target = banner.split("http://")[1].split("/")[0]

        prom, port = start(tmp, "gpufl", target)
        result = wait_for(prom, port, tmp, "DCGM_FI_DEV_GPU_UTIL", lambda r: len(r) == GPUS)
        if len(result) != GPUS:
            raise AssertionError("after 45 s Prometheus has %d DCGM_FI_DEV_GPU_UTIL series, want %d" %
                                 (len(result), GPUS))

        host = socket.gethostname()
        by_gpu = {}
        for r in result:
            m = r["metric"]
            i = int(m["gpu"])
            by_gpu[i] = m
            assert m["job"] == "gpufl" and m["instance"] == target, m
            assert m["UUID"] == "GPU-fake-%d" % i, m
            assert m["device"] == "nvidia%d" % i, m
            assert m["modelName"] == "Fake GPU %d" % i, m
            assert m["pci_bus_id"] == "00000000:%02X:00.0" % (0x19 + i), m
            assert m["Hostname"] == host, m
            assert 0 <= float(r["value"][1]) <= 100, r
        assert sorted(by_gpu) == list(range(GPUS)), by_gpu

        def values(promql):
            return {int(r["metric"]["gpu"]): float(r["value"][1]) for r in query(port, promql)}

        assert values("DCGM_FI_DEV_SM_CLOCK") == {i: 1410 + 10 * i for i in range(GPUS)}
        assert values("DCGM_FI_DEV_GPU_TEMP") == {i: 40 + i for i in range(GPUS)}
        assert values("DCGM_FI_DEV_POWER_USAGE") == {i: 100 + i for i in range(GPUS)}  # W
        assert values("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL") == {i: 3 + i for i in range(GPUS)}
        for i, mib in values("DCGM_FI_DEV_FB_USED").items():
            assert 1024 * (1 + i) <= mib < 1024 * (1 + i) + 1000, (i, mib)  # MiB; +1 MiB a reading
        # PromQL over the series, as a dashboard would
        total = query(port, "sum(DCGM_FI_DEV_POWER_USAGE)")
        assert float(total[0]["value"][1]) == sum(100 + i for i in range(GPUS)), total
        up = query(port, 'up{job="gpufl"}')
        assert float(up[0]["value"][1]) == 1, up
        scrapes = query(port, "gpufl_exporter_scrapes_total")
        assert float(scrapes[0]["value"][1]) >= 1, scrapes
        print("ok: Prometheus scraped %d GPUs from gpufl exporter at %s; sum(DCGM_FI_DEV_POWER_USAGE) = %s W" %
              (GPUS, target, total[0]["value"][1]))
        return 0
    finally:
        stop(prom)
        stop(exporter)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
