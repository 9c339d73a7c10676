"""Scopes from Python: ``with gpufl.Scope("name"):`` and ``@gpufl.scope``.

A scope is gpufl_scope_begin + gpufl_scope_end on the calling thread; the C
library keeps the per-thread stack that gives each scope its depth and
parent. This file is the package's hot path (a training loop may open a
scope per step and per phase), so it does the least Python can: names are
encoded once per Scope object or decorated function, the two C functions
are module globals bound once with their prototypes (gpufl._lib), and
while gpufl is switched off (``_off``) no C call is made at all.

Tokens: the decorator keeps each call's token in a local variable, so
recursion and threads need nothing more. A Scope object can be entered
again before it is left (the same object used in nested ``with``
statements, or by several threads at once): an entry while no other is
open puts its token into a one-slot dict, claimed with ``setdefault``,
which is atomic under the GIL; every other entry appends (thread, token) to
an overflow list. A thread claims the slot only while the overflow list is
empty, so its slot entry is always older than its overflow entries, and an
exit ends its own thread's latest overflow entry if it has one, else the
slot's token: every exit ends the innermost scope its own thread opened
through this object.
"""

import functools
import inspect
from threading import get_ident

from . import _lib

__all__ = ["Scope", "scope"]

_begin = _lib.scope_begin
_end = _lib.scope_end

# True after gpufl.init() found gpufl switched off for this process
# (enabled=False, GPUFL_DISABLED, or not recording): scopes skip the C
# calls. Written only by gpufl._session.
_off = False


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

    __slots__ = ("name", "_name", "_slot", "_more")

    def __init__(self, name):
        self._name = _encode(name)
        self.name = name
        self._slot = {}
        self._more = []

    def __repr__(self):
        return "gpufl.Scope(%r)" % (self.name,)

    def __enter__(self):
        if _off:
            return self
        token = _begin(self._name)
        if self._more or self._slot.setdefault(0, token) is not token:
            self._more.append((get_ident(), token))
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._more and self._end_more():
            return False
        token = self._slot.pop(0, None)
        if token is not None:  # None: not entered, or entered while gpufl was off
            _end(token)
        return False

    def _end_more(self):
        """Ends this thread's latest overflow entry; False when it has none."""
        me = get_ident()
        for entry in reversed(tuple(self._more)):  # a snapshot: other threads change the list
            if entry[0] == me:
                self._more.remove(entry)
                _end(entry[1])
                return True
        return False


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
        encoded = _encode(fn.__qualname__ if name is None else name)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _off:
                return fn(*args, **kwargs)
            token = _begin(encoded)
            try:
                return fn(*args, **kwargs)
            finally:
                _end(token)

        return wrapper

    return decorate
