"""The reference's OOM flight recorder (gpumemprof.oom_flight_recorder):
deciding whether an exception is an out-of-memory, a ring of the
tracker's last events, and the bundle written when one happens.

A bundle is ``<dump_dir>/oom_dump_<YYYYmmddTHHMMSSZ>_<pid>_<backend>_<seq>/``
with events.json, metadata.json, environment.json and, written last,
manifest.json (JSON, indent 2). Retention runs after every dump over the
``oom_dump_*`` directories, oldest by modification time first: only the
newest max_dumps are kept, then the oldest go until the whole is within
max_total_mb MiB; a limit of 0 or less is off.

What gpufl adds: metadata.json names the dump of the gpufl session's
flight window that the same out-of-memory fired (``gpufl_dump``: its
directory, with oom.json; null when no session with a flight window
recorded), so the bundle leads to the device-level record.
"""

import collections
import dataclasses
import datetime
import json
import os
import re
import shutil
from typing import Optional

from .utils import get_system_info

__all__ = ["OOMFlightRecorderConfig", "OOMExceptionClassification", "classify_oom_exception", "OOMFlightRecorder",
           "OOM_MESSAGE_PATTERNS"]

# in the reference's order: the first that matches names the reason
OOM_MESSAGE_PATTERNS = ("out of memory", "cuda out of memory", "hip out of memory", "resource exhausted",
                        "failed to allocate", "allocation failed")

_TORCH_REASON = "torch.cuda.OutOfMemoryError"


@dataclasses.dataclass(frozen=True)
class OOMFlightRecorderConfig:
    enabled: bool = False
    dump_dir: str = "oom_dumps"
    buffer_size: int = 10_000
    max_dumps: int = 5
    max_total_mb: int = 256


@dataclasses.dataclass(frozen=True)
class OOMExceptionClassification:
    is_oom: bool
    reason: Optional[str]


def _torch_oom_type():
    import sys

    torch = sys.modules.get("torch")  # only a PyTorch the program imported can have raised its error
    return getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None) if torch else None


def classify_oom_exception(exc):
    """Whether exc is an out-of-memory, and why, checked in the reference's
    order: PyTorch's OutOfMemoryError; a class named *ResourceExhaustedError
    (TensorFlow); a class OutOfMemoryError from a torch module; then the
    first of OOM_MESSAGE_PATTERNS in the message ("message_pattern:<it>")."""
    oom = _torch_oom_type()
    if isinstance(oom, type) and isinstance(exc, oom):
        return OOMExceptionClassification(True, _TORCH_REASON)
    cls = type(exc)
    name = cls.__name__.lower()
    if name.endswith("resourceexhaustederror"):
        return OOMExceptionClassification(True, "tensorflow.ResourceExhaustedError")
    if name == "outofmemoryerror" and "torch" in (cls.__module__ or "").lower():
        return OOMExceptionClassification(True, _TORCH_REASON)
    message = str(exc).lower()
    for pattern in OOM_MESSAGE_PATTERNS:
        if pattern in message:
            return OOMExceptionClassification(True, "message_pattern:" + pattern)
    return OOMExceptionClassification(False, None)


def _write_json(path, payload):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2, default=str)


def _size(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


class OOMFlightRecorder:
    """The ring of recent events and the bundle writer (see the module
    docstring). Any thread may record; dumps are made by the thread that
    caught the exception."""

    def __init__(self, config):
        self.config = config
        self._events = collections.deque(maxlen=max(1, int(config.buffer_size)))
        self._seq = 0

    def record_event(self, event):
        """Keeps a copy of event (a dict)."""
        self._events.append(dict(event))

    def snapshot_events(self):
        """The kept events, oldest first, as copies."""
        return [dict(e) for e in list(self._events)]

    def _bundle_dir(self, root, backend):
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        safe = re.sub(r"[^A-Za-z0-9_-]+", "_", backend) or "unknown"
        while True:
            self._seq += 1
            path = os.path.join(root, "oom_dump_%s_%d_%s_%d" % (stamp, os.getpid(), safe, self._seq))
            if not os.path.exists(path):
                return path

    def dump(self, *, reason, exception, context, backend, metadata=None, gpufl_dump=None):
        """Writes a bundle and applies retention; returns its directory, or
        None when the recorder is disabled. gpufl_dump: the gpufl session's
        dump of the same out-of-memory. OSError when it cannot be written."""
        if not self.config.enabled:
            return None
        root = self.config.dump_dir
        os.makedirs(root, exist_ok=True)
        bundle = self._bundle_dir(root, backend)
        os.makedirs(bundle)
        events = self.snapshot_events()
        _write_json(os.path.join(bundle, "events.json"), events)
        _write_json(os.path.join(bundle, "metadata.json"), {
            "reason": reason, "exception_type": type(exception).__name__,
            "exception_module": type(exception).__module__, "exception_message": str(exception),
            "context": context, "backend": backend, "captured_event_count": len(events),
            "custom_metadata": dict(metadata or {}), "gpufl_dump": gpufl_dump})
        _write_json(os.path.join(bundle, "environment.json"),
                    {"pid": os.getpid(), "cwd": os.getcwd(), "system": get_system_info()})
        _write_json(os.path.join(bundle, "manifest.json"), {
            "schema_version": 1, "bundle_name": os.path.basename(bundle),
            "created_at_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "reason": reason, "backend": backend, "event_count": len(events),
            "files": ["manifest.json", "events.json", "metadata.json", "environment.json"]})
        self._retain(root)
        return bundle

    def _bundles(self, root):
        """The bundles under root, newest first (by modification time, then
        by this process's sequence number for ties)."""
        found = []
        for name in os.listdir(root):
            path = os.path.join(root, name)
            if name.startswith("oom_dump_") and os.path.isdir(path):
                seq = name.rsplit("_", 1)[-1]
                found.append((os.stat(path).st_mtime_ns, int(seq) if seq.isdigit() else 0, path))
        return [p for _, _, p in sorted(found, reverse=True)]

    def _retain(self, root):
        bundles = self._bundles(root)
        if self.config.max_dumps > 0:
            for stale in bundles[self.config.max_dumps:]:
                shutil.rmtree(stale, ignore_errors=True)
            bundles = bundles[:self.config.max_dumps]
        limit = self.config.max_total_mb * 1024 * 1024
        if limit <= 0:
            return
        sizes = [_size(b) for b in bundles]
        total = sum(sizes)
        while bundles and total > limit:
            total -= sizes.pop()
            shutil.rmtree(bundles.pop(), ignore_errors=True)
