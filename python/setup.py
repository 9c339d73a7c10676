"""Build step of the gpufl wheel: carry libgpufl when a build of it is at hand.

pyproject.toml holds the metadata; this file only adds what a declarative
setup cannot: copying libgpufl.so (and the CUPTI plugin libgpufl_cupti.so,
which libgpufl loads from beside itself for the Trace engines) from a CMake
build directory into the package as gpufl/_libs/, and then tagging the wheel
for this platform (py3-none-<platform>: the library does not depend on the
Python version). The build directory is $GPUFL_BUILD_DIR, else ../build
(the README's build) when it holds libgpufl.so. With neither, the wheel is
pure Python and finds an installed libgpufl at import (gpufl/_lib.py).
Files are copied into the build tree only, never into the source tree.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
CARRIED = ("libgpufl.so", "libgpufl_cupti.so")


def build_dir():
    """The CMake build directory to take libgpufl from, or None."""
    explicit = os.environ.get("GPUFL_BUILD_DIR")
    if explicit:
        if not os.path.isfile(os.path.join(explicit, "libgpufl.so")):
            raise SystemExit("GPUFL_BUILD_DIR=%s holds no libgpufl.so: build it first "
                             "(cmake --build %s)" % (explicit, explicit))
        return explicit
    default = os.path.join(HERE, os.pardir, "build")
    return default if os.path.isfile(os.path.join(default, "libgpufl.so")) else None


class BuildPyCarryingLib(build_py):
    def run(self):
        super().run()
        source = build_dir()
        if source is None:
            return
        dest = os.path.join(self.build_lib, "gpufl", "_libs")
        os.makedirs(dest, exist_ok=True)
        for name in CARRIED:
            path = os.path.join(source, name)
            if os.path.isfile(path):
                # copyfile follows the symlink chain: the wheel holds the file itself
                shutil.copyfile(path, os.path.join(dest, name))
                self.announce("gpufl: carrying %s" % os.path.realpath(path), level=2)


commands = {"build_py": BuildPyCarryingLib}

try:
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheelForPlatform(bdist_wheel):
        """Tags the wheel py3-none-<platform> when it carries libgpufl."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = build_dir() is None

        def get_tag(self):
            python, abi, plat = super().get_tag()
            return (python, abi, plat) if self.root_is_pure else ("py3", "none", plat)

    commands["bdist_wheel"] = BdistWheelForPlatform
except ImportError:  # no wheel package: pip then builds nothing we could tag
    pass

setup(cmdclass=commands)
