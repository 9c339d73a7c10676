"""The text report of a recorded session, from Python: the text `gpufl
report` prints.

::

    from gpufl.report import TextReport, generate_report

    TextReport(session, top_n=10).print()          # session: a GpuFlightSession or a path
    path = generate_report("gpufl-logs", log_prefix="trainer", top_n=10)
    print(job_report("gpufl-logs/job-42"))         # a job: all ranks side by side
    data = json.loads(job_report(["r0", "r1"], fmt="json"))

The text is made by libgpufl (gpufl_trace_report(): the same analyses and
renderer as the command), so the two agree byte for byte, except that CPU
stacks are listed by id, with the hint to name their frames with `gpufl
stacks SESSION`: naming frames needs libdw, which the command loads and the
library does not.
"""

import os
import sys

from ._trace import job_report
from .analyzer import GpuFlightSession

__all__ = ["TextReport", "generate_report", "job_report", "REPORT_FILE"]

REPORT_FILE = "report.txt"  # generate_report()'s file in the session directory


class TextReport:
    """The text report of session (a GpuFlightSession, or anything
    GpuFlightSession takes as log_dir) with the top_n hot kernels (1 to
    10000)."""

    def __init__(self, session, top_n=10):
        if not isinstance(session, GpuFlightSession):
            session = GpuFlightSession(session)
        if not 1 <= int(top_n) <= 10000:
            raise ValueError("top_n must be 1 to 10000, not %r" % (top_n,))
        self.session = session
        self.top_n = int(top_n)
        self._text = None

    def generate(self):
        """The report as a str (made once, then kept)."""
        if self._text is None:
            self._text = self.session.report(self.top_n)
        return self._text

    def print(self, file=None):
        """Writes the report to file (default: sys.stdout)."""
        (file or sys.stdout).write(self.generate())

    def save(self, path):
        """Writes the report to path (created or replaced); returns path."""
        path = os.fspath(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.generate())
        return path

    def __str__(self):
        return self.generate()


def generate_report(log_dir, log_prefix=None, top_n=10, output_path=None):
    """Writes the text report of the session that GpuFlightSession(log_dir,
    log_prefix) reads to output_path, by default ``report.txt`` in the
    session's directory (beside the ``summary.txt`` the recording API
    writes), and returns the path written. Raises as GpuFlightSession does,
    and OSError when the file cannot be written."""
    with GpuFlightSession(log_dir, log_prefix) as session:
        report = TextReport(session, top_n)
        if output_path is None:
            output_path = os.path.join(session.session_dir, REPORT_FILE)
        return report.save(output_path)
