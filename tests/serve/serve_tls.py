#!/usr/bin/env python3
"""`gpufl serve` over TLS (issue 17): a CA and a server certificate for
127.0.0.1 made here with the openssl command, uploads with Python's ssl
verifying against that CA (and curl, when installed), a client that does
not trust the CA refused, plain HTTP to the TLS port refused without
hurting the server, and bad certificate files refused at start with the
file named.

Usage: serve_tls.py GPUFL_CLI. Exit 77 (skip) only when Debian's
postgresql is not installed, which make test installs.
"""
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pg_server import PgServer, skip_unless_installed  # noqa: E402
from serve_client import Client, Server, device_lines, session_meta  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certs(d):
    """ca.pem (self-signed CA), srv.pem + srv.key (127.0.0.1, localhost), other.key (not srv's)."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=gpufl test CA",
            cwd=d)
    openssl("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=localhost", cwd=d)
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
            "srv.pem", "-days", "2", "-extfile", "ext.cnf", cwd=d)
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", "other.key", cwd=d)


def main():
    cli = sys.argv[1]
    skip_unless_installed()
    if not shutil.which("openssl"):
        print("FAIL: the openssl command is missing (Debian's openssl, installed with libssl-dev's tools)")
        return 1
    d = tempfile.mkdtemp(prefix="gpufl-tls-")
    try:
        make_certs(d)
        with PgServer() as pg:
            run(cli, pg, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if failures:
        print("\n%d check(s) failed:\n  %s" % (len(failures), "\n  ".join(failures)))
        return 1
    return 0


def run(cli, pg, d):
    cert, key, ca = (os.path.join(d, f) for f in ("srv.pem", "srv.key", "ca.pem"))
    # bad files first: refused at start, the file named
    for args, named in (([cert, os.path.join(d, "missing.key")], "missing.key"),
                        ([os.path.join(d, "missing.pem"), key], "missing.pem"),
                        ([cert, os.path.join(d, "other.key")], "other.key")):
        r = subprocess.run([cli, "serve", "--db", pg.conninfo, "--listen", "127.0.0.1:0", "--tls-cert", args[0],
                            "--tls-key", args[1]], capture_output=True, text=True, timeout=60)
        check(r.returncode == 1 and named in r.stderr, "bad TLS files refused, naming %s: %s" % (named,
                                                                                               r.stderr.strip()))
    api_key = subprocess.run([cli, "serve", "key", "add", "team", "--db", pg.conninfo], capture_output=True,
                             text=True, timeout=60, check=True).stdout.strip()
    srv = Server(cli, pg.conninfo, extra=["--tls-cert", cert, "--tls-key", key])
    try:
        check("(https," in srv.stderr, "the server says it serves https")
        trusted = ssl.create_default_context(cafile=ca)
        c = Client(srv.port, api_key, ssl_context=trusted)
        st, body = c.health()
        check(st == 200, "health over TLS, the CA trusted")
        st, _ = c.announce(session_meta("tls-1"))
        st, body = c.batch("tls-1", "device", 0, device_lines(200))
        check(st == 200 and body["accepted"] == 200, "a batch over TLS stored")
        st, body = c.batch("tls-1", "device", 0, device_lines(200))
        check(st == 200 and body["duplicates"] == 200, "the batch again over TLS (same connection): duplicates")
        c.close()
        # the host name too (localhost is in the certificate)
        st, _ = Client(srv.port, api_key, host="localhost", ssl_context=trusted).health()
        check(st == 200, "by the name localhost")
        # a client that does not trust the CA
        try:
            Client(srv.port, api_key, ssl_context=ssl.create_default_context()).health()
            refused = False
        except ssl.SSLCertVerificationError:
            refused = True
        check(refused, "a client without the CA refuses the server's certificate")
        # plain HTTP to the TLS port gets no HTTP answer, and the server goes on
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=15)
        s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            answer = s.recv(4096)
        except OSError:
            answer = b""
        s.close()
        check(not answer.startswith(b"HTTP/1.1 200"), "plain HTTP to the TLS port: no answer")
        st, _ = Client(srv.port, api_key, ssl_context=trusted).health()
        check(st == 200, "the server still serves TLS afterwards")
        if shutil.which("curl"):
            r = subprocess.run(["curl", "-sS", "--cacert", ca, "https://127.0.0.1:%d/api/v1/health" % srv.port],
                               capture_output=True, text=True, timeout=60)
            check(r.returncode == 0 and '"status":"ok"' in r.stdout, "curl --cacert: %s" % r.stdout.strip())
        rows = pg.psql("SELECT count(*), count(DISTINCT seq) FROM events WHERE session_id = 'tls-1'")
        check(rows == [["200", "200"]], "200 events stored once")
    finally:
        check(srv.stop() == 0, "stopped")
        srv.close()


if __name__ == "__main__":
    sys.exit(main())
