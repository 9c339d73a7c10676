"""PyTorch, imported only when asked for, and the reference's rules for
naming a device.

gpufl.memory imports without PyTorch (its utilities, telemetry and OOM
bundle work anywhere); the classes that measure PyTorch's allocator get it
from here, and without it raise the reference's ImportError. Device
resolution follows gpumemprof: GPUMemoryProfiler takes CUDA devices only
(ROCm builds answer as CUDA), MemoryTracker also Apple's MPS.
"""

__all__ = ["get", "require", "is_rocm", "mps_available", "mps_built", "resolve_cuda", "resolve_tracker_device",
           "index_of"]


def get():
    """The torch module, or None when it cannot be imported."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def require(what):
    """The torch module; ImportError saying what needs it otherwise."""
    torch = get()
    if torch is None:
        raise ImportError("gpufl.memory.%s needs PyTorch, which cannot be imported here; install it "
                          "(pip install torch) to measure its GPU memory" % what)
    return torch


def is_rocm(torch):
    return bool(getattr(getattr(torch, "version", None), "hip", None))


def _mps(torch):
    return getattr(getattr(torch, "backends", None), "mps", None)


def mps_available(torch):
    m = _mps(torch)
    try:
        return bool(m is not None and m.is_available())
    except Exception:
        return False


def mps_built(torch):
    m = _mps(torch)
    try:
        return bool(m is not None and m.is_built())
    except Exception:
        return False


def _as_device(torch, device):
    if isinstance(device, int) and not isinstance(device, bool):
        return torch.device("cuda", device)
    if isinstance(device, str):
        return torch.device(device)
    if isinstance(device, torch.device):
        return device
    raise ValueError("Unsupported device specification: %r" % (device,))


def _with_index(torch, dev):
    index = dev.index if dev.index is not None else torch.cuda.current_device()
    if index < 0 or index >= torch.cuda.device_count():
        raise ValueError("Invalid CUDA device index %d: %d device(s) available" % (index, torch.cuda.device_count()))
    return torch.device("cuda", index)


def resolve_cuda(torch, device):
    """GPUMemoryProfiler's device: always cuda:N with N set."""
    if not torch.cuda.is_available():
        raise RuntimeError("CUDA is not available, cannot profile GPU memory")
    if device is None:
        return torch.device("cuda", torch.cuda.current_device())
    dev = _as_device(torch, device)
    if dev.type != "cuda":
        raise ValueError("GPUMemoryProfiler only supports CUDA devices, got %r" % (str(dev),))
    return _with_index(torch, dev)


def resolve_tracker_device(torch, device):
    """MemoryTracker's device: cuda:N, else mps."""
    cuda = torch.cuda.is_available()
    if device is None:
        if cuda:
            return torch.device("cuda", torch.cuda.current_device())
        if mps_available(torch):
            return torch.device("mps")
        raise RuntimeError("No supported GPU backend is available")
    if isinstance(device, int) and not isinstance(device, bool) and not cuda:
        raise ValueError("An integer device index needs CUDA (or ROCm), which is not available")
    dev = _as_device(torch, device)
    if dev.type == "cuda":
        if not cuda:
            raise RuntimeError("CUDA device requested but CUDA is not available")
        return _with_index(torch, dev)
    if dev.type == "mps":
        if not mps_available(torch):
            raise RuntimeError("MPS device requested but MPS is not available")
        return torch.device("mps")
    raise ValueError("Unsupported device type %r: MemoryTracker supports cuda and mps" % (dev.type,))


def index_of(device):
    """The device's index (0 for an index-less device such as mps)."""
    return device.index if getattr(device, "index", None) is not None else 0
