#!/usr/bin/env python3
"""The real uploader into the real server (issue 17): `gpufl upload` sends
sessions into `gpufl serve` over a real PostgreSQL, and psql counts what was
stored after each step.

Why: the uploader and the server were each tested against the contract
(docs/UPLOAD.md) with a stand-in for the other; this is the pair a user
runs. Sessions: the bundled real H200 session (compact: device work from
trace.gflt) and a synthetic one recorded here (about 100 000 events:
enough batches that an upload can be cut part way). Covered: a wrong key (exit 1,
nothing stored, the key in no output); a clean upload, every event stored
once and `gpufl fleet sessions` listing it; the same upload again (nothing
re-sent) and forced (every batch a duplicate, still stored once); the
uploader killed part way, then started again (resumes from its cursor);
the server stopped part way and started again on the same port while the
uploader retries; in every case each place of each channel stored once.

Usage: serve_e2e.py GPUFL_CLI LIBGPUFL SYNTHETIC_PLUGIN. Exit 77 (skip)
only when Debian's postgresql is not installed, which make test installs.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pg_server import PgServer, skip_unless_installed  # noqa: E402
from serve_client import Server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "..", "samples", "train_sample")
SYNTHETIC = "kernels=200000,copies=2000,memsets=200,syncs=200,allocs=200,metrics=20,streams=4,threads=2,pace=1"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def session_id(path):
    import json
    with open(os.path.join(path, "session.json")) as f:
        return json.load(f)["session_id"]


def stored_once(pg, sid):
    """(events stored, whether every channel's places are 0..n-1 each once)."""
    rows = pg.psql("SELECT channel, count(*), count(DISTINCT seq), min(seq), max(seq) FROM events "
                   "WHERE session_id = '%s' GROUP BY channel" % sid)
    total, ok = 0, True
    for _, n, distinct, lo, hi in rows:
        n, distinct, lo, hi = int(n), int(distinct), int(lo), int(hi)
        total += n
        ok = ok and n == distinct and lo == 0 and hi == n - 1
    return total, ok


def upload(cli, url, keyfile, path, *extra, wait=True):
    cmd = [cli, "upload", "--backend-url", url, "--api-key-file", keyfile] + list(extra) + [path]
    if not wait:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def events_uploaded(line):
    """The uploader's summary line: '... N events uploaded ...' -> N."""
    words = line.replace(",", " ").split()
    for i, w in enumerate(words):
        if w.startswith("event") and i and words[i - 1].isdigit():
            return int(words[i - 1])
    return -1


def info_events(cli, path):
    """What `gpufl info` counts as the session's events (every channel)."""
    out = subprocess.run([cli, "info", path], capture_output=True, text=True, timeout=120, check=True).stdout
    return int([line.split()[1] for line in out.splitlines() if line.startswith("events ")][0])


def record_synthetic(lib, plugin, where):
    """A compact Trace session of the synthetic plugin's script under where."""
    code = ("import gpufl, sys\n"
            "assert gpufl.init(app_name='e2e', log_path=sys.argv[1], profiling_engine='trace', "
            "device_plugin=sys.argv[2], system_sample_rate_ms=0)\n"
            "import time; time.sleep(3)\n"
            "gpufl.shutdown()\n")
    env = dict(os.environ, GPUFL_LIBRARY=lib, GPUFL_SYNTHETIC=SYNTHETIC,
               PYTHONPATH=os.path.join(HERE, "..", "..", "python"))
    subprocess.run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable, "-c", code, where,
                    plugin], env=env, check=True, timeout=120)
    (name,) = [d for d in os.listdir(where) if os.path.isdir(os.path.join(where, d))]
    return os.path.join(where, name)


def main():
    cli, lib, plugin = sys.argv[1:4]
    skip_unless_installed()
    work = tempfile.mkdtemp(prefix="gpufl-e2e-")
    try:
        with PgServer() as pg:
            run(cli, lib, plugin, pg, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def run(cli, lib, plugin, pg, work):
    server = Server(cli, pg.conninfo)
    try:
        key = subprocess.run([cli, "serve", "key", "add", "ws1", "--db", pg.conninfo], capture_output=True,
                             text=True, timeout=60, check=True).stdout.strip()
        keyfile, badfile = os.path.join(work, "key"), os.path.join(work, "bad")
        for path, text in ((keyfile, key), (badfile, "gpufl-wrong-key-0123456789")):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write(text + "\n")
        url = "http://127.0.0.1:%d" % server.port
        sample = os.path.join(work, "sample")
        shutil.copytree(SAMPLE, sample)
        sid = session_id(sample)

        # a wrong key: refused, nothing stored, the key nowhere in what was said
        r = upload(cli, url, badfile, sample)
        check(r.returncode == 1, "a wrong key: exit 1 (%d: %s)" % (r.returncode, r.stderr.strip()[-200:]))
        check(stored_once(pg, sid)[0] == 0, "a wrong key: nothing stored")
        check("gpufl-wrong-key" not in r.stdout + r.stderr + server.stderr, "a wrong key: not in any output")

        # a clean upload: every event once, as many as the uploader says it sent
        r = upload(cli, url, keyfile, sample)
        sent = events_uploaded(r.stdout)
        n, once = stored_once(pg, sid)
        check(r.returncode == 0, "the bundled session uploads (exit %d: %s)" % (r.returncode, r.stderr.strip()))
        check(n == sent == info_events(cli, sample) and once,
              "stored %d events once each, %d sent, gpufl info counts %d" % (n, sent, info_events(cli, sample)))
        f = subprocess.run([cli, "fleet", "--db", pg.conninfo, "--workspace", "ws1", "sessions"], capture_output=True,
                           text=True, timeout=60)
        check(f.returncode == 0 and sid in f.stdout, "gpufl fleet sessions lists it")

        # again: nothing re-sent; forced: all of it again, stored once
        r = upload(cli, url, keyfile, sample)
        check(r.returncode == 0 and events_uploaded(r.stdout) == 0, "uploaded again: nothing sent (%s)" %
              r.stdout.strip())
        r = upload(cli, url, keyfile, sample, "--force")
        check(r.returncode == 0 and events_uploaded(r.stdout) == sent, "forced: all %d sent again" % sent)
        check(stored_once(pg, sid) == (sent, True), "forced: still stored once each")

        big = record_synthetic(lib, plugin, os.path.join(work, "synthetic"))
        bsid = session_id(big)

        # the uploader killed part way, then started again
        p = upload(cli, url, keyfile, big, wait=False)
        deadline = time.time() + 60
        while time.time() < deadline and stored_once(pg, bsid)[0] == 0:
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)
        p.communicate()
        part = stored_once(pg, bsid)[0]
        r = upload(cli, url, keyfile, big)
        n, once = stored_once(pg, bsid)
        check(r.returncode == 0, "resumed after the uploader was killed (exit %d: %s)" % (r.returncode,
                                                                                         r.stderr.strip()[-300:]))
        want = info_events(cli, big)
        check(0 < part < want, "the kill came part way: %d of %d stored" % (part, want))
        check(n == want and once, "after the kill: %d stored of %d, each once" % (n, want))
        total_big = n

        # the server stopped part way and started again on its port; the uploader retries
        pg.psql("DELETE FROM events WHERE session_id = '%s'" % bsid)
        p = upload(cli, url, keyfile, big, "--force", wait=False)
        deadline = time.time() + 60
        while time.time() < deadline and stored_once(pg, bsid)[0] == 0:
            time.sleep(0.05)
        server.stop()
        time.sleep(1.0)
        server.start(server.port)
        out, err = p.communicate(timeout=300)
        n, once = stored_once(pg, bsid)
        check(p.returncode == 0, "the upload went on after the server came back (exit %d: %s)" %
              (p.returncode, err.strip()[-300:]))
        check(n == total_big and once, "after the restart: %d stored of %d, each once" % (n, total_big))
    finally:
        server.close()


if __name__ == "__main__":
    sys.exit(main())
