"""Device collectors with the reference's interface, over the PyTorch
stand-in's scripted allocator."""

import pytest

from gpufl.memory import (CudaDeviceCollector, DeviceMemoryCollector, DeviceMemorySample, ROCmDeviceCollector,
                          build_device_memory_collector, detect_torch_runtime_backend)

MiB, GiB = 1 << 20, 1 << 30


def test_cuda_sample(fake_torch):
    c = build_device_memory_collector()
    assert type(c) is CudaDeviceCollector and isinstance(c, DeviceMemoryCollector)
    assert c.name() == "cuda" and c.is_available()
    x = fake_torch.empty(3 * MiB, dtype=fake_torch.uint8, device="cuda")
    fake_torch._fake.devices[0].extra_stats["inactive_split_bytes.all.current"] = 12345
    s = c.sample()
    assert s == DeviceMemorySample(allocated_bytes=3 * MiB, reserved_bytes=4 * MiB, used_bytes=4 * MiB,
                                   free_bytes=8 * GiB - 4 * MiB, total_bytes=8 * GiB, active_bytes=3 * MiB,
                                   inactive_bytes=12345, device_id=0)
    assert c.last_stats["allocated_bytes.all.current"] == 3 * MiB
    with pytest.raises(Exception):
        s.allocated_bytes = 1  # frozen
    assert c.capabilities() == {"backend": "cuda", "supports_device_total": True, "supports_device_free": True,
                                "sampling_source": "torch.cuda.memory_allocated/reserved",
                                "telemetry_collector": "gpumemprof.cuda_tracker"}
    del x


def test_second_device_and_errors(fake_torch):
    fake_torch._fake.reset(devices=2)
    c = build_device_memory_collector("cuda:1")
    fake_torch.empty(MiB, dtype=fake_torch.uint8, device="cuda:1")  # freed at once: only peaks remain
    assert c.device_id == 1 and c.sample().allocated_bytes == 0
    with pytest.raises(ValueError):
        build_device_memory_collector("cpu")
    with pytest.raises(ValueError):
        CudaDeviceCollector("cpu")


def test_rocm_build(fake_torch, monkeypatch):
    monkeypatch.setattr(fake_torch.version, "hip", "6.2")
    c = build_device_memory_collector(0)
    assert type(c) is ROCmDeviceCollector and c.name() == "rocm" and c.is_available()
    assert c.capabilities()["telemetry_collector"] == "gpumemprof.rocm_tracker"
    assert c.capabilities()["sampling_source"] == "torch.cuda.memory_* (HIP runtime)"
    assert detect_torch_runtime_backend() == "rocm"
    assert not CudaDeviceCollector(0).is_available()


def test_backend_detection(fake_torch, monkeypatch):
    assert detect_torch_runtime_backend() == "cuda"
    fake_torch._fake.reset(available=False)
    assert detect_torch_runtime_backend() == "cpu"
    with pytest.raises(ValueError):
        build_device_memory_collector()
    monkeypatch.setattr(fake_torch.backends.mps, "is_available", lambda: True)
    assert detect_torch_runtime_backend() == "mps"


def test_without_torch(no_torch):
    assert detect_torch_runtime_backend() == "cpu"
    with pytest.raises(ImportError, match="PyTorch"):
        CudaDeviceCollector()
