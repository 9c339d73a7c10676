#!/usr/bin/env python3
"""gpufl whatif against the changed program, on a real GPU (issue 18, item 5).

For each case a program is recorded as it is (the baseline) and as changed
(rebuilt with a -D flag, or run with a flag off), both under `gpufl run`;
`gpufl whatif` predicts the changed program's step time from the baseline
alone, and the prediction must be within 10 % of the changed run's measured
median step (the NVTX range "step"):

  kernel_a_2x     whatif/whatif_step.cu; changed: -DKERNEL_A_FAST;
                  --kernel '~kernel_a' --speedup 2
  remove_sync     baseline -DEXTRA_SYNC; changed: without it;
                  --remove-sync for every stream sync inside a step
  overlap_copies  baseline: copies on the kernels' stream; changed:
                  -DTWO_STREAMS; --overlap-copies
  torch_sync      whatif/torch_step.py --sync; changed: without --sync;
                  --remove-sync for every context sync inside a step
                  (skipped without torch)

Each case prints one line, for bench/RESULTS.md:
  whatif CASE: baseline B ms, replay error R %, predicted P ms, measured M ms, error E %

Exits 77 (skipped) without nvcc or a CUDA device; 1 when a case is off by
more than 10 %.

usage: test_whatif.py GPUFL_CLI
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "whatif", "whatif_step.cu")
TORCH_STEP = os.path.join(HERE, "whatif", "torch_step.py")
TOLERANCE = 0.10
STEPS = "30"


def nvcc():
    for c in (os.environ.get("CUDACXX"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if c and os.path.exists(c):
            return c
    return None


def build(tmp, name, flags):
    exe = os.path.join(tmp, name)
    subprocess.run([nvcc(), "-O2", "-std=c++17", *flags, "-o", exe, SRC], check=True)
    return exe


def record(cli, tmp, name, argv):
    """Runs argv under gpufl run; the session directory."""
    logs = os.path.join(tmp, "logs-" + name)
    os.mkdir(logs)
    run = subprocess.run([cli, "run", "--engine", "trace", "--no-torch-ops", "--log-path", logs, "--app-name", name,
                          "--", *argv], capture_output=True, text=True)
    if run.returncode == 77:
        print(f"skipped: {run.stderr.strip()}")
        sys.exit(77)
    if run.returncode != 0:
        sys.stderr.write(run.stdout + run.stderr)
        raise SystemExit(f"{name}: gpufl run exited {run.returncode}")
    # under a launcher with a job id (SLURM) the session is one level down, in job-<id>/
    sessions = [os.path.dirname(p) for p in glob.glob(os.path.join(logs, "**", "session.json"), recursive=True)]
    assert len(sessions) == 1, f"{name}: expected one session under {logs}, found {sessions}"
    return sessions[0]


def whatif(cli, session, change):
    run = subprocess.run([cli, "whatif", session, "--scope", "step", "--format", "json", *change],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"gpufl whatif {' '.join(change)}: exit {run.returncode}: {run.stderr}")
    return json.loads(run.stdout)


def syncs_in_steps(cli, session, kind):
    """Ids of the syncs of `kind` made inside a step, on the step's thread."""
    run = subprocess.run([cli, "graph", session, "-f", "json"], capture_output=True, text=True, check=True)
    g = json.loads(run.stdout)
    begins = {}
    windows = []
    for n in sorted(g["nodes"], key=lambda n: n["start_ns"]):
        if n["kind"] == "mark" and n["name"] == "step":
            if n["mark"] == "begin":
                begins[n["tid"]] = n["start_ns"]
            elif n["tid"] in begins:
                windows.append((n["tid"], begins.pop(n["tid"]), n["start_ns"]))
    ids = []
    for n in g["nodes"]:
        if n["kind"] == "sync" and n["name"] == kind:
            if any(t == n["tid"] and b <= n["start_ns"] and n["end_ns"] <= e for t, b, e in windows):
                ids.append(n["sync_id"])
    assert ids, f"no {kind} sync inside a step of {session}"
    out = []
    for i in ids:
        out += ["--remove-sync", str(i)]
    return out


def case(cli, tmp, name, base_argv, changed_argv, change):
    base = record(cli, tmp, name + "-base", base_argv)
    if callable(change):
        change = change(base)
    pred = whatif(cli, base, change)
    meas = whatif(cli, record(cli, tmp, name + "-changed", changed_argv), [])
    p, m = pred["predicted"]["median_ns"], meas["recorded"]["median_ns"]
    err = abs(p - m) / m
    print(f"whatif {name}: baseline {pred['recorded']['median_ns'] / 1e6:.3f} ms, replay error "
          f"{pred['replay_error_pct']:+.2f} %, predicted {p / 1e6:.3f} ms, measured {m / 1e6:.3f} ms, "
          f"error {100 * err:.1f} %", flush=True)
    return err <= TOLERANCE


def torch_ok():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    cli = sys.argv[1]
    if not nvcc():
        print("skipped: no nvcc")
        return 77
    ok = True
    with tempfile.TemporaryDirectory(prefix="gpufl-whatif-") as tmp:
        plain = build(tmp, "plain", [])
        fast = build(tmp, "fast", ["-DKERNEL_A_FAST"])
        synced = build(tmp, "synced", ["-DEXTRA_SYNC"])
        two = build(tmp, "two", ["-DTWO_STREAMS"])
        steps = ["--steps", STEPS]
        ok &= case(cli, tmp, "kernel_a_2x", [plain, *steps], [fast, *steps], ["--kernel", "~kernel_a", "--speedup", "2"])
        ok &= case(cli, tmp, "remove_sync", [synced, *steps], [plain, *steps],
                   lambda s: syncs_in_steps(cli, s, "stream"))
        ok &= case(cli, tmp, "overlap_copies", [plain, *steps], [two, *steps], ["--overlap-copies"])
        if torch_ok():
            py = sys.executable
            ok &= case(cli, tmp, "torch_sync", [py, TORCH_STEP, *steps, "--sync"], [py, TORCH_STEP, *steps],
                       lambda s: syncs_in_steps(cli, s, "context"))
        else:
            print("whatif torch_sync: skipped (no torch with a CUDA device)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
