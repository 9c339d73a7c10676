"""Byte formatting and the machine's description, with the reference's
names, keys and units (gpumemprof.utils).

The figures come from PyTorch where it is there, else from NVML through
the gpufl command (``_nvml``) and from /proc: psutil is not a dependency of
gpufl, so the host's memory is read from /proc/meminfo with psutil's
definitions, and get_gpu_info() answers from NVML on a machine without
PyTorch instead of raising ImportError as the reference does.
"""

import os
import sys

from . import _nvml, _torch

__all__ = ["format_bytes", "format_memory", "convert_bytes", "get_gpu_info", "get_system_info", "meminfo",
           "system_used_bytes"]

_UNITS = ["B", "KB", "MB", "GB", "TB", "PB"]
_FACTORS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


def format_bytes(bytes_value, precision=2):
    """1536 -> "1.50 KB": binary steps under decimal-style labels, as the
    reference prints them; exactly 0 is "0 B"; negative values are never
    scaled (-2048 -> "-2048.00 B")."""
    if bytes_value == 0:
        return "0 B"
    size, unit = float(bytes_value), 0
    while size >= 1024.0 and unit < len(_UNITS) - 1:
        size /= 1024.0
        unit += 1
    return "%.*f %s" % (precision, size, _UNITS[unit])


def format_memory(bytes_value, precision=2):
    """The issue's name for format_bytes (the reference has it only on its
    TensorFlow side): format_memory(1.5 * 2**30) -> "1.50 GB"."""
    return format_bytes(bytes_value, precision)


def convert_bytes(value, from_unit, to_unit):
    """value in from_unit as to_unit (B, KB, MB, GB, TB; powers of 1024)."""
    if from_unit not in _FACTORS or to_unit not in _FACTORS:
        raise ValueError("Invalid unit. Must be one of: %s" % list(_FACTORS))
    return value * _FACTORS[from_unit] / _FACTORS[to_unit]


def meminfo(path="/proc/meminfo"):
    """/proc/meminfo as {field: bytes}; {} where it cannot be read."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                name, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    out[name] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except OSError:
        pass
    return out


def system_used_bytes(info=None):
    """System-wide used RAM as psutil's virtual_memory().used computes it
    on Linux (total - free - buffers - cached, cached counting
    SReclaimable; total - free when that is negative): the reference's
    snapshot cpu_memory. 0 when /proc/meminfo cannot be read."""
    m = meminfo() if info is None else info
    if "MemTotal" not in m:
        return 0
    used = m["MemTotal"] - m.get("MemFree", 0) - m.get("Buffers", 0) - m.get("Cached", 0) - \
        m.get("SReclaimable", 0)
    return used if used >= 0 else m["MemTotal"] - m.get("MemFree", 0)


def _device_id(torch, device):
    if device is None:
        return torch.cuda.current_device() if torch is not None else 0
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        return int(device.split(":")[-1]) if ":" in device else 0
    index = getattr(device, "index", None)
    return index if index is not None else 0


def _smi_info(dev):
    """nvidia_smi_info's keys from a `gpufl devices --json` device (MiB
    ints, %, C, W), or None when NVML did not report memory."""
    st = dev.get("state") or {}
    if "mem_total_bytes" not in st:
        return None
    return {
        "memory_total_mb": int(st["mem_total_bytes"]) >> 20,
        "memory_used_mb": int(st.get("mem_used_bytes", 0)) >> 20,
        "memory_free_mb": int(st.get("mem_free_bytes", 0)) >> 20,
        "gpu_utilization_percent": int(st.get("gpu_util_pct", 0)),
        "temperature_c": int(st.get("temp_c", 0)),
        "power_draw_w": float(st.get("power_mw", 0)) / 1000.0,
    }


def _nvml_device(device_id):
    for dev in _nvml.devices() or []:
        if dev.get("device") == device_id:
            return dev
    return None


def _gpu_info_from_nvml(device_id):
    """get_gpu_info() where PyTorch has no CUDA: NVML's view, or None."""
    dev = _nvml_device(device_id)
    if dev is None:
        return None
    cc = str(dev.get("compute_capability", "")).split(".")
    info = {
        "device_id": device_id,
        "device_name": dev.get("name"),
        "device_capability": tuple(int(x) for x in cc) if all(x.isdigit() for x in cc) else None,
        "total_memory": int(dev.get("memory_total_bytes", 0)),
        "multiprocessor_count": dev.get("sm_count"),
        "cuda_version": dev.get("cuda_driver_version"),
        "pytorch_version": None,
        "source": "nvml",
    }
    smi = _smi_info(dev)
    if smi is not None:
        info["nvidia_smi_info"] = smi
    return info


def get_gpu_info(device=None):
    """The reference's GPU description (device_id, device_name,
    device_capability, total_memory, multiprocessor_count, cuda_version,
    pytorch_version, allocated_memory, reserved_memory,
    max_memory_allocated, max_memory_reserved, memory_stats{active_bytes,
    inactive_bytes, reserved_bytes, num_alloc_retries, num_ooms}, and
    nvidia_smi_info{memory_total_mb, memory_used_mb, memory_free_mb,
    gpu_utilization_percent, temperature_c, power_draw_w} when NVML
    answers). Bytes unless the key says otherwise.

    Differs from the reference: nvidia_smi_info comes from NVML through
    `gpufl devices` rather than from running nvidia-smi (same figures; NVML
    numbers devices as CUDA does unless CUDA_VISIBLE_DEVICES reorders
    them); without PyTorch, or without CUDA in it, the description comes
    from NVML (no allocator figures, pytorch_version None, "source":
    "nvml"), and only without any NVIDIA driver is it
    {"error": "CUDA is not available"}."""
    torch = _torch.get()
    if torch is None or not torch.cuda.is_available():
        info = _gpu_info_from_nvml(_device_id(None, device))
        return info if info is not None else {"error": "CUDA is not available"}
    d = _device_id(torch, device)
    props = torch.cuda.get_device_properties(d)
    info = {
        "device_id": d,
        "device_name": props.name,
        "device_capability": (props.major, props.minor),
        "total_memory": int(props.total_memory),
        "multiprocessor_count": props.multi_processor_count,
        "cuda_version": getattr(torch.version, "cuda", None),
        "pytorch_version": torch.__version__,
    }
    try:
        info.update(allocated_memory=torch.cuda.memory_allocated(d), reserved_memory=torch.cuda.memory_reserved(d),
                    max_memory_allocated=torch.cuda.max_memory_allocated(d),
                    max_memory_reserved=torch.cuda.max_memory_reserved(d))
        stats = torch.cuda.memory_stats(d)
        info["memory_stats"] = {
            "active_bytes": stats.get("active_bytes.all.current", 0),
            "inactive_bytes": stats.get("inactive_split_bytes.all.current", 0),
            "reserved_bytes": stats.get("reserved_bytes.all.current", 0),
            "num_alloc_retries": stats.get("num_alloc_retries", 0),
            "num_ooms": stats.get("num_ooms", 0),
        }
    except Exception as e:
        info["memory_error"] = str(e)
    dev = _nvml_device(d)
    smi = _smi_info(dev) if dev is not None else None
    if smi is not None:
        info["nvidia_smi_info"] = smi
    return info


def _torch_facts(torch):
    if torch is None:
        return {"torch_available": False, "cuda_available": False, "rocm_available": False, "rocm_version": None,
                "mps_available": False, "mps_built": False, "detected_backend": "cpu"}
    from .collectors import detect_torch_runtime_backend

    cuda = bool(torch.cuda.is_available())
    rocm = cuda and _torch.is_rocm(torch)
    facts = {"torch_available": True, "cuda_available": cuda, "rocm_available": rocm,
             "rocm_version": torch.version.hip if rocm else None, "mps_available": _torch.mps_available(torch),
             "mps_built": _torch.mps_built(torch), "detected_backend": detect_torch_runtime_backend()}
    if cuda:
        cudnn = getattr(getattr(torch, "backends", None), "cudnn", None)
        facts.update(cuda_device_count=torch.cuda.device_count(), cuda_version=getattr(torch.version, "cuda", None),
                     cudnn_version=cudnn.version() if cudnn is not None else None,
                     current_device=torch.cuda.current_device())
    return facts


def get_system_info():
    """The reference's description of the machine: platform, architecture,
    python_version, torch_available, cuda_available, rocm_available,
    rocm_version, mps_available, mps_built, detected_backend, with CUDA
    cuda_device_count, cuda_version, cudnn_version, current_device; then
    cpu_count, cpu_count_logical (both logical CPUs, as psutil.cpu_count()
    gives them to the reference), memory_total, memory_available (bytes,
    /proc/meminfo) and memory_percent ((total - available) / total, %), or
    system_info_error. Works without PyTorch."""
    u = os.uname()
    info = {"platform": u.sysname, "architecture": u.machine, "python_version": sys.version}
    info.update(_torch_facts(_torch.get()))
    m = meminfo()
    if "MemTotal" in m and m["MemTotal"] > 0:
        avail = m.get("MemAvailable", m.get("MemFree", 0))
        n = os.cpu_count() or 1
        info.update(cpu_count=n, cpu_count_logical=n, memory_total=m["MemTotal"], memory_available=avail,
                    memory_percent=round(100.0 * (m["MemTotal"] - avail) / m["MemTotal"], 1))
    else:
        info["system_info_error"] = "cannot read /proc/meminfo"
    return info
