"""gpufl: a flight recorder for GPU workloads, from Python.

The recording API over libgpufl (ctypes; nothing compiled at install time)::

    import gpufl

    gpufl.init(app_name="trainer", system_sample_rate_ms=50)
    with gpufl.Scope("epoch"):
        train()
    gpufl.shutdown()

Scopes (``Scope``, ``@scope``), system metric windows (``system_start``,
``system_stop``) and the report (``generate_report``) go to the same C
library as C and C++ callers, so one process has one session. docs/PYTHON.md
describes the API; gpufl._lib says where libgpufl is looked for.

Reading sessions back is in modules imported on their own, so that
recording never imports numpy, pandas or matplotlib: gpufl.analyzer
(GpuFlightSession: a session as pandas DataFrames), gpufl.report (the text
of `gpufl report`) and gpufl.viz (a matplotlib timeline).
"""

from ._scope import Scope, scope
from ._session import (generate_report, init, is_recording, last_error, option_names, session,
                       session_dir, shutdown, system_start, system_stop, trace_pause, trace_resume, dump,
                       trace_window, version)
from ._types import BackendKind, GpuflError, LogFormat, ProfilingEngine
from ._upload import UploadResult, upload_logs

__version__ = "0.1.0"

__all__ = [
    "BackendKind", "GpuflError", "LogFormat", "ProfilingEngine", "Scope", "generate_report", "init",
    "is_recording", "last_error", "option_names", "scope", "session", "session_dir", "shutdown",
    "system_start", "system_stop", "trace_pause", "trace_resume", "trace_window", "dump", "version",
    "upload_logs", "UploadResult",
]
