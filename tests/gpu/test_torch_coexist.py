#!/usr/bin/env python3
"""torch.profiler inside a program that gpufl traces, through
gpufl_trace_pause() / gpufl_trace_resume().

CUPTI serves one client at a time: while gpufl's Trace engine holds it,
torch.profiler records no kernel at all. The program here (in-process,
libgpufl through ctypes, as the Python package will) runs three phases on
one CUDA tensor: A (ADD_OPS x.add_) traced by gpufl; then gpufl hands CUPTI
over and B (MUL_OPS x.mul_) runs under torch.profiler; then gpufl tries to
take CUPTI back and C (NEG_OPS x.neg_) runs. Requires: torch.profiler sees
exactly MUL_OPS kernels and gpufl none of them; gpufl's log says when the
trace was paused. PyTorch's profiler (kineto) may keep its CUPTI
subscription after the `with` block ends (it does in torch 2.11 on CUDA
13.0): then gpufl_trace_resume() must fail naming another CUPTI client,
the session must record exactly ADD_OPS kernels and say that it ended
paused; otherwise exactly ADD_OPS + NEG_OPS, none inside the pause, and a
resume line giving the unrecorded stretch.
Exits 77 (skipped) without torch or a CUDA device.

usage: test_torch_coexist.py LIBGPUFL CUPTI_PLUGIN
"""
import ctypes
import glob
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_session import lines, skip_reason  # noqa: E402

ADD_OPS, MUL_OPS, NEG_OPS = 300, 200, 100


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    why = skip_reason()
    if why:
        print(f"SKIP: {why}")
        return 77
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    logs = tempfile.mkdtemp(prefix="gpufl-coexist-")
    os.environ.update({"GPUFL_PROFILING_ENGINE": "trace", "GPUFL_LOG_PATH": logs,
                       "GPUFL_APP_NAME": "coexist", "GPUFL_DEVICE_PLUGIN": sys.argv[2]})
    os.environ.pop("GPUFL_DISABLED", None)
    lib = ctypes.CDLL(sys.argv[1])
    lib.gpufl_last_error.restype = ctypes.c_char_p
    lib.gpufl_init.argtypes = [ctypes.c_void_p]
    lib.gpufl_init.restype = ctypes.c_bool

    x = torch.zeros(16, device="cuda")
    torch.cuda.synchronize()
    if not lib.gpufl_init(None):
        print(f"FAIL: gpufl_init: {lib.gpufl_last_error().decode()}")
        return 1
    failures = []
    for _ in range(ADD_OPS):
        x.add_(1)
    torch.cuda.synchronize()
    if lib.gpufl_trace_pause() != 0:
        failures.append(f"gpufl_trace_pause: {lib.gpufl_last_error().decode()}")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(MUL_OPS):
            x.mul_(1.0)
        torch.cuda.synchronize()
    seen_by_profiler = sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA
                           and not e.name.startswith(("Memcpy", "Memset")))
    rc = lib.gpufl_trace_resume()
    resume_error = lib.gpufl_last_error().decode() if rc != 0 else ""
    if rc != 0:
        print(f"gpufl_trace_resume refused: {resume_error}")
        if "another CUPTI client" not in resume_error or "still paused" not in resume_error:
            failures.append(f"gpufl_trace_resume: {resume_error}")
    for _ in range(NEG_OPS):
        x.neg_()
    torch.cuda.synchronize()
    lib.gpufl_shutdown()

    sessions = [d for d in glob.glob(os.path.join(logs, "*")) if os.path.isdir(d)]
    if len(sessions) != 1:
        failures.append(f"expected one session in {logs}, found {len(sessions)}")
    else:
        s = sessions[0]
        kernels = [e for e in lines(s, "device") if e.get("type") == "kernel"]
        messages = [e.get("message", "") for e in lines(s, "system") if e.get("type") == "log"]
        paused = [m for m in messages if "trace paused by gpufl_trace_pause()" in m]
        resumed = [m for m in messages if "trace resumed by gpufl_trace_resume()" in m]
        ended_paused = [m for m in messages if "ended with the trace paused" in m]
        want = ADD_OPS + (NEG_OPS if rc == 0 else 0)
        print(f"torch.profiler kernels during the pause: {seen_by_profiler} (expected {MUL_OPS})")
        print(f"gpufl kernels: {len(kernels)} (expected {want})")
        for m in paused + resumed + ended_paused:
            print(f"gpufl log: {m}")
        if seen_by_profiler != MUL_OPS:
            failures.append(f"torch.profiler saw {seen_by_profiler} kernels, expected {MUL_OPS}")
        if len(kernels) != want:
            failures.append(f"gpufl recorded {len(kernels)} kernels, expected {want}")
        if rc != 0:
            if len(paused) != 1 or len(ended_paused) != 1 or resumed:
                failures.append(f"expected one pause line and one 'ended with the trace paused' line, got "
                                f"{len(paused)}, {len(ended_paused)} (and {len(resumed)} resume lines)")
        elif len(paused) != 1 or len(resumed) != 1:
            failures.append(f"expected one pause and one resume line, got {len(paused)} and {len(resumed)}")
        else:
            m = re.search(r"from (\d+) ns to (\d+) ns was not recorded", resumed[0])
            if not m:
                failures.append(f"the resume line does not give the gap: {resumed[0]}")
            else:
                lo, hi = int(m.group(1)), int(m.group(2))
                inside = [k for k in kernels if lo <= int(k.get("start_ns", k.get("ts_ns", 0))) <= hi]
                if inside:
                    failures.append(f"{len(inside)} gpufl kernels fall inside the pause [{lo}, {hi}]")
    if failures:
        for f in failures:
            print(f"FAIL: {f}")
        print(f"(session kept in {logs})")
        return 1
    shutil.rmtree(logs, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
