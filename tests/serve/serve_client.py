"""Test-side pieces for `gpufl serve`: start and stop the server, speak
docs/UPLOAD.md's API with http.client (the uploader is built separately;
these requests follow the contract, not its code), and make synthetic
sessions (session.json and NDJSON lines in docs/FORMAT.md's shapes)."""
import gzip
import http.client
import json
import os
import select
import signal
import subprocess
import time

API = "/api/v1"


class Server:
    """`gpufl serve` on 127.0.0.1 at a port it picks; stopped by close()."""

    def __init__(self, cli, conninfo, extra=(), workers=None):
        self.cli, self.conninfo, self.extra, self.workers = cli, conninfo, list(extra), workers
        self.proc = None
        self.port = None
        self.stderr = ""
        self.start()

    def start(self, port=None):
        cmd = [self.cli, "serve", "--db", self.conninfo, "--listen", "127.0.0.1:%d" % (port or self.port or 0)]
        if self.workers:
            cmd += ["--workers", str(self.workers)]
        self.proc = subprocess.Popen(cmd + self.extra, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0)
        # raw reads: a buffered readline could hold the line we wait for
        # where select() does not see it
        fd, text, deadline = self.proc.stderr.fileno(), b"", time.time() + 30
        while time.time() < deadline and b"listening on" not in text:
            r, _, _ = select.select([fd], [], [], 1)
            if r:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                text += chunk
        self.stderr += text.decode(errors="replace")
        if b"listening on" not in text or not text.endswith(b"\n"):
            self.close()  # never leave it running
            raise RuntimeError("gpufl serve did not start: %s" % self.stderr)
        line = [x for x in self.stderr.splitlines() if "listening on" in x][-1]
        self.port = int(line.split("listening on ")[1].split(" ")[0].rsplit(":", 1)[1])

    def drain(self):
        if self.proc and self.proc.poll() is not None:
            rest = self.proc.stderr.read().decode(errors="replace")
            self.stderr += rest
            return rest
        return ""

    def stop(self):
        """SIGTERM, then its exit code; its stderr is in self.stderr."""
        if not self.proc:
            return None
        self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        self.stderr += err.decode(errors="replace")
        rc, self.proc = self.proc.returncode, None
        return rc

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            _, err = self.proc.communicate()
            self.stderr += err.decode(errors="replace")
        self.proc = None


class Client:
    """One keep-alive connection; every call returns (status, parsed JSON)."""

    def __init__(self, port, key, host="127.0.0.1", ssl_context=None, timeout=30):
        self.port, self.key, self.host, self.ssl, self.timeout = port, key, host, ssl_context, timeout
        self.conn = None

    def _connect(self):
        if self.ssl:
            return http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=self.timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def request(self, method, path, body=b"", headers=None, auth=True):
        h = dict(headers or {})
        if auth and self.key is not None:
            h["Authorization"] = "Bearer " + self.key
        for attempt in range(2):
            if self.conn is None:
                self.conn = self._connect()
            try:
                self.conn.request(method, API + path, body=body, headers=h)
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                return r.status, json.loads(data) if data else None
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()  # a keep-alive connection the server closed: once more on a new one
                if attempt:
                    raise

    def close(self):
        if self.conn:
            self.conn.close()
        self.conn = None

    def health(self):
        return self.request("GET", "/health", auth=False)

    def announce(self, meta, gz=True):
        body = json.dumps(meta).encode()
        h = {"Content-Type": "application/json"}
        if gz:
            body, h["Content-Encoding"] = gzip.compress(body), "gzip"
        return self.request("POST", "/sessions", body, h)

    def batch(self, session_id, channel, first_seq, lines, gz=True, host="testhost", extra=None):
        body = "".join(line + "\n" for line in lines).encode()
        h = {"Content-Type": "application/x-ndjson", "X-GpuFlight-Session-Id": session_id,
             "X-GpuFlight-Hostname": host, "X-Gpufl-Channel": channel, "X-Gpufl-First-Seq": str(first_seq)}
        if gz:
            body, h["Content-Encoding"] = gzip.compress(body, 1), "gzip"
        h.update(extra or {})
        return self.request("POST", "/events/stream", body, h)

    def complete(self, session_id, counts):
        body = json.dumps({"session_id": session_id, "events": counts}).encode()
        return self.request("POST", "/events/session-complete", body, {"Content-Type": "application/json"})


def batch_body(session_id, channel, first_seq, lines, gz=True, key=None):
    """The raw bytes of an events/stream request (for tests that cut it)."""
    body = "".join(line + "\n" for line in lines).encode()
    if gz:
        body = gzip.compress(body, 1)
    head = ("POST %s/events/stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
            "%sX-GpuFlight-Session-Id: %s\r\nX-Gpufl-Channel: %s\r\nX-Gpufl-First-Seq: %d\r\n"
            "Content-Length: %d\r\n" % (API, "Content-Encoding: gzip\r\n" if gz else "", session_id, channel,
                                        first_seq, len(body)))
    if key:
        head += "Authorization: Bearer %s\r\n" % key
    return head, body


# ---- synthetic sessions ---------------------------------------------------------

def session_meta(session_id, app="train", host="node1", start_wall_ns=None, duration_ns=10**9, job=None):
    """A session.json as gpufl writes it (the fields the server reads, and more)."""
    start_wall_ns = start_wall_ns or time.time_ns()
    m = {"format": "gpufl-session", "format_version": 1, "gpufl_version": "0.1.0", "session_id": session_id,
         "app_name": app, "pid": 4242, "host": host, "start_ns": 1000000000, "start_wall_ns": start_wall_ns,
         "status": "ended", "end_ns": 1000000000 + duration_ns, "end_wall_ns": start_wall_ns + duration_ns}
    if job:
        m["job"] = {"launcher": "torchrun", "id": job, "rank": 0}
    return m


def kernel_line(start, dur, name="gemm_kernel", device=0, stream=7, corr=1):
    return json.dumps({"type": "kernel", "start_ns": start, "end_ns": start + dur, "dur_ns": dur,
                       "device": device, "context": 1, "stream": stream, "corr": corr, "name": name,
                       "grid": [128, 1, 1], "block": [256, 1, 1], "regs": 32, "smem_static": 0,
                       "smem_dynamic": 0, "local_mem": 0}, separators=(",", ":"))


def scope_lines(begin, dur, name="step", tid=100, sid=1):
    b = {"type": "scope_begin", "ts_ns": begin, "tid": tid, "id": sid, "parent": 0, "depth": 0, "name": name}
    e = dict(b, type="scope_end", ts_ns=begin + dur, begin_ns=begin, dur_ns=dur)
    return [json.dumps(b, separators=(",", ":")), json.dumps(e, separators=(",", ":"))]


def host_line(ts):
    return json.dumps({"type": "host_metrics", "ts_ns": ts, "cpu_count": 2, "proc_cpu_pct": 12.5,
                       "sys_cpu_pct": 30.0, "ram_used_bytes": 1 << 30, "ram_total_bytes": 4 << 30,
                       "proc_rss_bytes": 1 << 28}, separators=(",", ":"))


def device_lines(n, start=1000000000, name="gemm_kernel", dur=50000, gap=10000):
    return [kernel_line(start + i * (dur + gap), dur, name=name, corr=i + 1) for i in range(n)]
