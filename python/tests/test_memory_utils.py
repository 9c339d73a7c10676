"""gpufl.memory's utilities: the reference's byte formatting (values from
its spec), and the machine's description without PyTorch, from /proc and
from NVML through `gpufl devices` (against the fake NVML the C tests
use)."""

import os

import pytest

from gpufl.memory import convert_bytes, format_bytes, format_memory, get_gpu_info, get_system_info, utils

GiB = 1 << 30


@pytest.mark.parametrize("value, text", [
    (0, "0 B"), (512, "512.00 B"), (1023, "1023.00 B"), (1024, "1.00 KB"), (1536, "1.50 KB"),
    (int(1.5 * GiB), "1.50 GB"), (5 * (1 << 20), "5.00 MB"), (3 << 40, "3.00 TB"), (1 << 50, "1.00 PB"),
    (1 << 60, "1024.00 PB"), (-2048, "-2048.00 B"), (0.0, "0 B"),
])
def test_format_bytes(value, text):
    assert format_bytes(value) == text
    assert format_memory(value) == text


def test_format_bytes_precision():
    assert format_bytes(1536, precision=0) == "2 KB"
    assert format_bytes(1536, precision=3) == "1.500 KB"
    assert format_memory(int(1.25 * GiB), 1) == "1.2 GB"


def test_convert_bytes():
    assert convert_bytes(1, "GB", "MB") == 1024.0
    assert convert_bytes(1536, "B", "KB") == 1.5
    assert convert_bytes(2, "TB", "GB") == 2048.0
    assert convert_bytes(512, "MB", "GB") == 0.5
    with pytest.raises(ValueError, match=r"Invalid unit. Must be one of: \['B', 'KB', 'MB', 'GB', 'TB'\]"):
        convert_bytes(1, "PB", "B")
    with pytest.raises(ValueError):
        convert_bytes(1, "B", "kb")


def test_system_used_follows_psutil(tmp_path):
    p = tmp_path / "meminfo"
    p.write_text("MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 600 kB\nBuffers: 50 kB\nCached: 200 kB\n"
                 "SReclaimable: 50 kB\n")
    info = utils.meminfo(str(p))
    assert info["MemTotal"] == 1024000
    assert utils.system_used_bytes(info) == (1000 - 100 - 50 - 200 - 50) * 1024
    info["Cached"] = 10 ** 9  # more cached than there is: psutil falls back to total - free
    assert utils.system_used_bytes(info) == 900 * 1024


def test_system_info_without_torch(no_torch):
    info = get_system_info()
    assert info["platform"] == os.uname().sysname and info["architecture"] == os.uname().machine
    assert info["torch_available"] is False and info["cuda_available"] is False
    assert info["detected_backend"] == "cpu" and info["rocm_version"] is None
    assert info["mps_available"] is False and info["mps_built"] is False
    assert "cuda_device_count" not in info
    assert info["cpu_count"] == info["cpu_count_logical"] == os.cpu_count()
    assert 0 < info["memory_available"] <= info["memory_total"]
    assert 0 <= info["memory_percent"] <= 100


def test_system_info_with_cuda(fake_torch):
    info = get_system_info()
    assert info["torch_available"] and info["cuda_available"] and info["detected_backend"] == "cuda"
    assert info["cuda_device_count"] == 1 and info["cuda_version"] == "12.8"
    assert info["cudnn_version"] == 90100 and info["current_device"] == 0


def test_gpu_info_from_torch(fake_torch, monkeypatch):
    monkeypatch.setattr(utils._nvml, "devices", lambda: None)  # no gpufl command: no nvidia_smi_info
    x = fake_torch.empty(3 << 20, dtype=fake_torch.uint8, device="cuda")
    info = get_gpu_info()
    assert info["device_id"] == 0 and info["device_name"] == "Fake GPU 0"
    assert info["device_capability"] == (9, 0) and info["total_memory"] == 8 * GiB
    assert info["multiprocessor_count"] == 132 and info["pytorch_version"] == fake_torch.__version__
    assert info["allocated_memory"] == 3 << 20 and info["reserved_memory"] == 4 << 20
    assert info["memory_stats"] == {"active_bytes": 3 << 20, "inactive_bytes": 0, "reserved_bytes": 4 << 20,
                                    "num_alloc_retries": 0, "num_ooms": 0}
    assert "nvidia_smi_info" not in info
    del x


def test_gpu_info_without_cuda_or_driver(fake_torch, monkeypatch):
    fake_torch._fake.reset(available=False)
    monkeypatch.setattr(utils._nvml, "devices", lambda: [])
    assert get_gpu_info() == {"error": "CUDA is not available"}


def fake_nvml_dir():
    cli = os.environ.get("GPUFL_CLI")
    d = cli and os.path.join(os.path.dirname(cli), "tests", "fake_nvml", "full")
    if not d or not os.path.isfile(os.path.join(d, "libnvidia-ml.so.1")):
        pytest.skip("needs the build's gpufl command and its fake NVML (make fake_nvml_full)")
    return d


def test_gpu_info_from_nvml_without_torch(no_torch, monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", fake_nvml_dir())
    monkeypatch.setenv("FAKE_NVML", "devices=2")
    info = get_gpu_info(1)
    assert info["device_id"] == 1 and info["device_name"] == "Fake GPU 1" and info["source"] == "nvml"
    assert info["device_capability"] == (9, 0) and info["multiprocessor_count"] == 132
    assert info["total_memory"] == 141 * GiB and info["cuda_version"] == "13.0"
    smi = info["nvidia_smi_info"]
    assert smi["memory_total_mb"] == 141 * 1024
    assert 2 * 1024 <= smi["memory_used_mb"] < 2 * 1024 + 8  # (1 + i) GiB + k MiB after k earlier reads
    assert smi["temperature_c"] == 41 and smi["power_draw_w"] == 101.0


def test_gpu_info_without_anything(no_torch, monkeypatch):
    monkeypatch.setattr(utils._nvml, "devices", lambda: None)
    assert get_gpu_info() == {"error": "CUDA is not available"}
