"""Scopes from Python: ``with gpufl.Scope("name"):`` and ``@gpufl.scope``.

A scope is gpufl_scope_begin + gpufl_scope_end on the calling thread; the C
library keeps the per-thread stack that gives each scope its depth and
parent. This file is the package's hot path (a training loop may open a
scope per step and per phase), so it does the least Python can: the two C
functions are module globals bound once with their prototypes
(gpufl._lib); a name is encoded once (per decorated function, and for
Scope through a small cache, since ``with gpufl.Scope("step"):`` creates
an object per pass); a Scope object holds nothing but its name, so
creating one is cheap; and while gpufl is switched off (``_off``) no C
call is made at all.

Tokens: the decorator keeps each call's token in a local variable, so
recursion and threads need nothing more. A Scope object may be entered
again before it is left (the same object in nested ``with`` statements, or
on several threads at once), so its tokens are not kept on it: an entry
while the object has no other open entry claims ``_claims[obj]`` with
``dict.setdefault``, atomic under the GIL; every other entry appends
(thread, token) to ``_overflow[obj]``. A thread claims only while the
object has no overflow entries, so its claimed entry is always older than
its overflow entries, and an exit ends its own thread's latest overflow
entry if it has one, else the claimed token: every exit ends the innermost
scope its own thread opened through that object. The overflow side is
rare and takes a lock.
"""

import functools
import inspect
import threading

from . import _lib

__all__ = ["Scope", "scope"]

_begin = _lib.scope_begin
_end = _lib.scope_end

# True after gpufl.init() found gpufl switched off for this process
# (enabled=False, GPUFL_DISABLED, or not recording): scopes skip the C
# calls. Written only by gpufl._session.
_off = False

# Called with the scope's name after each scope ends, while set: gpufl.memory
# records the allocator's state there, so that a repeated scope (a step)
# has its live memory after every repetition. None costs one test per end.
_on_end = None

_claims = {}  # Scope -> token of its one claimed open entry
_overflow = {}  # Scope -> [(thread id, token)] of its other open entries, oldest first
_overflow_lock = threading.Lock()
_claim = _claims.setdefault  # bound once: no method lookup per scope
_unclaim = _claims.pop

_ENCODED_MAX = 4096  # names kept encoded; past it, names are encoded per Scope
_encoded = {}


def _encode(name):
    if isinstance(name, str):
        return name.encode("utf-8", "surrogatepass")  # the library replaces bad UTF-8 with U+FFFD
    if isinstance(name, bytes):
        return name
    raise TypeError("a gpufl scope name is a str, not %s" % type(name).__name__)


class Scope:
    """A context manager that records the block it guards as a scope.

    ``with gpufl.Scope("forward"): ...`` Scopes nest per thread. The scope
    ends however the block is left, exceptions included, which propagate
    unchanged. Cheap to create; a Scope object may also be kept and entered
    many times, nested, and from several threads.
    """

    __slots__ = ("name", "_name")

    def __init__(self, name):
        self.name = name
        encoded = _encoded.get(name)
        if encoded is None:
            encoded = _encode(name)
            if len(_encoded) < _ENCODED_MAX:
                _encoded[name] = encoded
        self._name = encoded

    def __repr__(self):
        return "gpufl.Scope(%r)" % (self.name,)

    def __enter__(self):
        if _off:
            return self
        token = _begin(self._name)
        if (_overflow and self in _overflow) or _claim(self, token) is not token:
            self._enter_more(token)
        return self

    def __exit__(self, exc_type, exc, tb):
        if _overflow and self in _overflow and self._exit_more():
            return False
        token = _unclaim(self, None)
        if token is not None:  # None: not entered, or entered while gpufl was off
            _end(token)
            if _on_end is not None:
                _on_end(self.name)
        return False

    def _enter_more(self, token):
        with _overflow_lock:
            _overflow.setdefault(self, []).append((threading.get_ident(), token))

    def _exit_more(self):
        """Ends this thread's latest overflow entry; False when it has none."""
        me = threading.get_ident()
        with _overflow_lock:
            entries = _overflow.get(self, ())
            for i in range(len(entries) - 1, -1, -1):
                if entries[i][0] == me:
                    token = entries.pop(i)[1]
                    if not entries:
                        del _overflow[self]
                    break
            else:
                return False
        _end(token)
        if _on_end is not None:
            _on_end(self.name)
        return True


def scope(name=None):
    """Decorator: every call of the function is a scope.

    ``@gpufl.scope("train_step")``; ``@gpufl.scope()`` or bare
    ``@gpufl.scope`` name it after the function's ``__qualname__``. Safe for
    recursive functions and for calls from many threads. Coroutine and
    generator functions are refused: they are suspended and resumed in
    between other work on the thread, where a per-thread scope would swallow
    whatever ran meanwhile.
    """
    if callable(name):  # bare @gpufl.scope
        return scope(None)(name)

    def decorate(fn):
        if (inspect.iscoroutinefunction(fn) or inspect.isgeneratorfunction(fn) or
                inspect.isasyncgenfunction(fn)):
            raise TypeError("@gpufl.scope cannot time %s: it is a coroutine or generator function, "
                            "which suspends inside the scope; use `with gpufl.Scope(...)` around "
                            "the part that runs without yielding" % fn.__qualname__)
        label = fn.__qualname__ if name is None else name
        encoded = _encode(label)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _off:
                return fn(*args, **kwargs)
            token = _begin(encoded)
            try:
                return fn(*args, **kwargs)
            finally:
                _end(token)
                if _on_end is not None:
                    _on_end(label)

        return wrapper

    return decorate
