"""The enums of gpufl.h and the package's error type.

The enums carry the C values (gpufl_backend, gpufl_engine,
gpufl_log_format; append-only there, so they only grow here). Options are
handed to the library by name, and the library's parser takes these member
names as they are (any case, '_' ignored: ``None_`` is ``none``,
``PcSampling`` is ``pc_sampling``), so no table of spellings lives here.
"""

import enum

__all__ = ["BackendKind", "ProfilingEngine", "LogFormat", "GpuflError"]


class BackendKind(enum.IntEnum):
    """GPU vendor to record (gpufl_backend). ``None_``: no GPU, host only."""

    Auto = 0
    Nvidia = 1
    Amd = 2
    None_ = 3


class ProfilingEngine(enum.IntEnum):
    """How much to record, cheapest first (gpufl_engine).

    Monitor records NVML, host metrics and scopes and never loads CUPTI;
    the others load the CUPTI plugin.
    """

    Monitor = 0
    Trace = 1
    PcSampling = 2
    SassMetrics = 3
    RangeProfiler = 4
    Deep = 5


class LogFormat(enum.IntEnum):
    """Which files a session writes (gpufl_log_format)."""

    Ndjson = 0
    Gflt = 1
    Both = 2
    None_ = 3  # session.json only (and the flight window's dumps)
    Compact = 4  # the default: trace.gflt, plus scope.log and system.log


class GpuflError(RuntimeError):
    """A libgpufl call failed; the message is gpufl_last_error()'s.

    ``code`` is the negative GPUFL_E* value the call returned.
    """

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code
