"""A stand-in for the few parts of PyTorch that gpufl.torch and
gpufl.memory use, for tests on machines without PyTorch: it records what
gpufl.torch asks of it (`calls`), runs modules' global forward hooks as
PyTorch does, and has a scripted CUDA caching allocator (_allocator.py,
scripted through `_fake`) behind torch.cuda's memory functions and CUDA
tensors (_tensor.py)."""

import types

from . import _allocator, _tensor
from ._tensor import Tensor, device, dtype, empty, float16, float32, int64, ones, randn, uint8, zeros

__version__ = "2.11.0+fake"
_fake = _tensor._state = _allocator.State()
OutOfMemoryError = _allocator.OutOfMemoryError

calls = []


class _EmitNvtx:
    entered = 0

    def __init__(self, enabled=True, record_shapes=False):
        self.record_shapes = record_shapes

    def __enter__(self):
        if _EmitNvtx.entered:
            raise RuntimeError("Profiler is already enabled on this thread.")
        _EmitNvtx.entered += 1
        calls.append("ops on")
        return self

    def __exit__(self, *exc):
        _EmitNvtx.entered -= 1
        calls.append("ops off")
        return False


class _Handle:
    def __init__(self, hooks, hook):
        self.hooks, self.hook = hooks, hook

    def remove(self):
        self.hooks.remove(self.hook)


_pre, _post = [], []


def register_module_forward_pre_hook(hook):
    _pre.append((hook, False))
    return _Handle(_pre, (hook, False))


def register_module_forward_hook(hook, always_call=False):
    _post.append((hook, always_call))
    return _Handle(_post, (hook, always_call))


class Module:
    def __init__(self, **children):
        self._children = dict(children)

    def named_children(self):
        return list(self._children.items())

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self._children.items():
            yield from child.named_modules(prefix + "." + name if prefix else name)

    def forward(self, x):
        for child in self._children.values():
            x = child(x)
        return x

    def __call__(self, x):
        for hook, _ in list(_pre):
            hook(self, (x,))
        try:
            out = self.forward(x)
        except BaseException:
            for hook, always in list(_post):
                if always:
                    hook(self, (x,), None)
            raise
        for hook, _ in list(_post):
            hook(self, (x,), out)
        return out


class _LegacyProfile:
    def __enter__(self):
        _EmitNvtx.entered += 1  # one profiler per thread, as PyTorch
        calls.append("legacy profiler on")
        return self

    def __exit__(self, *exc):
        _EmitNvtx.entered -= 1
        calls.append("legacy profiler off")
        return False


class _KinetoProfile:
    """As torch.profiler: start() and profile's schedule go through
    prepare_trace (which enables the profiler) and stop_trace."""

    def prepare_trace(self):
        if _EmitNvtx.entered:
            raise RuntimeError("Profiler is already enabled on this thread.")
        _EmitNvtx.entered += 1
        calls.append("profiler on")

    def start_trace(self):
        pass

    def stop_trace(self):
        _EmitNvtx.entered -= 1
        calls.append("profiler off")

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()


class _Profile(_KinetoProfile):
    """torch.profiler.profile: its own start/stop, through the same two."""

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


autograd = types.SimpleNamespace(profiler=types.SimpleNamespace(emit_nvtx=_EmitNvtx, profile=_LegacyProfile))
def _synchronize(d=None):
    _fake.init()
    _fake.synchronized += 1


def _lazy_call(fn):
    if _fake.initialized:
        fn()
    else:
        _fake.pending.append(fn)


def _init_then(fn):
    """A torch.cuda call that sets CUDA up first, as PyTorch's do."""

    def call(*a, **kw):
        _fake.init()
        return fn(*a, **kw)

    return call


cuda = types.SimpleNamespace(
    nvtx=types.SimpleNamespace(range_push=lambda s: calls.append("push " + s), range_pop=lambda: calls.append("pop")),
    OutOfMemoryError=OutOfMemoryError,
    is_available=lambda: _fake.available,
    is_initialized=lambda: _fake.initialized,
    device_count=lambda: len(_fake.devices) if _fake.available else 0,
    current_device=_init_then(lambda: _fake.current),
    get_device_properties=_init_then(_fake.properties),
    get_device_name=_init_then(lambda d=None: _fake.properties(d).name),
    get_device_capability=_init_then(lambda d=None: (9, 0)),
    memory_stats=lambda d=None: _fake.memory_stats(d) if _fake.initialized else {},
    memory_allocated=lambda d=None: _fake.device(d).allocated,
    memory_reserved=lambda d=None: _fake.device(d).reserved,
    max_memory_allocated=lambda d=None: _fake.device(d).peak_allocated,
    max_memory_reserved=lambda d=None: _fake.device(d).peak_reserved,
    reset_peak_memory_stats=lambda d=None: _fake.reset_peak_memory_stats(d),
    synchronize=_synchronize,
    empty_cache=lambda: _fake.empty_cache(),
    mem_get_info=_init_then(_fake.mem_get_info),
    _lazy_call=_lazy_call,
    _lazy_init=lambda: _fake.init(),
    memory=types.SimpleNamespace(_record_memory_history=lambda *a, **kw: _fake.record_memory_history(*a, **kw),
                                 _snapshot=lambda *a, **kw: _fake.snapshot()),
)
_C = types.SimpleNamespace(_cuda_attach_out_of_memory_observer=lambda cb: _fake.observers.append(cb))
version = types.SimpleNamespace(cuda="12.8", hip=None)
backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False),
                                 cudnn=types.SimpleNamespace(version=lambda: 90100))
nn = types.SimpleNamespace(Module=Module, modules=types.SimpleNamespace(module=types.SimpleNamespace(
    register_module_forward_pre_hook=register_module_forward_pre_hook,
    register_module_forward_hook=register_module_forward_hook)))
profiler = types.SimpleNamespace(profiler=types.SimpleNamespace(_KinetoProfile=_KinetoProfile), profile=_Profile)
