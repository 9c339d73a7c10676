"""MemoryTracker: the reference's real-time tracker (gpumemprof.tracker):
a thread that samples the device's allocator, turns changes into events,
raises alerts, exports the events as TelemetryEventV2, and writes an OOM
bundle when the program runs out of memory.

What gpufl adds, when a session records: each sample is an allocator
state in the session (reason "sample") from the same memory_stats reading
the event was made of; PyTorch's collector is attached so that PyTorch's
out-of-memory fires the session's "oom" trigger from inside the allocator
(the flight window's dump with its oom.json); and handle_exception names
that dump in the bundle's metadata.json (``gpufl_dump``), firing the
trigger itself only when the observer did not (see _oom_dump).

Differences from the reference, and why:

* The OOM flight recorder is on by default, with oom_buffer_size 5000,
  oom_max_dumps 10 and oom_max_total_mb 1024 (the reference: off, the
  event limit, 5, 256), because the issue asks for an OOM to leave its
  evidence without being asked to; OOMFlightRecorderConfig keeps the
  reference's defaults.
* The gpufl session's trigger fires for an out-of-memory even with the
  bundle recorder off (the bundle is the reference's; the dump is gpufl's).
* export_events writes CSV with the csv module, not pandas, so that
  recording never imports pandas; the columns and values are the same (the
  metadata dict as its Python repr, None as an empty field).
* Without PyTorch the constructor raises ImportError (the reference fails
  at import).
"""

import collections
import contextlib
import csv
import dataclasses
import json
import logging
import os
import re
import socket
import threading
import time
from typing import Any, Dict, Optional

from . import _bridge, _oom_dump, _torch, _torch_source
from .collectors import build_device_memory_collector
from .oom_recorder import OOMFlightRecorder, OOMFlightRecorderConfig, classify_oom_exception
from .telemetry import FIELDS, TelemetryEventV2, telemetry_event_to_dict
from .utils import format_bytes, get_gpu_info

__all__ = ["MemoryTracker", "TrackingEvent"]

log = logging.getLogger(__name__)

ALERT_TYPES = ("warning", "critical", "error")
_TRIED = re.compile(r"tried to allocate ([0-9.]+) ?(bytes|b|kib|mib|gib|tib)\b", re.I)
_UNIT = {"bytes": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


@dataclasses.dataclass
class TrackingEvent:
    """One event; bytes, time.time() seconds. event_type: start, stop, peak,
    allocation, deallocation, warning, critical, error, cleanup."""

    timestamp: float
    event_type: str
    memory_allocated: int
    memory_reserved: int
    memory_change: int
    device_id: int
    context: Optional[str] = None
    metadata: Optional[Dict[str, Any]] = None
    active_memory: Optional[int] = None
    inactive_memory: Optional[int] = None
    device_used: Optional[int] = None
    device_free: Optional[int] = None
    device_total: Optional[int] = None
    backend: str = "cuda"


def requested_bytes(message):
    """The bytes an out-of-memory message says were asked for ("Tried to
    allocate 20.00 GiB"), rounded as printed; 0 when it does not say."""
    m = _TRIED.search(message)
    return int(float(m.group(1)) * _UNIT[m.group(2).lower()]) if m else 0


class MemoryTracker:
    """Tracks one device's allocator (see the module docstring)."""

    def __init__(self, device=None, sampling_interval=0.1, max_events=10000, enable_alerts=True,
                 enable_oom_flight_recorder=True, oom_dump_dir="oom_dumps", oom_buffer_size=5000,
                 oom_max_dumps=10, oom_max_total_mb=1024):
        torch = _torch.require("MemoryTracker")
        self.device = _torch.resolve_tracker_device(torch, device)
        self.collector = build_device_memory_collector(self.device)
        self.backend = self.collector.name()
        self.collector_capabilities = self.collector.capabilities()
        self.sampling_interval = sampling_interval
        self.max_events = max_events
        self.enable_alerts = enable_alerts
        self.last_oom_dump_path = None
        self.events = collections.deque(maxlen=max_events)
        self.is_tracking = False
        self._thread = None
        self._stop_event = threading.Event()
        self._lock = threading.RLock()  # events come from the tracking thread and the program's
        self.thresholds = {"memory_warning_percent": 80.0, "memory_critical_percent": 95.0,
                           "memory_leak_threshold": float(100 * 1024 * 1024), "fragmentation_threshold": 0.3}
        self.alert_callbacks = []
        self.stats = {"peak_memory": 0, "total_allocations": 0, "total_deallocations": 0,
                      "total_allocation_bytes": 0, "total_deallocation_bytes": 0, "alert_count": 0,
                      "tracking_start_time": None, "last_memory_check": 0}
        self.gpu_info = get_gpu_info(self.device) if self.backend in ("cuda", "rocm") else {}
        self.total_memory = self._initial_total()
        self._oom_buffer_size = int(oom_buffer_size) if oom_buffer_size and oom_buffer_size > 0 else max_events
        self.oom_flight_recorder = OOMFlightRecorder(OOMFlightRecorderConfig(
            enabled=bool(enable_oom_flight_recorder), dump_dir=oom_dump_dir, buffer_size=self._oom_buffer_size,
            max_dumps=oom_max_dumps, max_total_mb=oom_max_total_mb))
        _bridge.attach_for()

    @property
    def oom_buffer_size(self):
        return self._oom_buffer_size

    def _initial_total(self):
        try:
            total = self.collector.sample().total_bytes
        except Exception:
            total = None
        if total:
            return int(total)
        t = self.gpu_info.get("total_memory", 0)
        return int(t) if isinstance(t, (int, float)) else 0

    # ---- events ----

    def _sample(self):
        try:
            return self.collector.sample()
        except Exception:
            return None

    def _add_event(self, event_type, memory_change, context, metadata=None, sample=None):
        s = sample if sample is not None else self._sample()
        ev = TrackingEvent(
            timestamp=time.time(), event_type=event_type, memory_allocated=s.allocated_bytes if s else 0,
            memory_reserved=s.reserved_bytes if s else 0, memory_change=memory_change,
            device_id=self.collector.device_id, context=context, metadata=metadata,
            active_memory=s.active_bytes if s else None, inactive_memory=s.inactive_bytes if s else None,
            device_used=s.used_bytes if s else None, device_free=s.free_bytes if s else None,
            device_total=s.total_bytes if s else None, backend=self.backend)
        with self._lock:
            self.events.append(ev)
            if self.oom_flight_recorder.config.enabled:
                record = dataclasses.asdict(ev)
                record["metadata"] = dict(ev.metadata or {})
                self.oom_flight_recorder.record_event(record)
            if event_type not in ALERT_TYPES:
                return ev
            self.stats["alert_count"] += 1
            callbacks = list(self.alert_callbacks)
        for cb in callbacks:
            try:
                cb(ev)
            except Exception as e:  # a callback's failure is not the tracker's
                log.debug("alert callback failed: %s", e)
        return ev

    # ---- tracking ----

    def start_tracking(self):
        if self.is_tracking:
            return
        self.is_tracking = True
        self._stop_event.clear()
        self.stats["tracking_start_time"] = time.time()
        self._thread = threading.Thread(target=self._loop, name="gpufl-memory-tracker", daemon=True)
        self._thread.start()
        self._add_event("start", 0, "Memory tracking started")

    def stop_tracking(self):
        if not self.is_tracking:
            return
        self.is_tracking = False
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        self._add_event("stop", 0, "Memory tracking stopped")

    def _loop(self):
        last = 0
        while not self._stop_event.wait(self.sampling_interval):
            try:
                s = self.collector.sample()
                _bridge.record_stats(self.collector.device_id, self.collector.last_stats, "sample")
                self._account(s, s.allocated_bytes - last)
                last = s.allocated_bytes
            except Exception as e:
                self._add_event("error", 0, "Tracking error: %s" % e)
                time.sleep(1.0)

    def _account(self, s, change):
        alloc = s.allocated_bytes
        self.stats["last_memory_check"] = time.time()
        if alloc > self.stats["peak_memory"]:
            self.stats["peak_memory"] = alloc
            self._add_event("peak", change, "New peak memory: %s" % format_bytes(alloc), sample=s)
        if change > 0:
            self.stats["total_allocations"] += 1
            self.stats["total_allocation_bytes"] += change
            self._add_event("allocation", change, "Memory allocated: %s" % format_bytes(change), sample=s)
        elif change < 0:
            self.stats["total_deallocations"] += 1
            self.stats["total_deallocation_bytes"] += -change
            self._add_event("deallocation", change, "Memory freed: %s" % format_bytes(-change), sample=s)
        if self.enable_alerts:
            self._check_alerts(s, change)

    def _check_alerts(self, s, change):
        if self.total_memory == 0:
            return
        usage = s.allocated_bytes / self.total_memory * 100
        if usage >= self.thresholds["memory_critical_percent"]:
            self._add_event("critical", change, "CRITICAL: Memory usage at %.1f%%" % usage,
                            {"usage_percent": usage}, sample=s)
        elif usage >= self.thresholds["memory_warning_percent"]:
            self._add_event("warning", change, "WARNING: Memory usage at %.1f%%" % usage,
                            {"usage_percent": usage}, sample=s)
        if change > self.thresholds["memory_leak_threshold"]:
            self._add_event("warning", change, "Large allocation detected: %s" % format_bytes(change),
                            {"large_allocation": True}, sample=s)
        reserved = s.reserved_bytes
        if reserved > 0:
            frag = (reserved - s.allocated_bytes) / reserved
            if frag > self.thresholds["fragmentation_threshold"]:
                self._add_event("warning", change, "High fragmentation: %.1f%%" % (frag * 100),
                                {"fragmentation": frag}, sample=s)

    # ---- alerts and thresholds ----

    def add_alert_callback(self, callback):
        self.alert_callbacks.append(callback)

    def remove_alert_callback(self, callback):
        if callback in self.alert_callbacks:
            self.alert_callbacks.remove(callback)

    def set_threshold(self, threshold_name, value):
        if threshold_name not in self.thresholds:
            raise ValueError("Unknown threshold: %s" % threshold_name)
        self.thresholds[threshold_name] = value

    # ---- reading events ----

    def get_events(self, event_type=None, last_n=None, since=None):
        with self._lock:
            events = list(self.events)
        if event_type:
            events = [e for e in events if e.event_type == event_type]
        if since:
            events = [e for e in events if e.timestamp >= since]
        return events[-last_n:] if last_n else events

    def get_alerts(self, last_n=None):
        with self._lock:
            alerts = [e for e in self.events if e.event_type in ALERT_TYPES]
        return alerts[-last_n:] if last_n else alerts

    def get_memory_timeline(self, interval=1.0):
        """{timestamps, allocated, reserved}: the last event of each
        interval-long bucket from the first event on (empty buckets left
        out), each bucket named by its start."""
        with self._lock:
            events = list(self.events)
        out = {"timestamps": [], "allocated": [], "reserved": []}
        if not events:
            return out
        start = events[0].timestamp
        buckets = collections.OrderedDict()
        for e in events:
            buckets[int((e.timestamp - start) // interval)] = e
        for k in sorted(buckets):
            out["timestamps"].append(start + k * interval)
            out["allocated"].append(buckets[k].memory_allocated)
            out["reserved"].append(buckets[k].memory_reserved)
        return out

    def clear_events(self):
        with self._lock:
            self.events.clear()
            for k in ("peak_memory", "total_allocations", "total_deallocations", "total_allocation_bytes",
                      "total_deallocation_bytes", "alert_count"):
                self.stats[k] = 0

    def get_statistics(self):
        out = dict(self.stats)
        with self._lock:
            events = list(self.events)
        if events:
            now = time.time()
            s = self._sample()
            out.update(total_events=len(events), events_last_hour=sum(1 for e in events if e.timestamp > now - 3600),
                       backend=self.backend, oom_flight_recorder_enabled=self.oom_flight_recorder.config.enabled,
                       last_oom_dump_path=self.last_oom_dump_path,
                       current_memory_allocated=s.allocated_bytes if s else 0,
                       current_memory_reserved=s.reserved_bytes if s else 0,
                       memory_utilization_percent=(s.used_bytes / self.total_memory * 100)
                       if s and self.total_memory > 0 else 0,
                       average_allocation_size=self.stats["total_allocation_bytes"] /
                       max(self.stats["total_allocations"], 1),
                       average_deallocation_size=self.stats["total_deallocation_bytes"] /
                       max(self.stats["total_deallocations"], 1))
            if self.stats["tracking_start_time"]:
                duration = now - self.stats["tracking_start_time"]
                out.update(tracking_duration_seconds=duration,
                           allocations_per_second=self.stats["total_allocations"] / max(duration, 1),
                           bytes_allocated_per_second=self.stats["total_allocation_bytes"] / max(duration, 1))
        return out

    # ---- export ----

    def _v2(self, e, pid, host):
        caps = self.collector_capabilities
        meta = dict(e.metadata or {})
        meta.update(backend=self.backend, supports_device_total=caps.get("supports_device_total"),
                    supports_device_free=caps.get("supports_device_free"),
                    sampling_source=caps.get("sampling_source"))
        used = e.device_used if e.device_used is not None else max(e.memory_allocated, e.memory_reserved)
        return TelemetryEventV2(
            schema_version=2, timestamp_ns=int(e.timestamp * 1e9), event_type=e.event_type,
            collector=caps.get("telemetry_collector"), sampling_interval_ms=int(round(self.sampling_interval * 1000)),
            pid=pid, host=host, device_id=e.device_id, allocator_allocated_bytes=e.memory_allocated,
            allocator_reserved_bytes=e.memory_reserved, allocator_active_bytes=e.active_memory,
            allocator_inactive_bytes=e.inactive_memory, allocator_change_bytes=e.memory_change,
            device_used_bytes=used, device_free_bytes=e.device_free,
            device_total_bytes=e.device_total or self.total_memory or None, context=e.context, metadata=meta)

    def export_events(self, filename, format="csv"):
        """Writes the events as TelemetryEventV2 records: "csv" (a header of
        the 18 fields in schema order) or "json" (a list, indent 2);
        ValueError for another format. Nothing is written without events."""
        if format not in ("csv", "json"):
            raise ValueError("Unsupported format: %s" % format)
        with self._lock:
            events = list(self.events)
        if not events:
            return
        pid, host = os.getpid(), socket.gethostname()
        records = [telemetry_event_to_dict(self._v2(e, pid, host)) for e in events]
        if format == "json":
            with open(filename, "w", encoding="utf-8") as f:
                json.dump(records, f, indent=2, default=str)
            return
        with open(filename, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            for r in records:
                w.writerow(["" if r[k] is None else r[k] for k in FIELDS])

    # ---- out of memory ----

    def _gpufl_dump(self, exc, reason, sample):
        """The gpufl session's dump of this out-of-memory: the one PyTorch's
        observer just wrote, else one fired now. None without one."""
        dev = self.collector.device_id
        r = _oom_dump.take_recent(dev)
        if r is None and _bridge.recording() and self.backend in ("cuda", "rocm"):
            requested = requested_bytes(str(exc))
            if _torch_source.attached():
                _torch_source.record_blocks("oom", state=False)
            if sample is not None:
                _bridge.record_stats(dev, self.collector.last_stats, "oom", requested_bytes=requested,
                                     largest_free_bytes=_torch_source.largest_free(dev))
            first_line = (str(exc).strip().splitlines() or [""])[0][:200]
            r = _oom_dump.report(dev, requested, "%s: %s" % (reason, first_line))
        return r.dump_dir if r is not None else None

    def handle_exception(self, exc, context=None, metadata=None):
        """For an out-of-memory exception (classify_oom_exception): the gpufl
        session's dump, then, with the OOM flight recorder on, an 'error'
        event and the bundle. Returns the bundle's path, or None (not an
        OOM, the recorder off, or the bundle could not be written)."""
        c = classify_oom_exception(exc)
        if not c.is_oom:
            return None
        s = self._sample()
        gpufl_dump = self._gpufl_dump(exc, c.reason, s)
        if not self.oom_flight_recorder.config.enabled:
            return None
        meta = {"tracker_stats": self.get_statistics(), "collector_capabilities": dict(self.collector_capabilities),
                "total_memory_bytes": self.total_memory, "sampling_interval_s": self.sampling_interval}
        meta.update(metadata or {})
        meta.update(sample_allocated_bytes=s.allocated_bytes if s else None,
                    sample_reserved_bytes=s.reserved_bytes if s else None,
                    sample_used_bytes=s.used_bytes if s else None, sample_free_bytes=s.free_bytes if s else None,
                    sample_total_bytes=s.total_bytes if s else None, sample_device_id=self.collector.device_id)
        self._add_event("error", 0, "OOM detected (%s)" % c.reason, {"oom_reason": c.reason}, sample=s)
        try:
            path = self.oom_flight_recorder.dump(reason=c.reason, exception=exc, context=context,
                                                 backend=self.backend, metadata=meta, gpufl_dump=gpufl_dump)
        except Exception as e:
            log.warning("gpufl.memory: the OOM bundle could not be written: %s", e)
            return None
        if path:
            self.last_oom_dump_path = path
        return path

    @contextlib.contextmanager
    def capture_oom(self, context="runtime", metadata=None):
        """Runs the with-block; an exception leaving it goes through
        handle_exception and is always re-raised."""
        try:
            yield
        except Exception as e:
            path = self.handle_exception(e, context=context, metadata=metadata)
            if path:
                log.warning("gpufl.memory: OOM flight recorder bundle written to %s", path)
            raise

    def __enter__(self):
        self.start_tracking()
        return self

    def __exit__(self, *exc):
        self.stop_tracking()
        return False
