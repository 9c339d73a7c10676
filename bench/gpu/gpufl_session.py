"""Helpers the Python GPU benchmarks share: run a program under `gpufl run`
and count what its sessions recorded.

Each run gets a fresh --log-path, and the sessions are the directories
found in it afterwards (a program that starts CUDA child processes has one
per process), so nothing depends on what `gpufl run` prints.
"""
import glob
import json
import os
import signal
import subprocess
import tempfile


def run(cli, argv, app_name, engine="trace", options=(), env=None, timeout=None):
    """Runs argv under `gpufl run` (with its options, e.g. --no-torch-ops)
    in a fresh log directory, in env (default: this process's).
    Returns (CompletedProcess with stdout and stderr captured, log
    directory); see run_program for timeout."""
    logs = tempfile.mkdtemp(prefix=f"gpufl-{app_name}-", dir=os.environ.get("BENCH_DIR"))
    cmd = [cli, "run", "--engine", engine, "--log-path", logs, "--app-name", app_name] + list(options) + ["--"] + argv
    return run_program(cmd, env=env, timeout=timeout), logs


def run_program(cmd, env=None, timeout=None):
    """Runs cmd, stdout and stderr captured. After timeout seconds (None:
    never) its whole process group is killed (the program under `gpufl run`
    too), and the CompletedProcess has returncode None and timed_out True,
    with what it had printed."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        done.timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        done = subprocess.CompletedProcess(cmd, None, out, err)
        done.timed_out = True
    return done


def warnings(stderr):
    """gpufl's warnings in a run's stderr (the engines' say what they
    changed: a restarted PC sampling, samples lost), the rest of it left
    out."""
    return [line for line in stderr.splitlines() if line.startswith("gpufl: warning:")]


def sessions(logs):
    return sorted(d for d in glob.glob(os.path.join(logs, "*")) if os.path.isdir(d))


def channel_files(session, channel):
    """<channel>.N.log parts, oldest first, then <channel>.log."""
    parts = glob.glob(os.path.join(session, f"{channel}.*.log"))
    parts.sort(key=lambda p: int(p.rsplit(".", 2)[-2]))
    return parts + [os.path.join(session, f"{channel}.log")]


def counts(logs):
    """(kernel records, dropped events) over every session under logs.
    Kernels: session.json's summary.events.kernel, which every log_format
    writes (counting device.log lines found none in a compact session, whose
    kernels are only in trace.gflt). Dropped: the larger of the `dropped`
    lines' counts and summary.dropped_total (which also counts what could
    not be written)."""
    kernels = dropped = 0
    for s in sessions(logs):
        lines_dropped = 0
        for ch in ("device", "scope", "system"):
            for path in channel_files(s, ch):
                if not os.path.exists(path):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        if line.startswith('{"type":"dropped"') and line.endswith("\n"):
                            lines_dropped += json.loads(line).get("count", 0)
        try:
            with open(os.path.join(s, "session.json"), encoding="utf-8") as f:
                summary = json.load(f).get("summary", {})
        except (OSError, ValueError):
            summary = {}
        kernels += summary.get("events", {}).get("kernel", 0)
        dropped += max(lines_dropped, summary.get("dropped_total", 0))
    return kernels, dropped


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def last_json_line(text):
    """The program's result: the last stdout line that is a JSON object."""
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"no JSON result in the output: {text[-500:]!r}")
