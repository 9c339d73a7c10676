"""The pandas DataFrames of a session's device work and samples, built from
a Trace's columns, and the helpers every frame uses (_scopes.py builds the
frames of scopes, NVTX ranges and PyTorch ops with them).

One function per frame; each takes a Trace (gpufl/_trace.py) and returns a
DataFrame. The analyzer (gpufl/analyzer.py) builds each the first time it
is asked for and keeps it. Every column is documented with its unit in
docs/PYTHON.md. What makes a ten-million-event session load in about a
second on top of the C reader (bench/RESULTS.md):

* No Python loop over rows. Device work rows refer to small tables of
  distinct launch configurations, streams and callers; their fields are
  gathered with np.take, and every string-valued column is a categorical
  whose categories come from looking each distinct string id up once (in
  the small table, not per row).
* No copy that is not needed. Columns the trace holds per row as they are
  wanted (start_ns, correlation, graph_id, bytes ...) are the trace's
  read-only numpy views; a column constant over the session (one device,
  one context, no stacks) is a zero-stride view that costs nothing; the
  DataFrame takes the arrays without consolidating them into blocks.
* Small dtypes: ids keep the reader's widths (uint16 device, uint32
  stream, ...), categorical codes are as narrow as the number of names
  allows; times are int64 ns of the session timebase (CLOCK_MONOTONIC of
  the recording machine).
* The large fills run a chunk of rows at a time on one thread per CPU
  (numpy releases the GIL; most of the time is the kernel mapping the fresh
  pages written).
* Times that did not fit the reader's 32-bit offsets (work longer than
  4.29 s) are patched from the table's ``exact`` rows, vectorized.

Missing values: a categorical is NaN where the trace has no string (no NVTX
range, no scope); API times are <NA> (nullable Int64) for work without a
known API call; metric samples are NaN where the sample did not report the
field (its ``valid`` bit is clear). Ids keep 0 for "none", as in the trace.
"""

import concurrent.futures
import os

import numpy as np
import pandas as pd

from . import _trace

# ---- helpers --------------------------------------------------------------------


def frame(columns, index=None):
    """A DataFrame of columns (name -> array) without consolidating them."""
    n = len(next(iter(columns.values()))) if columns else 0
    return pd.DataFrame(columns, index=index if index is not None else pd.RangeIndex(n), copy=False)


def categorical(codes, categories):
    """A Categorical of int codes (-1 = NaN) and unique categories, the codes
    in the narrowest integer type that holds them."""
    dtype = pd.CategoricalDtype(categories=pd.Index(categories, dtype=object), ordered=False)
    return pd.Categorical.from_codes(narrow_codes(np.asarray(codes), len(categories)), dtype=dtype)


def code_dtype(ncategories):
    """The type pandas uses for the codes of that many categories."""
    return np.int8 if ncategories < 127 else np.int16 if ncategories < 32767 else np.int32


def narrow_codes(codes, ncategories):
    """Categorical codes in the type pandas uses for that many categories."""
    return codes.astype(code_dtype(ncategories), copy=False)


def constant(value, n):
    """n copies of value that cost no memory: a read-only zero-stride view."""
    return np.broadcast_to(np.asarray(value), (n,))


CHUNK = 1 << 20
_pool = None


def by_rows(n, fill):
    """Calls fill(lo, hi) for chunks of CHUNK rows of [0, n), on one thread
    per CPU. numpy releases the GIL in the copies and arithmetic the fills
    do, and most of a large frame's build is the kernel mapping the fresh
    pages it writes, which threads do side by side."""
    global _pool
    spans = [(lo, min(n, lo + CHUNK)) for lo in range(0, n, CHUNK)]
    if len(spans) <= 1 or (os.cpu_count() or 1) == 1:
        for lo, hi in spans:
            fill(lo, hi)
        return
    if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1), "gpufl-frames")
    for f in [_pool.submit(fill, lo, hi) for lo, hi in spans]:
        f.result()


def gather(small, rows):
    """small[rows] for columns of a small table (launch configurations,
    streams, callers) and the row numbers of a big one: one array per
    column. A column whose values are all equal comes back as a read-only
    zero-stride array (it costs nothing, as the C reader's never-recorded
    columns do); the others are gathered a chunk of rows at a time (so the
    row numbers are widened to intp a chunk at a time), in parallel."""
    n = len(rows)
    outs, todo = [], []
    for col in small:
        if n and len(col) and (col == col[0]).all():
            outs.append(constant(col[0], n))
        else:
            out = np.empty(n, col.dtype)
            outs.append(out)
            todo.append((col, out))

    def fill(lo, hi):
        r = rows[lo:hi].astype(np.intp)
        for col, out in todo:
            np.take(col, r, out=out[lo:hi], mode="clip")

    if todo:
        by_rows(n, fill)
    return outs


def names(trace, ids, rows=None):
    """A categorical of string ids (0 -> NaN), optionally gathered at rows of
    a small table: ids are looked up once per distinct id."""
    codes, texts = trace.strings(ids)
    codes = narrow_codes(codes, len(texts))
    if rows is not None:
        codes = gather([codes], rows)[0]
    return categorical(codes, texts)


def enum_column(values, family, unknown_is_na=True):
    """A categorical of an enum column, named by gpufl_trace_enum_name()."""
    labels = list(_trace.enum_names(family))
    codes = values.astype(np.int16)
    codes = np.where(codes < len(labels), codes, 0)
    if unknown_is_na:
        codes = codes - 1  # value 0 is "unknown": NaN
        labels = labels[1:]
    return categorical(codes, labels)


def nullable_int(values, mask):
    """Int64 with <NA> where mask is true."""
    return pd.arrays.IntegerArray(np.asarray(values, dtype=np.int64), np.asarray(mask, dtype=bool))


def with_na(values, valid, dtype):
    """values as dtype (a float type) with NaN where valid is false."""
    out = values.astype(dtype)
    out[~valid] = np.nan
    return out


def merged_categorical(parts):
    """One categorical of several (codes, texts) parts, one after the other."""
    index, codes = {}, []
    for c, texts in parts:
        remap = np.array([index.setdefault(t, len(index)) for t in texts] + [-1], np.int64)
        codes.append(remap[np.where(c >= 0, c, len(texts))])
    return categorical(np.concatenate(codes) if codes else np.zeros(0, np.int64), list(index))


def empty(spec):
    """An empty DataFrame with typed columns: spec is [(name, dtype)]."""
    return pd.DataFrame({name: pd.Series([], dtype=dt) for name, dt in spec})


# ---- attribution of device work ---------------------------------------------------------


def _gathered(specs, rows, want):
    """Columns from a small table: specs is [(name, small array maker,
    wrap)], the maker called only for a wanted column and wrap (or None)
    turning the gathered array into the column."""
    chosen = [(name, make, wrap) for name, make, wrap in specs if want is None or name in want]
    got = gather([make() for _, make, _ in chosen], rows)
    return {name: (wrap(g) if wrap else g) for (name, _, wrap), g in zip(chosen, got)}


def _attribution(trace, table, tree_fn, stack=True, external=True, want=None):
    """Columns of device work from its stream and caller rows: device,
    context, stream; tid, scope (id), scope_name, scope_path, nvtx,
    external_id, stack_id (those in want, or all)."""
    c = table.callers
    cols = {}
    if hasattr(table, "stream_row"):  # the allocator's rows have a device but no stream
        s = table.streams
        cols = _gathered([("device", lambda: s.device, None), ("context", lambda: s.context, None),
                          ("stream", lambda: s.stream, None)], table.stream_row, want)
    texts = {}

    def string_codes(ids, key):
        codes, texts[key] = trace.strings(ids)
        return narrow_codes(codes, len(texts[key]))

    def scope_codes(which):
        if not (c.n and c.scope.any()):
            texts[which] = []
            return np.full(c.n, -1, np.int8)
        tree = tree_fn()
        part = tree.part("scopes")
        codes, texts[which] = (part[2], part[3]) if which == "scope_name" else (part[4], part[5])
        rows = tree.scope_rows(c.scope)
        return narrow_codes(np.where(rows >= 0, codes[np.maximum(rows, 0)], -1), len(texts[which]))

    specs = [("tid", lambda: c.tid, None), ("scope", lambda: c.scope, None),
             ("scope_name", lambda: scope_codes("scope_name"), lambda g: categorical(g, texts["scope_name"])),
             ("scope_path", lambda: scope_codes("scope_path"), lambda g: categorical(g, texts["scope_path"])),
             ("nvtx", lambda: string_codes(c.nvtx, "nvtx"), lambda g: categorical(g, texts["nvtx"]))]
    if external:
        specs.append(("external_id", lambda: c.external_id, None))
    if stack:
        specs.append(("stack_id", lambda: c.stack, None))
    cols.update(_gathered(specs, table.caller_row, want))
    if want is None or want & set(OP_COLUMNS):
        cols.update(_ops(table, tree_fn, want))
    return cols


OP_COLUMNS = ["op", "forward_op", "module"]


def _ops(table, tree_fn, want):
    """op, forward_op, module: the PyTorch op each row of device work (or
    allocation) was launched in, by its launching thread and API call start
    (the allocation's time): categoricals, all <NA> without op ranges. Built
    a chunk of rows at a time, so no per-row temporary wider than the codes."""
    from . import _scopes  # _scopes builds on this module's helpers

    n = table.n
    seg = _scopes.op_segments(tree_fn()) if n else None
    names = [c for c in OP_COLUMNS if want is None or c in want]
    if seg is None:
        return {c: pd.Categorical.from_codes(constant(np.int8(-1), n), dtype=pd.CategoricalDtype([])) for c in names}
    c = table.callers
    tids = np.unique(c.tid)
    caller_thread = narrow_codes(np.searchsorted(tids, c.tid), len(tids))
    outs = [np.empty(n, code_dtype(len(texts))) for texts in seg.texts]
    api = hasattr(table, "api_lead_ns")
    times = None if api else table.ts_ns if hasattr(table, "ts_ns") else table.start_ns  # allocations, syncs

    def fill(lo, hi):
        tid = tids[caller_thread[table.caller_row[lo:hi]]]
        ts = _scopes.launch_starts(table, lo, hi) if api else times[lo:hi].view(np.int64)
        seg.fill(tid, ts, [o[lo:hi] for o in outs])

    by_rows(n, fill)
    cols = {}
    for i, name in enumerate(OP_COLUMNS):
        if name in names:
            cols[name] = categorical(outs[i], seg.texts[i]).remove_unused_categories()
    return cols


def _times(table, cols, api=True):
    """start_ns (a view of the trace's column), end_ns, dur_ns and, with
    api, api_start_ns and api_end_ns (<NA> without an API call), with the
    rows that did not fit the 32-bit offsets patched from ``exact``."""
    n = table.n
    start = table.start_ns.view(np.int64)
    dur, end = np.empty(n, np.int64), np.empty(n, np.int64)
    if api:
        lead, apid = table.api_lead_ns, table.api_dur_ns
        api_start, api_end, none = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, bool)

    def fill(lo, hi):
        s = start[lo:hi]
        dur[lo:hi] = table.dur_ns[lo:hi]
        np.add(s, dur[lo:hi], out=end[lo:hi])
        if api:
            np.subtract(s, lead[lo:hi], out=api_start[lo:hi])
            np.add(api_start[lo:hi], apid[lo:hi], out=api_end[lo:hi])
            np.equal(lead[lo:hi], 0, out=none[lo:hi])

    by_rows(n, fill)
    ex = table.exact
    rows = ex["row"].astype(np.intp) if len(ex) else None
    if rows is not None:
        bad = table.dur_ns[rows] == _trace.EXACT
        end[rows[bad]] = ex["end_ns"][bad].view(np.int64)
        dur[rows[bad]] = end[rows[bad]] - start[rows[bad]]
    cols["start_ns"] = start
    cols["end_ns"] = end
    cols["dur_ns"] = dur
    if not api:
        return
    if rows is not None:
        lead_r, apid_r = lead[rows], apid[rows]
        bad = lead_r == _trace.EXACT
        api_start[rows[bad]] = ex["api_start_ns"][bad].view(np.int64)
        bad = (lead_r != 0) & ((lead_r == _trace.EXACT) | (apid_r == _trace.EXACT))
        api_end[rows[bad]] = ex["api_end_ns"][bad].view(np.int64)
    # one mask for both columns: they are <NA> together
    cols["api_start_ns"] = pd.arrays.IntegerArray(api_start, none)
    cols["api_end_ns"] = pd.arrays.IntegerArray(api_end, none)


def _order(cols, first):
    """cols with the names in first at the front, in that order."""
    out = {k: cols[k] for k in first if k in cols}
    out.update((k, v) for k, v in cols.items() if k not in out)
    return out


KERNEL_COLUMNS = [
    "start_ns", "end_ns", "dur_ns", "name", "device", "stream", "context", "correlation", "grid_x", "grid_y",
    "grid_z", "block_x", "block_y", "block_z", "registers", "static_smem", "dynamic_smem", "local_mem",
    "occupancy", "limiter", "tid", "scope", "scope_name", "scope_path", "nvtx", "op", "forward_op", "module",
    "external_id", "stack_id", "graph_id", "api_start_ns", "api_end_ns"
]


def kernels(trace, tree_fn, columns=None):
    """The kernels frame; columns (some of KERNEL_COLUMNS, in the order
    wanted) builds only those."""
    want = None if columns is None else set(columns)
    if want is not None and not want <= set(KERNEL_COLUMNS):
        raise KeyError("not columns of kernels: %s" % ", ".join(sorted(want - set(KERNEL_COLUMNS))))
    k = trace.table("kernels")
    g = k.configs
    cols = {}
    if want is None or want & {"end_ns", "dur_ns", "api_start_ns", "api_end_ns"}:
        _times(k, cols, api=want is None or bool(want & {"api_start_ns", "api_end_ns"}))
    cols["start_ns"] = k.start_ns.view(np.int64)
    texts = {}

    def name_codes():
        codes, texts["name"] = trace.strings(g.name)
        return narrow_codes(codes, len(texts["name"]))

    def occupancy():
        occ = g.occupancy_x10000.astype(np.float32) / np.float32(10000)
        occ[g.occupancy_x10000 == 0] = np.nan
        return occ

    limiter = enum_column(g.limiter, _trace.ENUM_LIMITER)
    specs = [("name", name_codes, lambda a: categorical(a, texts["name"]))]
    specs += [("grid_" + axis, lambda i=i: np.ascontiguousarray(g.grid[:, i]), None) for i, axis in enumerate("xyz")]
    specs += [("block_" + axis, lambda i=i: np.ascontiguousarray(g.block[:, i]), None)
              for i, axis in enumerate("xyz")]
    specs += [("registers", lambda: g.registers, None), ("static_smem", lambda: g.static_smem, None),
              ("dynamic_smem", lambda: g.dynamic_smem, None), ("local_mem", lambda: g.local_mem, None),
              ("occupancy", occupancy, None),
              ("limiter", lambda: limiter.codes, lambda a: pd.Categorical.from_codes(a, dtype=limiter.dtype))]
    cols.update(_gathered(specs, k.config_row, want))
    cols["correlation"] = k.correlation
    cols.update(_attribution(trace, k, tree_fn, want=want))
    cols["graph_id"] = k.graph_id
    return frame({c: cols[c] for c in (KERNEL_COLUMNS if columns is None else columns)})


def memcpy(trace, tree_fn):
    x = trace.table("copies")
    cols = {}
    _times(x, cols)
    cols["kind"] = enum_column(x.kind, _trace.ENUM_COPY_KIND)
    cols["bytes"] = x.bytes
    dur = cols["dur_ns"]
    with np.errstate(divide="ignore", invalid="ignore"):
        bw = np.where(dur > 0, x.bytes / np.maximum(dur, 1), np.nan)
    cols["bandwidth_gbps"] = bw.astype(np.float32)  # bytes per ns = GB/s
    cols["src_kind"] = enum_column(x.src_kind, _trace.ENUM_MEM_KIND)
    cols["dst_kind"] = enum_column(x.dst_kind, _trace.ENUM_MEM_KIND)
    cols["correlation"] = x.correlation
    cols.update(_attribution(trace, x, tree_fn))
    cols["dst_device"] = x.dst_device
    cols["graph_id"] = x.graph_id
    return frame(_order(cols, ["start_ns", "end_ns", "dur_ns", "kind", "bytes", "bandwidth_gbps", "src_kind",
                               "dst_kind", "device", "dst_device", "stream", "context", "correlation"]))


def memsets(trace, tree_fn):
    x = trace.table("memsets")
    cols = {}
    _times(x, cols)
    cols["bytes"] = x.bytes
    cols["value"] = x.value.astype(np.uint8)
    cols["mem_kind"] = enum_column(x.dst_kind, _trace.ENUM_MEM_KIND)
    cols["correlation"] = x.correlation
    cols.update(_attribution(trace, x, tree_fn))
    cols["graph_id"] = x.graph_id
    return frame(_order(cols, ["start_ns", "end_ns", "dur_ns", "bytes", "value", "mem_kind", "device", "stream",
                               "context", "correlation"]))


def syncs(trace, tree_fn):
    y = trace.table("syncs")
    cols = {}
    _times(y, cols, api=False)
    cols["kind"] = enum_column(y.kind, _trace.ENUM_SYNC_KIND)
    cols["cuda_event"] = y.cuda_event
    cols["correlation"] = y.correlation
    cols.update(_attribution(trace, y, tree_fn, external=False))
    return frame(_order(cols, ["start_ns", "end_ns", "dur_ns", "kind", "device", "stream", "context",
                               "correlation"]))


def memory(trace, tree_fn):
    m = trace.table("memory")
    cols = {"ts_ns": m.ts_ns.view(np.int64)}
    cols["event"] = categorical(m.is_free.astype(np.int8), ["alloc", "free"])
    cols["address"] = m.address
    cols["bytes"] = m.bytes
    cols["kind"] = enum_column(m.kind, _trace.ENUM_MEM_KIND)
    cols["correlation"] = m.correlation
    cols["failed"] = m.failed != 0
    cols["framework"] = m.framework != 0
    cols.update(_attribution(trace, m, tree_fn, external=True))
    # what the session's allocations hold on each device after each row, per
    # layer: a framework's blocks lie inside the driver allocations it made,
    # so the two are summed apart; a failed allocation (out of memory)
    # allocated nothing
    held = np.where(m.failed != 0, 0, m.bytes.astype(np.int64))
    signed = np.where(m.is_free != 0, -m.bytes.astype(np.int64), held)
    live = np.zeros(m.n, np.int64)
    for d in np.unique(cols["device"]).tolist():
        for layer in (False, True):
            mine = (cols["device"] == d) & (cols["framework"] == layer)
            live[mine] = np.cumsum(signed[mine])
    cols["live_bytes"] = live
    return frame(_order(cols, ["ts_ns", "event", "address", "bytes", "kind", "device", "stream", "context",
                               "correlation", "failed", "framework"]))


ALLOCATOR_FIGURES = ["allocated", "reserved", "active", "inactive_split", "largest_free", "peak_allocated",
                     "peak_reserved", "requested", "device_free", "alloc_retries", "ooms"]


def allocator(trace, tree_fn):
    """A framework allocator's states (gpufl_record_allocator), in time
    order: the figures as recorded (bytes; 0 unknown for largest_free,
    peak_*, requested, device_free) with the thread and innermost scope of
    the call that recorded them."""
    try:
        a = trace.table("allocator")
    except KeyError:  # a libgpufl older than framework memory: none recorded
        return empty([("ts_ns", np.int64), ("device", np.uint16), ("framework", pd.CategoricalDtype([])),
                      ("reason", pd.CategoricalDtype([]))] + [(f, np.uint64) for f in ALLOCATOR_FIGURES])
    cols = {"ts_ns": a.ts_ns.view(np.int64), "device": a.device, "framework": _texts(trace, a.framework),
            "reason": _texts(trace, a.reason)}
    for f in ALLOCATOR_FIGURES:
        cols[f] = getattr(a, f)
    cols.update(_attribution(trace, a, tree_fn, stack=False, external=False,
                             want={"tid", "scope", "scope_name", "scope_path"}))
    return frame(cols)


def _texts(trace, ids):
    """A categorical of string ids' texts (id 0: NaN)."""
    codes, texts = trace.strings(ids)
    return categorical(codes, texts)


def triggers(trace):
    g = trace.table("triggers")
    cols = {"ts_ns": g.ts_ns.view(np.int64), "kind": _texts(trace, g.kind),
            "outcome": enum_column(g.outcome, _trace.ENUM_TRIGGER_OUTCOME, unknown_is_na=False),
            "detail": _texts(trace, g.detail), "dump": _texts(trace, g.dump), "tid": g.tid}
    return frame(cols)


def trace_windows(trace):
    w = trace.table("trace_windows")
    begin = w.begin_ns.view(np.int64)
    end = np.maximum(w.end_ns.view(np.int64), begin)  # as every output: never before its begin
    cols = {"index": w.index, "begin_ns": begin, "end_ns": end, "dur_ns": end - begin,
            "reason": _texts(trace, w.reason), "detail": _texts(trace, w.detail), "unended": w.unended != 0}
    return frame(cols)


DEVICE_METRICS = [
    # column, trace column, valid bit, dtype, scale
    ("gpu_util_pct", "gpu_util_pct", 1, np.float64, 1),
    ("mem_util_pct", "mem_util_pct", 2, np.float64, 1),
    ("mem_used_bytes", "mem_used_bytes", 4, np.float64, 1),
    ("mem_free_bytes", "mem_free_bytes", 4, np.float64, 1),
    ("mem_total_bytes", "mem_total_bytes", 4, np.float64, 1),
    ("temp_c", "temp_c", 8, np.float64, 1),
    ("mem_temp_c", "mem_temp_c", 16, np.float64, 1),
    ("power_w", "power_mw", 32, np.float64, 1e-3),
    ("power_limit_w", "power_limit_mw", 64, np.float64, 1e-3),
    ("energy_j", "energy_mj", 128, np.float64, 1e-3),
    ("sm_clock_mhz", "sm_clock_mhz", 256, np.float64, 1),
    ("mem_clock_mhz", "mem_clock_mhz", 256, np.float64, 1),
    ("gfx_clock_mhz", "gfx_clock_mhz", 256, np.float64, 1),
    ("pcie_rx_kbps", "pcie_rx_kbps", 1024, np.float64, 1),
    ("pcie_tx_kbps", "pcie_tx_kbps", 1024, np.float64, 1),
    ("fan_pct", "fan_pct", 2048, np.float64, 1),
    ("ecc_corrected", "ecc_corrected", 4096, np.float64, 1),
    ("ecc_uncorrected", "ecc_uncorrected", 4096, np.float64, 1),
    ("proc_mem_bytes", "proc_mem_bytes", 8192, np.float64, 1),
]


def device_metrics(trace):
    d = trace.table("device_samples")
    cols = {"ts_ns": d.ts_ns.astype(np.int64), "device": d.device.copy()}
    for name, src, bit, dt, scale in DEVICE_METRICS:
        v = with_na(getattr(d, src), (d.valid & bit) != 0, dt)
        cols[name] = v * scale if scale != 1 else v
    throttle_ok = (d.valid & 512) != 0
    cols["throttle_reasons"] = pd.arrays.IntegerArray(d.throttle_reasons.astype(np.uint64), ~throttle_ok) \
        if d.n else pd.array([], dtype="UInt64")
    return frame(cols)


def host_metrics(trace):
    h = trace.table("host_samples")
    cols = {"ts_ns": h.ts_ns.astype(np.int64)}
    cols["proc_cpu_pct"] = with_na(h.proc_cpu_pct_x100, (h.valid & 1) != 0, np.float64) / 100
    cols["sys_cpu_pct"] = with_na(h.sys_cpu_pct_x100, (h.valid & 2) != 0, np.float64) / 100
    cols["ram_used_bytes"] = with_na(h.ram_used_bytes, (h.valid & 4) != 0, np.float64)
    cols["ram_total_bytes"] = with_na(h.ram_total_bytes, (h.valid & 4) != 0, np.float64)
    cols["proc_rss_bytes"] = with_na(h.proc_rss_bytes, (h.valid & 8) != 0, np.float64)
    cols["cpu_count"] = with_na(h.cpu_count, h.cpu_count != 0, np.float64)
    return frame(cols)


PERF_COLUMNS = [("ts_ns", np.int64), ("device", np.uint16), ("kernel", pd.CategoricalDtype([])),
                ("correlation", np.uint32), ("source", pd.CategoricalDtype(["sass_metrics", "range_profiler"])),
                ("metric", pd.CategoricalDtype([])), ("value", np.float64)]

PC_SAMPLE_COLUMNS = [("ts_ns", np.int64), ("since_ns", np.int64), ("device", np.uint16),
                     ("kernel", pd.CategoricalDtype([])), ("function", pd.CategoricalDtype([])),
                     ("pc_offset", np.uint64), ("file", pd.CategoricalDtype([])), ("line", np.uint32),
                     ("stall_reason", pd.CategoricalDtype([])), ("samples", np.uint32)]


SASS_COLUMNS = [("ts_ns", np.int64), ("device", np.uint16), ("kernel", pd.CategoricalDtype([])),
                ("pc_offset", np.uint32), ("file", pd.CategoricalDtype([])), ("line", np.uint32),
                ("inst_executed", pd.UInt64Dtype()), ("thread_inst_executed", pd.UInt64Dtype()),
                ("sectors", pd.UInt64Dtype()), ("sectors_ideal", pd.UInt64Dtype()),
                ("branch_targets", pd.UInt64Dtype()), ("divergent_targets", pd.UInt64Dtype())]
SASS_COUNTS = (("inst_executed", 1), ("thread_inst_executed", 2), ("sectors", 4), ("sectors_ideal", 4),
               ("branch_targets", 8), ("divergent_targets", 8))  # count, its bit in `valid`


def sass_metrics(trace):
    """SASS metrics (docs/FORMAT.md, sass_metric): one row per instruction
    and context, its counts over every launch of its kernel; <NA> where the
    chip did not measure a count (its `valid` bit clear)."""
    try:
        q = trace.table("sass_metrics")
    except KeyError:  # a libgpufl older than SASS metrics
        return empty(SASS_COLUMNS)
    cols = {"ts_ns": q.ts_ns.view(np.int64), "device": q.device, "kernel": _texts(trace, q.function),
            "pc_offset": q.pc_offset, "file": _texts(trace, q.file), "line": q.line}
    for name, bit in SASS_COUNTS:
        cols[name] = pd.arrays.IntegerArray(getattr(q, name).astype(np.uint64), (q.valid & bit) == 0) \
            if q.n else pd.array([], dtype="UInt64")
    return frame(cols)


RANGE_COLUMNS = [("ts_ns", np.int64), ("end_ns", np.int64), ("device", np.uint16), ("range", np.uint32),
                 ("scope_id", np.uint64), ("name", pd.CategoricalDtype([])), ("metric", pd.CategoricalDtype([])),
                 ("value", np.float64)]


def range_metrics(trace):
    """Range profiler metrics (docs/FORMAT.md, range_metric): one row per
    range and metric, the range being the GPU work of one scope (scope_id)
    or NVTX range (scope_id 0), ts_ns..end_ns its push and pop (host)."""
    try:
        r = trace.table("range_metrics")
    except KeyError:  # a libgpufl older than the range profiler
        return empty(RANGE_COLUMNS)
    return frame({"ts_ns": r.ts_ns.view(np.int64), "end_ns": r.end_ns.view(np.int64), "device": r.device,
                  "range": r.range, "scope_id": r.scope_id, "name": _texts(trace, r.name),
                  "metric": _texts(trace, r.metric), "value": r.value})


def perf(trace):
    """SASS and range-profiler metrics in long form: the SASS counts summed
    per kernel (source "sass_metrics", correlation 0: they are of all its
    launches); the range profiler's metrics are per scope, not per kernel:
    range_metrics."""
    s = sass_metrics(trace)
    if s.empty:
        return empty(PERF_COLUMNS)
    names = [n for n, _ in SASS_COUNTS]
    g = s.groupby(["device", "kernel"], observed=True).agg(
        {"ts_ns": "max", **{n: "sum" for n in names}}).reset_index()
    long = g.melt(id_vars=["ts_ns", "device", "kernel"], value_vars=names, var_name="metric", value_name="value")
    cols = {"ts_ns": long["ts_ns"].to_numpy(np.int64), "device": long["device"].to_numpy(np.uint16),
            "kernel": long["kernel"].astype(str).astype("category"),
            "correlation": np.zeros(len(long), np.uint32),
            "source": pd.Categorical(["sass_metrics"] * len(long), categories=["sass_metrics", "range_profiler"]),
            "metric": long["metric"].astype("category"), "value": long["value"].to_numpy(np.float64)}
    return frame(cols)


def pc_samples(trace):
    """Warp samples of PC sampling (docs/FORMAT.md, pc_sample): one row per
    collection, PC and stall reason. `kernel` is the sampled function's
    name as its launches are named (demangled), `function` as its module
    holds it; the samples of (since_ns, ts_ns] carry no launch (CUPTI's
    continuous mode). `stall_reason` "selected" is a warp that issued."""
    try:
        p = trace.table("pc_samples")
    except KeyError:  # a libgpufl older than PC sampling
        return empty(PC_SAMPLE_COLUMNS)
    c = trace.table("launch_configs")
    key = np.where(c.mangled != 0, c.mangled, c.name)
    demangled = dict(zip(key.tolist(), c.name.tolist()))
    fn = p.function
    kernel = np.fromiter((demangled.get(f, f) for f in fn.tolist()), dtype=np.uint32, count=len(fn))
    cols = {"ts_ns": p.ts_ns.view(np.int64), "since_ns": p.since_ns.view(np.int64), "device": p.device,
            "kernel": _texts(trace, kernel), "function": _texts(trace, fn), "pc_offset": p.pc_offset,
            "file": _texts(trace, p.file), "line": p.line, "stall_reason": _texts(trace, p.reason),
            "samples": p.samples}
    return frame(cols)
