"""Scopes, NVTX ranges and PyTorch ops of a session: their nesting (paths,
parents, the innermost range open at a time), what device work was
launched inside them, and their DataFrames (``scopes``, ``scope_events``,
``ops``).

gpufl scopes carry their parent's id; NVTX ranges only their depth on
their thread, so their nesting is found from begin order per thread. Work
is attributed to an interval by the thread that launched it and the start
of its API call, as the C report does, so the figures agree with `gpufl
report`'s Scopes section. Vectorized over rows; loops run over nesting
levels and threads only.
"""

import re

import numpy as np
import pandas as pd

from . import _trace
from ._frames import categorical, empty, frame, gather, merged_categorical, narrow_codes, nullable_int

MODULE_PREFIX = "nn.Module: "  # the NVTX ranges gpufl.torch pushes around every nn.Module call
_BACKWARD_NAME = re.compile(r"Backward\d*$")
_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*::[^\s]+$")  # aten::addmm, c10d::allreduce_


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


def nvtx_parents(tid, begin, depth, instant):
    """Row of the enclosing range of each NVTX range or mark, -1 for none:
    the last range (never a mark: an instant encloses nothing) before it on
    its thread, in begin order, one level up. Push/pop ranges nest properly
    per thread; a range recorded when it ended can sit before its parent
    among equal begin times, so equal begins are ordered outermost first."""
    n = len(tid)
    parent = np.full(n, -1, np.int64)
    if n == 0:
        return parent
    order = np.lexsort((depth, begin, tid))
    sdepth, stid, smark = depth[order].astype(np.int64), tid[order], instant[order] != 0
    pos = np.arange(n)
    for d in range(1, int(sdepth.max()) + 1):
        child = pos[sdepth == d]
        cand = pos[(sdepth == d - 1) & ~smark]
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
                parent = nvtx_parents(t.tid, t.begin_ns, t.depth, t.instant)
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
    api = launch_starts(table, 0, table.n)
    dur = table.dur_ns.astype(np.int64)
    ex = table.exact
    if len(ex):
        rows = ex["row"].astype(np.intp)
        bad = table.dur_ns[rows] == _trace.EXACT
        dur[rows[bad]] = ex["end_ns"][bad].view(np.int64) - start[rows[bad]]
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


class OpRows:
    """PyTorch ops among a trace's NVTX ranges (the rules are docs/PYTHON.md's,
    "ops"), resolved once per tree: per NVTX row, whether it is an op,
    whether backward, its forward op's row and its module's row (-1 none),
    and the nearest op at or above it (``op_up``)."""

    def __init__(self, tree):
        t, parent, name_codes, name_texts, _, _ = tree.part("nvtx")
        self.t, self.parent, self.name_codes, self.name_texts = t, parent, name_codes, name_texts
        is_module_name = np.array([s.startswith(MODULE_PREFIX) for s in name_texts], bool)
        is_op_name = np.array([bool(_OP_NAME.match(s) or _BACKWARD_NAME.search(s)) and not s.startswith(MODULE_PREFIX)
                               for s in name_texts], bool)
        backward_name = np.array([bool(_BACKWARD_NAME.search(s)) for s in name_texts], bool)
        has_seq = t.has_seq != 0
        is_op = (t.instant == 0) & (t.domain == 0) & (has_seq | is_op_name[name_codes]) & ~is_module_name[name_codes]
        rows = np.nonzero(is_op)[0]
        self.is_op, self.rows, self.has_seq = is_op, rows, has_seq
        n = len(t.tid)
        self.backward = backward_name[name_codes] & is_op
        self.forward_row = np.full(n, -1, np.int64)
        self.module_row = np.full(n, -1, np.int64)
        self.op_up = np.full(n, -1, np.int64)
        self.module_texts, self.module_code = [], np.full(len(name_texts), -1, np.int64)
        for i, text in enumerate(name_texts):
            if is_module_name[i]:
                self.module_code[i] = len(self.module_texts)
                self.module_texts.append(text[len(MODULE_PREFIX):])
        if len(rows):
            self._resolve(is_module_name)

    def _resolve(self, is_module_name):
        t, parent, name_codes, rows, has_seq = self.t, self.parent, self.name_codes, self.rows, self.has_seq
        begin, seq, tid = t.begin_ns.view(np.int64), t.seq.view(np.int64), t.tid
        backward, forward_row, module_row = self.backward, self.forward_row, self.module_row

        # backward: by name, or sharing its seq with an earlier op on another thread
        cand = rows[has_seq[rows] & ~backward[rows]]
        if len(cand):
            order = cand[np.lexsort((begin[cand], seq[cand]))]
            first = np.ones(len(order), bool)
            first[1:] = seq[order][1:] != seq[order][:-1]
            first_tid = tid[order][np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))]
            backward[order[tid[order] != first_tid]] = True

        # forward op of each backward op: the deepest (then latest) forward op with its seq
        fwd = rows[has_seq[rows] & ~backward[rows]]
        bwd = rows[has_seq[rows] & backward[rows]]
        if len(fwd) and len(bwd):
            order = fwd[np.lexsort((begin[fwd], t.depth[fwd], seq[fwd]))]
            last = np.ones(len(order), bool)
            last[:-1] = seq[order][1:] != seq[order][:-1]
            best = order[last]  # one per seq, sorted by seq
            k = np.minimum(np.searchsorted(seq[best], seq[bwd]), len(best) - 1)
            hit = seq[best[k]] == seq[bwd]
            forward_row[bwd[hit]] = best[k[hit]]

        # module: innermost enclosing "nn.Module: " range (for a backward op, its forward op's)
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

        # ops a backward op runs (aten::mm inside AddmmBackward0) are backward
        # too, for its forward op and module; and every range's nearest op at
        # or above it; parents first, level by level
        depth = t.depth.astype(np.int64)
        self.op_up[self.is_op] = np.nonzero(self.is_op)[0]
        for d in range(1, int(depth.max()) + 1):
            level = np.nonzero(depth == d)[0]
            p = parent[level]
            up = p >= 0
            level, p = level[up], p[up]
            none = self.op_up[level] < 0
            self.op_up[level[none]] = self.op_up[p[none]]
            inherit = self.is_op[level] & ~backward[level] & self.is_op[p] & backward[p]
            level, p = level[inherit], p[inherit]
            backward[level] = True
            forward_row[level] = forward_row[p]
            module_row[level] = np.where(module_row[level] >= 0, module_row[level], module_row[p])

    def forward_codes(self, op_rows):
        """Name codes (into name_texts) of the forward op of each op row (-1 none)."""
        f = np.where(op_rows >= 0, self.forward_row[np.maximum(op_rows, 0)], -1)
        return np.where(f >= 0, self.name_codes[np.maximum(f, 0)], -1)

    def module_codes(self, op_rows):
        """Codes (into module_texts) of the module of each op row (-1 none)."""
        m = np.where(op_rows >= 0, self.module_row[np.maximum(op_rows, 0)], -1)
        return np.where(m >= 0, self.module_code[self.name_codes[np.maximum(m, 0)]], -1)


def op_rows(tree):
    """The tree's OpRows, made on first use."""
    if getattr(tree, "_op_rows", None) is None:
        tree._op_rows = OpRows(tree)
    return tree._op_rows


def ops(trace, tree):
    """PyTorch ops from the NVTX ranges PyTorch pushes for them (see the
    docs): one row per op range."""
    o = op_rows(tree)
    t, rows = o.t, o.rows
    if len(rows) == 0:
        return empty([("start_ns", np.int64), ("end_ns", np.int64), ("dur_ns", np.int64), ("tid", np.uint32),
                      ("name", pd.CategoricalDtype([])), ("seq", "Int64"), ("depth", np.uint16),
                      ("is_backward", bool), ("forward_op", pd.CategoricalDtype([])),
                      ("module", pd.CategoricalDtype([])), ("kernels", np.int64), ("gpu_ns", np.int64),
                      ("id", np.uint64)])
    begin, end = t.begin_ns.view(np.int64), t.end_ns.view(np.int64)
    count, gpu = tree.launches.inside(t.tid[rows], begin[rows], end[rows])
    cols = {
        "start_ns": begin[rows],
        "end_ns": end[rows],
        "dur_ns": end[rows] - begin[rows],
        "tid": t.tid[rows],
        "name": categorical(o.name_codes[rows], o.name_texts),
        "seq": nullable_int(t.seq.view(np.int64)[rows], ~o.has_seq[rows]),
        "depth": t.depth[rows],
        "is_backward": o.backward[rows],
        "forward_op": categorical(o.forward_codes(rows), o.name_texts),
        "module": categorical(o.module_codes(rows), o.module_texts),
        "kernels": count,
        "gpu_ns": gpu,
        "id": t.id[rows],
    }
    out = frame(cols)
    for c in ("name", "forward_op", "module"):
        out[c] = out[c].cat.remove_unused_categories()
    return out


class OpSegments:
    """Per thread, the times at which the innermost NVTX range changes and,
    for each stretch between two of them, the op, forward op and module
    codes of work launched then (OpRows' rules): so the ops of millions of
    kernels are one binary search each, with no walk up the ranges."""

    def __init__(self, o):
        t, parent = o.t, o.parent
        rows = np.nonzero(t.instant == 0)[0]
        n = len(rows)
        begin, end, depth = t.begin_ns.view(np.int64)[rows], t.end_ns.view(np.int64)[rows], t.depth[rows]
        # every begin and end; after a begin its range is the innermost, after
        # an end its parent (NVTX ranges of a thread nest). At one instant,
        # ends first (inner first), then begins (outer first).
        times = np.concatenate((end, begin))
        is_begin = np.concatenate((np.zeros(n, np.int8), np.ones(n, np.int8)))
        tie = np.concatenate((-depth.astype(np.int32), depth.astype(np.int32)))
        row = np.concatenate((rows, rows))
        tid = np.concatenate((t.tid[rows], t.tid[rows]))
        order = np.lexsort((tie, is_begin, times, tid))
        del tie
        times, row, tid = times[order], row[order], tid[order]
        after = np.where(is_begin[order] == 1, row, parent[row])
        del order, row, is_begin
        op = np.where(after >= 0, o.op_up[np.maximum(after, 0)], -1)
        del after
        self.texts = (o.name_texts, o.name_texts, o.module_texts)
        codes = [narrow_codes(c, len(x)) for c, x in zip(
            (np.where(op >= 0, o.name_codes[np.maximum(op, 0)], -1), o.forward_codes(op), o.module_codes(op)),
            self.texts)]
        del op
        self.by_tid = {}
        cuts = np.nonzero(np.diff(tid))[0] + 1
        for lo, hi in zip(np.concatenate(([0], cuts)), np.concatenate((cuts, [len(tid)]))):
            if hi > lo:
                self.by_tid[int(tid[lo])] = (times[lo:hi], [c[lo:hi] for c in codes])

    def fill(self, tid, ts, outs):
        """outs[i][j] = code i of work launched on thread tid[j] at ts[j]
        (-1 where ts is 0, not known, or no op was open)."""
        for th in np.unique(tid).tolist():
            found = self.by_tid.get(int(th))
            sel = np.nonzero(tid == th)[0]
            if found is None:
                for out in outs:
                    out[sel] = -1
                continue
            times, codes = found
            k = np.searchsorted(times, ts[sel], "right") - 1
            bad = (k < 0) | (ts[sel] <= 0)
            k = np.maximum(k, 0)
            for out, c in zip(outs, codes):
                got = c[k]
                got[bad] = -1
                out[sel] = got


def op_segments(tree):
    """The tree's OpSegments, made on first use (None without op ranges)."""
    o = op_rows(tree)
    if not len(o.rows):
        return None
    if getattr(tree, "_op_segments", None) is None:
        tree._op_segments = OpSegments(o)
    return tree._op_segments


def launch_starts(table, lo, hi):
    """API call start of rows [lo, hi) of a table of device work (0 where
    not known), int64, with the rows of ``exact`` patched."""
    lead = table.api_lead_ns[lo:hi]
    api = table.start_ns[lo:hi].view(np.int64) - lead
    api[lead == 0] = 0
    ex = table.exact
    if len(ex):
        rows = ex["row"]
        a, b = np.searchsorted(rows, lo, "left"), np.searchsorted(rows, hi, "left")
        if b > a:
            r = rows[a:b].astype(np.intp) - lo
            bad = lead[r] == _trace.EXACT
            api[r[bad]] = ex["api_start_ns"][a:b][bad].view(np.int64)
    return api
