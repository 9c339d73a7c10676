"""A scripted stand-in for PyTorch's CUDA caching allocator, for the tests
of gpufl.memory on machines without a GPU.

What it models, as PyTorch does: blocks rounded up to 512 B; segments of 2
MiB multiples reserved from the device when the cache cannot hold a new
block, kept after their blocks are freed until empty_cache(); peaks until
reset_peak_memory_stats(); on a request that does not fit, one retry
after emptying the cache (num_alloc_retries), then the OOM observers are
called with (device, requested, device total, device free) and
OutOfMemoryError is raised (num_ooms). With memory history on, every
block keeps the Python stack that allocated it and the device traces list
alloc and free_completed entries with wall-clock microseconds.

Tests script it through ``torch._fake`` (the one State): devices and their
memory, memory other processes hold (``other_used``), figures to put into
memory_stats (``extra_stats``), and CUDA missing (``available``).
"""

import sys
import time
import traceback
import types

GRAIN = 512
SEGMENT = 2 << 20
GiB = 1 << 30


class OutOfMemoryError(RuntimeError):
    pass


OutOfMemoryError.__module__ = "torch.cuda"  # where PyTorch defines it


def _round(n, grain):
    return max(grain, -(-int(n) // grain) * grain)


class Device:
    def __init__(self, index, total):
        self.index = index
        self.total = total
        self.name = "Fake GPU %d" % index
        self.blocks = {}  # address -> Block
        self.allocated = self.reserved = self.peak_allocated = self.peak_reserved = 0
        self.retries = self.ooms = 0
        self.other_used = 0  # held by other processes
        self.extra_stats = {}
        self.trace = []


class Block:
    def __init__(self, address, size, frames):
        self.address, self.size, self.frames = address, size, frames


class State:
    def __init__(self):
        self.observers = []  # PyTorch never drops an OOM observer: kept across reset()
        self.reset()

    def reset(self, devices=1, total=8 * GiB, available=True):
        self.available = available
        self.devices = [Device(i, total) for i in range(devices)]
        self.current = 0
        self.initialized = False
        self.pending = []  # _lazy_call's callables, run when CUDA is set up
        self.history = False
        self.next_address = 0x7F0000000000
        self.synchronized = 0

    # -- CUDA set-up --

    def init(self):
        if not self.available:
            raise RuntimeError("Found no NVIDIA driver on your system.")
        if not self.initialized:
            self.initialized = True
            pending, self.pending = self.pending, []
            for fn in pending:
                fn()

    def device(self, d=None):
        if d is None:
            d = self.current
        d = getattr(d, "index", d)
        if isinstance(d, str):
            d = int(d.split(":")[1]) if ":" in d else self.current
        return self.devices[self.current if d is None else d]

    # -- the allocator --

    def _stack(self):
        """The Python stack of the allocating call, innermost first, without
        this fake's own frames."""
        here = __name__.rsplit(".", 1)[0]
        frames = []
        for fs in reversed(traceback.extract_stack()):
            mod = sys.modules.get(here)
            if mod is not None and fs.filename.startswith(mod.__path__[0]):
                continue
            frames.append({"filename": fs.filename, "line": fs.lineno, "name": fs.name})
        return frames

    def malloc(self, nbytes, d=None):
        self.init()
        dev = self.device(d)
        size = _round(nbytes, GRAIN)
        if not self._fits(dev, size):
            dev.retries += 1
            self._empty(dev)
            if not self._fits(dev, size):
                dev.ooms += 1
                free = max(dev.total - dev.reserved - dev.other_used, 0)
                for cb in list(self.observers):
                    cb(dev.index, size, dev.total, free)
                raise OutOfMemoryError(
                    "CUDA out of memory. Tried to allocate %.2f GiB. GPU %d has a total capacity of %.2f GiB of "
                    "which %.2f GiB is free." % (size / GiB, dev.index, dev.total / GiB, free / GiB))
        if dev.reserved - dev.allocated < size:
            dev.reserved += _round(size, SEGMENT)
        address = self.next_address
        self.next_address += _round(size, SEGMENT)
        frames = self._stack() if self.history else []
        dev.blocks[address] = Block(address, size, frames)
        dev.allocated += size
        dev.peak_allocated = max(dev.peak_allocated, dev.allocated)
        dev.peak_reserved = max(dev.peak_reserved, dev.reserved)
        if self.history:
            dev.trace.append({"action": "alloc", "addr": address, "size": size, "stream": 0,
                              "time_us": time.time_ns() // 1000, "frames": frames})
        return dev, address, size

    def free(self, dev, address):
        b = dev.blocks.pop(address, None)
        if b is None:
            return
        dev.allocated -= b.size
        if self.history:
            dev.trace.append({"action": "free_completed", "addr": address, "size": b.size, "stream": 0,
                              "time_us": time.time_ns() // 1000, "frames": []})

    def _fits(self, dev, size):
        if dev.reserved - dev.allocated >= size:
            return True
        return dev.reserved + _round(size, SEGMENT) + dev.other_used <= dev.total

    def _empty(self, dev):
        dev.reserved = _round(dev.allocated, SEGMENT) if dev.allocated else 0

    # -- torch.cuda's functions --

    def memory_stats(self, d=None):
        dev = self.device(d)
        stats = {
            "allocated_bytes.all.current": dev.allocated, "allocated_bytes.all.peak": dev.peak_allocated,
            "reserved_bytes.all.current": dev.reserved, "reserved_bytes.all.peak": dev.peak_reserved,
            "active_bytes.all.current": dev.allocated, "active_bytes.all.peak": dev.peak_allocated,
            "inactive_split_bytes.all.current": 0, "num_alloc_retries": dev.retries, "num_ooms": dev.ooms,
            "allocation.all.current": len(dev.blocks),
        }
        stats.update(dev.extra_stats)
        return stats

    def reset_peak_memory_stats(self, d=None):
        dev = self.device(d)
        dev.peak_allocated, dev.peak_reserved = dev.allocated, dev.reserved

    def empty_cache(self):
        for dev in self.devices:
            self._empty(dev)

    def mem_get_info(self, d=None):
        dev = self.device(d)
        return max(dev.total - dev.reserved - dev.other_used, 0), dev.total

    def record_memory_history(self, enabled="all", context=None, stacks=None, max_entries=None, **kw):
        self.history = enabled is not None and enabled is not False
        if not self.history:
            for dev in self.devices:
                dev.trace = []

    def snapshot(self):
        segments = []
        for dev in self.devices:
            blocks = [{"address": b.address, "size": b.size, "state": "active_allocated",
                       "frames": list(b.frames)} for b in dev.blocks.values()]
            cached = dev.reserved - dev.allocated
            if cached > 0:
                blocks.append({"address": self.next_address + dev.index, "size": cached, "state": "inactive",
                               "frames": []})
            if blocks:
                segments.append({"device": dev.index, "stream": 0, "total_size": dev.reserved, "blocks": blocks})
        return {"segments": segments, "device_traces": [list(dev.trace) for dev in self.devices]}

    def properties(self, d=None):
        dev = self.device(d)
        return types.SimpleNamespace(name=dev.name, total_memory=dev.total, major=9, minor=0,
                                     multi_processor_count=132)
