"""gpufl.analyzer: sessions read through libgpufl's reader as DataFrames.

Checked on the bundled real sample (a PyTorch training run on an H200)
against what the C library's own report computes from the same trace
(`gpufl report --format json`: counts, GPU busy time, per-kernel totals,
per-path scope times), on sessions recorded here through gpufl.init (host
metrics and scopes), and on sessions written by hand as NDJSON for what a
machine without a GPU cannot record (kernels longer than 4.29 s, PyTorch op
ranges with sequence numbers, devices' metric fields left out); and the C
report's PyTorch ops against the analyzer's `ops` added up the same way.
"""

import json
import os
import subprocess
import time
import warnings

import pytest

np = pytest.importorskip("numpy")  # make test installs them (tools/install-deps.sh --test-tools)
pd = pytest.importorskip("pandas")

import gpufl  # noqa: E402
from conftest import SOURCE_DIR, report_json, run_python_ok  # noqa: E402
from gpufl.analyzer import GpuFlightSession, TraceError, sessions  # noqa: E402
import handmade as hm  # noqa: E402

SAMPLE = os.path.join(SOURCE_DIR, "samples", "train_sample")
EXACT_NS = 0xFFFFFFFF


@pytest.fixture(scope="module")
def sample():
    if not os.path.isfile(os.path.join(SAMPLE, "trace.gflt")):
        pytest.skip("no bundled sample beside the tests")
    with GpuFlightSession(SAMPLE) as s:
        yield s


@pytest.fixture(scope="module")
def sample_report():
    path = os.environ.get("GPUFL_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("GPUFL_CLI does not name the gpufl command")
    out = subprocess.run([path, "report", "--format", "json", "--top", "100", SAMPLE], check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


# ---- the bundled sample --------------------------------------------------------


def test_sample_identity(sample):
    assert sample.session_id == "train_sample-20261121-054005-1647-f559"
    assert sample.app_name == "train_sample" and sample.pid == 1647
    assert sample.source_format == "gflt" and sample.read_files == "trace.gflt"
    assert sample.meta["status"] == "ended"
    assert sample.start_time == pd.Timestamp("2026-11-21 05:40:05.762520581", tz="UTC")
    assert sample.duration_ns == sample.end_ns - sample.start_ns
    assert list(sample.devices["name"]) == ["NVIDIA H200"]
    assert sample.dropped == {} and sample.skipped_bytes == 0
    assert "sample" in repr(sample)


def test_sample_kernels_are_typed_and_whole(sample):
    k = sample.kernels
    assert len(k) == 18529 == sample.event_counts["kernel"]
    for col in ("start_ns", "end_ns", "dur_ns"):
        assert k[col].dtype == np.int64
    for col in ("name", "nvtx", "limiter", "scope_path"):
        assert isinstance(k[col].dtype, pd.CategoricalDtype)
    assert k["api_start_ns"].dtype == "Int64"
    assert k["device"].dtype == np.uint16 and k["stream"].dtype == np.uint32
    assert (k["end_ns"] - k["start_ns"] == k["dur_ns"]).all()
    assert k["start_ns"].is_monotonic_increasing
    assert k["name"].nunique() == 60
    known = k["api_start_ns"].notna()
    assert known.all()  # the Trace engine knew every launch's API call
    assert (k["api_start_ns"] <= k["start_ns"]).all() and (k["api_start_ns"] <= k["api_end_ns"]).all()
    assert set(k["limiter"].dropna().unique()) <= {"warps", "registers", "shared_memory", "blocks"}
    assert ((k["occupancy"] > 0) & (k["occupancy"] <= 1)).all()
    assert k["nvtx"].isna().any() and (k["nvtx"] == "step").sum() == 0 and (k["nvtx"] == "forward").any()
    assert (k["stack_id"] > 0).all() and k["scope"].eq(0).all() and k["scope_path"].isna().all()
    first = k.iloc[0]
    assert first["name"].startswith("void at::native::elementwise_kernel<128, 2,")
    assert (first["grid_x"], first["block_x"], first["registers"]) == (16, 128, 18)


def test_sample_agrees_with_the_c_report(sample, sample_report):
    r = sample_report
    summ = r["summary"]
    assert len(sample.kernels) == summ["kernels"] and int(sample.kernels["dur_ns"].sum()) == summ["kernel_ns"]
    assert len(sample.memcpy) == summ["copies"] and int(sample.memcpy["bytes"].sum()) == summ["copy_bytes"]
    assert int(sample.memcpy["dur_ns"].sum()) == summ["copy_ns"]
    assert len(sample.memsets) == summ["memsets"] and int(sample.memsets["dur_ns"].sum()) == summ["memset_ns"]
    assert len(sample.syncs) == summ["syncs"] and int(sample.syncs["dur_ns"].sum()) == summ["sync_ns"]
    assert (sample.memory["event"] == "alloc").sum() == summ["allocations"]
    busy = sample.gpu_busy().set_index("device")
    for d in summ["devices"]:
        assert busy.loc[d["device"], "busy_ns"] == d["busy_ns"]
        assert busy.loc[d["device"], "first_ns"] == d["first_ns"] and busy.loc[d["device"], "last_ns"] == d["last_ns"]
    # per kernel: launches and total time of the C hotspots
    g = sample.kernels.groupby("name", observed=True)["dur_ns"]
    for h in r["hotspots"]["kernels"]:
        assert g.size()[h["name"]] == h["dur"]["n"] and g.sum()[h["name"]] == h["dur"]["total"]
        assert g.min()[h["name"]] == h["dur"]["min"] and g.max()[h["name"]] == h["dur"]["max"]
    # per NVTX path: count, wall time, GPU ops and time launched inside
    mine = sample.inspect_scopes().set_index("path")
    for node in r["scopes"]["nvtx"]["nodes"]:
        row = mine.loc[node["path"]]
        assert (row["count"], row["total_ns"], row["max_ns"]) == (node["count"], node["wall"]["total"],
                                                                   node["wall"]["max"])
        assert (row["gpu_ops"], row["gpu_ns"]) == (node["gpu_ops"], node["gpu_ns"]), node["path"]


def test_sample_other_frames(sample):
    c = sample.memcpy
    assert set(c["kind"].cat.categories) >= {"HtoD", "DtoH"} and c["kind"].notna().all()
    assert (c["bandwidth_gbps"] > 0).all() and c["src_kind"].isin(["pageable", "pinned", "device"]).all()
    m = sample.memory
    assert m["ts_ns"].is_monotonic_increasing and (m["event"] == "alloc").all()
    assert (m["live_bytes"].diff().dropna() == m["bytes"].iloc[1:].astype(np.int64).to_numpy()).all()
    d = sample.device_metrics
    assert len(d) == 50 and d["gpu_util_pct"].max() == 98
    # PCIe counters are read every 250 ms and energy once a second: NaN between, never 0
    for col in ("pcie_rx_kbps", "energy_j"):
        assert d[col].notna().any() and d[col].isna().any() and (d[col].dropna() > 0).all()
    assert d["power_limit_w"].iloc[0] == 700.0
    h = sample.host_metrics
    assert len(h) == 50 and np.isnan(h["proc_cpu_pct"].iloc[0]) and h["proc_cpu_pct"].iloc[1:].notna().all()
    s = sample.scopes
    assert len(s) == 484 and (s["kind"] == "nvtx").all()
    assert set(s["path"].unique()) >= {"step", "step/forward", "step/backward", "eval"}
    cub = s[s["name"] == "cub::DeviceRadixSort"]
    assert (cub["domain"] == "CCCL").all() and (cub["depth"] == 0).all()
    steps = s[s["path"] == "step"]
    kids = s[s["path"] == "step/forward"]
    assert set(kids["parent"]) <= set(steps["id"])
    e = sample.scope_events
    assert len(e) == 2 * len(s) and e["ts_ns"].is_monotonic_increasing
    assert sample.ops.empty and list(sample.ops.columns)[:6] == ["start_ns", "end_ns", "dur_ns", "tid", "name",
                                                                  "seq"]
    assert sample.ops["seq"].dtype == "Int64"  # typed even when empty
    assert sample.perf.empty and sample.perf["value"].dtype == np.float64


def test_sample_inspect(sample, capsys):
    text = sample.print_summary()
    assert "train_sample" in text and "GPU 0 busy 810.00 ms" in text and "losses     none" in text
    assert capsys.readouterr().out == text
    hot = sample.inspect_hotspots(top_n=3, max_stack_depth=2)
    out = capsys.readouterr().out
    assert len(hot) == 3 and hot["total_ns"].is_monotonic_decreasing
    assert hot["name"].iloc[0].startswith("sm80_xmma_gemm") and "step/forward 95.2 %" in out
    assert all(len(s) <= 2 for s in hot["top_stacks"])
    stalls = sample.inspect_stalls()
    out = capsys.readouterr().out
    assert "pc_sampling" in out and "stream" in out
    dev = stalls[stalls["stream"].isna()].iloc[0]
    assert dev["busy_ns"] == 810001084 and dev["idle_ns"] == dev["span_ns"] - dev["busy_ns"]
    samples = sample.inspect_profile_samples()
    out = capsys.readouterr().out
    assert samples.empty and "recorded by the pc_sampling and deep engines" in out
    perf = sample.inspect_perf_metrics()
    out = capsys.readouterr().out
    assert perf.empty and "sass_metrics" in out and "range_profiler" in out



def test_sass_metrics_as_a_frame_and_per_kernel(tmp_path, capsys):
    """SASS metric rows come out one per instruction, a count the chip did
    not measure as <NA>; perf sums them per kernel and
    inspect_perf_metrics prints coalescing and active lanes."""
    t = hm.T0 + 1_000_000
    valid = 1 | 2 | 4  # no branch counts
    device = [hm.kernel(t, 300_000_000, name="k_strided(float*)", mangled="_Z9k_stridedPf")]
    for pc, inst, threads, sectors, ideal in ((0x10, 100, 3200, 3200, 400), (0x20, 100, 1600, 0, 0)):
        device.append({"type": "sass_metric", "ts_ns": t + 400_000_000, "device": 0, "corr": 0,
                       "function": "k_strided(float*)", "cubin_crc": 7, "pc_offset": pc, "valid": valid,
                       "inst_executed": inst, "thread_inst_executed": threads, "sectors": sectors,
                       "sectors_ideal": ideal, "file": "k.cu", "line": 3})
    with GpuFlightSession(hm.write_session(str(tmp_path / "sass"), device=device, end_ns=t + 1_000_000_000)) as s:
        rows = s.sass_metrics
        assert len(rows) == 2 and set(rows["kernel"]) == {"k_strided(float*)"}
        assert int(rows["sectors"].sum()) == 3200 and rows["branch_targets"].isna().all()
        assert rows.iloc[0]["line"] == 3 and rows.iloc[0]["file"] == "k.cu"
        perf = s.inspect_perf_metrics()
        out = capsys.readouterr().out
        sums = perf.set_index("metric")["value"]
        assert sums["inst_executed"] == 200 and sums["sectors_ideal"] == 400
        assert "coalescing 12.5 %" in out and "active lanes 75.0 %" in out


def test_range_metrics_as_a_frame(tmp_path):
    """Range profiler rows come out one per range and metric, with the
    scope's name and id, an NVTX range's scope_id 0, and the values read."""
    t = hm.T0 + 1_000_000
    device = [hm.kernel(t, 300_000_000, name="k(float*)", mangled="_Z1kPf")]
    for rng, scope, name, start in ((1, 5, "forward", t), (2, None, "nvtx:backward", t + 500_000_000)):
        for metric, value in (("dram__bytes_read.sum", 1048576.0 * rng), ("sm__warps_active.avg.pct_of_peak", 61.25)):
            line = {"type": "range_metric", "ts_ns": start, "end_ns": start + 100_000_000, "device": 0,
                    "range": rng, "name": name, "metric": metric, "value": value}
            if scope is not None:
                line["scope"] = scope
            device.append(line)
    with GpuFlightSession(hm.write_session(str(tmp_path / "rp"), device=device, end_ns=t + 1_000_000_000)) as s:
        r = s.range_metrics
        assert len(r) == 4 and s.frame("range_metrics") is r
        fwd = r[r["name"] == "forward"].set_index("metric")["value"]
        assert fwd["dram__bytes_read.sum"] == 1048576.0 and fwd["sm__warps_active.avg.pct_of_peak"] == 61.25
        assert set(r[r["name"] == "forward"]["scope_id"]) == {5}
        assert set(r[r["name"] == "nvtx:backward"]["scope_id"]) == {0}
        assert (r["end_ns"] - r["ts_ns"] == 100_000_000).all() and set(r["range"]) == {1, 2}


# ---- finding sessions --------------------------------------------------------------


def _record(logs, app, scopes=("a",)):
    assert gpufl.init(app_name=app, log_path=logs, system_sample_rate_ms=5)
    for name in scopes:
        with gpufl.Scope(name):
            pass
    gpufl.shutdown()


def test_sessions_and_choice(logs):
    _record(logs, "alpha")
    _record(logs, "beta")
    listed = sessions(logs)
    assert list(listed.columns) == ["session_id", "app_name", "start", "status", "files", "path"]
    assert sorted(listed["app_name"]) == ["alpha", "beta"] and (listed["status"] == "ended").all()
    assert listed["start"].is_monotonic_decreasing
    with pytest.warns(UserWarning, match="2 sessions under .* match; reading the newest"):
        s = GpuFlightSession(logs)
    assert s.session_id == listed["session_id"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert GpuFlightSession(logs, log_prefix="alpha").app_name == "alpha"
        beta_id = listed[listed["app_name"] == "beta"]["session_id"].iloc[0]
        assert GpuFlightSession(logs, session_id=beta_id).app_name == "beta"
        d = listed["path"][0]
        assert GpuFlightSession(d).session_id == listed["session_id"][0]  # a session directory itself
    with pytest.raises(FileNotFoundError, match="whose name starts with 'gamma'") as e:
        GpuFlightSession(logs, log_prefix="gamma")
    assert logs in str(e.value)
    with pytest.raises(FileNotFoundError, match="session_id 'nope'"):
        GpuFlightSession(logs, session_id="nope")


def test_missing_damaged_and_truncated(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        GpuFlightSession(str(tmp_path / "nowhere"))
    assert "nowhere" in str(e.value)
    src = os.path.join(SAMPLE, "trace.gflt")
    with open(src, "rb") as f:
        data = f.read()
    bad = tmp_path / "bad.gflt"
    bad.write_bytes(data[:20] + b"X" + data[21:])
    with pytest.raises(TraceError) as e:
        GpuFlightSession(str(bad))
    assert str(bad) in str(e.value) and e.value.code == -8 and e.value.path == str(bad)
    assert isinstance(e.value, gpufl.GpuflError)
    cut = tmp_path / "cut.gflt"
    cut.write_bytes(data[:len(data) - 5000])  # a writer killed mid-chunk
    with pytest.warns(UserWarning, match="skipped .* bytes of a torn last line or chunk"):
        s = GpuFlightSession(str(cut))
    assert s.skipped_bytes > 0 and 0 < len(s.kernels) < 18529
    assert s.session_id == "train_sample-20261121-054005-1647-f559"


# ---- recorded here: host metrics and scopes ------------------------------------------


def test_recorded_scopes_and_host_metrics(logs):
    assert gpufl.init(app_name="rec", log_path=logs, system_sample_rate_ms=5)
    with gpufl.Scope("train"):
        for _ in range(2):
            with gpufl.Scope("epoch"):
                with gpufl.Scope("step"):
                    time.sleep(0.03)  # sampled every 5 ms while inside a scope
    gpufl.shutdown()
    with GpuFlightSession(logs) as s:
        sc = s.scopes
        assert list(sc["path"]) == ["train", "train/epoch", "train/epoch/step", "train/epoch",
                                    "train/epoch/step"]
        assert (sc["kind"] == "scope").all() and list(sc["depth"]) == [0, 1, 2, 1, 2]
        train_id = sc["id"].iloc[0]
        assert (sc["parent"].iloc[[1, 3]] == train_id).all() and sc["parent"].iloc[0] == 0
        assert (sc["dur_ns"] > 0).all() and not sc["unended"].any()
        ev = s.scope_events
        assert list(ev["event"][:4]) == ["begin", "begin", "begin", "end"]
        assert list(ev["name"][:4]) == ["train", "epoch", "step", "step"]
        assert ev["ts_ns"].is_monotonic_increasing and (ev["event"] == "end").sum() == 5
        h = s.host_metrics
        assert len(h) >= 2 and h["ram_total_bytes"].notna().all() and (h["cpu_count"] > 0).all()
        assert s.kernels.empty and s.kernels["start_ns"].dtype == np.int64
        assert isinstance(s.kernels["name"].dtype, pd.CategoricalDtype)
        assert s.device_metrics.empty and s.ops.empty
        table = s.inspect_scopes()
        assert list(table["path"]) == ["train", "train/epoch", "train/epoch/step"]
        assert list(table["count"]) == [1, 2, 2]


# ---- hand-made sessions: device work, exact times, PyTorch ops -------------------------


def test_exact_times_patched(tmp_path):
    t = hm.T0
    long_ns = 5_000_000_000  # longer than the 32-bit offsets hold
    device = [
        hm.kernel(t + 1000, 2000, "short", corr=1, api_start=t + 500),
        hm.kernel(t + 10_000, long_ns, "long", corr=2, api_start=t + 9000, api_end=t + 9500),
        # launched 6 s before it started (a deep queue)
        hm.kernel(t + 6_000_100_000, 3000, "late", corr=3, api_start=t + 100_000, api_end=t + 100_500),
        # its call returned 4.5 s after it was made
        hm.kernel(t + 6_000_200_000, 3000, "slow_call", corr=4, api_start=t + 6_000_100_000,
                  api_end=t + 10_500_100_000),
        hm.memcpy(t + 20_000, long_ns, "DtoH", corr=5, api_start_ns=t + 19_000, api_end_ns=t + 21_000),
    ]
    d = hm.write_session(str(tmp_path / "exact"), device=device, end_ns=t + 11_000_000_000)
    with GpuFlightSession(d) as s:
        raw = s.trace.table("kernels")
        assert raw.dur_ns.max() == EXACT_NS and len(raw.exact) >= 2  # the trace holds them apart
        k = s.kernels.set_index("name")
        assert k.loc["long", "dur_ns"] == long_ns and k.loc["long", "end_ns"] == t + 10_000 + long_ns
        assert k.loc["short", "dur_ns"] == 2000
        assert k.loc["late", "api_start_ns"] == t + 100_000 and k.loc["late", "api_end_ns"] == t + 100_500
        assert k.loc["slow_call", "api_end_ns"] == t + 10_500_100_000
        assert k.loc["short", "api_start_ns"] == t + 500 and k.loc["short", "api_end_ns"] == t + 1500
        c = s.memcpy.iloc[0]
        assert c["dur_ns"] == long_ns and c["kind"] == "DtoH" and c["api_start_ns"] == t + 19_000
        # the same values as the C accessors (gpufl_trace_kernel_end ...) give
        from gpufl import _trace
        start, end, api_start, api_end = _trace.exact_times(raw)
        order = s.kernels.index
        assert list(end) == list(s.kernels["end_ns"][order])
        assert list(api_start) == list(s.kernels["api_start_ns"].fillna(0).astype(np.int64))


def test_device_work_attribution_and_metrics(tmp_path):
    t = hm.T0
    scope = [
        {"type": "scope_begin", "ts_ns": t + 100, "tid": 100, "id": 11, "parent": 0, "depth": 0, "name": "train"},
        {"type": "scope_end", "ts_ns": t + 900_000, "begin_ns": t + 100, "dur_ns": 899_900, "tid": 100, "id": 11,
         "parent": 0, "depth": 0, "name": "train"},
    ]
    device = [hm.kernel(t + 1000 + i * 10_000, 5000, "gemm" if i % 2 else "relu", stream=7 + i % 2, corr=i + 1,
                        api_start=t + 500 + i * 10_000, scope=11, nvtx="fwd", ext_id=77 + i, stack=3)
              for i in range(10)]
    device.append(hm.kernel(t + 990_000, 1000, "outside", corr=99, tid=200))
    system = [
        {"type": "device_metrics", "ts_ns": t + 1000, "device": 0, "gpu_util_pct": 55, "mem_used_bytes": 1 << 30,
         "mem_total_bytes": 8 << 30, "power_mw": 150500},
        {"type": "device_metrics", "ts_ns": t + 2000, "device": 0, "temp_c": 61},
        {"type": "host_metrics", "ts_ns": t + 1000, "cpu_count": 8, "proc_cpu_pct": 12.5, "sys_cpu_pct": 40.25},
    ]
    d = hm.write_session(str(tmp_path / "work"), device=device, scope=scope, system=system, end_ns=t + 1_000_000)
    with GpuFlightSession(d) as s:
        k = s.kernels
        assert len(k) == 11 and list(k["stream"][:2]) == [7, 8]
        inside = k[k["name"] != "outside"]
        assert (inside["scope"] == 11).all() and (inside["scope_path"] == "train").all()
        assert (inside["nvtx"] == "fwd").all() and list(inside["external_id"]) == list(range(77, 87))
        out = k[k["name"] == "outside"].iloc[0]
        assert out["scope"] == 0 and pd.isna(out["scope_name"]) and pd.isna(out["nvtx"]) and out["tid"] == 200
        assert pd.isna(out["api_start_ns"])  # no API call known: <NA>, never 0
        sc = s.scopes.iloc[0]
        assert (sc["gpu_ops"], sc["gpu_ns"]) == (10, 50_000)
        dm = s.device_metrics
        assert dm["gpu_util_pct"].tolist()[0] == 55 and np.isnan(dm["gpu_util_pct"].iloc[1])
        assert dm["temp_c"].isna().iloc[0] and dm["temp_c"].iloc[1] == 61
        assert dm["power_w"].iloc[0] == pytest.approx(150.5) and dm["mem_used_bytes"].iloc[0] == 1 << 30
        hmx = s.host_metrics.iloc[0]
        assert (hmx["proc_cpu_pct"], hmx["sys_cpu_pct"], hmx["cpu_count"]) == (12.5, 40.25, 8)
        assert np.isnan(hmx["ram_used_bytes"])
        stalls = s.inspect_stalls()
        per_stream = stalls.dropna(subset=["stream"]).set_index("stream")
        assert per_stream.loc[7, "work"] == 6 and per_stream.loc[7, "busy_ns"] == 5 * 5000 + 1000


def _torch_session(tmp_path):
    """One training step as gpufl.torch records it: module ranges and op
    ranges on the main thread (forward), backward ops on autograd's
    thread, and kernels launched inside the ops."""
    t = hm.T0
    main, autograd = 100, 200
    scope = [
        hm.nvtx(t + 1000, t + 100_000, "nn.Module: Net", main, 0, 1),
        hm.nvtx(t + 2000, t + 50_000, "nn.Module: Net.fc", main, 1, 2),
        hm.nvtx(t + 3000, t + 40_000, "aten::linear", main, 2, 3, seq=5),
        hm.nvtx(t + 4000, t + 10_000, "aten::t", main, 3, 4, seq=5),
        hm.nvtx(t + 11_000, t + 39_000, "aten::addmm", main, 3, 5, seq=6),
        hm.nvtx(t + 60_000, t + 90_000, "aten::relu", main, 1, 6, seq=7),
        hm.nvtx(t + 200_000, t + 260_000, "AddmmBackward0", autograd, 0, 7, seq=6),
        hm.nvtx(t + 205_000, t + 250_000, "aten::mm", autograd, 1, 12),  # run by the backward op
        hm.nvtx(t + 270_000, t + 280_000, "TBackward0", autograd, 0, 8, seq=5),
        # an op sharing its seq with a forward op of another thread, named otherwise
        hm.nvtx(t + 290_000, t + 295_000, "aten::threshold_backward", autograd, 0, 9, seq=7),
        hm.nvtx(t + 300_000, t + 310_000, "aten::empty", main, 0, 10),  # an op without seq
        hm.nvtx(t + 320_000, t + 330_000, "forward", main, 0, 11),  # a user's range: not an op
    ]
    device = [
        hm.kernel(t + 20_000, 4000, "gemm", tid=main, corr=1, api_start=t + 12_000, nvtx="aten::addmm"),
        hm.kernel(t + 25_000, 1000, "bias", tid=main, corr=2, api_start=t + 13_000, nvtx="aten::addmm"),
        hm.kernel(t + 70_000, 2000, "relu", tid=main, corr=3, api_start=t + 61_000, nvtx="aten::relu"),
        hm.kernel(t + 230_000, 8000, "gemm_bwd", tid=autograd, corr=4, api_start=t + 210_000,
                  nvtx="AddmmBackward0"),
    ]
    return hm.write_session(str(tmp_path / "torch"), device=device, scope=scope, end_ns=t + 400_000)


def test_ops_from_pytorch_ranges(tmp_path):
    with GpuFlightSession(_torch_session(tmp_path)) as s:
        ops = s.ops.set_index("name")
        assert set(ops.index) == {"aten::linear", "aten::t", "aten::addmm", "aten::relu", "AddmmBackward0",
                                  "TBackward0", "aten::threshold_backward", "aten::empty", "aten::mm"}
        mm = ops.loc["aten::mm"]
        assert mm["is_backward"] and mm["forward_op"] == "aten::addmm" and mm["module"] == "Net.fc"
        assert pd.isna(mm["seq"]) and mm["kernels"] == 1  # the backward kernel ran inside it
        assert ops["seq"].dtype == "Int64" and pd.isna(ops.loc["aten::empty", "seq"])
        assert ops.loc["aten::addmm", "seq"] == 6 and ops.loc["aten::addmm", "depth"] == 3
        assert not ops.loc["aten::addmm", "is_backward"] and not ops.loc["aten::empty", "is_backward"]
        assert ops.loc["AddmmBackward0", "is_backward"] and ops.loc["TBackward0", "is_backward"]
        assert ops.loc["aten::threshold_backward", "is_backward"]  # by seq, across threads
        assert ops.loc["AddmmBackward0", "forward_op"] == "aten::addmm"
        assert ops.loc["TBackward0", "forward_op"] == "aten::t"  # the innermost op with seq 5
        assert ops.loc["aten::threshold_backward", "forward_op"] == "aten::relu"
        assert pd.isna(ops.loc["aten::addmm", "forward_op"])
        assert ops.loc["aten::addmm", "module"] == "Net.fc" and ops.loc["aten::relu", "module"] == "Net"
        assert ops.loc["AddmmBackward0", "module"] == "Net.fc"  # its forward op's
        assert ops.loc["TBackward0", "module"] == "Net.fc" and pd.isna(ops.loc["aten::empty", "module"])
        assert (ops.loc["aten::addmm", "kernels"], ops.loc["aten::addmm", "gpu_ns"]) == (2, 5000)
        assert ops.loc["aten::linear", "kernels"] == 2  # inclusive of the ops inside it
        assert (ops.loc["AddmmBackward0", "kernels"], ops.loc["AddmmBackward0", "gpu_ns"]) == (1, 8000)
        assert ops.loc["aten::t", "kernels"] == 0
        assert (ops["dur_ns"] == ops["end_ns"] - ops["start_ns"]).all()
        sc = s.scopes.set_index("name")
        assert sc.loc["aten::addmm", "path"] == "nn.Module: Net/nn.Module: Net.fc/aten::linear/aten::addmm"
        assert sc.loc["aten::addmm", "parent"] == 3 and sc.loc["nn.Module: Net", "parent"] == 0
        k = s.kernels.set_index("name")
        assert k.loc["gemm_bwd", "nvtx"] == "AddmmBackward0"
        # every kernel carries its op, the forward op of a backward one, and the module
        assert (k.loc["gemm", "op"], k.loc["gemm", "module"]) == ("aten::addmm", "Net.fc")
        assert pd.isna(k.loc["gemm", "forward_op"])
        assert (k.loc["relu", "op"], k.loc["relu", "module"]) == ("aten::relu", "Net")
        bwd = k.loc["gemm_bwd"]
        assert (bwd["op"], bwd["forward_op"], bwd["module"]) == ("aten::mm", "aten::addmm", "Net.fc")
        for c in ("op", "forward_op", "module"):
            assert isinstance(k[c].dtype, pd.CategoricalDtype)
        lean = s.frame("kernels", ["name", "op"]).set_index("name")
        assert lean.loc["gemm_bwd", "op"] == "aten::mm"


def test_mark_is_no_parent(tmp_path):
    """An NVTX mark (an instant, recorded at depth 0) inside a module range
    encloses nothing: the op after it is the module's, not the mark's."""
    t, main = hm.T0, 100
    scope = [
        hm.nvtx(t + 1000, t + 100_000, "nn.Module: Net", main, 0, 1),
        {"type": "nvtx_mark", "ts_ns": t + 2000, "tid": main, "name": "checkpoint"},
        hm.nvtx(t + 3000, t + 9000, "aten::relu", main, 1, 2, seq=1),
    ]
    device = [hm.kernel(t + 5000, 1000, "relu", tid=main, corr=1, api_start=t + 4000)]
    with GpuFlightSession(hm.write_session(str(tmp_path / "mark"), device=device, scope=scope,
                                           end_ns=t + 200_000)) as s:
        sc = s.scopes.set_index("name")
        assert sc.loc["aten::relu", "path"] == "nn.Module: Net/aten::relu"
        assert s.ops.set_index("name").loc["aten::relu", "module"] == "Net"
        assert s.kernels.set_index("name").loc["relu", "module"] == "Net"


def test_op_columns_without_ops(sample):
    """A session without PyTorch op ranges has the op columns, all <NA>."""
    k = sample.kernels
    for c in ("op", "forward_op", "module"):
        assert isinstance(k[c].dtype, pd.CategoricalDtype) and k[c].isna().all()


def _torch_step(tmp_path):
    """_torch_session's step with what the C report adds up besides: the
    autograd engine's wrapper around a backward op (no seq; a kernel of its
    own), an allocation in an op, and a kernel outside any op (the same
    session as tests/support/ops_fixture.h, without its copy: the Python
    ops count kernels only); and an op without a seq run by a forward op
    (aten::clamp_min inside aten::relu) with a kernel of its own."""
    t = hm.T0
    main, autograd = 100, 200
    wrapper = "autograd::engine::evaluate_function: AddmmBackward0"
    scope = [
        hm.nvtx(t + 1000, t + 100_000, "nn.Module: Net", main, 0, 1),
        hm.nvtx(t + 2000, t + 50_000, "nn.Module: Net.fc", main, 1, 2),
        hm.nvtx(t + 3000, t + 40_000, "aten::linear", main, 2, 3, seq=5),
        hm.nvtx(t + 4000, t + 10_000, "aten::t", main, 3, 4, seq=5),
        hm.nvtx(t + 11_000, t + 39_000, "aten::addmm", main, 3, 5, seq=6),
        hm.nvtx(t + 60_000, t + 90_000, "aten::relu", main, 1, 6, seq=7),
        hm.nvtx(t + 62_000, t + 80_000, "aten::clamp_min", main, 2, 14),
        hm.nvtx(t + 199_000, t + 262_000, wrapper, autograd, 0, 13),
        hm.nvtx(t + 200_000, t + 260_000, "AddmmBackward0", autograd, 1, 7, seq=6),
        hm.nvtx(t + 205_000, t + 250_000, "aten::mm", autograd, 2, 12),
        hm.nvtx(t + 270_000, t + 280_000, "TBackward0", autograd, 0, 8, seq=5),
        hm.nvtx(t + 290_000, t + 295_000, "aten::threshold_backward", autograd, 0, 9, seq=7),
        hm.nvtx(t + 300_000, t + 310_000, "aten::empty", main, 0, 10),
        hm.nvtx(t + 320_000, t + 330_000, "forward", main, 0, 11),
    ]
    k = [("gemm", 20_000, 4000, main, 12_000, "aten::addmm"), ("bias", 25_000, 1000, main, 13_000, "aten::addmm"),
         ("relu", 70_000, 2000, main, 61_000, "aten::relu"), ("clamp", 75_000, 600, main, 63_000, "aten::clamp_min"),
         ("gemm_bwd", 230_000, 8000, autograd, 210_000, "aten::mm"),
         ("wrap", 239_000, 500, autograd, 199_500, wrapper), ("t_bwd", 272_000, 3000, autograd, 271_000, "TBackward0"),
         ("thr_bwd", 292_000, 1500, autograd, 291_000, "aten::threshold_backward"),
         ("outside", 326_000, 700, main, 325_000, "forward")]
    device = [hm.kernel(t + start, dur, name, tid=tid, corr=i + 1, api_start=t + api, nvtx=nvtx)
              for i, (name, start, dur, tid, api, nvtx) in enumerate(k)]
    device.append({"type": "mem_alloc", "ts_ns": t + 305_000, "device": 0, "context": 1, "stream": 0, "corr": 0,
                   "address": "0x7f0000000000", "bytes": 4096, "kind": "device", "tid": main, "nvtx": "aten::empty"})
    return hm.write_session(str(tmp_path / "step"), device=device, scope=scope, end_ns=t + 1_000_000)


def _ops_as_the_report_counts(s):
    """The Python analyzer's ops (one row per range, kernels launched inside
    it, nested ops included) added up as `gpufl report` does: each range's
    own time (less that of the op ranges directly inside it), counted for
    its forward op (backward ranges) or itself, forward and backward apart;
    a call is a range not inside one of the same op. Keyed (module, op,
    backward_only); also the kernel time launched in no op."""
    ops = s.ops
    nvtx = s.scopes[s.scopes["kind"] == "nvtx"]
    parent_of = dict(zip(nvtx["id"].tolist(), nvtx["parent"].tolist()))
    # the forward op of each backward op: the innermost, then latest, forward op of its seq
    forward = ops[~ops["is_backward"] & ops["seq"].notna()].sort_values(["seq", "depth", "start_ns"])
    has_backward = set(forward.groupby("seq").tail(1).loc[
        lambda f: f["seq"].isin(ops[ops["is_backward"]]["seq"].dropna())]["id"].tolist())
    rows = {r.id: dict(r=r) for r in ops.itertuples()}

    def op_around(i):
        p = parent_of.get(i, 0)
        while p and p not in rows:
            p = parent_of.get(p, 0)
        return p

    for i, row in rows.items():
        row["up"] = op_around(i)
    for i, row in rows.items():
        r = row["r"]
        orphan = bool(r.is_backward) and pd.isna(r.forward_op)
        name, module = r.name if not r.is_backward or orphan else r.forward_op, r.module
        if not r.is_backward:  # forward work counts for the nearest op around it with a backward op
            up = i
            while up and up not in has_backward:
                up = rows[up]["up"]
            if up:
                name, module = rows[up]["r"].name, rows[up]["r"].module
        row["key"] = (None if pd.isna(module) else module, name, orphan)
    sums = {}
    outside = int(s.kernels["dur_ns"].sum())
    for i, row in rows.items():
        r = row["r"]
        inner = [x["r"] for x in rows.values() if x["up"] == i]
        own_ns = int(r.gpu_ns) - sum(int(x.gpu_ns) for x in inner)
        own_k = int(r.kernels) - sum(int(x.kernels) for x in inner)
        if not row["up"]:
            outside -= int(r.gpu_ns)
        a = sums.setdefault(row["key"], dict(calls=0, backward_calls=0, kernels=0, forward_ns=0, backward_ns=0))
        a["kernels"] += own_k
        a["backward_ns" if r.is_backward else "forward_ns"] += own_ns
        if not row["up"] or rows[row["up"]]["key"] != row["key"]:
            a["backward_calls" if r.is_backward else "calls"] += 1
    return sums, outside


def test_report_ops_agree_with_python_ops(tmp_path):
    """`gpufl report --format json`'s ops (the C analysis) against the Python
    analyzer's ops on the same hand-made step, by module and by op."""
    step = _torch_step(tmp_path)
    report = report_json(step)["ops"]
    with GpuFlightSession(step) as s:
        want, outside = _ops_as_the_report_counts(s)
    fields = ("calls", "backward_calls", "kernels", "forward_ns", "backward_ns")
    got = {}
    for m in report["modules"]:
        for o in m["ops"]:
            got[(m["module"], o["name"], o["backward_only"])] = {f: o[f] for f in fields}
    assert got == want
    by_op = {}
    for (_, name, orphan), a in want.items():
        b = by_op.setdefault((name, orphan), dict.fromkeys(fields, 0))
        for f in fields:
            b[f] += a[f]
    assert {(o["name"], o["backward_only"]): {f: o[f] for f in fields} for o in report["ops"]} == by_op
    assert report["outside_ns"] == outside == 700
    assert report["op_ranges"] == len(s.ops) and report["backward_ranges"] == int(s.ops["is_backward"].sum())
    # what the step was built to show
    assert got[("Net.fc", "aten::addmm", False)] == dict(calls=1, backward_calls=1, kernels=3, forward_ns=5000,
                                                         backward_ns=8000)
    assert got[(None, "autograd::engine::evaluate_function: AddmmBackward0", True)]["backward_ns"] == 500
    # an op run by a forward op counts for it, beside that op's backward time, as one call
    assert got[("Net", "aten::relu", False)] == dict(calls=1, backward_calls=1, kernels=3, forward_ns=2600,
                                                     backward_ns=1500)
    assert not any(name == "aten::clamp_min" for _, name, _ in got)
    assert [o["name"] for o in report["ops"]][:3] == ["aten::addmm", "aten::relu", "aten::t"]
    assert report["ops"][-2]["name"] == "aten::empty" and report["ops"][-2]["allocs"] == 1


# ---- the package's boundaries ------------------------------------------------------------


def test_recording_does_not_import_pandas():
    r = run_python_ok("""
        import sys
        import gpufl
        gpufl.init(enabled=False)
        with gpufl.Scope("x"):
            pass
        print(sorted(m for m in ("pandas", "numpy", "matplotlib") if m in sys.modules))
    """)
    assert r.stdout.strip() == "[]"


def test_closed_session_keeps_built_frames(tmp_path):
    s = GpuFlightSession(SAMPLE)
    k = s.kernels
    s.close()
    assert len(k) == 18529 and k["start_ns"].iloc[-1] > 0  # still readable: views keep the trace alive
    with pytest.raises(ValueError, match="closed"):
        s.memcpy
    copy = k.copy()
    copy.loc[0, "start_ns"] = 1  # a copy owns writable memory
    assert copy["start_ns"].iloc[0] == 1


def test_frame_with_some_columns():
    cols = ["name", "start_ns", "dur_ns", "api_end_ns", "scope_path", "occupancy"]
    with GpuFlightSession(SAMPLE) as s:
        lean = s.frame("kernels", cols)  # built alone: only these columns
        assert "kernels" not in s._frames and list(lean.columns) == cols
        pd.testing.assert_frame_equal(lean, s.kernels[cols])
        pd.testing.assert_frame_equal(s.frame("memcpy", ["kind", "bytes"]), s.memcpy[["kind", "bytes"]])
        with pytest.raises(KeyError, match="no DataFrame 'nope'"):
            s.frame("nope")
        with pytest.raises(KeyError, match="not columns of kernels: bogus"):
            GpuFlightSession(SAMPLE).frame("kernels", ["bogus"])


def test_pc_samples_as_a_frame_and_in_the_stall_summary(tmp_path, capsys):
    """PC samples come out one row per PC and reason, the kernel named as its
    launches are; inspect_profile_samples and inspect_stalls sum them."""
    t = hm.T0 + 1_000_000
    device = [hm.kernel(t, 300_000_000, name="k_mem(unsigned int*)", mangled="_Z5k_memPj"),
              {"type": "pc_sample", "ts_ns": t + 400_000_000, "device": 0, "since_ns": t, "function": "_Z5k_memPj",
               "cubin_crc": "0xabc", "pc_offset": "0x20", "file": "k.cu", "line": 12,
               "stalls": {"long_scoreboard": 600, "selected": 100}},
              {"type": "pc_sample", "ts_ns": t + 400_000_000, "device": 0, "since_ns": t, "function": "_Z5k_memPj",
               "cubin_crc": "0xabc", "pc_offset": "0x30", "stalls": {"wait": 300}}]
    with GpuFlightSession(hm.write_session(str(tmp_path / "pcs"), device=device, end_ns=t + 1_000_000_000)) as s:
        samples = s.inspect_profile_samples()
        out = capsys.readouterr().out
        assert len(samples) == 3 and int(samples["samples"].sum()) == 1000
        assert set(samples["kernel"]) == {"k_mem(unsigned int*)"} and set(samples["function"]) == {"_Z5k_memPj"}
        row = samples[samples["stall_reason"] == "long_scoreboard"].iloc[0]
        assert row["file"] == "k.cu" and row["line"] == 12 and row["pc_offset"] == 0x20
        assert "1 000 warp samples" in out and "long_scoreboard 60.0 %, wait 30.0 %" in out
        s.inspect_stalls()
        assert "Warp stall reasons (1 000 samples): long_scoreboard 60.0 %" in capsys.readouterr().out
