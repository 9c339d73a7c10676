"""Finds libgpufl, loads it once, and binds the C functions of gpufl.h.

Every module of the package (the recording API here; the analyzer, report
and viz modules later) reaches the C library through this one module, so
there is one copy of libgpufl in the process and one place that says where
it came from (``path``) and what was tried (``tried``).

Where the library is looked for, in order:

0. A libgpufl already loaded in this process (``gpufl run`` injects one
   into the program at its first CUDA call): its session is the one to
   record into, and a second copy would record nothing of it.
1. ``$GPUFL_LIBRARY``, a path. When set, nothing else is tried: an explicit
   choice that fails is an error, not a reason to pick another copy.
2. The copy the wheel carries (``gpufl/_libs/libgpufl.so``), present when the
   package was installed from a source tree whose CMake build directory was
   found (``$GPUFL_BUILD_DIR``, else ``../build``; see setup.py).
3. The dynamic loader's own search for ``libgpufl.so.0``
   (``LD_LIBRARY_PATH``, the ldconfig cache, the default directories).
4. ``ctypes.util.find_library("gpufl")``, then ``/usr/local/lib`` and
   ``/usr/local/lib64`` (an install whose ``ldconfig`` was not run yet).

A candidate that loads but lacks the functions this package calls (an older
libgpufl) is skipped, and said so. When nothing fits, importing raises
ImportError listing every candidate and why it failed.

Calls that are tiny and never wait (scopes, getters, option setters) go
through ``ctypes.PYFUNCTYPE`` prototypes: they keep the GIL, which saves its
release and reacquisition, a large share of a scope's cost from Python.
They never call back into Python, so holding the GIL cannot deadlock. Calls
that may wait or take long (init, shutdown, system windows, the report) go
through ``ctypes.CFUNCTYPE`` and release the GIL, so other Python threads
run meanwhile.
"""

import ctypes
import ctypes.util
import os

__all__ = ["lib", "path", "tried", "bind", "LIBRARY_ENV", "CARRIED_DIR"]

LIBRARY_ENV = "GPUFL_LIBRARY"
CARRIED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_libs")

# Functions this package calls; a library without any of them is too old.
_REQUIRED = (
    "gpufl_options_size",
    "gpufl_option_name",
    "gpufl_options_set",
    "gpufl_options_init",
    "gpufl_init",
    "gpufl_scope_begin",
    "gpufl_generate_report",
    "gpufl_upload_logs",
)


def _candidates():
    """(how it was found, what to dlopen) pairs, in the order to try them."""
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        return [(LIBRARY_ENV, explicit)]
    found = [("carried by the package", os.path.join(CARRIED_DIR, "libgpufl.so")),
             ("the dynamic loader's search", "libgpufl.so.0")]
    by_name = ctypes.util.find_library("gpufl")
    if by_name:
        found.append(("ctypes.util.find_library", by_name))
    for d in ("/usr/local/lib", "/usr/local/lib64"):
        found.append(("installed under " + d, os.path.join(d, "libgpufl.so.0")))
    return found


def _already_loaded():
    """The libgpufl this process has loaded already (by its soname), or None."""
    try:
        return ctypes.CDLL("libgpufl.so.0", mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    except OSError:
        return None


def _load():
    tried = []
    here = _already_loaded()
    if here is not None and not [f for f in _REQUIRED if not hasattr(here, f)]:
        tried.append("already loaded in this process: libgpufl.so.0 (used)")
        return here, _loaded_path(here, "libgpufl.so.0"), tried
    for how, what in _candidates():
        if "/" in what and not os.path.exists(what):
            tried.append("%s: %s (no such file)" % (how, what))
            continue
        try:
            handle = ctypes.CDLL(what)
        except OSError as e:
            tried.append("%s: %s (%s)" % (how, what, e))
            continue
        missing = [f for f in _REQUIRED if not hasattr(handle, f)]
        if missing:
            tried.append("%s: %s (too old: no %s)" % (how, what, ", ".join(missing)))
            continue
        tried.append("%s: %s (loaded)" % (how, what))
        return handle, _loaded_path(handle, what), tried
    raise ImportError(
        "gpufl: cannot load libgpufl; tried, in order:\n  " + "\n  ".join(tried) +
        "\nBuild it (cmake) and reinstall this package from the source tree, install it "
        "(cmake --install), or set %s to the path of libgpufl.so." % LIBRARY_ENV)


def _loaded_path(handle, fallback):
    """The file the loader actually mapped, from dladdr of one of its symbols."""

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
        info = DlInfo()
        addr = ctypes.cast(handle.gpufl_init, ctypes.c_void_p)
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(os.fsdecode(info.dli_fname))
    except (AttributeError, OSError):
        pass
    return fallback


lib, path, tried = _load()


def bind(name, restype, argtypes, hold_gil=False):
    """A C function of libgpufl with its prototype set once.

    hold_gil=True only for calls that never wait (see the module docstring).
    """
    proto = (ctypes.PYFUNCTYPE if hold_gil else ctypes.CFUNCTYPE)(restype, *argtypes)
    return proto((name, lib))


_c_char_p, _u64, _size_t = ctypes.c_char_p, ctypes.c_uint64, ctypes.c_size_t

# The recording API of gpufl.h.
options_size = bind("gpufl_options_size", _size_t, [], True)
option_name = bind("gpufl_option_name", _c_char_p, [_size_t], True)
options_init = bind("gpufl_options_init", None, [ctypes.c_void_p], True)
options_set = bind("gpufl_options_set", ctypes.c_int, [ctypes.c_void_p, _c_char_p, _c_char_p], True)
init = bind("gpufl_init", ctypes.c_bool, [ctypes.c_void_p])
shutdown = bind("gpufl_shutdown", None, [])
is_recording = bind("gpufl_is_recording", ctypes.c_bool, [], True)
last_error = bind("gpufl_last_error", _c_char_p, [], True)
session_dir = bind("gpufl_session_dir", _c_char_p, [], True)
version = bind("gpufl_version", _c_char_p, [], True)
scope_begin = bind("gpufl_scope_begin", _u64, [_c_char_p], True)
scope_end = bind("gpufl_scope_end", None, [_u64], True)
system_start = bind("gpufl_system_start", None, [_c_char_p])
system_stop = bind("gpufl_system_stop", None, [_c_char_p])
generate_report = bind("gpufl_generate_report", ctypes.c_int, [_c_char_p])
trace_pause = bind("gpufl_trace_pause", ctypes.c_int, [])
trace_resume = bind("gpufl_trace_resume", ctypes.c_int, [])
trace_window = bind("gpufl_trace_window", ctypes.c_int, [ctypes.c_double])
dump = bind("gpufl_dump", ctypes.c_int, [ctypes.c_char_p])
