"""PM sampling: the GPU's performance monitor read at a fixed interval.

A ``Collector`` per device samples chosen CUPTI metrics (SM activity,
tensor-pipe activity, DRAM and PCIe throughput, ...) every
``sampling_interval`` while the program runs; ``decode()`` returns what was
sampled since the last decode as ``CounterData``: a sequence of ``Sample``
with GPU start and end timestamps (ns) and one value per metric::

    from gpufl.pm_sampling import Collector

    with Collector(0) as c:                      # enable() ... disable()
        c.configure(metrics=["sm__cycles_active.avg.pct_of_peak_sustained_elapsed"])
        c.start()
        run_the_work()
        c.stop()
        data = c.decode()
    for s in data[-3:]:
        print(s.start_timestamp, s["sm__cycles_active.avg.pct_of_peak_sustained_elapsed"])

The C side is include/gpufl/pm_sampling.h in libgpufl (reached through
``gpufl._lib``), which forwards to the CUPTI plugin; a failure raises
``PmSamplingError`` whose ``kind`` names it ("NOT_CONFIGURED",
"INSUFFICIENT_PRIVILEGES", ...) and whose message says what to do.
"""

import ctypes
import enum

from gpufl import _lib

__all__ = ["Collector", "CounterData", "Sample", "PmSamplingError", "TriggerMode", "AppendMode",
           "HardwareBuffer_AppendMode"]


class TriggerMode(enum.IntEnum):
    """What ``sampling_interval`` counts."""
    GPU_SYSCLK_INTERVAL = 0  #: system clock cycles
    GPU_TIME_INTERVAL = 1  #: nanoseconds (Ampere GA10x and later)


class AppendMode(enum.IntEnum):
    """What the hardware buffer does when decode() does not keep up."""
    KEEP_OLDEST = 0  #: new samples are lost, and the data says overflow
    KEEP_LATEST = 1  #: the oldest are overwritten


HardwareBuffer_AppendMode = AppendMode  # the reference's name

# gpufl_pm_status, by value: the kind a PmSamplingError carries.
_KINDS = {
    -1: "INVALID_DEVICE", -2: "OUT_OF_MEMORY", -3: "ALREADY_ENABLED", -4: "NOT_ENABLED",
    -5: "NOT_CONFIGURED", -6: "ALREADY_STARTED", -7: "ALREADY_STOPPED",
    -8: "INSUFFICIENT_PRIVILEGES", -9: "LIBRARY_NOT_LOADED", -10: "INVALID_ARGUMENT", -11: "BUSY",
    -12: "INTERNAL",
}


class PmSamplingError(RuntimeError):
    """A PM sampling call failed. ``kind``: one of the gpufl_pm_status names
    without their prefix ("NOT_CONFIGURED"); ``status``: its C value."""

    def __init__(self, status, message):
        self.status = status
        self.kind = _KINDS.get(status, "UNKNOWN")
        super().__init__("%s: %s" % (self.kind, message))


class _Config(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("metrics", ctypes.POINTER(ctypes.c_char_p)),
                ("num_metrics", ctypes.c_size_t), ("hardware_buffer_size", ctypes.c_uint64),
                ("sampling_interval", ctypes.c_uint64), ("trigger_mode", ctypes.c_int),
                ("append_mode", ctypes.c_int), ("single_pass_metric_set_name", ctypes.c_char_p)]


class _Data(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("num_metrics", ctypes.c_uint32),
                ("metrics", ctypes.POINTER(ctypes.c_char_p)), ("chip_name", ctypes.c_char_p),
                ("num_total_samples", ctypes.c_uint64), ("num_populated_samples", ctypes.c_uint64),
                ("num_completed_samples", ctypes.c_uint64), ("num_samples", ctypes.c_uint64),
                ("start_ns", ctypes.POINTER(ctypes.c_uint64)), ("end_ns", ctypes.POINTER(ctypes.c_uint64)),
                ("values", ctypes.POINTER(ctypes.c_double)), ("overflow", ctypes.c_uint32),
                ("more", ctypes.c_uint32)]


_p, _int = ctypes.c_void_p, ctypes.c_int
_config_init = _lib.bind("gpufl_pm_config_init", None, [ctypes.POINTER(_Config)], True)
_create = _lib.bind("gpufl_pm_collector_create", _int, [_int, ctypes.POINTER(_p)])
_destroy = _lib.bind("gpufl_pm_collector_destroy", None, [_p])
_enable = _lib.bind("gpufl_pm_enable", _int, [_p])
_configure = _lib.bind("gpufl_pm_configure", _int, [_p, ctypes.POINTER(_Config)])
_start = _lib.bind("gpufl_pm_start", _int, [_p])
_stop = _lib.bind("gpufl_pm_stop", _int, [_p])
_decode = _lib.bind("gpufl_pm_decode", _int, [_p, ctypes.c_uint32, ctypes.POINTER(ctypes.POINTER(_Data))])
_free = _lib.bind("gpufl_pm_counter_data_free", None, [ctypes.POINTER(_Data)])
_disable = _lib.bind("gpufl_pm_disable", _int, [_p])
_last_error = _lib.bind("gpufl_pm_last_error", ctypes.c_char_p, [_p], True)
_error_string = _lib.bind("gpufl_pm_error_string", ctypes.c_char_p, [_int], True)


class Sample:
    """One sampling interval: ``start_timestamp`` and ``end_timestamp`` (GPU
    clock, ns) and the metrics' values, by name (``s["name"]``, ``s.values``)."""

    __slots__ = ("start_timestamp", "end_timestamp", "values")

    def __init__(self, start, end, values):
        self.start_timestamp = start
        self.end_timestamp = end
        self.values = values

    def __getitem__(self, metric):
        return self.values[metric]

    def __repr__(self):
        return "Sample(start_timestamp=%d, end_timestamp=%d, values=%r)" % (
            self.start_timestamp, self.end_timestamp, self.values)


class CounterData:
    """What one decode() returned: a sequence of ``Sample`` (``len``, iteration,
    indexing with negative indexes and slices) and the counter data image's
    state (``num_total_samples``, ``num_populated_samples``,
    ``num_completed_samples``), ``metrics``, ``chip_name``, ``overflow``
    (the hardware buffer filled and samples were lost) and ``more`` (the
    image filled first: decode again)."""

    def __init__(self, metrics, chip_name, totals, starts, ends, rows, overflow, more):
        self.metrics = metrics
        self.chip_name = chip_name
        self.num_total_samples, self.num_populated_samples, self.num_completed_samples = totals
        self.start_timestamps = starts
        self.end_timestamps = ends
        self._rows = rows
        self.overflow = overflow
        self.more = more

    def __len__(self):
        return len(self._rows)

    def _sample(self, i):
        return Sample(self.start_timestamps[i], self.end_timestamps[i], dict(zip(self.metrics, self._rows[i])))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._sample(i) for i in range(*index.indices(len(self)))]
        n = len(self)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError("sample %d of %d" % (index, n))
        return self._sample(i)

    def __iter__(self):
        return (self._sample(i) for i in range(len(self)))

    def values(self, metric):
        """Every sample's value of one metric, in order."""
        j = self.metrics.index(metric)
        return [row[j] for row in self._rows]

    def __repr__(self):
        return "CounterData(chip_name=%r, metrics=%r, samples=%d)" % (self.chip_name, self.metrics, len(self))


class Collector:
    """PM sampling on one device (CUDA ordinal ``device_index``). Use
    enable(), configure(), start(), stop(), decode() and disable() in that
    order, or ``with Collector(i) as c:`` for enable and disable."""

    def __init__(self, device_index=0):
        self.device_index = device_index
        self._handle = _p()
        rc = _create(int(device_index), ctypes.byref(self._handle))
        self._create_rc = rc  # kept: every later call on a failed collector says why

    def _check(self, rc):
        if rc != 0:
            msg = _last_error(self._handle)
            text = msg.decode("utf-8", "replace") if msg else ""
            if not text:
                text = _error_string(rc).decode()
            raise PmSamplingError(rc, text)

    def enable(self):
        """Initialises CUPTI's profiler and enables PM sampling on the device."""
        self._check(_enable(self._handle))

    def configure(self, *, metrics, hardware_buffer_size=512 << 20, sampling_interval=10000,
                  trigger_mode=TriggerMode.GPU_TIME_INTERVAL, hw_buffer_append_mode=AppendMode.KEEP_OLDEST,
                  single_pass_metric_set_name=None):
        """Chooses the metrics and how the GPU samples them (the interval in ns
        for GPU_TIME_INTERVAL, in cycles for GPU_SYSCLK_INTERVAL)."""
        if isinstance(metrics, str):
            metrics = [metrics]
        names = [m.encode() for m in metrics]
        cfg = _Config()
        _config_init(ctypes.byref(cfg))
        arr = (ctypes.c_char_p * max(len(names), 1))(*names)
        cfg.metrics = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))
        cfg.num_metrics = len(names)
        cfg.hardware_buffer_size = int(hardware_buffer_size)
        cfg.sampling_interval = int(sampling_interval)
        cfg.trigger_mode = int(trigger_mode)
        cfg.append_mode = int(hw_buffer_append_mode)
        cfg.single_pass_metric_set_name = single_pass_metric_set_name.encode() if single_pass_metric_set_name else None
        self._check(_configure(self._handle, ctypes.byref(cfg)))

    def start(self):
        self._check(_start(self._handle))

    def stop(self):
        self._check(_stop(self._handle))

    def decode(self, max_samples=10000):
        """The samples completed since the last decode, at most max_samples."""
        out = ctypes.POINTER(_Data)()
        self._check(_decode(self._handle, int(max_samples), ctypes.byref(out)))
        try:
            d = out.contents
            m, n = d.num_metrics, d.num_samples
            metrics = [d.metrics[j].decode() for j in range(m)]
            starts = d.start_ns[:n] if n else []
            ends = d.end_ns[:n] if n else []
            flat = d.values[:n * m] if n and m else []
            rows = [tuple(flat[i * m:(i + 1) * m]) for i in range(n)]
            return CounterData(metrics, d.chip_name.decode(),
                               (d.num_total_samples, d.num_populated_samples, d.num_completed_samples),
                               starts, ends, rows, bool(d.overflow), bool(d.more))
        finally:
            _free(out)

    def disable(self):
        """Stops sampling if it runs and gives the device's PM sampler back."""
        self._check(_disable(self._handle))

    def close(self):
        """Frees the collector (stopping and disabling what is on)."""
        if self._handle:
            _destroy(self._handle)
            self._handle = _p()

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass
