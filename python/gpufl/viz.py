"""A timeline of a recorded session, drawn with matplotlib.

::

    from gpufl import viz

    viz.init("gpufl-logs/trainer-*")     # session(s) to draw
    viz.save("timeline.png")              # or viz.show() with a display

One figure per session, three panels sharing the time axis (seconds from
the session's start): GPU and memory-controller utilization per device
(NVML samples); device memory used per device (NVML), with the memory the
session's own allocations held when they were tracked; and lanes of
kernels, copies and memsets per stream, with gpufl scopes and NVTX ranges
per thread and nesting depth below them.

Built to stay readable and fast on long sessions: a lane never holds one
rectangle per kernel. Work closer together than one pixel of the figure
is merged into one span, spans are at least a pixel wide, each is shaded
by the share of it that was busy (pale: sparse work, solid: back to back),
and each lane is a single broken_barh collection: at most one rectangle
per two pixels of width per lane, whatever the session's length.

Without a display (no $DISPLAY or $WAYLAND_DISPLAY and no $MPLBACKEND)
matplotlib's Agg backend is used: save() works, show() says to use save().
"""

import glob
import os
import warnings

import numpy as np

from .analyzer import GpuFlightSession, _candidates

__all__ = ["init", "show", "save", "figure", "sessions"]

WIDTH_IN, DPI = 16.0, 100
MAX_SCOPE_DEPTH = 4   # scope and NVTX lanes shown per thread
MAX_THREADS = 4       # threads with scopes shown, most active first
MAX_LABELS = 40       # scope names written on their bars

_sessions = []


def _pyplot():
    import matplotlib
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("MPLBACKEND")):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _paths(pattern):
    """What a pattern names: a session directory, a .gflt or .log file, a
    directory of session directories (every session in it), or a glob of
    any of these, sorted."""
    pattern = os.fspath(pattern)
    matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    out = []
    for m in matches:
        if os.path.isfile(m):
            out.append(m)
        elif os.path.isdir(m):
            out.extend(_candidates(m))
    return out


def init(pattern):
    """Opens the session(s) pattern names (see _paths) for show() and
    save(), replacing those of an earlier init. Returns the list of
    GpuFlightSession. Raises FileNotFoundError when nothing matches."""
    paths = _paths(pattern)
    if not paths:
        raise FileNotFoundError(2, "no session matches", os.fspath(pattern))
    opened = [GpuFlightSession(p) for p in paths]
    for s in _sessions:
        s.close()
    _sessions[:] = opened
    return list(opened)


def sessions():
    """The sessions init() opened."""
    return list(_sessions)


def _need():
    if not _sessions:
        raise RuntimeError("gpufl.viz: call viz.init(pattern) first")


def show():
    """Draws the sessions and shows the figures (needs a display)."""
    _need()
    plt = _pyplot()
    figs = [figure(s) for s in _sessions]
    if plt.get_backend().lower() == "agg":
        warnings.warn("gpufl.viz: no display (matplotlib's Agg backend): use viz.save(path)", stacklevel=2)
        for f in figs:
            plt.close(f)
        return figs
    plt.show()
    return figs


def save(path):
    """Draws the sessions and writes the figure to path (PNG, SVG or PDF by
    its extension). With several sessions, the second and later go to
    path with "-2", "-3" ... before the extension. Returns the paths."""
    _need()
    plt = _pyplot()
    path = os.fspath(path)
    root, ext = os.path.splitext(path)
    written = []
    for i, s in enumerate(_sessions):
        out = path if i == 0 else "%s-%d%s" % (root, i + 1, ext)
        fig = figure(s)
        fig.savefig(out, dpi=DPI)
        plt.close(fig)
        written.append(out)
    return written


# ---- drawing ------------------------------------------------------------------


def merge_spans(start, end, min_gap, min_width):
    """Intervals as the spans to draw: sorted, merged when the gap between
    them is under min_gap, each at least min_width wide. Returns (starts,
    widths, busy): busy is the share of each span its intervals cover (0 to
    1; overlapping intervals count once only as far as the cap at 1). At
    most one span per min_gap of the time they cover."""
    if len(start) == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    order = np.argsort(start, kind="stable")
    s = np.asarray(start, np.float64)[order]
    e = np.asarray(end, np.float64)[order]
    reach = np.maximum.accumulate(np.maximum(e, s + min_width))
    new = np.ones(len(s), bool)
    new[1:] = s[1:] > reach[:-1] + min_gap
    first = np.nonzero(new)[0]
    last = np.concatenate((first[1:], [len(s)])) - 1
    widths = reach[last] - s[first]
    busy = np.minimum(np.add.reduceat(np.maximum(e - s, 0), first) / np.maximum(widths, 1e-300), 1.0)
    return s[first], widths, busy


def _lane(ax, y, start, end, t0, per_px, color, height=0.8):
    """One lane of merged spans, each shaded by how much of it was busy."""
    from matplotlib.colors import to_rgba
    xs, ws, busy = merge_spans((start - t0) / 1e9, (end - t0) / 1e9, per_px, per_px)
    if len(xs):
        r, g, b, _ = to_rgba(color)
        faces = [(r, g, b, a) for a in 0.25 + 0.75 * busy]
        ax.broken_barh(list(zip(xs, ws)), (y - height / 2, height), facecolors=faces, linewidth=0)
    return len(xs)


def figure(session, width_in=WIDTH_IN, dpi=DPI):
    """The timeline of one GpuFlightSession as a matplotlib Figure."""
    plt = _pyplot()
    t0 = session.start_ns
    span_s = max((session.end_ns or session.last_ns) - t0, 1) / 1e9
    k, c, m = session.kernels, session.memcpy, session.memsets
    s = session.scopes
    work_lanes = sorted(set(zip(k["device"], k["stream"])) | set(zip(c["device"], c["stream"]))
                        | set(zip(m["device"], m["stream"])))
    scope_lanes = _scope_lanes(s)
    nlanes = len(work_lanes) + len(scope_lanes)
    lanes_h = max(1.5, 0.3 * nlanes + 0.6)
    fig, (ax_util, ax_mem, ax_tl) = plt.subplots(
        3, 1, sharex=True, figsize=(width_in, 2.2 + 2.2 + lanes_h), dpi=dpi,
        gridspec_kw={"height_ratios": [2.2, 2.2, lanes_h]})
    fig.suptitle("%s  (%s, %s)" % (session.session_id, session.start_time.strftime("%Y-%m-%d %H:%M:%S UTC"),
                                  "%.1f s" % span_s), fontsize=10)
    plot_px = width_in * dpi * 0.85
    per_px = span_s / plot_px  # seconds one pixel covers

    d = session.device_metrics
    for dev, g in d.groupby("device"):
        x = (g["ts_ns"].to_numpy() - t0) / 1e9
        ax_util.plot(x, g["gpu_util_pct"].to_numpy(), lw=1, label="GPU %d utilization" % dev)
        ax_util.plot(x, g["mem_util_pct"].to_numpy(), lw=0.8, ls="--", label="GPU %d memory controller" % dev)
        ax_mem.plot(x, g["mem_used_bytes"].to_numpy() / 2**30, lw=1, label="GPU %d memory used (NVML)" % dev)
    mem = session.memory
    for dev, g in mem.groupby("device"):
        x = (g["ts_ns"].to_numpy() - t0) / 1e9
        ax_mem.step(x, g["live_bytes"].to_numpy() / 2**30, where="post", lw=0.8,
                    label="GPU %d held by this session's allocations" % dev)
    ax_util.set_ylabel("%")
    ax_util.set_ylim(-2, 102)
    ax_mem.set_ylabel("GiB")
    for ax, empty_note in ((ax_util, "no GPU samples (NVML)"), (ax_mem, "no memory samples")):
        if ax.lines:
            ax.legend(loc="upper right", fontsize=7, ncol=2)
        else:
            ax.text(0.5, 0.5, empty_note, transform=ax.transAxes, ha="center", va="center", color="gray")

    labels, y = [], 0
    colors = {"kernels": "tab:blue", "copies": "tab:orange", "memsets": "tab:green"}
    for dev, stream in work_lanes:
        for frame, name in ((k, "kernels"), (c, "copies"), (m, "memsets")):
            sel = (frame["device"].to_numpy() == dev) & (frame["stream"].to_numpy() == stream)
            if sel.any():
                _lane(ax_tl, y, frame["start_ns"].to_numpy()[sel], frame["end_ns"].to_numpy()[sel], t0, per_px,
                      colors[name], 0.8 if name == "kernels" else 0.4)
        labels.append("GPU %d stream %d" % (dev, stream))
        y += 1
    nlabels = 0
    for kind, tid, depth, sel in scope_lanes:
        rows = s[sel]
        color = "tab:purple" if kind == "scope" else "tab:gray"
        _lane(ax_tl, y, rows["begin_ns"].to_numpy(), rows["end_ns"].to_numpy(), t0, per_px, color)
        # names on the longest bars that have room
        wide = rows[rows["dur_ns"] > 60 * per_px * 1e9].nlargest(MAX_LABELS, "dur_ns")
        for r in wide.itertuples():
            if nlabels >= MAX_LABELS:
                break
            ax_tl.text((r.begin_ns - t0) / 1e9, y, " " + str(r.name), va="center", ha="left", fontsize=6,
                       clip_on=True)
            nlabels += 1
        labels.append("%s tid %d depth %d" % ("scopes" if kind == "scope" else "NVTX", tid, depth))
        y += 1
    ax_tl.set_yticks(range(len(labels)))
    ax_tl.set_yticklabels(labels, fontsize=7)
    ax_tl.set_ylim(len(labels) - 0.5 if labels else 0.5, -0.5)
    if not labels:
        ax_tl.text(0.5, 0.5, "no kernels, copies or scopes", transform=ax_tl.transAxes, ha="center",
                   va="center", color="gray")
    ax_tl.set_xlim(0, span_s)
    ax_tl.set_xlabel("seconds from the session's start")
    from matplotlib.patches import Patch
    handles = [Patch(color=v, label=n) for n, v in colors.items()]
    handles += [Patch(color="tab:purple", label="gpufl scopes"), Patch(color="tab:gray", label="NVTX ranges")]
    ax_tl.legend(handles=handles, loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=7, ncol=5, frameon=False,
                 title="shade: the share of the span that was busy", title_fontsize=7)
    fig.tight_layout()
    return fig


def _scope_lanes(s):
    """(kind, tid, depth, row mask) of the scope and NVTX lanes to draw: the
    MAX_THREADS threads with the most scope time per kind, MAX_SCOPE_DEPTH
    levels each."""
    lanes = []
    if s.empty:
        return lanes
    ranges = s[s["kind"] != "nvtx_mark"]
    kinds = ranges["kind"].to_numpy()
    tids = ranges["tid"].to_numpy()
    depths = ranges["depth"].to_numpy()
    for kind in ("scope", "nvtx"):
        mine = kinds == kind
        if not mine.any():
            continue
        busy = ranges[mine & (depths == 0)].groupby("tid")["dur_ns"].sum().sort_values(ascending=False)
        for tid in busy.index[:MAX_THREADS]:
            for depth in range(MAX_SCOPE_DEPTH):
                sel = mine & (tids == tid) & (depths == depth)
                if sel.any():
                    full = np.zeros(len(s), bool)
                    full[np.nonzero((s["kind"] != "nvtx_mark").to_numpy())[0][sel]] = True
                    lanes.append((kind, int(tid), depth, full))
    return lanes
