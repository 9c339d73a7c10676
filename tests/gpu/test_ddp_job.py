#!/usr/bin/env python3
"""Issue 16's two-GPU test: a DDP job (ddp_job.py) on 2 ranks under
`gpufl run -- torchrun`, rank 1 sleeping 20 ms before every 5th step, then
`gpufl merge` of the job's sessions and its JSON report. Requires:

  - one job directory with 2 sessions, ranks 0 and 1, aligned;
  - rank 1 found as the straggler on exactly the measured steps it slept
    before, late by 20 ms +- 3 ms each time, and no other arrival in those
    steps 10 ms late (the job reads its loss at the end of every step, so
    both ranks start each step with an empty GPU queue: without that, the
    rank that did not sleep ran ahead and its queued work made the
    sleeper's GPU 21-24 ms late for a 20 ms sleep on an H100 pair);
  - after alignment the NCCL kernels of the two ranks end together within
    50 us (median residual and its spread);
  - each rank's kernels between the job's two fence kernels equal, in
    number, what torch.profiler counts in the same job run again under it
    (the job is deterministic; one CUPTI client per process means the two
    cannot record the same process);
  - NCCL's bytes (NCCL's profiler plugin, which `gpufl run` names in
    NCCL_PROFILER_PLUGIN): on each rank, the AllReduce bytes recorded
    (nccl_coll events) inside every measured step equal the model's
    gradient bytes (sum of numel x element size; DDP all-reduces them in
    buckets, so the step's total is compared), and the job report gives
    every AllReduce kernel its bytes and a bus bandwidth.

Prints the figures. Exits 77 (skipped) without torch, NCCL or 2 GPUs.

usage: test_ddp_job.py GPUFL_CLI
"""
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "ddp_job.py")
STEPS, WARMUP, EVERY, SLEEP_MS = 30, 5, 5, 20.0
TOLERANCE_MS, ALIGN_US = 3.0, 50.0
csv.field_size_limit(1 << 24)


def skip_reason():
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        return f"torch is not importable ({e})"
    if torch.cuda.device_count() < 2:
        return f"{torch.cuda.device_count()} CUDA device(s): the test needs 2"
    if not dist.is_nccl_available():
        return "torch has no NCCL"
    return None


def env():
    e = dict(os.environ)
    # NVLink multicast stays off on shared machines (the device tool's KINDS.md)
    e.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    return e


def torchrun(extra):
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", JOB,
            "--steps", str(STEPS), "--warmup", str(WARMUP), "--every", str(EVERY),
            "--sleep-ms", str(SLEEP_MS)] + extra


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=300, **kw)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def kernels_between_fences(cli, session, tmp):
    out = os.path.join(tmp, "csv-" + os.path.basename(session))
    run([cli, "export", session, "-f", "csv", "-o", out])
    with open(os.path.join(out, "kernels.csv"), newline="") as f:
        rows = sorted(((int(r["start_ns"]), int(r["end_ns"]), r["name"]) for r in csv.DictReader(f)))
    fences = [r for r in rows if "spin_kernel" in r[2]]
    if len(fences) != 2:
        sys.exit(f"FAIL: {session}: {len(fences)} fence kernels, expected 2")
    lo, hi = fences[0][1], fences[1][0]
    return [r[2] for r in rows if lo <= r[0] < hi]


def nccl_bytes_per_step(cli, session):
    """{step number from 1: AllReduce bytes enqueued inside it} and the count of nccl_coll events, read with
    the Python reader of the libgpufl beside the CLI."""
    os.environ.setdefault("GPUFL_LIBRARY", os.path.join(os.path.dirname(cli), "libgpufl.so"))
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    from gpufl._trace import Trace
    with Trace(session) as t:
        c = t.table("nccl_collectives")
        s = t.table("scopes")
        steps = sorted((int(s.begin_ns[i]), int(s.end_ns[i])) for i in range(s.n)
                       if t.string(s.name[i]) == "step" and int(s.depth[i]) == 0)
        per = {}
        for i in range(c.n):
            if t.string(c.func[i]) != "AllReduce":
                continue
            if not c.bytes_known[i]:
                per.setdefault("unknown", 0)
                per["unknown"] += 1
                continue
            at = int(c.start_ns[i])
            for k, (b, e) in enumerate(steps):
                if b <= at < e:
                    per[k + 1] = per.get(k + 1, 0) + int(c.bytes[i])
        return per, c.n


def check_nccl_bytes(cli, report, grad_bytes, failures):
    import torch
    nccl = ".".join(map(str, torch.cuda.nccl.version()))
    for r in report["ranks"]:
        per, recorded = nccl_bytes_per_step(cli, r["path"])
        if not recorded:
            failures.append(f"rank {r['rank']}: no nccl_coll events: NCCL {nccl}'s profiler plugin recorded nothing "
                            f"(needs NCCL >= 2.24 and NCCL_PROFILER_PLUGIN naming libgpufl_nccl.so; "
                            f"report's note: {r.get('bytes_note')!r})")
            continue
        if "unknown" in per:
            failures.append(f"rank {r['rank']}: {per['unknown']} AllReduce(s) without bytes")
        want = grad_bytes[r["rank"]]
        steps = range(WARMUP + 1, WARMUP + STEPS + 1)
        bad = {s: per.get(s, 0) for s in steps if per.get(s, 0) != want}
        print(f"rank {r['rank']} (NCCL {nccl}): {recorded} nccl_coll events; AllReduce bytes per measured step "
              f"{sorted(set(per.get(s, 0) for s in steps))}, gradients {want} bytes")
        if bad:
            failures.append(f"rank {r['rank']}: AllReduce bytes per step differ from the gradients' {want}: {bad}")
        ar = [c for c in r["collectives"] if c["collective"] == "AllReduce"]
        if not ar or any(c["bytes"] is None or c["bytes_known"] != c["count"] or c["busbw_gbps"] is None
                         for c in ar):
            failures.append(f"rank {r['rank']}: the job report's AllReduce rows lack bytes or bandwidth: {ar}; "
                            f"note: {r.get('bytes_note')!r}")
        else:
            for c in ar:
                print(f"  {c['algorithm']} {c['protocol']}: {c['count']} x, {c['bytes'] / 1e6:.1f} MB, "
                      f"alg bw {c['algbw_gbps']:.2f} GB/s, bus bw {c['busbw_gbps']:.2f} GB/s")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    why = skip_reason()
    if why:
        print(f"skipped: {why}")
        return 77
    cli = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory(prefix="gpufl-ddp-") as tmp:
        logs = os.path.join(tmp, "logs")
        job = run([cli, "run", "--log-path", logs, "--"] + torchrun([]))
        grad_bytes = {}
        for line in job.stdout.splitlines():
            if line.startswith("{") and "grad_bytes" in line:
                o = json.loads(line)
                grad_bytes[o["rank"]] = o["grad_bytes"]
        if sorted(grad_bytes) != [0, 1]:
            sys.exit(f"FAIL: the job printed gradient bytes for ranks {sorted(grad_bytes)}:\n{job.stdout[-2000:]}")
        if "NCCL_PROFILER_PLUGIN" in job.stderr:
            print(job.stderr[-2000:])
        jobs = glob.glob(os.path.join(logs, "job-*"))
        if len(jobs) != 1:
            sys.exit(f"FAIL: {len(jobs)} job directories under {logs}: {os.listdir(logs)}")
        merged = os.path.join(tmp, "job")
        print(run([cli, "merge", jobs[0], "-o", merged]).stdout.strip())
        report = json.loads(run([cli, "report", merged, "--format", "json", "--top", "10000"]).stdout)
        print(run([cli, "report", merged, "--top", "12"]).stdout)

        ranks = report["ranks"]
        if [r["rank"] for r in ranks] != [0, 1]:
            sys.exit(f"FAIL: ranks {[r['rank'] for r in ranks]}, expected [0, 1]")
        r1 = ranks[1]["align"]
        print(f"rank 1 aligned by {r1['method']}: shift {r1['shift_ns']} ns; NCCL ends "
              f"{r1['nccl_residual_ns'] / 1e3:+.3f} us (spread {r1['nccl_spread_ns'] / 1e3:.3f} us) "
              f"over {r1['nccl_matched']} collectives")
        if r1["nccl_matched"] < STEPS or abs(r1["nccl_residual_ns"]) > ALIGN_US * 1e3 or \
                r1["nccl_spread_ns"] > ALIGN_US * 1e3:
            failures.append(f"NCCL kernels do not line up within {ALIGN_US} us: {r1}")

        # steps are counted from 1 over warm-up and measured steps alike; the warm-up's (set-up: NCCL, cuBLAS
        # and the allocator warming, each rank at its own pace) are not held to the rule
        measured = range(WARMUP + 1, WARMUP + STEPS + 1)
        slept = {s for s in measured if s % EVERY == 0}
        late = report["stragglers"]["late"]
        big = [x for x in late if x["late_ns"] >= 10e6 and x["step"] in measured]
        found = {x["step"] for x in big if x["rank"] == 1}
        for x in big:
            ms, launch_ms = x["late_ns"] / 1e6, x["launch_late_ns"] / 1e6
            print(f"  rank {x['rank']} late {ms:.2f} ms at {x['collective']} #{x['seq']} in step {x['step']} "
                  f"(launched {launch_ms:.2f} ms late)")
            if x["rank"] != 1 or x["step"] not in slept:
                failures.append(f"an arrival {ms:.2f} ms late that the job did not cause: {x}")
            elif abs(ms - SLEEP_MS) > TOLERANCE_MS:
                failures.append(f"step {x['step']}: rank 1 late by {ms:.2f} ms, expected {SLEEP_MS} +- {TOLERANCE_MS}")
        if found != slept:
            failures.append(f"rank 1 found late on steps {sorted(found)}, it slept before {sorted(slept)}")

        check_nccl_bytes(cli, report, grad_bytes, failures)

        ours = [kernels_between_fences(cli, r["path"], tmp) for r in ranks]
        prof = os.path.join(tmp, "prof")
        os.mkdir(prof)
        run(torchrun(["--profile", prof]))
        for rank, names in enumerate(ours):
            with open(os.path.join(prof, f"rank-{rank}.json")) as f:
                theirs = json.load(f)
            print(f"rank {rank}: gpufl {len(names)} kernels between the fences, torch.profiler {theirs['kernels']}")
            if len(names) != theirs["kernels"]:
                mine = {}
                for n in names:
                    mine[n] = mine.get(n, 0) + 1
                diff = {n: (mine.get(n, 0), theirs["by_name"].get(n, 0))
                        for n in set(mine) | set(theirs["by_name"]) if mine.get(n, 0) != theirs["by_name"].get(n, 0)}
                failures.append(f"rank {rank}: kernel counts differ (gpufl, torch.profiler): {diff}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
