"""gpufl.pm_sampling against the fake libcupti of the C tests
(tests/fake_cupti/fake_pm_sampling.c), which the CUPTI plugin carried beside
libgpufl loads when GPUFL_CUPTI_LIBRARY names it: the whole path from
Python through libgpufl and the plugin's CUPTI code runs without a GPU.

Why: the Python API is the one most users touch. Samples must come back in
order with values by metric name, CounterData must behave as a sequence
(negative indexes, slices), and every misuse must raise PmSamplingError of
its own kind with a message that says what to do.
"""

import ctypes
import os
import time

import pytest

from gpufl import _lib

FAKE_ENV = "GPUFL_TEST_FAKE_CUPTI"
SM = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
DRAM = "dram__bytes_read.sum.per_second"
DRAM_PEAK = 3.35e12


def _fake_path():
    explicit = os.environ.get(FAKE_ENV)
    if explicit:
        return explicit
    # A build tree: libgpufl.so at its top, the fake under tests/.
    guess = os.path.join(os.path.dirname(_lib.path), "tests", "fake_cupti", "libcupti.so.13")
    return guess if os.path.exists(guess) else None


@pytest.fixture
def fake(monkeypatch):
    path = _fake_path()
    if not path or not os.path.exists(path):
        pytest.skip("no fake libcupti: set %s to tests/fake_cupti/libcupti.so.13 of a build with CUDA headers"
                    % FAKE_ENV)
    plugin = os.path.join(os.path.dirname(_lib.path), "libgpufl_cupti.so")
    if not os.path.exists(plugin):
        pytest.skip("no CUPTI plugin beside %s (built only where the CUDA toolkit is)" % _lib.path)
    monkeypatch.setenv("GPUFL_CUPTI_LIBRARY", path)
    f = ctypes.CDLL(path)  # the same object the plugin loads
    f.fake_cupti_pm_samples.restype = ctypes.c_uint32
    f.fake_cupti_pm_samples.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_double]
    f.fake_cupti_pm_refuse.argtypes = [ctypes.c_int]
    yield f
    f.fake_cupti_pm_refuse(0)


def test_samples_by_metric(fake):
    from gpufl.pm_sampling import Collector
    with Collector(0) as c:
        c.configure(metrics=[SM, DRAM], sampling_interval=20000)
        c.start()
        assert fake.fake_cupti_pm_samples(0, 6, 0.5) == 6
        c.stop()
        data = c.decode()
    assert len(data) == 6
    assert data.metrics == [SM, DRAM]
    assert data.chip_name == "GH100"
    assert (data.num_total_samples, data.num_populated_samples, data.num_completed_samples) == (10000, 6, 6)
    assert not data.overflow and not data.more
    samples = list(data)
    assert [s[SM] for s in samples] == [50.0] * 6
    assert samples[0].values[DRAM] == 0.5 * DRAM_PEAK
    assert all(s.end_timestamp - s.start_timestamp == 20000 for s in samples)
    assert all(a.end_timestamp == b.start_timestamp for a, b in zip(samples, samples[1:]))
    # indexing as a sequence
    assert data[-1].start_timestamp == samples[5].start_timestamp
    assert [s.start_timestamp for s in data[1:4]] == [s.start_timestamp for s in samples[1:4]]
    assert [s.start_timestamp for s in data[::-2]] == [samples[i].start_timestamp for i in (5, 3, 1)]
    with pytest.raises(IndexError):
        data[6]
    with pytest.raises(IndexError):
        data[-7]
    assert data.values(SM) == [50.0] * 6


def test_full_image_says_more(fake):
    """A decode whose image fills says so; CUPTI (and the fake) drops the
    rest of the buffer, so the next decode has only what came after."""
    from gpufl.pm_sampling import Collector
    c = Collector(0)
    c.enable()
    c.configure(metrics=SM)
    c.start()
    fake.fake_cupti_pm_samples(0, 5, 1.0)
    first = c.decode(max_samples=3)
    assert len(first) == 3 and first.more
    assert len(c.decode(max_samples=3)) == 0
    fake.fake_cupti_pm_samples(0, 2, 1.0)
    rest = c.decode(max_samples=3)
    assert len(rest) == 2 and not rest.more
    assert rest[0].start_timestamp > first[-1].end_timestamp
    c.disable()
    c.close()


def test_errors_carry_their_kind(fake):
    from gpufl.pm_sampling import Collector, PmSamplingError
    c = Collector(0)
    with pytest.raises(PmSamplingError) as e:
        c.start()
    assert e.value.kind == "NOT_ENABLED"
    c.enable()
    with pytest.raises(PmSamplingError) as e:
        c.enable()
    assert e.value.kind == "ALREADY_ENABLED"
    with pytest.raises(PmSamplingError) as e:
        c.start()
    assert e.value.kind == "NOT_CONFIGURED" and "configure()" in str(e.value)
    with pytest.raises(PmSamplingError) as e:
        c.configure(metrics=["sm__nonsense.sum"])
    assert e.value.kind == "INVALID_ARGUMENT" and "sm__nonsense.sum" in str(e.value)
    c.configure(metrics=[SM])
    c.start()
    with pytest.raises(PmSamplingError) as e:
        c.start()
    assert e.value.kind == "ALREADY_STARTED"
    c.stop()
    with pytest.raises(PmSamplingError) as e:
        c.stop()
    assert e.value.kind == "ALREADY_STOPPED"
    c.close()

    with pytest.raises(PmSamplingError) as e:
        Collector(5).enable()
    assert e.value.kind == "INVALID_DEVICE"
    fake.fake_cupti_pm_refuse(35)  # CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
    with pytest.raises(PmSamplingError) as e:
        Collector(0).enable()
    assert e.value.kind == "INSUFFICIENT_PRIVILEGES"
    assert isinstance(e.value, RuntimeError)


def test_recorded_samples_read_back(fake, tmp_path, monkeypatch):
    """pm_sampling_metrics in a Trace session
    through the plugin, with the fake driver beside the fake libcupti: the
    samples come back from the trace as the pm_samples table."""
    import gpufl
    from gpufl._trace import Trace
    cuda = os.path.join(os.path.dirname(os.path.dirname(_fake_path())), "fake_cuda", "libcuda.so.1")
    if not os.path.exists(cuda):
        pytest.skip("no fake libcuda.so.1 beside the fake libcupti")
    ctypes.CDLL(cuda)  # the program's driver, as the plugin finds it (RTLD_NOLOAD)
    plugin = os.path.join(os.path.dirname(_lib.path), "libgpufl_cupti.so")
    assert gpufl.init(app_name="pm-py", log_path=str(tmp_path), profiling_engine="trace", device_plugin=plugin,
                      system_sample_rate_ms=0, pm_sampling_metrics=SM + "," + DRAM, pm_sampling_interval_us=50)
    fake.fake_cupti_pm_started.restype = ctypes.c_bool
    for _ in range(400):  # the recorder starts PM sampling on its own thread
        if fake.fake_cupti_pm_started(0):
            break
        time.sleep(0.005)
    assert fake.fake_cupti_pm_samples(0, 40, 0.25) == 40
    d = gpufl.session_dir()
    gpufl.shutdown()
    with Trace(d) as t:
        pm = t.table("pm_samples")
        assert pm.n == 80
        names = [t.string(int(m)) for m in pm.metric]
        assert names.count(SM) == 40 and names.count(DRAM) == 40
        assert all((pm.end_ns - pm.ts_ns) == 50000)
        sm = [v for v, name in zip(pm.value, names) if name == SM]
        assert sm == [25.0] * 40
