"""gpufl.viz: the timeline stays readable and cheap on a long, busy session.

A hand-made 60-second session of 100 000 kernels on 4 streams (with copies,
scopes and GPU samples) is drawn to a PNG within a few seconds, and the
figure holds a bounded number of rectangles however many kernels there are:
work closer than a pixel is merged.
"""

import os
import time

import pytest

np = pytest.importorskip("numpy")  # make test installs them (tools/install-deps.sh --test-tools)
pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from conftest import SOURCE_DIR  # noqa: E402
from gpufl import viz  # noqa: E402
import handmade as hm  # noqa: E402

SAMPLE = os.path.join(SOURCE_DIR, "samples", "train_sample")
KERNELS = 100_000
SECONDS = 60


@pytest.fixture(scope="module")
def busy_session(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("viz") / "busy-20261126-120000-1-00000000000000bb")
    rng = np.random.default_rng(1)
    t0 = hm.T0
    starts = np.sort(rng.integers(0, SECONDS * 10**9, KERNELS)) + t0
    durs = rng.integers(2_000, 400_000, KERNELS)
    device = [hm.kernel(int(s), int(u), "k%d" % (i % 40), stream=7 + i % 4, corr=i + 1)
              for i, (s, u) in enumerate(zip(starts, durs))]
    device += [hm.memcpy(t0 + i * 10**9, 2_000_000, corr=KERNELS + i) for i in range(SECONDS)]
    scope, sid = [], 1
    for step in range(SECONDS * 4):
        b = t0 + step * 250_000_000
        scope.append({"type": "scope_begin", "ts_ns": b, "tid": 100, "id": sid, "parent": 0, "depth": 0,
                      "name": "step"})
        scope.append({"type": "scope_end", "ts_ns": b + 200_000_000, "begin_ns": b, "dur_ns": 200_000_000,
                      "tid": 100, "id": sid, "parent": 0, "depth": 0, "name": "step"})
        sid += 1
    system = [{"type": "device_metrics", "ts_ns": t0 + i * 100_000_000, "device": 0, "gpu_util_pct": i % 100,
               "mem_util_pct": 10, "mem_used_bytes": (1 + i % 7) << 30, "mem_total_bytes": 80 << 30}
              for i in range(SECONDS * 10)]
    return hm.write_session(d, device=device, scope=scope, system=system, end_ns=t0 + SECONDS * 10**9)


def _rectangles(fig):
    return sum(len(c.get_paths()) for ax in fig.axes for c in ax.collections) + \
        sum(len(ax.patches) for ax in fig.axes)


def test_busy_session_draws_fast_and_bounded(busy_session, tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("MPLBACKEND", raising=False)
    t = time.monotonic()
    (s,) = viz.init(busy_session)
    assert len(s.kernels) == KERNELS
    out = str(tmp_path / "timeline.png")
    assert viz.save(out) == [out]
    elapsed = time.monotonic() - t
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert elapsed < 20, "drawing took %.1f s" % elapsed
    import matplotlib
    assert matplotlib.get_backend().lower() == "agg"
    fig = viz.figure(s)
    rects = _rectangles(fig)
    # 100 000 kernels merged: at most one rectangle per two pixels and lane
    lanes = len(fig.axes[2].get_yticklabels())
    assert 0 < rects < lanes * viz.WIDTH_IN * viz.DPI / 2, rects
    labels = [t.get_text() for t in fig.axes[2].get_yticklabels()]
    assert labels[:4] == ["GPU 0 stream %d" % st for st in range(7, 11)] and "scopes tid 100 depth 0" in labels


def test_merge_spans():
    xs, ws, busy = viz.merge_spans(np.array([0.0, 1.0, 1.05, 5.0]), np.array([0.5, 1.02, 2.0, 5.0]), 0.1, 0.01)
    assert list(xs) == [0.0, 1.0, 5.0] and list(np.round(ws, 6)) == [0.5, 1.0, 0.01]
    assert list(np.round(busy, 3)) == [1.0, 0.97, 0.0]
    xs, ws, busy = viz.merge_spans(np.zeros(0), np.zeros(0), 0.1, 0.1)
    assert len(xs) == 0


def test_init_patterns_and_errors(busy_session, tmp_path):
    with pytest.raises(FileNotFoundError):
        viz.init(str(tmp_path / "none*"))
    parent = os.path.dirname(busy_session)
    assert [x.path for x in viz.init(parent)] == [busy_session]  # a directory of sessions
    assert [x.path for x in viz.init(os.path.join(parent, "busy-*"))] == [busy_session]
    if os.path.isfile(os.path.join(SAMPLE, "trace.gflt")):
        got = viz.init(os.path.join(SAMPLE, "trace.gflt"))
        assert got[0].app_name == "train_sample"
        paths = viz.save(str(tmp_path / "sample.png"))
        assert os.path.getsize(paths[0]) > 10000
        with pytest.warns(UserWarning, match="no display"):
            viz.show()
