"""gpufl.upload_logs(): sessions to a gpufl server (docs/UPLOAD.md), over
gpufl_upload_logs() of the C library, and the at-exit upload of the
deprecated init(remote_upload=True).

The C structs are mirrored here with ctypes; both carry struct_size, and
the mirror's size is checked against the library's own (its
gpufl_upload_options_init writes it) at import, so a library with another
layout is refused instead of being handed a struct it would misread.
Warnings come back through the on_warning callback, every one of them (up
to 1000), not only the few the C result keeps.
"""

import atexit
import ctypes
import dataclasses
import os
import sys

from . import _lib

__all__ = ["upload_logs", "UploadResult"]

_WARN_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)
_KEPT, _LEN = 8, 256  # GPUFL_UPLOAD_WARNINGS_KEPT, GPUFL_UPLOAD_WARNING_LEN
_MAX_WARNINGS = 1000


class _Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("log_path", ctypes.c_char_p), ("backend_url", ctypes.c_char_p),
                ("api_key", ctypes.c_char_p), ("api_path", ctypes.c_char_p), ("ca_file", ctypes.c_char_p),
                ("session_id", ctypes.c_char_p), ("all_sessions", ctypes.c_bool), ("force", ctypes.c_bool),
                ("total_timeout_ms", ctypes.c_uint32), ("connect_timeout_ms", ctypes.c_uint32),
                ("read_timeout_ms", ctypes.c_uint32), ("max_retries", ctypes.c_uint32),
                ("retry_delay_ms", ctypes.c_uint32), ("batch_events", ctypes.c_uint32),
                ("batch_bytes", ctypes.c_uint32), ("on_warning", _WARN_FN), ("on_warning_arg", ctypes.c_void_p)]


class _Result(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("success", ctypes.c_bool),
                ("sessions_processed", ctypes.c_uint32), ("sessions_failed", ctypes.c_uint32),
                ("events_uploaded", ctypes.c_uint64), ("events_duplicate", ctypes.c_uint64),
                ("events_rejected", ctypes.c_uint64), ("bytes_uploaded", ctypes.c_uint64),
                ("elapsed_ms", ctypes.c_uint64), ("warning_count", ctypes.c_uint32),
                ("warnings", (ctypes.c_char * _LEN) * _KEPT)]


_options_init = _lib.bind("gpufl_upload_options_init", None, [ctypes.c_void_p], True)
_upload = _lib.bind("gpufl_upload_logs", ctypes.c_int, [ctypes.POINTER(_Options), ctypes.POINTER(_Result)])


def _c_size():
    """sizeof(gpufl_upload_options) as the library was built."""
    buf = (ctypes.c_uint64 * 512)()
    _options_init(buf)
    return buf[0]


if _c_size() != ctypes.sizeof(_Options):
    raise ImportError("gpufl: libgpufl's gpufl_upload_options is %d bytes, this package's mirror %d: the library "
                      "(%s) and the package are of different versions" % (_c_size(), ctypes.sizeof(_Options),
                                                                          _lib.path))


@dataclasses.dataclass
class UploadResult:
    """What upload_logs() did. success: every session chosen was sent whole."""
    success: bool = False
    sessions_processed: int = 0
    sessions_failed: int = 0
    events_uploaded: int = 0  # acknowledged by the server in this call (accepted + duplicates)
    events_duplicate: int = 0  # of those, events it already held
    events_rejected: int = 0
    bytes_uploaded: int = 0  # gzip bytes of the request bodies sent
    elapsed_ms: int = 0
    warnings: list = dataclasses.field(default_factory=list)
    warning_count: int = 0
    error: str = ""  # why, when success is False

    @property
    def files_processed(self):
        """The reference client's name for sessions_processed."""
        return self.sessions_processed

    def __bool__(self):
        return self.success


def _text(name, value):
    if value is None:
        return None
    if isinstance(value, (str, bytes, os.PathLike)):
        text = os.fsencode(value)
        if b"\0" in text:
            raise ValueError("gpufl.upload_logs(%s=...): the value contains a NUL character" % name)
        return text
    raise TypeError("gpufl.upload_logs(%s=...): expected a str or path, not %s" % (name, type(value).__name__))


def _uint(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise ValueError("gpufl.upload_logs(%s=%r): expected an int from 0 to 2**32-1" % (name, value))
    return value


def upload_logs(log_path=None, backend_url=None, api_key=None, api_path=None, *, ca_file=None, session_id=None,
                all_sessions=False, force=False, total_timeout_ms=None, connect_timeout_ms=None,
                read_timeout_ms=None, max_retries=None, retry_delay_ms=None, batch_events=None, batch_bytes=None):
    """Uploads sessions and returns an UploadResult (never raises for a
    failed upload: see .success and .error).

    log_path: a session directory, a job directory, or a directory of
    sessions (the newest run is sent, unless session_id or all_sessions).
    None: $GPUFL_LOG_PATH, else "gpufl". backend_url, api_key, api_path
    None: $GPUFL_BACKEND_URL, $GPUFL_API_KEY, $GPUFL_API_PATH (else
    "/api/v1"). ca_file: PEM CAs to verify the server with. force: send
    every event again, whatever the cursors say. The timeouts, retries and
    batch sizes default to the C library's (gpufl.h). With GPUFL_DISABLED
    set, nothing is sent and the result is a success with 0 events.
    Raises TypeError / ValueError for arguments of the wrong type.
    """
    o = _Options()
    _options_init(ctypes.byref(o))
    kept = {}
    for name, value in (("log_path", log_path), ("backend_url", backend_url), ("api_key", api_key),
                        ("api_path", api_path), ("ca_file", ca_file), ("session_id", session_id)):
        kept[name] = _text(name, value)
        setattr(o, name, kept[name])
    o.all_sessions = bool(all_sessions)
    o.force = bool(force)
    for name, value in (("total_timeout_ms", total_timeout_ms), ("connect_timeout_ms", connect_timeout_ms),
                        ("read_timeout_ms", read_timeout_ms), ("max_retries", max_retries),
                        ("retry_delay_ms", retry_delay_ms), ("batch_events", batch_events),
                        ("batch_bytes", batch_bytes)):
        if value is not None:
            setattr(o, name, _uint(name, value))
    warnings = []

    def on_warning(msg, _arg):
        if len(warnings) < _MAX_WARNINGS:
            warnings.append(msg.decode("utf-8", "replace"))

    o.on_warning = _WARN_FN(on_warning)
    r = _Result()
    r.struct_size = ctypes.sizeof(_Result)
    rc = _upload(ctypes.byref(o), ctypes.byref(r))
    del kept
    return UploadResult(success=rc == 0 and r.success, sessions_processed=r.sessions_processed,
                        sessions_failed=r.sessions_failed, events_uploaded=r.events_uploaded,
                        events_duplicate=r.events_duplicate, events_rejected=r.events_rejected,
                        bytes_uploaded=r.bytes_uploaded, elapsed_ms=r.elapsed_ms, warnings=warnings,
                        warning_count=r.warning_count,
                        error="" if rc == 0 else _lib.last_error().decode("utf-8", "replace"))


# ---- init(remote_upload=True), deprecated -------------------------------------

_at_exit = None  # the (backend_url, api_key, api_path) to upload with, once registered


def _upload_at_exit():
    """The reference's remote_upload: at interpreter exit, end the session
    and upload it. A failure is one line on stderr; exit goes on."""
    from . import _session
    backend_url, api_key, api_path = _at_exit
    _session.shutdown()
    d = _session.session_dir()
    if not d:
        return
    r = upload_logs(log_path=d, backend_url=backend_url, api_key=api_key, api_path=api_path)
    if not r.success:
        sys.stderr.write("gpufl: remote_upload: %s\n" % r.error)


def register_at_exit(options, stacklevel):
    """Called by init() for remote_upload=True while recording: uploads the
    session at exit with init's backend_url, api_key and api_path (None:
    the environment's). Registered once; a later init's values replace.
    Without a backend_url anywhere it warns now (RuntimeWarning, at
    stacklevel) and registers nothing: there is nowhere to upload to."""
    global _at_exit
    if not options.get("backend_url") and not os.environ.get("GPUFL_BACKEND_URL"):
        import warnings
        warnings.warn("gpufl.init(remote_upload=True) without backend_url (or GPUFL_BACKEND_URL): nothing will be "
                      "uploaded", RuntimeWarning, stacklevel=stacklevel + 1)
        return
    first = _at_exit is None
    _at_exit = (options.get("backend_url"), options.get("api_key"), options.get("api_path"))
    if first:
        atexit.register(_upload_at_exit)
