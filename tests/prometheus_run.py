"""Debian's Prometheus for the tests that have it scrape gpufl (issue 17).

One place for what exporter_prometheus.py and metrics_listen_prometheus.py
both do: check /usr/bin/prometheus can run (else the test skips, 77), start
it on 127.0.0.1 with a temporary config scraping one target every second,
ask its HTTP API (PromQL), wait until an answer is what the test wants, and
stop processes whatever happens.
"""
import json
import os
import socket
import subprocess
import time
import urllib.parse
import urllib.request

PROMETHEUS = "/usr/bin/prometheus"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def skip_reason():
    """None when prometheus runs; else why not (the caller exits 77).
    Prints the version line when it runs."""
    if not os.access(PROMETHEUS, os.X_OK):
        return "%s is not installed (make deps-test-tools installs Debian's prometheus)" % PROMETHEUS
    try:
        version = subprocess.run([PROMETHEUS, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "%s cannot run: %s" % (PROMETHEUS, e)
    if version.returncode != 0:
        return "%s --version failed: %s" % (PROMETHEUS, version.stderr.strip())
    print((version.stdout or version.stderr).splitlines()[0])
    return None


def query(port, promql):
    url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (port, urllib.parse.quote(promql))
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


def stop(proc):
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start(tmp, job, target):
    """Starts prometheus scraping `target` as `job` every second, its config,
    storage and log under `tmp`. Returns (process, port of its HTTP API)."""
    port = free_port()
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: %s\n    static_configs:\n"
                "      - targets: ['%s']\n" % (job, target))
    with open(os.path.join(tmp, "prometheus.log"), "w") as log:
        prom = subprocess.Popen([PROMETHEUS, "--config.file=" + config,
                                 "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                                 "--web.listen-address=127.0.0.1:%d" % port],
                                stdout=log, stderr=subprocess.STDOUT)
    return prom, port


def wait_for(prom, port, tmp, promql, done, seconds=45):
    """Asks `promql` every half second until done(result) holds; returns the
    last result (the caller checks it: after `seconds` it may not be done).
    Raises AssertionError with the tail of prometheus' log if it exits."""
    deadline = time.time() + seconds
    result = []
    while time.time() < deadline:
        if prom.poll() is not None:
            raise AssertionError("prometheus exited %d:\n%s" %
                                 (prom.returncode, open(os.path.join(tmp, "prometheus.log")).read()[-3000:]))
        try:
            result = query(port, promql)
        except OSError:
            result = []
        if done(result):
            break
        time.sleep(0.5)
    return result
