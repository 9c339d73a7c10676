"""The reference's result records (gpumemprof.profiler): a snapshot of the
allocator and the measurement of one profiled call. Bytes, seconds,
time.time() timestamps, and to_dict() keys in the reference's order."""

import dataclasses
from typing import Optional

__all__ = ["MemorySnapshot", "ProfileResult"]


@dataclasses.dataclass
class MemorySnapshot:
    """PyTorch's allocator on one device at one moment. cpu_memory is the
    system's used RAM (not this process's), as the reference reports it."""

    timestamp: float
    allocated_memory: int
    reserved_memory: int
    max_memory_allocated: int
    max_memory_reserved: int
    active_memory: int
    inactive_memory: int
    cpu_memory: int
    device_id: int = 0
    operation: Optional[str] = None
    stack_trace: Optional[str] = None

    def to_dict(self):
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclasses.dataclass
class ProfileResult:
    """One profiled call: its wall time and its snapshots before, after and
    at the peak (memory_peak's figures are the allocator's peaks over the
    call, absolute, not relative to before)."""

    function_name: str
    execution_time: float
    memory_before: MemorySnapshot
    memory_after: MemorySnapshot
    memory_peak: MemorySnapshot
    memory_allocated: int
    memory_freed: int
    tensors_created: int
    tensors_deleted: int
    call_count: int = 1

    def memory_diff(self):
        """after - before allocated bytes (negative when the call freed)."""
        return self.memory_after.allocated_memory - self.memory_before.allocated_memory

    def peak_memory_usage(self):
        return self.memory_peak.allocated_memory

    def to_dict(self):
        return {
            "function_name": self.function_name,
            "execution_time": self.execution_time,
            "memory_before": self.memory_before.to_dict(),
            "memory_after": self.memory_after.to_dict(),
            "memory_peak": self.memory_peak.to_dict(),
            "memory_allocated": self.memory_allocated,
            "memory_freed": self.memory_freed,
            "memory_diff": self.memory_diff(),
            "peak_memory_usage": self.peak_memory_usage(),
            "tensors_created": self.tensors_created,
            "tensors_deleted": self.tensors_deleted,
            "call_count": self.call_count,
        }
