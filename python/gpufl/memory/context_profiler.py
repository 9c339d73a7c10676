"""The reference's conveniences over one global GPUMemoryProfiler
(gpumemprof.context_profiler): the ``@profile_function`` decorator,
``profile_context`` blocks, a MemoryProfiler facade and module-level
monitoring. Each profiled call or block is also a gpufl scope of its name
(see gpufl.memory.profiler).

Differs from the reference: the decorated function runs once per call (the
reference's wrapper runs it a second time to get its return value, which
doubles its work and its side effects). ProfiledModule, an nn.Module, is
made when first asked for, so that this module imports without PyTorch.
"""

import contextlib
import functools
import json

from .profiler import GPUMemoryProfiler

__all__ = ["get_global_profiler", "set_global_profiler", "profile_function", "profile_context", "MemoryProfiler",
           "ProfiledModule", "start_monitoring", "stop_monitoring", "get_summary", "clear_results",
           "get_profile_results", "profile_model_training"]

_global_profiler = None


def get_global_profiler(device=None):
    """The global profiler, made on the first call (for device; later
    calls ignore device, as the reference's)."""
    global _global_profiler
    if _global_profiler is None:
        _global_profiler = GPUMemoryProfiler(device=device)
    return _global_profiler


def set_global_profiler(profiler):
    global _global_profiler
    _global_profiler = profiler


def profile_function(func=None, *, name=None, device=None, profiler=None):
    """``@profile_function`` or ``@profile_function(name=..., device=...,
    profiler=...)``: every call is profiled by profiler (or the global
    one) under name (or the function's name) and returns the function's
    own value; exceptions propagate after an error result is stored."""

    def decorate(f):
        label = name or getattr(f, "__name__", "unknown_function")

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            prof = profiler or get_global_profiler(device)
            out = []

            def call():
                out.append(f(*args, **kwargs))

            call.__name__ = label
            prof.profile_function(call)
            return out[0]

        wrapper._is_profiled = True
        wrapper._profile_name = label
        return wrapper

    return decorate if func is None else decorate(func)


@contextlib.contextmanager
def profile_context(name="context", device=None, profiler=None):
    """Profiles the with-block; yields the GPUMemoryProfiler used (its
    results[-1] is the block's after it)."""
    prof = profiler or get_global_profiler(device)
    with prof.profile_context(name):
        yield prof


class MemoryProfiler:
    """A facade over one GPUMemoryProfiler (``.profiler``)."""

    def __init__(self, device=None):
        self.profiler = GPUMemoryProfiler(device=device)
        self._monitoring = False

    def start_monitoring(self, interval=0.1):
        self.profiler.start_monitoring(interval)
        self._monitoring = True

    def stop_monitoring(self):
        self.profiler.stop_monitoring()
        self._monitoring = False

    def profile(self, func, *args, **kwargs):
        return self.profiler.profile_function(func, *args, **kwargs)

    @contextlib.contextmanager
    def context(self, name="context"):
        with self.profiler.profile_context(name):
            yield

    def wrap_module(self, module, name=None):
        return _profiled_module_class()(module, name=name, profiler=self.profiler)

    def get_summary(self):
        return self.profiler.get_summary()

    def clear(self):
        self.profiler.clear_results()

    def save_results(self, filename):
        """Writes {"summary", "results", "snapshots"} as JSON."""
        data = {"summary": self.get_summary(), "results": [r.to_dict() for r in self.profiler.results],
                "snapshots": [s.to_dict() for s in self.profiler.snapshots]}
        with open(filename, "w") as f:
            json.dump(data, f, indent=2, default=str)

    def load_results(self, filename):
        with open(filename) as f:
            return json.load(f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._monitoring:
            self.stop_monitoring()
        return False


_module_class = None


def _profiled_module_class():
    """ProfiledModule, an nn.Module whose forward is a profiled block
    "<name>_forward", made once PyTorch is there."""
    global _module_class
    if _module_class is None:
        from . import _torch

        nn = _torch.require("ProfiledModule").nn

        class ProfiledModule(nn.Module):
            def __init__(self, module, name=None, device=None, profiler=None):
                super().__init__()
                self.module = module
                self.profile_name = name or module.__class__.__name__
                self.profiler = profiler or get_global_profiler(device)

            def forward(self, *args, **kwargs):
                with self.profiler.profile_context("%s_forward" % self.profile_name):
                    return self.module(*args, **kwargs)

            def __getattr__(self, attr):
                try:
                    return super().__getattr__(attr)
                except AttributeError:
                    if attr == "module":
                        raise
                    return getattr(self.module, attr)

        _module_class = ProfiledModule
    return _module_class


def __getattr__(name):
    if name == "ProfiledModule":
        return _profiled_module_class()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def start_monitoring(interval=0.1, device=None):
    get_global_profiler(device).start_monitoring(interval)


def stop_monitoring():
    if _global_profiler is not None:
        _global_profiler.stop_monitoring()


def get_summary():
    if _global_profiler is None:
        return {"message": "No global profiler instance"}
    return _global_profiler.get_summary()


def clear_results():
    if _global_profiler is not None:
        _global_profiler.clear_results()


def get_profile_results(limit=None):
    """The global profiler's last limit results (all when limit is None)."""
    if _global_profiler is None:
        return []
    results = list(_global_profiler.results)
    return results[-limit:] if limit else results


def profile_model_training(model, train_loader, epochs=1, device=None):
    """The reference's outline of a profiled training loop: the set-up, each
    epoch and up to 11 batches per epoch as profiled blocks (it runs no
    training step: the reference's is a stub too). Returns total_epochs,
    batch_results, epoch_summaries, overall_summary."""
    prof = get_global_profiler(device)
    with prof.profile_context("training_setup"):
        model.train()
    out = {"total_epochs": epochs, "batch_results": [], "epoch_summaries": []}
    for epoch in range(epochs):
        done = []
        with prof.profile_context("epoch_%d" % epoch):
            for i, _ in enumerate(train_loader):
                with prof.profile_context("batch_%d_%d" % (epoch, i)):
                    pass
                done.append(prof.results[-1].to_dict())
                if i >= 10:
                    break
        out["batch_results"].extend(done)
        out["epoch_summaries"].append({
            "epoch": epoch, "batches_profiled": len(done),
            "total_memory_allocated": sum(r["memory_allocated"] for r in done),
            "average_batch_time": sum(r["execution_time"] for r in done) / max(len(done), 1)})
    out["overall_summary"] = prof.get_summary()
    return out
