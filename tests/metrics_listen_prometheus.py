#!/usr/bin/env python3
"""Debian's Prometheus scrapes a recorded program (metrics_listen, issue 17).

Runs tests/metrics_target (a program recording STEPS `step` scopes) with
GPUFL_METRICS_LISTEN on a free port and the fake NVML (2 GPUs), and
/usr/bin/prometheus scraping it every second; then asks Prometheus (PromQL)
for gpufl_scope_duration_seconds_count of `step`, which must equal STEPS,
for the histogram's quantile, and for the DCGM series of the session's own
NVML readings. Both processes are stopped and the directory removed
whatever happens. Exit 77 (skip) only when prometheus cannot run.

Usage: metrics_listen_prometheus.py METRICS_TARGET FAKE_NVML_LIBRARY
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from prometheus_run import free_port, query, skip_reason, start, stop, wait_for

STEPS = 1234
GPUS = 2


def main():
    target_exe, fake_nvml = sys.argv[1], sys.argv[2]
    why = skip_reason()
    if why:
        print("SKIP: " + why)
        return 77

    tmp = tempfile.mkdtemp(prefix="gpufl-mlisten-")
    program = prom = None
    try:
        target = "127.0.0.1:%d" % free_port()
        env = dict(os.environ, GPUFL_NVML_LIBRARY=fake_nvml, FAKE_NVML="devices=%d" % GPUS,
                   GPUFL_METRICS_LISTEN=target, GPUFL_LOG_PATH=os.path.join(tmp, "sessions"))
        program = subprocess.Popen([target_exe, str(STEPS)], env=env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = program.stdout.readline()
        if line.strip() != "ready":
            raise AssertionError("metrics_target did not start: %r %s" % (line, program.stderr.read()))

        prom, port = start(tmp, "recorded", target)
        promql = 'gpufl_scope_duration_seconds_count{scope="step"}'
        result = wait_for(prom, port, tmp, promql, lambda r: r and float(r[0]["value"][1]) == STEPS)
        if not result or float(result[0]["value"][1]) != STEPS:
            raise AssertionError("after 45 s Prometheus answers %s with %s, want %d" % (promql, result, STEPS))
        m = result[0]["metric"]
        assert m["job"] == "recorded" and m["instance"] == target, m

        fwd = query(port, 'gpufl_scope_duration_seconds_count{scope="forward"}')
        assert float(fwd[0]["value"][1]) == STEPS, fwd
        # the histogram through PromQL, as a latency panel would ask it
        p99 = query(port, 'histogram_quantile(0.99, sum by (le) (gpufl_scope_duration_seconds_bucket{scope="step"}))')
        assert 0 < float(p99[0]["value"][1]) <= 1, p99
        ends = query(port, 'gpufl_events_recorded_total{kind="scope_end"}')
        assert float(ends[0]["value"][1]) == 2 * STEPS, ends
        drops = query(port, 'sum(gpufl_events_dropped_total)')
        assert float(drops[0]["value"][1]) == 0, drops
        temps = {int(r["metric"]["gpu"]): float(r["value"][1]) for r in query(port, "DCGM_FI_DEV_GPU_TEMP")}
        assert temps == {i: 40 + i for i in range(GPUS)}, temps
        for r in query(port, "DCGM_FI_DEV_GPU_TEMP"):
            assert r["metric"]["Hostname"] == socket.gethostname(), r
            assert r["metric"]["UUID"] == "GPU-fake-%s" % r["metric"]["gpu"], r
        print("ok: Prometheus scraped a recorded program at %s; %s = %d, p99 %s s" %
              (target, promql, STEPS, p99[0]["value"][1]))
        program.stdin.close()
        if program.wait(timeout=30) != 0:
            raise AssertionError("metrics_target exited %d: %s" % (program.returncode, program.stderr.read()))
        return 0
    finally:
        stop(prom)
        if program and program.poll() is None:
            program.kill()
            program.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
