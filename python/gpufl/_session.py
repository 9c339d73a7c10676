"""The recording lifecycle: init, shutdown, session(), system windows, the report.

Thin over gpufl.h, with the C library's rules: init returns a bool and
never raises for a problem of the machine or the environment (a bad
GPUFL_* variable or config file, an unwritable log directory: False, and
last_error() says why), so a program keeps running without its recording;
only mistakes in the call itself (an unknown keyword, a value of the wrong
type or that the library does not take) raise. Every call is harmless
before init, after shutdown, twice, and from any thread.

init() also sets the switch that makes scopes skip the C calls while
gpufl is off for this process (gpufl._scope._off).
"""

import contextlib
import inspect
import os
import warnings

from . import _lib, _options, _scope, _upload
from ._types import GpuflError

__all__ = ["init", "shutdown", "session", "is_recording", "session_dir", "last_error", "version",
           "option_names", "system_start", "system_stop", "generate_report", "trace_pause", "dump",
           "trace_resume", "trace_window"]


def _str(raw):
    return raw.decode("utf-8", "replace") if raw else ""


def last_error():
    """The message of the last failed gpufl call on this thread, or ""."""
    return _str(_lib.last_error())


def version():
    """The version of the libgpufl that was loaded, e.g. "0.1.0"."""
    return _str(_lib.version())


def is_recording():
    """True while a session of this process's libgpufl records."""
    return bool(_lib.is_recording())


def session_dir():
    """Directory of the current or last session, or "" before the first."""
    return os.fsdecode(_lib.session_dir() or b"")


def option_names():
    """The keywords of init(): the library's option names, in its order."""
    return _options.NAMES


def init(**options):
    """Starts recording. Returns True when recording, when gpufl is disabled,
    or when a session already runs (its options stay); False when the
    environment, config file or log directory is unusable (see last_error()).

    Every option of the C library is a keyword (``gpufl.option_names()`` lists
    them): ``app_name``, ``log_path``, ``system_sample_rate_ms``,
    ``continuous_system_sampling``, ``backend=BackendKind.Auto``,
    ``profiling_engine=ProfilingEngine.Monitor``, ``enabled=True``, ... with
    the library's defaults; None leaves an option at its default. Values:
    str (or a path), int, bool, the enums or their names ("trace").
    Precedence is the library's: default < config_file < GPUFL_* variables
    < keywords given here with a value other than the default;
    ``enabled=False`` and ``GPUFL_DISABLED=1`` win and make every gpufl call
    a no-op.

    Raises TypeError for an unknown keyword or a value of the wrong type,
    ValueError (the library's message) for a value it does not take.
    ``sampling_auto_start``, ``remote_upload`` and ``kernel_sample_rate_ms``
    are deprecated: accepted, with a DeprecationWarning.
    """
    return _start(options, stacklevel=2)


def _start(options, stacklevel):
    """init() for init and session(); stacklevel: frames from here to the
    user's call, for the deprecation warnings."""
    buf, kept = _options.build(options, stacklevel=stacklevel + 1)
    ok = bool(_lib.init(buf))
    del kept  # the library has copied the strings
    _scope._off = not _lib.is_recording()
    if options.get("remote_upload") and _lib.is_recording():
        _upload.register_at_exit(options, stacklevel=stacklevel + 1)
    return ok


def shutdown():
    """Ends the session: everything recorded is written and session.json
    finished. Harmless without a session."""
    _lib.shutdown()


@contextlib.contextmanager
def session(**options):
    """``with gpufl.session(app_name="train") as d:`` init, then shutdown.

    Yields the session directory, or None when nothing records (disabled, or
    init failed: then a RuntimeWarning carries the reason and the block runs
    unrecorded). Shuts down on leaving only a session it started itself, so
    it can be nested in a program that already records. Keywords as init().
    """
    was_recording = is_recording()
    if not _start(options, stacklevel=3):  # here, contextlib's __enter__, the with statement
        warnings.warn("gpufl: not recording: " + last_error(), RuntimeWarning, stacklevel=3)
    started = not was_recording and is_recording()
    try:
        yield session_dir() if is_recording() else None
    finally:
        if started:
            shutdown()


def _name(name):
    return None if name is None else _scope._encode(name)


def system_start(name=None):
    """Opens a system metric window (name None = "system"): host and GPU
    metrics are sampled while one is open, also outside scopes."""
    if not _scope._off:
        _lib.system_start(_name(name))


def system_stop(name=None):
    """Closes the window system_start(name) opened; unmatched, ignored."""
    if not _scope._off:
        _lib.system_stop(_name(name))


def generate_report(output_path=None):
    """Writes the text report of the current session, or of the last one
    (the text of ``gpufl report``), and returns the path written:
    output_path, or <session dir>/summary.txt when None.

    Returns None while gpufl is off (enabled=False, GPUFL_DISABLED). Raises
    GpuflError with the library's message when there was no session, the
    file cannot be written, or the session cannot be read back.
    """
    if _scope._off:
        return None
    path = None if output_path is None else os.fsencode(output_path)
    rc = _lib.generate_report(path)
    if rc != 0:
        raise GpuflError(last_error(), rc)
    if output_path is not None:
        return os.fspath(output_path)
    return os.path.join(session_dir(), "summary.txt")


def trace_pause():
    """Hands CUPTI to another tool (torch.profiler, Nsight) until
    trace_resume(): gpufl writes out what it holds and lets go (gpufl.h,
    gpufl_trace_pause). Returns True, or False when there was nothing to
    pause (no session, the Monitor engine, already paused); last_error()
    says why."""
    return not _scope._off and _lib.trace_pause() == 0


def trace_resume():
    """Takes CUPTI back after trace_pause(). Returns True, or False when it
    could not (not paused, or the other tool still holds CUPTI: then the
    trace stays paused); last_error() says why."""
    return not _scope._off and _lib.trace_resume() == 0


def trace_window(seconds):
    """Traces device activity for the next `seconds` (gpufl.h,
    gpufl_trace_window), in a session with trace windows (trace_every_s or
    trace_every_steps): opens a window now, or extends the open one.
    Returns True, or False when it could not (no session, no device
    tracing, the trace paused by trace_pause(), seconds <= 0);
    last_error() says why."""
    return not _scope._off and _lib.trace_window(float(seconds)) == 0


def dump(reason=""):
    """Writes the flight window (flight_window_s) out now, as a session of
    its own under <session dir>/dumps/, and returns once it is on disk
    (gpufl.h, gpufl_dump); the program goes on. Returns True, or False when
    nothing was dumped (no session, no flight window, the last dump younger
    than dump_min_interval_s); last_error() says why."""
    text = str(reason).encode("utf-8", "replace") if reason else None
    return not _scope._off and _lib.dump(text) == 0


def _signature(returns):
    """init()'s keywords as a signature, for help() and editors: they exist
    only at run time, taken from the library."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    names = _options.NAMES + tuple(k for k in _options.DEPRECATED if k not in _options.NAMES)
    return inspect.Signature([inspect.Parameter(n, keyword, default=None) for n in names],
                             return_annotation=returns)


init.__signature__ = _signature(bool)
session.__signature__ = _signature(inspect.Signature.empty)
