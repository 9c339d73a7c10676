"""Scopes: the context manager and the decorator, nested, recursive,
raising, reused, and from many threads; checked in scope.log."""

import asyncio
import sys
import threading

import pytest

import gpufl
from conftest import lines, one_session


def record(logs, body):
    """Runs body in a session; returns (scope_begin lines, scope_end lines)."""
    assert gpufl.init(log_path=logs)
    body()
    gpufl.shutdown()
    d = one_session(logs)
    return lines(d, "scope", "scope_begin"), lines(d, "scope", "scope_end")


def check_pairs(begins, ends):
    """Every scope ended once, on its own thread, explicitly; returns {id: begin line}."""
    by_id = {b["id"]: b for b in begins}
    assert len(by_id) == len(begins)
    assert sorted(e["id"] for e in ends) == sorted(by_id)
    for e in ends:
        assert e["tid"] == by_id[e["id"]]["tid"]
        assert not e.get("implicit"), e
    return by_id


def test_nested_scopes(logs):
    def body():
        with gpufl.Scope("epoch") as s:
            assert isinstance(s, gpufl.Scope)
            with gpufl.Scope("step"):
                with gpufl.Scope("forward"):
                    pass

    begins, ends = record(logs, body)
    check_pairs(begins, ends)
    assert [(b["name"], b["depth"]) for b in begins] == [("epoch", 0), ("step", 1), ("forward", 2)]
    assert begins[1]["parent"] == begins[0]["id"] and begins[2]["parent"] == begins[1]["id"]
    assert [e["name"] for e in ends] == ["forward", "step", "epoch"]


def test_decorator_forms(logs):
    @gpufl.scope("named")
    def a(x, y=2):
        """doc of a"""
        return x + y

    @gpufl.scope()
    def b():
        return "b"

    @gpufl.scope
    def c():
        return "c"

    class Model:
        @gpufl.scope
        def forward(self):
            return self

    def body():
        assert a(1, y=3) == 4
        assert b() == "b" and c() == "c"
        m = Model()
        assert m.forward() is m

    assert a.__name__ == "a" and a.__doc__ == "doc of a" and a.__wrapped__ is not None
    begins, ends = record(logs, body)
    check_pairs(begins, ends)
    assert [b["name"] for b in begins] == [
        "named", "test_decorator_forms.<locals>.b", "test_decorator_forms.<locals>.c",
        "test_decorator_forms.<locals>.Model.forward"
    ]


def test_recursive_decorated_function(logs):
    @gpufl.scope("fib")
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    result = []
    begins, ends = record(logs, lambda: result.append(fib(10)))
    assert result == [55]
    by_id = check_pairs(begins, ends)
    assert len(begins) == 177  # calls of fib(10)
    assert max(b["depth"] for b in begins) == 9
    for b in begins:  # each call nests in the call that made it
        if b["depth"]:
            assert by_id[b["parent"]]["depth"] == b["depth"] - 1


def test_exceptions_end_the_scope_and_propagate(logs):
    @gpufl.scope("fails")
    def fails():
        raise ValueError("in function")

    def body():
        with pytest.raises(ValueError, match="in block"):
            with gpufl.Scope("block"):
                with gpufl.Scope("inner"):
                    raise ValueError("in block")
        with pytest.raises(ValueError, match="in function"):
            fails()
        with gpufl.Scope("after"):
            pass

    begins, ends = record(logs, body)
    check_pairs(begins, ends)
    assert [(b["name"], b["depth"]) for b in begins] == [("block", 0), ("inner", 1), ("fails", 0),
                                                         ("after", 0)]


def test_exit_swallows_nothing_and_raises_nothing(logs):
    s = gpufl.Scope("x")
    assert s.__exit__(None, None, None) is False  # never entered
    assert gpufl.init(log_path=logs)
    with s:
        pass
    assert s.__exit__(None, None, None) is False  # left already
    assert s.__exit__(KeyError, KeyError("k"), None) is False  # the user's exception goes on


def test_one_scope_object_nested(logs):
    s = gpufl.Scope("same")

    def body():
        with s:
            with s:
                with s:
                    pass
            with s:
                pass

    begins, ends = record(logs, body)
    by_id = check_pairs(begins, ends)
    assert [b["depth"] for b in begins] == [0, 1, 2, 1]
    assert [by_id[e["id"]]["depth"] for e in ends] == [2, 1, 1, 0]


def run_threads(n, target):
    """Runs target(i) on n threads at once, switching between them as often
    as Python can, so that threads meet inside each other's scopes."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        _run_threads(n, target)
    finally:
        sys.setswitchinterval(interval)


def _run_threads(n, target):
    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_many_threads(logs):
    """8 threads x 1000 scopes of each form, the Scope object and the
    decorated function shared by all: every one recorded, in pairs, nested
    right."""
    shared = gpufl.Scope("shared")

    @gpufl.scope("decorated")
    def decorated(i):
        with gpufl.Scope("fresh-%d" % i):
            pass

    def worker(i):
        for _ in range(1000):
            with shared:
                decorated(i)

    begins, ends = record(logs, lambda: run_threads(8, worker))
    by_id = check_pairs(begins, ends)
    names = [b["name"] for b in begins]
    assert names.count("shared") == 8000
    assert names.count("decorated") == 8000
    assert all(names.count("fresh-%d" % i) == 1000 for i in range(8))
    assert len({b["tid"] for b in begins}) == 8
    for b in begins:
        expected = {"shared": (0, None), "decorated": (1, "shared")}.get(b["name"], (2, "decorated"))
        assert b["depth"] == expected[0]
        if expected[1]:
            assert by_id[b["parent"]]["name"] == expected[1]
    drops = lines(one_session(logs), "scope", "session_end")[0]["dropped"]
    assert not any(drops.values())


def test_names(logs):
    def body():
        with gpufl.Scope("förward ✓"):
            pass
        with gpufl.Scope(b"bytes-name"):
            pass

    begins, _ = record(logs, body)
    assert [b["name"] for b in begins] == ["förward ✓", "bytes-name"]
    with pytest.raises(TypeError):
        gpufl.Scope(42)
    assert repr(gpufl.Scope("r")) == "gpufl.Scope('r')"


def test_generators_and_coroutines_are_refused():
    def gen():
        yield 1

    async def coro():
        await asyncio.sleep(0)

    for fn in (gen, coro):
        with pytest.raises(TypeError, match="coroutine or generator"):
            gpufl.scope("x")(fn)


def test_scopes_without_a_session_are_harmless():
    assert not gpufl.is_recording()
    with gpufl.Scope("nothing"):
        pass
    assert gpufl.scope("nothing")(lambda: 3)() == 3
