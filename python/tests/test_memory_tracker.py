"""MemoryTracker (the reference's API) over the PyTorch stand-in: the
sampling loop's events, alerts and thresholds, statistics, the timeline,
the TelemetryEventV2 exports, device resolution, the watchdog; and, with a
gpufl session, its samples as allocator states of the session."""

import csv
import json
import time

import pytest

import gpufl
from conftest import one_session
from gpufl.analyzer import GpuFlightSession
from gpufl.memory import MemoryTracker, MemoryWatchdog, TrackingEvent, _record, load_telemetry_events
from gpufl.memory.telemetry import FIELDS, validate_telemetry_record

MiB = 1 << 20


def wait_for(cond, timeout=10.0):
    deadline = time.time() + timeout
    while not cond():
        assert time.time() < deadline, "timed out"
        time.sleep(0.005)


def tracker(**kw):
    kw.setdefault("sampling_interval", 0.005)
    kw.setdefault("enable_oom_flight_recorder", False)
    return MemoryTracker(**kw)


def test_defaults(fake_torch):
    t = MemoryTracker()
    assert str(t.device) == "cuda:0" and t.backend == "cuda" and t.total_memory == 8 << 30
    assert t.sampling_interval == 0.1 and t.max_events == 10000 and t.enable_alerts
    assert t.oom_buffer_size == 5000 and t.oom_flight_recorder.config.enabled
    c = t.oom_flight_recorder.config
    assert (c.dump_dir, c.buffer_size, c.max_dumps, c.max_total_mb) == ("oom_dumps", 5000, 10, 1024)
    assert t.thresholds == {"memory_warning_percent": 80.0, "memory_critical_percent": 95.0,
                            "memory_leak_threshold": 104857600.0, "fragmentation_threshold": 0.3}
    assert t.stats == {"peak_memory": 0, "total_allocations": 0, "total_deallocations": 0,
                       "total_allocation_bytes": 0, "total_deallocation_bytes": 0, "alert_count": 0,
                       "tracking_start_time": None, "last_memory_check": 0}
    assert t.gpu_info["device_name"] == "Fake GPU 0" and t.last_oom_dump_path is None
    assert MemoryTracker(oom_buffer_size=None, max_events=7).oom_buffer_size == 7
    assert MemoryTracker(oom_buffer_size=0).oom_buffer_size == 10000
    with pytest.raises(AttributeError):
        t.oom_buffer_size = 3


def test_device_resolution(fake_torch, monkeypatch):
    fake_torch._fake.reset(devices=2)
    assert str(MemoryTracker(1).device) == "cuda:1"
    with pytest.raises(ValueError):
        MemoryTracker(2)
    with pytest.raises(ValueError):
        MemoryTracker("cpu")
    with pytest.raises(RuntimeError):
        MemoryTracker("mps")
    fake_torch._fake.reset(available=False)
    with pytest.raises(RuntimeError, match="^No supported GPU backend is available$"):
        MemoryTracker()
    with pytest.raises(ValueError):
        MemoryTracker(0)
    with pytest.raises(RuntimeError):
        MemoryTracker("cuda:0")


def test_without_torch(no_torch):
    with pytest.raises(ImportError, match="PyTorch"):
        MemoryTracker()


def test_the_loop(fake_torch):
    t = tracker()
    with t:
        kept = fake_torch.empty(3 * MiB, dtype=fake_torch.uint8, device="cuda")
        wait_for(lambda: t.get_events("allocation"))
        del kept
        wait_for(lambda: t.get_events("deallocation"))
    types = [e.event_type for e in t.events]
    assert types[0] == "start" and types[-1] == "stop"
    assert types.index("peak") < types.index("allocation") < types.index("deallocation")
    alloc = t.get_events("allocation")[0]
    assert isinstance(alloc, TrackingEvent) and alloc.memory_change == 3 * MiB
    assert alloc.context == "Memory allocated: 3.00 MB" and alloc.memory_allocated == 3 * MiB
    assert alloc.memory_reserved == 4 * MiB and alloc.device_used == 4 * MiB and alloc.device_total == 8 << 30
    assert alloc.active_memory == 3 * MiB and alloc.backend == "cuda" and alloc.device_id == 0
    free = t.get_events("deallocation")[0]
    assert free.memory_change == -3 * MiB and free.context == "Memory freed: 3.00 MB"
    assert t.get_events("peak")[0].context == "New peak memory: 3.00 MB"
    assert t.stats["total_allocations"] == 1 and t.stats["total_allocation_bytes"] == 3 * MiB
    assert t.stats["total_deallocations"] == 1 and t.stats["peak_memory"] == 3 * MiB
    assert t.get_events("start")[0].context == "Memory tracking started"
    assert not t.is_tracking


def account(t, torch, nbytes, keep):
    """One pass of the loop's logic after allocating nbytes (kept)."""
    before = t.collector.sample().allocated_bytes
    keep.append(torch.empty(nbytes, dtype=torch.uint8, device="cuda"))
    s = t.collector.sample()
    t._account(s, s.allocated_bytes - before)


def test_alerts(fake_torch):
    fake_torch._fake.reset(total=100 * MiB)
    t = tracker()
    seen = []
    t.add_alert_callback(seen.append)
    t.add_alert_callback(lambda e: 1 / 0)  # a failing callback is ignored
    keep = []
    account(t, fake_torch, 84 * MiB, keep)  # 84 %: warning; reserved 84 MiB: no fragmentation
    w = t.get_alerts()
    assert [e.event_type for e in w] == ["warning"] and w[0].metadata == {"usage_percent": 84.0}
    assert w[0].context == "WARNING: Memory usage at 84.0%"
    account(t, fake_torch, 12 * MiB, keep)  # 96 %: critical
    c = t.get_alerts()[-1]
    assert c.event_type == "critical" and c.metadata["usage_percent"] == 96.0
    t.set_threshold("memory_leak_threshold", 1 * MiB)
    account(t, fake_torch, 2 * MiB, keep)  # 98 %: critical, and a large allocation
    last = t.get_alerts(2)
    assert [e.event_type for e in last] == ["critical", "warning"] and last[1].metadata == {"large_allocation": True}
    assert last[1].context == "Large allocation detected: 2.00 MB"
    assert t.stats["alert_count"] == 4
    assert [e.event_type for e in seen] == ["warning", "critical", "critical", "warning"]
    with pytest.raises(ValueError, match="Unknown threshold: nope"):
        t.set_threshold("nope", 1)
    t.remove_alert_callback(seen.append)
    t.remove_alert_callback(seen.append)  # not there: ignored


def test_fragmentation_alert(fake_torch):
    t = tracker()
    account(t, fake_torch, MiB, [])  # 1 MiB in a 2 MiB segment: half the reserved memory is cached
    frag = [e for e in t.get_alerts() if e.metadata and "fragmentation" in e.metadata]
    assert len(frag) == 1 and frag[0].metadata["fragmentation"] == 0.5
    assert frag[0].context == "High fragmentation: 50.0%"
    t.enable_alerts = False
    account(t, fake_torch, MiB, [])
    assert len(t.get_alerts()) == 1


def synthetic(t, times):
    for i, ts in enumerate(times):
        t.events.append(TrackingEvent(ts, "allocation" if i % 2 else "peak", i * 10, i * 20, 1, 0))


def test_event_queries_and_timeline(fake_torch):
    t = tracker()
    synthetic(t, [100.0, 100.4, 100.9, 101.2, 103.5])
    assert len(t.get_events()) == 5 and len(t.get_events("peak")) == 3
    assert [e.timestamp for e in t.get_events(since=100.9)] == [100.9, 101.2, 103.5]
    assert [e.timestamp for e in t.get_events("peak", last_n=2)] == [100.9, 103.5]
    tl = t.get_memory_timeline(1.0)
    assert tl == {"timestamps": [100.0, 101.0, 103.0], "allocated": [20, 30, 40], "reserved": [40, 60, 80]}
    t.stats["total_allocations"] = 3
    t.clear_events()
    assert not t.events and t.stats["total_allocations"] == 0
    assert t.get_memory_timeline() == {"timestamps": [], "allocated": [], "reserved": []}


def test_statistics(fake_torch):
    t = tracker()
    assert "total_events" not in t.get_statistics()
    keep = [fake_torch.empty(2 * MiB, dtype=fake_torch.uint8, device="cuda")]
    t.start_tracking()
    wait_for(lambda: t.get_events("allocation"))
    t.stop_tracking()
    s = t.get_statistics()
    for k in ("total_events", "events_last_hour", "backend", "oom_flight_recorder_enabled", "last_oom_dump_path",
              "current_memory_allocated", "current_memory_reserved", "memory_utilization_percent",
              "average_allocation_size", "average_deallocation_size", "tracking_duration_seconds",
              "allocations_per_second", "bytes_allocated_per_second"):
        assert k in s, k
    assert s["backend"] == "cuda" and s["current_memory_allocated"] == 2 * MiB
    assert s["memory_utilization_percent"] == 2 * MiB / (8 << 30) * 100
    assert s["average_allocation_size"] == 2 * MiB and s["oom_flight_recorder_enabled"] is False
    del keep


def test_export(fake_torch, tmp_path):
    t = tracker(sampling_interval=0.25)
    t.export_events(str(tmp_path / "none.csv"))
    assert not (tmp_path / "none.csv").exists()
    synthetic(t, [100.0, 100.5])
    t.events[0].metadata = {"usage_percent": 81.0}
    t.events[1].device_total, t.events[1].device_used, t.events[1].device_free = 1000, 30, 970
    t.export_events(str(tmp_path / "ev.json"), "json")
    with open(str(tmp_path / "ev.json")) as f:
        rows = json.load(f)
    assert len(rows) == 2 and all(list(r) == list(FIELDS) for r in rows)
    for r in rows:
        validate_telemetry_record(r)
    r0, r1 = rows
    assert r0["timestamp_ns"] == 100_000_000_000 and r0["collector"] == "gpumemprof.cuda_tracker"
    assert r0["sampling_interval_ms"] == 250 and r0["device_used_bytes"] == 0 and r0["device_total_bytes"] == 8 << 30
    assert r0["metadata"] == {"usage_percent": 81.0, "backend": "cuda", "supports_device_total": True,
                              "supports_device_free": True, "sampling_source": "torch.cuda.memory_allocated/reserved"}
    assert (r1["device_used_bytes"], r1["device_free_bytes"], r1["device_total_bytes"]) == (30, 970, 1000)
    assert r1["allocator_allocated_bytes"] == 10 and r1["allocator_reserved_bytes"] == 20
    assert [e.event_type for e in load_telemetry_events(str(tmp_path / "ev.json"))] == ["peak", "allocation"]
    t.export_events(str(tmp_path / "ev.csv"))
    with open(str(tmp_path / "ev.csv"), newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == list(FIELDS) and len(table) == 3
    row = dict(zip(table[0], table[2]))
    assert row["device_total_bytes"] == "1000" and row["schema_version"] == "2" and row["context"] == ""
    assert row["allocator_active_bytes"] == "" and row["metadata"].startswith("{'backend': 'cuda'")
    with pytest.raises(ValueError):
        t.export_events(str(tmp_path / "ev.xml"), "xml")


def test_watchdog(fake_torch):
    fake_torch._fake.reset(total=100 * MiB)
    t = tracker()
    w = MemoryWatchdog(t, cleanup_threshold=0.9)
    keep = []
    account(t, fake_torch, 85 * MiB, keep)  # a warning below 90 %: no cleanup
    assert w.cleanup_count == 0
    tmp = fake_torch.empty(10 * MiB, dtype=fake_torch.uint8, device="cuda")
    del tmp  # 10 MiB cached
    account(t, fake_torch, 11 * MiB, keep)  # critical: aggressive cleanup
    assert w.cleanup_count == 1 and fake_torch._fake.devices[0].reserved == 96 * MiB
    assert t.get_events("cleanup")[-1].context == "Performed aggressive memory cleanup"
    account(t, fake_torch, MiB, keep)  # within min_cleanup_interval: nothing
    assert w.cleanup_count == 1
    w.force_cleanup()
    assert t.get_events("cleanup")[-1].context == "Performed standard memory cleanup"
    assert w.get_cleanup_stats() == {"cleanup_count": 2, "last_cleanup_time": w.last_cleanup_time,
                                     "auto_cleanup_enabled": True, "cleanup_threshold": 0.9,
                                     "aggressive_cleanup_threshold": 0.95}


@pytest.mark.skipif(not _record.available(), reason="libgpufl without framework memory")
def test_samples_recorded_into_the_session(fake_torch, logs):
    assert gpufl.init(log_path=logs, app_name="tracker")
    t = tracker()
    keep = [fake_torch.empty(5 * MiB, dtype=fake_torch.uint8, device="cuda")]
    with t:
        wait_for(lambda: t.get_events("allocation"))
    gpufl.shutdown()
    with GpuFlightSession(one_session(logs)) as s:
        a = s.allocator
    samples = a[a["reason"] == "sample"]
    assert len(samples) >= 1 and 5 * MiB in set(samples["allocated"])
    assert set(samples["reserved"]) <= {0, 6 * MiB}
    del keep
