#!/bin/sh
# The Python package's tests, as a user gets the package (CTest python_package):
#   run_pytest.sh PYTHON SOURCE_DIR BUILD_DIR WORK_DIR GPUFL_CLI
# installs python/ with pip into a fresh venv of PYTHON (Debian's python3,
# which sees Debian's pytest, setuptools and wheel through
# --system-site-packages), the wheel carrying BUILD_DIR's libgpufl, then runs
# python/tests with pytest against that installed copy: so the install
# command of README.md and the carried library are tested too. pip builds
# from a copy of python/ in WORK_DIR, never in the source tree, and goes to
# no package index. Exits 77 (skipped) when PYTHON lacks venv or pytest;
# `make test` installs them (tools/install-deps.sh --test-tools).
set -eu
python=$1 source=$2 build=$3 work=$4 cli=$5

for module in ensurepip venv pytest setuptools wheel; do
    if ! "$python" -c "import $module" 2>/dev/null; then
        echo "python package test skipped: $python cannot import $module" \
            "(tools/install-deps.sh --test-tools installs python3-venv, python3-pytest, python3-setuptools," \
            "python3-wheel)"
        exit 77
    fi
done

rm -rf "$work"
mkdir -p "$work"
cp -R "$source/python" "$work/src"
rm -rf "$work/src/build" "$work/src/"*.egg-info # what a pip install in the source tree leaves
"$python" -m venv --system-site-packages "$work/venv"
GPUFL_BUILD_DIR=$build PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
    "$work/venv/bin/pip" install -q --no-build-isolation --no-index "$work/src"

# From WORK_DIR, so that `python -m` puts no gpufl source on sys.path: the
# tests import the installed package, which loads its carried libgpufl.
cd "$work"
unset GPUFL_LIBRARY
# The fake libcupti of the C tests, for gpufl.pm_sampling's (python/tests).
GPUFL_TEST_FAKE_CUPTI=$build/tests/fake_cupti/libcupti.so.13 \
GPUFL_CLI=$cli GPUFL_TEST_INSTALLED=1 PYTHONDONTWRITEBYTECODE=1 \
    "$work/venv/bin/python" -m pytest -p no:cacheprovider -q "$source/python/tests"
