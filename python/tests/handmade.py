"""Sessions written by hand as NDJSON logs (docs/FORMAT.md), for the
analyzer's tests of device work, NVTX op ranges and exact times that a
machine without a GPU cannot record. Each line is a dict; the helper adds
the session_start (and session_end) lines every log has."""

import json
import os

SESSION_ID = "handmade-20261126-120000-4242-00000000000000aa"
T0 = 1_000_000_000  # the session's start, ns of the session timebase
WALL0 = 1_795_000_000_000_000_000


def write_session(directory, device=(), scope=(), system=(), end_ns=None, session_id=SESSION_ID, app="handmade"):
    """Writes device.log, scope.log and system.log of one session into
    directory (created); returns it. end_ns: the session_end time (None:
    the session did not end)."""
    os.makedirs(directory, exist_ok=True)
    for channel, lines in (("device", device), ("scope", scope), ("system", system)):
        start = {"type": "session_start", "ts_ns": T0, "wall_ns": WALL0, "session_id": session_id,
                 "app_name": app, "pid": 4242, "host": "testhost", "channel": channel, "part": 0,
                 "format_version": 1, "gpufl_version": "0.1.0"}
        rows = [start] + list(lines)
        if end_ns is not None:
            rows.append({"type": "session_end", "ts_ns": end_ns, "wall_ns": WALL0 + end_ns - T0,
                         "session_id": session_id, "app_name": app, "lines": len(rows), "lost": 0})
        with open(os.path.join(directory, channel + ".log"), "w") as f:
            for r in rows:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
    return directory


def kernel(start, dur, name="k", stream=7, device=0, tid=100, corr=1, api_start=None, api_end=None, **extra):
    k = {"type": "kernel", "start_ns": start, "end_ns": start + dur, "dur_ns": dur, "device": device,
         "context": 1, "stream": stream, "corr": corr, "name": name, "grid": [4, 1, 1], "block": [128, 1, 1],
         "regs": 32, "smem_static": 0, "smem_dynamic": 1024, "local_mem": 0, "occupancy": 0.5,
         "limiter": "registers", "tid": tid}
    if api_start is not None:
        k["api_start_ns"] = api_start
        k["api_end_ns"] = api_end if api_end is not None else api_start + 1000
    k.update(extra)
    return k


def memcpy(start, dur, kind="HtoD", nbytes=1 << 20, stream=7, tid=100, corr=2, **extra):
    m = {"type": "memcpy", "start_ns": start, "end_ns": start + dur, "dur_ns": dur, "device": 0, "context": 1,
         "stream": stream, "corr": corr, "kind": kind, "src_kind": "pinned" if kind == "HtoD" else "device",
         "dst_kind": "device" if kind == "HtoD" else "pinned", "bytes": nbytes, "tid": tid}
    m.update(extra)
    return m


def nvtx(start, end, name, tid, depth, rid, seq=None, **extra):
    r = {"type": "nvtx_range", "start_ns": start, "end_ns": end, "dur_ns": end - start, "tid": tid,
         "name": name, "depth": depth, "id": rid}
    if seq is not None:
        r["seq"] = seq
    r.update(extra)
    return r
