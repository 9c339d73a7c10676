"""The framework layer of memory, into the C recorder (gpufl.h, "Framework
memory"): allocator states, blocks with their Python stacks, and an
out-of-memory the framework raised. Every call is a no-op returning the
library's GPUFL_ESTATE (-4) when no session records, as the C calls are.

Bound on first use rather than at import: a libgpufl older than these
functions still serves the rest of the package, and only memory recording
says it cannot (``available()``).
"""

import ctypes

from .. import _lib

__all__ = ["AllocatorState", "available", "record_allocator", "record_block", "report_oom",
           "set_framework_oom"]

_u32, _u64, _size_t = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t


class AllocatorState(ctypes.Structure):
    """gpufl_allocator_state (its members are only ever appended)."""

    _fields_ = [("struct_size", _size_t), ("device", _u32), ("framework", ctypes.c_char_p),
                ("reason", ctypes.c_char_p), ("allocated_bytes", _u64), ("reserved_bytes", _u64),
                ("active_bytes", _u64), ("inactive_split_bytes", _u64), ("largest_free_bytes", _u64),
                ("peak_allocated_bytes", _u64), ("peak_reserved_bytes", _u64), ("requested_bytes", _u64),
                ("device_free_bytes", _u64), ("alloc_retries", _u32), ("ooms", _u32), ("ts_ns", _u64)]


class SourceFrame(ctypes.Structure):
    """gpufl_source_frame."""

    _fields_ = [("file", ctypes.c_char_p), ("function", ctypes.c_char_p), ("line", _u32)]


_bound = {}
_PROTOS = {
    # name: (restype, argtypes, hold_gil) -- none of them waits but report_oom
    "gpufl_record_allocator": (ctypes.c_int, [ctypes.POINTER(AllocatorState)], True),
    "gpufl_record_block": (ctypes.c_int, [_u32, _u64, _u64, ctypes.c_int, _u64, _u64,
                                          ctypes.POINTER(SourceFrame), _size_t], True),
    "gpufl_report_oom": (ctypes.c_int, [_u32, _u64, ctypes.c_char_p], False),
    "gpufl_set_framework_oom": (ctypes.c_int, [ctypes.c_int], True),
}


def _fn(name):
    f = _bound.get(name)
    if f is None:
        if not hasattr(_lib.lib, name):
            return None
        restype, argtypes, hold = _PROTOS[name]
        f = _bound[name] = _lib.bind(name, restype, argtypes, hold)
    return f


def available():
    """Whether the loaded libgpufl records framework memory (allocator
    states and blocks; report_oom and set_framework_oom are newer still and
    answer -4 where missing)."""
    return hasattr(_lib.lib, "gpufl_record_allocator") and hasattr(_lib.lib, "gpufl_record_block")


def _b(s):
    return s.encode("utf-8", "replace") if isinstance(s, str) else s


def record_allocator(device, framework="pytorch", reason="sample", **figures):
    """Records one allocator state; figures are AllocatorState members
    (allocated_bytes=..., ...). Returns the C call's code, -4 without a session."""
    f = _fn("gpufl_record_allocator")
    if f is None:
        return -4
    st = AllocatorState(struct_size=ctypes.sizeof(AllocatorState), device=int(device),
                        framework=_b(framework), reason=_b(reason))
    for k, v in figures.items():
        setattr(st, k, int(v or 0))
    return f(ctypes.byref(st))


def record_block(device, address, size, is_free=False, stream=0, ts_ns=0, frames=None):
    """Records a block handed out or taken back; frames: (file, function,
    line) innermost first."""
    f = _fn("gpufl_record_block")
    if f is None:
        return -4
    arr, n = None, 0
    if frames:
        n = len(frames)
        arr = (SourceFrame * n)(*[SourceFrame(_b(fi), _b(fn), int(ln)) for fi, fn, ln in frames])
    return f(int(device), int(address), int(size), 1 if is_free else 0, int(stream) & (2**64 - 1),
             int(ts_ns), arr, n)


def report_oom(device, requested, detail):
    """Fires the "oom" trigger and waits until its dump is written."""
    f = _fn("gpufl_report_oom")
    return -4 if f is None else f(int(device), int(requested), _b(detail))


def set_framework_oom(on):
    """While on, a failed cudaMalloc is recorded but the framework says
    whether it was an out-of-memory (its allocator retries first)."""
    f = _fn("gpufl_set_framework_oom")
    return -4 if f is None else f(1 if on else 0)
