"""TelemetryEventV2: the reference's exchange format for tracker events
(gpumemprof.telemetry), so files MemoryTracker.export_events writes load in
the reference's tools and theirs load here.

A record has exactly the 18 fields of FIELDS, in that order (also the CSV
columns and JSON keys); validation raises ValueError for a missing or
unknown field, a bool where an int belongs, a negative byte count, and
used or free beyond total. Legacy records (the reference's older tracker
dumps: seconds, memory_allocated, memory_mb, type/message) convert with
telemetry_event_from_record.
"""

import dataclasses
import json
from typing import Any, Dict, Optional

__all__ = ["TelemetryEventV2", "SCHEMA_VERSION_V2", "UNKNOWN_PID", "UNKNOWN_HOST", "FIELDS",
           "telemetry_event_to_dict", "validate_telemetry_record", "telemetry_event_from_record",
           "load_telemetry_events"]

SCHEMA_VERSION_V2 = 2
UNKNOWN_PID = -1
UNKNOWN_HOST = "unknown"

FIELDS = ("schema_version", "timestamp_ns", "event_type", "collector", "sampling_interval_ms", "pid", "host",
          "device_id", "allocator_allocated_bytes", "allocator_reserved_bytes", "allocator_active_bytes",
          "allocator_inactive_bytes", "allocator_change_bytes", "device_used_bytes", "device_free_bytes",
          "device_total_bytes", "context", "metadata")


@dataclasses.dataclass
class TelemetryEventV2:
    """One tracker event; validated when made (ValueError)."""

    schema_version: int
    timestamp_ns: int
    event_type: str
    collector: str
    sampling_interval_ms: int
    pid: int
    host: str
    device_id: int
    allocator_allocated_bytes: int
    allocator_reserved_bytes: int
    allocator_active_bytes: Optional[int]
    allocator_inactive_bytes: Optional[int]
    allocator_change_bytes: int
    device_used_bytes: int
    device_free_bytes: Optional[int]
    device_total_bytes: Optional[int]
    context: Optional[str]
    metadata: Dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        validate_telemetry_record(telemetry_event_to_dict(self))


def telemetry_event_to_dict(event):
    """The record as a dict, keys in FIELDS order (metadata copied)."""
    d = {name: getattr(event, name) for name in FIELDS}
    d["metadata"] = dict(event.metadata)
    return d


def _int(record, name, minimum=None, optional=False):
    v = record[name]
    if v is None and optional:
        return None
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError("%s must be an integer" % name)
    if minimum is not None and v < minimum:
        raise ValueError("%s must be >= %d" % (name, minimum))
    return v


def _text(record, name, optional=False):
    v = record[name]
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise ValueError("%s must be a string" % name)
    if not optional and not v.strip():
        raise ValueError("%s must be a non-empty string" % name)
    return v


def validate_telemetry_record(record):
    """Raises ValueError unless record is a whole, valid v2 record."""
    missing = [f for f in FIELDS if f not in record]
    if missing:
        raise ValueError("Missing required telemetry fields: %s" % ", ".join(missing))
    unknown = [k for k in record if k not in FIELDS]
    if unknown:
        raise ValueError("Unknown telemetry fields: %s" % ", ".join(map(str, unknown)))
    if _int(record, "schema_version") != SCHEMA_VERSION_V2:
        raise ValueError("schema_version must be 2")
    _int(record, "timestamp_ns", 0)
    _text(record, "event_type")
    _text(record, "collector")
    _int(record, "sampling_interval_ms", 0)
    _int(record, "pid", UNKNOWN_PID)
    _text(record, "host")
    _int(record, "device_id")
    for name in ("allocator_allocated_bytes", "allocator_reserved_bytes"):
        _int(record, name, 0)
    for name in ("allocator_active_bytes", "allocator_inactive_bytes"):
        _int(record, name, 0, optional=True)
    _int(record, "allocator_change_bytes")
    used = _int(record, "device_used_bytes", 0)
    free = _int(record, "device_free_bytes", 0, optional=True)
    total = _int(record, "device_total_bytes", 0, optional=True)
    if total is not None and used > total:
        raise ValueError("device_used_bytes cannot exceed device_total_bytes")
    if total is not None and free is not None and free > total:
        raise ValueError("device_free_bytes cannot exceed device_total_bytes")
    _text(record, "context", optional=True)
    if not isinstance(record["metadata"], dict):
        raise ValueError("metadata must be an object")


# ---- legacy records ----------------------------------------------------------------


def _first_int(record, names, default=None):
    for name in names:
        if name in record:
            return _int(record, name, optional=True)
    return default


def _legacy_device_id(record):
    if "device_id" in record:
        return _int(record, "device_id")
    dev = record.get("device")
    if isinstance(dev, str):
        low = dev.lower()
        if "cpu" in low:
            return -1
        tail = dev.rsplit(":", 1)[-1]
        if ":" in dev and tail.isdigit():
            return int(tail)
        if low.startswith("/gpu"):
            return 0
    return 0 if "memory_mb" in record else -1


def _legacy_allocated(record):
    v = _first_int(record, ("allocator_allocated_bytes", "memory_allocated"))
    if v is not None:
        return v
    mb = record.get("memory_mb")
    if isinstance(mb, (int, float)) and not isinstance(mb, bool):
        return int(float(mb) * (1 << 20))
    return _first_int(record, ("device_used_bytes",), 0)


def _legacy_collector(record, default, device_id):
    c = record.get("collector")
    if isinstance(c, str) and c.strip():
        return c
    meta = record.get("metadata")
    backend = record.get("backend") or (meta.get("backend") if isinstance(meta, dict) else None)
    if backend in ("cuda", "rocm", "mps", "cpu"):
        return "gpumemprof.%s_tracker" % backend
    if "memory_mb" in record:
        return "tfmemprof.memory_tracker"
    if "memory_allocated" in record:
        return "gpumemprof.cpu_tracker" if device_id == -1 else "gpumemprof.cuda_tracker"
    return default


def _legacy_timestamp_ns(record):
    if "timestamp_ns" in record:
        return _int(record, "timestamp_ns")
    ts = record.get("timestamp")
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return int(float(ts) * 1e9)
    raise ValueError("Legacy record is missing a valid timestamp")


def _legacy_metadata(record):
    raw = record.get("metadata")
    if raw is not None and not isinstance(raw, dict):
        raise ValueError("metadata must be an object when provided")
    meta = dict(raw or {})
    for k, v in record.items():
        if isinstance(k, str) and k.startswith("metadata_"):
            meta[k[len("metadata_"):]] = v
    return meta


def telemetry_event_from_record(record, permissive_legacy=True, default_collector="legacy.unknown",
                                default_sampling_interval_ms=0):
    """A TelemetryEventV2 from a record with a schema_version (which must be
    a valid v2 record) or, with
    permissive_legacy, from a legacy one: timestamp in s, memory_allocated
    or memory_mb, memory_reserved (else allocated), memory_change,
    type/message, metadata_* keys folded into metadata, free = total - used
    when total is known, the collector inferred from its backend or shape."""
    if not isinstance(record, dict):
        raise ValueError("record must be a mapping")
    if "schema_version" in record:  # a versioned record is v2 or refused, never read as legacy
        validate_telemetry_record(record)
        return TelemetryEventV2(**{f: record[f] for f in FIELDS})
    if not permissive_legacy:
        raise ValueError("Legacy record conversion is disabled")
    meta = _legacy_metadata(record)
    device_id = _legacy_device_id(record)
    allocated = _legacy_allocated(record)
    used = _first_int(record, ("device_used_bytes",), allocated)
    total = _first_int(record, ("device_total_bytes", "total_memory", "device_total", "total_bytes"))
    if total is None:
        total = _first_int(meta, ("total_memory", "device_total", "total_bytes"))
    if "device_free_bytes" in record:
        free = _int(record, "device_free_bytes", optional=True)
    else:
        free = None if total is None else max(total - used, 0)
    event_type = record.get("event_type", record.get("type", "sample"))
    context = record.get("context", record.get("message"))
    return TelemetryEventV2(
        schema_version=SCHEMA_VERSION_V2, timestamp_ns=_legacy_timestamp_ns(record),
        event_type=event_type if isinstance(event_type, str) and event_type.strip() else "sample",
        collector=_legacy_collector(record, default_collector, device_id),
        sampling_interval_ms=_first_int(record, ("sampling_interval_ms",), default_sampling_interval_ms),
        pid=_first_int(record, ("pid",), _first_int(meta, ("pid",), UNKNOWN_PID)),
        host=str(record.get("host") or meta.get("host") or UNKNOWN_HOST), device_id=device_id,
        allocator_allocated_bytes=allocated,
        allocator_reserved_bytes=_first_int(record, ("allocator_reserved_bytes", "memory_reserved"), allocated),
        allocator_active_bytes=_first_int(record, ("allocator_active_bytes",)),
        allocator_inactive_bytes=_first_int(record, ("allocator_inactive_bytes",)),
        allocator_change_bytes=_first_int(record, ("allocator_change_bytes", "memory_change"), 0),
        device_used_bytes=used, device_free_bytes=free, device_total_bytes=total,
        context=context if isinstance(context, str) or context is None else str(context), metadata=meta)


def load_telemetry_events(path, permissive_legacy=True, events_key=None):
    """The events of a JSON file: a list of records, an object holding them
    under events_key or "events", or one record."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        key = events_key if events_key is not None else "events"
        records = doc[key] if key in doc and isinstance(doc[key], list) else [doc]
    elif isinstance(doc, list):
        records = doc
    else:
        raise ValueError("%s holds no telemetry events" % path)
    return [telemetry_event_from_record(r, permissive_legacy=permissive_legacy) for r in records]
