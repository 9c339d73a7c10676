"""GPU memory: where it went, what leaks, and why it ran out.

Two faces over one recorder:

* The gpufl way: ``attach()`` records PyTorch's caching allocator into the
  running gpufl session (``_torch_source``, through the C calls bound in
  ``_record``): its state at an interval and after every scope, the live
  blocks with their Python stacks (``history=True``), and PyTorch's
  out-of-memory, which fires the session's "oom" trigger (a dump of the
  flight window with its oom.json). The reports and ``gpufl mem`` read
  them back.
* The API of the reference memory profiler, gpumemprof (its PyTorch side),
  with its names, signatures, fields and units: GPUMemoryProfiler,
  profile_function / profile_context, MemoryTracker with its OOM flight
  recorder bundle, MemoryWatchdog, MemoryAnalyzer, the device collectors,
  TelemetryEventV2 and the utilities. Their figures are PyTorch's and
  NVML's as gpufl reads them, and what they measure also goes into the
  running gpufl session; each module's docstring says where it differs
  from the reference and why.

Nothing here imports PyTorch until a class that needs it is made, nor
numpy/pandas until MemoryAnalyzer is asked for.
"""

from ._torch_source import attach, attached, detach, record_blocks, record_state
from .collectors import (CudaDeviceCollector, DeviceMemoryCollector, DeviceMemorySample, MPSDeviceCollector,
                         ROCmDeviceCollector, build_device_memory_collector, detect_torch_runtime_backend)
from .context_profiler import profile_context, profile_function
from .errors import TrackerUnavailableError
from .oom_recorder import (OOMExceptionClassification, OOMFlightRecorder, OOMFlightRecorderConfig,
                           classify_oom_exception)
from .profiler import GPUMemoryProfiler, TensorTracker
from .results import MemorySnapshot, ProfileResult
from .tracker import MemoryTracker, TrackingEvent
from .telemetry import (TelemetryEventV2, load_telemetry_events, telemetry_event_from_record,
                        telemetry_event_to_dict, validate_telemetry_record)
from .utils import convert_bytes, format_bytes, format_memory, get_gpu_info, get_system_info
from .watchdog import MemoryWatchdog

__version__ = "0.2.0"  # the reference API version this package offers

__all__ = [
    "attach", "attached", "detach", "record_blocks", "record_state",
    "GPUMemoryProfiler", "MemorySnapshot", "ProfileResult", "TensorTracker", "profile_context", "profile_function",
    "MemoryTracker", "TrackingEvent", "MemoryWatchdog", "OOMFlightRecorder", "OOMFlightRecorderConfig",
    "OOMExceptionClassification", "classify_oom_exception", "MemoryAnalyzer", "MemoryPattern",
    "TelemetryEventV2", "telemetry_event_from_record", "telemetry_event_to_dict", "validate_telemetry_record",
    "load_telemetry_events", "DeviceMemoryCollector", "DeviceMemorySample", "CudaDeviceCollector",
    "ROCmDeviceCollector", "MPSDeviceCollector", "build_device_memory_collector", "detect_torch_runtime_backend",
    "get_gpu_info", "get_system_info", "format_bytes", "format_memory", "convert_bytes", "TrackerUnavailableError",
]

_LAZY = {"MemoryAnalyzer": "analyzer", "MemoryPattern": "analyzer"}  # imported on first use: they need numpy


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    import importlib

    value = getattr(importlib.import_module("." + module, __name__), name)
    globals()[name] = value
    return value
