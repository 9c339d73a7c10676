"""gpufl.upload_logs() and `gpufl upload` against a fake server
(upload_server.py): every event line of the session's logs arrives once, in
place order, with the key as a bearer token; TLS is verified (a CA made with
the openssl command is trusted only when given as ca_file); GPUFL_DISABLED
sends nothing; init(remote_upload=True) uploads at interpreter exit."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings

import pytest

import gpufl
from conftest import one_session
from upload_server import FakeServer

KEY = "py-test-key-0c1d2e3f"


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    """The fake server is on 127.0.0.1: never through a proxy the environment names."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")


@pytest.fixture
def server():
    s = FakeServer(KEY)
    yield s
    s.stop()


def record(logs):
    assert gpufl.init(log_path=logs, app_name="pyup", continuous_system_sampling=True, system_sample_rate_ms=5)
    for i in range(20):
        with gpufl.Scope("step %d" % i):
            pass
    gpufl.shutdown()
    return one_session(logs)


def log_events(session_dir, channel):
    """The event lines of a channel's log (not the session lines)."""
    path = os.path.join(session_dir, channel + ".log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = f.read().splitlines()
    return [l for l in lines if json.loads(l)["type"] not in ("session_start", "log_stopped", "session_end")]


def test_session_arrives_whole(logs, server):
    d = record(logs)
    sid = os.path.basename(d)
    r = gpufl.upload_logs(d, backend_url=server.url, api_key=KEY, batch_events=7)
    assert r.success, r.error
    assert r and r.error == "" and r.sessions_processed == r.files_processed == 1
    want = {ch: log_events(d, ch) for ch in ("scope", "system")}
    assert len(want["scope"]) == 40
    for ch, lines in want.items():
        assert server.lines(sid, ch) == lines
    # compact: device-channel events (the engine) come from trace.gflt, which has no log to compare with
    device = server.lines(sid, "device")
    assert all("type" in json.loads(l) for l in device)
    assert r.events_uploaded == sum(len(v) for v in want.values()) + len(device)
    assert r.events_duplicate == 0 and r.bytes_uploaded > 0
    for q in server.requests:
        assert q["headers"]["Authorization"] == "Bearer " + KEY
        assert q["headers"].get("Content-Encoding") == (None if q["path"].endswith("/session-complete") else "gzip")
    assert all(len(q["body"].splitlines()) <= 7 for q in server.requests if q["path"].endswith("/stream"))
    # the cursor says everything went: a second upload sends nothing
    n = len(server.requests)
    r = gpufl.upload_logs(d, backend_url=server.url, api_key=KEY)
    assert r.success and r.events_uploaded == 0 and len(server.requests) == n
    with open(os.path.join(d, ".gpufl-upload-cursor.json")) as f:
        cursor = json.load(f)
    assert cursor["complete"] is True and cursor["events"]["scope"] == 40
    assert KEY not in json.dumps(cursor)


def test_retry_is_a_warning_and_key_never_shown(logs, server, monkeypatch):
    d = record(logs)
    server.script.append(("/events/stream", 503))
    r = gpufl.upload_logs(d, backend_url=server.url, api_key=KEY, retry_delay_ms=10)
    assert r.success, r.error
    assert r.warning_count == 1 and "503" in r.warnings[0] and "trying again" in r.warnings[0]
    # the key from the environment; a wrong one: 401, stopped, never printed
    monkeypatch.setenv("GPUFL_API_KEY", "wrong-" + KEY)
    r = gpufl.upload_logs(d, backend_url=server.url, force=True)
    assert not r.success and "401" in r.error
    assert KEY not in r.error and not any(KEY in w for w in r.warnings)


def test_disabled_sends_nothing(logs, server, monkeypatch):
    d = record(logs)
    monkeypatch.setenv("GPUFL_DISABLED", "1")
    r = gpufl.upload_logs(d, backend_url=server.url, api_key=KEY)
    assert r.success and r.events_uploaded == 0 and r.sessions_processed == 0
    assert server.requests == []


def test_bad_arguments_raise():
    with pytest.raises(TypeError):
        gpufl.upload_logs(42)
    with pytest.raises(ValueError):
        gpufl.upload_logs("x", max_retries=-1)
    r = gpufl.upload_logs("/nonexistent/logs", backend_url="http://127.0.0.1:1", api_key="k")
    assert not r.success and "/nonexistent/logs" in r.error


def test_remote_upload_at_exit(tmp_path, server):
    logs = str(tmp_path / "logs")
    code = textwrap.dedent("""
        import gpufl
        assert gpufl.init(log_path=%r, remote_upload=True, backend_url=%r, api_key=%r)
        with gpufl.Scope("only"):
            pass
        # no shutdown(): the at-exit handler ends the session and uploads it
    """) % (logs, server.url, KEY)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUFL_") or k == "GPUFL_LIBRARY"}
    p = subprocess.run([sys.executable, "-W", "default", "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert "DeprecationWarning" in p.stderr and "remote_upload" in p.stderr
    assert KEY not in p.stderr
    d = one_session(logs)
    sid = os.path.basename(d)
    assert server.lines(sid, "scope") == log_events(d, "scope")
    assert [q["path"] for q in server.requests][-1] == "/api/v1/events/session-complete"


def make_ca(tmp_path):
    """A CA and a server certificate for 127.0.0.1 it signed (openssl CLI)."""
    if not shutil.which("openssl"):
        pytest.fail("the openssl command is needed (tools/install-deps.sh --test-tools installs it)")
    t = str(tmp_path)

    def run(*args):
        subprocess.run(["openssl"] + list(args), cwd=t, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=gpufl test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(t, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "srv.pem",
        "-days", "2", "-extfile", "ext.cnf")
    return os.path.join(t, "ca.pem"), os.path.join(t, "srv.pem"), os.path.join(t, "srv.key")


def test_tls_verified_with_the_ca_given(logs, tmp_path):
    ca, cert, key = make_ca(tmp_path)
    s = FakeServer(KEY, certfile=cert, keyfile=key)
    try:
        d = record(logs)
        r = gpufl.upload_logs(d, backend_url=s.url, api_key=KEY, max_retries=0)
        assert not r.success  # a CA nobody trusts: refused
        assert "certificate" in r.error.lower() or "ssl" in r.error.lower(), r.error
        assert s.requests == []
        r = gpufl.upload_logs(d, backend_url=s.url, api_key=KEY, ca_file=ca)
        assert r.success, r.error
        assert s.lines(os.path.basename(d), "scope") == log_events(d, "scope")
        # the command, the same way
        cli = os.environ.get("GPUFL_CLI")
        if cli:
            keyfile = tmp_path / "key"
            keyfile.write_text(KEY + "\n")
            keyfile.chmod(0o600)
            p = subprocess.run([cli, "upload", "--backend-url", s.url, "--api-key-file", str(keyfile), "--ca-file",
                                ca, "--force", d], capture_output=True, text=True, timeout=60)
            assert p.returncode == 0, p.stderr
            assert p.stdout.startswith("gpufl upload: 1 session sent, ") and p.stdout.count("\n") == 1
            assert "%d duplicates" % r.events_uploaded in p.stdout
            assert KEY not in p.stdout + p.stderr
    finally:
        s.stop()


def test_remote_upload_without_backend_warns_now(logs):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert gpufl.init(log_path=logs, remote_upload=True)
    runtime = [x for x in w if x.category is RuntimeWarning]
    assert [x.category for x in w] == [DeprecationWarning, RuntimeWarning]
    assert "without backend_url" in str(runtime[0].message) and runtime[0].filename == __file__
    assert gpufl._upload._at_exit is None  # nothing registered: nowhere to upload to
    gpufl.shutdown()


def test_refused_while_recording(logs, server):
    assert gpufl.init(log_path=logs)
    r = gpufl.upload_logs(logs, backend_url=server.url, api_key=KEY)
    assert not r.success and "recording" in r.error and "shutdown" in r.error
    assert server.requests == []
    gpufl.shutdown()
    r = gpufl.upload_logs(logs, backend_url=server.url, api_key=KEY)
    assert r.success, r.error
