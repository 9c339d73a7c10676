"""A throwaway PostgreSQL server for the serve tests and the bench.

Runs Debian's own binaries (/usr/lib/postgresql/<version>/bin: initdb,
pg_ctl) on a temporary directory, listening on 127.0.0.1 at a free port
and on a Unix socket inside that directory, with trust authentication for
the one superuser it creates. initdb refuses to run as root, so under root
the directory is given to the `postgres` user (which Debian's package
creates) and the binaries run through runuser. The server is stopped and
the directory removed when the `with` block ends, whatever happens, and at
interpreter exit as a last resort.

    with PgServer() as pg:
        pg.conninfo   # "host=127.0.0.1 port=N user=gpufl dbname=postgres"
        pg.stop(); pg.start()
"""
import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile

SKIP = 77


def pg_bindir():
    """The newest installed server's bin directory, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else None


def skip_unless_installed():
    """Exits 77 (skip) with the reason when Debian's postgresql is missing."""
    if pg_bindir() is None:
        print("SKIP: Debian's postgresql server is not installed (/usr/lib/postgresql/*/bin/initdb); "
              "make test installs it (tools/install-deps.sh --test-tools)")
        raise SystemExit(SKIP)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self, fsync=False):
        self.bindir = pg_bindir()
        if self.bindir is None:
            raise RuntimeError("postgresql is not installed")
        self.fsync = fsync
        self.dir = tempfile.mkdtemp(prefix="gpufl-pg-")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.running = False
        self.as_user = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")  # made by Debian's postgresql-common
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        atexit.register(self.close)
        self._run("initdb", "-D", self.data, "-U", "gpufl", "-A", "trust", "-E", "UTF8", "--locale=C", "-N")
        self.start()

    @property
    def conninfo(self):
        return "host=127.0.0.1 port=%d user=gpufl dbname=postgres connect_timeout=5" % self.port

    def _run(self, tool, *args):
        cmd = self.as_user + [os.path.join(self.bindir, tool)] + list(args)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s%s" % (tool, r.returncode, r.stdout, r.stderr))
        return r

    def start(self):
        opts = "-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=%s -c max_connections=200" % (
            self.port, self.dir, "on" if self.fsync else "off")
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-o", opts, "-w", "-t", "60",
                  "start")
        self.running = True

    def stop(self, mode="fast"):
        if self.running:
            self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")
            self.running = False

    def psql(self, sql):
        """Rows of sql as lists of strings (psql, unaligned)."""
        r = subprocess.run([os.path.join(self.bindir, "psql"), "-X", "-A", "-t", "-F", "\t", "-v",
                            "ON_ERROR_STOP=1", "-c", sql, self.conninfo],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError("psql: %s" % r.stderr)
        return [line.split("\t") for line in r.stdout.splitlines() if line]

    def log(self):
        try:
            with open(os.path.join(self.dir, "log")) as f:
                return f.read()
        except OSError:
            return ""

    def close(self):
        if self.dir is None:
            return
        try:
            self.stop("immediate")
        except Exception:  # already gone: nothing to stop
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
