"""Shared helpers of the gpufl package's tests.

Sessions are recorded for real through libgpufl on a machine without a GPU
(host metrics and scopes) and checked by reading back what the session
wrote: session.json, the NDJSON logs, and where the build's `gpufl` command
is known ($GPUFL_CLI), `gpufl report --format json`. libgpufl can start a
new session after gpufl_shutdown, so tests share the process; cases that
depend on the environment at init or on a fresh process (GPUFL_DISABLED,
no session yet, a library that cannot be found) run in a child Python.

Every test starts and ends with no session and no GPUFL_* variable but
those that say where things are (GPUFL_LIBRARY, GPUFL_CLI).
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import gpufl

SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
KEEP_ENV = ("GPUFL_LIBRARY", "GPUFL_CLI", "GPUFL_TEST_INSTALLED", "GPUFL_TEST_FAKE_CUPTI")


@pytest.fixture(autouse=True)
def clean_gpufl(monkeypatch):
    for name in list(os.environ):
        if name.startswith("GPUFL_") and name not in KEEP_ENV:
            monkeypatch.delenv(name)
    gpufl.shutdown()
    gpufl._scope._off = False  # as imported: scopes call the library until an init says otherwise
    yield
    gpufl.shutdown()


@pytest.fixture
def logs(tmp_path):
    """A fresh log_path."""
    return str(tmp_path / "logs")


def session_dirs(log_path):
    if not os.path.isdir(log_path):
        return []
    return sorted(os.path.join(log_path, d) for d in os.listdir(log_path))


def one_session(log_path):
    dirs = session_dirs(log_path)
    assert len(dirs) == 1, "expected one session under %s, found %s" % (log_path, dirs)
    return dirs[0]


def session_json(session_dir):
    with open(os.path.join(session_dir, "session.json")) as f:
        return json.load(f)


def lines(session_dir, channel, type_=None):
    """The parsed lines of <channel>.log, of one type when given."""
    with open(os.path.join(session_dir, channel + ".log")) as f:
        rows = [json.loads(line) for line in f]
    return [r for r in rows if type_ is None or r["type"] == type_]


def cli():
    """The build's gpufl command, or skip."""
    path = os.environ.get("GPUFL_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("GPUFL_CLI does not name the gpufl command")
    return path


def report_json(session_dir):
    out = subprocess.run([cli(), "report", "--format", "json", session_dir], check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def run_python(code, env=None, cwd=None, timeout=60):
    """Runs code (dedented) in a child of this Python; returns the
    CompletedProcess (text stdout, stderr)."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("GPUFL_") or k in KEEP_ENV}
    # the same gpufl as this process, wherever the child runs
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpufl.__file__)))
    child_env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    child_env.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=child_env, cwd=cwd,
                          timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


def run_python_ok(code, env=None, cwd=None):
    r = run_python(code, env, cwd)
    assert r.returncode == 0, "child failed (%d):\n%s%s" % (r.returncode, r.stdout, r.stderr)
    return r


# ---- PyTorch stand-in for gpufl.memory ----------------------------------------------

FAKE_TORCH_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_torch")
_fake_torch_module = None


def _load_fake_torch():
    """tests/fake_torch imported once, then kept out of sys.modules so that
    only tests asking for it see it."""
    global _fake_torch_module
    if _fake_torch_module is None:
        saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "torch" or k.startswith("torch.")}
        sys.path.insert(0, FAKE_TORCH_DIR)
        try:
            import torch as mod
        finally:
            sys.path.remove(FAKE_TORCH_DIR)
            for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
                del sys.modules[k]
            sys.modules.update(saved)
        _fake_torch_module = mod
    return _fake_torch_module


@pytest.fixture
def fake_torch(monkeypatch):
    """The stand-in for PyTorch as `torch` for this test, with a fresh
    scripted allocator (one 8 GiB GPU; script it through torch._fake).
    PyTorch collectors gpufl.memory attached are detached afterwards."""
    mod = _load_fake_torch()
    mod._fake.reset()
    monkeypatch.setitem(sys.modules, "torch", mod)
    yield mod
    from gpufl.memory import _torch_source

    _torch_source.detach()


@pytest.fixture
def no_torch(monkeypatch):
    """`import torch` raises ImportError for this test."""
    monkeypatch.setitem(sys.modules, "torch", None)
