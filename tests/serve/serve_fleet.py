#!/usr/bin/env python3
"""`gpufl fleet` over sessions uploaded into `gpufl serve` (issue 17):
synthetic sessions of two apps, three hosts, two jobs and a second
workspace, spread over November 2026, are uploaded over HTTP, then every
query is run with the command and its rows checked against what was
uploaded: sessions by host, app, job and dates; kernel and scope time per
day and hour; regressions between two periods (a kernel made 50 % slower
is judged regressed, a steady one is not, a period without sessions is
said); and the commands' usage errors.

Usage: serve_fleet.py GPUFL_CLI. Exit 77 (skip) only when Debian's
postgresql is not installed, which make test installs.
"""
import calendar
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pg_server import PgServer, skip_unless_installed  # noqa: E402
from serve_client import Client, Server, kernel_line, scope_lines, session_meta  # noqa: E402

failures = []
MS = 1000000


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def wall(day, hour=10):
    return calendar.timegm((2026, 11, day, hour, 0, 0)) * 10**9


def make(rng, sid, app, host, job, day, kernels, hour=10):
    """A session: kernels {name: (launches, ms each)} with 2 % noise, one 'step' scope per 10 launches."""
    meta = session_meta(sid, app=app, host=host, start_wall_ns=wall(day, hour), duration_ns=60 * 10**9, job=job)
    dev, sc, t = [], [], 10**9 + MS
    totals = {}
    for name, (n, ms) in kernels.items():
        for i in range(n):
            dur = int(ms * MS * rng.uniform(0.98, 1.02))
            dev.append(kernel_line(t, dur, name=name, corr=len(dev) + 1))
            totals[name] = totals.get(name, 0) + dur
            t += dur + 1000
    steps = 0
    for i in range(0, len(dev), 10):
        sc += scope_lines(10**9 + i * MS, 5 * MS, name="step", sid=i + 1)
        steps += 5 * MS
    return meta, dev, sc, totals, steps


def fleet(cli, pg, *args, ws="team"):
    cmd = [cli, "fleet"] + list(args) + (["--workspace", ws] if ws else []) + ["--db", pg.conninfo]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def main():
    cli = sys.argv[1]
    skip_unless_installed()
    with PgServer() as pg:
        srv = Server(cli, pg.conninfo)
        try:
            run(cli, pg, srv)
        finally:
            srv.stop()
            srv.close()
    if failures:
        print("\n%d check(s) failed:\n  %s" % (len(failures), "\n  ".join(failures)))
        return 1
    return 0


def run(cli, pg, srv):
    keys = {ws: subprocess.run([cli, "serve", "key", "add", ws, "--db", pg.conninfo], capture_output=True,
                               text=True, check=True, timeout=60).stdout.strip() for ws in ("team", "other")}
    rng = random.Random(17)
    sessions, by_day_kernel = [], {}
    # train: 6 sessions before (Nov 1-3), 6 after (Nov 10-12); attention 2.5 ms -> 3.75 ms; softmax gone, topk new
    for i in range(12):
        after = i >= 6
        day = (10 if after else 1) + (i % 6) // 2
        k = {"gemm": (100, 1.0), "attention": (50, 3.75 if after else 2.5)}
        k["topk" if after else "softmax"] = (20, 1.0)
        sessions.append(("team", "train-%02d" % i, "train", "node%d" % (1 + i % 2), "job-%d" % (1 + i % 2), day, k))
    sessions.append(("team", "infer-00", "infer", "node3", None, 5, {"decode": (30, 0.5)}))
    # long: the later runs are twice as long (20 steps, not 10), each step the same
    for i in range(8):
        n = 200 if i >= 4 else 100
        sessions.append(("team", "long-%d" % i, "long", "node4", None, 20 if i >= 4 else 15, {"gemm": (n, 1.0)}))
    sessions.append(("other", "train-x", "train", "node1", None, 1, {"gemm": (10, 1.0)}))
    uploaded = {}
    for ws, sid, app, host, job, day, k in sessions:
        meta, dev, sc, totals, steps = make(rng, sid, app, host, job, day, k)
        c = Client(srv.port, keys[ws])
        assert c.announce(meta)[0] == 200
        for at in range(0, len(dev), 64):  # batches of 64 lines
            st, r = c.batch(sid, "device", at, dev[at:at + 64])
            assert st == 200 and r["accepted"] == len(dev[at:at + 64]), r
        st, r = c.batch(sid, "scope", 0, sc)
        assert st == 200 and r["accepted"] == len(sc), r
        st, r = c.complete(sid, {"device": len(dev), "scope": len(sc), "system": 0})
        assert st == 200 and r["complete"], r
        c.close()
        uploaded[sid] = (len(dev) + len(sc), totals, steps)
        if ws == "team" and app == "train":
            for name, ns in totals.items():
                key = ("2026-11-%02d" % day, name)
                by_day_kernel[key] = by_day_kernel.get(key, 0) + ns

    # ---- sessions ---------------------------------------------------------------------
    r = fleet(cli, pg, "sessions", "--json")
    rows = json.loads(r.stdout) if r.returncode == 0 else []
    check(r.returncode == 0 and len(rows) == 21, "sessions of team: 21 (%d) %s" % (len(rows), r.stderr))
    check(all(row["events"] == uploaded[row["session_id"]][0] for row in rows), "each with its events stored")
    check([row["session_id"] for row in rows][:2] == ["train-00", "train-01"] and rows[0]["start"] ==
          "2026-11-01T10:00:00Z" and rows[0]["end"] == "2026-11-01T10:01:00Z", "oldest first, times in UTC")
    check("train-x" not in [row["session_id"] for row in rows], "another workspace's session is not listed")
    r = fleet(cli, pg, "sessions", "--host", "node3", "--json")
    check([x["session_id"] for x in json.loads(r.stdout)] == ["infer-00"], "--host node3: infer-00")
    r = fleet(cli, pg, "sessions", "--app", "train", "--job", "job-2", "--json")
    check([x["session_id"] for x in json.loads(r.stdout)] == ["train-%02d" % i for i in range(1, 12, 2)],
          "--app train --job job-2: the odd sessions")
    r = fleet(cli, pg, "sessions", "--since", "2026-11-05", "--until", "2026-11-10", "--json")
    check([x["session_id"] for x in json.loads(r.stdout)] == ["infer-00", "train-06", "train-07"],
          "--since 2026-11-05 --until 2026-11-10 (the whole day)")
    r = fleet(cli, pg, "sessions", "--app", "infer")
    check(r.returncode == 0 and "infer-00" in r.stdout and "node3" in r.stdout and r.stdout.endswith("1 session\n"),
          "sessions as a table")
    r = fleet(cli, pg, "sessions", ws="other")
    check(r.returncode == 0 and "train-x" in r.stdout and "1 session" in r.stdout, "--workspace other")

    # ---- kernels and scopes over time -----------------------------------------------------------
    r = fleet(cli, pg, "kernels", "--app", "train", "--by", "day", "--top", "0", "--json")
    got = {(x["bucket"], x["kernel"]): x["total_ns"] for x in json.loads(r.stdout)} if r.returncode == 0 else {}
    check(got == by_day_kernel, "kernels --by day: GPU time per kernel and day as uploaded (%d rows)" % len(got))
    r = fleet(cli, pg, "kernels", "--app", "train", "--by", "day", "--top", "1")
    lines = [x for x in r.stdout.splitlines() if x.startswith("2026-11-")]
    check(len(lines) == 6 and all(x.rstrip().endswith("attention") for x in lines) and "... and 2 more kernel names"
          in r.stdout, "--top 1: the day's largest kernel, the rest counted")
    r = fleet(cli, pg, "scopes", "--by", "hour", "--app", "train", "--json")
    rows = json.loads(r.stdout) if r.returncode == 0 else []
    check(len(rows) == 6 and rows[0]["bucket"] == "2026-11-01T10Z" and rows[0]["scope"] == "step" and
          rows[0]["total_ns"] == 2 * uploaded["train-00"][2] and rows[0]["sessions"] == 2,
          "scopes --by hour: step time per hour (%s)" % (rows[:1],))

    # ---- regressions ---------------------------------------------------------------------------------
    args = ["regress", "--app", "train", "--before", "2026-11-01..2026-11-03", "--after", "2026-11-10..2026-11-12"]
    r = fleet(cli, pg, *args)
    print(r.stdout)
    check(r.returncode == 2, "regress: exit 2 on a regression (%d) %s" % (r.returncode, r.stderr))
    att = [x for x in r.stdout.splitlines() if x.rstrip().endswith("attention") or "attention  (" in x]
    check(len(att) == 1 and att[0].split()[0] == "regressed" and "slower per session" in att[0],
          "attention (2.5 ms -> 3.75 ms a launch) regressed, slower per session")
    check(not any(x.rstrip().endswith(" gemm") for x in r.stdout.splitlines()), "gemm (steady) not listed")
    check("Result: REGRESSION" in r.stdout and "6 sessions" in r.stdout, "the result line and the periods")
    r = fleet(cli, pg, *(args + ["--json", "--all"]))
    j = json.loads(r.stdout) if r.stdout else {}
    verdicts = {k["name"]: (k["verdict"], k["presence"]) for k in j.get("kernels", [])}
    check(verdicts.get("attention") == ("regressed", "both") and verdicts.get("gemm") == ("same", "both") and
          verdicts.get("topk", ("", ""))[1] == "new" and verdicts.get("softmax", ("", ""))[1] == "gone",
          "regress --json --all: %s" % verdicts)
    same = ["regress", "--app", "train", "--before", "2026-11-01..2026-11-02", "--after", "2026-11-02..2026-11-03"]
    r = fleet(cli, pg, *same)
    check(r.returncode == 0 and "Result: no regression" in r.stdout, "regress between like periods: exit 0, none")
    # runs twice as long: per session a regression, per step none
    longer = ["regress", "--app", "long", "--before", "2026-11-15", "--after", "2026-11-20"]
    r = fleet(cli, pg, *longer)
    check(r.returncode == 2 and any(x.split()[:1] == ["regressed"] and "gemm  (slower per session)" in x
                                    for x in r.stdout.splitlines()), "runs twice as long: gemm per session regressed")
    r = fleet(cli, pg, *(longer + ["--per-step", "step"]))
    check(r.returncode == 0 and "Result: no regression" in r.stdout and "\nPer step " in r.stdout and
          "per step   each session's time divided by its 'step' scopes" in r.stdout,
          "--per-step step: the same time per step, no regression (%d)" % r.returncode)
    r = fleet(cli, pg, *(longer + ["--per-step", "step", "--json", "--all"]))
    j = json.loads(r.stdout) if r.returncode == 0 else {}
    gemm = [k for k in j.get("kernels", []) if k["name"] == "gemm"]
    check(j.get("item") == "step" and len(gemm) == 1 and gemm[0]["verdict"] == "same" and
          abs(gemm[0]["baseline"]["mean_ns"] - 10 * MS) < 0.03 * 10 * MS, "--per-step --json: gemm 10 ms a step")
    r = fleet(cli, pg, *(longer + ["--per-step", "nosuch"]))
    check(r.returncode == 1 and "has a scope 'nosuch'" in r.stderr, "--per-step of a scope no session has: %s"
          % r.stderr.strip())
    r = fleet(cli, pg, "regress", "--app", "train", "--before", "2026-10-01..2026-10-02", "--after", "2026-11-10")
    check(r.returncode == 1 and "no session of app 'train' started in 2026-10-01..2026-10-02" in r.stderr,
          "a period without sessions is said: %s" % r.stderr.strip())

    # ---- errors ----------------------------------------------------------------------------------------------
    r = fleet(cli, pg, "sessions", ws="nobody")
    check(r.returncode == 1 and "no workspace 'nobody'" in r.stderr, "an unknown workspace: %s" % r.stderr.strip())
    for bad, named in ((["kernels", "--by", "week"], "--by"), (["sessions", "--by", "day"], "--by"),
                       (["regress", "--app", "a", "--before", "2026-13-01", "--after", "2026-11-01"], "--before"),
                       (["sessions", "--since", "yesterday"], "--since"), (["frobnicate"], "frobnicate"),
                       (["regress", "--before", "2026-11-01", "--after", "2026-11-02"], "--app"),
                       (["sessions", "--per-step", "step"], "--per-step")):
        r = fleet(cli, pg, *bad)
        check(r.returncode == 64 and named in r.stderr and "usage: gpufl fleet" in r.stderr,
              "usage error naming %s: %s" % (named, r.stderr.splitlines()[0] if r.stderr else ""))
    for bad, named in ((["key", "add"], "WORKSPACE"), (["--tls-cert", "a.pem"], "--tls-key"),
                       (["key", "list", "--listen", ":1"], "--listen"), (["--migrate", "--workers", "2"], "--workers"),
                       (["key", "revoke"], "id or prefix"), (["--workers", "0"], "--workers"),
                       (["key", "add", "a", "b"], "'b'"), (["--api-path", "api/"], "--api-path")):
        r = subprocess.run([cli, "serve"] + bad + ["--db", pg.conninfo], capture_output=True, text=True, timeout=60)
        check(r.returncode == 64 and named in r.stderr and "usage: gpufl serve" in r.stderr and not r.stdout,
              "serve usage error naming %s: %s" % (named, r.stderr.splitlines()[0] if r.stderr else ""))
    r = subprocess.run([cli, "serve", "--listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, GPUFL_SERVE_DB=""))
    check(r.returncode == 64 and "GPUFL_SERVE_DB" in r.stderr, "serve without a database: usage error")
    r = subprocess.run([cli, "serve", "--migrate", "--db", pg.conninfo], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "at version 1 already" in r.stderr, "serve --migrate: %s" % r.stderr.strip())
    r = subprocess.run([cli, "serve", "--listen", "127.0.0.1:0", "--db", "host=127.0.0.1 port=1 user=x "
                        "password=sekrit dbname=x connect_timeout=5"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "cannot connect to the database" in r.stderr and "sekrit" not in r.stderr,
          "serve with an unreachable database: exit 1, the reason, no password: %s" % r.stderr.strip())
    r = subprocess.run([cli, "fleet", "sessions", "--workspace", "team"], capture_output=True, text=True,
                       env=dict(os.environ, GPUFL_SERVE_DB=pg.conninfo), timeout=60)
    check(r.returncode == 0 and "21 sessions" in r.stdout, "GPUFL_SERVE_DB stands for --db")
    r = subprocess.run([cli, "serve", "key", "list", "--db", pg.conninfo, "--json"], capture_output=True, text=True,
                       timeout=60)
    listed = json.loads(r.stdout) if r.returncode == 0 else []
    check([(k["workspace"], k["prefix"]) for k in listed] == [("team", keys["team"][:12]),
                                                              ("other", keys["other"][:12])] and
          all(keys[k["workspace"]] not in r.stdout for k in listed), "key list: prefixes, never the keys")


if __name__ == "__main__":
    sys.exit(main())
