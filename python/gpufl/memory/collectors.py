"""Device memory collectors with the reference's interface
(gpumemprof.device_collectors): one sample of a device's memory as its
framework sees it.

A CUDA sample is read from one ``torch.cuda.memory_stats`` call (allocated,
reserved, active and inactive-split bytes of the same moment; the
reference reads memory_allocated and memory_reserved, which are those same
counters) and kept as ``last_stats``, so that whoever samples can record
the very figures into the gpufl session (gpufl.memory._bridge). As in the
reference, device "used" is max(allocated, reserved) and "free" total
minus that: what PyTorch holds, not what other processes hold; NVML's
view of the whole device is in the session's device samples and
oom.json, not here.
"""

import abc
import dataclasses
from typing import Optional

from . import _torch

__all__ = ["DeviceMemorySample", "DeviceMemoryCollector", "CudaDeviceCollector", "ROCmDeviceCollector",
           "MPSDeviceCollector", "detect_torch_runtime_backend", "build_device_memory_collector"]


@dataclasses.dataclass(frozen=True)
class DeviceMemorySample:
    """One reading, in bytes; None where the backend cannot tell."""

    allocated_bytes: int
    reserved_bytes: int
    used_bytes: int
    free_bytes: Optional[int]
    total_bytes: Optional[int]
    active_bytes: Optional[int]
    inactive_bytes: Optional[int]
    device_id: int


class DeviceMemoryCollector(abc.ABC):
    """What MemoryTracker samples through: all four are methods."""

    @abc.abstractmethod
    def name(self):
        """"cuda", "rocm" or "mps"."""

    @abc.abstractmethod
    def is_available(self):
        """Whether this backend can sample here."""

    @abc.abstractmethod
    def sample(self):
        """A DeviceMemorySample of now."""

    @abc.abstractmethod
    def capabilities(self):
        """{backend, supports_device_total, supports_device_free,
        sampling_source, telemetry_collector}."""


class CudaDeviceCollector(DeviceMemoryCollector):
    """PyTorch's caching allocator on one CUDA device."""

    TELEMETRY_COLLECTOR = "gpumemprof.cuda_tracker"  # the reference's name, kept so its tools read our exports
    SAMPLING_SOURCE = "torch.cuda.memory_allocated/reserved"

    def __init__(self, device=None):
        self._torch = _torch.require(type(self).__name__)
        torch = self._torch
        if device is None:
            device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else "cuda"
        dev = device if isinstance(device, torch.device) else \
            torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
        if dev.type != "cuda":
            raise ValueError("%s needs a cuda device, got %r" % (type(self).__name__, str(dev)))
        self.device = dev
        self.device_id = _torch.index_of(dev)
        self.last_stats = None  # the memory_stats of the last sample
        self._total = None

    def name(self):
        return "cuda"

    def is_available(self):
        return bool(self._torch.cuda.is_available()) and not _torch.is_rocm(self._torch)

    def total_bytes(self):
        if self._total is None:
            self._total = int(self._torch.cuda.get_device_properties(self.device_id).total_memory)
        return self._total

    def sample(self):
        stats = self._torch.cuda.memory_stats(self.device_id)
        self.last_stats = stats
        alloc = int(stats.get("allocated_bytes.all.current", 0))
        reserved = int(stats.get("reserved_bytes.all.current", 0))
        used = max(alloc, reserved)
        total = self.total_bytes()
        return DeviceMemorySample(allocated_bytes=alloc, reserved_bytes=reserved, used_bytes=used,
                                  free_bytes=max(total - used, 0), total_bytes=total,
                                  active_bytes=int(stats.get("active_bytes.all.current", 0)),
                                  inactive_bytes=int(stats.get("inactive_split_bytes.all.current", 0)),
                                  device_id=self.device_id)

    def capabilities(self):
        return {"backend": self.name(), "supports_device_total": True, "supports_device_free": True,
                "sampling_source": self.SAMPLING_SOURCE, "telemetry_collector": self.TELEMETRY_COLLECTOR}


class ROCmDeviceCollector(CudaDeviceCollector):
    """The same allocator on a ROCm build of PyTorch (torch.cuda over HIP)."""

    TELEMETRY_COLLECTOR = "gpumemprof.rocm_tracker"
    SAMPLING_SOURCE = "torch.cuda.memory_* (HIP runtime)"

    def name(self):
        return "rocm"

    def is_available(self):
        return bool(self._torch.cuda.is_available()) and _torch.is_rocm(self._torch)


class MPSDeviceCollector(DeviceMemoryCollector):
    """Apple's MPS: allocated and driver-allocated memory; total is the
    recommended maximum where PyTorch has it. gpufl records nothing of it
    (gpufl's recorder is for NVIDIA GPUs)."""

    def __init__(self, device=None):
        self._torch = _torch.require(type(self).__name__)
        self.device = self._torch.device("mps")
        self.device_id = 0
        self.last_stats = None

    def name(self):
        return "mps"

    def is_available(self):
        return _torch.mps_available(self._torch)

    def _total(self):
        f = getattr(getattr(self._torch, "mps", None), "recommended_max_memory", None)
        try:
            v = int(f()) if f is not None else 0
        except Exception:
            v = 0
        return v if v > 0 else None

    def sample(self):
        mps = self._torch.mps
        alloc = int(mps.current_allocated_memory())
        reserved = int(mps.driver_allocated_memory())
        used = max(alloc, reserved)
        total = self._total()
        return DeviceMemorySample(allocated_bytes=alloc, reserved_bytes=reserved, used_bytes=used,
                                  free_bytes=None if total is None else max(total - used, 0), total_bytes=total,
                                  active_bytes=None, inactive_bytes=None, device_id=0)

    def capabilities(self):
        has_total = hasattr(getattr(self._torch, "mps", None), "recommended_max_memory")
        return {"backend": "mps", "supports_device_total": has_total, "supports_device_free": has_total,
                "sampling_source": "torch.mps.current_allocated_memory/driver_allocated_memory",
                "telemetry_collector": "gpumemprof.mps_tracker"}


def detect_torch_runtime_backend():
    """"cuda", "rocm", "mps" or "cpu" (also without PyTorch)."""
    torch = _torch.get()
    if torch is None:
        return "cpu"
    try:
        if torch.cuda.is_available():
            return "rocm" if _torch.is_rocm(torch) else "cuda"
    except Exception:
        pass
    return "mps" if _torch.mps_available(torch) else "cpu"


def build_device_memory_collector(device=None):
    """The collector for device (None: the detected backend's current
    device): ROCm for a cuda device on a HIP build, CUDA for other cuda
    devices, MPS for mps; ValueError for anything else."""
    torch = _torch.require("build_device_memory_collector")
    if device is None:
        backend = detect_torch_runtime_backend()
        if backend == "cpu":
            raise ValueError("No GPU device to collect memory from: the runtime backend is cpu")
        device = torch.device("mps") if backend == "mps" else torch.device("cuda", torch.cuda.current_device())
    dev = device if isinstance(device, torch.device) else \
        torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    if dev.type == "cuda":
        return ROCmDeviceCollector(dev) if _torch.is_rocm(torch) else CudaDeviceCollector(dev)
    if dev.type == "mps":
        return MPSDeviceCollector(dev)
    raise ValueError("Unsupported device type for memory collection: %r" % (dev.type,))
