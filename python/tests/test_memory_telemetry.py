"""TelemetryEventV2, the reference's exchange format: its 18 fields in
order, what validation refuses, and legacy records converted."""

import json

import pytest

from gpufl.memory import telemetry
from gpufl.memory.telemetry import (TelemetryEventV2, load_telemetry_events, telemetry_event_from_record,
                                    telemetry_event_to_dict, validate_telemetry_record)

FIELDS = ["schema_version", "timestamp_ns", "event_type", "collector", "sampling_interval_ms", "pid", "host",
          "device_id", "allocator_allocated_bytes", "allocator_reserved_bytes", "allocator_active_bytes",
          "allocator_inactive_bytes", "allocator_change_bytes", "device_used_bytes", "device_free_bytes",
          "device_total_bytes", "context", "metadata"]


def good():
    return {"schema_version": 2, "timestamp_ns": 1_700_000_000_000_000_000, "event_type": "allocation",
            "collector": "gpumemprof.cuda_tracker", "sampling_interval_ms": 100, "pid": 42, "host": "box",
            "device_id": 0, "allocator_allocated_bytes": 1 << 20, "allocator_reserved_bytes": 2 << 20,
            "allocator_active_bytes": 1 << 20, "allocator_inactive_bytes": 0, "allocator_change_bytes": -5,
            "device_used_bytes": 2 << 20, "device_free_bytes": 6 << 20, "device_total_bytes": 8 << 20,
            "context": "Memory allocated: 1.00 MB", "metadata": {"backend": "cuda"}}


def test_fields_in_schema_order():
    assert list(telemetry.FIELDS) == FIELDS
    ev = TelemetryEventV2(**good())
    assert list(telemetry_event_to_dict(ev)) == FIELDS
    assert telemetry_event_to_dict(ev) == good()
    assert telemetry.SCHEMA_VERSION_V2 == 2 and telemetry.UNKNOWN_PID == -1 and telemetry.UNKNOWN_HOST == "unknown"


@pytest.mark.parametrize("change, message", [
    ({"schema_version": 1}, "schema_version must be 2"),
    ({"timestamp_ns": -1}, "timestamp_ns must be >= 0"),
    ({"event_type": ""}, "event_type must be a non-empty string"),
    ({"collector": "  "}, "collector must be a non-empty string"),
    ({"sampling_interval_ms": -1}, "sampling_interval_ms"),
    ({"pid": -2}, "pid must be >= -1"),
    ({"device_id": True}, "device_id must be an integer"),
    ({"allocator_allocated_bytes": False}, "allocator_allocated_bytes must be an integer"),
    ({"allocator_reserved_bytes": -1}, "allocator_reserved_bytes"),
    ({"allocator_active_bytes": -1}, "allocator_active_bytes"),
    ({"allocator_change_bytes": 1.5}, "allocator_change_bytes must be an integer"),
    ({"device_used_bytes": 9 << 20}, "device_used_bytes cannot exceed device_total_bytes"),
    ({"device_free_bytes": 9 << 20}, "device_free_bytes cannot exceed device_total_bytes"),
    ({"context": 3}, "context must be a string"),
    ({"metadata": []}, "metadata must be an object"),
    ({"extra": 1}, "Unknown telemetry fields: extra"),
])
def test_validation_refuses(change, message):
    rec = good()
    rec.update(change)
    with pytest.raises(ValueError, match=message):
        validate_telemetry_record(rec)
    with pytest.raises(ValueError):
        telemetry_event_from_record(rec)


def test_missing_fields_are_named():
    rec = good()
    del rec["host"], rec["metadata"]
    with pytest.raises(ValueError, match="Missing required telemetry fields: host, metadata"):
        validate_telemetry_record(rec)


def test_nulls_where_allowed():
    rec = good()
    rec.update(allocator_active_bytes=None, allocator_inactive_bytes=None, device_free_bytes=None,
               device_total_bytes=None, context=None, device_used_bytes=1 << 40)
    validate_telemetry_record(rec)  # no total: used is not bounded


def test_legacy_record():
    ev = telemetry_event_from_record({"timestamp": 1.5, "type": "peak", "message": "new peak",
                                      "memory_allocated": 100, "memory_change": 7, "device_id": 1,
                                      "total_memory": 1000, "metadata_note": "x", "pid": 9})
    assert ev.timestamp_ns == 1_500_000_000 and ev.event_type == "peak" and ev.context == "new peak"
    assert ev.allocator_allocated_bytes == ev.allocator_reserved_bytes == ev.device_used_bytes == 100
    assert ev.allocator_change_bytes == 7 and ev.device_total_bytes == 1000 and ev.device_free_bytes == 900
    assert ev.collector == "gpumemprof.cuda_tracker" and ev.metadata == {"note": "x"}
    assert ev.pid == 9 and ev.host == "unknown" and ev.device_id == 1


def test_legacy_tf_and_cpu_shapes():
    tf = telemetry_event_from_record({"timestamp": 2, "memory_mb": 1.5, "device": "/GPU:0"})
    assert tf.collector == "tfmemprof.memory_tracker" and tf.allocator_allocated_bytes == 3 << 19
    assert tf.device_free_bytes is None and tf.device_id == 0
    cpu = telemetry_event_from_record({"timestamp": 2, "memory_allocated": 5, "device": "cpu"})
    assert cpu.collector == "gpumemprof.cpu_tracker" and cpu.device_id == -1
    other = telemetry_event_from_record({"timestamp": 2}, default_collector="mine", default_sampling_interval_ms=5)
    assert other.collector == "mine" and other.sampling_interval_ms == 5 and other.event_type == "sample"
    with pytest.raises(ValueError, match="Legacy record conversion is disabled"):
        telemetry_event_from_record({"timestamp": 2}, permissive_legacy=False)
    with pytest.raises(ValueError, match="timestamp"):
        telemetry_event_from_record({"memory_allocated": 1})


def test_load_shapes(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps(good()))
    many = tmp_path / "many.json"
    many.write_text(json.dumps([good(), {"timestamp": 1, "memory_allocated": 3}]))
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"rows": [good()]}))
    assert [e.event_type for e in load_telemetry_events(str(one))] == ["allocation"]
    assert len(load_telemetry_events(str(many))) == 2
    assert len(load_telemetry_events(str(wrapped), events_key="rows")) == 1
    with pytest.raises(ValueError):
        load_telemetry_events(str(many), permissive_legacy=False)
