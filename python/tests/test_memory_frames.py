"""The framework layer of memory read back from Python: the analyzer's
``allocator`` frame (gpufl_trace_get_allocator) and the ``memory`` frame's
``framework`` column, for states and blocks recorded through
gpufl.memory._record into a real session (no GPU needed: the C recorder
takes them from any program)."""

import subprocess

import pytest

import gpufl
from conftest import cli, one_session
from gpufl.analyzer import GpuFlightSession
from gpufl.memory import _record

pytestmark = pytest.mark.skipif(not _record.available(), reason="libgpufl without framework memory")

MIB = 1 << 20


def record_two_steps(logs):
    assert gpufl.init(log_path=logs, app_name="frames")
    for step in range(2):
        with gpufl.Scope("step"):
            rc = _record.record_block(0, 0x7000 + step * MIB, MIB, False, 0, 0,
                                      [("train.py", "step_fn", 40 + step), ("train.py", "<module>", 90)])
            assert rc == 0
            rc = _record.record_allocator(0, "pytorch", "check", allocated_bytes=(step + 1) * MIB,
                                          reserved_bytes=2 * MIB, active_bytes=(step + 1) * MIB,
                                          inactive_split_bytes=123, largest_free_bytes=456,
                                          peak_allocated_bytes=(step + 1) * MIB, peak_reserved_bytes=2 * MIB,
                                          requested_bytes=7, device_free_bytes=8, alloc_retries=3, ooms=step)
            assert rc == 0
    _record.record_block(0, 0x7000, MIB, True)  # the first step's block freed
    gpufl.shutdown()
    return one_session(logs)


def test_allocator_frame(logs):
    with GpuFlightSession(record_two_steps(logs)) as s:
        a = s.allocator
    assert len(a) == 2
    assert list(a["reason"]) == ["check", "check"] and list(a["framework"]) == ["pytorch", "pytorch"]
    assert list(a["allocated"]) == [MIB, 2 * MIB]
    assert list(a["reserved"]) == [2 * MIB] * 2
    assert list(a["inactive_split"]) == [123, 123] and list(a["largest_free"]) == [456, 456]
    assert list(a["requested"]) == [7, 7] and list(a["device_free"]) == [8, 8]
    assert list(a["alloc_retries"]) == [3, 3] and list(a["ooms"]) == [0, 1]
    assert list(a["scope_name"]) == ["step", "step"]
    assert a["ts_ns"].is_monotonic_increasing


def test_memory_frame_has_the_framework_layer(logs):
    with GpuFlightSession(record_two_steps(logs)) as s:
        m = s.memory
    assert m["framework"].all() and len(m) == 3
    assert list(m["event"]) == ["alloc", "alloc", "free"]
    assert list(m["live_bytes"]) == [MIB, 2 * MIB, MIB]
    assert list(m["scope_name"].iloc[:2]) == ["step", "step"]
    assert (m["stack_id"].iloc[:2] != 0).all() and m["stack_id"].iloc[0] != m["stack_id"].iloc[1]


def stack_frames(session):
    """{stack id: [frame text]} from `gpufl stacks` (libgpufl has no reader
    of stack frames for Python)."""
    out = subprocess.run([cli(), "stacks", session], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    stacks, cur = {}, None
    for line in out.splitlines():
        if line.startswith("stack "):
            cur = stacks.setdefault(int(line.split()[1].rstrip(":")), [])
        elif line.strip().startswith("#") and cur is not None:
            cur.append(line.strip().split(None, 1)[1])
    return stacks


def test_blocks_keep_their_python_stacks(logs):
    session = record_two_steps(logs)
    with GpuFlightSession(session) as s:
        ids = [int(x) for x in s.memory["stack_id"].iloc[:2]]
    stacks = stack_frames(session)
    assert stacks[ids[0]] == ["step_fn (train.py:40)", "<module> (train.py:90)"]
    assert stacks[ids[1]] == ["step_fn (train.py:41)", "<module> (train.py:90)"]


def test_torch_blocks_keep_their_python_stacks(fake_torch, logs):
    """PyTorch's collector with memory history: every live block lands in
    the session with the Python stack of the line that allocated it, read
    back as the memory frame's framework rows and `gpufl stacks`."""
    import inspect

    from gpufl import memory

    assert gpufl.init(log_path=logs, app_name="blocks")
    assert memory.attach(interval_s=0, history=True)
    line = inspect.currentframe().f_lineno + 1
    kept = [fake_torch.empty(n * MIB, dtype=fake_torch.uint8, device="cuda") for n in (3, 5)]
    memory.detach()  # records the live blocks
    gpufl.shutdown()
    session = one_session(logs)
    with GpuFlightSession(session) as s:
        m = s.memory
    blocks = m[m["framework"] & (m["event"] == "alloc")]
    assert sorted(blocks["bytes"]) == [3 * MIB, 5 * MIB]
    stacks = stack_frames(session)
    for sid in blocks["stack_id"]:
        top = stacks[int(sid)][0]
        assert top.startswith("<listcomp> (") or top.startswith("test_torch_blocks_keep_their_python_stacks (")
        assert top.endswith("test_memory_frames.py:%d)" % line), top
    del kept
