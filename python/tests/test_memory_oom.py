"""Out of memory: the reference's classification order, its OOM flight
recorder bundle (files, keys, retention by count and size), the tracker's
handle_exception / capture_oom, and, with a gpufl session and a flight
window, the OOM landing in the session: the allocator's state with the
bytes asked for, the live blocks, and (with a libgpufl that has
gpufl_report_oom) the "oom" trigger's dump with its oom.json, named in the
bundle's metadata."""

import json
import os
import re

import pytest

import gpufl
from conftest import one_session
from gpufl.analyzer import GpuFlightSession
from gpufl.memory import (MemoryTracker, OOMExceptionClassification, OOMFlightRecorder, OOMFlightRecorderConfig,
                          _record, attach, classify_oom_exception)
from gpufl.memory.tracker import requested_bytes

MiB, GiB = 1 << 20, 1 << 30


class ResourceExhaustedError(Exception):  # as TensorFlow names it
    pass


def torch_module_error():
    cls = type("OutOfMemoryError", (RuntimeError,), {})
    cls.__module__ = "torch.xpu"
    return cls("device exhausted")


@pytest.mark.parametrize("exc, reason", [
    (ResourceExhaustedError("CUDA out of memory"), "tensorflow.ResourceExhaustedError"),
    (type("MyResourceExhaustedError", (Exception,), {})("x"), "tensorflow.ResourceExhaustedError"),
    (torch_module_error(), "torch.cuda.OutOfMemoryError"),
    (RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"), "message_pattern:out of memory"),
    (RuntimeError("HIP OUT OF MEMORY"), "message_pattern:out of memory"),
    (RuntimeError("Resource exhausted: OOM"), "message_pattern:resource exhausted"),
    (MemoryError("failed to allocate 3 bytes"), "message_pattern:failed to allocate"),
    (OSError("allocation failed"), "message_pattern:allocation failed"),
])
def test_classification_order(exc, reason):
    assert classify_oom_exception(exc) == OOMExceptionClassification(True, reason)


def test_torch_error_first(fake_torch):
    e = fake_torch.cuda.OutOfMemoryError("resource exhausted")  # its type wins over its message
    assert classify_oom_exception(e) == OOMExceptionClassification(True, "torch.cuda.OutOfMemoryError")


def test_not_oom():
    assert classify_oom_exception(ValueError("bad shape")) == OOMExceptionClassification(False, None)
    assert classify_oom_exception(type("OutOfMemoryError", (Exception,), {})("x")).is_oom is False  # not torch's


def test_requested_bytes():
    assert requested_bytes("CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has ...") == 20 * GiB
    assert requested_bytes("Tried to allocate 512.00 MiB") == 512 * MiB
    assert requested_bytes("out of memory") == 0


def dump(rec, n=1, backend="cuda"):
    return [rec.dump(reason="torch.cuda.OutOfMemoryError", exception=RuntimeError("CUDA out of memory"),
                     context="train", backend=backend, metadata={"step": i}) for i in range(n)]


def test_bundle(tmp_path):
    rec = OOMFlightRecorder(OOMFlightRecorderConfig(enabled=True, dump_dir=str(tmp_path / "d"), buffer_size=2))
    for i in range(3):
        rec.record_event({"event_type": "allocation", "i": i})
    assert [e["i"] for e in rec.snapshot_events()] == [1, 2]  # the ring keeps the last buffer_size
    (path,) = dump(rec, backend="cu da/x")
    name = os.path.basename(path)
    assert re.fullmatch(r"oom_dump_\d{8}T\d{6}Z_%d_cu_da_x_1" % os.getpid(), name), name
    assert sorted(os.listdir(path)) == ["environment.json", "events.json", "manifest.json", "metadata.json"]

    def load(f):
        with open(os.path.join(path, f)) as fh:
            return json.load(fh)

    assert [e["i"] for e in load("events.json")] == [1, 2]
    meta = load("metadata.json")
    assert meta == {"reason": "torch.cuda.OutOfMemoryError", "exception_type": "RuntimeError",
                    "exception_module": "builtins", "exception_message": "CUDA out of memory", "context": "train",
                    "backend": "cu da/x", "captured_event_count": 2, "custom_metadata": {"step": 0},
                    "gpufl_dump": None}
    env = load("environment.json")
    assert env["pid"] == os.getpid() and env["cwd"] == os.getcwd() and "platform" in env["system"]
    man = load("manifest.json")
    assert list(man) == ["schema_version", "bundle_name", "created_at_utc", "reason", "backend", "event_count",
                         "files"]
    assert man["schema_version"] == 1 and man["bundle_name"] == name and man["event_count"] == 2
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", man["created_at_utc"])
    assert man["files"] == ["manifest.json", "events.json", "metadata.json", "environment.json"]


def test_disabled_writes_nothing(tmp_path):
    rec = OOMFlightRecorder(OOMFlightRecorderConfig(dump_dir=str(tmp_path / "d")))
    assert OOMFlightRecorderConfig() == OOMFlightRecorderConfig(False, "oom_dumps", 10000, 5, 256)
    assert dump(rec) == [None] and not (tmp_path / "d").exists()


def test_retention_by_count(tmp_path):
    root = tmp_path / "d"
    rec = OOMFlightRecorder(OOMFlightRecorderConfig(enabled=True, dump_dir=str(root), max_dumps=2, max_total_mb=0))
    paths = dump(rec, 4)
    assert sorted(os.listdir(str(root))) == sorted(os.path.basename(p) for p in paths[2:])
    unlimited = OOMFlightRecorder(OOMFlightRecorderConfig(enabled=True, dump_dir=str(tmp_path / "u"), max_dumps=0,
                                                          max_total_mb=0))
    dump(unlimited, 7)
    assert len(os.listdir(str(tmp_path / "u"))) == 7


def test_retention_by_size(tmp_path):
    root = tmp_path / "d"
    rec = OOMFlightRecorder(OOMFlightRecorderConfig(enabled=True, dump_dir=str(root), max_dumps=0, max_total_mb=1))
    rec.record_event({"blob": "x" * (400 << 10)})  # each bundle over 400 KiB: two fit in 1 MiB, three do not
    paths = dump(rec, 4)
    left = sorted(os.listdir(str(root)))
    assert left == sorted(os.path.basename(p) for p in paths[2:])
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(str(root)) for f in fs)
    assert total <= 1 << 20


def oom_tracker(tmp_path, **kw):
    kw.setdefault("sampling_interval", 0.01)
    return MemoryTracker(oom_dump_dir=str(tmp_path / "bundles"), **kw)


def test_handle_exception_without_a_session(fake_torch, tmp_path):
    t = oom_tracker(tmp_path)
    keep = [fake_torch.empty(3 * MiB, dtype=fake_torch.uint8, device="cuda")]
    with pytest.raises(fake_torch.cuda.OutOfMemoryError):
        with t.capture_oom(context="train", metadata={"epoch": 2}):
            fake_torch.empty(9 * GiB, dtype=fake_torch.uint8, device="cuda")
    path = t.last_oom_dump_path
    assert path and os.path.dirname(path) == str(tmp_path / "bundles")
    with open(os.path.join(path, "metadata.json")) as f:
        meta = json.load(f)
    assert meta["reason"] == "torch.cuda.OutOfMemoryError" and meta["context"] == "train"
    assert meta["exception_type"] == "OutOfMemoryError" and meta["gpufl_dump"] is None
    cm = meta["custom_metadata"]
    assert cm["epoch"] == 2 and cm["sample_allocated_bytes"] == 3 * MiB and cm["sample_device_id"] == 0
    assert cm["total_memory_bytes"] == 8 << 30 and cm["sampling_interval_s"] == 0.01
    assert cm["collector_capabilities"]["backend"] == "cuda" and "peak_memory" in cm["tracker_stats"]
    with open(os.path.join(path, "events.json")) as f:
        events = json.load(f)
    assert events[-1]["event_type"] == "error" and events[-1]["context"] == "OOM detected (torch.cuda.OutOfMemoryError)"
    assert events[-1]["metadata"] == {"oom_reason": "torch.cuda.OutOfMemoryError"} and len(events[-1]) == 14
    assert t.get_alerts()[-1].context == "OOM detected (torch.cuda.OutOfMemoryError)"
    assert t.get_statistics()["last_oom_dump_path"] == path
    with pytest.raises(KeyError):  # not an OOM: re-raised, nothing written
        with t.capture_oom():
            raise KeyError("x")
    assert t.handle_exception(KeyError("x")) is None and len(os.listdir(str(tmp_path / "bundles"))) == 1
    off = oom_tracker(tmp_path, enable_oom_flight_recorder=False)
    assert off.handle_exception(RuntimeError("CUDA out of memory")) is None
    del keep


def has_report_oom():
    return _record._fn("gpufl_report_oom") is not None


@pytest.mark.skipif(not _record.available(), reason="libgpufl without framework memory")
def test_oom_lands_in_the_session(fake_torch, logs, tmp_path):
    assert gpufl.init(log_path=logs, app_name="oom", flight_window_s=60)
    assert attach(interval_s=0, history=True)
    t = oom_tracker(tmp_path)
    big = [fake_torch.empty(n * MiB, dtype=fake_torch.uint8, device="cuda") for n in (256, 512, 128)]
    ask = 8 * GiB
    with pytest.raises(fake_torch.cuda.OutOfMemoryError):
        with t.capture_oom(context="step"):
            fake_torch.empty(ask, dtype=fake_torch.uint8, device="cuda")
    with open(os.path.join(t.last_oom_dump_path, "metadata.json")) as f:
        meta = json.load(f)
    session = gpufl.session_dir()
    if has_report_oom():
        d = meta["gpufl_dump"]
        assert d and os.path.dirname(d) == os.path.join(session, "dumps") and d.endswith("-oom"), d
        with open(os.path.join(d, "oom.json")) as f:
            oom = json.load(f)
        assert oom["requested_bytes"] == ask
        live = [x["bytes"] for x in oom["largest_live"] if x["layer"] == "framework"]
        assert live[:3] == [512 * MiB, 256 * MiB, 128 * MiB]
    else:
        assert meta["gpufl_dump"] is None  # no trigger to fire in this libgpufl
    gpufl.shutdown()
    with GpuFlightSession(one_session(logs)) as s:
        a, m = s.allocator, s.memory
    oom_state = a[a["reason"] == "oom"]
    assert len(oom_state) >= 1 and int(oom_state["requested"].iloc[0]) == ask
    assert int(oom_state["allocated"].iloc[0]) == 896 * MiB and int(oom_state["ooms"].iloc[0]) == 1
    blocks = m[m["framework"] & (m["event"] == "alloc") & ~m["failed"]]
    assert sorted(blocks["bytes"])[-3:] == [128 * MiB, 256 * MiB, 512 * MiB]
    assert (blocks["stack_id"] != 0).all()
    if has_report_oom():  # gpufl_report_oom records the allocation that failed
        assert list(m.loc[m["failed"], "bytes"]) == [ask]
    del big


@pytest.mark.skipif(not _record.available(), reason="libgpufl without framework memory")
def test_tracker_fires_the_trigger_without_the_observer(fake_torch, logs, tmp_path):
    """An OOM that only its message calls one: the tracker reports it to
    the session itself, with the bytes the message names."""
    assert gpufl.init(log_path=logs, app_name="oom2", flight_window_s=60)
    t = oom_tracker(tmp_path)
    keep = [fake_torch.empty(64 * MiB, dtype=fake_torch.uint8, device="cuda")]
    path = t.handle_exception(RuntimeError("CUDA error: out of memory. Tried to allocate 3.00 GiB"), context="x")
    with open(os.path.join(path, "metadata.json")) as f:
        meta = json.load(f)
    if has_report_oom():
        with open(os.path.join(meta["gpufl_dump"], "oom.json")) as f:
            assert json.load(f)["requested_bytes"] == 3 * GiB
    else:
        assert meta["gpufl_dump"] is None
    gpufl.shutdown()
    with GpuFlightSession(one_session(logs)) as s:
        a = s.allocator
    oom_state = a[a["reason"] == "oom"]
    assert list(oom_state["requested"]) == [3 * GiB] and list(oom_state["allocated"]) == [64 * MiB]
    del keep
