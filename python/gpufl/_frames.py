"""The pandas DataFrames of a session, built from a Trace's columns.

One function per frame; each takes a Trace (gpufl/_trace.py) and returns a
new DataFrame that owns its memory (the trace may be closed afterwards).
The analyzer (gpufl/analyzer.py) builds each frame the first time it is
asked for and keeps it. Every column is documented with its unit in
docs/PYTHON.md; the choices that make a ten-million-event session load in
seconds:

* No Python loop over rows. Device work rows refer to small tables of
  distinct launch configurations, streams and callers; their fields are
  gathered with one ``take`` per column, and every string-valued column is a
  categorical whose categories come from looking each distinct string id up
  once (in the small table, not per row).
* Small dtypes: ids keep the reader's widths (uint16 device, uint32 stream,
  ...), categorical codes are as narrow as the number of names allows,
  times are int64 ns of the session timebase (CLOCK_MONOTONIC of the
  recording machine).
* Times that did not fit the reader's 32-bit offsets (work longer than
  4.29 s) are patched from the table's ``exact`` rows, vectorized.
* Frames are built column by column into a DataFrame that takes the arrays
  without consolidating them into blocks (no second copy at build time).

Missing values: a categorical is NaN where the trace has no string (no NVTX
range, no scope); API times are <NA> (nullable Int64) for work without a
known API call; metric samples are NaN where the sample did not report the
field (its ``valid`` bit is clear). Ids keep 0 for "none", as in the trace.
"""

import concurrent.futures
import os
import re

import numpy as np
import pandas as pd

from . import _trace

MODULE_PREFIX = "nn.Module: "  # the NVTX ranges gpufl.torch pushes around every nn.Module call
_BACKWARD_NAME = re.compile(r"Backward\d*$")
_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*::[^\s]+$")  # aten::addmm, c10d::allreduce_


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


def narrow_codes(codes, ncategories):
    """Categorical codes in the type pandas uses for that many categories."""
    dt = np.int8 if ncategories < 127 else np.int16 if ncategories < 32767 else np.int32
    return codes.astype(dt, copy=False)


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


# ---- scopes, NVTX ranges and their nesting ------------------------------------------------


def _row_of_ids(ids, wanted):
    """Row in ids (unique) of each wanted id, -1 where absent (or 0)."""
    if len(ids) == 0:
        return np.full(len(wanted), -1, np.int64)
    order = np.argsort(ids, kind="stable")
    pos = np.searchsorted(ids, wanted, sorter=order)
    pos = np.minimum(pos, len(ids) - 1)
    rows = order[pos].astype(np.int64)
    rows[(ids[rows] != wanted) | (wanted == 0)] = -1
    return rows


def nvtx_parents(tid, begin, depth):
    """Row of the enclosing range of each NVTX range, -1 for none: the last
    range before it on its thread, in begin order, one level up. Push/pop
    ranges nest properly per thread; a range recorded when it ended can sit
    before its parent among equal begin times, so equal begins are ordered
    outermost first."""
    n = len(tid)
    parent = np.full(n, -1, np.int64)
    if n == 0:
        return parent
    order = np.lexsort((depth, begin, tid))
    sdepth, stid = depth[order].astype(np.int64), tid[order]
    pos = np.arange(n)
    for d in range(1, int(sdepth.max()) + 1):
        child = pos[sdepth == d]
        cand = pos[sdepth == d - 1]
        if len(child) == 0 or len(cand) == 0:
            continue
        k = np.searchsorted(cand, child) - 1
        ok = k >= 0
        p = cand[np.maximum(k, 0)]
        ok &= stid[p] == stid[child]
        parent[order[child[ok]]] = order[p[ok]]
    return parent


def paths(name_codes, name_texts, parent):
    """Path codes ("outer/inner") of rows whose names are name_codes and
    whose enclosing row is parent (-1 none): (codes, texts). Rows are
    resolved from the outermost level in; a row whose parent forms no chain
    to a root is taken as a root."""
    n = len(name_codes)
    code = np.full(n, -1, np.int64)
    texts = []
    index = {}
    todo = np.arange(n)
    roots = parent[todo] < 0
    level = todo[roots]
    rest = todo[~roots]
    width = len(name_texts) + 1
    parent_code = np.full(len(level), -1, np.int64)
    while len(level):
        keys = (parent_code + 1) * width + name_codes[level]
        uniq, inv = np.unique(keys, return_inverse=True)
        new = np.empty(len(uniq), np.int64)
        for i, key in enumerate(uniq.tolist()):
            pc, nc = divmod(key, width)
            pc -= 1
            text = name_texts[nc] if pc < 0 else texts[pc] + "/" + name_texts[nc]
            c = index.get(text)
            if c is None:
                c = index[text] = len(texts)
                texts.append(text)
            new[i] = c
        code[level] = new[inv]
        if not len(rest):
            break
        ready = code[parent[rest]] >= 0
        if not ready.any():  # a cycle or a lost chain: roots from here
            parent_code = np.full(len(rest), -1, np.int64)
            level, rest = rest, rest[:0]
            continue
        level, rest = rest[ready], rest[~ready]
        parent_code = code[parent[level]]
    return code, texts


class ScopeTree:
    """gpufl scopes and NVTX ranges of a trace, with their nesting resolved:
    ``part(kind)`` for kind "scopes" or "nvtx" is (Table, parent row of each
    row (-1 none), name codes, name texts, path codes, path texts), built
    on first use and shared by the frames."""

    def __init__(self, trace):
        self.trace = trace
        self._launches = self._work = None
        self.parts = {}

    def part(self, kind):
        p = self.parts.get(kind)
        if p is None:
            trace = self.trace
            t = trace.table(kind)
            name_codes, name_texts = trace.strings(t.name)
            name_codes = np.where(name_codes < 0, len(name_texts), name_codes)
            name_texts = name_texts + ["(unnamed)"]
            if kind == "scopes":
                parent = _row_of_ids(t.id, t.parent)
            else:
                parent = nvtx_parents(t.tid, t.begin_ns, t.depth)
            path_codes, path_texts = paths(name_codes, name_texts, parent)
            p = self.parts[kind] = (t, parent, name_codes, name_texts, path_codes, path_texts)
        return p

    @property
    def launches(self):
        """LaunchIndex of the kernels."""
        if self._launches is None:
            self._launches = LaunchIndex(self.trace)
        return self._launches

    @property
    def work(self):
        """LaunchIndex of all device work: kernels, copies and memsets."""
        if self._work is None:
            self._work = LaunchIndex(self.trace, ("kernels", "copies", "memsets"))
        return self._work

    def scope_rows(self, ids):
        """Row in the scopes table of each scope id (-1 none)."""
        return _row_of_ids(self.part("scopes")[0].id, ids)


def innermost(tree, kind, tid, ts):
    """Row of the innermost range of kind ("scopes" or "nvtx") open on
    thread tid at time ts (begin <= ts < end), per element; -1 where none.
    The latest range to begin at or before ts on the thread, or the nearest
    of its enclosing ranges that had not ended by ts."""
    t, parent = tree.part(kind)[:2]
    out = np.full(len(tid), -1, np.int64)
    if t.n == 0 or len(tid) == 0:
        return out
    begin, end = t.begin_ns.view(np.int64), t.end_ns.view(np.int64)
    ranges = t.instant == 0
    for th in np.unique(tid).tolist():
        mine = np.nonzero(ranges & (t.tid == th))[0]
        if not len(mine):
            continue
        order = mine[np.lexsort((t.depth[mine], begin[mine]))]
        q = np.nonzero(tid == th)[0]
        k = np.searchsorted(begin[order], ts[q], "right") - 1
        cur = np.where(k >= 0, order[np.maximum(k, 0)], -1)
        for _ in range(int(t.depth.max()) + 2):
            open_ = (cur < 0) | (end[np.maximum(cur, 0)] > ts[q])
            if open_.all():
                break
            cur = np.where(open_, cur, parent[np.maximum(cur, 0)])
        out[q] = cur
    return out


def launch_times(table):
    """(api_start, dur) int64 arrays of a table of device work: when each
    row's API call began (0 when not known) and how long the work ran, with
    the rows of ``exact`` patched (as gpufl_trace_kernel_api_start() and
    gpufl_trace_kernel_end() give them)."""
    start = table.start_ns.view(np.int64)
    lead = table.api_lead_ns
    api = start - lead
    api[lead == 0] = 0
    dur = table.dur_ns.astype(np.int64)
    ex = table.exact
    if len(ex):
        rows = ex["row"].astype(np.intp)
        bad = table.dur_ns[rows] == _trace.EXACT
        dur[rows[bad]] = ex["end_ns"][bad].view(np.int64) - start[rows[bad]]
        bad = lead[rows] == _trace.EXACT
        api[rows[bad]] = ex["api_start_ns"][bad].view(np.int64)
    return api, dur


class LaunchIndex:
    """Device work by launching thread and API call start, to count what was
    launched inside intervals of a thread (scopes, NVTX ranges, ops).
    tables: "kernels", and "copies" and "memsets" for all device work.

    Rows are grouped by thread with a radix sort of small thread codes
    (threads come from the small callers table), then sorted by API start
    within each thread, which launch order makes nearly sorted already."""

    def __init__(self, trace, tables=("kernels",)):
        self.by_tid = {}  # tid -> [(sorted API starts, cumulative durations)], one per table
        for name in tables:
            x = trace.table(name)
            if x.n:
                self._add(x)

    def _add(self, x):
        api, dur = launch_times(x)
        tids = np.unique(x.callers.tid)
        if len(tids) == 1:  # one launching thread: no grouping
            groups = [(tids[0], None)]
        else:
            rowcode = gather([narrow_codes(np.searchsorted(tids, x.callers.tid), len(tids))], x.caller_row)[0]
            order = np.argsort(rowcode, kind="stable")  # a radix sort of 8- or 16-bit codes
            bounds = np.concatenate(([0], np.cumsum(np.bincount(rowcode, minlength=len(tids)))))
            groups = [(tid, order[bounds[i]:bounds[i + 1]]) for i, tid in enumerate(tids)]
            del rowcode, order
        for tid, seg in groups:
            a, d = (api, dur) if seg is None else (api[seg], dur[seg])
            known = a > 0  # work whose API call is not known was launched nowhere
            if not known.all():
                a, d = a[known], d[known]
            if not len(a):
                continue
            if not (a[1:] >= a[:-1]).all():
                o = np.argsort(a, kind="stable")
                a, d = a[o], d[o]
            self.by_tid.setdefault(int(tid), []).append((a, np.concatenate(([0], np.cumsum(d)))))

    def inside(self, tid, start, end):
        """(count, gpu_ns) of the kernels launched on thread tid with start
        <= api_start < end, per interval; inclusive of nested intervals."""
        n = len(tid)
        count = np.zeros(n, np.int64)
        gpu = np.zeros(n, np.int64)
        for t in np.unique(tid).tolist():
            found = self.by_tid.get(int(t))
            if found is None:
                continue
            rows = np.nonzero(tid == t)[0]
            for api, cums in found:
                lo = np.searchsorted(api, start[rows], "left")
                hi = np.searchsorted(api, end[rows], "left")
                count[rows] += hi - lo
                gpu[rows] += cums[hi] - cums[lo]
        return count, gpu


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
    s, c = table.streams, table.callers
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
    "occupancy", "limiter", "tid", "scope", "scope_name", "scope_path", "nvtx", "external_id", "stack_id",
    "graph_id", "api_start_ns", "api_end_ns"
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
    cols.update(_attribution(trace, m, tree_fn, external=True))
    # what the session's allocations hold on each device after each row
    signed = np.where(m.is_free != 0, -m.bytes.astype(np.int64), m.bytes.astype(np.int64))
    live = np.zeros(m.n, np.int64)
    for d in np.unique(cols["device"]).tolist():
        mine = cols["device"] == d
        live[mine] = np.cumsum(signed[mine])
    cols["live_bytes"] = live
    return frame(_order(cols, ["ts_ns", "event", "address", "bytes", "kind", "device", "stream", "context",
                               "correlation"]))


SCOPE_COLUMNS = ["kind", "id", "name", "path", "depth", "tid", "parent", "begin_ns", "end_ns", "dur_ns", "unended",
                 "implicit", "domain", "seq", "gpu_ops", "gpu_ns"]


def scopes(trace, tree):
    """gpufl scopes, then NVTX ranges and marks, each ordered by begin."""
    parts = []
    for kind in ("scopes", "nvtx"):
        t, parent, name_codes, name_texts, path_codes, path_texts = tree.part(kind)
        begin = t.begin_ns.view(np.int64)
        end = t.end_ns.view(np.int64)
        kinds = np.where(t.instant != 0, 2, 0 if kind == "scopes" else 1).astype(np.int8)
        count, gpu = tree.work.inside(t.tid, begin, end)
        domain_codes, domain_texts = trace.strings(t.domain)
        parts.append({
            "kind": kinds,
            "id": t.id,
            "name": (name_codes, name_texts),
            "path": (path_codes, path_texts),
            "depth": t.depth,
            "tid": t.tid,
            "parent": np.where(parent >= 0, t.id[np.maximum(parent, 0)], 0).astype(np.uint64) if kind == "nvtx"
            else t.parent,
            "begin_ns": begin,
            "end_ns": end,
            "dur_ns": end - begin,
            "unended": t.unended.astype(bool),
            "implicit": t.implicit.astype(bool),
            "domain": (domain_codes, domain_texts),
            "seq": (t.seq.view(np.int64), t.has_seq == 0),
            "gpu_ops": count,
            "gpu_ns": gpu,
        })
    cols = {}
    for name in SCOPE_COLUMNS:
        a, b = parts[0][name], parts[1][name]
        if name in ("name", "path", "domain"):
            cols[name] = merged_categorical([a, b])
        elif name == "kind":
            cols[name] = categorical(np.concatenate((a, b)), ["scope", "nvtx", "nvtx_mark"])
        elif name == "seq":
            cols[name] = nullable_int(np.concatenate((a[0], b[0])), np.concatenate((a[1], b[1])))
        else:
            cols[name] = np.concatenate((a, b))
    return frame(cols)


def scope_events(scopes_frame):
    """One row per begin and per end of scopes_frame (marks: one row),
    ordered by time; at one instant, ends of what began earlier come first,
    then begins (outermost first), then ends of what began then (innermost
    first)."""
    s = scopes_frame
    mark = (s["kind"] == "nvtx_mark").to_numpy()
    rng = np.nonzero(~mark)[0]
    mk = np.nonzero(mark)[0]
    rows = np.concatenate((rng, rng, mk))
    ts = np.concatenate((s["begin_ns"].to_numpy()[rng], s["end_ns"].to_numpy()[rng], s["begin_ns"].to_numpy()[mk]))
    ev = np.concatenate((np.zeros(len(rng), np.int8), np.ones(len(rng), np.int8), np.full(len(mk), 2, np.int8)))
    depth = s["depth"].to_numpy().astype(np.int64)[rows]
    zero_len = (s["dur_ns"].to_numpy()[rows] == 0)
    phase = np.where(ev == 1, np.where(zero_len, 2, 0), 1)
    within = np.where(ev == 1, -depth, depth)
    order = np.lexsort((within, phase, ts))
    rows, ts, ev = rows[order], ts[order], ev[order]
    cols = {"ts_ns": ts, "event": categorical(ev, ["begin", "end", "mark"])}
    for name in ("kind", "id", "name", "path", "depth", "tid"):
        col = s[name]
        cols[name] = col.array.take(rows) if isinstance(col.dtype, pd.CategoricalDtype) else col.to_numpy()[rows]
    return frame(cols)


OPS_COLUMNS = ["start_ns", "end_ns", "dur_ns", "tid", "name", "seq", "depth", "is_backward", "forward_op",
               "module", "kernels", "gpu_ns", "id"]


def ops(trace, tree):
    """PyTorch ops from the NVTX ranges PyTorch pushes for them (see the
    docs): one row per op range."""
    t, parent, name_codes, name_texts, _, _ = tree.part("nvtx")
    is_module_name = np.array([s.startswith(MODULE_PREFIX) for s in name_texts], bool)
    is_op_name = np.array([bool(_OP_NAME.match(s) or _BACKWARD_NAME.search(s)) and not s.startswith(MODULE_PREFIX)
                           for s in name_texts], bool)
    backward_name = np.array([bool(_BACKWARD_NAME.search(s)) for s in name_texts], bool)
    default_domain = t.domain == 0
    ranges = t.instant == 0
    has_seq = t.has_seq != 0
    is_op = ranges & default_domain & (has_seq | is_op_name[name_codes]) & ~is_module_name[name_codes]
    rows = np.nonzero(is_op)[0]
    if len(rows) == 0:
        return empty([("start_ns", np.int64), ("end_ns", np.int64), ("dur_ns", np.int64), ("tid", np.uint32),
                      ("name", pd.CategoricalDtype([])), ("seq", "Int64"), ("depth", np.uint16),
                      ("is_backward", bool), ("forward_op", pd.CategoricalDtype([])),
                      ("module", pd.CategoricalDtype([])), ("kernels", np.int64), ("gpu_ns", np.int64),
                      ("id", np.uint64)])
    begin = t.begin_ns.view(np.int64)
    end = t.end_ns.view(np.int64)
    seq = t.seq.view(np.int64)
    tid = t.tid

    # backward: by name, or sharing its seq with an earlier op on another thread
    backward = backward_name[name_codes] & is_op
    cand = rows[has_seq[rows] & ~backward[rows]]
    if len(cand):
        order = cand[np.lexsort((begin[cand], seq[cand]))]
        first = np.ones(len(order), bool)
        first[1:] = seq[order][1:] != seq[order][:-1]
        first_tid = tid[order][np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))]
        backward[order[tid[order] != first_tid]] = True

    # forward op of each backward op: the deepest (then latest) forward op with its seq
    forward_row = np.full(len(t.tid), -1, np.int64)
    fwd = rows[has_seq[rows] & ~backward[rows]]
    bwd = rows[has_seq[rows] & backward[rows]]
    if len(fwd) and len(bwd):
        order = fwd[np.lexsort((begin[fwd], t.depth[fwd], seq[fwd]))]
        last = np.ones(len(order), bool)
        last[:-1] = seq[order][1:] != seq[order][:-1]
        best = order[last]  # one per seq, sorted by seq
        k = np.searchsorted(seq[best], seq[bwd])
        k = np.minimum(k, len(best) - 1)
        hit = seq[best[k]] == seq[bwd]
        forward_row[bwd[hit]] = best[k[hit]]

    # module: innermost enclosing "nn.Module: " range (for a backward op, its forward op's)
    module_row = np.full(len(t.tid), -1, np.int64)
    if is_module_name.any():
        cur = parent.copy()
        pending = rows[cur[rows] >= 0]
        while len(pending):
            found = is_module_name[name_codes[cur[pending]]]
            module_row[pending[found]] = cur[pending[found]]
            pending = pending[~found]
            cur[pending] = parent[cur[pending]]
            pending = pending[cur[pending] >= 0]
        via = forward_row[rows]
        has_fwd = via >= 0
        module_row[rows[has_fwd]] = module_row[via[has_fwd]]
    module_texts, module_code = [], np.full(len(name_texts), -1, np.int64)
    for i, text in enumerate(name_texts):
        if is_module_name[i]:
            module_code[i] = len(module_texts)
            module_texts.append(text[len(MODULE_PREFIX):])
    mcodes = np.where(module_row[rows] >= 0, module_code[name_codes[np.maximum(module_row[rows], 0)]], -1)

    fcodes = np.where(forward_row[rows] >= 0, name_codes[np.maximum(forward_row[rows], 0)], -1)
    count, gpu = tree.launches.inside(tid[rows], begin[rows], end[rows])
    cols = {
        "start_ns": begin[rows],
        "end_ns": end[rows],
        "dur_ns": end[rows] - begin[rows],
        "tid": tid[rows],
        "name": categorical(name_codes[rows], name_texts),
        "seq": nullable_int(seq[rows], ~has_seq[rows]),
        "depth": t.depth[rows],
        "is_backward": backward[rows],
        "forward_op": categorical(fcodes, name_texts),
        "module": categorical(mcodes, module_texts),
        "kernels": count,
        "gpu_ns": gpu,
        "id": t.id[rows],
    }
    out = frame(cols)
    for c in ("name", "forward_op", "module"):
        out[c] = out[c].cat.remove_unused_categories()
    return out


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

PC_SAMPLE_COLUMNS = [("ts_ns", np.int64), ("device", np.uint16), ("kernel", pd.CategoricalDtype([])),
                     ("correlation", np.uint32), ("function", pd.CategoricalDtype([])), ("pc_offset", np.uint64),
                     ("stall_reason", pd.CategoricalDtype([])), ("samples", np.uint32)]


def perf(trace):
    """SASS and range-profiler metrics: no engine of this build records
    them, so the frame is empty with its columns typed."""
    return empty(PERF_COLUMNS)


def pc_samples(trace):
    return empty(PC_SAMPLE_COLUMNS)
