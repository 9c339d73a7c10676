"""enabled=False and GPUFL_DISABLED: every call a no-op, nothing written.
In child processes, so that each starts with the variable as given."""

import os

from conftest import run_python_ok

EVERY_CALL = """
    import os, sys, gpufl
    ok = gpufl.init(log_path=sys.argv[1] if len(sys.argv) > 1 else "logs", {kwargs})
    print("init", ok, gpufl.is_recording())
    with gpufl.Scope("s"):
        pass

    @gpufl.scope("f")
    def f(n):
        return f(n - 1) if n else 0

    f(3)
    gpufl.system_start("w")
    gpufl.system_stop("w")
    print("report", gpufl.generate_report())
    with gpufl.session(app_name="ctx", {kwargs}) as d:
        print("session", d)
    gpufl.shutdown()
    print("dir", repr(gpufl.session_dir()))
"""


def check_nothing_recorded(tmp_path, kwargs="", env=None):
    r = run_python_ok(EVERY_CALL.format(kwargs=kwargs), env=env, cwd=str(tmp_path))
    assert r.stdout.splitlines() == ["init True False", "report None", "session None", "dir ''"]
    assert r.stderr == ""
    assert os.listdir(str(tmp_path)) == []


def test_enabled_false(tmp_path):
    check_nothing_recorded(tmp_path, kwargs="enabled=False")


def test_gpufl_disabled(tmp_path):
    for value in ("1", "true", "YES", "on"):
        check_nothing_recorded(tmp_path, env={"GPUFL_DISABLED": value})


def test_gpufl_disabled_wins_over_enabled_true(tmp_path):
    check_nothing_recorded(tmp_path, kwargs="enabled=True, ring_events=64", env={"GPUFL_DISABLED": "1"})


def test_disabled_scopes_make_no_library_call(tmp_path):
    """While off, a Scope does not reach the C library (its functions are
    replaced by ones that fail the child)."""
    run_python_ok("""
        import gpufl
        from gpufl import _scope
        assert gpufl.init(enabled=False)
        def boom(*a):
            raise AssertionError("called the library")
        _scope._begin = _scope._end = boom
        with gpufl.Scope("off"):
            pass
        gpufl.scope("off")(lambda: None)()
    """, cwd=str(tmp_path))
