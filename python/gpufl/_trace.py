"""A recorded session read back through libgpufl's reader (gpufl/trace.h).

The analyzer, the report and the timeline stand on this module and on
nothing else of the C library: ``Trace(path)`` opens a session directory,
an NDJSON log or a ``.gflt`` file with ``gpufl_trace_open()`` (which reads
on one thread per CPU), and hands out its columns as numpy arrays that are
views of the C memory, never copies: a ten-million-event session is read
without a Python loop over its events and without a second copy of its
columns.

The ctypes structures below mirror trace.h's public structs field for field
(the "Appended" fields at their ends, as the header grows them). A view
keeps the C trace alive: ``close()`` (or leaving the ``with`` block) drops
the Trace's own hold, and the memory is freed when the last array made from
it is gone, so an array kept by the caller never points at freed memory.
Views are read-only: columns a session never recorded share one read-only
zero mapping in the C reader.

Threads: a Trace may be read from any number of threads (the C trace is
read-only once open). numpy is imported here; pandas is not.
"""

import ctypes
import os

import numpy as np

from . import _lib
from ._types import GpuflError

__all__ = ["Trace", "TraceError", "EXACT", "enum_names"]

_u8, _u16, _u32, _u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
_i16, _i32, _i64, _size = ctypes.c_int16, ctypes.c_int32, ctypes.c_int64, ctypes.c_size_t
_P = ctypes.POINTER

EXACT = 0xFFFFFFFF  # GPUFL_TRACE_EXACT: the row's exact times are in the table's `exact` array

NDJSON, GFLT = 0, 1  # gpufl_trace_info.source_format


class TraceError(GpuflError):
    """gpufl_trace_open() failed; the message is the reader's (file, line or
    offset, problem). ``path`` is what was opened, ``code`` the negative
    GPUFL_E* value (-5 not found, -8 damaged)."""

    def __init__(self, message, code=None, path=None):
        super().__init__(message, code)
        self.path = path


# ---- trace.h's structs -----------------------------------------------------


class Device(ctypes.Structure):
    _fields_ = [("index", _u32), ("name", _u32), ("uuid", _u32), ("pci_bus_id", _u32), ("cc_major", _i32),
                ("cc_minor", _i32), ("sm_count", _u32), ("memory_total_bytes", _u64), ("power_limit_mw", _u32),
                ("max_sm_clock_mhz", _u32), ("max_mem_clock_mhz", _u32),
                # Appended fields.
                ("pcie_max_gen", _u32), ("pcie_max_width", _u32)]


class Info(ctypes.Structure):
    _fields_ = [("format_version", _u32), ("session_id", _u32), ("app_name", _u32), ("host", _u32),
                ("gpufl_version", _u32), ("driver_version", _u32), ("cuda_driver_version", _u32), ("pid", _i32),
                ("start_ns", _u64), ("end_ns", _u64), ("start_wall_ns", _u64), ("ndevices", _u32),
                ("devices", _P(Device)), ("dropped", _u64 * 16), ("skipped_bytes", _u64), ("skipped_lines", _u64),
                ("source", ctypes.c_char_p),
                # Appended fields.
                ("source_format", _u32), ("stop_reason", _u32), ("stop_detail", _u32), ("stopped_at_ns", _u64),
                ("lost", _u64 * 3), ("skipped_chunks", _u64), ("last_ns", _u64), ("engine_requested", _u32),
                ("engine", _u32), ("engine_plugin", _u32), ("engine_reason", _u32)]


class Scopes(ctypes.Structure):
    _fields_ = [("n", _size), ("begin_ns", _P(_u64)), ("end_ns", _P(_u64)), ("id", _P(_u64)),
                ("parent", _P(_u64)), ("name", _P(_u32)), ("tid", _P(_u32)), ("depth", _P(_u16)),
                ("implicit", _P(_u8)),
                # Appended columns.
                ("domain", _P(_u32)), ("instant", _P(_u8)), ("unended", _P(_u8)), ("has_seq", _P(_u8)),
                ("seq", _P(_u64))]


class LaunchConfigs(ctypes.Structure):
    _fields_ = [("n", _size), ("name", _P(_u32)), ("mangled", _P(_u32)), ("grid", _P(_u32 * 3)),
                ("block", _P(_u16 * 3)), ("registers", _P(_u16)), ("static_smem", _P(_u32)),
                ("dynamic_smem", _P(_u32)), ("local_mem", _P(_u32)), ("occupancy_x10000", _P(_u16)),
                ("limiter", _P(_u8))]


class Streams(ctypes.Structure):
    _fields_ = [("n", _size), ("device", _P(_u16)), ("context", _P(_u32)), ("stream", _P(_u32))]


class Callers(ctypes.Structure):
    _fields_ = [("n", _size), ("tid", _P(_u32)), ("scope", _P(_u64)), ("nvtx", _P(_u32)),
                ("external_id", _P(_u64)), ("external_kind", _P(_u8)), ("stack", _P(_u32))]


class Exact(ctypes.Structure):
    _fields_ = [("row", _u64), ("end_ns", _u64), ("api_start_ns", _u64), ("api_end_ns", _u64)]


class Kernels(ctypes.Structure):
    _fields_ = [("n", _size), ("start_ns", _P(_u64)), ("dur_ns", _P(_u32)), ("config_row", _P(_u32)),
                ("stream_row", _P(_u32)), ("caller_row", _P(_u32)), ("correlation", _P(_u32)),
                ("api_lead_ns", _P(_u32)), ("api_dur_ns", _P(_u32)), ("graph_id", _P(_u32)), ("nexact", _size),
                ("exact", _P(Exact)), ("configs", _P(LaunchConfigs)), ("streams", _P(Streams)),
                ("callers", _P(Callers))]


class Transfers(ctypes.Structure):
    _fields_ = [("n", _size), ("start_ns", _P(_u64)), ("dur_ns", _P(_u32)), ("bytes", _P(_u64)),
                ("stream_row", _P(_u32)), ("caller_row", _P(_u32)), ("correlation", _P(_u32)),
                ("dst_device", _P(_u16)), ("kind", _P(_u8)), ("src_kind", _P(_u8)), ("dst_kind", _P(_u8)),
                ("value", _P(_u32)), ("api_lead_ns", _P(_u32)), ("api_dur_ns", _P(_u32)), ("graph_id", _P(_u32)),
                ("nexact", _size), ("exact", _P(Exact)), ("streams", _P(Streams)), ("callers", _P(Callers))]


class Syncs(ctypes.Structure):
    _fields_ = [("n", _size), ("start_ns", _P(_u64)), ("dur_ns", _P(_u32)), ("stream_row", _P(_u32)),
                ("caller_row", _P(_u32)), ("correlation", _P(_u32)), ("kind", _P(_u8)), ("cuda_event", _P(_u32)),
                ("nexact", _size), ("exact", _P(Exact)), ("streams", _P(Streams)), ("callers", _P(Callers))]


class Memory(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("address", _P(_u64)), ("bytes", _P(_u64)),
                ("stream_row", _P(_u32)), ("caller_row", _P(_u32)), ("correlation", _P(_u32)),
                ("is_free", _P(_u8)), ("kind", _P(_u8)), ("streams", _P(Streams)), ("callers", _P(Callers)),
                # Appended columns.
                ("failed", _P(_u8)), ("framework", _P(_u8))]


class Allocator(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("device", _P(_u16)), ("framework", _P(_u32)),
                ("reason", _P(_u32)), ("allocated", _P(_u64)), ("reserved", _P(_u64)), ("active", _P(_u64)),
                ("inactive_split", _P(_u64)), ("largest_free", _P(_u64)), ("peak_allocated", _P(_u64)),
                ("peak_reserved", _P(_u64)), ("requested", _P(_u64)), ("device_free", _P(_u64)),
                ("alloc_retries", _P(_u32)), ("ooms", _P(_u32)), ("caller_row", _P(_u32)),
                ("callers", _P(Callers))]


class PmSamples(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("end_ns", _P(_u64)), ("device", _P(_u16)),
                ("metric", _P(_u32)), ("value", _P(ctypes.c_double))]


class Clocks(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("mono_ns", _P(_u64)), ("wall_ns", _P(_u64)),
                ("uncertainty_ns", _P(_u32)), ("point", _P(_u32)), ("ntp", _P(_u32)), ("ntp_offset_ns", _P(_i64)),
                ("ntp_maxerror_ns", _P(_u64)), ("ntp_esterror_ns", _P(_u64)), ("ntp_status", _P(_u32))]


class NcclCollectives(ctypes.Structure):
    _fields_ = [("n", _size), ("start_ns", _P(_u64)), ("end_ns", _P(_u64)), ("comm_hash", _P(_u64)),
                ("seq", _P(_u64)), ("count", _P(_u64)), ("bytes", _P(_u64)), ("func", _P(_u32)),
                ("datatype", _P(_u32)), ("algo", _P(_u32)), ("proto", _P(_u32)), ("rank", _P(_i32)),
                ("root", _P(_i32)), ("nranks", _P(_u32)), ("tid", _P(_u32)), ("device", _P(_u16)),
                ("channels", _P(_u8)), ("abi", _P(_u8)), ("bytes_known", _P(_u8)), ("p2p", _P(_u8))]


class Job(ctypes.Structure):
    _fields_ = [("struct_size", _u32), ("present", _u32), ("launcher", _u32), ("has", _u32), ("rank", _u32),
                ("local_rank", _u32), ("world_size", _u32), ("local_world_size", _u32), ("id", _u32),
                ("id_from", _u32), ("step", _u32), ("master", _u32), ("host", _u32),
                ("cuda_visible_devices", _u32)]


class PcSamples(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("since_ns", _P(_u64)), ("device", _P(_u16)),
                ("function", _P(_u32)), ("cubin_crc", _P(_u64)), ("pc_offset", _P(_u64)), ("file", _P(_u32)),
                ("line", _P(_u32)), ("reason", _P(_u32)), ("samples", _P(_u32))]


class SassMetrics(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("device", _P(_u16)), ("correlation", _P(_u32)),
                ("function", _P(_u32)), ("function_index", _P(_u32)), ("cubin_crc", _P(_u32)),
                ("pc_offset", _P(_u32)), ("valid", _P(_u16)), ("inst_executed", _P(_u64)),
                ("thread_inst_executed", _P(_u64)), ("sectors", _P(_u64)), ("sectors_ideal", _P(_u64)),
                ("branch_targets", _P(_u64)), ("divergent_targets", _P(_u64)), ("file", _P(_u32)),
                ("line", _P(_u32)), ("caller_row", _P(_u32))]


class RangeMetrics(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("end_ns", _P(_u64)), ("device", _P(_u16)), ("range", _P(_u32)),
                ("scope_id", _P(_u64)), ("name", _P(_u32)), ("metric", _P(_u32)), ("value", _P(ctypes.c_double))]


class Triggers(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("tid", _P(_u32)), ("kind", _P(_u32)), ("detail", _P(_u32)),
                ("dump", _P(_u32)), ("outcome", _P(_u8))]


class TraceWindows(ctypes.Structure):
    _fields_ = [("n", _size), ("begin_ns", _P(_u64)), ("end_ns", _P(_u64)), ("index", _P(_u32)),
                ("reason", _P(_u32)), ("detail", _P(_u32)), ("unended", _P(_u8))]


class DeviceSamples(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("device", _P(_u16)), ("valid", _P(_u32)),
                ("gpu_util_pct", _P(_u8)), ("mem_util_pct", _P(_u8)), ("mem_used_bytes", _P(_u64)),
                ("mem_total_bytes", _P(_u64)), ("proc_mem_bytes", _P(_u64)), ("energy_mj", _P(_u64)),
                ("temp_c", _P(_i16)), ("power_mw", _P(_u32)), ("sm_clock_mhz", _P(_u32)),
                ("mem_clock_mhz", _P(_u32)), ("throttle_reasons", _P(_u64)), ("pcie_rx_kbps", _P(_u32)),
                ("pcie_tx_kbps", _P(_u32)),
                # Appended columns.
                ("mem_free_bytes", _P(_u64)), ("ecc_corrected", _P(_u64)), ("ecc_uncorrected", _P(_u64)),
                ("power_limit_mw", _P(_u32)), ("gfx_clock_mhz", _P(_u32)), ("mem_temp_c", _P(_i16)),
                ("fan_pct", _P(_u8))]


class HostSamples(ctypes.Structure):
    _fields_ = [("n", _size), ("ts_ns", _P(_u64)), ("valid", _P(_u32)), ("proc_cpu_pct_x100", _P(_u32)),
                ("sys_cpu_pct_x100", _P(_u32)), ("ram_used_bytes", _P(_u64)), ("ram_total_bytes", _P(_u64)),
                ("proc_rss_bytes", _P(_u64)),
                # Appended columns.
                ("cpu_count", _P(_u32))]


class CrashFrame(ctypes.Structure):
    _fields_ = [("module", _u32), ("present", _u32), ("offset", _u64)]


class CrashScope(ctypes.Structure):
    _fields_ = [("id", _u64), ("parent", _u64), ("begin_ns", _u64), ("tid", _u32), ("name", _u32),
                ("depth", _u32)]


class Crash(ctypes.Structure):
    _fields_ = [("ts_ns", _u64), ("tid", _u32), ("signal", _i32), ("code", _i32), ("signal_name", _u32),
                ("code_name", _u32), ("action", _u32), ("address", _u64), ("sender_pid", _u32),
                ("stack_unavailable", _u32), ("stack_truncated", _u32), ("nframes", _u32),
                ("frames", _P(CrashFrame)), ("nscopes", _u32), ("scopes_lost", _u32), ("scopes", _P(CrashScope))]


class Read(ctypes.Structure):
    _fields_ = [("struct_size", _u32), ("format", _u32), ("files", ctypes.c_char_p), ("why", ctypes.c_char_p),
                ("copies", _u32)]


# ---- the functions ------------------------------------------------------------

_REQUIRED = ("gpufl_trace_open", "gpufl_trace_report", "gpufl_trace_enum_name", "gpufl_trace_get_read")
_missing = [f for f in _REQUIRED if not hasattr(_lib.lib, f)]
if _missing:
    raise ImportError("gpufl: the libgpufl at %s is too old to read sessions (no %s); rebuild it and reinstall "
                      "this package" % (_lib.path, ", ".join(_missing)))

_vp = ctypes.c_void_p
# opening and the report take long: they release the GIL (CFUNCTYPE)
_open = _lib.bind("gpufl_trace_open", ctypes.c_int, [ctypes.c_char_p, _P(_vp), ctypes.c_char_p, _size])
_close = _lib.bind("gpufl_trace_close", None, [_vp])
_report = _lib.bind("gpufl_trace_report", ctypes.c_int,
                    [_vp, ctypes.c_char_p, _u32, _P(_vp), _P(_size), ctypes.c_char_p, _size])
_free_text = _lib.bind("gpufl_trace_free_text", None, [_vp], True)
_string = _lib.bind("gpufl_trace_string", ctypes.c_char_p, [_vp, _u32], True)
_enum_name = _lib.bind("gpufl_trace_enum_name", ctypes.c_char_p, [ctypes.c_uint, ctypes.c_uint], True)
_event_count = _lib.bind("gpufl_trace_event_count", _size, [_vp, ctypes.c_uint], True)
_memory_bytes = _lib.bind("gpufl_trace_memory_bytes", _size, [_vp], True)
_table_memory_bytes = _lib.bind("gpufl_trace_table_memory_bytes", _size, [_vp, ctypes.c_uint], True)
_get_info = _lib.bind("gpufl_trace_get_info", _P(Info), [_vp], True)
_get_read = _lib.bind("gpufl_trace_get_read", _P(Read), [_vp], True)
_get_crash = _lib.bind("gpufl_trace_get_crash", _P(Crash), [_vp], True)
_get_job = _lib.bind("gpufl_trace_get_job", _P(Job), [_vp], True) if hasattr(_lib.lib, "gpufl_trace_get_job") else None
_job_report = (_lib.bind("gpufl_job_report", ctypes.c_int,
                         [_P(ctypes.c_char_p), _size, ctypes.c_char_p, _u32, ctypes.c_uint, _P(_vp), _P(_size),
                          ctypes.c_char_p, _size])
               if hasattr(_lib.lib, "gpufl_job_report") else None)
JOB_MIXED = 1  # gpufl_job_report's GPUFL_JOB_MIXED
_getters = {
    "scopes": ("gpufl_trace_get_scopes", Scopes),
    "nvtx": ("gpufl_trace_get_nvtx", Scopes),
    "launch_configs": ("gpufl_trace_get_launch_configs", LaunchConfigs),
    "streams": ("gpufl_trace_get_streams", Streams),
    "callers": ("gpufl_trace_get_callers", Callers),
    "kernels": ("gpufl_trace_get_kernels", Kernels),
    "copies": ("gpufl_trace_get_copies", Transfers),
    "memsets": ("gpufl_trace_get_memsets", Transfers),
    "syncs": ("gpufl_trace_get_syncs", Syncs),
    "memory": ("gpufl_trace_get_memory", Memory),
    "device_samples": ("gpufl_trace_get_device_samples", DeviceSamples),
    "host_samples": ("gpufl_trace_get_host_samples", HostSamples),
    "triggers": ("gpufl_trace_get_triggers", Triggers),
    "trace_windows": ("gpufl_trace_get_trace_windows", TraceWindows),
    "allocator": ("gpufl_trace_get_allocator", Allocator),
    "pm_samples": ("gpufl_trace_get_pm_samples", PmSamples),
    "pc_samples": ("gpufl_trace_get_pc_samples", PcSamples),
    "sass_metrics": ("gpufl_trace_get_sass_metrics", SassMetrics),
    "range_metrics": ("gpufl_trace_get_range_metrics", RangeMetrics),
    "clocks": ("gpufl_trace_get_clocks", Clocks),
    "nccl_collectives": ("gpufl_trace_get_nccl_collectives", NcclCollectives),
}
# a table this libgpufl cannot read yet (an older build) is left out: table() says so
_getters = {k: (_lib.bind(f, _P(s), [_vp], True), s) for k, (f, s) in _getters.items() if hasattr(_lib.lib, f)}

# gpufl_trace_enum_name() families (trace.h GPUFL_TRACE_ENUM_*)
(ENUM_COPY_KIND, ENUM_MEM_KIND, ENUM_SYNC_KIND, ENUM_LIMITER, ENUM_DROP_REASON, ENUM_EVENT_TYPE,
 ENUM_TRIGGER_OUTCOME) = range(7)

_enum_cache = {}


def enum_names(family):
    """The names of a family's values, by value: ["unknown", "HtoD", ...]."""
    names = _enum_cache.get(family)
    if names is None:
        names = []
        while True:
            raw = _enum_name(family, len(names))
            if raw is None:
                break
            names.append(raw.decode())
        _enum_cache[family] = names = tuple(names)
    return names


# ---- columns as numpy views -------------------------------------------------------

_DTYPES = {_u8: np.uint8, _u16: np.uint16, _u32: np.uint32, _u64: np.uint64, _i16: np.int16, _i32: np.int32,
           _i64: np.int64, ctypes.c_double: np.float64}
EXACT_DTYPE = np.dtype([("row", np.uint64), ("end_ns", np.uint64), ("api_start_ns", np.uint64),
                        ("api_end_ns", np.uint64)])


def _dtype_of(ctype):
    if ctype in _DTYPES:
        return np.dtype(_DTYPES[ctype])
    if ctype is Exact:
        return EXACT_DTYPE
    if issubclass(ctype, ctypes.Array):  # grid[3], block[3]
        return np.dtype((_DTYPES[ctype._type_], (ctype._length_,)))
    raise TypeError(ctype)


def _view(handle, pointer, count, dtype):
    """count items of dtype at pointer, read-only, keeping handle alive."""
    shape = (count,) + dtype.shape
    base = np.dtype(dtype.base)
    addr = ctypes.cast(pointer, _vp).value
    if count == 0 or not addr:
        return np.zeros(shape, base)
    nbytes = count * dtype.itemsize
    buf = (ctypes.c_char * nbytes).from_address(addr)
    buf.owner = handle  # the C trace lives as long as any view of it
    a = np.frombuffer(buf, dtype=base, count=count * max(1, int(np.prod(dtype.shape)))).reshape(shape)
    a.flags.writeable = False
    return a


class Table:
    """One table of the trace: ``n`` and one read-only numpy array per
    column of its trace.h struct (``grid`` and ``block`` are n x 3; ``exact``
    a structured array of row, end_ns, api_start_ns, api_end_ns). Tables of
    device work also carry ``configs``, ``streams`` and ``callers``, the
    small tables their ``*_row`` columns index."""

    def __init__(self, handle, struct):
        self.n = int(struct.n)
        self.columns = []
        for name, ctype in struct._fields_:
            if name == "n" or name == "nexact":
                continue
            target = ctype._type_
            if target in (LaunchConfigs, Streams, Callers):
                pointer = getattr(struct, name)
                setattr(self, name, Table(handle, pointer.contents) if pointer else None)
                continue
            count = int(struct.nexact) if name == "exact" else self.n
            setattr(self, name, _view(handle, getattr(struct, name), count, _dtype_of(target)))
            if name != "exact":
                self.columns.append(name)

    def __len__(self):
        return self.n

    def __repr__(self):
        return "<gpufl trace table: %d rows; %s>" % (self.n, ", ".join(self.columns))


def exact_times(table):
    """(start, end, api_start, api_end) as int64 arrays of a table of device
    work, with the rows that did not fit the 32-bit offsets (EXACT) patched
    from its ``exact`` array, as gpufl_trace_kernel_end() and its siblings
    give them: end = start + dur; api_start = start - api_lead and api_end =
    api_start + api_dur, both 0 when the work had no API call (api_lead 0).
    Syncs have no API times: their api_* come back None."""
    start = table.start_ns.view(np.int64)
    dur = table.dur_ns
    end = start + dur  # int64 + uint32 -> int64
    api_start = api_end = None
    lead = getattr(table, "api_lead_ns", None)
    if lead is not None:
        api_start = start - lead
        api_end = api_start + table.api_dur_ns
        none = lead == 0
        api_start[none] = 0
        api_end[none] = 0
    ex = table.exact
    if len(ex):
        rows = ex["row"].astype(np.intp)
        bad = dur[rows] == EXACT
        end[rows[bad]] = ex["end_ns"][bad].view(np.int64)
        if lead is not None:
            lead_r, apid_r = lead[rows], table.api_dur_ns[rows]
            bad = lead_r == EXACT
            api_start[rows[bad]] = ex["api_start_ns"][bad].view(np.int64)
            bad = (lead_r != 0) & ((lead_r == EXACT) | (apid_r == EXACT))
            api_end[rows[bad]] = ex["api_end_ns"][bad].view(np.int64)
    return start, end, api_start, api_end


class _Handle:
    """Owns the gpufl_trace pointer; closes it when the last reference (the
    Trace, or an array viewing its columns) is gone."""

    __slots__ = ("ptr", "__weakref__")

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self):
        ptr, self.ptr = self.ptr, None
        if ptr and _close is not None:
            _close(ptr)


class Trace:
    """A session opened with gpufl_trace_open().

    ``path``: a session directory (its trace.gflt when it has one, else its
    NDJSON logs, rotated parts included), one NDJSON ``.log`` or one
    ``.gflt`` file. Raises TraceError with the reader's message when it
    cannot be read (FileNotFoundError when path does not exist). A file cut
    short reads up to its last whole line or chunk; ``info`` says how much
    was skipped.

    Use as a context manager, or call ``close()``; see the module docstring
    for when the memory goes.
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            raise FileNotFoundError(2, "no such session, file or directory", self.path)
        ptr = _vp()
        err = ctypes.create_string_buffer(2048)
        rc = _open(os.fsencode(self.path), ctypes.byref(ptr), err, len(err))
        if rc != 0 or not ptr.value:
            message = err.value.decode("utf-8", "replace") or "cannot read it (error %d)" % rc
            raise TraceError("gpufl: cannot read %s: %s" % (self.path, message), rc, self.path)
        self._handle = _Handle(ptr.value)
        self._tables = {}
        self._strings = {0: ""}

    # -- life cycle --

    def close(self):
        """Drops this Trace's hold on the C trace (freed once no view of its
        columns is left). Further calls on the Trace raise ValueError."""
        self._handle = None
        self._tables = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @property
    def closed(self):
        return self._handle is None

    def _ptr(self):
        if self._handle is None:
            raise ValueError("gpufl: the trace of %s is closed" % self.path)
        return self._handle.ptr

    # -- what was read --

    @property
    def info(self):
        """trace.h's gpufl_trace_info (a ctypes structure; string fields are ids)."""
        return _get_info(self._ptr()).contents

    def devices(self):
        info = self.info
        return [info.devices[i] for i in range(info.ndevices)]

    def read(self):
        """(format, files, why, copies) of gpufl_trace_get_read()."""
        r = _get_read(self._ptr()).contents
        return (int(r.format), (r.files or b"").decode("utf-8", "replace"),
                (r.why or b"").decode("utf-8", "replace"), int(r.copies))

    def job(self):
        """Where the session stands in its job (gpufl_trace_get_job), as a
        dict of what its launcher set: launcher, rank, local_rank,
        world_size, local_world_size, id, id_from, step, master, host,
        cuda_visible_devices (a key only when known); None when the session
        has no job facts, or the loaded libgpufl cannot read them."""
        if _get_job is None:
            return None
        j = _get_job(self._ptr()).contents
        if not j.present:
            return None
        out = {}
        for bit, key in ((1, "rank"), (2, "local_rank"), (4, "world_size"), (8, "local_world_size")):
            if j.has & bit:
                out[key] = int(getattr(j, key))
        for key in ("launcher", "id", "id_from", "step", "master", "host", "cuda_visible_devices"):
            if getattr(j, key):
                out[key] = self.string(getattr(j, key))
        return out

    def crash(self):
        """trace.h's gpufl_trace_crash, or None."""
        p = _get_crash(self._ptr())
        return p.contents if p else None

    def string(self, sid):
        """The text of string id sid ("" for 0 or an unknown id)."""
        sid = int(sid)
        text = self._strings.get(sid)
        if text is None:
            raw = _string(self._ptr(), sid)
            text = self._strings[sid] = (raw or b"").decode("utf-8", "replace")
        return text

    def strings(self, ids):
        """The distinct texts of an array of string ids and each element's
        index into them: (codes int32, texts). Each distinct id is looked up
        once; ids whose texts are equal share a code; id 0 gets code -1."""
        ids = np.asarray(ids)
        uniq, inverse = np.unique(ids, return_inverse=True)
        texts, code_of_text, code_of_uniq = [], {}, np.empty(len(uniq), np.int32)
        for i, sid in enumerate(uniq.tolist()):
            if sid == 0:
                code_of_uniq[i] = -1
                continue
            text = self.string(sid)
            code = code_of_text.get(text)
            if code is None:
                code = code_of_text[text] = len(texts)
                texts.append(text)
            code_of_uniq[i] = code
        return code_of_uniq[inverse.reshape(ids.shape)], texts

    def event_count(self, event_type):
        return int(_event_count(self._ptr(), event_type))

    def event_counts(self):
        """{event type name: events of it as read}, types with any."""
        names = enum_names(ENUM_EVENT_TYPE)
        counts = ((name, self.event_count(i)) for i, name in enumerate(names))
        return {name: n for name, n in counts if n}

    def memory_bytes(self):
        return int(_memory_bytes(self._ptr()))

    # -- tables --

    def table(self, name):
        """A Table of one of: scopes, nvtx, kernels, copies, memsets, syncs,
        memory, device_samples, host_samples, launch_configs, streams, callers,
        triggers, trace_windows, allocator, pm_samples, pc_samples, sass_metrics, range_metrics, clocks,
        nccl_collectives. KeyError for a table the loaded
        libgpufl cannot read (an older build)."""
        t = self._tables.get(name)
        if t is None:
            if name not in _getters:
                raise KeyError("gpufl: the libgpufl at %s cannot read the %r table; rebuild it" % (_lib.path, name))
            getter, _ = _getters[name]
            t = self._tables[name] = Table(self._handle, getter(self._ptr()).contents)
        return t

    def report(self, fmt="text", top=0):
        """gpufl_trace_report(): the text (or JSON) `gpufl report --top top`
        prints, CPU stacks listed by id. top 0: the default (20)."""
        text, n = _vp(), _size()
        err = ctypes.create_string_buffer(1024)
        rc = _report(self._ptr(), fmt.encode(), int(top), ctypes.byref(text), ctypes.byref(n), err, len(err))
        if rc != 0:
            raise GpuflError("gpufl: report of %s: %s" % (self.path, err.value.decode("utf-8", "replace")), rc)
        try:
            return ctypes.string_at(text.value, n.value).decode("utf-8", "replace")
        finally:
            _free_text(text)


def job_report(paths, fmt="text", top=0, mixed=False):
    """gpufl_job_report(): the text (or JSON) `gpufl report PATHS --top top
    [--mixed]` prints for a job: paths is one job directory (`gpufl merge`'s,
    or one `gpufl run` filled) or the sessions of its ranks (a str or
    os.PathLike, or a list of them). Raises GpuflError naming what is wrong
    (a session it cannot read, two sessions of one rank, sessions of two
    jobs unless mixed)."""
    if _job_report is None:
        raise GpuflError("gpufl: the libgpufl at %s has no job reports (gpufl_job_report); rebuild it" % _lib.path,
                         -1)
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [os.fsencode(p) for p in paths]
    if not paths:
        raise ValueError("job_report: no session or job directory given")
    arr = (ctypes.c_char_p * len(paths))(*paths)
    text, n = _vp(), _size()
    err = ctypes.create_string_buffer(1024)
    rc = _job_report(arr, len(paths), fmt.encode(), int(top), JOB_MIXED if mixed else 0, ctypes.byref(text),
                     ctypes.byref(n), err, len(err))
    if rc != 0:
        raise GpuflError("gpufl: %s" % err.value.decode("utf-8", "replace"), rc)
    try:
        return ctypes.string_at(text.value, n.value).decode("utf-8", "replace")
    finally:
        _free_text(text)
