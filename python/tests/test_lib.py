"""Where libgpufl comes from (gpufl/_lib.py), and the version."""

import os
import re

import gpufl
from conftest import SOURCE_DIR, run_python
from gpufl import _lib


def test_version():
    assert gpufl.version() == gpufl.__version__
    with open(os.path.join(SOURCE_DIR, "python", "pyproject.toml")) as f:
        assert re.search(r'^version = "%s"$' % re.escape(gpufl.__version__), f.read(), re.M)


def test_loaded_copy_is_the_expected_one():
    assert _lib.tried[-1].endswith("(loaded)")
    explicit = os.environ.get("GPUFL_LIBRARY")
    if explicit:
        assert _lib.path == os.path.realpath(explicit)
    if os.environ.get("GPUFL_TEST_INSTALLED"):
        # the ctest run installs the package into a venv, with the build's libgpufl carried
        assert not explicit
        assert _lib.path == os.path.join(_lib.CARRIED_DIR, "libgpufl.so")
        assert os.path.isfile(os.path.join(_lib.CARRIED_DIR, "libgpufl.so"))


def test_a_library_that_cannot_load_is_named(tmp_path):
    missing = str(tmp_path / "nope" / "libgpufl.so")
    r = run_python("import gpufl", env={"GPUFL_LIBRARY": missing})
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "GPUFL_LIBRARY: %s (no such file)" % missing in r.stderr

    not_a_library = tmp_path / "libgpufl.so"
    not_a_library.write_text("text")
    r = run_python("import gpufl", env={"GPUFL_LIBRARY": str(not_a_library)})
    assert r.returncode != 0 and str(not_a_library) in r.stderr


def test_a_library_without_the_api_is_too_old():
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    if not os.path.exists(libc):
        libc = "libc.so.6"
    r = run_python("import gpufl", env={"GPUFL_LIBRARY": libc})
    assert r.returncode != 0
    assert "too old: no gpufl_options_size" in r.stderr
