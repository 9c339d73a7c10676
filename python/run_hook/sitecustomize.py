"""gpufl run's start-up hook for Python programs.

`gpufl run` puts this file's directory first on PYTHONPATH of a Python
program (with the gpufl package beside it) and sets GPUFL_TORCH_OPS=1, so
that Python imports it at start-up. It waits for the program to import
torch and then calls gpufl.torch.attach(): every kernel the program
launches is named by its PyTorch op and module, with nothing to change in
the program. `gpufl run --no-torch-ops` leaves it out. With memory
tracking on (GPUFL_ENABLE_MEMORY_TRACKING=1) it also records PyTorch's
caching allocator (gpufl.memory: its state, and with --stack-trace its
blocks' Python stacks), and PyTorch's out-of-memory errors; with
GPUFL_MEMORY_WATCHDOG=1 (`gpufl mem track --watchdog`) a MemoryWatchdog
empties PyTorch's cache past the memory thresholds. Whatever goes wrong
here is said on stderr and leaves the program running as if this file were
not there. Then the program's own sitecustomize, if it has one, runs.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _attach():
    """gpufl.torch.attach(), or a line on stderr saying why not: whatever
    goes wrong here is never the program's problem."""
    try:
        import gpufl.torch

        gpufl.torch.attach()
    except Exception as e:
        sys.stderr.write("gpufl: PyTorch op names are off: %s: %s\n" % (type(e).__name__, e))


def _truthy(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _attach_memory():
    """With memory tracking on (GPUFL_ENABLE_MEMORY_TRACKING), PyTorch's
    allocator is recorded too (gpufl.memory), its blocks' Python stacks
    with --stack-trace (GPUFL_ENABLE_STACK_TRACE)."""
    try:
        from gpufl.memory import _torch_source

        ms = os.environ.get("GPUFL_SYSTEM_SAMPLE_RATE_MS", "")
        interval = int(ms) / 1000.0 if ms.isdigit() and int(ms) > 0 else 0.1
        _torch_source.attach(interval_s=interval, history=_truthy("GPUFL_ENABLE_STACK_TRACE"))
    except Exception as e:
        sys.stderr.write("gpufl: PyTorch memory is not recorded: %s: %s\n" % (type(e).__name__, e))
    if _truthy("GPUFL_MEMORY_WATCHDOG"):
        _start_watchdog()


def _start_watchdog():
    """`gpufl mem track --watchdog`: the reference's MemoryWatchdog inside
    the program, emptying PyTorch's cache when the tracker's warning or
    critical threshold (GPUFL_MEMORY_WARNING_PCT, GPUFL_MEMORY_CRITICAL_PCT)
    is crossed. Started once PyTorch has made its CUDA context: asking for
    the device earlier would make it."""

    def start():
        try:
            from gpufl.memory import MemoryTracker, MemoryWatchdog

            tracker = MemoryTracker(enable_oom_flight_recorder=False)
            for name, var in (("memory_warning_percent", "GPUFL_MEMORY_WARNING_PCT"),
                              ("memory_critical_percent", "GPUFL_MEMORY_CRITICAL_PCT")):
                if os.environ.get(var):
                    tracker.set_threshold(name, float(os.environ[var]))
            MemoryWatchdog(tracker)
            tracker.start_tracking()
        except Exception as e:
            sys.stderr.write("gpufl: the memory watchdog is off: %s: %s\n" % (type(e).__name__, e))

    try:
        import torch

        lazy = getattr(torch.cuda, "_lazy_call", None)
        lazy(start) if lazy is not None else start()
    except Exception as e:
        sys.stderr.write("gpufl: the memory watchdog is off: %s: %s\n" % (type(e).__name__, e))


class _AfterTorch:
    """A meta-path finder that lets torch import as usual, then attaches."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)  # once
        import importlib.util

        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module):
            run(module)
            if _ops:
                _attach()
            if _memory:
                _attach_memory()

        loader.exec_module = exec_module
        return spec


def _chain():
    """Runs the sitecustomize this one hides, if the program has one."""
    mine = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    try:
        import sitecustomize  # noqa: F401  the next one on the path
    except ImportError:
        pass
    except Exception as e:
        sys.stderr.write("gpufl: the program's sitecustomize failed: %s\n" % e)
    finally:
        sys.path[:] = saved
        if mine is not None and "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = mine


_ops = os.environ.get("GPUFL_TORCH_OPS") == "1"
# gpufl run sets GPUFL_TORCH_OPS either way: memory does not need op names
_memory = "GPUFL_TORCH_OPS" in os.environ and _truthy("GPUFL_ENABLE_MEMORY_TRACKING")
if _ops or _memory:
    if "torch" in sys.modules:
        if _ops:
            _attach()
        if _memory:
            _attach_memory()
    else:
        sys.meta_path.insert(0, _AfterTorch())
_chain()
