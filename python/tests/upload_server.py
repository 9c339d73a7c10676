"""A fake of docs/UPLOAD.md's server for the Python tests: http.server on a
thread, HTTPS when given a certificate. It stores each (session, channel,
place) once, counts how often each was sent, records every request (path,
headers, body gunzipped) and answers scripted statuses first when told."""

import gzip
import http.server
import json
import ssl
import threading


class FakeServer:
    def __init__(self, key, certfile=None, keyfile=None):
        self.key = key
        self.requests = []
        self.places = {}  # (session, channel) -> {place: [line, sends]}
        self.announced = set()
        self.script = []  # (path suffix, status), first match used once
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(n)
                body = gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    status, answer = server._answer(self.path, self.headers, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        scheme = "http"
        if certfile:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(certfile, keyfile)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
            scheme = "https"
        self.url = "%s://127.0.0.1:%d" % (scheme, self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def _answer(self, path, headers, body):
        for i, (suffix, status) in enumerate(self.script):
            if path.endswith(suffix):
                del self.script[i]
                return status, {"error": "scripted"}
        if headers.get("Authorization") != "Bearer " + self.key:
            return 401, {"error": "unknown key"}
        if path == "/api/v1/sessions":
            sid = json.loads(body)["session_id"]
            created = sid not in self.announced
            self.announced.add(sid)
            return 200, {"session_id": sid, "created": created}
        if path == "/api/v1/events/stream":
            sid = headers["X-GpuFlight-Session-Id"]
            if sid not in self.announced:
                return 404, {"error": "unknown session"}
            store = self.places.setdefault((sid, headers["X-Gpufl-Channel"]), {})
            first = int(headers["X-Gpufl-First-Seq"])
            acc = dup = 0
            for i, line in enumerate(body.decode().splitlines()):
                json.loads(line)
                entry = store.setdefault(first + i, [line, 0])
                entry[1] += 1
                if entry[1] > 1:
                    dup += 1
                else:
                    acc += 1
            return 200, {"accepted": acc, "duplicates": dup, "rejected": 0, "errors": []}
        if path == "/api/v1/events/session-complete":
            j = json.loads(body)
            whole = all(p in self.places.get((j["session_id"], ch), {}) for ch, n in j["events"].items()
                        for p in range(n))
            return 200, {"session_id": j["session_id"], "stored": {}, "complete": whole}
        return 404, {"error": "no such path"}

    def lines(self, session, channel):
        """The lines held for a channel, in place order; asserts no gap."""
        store = self.places.get((session, channel), {})
        assert sorted(store) == list(range(len(store))), "gaps in %s %s" % (session, channel)
        return [store[p][0] for p in range(len(store))]
