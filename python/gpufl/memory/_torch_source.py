"""PyTorch's caching allocator, recorded: the third layer of memory.

``attach(interval_s, history)`` starts recording, from PyTorch's own
figures, into the running gpufl session:

* the allocator's state (``torch.cuda.memory_stats``: allocated, reserved,
  active, inactive split, peaks, retries, OOMs) every ``interval_s`` from a
  daemon thread, and whenever ``record_state(reason)`` asks (the package
  does at the end of each profiled scope or step);
* with ``history``, the blocks tensors hold, each with the Python stack that
  allocated it: PyTorch keeps them when its memory history is on
  (``torch.cuda.memory._record_memory_history(stacks="python")``), and
  ``record_blocks()`` takes its snapshot and records every live block with
  its allocation time (the trace entry's wall-clock time, moved to
  CLOCK_MONOTONIC). A snapshot costs seconds the first time and is taken
  only at the end, on request and on an out-of-memory;
* an out-of-memory, through PyTorch's OOM observer, which PyTorch calls once
  its allocator has given up (after emptying its cache and retrying): the
  state with the bytes asked for and the driver's free memory, the live
  blocks, then the "oom" trigger, which dumps the flight window and writes
  its oom.json before PyTorch raises. While attached, a cudaMalloc that
  fails inside the allocator's retry is recorded but is not an OOM by
  itself (``set_framework_oom``).

PyTorch offers no way to remove an OOM observer: detach() leaves it in
place, doing nothing.
"""

import atexit
import threading
import time

from .. import _scope
from . import _oom_dump, _record

__all__ = ["attach", "detach", "attached", "record_state", "record_blocks", "largest_free", "stats_figures"]

_lock = threading.RLock()
_state = None


class _Attachment:
    def __init__(self, torch, interval_s, history):
        self.torch = torch
        self.interval_s = interval_s
        self.history = history
        self.stop = threading.Event()
        self.thread = None
        self.recorded_blocks = {}  # (device, address) -> size, recorded live
        self.largest_free = {}  # device -> the largest free block at the last snapshot


def stats_figures(stats):
    """AllocatorState figures from a torch.cuda.memory_stats() dict."""

    def g(key):
        return int(stats.get(key, 0) or 0)

    return {
        "allocated_bytes": g("allocated_bytes.all.current"),
        "reserved_bytes": g("reserved_bytes.all.current"),
        "active_bytes": g("active_bytes.all.current"),
        "inactive_split_bytes": g("inactive_split_bytes.all.current"),
        "peak_allocated_bytes": g("allocated_bytes.all.peak"),
        "peak_reserved_bytes": g("reserved_bytes.all.peak"),
        "alloc_retries": g("num_alloc_retries"),
        "ooms": g("num_ooms"),
    }


def _devices(torch):
    """The devices PyTorch has set up (asking an uninitialised one would
    create a CUDA context the program never made)."""
    try:
        if not torch.cuda.is_initialized():
            return []
        return list(range(torch.cuda.device_count()))
    except Exception:
        return []


def record_state(reason="sample", device=None, **extra):
    """Records the allocator's state of device (all set-up devices when
    None) now. Returns how many states were recorded."""
    with _lock:
        a = _state
    if a is None:
        return 0
    torch = a.torch
    done = 0
    for d in ([device] if device is not None else _devices(torch)):
        try:
            figures = stats_figures(torch.cuda.memory_stats(d))
        except Exception:
            continue
        figures.update(extra)
        if _record.record_allocator(d, "pytorch", reason, **figures) == 0:
            done += 1
    return done


def _wall_to_monotonic_ns(time_us):
    """A trace entry's time (wall clock, us) on gpufl's clock."""
    offset = time.time_ns() - time.monotonic_ns()
    return max(0, int(time_us) * 1000 - offset)


def _frames(entry):
    return [(f.get("filename", "?"), f.get("name", "?"), f.get("line", 0)) for f in entry.get("frames") or []]


def record_blocks(reason="snapshot", state=True):
    """Records every live block of PyTorch's snapshot that was not recorded
    live yet, with its stack and allocation time, and the blocks recorded
    before that are gone as freed; then, with state, the allocator's state
    with the largest free block (without, the caller records the state
    itself, with largest_free()). Returns the number of blocks recorded, or
    None without memory history."""
    with _lock:
        a = _state
    if a is None or not a.history:
        return None
    torch = a.torch
    try:
        snap = torch.cuda.memory._snapshot()
    except Exception:
        return None
    # the latest allocation of each address in the trace: its time and stack
    born = {}
    for dev, entries in enumerate(snap.get("device_traces") or []):
        for e in entries:
            if e.get("action") == "alloc":
                born[(dev, e.get("addr"))] = e
    live, largest_free = {}, {}
    for seg in snap.get("segments") or []:
        dev = seg.get("device", 0)
        for b in seg.get("blocks") or []:
            if b.get("state") == "active_allocated":
                live[(dev, b["address"])] = (b, seg.get("stream", 0))
            elif b.get("state") == "inactive":
                largest_free[dev] = max(largest_free.get(dev, 0), int(b.get("size", 0)))
    now = time.monotonic_ns()
    n = 0
    with _lock:
        for key, size in list(a.recorded_blocks.items()):
            if key not in live:
                _record.record_block(key[0], key[1], size, True, 0, now)
                del a.recorded_blocks[key]
        for key, (b, stream) in live.items():
            if key in a.recorded_blocks:
                continue
            entry = born.get(key)
            ts = _wall_to_monotonic_ns(entry["time_us"]) if entry and entry.get("time_us") else 0
            frames = _frames(b) or (_frames(entry) if entry else [])
            if _record.record_block(key[0], key[1], int(b.get("size", 0)), False, stream, ts, frames) == 0:
                a.recorded_blocks[key] = int(b.get("size", 0))
                n += 1
    a.largest_free = largest_free
    if state:
        for dev in _devices(torch):
            record_state(reason, dev, largest_free_bytes=largest_free.get(dev, 0))
    return n


def largest_free(device):
    """The largest free block of device at the last record_blocks (0
    unknown)."""
    with _lock:
        a = _state
    return a.largest_free.get(device, 0) if a is not None else 0


def _on_oom(device, requested, device_total, device_free):
    """PyTorch's OOM observer: called once its allocator gave up."""
    with _lock:
        a = _state
    if a is None:
        return
    called = time.monotonic_ns()
    try:
        # one state of reason "oom", with what was asked for: the dump's
        # oom.json reads the device's latest state. Stamped when PyTorch
        # called: the blocks' snapshot before it can take seconds (the
        # process's first), and the OOM is dated by this state
        record_blocks("oom", state=False)
        record_state("oom", device, requested_bytes=requested, device_free_bytes=device_free,
                     largest_free_bytes=largest_free(device), ts_ns=called)
        gib = requested / float(1 << 30)
        _oom_dump.report(device, requested, "torch: tried to allocate %.2f GiB on GPU %d" % (gib, device))
    except Exception:
        pass  # never the program's problem: it is about to raise its own error


_observer_attached = False


def _warm_snapshot(torch):
    try:
        torch.cuda.memory._snapshot()
    except Exception:
        pass


def _on_scope_end(name):
    record_state("scope")


def _sample_loop(a):
    while not a.stop.wait(a.interval_s):
        record_state("sample")


def attach(interval_s=0.1, history=False, history_entries=100000):
    """Starts recording PyTorch's allocator (see the module docstring).
    interval_s 0 records states only when asked. Returns True when attached
    now, False when it already was or the library cannot record it."""
    global _state
    import torch

    if not _record.available():
        return False
    with _lock:
        if _state is not None:
            return False
        a = _state = _Attachment(torch, interval_s, history)
    observe = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)

    def on_cuda_ready():
        # PyTorch runs this once it has set CUDA up (now, if it has): asking
        # earlier would make the CUDA context the program has not made yet
        global _observer_attached
        if history:
            torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python",
                                                     max_entries=history_entries)
            # PyTorch's first snapshot of a process takes seconds (6 s on an
            # H100 with torch 2.11), later ones milliseconds: take the first
            # now, off the program's thread, so that an OOM or the end does
            # not wait for it
            threading.Thread(target=_warm_snapshot, args=(torch,), name="gpufl-snapshot-warmup",
                             daemon=True).start()
        if observe is not None and not _observer_attached:
            observe(_on_oom)
            _observer_attached = True

    lazy = getattr(torch.cuda, "_lazy_call", None)
    if lazy is not None:
        lazy(on_cuda_ready)
    else:
        on_cuda_ready()
    _record.set_framework_oom(observe is not None)
    _scope._on_end = _on_scope_end
    if interval_s and interval_s > 0:
        a.thread = threading.Thread(target=_sample_loop, args=(a,), name="gpufl-torch-memory", daemon=True)
        a.thread.start()
    atexit.register(detach)  # the live blocks at the end, before the session ends
    return True


def attached():
    with _lock:
        return _state is not None


def detach():
    """Stops recording: the last state and, with history, the live blocks
    are recorded first."""
    global _state
    with _lock:
        a = _state
    if a is None:
        return
    a.stop.set()
    if _scope._on_end is _on_scope_end:
        _scope._on_end = None
    if a.thread is not None:
        a.thread.join()
    record_state("end")
    if a.history:
        record_blocks("end")
        try:
            a.torch.cuda.memory._record_memory_history(enabled=None)
        except Exception:
            pass
    _record.set_framework_oom(False)
    with _lock:
        _state = None
