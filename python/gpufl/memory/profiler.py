"""GPUMemoryProfiler: the reference's function and block profiler
(gpumemprof.profiler), measuring PyTorch's caching allocator and recording
what it measures into the running gpufl session.

Measuring is the reference's: snapshots of the allocator before and after
each profiled call, its peaks over the call (the peak counters are reset
first), tensor counts, and a monitor thread of snapshots. What gpufl adds,
when a session records:

* every profiled call or block is a gpufl scope of its name (gpufl.Scope),
  so it sits on the session's timeline with the device work it caused;
* every snapshot is an allocator state in the session (reason "snapshot";
  the monitor's "sample"), from the same memory_stats reading the snapshot
  was made of;
* PyTorch's collector is attached (gpufl.memory._torch_source): the
  allocator's state after every scope and PyTorch's out-of-memory with the
  live blocks, their Python stacks with collect_stack_traces.

Differences from the reference, and why:

* A snapshot's figures come from one torch.cuda.memory_stats() call (the
  reference calls memory_allocated, memory_reserved, max_* and
  memory_stats apart: the same counters, read at slightly different
  moments), so that the session holds exactly what the snapshot says.
* cpu_memory is, as in the reference, the system's used RAM
  (psutil.virtual_memory().used), read from /proc/meminfo with psutil's
  formula since psutil is not a dependency here; it is not this process's.
* Without PyTorch the constructor raises ImportError (the reference fails
  at import); without CUDA, RuntimeError("CUDA is not available, cannot
  profile GPU memory") as the reference.
"""

import collections
import contextlib
import gc
import threading
import time
import traceback
import warnings

from .. import _scope
from . import _bridge, _torch
from .results import MemorySnapshot, ProfileResult
from .utils import system_used_bytes

__all__ = ["GPUMemoryProfiler", "TensorTracker"]


class TensorTracker:
    """Counts the CUDA tensors alive (gc.collect, then every torch.Tensor
    the garbage collector knows with is_cuda set), as the reference."""

    def __init__(self, torch=None):
        self._torch = torch or _torch.require("TensorTracker")

    def count_tensors(self):
        gc.collect()
        tensor = self._torch.Tensor
        n = 0
        # isinstance reads __class__, which some lazy module attributes answer
        # with a deprecation warning (torch.distributed.reduce_op on torch
        # 2.11): counting is no use of them
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for obj in gc.get_objects():
                try:
                    if isinstance(obj, tensor) and obj.is_cuda:
                        n += 1
                except Exception:  # objects that fail isinstance or is_cuda (proxies) are not tensors
                    continue
        return n


def _stat(stats, key, default=0):
    return int(stats.get(key, default) or 0)


class _Call:
    """What profile_function and profile_context know between the start of
    a call and its end."""

    def __init__(self, name, before, tensors_before):
        self.name = name
        self.before = before
        self.tensors_before = tensors_before
        self.start = time.time()


class GPUMemoryProfiler:
    """Profiles PyTorch's GPU memory on one CUDA device (see the module
    docstring). Attributes as the reference: device, track_tensors,
    track_cpu_memory, collect_stack_traces, results, snapshots (the monitor
    thread's), function_stats (name -> [ProfileResult])."""

    def __init__(self, device=None, track_tensors=True, track_cpu_memory=True, collect_stack_traces=False):
        self._torch = _torch.require("GPUMemoryProfiler")
        self.device = _torch.resolve_cuda(self._torch, device)
        self.track_tensors = track_tensors
        self.track_cpu_memory = track_cpu_memory
        self.collect_stack_traces = collect_stack_traces
        self.results = []
        self.snapshots = []
        self.function_stats = collections.defaultdict(list)
        self._monitoring = False
        self._monitor_thread = None
        self._monitor_interval = 0.1
        self._tensor_tracker = TensorTracker(self._torch) if track_tensors else None
        _bridge.attach_for(history=collect_stack_traces)
        self._baseline_snapshot = self._take_snapshot("baseline")

    # ---- snapshots ----

    def _read(self, operation, reason):
        """(snapshot, memory_stats) of now, the stats recorded into the
        session with reason."""
        cuda = self._torch.cuda
        cuda.synchronize(self.device)
        stats = cuda.memory_stats(self.device.index) or {}
        _bridge.record_stats(self.device.index, stats, reason)
        snap = MemorySnapshot(
            timestamp=time.time(), allocated_memory=_stat(stats, "allocated_bytes.all.current"),
            reserved_memory=_stat(stats, "reserved_bytes.all.current"),
            max_memory_allocated=_stat(stats, "allocated_bytes.all.peak"),
            max_memory_reserved=_stat(stats, "reserved_bytes.all.peak"),
            active_memory=_stat(stats, "active_bytes.all.current"),
            inactive_memory=_stat(stats, "inactive_split_bytes.all.current"),
            cpu_memory=system_used_bytes() if self.track_cpu_memory else 0, device_id=self.device.index,
            operation=operation)
        if self.collect_stack_traces and operation:
            snap.stack_trace = "".join(traceback.format_stack()[-5:])
        return snap, stats

    def _take_snapshot(self, operation=None, reason="snapshot"):
        return self._read(operation, reason)[0]

    def _peak(self, name, after, stats, end):
        """The peak snapshot of a call: the allocator's peak counters since
        they were reset at its start (the after-snapshot's where missing)."""
        return MemorySnapshot(
            timestamp=end, allocated_memory=_stat(stats, "allocated_bytes.all.peak", after.allocated_memory),
            reserved_memory=_stat(stats, "reserved_bytes.all.peak", after.reserved_memory),
            max_memory_allocated=after.max_memory_allocated, max_memory_reserved=after.max_memory_reserved,
            active_memory=_stat(stats, "active_bytes.all.peak", after.active_memory),
            inactive_memory=after.inactive_memory, cpu_memory=after.cpu_memory, device_id=self.device.index,
            operation="peak_" + name)

    # ---- profiling a call ----

    def _begin(self, name):
        self._torch.cuda.reset_peak_memory_stats(self.device.index)
        before = self._take_snapshot("before_" + name)
        counted = self._tensor_tracker.count_tensors() if self._tensor_tracker else None
        return _Call(name, before, counted)

    def _store(self, result):
        self.results.append(result)
        self.function_stats[result.function_name].append(result)
        return result

    def _end(self, call, suffix=""):
        """The call's ProfileResult, stored. suffix "_error": the call
        raised; its after and peak are plain snapshots and it counts no
        memory or tensors, as the reference's."""
        end = time.time()
        after, stats = self._read("after_%s%s" % (call.name, suffix), "snapshot")
        if suffix:
            peak = self._take_snapshot("peak_%s%s" % (call.name, suffix))
            return self._store(ProfileResult(call.name, end - call.start, call.before, after, peak, 0, 0, 0, 0))
        created = deleted = 0
        if self._tensor_tracker is not None:
            n = self._tensor_tracker.count_tensors()
            created, deleted = max(0, n - call.tensors_before), max(0, call.tensors_before - n)
        diff = after.allocated_memory - call.before.allocated_memory
        return self._store(ProfileResult(call.name, end - call.start, call.before, after,
                                         self._peak(call.name, after, stats, end), max(0, diff), max(0, -diff),
                                         created, deleted))

    def profile_function(self, func, *args, **kwargs):
        """Runs func(*args, **kwargs) in a gpufl scope of its name and
        returns its ProfileResult; func's own return value is dropped, as
        in the reference. When func raises, an error result is stored and
        the exception propagates."""
        name = getattr(func, "__name__", str(func))
        call = self._begin(name)
        try:
            with _scope.Scope(name):
                func(*args, **kwargs)
                self._torch.cuda.synchronize(self.device)
        except Exception:
            self._end(call, "_error")
            raise
        return self._end(call)

    @contextlib.contextmanager
    def profile_context(self, name="context"):
        """Profiles the with-block as a gpufl scope called name; yields None
        (the result is profiler.results[-1]), and stores it even when the
        block raises, which then propagates."""
        call = self._begin(name)
        try:
            with _scope.Scope(name):
                yield
                self._torch.cuda.synchronize(self.device)
        finally:
            self._end(call)

    # ---- monitoring ----

    def start_monitoring(self, interval=0.1):
        """Appends a snapshot ("monitor") to snapshots every interval seconds
        from a daemon thread, each also recorded into the session."""
        if self._monitoring:
            return
        self._monitoring = True
        self._monitor_interval = interval
        self._monitor_thread = threading.Thread(target=self._monitor, name="gpufl-memory-monitor", daemon=True)
        self._monitor_thread.start()

    def _monitor(self):
        while self._monitoring:
            self.snapshots.append(self._take_snapshot("monitor", reason="sample"))
            time.sleep(self._monitor_interval)

    def stop_monitoring(self):
        self._monitoring = False
        if self._monitor_thread is not None:
            self._monitor_thread.join()

    # ---- results ----

    def get_summary(self):
        """The reference's summary (bytes, seconds), or
        {"message": "No profiling results available"} before any result."""
        if not self.results:
            return {"message": "No profiling results available"}
        allocated = sum(r.memory_allocated for r in self.results)
        freed = sum(r.memory_freed for r in self.results)
        functions = {}
        for name, rs in self.function_stats.items():
            t = sum(r.execution_time for r in rs)
            a = sum(r.memory_allocated for r in rs)
            functions[name] = {"call_count": len(rs), "total_time": t, "avg_time": t / len(rs),
                               "total_memory_allocated": a, "avg_memory_allocated": a / len(rs),
                               "peak_memory": max(r.peak_memory_usage() for r in rs)}
        current = self._take_snapshot("current")
        return {
            "device": str(self.device),
            "total_functions_profiled": len(self.function_stats),
            "total_function_calls": len(self.results),
            "total_execution_time": sum(r.execution_time for r in self.results),
            "total_memory_allocated": allocated,
            "total_memory_freed": freed,
            "net_memory_change": allocated - freed,
            "peak_memory_usage": max(r.peak_memory_usage() for r in self.results),
            "current_memory_usage": current.allocated_memory,
            "baseline_memory_usage": self._baseline_snapshot.allocated_memory,
            "memory_change_from_baseline": current.allocated_memory - self._baseline_snapshot.allocated_memory,
            "function_summaries": functions,
            "monitoring_active": self._monitoring,
            "snapshots_collected": len(self.snapshots),
        }

    def clear_results(self):
        """Forgets results and snapshots, resets the peaks, and takes a new
        baseline ("new_baseline")."""
        self.results.clear()
        self.snapshots.clear()
        self.function_stats.clear()
        self._torch.cuda.reset_peak_memory_stats(self.device.index)
        self._baseline_snapshot = self._take_snapshot("new_baseline")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop_monitoring()
        return False
