"""PyTorch attribution: which op, and which module, launched each kernel.

``attach()`` makes PyTorch name its ops to gpufl while gpufl traces:

* Every op becomes an NVTX range, pushed by PyTorch itself from C++
  (``torch.autograd.profiler.emit_nvtx``: a RecordFunction callback, no
  Python per op). The CUPTI plugin records the range on the thread that
  runs the op, autograd's backward threads included, and every kernel, copy
  and allocation carries the innermost range open at its launch: its op.
  PyTorch writes ``aten::addmm, seq = 22, op_id = 6``; the recorder keeps
  the name and the sequence number (docs/FORMAT.md), which a backward op
  (``AddmmBackward0, seq = 22``) shares with the forward op it
  differentiates. That is how a backward kernel finds its forward op (the
  analyzer's ``op``, ``forward_op`` and ``module`` columns).
* Every ``nn.Module`` call becomes an NVTX range named
  ``nn.Module: <path>`` (``ResNet.layer1.0.conv1``), from global forward
  hooks, so an op's module is the module range around it, and a backward
  op's module is its forward op's.
* ``torch.profiler`` gets CUPTI while it runs: its start pauses gpufl's
  trace (``gpufl.trace_pause``) and stops the op ranges (PyTorch allows one
  profiler per thread), its stop gives both back. With CUPTI before 13.2
  PyTorch's profiler keeps CUPTI once it has had it: gpufl's trace then
  stays paused, a RuntimeWarning says so, and the session's log says the
  trace ended paused (gpufl.h, gpufl_trace_resume).

It records nothing by itself: NVTX reaches gpufl only through the Trace
engine and up (``gpufl run``, or ``gpufl.init(profiling_engine=...)``).
``gpufl run`` attaches it for Python programs that import torch (off with
``gpufl run --no-torch-ops``). Cost: about 1 us per op for the range (see
bench/RESULTS.md); nothing when detached.
"""

import threading
import warnings
import weakref

__all__ = ["attach", "detach", "attached", "MODULE_PREFIX"]

MODULE_PREFIX = "nn.Module: "

_lock = threading.RLock()
_state = None  # the attachment while attached


class _Attachment:
    """What attach() switched on, so that detach() switches exactly that off."""

    def __init__(self, torch, modules, record_shapes):
        self.torch = torch
        self.record_shapes = record_shapes
        self.ranges = None  # the entered emit_nvtx, while op ranges are on
        self.hooks = []
        self.patched = []  # (owner, name, original)
        self.names = weakref.WeakKeyDictionary()  # module -> its path
        self.local = threading.local()  # per thread: the modules in forward
        self.profilers = 0  # torch profilers running
        self.paused = False  # whether gpufl's trace was paused for them (by us)
        self.modules = modules

    # ---- op ranges -------------------------------------------------------

    def ranges_on(self):
        if self.ranges is None:
            r = self.torch.autograd.profiler.emit_nvtx(enabled=True, record_shapes=self.record_shapes)
            r.__enter__()
            self.ranges = r

    def ranges_off(self):
        if self.ranges is not None:
            r, self.ranges = self.ranges, None
            r.__exit__(None, None, None)

    # ---- module ranges ---------------------------------------------------

    def path_of(self, module, stack):
        name = self.names.get(module)
        if name is not None:
            return name
        if not stack:
            # A root: name its whole tree at once, after its class.
            root = type(module).__name__
            for sub, m in module.named_modules(prefix=root):
                self.names.setdefault(m, sub)
            return self.names[module]
        parent = stack[-1][0]
        base = self.names.get(parent, type(parent).__name__)
        for child_name, child in parent.named_children():
            if child is module:
                name = base + "." + child_name
                break
        else:
            name = base + "." + type(module).__name__
        self.names[module] = name
        return name

    def pre_hook(self, module, args):
        stack = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        pushed = self.ranges is not None  # no ranges while a torch profiler runs
        if pushed:
            self.torch.cuda.nvtx.range_push(MODULE_PREFIX + self.path_of(module, stack))
        stack.append((module, pushed))

    def post_hook(self, module, args, output):
        stack = getattr(self.local, "stack", None)
        # pop up to and including this module: one that raised is popped too
        while stack:
            m, pushed = stack.pop()
            if pushed:
                self.torch.cuda.nvtx.range_pop()
            if m is module:
                break

    def hooks_on(self):
        mod = self.torch.nn.modules.module
        self.hooks.append(mod.register_module_forward_pre_hook(self.pre_hook))
        try:
            self.hooks.append(mod.register_module_forward_hook(self.post_hook, always_call=True))
        except TypeError:  # an older torch: a forward that raises leaves its range to the next pop
            self.hooks.append(mod.register_module_forward_hook(self.post_hook))

    # ---- torch.profiler ----------------------------------------------------

    def profiler_started(self):
        with _lock:
            self.profilers += 1
            if self.profilers == 1:
                self.ranges_off()
                from . import _session
                # False when there is no trace to pause, or the program paused it itself
                self.paused = _session.trace_pause()

    def profiler_stopped(self):
        with _lock:
            self.profilers = max(0, self.profilers - 1)
            if self.profilers == 0:
                from . import _session
                if self.paused:
                    self.paused = False
                    if not _session.trace_resume():
                        # CUPTI before 13.2 stays with PyTorch's profiler (kineto
                        # does not let go): the trace stays paused, and says so
                        warnings.warn("gpufl: %s" % _session.last_error(), RuntimeWarning, stacklevel=3)
                self.ranges_on()

    def wrap(self, owner, name, before=None, after=None):
        original = owner.__dict__.get(name)
        if original is None:
            return

        def wrapper(*args, **kwargs):
            if before:
                before()
            try:
                return original(*args, **kwargs)
            finally:
                if after:
                    after()

        wrapper.__wrapped__ = original
        wrapper.__name__ = getattr(original, "__name__", name)
        setattr(owner, name, wrapper)
        self.patched.append((owner, name, original))

    def profilers_on(self):
        profiler = getattr(self.torch.profiler, "profiler", None)
        kineto = getattr(profiler, "_KinetoProfile", None) if profiler else None
        if kineto is not None:
            # torch.profiler.profile's start() and its schedule's cycles all
            # go through these two: prepare_trace enables PyTorch's profiler
            # (and CUPTI), stop_trace ends it.
            self.wrap(kineto, "prepare_trace", before=self.profiler_started)
            self.wrap(kineto, "stop_trace", after=self.profiler_stopped)
        legacy = getattr(self.torch.autograd.profiler, "profile", None)
        if legacy is not None:
            self.wrap(legacy, "__enter__", before=self.profiler_started)
            self.wrap(legacy, "__exit__", after=self.profiler_stopped)

    def off(self):
        for h in self.hooks:
            h.remove()
        self.hooks.clear()
        for owner, name, original in reversed(self.patched):
            setattr(owner, name, original)
        self.patched.clear()
        self.ranges_off()


def attach(modules=True, record_shapes=False):
    """Names ops (and, with modules, nn.Module calls) to gpufl; see the
    module's docstring. Returns True once attached (again: no change), False
    when torch cannot be imported. Call it from the thread that runs the
    model's forward passes (PyTorch keeps its profiler state per thread)."""
    global _state
    with _lock:
        if _state is not None:
            return True
        try:
            import torch
        except ImportError:
            return False
        a = _Attachment(torch, modules, record_shapes)
        try:
            a.ranges_on()
            if modules:
                a.hooks_on()
            a.profilers_on()
        except Exception:
            a.off()
            raise
        _state = a
        return True


def detach():
    """Switches off what attach() switched on. Harmless when not attached."""
    global _state
    with _lock:
        if _state is not None:
            _state.off()
            _state = None


def attached():
    """Whether attach() is in effect."""
    return _state is not None
