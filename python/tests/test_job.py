"""A session's job facts and clock pairs, through the Python reader.

The launcher's variables are read by libgpufl at init (core/job.h); the
reader gives them back with Trace.job() and the clock pairs as the
"clocks" table, as the C reader does.
"""

import json
import os
import subprocess

import pytest

import gpufl
from conftest import cli, one_session

np = pytest.importorskip("numpy")
from gpufl._trace import Trace  # noqa: E402


def test_job_and_clocks(logs, monkeypatch):
    for name in ("SLURM_JOB_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    monkeypatch.setenv("MASTER_ADDR", "10.1.2.3")
    monkeypatch.setenv("MASTER_PORT", "29500")
    assert gpufl.init(app_name="py-job", log_path=logs)
    gpufl.shutdown()
    with Trace(one_session(logs)) as t:
        assert t.job() == {"launcher": "torch.distributed", "rank": 3, "local_rank": 1, "world_size": 4,
                           "local_world_size": 2, "master": "10.1.2.3:29500", "host": t.string(t.info.host)}
        c = t.table("clocks")
        assert c.n == 2
        assert [t.string(p) for p in c.point] == ["start", "end"]
        assert c.ts_ns[0] == t.info.start_ns and c.ts_ns[1] == t.info.end_ns
        assert np.all(np.diff(c.mono_ns.astype(np.int64)) > 0)


def test_analyzer_session_facts(logs, monkeypatch):
    pytest.importorskip("pandas")
    from gpufl.analyzer import GpuFlightSession
    monkeypatch.setenv("SLURM_PROCID", "0")
    monkeypatch.setenv("SLURM_NTASKS", "1")
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    for name in ("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                 "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    assert gpufl.init(app_name="py-slurm", log_path=logs)
    gpufl.shutdown()
    with GpuFlightSession(one_session(logs)) as s:
        assert s.job["launcher"] == "slurm"
        assert s.job["rank"] == 0 and s.job["world_size"] == 1
        assert s.job["id"] == "4242" and s.job["id_from"] == "SLURM_JOB_ID"


def test_no_launcher_no_job(logs, monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "SLURM_JOB_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                 "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    assert gpufl.init(app_name="py-nojob", log_path=logs)
    gpufl.shutdown()
    with Trace(one_session(logs)) as t:
        assert t.job() is None


def _rank_session(logs, monkeypatch, rank, job_id):
    """A real session of rank `rank` of a 2-rank torchrun job `job_id`, in
    its own directory under logs; its path."""
    for name in ("SLURM_JOB_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RANK", str(rank))
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", job_id)
    where = os.path.join(logs, "%s-r%d" % (job_id, rank))
    os.makedirs(where)
    assert gpufl.init(app_name="py-rank%d" % rank, log_path=where)
    with gpufl.Scope("train_step"):
        pass
    gpufl.shutdown()
    return one_session(where)


def test_job_report_matches_the_command(logs, monkeypatch):
    """gpufl.report.job_report gives `gpufl report`'s bytes for a job's ranks,
    in rank order, and refuses what the command refuses, naming it."""
    from gpufl.report import job_report
    r1 = _rank_session(logs, monkeypatch, 1, "pyjob")
    r0 = _rank_session(logs, monkeypatch, 0, "pyjob")
    text = job_report([r1, r0])
    out = subprocess.run([cli(), "report", r1, r0], check=True, stdout=subprocess.PIPE).stdout.decode()
    assert text == out
    data = json.loads(job_report([r0, r1], fmt="json"))
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    other = _rank_session(logs, monkeypatch, 1, "otherjob")
    with pytest.raises(gpufl.GpuflError, match="otherjob"):
        job_report([r0, other])
    assert "ranks" in job_report([r0, other], mixed=True)
    missing = os.path.join(logs, "no-such-session")
    with pytest.raises(gpufl.GpuflError, match="no-such-session"):
        job_report(missing)
    with pytest.raises(gpufl.GpuflError, match="bad format"):
        job_report(r0, fmt="html")
