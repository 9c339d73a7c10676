#!/usr/bin/env python3
"""`gpufl serve` over a real PostgreSQL (issue 17): uploads as
docs/UPLOAD.md has them, from this script over loopback, and what ends up
in the database checked with psql after each step.

Covered: idempotent replay (a batch sent twice, overlapping batches),
every event stored exactly once in the end; a wrong, missing or revoked
key (401, nothing stored); a connection cut mid-body (nothing of it
stored); gpufl serve restarted between batches; PostgreSQL restarted
between batches (the workers' connections are reopened); health 503 while
PostgreSQL is down; 404 for an unannounced session; 413 for a body over
8 MiB and one that inflates past 64 MiB; 400 for bad headers and bodies;
keep-alive; the key never in the server's log.

Usage: serve_upload.py GPUFL_CLI. Exit 77 (skip) only when Debian's
postgresql is not installed, which make test installs.
"""
import gzip
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pg_server import PgServer, skip_unless_installed  # noqa: E402
from serve_client import (Client, Server, batch_body, device_lines, host_line, scope_lines,  # noqa: E402
                          session_meta)

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def stored(pg, session_id=None, channel=None):
    where = ["true"]
    if session_id:
        where.append("session_id = '%s'" % session_id)
    if channel is not None:
        where.append("channel = %d" % channel)
    return int(pg.psql("SELECT count(*) FROM events WHERE " + " AND ".join(where))[0][0])


def exactly_once(pg, session_id, channel, n):
    """Places 0..n-1 of the channel, each once, and nothing else."""
    rows = pg.psql("SELECT count(*), count(DISTINCT seq), coalesce(min(seq), -1), coalesce(max(seq), -1) FROM events "
                   "WHERE session_id = '%s' AND channel = %d" % (session_id, channel))[0]
    return [int(x) for x in rows] == [n, n, 0 if n else -1, n - 1]


def key_add(cli, pg, ws):
    r = subprocess.run([cli, "serve", "key", "add", ws, "--db", pg.conninfo], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def raw_request(port, head, body, cut_at=None):
    """Sends head + body (only cut_at bytes of it, then closes); the
    status line, or None when cut."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        if cut_at is None:
            s.sendall(head.encode() + b"\r\n" + body)
            return s.recv(65536).split(b"\r\n")[0].decode()
        s.sendall(head.encode() + b"\r\n" + body[:cut_at])
        time.sleep(0.2)
        return None
    finally:
        s.close()


def main():
    cli = sys.argv[1]
    skip_unless_installed()
    with PgServer() as pg:
        srv = Server(cli, pg.conninfo, workers=4)
        try:
            run(cli, pg, srv)
        finally:
            rc = srv.stop()
            check(rc == 0, "gpufl serve stops with 0 on SIGTERM (%s)" % rc)
            srv.close()
    if failures:
        print("\n%d check(s) failed:\n  %s" % (len(failures), "\n  ".join(failures)))
        return 1
    return 0


def run(cli, pg, srv):
    key = key_add(cli, pg, "team")
    other = key_add(cli, pg, "other")
    c = Client(srv.port, key)

    # ---- health, announce, 404 ------------------------------------------------
    st, body = c.health()
    check(st == 200 and body == {"status": "ok", "database": "ok"}, "health 200 with the database up")
    st, body = c.batch("s1", "device", 0, device_lines(3))
    check(st == 404 and stored(pg) == 0, "a batch of an unannounced session: 404, nothing stored (%s)" % st)
    st, body = c.announce(session_meta("s1", app="train", host="node1"))
    check(st == 200 and body == {"session_id": "s1", "created": True}, "announce: 200 created")
    st, body = c.announce(dict(session_meta("s1", app="train", host="node1"), status="crashed"))
    check(st == 200 and body["created"] is False, "announce again: 200, not created")
    check(pg.psql("SELECT status, count(*) FROM sessions GROUP BY 1") == [["crashed", "1"]],
          "announcing again updates the session, stores it once")

    # ---- idempotent replay --------------------------------------------------------
    lines = device_lines(1000)
    st, b1 = c.batch("s1", "device", 0, lines[:400])
    check(st == 200 and b1 == {"accepted": 400, "duplicates": 0, "rejected": 0, "errors": []}, "batch 0..399 stored")
    st, b2 = c.batch("s1", "device", 0, lines[:400])
    check(st == 200 and b2["accepted"] == 0 and b2["duplicates"] == 400, "the same batch again: 400 duplicates")
    st, b3 = c.batch("s1", "device", 300, lines[300:700])
    check(st == 200 and b3["accepted"] == 300 and b3["duplicates"] == 100, "an overlapping batch: 300 new, 100 dup")
    check(exactly_once(pg, "s1", 0, 700), "places 0..699 stored once each")
    st, b4 = c.batch("s1", "device", 700, lines[700:], gz=False)
    check(st == 200 and b4["accepted"] == 300, "an identity (not gzip) body is taken too")

    # ---- wrong keys ----------------------------------------------------------------
    before = stored(pg)
    for label, client in (("a wrong key", Client(srv.port, "gfl_" + "0" * 48)), ("no key", Client(srv.port, None)),
                          ("a malformed header", Client(srv.port, ""))):
        st, body = client.batch("s1", "device", 1000, device_lines(10, start=5 * 10**9))
        check(st == 401 and "error" in body, "%s: 401 (%s)" % (label, st))
        st, body = client.announce(session_meta("s-wrong"))
        check(st == 401, "%s: announce 401" % label)
    check(stored(pg) == before and pg.psql("SELECT count(*) FROM sessions")[0][0] == "1",
          "nothing stored for the 401s")
    # a key of another workspace sees no session s1 of team
    st, body = Client(srv.port, other).batch("s1", "device", 1000, device_lines(10))
    check(st == 404, "another workspace's key: s1 is not its session (404)")

    # ---- bad requests -----------------------------------------------------------------
    st, _ = c.batch("s1", "bogus", 0, device_lines(1))
    check(st == 400, "a bad X-Gpufl-Channel: 400")
    st, _ = c.batch("s1", "device", 0, device_lines(1), extra={"X-Gpufl-First-Seq": "-1"})
    check(st == 400, "a bad X-Gpufl-First-Seq: 400")
    st, _ = c.request("POST", "/events/stream", b"not gzip at all",
                      {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip",
                       "X-GpuFlight-Session-Id": "s1", "X-Gpufl-Channel": "device", "X-Gpufl-First-Seq": "0"})
    check(st == 400, "a body that is not gzip: 400")
    st, _ = c.request("POST", "/sessions", gzip.compress(b'{"no_id": 1}'),
                      {"Content-Type": "application/json", "Content-Encoding": "gzip"})
    check(st == 400, "session.json without session_id: 400")
    st, _ = c.request("GET", "/no/such/path")
    check(st == 404, "an unknown path: 404")
    check(stored(pg) == 1000, "nothing stored for the 400s")

    # ---- 413 ------------------------------------------------------------------------------
    head, _ = batch_body("s1", "device", 0, [])
    head = head.replace("Content-Length: 20\r\n", "Content-Length: %d\r\n" % (8 * 2**20 + 1))
    status = raw_request(srv.port, head, b"")
    check(status.startswith("HTTP/1.1 413"), "Content-Length over 8 MiB: 413 before the body (%s)" % status)
    bomb = gzip.compress(b"x" * (64 * 2**20 + 1), 9)
    st, body = c.request("POST", "/events/stream", bomb,
                         {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip",
                          "X-GpuFlight-Session-Id": "s1", "X-Gpufl-Channel": "device", "X-Gpufl-First-Seq": "0"})
    check(st == 413, "a body inflating past 64 MiB: 413 (%s, %d bytes sent)" % (st, len(bomb)))

    # ---- a connection cut mid-body ------------------------------------------------------------
    scope = scope_lines(10**9, 5 * 10**6) * 50  # 100 lines
    head, body = batch_body("s1", "scope", 0, scope, key=key)
    raw_request(srv.port, head, body, cut_at=len(body) // 2)
    time.sleep(0.3)
    check(stored(pg, "s1", 1) == 0, "a connection cut mid-body: nothing of the batch stored")
    status = raw_request(srv.port, head, body)
    check(status.startswith("HTTP/1.1 200"), "the same batch whole afterwards: 200")
    check(exactly_once(pg, "s1", 1, 100), "... and stored once")
    raw_request(srv.port, head, body, cut_at=len(body) - 1)  # one byte short
    raw_request(srv.port, head.replace("First-Seq: 0", "First-Seq: 100"), body, cut_at=len(body) - 1)
    time.sleep(0.3)
    check(exactly_once(pg, "s1", 1, 100), "cut one byte short: nothing stored, nothing doubled")

    # ---- gpufl serve restarted between batches ---------------------------------------------------
    c.batch("s1", "system", 0, [host_line(10**9 + i * 10**8) for i in range(50)])
    port = srv.port
    check(srv.stop() == 0, "gpufl serve stopped between batches")
    st = None
    try:
        st, _ = c.batch("s1", "system", 50, [host_line(10**10)])
    except OSError:
        pass
    check(st is None, "while it is stopped, the upload cannot connect")
    srv.start(port)
    c.close()
    st, b = c.batch("s1", "system", 0, [host_line(10**9 + i * 10**8) for i in range(100)])
    check(st == 200 and b["accepted"] == 50 and b["duplicates"] == 50, "after the restart the resent batch: 50 dup")
    check(exactly_once(pg, "s1", 2, 100), "system places 0..99 once each")

    # ---- PostgreSQL stopped and restarted ------------------------------------------------------------
    pg.stop()
    st, body = c.health()
    check(st == 503 and body["status"] == "unavailable" and body["database"], "health 503 with PostgreSQL down")
    st, body = c.batch("s1", "system", 100, [host_line(2 * 10**10)])
    check(st == 503, "a batch while PostgreSQL is down: 503 (the uploader retries)")
    pg.start()
    st, body = c.health()
    check(st == 200, "health 200 again once PostgreSQL is back")
    st, body = c.batch("s1", "system", 100, [host_line(2 * 10**10 + i) for i in range(20)])
    check(st == 200 and body["accepted"] == 20, "batches stored again after PostgreSQL's restart")
    # every worker's connection was broken by the restart: each is reopened on its next request
    ok = all(c2.batch("s1", "system", 100 + i, [host_line(2 * 10**10 + i)])[0] == 200
             for c2 in [Client(srv.port, key) for _ in range(8)] for i in range(2))
    check(ok, "every worker reconnects (16 requests over 8 connections, all 200)")
    check(exactly_once(pg, "s1", 2, 120), "system places 0..119 once each")

    # ---- session-complete ------------------------------------------------------------------------------
    st, body = c.complete("s1", {"device": 1000, "scope": 100, "system": 120})
    check(st == 200 and body["complete"] is True and body["stored"] == {"device": 1000, "scope": 100, "system": 120},
          "session-complete: every place held")
    st, body = c.complete("s1", {"device": 1001, "scope": 100, "system": 120})
    check(st == 200 and body["complete"] is False, "session-complete with a place missing: not complete")

    # ---- many sessions at once, keep-alive -----------------------------------------------------------------
    import threading
    errors = []

    def uploader(i):
        cl = Client(srv.port, key)
        sid = "par-%d" % i
        cl.announce(session_meta(sid))
        for b in range(5):
            st, r = cl.batch(sid, "device", b * 100, device_lines(100, start=10**9 + b * 10**8))
            if st != 200:
                errors.append((sid, st, r))
            st, r = cl.batch(sid, "device", b * 100, device_lines(100, start=10**9 + b * 10**8))  # replayed
            if st != 200 or r["duplicates"] != 100:
                errors.append((sid, st, r))
        cl.close()

    threads = [threading.Thread(target=uploader, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, "16 concurrent uploaders, each batch sent twice: all 200 (%s)" % errors[:2])
    check(all(exactly_once(pg, "par-%d" % i, 0, 500) for i in range(16)), "... every event stored exactly once")

    # ---- revoked key ----------------------------------------------------------------------------------------------
    r = subprocess.run([cli, "serve", "key", "revoke", key[:12], "--db", pg.conninfo], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, "key revoke by prefix")
    n = stored(pg)
    st, _ = c.batch("s1", "device", 2000, device_lines(5, start=9 * 10**9))
    check(st == 401 and stored(pg) == n, "a revoked key: 401, nothing stored")
    srv.drain()
    check(key not in srv.stderr and other not in srv.stderr, "the server's log holds no key")


if __name__ == "__main__":
    sys.exit(main())
