#!/usr/bin/env python3
"""`gpufl serve` under load (issue 17): 64 uploaders at once, each a thread
with its own keep-alive connection sending synthetic sessions' device
events as docs/UPLOAD.md has them (gzip NDJSON batches of kernel lines),
into one `gpufl serve` over a PostgreSQL started here on loopback
(tests/serve/pg_server.py; fsync on, PostgreSQL's defaults otherwise).

Per run: events stored per second (all events of all uploaders over the
wall time from the first batch to the last answer) and the latency of a
batch request (send to answer) at p50 and p99; after the run the database
must hold every event exactly once. Several runs, each on a fresh
database; the median and the spread are printed.

The load generator runs on the same machine: on a 2-CPU machine it takes
CPU from the server and PostgreSQL, so the figures are a floor.

Usage: bench_serve.py GPUFL_CLI [--runs 5] [--uploaders 64] [--batches 20]
                      [--batch-events 1000] [--workers 8]
"""
import argparse
import gzip
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "serve"))
from pg_server import PgServer, skip_unless_installed  # noqa: E402
from serve_client import Client, Server, device_lines, session_meta  # noqa: E402


def percentile(sorted_values, p):
    """Nearest rank."""
    k = max(0, min(len(sorted_values) - 1, int(round(p / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def cpu_seconds(pids):
    """User + system CPU seconds of the live processes pids (from /proc)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
    return total


def postgres_pids(pg):
    """The server's processes: the postmaster (first line of postmaster.pid) and its children."""
    try:
        with open(os.path.join(pg.data, "postmaster.pid")) as f:
            main = int(f.readline())
        children = open("/proc/%d/task/%d/children" % (main, main)).read().split()
        return [main] + [int(c) for c in children]
    except OSError:
        return []


def one_run(cli, a, bodies):
    with PgServer(fsync=True) as pg:
        srv = Server(cli, pg.conninfo, workers=a.workers)
        try:
            key = subprocess.run([cli, "serve", "key", "add", "bench", "--db", pg.conninfo], capture_output=True,
                                 text=True, check=True).stdout.strip()
            latencies, errors = [], []
            start = threading.Barrier(a.uploaders + 1)
            lock = threading.Lock()

            def uploader(i):
                c = Client(srv.port, key, timeout=120)
                sid = "bench-%03d" % i
                c.announce(session_meta(sid, app="bench", host="host%02d" % (i % 8)))
                mine = []
                start.wait()
                for b in range(a.batches):
                    h = {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip",
                         "X-GpuFlight-Session-Id": sid, "X-Gpufl-Channel": "device",
                         "X-Gpufl-First-Seq": str(b * a.batch_events)}
                    t0 = time.perf_counter()
                    st, r = c.request("POST", "/events/stream", bodies[b % len(bodies)], h)
                    mine.append(time.perf_counter() - t0)
                    if st != 200 or r["accepted"] != a.batch_events:
                        with lock:
                            errors.append((sid, b, st, r))
                c.close()
                with lock:
                    latencies.extend(mine)

            threads = [threading.Thread(target=uploader, args=(i,)) for i in range(a.uploaders)]
            for t in threads:
                t.start()
            start.wait()
            t0 = time.perf_counter()
            cpu0 = (cpu_seconds([srv.proc.pid]), cpu_seconds(postgres_pids(pg)), time.process_time())
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            # before the server stops: its database connections end with it
            cpu = (cpu_seconds([srv.proc.pid]) - cpu0[0], cpu_seconds(postgres_pids(pg)) - cpu0[1],
                   time.process_time() - cpu0[2])
            total = a.uploaders * a.batches * a.batch_events
            stored = pg.psql("SELECT count(*), count(DISTINCT (session_id, seq)) FROM events")[0]
            if errors or stored != [str(total), str(total)]:
                raise RuntimeError("run failed: %d errors (%s), stored %s of %d" % (len(errors), errors[:2], stored,
                                                                                   total))
            latencies.sort()
            return total / wall, percentile(latencies, 50) * 1e3, percentile(latencies, 99) * 1e3, wall, cpu
        finally:
            srv.stop()
            srv.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--uploaders", type=int, default=64)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-events", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=8)
    a = ap.parse_args()
    skip_unless_installed()
    # a few distinct batches, made once: the bodies do not name their session
    bodies = [gzip.compress("".join(line + "\n" for line in device_lines(
        a.batch_events, start=10**9 + b * 10**9, name="kernel_%d" % (b % 7))).encode(), 6) for b in range(4)]
    print("%d uploaders x %d batches x %d events (%d events a run; a batch is %d bytes gzip, %d raw), "
          "%d workers" % (a.uploaders, a.batches, a.batch_events, a.uploaders * a.batches * a.batch_events,
                          len(bodies[0]), len(gzip.decompress(bodies[0])), a.workers))
    rates, p50s, p99s = [], [], []
    for run in range(a.runs):
        rate, p50, p99, wall, cpu = one_run(a.cli, a, bodies)
        rates.append(rate)
        p50s.append(p50)
        p99s.append(p99)
        print("run %d: %8.0f events/s  batch latency p50 %7.1f ms  p99 %7.1f ms  (%.1f s; CPU s: gpufl serve %.1f, "
              "PostgreSQL %.1f, uploaders %.1f)" % (run + 1, rate, p50, p99, wall, cpu[0], cpu[1], cpu[2]))
        sys.stdout.flush()
    print("median [min-max] of %d runs: %.0f [%.0f-%.0f] events/s, p50 %.1f [%.1f-%.1f] ms, p99 %.1f [%.1f-%.1f] ms"
          % (a.runs, statistics.median(rates), min(rates), max(rates), statistics.median(p50s), min(p50s),
             max(p50s), statistics.median(p99s), min(p99s), max(p99s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
