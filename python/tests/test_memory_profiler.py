"""GPUMemoryProfiler and its conveniences (the reference's API) over the
PyTorch stand-in's scripted allocator: results, summary, decorator and
context, errors; and, with a gpufl session, that each profiled call is a
scope and each snapshot an allocator state of the session."""

import json

import pytest

import gpufl
from conftest import one_session
from gpufl.analyzer import GpuFlightSession
from gpufl.memory import GPUMemoryProfiler, MemorySnapshot, ProfileResult, _record, context_profiler

MiB, GiB = 1 << 20, 1 << 30

SUMMARY_KEYS = ["device", "total_functions_profiled", "total_function_calls", "total_execution_time",
                "total_memory_allocated", "total_memory_freed", "net_memory_change", "peak_memory_usage",
                "current_memory_usage", "baseline_memory_usage", "memory_change_from_baseline",
                "function_summaries", "monitoring_active", "snapshots_collected"]
SNAPSHOT_KEYS = ["timestamp", "allocated_memory", "reserved_memory", "max_memory_allocated",
                 "max_memory_reserved", "active_memory", "inactive_memory", "cpu_memory", "device_id",
                 "operation", "stack_trace"]


@pytest.fixture(autouse=True)
def no_global_profiler():
    context_profiler.set_global_profiler(None)
    yield
    context_profiler.set_global_profiler(None)


def make_step(torch, kept):
    """A step that keeps 3 MiB and uses 5 MiB for a while: peak 8 MiB."""

    def train_step():
        tmp = torch.empty(5 * MiB, dtype=torch.uint8, device="cuda")
        kept.append(torch.empty(3 * MiB, dtype=torch.uint8, device="cuda"))
        del tmp
        return "loss"

    return train_step


def test_profile_function_result(fake_torch):
    kept = []
    p = GPUMemoryProfiler()
    assert str(p.device) == "cuda:0" and p._baseline_snapshot.operation == "baseline"
    r = p.profile_function(make_step(fake_torch, kept))
    assert isinstance(r, ProfileResult) and r.function_name == "train_step" and r.call_count == 1
    assert r.memory_before.allocated_memory == 0 and r.memory_after.allocated_memory == 3 * MiB
    assert r.memory_allocated == 3 * MiB and r.memory_freed == 0 and r.memory_diff() == 3 * MiB
    assert r.memory_peak.allocated_memory == 8 * MiB == r.peak_memory_usage()
    assert r.memory_peak.operation == "peak_train_step" and r.memory_after.operation == "after_train_step"
    assert r.memory_before.operation == "before_train_step"
    assert r.memory_after.reserved_memory == 10 * MiB  # a 6 MiB and a 4 MiB segment
    assert r.tensors_created == 1 and r.tensors_deleted == 0 and r.execution_time >= 0
    assert r.memory_after.cpu_memory > 0 and r.memory_after.stack_trace is None
    d = r.to_dict()
    assert list(d) == ["function_name", "execution_time", "memory_before", "memory_after", "memory_peak",
                       "memory_allocated", "memory_freed", "memory_diff", "peak_memory_usage", "tensors_created",
                       "tensors_deleted", "call_count"]
    assert list(d["memory_before"]) == SNAPSHOT_KEYS and d["memory_diff"] == 3 * MiB
    assert p.results == [r] and p.function_stats["train_step"] == [r]
    # the second call frees what the first kept
    r2 = p.profile_function(kept.clear)
    assert r2.function_name == "clear" and r2.tensors_deleted == 1
    assert r2.memory_allocated == 0 and r2.memory_freed == 3 * MiB and r2.memory_diff() == -3 * MiB
    assert r2.peak_memory_usage() == 3 * MiB  # the peak counters were reset at its start


def test_summary(fake_torch):
    p = GPUMemoryProfiler()
    assert p.get_summary() == {"message": "No profiling results available"}
    kept = []
    step = make_step(fake_torch, kept)
    p.profile_function(step)
    p.profile_function(step)
    with p.profile_context("eval"):
        pass
    s = p.get_summary()
    assert list(s) == SUMMARY_KEYS
    assert s["device"] == "cuda:0" and s["total_functions_profiled"] == 2 and s["total_function_calls"] == 3
    assert s["total_memory_allocated"] == 6 * MiB and s["total_memory_freed"] == 0
    assert s["net_memory_change"] == 6 * MiB and s["peak_memory_usage"] == 11 * MiB
    assert s["current_memory_usage"] == 6 * MiB and s["baseline_memory_usage"] == 0
    assert s["memory_change_from_baseline"] == 6 * MiB
    assert s["monitoring_active"] is False and s["snapshots_collected"] == 0
    fs = s["function_summaries"]["train_step"]
    assert list(fs) == ["call_count", "total_time", "avg_time", "total_memory_allocated", "avg_memory_allocated",
                        "peak_memory"]
    assert fs["call_count"] == 2 and fs["total_memory_allocated"] == 6 * MiB
    assert fs["avg_memory_allocated"] == 3 * MiB and fs["peak_memory"] == 11 * MiB
    p.clear_results()
    assert p.results == [] and p.get_summary() == {"message": "No profiling results available"}
    assert p._baseline_snapshot.operation == "new_baseline" and p._baseline_snapshot.allocated_memory == 6 * MiB


def test_errors_are_recorded_and_raised(fake_torch):
    p = GPUMemoryProfiler()

    def boom():
        raise KeyError("bad batch")

    with pytest.raises(KeyError):
        p.profile_function(boom)
    r = p.results[-1]
    assert r.function_name == "boom" and r.memory_after.operation == "after_boom_error"
    assert r.memory_peak.operation == "peak_boom_error"
    assert (r.memory_allocated, r.memory_freed, r.tensors_created, r.tensors_deleted) == (0, 0, 0, 0)
    with pytest.raises(ValueError):
        with p.profile_context("block"):
            raise ValueError("inside")
    assert p.results[-1].function_name == "block" and len(p.results) == 2


def test_device_resolution(fake_torch):
    fake_torch._fake.reset(devices=2)
    assert str(GPUMemoryProfiler(1).device) == "cuda:1"
    assert str(GPUMemoryProfiler("cuda:1").device) == "cuda:1"
    assert str(GPUMemoryProfiler(fake_torch.device("cuda")).device) == "cuda:0"
    with pytest.raises(ValueError):
        GPUMemoryProfiler(2)
    with pytest.raises(ValueError):
        GPUMemoryProfiler("cpu")
    fake_torch._fake.reset(available=False)
    with pytest.raises(RuntimeError, match="^CUDA is not available, cannot profile GPU memory$"):
        GPUMemoryProfiler()


def test_without_torch(no_torch):
    with pytest.raises(ImportError, match="PyTorch"):
        GPUMemoryProfiler()


def test_stack_traces_and_cpu_memory_switches(fake_torch):
    p = GPUMemoryProfiler(track_cpu_memory=False, collect_stack_traces=True, track_tensors=False)
    r = p.profile_function(make_step(fake_torch, []))
    assert r.memory_after.cpu_memory == 0 and "test_memory_profiler.py" in r.memory_after.stack_trace
    assert r.tensors_created == 0


def test_monitoring(fake_torch):
    import time

    with GPUMemoryProfiler() as p:
        p.start_monitoring(0.01)
        p.start_monitoring(0.01)  # once
        deadline = time.time() + 5
        while len(p.snapshots) < 3 and time.time() < deadline:
            time.sleep(0.01)
        assert p._monitoring
    assert not p._monitoring and len(p.snapshots) >= 3
    assert all(isinstance(s, MemorySnapshot) and s.operation == "monitor" for s in p.snapshots)
    assert p.get_summary() == {"message": "No profiling results available"}  # as the reference, even with snapshots


def test_decorator_and_context(fake_torch):
    kept = []

    @context_profiler.profile_function
    def forward(n):
        kept.append(fake_torch.empty(n, dtype=fake_torch.uint8, device="cuda"))
        return n * 2

    @context_profiler.profile_function(name="backward_pass")
    def backward():
        return "grads"

    assert forward(MiB) == 2 * MiB and backward() == "grads"
    assert len(kept) == 1  # the function ran once
    assert forward._is_profiled and forward._profile_name == "forward"
    assert backward._profile_name == "backward_pass" and backward.__name__ == "backward"
    g = context_profiler.get_global_profiler()
    assert [r.function_name for r in g.results] == ["forward", "backward_pass"]
    assert g.results[0].memory_allocated == MiB
    with context_profiler.profile_context("block") as prof:
        assert prof is g
    assert g.results[-1].function_name == "block"
    assert [r.function_name for r in context_profiler.get_profile_results(2)] == ["backward_pass", "block"]
    assert context_profiler.get_summary()["total_function_calls"] == 3
    own = GPUMemoryProfiler()

    @context_profiler.profile_function(profiler=own)
    def mine():
        return 1

    mine()
    assert len(own.results) == 1 and len(g.results) == 3
    context_profiler.clear_results()
    assert g.results == []


def test_global_functions_without_a_profiler():
    assert context_profiler.get_summary() == {"message": "No global profiler instance"}
    assert context_profiler.get_profile_results() == []
    context_profiler.stop_monitoring()
    context_profiler.clear_results()


def test_memory_profiler_facade(fake_torch, tmp_path):
    with context_profiler.MemoryProfiler() as mp:
        mp.profile(make_step(fake_torch, []))
        with mp.context("ctx"):
            pass
        out = tmp_path / "results.json"
        mp.save_results(str(out))
        data = mp.load_results(str(out))
    assert list(data) == ["summary", "results", "snapshots"] and len(data["results"]) == 2
    assert data["summary"]["total_function_calls"] == 2
    json.dumps(data)


def test_profiled_module(fake_torch):
    M = context_profiler.ProfiledModule
    p = GPUMemoryProfiler()
    inner = fake_torch.nn.Module()
    inner.width = 7
    wrapped = M(inner, profiler=p)
    assert wrapped(3) == 3 and wrapped.width == 7
    assert p.results[-1].function_name == "Module_forward"


@pytest.mark.skipif(not _record.available(), reason="libgpufl without framework memory")
def test_recorded_into_the_session(fake_torch, logs):
    assert gpufl.init(log_path=logs, app_name="profiler")
    kept = []
    p = GPUMemoryProfiler()
    p.profile_function(make_step(fake_torch, kept))
    with p.profile_context("eval"):
        kept.append(fake_torch.empty(MiB, dtype=fake_torch.uint8, device="cuda"))
    gpufl.shutdown()
    with GpuFlightSession(one_session(logs)) as s:
        scopes, a = s.scopes, s.allocator
    names = list(scopes.loc[scopes["kind"] == "scope", "name"])
    assert names == ["train_step", "eval"]
    snaps = a[a["reason"] == "snapshot"]
    # baseline, before/after of each call (the peak is derived, not read)
    assert list(snaps["allocated"]) == [0, 0, 3 * MiB, 3 * MiB, 4 * MiB]
    assert list(snaps["reserved"])[-1] == p.results[-1].memory_after.reserved_memory
    # the collector attached with the session: the allocator's state after each scope, in the scope's own name
    ends = a[a["reason"] == "scope"]
    assert list(ends["allocated"]) == [3 * MiB, 4 * MiB]
