#!/bin/sh
# Installs the Debian packages gpufl needs to build (and, with --sanitizers or
# --test-tools, to run the sanitizer builds or the tests that need outside
# tools) when they are missing. Does nothing when
# everything is there. Not root and no password-less sudo: prints the command
# to run and fails.
#
# A package counts as present when dpkg says so or when what it provides
# works (a header found by pkg-config, a command on PATH), so machines that
# get libraries some other way (an unpacked .deb tree, see
# ../shared/gpu/use-debs.sh) are not asked to install them.
set -u

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

py_has() { /usr/bin/python3 -c "import $1" >/dev/null 2>&1; }

provides() {
    case "$1" in
    cmake | pkg-config | g++ | clang) command -v "$1" >/dev/null 2>&1 ;;
    libjansson-dev) pkg-config --exists jansson 2>/dev/null ;;
    libcmocka-dev) pkg-config --exists cmocka 2>/dev/null ;;
    libzstd-dev) pkg-config --exists libzstd 2>/dev/null ;;
    libunwind-dev) pkg-config --exists libunwind 2>/dev/null ;;
    libdw-dev) pkg-config --exists libdw 2>/dev/null ;;
    # the uploader: curl/curl.h to build against (libcurl itself is dlopen'd), zlib for gzip
    libcurl4-openssl-dev) pkg-config --exists libcurl 2>/dev/null ;;
    zlib1g-dev) pkg-config --exists zlib 2>/dev/null ;;
    libpq-dev) pkg-config --exists libpq 2>/dev/null ;;     # gpufl serve, gpufl fleet (optional at build)
    libssl-dev) pkg-config --exists openssl 2>/dev/null ;;  # their TLS and key hashes
    protobuf-compiler) command -v protoc >/dev/null 2>&1 ;; # tests: protoc --decode_raw
    clang-format) command -v clang-format-14 >/dev/null 2>&1 || command -v clang-format >/dev/null 2>&1 ;;
    python3 | chromium) command -v "$1" >/dev/null 2>&1 ;;
    prometheus) test -x /usr/bin/prometheus ;; # tests: scrapes `gpufl exporter`
    postgresql) ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 ;; # tests: `gpufl serve`'s database
    openssl | curl) command -v "$1" >/dev/null 2>&1 ;; # tests: TLS certificates (uploader, serve), an HTTPS client
    # the Python package's tests run under Debian's python3 (tests/python/run_pytest.sh)
    python3-venv) py_has ensurepip && py_has venv ;;
    python3-pytest) py_has pytest ;;
    python3-setuptools) py_has setuptools ;;
    python3-wheel) py_has wheel ;;
    python3-numpy) py_has numpy ;;
    python3-pandas) py_has pandas ;;
    python3-matplotlib) py_has matplotlib ;;
    libclang-rt-14-dev)
        printf 'int main(void){return 0;}\n' |
            clang -x c -fsanitize=thread - -o /tmp/gpufl-tsan-probe.$$ >/dev/null 2>&1
        ok=$?
        rm -f /tmp/gpufl-tsan-probe.$$
        return $ok ;;
    *) return 1 ;;
    esac
}

# libcurl4-openssl-dev and zlib1g-dev: the uploader (without them it builds and says so when called);
# libpq-dev and libssl-dev: gpufl serve and gpufl fleet (optional at build)
packages="cmake pkg-config g++ libjansson-dev libcmocka-dev libunwind-dev libdw-dev libzstd-dev libcurl4-openssl-dev libpq-dev libssl-dev
    zlib1g-dev"
[ "${1:-}" = "--sanitizers" ] && packages="$packages clang libclang-rt-14-dev"
# --test-tools: what only tests run, so that building (and the GPU machine,
# which has no package registry) does not need them: protoc decodes the
# Perfetto export, headless Chromium opens the HTML report (ctest -L browser),
# clang-format checks the sources' layout (ctest format), Prometheus scrapes
# `gpufl exporter` (tests/exporter_prometheus.sh), openssl makes the CA of the
# uploader's TLS test (python/tests/test_upload.py) and gpufl serve's
# certificates, PostgreSQL (the server, started on a temporary directory)
# keeps what `gpufl serve` receives (tests/serve/), and Debian's Python
# with venv, pytest, setuptools and wheel installs and tests the Python package
# (ctest -L python; numpy, pandas and matplotlib for its analyzer and plots)
case " $* " in *" --test-tools "*) packages="$packages protobuf-compiler python3 chromium clang-format prometheus
    postgresql openssl curl python3-venv python3-pytest python3-setuptools python3-wheel python3-numpy python3-pandas python3-matplotlib" ;; esac

missing=""
for p in $packages; do
    have_pkg "$p" || provides "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then
    run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    run="sudo"
else
    echo "gpufl: these packages are missing and this user cannot install them:$missing" >&2
    echo "gpufl: run:  sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "gpufl: installing missing Debian packages:$missing"
$run apt-get update -q || exit 1
DEBIAN_FRONTEND=noninteractive $run apt-get install -y -q --no-install-recommends $missing || {
    echo "gpufl: apt-get could not install:$missing" >&2
    exit 1
}
