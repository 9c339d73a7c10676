#!/usr/bin/env python3
"""gpufl.memory on a real GPU with real PyTorch: the framework layer of
memory recorded into a session, and what the analyses make of it.

One case per run, each in a fresh process (a session per process):

leak    A loop of STEPS steps, each inside gpufl.Scope("step"), keeps one
        more 1 MiB tensor per step in a list (besides transient work that
        is freed), with PyTorch's collector attached with memory history
        (gpufl.memory.attach(history=True)): the session's report has a
        `leaks` entry for "step" with detected true, a slope within 10 % of
        1 MiB a step, and its grown allocations' stack names the line of
        the leaking statement.
steady  The same loop keeping nothing: every "step" entry has detected
        false.
oom     A few 256 MiB tensors, then torch.empty of more than the GPU holds
        inside MemoryTracker.capture_oom, in a session with a flight
        window: the OOM observer fires gpufl's "oom" trigger, whose dump
        has oom.json with requested_bytes equal to the request (a multiple
        of 2 MiB, so PyTorch's rounding leaves it as asked) and
        largest_live listing the 256 MiB tensors; the reference's bundle
        exists and its metadata.json names that dump (gpufl_dump).
stats   The allocator states recorded agree with torch.cuda.memory_stats()
        read at the same moment: at several points of a workload the test
        reads the stats and at once records a state with reason "check";
        the session's "check" rows must equal them figure for figure.

The session is read back through the gpufl package (its JSON report and
its trace reader), without pandas. Exits 77 (skipped) without torch or a
CUDA device.

usage: test_torch_memory.py leak|steady|oom|stats LIBGPUFL PYTHON_PACKAGE_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_session import skip_reason  # noqa: E402

MiB = 1 << 20
STEPS = 40
CASES = ("leak", "steady", "oom", "stats")


def leak_line():
    """The line of the leaking statement in this file: the allocation whose
    Python stack PyTorch's memory history keeps."""
    with open(os.path.abspath(__file__)) as f:
        for i, text in enumerate(f, 1):
            if text.strip().startswith("kept.append(") and "# LEAK" in text:
                return i
    raise AssertionError("no leaking line")


def one_session(logs):
    dirs = [os.path.join(logs, d) for d in os.listdir(logs) if not d.startswith(".")]
    dirs = [d for d in dirs if os.path.isfile(os.path.join(d, "session.json"))]
    assert len(dirs) == 1, dirs
    return dirs[0]


# ---- the children ----------------------------------------------------------------


def child_loop(logs, leak):
    import torch

    import gpufl
    import gpufl.memory

    if not gpufl.init(app_name="leak" if leak else "steady", log_path=logs):
        print(f"FAIL: gpufl.init: {gpufl.last_error()}")
        return 1
    if not gpufl.memory.attach(interval_s=0, history=True):
        print("FAIL: gpufl.memory.attach refused")
        return 1
    torch.manual_seed(0)
    w = torch.randn(512, 512, device="cuda")
    kept = []
    for _ in range(STEPS):
        with gpufl.Scope("step"):
            x = torch.randn(256, 512, device="cuda")  # transient work, freed within the step
            y = torch.relu(x @ w)
            if leak:
                kept.append(torch.empty(MiB, dtype=torch.uint8, device="cuda"))  # LEAK: one more MiB a step
            else:
                t = torch.empty(MiB, dtype=torch.uint8, device="cuda")
                del t
            del x, y
            torch.cuda.synchronize()
    gpufl.memory.detach()
    gpufl.shutdown()
    return 0


def child_oom(logs):
    import torch

    import gpufl
    import gpufl.memory
    from gpufl.memory import MemoryTracker

    if not gpufl.init(app_name="oom", log_path=logs, flight_window_s=60, dump_on_oom=True):
        print(f"FAIL: gpufl.init: {gpufl.last_error()}")
        return 1
    gpufl.memory.attach(interval_s=0, history=True)
    tracker = MemoryTracker(oom_dump_dir=os.path.join(logs, "bundles"))
    big = [torch.empty(256 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]
    total = torch.cuda.get_device_properties(0).total_memory
    ask = (total // (2 * MiB) + 512) * (2 * MiB)  # 1 GiB more than the GPU has, in whole 2 MiB segments
    raised = False
    try:
        with tracker.capture_oom(context="gpu-test", metadata={"ask": ask}):
            torch.empty(ask, dtype=torch.uint8, device="cuda")
    except torch.cuda.OutOfMemoryError:
        raised = True
    out = {"raised": raised, "ask": ask, "bundle": tracker.last_oom_dump_path,
           "live": [t.numel() for t in big], "session": gpufl.session_dir()}
    with open(os.path.join(logs, "child.json"), "w") as f:
        json.dump(out, f)
    del big
    gpufl.memory.detach()
    gpufl.shutdown()
    return 0


def child_stats(logs):
    import torch

    import gpufl
    import gpufl.memory

    if not gpufl.init(app_name="stats", log_path=logs):
        print(f"FAIL: gpufl.init: {gpufl.last_error()}")
        return 1
    gpufl.memory.attach(interval_s=0)
    read = []

    def check():
        stats = torch.cuda.memory_stats(0)
        n = gpufl.memory.record_state("check", 0)  # reads the stats itself, nothing allocated in between
        read.append({"recorded": n, "stats": {k: int(v) for k, v in stats.items() if isinstance(v, (int, float))}})

    keep = []
    check()
    for n in (1, 3, 17, 64, 5):
        keep.append(torch.empty(n * MiB + 1000, dtype=torch.uint8, device="cuda"))
        check()
    del keep[1:3]  # freed blocks stay reserved, some split
    check()
    torch.cuda.empty_cache()
    check()
    with open(os.path.join(logs, "child.json"), "w") as f:
        json.dump(read, f)
    gpufl.memory.detach()
    gpufl.shutdown()
    return 0


def child(case, logs):
    if case in ("leak", "steady"):
        return child_loop(logs, case == "leak")
    return child_oom(logs) if case == "oom" else child_stats(logs)


# ---- the checks --------------------------------------------------------------------


def report(session):
    """`gpufl mem analyze --format json` of the session (its leaks' stacks
    carry their frames), the command beside the library under test."""
    cli = os.path.join(os.path.dirname(os.path.abspath(sys.argv[2])), "gpufl")
    p = subprocess.run([cli, "mem", "analyze", session, "--format", "json"], capture_output=True, text=True,
                       timeout=300)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"gpufl mem analyze exited {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def names_line(node, base, line):
    """Whether a grown entry's stack names base:line (frames as text
    "function (file:line)" or as objects with file and line)."""
    if isinstance(node, str):
        return re.search(r"%s:%d\b" % (re.escape(base), line), node) is not None
    if isinstance(node, dict):
        f = str(node.get("file") or node.get("filename") or "")
        if f.endswith(base) and node.get("line") == line:
            return True
        return any(names_line(v, base, line) for v in node.values())
    if isinstance(node, list):
        return any(names_line(v, base, line) for v in node)
    return False


def check_loop(logs, leak, failures):
    doc = report(one_session(logs))
    if "leaks" not in doc:
        failures.append("the report has no `leaks` (the library's leak analysis is missing)")
        return
    steps = [x for x in doc["leaks"]["rows"] if x.get("scope") == "step"]
    if not steps:
        failures.append(f"no leaks entry for `step`: {json.dumps(doc['leaks'])[:2000]}")
        return
    print("leaks of step:", json.dumps([{k: v for k, v in x.items() if k != "grew"} for x in steps]))
    if not leak:
        for x in steps:
            if x.get("detected"):
                failures.append(f"steady loop: detected in {x.get('layer')}: {json.dumps(x)[:1000]}")
        return
    # the framework layer (PyTorch's allocated bytes) is the one whose slope is the tensors'; the
    # driver and NVML layers grow by whole segments
    framework = [x for x in steps if str(x.get("layer")).lower() in ("framework", "pytorch", "allocator")] or steps
    found = [x for x in framework if x.get("detected")]
    if not found:
        failures.append(f"leaking loop: not detected: {json.dumps(framework)[:2000]}")
        return
    x = found[0]
    slope = float(x.get("slope_bytes_per_step", 0))
    if abs(slope - MiB) > 0.1 * MiB:
        failures.append(f"slope {slope:.0f} B/step, want {MiB} within 10 %")
    base, line = os.path.basename(os.path.abspath(__file__)), leak_line()
    if not names_line(x.get("grew"), base, line):
        failures.append(f"the allocations that grew do not name {base}:{line}: {json.dumps(x.get('grew'))[:2000]}")


def check_oom(logs, failures):
    with open(os.path.join(logs, "child.json")) as f:
        out = json.load(f)
    if not out["raised"]:
        failures.append("torch.empty of more than the GPU holds did not raise OutOfMemoryError")
    bundle = out["bundle"]
    if not bundle or not os.path.isdir(bundle):
        failures.append(f"no OOM bundle: {bundle}")
        return
    names = sorted(os.listdir(bundle))
    if names != ["environment.json", "events.json", "manifest.json", "metadata.json"]:
        failures.append(f"bundle files: {names}")
    with open(os.path.join(bundle, "metadata.json")) as f:
        meta = json.load(f)
    dump = meta.get("gpufl_dump")
    if meta.get("reason") != "torch.cuda.OutOfMemoryError":
        failures.append(f"bundle reason {meta.get('reason')}")
    if not dump or not os.path.isfile(os.path.join(dump, "oom.json")):
        failures.append(f"the bundle names no gpufl dump with oom.json: gpufl_dump={dump}")
        return
    if os.path.dirname(dump) != os.path.join(out["session"], "dumps"):
        failures.append(f"gpufl_dump {dump} is not a dump of the session {out['session']}")
    with open(os.path.join(dump, "oom.json")) as f:
        oom = json.load(f)
    if oom.get("requested_bytes") != out["ask"]:
        failures.append(f"oom.json requested_bytes {oom.get('requested_bytes')}, asked {out['ask']}")
    live = [x.get("bytes") for x in oom.get("largest_live") or [] if x.get("layer") == "framework"]
    if live.count(256 * MiB) < 3:
        failures.append(f"largest_live does not list the three 256 MiB tensors: {live}")
    print(f"oom.json: requested {oom.get('requested_bytes')}, classification {oom.get('classification')}, "
          f"largest live {live[:5]}")


FIGURES = [  # gpufl_trace_allocator column, memory_stats key
    ("allocated", "allocated_bytes.all.current"), ("reserved", "reserved_bytes.all.current"),
    ("active", "active_bytes.all.current"), ("inactive_split", "inactive_split_bytes.all.current"),
    ("peak_allocated", "allocated_bytes.all.peak"), ("peak_reserved", "reserved_bytes.all.peak"),
    ("alloc_retries", "num_alloc_retries"), ("ooms", "num_ooms"),
]


def check_stats(logs, failures):
    from gpufl._trace import Trace

    with open(os.path.join(logs, "child.json")) as f:
        read = json.load(f)
    with Trace(one_session(logs)) as t:
        a = t.table("allocator")
        rows = [i for i in range(a.n) if t.string(a.reason[i]) == "check"]
        got = [{col: int(getattr(a, col)[i]) for col, _ in FIGURES} for i in rows]
    if any(r["recorded"] != 1 for r in read):
        failures.append(f"record_state recorded {[r['recorded'] for r in read]} states, want 1 each")
    if len(got) != len(read):
        failures.append(f"{len(got)} check states in the session, {len(read)} recorded")
        return
    for k, (g, r) in enumerate(zip(got, read)):
        for col, key in FIGURES:
            if g[col] != r["stats"].get(key, 0):
                failures.append(f"check {k}: {col} {g[col]} in the session, memory_stats {key} {r['stats'].get(key)}")
    print(f"{len(got)} checks; last: {got[-1]}")


def run_child(case, logs, argv):
    env = dict(os.environ, GPUFL_LIBRARY=argv[2], PYTHONPATH=argv[3] + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("GPUFL_DISABLED", None)
    return subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case, logs], env=env,
                          timeout=240).returncode


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        print(__doc__)
        return 2
    why = skip_reason()
    if why:
        print(f"SKIP: {why}")
        return 77
    case = sys.argv[1]
    logs = tempfile.mkdtemp(prefix=f"gpufl-memory-{case}-")
    rc = run_child(case, logs, sys.argv)
    if rc != 0:
        print(f"FAIL: the {case} run exited {rc}")
        return 1
    sys.path.insert(0, sys.argv[3])
    os.environ["GPUFL_LIBRARY"] = sys.argv[2]
    failures = []
    if case in ("leak", "steady"):
        check_loop(logs, case == "leak", failures)
    elif case == "oom":
        check_oom(logs, failures)
    else:
        check_stats(logs, failures)
    for f in failures:
        print(f"FAIL: {f}")
    print(f"{case}: {'FAIL' if failures else 'ok'} ({logs})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
