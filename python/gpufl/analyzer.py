"""A recorded session as pandas DataFrames, with readable summaries.

::

    from gpufl.analyzer import GpuFlightSession

    s = GpuFlightSession("gpufl-logs", log_prefix="trainer")
    s.print_summary()
    s.kernels.groupby("name", observed=True)["dur_ns"].sum().nlargest(10)
    s.inspect_hotspots(top_n=5)

The session is read by libgpufl's reader (gpufl_trace_open(), through
gpufl._trace): NDJSON logs or a ``.gflt`` trace, the same bytes every other
gpufl tool reads, on one thread per CPU and without a Python loop over
events. Each DataFrame is built the first time it is asked for and kept;
docs/PYTHON.md lists every column with its unit.

Which session: ``log_dir`` may be a session directory, a ``.gflt`` or
``.log`` file, or a directory of session directories (a ``log_path``); in
the last case ``log_prefix`` keeps the directories whose name starts with
it (names are ``<app>-<yyyymmdd>-<hhmmss>-<pid>-<hex>``), ``session_id``
picks one by its id, and otherwise the newest is read, with a warning
naming it when several matched. ``sessions()`` lists them.

pandas and numpy are imported by this module and the ones it uses, never
by ``import gpufl``: recording does not need them.
"""

import datetime
import json
import os
import re
import warnings

import numpy as np
import pandas as pd

from . import _frames, _scopes, _text, _trace
from ._trace import Trace, TraceError

__all__ = ["GpuFlightSession", "sessions", "resolve", "TraceError"]

_LOG_NAMES = ("device.log", "scope.log", "system.log")
_NAME_TIME = re.compile(r"-(\d{8})-(\d{6})-\d+-[0-9a-fA-F]+$")

# Which engine records what no engine of this build records yet.
_PC_SAMPLING_NOTE = ("PC samples (warp stall reasons by instruction) are recorded by the pc_sampling "
                     "and deep engines")
_PERF_NOTE = ("SASS metrics are recorded by the sass_metrics and deep engines, range-profiler metrics by "
              "the range_profiler engine (per scope: range_metrics)")


# ---- finding the session ---------------------------------------------------------


def _is_session_dir(path):
    return os.path.isdir(path) and (any(
        os.path.isfile(os.path.join(path, f)) for f in ("session.json", "trace.gflt") + _LOG_NAMES))


def _session_json(path):
    try:
        with open(os.path.join(path, "session.json"), "rb") as f:
            meta = json.loads(f.read().decode("utf-8", "replace"))
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError):
        return {}


def _start_wall_ns(path, meta):
    """When the session started (ns since the epoch), for picking the newest:
    session.json's start, else the time in the directory's name, else its
    modification time."""
    v = meta.get("start_wall_ns")
    if isinstance(v, int):
        return v
    m = _NAME_TIME.search(os.path.basename(os.path.normpath(path)))
    if m:
        try:
            t = datetime.datetime.strptime(m.group(1) + m.group(2), "%Y%m%d%H%M%S")
            return int(t.replace(tzinfo=datetime.timezone.utc).timestamp()) * 1000000000
        except ValueError:
            pass
    return int(os.stat(path).st_mtime_ns)


def _candidates(log_dir):
    """Session directories under log_dir (itself when it is one)."""
    if _is_session_dir(log_dir):
        return [log_dir]
    try:
        names = sorted(os.listdir(log_dir))
    except OSError as e:
        raise FileNotFoundError(e.errno, "cannot list the log directory: %s" % e.strerror, log_dir) from None
    return [os.path.join(log_dir, n) for n in names if _is_session_dir(os.path.join(log_dir, n))]


def sessions(log_dir, log_prefix=None):
    """The sessions under log_dir, newest first: a DataFrame of session_id,
    app_name, start (UTC Timestamp), status ("ended", "running", "crashed";
    NaN without session.json), files (what the directory holds: "gflt",
    "ndjson", "gflt+ndjson") and path. log_prefix keeps the directories
    whose name starts with it."""
    log_dir = os.fspath(log_dir)
    rows = []
    for path in _candidates(log_dir):
        name = os.path.basename(os.path.normpath(path))
        if log_prefix and not name.startswith(log_prefix):
            continue
        meta = _session_json(path)
        formats = [f for f, there in (("gflt", os.path.isfile(os.path.join(path, "trace.gflt"))),
                                      ("ndjson", any(os.path.isfile(os.path.join(path, n)) for n in _LOG_NAMES)))
                   if there]
        rows.append({
            "session_id": meta.get("session_id") or name,
            "app_name": meta.get("app_name"),
            "start": pd.Timestamp(_start_wall_ns(path, meta), unit="ns", tz="UTC"),
            "status": meta.get("status"),
            "files": "+".join(formats),
            "path": path,
        })
    cols = ["session_id", "app_name", "start", "status", "files", "path"]
    if not rows:
        return pd.DataFrame({c: pd.Series([], dtype="datetime64[ns, UTC]" if c == "start" else object)
                             for c in cols})
    return pd.DataFrame(rows, columns=cols).sort_values("start", ascending=False, kind="stable") \
        .reset_index(drop=True)


def resolve(log_dir, log_prefix=None, session_id=None):
    """The path to open for GpuFlightSession's arguments (see the module
    docstring). Raises FileNotFoundError naming log_dir and what was looked
    for; warns (UserWarning) when several sessions matched and the newest
    was taken."""
    log_dir = os.fspath(log_dir)
    if not os.path.exists(log_dir):
        raise FileNotFoundError(2, "no such session, file or directory", log_dir)
    if os.path.isfile(log_dir):
        return log_dir
    found = sessions(log_dir, log_prefix)
    if session_id is not None:
        found = found[(found["session_id"] == session_id)
                      | (found["path"].map(lambda p: os.path.basename(os.path.normpath(p))) == session_id)]
    if found.empty:
        what = "no session directory"
        if log_prefix:
            what += " whose name starts with %r" % log_prefix
        if session_id is not None:
            what += " with session_id %r" % session_id
        raise FileNotFoundError(2, what + " (a directory holding session.json, trace.gflt or device/scope/"
                                "system.log)", log_dir)
    if len(found) > 1:
        warnings.warn("gpufl: %d sessions under %s match; reading the newest, %s (gpufl.analyzer.sessions() "
                      "lists them; pass session_id= to pick one)" % (len(found), log_dir, found["session_id"][0]),
                      stacklevel=3)
    return found["path"][0]


# ---- the session ------------------------------------------------------------------


class GpuFlightSession:
    """One recorded session, read with libgpufl's reader.

    Raises FileNotFoundError when log_dir holds no matching session, and
    gpufl.analyzer.TraceError (a RuntimeError; ``.path``, ``.code``) with
    the reader's message (file, line or offset) when it cannot be read. A
    file cut short (a killed writer) is read up to its last whole line or
    chunk: ``skipped_bytes``, ``skipped_lines`` and ``skipped_chunks`` say
    what was left out, and a warning is given.

    Attributes: ``path`` (what was opened), ``session_id``, ``app_name``,
    ``meta`` (session.json as a dict; {} without one), ``start_ns`` /
    ``end_ns`` / ``last_ns`` (session timebase; end_ns 0 when it did not
    end), ``start_time`` (UTC Timestamp), ``duration_ns``, ``devices``
    (DataFrame), ``engine`` / ``engine_requested`` / ``engine_reason``,
    ``dropped`` ({reason: events lost}), ``read_files`` / ``read_why``.

    DataFrames, each built on first use: ``kernels``, ``memcpy``,
    ``memsets``, ``syncs``, ``memory``, ``scopes``, ``scope_events``,
    ``ops``, ``device_metrics``, ``host_metrics``, ``perf``, ``triggers``,
    ``trace_windows``.

    ``close()`` (or a ``with`` block) releases the trace; DataFrames
    already built stay usable, others can no longer be built.
    """

    def __init__(self, log_dir, log_prefix=None, session_id=None):
        self.path = resolve(log_dir, log_prefix, session_id)
        self._trace = Trace(self.path)
        self._frames = {}
        self._tree = None
        t = self._trace
        info = t.info
        self.session_dir = self.path if os.path.isdir(self.path) else os.path.dirname(os.path.abspath(self.path))
        self.meta = _session_json(self.session_dir) if os.path.isdir(self.path) else {}
        self.session_id = t.string(info.session_id) or self.meta.get("session_id", "")
        if session_id is not None and os.path.isfile(self.path) and self.session_id != session_id:
            t.close()
            raise FileNotFoundError(2, "the file holds session %r, not %r" % (self.session_id, session_id),
                                    self.path)
        self.app_name = t.string(info.app_name)
        self.host = t.string(info.host)
        self.pid = int(info.pid)
        self.gpufl_version = t.string(info.gpufl_version)
        self.format_version = int(info.format_version)
        self.start_ns, self.end_ns, self.last_ns = int(info.start_ns), int(info.end_ns), int(info.last_ns)
        self.start_time = pd.Timestamp(int(info.start_wall_ns), unit="ns", tz="UTC")
        self.duration_ns = (self.end_ns or self.last_ns) - self.start_ns
        self.driver_version = t.string(info.driver_version)
        self.cuda_driver_version = t.string(info.cuda_driver_version)
        self.engine = t.string(info.engine)
        self.engine_requested = t.string(info.engine_requested)
        self.engine_plugin = t.string(info.engine_plugin)
        self.engine_reason = t.string(info.engine_reason)
        reasons = _trace.enum_names(_trace.ENUM_DROP_REASON)
        self.dropped = {(reasons[i] if i < len(reasons) else "reason_%d" % i): int(v)
                        for i, v in enumerate(info.dropped) if v}
        self.lost = dict(zip(("device", "scope", "system"), (int(v) for v in info.lost)))
        self.stop_reason = t.string(info.stop_reason)
        self.stop_detail = t.string(info.stop_detail)
        self.skipped_bytes = int(info.skipped_bytes)
        self.skipped_lines = int(info.skipped_lines)
        self.skipped_chunks = int(info.skipped_chunks)
        fmt, self.read_files, self.read_why, _ = t.read()
        self.source_format = "gflt" if fmt == _trace.GFLT else "ndjson"
        self.devices = self._devices()
        self.event_counts = t.event_counts()
        self.job = t.job()
        if self.skipped_bytes or self.skipped_lines or self.skipped_chunks:
            warnings.warn("gpufl: %s: read up to its last whole line or chunk; skipped %s" % (self.path, self._skipped()),
                          stacklevel=2)

    def _skipped(self):
        parts = []
        if self.skipped_bytes:
            parts.append("%d bytes of a torn last line or chunk" % self.skipped_bytes)
        if self.skipped_lines:
            parts.append("%d lines or events of a type this reader does not know" % self.skipped_lines)
        if self.skipped_chunks:
            parts.append("%d chunks of a type this reader does not know" % self.skipped_chunks)
        return ", ".join(parts)

    def _devices(self):
        t = self._trace
        rows = []
        for d in t.devices():
            rows.append({"device": int(d.index), "name": t.string(d.name), "uuid": t.string(d.uuid),
                         "pci_bus_id": t.string(d.pci_bus_id),
                         "compute_capability": "%d.%d" % (d.cc_major, d.cc_minor) if d.cc_major >= 0 else "",
                         "sm_count": int(d.sm_count), "memory_total_bytes": int(d.memory_total_bytes),
                         "power_limit_w": d.power_limit_mw / 1000.0, "max_sm_clock_mhz": int(d.max_sm_clock_mhz),
                         "max_mem_clock_mhz": int(d.max_mem_clock_mhz), "pcie_max_gen": int(d.pcie_max_gen),
                         "pcie_max_width": int(d.pcie_max_width)})
        cols = ["device", "name", "uuid", "pci_bus_id", "compute_capability", "sm_count", "memory_total_bytes",
                "power_limit_w", "max_sm_clock_mhz", "max_mem_clock_mhz", "pcie_max_gen", "pcie_max_width"]
        return pd.DataFrame(rows, columns=cols)

    # -- life cycle --

    def close(self):
        """Releases the trace. Frames built so far stay; others can no
        longer be built (ValueError)."""
        if self._trace is not None:
            self._trace.close()
        self._tree = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "<GpuFlightSession %s (%s, %s)>" % (self.session_id, _text.dur(self.duration_ns), self.path)

    @property
    def trace(self):
        """The underlying gpufl._trace.Trace (numpy views of the C columns)."""
        if self._trace.closed:
            raise ValueError("gpufl: session %s is closed" % self.session_id)
        return self._trace

    def _frame(self, name, build):
        f = self._frames.get(name)
        if f is None:
            f = self._frames[name] = build()
        return f

    def _scope_tree(self):
        if self._tree is None:
            self._tree = _scopes.ScopeTree(self.trace)
        return self._tree

    # -- DataFrames --

    @property
    def kernels(self):
        """One row per kernel, in start order (docs/PYTHON.md, "kernels")."""
        return self._frame("kernels", lambda: _frames.kernels(self.trace, self._scope_tree))

    @property
    def memcpy(self):
        """One row per copy (kind HtoD, DtoH, DtoD, HtoH, PtoP)."""
        return self._frame("memcpy", lambda: _frames.memcpy(self.trace, self._scope_tree))

    @property
    def memsets(self):
        return self._frame("memsets", lambda: _frames.memsets(self.trace, self._scope_tree))

    @property
    def syncs(self):
        """The host waiting for the device: one row per wait."""
        return self._frame("syncs", lambda: _frames.syncs(self.trace, self._scope_tree))

    @property
    def memory(self):
        """Device memory allocations and frees, in time order."""
        return self._frame("memory", lambda: _frames.memory(self.trace, self._scope_tree))

    @property
    def allocator(self):
        """A framework allocator's states (PyTorch's, recorded by
        gpufl.memory), in time order."""
        return self._frame("allocator", lambda: _frames.allocator(self.trace, self._scope_tree))

    @property
    def triggers(self):
        """The flight recorder's triggers that fired, in time order."""
        return self._frame("triggers", lambda: _frames.triggers(self.trace))

    @property
    def trace_windows(self):
        """The stretches device tracing ran in, by begin."""
        return self._frame("trace_windows", lambda: _frames.trace_windows(self.trace))

    @property
    def scopes(self):
        """One row per gpufl scope, NVTX range and NVTX mark."""
        return self._frame("scopes", lambda: _scopes.scopes(self.trace, self._scope_tree()))

    @property
    def scope_events(self):
        """scopes in long form: one row per begin and per end, by time."""
        return self._frame("scope_events", lambda: _scopes.scope_events(self.scopes))

    @property
    def ops(self):
        """PyTorch ops from the NVTX ranges PyTorch pushes for them."""
        return self._frame("ops", lambda: _scopes.ops(self.trace, self._scope_tree()))

    @property
    def device_metrics(self):
        """GPU samples (NVML), NaN where a sample did not report a field."""
        return self._frame("device_metrics", lambda: _frames.device_metrics(self.trace))

    @property
    def host_metrics(self):
        """Host and process samples, NaN where not reported."""
        return self._frame("host_metrics", lambda: _frames.host_metrics(self.trace))

    @property
    def sass_metrics(self):
        """SASS metrics per instruction (engines sass_metrics and deep)."""
        return self._frame("sass_metrics", lambda: _frames.sass_metrics(self.trace))

    @property
    def range_metrics(self):
        """Range profiler metrics per range (a scope's or NVTX range's GPU work), engine range_profiler."""
        return self._frame("range_metrics", lambda: _frames.range_metrics(self.trace))

    @property
    def perf(self):
        """SASS metrics per kernel, long form (range-profiler metrics, per scope: range_metrics)."""
        return self._frame("perf", lambda: _frames.perf(self.trace))

    def frame(self, name, columns=None):
        """A DataFrame by its property's name, or only some of its columns:
        for ``kernels`` only the columns asked for are built (a lean frame of
        a huge session: start_ns, dur_ns, name take 17 bytes a kernel where
        all 30 columns take about 90); other frames are cut from the whole
        one. A frame with columns given is not kept."""
        if name not in _FRAMES:
            raise KeyError("no DataFrame %r; there are %s" % (name, ", ".join(_FRAMES)))
        if columns is None:
            return getattr(self, name)
        columns = list(columns)
        if name == "kernels" and "kernels" not in self._frames:
            return _frames.kernels(self.trace, self._scope_tree, columns)
        return getattr(self, name)[columns]

    # -- the text report --

    def report(self, top_n=10, fmt="text"):
        """The report `gpufl report --top top_n` prints (CPU stacks listed by
        id), as a str; fmt "json" for `--format json`'s."""
        return self.trace.report(fmt, top_n)

    # -- summaries --

    def gpu_busy(self):
        """Per device: busy_ns (the union of its kernels', copies' and
        memsets' intervals), first_ns, last_ns (its first start and last
        end), as a DataFrame."""
        parts = [self.kernels[["device", "start_ns", "end_ns"]], self.memcpy[["device", "start_ns", "end_ns"]],
                 self.memsets[["device", "start_ns", "end_ns"]]]
        work = pd.concat(parts, ignore_index=True)
        rows = []
        for dev, g in work.groupby("device", sort=True):
            busy, gaps = _union(g["start_ns"].to_numpy(), g["end_ns"].to_numpy())
            rows.append({"device": int(dev), "busy_ns": busy, "first_ns": int(g["start_ns"].min()),
                         "last_ns": int(g["end_ns"].max())})
        return pd.DataFrame(rows, columns=["device", "busy_ns", "first_ns", "last_ns"])

    def print_summary(self, top_n=5):
        """Prints what the session is, what it holds, how busy each GPU was,
        the top kernels by GPU time and what was lost. Returns the text."""
        lines = self._summary_lines(top_n)
        text = "\n".join(lines) + "\n"
        print(text, end="")
        return text

    def _summary_lines(self, top_n):
        L = ["gpufl session %s" % self.session_id]
        L.append("  read from  %s (%s: %s)" % (self.path, self.read_files, self.read_why))
        L.append("  app        %s (pid %d on %s), recorded by gpufl %s" % (self.app_name, self.pid, self.host,
                                                                         self.gpufl_version))
        ended = "ended" if self.end_ns else "did not end (read to its last event)"
        L.append("  started    %s, duration %s (%s)" % (self.start_time.strftime("%Y-%m-%d %H:%M:%S UTC"),
                                                      _text.dur(self.duration_ns), ended))
        if self.engine or self.engine_requested:
            eng = self.engine or "?"
            if self.engine_requested and self.engine_requested != self.engine:
                eng += " (asked for %s: %s)" % (self.engine_requested, self.engine_reason or "not available")
            if self.engine_plugin:
                eng += ", plugin %s" % self.engine_plugin
            L.append("  engine     %s" % eng)
        for _, d in self.devices.iterrows():
            L.append("  GPU %d      %s, %d SMs, %s, compute capability %s" % (
                d["device"], d["name"], d["sm_count"], _text.size(d["memory_total_bytes"]), d["compute_capability"]))
        c = self.event_counts
        k = self.kernels
        counts = [("kernels", c.get("kernel", 0)), ("copies", c.get("memcpy", 0)), ("memsets", c.get("memset", 0)),
                  ("syncs", c.get("sync", 0)), ("allocations", c.get("mem_alloc", 0)), ("frees", c.get("mem_free", 0)),
                  ("scopes", c.get("scope_begin", 0)), ("NVTX ranges", c.get("nvtx_range", 0)),
                  ("GPU samples", c.get("device_metrics", 0)), ("host samples", c.get("host_metrics", 0))]
        L.append("  events     " + (", ".join("%s %s" % (_text.count(n), what) for what, n in counts if n) or "none"))
        for _, b in self.gpu_busy().iterrows():
            L.append("  GPU %d busy %s (%s of the session; %s of its first-to-last work)" % (
                b["device"], _text.dur(b["busy_ns"]), _text.pct(b["busy_ns"], self.duration_ns),
                _text.pct(b["busy_ns"], b["last_ns"] - b["first_ns"])))
        if self.dropped:
            L.append("  losses     " + ", ".join("%s %s" % (r, _text.count(n)) for r, n in self.dropped.items()))
        else:
            L.append("  losses     none")
        if self.stop_reason:
            L.append("  stopped    writing stopped early: %s (%s)" % (self.stop_reason, self.stop_detail))
        if self.skipped_bytes or self.skipped_lines or self.skipped_chunks:
            L.append("  skipped    " + self._skipped())
        if len(k):
            top = _kernel_totals(k).head(top_n)
            total = int(k["dur_ns"].sum())
            L.append("")
            L.append("Top kernels by GPU time (%s launches, %s)" % (_text.count(len(k)), _text.dur(total)))
            rows = [[_text.cut(n), _text.count(r["launches"]), _text.dur(r["total_ns"]), _text.pct(r["total_ns"], total),
                     _text.dur(r["mean_ns"]), _text.dur(r["max_ns"])] for n, r in top.iterrows()]
            L += _text.table(["kernel", "launches", "total", "share", "mean", "max"], rows)
        return L

    def inspect_scopes(self):
        """Per gpufl scope path and NVTX path ("step/forward"): count, wall
        time (total, mean, p95, max) and the device work launched inside it
        on its thread, nested paths included: gpu_ops (kernels, copies,
        memsets) and their GPU time, as in the Scopes section of `gpufl
        report`. Prints it as a tree (children under their parent, longest
        first); returns it as a DataFrame in that order (times in ns)."""
        s = self.scopes
        s = s[s["kind"] != "nvtx_mark"]
        cols = ["kind", "path", "count", "total_ns", "mean_ns", "p95_ns", "max_ns", "gpu_ops", "gpu_ns"]
        if s.empty:
            print("Scopes: none recorded (gpufl.Scope / gpufl_scope_begin, or NVTX ranges under the Trace engine)")
            return pd.DataFrame(columns=cols)
        g = s.groupby(["kind", "path"], observed=True, sort=False)
        out = pd.DataFrame({
            "count": g.size(),
            "total_ns": g["dur_ns"].sum(),
            "mean_ns": g["dur_ns"].mean(),
            "p95_ns": g["dur_ns"].quantile(0.95),
            "max_ns": g["dur_ns"].max(),
            "gpu_ops": g["gpu_ops"].sum(),
            "gpu_ns": g["gpu_ns"].sum(),
        }).reset_index()
        out["path"] = out["path"].astype(str)
        out = out.iloc[_tree_order(out)].reset_index(drop=True)[cols]
        lines = ["Scopes (wall time of each path; GPU work launched inside it on its thread, nested paths included)"]
        for kind, title in (("scope", "gpufl scopes"), ("nvtx", "NVTX ranges")):
            part = out[out["kind"] == kind]
            if part.empty:
                continue
            lines.append("  %s:" % title)
            rows = [["  " * r.path.count("/") + _text.cut(r.path.rsplit("/", 1)[-1], 50), _text.count(r.count),
                     _text.dur(r.total_ns), _text.dur(r.mean_ns), _text.dur(r.p95_ns), _text.dur(r.max_ns),
                     _text.count(r.gpu_ops), _text.dur(r.gpu_ns)] for r in part.itertuples()]
            lines += _text.table(["path", "count", "total", "mean", "p95", "max", "GPU ops", "GPU time"], rows,
                                 indent="    ")
        print("\n".join(lines))
        return out

    def inspect_hotspots(self, top_n=5, max_stack_depth=5):
        """The top_n kernels by GPU time: launches, share, duration
        percentiles, their most used launch configuration, where they were
        launched from (NVTX path, scope path) and the ids of their up to
        max_stack_depth most used CPU stacks. The frames of a stack come
        from `gpufl stacks SESSION`: libgpufl has no reader of stack frames
        (they are named with libdw, which only the command loads). Prints
        it; returns one row per kernel (times in ns)."""
        k = self.kernels
        cols = ["name", "launches", "total_ns", "share", "mean_ns", "p50_ns", "p95_ns", "min_ns", "max_ns",
                "grid", "block", "registers", "occupancy", "limiter", "top_nvtx", "top_scope", "top_stacks"]
        if k.empty:
            print("Hotspots: no kernels in this session (the Trace engine records them: "
                  "gpufl run --engine trace, or gpufl.init(profiling_engine='trace'))")
            return pd.DataFrame(columns=cols)
        totals = _kernel_totals(k)
        total = int(k["dur_ns"].sum())
        top = totals.head(top_n)
        rows = []
        lines = ["Hotspots: top %d of %s kernels by GPU time (%s launches, %s)" % (
            len(top), _text.count(len(totals)), _text.count(len(k)), _text.dur(total))]
        for rank, (name, t) in enumerate(top.iterrows(), 1):
            mine = k[k["name"] == name]
            d = mine["dur_ns"]
            cfg = mine.groupby(["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers"],
                               observed=True).size().sort_values(ascending=False)
            (gx, gy, gz, bx, by, bz, regs), ncfg = cfg.index[0], int(cfg.iloc[0])
            first = mine[(mine["grid_x"] == gx) & (mine["grid_y"] == gy) & (mine["grid_z"] == gz)
                         & (mine["block_x"] == bx) & (mine["block_y"] == by) & (mine["block_z"] == bz)].iloc[0]
            nvtx = self._nvtx_paths(mine, d)
            scope = _top_share(mine, "scope_path", d)
            stacks = mine[mine["stack_id"] != 0].groupby("stack_id").size().sort_values(ascending=False)
            row = {"name": name, "launches": int(t["launches"]), "total_ns": int(t["total_ns"]),
                   "share": t["total_ns"] / total, "mean_ns": float(t["mean_ns"]),
                   "p50_ns": float(d.quantile(0.5)), "p95_ns": float(d.quantile(0.95)), "min_ns": int(d.min()),
                   "max_ns": int(d.max()), "grid": (int(gx), int(gy), int(gz)), "block": (int(bx), int(by), int(bz)),
                   "registers": int(regs), "occupancy": float(first["occupancy"]),
                   "limiter": first["limiter"] if isinstance(first["limiter"], str) else None,
                   "top_nvtx": nvtx[0][0] if nvtx else None, "top_scope": scope[0][0] if scope else None,
                   "top_stacks": [int(s) for s in stacks.index[:max_stack_depth]]}
            rows.append(row)
            lines.append("")
            lines.append("  %d. %s" % (rank, name))
            lines.append("     %s of kernel time: %s in %s launches" % (
                _text.pct(row["total_ns"], total), _text.dur(row["total_ns"]), _text.count(row["launches"])))
            lines.append("     time    mean %s, p50 %s, p95 %s, min %s, max %s" % (
                _text.dur(row["mean_ns"]), _text.dur(row["p50_ns"]), _text.dur(row["p95_ns"]),
                _text.dur(row["min_ns"]), _text.dur(row["max_ns"])))
            occ = "" if np.isnan(row["occupancy"]) else ", occupancy %.1f %%" % (100 * row["occupancy"])
            if row["limiter"]:
                occ += " (limited by %s)" % row["limiter"].replace("_", " ")
            lines.append("     config  grid %s block %s, %d registers/thread%s; %s of %s launches, %d configuration%s"
                         % (row["grid"], row["block"], regs, occ, _text.count(ncfg), _text.count(row["launches"]),
                            len(cfg), "" if len(cfg) == 1 else "s"))
            for label, shares in (("NVTX", nvtx), ("scope", scope)):
                if shares:
                    lines.append("     %-7s %s" % (label, "; ".join("%s %s" % (_text.cut(n, 40), _text.pct(v, 1))
                                                                   for n, v in shares[:3])))
            if len(stacks):
                lines.append("     stacks  %d distinct; most launches: %s (frames: gpufl stacks %s)" % (
                    len(stacks), ", ".join("stack %d (%s)" % (s, _text.count(n))
                                           for s, n in stacks.iloc[:max_stack_depth].items()), self.path))
        print("\n".join(lines))
        return pd.DataFrame(rows, columns=cols)

    def _nvtx_paths(self, rows, dur):
        """[(NVTX path, share of dur)] of kernels: the innermost NVTX range
        open on the launching thread at each launch, as a path."""
        api = rows["api_start_ns"].fillna(0).to_numpy(np.int64)
        if not (rows["nvtx"].notna().any() and (api > 0).any()):
            return _top_share(rows, "nvtx", dur)
        tree = self._scope_tree()
        at = _scopes.innermost(tree, "nvtx", rows["tid"].to_numpy(), api)
        path_codes, path_texts = tree.part("nvtx")[4:6]
        codes = np.where(at >= 0, path_codes[np.maximum(at, 0)], -1)
        key = _frames.categorical(codes, path_texts)
        return _top_share(pd.DataFrame({"nvtx_path": key}, index=rows.index), "nvtx_path", dur)

    def inspect_stalls(self):
        """Where the GPU waited: per device and stream, the time between its
        first and last work that nothing ran (kernels, copies and memsets;
        gaps of the union of their intervals), the number of gaps and the
        longest; and the host's waits on the device (syncs) by kind.
        Warp-level stall reasons need PC sampling (see
        inspect_profile_samples). Prints it; returns the per-stream
        DataFrame (times in ns)."""
        parts = [self.kernels[["device", "stream", "start_ns", "end_ns"]],
                 self.memcpy[["device", "stream", "start_ns", "end_ns"]],
                 self.memsets[["device", "stream", "start_ns", "end_ns"]]]
        work = pd.concat(parts, ignore_index=True)
        cols = ["device", "stream", "work", "span_ns", "busy_ns", "idle_ns", "idle_share", "gaps", "longest_gap_ns",
                "longest_gap_at_ns"]
        lines = ["Stalls: time the GPU had no work, between its first and last (kernels, copies, memsets)"]
        rows = []
        for keys, g in list(work.groupby("device", sort=True)) + list(work.groupby(["device", "stream"], sort=True)):
            keys = keys if isinstance(keys, tuple) else (keys,)
            start, end = g["start_ns"].to_numpy(), g["end_ns"].to_numpy()
            busy, gaps = _union(start, end)
            span = int(end.max() - start.min())
            longest = int(np.argmax(gaps[1])) if len(gaps[1]) else -1
            rows.append({"device": int(keys[0]), "stream": int(keys[1]) if len(keys) > 1 else None, "work": len(g),
                         "span_ns": span, "busy_ns": busy, "idle_ns": span - busy,
                         "idle_share": (span - busy) / span if span else 0.0, "gaps": len(gaps[1]),
                         "longest_gap_ns": int(gaps[1][longest]) if longest >= 0 else 0,
                         "longest_gap_at_ns": int(gaps[0][longest]) if longest >= 0 else None})
        out = pd.DataFrame(rows, columns=cols)
        if out.empty:
            lines.append("  no device work in this session")
        else:
            table = [["GPU %d" % r.device if pd.isna(r.stream) else "  stream %d" % r.stream, _text.count(r.work),
                      _text.dur(r.span_ns), _text.dur(r.busy_ns), _text.dur(r.idle_ns),
                      _text.pct(r.idle_ns, r.span_ns), _text.count(r.gaps), _text.dur(r.longest_gap_ns),
                      "-" if pd.isna(r.longest_gap_at_ns) else "+" + _text.dur(r.longest_gap_at_ns - self.start_ns)]
                     for r in out.sort_values(["device", "stream"], na_position="first").itertuples()]
            lines += _text.table(["", "work", "span", "busy", "idle", "idle %", "gaps", "longest gap", "at"], table)
        y = self.syncs
        if len(y):
            lines.append("Host waiting for the device (syncs):")
            g = y.groupby("kind", observed=True)["dur_ns"].agg(["size", "sum", "max"])
            lines += _text.table(["kind", "waits", "total", "longest"],
                                 [[str(kd), _text.count(r["size"]), _text.dur(r["sum"]), _text.dur(r["max"])]
                                  for kd, r in g.iterrows()])
        samples = _frames.pc_samples(self.trace)
        if len(samples):
            by = samples.groupby("stall_reason", observed=True)["samples"].sum().sort_values(ascending=False)
            total = int(by.sum())
            lines.append("Warp stall reasons (%s samples): %s" % (_text.count(total), ", ".join(
                "%s %s" % (r, _text.pct(int(n), total)) for r, n in by.head(5).items())))
        else:
            lines.append("Warp stall reasons: none in this session. " + _PC_SAMPLING_NOTE + ".")
        print("\n".join(lines))
        return out

    def _recorded_by(self):
        if not self.engine:
            return "this session does not say which engine recorded it (an older gpufl wrote it)"
        text = "this session was recorded by the %s engine" % self.engine
        if self.engine_requested and self.engine_requested != self.engine:
            text += ", asked for %s" % self.engine_requested
        return text

    def inspect_profile_samples(self):
        """PC samples (warp stall reasons by instruction): prints the session's
        stall reasons and hottest kernels, or which engine would record them,
        and returns the samples' DataFrame (one row per collection, PC and
        reason; typed and empty when there are none)."""
        samples = _frames.pc_samples(self.trace)
        if not len(samples):
            print("Profile samples: none in this session. %s; %s." % (_PC_SAMPLING_NOTE, self._recorded_by()))
            return samples
        total = int(samples["samples"].sum())
        lines = ["Profile samples: %s warp samples" % _text.count(total)]
        by_kernel = samples.groupby("kernel", observed=True)["samples"].sum().sort_values(ascending=False)
        for k, n in by_kernel.head(10).items():
            mine = samples[samples["kernel"] == k]
            stalls = mine[mine["stall_reason"] != "selected"].groupby("stall_reason", observed=True)["samples"]
            top = stalls.sum().sort_values(ascending=False).head(3)
            lines.append("  %s  %s  %s" % (_text.count(int(n)), str(k)[:60], ", ".join(
                "%s %s" % (r, _text.pct(int(v), int(n))) for r, v in top.items())))
        print("\n".join(lines))
        return samples

    def inspect_perf_metrics(self):
        """SASS metrics per kernel (coalescing: global sectors needed of
        those touched; active lanes of 32), or which engine would record
        them. Returns the ``perf`` DataFrame."""
        perf = self.perf
        if perf.empty:
            print("Performance metrics: none in this session. %s; %s." % (_PERF_NOTE, self._recorded_by()))
            return perf
        wide = perf.pivot_table(index="kernel", columns="metric", values="value", aggfunc="sum", observed=True)
        wide = wide.sort_values("inst_executed", ascending=False)
        lines = ["SASS metrics (%d kernels, counts of all their launches):" % len(wide)]
        for k, r in wide.head(10).iterrows():
            coal = r.get("sectors_ideal", np.nan) / r["sectors"] if r.get("sectors", 0) else np.nan
            active = r.get("thread_inst_executed", np.nan) / (32 * r["inst_executed"]) if r["inst_executed"] else np.nan
            lines.append("  %s  %s warp inst  coalescing %s  active lanes %s" % (
                str(k)[:60], _text.count(int(r["inst_executed"])),
                "n/a" if np.isnan(coal) else "%.1f %%" % (100 * min(coal, 1.0)),
                "n/a" if np.isnan(active) else "%.1f %%" % (100 * active)))
        print("\n".join(lines))
        return perf


# ---- helpers ------------------------------------------------------------------------

_FRAMES = ("kernels", "memcpy", "memsets", "syncs", "memory", "allocator", "scopes", "scope_events", "ops",
           "device_metrics", "host_metrics", "perf", "range_metrics", "triggers", "trace_windows")



def _union(start, end):
    """Busy time of intervals (the length of their union) and the gaps
    between them as (gap starts, gap lengths)."""
    if len(start) == 0:
        return 0, (np.zeros(0, np.int64), np.zeros(0, np.int64))
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    gap = s[1:] > reach[:-1]
    gap_start = reach[:-1][gap]
    gap_len = s[1:][gap] - gap_start
    busy = int(reach[-1] - s[0]) - int(gap_len.sum())
    return busy, (gap_start, gap_len)


def _tree_order(paths):
    """Row order of a per-path table as a tree: each path after its parent,
    siblings by total time, longest first; per kind."""
    total = dict(zip(zip(paths["kind"].astype(str), paths["path"]), paths["total_ns"]))
    kinds = {"scope": 0, "nvtx": 1}

    def key(i):
        kind, path = str(paths["kind"].iloc[i]), paths["path"].iloc[i]
        parts = path.split("/")
        prefixes = ["/".join(parts[:j + 1]) for j in range(len(parts))]
        return (kinds.get(kind, 2), [(-total.get((kind, p), 0), p) for p in prefixes])

    return sorted(range(len(paths)), key=key)


def _kernel_totals(k):
    g = k.groupby("name", observed=True)["dur_ns"]
    t = pd.DataFrame({"launches": g.size(), "total_ns": g.sum(), "mean_ns": g.mean(), "max_ns": g.max()})
    return t.sort_values("total_ns", ascending=False, kind="stable")


def _top_share(rows, column, dur):
    """[(value, share of the GPU time)] of a categorical column, largest
    first; NaN is "(outside any)"."""
    total = dur.sum()
    if not total:
        return []
    key = rows[column].astype(object).where(rows[column].notna(), "(outside any)")
    s = dur.groupby(key).sum().sort_values(ascending=False)
    return [(str(n), v / total) for n, v in s.items()]
