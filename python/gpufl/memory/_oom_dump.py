"""An out-of-memory into the gpufl session: gpufl_report_oom, and which
dump of the flight window it wrote.

PyTorch's OOM observer (_torch_source) reports first, from inside the
allocator, with the exact bytes asked for; MemoryTracker's handler, which
sees the exception later, takes that dump instead of firing a second
trigger (the storm gap would refuse it anyway), and reports by itself only
when no observer did (no session yet when the tracker was made, a PyTorch
without the observer, an error that only its message calls an OOM).

The dump's directory is found as the one that appeared under
<session dir>/dumps/ during the call: gpufl_report_oom returns once it is
written and renamed to its final name.
"""

import os
import threading
import time

from .. import _session
from . import _record

__all__ = ["Report", "report", "take_recent"]

_lock = threading.Lock()
_last = None


class Report:
    """One gpufl_report_oom: its return code and the dump directory (None
    when no dump was written)."""

    def __init__(self, device, requested, rc, dump_dir):
        self.device, self.requested, self.rc, self.dump_dir = device, requested, rc, dump_dir
        self.when = time.monotonic()


def _dumps():
    root = os.path.join(_session.session_dir(), "dumps")
    try:
        return {n for n in os.listdir(root) if not n.startswith(".")}, root
    except OSError:
        return set(), root


def report(device, requested, detail):
    """Fires the session's "oom" trigger and returns the Report (rc -4
    without a session or with a libgpufl older than gpufl_report_oom)."""
    global _last
    before, _ = _dumps()
    rc = _record.report_oom(device, requested, detail)
    after, root = _dumps()
    new = sorted(after - before)
    r = Report(device, requested, rc, os.path.join(root, new[-1]) if rc == 0 and new else None)
    with _lock:
        _last = r
    return r


def take_recent(device, max_age_s=60.0):
    """The Report of device's last out-of-memory if it is recent and not
    taken yet (then it is taken), else None."""
    global _last
    with _lock:
        r = _last
        if r is None or r.device != device or time.monotonic() - r.when > max_age_s:
            return None
        _last = None
        return r
