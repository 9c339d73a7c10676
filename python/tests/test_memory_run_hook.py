"""gpufl run's start-up hook with memory tracking: PyTorch's allocator is
attached when the program imports torch, and with GPUFL_MEMORY_WATCHDOG
(`gpufl mem track --watchdog`) a MemoryTracker and its MemoryWatchdog start
once PyTorch has made its CUDA context, with the thresholds gpufl mem track
passed, and empty the cache past them. Run in a child with the PyTorch
stand-in as torch."""
import os

import gpufl
from conftest import FAKE_TORCH_DIR, run_python_ok

HOOK_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run_hook")

CHILD = """
import threading, time
import torch
from gpufl.memory import _torch_source
print("attached", _torch_source.attached())
print("threads before CUDA", sorted(t.name for t in threading.enumerate() if t.name.startswith("gpufl-memory-tracker")))
torch.cuda._lazy_init()
print("threads after CUDA", sorted(t.name for t in threading.enumerate() if t.name.startswith("gpufl-memory-tracker")))
import gc
from gpufl.memory import MemoryTracker, MemoryWatchdog
trackers = [o for o in gc.get_objects() if isinstance(o, MemoryTracker)]
dogs = [o for o in gc.get_objects() if isinstance(o, MemoryWatchdog)]
print("thresholds", trackers[0].thresholds["memory_warning_percent"], trackers[0].thresholds["memory_critical_percent"])
print("watchdogs", len(dogs))
# past the critical threshold: the watchdog empties the cache (aggressive)
emptied = []
real = torch.cuda.empty_cache
torch.cuda.empty_cache = lambda: (emptied.append(1), real())
big = torch.empty(int(7.5 * (1 << 30)), dtype=torch.uint8, device="cuda")
deadline = time.time() + 5
# the watchdog empties the cache, then records its cleanup: wait for both
while time.time() < deadline and not (emptied and any(e.event_type == "cleanup" for e in trackers[0].events)):
    time.sleep(0.05)
print("emptied", bool(emptied), [e.context for e in trackers[0].events if e.event_type == "cleanup"])
"""


def env(watchdog):
    # the hook first, then the gpufl under test (a source tree or an
    # installed copy with its own libgpufl), then the PyTorch stand-in
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpufl.__file__)))
    e = {"PYTHONPATH": os.pathsep.join([HOOK_DIR, here, FAKE_TORCH_DIR]), "GPUFL_TORCH_OPS": "0",
         "GPUFL_ENABLE_MEMORY_TRACKING": "1"}
    if watchdog:
        e.update(GPUFL_MEMORY_WATCHDOG="1", GPUFL_MEMORY_WARNING_PCT="70", GPUFL_MEMORY_CRITICAL_PCT="90")
    return e


def test_watchdog_starts_after_cuda_with_the_thresholds():
    r = run_python_ok(CHILD, env=env(True))
    assert "attached True" in r.stdout, r.stdout + r.stderr
    assert "threads before CUDA []" in r.stdout  # asking earlier would make the context
    assert "threads after CUDA ['gpufl-memory-tracker']" in r.stdout, r.stdout + r.stderr
    assert "thresholds 70.0 90.0" in r.stdout
    assert "watchdogs 1" in r.stdout
    assert "emptied True ['Performed aggressive memory cleanup']" in r.stdout, r.stdout + r.stderr
    assert "watchdog is off" not in r.stderr


def test_no_watchdog_unless_asked():
    r = run_python_ok(CHILD.split("import gc")[0], env=env(False))
    assert "attached True" in r.stdout, r.stdout + r.stderr
    assert "threads after CUDA []" in r.stdout
