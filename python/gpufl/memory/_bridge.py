"""Where the reference API meets the recorder: what GPUMemoryProfiler and
MemoryTracker measure goes into the running gpufl session, if one records.

* Allocator states: the memory_stats dict a class has just read is
  recorded as it is (gpufl_record_allocator), with a reason saying why:
  "snapshot" (a profiler snapshot), "sample" (a monitor or tracker
  sample), "check" (asked for). The session's figures are then the very
  figures the class reports.
* PyTorch's collector (_torch_source): attached, without a sampling
  thread of its own, when a class is made while a session records, so
  that the session gets the allocator's state after every scope and
  PyTorch's out-of-memory through its observer, with the live blocks (and
  their Python stacks when stack traces are asked for).

Without a session every call here does nothing.
"""

from .. import _lib, _scope
from . import _record, _torch_source

__all__ = ["recording", "record_stats", "attach_for"]


def recording():
    """Whether a gpufl session of this process records now."""
    return not _scope._off and bool(_lib.is_recording())


def record_stats(device, stats, reason, **extra):
    """Records a torch.cuda.memory_stats() dict of device into the session.
    Returns True when recorded."""
    if not stats or not recording():
        return False
    figures = _torch_source.stats_figures(stats)
    figures.update(extra)
    return _record.record_allocator(device, "pytorch", reason, **figures) == 0


def attach_for(history=False):
    """Attaches PyTorch's collector to the session (interval 0: the classes
    sample on their own), if a session records and it is not attached yet.
    Returns whether it is attached now."""
    if recording() and not _torch_source.attached():
        try:
            _torch_source.attach(interval_s=0, history=history)
        except Exception:
            return False
    return _torch_source.attached()
