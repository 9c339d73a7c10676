#!/usr/bin/env python3
"""`gpufl replay-check` on real runs: a small deterministic PyTorch training
loop (seeded, deterministic algorithms, a loss read back each step) recorded
three times under `gpufl run --engine trace`, each in a fresh process:

same      width 256, recorded compact (trace.gflt, the default)
same2     width 256, recorded as NDJSON logs (GPUFL_LOG_FORMAT=ndjson)
wider     width 320: other grids and other allocation sizes

replay-check of same against same2 must exit 0 (the same kernels, launch
configurations, copies and allocations, whatever the format), and so must
a part of them (--from-op 100, --to-op 300: op ranges are exact, where a
time range cuts each run at its own times); same against wider must
exit 1, with a first divergence in a stream lane (a launch configuration,
a size or an op extra or missing), and its --json must parse and agree.
A run that is not the same prints replay-check's text, which says where
the runs parted.

Exits 77 (skipped) without torch or a CUDA device.

usage: test_replay_check.py GPUFL_CLI
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_session import skip_reason  # noqa: E402

STEPS = 20


def child(width):
    """The program recorded: the same work every run for one width."""
    import torch

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True)
    net = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(64, width).cuda()  # a copy host to device
    y = torch.randint(0, 10, (64,)).cuda()
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        loss.item()  # a copy device to host, and the host waits: no step runs ahead
    torch.cuda.synchronize()
    return 0


def record(cli, name, width, fmt, root):
    logs = os.path.join(root, name)
    env = dict(os.environ, CUBLAS_WORKSPACE_CONFIG=":4096:8")
    if fmt:
        env["GPUFL_LOG_FORMAT"] = fmt
    cmd = [cli, "run", "--engine", "trace", "--log-path", logs, "--app-name", name, "--",
           sys.executable, os.path.abspath(__file__), "--child", str(width)]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if run.returncode != 0:
        print(run.stderr[-4000:])
        raise SystemExit(f"FAIL: the gpufl run of {name} exited {run.returncode}")
    sessions = [d for d in glob.glob(os.path.join(logs, "*")) if os.path.isdir(d)]
    if len(sessions) != 1:
        raise SystemExit(f"FAIL: expected one session in {logs}, found {sessions}")
    return sessions[0]


def check(cli, a, b, *extra):
    run = subprocess.run([cli, "replay-check", a, b, *extra], capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(int(sys.argv[2]))
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    why = skip_reason()
    if why:
        print(f"SKIP: {why}")
        return 77
    cli = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory(prefix="gpufl-replay-") as root:
        same = record(cli, "same", 256, None, root)
        same2 = record(cli, "same2", 256, "ndjson", root)
        wider = record(cli, "wider", 320, None, root)

        for extra in ((), ("--from-op", "100"), ("--to-op", "300")):
            rc, out, err = check(cli, same, same2, *extra)
            if rc != 0:
                failures.append(f"replay-check of two runs of the same program {' '.join(extra)} exited {rc} "
                                f"(0 expected):\n{out}{err}")
            elif extra == ():
                print(out.strip().splitlines()[-1])

        rc, out, err = check(cli, same, wider)
        if rc != 1:
            failures.append(f"replay-check of runs of width 256 and 320 exited {rc} (1 expected):\n{out}{err}")
        else:
            print(next(ln for ln in out.splitlines() if "first divergence" in ln).strip())
        rc, out, err = check(cli, same, wider, "--json")
        try:
            doc = json.loads(out)
        except ValueError:
            failures.append(f"replay-check --json did not write JSON (exit {rc}): {out[:2000]}{err}")
        else:
            streams = [ln for ln in doc["lanes"] if ln["lane"] == "stream" and not ln["same"]]
            if rc != 1 or doc["same"] or not streams:
                failures.append(f"replay-check --json of 256 against 320: exit {rc}, same {doc['same']}, "
                                f"{len(streams)} stream lanes differing (1, false, 1 or more expected)")
            elif streams[0]["first_divergence"]["change"] not in ("launch_config", "size", "extra", "missing",
                                                                  "replaced", "name"):
                failures.append(f"unexpected first change: {streams[0]['first_divergence']}")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
